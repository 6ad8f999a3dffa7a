// hapmoe validate FILE...: reads any hapmoe document, migrates and checks it, and says
// what it is. Exit 0 when every file is valid, 2 otherwise (each error names the file,
// the JSON path and what was expected).

#include "CliArgs.h"
#include "util/Strings.h"
#include "Commands.h"

#include "hardware/Cluster.h"
#include "hardware/ClusterTopology.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "util/InputError.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <cstdio>
#include <sstream>
#include <string>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe validate FILE... [--devices FILE] [--json]

Reads each file (hapmoe.model, hapmoe.cluster, hapmoe.profile, hapmoe.plan,
hapmoe.project or hapmoe.devices; the "format" key tells which), migrates older
versions, checks types and semantics, and prints "FILE: ok (...)" or the first error
with its JSON path. Warnings (unknown keys, migrations, cluster islands) go to stderr.
Exit code 0 when all files are valid, 2 otherwise.

Options:
  --devices FILE   a hapmoe.devices catalog adding or overriding device types
  --json           one JSON object on stdout instead: "files", one entry per FILE in order
                   with "file", "valid", "format" (when the file names one), "summary" (the
                   text after "ok"), "warnings", and for an invalid file "error" with
                   "file", "where" (the JSON path), "detail" and "message"; same exit code
)HELP";

void clusterWarnings(const Cluster& c, const DeviceCatalog& catalog, const std::string& file, Warnings& warnings)
{
    const ClusterTopology topology(c, catalog);
    for (const auto& p : topology.problems())
        warnings.push_back(file + ": cluster: " + p.message);
}

// The switches whose links up carry less than their links down, for the summary: the cost
// model gives traffic that leaves them that share (docs/cost-model.md section 6).
std::string oversubscribedSwitches(const Cluster& c, const DeviceCatalog& catalog)
{
    const SwitchUplinks u = switchUplinks(c, &catalog);
    std::string out;
    for (const Switch& s : c.switches) {
        const double over = u.oversubscription(s.id);
        if (over <= 0)
            continue;
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.3g:1", over);
        out += std::string(out.empty() ? "; oversubscribed: " : ", ") + "switch \"" + s.name + "\" " + ratio;
    }
    return out;
}

// Returns the "ok" summary; throws InputError. `formatOut`, when given, gets the document's
// format as soon as it is known (also when the document then proves invalid).
std::string validateOne(const std::string& file, const DeviceCatalog& given, const CliArgs& args, Warnings& warnings,
                        std::string* formatOut = nullptr)
{
    const std::string text = readTextFile(file);
    DeviceCatalog catalog = given;
    const DocumentVersion version = documentVersion(text, file);
    const std::string& format = version.format;
    if (formatOut)
        *formatOut = format;
    std::ostringstream os;
    // The version the file has, and the one it was read as when a migration upgraded it.
    os << format << " v" << version.version;
    if (version.version < version.current)
        os << ", migrated to v" << version.current;
    if (format == kModelFormat) {
        const ModelSpec m = readValidModel(text, file, &warnings);
        os << ", " << (m.name.empty() ? std::string("unnamed") : m.name) << ": " << m.num_layers << " layers, "
           << (m.isMoe() ? std::to_string(m.num_experts) + " experts top-" + std::to_string(m.moe_router_topk) : std::string("dense"));
    } else if (format == kClusterFormat) {
        const Cluster c = readValidCluster(text, file, catalog, &warnings);
        clusterWarnings(c, catalog, file, warnings);
        os << ", " << c.totalDevices() << " devices" << oversubscribedSwitches(c, catalog);
    } else if (format == kProfileFormat) {
        const Profile p = readProfile(text, file, &warnings);
        validateProfile(p, catalog, file);
        // Entries for a type the catalog does not know are never used by an estimate.
        for (auto& w : profileWarnings(p, catalog, file))
            warnings.push_back(std::move(w));
        os << ", " << p.compute.size() << " compute, " << p.collectives.size() << " collective, " << p.memory.size()
           << " memory entries";
    } else if (format == kPlanFormat) {
        // Checked on the device types it carries (PlanDocument::devices), with --devices over
        // them, as every command that reads the plan takes them.
        catalog = catalogForDocuments(args, {file}, true);
        // What `hapmoe plan` writes when nothing is feasible: its model and cluster are valid
        // (they can be searched again), and it says why there is no plan.
        if (const PlanContext c = readPlanContext(text, file); !c.has_plan && !c.no_plan_reason.empty()) {
            validateModel(c.model, file);
            validateCluster(c.cluster, catalog, file);
            os << ", no plan (the search found none: " << c.no_plan_reason << ")";
            return os.str();
        }
        PlanDocument d = readPlan(text, file, &warnings);
        validatePlanDocument(d, catalog, file);
        // Alternatives and baselines are kept for comparison; a problem in one of them is
        // reported but does not make the document invalid.
        for (auto& w : dropInvalidSearchPlans(d, catalog, file))
            warnings.push_back(std::move(w));
        os << ", " << d.plan.pp() << " stages on " << d.plan.numDevices() << " of " << d.cluster.totalDevices() << " devices";
    } else if (format == kProjectFormat) {
        // On its own device types (Project::devices), with --devices over them, as for a plan.
        catalog = catalogForDocuments(args, {file}, true);
        const Project p = readProject(text, file, &warnings);
        validateModel(p.model, file);
        validateCluster(p.cluster, catalog, file);
        clusterWarnings(p.cluster, catalog, file, warnings);
        if (p.profile) {
            validateProfile(*p.profile, catalog, file);
            for (auto& w : profileWarnings(*p.profile, catalog, file))
                warnings.push_back(std::move(w));
        }
        for (std::size_t i = 0; i < p.plans.size(); ++i)
            validateProjectPlan(p, i, catalog, file);
        os << ", " << p.model.name << " on " << p.cluster.totalDevices() << " devices, " << p.plans.size()
           << (p.plans.size() == 1 ? " saved plan" : " saved plans") << oversubscribedSwitches(p.cluster, catalog);
        if (p.profile)
            os << ", profile \"" << p.profile->name << "\"";
    } else if (format == kDevicesFormat) {
        const DeviceCatalog c = DeviceCatalog::fromJson(text, file, &warnings);
        // As --devices FILE merges it: a name or alias that already names another type is refused.
        DeviceCatalog merged = catalog;
        merged.merge(c, file);
        os << ", " << c.types().size() << " device types";
    } else {
        throw InputError(file, "format", "unknown format \"" + shortenedForMessage(format) + "\"; expected hapmoe.model, hapmoe.cluster, "
                                         "hapmoe.profile, hapmoe.plan, hapmoe.project or hapmoe.devices");
    }
    return os.str();
}

} // namespace

int cmdValidate(const Args& args)
{
    const CliArgs a(args, {"devices"}, {"help", "json"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (a.positionals().empty())
        throw UsageError("expected at least one FILE", kHelp);
    const DeviceCatalog catalog = catalogFromArgs(a);
    int exitCode = Success;
    if (a.has("json")) {
        nlohmann::ordered_json files = nlohmann::ordered_json::array();
        for (const auto& file : a.positionals()) {
            Warnings warnings;
            nlohmann::ordered_json entry;
            entry["file"] = file;
            std::string format;   // known once the file is JSON that names one
            try {
                const std::string summary = validateOne(file, catalog, a, warnings, &format);
                entry["valid"] = true;
                entry["format"] = format;
                entry["summary"] = summary;
            } catch (const InputError& e) {
                entry["valid"] = false;
                if (!format.empty())
                    entry["format"] = format;
                entry["error"] = {{"file", e.file().empty() ? file : e.file()},
                                  {"where", e.where()},
                                  {"detail", e.detail()},
                                  {"message", (e.file().empty() ? file + ": " : std::string()) + e.what()}};
                exitCode = BadInput;
            }
            entry["warnings"] = warnings;
            files.push_back(std::move(entry));
        }
        std::cout << nlohmann::ordered_json{{"files", std::move(files)}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
        return exitCode;
    }
    for (const auto& file : a.positionals()) {
        Warnings warnings;
        try {
            const std::string summary = validateOne(file, catalog, a, warnings);
            for (const auto& w : warnings)
                std::cerr << "warning: " << printableText(w) << "\n";
            std::cout << file << ": ok (" << summary << ")\n";
        } catch (const InputError& e) {
            for (const auto& w : warnings)
                std::cerr << "warning: " << printableText(w) << "\n";
            // InputError's text already starts with the file when it came from one.
            const std::string what = e.what();
            std::cerr << "hapmoe validate: error: " << printableText((e.file().empty() ? file + ": " : std::string()) + what) << "\n";
            exitCode = BadInput;
        }
    }
    return exitCode;
}

} // namespace hapmoe::cli
