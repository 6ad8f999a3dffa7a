// hapmoe export PLAN.json --format megatron|flagscale [--script ORIGINAL.sh] -o launch.sh:
// writes a launcher for a plan after checking every rule the target enforces; a plan the
// target cannot run is refused with the rule it breaks (exit code 2).

#include "CliArgs.h"
#include "Commands.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LauncherExport.h"
#include "megatron/ScriptImport.h"

#include <filesystem>
#include <iostream>

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
                    and exported variables are carried over
  -o FILE           the launcher (default: print it)
  --hostfile FILE   where to write the hostfile (default: beside the launcher, .hostfile)
  --master-port N   default master port (default 6000)
  --layout-letters  write the layout as letters ("Ettttt|...") instead of "Et*5|..."
  --devices FILE    a hapmoe.devices catalog adding or overriding device types
)HELP";

} // namespace

int cmdExport(const Args& args)
{
    const CliArgs a(args, {"format", "script", "o", "hostfile", "master-port", "devices"}, {"help", "layout-letters"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (a.positionals().size() != 1)
        throw UsageError("expected one PLAN.json\n\n" + std::string(kHelp));
    const std::string format = a.required("format");
    ExportOptions options;
    if (format == "megatron")
        options.format = LauncherFormat::Megatron;
    else if (format == "flagscale")
        options.format = LauncherFormat::FlagScale;
    else
        throw UsageError("--format: expected megatron or flagscale, got \"" + format + "\"");
    DeviceCatalog catalog = DeviceCatalog::builtin();
    if (auto devices = a.value("devices")) {
        Warnings w;
        catalog.merge(DeviceCatalog::fromJson(readTextFile(*devices), *devices, &w));
        for (const auto& x : w)
            std::cerr << "warning: " << x << "\n";
    }
    options.catalog = &catalog;
    if (auto port = a.value("master-port"))
        options.master_port = *port;
    options.layout_shorthand = !a.has("layout-letters");

    const std::string planFile = a.positionals().front();
    Warnings warnings;
    const PlanDocument doc = readPlan(readTextFile(planFile), planFile, &warnings);
    for (const auto& w : warnings)
        std::cerr << "warning: " << w << "\n";
    if (auto script = a.value("script")) {
        options.original = importMegatronScriptFile(*script);
        for (const std::string& w : options.original->warnings)
            std::cerr << "warning: " << *script << ": " << w << "\n";
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
    std::cerr << "node order (node rank: host):";
    for (std::size_t i = 0; i < r.node_order.size(); ++i)
        std::cerr << " " << i << ":" << r.node_order[i];
    std::cerr << "\n";

    const auto out = a.value("o");
    if (!out) {
        std::cout << r.script;
        return Success;
    }
    saveFileAtomically(*out, r.script);
    std::error_code ec;
    std::filesystem::permissions(*out,
                                 std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec
                                     | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add, ec);
    std::cout << "wrote " << *out << "\n";
    std::string hostfile = a.value("hostfile").value_or("");
    if (hostfile.empty() && options.format == LauncherFormat::FlagScale)
        hostfile = std::filesystem::path(*out).replace_extension(".hostfile").string();
    if (!hostfile.empty()) {
        saveFileAtomically(hostfile, r.hostfile);
        std::cout << "wrote " << hostfile << "\n";
    }
    return Success;
}

} // namespace hapmoe::cli
