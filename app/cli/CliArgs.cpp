#include "CliArgs.h"

#include "megatron/PipelineLayout.h"
#include "megatron/ScriptInputs.h"

#include "cost/ProfileCheck.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "util/Strings.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

namespace hapmoe::cli {

namespace {

// A bound as a person writes it: 0, 1, 0.5, 1e+07.
std::string plain(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

} // namespace

CliArgs::CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valueOptions,
                 const std::set<std::string>& switches, const std::set<std::string>& repeatable)
{
    // The value of an option that needs one: "--tp --pp 2" is a missing value, not the value
    // "--pp" (no option, file or number of this tool starts with "--"). A script's arguments
    // may: "--script-args '--size 70B'".
    auto valueAfter = [&](std::size_t& i, const std::string& spelling) -> const std::string& {
        if (i + 1 >= args.size())
            throw UsageError("option " + spelling + " needs a value");
        const std::string& next = args[i + 1];
        if (next.size() > 2 && next.rfind("--", 0) == 0 && spelling != "--script-args")
            throw UsageError("option " + spelling + " needs a value, got the option " + next);
        return args[++i];
    };
    bool optionsEnded = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (optionsEnded) {
            m_positionals.push_back(a);
        } else if (a == "--") {
            optionsEnded = true;   // what follows is a file name even if it starts with '-'
        } else if (a.size() > 2 && a.rfind("--", 0) == 0) {
            std::string name = a.substr(2);
            std::optional<std::string> inlineValue;
            if (auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            if (repeatable.count(name)) {
                const std::string value = inlineValue ? *inlineValue : valueAfter(i, "--" + name);
                if (value.empty())
                    throw UsageError("option --" + name + " needs a value, got \"\"");
                m_lists[name].push_back(value);
            } else if (valueOptions.count(name)) {
                setValue("--" + name, name, inlineValue ? *inlineValue : valueAfter(i, "--" + name));
            } else if (switches.count(name)) {
                if (inlineValue)
                    throw UsageError("option --" + name + " takes no value");
                if (!m_switches.insert(name).second)
                    throw UsageError("option --" + name + " is given twice; give it once");
            } else {
                throw UsageError("unknown option --" + name);
            }
        } else if (a == "-o" && valueOptions.count("o")) {
            setValue("-o", "o", valueAfter(i, "-o"));
        } else if (a == "-h" && switches.count("help")) {
            m_switches.insert("help");
        } else if (a.size() > 1 && a[0] == '-') {
            throw UsageError("unknown option " + a + " (a file whose name starts with '-' goes after \"--\")");
        } else {
            m_positionals.push_back(a);
        }
    }
}

void CliArgs::setValue(const std::string& spelling, const std::string& name, const std::string& value)
{
    // No option takes an empty value (a file, a name or a number): "--devices=" or a variable
    // that expanded to nothing would otherwise reach the reader without its option's name.
    if (value.empty())
        throw UsageError("option " + spelling + " needs a value, got \"\"");
    // Every option takes one value: a second one is more likely a mistake than an override.
    if (auto [it, added] = m_values.emplace(name, value); !added)
        throw UsageError("option " + spelling + " is given twice (\"" + it->second + "\" and \"" + value + "\"); give it once");
}

bool CliArgs::has(const std::string& name) const
{
    return m_switches.count(name) > 0 || m_values.count(name) > 0 || m_lists.count(name) > 0;
}

std::vector<std::string> CliArgs::values(const std::string& name) const
{
    auto it = m_lists.find(name);
    return it == m_lists.end() ? std::vector<std::string>() : it->second;
}

std::optional<std::string> CliArgs::value(const std::string& name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end())
        return std::nullopt;
    return it->second;
}

std::string CliArgs::required(const std::string& name) const
{
    auto v = value(name);
    if (!v)
        throw UsageError("missing required option --" + name);
    return *v;
}

std::optional<int> CliArgs::intValue(const std::string& name, int min, int max) const
{
    auto v = value(name);
    if (!v)
        return std::nullopt;
    const std::string range = "expected an integer from " + std::to_string(min) + " to " + std::to_string(max);
    errno = 0;
    char* end = nullptr;
    const long long parsed = std::strtoll(v->c_str(), &end, 10);
    // Decimal digits with an optional sign: strtoll would also skip leading blanks.
    if (v->empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(v->front())))
        throw UsageError("--" + name + ": " + range + ", got " + quotedValue(*v));
    if (errno == ERANGE || parsed > max)
        throw UsageError("--" + name + ": " + range + ", got \"" + *v + "\" (too large)");
    if (parsed < min)
        throw UsageError("--" + name + ": " + range + ", got \"" + *v + "\" (too small)");
    return static_cast<int>(parsed);
}

std::optional<double> CliArgs::doubleValue(const std::string& name, double min) const
{
    auto v = value(name);
    if (!v)
        return std::nullopt;
    // (A min of the lowest double is no bound: the caller says what it takes.)
    const std::string expected = min == std::numeric_limits<double>::lowest() ? std::string("expected a finite number")
                                                                               : "expected a finite number >= " + plain(min);
    errno = 0;
    char* end = nullptr;
    const double parsed = std::strtod(v->c_str(), &end);
    // A decimal number: strtod would also skip leading blanks and read hexadecimal.
    const bool hex = v->find_first_of("xX") != std::string::npos;
    if (v->empty() || *end != '\0' || std::isnan(parsed) || hex || std::isspace(static_cast<unsigned char>(v->front())))
        throw UsageError("--" + name + ": " + expected + ", got " + quotedValue(*v));
    // strtod reports ERANGE both for overflow (+-HUGE_VAL) and for a value below the
    // smallest normal double, which it still returns (a denormal or 0): only overflow is wrong.
    if (std::isinf(parsed))
        throw UsageError("--" + name + ": " + expected + ", got \"" + *v + "\" (not finite)");
    if (!(parsed >= min))
        throw UsageError("--" + name + ": " + expected + ", got \"" + *v + "\"");
    return parsed;
}

std::vector<InputFile> givenInputs(const CliArgs& args, std::initializer_list<const char*> names, std::vector<InputFile> first)
{
    for (const char* name : names)
        if (auto v = args.value(name))
            first.push_back({std::string("--") + name, *v});
    return first;
}

void checkOutputPath(const std::string& flag, const std::string& path, const std::vector<InputFile>& inputs)
{
    namespace fs = std::filesystem;
    if (path.empty())
        throw UsageError(flag + ": expected a file name, got \"\"");
    // "-" would be a file named "-" in the working folder, not standard output: refused, since
    // a user who writes it means the latter (export and plan --json print there without -o).
    if (path == "-")
        throw UsageError(flag + ": expected a file name, got \"-\" (standard output is not an output file here)");
    std::error_code ec;
    const fs::path target(path);
    if (fs::is_directory(target, ec))
        throw InputError(path, "", flag + ": is a directory, expected a file");
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec))
        throw InputError(path, "", flag + ": is not a regular file");
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    if (!fs::is_directory(dir, ec))
        throw InputError(path, "", flag + ": the folder " + dir.string() + " does not exist");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw InputError(path, "", flag + ": the folder " + dir.string() + " is not writable");
    // The rename of an atomic save would replace a file its owner made read-only.
    if (fs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0)
        throw InputError(path, "", flag + ": the file is read-only; make it writable or give another file");
    // The same file under another name (a relative path, a link) counts as the same file.
    for (const InputFile& in : inputs) {
        std::error_code same;
        if (!in.path.empty() && fs::equivalent(target, in.path, same) && !same)
            throw InputError(path, "", flag + ": is the same file as the input " + in.flag + " (" + in.path
                                           + "), which writing would replace; give another file for the output");
    }
}

namespace {

DeviceCatalog catalogOver(DeviceCatalog catalog, const CliArgs& args, bool quiet = false)
{
    if (auto file = args.value("devices")) {
        Warnings warnings;
        catalog.merge(DeviceCatalog::fromJson(readTextFile(*file), *file, &warnings), *file);
        for (const auto& w : warnings)
            if (!quiet)
                std::cerr << "warning: " << printableText(w) << "\n";
    }
    return catalog;
}

} // namespace

DeviceCatalog catalogFromArgs(const CliArgs& args)
{
    return catalogOver(DeviceCatalog::builtin(), args);
}

DeviceCatalog catalogForPlan(const CliArgs& args, const PlanDocument& doc, const std::string& file)
{
    return catalogOver(catalogWith(doc.devices, file), args);
}

DeviceCatalog catalogForDocuments(const CliArgs& args, const std::vector<std::string>& files, bool quiet)
{
    DeviceCatalog catalog = DeviceCatalog::builtin();
    for (const std::string& file : files) {
        // As resolveCluster and resolveModel take them: a preset name first, then a file.
        std::error_code ec;
        if (file.empty() || findClusterPreset(file) || findModelPreset(file) || !std::filesystem::is_regular_file(file, ec))
            continue;
        const std::string text = readTextFile(file);
        std::string format;
        try {
            format = documentVersion(text, file).format;
        } catch (const InputError&) {
            continue;   // not a document: its reader says why
        }
        if (format != kPlanFormat && format != kProjectFormat)
            continue;
        Warnings warnings;   // the document's reader gives them again
        catalog.merge(DeviceCatalog(readDocumentDevices(text, file, &warnings)), file);
    }
    return catalogOver(std::move(catalog), args, quiet);
}

PlanDocument readPlanFile(const CliArgs& args, const std::string& file, Warnings& warnings, std::optional<Profile>* projectProfile,
                          std::string* projectScript, ScriptInputs* projectScriptInputs)
{
    const std::string text = readTextFile(file);
    if (detectFormat(text, file) != kProjectFormat) {
        if (args.has("saved-plan"))
            throw UsageError("--saved-plan: " + file + " is a plan document, which holds one plan; --saved-plan picks one of a "
                             "project's saved plans");
        PlanDocument doc = readPlan(text, file, &warnings);
        const DeviceCatalog catalog = catalogWith(doc.devices, file);
        return withCatalogNames(std::move(doc), catalog);
    }
    const Project p = readProject(text, file, &warnings);
    if (p.plans.empty())
        throw InputError(file, "plans", "the project holds no saved plan: run a search in the studio and save the project, or "
                                        "write a plan document with `hapmoe plan --model FILE --cluster FILE -o plan.json`");
    const int count = static_cast<int>(p.plans.size());
    const int n = args.intValue("saved-plan", 1).value_or(1);
    if (n > count)
        throw UsageError("--saved-plan: expected 1 to " + std::to_string(count) + " (the project's saved plans), got "
                         + std::to_string(n));
    const SavedPlan& saved = p.plans[static_cast<std::size_t>(n - 1)];
    PlanDocument doc;
    doc.model = p.model;
    doc.cluster = p.cluster;
    doc.plan = saved.plan;
    doc.prediction = saved.prediction;
    const DeviceCatalog projectCatalog = catalogWith(p.devices, file);
    doc.devices = typesBeyondBuiltin(p.cluster, projectCatalog);
    if (projectProfile)
        *projectProfile = p.profile;
    if (projectScript)
        *projectScript = p.current_script;
    if (projectScriptInputs)
        *projectScriptInputs = p.current_script_inputs;
    doc = withCatalogNames(std::move(doc), projectCatalog);
    std::cerr << "note: " << file << " is a project: its saved plan " << n << " of " << count << " ("
              << printableText(saved.plan.name.empty() ? std::string("unnamed") : saved.plan.name)
              << (saved.source == SavedPlan::Source::Current      ? ", the current configuration"
                  : saved.source == SavedPlan::Source::Uniform    ? ", the uniform baseline"
                  : saved.source == SavedPlan::Source::MetisStyle ? ", the Metis-style baseline"
                                                                  : "")
              << ") is used"
              << (count > 1 ? "; --saved-plan N picks another" : "") << "\n";
    return doc;
}

std::string nearlyFullNote(const Plan& plan, const Prediction& prediction)
{
    const int s = nearlyFullStage(prediction);
    if (s < 0 || s >= static_cast<int>(plan.stages.size()))
        return {};
    const MemoryBreakdown& m = prediction.stages[static_cast<std::size_t>(s)].memory;
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    return "stage " + std::to_string(s) + " (" + plan.stages[static_cast<std::size_t>(s)].device_type + ") uses "
        + decimal(m.total() / GiB, 1) + " of " + decimal(m.capacity / GiB, 1) + " GiB (" + decimal(100.0 * m.total() / m.capacity, 1)
        + " %) with no memory kept free: the model counts " + decimal(m.overhead / GiB, 1)
        + " GiB of runtime overhead but not the allocator's fragmentation, which can run it out of memory; "
          "--memory-headroom 0.05 keeps 5 % free";
}

double memoryHeadroom(const CliArgs& args)
{
    const std::optional<double> f = args.doubleValue("memory-headroom", 0);
    if (f && *f > 0.5)
        throw UsageError("--memory-headroom: expected a fraction of device memory from 0 to 0.5, got " + args.value("memory-headroom").value_or(""));
    return f.value_or(0.0);
}

std::string applyFp8(const CliArgs& args, ModelSpec& model)
{
    const std::optional<std::string> r = args.value("fp8-recipe");
    if (r) {
        const std::optional<Fp8Recipe> recipe = parseFp8Recipe(*r);
        if (!recipe)
            throw UsageError("--fp8-recipe: expected delayed, tensorwise, mxfp8 or blockwise, got " + quotedValue(*r));
        model.training.fp8_recipe = *recipe;
    }
    if (const std::optional<std::string> v = args.value("fp8")) {
        bool known = false;
        for (Fp8Format f : {Fp8Format::None, Fp8Format::Hybrid, Fp8Format::E4M3})
            if (*v == toString(f)) {
                model.training.fp8_format = f;
                known = true;
            }
        if (!known)
            throw UsageError("--fp8: expected none, hybrid or e4m3, got \"" + *v + "\"");
        if (!model.training.fp8())
            model.training.fp8_param_gather = false;   // no FP8 weights without FP8
    }
    if (r && !model.training.fp8())
        return "--fp8-recipe " + printableText(*r) + ": the model does not train in FP8 (give --fp8 hybrid or e4m3), so there is "
               "nothing to scale";
    return {};
}

std::string recomputeText(const StagePlan& st)
{
    if (st.recompute == Recompute::Full)
        return st.recompute_layers > 0 && st.recompute_layers < st.num_layers
            ? "full " + std::to_string(st.recompute_layers) + "/" + std::to_string(st.num_layers)
            : "full";
    if (st.recompute == Recompute::Selective && st.recompute_modules != recompute_module::defaults)
        return "selective(" + recomputeModulesLabel(st.recompute_modules, ",") + ")";
    return toString(st.recompute);
}

std::vector<std::string> stageLayerRanges(const Plan& plan, int mtpLayers)
{
    std::vector<std::string> ranges = PipelineLayout::rankLayerRanges(plan);
    for (std::string& r : ranges)
        if (r.empty())
            r = "-";
    if (mtpLayers > 0 && !ranges.empty())
        ranges.back() += " " + PipelineLayout::mtpMark(mtpLayers);
    return ranges;
}

void checkScriptInputsHaveScript(const CliArgs& args)
{
    for (const char* option : {"script-args", "script-env"})
        if (args.has(option) && !args.has("script"))
            throw UsageError(std::string("--") + option + " needs --script (it gives what the script is run with)");
}

ScriptInputs scriptInputs(const CliArgs& args)
{
    ScriptInputs inputs;
    try {
        if (auto words = args.value("script-args"))
            inputs.arguments = splitShellWords(*words, "--script-args");
        for (const std::string& e : args.values("script-env"))
            addScriptEnvironment(inputs, e, "--script-env");
    } catch (const InputError& e) {
        throw UsageError("option " + e.where() + ": " + e.detail());
    }
    return inputs;
}

Profile readCommandProfile(const std::string& file, const ModelSpec& model, const DeviceCatalog& catalog,
                           Warnings& warnings, std::optional<Profile> profile)
{
    Profile p = profile ? std::move(*profile) : readProfile(readTextFile(file), file, &warnings);
    validateProfile(p, catalog, file);
    for (auto& w : profileWarnings(p, catalog, file))
        warnings.push_back(std::move(w));
    for (auto& w : profilePlausibilityWarnings(p, model, catalog, file))
        warnings.push_back(std::move(w));
    return p;
}

} // namespace hapmoe::cli
