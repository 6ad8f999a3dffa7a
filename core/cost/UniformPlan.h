#pragma once
// A uniform Megatron-LM plan from its command-line knobs, placed on a cluster in node order:
// with W devices and PP stages, stage s owns global ranks [s*W/PP, (s+1)*W/PP) (Megatron's
// rank order puts PP outermost), DP = W / (TP * CP * PP), EDP = TP*CP*DP / (EP*ETP).

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"

namespace hapmoe {

// Defaults are Megatron-LM's (megatron/training/arguments.py): every parallel size 1,
// micro-batch 1, no recompute, no sequence parallelism, no distributed optimizer. (Megatron's
// expert TP defaults to TP; callers that leave --etp out set etp = tp for MoE models.)
struct UniformKnobs {
    int tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, vpp = 1;
    int micro_batch_size = 1;
    int global_batch_size = 0;     // 0: the model's training spec
    Recompute recompute = Recompute::None;
    int recompute_layers = 0;      // Full: Megatron's --recompute-num-layers, per model chunk (0 = every layer)
    unsigned recompute_modules = recompute_module::defaults;   // Selective: Megatron-Core's --recompute-modules
    bool sequence_parallel = false;
    bool distributed_optimizer = false;
    double optimizer_offload_fraction = 0.0;   // --optimizer-cpu-offload --optimizer-offload-fraction
    // The run gives its own layer split (--pipeline-model-parallel-layout, or
    // --decoder-first/last-pipeline-num-layers): the layers need not divide evenly over PP
    // and VPP, and the remainder goes to the first stages. Without one, Megatron-LM requires
    // num_layers % PP == 0 and (num_layers / PP) % VPP == 0.
    bool layout_given = false;
    // The layout's own split when the caller has it (hapmoe estimate's
    // --pipeline-model-parallel-layout): decoder layers per pipeline rank and, with VPP > 1,
    // per chunk of each rank; empty: as even as possible. Implies layout_given.
    std::vector<int> layer_split;
    std::vector<std::vector<int>> layer_chunks;
};

// An MoE model with TP > 1 gets sequence parallelism even when the knobs leave it off
// (Megatron-Core's MoE layer refuses to train without it); full recompute with VPP > 1
// recomputes recompute_layers of each model chunk, as Megatron-LM's block method does.
// Throws InputError (where = the flag's name, e.g. "--tp") when the knobs do not fit the
// cluster or the model, or break a rule Megatron-LM enforces for them (validate_args and
// TransformerConfig): CP needs seq_length % (2 CP) == 0, the layers split evenly over PP
// and VPP (see layout_given), GBS is a multiple of MBS x DP, and block recompute covers at
// most the layers of a pipeline rank.
Plan makeUniformPlan(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog,
                     const UniformKnobs& knobs);

} // namespace hapmoe
