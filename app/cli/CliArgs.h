#pragma once
// A small, strict argument parser for the hapmoe subcommands: "--name value", "--name=value",
// boolean switches and positionals ("--" ends the options; "-h" is "--help" where the command
// has it). Unknown options, missing or empty values and an option given twice are usage errors
// (exit code 2), reported with the option's name.

#include "cost/Prediction.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"
#include "profile/Profile.h"
#include "util/InputError.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hapmoe {
struct PlanDocument;
class DeviceCatalog;
struct ScriptInputs;
}

namespace hapmoe::cli {

enum ExitCode { Success = 0, NoFeasiblePlan = 1, BadInput = 2 };

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    // An error followed by the command's own help text, which is printed as written (the
    // message itself may quote the user's input and is printed with its controls escaped).
    UsageError(const std::string& message, std::string usage)
        : std::runtime_error(message), m_usage(std::move(usage)) {}
    const std::string& usage() const { return m_usage; }

private:
    std::string m_usage;
};

class CliArgs {
public:
    // valueOptions take a value; switches do not; repeatable options take a value each time
    // they are given (values()). Names without the leading "--".
    CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valueOptions,
            const std::set<std::string>& switches, const std::set<std::string>& repeatable = {});

    bool has(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
    // Every value of a repeatable option, in the order given.
    std::vector<std::string> values(const std::string& name) const;
    std::string required(const std::string& name) const;            // throws UsageError
    // Integers in [min, max]; throws UsageError saying which bound or which text is wrong.
    std::optional<int> intValue(const std::string& name, int min = 1, int max = kMaxInt) const;
    // Finite numbers >= min (a positive value too small for a double reads as itself or 0);
    // throws UsageError.
    std::optional<double> doubleValue(const std::string& name, double min = 0) const;

    static constexpr int kMaxInt = 1'000'000'000;
    const std::vector<std::string>& positionals() const { return m_positionals; }

private:
    void setValue(const std::string& spelling, const std::string& name, const std::string& value);

    std::map<std::string, std::string> m_values;
    std::map<std::string, std::vector<std::string>> m_lists;
    std::set<std::string> m_switches;
    std::vector<std::string> m_positionals;
};

// The built-in device catalog, with the types of `--devices FILE` (a hapmoe.devices file)
// merged over it when the option is given; warnings go to stderr. Throws InputError.
DeviceCatalog catalogFromArgs(const CliArgs& args);
// The catalog plan and project documents are costed with: the built-in one, the device types
// each of `files` carries when it is a hapmoe.plan document (what it was made with:
// PlanDocument::devices) or a hapmoe.project (Project::devices; a preset name, a shorthand or
// another document adds nothing), then `--devices FILE`, which wins for the types it names.
// `quiet`: the --devices file's warnings
// are not printed (a caller that printed them once).
DeviceCatalog catalogForDocuments(const CliArgs& args, const std::vector<std::string>& files, bool quiet = false);
// The plan of a hapmoe.plan document, or of a hapmoe.project's saved plans (`--saved-plan N`,
// 1-based, default 1, with a note on stderr saying which), as a plan document of the project's
// model, cluster and device types. Throws InputError (no saved plan) or UsageError (N beyond
// them, or --saved-plan with a plan document). `projectProfile`, when given, receives the
// project's profile (the one its saved plans were costed with; none for a plan document).
// `projectScript` and `projectScriptInputs`, when given, receive the script the project was
// imported from and what it was read with (empty for a plan document or a drawn project).
PlanDocument readPlanFile(const CliArgs& args, const std::string& file, Warnings& warnings,
                          std::optional<Profile>* projectProfile = nullptr, std::string* projectScript = nullptr,
                          ScriptInputs* projectScriptInputs = nullptr);
// A profile a command costs with (--profile FILE, or a project's own: `file` then names it
// in messages and is not read): read and validated (InputError), and its warnings added to `warnings`
// as "hapmoe validate" gives them, with what looks implausible for `model` (entries of
// unknown device types, times that fall as the work grows, times or sizes in another unit:
// cost/ProfileCheck.h).
Profile readCommandProfile(const std::string& file, const ModelSpec& model, const DeviceCatalog& catalog,
                           Warnings& warnings, std::optional<Profile> profile = std::nullopt);
// The catalog a plan read by readPlanFile is costed with: the built-in one with the device
// types it carries, then `--devices FILE` over them (catalogForDocuments for a plan already
// read, so that its file is not parsed a second time).
DeviceCatalog catalogForPlan(const CliArgs& args, const PlanDocument& doc, const std::string& file);

// An input of a command that names a file: the option as written ("--plan", "SCRIPT") and its
// value. Values that are not existing files (presets, shorthands) are skipped by the check below.
struct InputFile {
    std::string flag;
    std::string path;
};

// The inputs given by the options `names` ("model" for --model), after the ones in `first`
// (positionals and required options the caller has already read).
std::vector<InputFile> givenInputs(const CliArgs& args, std::initializer_list<const char*> names,
                                   std::vector<InputFile> first = {});

// Refuses an output path before anything is computed or written: empty, a directory, an
// existing file that is not a regular file (a device or a pipe would be replaced), a folder
// that does not exist or cannot be written, or one of the command's inputs (the output would
// replace it). flag is the option as written ("-o", "--trace"). Throws UsageError or InputError.
void checkOutputPath(const std::string& flag, const std::string& path, const std::vector<InputFile>& inputs = {});

// --script-args WORDS and --script-env NAME=VALUE (repeatable): what the launch script given
// to the command (SCRIPT or --script) is run with. Throws UsageError naming the option.
ScriptInputs scriptInputs(const CliArgs& args);
// For a command whose script is --script: either option without it is a usage error.
void checkScriptInputsHaveScript(const CliArgs& args);

// --memory-headroom F: the fraction of every device's memory a plan must leave free (the
// allocator's fragmentation, other processes), in [0, 0.5]; 0 when not given. Throws UsageError.
double memoryHeadroom(const CliArgs& args);

// --fp8 none|hybrid|e4m3 (Megatron-LM's --fp8-format) and --fp8-recipe (Megatron-LM's), applied
// to the model's training section when given. Returns a note when a recipe is given to a model
// that does not train in FP8, else empty. Throws UsageError.
std::string applyFp8(const CliArgs& args, ModelSpec& model);

// "stage 1 (MI300X) uses 186.1 of 192.0 GiB (96.9 %) with no memory kept free: ...
// --memory-headroom 0.05 keeps 5 % free" for a plan whose fullest device is more than 95 %
// full with no headroom (nearlyFullStage), else empty.
std::string nearlyFullNote(const Plan& plan, const Prediction& prediction);

// The decoder layers each stage of the plan holds, for a table's layers column: "0-11", or
// with virtual chunks one range per chunk ("0-5, 24-29"; PipelineLayout::rankLayerRanges).
// Each stage's decoder layers ("0-3", or per chunk with VPP); the last stage's ends in "+MTP"
// ("+2 MTP") when the model has multi-token-prediction depths, which Megatron-LM puts there.
std::vector<std::string> stageLayerRanges(const Plan& plan, int mtpLayers);
// A stage's recompute as the tables of plan and estimate write it: "full 1/4" (layers of the
// stage's), "full", "selective", "selective(moe_act,layernorm)" for modules other than the default.
std::string recomputeText(const StagePlan& stage);

} // namespace hapmoe::cli
