#include "cost/UniformPlan.h"

#include "util/InputError.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

namespace hapmoe {

Plan makeUniformPlan(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog,
                     const UniformKnobs& k)
{
    auto bad = [](const std::string& flag, const std::string& msg) { return InputError("", flag, msg); };
    const int W = cluster.totalDevices();
    if (W <= 0)
        throw bad("--cluster", "the cluster has no devices");
    for (auto [name, v] : {std::pair<const char*, int>{"--tp", k.tp}, {"--pp", k.pp}, {"--cp", k.cp}, {"--ep", k.ep},
                           {"--etp", k.etp}, {"--vpp", k.vpp}, {"--mbs", k.micro_batch_size}})
        if (v < 1)
            throw bad(name, "must be a positive integer, got " + std::to_string(v));
    // Each parallel size is at most the device count, so their products below stay in range.
    for (auto [name, v] : {std::pair<const char*, int>{"--tp", k.tp}, {"--pp", k.pp}, {"--cp", k.cp}, {"--ep", k.ep},
                           {"--etp", k.etp}})
        if (v > W)
            throw bad(name, std::to_string(v) + " exceeds the cluster's " + std::to_string(W) + " devices");
    const long long mp = 1LL * k.tp * k.cp * k.pp;
    if (W % mp != 0)
        throw bad(responsibleFlags({{"--tp", k.tp}, {"--cp", k.cp}, {"--pp", k.pp}}), "TP*CP*PP = " + std::to_string(mp) + " does not divide the cluster's " + std::to_string(W)
                              + " devices");
    const int dp = static_cast<int>(W / mp);
    const int perStage = W / k.pp;
    if (perStage % (1LL * k.ep * k.etp) != 0)
        throw bad(responsibleFlags({{"--ep", k.ep}, {"--etp", k.etp}}),
                  "EP*ETP = " + std::to_string(k.ep) + " x " + std::to_string(k.etp) + " = " + std::to_string(1LL * k.ep * k.etp)
                      + " does not divide the " + std::to_string(perStage) + " devices of a stage (TP*CP*DP)"
                      + (k.etp == k.tp && k.etp > 1 ? " (an MoE model's ETP is its TP unless --etp gives it)" : ""));
    if (model.isMoe() && model.num_experts % k.ep != 0)
        throw bad("--ep", "EP = " + std::to_string(k.ep) + " does not divide the model's " + std::to_string(model.num_experts)
                              + " experts");
    if (!model.isMoe() && (k.ep > 1 || k.etp > 1))
        throw bad(responsibleFlags({{"--ep", k.ep}, {"--etp", k.etp}}), "the model has no experts; EP and ETP must be 1");
    if (k.recompute_layers < 0)
        throw bad("--recompute-layers", "expected an integer >= 0 (0 = every layer of a rank), got " + std::to_string(k.recompute_layers));
    if (model.num_layers < 1LL * k.pp * k.vpp)
        throw bad(responsibleFlags({{"--pp", k.pp}, {"--vpp", k.vpp}}),
                  "PP*VPP = " + std::to_string(1LL * k.pp * k.vpp) + " exceeds the model's " + std::to_string(model.num_layers)
                              + " layers");
    if (k.vpp > 1 && k.pp < 2)
        throw bad("--vpp", "an interleaved schedule needs PP >= 2");
    // Megatron-LM (TransformerConfig, validate_args): without a layout every pipeline rank
    // holds num_layers / PP layers and each of its VPP model chunks the same share of them.
    const int layersPerRank = model.num_layers / k.pp;
    const bool ownSplit = !k.layer_split.empty();
    if (ownSplit && (static_cast<int>(k.layer_split.size()) != k.pp
                     || (k.vpp > 1 && static_cast<int>(k.layer_chunks.size()) != k.pp)))
        throw bad("--pp", "the layer split has " + std::to_string(k.layer_split.size()) + " pipeline ranks, PP is "
                              + std::to_string(k.pp));
    if (!k.layout_given && !ownSplit) {
        if (model.num_layers % k.pp != 0)
            throw bad("--pp", "the model's " + std::to_string(model.num_layers) + " layers do not split evenly over PP "
                                  + std::to_string(k.pp) + " (Megatron-LM needs num_layers % PP == 0 unless a pipeline layout "
                                  "gives the split)");
        if (layersPerRank % k.vpp != 0)
            throw bad("--vpp", "the " + std::to_string(layersPerRank) + " layers of each pipeline rank do not split evenly into VPP "
                                   + std::to_string(k.vpp) + " virtual stages (Megatron-LM needs (num_layers / PP) % VPP == 0)");
    }
    if (model.num_attention_heads % k.tp != 0)
        throw bad("--tp", "TP = " + std::to_string(k.tp) + " does not divide the " + std::to_string(model.num_attention_heads)
                              + " attention heads");
    // Context parallelism cuts each sequence into 2 x CP chunks so that every rank gets an
    // early and a late one (Megatron-Core's load-balanced causal CP).
    if (k.cp > 1 && model.seq_length % (2 * k.cp) != 0)
        throw bad("--cp", "CP = " + std::to_string(k.cp) + " needs a sequence length divisible by 2 x CP = "
                              + std::to_string(2 * k.cp) + ", the model's is " + std::to_string(model.seq_length));
    // Block recompute of k layers per rank: 1 <= k <= num_layers / PP (TransformerConfig).
    if (k.recompute == Recompute::Full && k.recompute_layers > layersPerRank)
        throw bad("--recompute-layers", "expected at most the " + std::to_string(layersPerRank) + " layers of a pipeline rank ("
                                            + std::to_string(model.num_layers) + " layers over PP " + std::to_string(k.pp)
                                            + "), got " + std::to_string(k.recompute_layers));

    Plan plan;
    plan.name = "uniform (flags)";
    plan.vpp = k.vpp;
    plan.global_batch_size = k.global_batch_size > 0 ? k.global_batch_size : model.training.global_batch_size;
    // Megatron-Core's MoE layer refuses to train with TP > 1 without sequence parallelism
    // (MoELayer.forward raises "During training, performance may degrade if MoE and tensor
    // parallelism are enabled without also enabling sequence parallelism"), so an MoE plan
    // with TP > 1 runs it whether or not the knob says so; callers tell the user.
    // Megatron-LM turns sequence parallelism off at TP 1 (validate_args: "Disabling sequence
    // parallelism because tensor model parallelism is disabled").
    plan.sequence_parallel = (k.sequence_parallel || model.isMoe()) && k.tp > 1;
    plan.distributed_optimizer = k.distributed_optimizer;
    if (!(k.optimizer_offload_fraction >= 0 && k.optimizer_offload_fraction <= 1))
        throw bad("--optimizer-offload-fraction", "expected a fraction in [0, 1]");
    plan.optimizer_offload_fraction = k.optimizer_offload_fraction;
    plan.target = Target::Megatron;
    if (plan.global_batch_size < 1)
        throw bad("--gbs", "expected a positive global batch size, got " + std::to_string(plan.global_batch_size));
    // Megatron-LM's microbatch calculator: GBS = MBS x DP x number of micro-batches.
    const long long perMicrobatch = 1LL * dp * k.micro_batch_size;
    // The flag that sets the batch is named, with where the batch came from when not given.
    if (plan.global_batch_size % perMicrobatch != 0)
        throw bad("--gbs",
                  "the global batch " + std::to_string(plan.global_batch_size)
                      + (k.global_batch_size > 0 ? std::string() : std::string(" (the model's training.global_batch_size; --gbs gives another)"))
                      + " is not a multiple of micro-batch x DP = " + std::to_string(k.micro_batch_size) + " x "
                      + std::to_string(dp) + " = " + std::to_string(perMicrobatch));

    const long long microbatches = plan.global_batch_size / perMicrobatch;
    if (k.vpp > 1 && microbatches % k.pp != 0)
        throw bad("--vpp", "the interleaved schedule needs the number of micro-batches (" + std::to_string(microbatches)
                               + ") to be a multiple of PP (" + std::to_string(k.pp) + ")");

    // Layers: the caller's split, or as even as possible with the remainder on the first stages.
    const int base = model.num_layers / k.pp, extra = model.num_layers % k.pp;
    int layer = 0;
    for (int s = 0; s < k.pp; ++s) {
        StagePlan st;
        st.first_layer = layer;
        st.num_layers = ownSplit ? k.layer_split[static_cast<std::size_t>(s)] : base + (s < extra ? 1 : 0);
        layer += st.num_layers;
        if (ownSplit && k.vpp > 1 && k.layer_chunks[static_cast<std::size_t>(s)] != chunkLayers(st.num_layers, k.vpp))
            st.chunk_layers = k.layer_chunks[static_cast<std::size_t>(s)];
        st.tp = k.tp;
        st.cp = k.cp;
        st.dp = dp;
        st.ep = k.ep;
        st.etp = k.etp;
        st.edp = perStage / (k.ep * k.etp);
        st.recompute = k.recompute;
        // Megatron-LM's block method with --recompute-num-layers n (0 = every layer): the first
        // n layers of each of the rank's model chunks (megatron/core/transformer/
        // transformer_block.py recomputes within one chunk's block; NeMo's documentation: "When
        // using virtual pipelining, recompute_num_layers specifies the number of layers per
        // virtual pipeline stage"), the chunks as the layout gives them or as even as possible.
        st.recompute_layers = k.recompute == Recompute::Full && k.recompute_layers > 0
            ? blockRecomputeLayersOfStage(st.chunks(k.vpp), k.recompute_layers)
            : 0;
        st.recompute_modules = k.recompute_modules;
        st.micro_batch_size = k.micro_batch_size;
        // Global ranks [s*W/PP, (s+1)*W/PP) in node order.
        const int lo = s * perStage, hi = lo + perStage;
        int offset = 0;
        for (const auto& n : cluster.nodes) {
            const int a = std::max(lo, offset), b = std::min(hi, offset + n.count);
            if (a < b) {
                const DeviceType* t = catalog.find(n.device_type);
                const std::string type = t ? t->name : n.device_type;
                if (st.devices.empty())
                    st.device_type = type;
                else if (type != st.device_type)
                    throw bad("--pp", "with PP " + std::to_string(k.pp) + ", stage "
                                          + std::to_string(s) + " of " + std::to_string(perStage) + " devices would span device types "
                                          + st.device_type + " and " + type + "; choose PP so that each stage lies on one device type");
                st.devices.push_back({n.id, a - offset, b - a});
            }
            offset += n.count;
        }
        plan.stages.push_back(std::move(st));
    }
    return plan;
}

} // namespace hapmoe
