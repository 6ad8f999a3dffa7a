#include "plan/Deployability.h"

#include "util/Strings.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

// Rules and their sources: ../shared/reference/megatron-and-flagscale.md section 2
// (Megatron-LM validate_args and parallel_state), section 9 (FlagScale
// flagscale/train/arguments.py pre_validate_args and parallel_context.py) and section 11.
// docs/megatron.md lists every rule id.

namespace hapmoe {

namespace {

// Canonical name of a device type, tolerating names the catalog does not know.
std::string stageName(const Plan& plan, int s)
{
    return "stage " + std::to_string(s) + " (" + plan.stages[static_cast<std::size_t>(s)].device_type + ")";
}

// Layers a stage recomputes: 0 without full recompute, all of them when recompute_layers is 0
// or reaches the stage's layers (the plan's convention).
int recomputedLayers(const StagePlan& st)
{
    if (st.recompute != Recompute::Full)
        return 0;
    return st.recompute_layers <= 0 || st.recompute_layers >= st.num_layers ? st.num_layers : st.recompute_layers;
}

// Megatron-LM's one recompute setting gives every stage the same granularity and, with full
// recompute, either every layer (--recompute-method uniform) or the first n layers of each
// model chunk (block n, megatron/core/recompute.py; blockRecomputedLayers): all of them on a
// chunk of n layers or fewer. Keeps in `counts` the n (from 1 to the largest chunk: a larger n
// recomputes the same) that give every stage its recompute, and returns the first stage the
// setting cannot give its recompute, or -1. counts stays empty when no stage recomputes
// only part of its layers (no block count is needed).
int recomputeSettingFor(const Plan& p, std::vector<int>& counts)
{
    counts.clear();
    const StagePlan& first = p.stages.front();
    const bool partial = std::any_of(p.stages.begin(), p.stages.end(), [](const StagePlan& st) {
        return st.recompute == Recompute::Full && recomputedLayers(st) < st.num_layers;
    });
    if (partial) {
        int largest = 1;
        for (const StagePlan& st : p.stages)
            for (int c : st.chunks(p.vpp))
                largest = std::max(largest, c);
        for (int n = 1; n <= largest; ++n)
            counts.push_back(n);
    }
    for (int s = 0; s < p.pp(); ++s) {
        const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
        if (st.recompute != first.recompute)
            return s;
        if (st.recompute != Recompute::Full || !partial)
            continue;
        const std::vector<int> chunks = st.chunks(p.vpp);
        std::erase_if(counts, [&](int n) { return blockRecomputedLayers(chunks, n) != recomputedLayers(st); });
        if (counts.empty())
            return s;
    }
    return -1;
}

int stageOffRecomputeSetting(const Plan& p)
{
    std::vector<int> counts;
    return recomputeSettingFor(p, counts);
}

class Checker {
public:
    Checker(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog)
        : m_plan(plan), m_model(model), m_cluster(cluster), m_catalog(catalog)
    {
    }

    void add(std::vector<DeploymentProblem>& out, std::string rule, std::string message) const
    {
        out.push_back({std::move(rule), std::move(message)});
    }

    // Rules every target shares: knob products, devices, layer cover, divisibility, batch.
    std::vector<DeploymentProblem> common() const
    {
        std::vector<DeploymentProblem> out;
        const Plan& p = m_plan;
        if (p.stages.empty()) {
            add(out, "plan.empty", "the plan has no pipeline stage");
            return out;
        }
        std::set<std::pair<int, int>> usedDevices;   // (node, local index)
        int nextLayer = 0;
        for (int s = 0; s < p.pp(); ++s) {
            const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
            const auto name = [&] { return stageName(p, s); };   // built only for a problem
            if (st.tp < 1 || st.cp < 1 || st.dp < 1 || st.ep < 1 || st.etp < 1 || st.edp < 1 || st.micro_batch_size < 1) {
                add(out, "stage.knobs-positive", name() + ": TP, CP, DP, EP, ETP, EDP and micro-batch size must be >= 1");
                continue;
            }
            const int devices = std::accumulate(st.devices.begin(), st.devices.end(), 0,
                                                [](int a, const DeviceSlot& d) { return a + d.count; });
            if (st.tp * st.cp * st.dp != devices)
                add(out, "stage.knob-product",
                    name() + ": TP*CP*DP = " + std::to_string(st.tp) + "*" + std::to_string(st.cp) + "*"
                        + std::to_string(st.dp) + " = " + std::to_string(st.tp * st.cp * st.dp) + " but the stage has "
                        + std::to_string(devices) + " devices");
            // MoE parallel folding: the expert grid covers the same ranks (reference section 2).
            if (st.ep * st.etp * st.edp != st.tp * st.cp * st.dp)
                add(out, "stage.expert-grid",
                    name() + ": EP*ETP*EDP = " + std::to_string(st.ep * st.etp * st.edp) + " must equal TP*CP*DP = "
                        + std::to_string(st.tp * st.cp * st.dp) + " (world % (ETP*EP*PP) == 0)");
            for (const DeviceSlot& d : st.devices) {
                const Node* node = m_cluster.node(d.node);
                if (!node) {
                    add(out, "stage.devices", name() + ": node id " + std::to_string(d.node) + " is not in the cluster");
                    continue;
                }
                if (d.count < 1 || d.first_local < 0 || d.first_local + d.count > node->count) {
                    add(out, "stage.devices",
                        name() + ": devices [" + std::to_string(d.first_local) + ", "
                            + std::to_string(d.first_local + d.count) + ") do not exist on node " + node->host
                            + " (" + std::to_string(node->count) + " devices)");
                    continue;
                }
                if (!m_catalog.sameType(node->device_type, st.device_type))
                    add(out, "stage.device-type",
                        name() + ": node " + node->host + " holds " + node->device_type + ", not " + st.device_type);
                for (int i = d.first_local; i < d.first_local + d.count; ++i)
                    if (!usedDevices.insert({d.node, i}).second)
                        add(out, "stage.devices",
                            name() + ": device " + std::to_string(i) + " of node " + node->host + " is used twice");
            }
            if (st.num_layers < 1)
                add(out, "layers.cover", name() + " has no transformer layer");
            if (st.first_layer != nextLayer)
                add(out, "layers.cover",
                    name() + " starts at layer " + std::to_string(st.first_layer) + ", expected " + std::to_string(nextLayer));
            nextLayer = st.first_layer + st.num_layers;

            // Model divisibility (validate_args).
            if (m_model.num_attention_heads > 0 && m_model.num_attention_heads % st.tp != 0)
                add(out, "model.heads-divisible-by-tp",
                    name() + ": " + std::to_string(m_model.num_attention_heads) + " attention heads are not divisible by TP "
                        + std::to_string(st.tp));
            const int groups = m_model.queryGroups();
            if (groups > 0 && groups % st.tp != 0 && st.tp % groups != 0)
                add(out, "model.query-groups-tp",
                    name() + ": " + std::to_string(groups) + " query groups and TP " + std::to_string(st.tp)
                        + " must divide one another");
            if (st.ep > 1 && !m_model.isMoe())
                add(out, "model.experts-divisible-by-ep", name() + ": EP " + std::to_string(st.ep) + " on a dense model");
            if (m_model.isMoe() && m_model.num_experts % st.ep != 0)
                add(out, "model.experts-divisible-by-ep",
                    name() + ": " + std::to_string(m_model.num_experts) + " experts are not divisible by EP " + std::to_string(st.ep));
            if (st.cp > 1 && m_model.seq_length % (2 * st.cp) != 0)
                add(out, "seq.context-parallel",
                    name() + ": sequence length " + std::to_string(m_model.seq_length) + " is not a multiple of 2*CP = "
                        + std::to_string(2 * st.cp));
            // Megatron-Core's linear layers split their output or input dimension over the
            // group (ColumnParallelLinear and RowParallelLinear divide it, layers.py), and
            // sequence parallelism scatters each CP rank's s/CP tokens over TP
            // (mappings.py _split_along_first_dim asserts it divides).
            if (m_model.ffn_hidden_size > 0 && m_model.numMoeLayers() < m_model.num_layers && m_model.ffn_hidden_size % st.tp != 0)
                add(out, "model.ffn-divisible-by-tp",
                    name() + ": the FFN's " + std::to_string(m_model.ffn_hidden_size) + " channels are not divisible by TP "
                        + std::to_string(st.tp) + " (Megatron-Core's parallel linear layers split them evenly)");
            if (m_model.isMoe() && m_model.expertFfn() % st.etp != 0)
                add(out, "model.expert-ffn-divisible-by-etp",
                    name() + ": the experts' " + std::to_string(m_model.expertFfn()) + " FFN channels are not divisible by ETP "
                        + std::to_string(st.etp) + " (Megatron-Core's expert layers split them evenly)");
            if (p.sequence_parallel && st.tp > 1 && m_model.seq_length % (st.cp * st.tp) != 0)
                add(out, "seq.sequence-parallel",
                    name() + ": sequence parallelism splits the " + std::to_string(m_model.seq_length)
                        + (st.cp > 1 ? " tokens of a sequence, over CP " + std::to_string(st.cp) + " and then TP " : " tokens of a sequence over TP ")
                        + std::to_string(st.tp) + ", which must divide them (Megatron-Core asserts it)");
            if (m_model.isMoe() && m_model.add_bias_linear && st.etp > 1)
                add(out, "moe.bias-needs-etp1",
                    name() + ": Megatron asserts ETP == 1 for MoE layers with bias; ETP is " + std::to_string(st.etp)
                        + " (disable the linear bias)");
        }
        // Megatron-Core's MoELayer.forward raises in training when TP > 1 and sequence
        // parallelism is off ("During training, performance may degrade if MoE and tensor
        // parallelism are enabled without also enabling sequence parallelism").
        if (m_model.isMoe() && !p.sequence_parallel)
            for (int s = 0; s < p.pp(); ++s)
                if (p.stages[static_cast<std::size_t>(s)].tp > 1) {
                    add(out, "moe.tp-needs-sp",
                        stageName(p, s) + ": TP " + std::to_string(p.stages[static_cast<std::size_t>(s)].tp)
                            + " on an MoE model needs sequence parallelism (Megatron-Core's MoE layer refuses to train without it)");
                    break;
                }
        // Megatron-Core's optimizer CPU offload runs through the precision-aware optimizer,
        // which only the distributed optimizer supports (megatron/core/optimizer/__init__.py
        // raises "--use-precision-aware-optimizer only supported with distributed optimizer").
        if (p.optimizer_offload_fraction > 0 && !p.distributed_optimizer)
            add(out, "optimizer.offload-needs-distributed",
                "the optimizer offloaded to the host needs the distributed optimizer (Megatron-Core's hybrid device optimizer "
                "runs only in it)");
        // SharedExpertMLP asserts config.add_bias_linear == False (moe/shared_experts.py).
        if (m_model.isMoe() && m_model.moe_shared_expert_intermediate_size > 0 && m_model.add_bias_linear)
            add(out, "moe.shared-expert-bias",
                "the model's shared expert with linear biases: Megatron-Core's shared experts have none (it asserts "
                "add_bias_linear is off; disable the linear bias)");
        if (nextLayer != m_model.num_layers)
            add(out, "layers.cover",
                "the stages hold " + std::to_string(nextLayer) + " layers, the model has " + std::to_string(m_model.num_layers));
        if (m_model.kv_channels <= 0 && m_model.num_attention_heads > 0 && m_model.hidden_size % m_model.num_attention_heads != 0)
            add(out, "model.hidden-divisible-by-heads",
                "hidden size " + std::to_string(m_model.hidden_size) + " is not divisible by "
                    + std::to_string(m_model.num_attention_heads) + " heads (no kv_channels given)");

        // Batch: GBS % (MBS*DP) == 0 (ConstantNumMicroBatchesCalculator); every mesh runs the
        // same number of micro-batches M (FlagScale's rule, trivially true for uniform plans).
        const int gbs = p.global_batch_size;
        if (gbs < 1) {
            add(out, "batch.divisible", "the global batch size is not set");
        } else if (!out.empty() && std::any_of(out.begin(), out.end(), [](const DeploymentProblem& d) {
                       return d.rule == "stage.knobs-positive";
                   })) {
            // knobs already invalid
        } else {
            const StagePlan& first = p.stages.front();
            if (gbs % (first.micro_batch_size * first.dp) != 0) {
                add(out, "batch.divisible",
                    "global batch " + std::to_string(gbs) + " is not divisible by MBS*DP = "
                        + std::to_string(first.micro_batch_size) + "*" + std::to_string(first.dp));
            } else {
                const int m = gbs / (first.micro_batch_size * first.dp);
                for (int s = 1; s < p.pp(); ++s) {
                    const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
                    if (st.micro_batch_size * st.dp * m != gbs)
                        add(out, "batch.same-microbatches",
                            stageName(p, s) + ": MBS*DP = " + std::to_string(st.micro_batch_size) + "*" + std::to_string(st.dp)
                                + " does not give the same " + std::to_string(m) + " micro-batches of stage 0");
                }
            }
        }
        if (p.vpp < 1)
            add(out, "plan.vpp", "virtual pipeline size must be >= 1");
        return out;
    }

    // The flex dispatcher's DeepEP backend asserts TP x EP > 1 over the expert grid
    // (MoEFlexTokenDispatcher, whose tp_size is the expert-TP group), in Megatron-LM d98e8a64
    // and in FlagScale's 8479eb35, where DeepEP is its only backend. Megatron-LM's HybridEP
    // backend has no such limit; the exporter lifts this rule when the original script chose it.
    void flexDispatcher(std::vector<DeploymentProblem>& out) const
    {
        if (!m_model.usesFlexDispatcher())
            return;
        for (int s = 0; s < m_plan.pp(); ++s) {
            const StagePlan& st = m_plan.stages[static_cast<std::size_t>(s)];
            if (st.etp * st.ep == 1) {
                add(out, "moe.flex-needs-tp-ep",
                    stageName(m_plan, s) + " has ETP 1 and EP 1: the flex dispatcher's DeepEP backend asserts TPxEP > 1"
                        + " (use the alltoall dispatcher for this plan)");
                break;
            }
        }
        // DeepEP's kernels need NVIDIA GPUs with the SM90 PTX ISA (compute capability 9.0 or
        // more) joined by NVLink within a node (deepseek-ai/DeepEP README, requirements, at
        // 0297fc80); AMD's port runs on MI300X, MI308X and MI350X over xGMI (ROCm/DeepEP
        // README). Other devices have no DeepEP: Megatron's flex dispatcher cannot run there.
        if (const StageRuledOut r = firstStageRuledOut(m_plan, m_catalog, deepEpUnavailable); r.stage >= 0)
            add(out, "moe.flex-needs-deepep-device",
                stageName(m_plan, r.stage) + ": " + r.why + ": the flex dispatcher needs DeepEP (use the alltoall dispatcher for this cluster)");
    }

    // FP8 training (--fp8-format) runs Transformer Engine's FP8 GEMMs on every rank: a stage on
    // a type without FP8 tensor cores stops the job (fp8Unavailable).
    void fp8Devices(std::vector<DeploymentProblem>& out) const
    {
        if (!m_model.training.fp8())
            return;
        const Fp8Recipe recipe = m_model.training.fp8_recipe;
        const auto unavailable = [recipe](const DeviceCatalog& c, const std::string& type) { return fp8Unavailable(c, type, recipe); };
        if (const StageRuledOut r = firstStageRuledOut(m_plan, m_catalog, unavailable); r.stage >= 0)
            add(out, "fp8-needs-device",
                stageName(m_plan, r.stage) + ": " + r.why + " (train without FP8 on this cluster, or leave the type out)");
    }

    // Selective recompute's modules: one --recompute-modules for every stage, and
    // TransformerConfig.__post_init__ (d98e8a64 and 8479eb35) refuses moe_act and layernorm
    // under FP8 with delayed scaling.
    void recomputeModules(std::vector<DeploymentProblem>& out) const
    {
        const Plan& p = m_plan;
        const StagePlan* selective = nullptr;
        for (int s = 0; s < p.pp(); ++s) {
            const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
            if (st.recompute != Recompute::Selective)
                continue;
            if (!selective) {
                selective = &st;
            } else if (st.recompute_modules != selective->recompute_modules) {
                add(out, "recompute.one-module-set",
                    stageName(p, s) + " recomputes the modules " + recomputeModulesString(st.recompute_modules, ", ")
                        + " where an earlier stage recomputes " + recomputeModulesString(selective->recompute_modules, ", ")
                        + " (--recompute-modules is one setting for every stage)");
                break;
            }
        }
        // moe_act: "only supported with moe_grouped_gemm", which the launchers write for NVIDIA
        // devices of compute capability 8.0 and above (grouped GEMM asserts 8.0) and AMD CDNA3
        // (writesGroupedGemm).
        if (selective && (selective->recompute_modules & recompute_module::moe_act)) {
            if (!m_model.isMoe())
                add(out, "recompute.moe-act-needs-grouped-gemm",
                    "moe_act recompute in a model without experts (Megatron-Core refuses it without grouped GEMM, and there is "
                    "no experts' activation to recompute; leave it out)");
            else
                for (int s = 0; s < p.pp(); ++s) {
                    if (!writesGroupedGemm(m_catalog, p.stages[static_cast<std::size_t>(s)].device_type)) {
                        add(out, "recompute.moe-act-needs-grouped-gemm",
                            stageName(p, s) + ": moe_act recompute needs grouped GEMM (--moe-grouped-gemm), which the "
                                              "launchers write for NVIDIA devices of compute capability 8.0 and above "
                                              "and AMD MI300X-class devices; "
                                              "recompute other modules on this cluster");
                        break;
                    }
                }
        }
        // TransformerConfig raises on mla_up_proj without multi-latent attention.
        if (selective && (selective->recompute_modules & recompute_module::mla_up_proj) && !m_model.multi_latent_attention)
            add(out, "recompute.mla-up-proj-needs-mla",
                "mla_up_proj recompute in a model without multi-latent attention (Megatron-Core raises without "
                "--multi-latent-attention; leave it out)");
        const unsigned delayedRefuses = refusedRecomputeModules(m_model);
        if (selective && (selective->recompute_modules & delayedRefuses))
            add(out, "recompute.fp8-delayed",
                "recomputing " + recomputeModulesString(selective->recompute_modules & delayedRefuses, " and ")
                    + " under FP8 with delayed scaling (Megatron-Core raises \"Delayed scaling does not support moe_act and "
                      "layernorm recompute for fp8\"; use --fp8-recipe tensorwise or leave them out)");
    }

    std::vector<DeploymentProblem> megatron() const
    {
        std::vector<DeploymentProblem> out;
        const Plan& p = m_plan;
        const StagePlan& first = p.stages.front();
        flexDispatcher(out);
        fp8Devices(out);
        recomputeModules(out);
        for (int s = 1; s < p.pp(); ++s) {
            const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
            if (st.tp != first.tp || st.cp != first.cp || st.dp != first.dp || st.ep != first.ep || st.etp != first.etp
                || st.micro_batch_size != first.micro_batch_size) {
                std::ostringstream m;
                m << stageName(p, s) << " has TP" << st.tp << " CP" << st.cp << " DP" << st.dp << " EP" << st.ep << " ETP"
                  << st.etp << " MBS" << st.micro_batch_size << ", stage 0 has TP" << first.tp << " CP" << first.cp << " DP"
                  << first.dp << " EP" << first.ep << " ETP" << first.etp << " MBS" << first.micro_batch_size
                  << " (Megatron-LM runs one set of knobs on every stage)";
                add(out, "megatron.uniform-knobs", m.str());
                break;
            }
        }
        if (const int s = stageOffRecomputeSetting(p); s >= 0) {
            const StagePlan& st = p.stages[static_cast<std::size_t>(s)];
            if (st.recompute != first.recompute)
                add(out, "megatron.one-recompute",
                    stageName(p, s) + " recomputes differently from " + (s == 0 ? std::string("the other stages") : std::string("stage 0"))
                        + " (Megatron-LM has one recompute setting: every layer, or the first n layers of each stage)");
            else
                add(out, "megatron.one-recompute",
                    stageName(p, s) + " recomputes " + std::to_string(recomputedLayers(st)) + " of its " + std::to_string(st.num_layers)
                        + " layers, which no --recompute-num-layers n gives it and the stages before it (Megatron-LM's block method "
                          "recomputes the first n layers of each stage"
                        + (p.vpp > 1 ? ", in each of its " + std::to_string(p.vpp) + " model chunks)" : std::string(")")));
        }
        // One collective library: NCCL, RCCL and HCCL cannot form one process group.
        std::string lib;
        for (int s = 0; s < p.pp(); ++s) {
            const DeviceType* t = m_catalog.find(p.stages[static_cast<std::size_t>(s)].device_type);
            const std::string l = t ? t->library() : std::string();
            if (s == 0) {
                lib = l;
            } else if (lower(l) != lower(lib)) {
                add(out, "megatron.one-vendor",
                    stageName(p, s) + " uses " + l + ", stage 0 uses " + lib
                        + " (one Megatron-LM job speaks one collective library)");
                break;
            }
        }
        const int w = p.numDevices();
        const int model = first.tp * p.pp() * first.cp;
        if (model > 0 && w % model != 0)
            add(out, "megatron.world-size",
                "world size " + std::to_string(w) + " is not divisible by TP*PP*CP = " + std::to_string(model));
        const int expert = first.etp * first.ep * p.pp();
        if (expert > 0 && w % expert != 0)
            add(out, "megatron.expert-world-size",
                "world size " + std::to_string(w) + " is not divisible by ETP*EP*PP = " + std::to_string(expert));
        if (p.vpp > 1) {
            if (p.pp() < 2)
                add(out, "megatron.vpp-needs-pp", "a virtual pipeline needs PP > 1");
            const int m = p.numMicrobatches();
            // The interleaved schedule groups PP micro-batches: PP <= M and M % PP == 0.
            if (m < p.pp() || m % p.pp() != 0)
                add(out, "megatron.vpp-microbatches",
                    "interleaved 1F1B needs the " + std::to_string(m) + " micro-batches to be a multiple of PP "
                        + std::to_string(p.pp()));
            // A stage with fewer layers than chunks runs with empty chunks, which the exported
            // --pipeline-model-parallel-layout writes (LauncherExport).
        }
        const NodeOrder order = megatronNodeOrder(p, m_cluster);
        if (order.nodes.empty())
            add(out, "megatron.node-order", order.problem);
        return out;
    }

    std::vector<DeploymentProblem> flagscale() const
    {
        std::vector<DeploymentProblem> out;
        const Plan& p = m_plan;
        flexDispatcher(out);
        fp8Devices(out);
        recomputeModules(out);
        for (int s = 0; s < p.pp(); ++s)
            if (p.stages[static_cast<std::size_t>(s)].cp != 1) {
                add(out, "flagscale.cp", stageName(p, s) + " has CP " + std::to_string(p.stages[static_cast<std::size_t>(s)].cp)
                                             + " (FlagScale's ParallelContext asserts context_parallel_size == 1)");
                break;
            }
        // FlagScale's Megatron-LM (8479eb35) is stricter than Megatron-LM d98e8a64, which also
        // lets TP be a multiple of the query groups: TransformerConfig raises unless
        // num_query_groups % tensor_model_parallel_size == 0.
        if (const int groups = m_model.queryGroups(); groups > 0)
            for (int s = 0; s < p.pp(); ++s)
                if (groups % p.stages[static_cast<std::size_t>(s)].tp != 0) {
                    add(out, "flagscale.query-groups-tp",
                        stageName(p, s) + ": TP " + std::to_string(p.stages[static_cast<std::size_t>(s)].tp) + " does not divide the "
                            + std::to_string(groups) + " query groups (FlagScale's Megatron-LM requires it)");
                    break;
                }
        if (p.vpp != 1)
            add(out, "flagscale.no-vpp", "FlagScale's heterogeneous mode has no virtual pipeline (VPP " + std::to_string(p.vpp) + ")");
        const std::vector<PlanMesh> meshes = planMeshes(p);
        const StagePlan& m0 = p.stages.front();
        for (std::size_t i = 1; i < meshes.size(); ++i) {
            const StagePlan& st = p.stages[static_cast<std::size_t>(meshes[i].first_stage)];
            // Mesh i runs MBS_i = DP0*MBS0/DP_i, which must divide exactly.
            if ((m0.dp * m0.micro_batch_size) % st.dp != 0 || st.micro_batch_size != m0.dp * m0.micro_batch_size / st.dp)
                add(out, "flagscale.mesh-mbs",
                    "mesh " + std::to_string(i) + " (" + st.device_type + ") has DP " + std::to_string(st.dp) + " and MBS "
                        + std::to_string(st.micro_batch_size) + "; FlagScale gives it DP0*MBS0/DP = "
                        + std::to_string(m0.dp * m0.micro_batch_size) + "/" + std::to_string(st.dp));
        }
        // Between meshes of unlike TP, FlagScale's ParallelContext rebuilds the sequence as the
        // local length times TP times CP (flagscale/train/hetero/parallel_context.py), which
        // holds only with sequence parallelism: without it the two sides of a send would cut
        // the activations differently.
        if (!p.sequence_parallel)
            for (std::size_t i = 1; i < meshes.size(); ++i) {
                const StagePlan& a = p.stages[static_cast<std::size_t>(meshes[i - 1].first_stage)];
                const StagePlan& b = p.stages[static_cast<std::size_t>(meshes[i].first_stage)];
                if (a.tp != b.tp) {
                    add(out, "flagscale.tp-change-needs-sp",
                        "mesh " + std::to_string(i - 1) + " (TP " + std::to_string(a.tp) + ") sends to mesh " + std::to_string(i) + " (TP "
                            + std::to_string(b.tp) + ") without sequence parallelism; FlagScale's heterogeneous sends assume it");
                    break;
                }
            }
        // Ranks are sorted by the position of their type in --hetero-device-types and meshes
        // take consecutive ranks, so a type may not come back after another type.
        std::vector<std::string> seen;
        for (std::size_t i = 0; i < meshes.size(); ++i) {
            const std::string t = lower(m_catalog.canonicalName(p.stages[static_cast<std::size_t>(meshes[i].first_stage)].device_type));
            if (!seen.empty() && seen.back() == t)
                continue;
            if (std::find(seen.begin(), seen.end(), t) != seen.end()) {
                add(out, "flagscale.device-type-order",
                    "mesh " + std::to_string(i) + " returns to device type "
                        + p.stages[static_cast<std::size_t>(meshes[i].first_stage)].device_type
                        + " after another type; FlagScale assigns each type's ranks to consecutive meshes");
                break;
            }
            seen.push_back(t);
        }
        // Per-stage recompute lists only switch full recompute on or off (granularity 0/1);
        // selective recompute is one global setting.
        const bool anySelective = std::any_of(p.stages.begin(), p.stages.end(), [](const StagePlan& st) { return st.recompute == Recompute::Selective; });
        const bool allSelective = std::all_of(p.stages.begin(), p.stages.end(), [](const StagePlan& st) { return st.recompute == Recompute::Selective; });
        if (anySelective && !allSelective)
            add(out, "flagscale.selective-recompute",
                "selective recompute on some stages only: FlagScale's per-stage lists express full recompute on or off");
        if (meshes.size() > 1 && !m_model.untie_embeddings_and_output_weights) {
            const StagePlan& a = p.stages[static_cast<std::size_t>(meshes.front().first_stage)];
            const StagePlan& b = p.stages[static_cast<std::size_t>(meshes.back().first_stage)];
            if (a.tp != b.tp)
                add(out, "flagscale.tied-embeddings",
                    "tied embeddings need the first and last mesh to have the same TP (" + std::to_string(a.tp) + " vs "
                        + std::to_string(b.tp) + ")");
            if (a.dp != b.dp && p.distributed_optimizer && a.dp % b.dp != 0 && b.dp % a.dp != 0)
                add(out, "flagscale.shared-embedding-dp",
                    "tied embeddings with the distributed optimizer need the first and last mesh DP to divide one another ("
                        + std::to_string(a.dp) + " vs " + std::to_string(b.dp) + ")");
        }
        return out;
    }

private:
    const Plan& m_plan;
    const ModelSpec& m_model;
    const Cluster& m_cluster;
    const DeviceCatalog& m_catalog;
};

} // namespace

std::vector<PlanMesh> planMeshes(const Plan& plan)
{
    std::vector<PlanMesh> meshes;
    for (int s = 0; s < plan.pp(); ++s) {
        const StagePlan& st = plan.stages[static_cast<std::size_t>(s)];
        if (!meshes.empty()) {
            const StagePlan& prev = plan.stages[static_cast<std::size_t>(s - 1)];
            if (lower(prev.device_type) == lower(st.device_type) && prev.tp == st.tp && prev.cp == st.cp && prev.dp == st.dp
                && prev.ep == st.ep && prev.etp == st.etp && prev.micro_batch_size == st.micro_batch_size) {
                ++meshes.back().num_stages;
                continue;
            }
        }
        meshes.push_back({s, 1});
    }
    return meshes;
}

NodeOrder megatronNodeOrder(const Plan& plan, const Cluster& cluster)
{
    NodeOrder result;
    std::vector<int> order;
    std::map<int, int> used;   // node id -> devices used by the plan
    for (const StagePlan& st : plan.stages)
        for (const DeviceSlot& d : st.devices) {
            if (!used.count(d.node))
                order.push_back(d.node);
            used[d.node] += d.count;
        }
    if (order.empty()) {
        result.problem = "the plan uses no device";
        return result;
    }
    // torchrun runs the same --nproc_per_node on every node.
    const int n = used[order.front()];
    for (int id : order)
        if (used[id] != n) {
            const Node* a = cluster.node(order.front());
            const Node* b = cluster.node(id);
            result.problem = "torchrun runs the same number of processes on every node, but the plan uses "
                + std::to_string(n) + " devices of " + (a ? a->host : std::to_string(order.front())) + " and "
                + std::to_string(used[id]) + " of " + (b ? b->host : std::to_string(id));
            return result;
        }
    // Check that global rank r = node_rank * n + local lands on a node of its stage.
    int rank = 0;
    for (int s = 0; s < plan.pp(); ++s) {
        const StagePlan& st = plan.stages[static_cast<std::size_t>(s)];
        std::set<int> stageNodes;
        for (const DeviceSlot& d : st.devices)
            stageNodes.insert(d.node);
        const int size = std::accumulate(st.devices.begin(), st.devices.end(), 0,
                                         [](int a, const DeviceSlot& d) { return a + d.count; });
        for (int r = rank; r < rank + size; ++r) {
            const int node = order[static_cast<std::size_t>(r / n)];
            if (!stageNodes.count(node)) {
                const Node* nd = cluster.node(node);
                result.problem = "stage " + std::to_string(s) + " would own ranks [" + std::to_string(rank) + ", "
                    + std::to_string(rank + size) + ") but rank " + std::to_string(r) + " is on node "
                    + (nd ? nd->host : std::to_string(node)) + ", which holds another stage";
                return result;
            }
        }
        rank += size;
    }
    result.nodes = std::move(order);
    result.nproc_per_node = n;
    return result;
}

std::string deepEpUnavailable(const DeviceCatalog& catalog, const std::string& type)
{
    const DeviceType* t = catalog.find(type);
    if (!t)
        return {};
    if (t->vendor == "NVIDIA") {
        if (t->compute_capability < 9.0) {
            if (t->compute_capability <= 0)
                return "no CUDA compute capability in its device entry (DeepEP needs 9.0 or more)";
            char cc[16];
            std::snprintf(cc, sizeof cc, "%.1f", t->compute_capability);
            return std::string("compute capability ") + cc + " (DeepEP needs 9.0 or more, Hopper's SM90)";
        }
        if (t->intra_link_kind.rfind("NVLink", 0) != 0)
            return "devices joined by " + (t->intra_link_kind.empty() ? std::string("no NVLink") : t->intra_link_kind)
                   + " (DeepEP needs NVLink between the GPUs of a node)";
        return {};
    }
    if (t->vendor == "AMD") {
        for (const char* name : {"MI300X", "MI308X", "MI350X"})
            if (t->name == name || catalog.sameType(type, name))
                return {};
        return "an AMD type that AMD's DeepEP port does not list (it lists MI300X, MI308X, MI350X)";
    }
    return "a " + (t->vendor.empty() ? std::string("non-NVIDIA") : t->vendor) + " device with no DeepEP port";
}

StageRuledOut firstStageRuledOut(const Plan& plan, const DeviceCatalog& catalog, const DeviceRule& unavailable)
{
    for (int s = 0; s < plan.pp(); ++s)
        if (std::string why = unavailable(catalog, plan.stages[static_cast<std::size_t>(s)].device_type); !why.empty())
            return {s, std::move(why)};
    return {};
}

bool writesGroupedGemm(const DeviceCatalog& catalog, const std::string& type)
{
    const DeviceType* t = catalog.find(type);
    if (!t)
        return false;
    // ROCm/Megatron-LM (AMD's Megatron-LM for its MI300X-series images) examples/mixtral/
    // train_mixtral_moe.sh at 07c55f77 passes --moe-grouped-gemm unless USE_GROUPED_GEMM=false;
    // ROCm's PyTorch reports MI300X as capability 9.4, so the assert holds. CDNA2 (MI250X) is
    // left out: no such launch of it is published.
    if (t->vendor == "AMD")
        return t->fp8_tflops > 0;
    return t->vendor == "NVIDIA" && t->compute_capability >= 8.0;
}

unsigned refusedRecomputeModules(const ModelSpec& model)
{
    return model.training.fp8() && model.training.fp8_recipe == Fp8Recipe::Delayed
        ? recompute_module::moe_act | recompute_module::layernorm
        : 0u;
}

std::string fp8Unavailable(const DeviceCatalog& catalog, const std::string& type, Fp8Recipe recipe)
{
    const DeviceType* t = catalog.find(type);
    if (!t)
        return {};
    // Transformer Engine's check_fp8_support: "Device compute capability 8.9 or higher required
    // for FP8 execution" (transformer_engine/pytorch/fp8.py).
    if (t->vendor == "NVIDIA" && t->compute_capability > 0 && t->compute_capability < 8.9) {
        char cc[16];
        std::snprintf(cc, sizeof cc, "%.1f", t->compute_capability);
        return std::string("compute capability ") + cc + " (Transformer Engine runs FP8 on 8.9 or higher)";
    }
    if (!t->hasFp8())
        return "its catalog entry gives no FP8 rate (fp8_tflops)";
    // The block-scaled recipes need NVIDIA's block-scaled GEMMs (transformer_engine/pytorch/
    // quantization.py: _compute_mxfp8_support, _compute_fp8_block_scaling_support).
    // An NVIDIA type whose entry gives no compute capability is taken as able, as above.
    if (t->vendor == "NVIDIA" && t->compute_capability <= 0)
        return {};
    const double cc = t->vendor == "NVIDIA" ? t->compute_capability : 0.0;
    char ccText[16];
    std::snprintf(ccText, sizeof ccText, "%.1f", cc);
    const std::string what = t->vendor == "NVIDIA" ? std::string("compute capability ") + ccText
                                                   : std::string("not an NVIDIA device");
    if (recipe == Fp8Recipe::MXFP8 && !(cc >= 10.0 && cc < 12.0))
        return what + " (Transformer Engine runs the mxfp8 recipe on NVIDIA compute capability 10.x)";
    if (recipe == Fp8Recipe::Blockwise && !(cc >= 9.0))
        return what + " (Transformer Engine runs the blockwise recipe on NVIDIA compute capability 9.0 or higher)";
    return {};
}

std::vector<DeploymentProblem> deploymentProblems(const Plan& plan, const ModelSpec& model, const Cluster& cluster,
                                                  const DeviceCatalog& catalog, Target target)
{
    const Checker check(plan, model, cluster, catalog);
    std::vector<DeploymentProblem> problems = check.common();
    if (!problems.empty())
        return problems;
    switch (target) {
    case Target::Megatron: return check.megatron();
    case Target::FlagScale: return check.flagscale();
    case Target::Any: {
        std::vector<DeploymentProblem> m = check.megatron();
        if (m.empty())
            return m;
        std::vector<DeploymentProblem> f = check.flagscale();
        if (f.empty())
            return f;
        // Neither accepts it: report both targets' first reasons.
        std::vector<DeploymentProblem> both;
        both.push_back(m.front());
        both.push_back(f.front());
        return both;
    }
    }
    return problems;
}

LauncherChoice chooseLauncher(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog)
{
    LauncherChoice c;
    c.target = plan.target;
    if (plan.target == Target::FlagScale) {
        c.flagscale = deploymentProblems(plan, model, cluster, catalog, Target::FlagScale);
        return c;
    }
    if (plan.target != Target::Megatron)
        return c;
    c.megatron = deploymentProblems(plan, model, cluster, catalog, Target::Megatron);
    if (c.megatron.empty())
        return c;
    c.flagscale = deploymentProblems(plan, model, cluster, catalog, Target::FlagScale);
    if (c.flagscale.empty())
        c.target = Target::FlagScale;
    return c;
}

std::string LauncherChoice::unlaunchable() const
{
    if (problems().empty())
        return {};
    if (target == Target::Megatron && !flagscale.empty())
        return "neither Megatron-LM nor FlagScale can launch it: "
            + (megatron.front().message == flagscale.front().message
                   ? megatron.front().message
                   : "Megatron-LM: " + megatron.front().message + "; FlagScale: " + flagscale.front().message);
    return std::string(target == Target::FlagScale ? "FlagScale" : "Megatron-LM") + " cannot launch it: " + problems().front().message;
}

Target bestTarget(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog)
{
    if (isDeployable(plan, model, cluster, catalog, Target::Megatron))
        return Target::Megatron;
    return Target::FlagScale;
}

int blockRecomputeNumLayers(const Plan& plan)
{
    if (plan.stages.empty())
        return 0;
    std::vector<int> counts;
    return recomputeSettingFor(plan, counts) < 0 && !counts.empty() ? counts.front() : 0;
}

} // namespace hapmoe
