// hapmoe export PLAN.json --format megatron|flagscale [--script ORIGINAL.sh] -o launch.sh:
// writes a launcher for a plan after checking every rule the target enforces; a plan the
// target cannot run is refused with the rule it breaks (exit code 2).

#include "CliArgs.h"
#include "util/Strings.h"
#include "Commands.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LauncherExport.h"
#include "megatron/ScriptImport.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe export PLAN.json --format megatron|flagscale [--script ORIGINAL.sh]
                     [-o launch.sh] [--hostfile FILE] [--master-port N] [--layout-letters]
                     [--devices FILE]

Writes a bash launcher that runs the plan: the same script on every node, with the node
rank as its first argument (or NODE_RANK in the environment).
  megatron    Megatron-LM: uniform knobs, the layer split as --pipeline-model-parallel-layout,
              node order that puts each pipeline stage on its device type
  flagscale   FlagScale heterogeneous training: --hetero-process-meshes (TP CP EP DP PP per
              mesh), device types, layer split, per-stage recompute, and a hostfile with type=
Every rule the target checks (world size, divisibility, batch, sequence length with CP,
bias with expert TP, grouped GEMM on old devices, host names, ...) is checked first; a plan
that breaks one is refused with the rule.

Options:
  --script FILE     the original Megatron-LM script: its data, logging and checkpoint flags
                    and exported variables are carried over (default: for a project
                    imported from a script, that script, read as it was imported)
  --script-args WORDS  the original script's arguments, as `bash FILE WORDS` gets them
  --script-env NAME=VALUE  a variable of the original script's environment (repeatable)
  -o FILE           the launcher (default: print it, and write no file)
  --hostfile FILE   where to write the hostfile (needs -o; default for flagscale: beside
                    the launcher, with the extension .hostfile)
Every output path is checked before anything is written; when one cannot be written, no
file is left behind (a file that existed keeps its old content).
  --master-port N   default master port (default: the --script's own, else 6000)
  --layout-letters  write the layout as letters ("Ettttt|...") instead of "Et*5|..."
  --devices FILE    a hapmoe.devices catalog adding or overriding device types
  --saved-plan N    PLAN.json may be a project (hapmoe import -o, the studio's .hapmoe):
                    its saved plan N, from 1 (default 1)
)HELP";

} // namespace

int cmdExport(const Args& args)
{
    const CliArgs a(args, {"format", "script", "script-args", "o", "hostfile", "master-port", "devices", "saved-plan"}, {"help", "layout-letters"},
                    {"script-env"});
    checkScriptInputsHaveScript(a);
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (a.positionals().size() != 1)
        throw UsageError("expected one PLAN.json", kHelp);
    if (a.has("hostfile") && !a.has("o"))
        throw UsageError("--hostfile needs -o (without -o the launcher is printed and no file is written)");
    std::string format = a.required("format");
    std::transform(format.begin(), format.end(), format.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    ExportOptions options;
    if (format == "megatron")
        options.format = LauncherFormat::Megatron;
    else if (format == "flagscale")
        options.format = LauncherFormat::FlagScale;
    else
        throw UsageError("--format: expected megatron or flagscale, got \"" + format + "\"");
    if (auto port = a.value("master-port"))
        options.master_port = *port;
    options.layout_shorthand = !a.has("layout-letters");

    const std::string planFile = a.positionals().front();
    // Every path is known and checked before anything is computed or written.
    const auto out = a.value("o");
    std::string hostfile = a.value("hostfile").value_or("");
    const bool defaultHostfile = out && hostfile.empty() && options.format == LauncherFormat::FlagScale;
    if (defaultHostfile)
        hostfile = std::filesystem::path(*out).replace_extension(".hostfile").string();
    if (out) {
        const std::vector<InputFile> inputs = givenInputs(a, {"script", "devices"}, {{"PLAN.json", planFile}});
        checkOutputPath("-o", *out, inputs);
        if (!hostfile.empty()) {
            checkOutputPath("--hostfile", hostfile, inputs);
            std::error_code ec;
            if (std::filesystem::weakly_canonical(hostfile, ec) == std::filesystem::weakly_canonical(*out, ec))
                throw UsageError(defaultHostfile ? "-o: the hostfile goes beside the launcher as " + hostfile
                                                       + ", which is the launcher itself; give --hostfile FILE"
                                                 : "--hostfile: " + hostfile + " is the launcher itself (-o); give another file");
        }
    }
    options.hostfile_written = out.has_value();   // to stdout: the launcher alone
    if (out) {   // the usage comment names the files as written
        const std::filesystem::path script(*out);
        options.script_name = script.filename().string();
        // FlagScale's hostfile: by its name when it sits beside the launcher (the default), else
        // by the path as given.
        if (options.format == LauncherFormat::FlagScale && !hostfile.empty() && !defaultHostfile) {
            std::error_code ec;
            const std::filesystem::path host(hostfile);
            const bool beside = std::filesystem::weakly_canonical(host.parent_path().empty() ? "." : host.parent_path(), ec)
                == std::filesystem::weakly_canonical(script.parent_path().empty() ? "." : script.parent_path(), ec);
            options.hostfile_name = beside ? host.filename().string() : hostfile;
        }
    }
    Warnings warnings;
    std::string projectScript;
    ScriptInputs projectScriptInputs;
    const PlanDocument doc = readPlanFile(a, planFile, warnings, nullptr, &projectScript, &projectScriptInputs);
    const DeviceCatalog catalog = catalogForPlan(a, doc, planFile);   // the plan's own device types, --devices over them
    options.catalog = &catalog;
    validatePlanDocument(doc, catalog, planFile);
    for (const auto& w : warnings)
        std::cerr << "warning: " << printableText(w) << "\n";
    if (auto script = a.value("script")) {
        options.original = importMegatronScriptFile(*script, scriptInputs(a));
        for (const std::string& w : options.original->warnings)
            std::cerr << "warning: " << printableText(*script + ": " + w) << "\n";
    } else if (!projectScript.empty()) {
        // A project imported from a script exports into that script, as the studio's export
        // does: its entry, data, tokenizer and other flags are kept. One that no longer reads
        // leaves a benchmark launcher, with a warning. A relative path (projects written
        // before paths were kept absolute) is taken from the folder the command runs in, else
        // the project's.
        std::error_code ec;
        if (std::filesystem::path(projectScript).is_relative() && !std::filesystem::exists(projectScript, ec)) {
            const std::filesystem::path beside = std::filesystem::path(planFile).parent_path() / projectScript;
            if (std::filesystem::exists(beside, ec))
                projectScript = beside.string();
        }
        // Neither output may replace it: checked as every output is against the inputs.
        const std::vector<InputFile> base{{"the script the project was imported from", projectScript}};
        if (out)
            checkOutputPath("-o", *out, base);
        if (!hostfile.empty())
            checkOutputPath("--hostfile", hostfile, base);
        try {
            options.original = importMegatronScriptFile(projectScript, projectScriptInputs);
            std::cerr << "note: the launcher is based on " << printableText(projectScript)
                      << ", the script the project was imported from (--script gives another)\n";
        } catch (const std::exception& e) {
            std::cerr << "warning: " << printableText(planFile) << ": the script it was imported from no longer reads ("
                      << printableText(e.what()) << "); the launcher is a benchmark run on mock data\n";
        }
    }

    const ExportResult r = exportLauncher(doc, options);
    for (const ExportCheck& c : r.checks)
        std::cerr << (c.ok ? "  ok      " : "  FAILED  ") << c.rule << (c.message.empty() ? "" : ": " + c.message) << "\n";
    if (!r.ok) {
        std::cerr << "hapmoe export: refused: " << r.refusal << "\n";
        return BadInput;
    }
    for (const std::string& n : r.notes)
        std::cerr << "note: " << n << "\n";
    // The launcher runs what the plan says, fit or not: say so when the cost model (with the
    // overlap switches the plan was estimated with) finds a stage that runs out of memory.
    CostOptions cost;
    if (doc.prediction)
        cost.overlap = doc.prediction->overlap;
    const Prediction fit = CostModel(doc.model, doc.cluster, catalog, nullptr, cost).estimate(doc.plan);
    if (!fit.feasible)
        std::cerr << "warning: the plan does not fit in device memory (" << fit.infeasible_reason
                  << "): the launcher would run out of memory\n";
    std::cerr << "node order (node rank: host):";
    for (std::size_t i = 0; i < r.node_order.size(); ++i)
        std::cerr << " " << i << ":" << r.node_order[i];
    std::cerr << "\n";

    if (!out) {
        std::cout << r.script;
        return Success;
    }
    std::vector<std::pair<std::string, std::string>> files{{*out, r.script}};
    if (!hostfile.empty())
        files.push_back({hostfile, r.hostfile});
    saveFilesAllOrNothing(files);
    std::error_code ec;
    std::filesystem::permissions(*out,
                                 std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec
                                     | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add, ec);
    for (const auto& f : files)
        std::cout << "wrote " << f.first << "\n";
    return Success;
}

} // namespace hapmoe::cli
