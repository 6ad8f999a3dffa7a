#pragma once
// Reads a Megatron-LM launch script as text (never executes it): bash variables with
// defaults, exported variables, arrays, line continuations, comments, torchrun or
// python -m torch.distributed.run, the entry script and its flags (DESIGN section 6).

#include "cost/CostModel.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "megatron/ScriptInputs.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"
#include "util/InputError.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

// One flag of the entry script with its values, exactly as given (after expansion).
struct ScriptFlag {
    std::string name;                  // "--data-path"
    std::vector<std::string> values;   // may be empty for switches
    // Variables from outside the script its words read (ShellCommand::word_reads):
    // the value is the one they had when the script was read.
    std::vector<std::string> environment_reads;
    // Those read by a word of its own (WordReads::exact), not only by a value
    // bash split into this flag's words and others.
    std::vector<std::string> exact_environment_reads;
};

// One process mesh of FlagScale's heterogeneous mode: --hetero-process-meshes gives TP CP EP
// DP PP per mesh, --hetero-device-types its device-type label, and mesh i runs the global
// pipeline stages after those of meshes 0..i-1 (reference section 9).
struct ProcessMesh {
    int tp = 1, cp = 1, ep = 1, dp = 1, pp = 1;
    int etp = 1;                 // --expert-tensor-parallel-size-per-process-mesh, else
                                 // --expert-tensor-parallel-size, else the mesh's TP
    int micro_batch_size = 1;    // DP_0 * --micro-batch-size / DP_i (pre_validate_args)
    std::string device_type;     // the label, as written in --hetero-device-types
    int first_stage = 0;         // global pipeline stages [first_stage, first_stage + pp)

    int numDevices() const { return tp * cp * dp * pp; }
};

// The full recompute of one global pipeline stage as FlagScale's per-stage lists give it
// (--recompute-*-per-stage-micro-batch), one setting for all its micro-batches.
struct StageRecompute {
    bool full = false;
    int layers = 0;              // layers of the stage recomputed (0 = all)
};

struct ParallelConfig {
    int tp = 1, pp = 1, cp = 1, ep = 1, etp = 0;   // etp 0 = Megatron default (= TP)
    int vpp = 1;
    std::string layout;                 // --pipeline-model-parallel-layout, if given
    Recompute recompute = Recompute::None;
    int recompute_layers = 0;           // --recompute-num-layers of the block method (per model
                                        // chunk with VPP); 0 = every layer
    int recompute_num_layers = 0;       // --recompute-num-layers as written, either method (0: not given)
    std::string recompute_method;       // "uniform" | "block" | ""
    unsigned recompute_modules = recompute_module::defaults;   // selective: the modules the model knows
    bool distributed_optimizer = false;
    bool sequence_parallel = false;
    double optimizer_offload_fraction = 0.0;   // --optimizer-cpu-offload [--optimizer-offload-fraction F]
    int micro_batch_size = 1;
    int global_batch_size = 0;          // 0 = MBS * DP (Megatron default)
    // Communication overlap switches, as Megatron-LM applies them (all off by default):
    // --overlap-grad-reduce; --overlap-param-gather (needs the former and the distributed
    // optimizer); --tp-comm-overlap (needs TP > 1 with sequence parallelism). The flags
    // themselves stay in other_flags, so an export carries them over verbatim.
    bool overlap_grad_reduce = false;
    bool overlap_param_gather = false;
    bool tp_comm_overlap = false;
    // Megatron-LM's overlap_p2p_comm: on unless --no-overlap-p2p-communication (it matters
    // only with the interleaved schedule).
    bool overlap_p2p = true;
    std::vector<int> layer_split;       // layers per pipeline rank, from the layout or the
                                        // first/last-stage flags; empty = even split
    std::vector<std::vector<int>> layer_chunks;   // with VPP > 1: decoder layers of each model
                                                  // chunk per rank, when not an even spread (the
                                                  // layout, the account-for flags); else empty
    // FlagScale's heterogeneous mode (--enable-hetero with --hetero-process-meshes): every rank
    // runs its mesh's TP, CP, EP, DP and micro-batch size instead of the global flags above
    // (which stay as written; pp is the global --pipeline-model-parallel-size, the sum of the
    // meshes' PP). layer_split then holds --hetero-pipeline-layer-split (or FlagScale's even
    // split), one count per global stage. Empty for a Megatron-LM script.
    std::vector<ProcessMesh> meshes;
    // Per global stage, when the --recompute-*-per-stage-micro-batch lists are read; empty =
    // the global recompute setting on every stage.
    std::vector<StageRecompute> stage_recompute;
    bool hetero_cpu_communication = false;   // --hetero-use-cpu-communication

    bool hetero() const { return !meshes.empty(); }
};

// A mapped flag whose value could not be used; the field kept its default (and a warning
// says so). Also a FlagScale heterogeneous flag that breaks FlagScale's rules (detail says
// which). validateScriptModel and planFromScript refuse a script with one.
struct InvalidFlagValue {
    std::string flag;       // "--hidden-size"
    std::string value;      // as given ("" when the flag had no value)
    std::string expected;   // "an integer from 1 to 100000000"
    std::string detail;     // the whole message instead of "expected ..., got ...", for a rule
                            // between flags (FlagScale's meshes against --num-layers, ...)
};

struct ImportedScript {
    std::string file;
    ScriptInputs inputs;                // what the reading was given
    ModelSpec model;
    ParallelConfig parallel;
    int nnodes = 1;
    // The launch's node count is a variable or command output the reading could not know
    // (NNODES=$(wc -l < $HOSTFILE)): nnodes is the assumed 1, and planFromScript takes the
    // cluster's leading nodes of one type instead, as many as the script's TP*PP*CP divides.
    bool nnodes_unknown = false;
    // A multimodal entry (examples/multimodal/train.py) with --decoder-seq-length: the model's
    // seq_length is that (the language model's), and this its --seq-length (the vision
    // encoder's), which an export writes back as it was. 0 otherwise.
    int multimodal_encoder_seq_length = 0;
    int nproc_per_node = 1;
    int world_size = 1;
    std::string launcher;               // "torchrun" | "python -m torch.distributed.run" | "python"
    std::string entry_script;           // "pretrain_gpt.py"
    std::vector<ScriptFlag> other_flags;      // every flag not mapped to the model/parallel config
    // Variables from outside the script that the launch command's words read but that gave no
    // word at all (an empty $EXTRA_ARGS).
    std::vector<std::string> vanished_environment_reads;
    // For each variable of the environment the script read unset, the texts its defaults gave
    // (BashReader::environmentDefaults).
    std::map<std::string, std::vector<std::string>> environment_defaults;
    // For each variable of the environment the launch command read unset to switch words on
    // (${USE_FP8:+--fp8-format hybrid}), those words as written (BashReader::environmentSwitches).
    std::map<std::string, std::vector<std::string>> environment_switches;
    // Words the launch command would have had from a branch that a test on the environment or
    // the script's arguments skipped (BashReader::skippedByTest), when they hold a flag of
    // Megatron-LM or FlagScale: `if [ -n "$WANDB_API_KEY" ]; then LOGGING_ARGS+=(--wandb-project
    // ...); fi`, read without the key.
    struct SkippedWords {
        int line = 0;                     // of the test
        std::string name;                 // the variable or array the branch sets
        std::string words;                // as written
        std::vector<std::string> reads;   // what the test read ("$1" for an argument)
    };
    std::vector<SkippedWords> skipped_by_test;
    std::vector<std::string> environment;     // "NAME=value" exports seen
    std::map<std::string, std::string> environment_raw;   // NAME -> its assignment as written
                                                           // ("${NAME:-4}"), for those exports
    std::vector<std::string> warnings;        // unknown flags, unexpanded values, ...
    std::vector<InvalidFlagValue> invalid_values;   // mapped flags with values that could not be read
    std::set<std::string> given_flags;        // every flag of the entry script, by name
    bool crlf_line_ends = false;              // Windows line ends: bash keeps the '\r' in words
    std::vector<std::string> node_hosts;      // NODE_HOSTS=( ... ): node-rank order, when given
    // NODE_TYPES=( ... ): the device type of each node rank, as an exported launcher writes it
    // (a Megatron-LM one for the reader only); empty when the script has no such array.
    std::vector<std::string> node_types;
    // NODE_DEVICES=( 2,3,4,5 ... ), as an exported launcher writes for a plan that leaves some
    // devices of a node idle: the local devices of each node rank's processes, in rank order.
    std::vector<std::vector<int>> node_devices;
    // Values the script takes per node from an array indexed by the node rank, as the
    // exported FlagScale launcher does (--nproc_per_node "${NODE_SLOTS[${NODE_RANK}]}",
    // --hetero-current-device-type "${NODE_TYPES[${NODE_RANK}]}"): one entry per node rank;
    // empty when the script gives one value for every node.
    std::vector<int> node_processes;          // then nproc_per_node is the first entry
    std::vector<std::string> node_device_types;
    std::string master_addr;
    std::string master_port;
    int command_line = 0;                     // line of the launch command in the script
    // FlagScale's --hetero-current-device-type as this reading gave it (the label of this
    // node's device type); empty when not given or taken per node from an array.
    std::string current_device_type;
    // Commands the script ran before the launch command that set up where and with what it
    // runs: `cd DIR` and `source FILE` (`. FILE`), their words expanded, in order. An export
    // writes them again; the import follows neither.
    struct SetupCommand {
        int line = 0;
        std::vector<std::string> words;
    };
    std::vector<SetupCommand> setup_commands;
};

// Reads the script as it is: a flag it cannot map or a value it cannot read is a warning
// (and an entry of invalid_values), so that an editor can show what was recovered.
ImportedScript importMegatronScript(std::string_view text, const std::string& fileName,
                                    const ScriptInputs& inputs = {});
// Reads the file (InputError when it cannot) and imports it.
ImportedScript importMegatronScriptFile(const std::string& path, const ScriptInputs& inputs = {});

// The script's model checked as a hapmoe.model is (validateModel): no unreadable value of
// a mapped flag and no FlagScale mesh flag that breaks FlagScale's rules (reference section
// 9: five integers per mesh, the sum of the meshes' PP, the layer split, integral mesh
// micro-batch sizes, CP 1, no VPP, ...), the flags Megatron-LM requires (--num-layers, --hidden-size,
// --num-attention-heads, --seq-length), and every rule of validateModel. Throws InputError
// with the script file and the flag (where = "--hidden-size"), not the model's JSON path.
void validateScriptModel(const ImportedScript& script);

// FlagScale's world check of a heterogeneous script: its meshes hold as many ranks (the sum of
// TP*CP*DP*PP) as the processes it starts. Throws InputError naming --hetero-process-meshes.
void checkMeshWorld(const ImportedScript& script, long long processes);

// The imported configuration placed on the cluster in node order (what the user runs
// today): a uniform Megatron-style plan, or for a FlagScale heterogeneous script one stage
// per global pipeline stage with its mesh's knobs, on the nodes whose device type matches
// the mesh's label, in FlagScale's rank order (target FlagScale). Validates the model first
// (validateScriptModel), then the plan as validatePlanDocument does (and, for FlagScale,
// deploymentProblems); throws InputError naming the script and the flag when it does not fit.
Plan planFromScript(const ImportedScript& script, const Cluster& cluster,
                    const DeviceCatalog& catalog);

// The cost model's options as the script runs: its overlap switches (ParallelConfig) over
// base. Without --overlap-grad-reduce Megatron-LM reduces gradients after the backward, so
// an estimate of the script's own configuration must not hide that traffic.
CostOptions scriptCostOptions(const ImportedScript& script, CostOptions base = {});
// The cost model's options as a launcher exported from a plan for this script runs
// (LauncherExport): the data-parallel overlap on, because the export writes
// --overlap-grad-reduce and, with the distributed optimizer, --overlap-param-gather; the
// script's --tp-comm-overlap and p2p overlap, because the export keeps its flags. A search
// with a current configuration costs every plan, the current one included, with these, and
// so do the re-estimates of its plans (What-if).
CostOptions exportCostOptions(const ImportedScript& script, CostOptions base = {});
// When the script leaves its data-parallel traffic exposed (no --overlap-grad-reduce, or the
// distributed optimizer without --overlap-param-gather): what a search that compares it with
// the traffic overlapped, as exported scripts run, should tell the user. Empty otherwise.
std::string scriptOverlapNote(const ImportedScript& script);

// What `--script FILE` gives a command: the script's model and its current configuration
// on the cluster (estimate uses the plan; plan passes it as SearchOptions::current), both
// checked by planFromScript.
struct ScriptConfiguration {
    ImportedScript script;
    ModelSpec model;
    Plan plan;
};
ScriptConfiguration loadScriptConfiguration(const std::string& path, const Cluster& cluster,
                                            const DeviceCatalog& catalog, const ScriptInputs& inputs = {});

} // namespace hapmoe
