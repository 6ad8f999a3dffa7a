#pragma once
// Reads a Megatron-LM launch script as text (never executes it): bash variables with
// defaults, exported variables, arrays, line continuations, comments, torchrun or
// python -m torch.distributed.run, the entry script and its flags (DESIGN section 6).

#include "cost/CostModel.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
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
};

struct ParallelConfig {
    int tp = 1, pp = 1, cp = 1, ep = 1, etp = 0;   // etp 0 = Megatron default (= TP)
    int vpp = 1;
    std::string layout;                 // --pipeline-model-parallel-layout, if given
    Recompute recompute = Recompute::None;
    int recompute_layers = 0;           // --recompute-num-layers of the block method (per model
                                        // chunk with VPP); 0 = every layer
    std::string recompute_method;       // "uniform" | "block" | ""
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
};

// A mapped flag whose value could not be used; the field kept its default (and a warning
// says so). validateScriptModel and planFromScript refuse a script with one.
struct InvalidFlagValue {
    std::string flag;       // "--hidden-size"
    std::string value;      // as given ("" when the flag had no value)
    std::string expected;   // "an integer from 1 to 100000000"
};

struct ImportedScript {
    std::string file;
    ModelSpec model;
    ParallelConfig parallel;
    int nnodes = 1;
    int nproc_per_node = 1;
    int world_size = 1;
    std::string launcher;               // "torchrun" | "python -m torch.distributed.run" | "python"
    std::string entry_script;           // "pretrain_gpt.py"
    std::vector<ScriptFlag> other_flags;      // every flag not mapped to the model/parallel config
    std::vector<std::string> environment;     // "NAME=value" exports seen
    std::map<std::string, std::string> environment_raw;   // NAME -> its assignment as written
                                                           // ("${NAME:-4}"), for those exports
    std::vector<std::string> warnings;        // unknown flags, unexpanded values, ...
    std::vector<InvalidFlagValue> invalid_values;   // mapped flags with values that could not be read
    std::set<std::string> given_flags;        // every flag of the entry script, by name
    std::vector<std::string> node_hosts;      // NODE_HOSTS=( ... ): node-rank order, when given
    std::string master_addr;
    std::string master_port;
    int command_line = 0;                     // line of the launch command in the script
};

// Reads the script as it is: a flag it cannot map or a value it cannot read is a warning
// (and an entry of invalid_values), so that an editor can show what was recovered.
ImportedScript importMegatronScript(std::string_view text, const std::string& fileName);
// Reads the file (InputError when it cannot) and imports it.
ImportedScript importMegatronScriptFile(const std::string& path);

// The script's model checked as a hapmoe.model is (validateModel): no unreadable value of
// a mapped flag, the flags Megatron-LM requires (--num-layers, --hidden-size,
// --num-attention-heads, --seq-length), and every rule of validateModel. Throws InputError
// with the script file and the flag (where = "--hidden-size"), not the model's JSON path.
void validateScriptModel(const ImportedScript& script);

// The imported configuration as a uniform Megatron-style plan placed on the cluster in
// node order (what the user runs today). Validates the model first (validateScriptModel),
// then the plan as validatePlanDocument does; throws InputError naming the script and
// the flag when it does not fit.
Plan planFromScript(const ImportedScript& script, const Cluster& cluster,
                    const DeviceCatalog& catalog);

// What `--script FILE` gives a command: the script's model and its current configuration
// on the cluster (estimate uses the plan; plan passes it as SearchOptions::current), both
// checked by planFromScript.
// The cost model's options as the script runs: its overlap switches (ParallelConfig) over
// base. Without --overlap-grad-reduce Megatron-LM reduces gradients after the backward, so
// an estimate of the script's own configuration must not hide that traffic.
CostOptions scriptCostOptions(const ImportedScript& script, CostOptions base = {});
// When the script leaves its data-parallel traffic exposed (no --overlap-grad-reduce, or the
// distributed optimizer without --overlap-param-gather): what a search that compares it with
// the traffic overlapped, as exported scripts run, should tell the user. Empty otherwise.
std::string scriptOverlapNote(const ImportedScript& script);

struct ScriptConfiguration {
    ImportedScript script;
    ModelSpec model;
    Plan plan;
};
ScriptConfiguration loadScriptConfiguration(const std::string& path, const Cluster& cluster,
                                            const DeviceCatalog& catalog);

} // namespace hapmoe
