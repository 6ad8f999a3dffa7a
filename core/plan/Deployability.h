#pragma once
// Whether a plan can run on a deployment target (DESIGN section 3 and
// ../shared/reference/megatron-and-flagscale.md sections 2, 9 and 11). Used by the search
// to keep only deployable plans and by the launcher export to refuse a plan with the rule
// it breaks.

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"

#include <functional>
#include <string>
#include <vector>

namespace hapmoe {

struct DeploymentProblem {
    std::string rule;      // short id, e.g. "megatron.uniform-knobs", "world-size", "experts-divisible-by-ep"
    std::string message;   // human sentence naming the stage and values
};

// Empty when the plan runs on the target. Target::Any checks the rules common to both
// (knob products, divisibility, batch) and that at least one of Megatron / FlagScale accepts it.
std::vector<DeploymentProblem> deploymentProblems(const Plan& plan, const ModelSpec& model,
                                                  const Cluster& cluster, const DeviceCatalog& catalog,
                                                  Target target);

// Why Megatron's flex dispatcher cannot run on a device type: DeepEP needs NVIDIA GPUs of
// compute capability 9.0 or more joined by NVLink (deepseek-ai/DeepEP README), or AMD's port
// on MI300X, MI308X, MI350X (ROCm/DeepEP README). Empty when it can, or when the type is not
// in the catalog (the common rules report that).
std::string deepEpUnavailable(const DeviceCatalog& catalog, const std::string& type);

// Why FP8 training (Megatron-LM --fp8-format) cannot run on a device type: the catalog gives it
// no FP8 tensor cores (fp8_tflops 0), or, for NVIDIA, a compute capability below the 8.9
// Transformer Engine needs. Empty when it can, or when the type is not in the catalog.
// The recipe narrows it (Transformer Engine's check_recipe_support): mxfp8 runs on NVIDIA compute
// capability 10.x (check_mxfp8_support refuses below 10.0 and 12.0 and above), blockwise on
// 9.0 or higher (check_fp8_block_scaling_support).
std::string fp8Unavailable(const DeviceCatalog& catalog, const std::string& type, Fp8Recipe recipe);

// Whether the launchers write --moe-grouped-gemm for a stage of this type without an original
// script asking for it: NVIDIA devices of compute capability 8.0 and above (the grouped GEMM's
// assert, reference section 2), and AMD devices of CDNA3 and later, told by their FP8 matrix
// cores (CDNA2 has none), on which AMD's own Megatron-LM launches its MoE examples with it.
// Megatron-Core recomputes moe_act only in grouped GEMM.
bool writesGroupedGemm(const DeviceCatalog& catalog, const std::string& type);

// The selective-recompute modules Megatron-Core refuses for a model's training: moe_act and
// layernorm under FP8 with delayed scaling (TransformerConfig.__post_init__).
unsigned refusedRecomputeModules(const ModelSpec& model);

// The first stage of the plan on a device type a requirement rules out (deepEpUnavailable,
// fp8Unavailable): its index and why, or index -1 when every stage can run.
struct StageRuledOut {
    int stage = -1;
    std::string why;
};
using DeviceRule = std::function<std::string(const DeviceCatalog&, const std::string&)>;
StageRuledOut firstStageRuledOut(const Plan& plan, const DeviceCatalog& catalog, const DeviceRule& unavailable);

inline bool isDeployable(const Plan& plan, const ModelSpec& model, const Cluster& cluster,
                         const DeviceCatalog& catalog, Target target)
{
    return deploymentProblems(plan, model, cluster, catalog, target).empty();
}

// Consecutive stages with the same device type, TP, CP, EP, ETP, DP and micro-batch size
// form a mesh (FlagScale's --hetero-process-meshes, one entry per mesh).
struct PlanMesh {
    int first_stage = 0;
    int num_stages = 0;
};
std::vector<PlanMesh> planMeshes(const Plan& plan);

// --recompute-num-layers for Megatron-LM's block method: the smallest n whose first n layers
// of every model chunk give each stage with full recompute its recompute_layers (all of its
// layers when 0). 0 when no stage recomputes only part of its layers, or when no n does
// (the rule megatron.one-recompute).
int blockRecomputeNumLayers(const Plan& plan);

// Megatron-LM places pipeline stage s on global ranks [s*W/PP, (s+1)*W/PP) and torchrun
// numbers ranks node_rank * nproc_per_node + local_rank, so the node order decides the
// device type of each stage (reference section 2). Returns the node ids in node-rank
// order, or an empty list (and a reason) when no order puts every stage on its type.
struct NodeOrder {
    std::vector<int> nodes;          // Node::id, index = node rank
    int nproc_per_node = 0;
    std::string problem;             // set when nodes is empty
};
NodeOrder megatronNodeOrder(const Plan& plan, const Cluster& cluster);

// The launcher that runs a plan written for Megatron-LM (an imported script's configuration, the
// flag form of `hapmoe estimate`): Megatron-LM when its rules hold, else FlagScale when FlagScale's
// do (stages on devices of two collective libraries, say). A plan written for another target
// keeps it. `megatron` holds the rules Megatron-LM's launch breaks and `flagscale` those of
// FlagScale when it was asked; `problems()` those of the chosen target.
struct LauncherChoice {
    Target target = Target::Megatron;
    std::vector<DeploymentProblem> megatron;
    std::vector<DeploymentProblem> flagscale;
    const std::vector<DeploymentProblem>& problems() const { return target == Target::FlagScale ? flagscale : megatron; }
    bool retargeted(const Plan& plan) const { return target != plan.target; }
    // Empty when the chosen target can launch the plan; else why not, naming each launcher
    // that was asked: "neither Megatron-LM nor FlagScale can launch it: Megatron-LM: ...;
    // FlagScale: ..." (one reason when both give the same), or "FlagScale cannot launch it: ...".
    std::string unlaunchable() const;
};
LauncherChoice chooseLauncher(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog);

// The best target the plan (or cluster) allows: Megatron when its rules hold, else FlagScale.
Target bestTarget(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog);

} // namespace hapmoe
