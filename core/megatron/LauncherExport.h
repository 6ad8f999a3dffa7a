#pragma once
// Writes a standalone launcher for a plan (DESIGN section 6, paper section 4): Megatron-LM
// (uniform knobs, non-uniform layout, node order places stages on their device types) or
// FlagScale (heterogeneous meshes, hostfile with type=). Every emitted flag exists in the
// target's flag list; values that would fail Megatron's own checks are refused first.

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/ScriptImport.h"

#include <optional>
#include <string>
#include <vector>

namespace hapmoe {

enum class LauncherFormat { Megatron, FlagScale };

struct ExportOptions {
    LauncherFormat format = LauncherFormat::Megatron;
    std::optional<ImportedScript> original;   // the user's script: other flags carried over
    std::string master_port;                  // empty: the original's own default port, else 6000
    bool layout_shorthand = true;             // "Et*5|t*8L" rather than "Ettttt|ttttttttL"
    std::string entry_script;                 // default: the original's, else pretrain_gpt.py
                                              // (FlagScale: ${FLAGSCALE_HOME}/flagscale/train/train_gpt.py)
    const DeviceCatalog* catalog = nullptr;   // default: DeviceCatalog::builtin()
    std::string script_name = "launch.sh";    // the file name the usage comment runs it by
    std::string hostfile_name;                // FlagScale: the hostfile the usage comment names ("" = beside it)
    bool hostfile_written = true;             // FlagScale: false when the launcher goes to stdout alone
};

struct ExportCheck {
    std::string rule;       // "world % (TP*PP*CP) == 0", ...
    bool ok = true;
    std::string message;
};

struct ExportResult {
    bool ok = false;
    std::string script;     // the launcher (bash)
    std::string hostfile;   // FlagScale: "<host> slots=N type=T" lines; Megatron: node order
    std::vector<ExportCheck> checks;
    std::string refusal;    // first failed rule, when !ok
    std::vector<std::string> node_order;   // host of each node rank
    std::vector<std::string> notes;        // flags of the original not carried over, and why
};

// The checks of reference section 11 (and section 9 for FlagScale) on a plan, without
// writing anything: every rule with ok / message, in a fixed order.
std::vector<ExportCheck> launcherChecks(const PlanDocument& doc, const ExportOptions& options);

ExportResult exportLauncher(const PlanDocument& doc, const ExportOptions& options);

} // namespace hapmoe
