// hapmoe estimate: predicts iteration time, throughput and memory per device of one plan,
// given as a hapmoe.plan file or as Megatron-style flags (a uniform plan placed on the
// cluster in node order). Exit 0 when the plan fits, 1 when a stage does not fit in memory,
// 2 on bad input.

#include "CliArgs.h"
#include "Commands.h"

#include "cost/CostModel.h"
#include "cost/Schedule.h"
#include "cost/UniformPlan.h"
#include "hardware/ClusterTopology.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "util/Strings.h"
#include "io/Presets.h"
#include "megatron/PipelineLayout.h"
#include "megatron/ScriptImport.h"
#include "plan/Deployability.h"
#include "util/InputError.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe estimate --model M --cluster C [--profile P] [--devices FILE]
                       (--plan PLAN.json [--saved-plan N]
                        | --script S [--script-args WORDS] [--script-env NAME=VALUE]...
                        | --tp N --pp N --cp N --ep N --etp N --vpp N
                        [--pipeline-model-parallel-layout LAYOUT]
                        --mbs N --gbs N --recompute none|selective|full [--recompute-layers K]
                        [--recompute-modules M,...]
                        [--sequence-parallel] [--distributed-optimizer] [--precision bf16|fp16]
                        [--fp8 none|hybrid|e4m3] [--fp8-recipe delayed|tensorwise|mxfp8|blockwise]
                        [--optimizer-cpu-offload] [--optimizer-offload-fraction F])
                       [--memory-headroom F] [--json] [--trace FILE]

Predicts the iteration time, tokens/s, model TFLOP/s per device (Megatron's FLOP counting),
MFU and the memory of every stage of one plan.

  --model M        model preset name or hapmoe.model file (optional with --plan)
  --cluster C      cluster preset, hapmoe.cluster file, or shorthand TYPE:NODESxPER_NODE,...
                   (optional with --plan)
  --profile P      hapmoe.profile with measured tables (default: analytic defaults)
  --devices FILE   a hapmoe.devices catalog adding or overriding device types
  --plan PLAN      a hapmoe.plan file (heterogeneous stages allowed), checked as "hapmoe
                   validate" checks it; --model or --cluster replace the plan's own, and
                   the plan must fit them (its stages, devices and knobs are kept). A
                   project (.hapmoe) gives its saved plan --saved-plan N (from 1, default 1)
  --script S       a Megatron-LM launch script: its model and configuration on --cluster
                   (not with --model, --plan or the flag form), with its own overlap
                   switches (--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap;
                   Megatron-LM leaves each off unless given)
  --script-args WORDS  the script's arguments, as `bash SCRIPT WORDS` gets them (split as
                   bash splits words; a script that reads $1 takes its value)
  --script-env NAME=VALUE  a variable of the script's environment (repeatable)

Flag form: a uniform Megatron-LM plan; stage s owns global ranks [s*W/PP, (s+1)*W/PP) in
node order and DP = W / (TP*CP*PP). Left-out flags take Megatron-LM's defaults (sizes 1,
ETP = TP for an MoE model (1 for a dense one), no recompute, no sequence parallelism, no
distributed optimizer: a note says so when the model's training section, which hapmoe plan
follows, has it on); --mbs, --gbs and --precision default to the model's training section. --fp8
none|hybrid|e4m3 runs the linear layers' GEMMs in FP8 (Megatron-LM --fp8-format; default the
model's, or the plan's or script's); --fp8-recipe chooses how Transformer Engine scales them
(Megatron-LM --fp8-recipe; mxfp8 needs compute capability 10.x, blockwise 9.0 or higher). A stage
on a device type that cannot run them (no FP8 tensor cores, or not the recipe) is costed in the
training precision, with a note that no launcher can run the plan in FP8. --vpp is the number of virtual stages per pipeline
rank (1 = plain 1F1B). --pipeline-model-parallel-layout gives the layer split as Megatron-LM's
flag does (E embedding, t decoder layer, m MTP layer, L loss, | between virtual stages, t*N
repeats: "Et|(tt|)*30mL" for DeepSeek-V3 on PP 8, VPP 4); without it the layers must split
evenly over PP and VPP, as Megatron-LM requires. --recompute full without --recompute-layers recomputes every layer.
--recompute-modules lists what selective recompute repeats, Megatron-Core's modules
(core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts; comma- or space-separated; default
core_attn, as in Megatron-Core); it needs --recompute selective.
--sequence-parallel with TP 1 is turned off with a note, as Megatron-LM does; an MoE model
with TP > 1 gets it on with a note (Megatron-Core's MoE layer refuses to train without it).
With --vpp V, --recompute-layers K recomputes K layers of each of a rank's V model chunks,
as Megatron-LM's block method does. The plan's
target is megatron, or flagscale with a note when only FlagScale can run it (for example
stages on devices of two collective libraries); export it with that --format.
Megatron-LM's own checks apply: the layers split evenly over PP and the layers of a rank over
VPP, the global batch is a multiple of MBS x DP, --recompute-layers is at most the layers of a
rank, and with CP > 1 the sequence length is a multiple of 2 x CP (an uneven split needs a
plan file). The flag form assumes data-parallel traffic overlapped (--overlap-grad-reduce,
--overlap-param-gather, which exported scripts switch on) and no --tp-comm-overlap; a plan
file whose prediction records other switches ("overlap") is estimated with those.
--optimizer-cpu-offload keeps the optimizer states in host memory and steps Adam there, as
Megatron-Core does; --optimizer-offload-fraction F (default 1.0) offloads a fraction of them.
Unlike Megatron-LM, where the fraction does nothing without the switch, giving
--optimizer-offload-fraction alone also turns the offload on. Either needs
--distributed-optimizer, as in Megatron-Core, which offloads only from it.

  --memory-headroom F
                   keep the fraction F (0 to 0.5) of every device's memory free: a stage
                   fits when its total is at most (1 - F) x the memory, the "capacity"
                   of the output (default 0, or what a plan file's prediction records)
  --json           print a hapmoe.plan document with the "prediction" object
  --trace FILE     write the 1F1B schedule as a Chrome/Perfetto trace (JSON), for schedules of
                   up to a million forward and backward blocks

Exit codes: 0 the plan fits, 1 a stage does not fit in memory, 2 bad input.
)HELP";

// A trace holds a forward and a backward block per micro-batch, stage and virtual chunk, and
// its document about 150 bytes per block (written event by event; a million blocks took 4.5 s
// and 269 MB on the 2-core EPYC of docs/cost-model.md): a million blocks is already more than
// a trace viewer opens, and a global batch of a million sequences would take gigabytes.
constexpr long long kMaxTraceBlocks = 1'000'000;

Recompute parseRecompute(const std::string& v)
{
    if (v == "none")
        return Recompute::None;
    if (v == "selective")
        return Recompute::Selective;
    if (v == "full")
        return Recompute::Full;
    throw UsageError("--recompute: expected none, selective or full, got \"" + v + "\"");
}

// Megatron-Core's module names, separated by commas or spaces ("moe_act,layernorm").
unsigned parseRecomputeModules(const std::string& v)
{
    unsigned modules = 0;
    std::string name;
    for (std::size_t i = 0; i <= v.size(); ++i) {
        if (i < v.size() && v[i] != ',' && v[i] != ' ') {
            name += v[i];
            continue;
        }
        if (name.empty())
            continue;
        const unsigned bit = recomputeModuleBit(name);
        if (bit == 0)
            throw UsageError("--recompute-modules: expected modules of " + recomputeModulesString(recompute_module::all, ", ")
                             + ", got \"" + name + "\"");
        modules |= bit;
        name.clear();
    }
    if (modules == 0)
        throw UsageError("--recompute-modules: expected one or more of " + recomputeModulesString(recompute_module::all, ", "));
    return modules;
}

Precision parsePrecision(const std::string& v)
{
    if (v == "bf16")
        return Precision::BF16;
    if (v == "fp16")
        return Precision::FP16;
    throw UsageError("--precision: expected bf16 or fp16, got \"" + v + "\"");
}

// The model, cluster and plan to estimate, from whichever source the flags name.
struct EstimateInput {
    ModelSpec model;
    Cluster cluster;
    Plan plan;
    std::vector<std::string> notes;   // what the flag form decided for the user (printed as "note: ...")
    OverlapSwitches overlap;          // a plan file's prediction's, or the cost model's defaults
    double memory_headroom = 0;       // likewise (a search with --memory-headroom records it)
    std::optional<Profile> profile;   // a project's, which its saved plans were costed with
};

// The plan file's model and cluster, or the ones --model and --cluster give instead; either
// way the plan is checked against them as "hapmoe validate" checks a plan document.
EstimateInput fromPlanFile(const CliArgs& a, const DeviceCatalog& catalog, Warnings& warnings)
{
    const std::string file = *a.value("plan");
    std::optional<Profile> projectProfile;
    PlanDocument doc = readPlanFile(a, file, warnings, &projectProfile);
    std::vector<std::string> replaced;
    if (auto m = a.value("model")) {
        doc.model = resolveModel(*m, &warnings);
        validateModel(doc.model, *m);
        replaced.push_back("model " + *m);
    }
    if (auto c = a.value("cluster")) {
        doc.cluster = resolveCluster(*c, catalog, &warnings);
        validateCluster(doc.cluster, catalog, *c);
        replaced.push_back("cluster " + *c);
    }
    if (replaced.empty()) {
        validatePlanDocument(doc, catalog, file);
    } else {
        try {
            validatePlanDocument(doc, catalog, file);
        } catch (const InputError& e) {
            std::string given = replaced.front();
            if (replaced.size() > 1)
                given += " and " + replaced.back();
            throw InputError(file, e.where(), "the plan does not fit the given " + given + ": " + e.detail());
        }
    }
    // The plan is re-estimated with the switches its prediction assumed (a plan that a search
    // for a script with --tp-comm-overlap wrote assumes it).
    EstimateInput in{doc.model, doc.cluster, doc.plan, {}, doc.prediction ? doc.prediction->overlap : OverlapSwitches{},
                     doc.prediction ? doc.prediction->memory_headroom : 0.0, std::move(projectProfile)};
    // A plan document records that its prediction used a profile, not the profile: without
    // --profile (or a project's own) this estimate is the analytic defaults', not that one.
    if (doc.prediction && doc.prediction->used_profile && !in.profile && !a.value("profile"))
        in.notes.push_back("the plan's prediction (" + decimal(doc.prediction->iteration_time_s, 3)
                           + " s) was costed with a profile, which a plan document does not hold: this estimate uses the "
                             "analytic defaults; give --profile FILE to cost it as it was");
    // A valid plan may still break a rule of the launcher it names (hapmoe export refuses it).
    const std::vector<DeploymentProblem> problems = deploymentProblems(in.plan, in.model, in.cluster, catalog, in.plan.target);
    if (!problems.empty())
        in.notes.push_back(std::string("the plan's target ") + toString(in.plan.target) + " cannot launch it (hapmoe export refuses it): "
                           + problems.front().message
                           + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : std::string()));
    return in;
}

// The plan's target is what can launch it (core/plan/Deployability.h, chooseLauncher): Megatron-LM
// when its rules hold, else FlagScale when that runs it (e.g. stages on two collective libraries).
void chooseTarget(EstimateInput& in, const DeviceCatalog& catalog)
{
    const LauncherChoice c = chooseLauncher(in.plan, in.model, in.cluster, catalog);
    if (c.retargeted(in.plan))
        in.notes.push_back("the plan's target is " + std::string(toString(c.target)) + " (export it with --format " + toString(c.target)
                           + "): Megatron-LM cannot run it, " + c.megatron.front().message);
    else if (in.plan.target == Target::Megatron && !c.megatron.empty())
        in.notes.push_back(c.unlaunchable() + " (hapmoe export refuses it)");
    in.plan.target = c.target;
}

EstimateInput fromFlags(const CliArgs& a, const DeviceCatalog& catalog, Warnings& warnings)
{
    EstimateInput in;
    in.model = resolveModel(a.required("model"), &warnings);
    in.cluster = resolveCluster(a.required("cluster"), catalog, &warnings);
    UniformKnobs k;
    k.tp = a.intValue("tp").value_or(1);
    k.pp = a.intValue("pp").value_or(1);
    k.cp = a.intValue("cp").value_or(1);
    k.ep = a.intValue("ep").value_or(1);
    // Megatron sets --expert-tensor-parallel-size to TP when it is not given.
    k.etp = a.intValue("etp").value_or(in.model.isMoe() ? k.tp : 1);
    k.vpp = a.intValue("vpp").value_or(1);
    // Megatron-LM's --pipeline-model-parallel-layout: the split (and the chunks) it gives.
    if (auto layout = a.value("pipeline-model-parallel-layout")) {
        int vpp = 1, mtp = 0;
        std::string error;
        if (!PipelineLayout::parse(*layout, k.pp, k.layer_split, vpp, mtp, error, &k.layer_chunks))
            throw UsageError("--pipeline-model-parallel-layout: " + error);
        if (a.has("vpp") && vpp != k.vpp)
            throw UsageError("--vpp " + std::to_string(k.vpp) + ": the layout gives " + std::to_string(vpp)
                             + " virtual stages per pipeline rank (leave --vpp out, as Megatron-LM refuses both)");
        int layers = 0;
        for (int n : k.layer_split)
            layers += n;
        if (layers != in.model.num_layers)
            throw UsageError("--pipeline-model-parallel-layout: the layout holds " + std::to_string(layers)
                             + " decoder layers, the model has " + std::to_string(in.model.num_layers));
        if (mtp != std::max(0, in.model.mtp_num_layers))
            throw UsageError("--pipeline-model-parallel-layout: the layout places " + std::to_string(mtp) + " MTP layer(s), the model has "
                             + std::to_string(std::max(0, in.model.mtp_num_layers)) + " (Megatron-LM's validate_layer_layout "
                             "asserts they match)");
        k.vpp = vpp;
        k.layout_given = true;
    }
    k.micro_batch_size = a.intValue("mbs").value_or(std::max(1, in.model.training.micro_batch_size));
    k.global_batch_size = a.intValue("gbs").value_or(0);   // 0: the model's (makeUniformPlan)
    if (auto r = a.value("recompute"))
        k.recompute = parseRecompute(*r);
    if (auto layers = a.intValue("recompute-layers", 0)) {
        if (k.recompute != Recompute::Full)
            throw UsageError("--recompute-layers needs --recompute full");
        k.recompute_layers = *layers;
    }
    if (auto modules = a.value("recompute-modules")) {
        if (k.recompute != Recompute::Selective)
            throw UsageError("--recompute-modules needs --recompute selective");
        k.recompute_modules = parseRecomputeModules(*modules);
        // Modules the model has none of recompute nothing (docs/cost-model.md section 3.5):
        // Megatron-Core accepts them, and the estimate says so rather than leave the user to
        // wonder why the memory did not move. (moe_act and mla_up_proj without their layers
        // are refused by the deployment rules.)
        const ModelSpec& m = in.model;
        const bool anyDense = m.numMoeLayers() < m.num_layers;
        if ((k.recompute_modules & recompute_module::mlp) && !anyDense)
            in.notes.push_back("--recompute-modules mlp recomputes nothing: it is the dense layers' MLP, and every layer of "
                               + m.name + " is an MoE layer (moe recomputes those)");
        if ((k.recompute_modules & recompute_module::moe) && !m.isMoe())
            in.notes.push_back("--recompute-modules moe recomputes nothing: " + m.name + " has no MoE layers");
        if ((k.recompute_modules & recompute_module::shared_experts) && (!m.isMoe() || m.moe_shared_expert_intermediate_size <= 0))
            in.notes.push_back("--recompute-modules shared_experts recomputes nothing: " + m.name + " has no shared experts");
    }
    k.sequence_parallel = a.has("sequence-parallel");
    k.distributed_optimizer = a.has("distributed-optimizer");
    // The flag form keeps Megatron-LM's default; the search keeps the model's setting. Say so
    // where they differ, or an estimate of the search's own plan in flags would not fit where
    // the plan does.
    if (!k.distributed_optimizer && in.model.training.use_distributed_optimizer)
        in.notes.push_back("without --distributed-optimizer every data-parallel rank keeps all optimizer states "
                           "(Megatron-LM's default); hapmoe plan follows the model's training section, which has the "
                           "distributed optimizer on: give --distributed-optimizer to compare with its plans");
    // Megatron-Core: --optimizer-offload-fraction (default 1.0) only acts with --optimizer-cpu-offload;
    // here giving the fraction is enough (--help says so).
    if (auto f = a.doubleValue("optimizer-offload-fraction")) {
        if (*f > 1)
            throw UsageError("--optimizer-offload-fraction: expected a fraction in [0, 1], got " + a.required("optimizer-offload-fraction"));
        k.optimizer_offload_fraction = *f;
    } else if (a.has("optimizer-cpu-offload")) {
        k.optimizer_offload_fraction = 1.0;
    }
    // Megatron-Core offloads through the precision-aware optimizer, which only the distributed
    // optimizer supports (megatron/core/optimizer/__init__.py raises otherwise).
    if (k.optimizer_offload_fraction > 0 && !k.distributed_optimizer)
        throw UsageError(std::string(a.has("optimizer-offload-fraction") ? "--optimizer-offload-fraction" : "--optimizer-cpu-offload")
                         + " needs --distributed-optimizer: Megatron-Core offloads the optimizer only from the distributed "
                           "optimizer (it raises \"--use-precision-aware-optimizer only supported with distributed optimizer\")");
    // Megatron-LM's validate_args: "Disabling sequence parallelism because tensor model
    // parallelism is disabled" (reference section 2); the flag form does the same.
    if (k.sequence_parallel && k.tp == 1) {
        k.sequence_parallel = false;
        in.notes.push_back("--sequence-parallel is ignored with --tp 1: Megatron-LM disables sequence parallelism when tensor "
                           "parallelism is off, and so does this estimate");
    }
    // Megatron-LM's rules for these knobs (layers over PP and VPP, batch, CP, recompute) are
    // checked there, so the GUI's uniform plans get them too.
    in.plan = makeUniformPlan(in.model, in.cluster, catalog, k);
    // Megatron-LM bounds the block method's K by the layers of a rank, but with VPP it
    // recomputes K layers of each model chunk: a K above a chunk's layers means all of them.
    if (k.vpp > 1 && k.recompute == Recompute::Full && k.recompute_layers > 0) {
        const int chunkLayers = in.model.num_layers / k.pp / k.vpp;
        if (k.recompute_layers > chunkLayers)
            in.notes.push_back("--recompute-layers " + std::to_string(k.recompute_layers) + " is more than the " + std::to_string(chunkLayers)
                               + " layers of a model chunk (VPP " + std::to_string(k.vpp)
                               + "): Megatron-LM accepts it and recomputes every layer of each chunk, and so does this estimate");
    }
    if (in.plan.sequence_parallel && !k.sequence_parallel)
        in.notes.push_back("sequence parallelism is on without --sequence-parallel: Megatron-Core's MoE layer refuses to "
                           "train with TP > 1 without it, and an exported script switches it on");
    chooseTarget(in, catalog);
    return in;
}

// ", SP" in the header when every stage runs sequence parallelism; the stages that do when only
// some have TP > 1 (Megatron-LM turns it off where TP is 1).
std::string sequenceParallelText(const Plan& plan)
{
    if (!plan.sequence_parallel)
        return {};
    std::string stages;
    bool all = true;
    for (int i = 0; i < plan.pp(); ++i) {
        if (plan.stages[static_cast<std::size_t>(i)].tp > 1)
            stages += (stages.empty() ? "" : ", ") + std::to_string(i);
        else
            all = false;
    }
    if (stages.empty())
        return {};
    return all ? ", SP" : ", SP on stages " + stages + " (TP > 1)";
}

void printTable(const EstimateInput& in, const Prediction& p, const Profile* profile)
{
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    const Plan& plan = in.plan;
    // The plan's devices, and the cluster's when the plan leaves some of them idle.
    const int used = plan.numDevices(), total = in.cluster.totalDevices();
    const std::string devices = used < total ? std::to_string(used) + " of " + std::to_string(total) + " devices"
                                             : std::to_string(used) + " devices";
    std::printf("%s on %s (%s): PP %d, VPP %d, %d micro-batches, global batch %d%s%s\n", in.model.name.c_str(),
                in.cluster.name.empty() ? "cluster" : in.cluster.name.c_str(), devices.c_str(), plan.pp(), plan.vpp,
                p.num_microbatches, plan.global_batch_size, sequenceParallelText(plan).c_str(),
                plan.distributed_optimizer ? ", distributed optimizer" : "");
    // The model's size as the presets' sources state it (embeddings included, MTP depths apart).
    const ParameterCount params = countParameters(in.model);
    std::printf("model: %.2f billion parameters", params.total / 1e9);
    if (in.model.isMoe())
        std::printf(", %.2f billion active per token", params.active / 1e9);
    if (params.mtp > 0)
        std::printf(" (and %.2f billion in its MTP layers)", params.mtp / 1e9);
    std::printf("\n");
    if (plan.optimizer_offload_fraction > 0) {
        std::printf("optimizer states: %.0f%% in host memory (Adam steps on the host), %.0f GiB of host memory on the busiest node",
                    100 * plan.optimizer_offload_fraction, p.host_memory_per_node_gib);
        if (p.host_memory_capacity_gib > 0)
            std::printf(" (of %.0f GiB)", p.host_memory_capacity_gib);
        std::printf("\n");
    }
    const std::vector<std::string> layerRanges = stageLayerRanges(plan, in.model.mtp_num_layers);
    int layersWidth = 7;
    for (const std::string& r : layerRanges)
        layersWidth = std::max(layersWidth, static_cast<int>(r.size()));
    // A dense model has no expert grid: its table leaves out EP, ETP and EDP.
    const bool experts = in.model.isMoe();
    auto expertCells = [experts](const std::string& ep, const std::string& etp, const std::string& edp) {
        char buf[32] = "";
        if (experts)
            std::snprintf(buf, sizeof buf, " %3s %3s %3s", ep.c_str(), etp.c_str(), edp.c_str());
        return std::string(buf);
    };
    // The recompute column as `hapmoe plan` writes it: "full 1/4" for 1 of the stage's 4 layers.
    std::vector<std::string> recomputes;
    int recomputeWidth = 9;
    for (const StagePlan& s : plan.stages) {
        std::string rc = recomputeText(s);
        recomputeWidth = std::max(recomputeWidth, static_cast<int>(rc.size()));
        recomputes.push_back(std::move(rc));
    }
    // The micro-batch size is per stage (a search may give stages different ones): the forward
    // and backward times are of one micro-batch of it.
    std::printf("\n%-5s %-11s %-*s %3s %3s %3s%s %3s %-*s %8s %8s %9s %9s\n", "stage", "device", layersWidth, "layers", "TP", "CP", "DP",
                expertCells("EP", "ETP", "EDP").c_str(), "MBS", recomputeWidth, "recompute", "fwd ms", "bwd ms", "mem GiB", "of GiB");
    for (int i = 0; i < plan.pp(); ++i) {
        const StagePlan& s = plan.stages[static_cast<std::size_t>(i)];
        const StageEstimate& e = p.stages[static_cast<std::size_t>(i)];
        const std::string& layers = layerRanges[static_cast<std::size_t>(i)];
        std::printf("%-5d %-11s %-*s %3d %3d %3d%s %3d %-*s %8s %8s %9.1f %9.1f%s\n", i, s.device_type.c_str(), layersWidth, layers.c_str(),
                    s.tp, s.cp, s.dp, expertCells(std::to_string(s.ep), std::to_string(s.etp), std::to_string(s.edp)).c_str(),
                    s.micro_batch_size, recomputeWidth, recomputes[static_cast<std::size_t>(i)].c_str(), decimal(1e3 * e.t_fwd, 1).c_str(),
                    decimal(1e3 * e.t_bwd, 1).c_str(), e.memory.total() / GiB, e.memory.capacity / GiB,
                    e.memory.fits() ? "" : "  DOES NOT FIT");
    }
    const TimeBreakdown& b = p.breakdown;
    const double T = p.iteration_time_s > 0 ? p.iteration_time_s : 1;
    auto sec = [](double v) { return decimal(v, 3); };
    std::printf("\niteration %s s   %.0f tokens/s   %.1f TFLOP/s per device   MFU %.1f%%   peak memory %.1f GiB\n",
                sec(p.iteration_time_s).c_str(), p.tokens_per_s, p.tflops_per_device, 100 * p.mfu, p.peak_memory_gib);
    std::printf("breakdown: compute %s s (%.0f%%), tensor/context-parallel %s s (%.0f%%), expert dispatch %s s (%.0f%%),\n"
                "           pipeline send %s s (%.0f%%), pipeline bubble %s s (%.0f%%), data-parallel sync %s s (%.0f%%),\n"
                "           optimizer %s s (%.0f%%)\n",
                sec(b.compute).c_str(), 100 * b.compute / T, sec(b.tensor_parallel).c_str(), 100 * b.tensor_parallel / T,
                sec(b.expert_dispatch).c_str(), 100 * b.expert_dispatch / T, sec(b.pipeline_send).c_str(),
                100 * b.pipeline_send / T, sec(b.pipeline_bubble).c_str(), 100 * b.pipeline_bubble / T,
                sec(b.dp_sync).c_str(), 100 * b.dp_sync / T, sec(b.optimizer).c_str(), 100 * b.optimizer / T);
    // Interleaved: what the simulated schedule of the chunks' own times costs against equal
    // chunks (docs/cost-model.md section 8), when it is not within a percent.
    if (plan.vpp > 1 && !p.stages.empty() && !p.stages.front().chunk_fwd.empty()) {
        const double closed = interleavedClosedForm(p.stages, p.num_microbatches, plan.vpp);
        const double simulated = drainedPipelineEnd(stageTails(p.stages), p.iteration_time_s);
        if (closed > 0 && std::fabs(simulated / closed - 1) >= 0.01)
            std::printf("pipeline: %s s as the interleaved schedule runs the chunks, %s s with the rank's chunks equal "
                        "(%+.1f%%: %s)\n",
                        sec(simulated).c_str(), sec(closed).c_str(), 100 * (simulated / closed - 1),
                        simulated > closed ? "uneven chunks stall the schedule" : "the chunks' order fills the bubble");
    }
    if (!p.stages.empty() && p.stages.front().embedding_sync > 0) {
        const BarrierWait wait = barrierWait(p);
        // Tied embeddings, or an untied model whose MTP depths hold the embedding on the last stage.
        const char* shared = in.model.untie_embeddings_and_output_weights ? "the MTP embedding's" : "the tied embeddings'";
        if (wait.tied)
            std::printf("           data-parallel sync includes %s all-reduce between stage 0 and stage %d: "
                        "%s s\n",
                        shared, plan.pp() - 1, decimal(p.stages.front().embedding_sync, 3).c_str());
        else
            std::printf("           %s all-reduce between stage 0 and stage %d (%s s) ends before stage %d's "
                        "sync does and adds nothing\n",
                        shared, plan.pp() - 1, decimal(p.stages.front().embedding_sync, 3).c_str(), wait.stage);
    }
    // The switches, when they are not the defaults of the flag form (a script's own, or a
    // plan file's prediction's); without the distributed optimizer there is no parameter
    // all-gather to overlap, so its switch is off by default.
    OverlapSwitches flagForm;
    flagForm.param_gather = plan.distributed_optimizer;   // as CostModel::estimate records it
    if (!(p.overlap == flagForm)) {
        const OverlapSwitches& o = p.overlap;
        std::printf("overlap: %s--overlap-grad-reduce, %s--overlap-param-gather, %s--tp-comm-overlap%s\n",
                    o.grad_reduce ? "" : "no ", o.param_gather ? "" : "no ", o.tp_comm ? "" : "no ",
                    o.p2p ? "" : ", no p2p overlap (--no-overlap-p2p-communication)");
    }
    if (profile)
        std::printf("profile: %s\n", profile->name.empty() ? "(unnamed)" : profile->name.c_str());
    for (const auto& n : p.notes)
        std::printf("note: %s\n", n.c_str());
    for (const auto& n : in.notes)
        std::printf("note: %s\n", n.c_str());
    if (const std::string note = nearlyFullNote(plan, p); !note.empty())
        std::printf("note: %s\n", note.c_str());
}

// A profile within its bounds (profile/ProfileLimits.h, checked by validateProfile) gives finite times; should one still overflow,
// the prediction is refused (exit 2) with the profile's fields behind the part that did, and
// never printed as inf or written as null.
void requireFinite(const Prediction& p, const std::optional<std::string>& profileFile)
{
    const TimeBreakdown& b = p.breakdown;
    const std::pair<double, const char*> parts[] = {
        {b.compute, "profile.compute[].dense_layer_fwd_s/dense_layer_bwd_s/ffn_*_s or profile.device_efficiency"},
        {b.tensor_parallel + b.expert_dispatch + b.pipeline_send + b.dp_sync, "profile.collectives[].time_s"},
        {b.optimizer, "profile.device_efficiency"},
        {p.peak_memory_gib, "profile.memory[].fixed_overhead_gib/activation_factor"}};
    if (std::isfinite(p.iteration_time_s) && std::isfinite(p.peak_memory_gib))
        return;
    std::string where = profileFile ? "profile" : "";
    for (const auto& [value, fields] : parts)
        if (!std::isfinite(value)) {
            where = profileFile ? fields : "";
            break;
        }
    throw InputError(profileFile.value_or(""), where,
                     "the prediction is not a finite number (iteration " + std::to_string(p.iteration_time_s) + " s, peak memory "
                         + std::to_string(p.peak_memory_gib) + " GiB): expected times and sizes a run can have");
}

} // namespace

int cmdEstimate(const Args& args)
{
    for (const auto& a : args)
        if (a == "--help" || a == "-h") {
            std::cout << kHelp;
            return Success;
        }
    const CliArgs a(args,
                    {"model", "cluster", "profile", "plan", "tp", "pp", "cp", "ep", "etp", "vpp", "pipeline-model-parallel-layout",
                     "mbs", "gbs", "recompute",
                     "recompute-layers", "recompute-modules", "precision", "fp8", "fp8-recipe", "trace", "script", "script-args", "optimizer-offload-fraction", "devices",
                     "memory-headroom", "saved-plan"},
                    {"sequence-parallel", "distributed-optimizer", "json", "optimizer-cpu-offload"}, {"script-env"});
    if (!a.positionals().empty())
        throw UsageError("unexpected argument \"" + a.positionals().front() + "\"", kHelp);
    checkScriptInputsHaveScript(a);

    static const char* const kFlagForm[] = {"tp", "pp", "cp", "ep", "etp", "vpp", "pipeline-model-parallel-layout", "mbs", "gbs", "recompute",
                                             "recompute-layers", "recompute-modules", "sequence-parallel", "distributed-optimizer",
                                             "optimizer-cpu-offload", "optimizer-offload-fraction"};
    if (auto trace = a.value("trace"))
        checkOutputPath("--trace", *trace, givenInputs(a, {"model", "cluster", "profile", "plan", "script", "devices"}));
    // A plan document costs on the devices it carries (--devices over them).
    const DeviceCatalog catalog = catalogForDocuments(
        a, {a.value("plan").value_or(""), a.value("cluster").value_or(""), a.value("model").value_or("")});
    Warnings warnings;
    EstimateInput in;
    CostOptions options;   // the defaults (docs/cost-model.md), or what a script switches on
    if (a.has("saved-plan") && !a.has("plan"))
        throw UsageError("--saved-plan picks one of the saved plans of a project given as --plan PROJECT");
    if (a.has("plan")) {
        if (a.has("script"))
            throw UsageError("--script cannot be combined with --plan (each gives the plan to estimate)");
        for (const char* flag : kFlagForm)
            if (a.has(flag))
                throw UsageError(std::string("--") + flag + " cannot be combined with --plan (the plan file fixes it)");
        in = fromPlanFile(a, catalog, warnings);
        options.overlap = in.overlap;
    } else if (auto script = a.value("script")) {
        // --script: the script's own configuration in node order (core/megatron/ScriptImport.h).
        if (a.has("model"))
            throw UsageError("--model cannot be combined with --script (the script gives the model)");
        for (const char* flag : kFlagForm)
            if (a.has(flag))
                throw UsageError(std::string("--") + flag + " cannot be combined with --script (the script fixes it)");
        in.cluster = resolveCluster(a.required("cluster"), catalog, &warnings);
        const ScriptConfiguration sc = loadScriptConfiguration(*script, in.cluster, catalog, scriptInputs(a));
        in.model = sc.model;
        in.plan = sc.plan;
        if (in.plan.target == Target::Megatron)
            chooseTarget(in, catalog);
        options = scriptCostOptions(sc.script);
        for (const auto& w : sc.script.warnings)
            warnings.push_back(*script + ": " + w);
    } else {
        if (!a.has("model") && !a.has("cluster"))
            throw UsageError("nothing to estimate: give --plan FILE, --script FILE --cluster C, or --model M --cluster C "
                             "with the plan's flags (hapmoe estimate --help)");
        in = fromFlags(a, catalog, warnings);
        try {
            validatePlanDocument(PlanDocument{in.model, in.cluster, in.plan, std::nullopt, std::nullopt, {}}, catalog, "");
        } catch (const InputError& e) {
            throw InputError("", e.where(), "the plan these flags give is not valid: " + e.detail());
        }
    }
    if (auto p = a.value("precision"))
        in.model.training.precision = parsePrecision(*p);
    const bool fp8Flags = a.has("fp8") || a.has("fp8-recipe");
    if (fp8Flags)
        if (std::string note = applyFp8(a, in.model); !note.empty())
            in.notes.push_back(std::move(note));
    // Checked again with the model as costed (the FP8 flags change it after the target was
    // chosen): a stage without FP8 tensor cores stops the job, and selective recompute's
    // modules that no launcher writes (Megatron-Core's rules) are costed as asked, and said.
    bool fp8Said = false;
    for (const DeploymentProblem& p : deploymentProblems(in.plan, in.model, in.cluster, catalog, in.plan.target)) {
        if (fp8Flags && !fp8Said && p.rule == "fp8-needs-device") {
            in.notes.push_back("no launcher can run this plan in FP8 (hapmoe export refuses it): " + p.message);
            fp8Said = true;
        } else if (p.rule.rfind("recompute.", 0) == 0
                   && std::none_of(in.notes.begin(), in.notes.end(), [&](const std::string& n) { return n.find(p.message) != std::string::npos; })) {
            in.notes.push_back("no launcher can run this plan's recompute (hapmoe export refuses it): " + p.message);
        }
    }

    std::optional<Profile> profile;
    if (auto file = a.value("profile")) {
        profile = readCommandProfile(*file, in.model, catalog, warnings);
    } else if (in.profile) {
        // A project's saved plan is costed as the project costed it: with its profile.
        profile = readCommandProfile(*a.value("plan"), in.model, catalog, warnings, std::move(in.profile));
        in.notes.push_back("the project's profile" + (profile->name.empty() ? std::string() : " \"" + printableText(profile->name) + "\"")
                           + " is used, as for its saved plans (--profile FILE uses another)");
    }
    for (const auto& w : warnings)
        std::cerr << "warning: " << printableText(w) << "\n";

    std::vector<int> usedNodes;
    for (const StagePlan& st : in.plan.stages)
        for (const DeviceSlot& slot : st.devices)
            usedNodes.push_back(slot.node);
    requireConnected(in.cluster, catalog, a.value("cluster").value_or(a.value("plan").value_or("")), usedNodes);

    options.memory_headroom = a.has("memory-headroom") ? memoryHeadroom(a) : in.memory_headroom;
    const CostModel cm(in.model, in.cluster, catalog, profile ? &*profile : nullptr, options);
    const Prediction p = cm.estimate(in.plan);
    requireFinite(p, a.value("profile"));

    if (auto traceFile = a.value("trace")) {
        const ScheduleInput s = scheduleInput(p.stages, p.num_microbatches, in.plan.vpp);
        const long long blocks = 2LL * s.microbatches * s.vpp * static_cast<long long>(p.stages.size());
        if (blocks > kMaxTraceBlocks)
            throw UsageError("--trace: the schedule has " + std::to_string(blocks) + " blocks (" + std::to_string(s.microbatches)
                             + " micro-batches x " + std::to_string(p.stages.size()) + " stages x VPP " + std::to_string(s.vpp)
                             + " x forward and backward), more than the " + std::to_string(kMaxTraceBlocks)
                             + " a trace is written for; leave out --trace or give a smaller global batch");
        std::vector<std::string> names;
        for (const StagePlan& st : in.plan.stages)
            names.push_back(st.device_type);
        saveFileAtomically(*traceFile, toChromeTrace(simulatePipeline(s), names, stageTails(p.stages), p.iteration_time_s));
    }

    if (a.has("json")) {
        PlanDocument doc;
        doc.model = in.model;
        doc.cluster = in.cluster;
        doc.plan = in.plan;
        doc.prediction = p;
        doc.devices = typesBeyondBuiltin(in.cluster, catalog);
        std::cout << writePlan(doc);
        for (const auto& n : in.notes)
            std::cerr << "note: " << n << "\n";
    } else {
        printTable(in, p, profile ? &*profile : nullptr);
    }
    if (!p.feasible) {
        std::cerr << "hapmoe estimate: infeasible: " << p.infeasible_reason << "\n";
        // Short by less than the memory model's error: the verdict is the model's, not the
        // device's. The model predicts Figure 1 of Korthikanti et al. at most 2.4 % high
        // (docs/cost-model.md section 10), so a stage over by no more than that may fit. Not
        // said where host memory is short too (the optimizer offloaded).
        constexpr double kMemoryModelError = 0.024;
        double worst = 0;
        bool anyOver = false, hostShort = false;
        for (const StageEstimate& st : p.stages) {
            hostShort = hostShort || !st.memory.hostFits();
            if (st.memory.capacity > 0 && st.memory.total() > st.memory.capacity) {
                anyOver = true;
                worst = std::max(worst, st.memory.total() / st.memory.capacity - 1);
            }
        }
        if (anyOver && !hostShort && worst <= kMemoryModelError && p.memory_headroom <= 0)
            std::cerr << "note: no stage is over by more than " << decimal(100 * worst, 1)
                      << " % of its memory, within the memory model's error (the Figure 1 rows of Korthikanti et al. are "
                         "predicted within +2.4 %, docs/cost-model.md section 10): it may fit on the devices; a profile "
                         "calibrated on a measured run (docs/profiling.md) settles it\n";
        return NoFeasiblePlan;
    }
    return Success;
}

} // namespace hapmoe::cli
