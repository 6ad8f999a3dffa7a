// The MoE-aware cost model. Every formula is written down, with its source, in
// docs/cost-model.md; the section numbers below refer to that file.

#include "cost/CostModel.h"

#include "cost/CollectiveModel.h"
#include "cost/LayerShape.h"
#include "cost/Schedule.h"
#include "plan/Deployability.h"
#include "profile/ProfileTables.h"
#include "util/InputError.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe {

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// Bytes per parameter of the model state (section 5.1, Megatron
// docs/user-guide/features/dist_optimizer.md): with fp32 gradients (bf16's default) 2 (param)
// + 4 (fp32 grad buffer, the main gradient) + 12 (fp32 param, Adam m and v) = 18, the
// distributed optimizer sharding the 12 over DP x CP (EDP for experts): 6 + 12/d. With
// half-precision gradients (fp16's default) 2 + 2 (grad buffer) + 16 (fp32 main gradient,
// param, m, v) = 20, sharded: 4 + 16/d. The gradient buffer is what DP reduces.
struct StateBytes {
    double weight = 2.0, gradient = 4.0, optimizer = 12.0;
};
StateBytes stateBytes(const TrainingSpec& t)
{
    return t.fp32Gradients() ? StateBytes{2.0, 4.0, 12.0} : StateBytes{2.0, 2.0, 16.0};
}

// The cross-entropy's memory-bound passes over the logits of a rank, in bytes per logit, and
// what it keeps for backward (section 3.6):
// - unfused (megatron/core/tensor_parallel/cross_entropy.py): forward fp32 copy 2+4, max 4,
//   subtract 4+4, exp 4+4, sum 4, normalise 4+4 = 38; backward scale 4+4, back to bf16 4+2 =
//   14; keeps the fp32 softmax, 4;
// - --cross-entropy-loss-fusion, native (megatron/core/fusions/fused_cross_entropy.py): the
//   copy fused with the max 2+4, exp(x - max) in place 4+4, sum 4, normalise 4+4 = 26;
//   backward as unfused, 14; keeps the fp32 softmax, 4;
// - --cross-entropy-fusion-impl te (Transformer Engine's parallel_cross_entropy, from TE 2.1,
//   Feb 2025, to mid 2026): an online softmax reads the bf16 logits, 2, then a second kernel
//   reads them again and writes the gradient in their place, 2+2: 6 forward; backward scales
//   that gradient by the loss gradient in place, 2+2 = 4; keeps the bf16 gradient, 2.
struct CrossEntropyBytes {
    double fwd, bwd, kept;
};
// Megatron-LM d98e8a64 refuses te (validate_args: "disabled due to stability issues"); a plan
// for it runs the native fusion, which its launcher writes.
bool teCrossEntropyRuns(const TrainingSpec& t, Target target)
{
    return t.cross_entropy_fusion_impl == CrossEntropyFusionImpl::TE && target != Target::Megatron;
}
CrossEntropyBytes crossEntropyBytes(const TrainingSpec& t, Target target)
{
    if (!t.cross_entropy_loss_fusion)
        return {38.0, 14.0, 4.0};
    if (teCrossEntropyRuns(t, target))
        return {6.0, 4.0, 2.0};
    return {26.0, 14.0, 4.0};
}

// Size dependence of GEMM efficiency (section 3.1): Calculon's A100 system file
// (systems/a100_80g.json, matrix efficiency 0.6 at 1 GFLOP, 0.9 at 16, 0.95 at >= 128),
// normalised to its large-GEMM value; the device's large-GEMM fraction comes from the
// catalog (MAMF) or the profile.
constexpr std::array<std::pair<double, double>, 3> kGemmSize{{{1e9, 0.6 / 0.95}, {16e9, 0.9 / 0.95}, {128e9, 1.0}}};

// Calculon's table was measured on A100 (312 TFLOP/s). A GEMM's fixed costs (launch, the last
// partial wave of tiles, prologue and epilogue) are set in time, so a device k times faster
// reaches the same efficiency only on a k times larger GEMM: the table is indexed by the
// FLOPs the GEMM would have on A100, f x 312 / peak.
constexpr double kCalculonPeak = 312e12;

double gemmSizeFactor(double flops)
{
    if (flops >= kGemmSize[2].first)
        return 1.0;
    const auto& a = flops < kGemmSize[1].first ? kGemmSize[0] : kGemmSize[1];
    const auto& b = flops < kGemmSize[1].first ? kGemmSize[1] : kGemmSize[2];
    const double t = std::log(std::max(flops, 1.0) / a.first) / std::log(b.first / a.first);
    const double f = a.second * std::exp(t * std::log(b.second / a.second));
    return std::clamp(f, 0.05, 1.0);
}

struct DeviceInfo {
    const DeviceType* type = nullptr;
    std::string name;
    double peak = 0;          // FLOP/s
    double fp8_peak = 0;      // FLOP/s of its FP8 tensor cores; 0 = none
    bool fp8 = false;         // the model runs its linear layers in FP8 and this type can
    double gemm_eff = 0.5;    // large-GEMM fraction of peak
    bool eff_from_profile = false;
    double hbm = 0;           // effective bytes/s
    double intra_bw = 0;      // bytes/s per device
    bool nvlink4 = false;     // NVLink4 node: the H100 collective curve
    bool full_mesh = false;   // xGMI, HCCS, Gaudi RoCE: a link per peer, no switch
    int mesh_size = 8;        // devices of the platform's mesh: intra_bw is spread over mesh_size - 1 peer links
    double nic_bw = 0;        // bytes/s per device
    double capacity = 0;      // bytes
    double overhead = 0;      // bytes
    double act_factor = 1;
    bool mem_from_profile = false;

    double gemm(double flops) const { return gemmAt(flops, peak); }
    // A GEMM of a Transformer Engine linear layer: in FP8 at the FP8 peak where the model and
    // the device run it, with the same large-GEMM fraction and size curve (indexed by the time
    // at that peak, as above); else a BF16 GEMM (section 3.7).
    double linear(double flops) const { return gemmAt(flops, fp8 ? fp8_peak : peak); }
    double gemmAt(double flops, double at) const
    {
        return flops > 0 ? flops / (at * gemm_eff * gemmSizeFactor(flops * kCalculonPeak / at)) : 0.0;
    }
    double memTime(double bytes) const { return bytes / hbm; }
    // FP8 GEMMs in any layout (NVIDIA compute capability 10.0 and above): no FP8 transposes.
    bool nonTnFp8() const { return type && type->vendor == "NVIDIA" && type->compute_capability >= 10.0; }
};

// What Transformer Engine's quantization under a --fp8-recipe moves, in bytes per element of
// the tensor cast (docs/cost-model.md section 3.7).
struct Fp8Casts {
    double full = 4;        // a GEMM input or output gradient cast for both GEMM orientations
    double shard = 3;       // under SP, a gathered tensor's shard cast before the all-gather
    double transpose = 2;   // under SP, per gathered element, the transpose made after the gather
    double data = 1;        // an FP8 element with its share of the scales (gathers, saved inputs)
    double weightCopy = 2;  // per linear-layer parameter, the cached FP8 weight and its transpose
    bool amaxAllReduce = false;   // under SP, the shard's amax is all-reduced over TP before the cast
    // Under SP, what a backward all-gather of an output gradient moves per element: the
    // block-scaled recipes gather its row-wise and column-wise copies (TE's _all_gather_mxfp8
    // and the blockwise gather take both usages the gradient quantizer sets).
    double gatheredGradient = 1;
};

Fp8Casts fp8Casts(Fp8Recipe recipe, bool nonTn)
{
    Fp8Casts c;
    // Compute capability 10.0 and above run FP8 GEMMs in any layout (TE's
    // is_non_tn_fp8_gemm_supported): the per-tensor recipes make no transpose there, their FP8
    // data serving both GEMMs (Float8Quantizer: need_transpose = columnwise && !non_tn).
    if (nonTn && (recipe == Fp8Recipe::Delayed || recipe == Fp8Recipe::Tensorwise)) {
        c.full = recipe == Fp8Recipe::Tensorwise ? 5 : 3;
        c.shard = c.full;
        c.transpose = 0;
        c.weightCopy = 1;
        c.amaxAllReduce = recipe == Fp8Recipe::Tensorwise;
        return c;
    }
    switch (recipe) {
    case Fp8Recipe::Delayed:
        // The scale comes from the amax history; the cast-transpose records the amax as it
        // goes: read 2, write 1 + 1. The shard before a gather is cast row-wise only (3).
        break;
    case Fp8Recipe::Tensorwise:
        // Current scaling measures the tensor's amax in a pass of its own before the cast
        // (Float8CurrentScalingQuantizer::quantize_impl: nvte_compute_amax, then the cast):
        // 2 more bytes read per element; under SP the shard's amax is all-reduced (MAX) over
        // the TP group so that every rank casts with the same scale.
        c.full = 6;
        c.shard = 5;
        c.amaxAllReduce = true;
        break;
    case Fp8Recipe::MXFP8:
        // One E8M0 scale per 32 elements in each orientation; one kernel writes the row-wise
        // and the column-wise copies (no transpose: Blackwell's GEMMs take either layout).
        // Under SP the shard is cast both ways, the forward gathers the row-wise copy and the
        // backward the column-wise one (TE's LayerNormLinear), so nothing is transposed.
        c.full = c.shard = 4.0 + 2.0 / 32.0;
        c.transpose = 0;
        c.data = 1.0 + 1.0 / 32.0;
        c.gatheredGradient = 2.0 * c.data;
        c.weightCopy = 2.0 + 2.0 / 32.0;
        break;
    case Fp8Recipe::Blockwise:
        // 1x128 blocks for activations and gradients, an fp32 scale per block in each
        // orientation, the column-wise copy written transposed by the same kernel; weights in
        // 128x128 blocks. Under SP as MXFP8.
        c.full = c.shard = 4.0 + 2.0 * 4.0 / 128.0;
        c.transpose = 0;
        c.data = 1.0 + 4.0 / 128.0;
        c.gatheredGradient = 2.0 * c.data;
        c.weightCopy = 2.0 + 2.0 * 4.0 / (128.0 * 128.0);
        break;
    }
    return c;
}

// The profile with every device type under its catalog name, so that an entry written with
// an alias ("H800-SXM", "NVIDIA H800") is found as the catalog finds it; unknown names stay.
Profile canonicalNames(const Profile& profile, const DeviceCatalog& catalog)
{
    Profile out = profile;
    auto canonical = [&](std::string& name) { name = catalog.canonicalName(name); };
    for (auto& e : out.compute)
        canonical(e.device_type);
    for (auto& e : out.collectives)
        canonical(e.device_type);
    for (auto& e : out.memory)
        canonical(e.device_type);
    out.device_efficiency.clear();
    for (const auto& [name, value] : profile.device_efficiency) {
        std::string key = name;
        canonical(key);
        out.device_efficiency[key] = value;
    }
    return out;
}

// Where a stage's collective times came from, for the plan's notes.
struct CollectiveSources {
    bool table = false;      // at least one from the profile's tables
    bool analytic = false;   // at least one from the analytic model
};

struct NodeInfo {
    bool valid = false;
    int id = -1;
    int count = 0;
    double nic_bw = 0;        // bytes/s per device
    double cross_nic_bw = 0;  // what of it is left when the traffic leaves an oversubscribed leaf switch
    double host_bw = 0;       // device-host link, bytes/s per device and direction; 0 = CostOptions default
    double host_memory = 0;   // bytes the training may use on the host; 0 = unknown
    const DeviceInfo* device = nullptr;
};

// Time of one pass (forward or backward) of one layer, split as the breakdown reports it.
struct PassTime {
    double compute = 0;
    double tp = 0;        // TP/SP collectives and exposed CP exchange
    double dispatch = 0;  // expert dispatch and combine
    double total() const { return compute + tp + dispatch; }
    PassTime& operator+=(const PassTime& o)
    {
        compute += o.compute;
        tp += o.tp;
        dispatch += o.dispatch;
        return *this;
    }
    PassTime scaled(double k) const { return {compute * k, tp * k, dispatch * k}; }
};

// What selective recompute repeats in backward, per module of Megatron-Core's
// --recompute-modules (section 3.5): each the forward of that part of the layer.
struct LayerCost {
    PassTime fwd;
    PassTime bwd;
    PassTime attnCoreFwd;   // core_attn: the attention core
    PassTime normFwd;       // layernorm: the norms that are modules of their own (an MoE layer's pre-MLP norm)
    PassTime mlpFwd;        // mlp: a dense layer's MLP with its norm and TP collectives
    PassTime moeActFwd;     // moe_act: the experts' activation function
    PassTime sharedFwd;     // shared_experts: the shared experts with their TP collectives
    PassTime moeFwd;        // moe: the whole MoE block (router, dispatch, experts, shared experts)
    PassTime mlaUpFwd;      // mla_up_proj: MLA's up projections, latent norms, RoPE and their TP gathers

    PassTime recomputed(unsigned modules) const
    {
        PassTime t;
        if (modules & recompute_module::core_attn)
            t += attnCoreFwd;
        if (modules & recompute_module::layernorm)
            t += normFwd;
        if (modules & recompute_module::mlp)
            t += mlpFwd;
        // Inside a recomputed MoE block the experts' activation and the shared experts keep
        // their own checkpoints, which run again in the backward of the block's recompute.
        if (modules & recompute_module::moe)
            t += moeFwd;
        if (modules & recompute_module::moe_act)
            t += moeActFwd;
        if (modules & recompute_module::shared_experts)
            t += sharedFwd;
        if (modules & recompute_module::mla_up_proj)
            t += mlaUpFwd;
        return t;
    }
};

} // namespace

struct CostModel::Impl {
    // Copies: a cost model outlives the temporaries it is often built from.
    const ModelSpec model;
    const Cluster cluster;
    const DeviceCatalog& catalog;
    const Profile* profile;
    CostOptions options;
    ProfileTables tables;
    bool haveTables = false;
    LayerShape shape;
    ParameterCount params;
    std::vector<DeviceInfo> devices;
    std::vector<NodeInfo> nodes;   // in the cluster's order (node())
    // Node id -> its position in `nodes` + 1 (0 = no such node) where the ids are few enough to
    // index directly (the usual 0..N-1); else (id, position) sorted by id, for ids as large as
    // the cluster format allows, which must not cost memory in proportion to the id.
    std::vector<int> slotOfId;
    std::vector<std::pair<int, int>> sortedIds;
    SwitchUplinks uplinks;         // leaf switches and their oversubscription (useLinks)
    bool oversubscribed = false;
    double rho = 1;                // the router's per-expert imbalance, at most E / k
    double gamma = 1;              // its weight on the critical path, 0 to 1
    bool rhoFromProfile = false;

    // The imbalance factor of the most loaded of ep expert-parallel ranks (section 3.4):
    // 1 + gamma (min(rho, EP) - 1). A rank's routed pairs are at most the whole group's, EP
    // times the mean rank's, whatever the routing: at EP 1 the rank holds every expert and
    // routes exactly T k pairs.
    double imbalanceAt(int ep) const { return 1.0 + gamma * std::max(0.0, std::min(rho, static_cast<double>(ep)) - 1.0); }

    Impl(const ModelSpec& m, const Cluster& c, const DeviceCatalog& cat, const Profile* p, CostOptions o)
        : model(m), cluster(c), catalog(cat), profile(p), options(o)
    {
        if (profile && !profile->empty()) {
            tables = ProfileTables(canonicalNames(*profile, catalog));
            haveTables = true;
        }
        shape = LayerShape::of(model);
        params = countParameters(model);
        rho = model.training.router_imbalance;
        if (profile && profile->router_imbalance) {
            rho = *profile->router_imbalance;
            rhoFromProfile = true;
        }
        // An expert gets each token at most once: max over mean load is at most E / k.
        if (model.num_experts > 0 && model.moe_router_topk > 0)
            rho = std::min(rho, static_cast<double>(model.num_experts) / model.moe_router_topk);
        gamma = std::clamp(model.training.imbalance_weight, 0.0, 1.0);

        devices.reserve(catalog.types().size());
        for (const auto& t : catalog.types())
            devices.push_back(makeDevice(t));
        int maxId = 0;
        for (const auto& n : cluster.nodes)
            maxId = std::max(maxId, n.id);
        const bool direct = static_cast<std::size_t>(maxId) < 4 * cluster.nodes.size() + 4096;
        if (direct)
            slotOfId.assign(static_cast<std::size_t>(maxId) + 1, 0);
        for (const auto& n : cluster.nodes) {
            if (n.id < 0)
                continue;
            NodeInfo ni;
            ni.valid = true;
            ni.id = n.id;
            ni.count = std::max(1, n.count);
            ni.device = deviceOrNull(n.device_type);
            ni.nic_bw = nicGBpsPerDevice(n, ni.device ? ni.device->nic_bw / 1e9 : 0.0) * 1e9;
            ni.host_bw = n.host_link_gbytes_per_s * 1e9;
            ni.host_memory = n.host_memory_gib * GiB;
            const int position = static_cast<int>(nodes.size());
            nodes.push_back(ni);
            if (direct)
                slotOfId[static_cast<std::size_t>(n.id)] = position + 1;
            else
                sortedIds.emplace_back(n.id, position);
        }
        std::sort(sortedIds.begin(), sortedIds.end());
        useLinks();
    }

    // The cluster's links (docs/cost-model.md section 6): a node's devices share its links, so
    // what one device sends off the node is at most the node's link bandwidth over its devices.
    void useLinks()
    {
        std::vector<double> linkSum(nodes.size(), 0.0);
        for (const Link& l : cluster.links) {
            if (!(l.bandwidth_gbytes_per_s > 0) || l.a == l.b)
                continue;
            for (int id : {l.a, l.b})
                if (const int i = nodeIndex(id); i >= 0)
                    linkSum[static_cast<std::size_t>(i)] += l.bandwidth_gbytes_per_s * 1e9;
        }
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (linkSum[i] > 0)
                nodes[i].nic_bw = std::min(nodes[i].nic_bw, linkSum[i] / nodes[i].count);
        // Oversubscribed leaf switches (SwitchUplinks, Cluster.h): traffic among nodes that do
        // not share a switch leaves through the uplinks, at the node's share of them.
        uplinks = switchUplinks(cluster, &catalog);
        oversubscribed = uplinks.oversubscribed();
        for (NodeInfo& ni : nodes)
            ni.cross_nic_bw = ni.nic_bw * uplinks.share(ni.id);
    }

    DeviceInfo makeDevice(const DeviceType& t) const
    {
        DeviceInfo d;
        d.type = &t;
        d.name = t.name;
        d.peak = t.bf16_tflops * 1e12;
        d.fp8_peak = t.fp8_tflops * 1e12;
        // FP8 where the model trains in it and the type runs its recipe (fp8Unavailable).
        d.fp8 = model.training.fp8() && t.hasFp8() && fp8Unavailable(catalog, t.name, model.training.fp8_recipe).empty();
        // The catalog's figure is the maximum achievable matmul throughput (MAMF); a large
        // training-shaped GEMM reaches kLargeGemmOverMamf of it.
        d.gemm_eff = (t.default_efficiency > 0 ? t.default_efficiency : 0.5) * kLargeGemmOverMamf;
        if (haveTables) {
            if (auto e = tables.efficiency(t.name)) {
                d.gemm_eff = *e;
                d.eff_from_profile = true;
            }
        }
        // The catalog's STREAM fraction (device-specs.md section 4: A100 1.61 of 2.039 TB/s,
        // H100 2.90 of 3.35, H200 4.01 of 4.8; resources/devices.json), else the default.
        const double stream = options.stream_hbm_fraction ? t.hbm_efficiency : 0.0;
        d.hbm = std::max(1.0, t.hbm_gbps) * 1e9 * (stream > 0 ? stream : options.hbm_efficiency);
        d.intra_bw = std::max(1.0, t.intra_node_gbps) * 1e9;
        d.nvlink4 = t.intra_link_kind == "NVLink4";
        // The catalog's intra-node figure is a device's all-to-all bandwidth over all its
        // peers. On a full mesh each peer has its own link, 1/(N-1) of it ("Peer-to-peer
        // bandwidth is 1/7 of the all-to-all figure", device-specs.md, AMD xGMI; the 910B's
        // HCCS and Gaudi's intra-node RoCE ports are full meshes too); NVSwitch nodes give
        // every pair the whole figure.
        d.full_mesh = t.intra_link_kind == "xGMI" || t.intra_link_kind == "HCCS" || t.intra_link_kind == "RoCE";
        // The catalog's aggregate is the platform's (e.g. MI300X "448 / 896 (64 per peer x7)",
        // device-specs.md section 4): a node with fewer devices still has one link per peer.
        d.mesh_size = std::max(2, t.default_devices_per_node);
        d.nic_bw = std::max(0.1, t.inter_node_gbps) * 1e9;
        d.capacity = t.memory_gib * GiB * (1.0 - options.memory_headroom);
        d.overhead = options.runtime_overhead_gib * GiB;
        if (haveTables) {
            if (const auto* mc = tables.memory(t.name)) {
                d.overhead = mc->fixed_overhead_gib * GiB;
                d.act_factor = mc->activation_factor > 0 ? mc->activation_factor : 1.0;
                d.mem_from_profile = true;
            }
        }
        return d;
    }

    const DeviceInfo* deviceOrNull(std::string_view name) const
    {
        for (const auto& d : devices)
            if (d.name == name)
                return &d;
        for (const auto& d : devices)
            if (sameDeviceName(d.name, name))
                return &d;
        if (const DeviceType* t = catalog.find(name))
            for (const auto& d : devices)
                if (d.type == t)
                    return &d;
        return nullptr;
    }

    const DeviceInfo& device(const std::string& name) const
    {
        if (const auto* d = deviceOrNull(name))
            return *d;
        throw InputError("", "plan.stages[].device_type", "unknown device type \"" + name + "\"");
    }

    // Position of the node in `nodes`, or -1.
    int nodeIndex(int id) const
    {
        if (id < 0)
            return -1;
        if (!slotOfId.empty() || sortedIds.empty())
            return static_cast<std::size_t>(id) < slotOfId.size() ? slotOfId[static_cast<std::size_t>(id)] - 1 : -1;
        const auto it = std::lower_bound(sortedIds.begin(), sortedIds.end(), std::make_pair(id, -1));
        return it != sortedIds.end() && it->first == id ? it->second : -1;
    }

    const NodeInfo* node(int id) const
    {
        const int i = nodeIndex(id);
        return i < 0 ? nullptr : &nodes[static_cast<std::size_t>(i)];
    }

    // --- groups inside a stage (Megatron rank order tp-cp-ep-dp: TP innermost) -------------

    // Where a stage's devices sit, read once per stage estimate.
    struct StageNodes {
        int per_node = 0;        // the stage's devices on its fullest node (several slots may name one node)
        bool one_node = true;    // every slot on one node
        int node_devices = 0;    // the most devices any of its nodes has
        double nic = 0;          // the slowest NIC share per device of its nodes (0 = unknown)
        // Only when a leaf switch is oversubscribed: the stage's nodes in slot order and the
        // slowest NIC share that leaves their leaf switches.
        std::vector<int> nodes;
        double cross_nic = 0;
    };
    StageNodes stageNodes(const StagePlan& s) const
    {
        StageNodes out;
        // Slots of one node are summed: sort a copy by node (a stage has few slots).
        std::vector<std::pair<int, int>> slots;
        slots.reserve(s.devices.size());
        for (const auto& slot : s.devices) {
            slots.emplace_back(slot.node, slot.count);
            out.one_node = out.one_node && slot.node == s.devices.front().node;
            if (const NodeInfo* n = node(slot.node)) {
                out.node_devices = std::max(out.node_devices, n->count);
                out.nic = out.nic > 0 ? std::min(out.nic, n->nic_bw) : n->nic_bw;
                if (oversubscribed) {
                    out.cross_nic = out.cross_nic > 0 ? std::min(out.cross_nic, n->cross_nic_bw) : n->cross_nic_bw;
                    if (std::find(out.nodes.begin(), out.nodes.end(), slot.node) == out.nodes.end())
                        out.nodes.push_back(slot.node);
                }
            }
        }
        std::sort(slots.begin(), slots.end());
        for (std::size_t i = 0; i < slots.size();) {
            int sum = 0;
            const int id = slots[i].first;
            for (; i < slots.size() && slots[i].first == id; ++i)
                sum += slots[i].second;
            out.per_node = std::max(out.per_node, sum);
        }
        if (out.per_node <= 0)
            out.per_node = s.numDevices();
        return out;
    }
    static int devicesPerNode(const StageNodes& n) { return n.per_node; }

    // What a group of `peers` + 1 ranks inside one node can use of the device's intra-node
    // bandwidth: all of it behind a switch, the links to its peers on a full mesh.
    static double intraShare(const StageNodes& s, const DeviceInfo& dev, int peers)
    {
        if (!dev.full_mesh)
            return dev.intra_bw;
        const int n = s.node_devices > 0 ? s.node_devices : s.per_node;
        if (n <= 1)
            return dev.intra_bw;
        return dev.intra_bw * std::clamp(peers, 1, n - 1) / (std::max(n, dev.mesh_size) - 1.0);
    }

    static double nicOf(const StageNodes& s, const DeviceInfo& dev) { return s.nic > 0 ? s.nic : dev.nic_bw; }

    // Whether a group of ranks that spans `span` consecutive nodes of the stage leaves a leaf
    // switch: some block of `span` of the stage's nodes (the groups at each offset) has no
    // switch in common.
    bool leavesLeaf(const StageNodes& s, int span) const
    {
        const std::size_t k = static_cast<std::size_t>(std::clamp(span, 1, static_cast<int>(std::max<std::size_t>(1, s.nodes.size()))));
        for (std::size_t first = 0; first < s.nodes.size(); first += k) {
            const std::vector<int> block(s.nodes.begin() + static_cast<std::ptrdiff_t>(first),
                                         s.nodes.begin() + static_cast<std::ptrdiff_t>(std::min(s.nodes.size(), first + k)));
            if (!uplinks.shareLeaf(block))
                return true;
        }
        return false;
    }

    // A group of `size` ranks with rank stride `stride` among the stage's devices.
    GroupLink group(const StageNodes& s, const DeviceInfo& dev, int size, int stride) const
    {
        GroupLink g;
        g.intra_bw = dev.intra_bw;
        g.nvlink4 = dev.nvlink4;
        g.full_mesh = dev.full_mesh;
        g.nic_bw = nicOf(s, dev);
        const int perNode = s.per_node;
        if (s.one_node || static_cast<long long>(size) * stride <= perNode) {
            g.link = LinkClass::IntraNode;
            g.ranks_per_node = size;
        } else {
            g.link = LinkClass::InterNode;
            g.ranks_per_node = std::max(1, std::min(size, perNode / std::max(1, stride)));
            if (oversubscribed && s.cross_nic > 0) {
                const long long ranks = static_cast<long long>(size) * stride;
                const int span = static_cast<int>((ranks + perNode - 1) / std::max(1, perNode));
                if (leavesLeaf(s, span))
                    g.nic_bw = std::min(g.nic_bw, s.cross_nic);
            }
        }
        g.intra_bw = intraShare(s, dev, g.ranks_per_node - 1);
        return g;
    }

    // The link from stage a to stage b (p2p).
    GroupLink between(const StageNodes& sa, const StagePlan& a, const DeviceInfo& da, const StagePlan& b,
                      const DeviceInfo& db) const
    {
        const StageNodes sb = stageNodes(b);
        GroupLink g;
        g.intra_bw = std::min(da.intra_bw, db.intra_bw);
        g.nvlink4 = da.nvlink4 && db.nvlink4;
        g.full_mesh = da.full_mesh || db.full_mesh;
        g.nic_bw = std::min(nicOf(sa, da), nicOf(sb, db));
        const int na = a.devices.empty() ? -1 : a.devices.front().node;
        const int nb = b.devices.empty() ? -1 : b.devices.front().node;
        if (da.type != db.type) {
            g.link = LinkClass::CrossType;
            // Devices of two collective libraries have no common backend: FlagScale joins them
            // over gloo (the bridge). The catalog gives each vendor one library.
            if (da.type && db.type && da.type->library() != db.type->library()) {
                g.bridge_bw = cluster.cross_vendor.bandwidth_gbytes_per_s * 1e9;
                g.bridge_latency = cluster.cross_vendor.latency_us * 1e-6;
            }
        } else if (na >= 0 && na == nb && sa.one_node && sb.one_node) {
            g.link = LinkClass::IntraNode;
            g.intra_bw = std::min(intraShare(sa, da, 1), intraShare(sb, db, 1));   // one link on a mesh
        } else {
            g.link = LinkClass::InterNode;
        }
        // Stages whose nodes do not all share a switch send through oversubscribed uplinks.
        if (oversubscribed && g.link != LinkClass::IntraNode && sa.cross_nic > 0 && sb.cross_nic > 0) {
            std::vector<int> both = sa.nodes;
            both.insert(both.end(), sb.nodes.begin(), sb.nodes.end());
            if (!uplinks.shareLeaf(both))
                g.nic_bw = std::min(g.nic_bw, std::min(sa.cross_nic, sb.cross_nic));
        }
        return g;
    }

    // A collective, from the profile table when it has one, else analytic.
    double coll(Collective c, double bytes, int n, const GroupLink& g, const DeviceInfo& dev, CollectiveSources* sources) const
    {
        if (bytes <= 0 || (n <= 1 && c != Collective::SendRecv))
            return 0;
        if (haveTables) {
            if (auto t = tables.collective(c, g.link, n, bytes, dev.name)) {
                if (sources)
                    sources->table = true;
                return *t;
            }
        }
        if (sources)
            sources->analytic = true;
        return collectiveTime(c, bytes, n, g);
    }

    // --- one layer, one micro-batch, one device (section 3) --------------------------------

    struct StageKnobs {
        int tp, cp, ep, etp, mbs;
        bool sp;
        bool tpOverlap;     // --tp-comm-overlap applies (the switch, SP, and the plan allows it)
        double tokens;      // per CP rank: mbs * s / cp
    };

    LayerCost layerCost(bool moe, const StageKnobs& k, const DeviceInfo& dev, const GroupLink& tpLink,
                        const GroupLink& cpLink, const GroupLink& epLink, const GroupLink& etpLink, const GroupLink& tpEpLink,
                        const LayerTimes* table, CollectiveSources* collFromTable) const
    {
        const LayerShape& s = shape;
        const double T = k.tokens;
        const double tp = k.tp;
        const double h = s.h;
        const double act = 2.0;   // bytes per bf16/fp16 element
        const Fp8Casts fp8 = fp8Casts(model.training.fp8_recipe, dev.nonTnFp8());
        const double moeScale = imbalanceAt(k.ep);
        LayerCost c;

        // Attention core: scores and weighted values over all s keys; the fused kernel does
        // the causal half, the unfused path computes every score (section 3.2).
        const double coreFlops = s.coreFlops(T, k.tp);
        double coreF = 0;
        if (options.fused_attention) {
            coreF = dev.gemm(coreFlops * 0.5);
        } else {
            coreF = dev.gemm(coreFlops);
            // scale+mask+softmax (read 2, write 2) and, with attention dropout, the dropout
            // (read 2, write 2 and a 1-byte mask) per score
            const double scores = T * (static_cast<double>(s.heads) / tp) * s.seq;
            coreF += dev.memTime((s.attentionDropout ? 9.0 : 4.0) * scores);
        }

        // With --tp-comm-overlap (Transformer Engine userbuffers) a GEMM next to a TP collective
        // runs in chunks, each overlapping one step of the communication (Wang et al., ASPLOS
        // 2023, "Overlap communication with dependent computation via decomposition"), so the
        // size factor applies to the chunk. Transformer Engine's default methods
        // (pytorch/module/base.py initialize_ub): ring exchange, t chunks, for the QKV and FC1
        // forward and the projection and FC2 input gradients; pipeline, 4 chunks, for the
        // projection and FC2 forward; bulk (no split) for the QKV and FC1 input gradients and
        // every weight gradient. splitFwd / splitBwd collect the extra time.
        // Megatron-LM asserts sequence parallelism for --tp-comm-overlap (arguments.py), so a
        // plan without it runs the collectives exposed whatever the switch says; so does a
        // plan whose stages differ in TP (StageContext::tp_comm_overlap).
        const bool tpOverlap = k.tpOverlap;
        const bool split = tpOverlap && k.tp > 1;
        double splitFwd = 0, splitBwd = 0;
        auto tpGemm = [&](double flops, bool ringFwd) {
            const double whole = dev.linear(flops);
            if (!split)
                return whole;
            const double fwdChunks = ringFwd ? tp : 4.0;
            const double f = fwdChunks * dev.linear(flops / fwdChunks);
            splitFwd += f - whole;
            if (!ringFwd)   // the projection and FC2 input gradients run as a ring exchange
                splitBwd += tp * dev.linear(flops / tp) - whole;
            return f;
        };
        // FP8 casts (section 3.7): Transformer Engine casts each FP8 GEMM's input in forward,
        // and the gradient of its output in backward, with a fused cast-transpose that reads
        // the bf16 tensor and writes the FP8 tensor and its transpose: 2 + 1 + 1 bytes per
        // element. castIn / castOut count the elements of one pass of this layer. With
        // sequence parallelism the h-wide tensors that TP gathers (the QKV and FC1 inputs in
        // forward, the projection's and FC2's output gradients in backward) are cast on the
        // rank's shard, T h / t, before the all-gather, which then moves FP8: a plain cast
        // (read 2, write 1), as the transpose for the weight gradient is made after the gather
        // (read 1, write 1 per element of T h), counted in backward for each of them
        // (section 3.7).
        double castIn = 0, castOut = 0;        // dense part
        const double hWide = k.sp ? T * h / tp : T * h;   // elements of an h-wide tensor cast on a rank
        double gatheredFp8 = 0;                // h-wide FP8 tensors gathered under SP, T h each
        double castInMoe = 0, castOutMoe = 0;  // routed experts, scaled by the imbalance

        double fwdCompute = 0;
        double fwdGemm = 0;
        double qkvGemm = 0, fc1Gemm = 0;   // their input-gradient GEMMs hide SP's re-gathers
        double mlpGemm = 0, sharedGemm = 0;   // what hides the MLP's and shared experts' TP collectives
        // One norm's forward: read and write each hidden element, replicated over TP unless SP.
        const double normTime = dev.memTime(4.0 * T * h / (k.sp ? tp : 1.0));
        if (table) {
            fwdCompute = std::max(0.0, table->dense_fwd - (moe ? table->ffn_fwd : 0.0));
            if (!moe) {
                // The MLP's share of the profiled layer: its FFN time, else the analytic one.
                mlpGemm = dev.linear(2 * T * h * s.ffn * s.gated / tp) + dev.linear(2 * T * s.ffn * h / tp);
                c.mlpFwd.compute = table->ffn_fwd > 0
                    ? table->ffn_fwd
                    : mlpGemm + dev.memTime((2.0 + 2.0 * s.gated) * T * s.ffn / tp) + normTime;
            }
        } else {
            double qkv = 0, mlaExtra = 0;
            if (s.mla) {
                // Multi-latent attention (section 3.8): the down projections, whole on every TP
                // rank, run on the rank's own tokens (its T / t shard under SP, all T
                // otherwise); the up projections are column-parallel over the gathered
                // latents; RoPE on the rotary parts and the concatenation of q and k read and
                // write both (2 + 2 bytes per element); with --qk-layernorm each latent is
                // normalised (read and write).
                const double own = k.sp ? T / tp : T;
                const double down = dev.linear(2 * own * h * s.mlaDownWidth());
                const double up = tpGemm(2 * T * s.mlaQueryIn() * s.q / tp, true)
                    + tpGemm(2 * T * s.kvLora * s.heads * (s.dNope + s.dV) / tp, true);
                qkv = down + up;
                mlaExtra = dev.memTime(8.0 * T * s.q / tp) + (s.qkNormParams > 0 ? dev.memTime(4.0 * own * (s.qLora + s.kvLora)) : 0.0);
                // mla_up_proj repeats the up projections with their latent norms and RoPE
                // (Megatron-Core qkv_up_proj_and_rope_apply); its gathers are added below.
                c.mlaUpFwd.compute = up + mlaExtra;
                castIn += hWide + T * (s.qLora + s.kvLora) / (k.sp ? tp : 1.0) + T * s.valueWidth() / tp;
                castOut += own * s.mlaDownWidth() + T * (s.q + s.heads * (s.dNope + s.dV)) / tp + hWide;
            } else {
                qkv = tpGemm(2 * T * h * (s.q / tp + 2 * s.kvPerRank(k.tp)), true);
                castIn += hWide + T * s.q / tp;
                castOut += T * (s.q / tp + 2 * s.kvPerRank(k.tp)) + hWide;
            }
            const double proj = tpGemm(2 * T * s.valueWidth() * h / tp, false);
            gatheredFp8 += 2;
            fwdGemm = qkv + proj;
            qkvGemm = qkv;
            // norms (2x read+write), 2x bias-dropout-add (read 2+2, write 2, and a 1-byte mask
            // with hidden dropout): 22 bytes per hidden element (20 without dropout),
            // replicated over TP unless sequence parallel.
            const double repl = (s.hiddenDropout ? 22.0 : 20.0) * T * h / (k.sp ? tp : 1.0);
            fwdCompute = fwdGemm + coreF + dev.memTime(repl) + mlaExtra;
            if (!moe) {
                fc1Gemm = tpGemm(2 * T * h * s.ffn * s.gated / tp, true);
                const double fc = fc1Gemm + tpGemm(2 * T * s.ffn * h / tp, false);
                castIn += hWide + T * s.ffn / tp;
                castOut += T * s.ffn * s.gated / tp + hWide;
                gatheredFp8 += 2;
                fwdGemm += fc;
                fwdCompute += fc + dev.memTime((2.0 + 2.0 * s.gated) * T * s.ffn / tp);
                mlpGemm = fc;
                c.mlpFwd.compute = fc + dev.memTime((2.0 + 2.0 * s.gated) * T * s.ffn / tp) + normTime;
            }
        }

        // MoE part (paper eq. 2): router, k experts' work over EP*ETP devices, imbalance.
        double moeF = 0;
        double moeB = -1;   // backward of the MoE part when it differs from twice the forward
        if (moe) {
            const double tdev = T / tp;   // tokens each rank owns (sequence parallel split)
            const double routed = tdev * k.etp * s.topk;   // token-expert pairs on one device
            const double localExperts = std::max(1.0, static_cast<double>(s.experts) / k.ep);
            const double perExpert = routed / localExperts;
            const double expertFlopsOne = 2 * perExpert * h * s.effn / k.etp;   // one GEMM of one expert
            double experts = localExperts
                * (dev.linear(expertFlopsOne * s.gated) + dev.linear(expertFlopsOne));
            castInMoe += routed * h + routed * s.effn / k.etp;
            castOutMoe += routed * s.effn * s.gated / k.etp + routed * h;
            const double activation = dev.memTime((2.0 + 2.0 * s.gated) * routed * s.effn / k.etp);
            experts += activation;
            c.moeActFwd.compute = activation * moeScale;
            c.normFwd.compute = normTime;   // Transformer Engine fuses the other norms into the next GEMM
            // permute and unpermute the routed tokens (read + write, twice)
            experts += dev.memTime(8.0 * routed * h);
            double router = dev.gemm(2 * tdev * h * s.experts) + dev.memTime(12.0 * tdev * s.experts);
            double sharedE = 0;
            if (s.shared > 0) {
                sharedGemm = dev.linear(2 * T * h * s.shared * (s.gated + 1) / tp);
                sharedE = sharedGemm + dev.memTime((2.0 + 2.0 * s.gated) * T * s.shared / tp);
                fc1Gemm = dev.linear(2 * T * h * s.shared * s.gated / tp);   // hides the shared expert's re-gather
                castIn += hWide + T * s.shared / tp;
                castOut += T * s.shared * s.gated / tp + hWide;
                gatheredFp8 += 2;
                fwdGemm += sharedGemm;   // its TP collectives overlap its own GEMMs (section 4.2)
            }
            // Eq. 2 with the profiled FFN: k t_ffn / (EP * ETP) with t_ffn at TP = 1; under MoE
            // parallel folding (EP*ETP*EDP = TP*CP*DP) this equals k t_ffn(TP) F_e / F per device.
            if (table && s.ffn > 0) {
                experts = table->ffn_fwd * s.topk * s.effn / s.ffn;
                // The same substitution in backward, with the profiled backward FFN time.
                moeB = table->ffn_bwd * s.topk * s.effn / s.ffn * moeScale + 2.0 * (router + sharedE);
            }
            moeF = experts * moeScale + router + sharedE;
            c.sharedFwd.compute = sharedE;
            c.moeFwd.compute = moeF;
        }
        c.fwd.compute = fwdCompute + moeF;
        c.attnCoreFwd.compute = coreF;

        // Backward: twice the GEMM work, element-wise traffic twice forward. Fused attention
        // recomputes the scores in backward (5 matrix products against the forward's 2:
        // Dao et al. 2022, FlashAttention, Algorithm 4), so its backward is 2.5x its forward.
        if (table) {
            c.bwd.compute = std::max(0.0, table->dense_bwd - (moe ? table->ffn_bwd : 0.0)) + (moeB >= 0 ? moeB : 2.0 * moeF);
        } else {
            c.bwd.compute = 2.0 * (c.fwd.compute - splitFwd) + splitBwd + (options.fused_attention ? 0.5 * coreF : 0.0);
        }
        if (dev.fp8 && !table) {
            // Under SP half the gathered tensors are cast in forward, half in backward, as
            // shards (fp8.shard bytes instead of fp8.full), then transposed after the gather.
            const bool gathered = k.sp && k.tp > 1;
            const double shardCasts = gathered ? 0.5 * gatheredFp8 * hWide * (fp8.full - fp8.shard) : 0.0;
            c.fwd.compute += dev.memTime(fp8.full * (castIn + castInMoe * moeScale) - shardCasts);
            c.bwd.compute += dev.memTime(fp8.full * (castOut + castOutMoe * moeScale) - shardCasts);
            if (gathered)
                c.bwd.compute += dev.memTime(fp8.transpose * gatheredFp8 * T * h);
            // A recomputed block casts its GEMMs' inputs again: the h-wide input (its shard
            // under SP, before the gather) and the FFN-wide one between the two GEMMs.
            const double wideIn = (gathered ? fp8.shard : fp8.full) * hWide;
            if (!moe) {
                c.mlpFwd.compute += dev.memTime(wideIn + fp8.full * T * s.ffn / tp);
            } else {
                const double sharedCasts = s.shared > 0 ? dev.memTime(wideIn + fp8.full * T * s.shared / tp) : 0.0;
                c.sharedFwd.compute += sharedCasts;
                c.moeFwd.compute += sharedCasts + dev.memTime(fp8.full * castInMoe * moeScale);
            }
        }

        // TP collectives on the activations (section 4.2): one pair per TP-split block, without SP
        // an all-reduce, with SP an all-gather and a reduce-scatter, and backward also repeats the
        // all-gather of the input for the weight gradient. A dense layer has two blocks (attention
        // and MLP); an MoE layer only the attention, plus its shared expert if it has one: the
        // routed experts take the SP-split tokens through the dispatcher (Megatron-Core
        // token_dispatcher.py: the MoE input is [S/TP, B, H], permute -> A2A(EP) -> AG(ETP)),
        // whose traffic is the dispatch below. The profiled layer time already contains them.
        if (tp > 1 && !table) {
            const double bytes = T * h * act;
            const bool mlpBlock = !moe || s.shared > 0;
            const double blocks = mlpBlock ? 2.0 : 1.0;
            double f = 0, b = 0;
            double mlpPair = 0;   // the MLP's (or the shared experts') own pair of the forward
            if (k.sp) {
                // Under FP8 the gathered tensors are the FP8 casts of the shards: 1 byte per
                // element; the reduce-scatters move the bf16 GEMM outputs (section 3.7).
                const double ag = coll(Collective::AllGather, dev.fp8 ? fp8.data * T * h : bytes, k.tp, tpLink, dev, collFromTable);
                const double rs = coll(Collective::ReduceScatter, bytes, k.tp, tpLink, dev, collFromTable);
                // The output gradients' gathers in backward; with userbuffers (--tp-comm-overlap)
                // TE gathers one usage at a time, the row-wise one.
                const double agGrad = dev.fp8 && fp8.gatheredGradient != fp8.data && !tpOverlap
                    ? coll(Collective::AllGather, fp8.gatheredGradient * T * h, k.tp, tpLink, dev, collFromTable)
                    : ag;
                // Attention gathers its column-parallel projections' input: h wide, or under MLA
                // the latents and the rotary key part (section 3.8), whose gradients backward
                // reduce-scatters.
                double agAttn = ag, rsAttnIn = rs;
                if (s.mla) {
                    const double w = s.attentionGatherWidth();
                    agAttn = coll(Collective::AllGather, (dev.fp8 ? fp8.data : act) * T * w, k.tp, tpLink, dev, collFromTable);
                    rsAttnIn = coll(Collective::ReduceScatter, act * T * w, k.tp, tpLink, dev, collFromTable);
                    // mla_up_proj's recompute gathers the latents again (the query's input too
                    // when it is the hidden state).
                    c.mlaUpFwd.tp = agAttn;
                }
                mlpPair = ag + rs;
                f = agAttn + rs + (mlpBlock ? mlpPair : 0.0);
                // The re-gather for the weight gradient runs while the input-gradient GEMM of the
                // same linear layer computes (Megatron's asynchronous linear backward).
                b = agGrad + rsAttnIn + (mlpBlock ? agGrad + rs : 0.0) + std::max(0.0, agAttn - qkvGemm)
                    + (mlpBlock ? std::max(0.0, ag - fc1Gemm) : 0.0);
            } else {
                const double ar = coll(Collective::AllReduce, bytes, k.tp, tpLink, dev, collFromTable);
                mlpPair = ar;
                f = blocks * ar;
                b = blocks * ar;
            }
            // The MLP's (or the shared experts') own pair of the forward, for their recompute.
            if (mlpBlock) {
                PassTime& own = moe ? c.sharedFwd : c.mlpFwd;
                own.tp = tpOverlap ? std::max(0.0, mlpPair - (moe ? sharedGemm : mlpGemm)) : mlpPair;
            }
            if (tpOverlap) {
                f = std::max(0.0, f - fwdGemm);
                b = std::max(0.0, b - 2 * fwdGemm);
            }
            // Current scaling under SP: before each shard cast, one all-reduce of its amax (4
            // bytes) over TP, waited for on the stream, so not hidden by the overlap.
            if (dev.fp8 && k.sp && fp8.amaxAllReduce) {
                const double amax = 0.5 * gatheredFp8 * coll(Collective::AllReduce, 4.0, k.tp, tpLink, dev, collFromTable);
                f += amax;
                b += amax;
            }
            c.fwd.tp = f;
            c.bwd.tp = b;
            c.attnCoreFwd.tp = 0;
            if (moe)
                c.moeFwd.tp = c.sharedFwd.tp;
        }

        // CP ring exchange of K and V (section 4.3): cp-1 steps, each overlapped with the
        // attention of the block in hand; backward moves K, V and their gradients.
        if (k.cp > 1) {
            const double kvBytes = T * s.keyValuePerRank(k.tp) * act;
            const double step = coll(Collective::SendRecv, kvBytes, 2, cpLink, dev, collFromTable);
            const double commF = (k.cp - 1) * step;
            const double hide = coreF * (k.cp - 1) / k.cp;
            // The backward's blocks are the core's backward: 2.5 x its forward fused, 2 x unfused.
            const double hideBwd = (options.fused_attention ? 2.5 : 2.0) * hide;
            c.fwd.tp += std::max(0.0, commF - hide);
            c.bwd.tp += std::max(0.0, 2 * commF - hideBwd);
        }

        // Dispatch and combine (paper eq. 3): D = tokens * h * bytes * k * (1 - 1/EP) per
        // all-to-all; the all-gather dispatcher gathers every EP rank's tokens instead.
        const bool allGatherDispatch = model.moe_token_dispatcher_type == TokenDispatcher::AllGather;
        if (moe && (k.ep > 1 || (allGatherDispatch && k.etp > 1))) {
            const double tdev = T / tp;
            double one = 0;
            if (allGatherDispatch) {
                // Megatron-Core's MoEAllGatherTokenDispatcher gathers every token of the ETP x EP
                // group (ETP innermost, so stride 1) and reduce-scatters the output back; that
                // group already holds an expert's ETP shards, so there is no separate ETP exchange,
                // and the gathered volume does not depend on the routing (no imbalance factor).
                const int n = k.ep * k.etp;
                const double full = tdev * h * act * n;
                one = 0.5 * (coll(Collective::AllGather, full, n, tpEpLink, dev, collFromTable)
                             + coll(Collective::ReduceScatter, full, n, tpEpLink, dev, collFromTable));
            } else {
                const double sendBuffer = tdev * h * act * s.topk;   // (1 - 1/EP) of it leaves the rank
                const bool tabled = haveTables
                    && tables.collective(Collective::AllToAll, epLink.link, k.ep, sendBuffer, dev.name).has_value();
                if (model.moe_token_dispatcher_type == TokenDispatcher::Flex && !tabled)
                    one = flexDispatchTime(tdev * h * act, s.topk, k.ep, epLink);
                else
                    one = coll(Collective::AllToAll, sendBuffer, k.ep, epLink, dev, collFromTable);
            }
            const double scale = allGatherDispatch ? 1.0 : moeScale;
            c.fwd.dispatch = 2 * one * scale;
            c.bwd.dispatch = 2 * one * scale;
            c.moeFwd.dispatch = c.fwd.dispatch;
        }
        // Expert tensor parallelism: the ETP ranks of an expert all need its tokens; an
        // all-gather before and a reduce-scatter after the experts (and the reverse backward).
        // The all-gather dispatcher's TP x EP gather has done it already.
        if (moe && k.etp > 1 && !allGatherDispatch) {
            const double gathered = T / tp * k.etp * s.topk * h * act;
            const double agrs = coll(Collective::AllGather, gathered, k.etp, etpLink, dev, collFromTable)
                + coll(Collective::ReduceScatter, gathered, k.etp, etpLink, dev, collFromTable);
            c.fwd.dispatch += agrs * moeScale;
            c.bwd.dispatch += agrs * moeScale;
            c.moeFwd.dispatch += agrs * moeScale;
        }
        return c;
    }
};

CostModel::CostModel(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog,
                     const Profile* profile, CostOptions options)
    : d(std::make_unique<Impl>(model, cluster, catalog, profile, options))
{
}

CostModel::~CostModel() = default;

double CostModel::deviceCapacityBytes(std::string_view deviceType) const
{
    const DeviceInfo* dev = d->deviceOrNull(deviceType);
    return dev ? dev->capacity : 0.0;
}

double CostModel::minimumModelStateBytes(double optimizerOffloadFraction) const
{
    // The same bytes per parameter as estimateStage: 2 (weight) + 4 (fp32 gradient buffer) on
    // the device, 12 (fp32 parameter, Adam m and v) of which the offloaded share is on the
    // host; with half-precision gradients 2 + 2 and 16 (the fp32 main gradient too).
    // Data and context parallelism only replicate, and the distributed optimizer only shards
    // what one replica holds, so no plan holds less.
    const double offload = std::clamp(optimizerOffloadFraction, 0.0, 1.0);
    const StateBytes b = stateBytes(d->model.training);
    const ParameterCount p = countParameters(d->model);
    return (p.total + p.mtp) * (b.weight + b.gradient + b.optimizer * (1.0 - offload));
}

const ModelSpec& CostModel::model() const { return d->model; }
const Cluster& CostModel::cluster() const { return d->cluster; }
const DeviceCatalog& CostModel::catalog() const { return d->catalog; }
const CostOptions& CostModel::options() const { return d->options; }

namespace {

// Korthikanti et al. Table 2 per token of one layer, bytes on one device (section 5.2).
struct ActivationTerms {
    double replicated = 0;   // 10h: norm inputs, dropout masks, attention and MLP inputs
    double split = 0;        // Q, K, V, projection input, MLP (or experts) inner activations
    double scores = 0;       // 5 a s: softmax, its dropout mask and output
    // What selective recompute's other modules drop (section 5.2), each part of the above:
    double normOut = 0;      // layernorm: an MoE layer's pre-MLP norm output (the MLP input)
    double mlpInner = 0;     // mlp: a dense MLP's input and inner activations
    double moeInner = 0;     // moe: the experts', the router's and the shared experts' activations
    double moeAct = 0;       // moe_act: the experts' FC2 inputs
    double sharedInner = 0;  // shared_experts: the shared experts' inner activations
    double mlaUp = 0;        // mla_up_proj: MLA's query, key and value

    // Bytes kept per token with selective recompute of `modules` (all with none).
    double kept(bool selective, unsigned modules) const
    {
        double b = replicated + split + scores;
        if (!selective)
            return b;
        if (modules & recompute_module::core_attn)
            b -= scores;
        if (modules & recompute_module::layernorm)
            b -= normOut;
        if (modules & recompute_module::mlp)
            b -= mlpInner;
        if (modules & recompute_module::mla_up_proj)
            b -= mlaUp;
        if (modules & recompute_module::moe) {
            b -= moeInner;
        } else {
            if (modules & recompute_module::moe_act)
                b -= moeAct;
            if (modules & recompute_module::shared_experts)
                b -= sharedInner;
        }
        return b;
    }
};

} // namespace

StageEstimate CostModel::estimateStage(const StagePlan& stage, const StageContext& ctx) const
{
    const Impl& m = *d;
    const LayerShape& s = m.shape;
    const DeviceInfo& dev = m.device(stage.device_type);
    StageEstimate est;

    const bool first = ctx.stage_index == 0;
    const bool last = ctx.stage_index == ctx.num_stages - 1;
    const int tp = std::max(1, stage.tp), cp = std::max(1, stage.cp), dp = std::max(1, stage.dp);
    const int ep = std::max(1, stage.ep), etp = std::max(1, stage.etp), edp = std::max(1, stage.edp);
    // The most loaded expert-parallel rank's routed work over the mean rank's (section 3.4).
    const double moeScale = m.imbalanceAt(ep);
    const int mbs = std::max(1, stage.micro_batch_size);
    const bool sp = ctx.sequence_parallel && tp > 1;
    const int vpp = std::max(1, ctx.vpp);
    const double T = static_cast<double>(mbs) * s.seq / cp;
    const double h = s.h;
    const double act = 2.0;

    const int nLayers = std::max(0, stage.num_layers);
    // Which of its layers are MoE: with interleaving a rank runs chunks spread over the
    // model (section 8), which may hold more or fewer MoE layers than a contiguous range.
    int nMoe = 0;
    if (ctx.layers.empty())
        nMoe = m.model.numMoeLayers(stage.first_layer, nLayers);
    else
        for (const LayerRange& r : ctx.layers)
            nMoe += m.model.numMoeLayers(r.first, r.count);
    const int nDense = nLayers - nMoe;

    Impl::StageKnobs knobs{tp, cp, ep, etp, mbs, sp, m.options.overlap.tp_comm && sp && ctx.tp_comm_overlap, T};
    const Impl::StageNodes where = m.stageNodes(stage);
    const GroupLink tpLink = m.group(where, dev, tp, 1);
    GroupLink cpLink = m.group(where, dev, cp, tp);
    // A ring step is one send to the next CP rank: on a full mesh one peer's link (section 6),
    // not the links of the whole CP group.
    cpLink.intra_bw = Impl::intraShare(where, dev, 1);
    const GroupLink epLink = m.group(where, dev, ep, etp);
    const GroupLink etpLink = m.group(where, dev, etp, 1);
    const GroupLink tpEpLink = m.group(where, dev, ep * etp, 1);   // the all-gather dispatcher's group
    // Gradients are reduced, and the distributed optimizer shards, over DP x CP: the CP ranks
    // hold the same weights (Megatron's data-parallel group "with context parallel").
    const int dpcp = dp * cp;
    const GroupLink dpLink = m.group(where, dev, dpcp, tp);
    const GroupLink edpLink = m.group(where, dev, edp, ep * etp);

    std::optional<LayerTimes> table;
    if (m.haveTables)
        table = m.tables.compute(dev.name, tp, cp, T);
    CollectiveSources collFromTable;
    const LayerTimes* tablePtr = table ? &*table : nullptr;
    // An MoE layer's time is the layer's minus its FFN's plus the experts' (eq. 2 with the
    // profiled FFN, section 3.4): an entry without FFN times cannot give it, so MoE layers
    // then stay analytic.
    const bool moeFromTable = table && table->ffn_fwd > 0 && table->ffn_bwd > 0;

    // Multi-token prediction (section 3.9): on the last stage, depths of one transformer layer
    // of the last decoder layer's kind each.
    const int mtp = last ? std::max(0, m.model.mtp_num_layers) : 0;
    const bool mtpMoe = mtp > 0 && m.model.mtpLayerIsMoe();
    LayerCost dense, moe;
    if (nDense > 0 || (mtp > 0 && !mtpMoe))
        dense = m.layerCost(false, knobs, dev, tpLink, cpLink, epLink, etpLink, tpEpLink, tablePtr, &collFromTable);
    if (nMoe > 0 || mtpMoe)
        moe = m.layerCost(true, knobs, dev, tpLink, cpLink, epLink, etpLink, tpEpLink, moeFromTable ? tablePtr : nullptr,
                          &collFromTable);

    // Recompute (section 3.5): selective repeats its modules (by default the attention core,
    // LayerCost::recomputed); full repeats the whole
    // forward of k layers, the first ones of the stage as Megatron's block method takes them:
    // with interleaving the first of every chunk before the second of any, which for
    // k = sum_c min(n, chunk_c) is the first n of each chunk (--recompute-num-layers n).
    PassTime fwd = dense.fwd.scaled(nDense);
    fwd += moe.fwd.scaled(nMoe);
    PassTime bwd = dense.bwd.scaled(nDense);
    bwd += moe.bwd.scaled(nMoe);
    // The rank's chunks (one without interleaving) and, per chunk, its recomputed MoE and
    // dense layers: the activations of section 5.3 count them chunk by chunk.
    struct ChunkLayers {
        int moe = 0, dense = 0, moeRe = 0, denseRe = 0;
    };
    // No allocation for the usual few chunks: the search costs millions of stages.
    const LayerRange whole{stage.first_layer, nLayers};
    const std::span<const LayerRange> ranges = ctx.layers.empty() ? std::span<const LayerRange>(&whole, 1)
                                                                  : std::span<const LayerRange>(ctx.layers);
    std::array<ChunkLayers, 8> fewChunks{};
    std::vector<ChunkLayers> manyChunks(ranges.size() > fewChunks.size() ? ranges.size() : 0);
    const std::span<ChunkLayers> chunkLayers = manyChunks.empty() ? std::span<ChunkLayers>(fewChunks.data(), ranges.size())
                                                                  : std::span<ChunkLayers>(manyChunks);
    for (std::size_t c = 0; c < ranges.size(); ++c) {
        chunkLayers[c].moe = m.model.numMoeLayers(ranges[c].first, ranges[c].count);
        chunkLayers[c].dense = ranges[c].count - chunkLayers[c].moe;
    }
    int fullLayers = 0, moeRe = 0;
    if (stage.recompute == Recompute::Full) {
        fullLayers = stage.recompute_layers > 0 ? std::min(stage.recompute_layers, nLayers) : nLayers;
        int left = fullLayers, deepest = 0;
        for (const LayerRange& r : ranges)
            deepest = std::max(deepest, r.count);
        for (int j = 0; j < deepest && left > 0; ++j)
            for (std::size_t c = 0; c < ranges.size() && left > 0; ++c)
                if (j < ranges[c].count) {
                    if (m.model.isMoeLayer(ranges[c].first + j)) {
                        ++chunkLayers[c].moeRe;
                        ++moeRe;
                    } else {
                        ++chunkLayers[c].denseRe;
                    }
                    --left;
                }
        bwd += moe.fwd.scaled(moeRe);
        bwd += dense.fwd.scaled(fullLayers - moeRe);
    } else if (stage.recompute == Recompute::Selective) {
        bwd += dense.recomputed(stage.recompute_modules).scaled(nDense);
        bwd += moe.recomputed(stage.recompute_modules).scaled(nMoe);
    }

    // Where the vocab-parallel embedding's output leaves the TP group (leaving) or the output
    // layer's input enters it: with SP a reduce-scatter on the reducing side and an all-gather
    // on the other; without SP one all-reduce, in forward when leaving (the ranks' partial
    // lookups are summed) and in backward when entering (copy_to_tensor_model_parallel_region
    // is the identity in forward). Megatron-Core VocabParallelEmbedding, LanguageModelEmbedding.
    auto vocabBoundary = [&](bool leaving) {
        if (tp <= 1)
            return;
        const double b = T * h * act;
        PassTime& reducing = leaving ? fwd : bwd;
        PassTime& gathering = leaving ? bwd : fwd;
        if (sp) {
            reducing.tp += m.coll(Collective::ReduceScatter, b, tp, tpLink, dev, &collFromTable);
            gathering.tp += m.coll(Collective::AllGather, b, tp, tpLink, dev, &collFromTable);
        } else {
            reducing.tp += m.coll(Collective::AllReduce, b, tp, tpLink, dev, &collFromTable);
        }
    };

    // Embedding (first stage) and output layer with the cross-entropy (last stage), built for
    // the vocabulary padded to a multiple of 128 t (section 1): the padded rows' logits are
    // computed and normalised like the others.
    const double vocab = s.paddedVocab(tp);
    const PassTime layersFwd = fwd, layersBwd = bwd;
    if (first) {
        // The lookup reads each token's row and writes it (2 + 2 B) over the whole sequence,
        // before SP's reduce-scatter; the hidden dropout then reads the rank's part and writes
        // its output and a 1-byte mask (5 B).
        const double e = dev.memTime(4.0 * T * h + (s.hiddenDropout ? 5.0 : 0.0) * T * h / (sp ? tp : 1));
        fwd.compute += e;
        bwd.compute += 2 * e;
        // The embedding's weight gradient is a dense V/t x h tensor (zero-filled, 2 B) added to
        // the fp32 main gradient (read 2 + 4, write 4) every micro-batch: 12 B per element.
        bwd.compute += dev.memTime(12.0 * vocab * h / tp);
        vocabBoundary(true);
    }
    const PassTime embeddingFwd{fwd.compute - layersFwd.compute, fwd.tp - layersFwd.tp, 0.0};
    const PassTime embeddingBwd{bwd.compute - layersBwd.compute, bwd.tp - layersBwd.tp, 0.0};
    if (last) {
        const double logits = dev.gemm(2 * T * h * vocab / tp);
        // Megatron's vocab-parallel cross-entropy (section 3.6), fused or not.
        const CrossEntropyBytes ce = crossEntropyBytes(m.model.training, ctx.target);
        const double ceF = dev.memTime(ce.fwd * T * vocab / tp);
        const double ceB = dev.memTime(ce.bwd * T * vocab / tp);
        const double norm = dev.memTime(4.0 * T * h / (sp ? tp : 1));
        fwd.compute += logits + ceF + norm;
        bwd.compute += 2 * logits + ceB + 2 * norm;
        vocabBoundary(false);
        // Each MTP depth (Megatron-Core MultiTokenPredictionLayer): the embedding of the
        // tokens one further on (a lookup, 2 + 2 B per element, and its vocab-parallel
        // reduction), the norms of it and of the hidden state (read and write each) and their
        // concatenation (read 2 + 2, write 4 B), the projection eh_proj (2h to h, column-
        // parallel), the layer with its recompute, the final norm, the output layer and the
        // cross-entropy again. Backward twice the forward's traffic and GEMMs.
        if (mtp > 0) {
            const LayerCost& layer = mtpMoe ? moe : dense;
            const double glue = dev.memTime(4.0 * T * h + 16.0 * T * h / (sp ? tp : 1.0));
            const double eh = dev.linear(2 * T * 2 * h * h / tp);
            PassTime f = layer.fwd, b = layer.bwd;
            f.compute += glue + eh + logits + ceF + norm;
            b.compute += 2 * (glue + eh + logits + norm) + ceB;
            if (stage.recompute == Recompute::Full)
                b += layer.fwd;
            else if (stage.recompute == Recompute::Selective)
                b += layer.recomputed(stage.recompute_modules);
            // The depth's lookup adds to the embedding's weight gradient, V/t x h (12 B an
            // element, as the first stage's).
            b.compute += dev.memTime(12.0 * vocab * h / tp);
            fwd += f.scaled(mtp);
            bwd += b.scaled(mtp);
        }
        for (int k = 0; k < mtp; ++k) {
            vocabBoundary(true);
            vocabBoundary(false);
            // Under SP eh_proj gathers its 2h-wide input and the layer takes its output back
            // as the rank's share: an all-gather and a reduce-scatter, their reverse in backward.
            if (sp) {
                const double pair = m.coll(Collective::AllGather, 2 * T * h * act, tp, tpLink, dev, &collFromTable)
                    + m.coll(Collective::ReduceScatter, T * h * act, tp, tpLink, dev, &collFromTable);
                fwd.tp += pair;
                bwd.tp += pair;
            }
        }
    }

    // Point-to-point (section 6): the activation to the next stage in forward, its gradient
    // back in backward; each TP rank sends its 1/TP share with sequence parallelism (or
    // Megatron-LM 2022's scatter-gather), else the whole activation.
    double p2p = 0;
    auto sendTo = [&](const StagePlan& to) {
        const DeviceInfo& dt = m.device(to.device_type);
        const GroupLink link = m.between(where, stage, dev, to, dt);
        // Between collective libraries too: each rank sends its share over its own bridge connection
        // (gloo keeps one TCP connection per peer pair), so the bytes per connection are the
        // same as on a native link; only the bandwidth and latency differ.
        const double bytes = T * h * act / (sp || m.options.p2p_scatter_gather ? tp : 1);
        return m.coll(Collective::SendRecv, bytes, 2, link, dev, &collFromTable);
    };
    // With the interleaved schedule and overlap_p2p each send hides behind the next chunk's
    // work (1/vpp of the stage's pass); only what is longer stays exposed.
    const double sendNext = ctx.next ? sendTo(*ctx.next) : 0.0;
    const double sendWrap = vpp > 1 && ctx.wrap ? sendTo(*ctx.wrap) : 0.0;
    // Per chunk: the send to the next rank, and from the last rank the wrap to rank 0 after
    // every chunk but the last.
    struct ChunkSends {
        double next = 0, wrap = 0;
        double total(int v) const { return v * next + (v - 1) * wrap; }
    };
    auto exposedSends = [&](double chunk) {
        const bool overlap = vpp > 1 && m.options.overlap.p2p;
        auto exposed = [&](double send) { return overlap ? std::max(0.0, send - chunk) : send; };
        return ChunkSends{exposed(sendNext), exposed(sendWrap)};
    };
    const ChunkSends sendsFwd = exposedSends(fwd.total() / vpp), sendsBwd = exposedSends(bwd.total() / vpp);
    p2p = sendsFwd.total(vpp);
    const double p2pBwd = sendsBwd.total(vpp);

    // The chunks' own times (interleaving): each chunk's layers with their recompute, the
    // embedding in chunk 0 of the first rank, the output layer in the last chunk of the last
    // rank, and the chunk's sends. They add up to the stage's pass times below.
    // Each chunk's backward compute of one micro-batch (its layers with their recompute, the
    // embedding's and the output layer's where it holds them): the window its data-parallel
    // reduce-scatter starts in (section 7).
    std::vector<double> chunkBwdCompute, chunkFwdCompute;
    if (vpp > 1 && ranges.size() == static_cast<std::size_t>(vpp)) {
        est.chunk_fwd.resize(ranges.size());
        est.chunk_bwd.resize(ranges.size());
        chunkBwdCompute.resize(ranges.size());
        chunkFwdCompute.resize(ranges.size());
        const PassTime denseRe = stage.recompute == Recompute::Selective ? dense.recomputed(stage.recompute_modules) : dense.fwd;
        const PassTime moeRe = stage.recompute == Recompute::Selective ? moe.recomputed(stage.recompute_modules) : moe.fwd;
        const bool selective = stage.recompute == Recompute::Selective;
        for (std::size_t c = 0; c < ranges.size(); ++c) {
            const ChunkLayers& k = chunkLayers[c];
            const bool lastChunk = c + 1 == ranges.size();
            double f = dense.fwd.total() * k.dense + moe.fwd.total() * k.moe;
            double b = dense.bwd.total() * k.dense + moe.bwd.total() * k.moe
                + denseRe.total() * (selective ? k.dense : k.denseRe) + moeRe.total() * (selective ? k.moe : k.moeRe);
            double fc = dense.fwd.compute * k.dense + moe.fwd.compute * k.moe;
            double bc = dense.bwd.compute * k.dense + moe.bwd.compute * k.moe
                + denseRe.compute * (selective ? k.dense : k.denseRe) + moeRe.compute * (selective ? k.moe : k.moeRe);
            if (first && c == 0) {
                f += embeddingFwd.total();
                b += embeddingBwd.total();
                fc += embeddingFwd.compute;
                bc += embeddingBwd.compute;
            }
            if (last && lastChunk) {
                f += fwd.total() - layersFwd.total() - embeddingFwd.total();
                b += bwd.total() - layersBwd.total() - embeddingBwd.total();
                fc += fwd.compute - layersFwd.compute - embeddingFwd.compute;
                bc += bwd.compute - layersBwd.compute - embeddingBwd.compute;
            }
            chunkFwdCompute[c] = fc;
            chunkBwdCompute[c] = bc;
            est.chunk_fwd[c] = f + sendsFwd.next + (lastChunk ? 0.0 : sendsFwd.wrap);
            est.chunk_bwd[c] = b + sendsBwd.next + (lastChunk ? 0.0 : sendsBwd.wrap);
        }
    }

    est.compute = fwd.compute + bwd.compute;
    est.tensor_parallel = fwd.tp + bwd.tp;
    est.expert_dispatch = fwd.dispatch + bwd.dispatch;
    est.p2p_send = p2p;
    est.t_fwd = fwd.total() + p2p;
    est.t_bwd = bwd.total() + p2pBwd;

    // Model FLOPs of one micro-batch over every device of the stage (Megatron's counting).
    {
        const double tokens = static_cast<double>(mbs) * s.seq * dp;
        double f = nDense * s.forwardFlopsPerToken(false) + nMoe * s.forwardFlopsPerToken(true);
        if (last)
            f += s.logitsFlopsPerToken(tp) + mtp * s.mtpFlopsPerToken(mtpMoe, tp);
        est.model_flops = 3.0 * f * tokens;
    }

    // --- memory (section 5) ------------------------------------------------------------
    const bool distOpt = ctx.distributed_optimizer;
    // Split over TP: projections, FFN, shared experts, word embedding and output layer. Whole
    // on every TP rank (section 5.1): norms, row-parallel biases, the router, learned
    // positions (a plain embedding in Megatron-Core) and the final norm.
    // Of dense and MoE layers: the parameters split over TP, and what one device holds of
    // them and of the rest (the chunks of an interleaved rank count theirs the same way).
    const auto linearOf = [&](double dense, double moe) {
        return (dense + moe) * (s.attentionParams() - s.attentionTpReplicated())
            + dense * (s.denseFfnParams() - s.denseFfnTpReplicated()) + moe * s.sharedExpertParams();
    };
    const auto layersDev = [&](double dense, double moe) {
        return linearOf(dense, moe) / tp + (dense + moe) * (s.attentionTpReplicated() + s.replicatedKvParams(tp))
            + dense * s.denseFfnTpReplicated() + moe * s.routerParams();
    };
    const auto expertsDev = [&](double moe) {
        return moe * ((s.expertParams() - s.expertEtpReplicated()) / (static_cast<double>(ep) * etp) + s.expertEtpReplicated() / ep);
    };
    const double linearSplit = linearOf(nDense, nMoe);
    const double embeddingDev = first ? vocab * h / tp + (s.learnedPositions ? static_cast<double>(m.model.maxPositions()) * h : 0.0) : 0.0;
    // The final norm, and the untied output layer or the tied copy on the last stage; with MTP
    // (section 3.9) each depth's layer, eh_proj (2h x h, over TP) and three norms, and the
    // embedding's copy on a last stage that is not also the first (the output layer is it
    // when tied).
    const double mtpEmbedding = mtp > 0 && !first && m.model.untie_embeddings_and_output_weights ? vocab * h / tp : 0.0;
    const double outputDev = last ? s.normParams + (m.model.untie_embeddings_and_output_weights || !first ? vocab * h / tp : 0.0)
            + mtp * (layersDev(mtpMoe ? 0 : 1, mtpMoe ? 1 : 0) + 2 * h * h / tp + 3 * s.normParams) + mtpEmbedding
                                  : 0.0;
    const double mtpExpertDev = mtp * expertsDev(mtpMoe ? 1 : 0);
    const double denseDev = layersDev(nDense, nMoe) + embeddingDev + outputDev;
    const double expertDev = expertsDev(nMoe) + mtpExpertDev;

    // 18 or 20 bytes per parameter, the optimizer's part sharded by the distributed optimizer.
    const StateBytes bytes = stateBytes(m.model.training);
    const double wB = bytes.weight, gB = bytes.gradient, oB = bytes.optimizer;
    // Parameters this rank's optimizer updates: its shard with the distributed optimizer.
    const double updated = distOpt ? denseDev / dpcp + expertDev / edp : denseDev + expertDev;
    est.memory.weights = wB * (denseDev + expertDev);
    // FP8 (section 5.1): Transformer Engine keeps each FP8 linear layer's weight cast to FP8,
    // and its transpose, from the first micro-batch of an iteration to the last
    // (is_first_microbatch caches them): 2 more bytes per parameter of the linear layers.
    // With --fp8-param-gather those FP8 weights replace the bf16 ones: 1 + 1 bytes, as many as
    // the 2 already counted. Megatron-LM gathers FP8 parameters only with the distributed
    // optimizer (reference section 3), so without it the copies stay.
    const bool fp8Params = dev.fp8 && m.model.training.fp8_param_gather && distOpt;
    const Fp8Casts fp8 = fp8Casts(m.model.training.fp8_recipe, dev.nonTnFp8());
    if (dev.fp8 && !fp8Params)
        est.memory.weights += fp8.weightCopy * (linearSplit / tp + expertDev);
    est.memory.gradients = gB * (denseDev + expertDev);
    est.memory.optimizer = oB * updated;
    // Optimizer CPU offload (section 7.3): the offloaded fraction of the shard's master
    // weights and Adam moments lives in host memory, with a pinned copy of its fp32 gradients;
    // parameters and gradients stay on the device.
    const double offload = std::clamp(ctx.optimizer_offload_fraction, 0.0, 1.0);
    est.memory.host = offload * (12.0 + 4.0) * updated;   // fp32 param, m, v and the fp32 main gradient
    est.memory.optimizer *= 1.0 - offload;
    // The host side of the stage's nodes, read only under offload (section 7.3):
    // - each device's rank may use an equal share of its node's host memory; the stage is held
    //   to the smallest share over its nodes (estimate() checks the exact sum per node);
    // - the slowest host link, the default where the cluster is silent;
    // - the most ranks on one node, which share its CPUs for the host Adam step.
    double hostLink = m.options.host_link_gbytes_per_s * 1e9;
    int hostRanks = where.per_node;
    if (offload > 0) {
        bool linkSeen = false;
        for (const auto& slot : stage.devices) {
            const NodeInfo* n = m.node(slot.node);
            if (!n)
                continue;
            hostRanks = std::max(hostRanks, n->count);
            const double bw = n->host_bw > 0 ? n->host_bw : m.options.host_link_gbytes_per_s * 1e9;
            hostLink = linkSeen ? std::min(hostLink, bw) : bw;
            linkSeen = true;
            if (n->host_memory > 0) {
                const double share = n->host_memory / n->count;
                est.memory.host_capacity = est.memory.host_capacity > 0 ? std::min(est.memory.host_capacity, share) : share;
            }
        }
    }

    // Activations per Korthikanti Table 2 (per token of one layer, on one device). Under FP8
    // (section 5.2) Transformer Engine saves each FP8 GEMM's input for the weight gradient as
    // its FP8 transpose, 1 byte per element instead of 2 (lin): the QKV input and the FC1 input
    // of a dense layer (in the 10 h; an MoE layer's norm output stays bf16 for the router and
    // the dispatcher), the FC2 and expert inputs. The projection's input is the fused attention
    // kernel's output, which the kernel keeps in bf16 for its own backward: the FP8 copy comes
    // on top (proj); unfused, the copy replaces it.
    const double lin = dev.fp8 ? fp8.data : 2.0;   // 1, with block scales a little more
    const double proj = !dev.fp8 ? 2.0 : (m.options.fused_attention ? 2.0 + fp8.data : fp8.data);
    auto perLayer = [&](bool moeLayer) {
        ActivationTerms a;
        // The two norms' inputs (4h), the two hidden-dropout masks (2h, none without dropout),
        // the attention and MLP inputs.
        a.replicated = (4.0 + (s.hiddenDropout ? 2.0 : 0.0) + lin + (moeLayer ? 2.0 : lin)) * h / (sp ? tp : 1);
        // Query, key and value (2 bytes each) for the attention core's backward, and the
        // core's output (the projection's input).
        const double queryKeyValue = 2.0 * s.q / tp + 2.0 * s.keyValuePerRank(tp);
        a.split = queryKeyValue + proj * s.valueWidth() / tp;
        // MLA (section 5.2): the latents, kept by the up projections (and, with their norms
        // fused in, the norms' inputs too), on the rank's tokens.
        // mla_up_proj drops the query, key and value (Megatron-Core discards the checkpoint's
        // output after the attention core's forward and makes it again for its backward).
        if (s.mla) {
            a.replicated += (s.qkNormParams > 0 ? 4.0 : 2.0) * (s.qLora + s.kvLora) / (sp ? tp : 1);
            a.mlaUp = queryKeyValue;
        }
        if (moeLayer) {
            const double k = s.topk;
            a.moeInner = k / tp * (lin * h * etp + (lin + 2.0 * s.gated) * s.effn) * moeScale;
            a.moeAct = k / tp * lin * s.effn * moeScale;
            a.moeInner += 4.0 * s.experts / tp;   // fp32 router probabilities
            if (s.shared > 0)
                a.sharedInner = (lin + 2.0 * s.gated) * s.shared / tp;
            a.moeInner += a.sharedInner;
            a.split += a.moeInner;
            a.normOut = 2.0 * h / (sp ? tp : 1);
        } else {
            // With Transformer Engine the pre-MLP norm is part of FC1 (a LayerNormLinear that
            // keeps its output): the mlp module's checkpoint keeps only the norm's input.
            a.mlpInner = lin * h / (sp ? tp : 1) + (lin + 2.0 * s.gated) * s.ffn / tp;
            a.split += (lin + 2.0 * s.gated) * s.ffn / tp;
        }
        if (!m.options.fused_attention)
            // softmax output (2), and with attention dropout its mask (1) and output (2)
            a.scores = (s.attentionDropout ? 5.0 : 2.0) * s.heads * (s.seq / cp) / tp;
        return a;
    };
    const ActivationTerms ad = perLayer(false), am = perLayer(true);
    const bool selective = stage.recompute == Recompute::Selective;
    auto layerBytes = [&](const ActivationTerms& a, bool full) {
        if (full)
            return 2.0 * h / (sp ? tp : 1) * T;   // only the layer input is kept
        return a.kept(selective, stage.recompute_modules) * T;
    };
    auto chunkBytes = [&](const ChunkLayers& c) {
        return (c.moe - c.moeRe) * layerBytes(am, false) + c.moeRe * layerBytes(am, true) + (c.dense - c.denseRe) * layerBytes(ad, false)
            + c.denseRe * layerBytes(ad, true);
    };

    // Micro-batches in flight on this rank: min(PP - i, M) under 1F1B; with interleaving the
    // warm-up holds (PP - i - 1) * 2 + (v - 1) * PP + 1 chunks of n_i / v layers each
    // (Megatron schedules.py; for i = 0 this is Korthikanti's factor 1 + (p-1)/(p v)), and
    // every chunk of every micro-batch when M == PP (schedules.py runs all forwards first).
    const int P = std::max(1, ctx.num_stages), M = std::max(1, ctx.num_microbatches), i = ctx.stage_index;
    // With interleaving, the chunks in flight (n below); inFlight counts them in micro-batches.
    long long chunksInFlight = 0;
    if (vpp > 1 && M == P)   // schedules.py: as many micro-batches as stages run every forward first
        chunksInFlight = static_cast<long long>(M) * vpp;
    else if (vpp > 1)
        chunksInFlight = std::min(static_cast<long long>(M) * vpp, (P - i - 1) * 2LL + (vpp - 1LL) * P + 1);
    const double inFlight = vpp > 1 ? static_cast<double>(chunksInFlight) / vpp : std::min(P - i, M);
    double actBytes = 0;
    // Micro-batches in flight of the chunk that holds the embedding (the rank's first) and of
    // the one that holds the output layer (its last): without chunks of their own, the rank's
    // count and the one micro-batch 1F1B's last stage holds.
    double firstChunkInFlight = inFlight, lastChunkInFlight = 1.0;
    if (vpp > 1 && static_cast<int>(ranges.size()) == vpp) {
        // Chunk by chunk: forward k of the rank runs chunk (k / PP) mod v (schedules.py
        // get_model_chunk_id), so of the first n forwards chunk c holds
        // PP floor(n / (PP v)) + clamp(n mod (PP v) - c PP, 0, PP). Equal chunks give
        // n / v micro-batches of the rank's layers, as above; unequal ones (a dense chunk
        // before a MoE one) weigh the earlier chunks, which stay longer in flight, more.
        const long long n = chunksInFlight, cycle = static_cast<long long>(P) * vpp;
        for (int c = 0; c < vpp; ++c) {
            const long long count = P * (n / cycle) + std::clamp(n % cycle - static_cast<long long>(c) * P, 0LL, static_cast<long long>(P));
            actBytes += static_cast<double>(count) * chunkBytes(chunkLayers[static_cast<std::size_t>(c)]);
            if (c == 0)
                firstChunkInFlight = static_cast<double>(count);
            if (c == vpp - 1)
                lastChunkInFlight = static_cast<double>(count);
        }
    } else {
        for (const ChunkLayers& c : chunkLayers)
            actBytes += inFlight * chunkBytes(c);
    }
    // Outside the layers (Korthikanti section 4.3), written for sequence parallelism: the
    // embedding dropout mask s b h p / t (with hidden dropout) and the final norm's and output layer's inputs
    // 2 s b h / t each. Without it every TP rank holds the whole sequence of these; the fp32
    // logits of one micro-batch, 4 s b v / t (a bf16 gradient, 2 s b v / t, with Transformer
    // Engine's fused cross-entropy), stay split over the vocabulary. Each for the micro-batches
    // in flight of the chunk holding it: under 1F1B the last stage's one, but every one of them
    // when an interleaved schedule runs all forwards first (M == PP).
    const double seqSplit = sp ? tp : 1.0;
    if (first && s.hiddenDropout)
        actBytes += firstChunkInFlight * T * h / seqSplit;
    if (last) {
        actBytes += lastChunkInFlight * (4.0 * T * h / seqSplit + crossEntropyBytes(m.model.training, ctx.target).kept * T * vocab / tp);
        // Each MTP depth: its layer, the two norms' inputs and eh_proj's (2h) input, 8h, and
        // its own final norm's and output layer's inputs and logits.
        if (mtp > 0) {
            ChunkLayers one;
            (mtpMoe ? one.moe : one.dense) = 1;
            if (stage.recompute == Recompute::Full)
                (mtpMoe ? one.moeRe : one.denseRe) = 1;
            actBytes += lastChunkInFlight * mtp
                * (chunkBytes(one) + (8.0 + 4.0) * T * h / seqSplit + crossEntropyBytes(m.model.training, ctx.target).kept * T * vocab / tp);
        }
    }
    est.memory.activations = actBytes * dev.act_factor;

    if (nMoe > 0) {
        // Dispatch buffers of one layer: permuted tokens and the all-to-all receive buffer,
        // forward output and its gradient, on the most loaded rank. The all-gather
        // dispatcher instead receives every token of the EP x ETP group and un-permutes the
        // experts' output into a buffer of that size before the reduce-scatter (neither
        // depends on the routing), around the permuted tokens and their output.
        const double routed = T / tp * etp * s.topk;
        if (m.model.moe_token_dispatcher_type == TokenDispatcher::AllGather && (ep > 1 || etp > 1))
            est.memory.moe_buffers = 2.0 * (T / tp) * ep * etp * h * act + 2.0 * routed * h * act * moeScale;
        else
            est.memory.moe_buffers = 4.0 * routed * h * act * moeScale;
    }
    est.memory.overhead = dev.overhead;
    est.memory.capacity = dev.capacity;

    // --- data-parallel sync and optimizer (section 7) -------------------------------------
    // Reduce-scatter (all-reduce without the distributed optimizer) and all-gather of one
    // gradient buffer, bucket by bucket, and of its last bucket.
    struct Sync {
        double rs = 0, ag = 0, lastRs = 0, lastAg = 0;
    };
    // gatherBytes: per parameter the all-gather moves, 2 (bf16), or 1 for the FP8 weights of
    // --fp8-param-gather (their share of the buffer; section 3.7).
    auto syncOf = [&](double paramsDev, int groupSize, const GroupLink& link, double gatherBytes) {
        Sync out;
        if (groupSize <= 1 || paramsDev <= 0)
            return out;
        // Megatron DDP buckets: max(40M, 1M * dp) parameters, dp the data-parallel size with
        // CP, for the dense and the expert buffer alike (distributed_data_parallel.py: one
        // ddp_config.bucket_size), filled from the last parameter backwards; the last bucket,
        // the first layers' gradients and the last ready in backward, holds what is left over.
        const double bucket = std::min(paramsDev, std::max(4e7, 1e6 * dpcp));
        double full = std::floor(paramsDev / bucket);
        double rest = paramsDev - full * bucket;
        if (rest <= 1e-9 * bucket) {   // an exact multiple: the last bucket is a full one
            full -= 1;
            rest = bucket;
        }
        auto rsOf = [&](double params) {
            return m.coll(distOpt ? Collective::ReduceScatter : Collective::AllReduce, params * gB, groupSize, link, dev,
                          &collFromTable);
        };
        auto agOf = [&](double params) {
            return distOpt ? m.coll(Collective::AllGather, params * gatherBytes, groupSize, link, dev, &collFromTable) : 0.0;
        };
        out.lastRs = rsOf(rest);
        out.lastAg = agOf(rest);
        out.rs = full * rsOf(bucket) + out.lastRs;
        out.ag = full * agOf(bucket) + out.lastAg;
        return out;
    };
    // Dense and expert buffers (Megatron keeps them apart, both with the same overlap) share
    // the backward window of the last micro-batch and the forward window of the first: what
    // does not fit in it stays exposed, and the last bucket always does.
    const double fp8Share = fp8Params && denseDev > 0 ? std::min(1.0, linearSplit / tp / denseDev) : 0.0;
    const Sync denseBuf = syncOf(denseDev, dpcp, dpLink, 2.0 - fp8Share);
    const Sync expertBuf = syncOf(expertDev, edp, edpLink, fp8Params ? 1.0 : 2.0);
    double rs = denseBuf.rs + expertBuf.rs, ag = denseBuf.ag + expertBuf.ag;
    const bool chunkReduce = m.options.overlap.grad_reduce && rs > 0 && !chunkBwdCompute.empty();
    const bool chunkGather = m.options.overlap.param_gather && distOpt && ag > 0 && !chunkFwdCompute.empty();
    if (chunkReduce || chunkGather) {
        // Interleaved: every chunk a module with its own buffers (Megatron-Core wraps each model
        // chunk in its own DistributedDataParallel), reduce-scattered from its own last backward
        // on; simulateInterleaved places them in the schedule. The chunk's parameters: its
        // layers', and the embedding's (chunk 0 of the first rank) and the output layer's and
        // final norm's (the last chunk of the last rank).
        const std::size_t v = chunkLayers.size();
        std::vector<double> reduce(v), reduceLast(v), gather(v), gatherLast(v);
        for (std::size_t c = 0; c < v; ++c) {
            const ChunkLayers& k = chunkLayers[c];
            const double dense = layersDev(k.dense, k.moe) + (c == 0 ? embeddingDev : 0.0) + (c + 1 == v ? outputDev : 0.0);
            const Sync d = syncOf(dense, dpcp, dpLink, 2.0 - fp8Share);
            const Sync e = syncOf(expertsDev(k.moe) + (c + 1 == v ? mtpExpertDev : 0.0), edp, edpLink, fp8Params ? 1.0 : 2.0);
            reduce[c] = d.rs + e.rs;
            reduceLast[c] = std::max(d.lastRs, e.lastRs);
            gather[c] = d.ag + e.ag;
            gatherLast[c] = std::max(d.lastAg, e.lastAg);
        }
        if (chunkReduce) {
            est.chunk_reduce = std::move(reduce);
            est.chunk_reduce_last = std::move(reduceLast);
            est.chunk_reduce_window = chunkBwdCompute;
        }
        if (chunkGather) {
            est.chunk_gather = std::move(gather);
            est.chunk_gather_last = std::move(gatherLast);
            est.chunk_gather_window = chunkFwdCompute;
        }
    }
    if (m.options.overlap.grad_reduce && rs > 0)
        rs = std::max(std::max(denseBuf.lastRs, expertBuf.lastRs), rs - bwd.compute);
    if (m.options.overlap.param_gather && distOpt && ag > 0)
        ag = std::max(std::max(denseBuf.lastAg, expertBuf.lastAg), ag - fwd.compute);
    est.dp_sync = rs + ag;
    est.param_gather = ag;   // after the optimizer step (section 8)

    // Optimizer step, bound by memory bandwidth: grad-norm read (4) + Adam read of grad,
    // fp32 param, m, v (16) + write of param, m, v (12) + bf16 copy (2) = 34 bytes/param;
    // half-precision gradients are first copied into the fp32 main gradients (read 2, write
    // 4: Megatron's _copy_model_grads_to_main_grads), 40.
    const double gradientCopy = gB < 4.0 ? gB + 4.0 : 0.0;
    est.optimizer = dev.memTime((34.0 + gradientCopy) * updated * (1.0 - offload));
    if (offload > 0) {
        // Megatron-Core's HybridDeviceOptimizer (section 7.3): fp32 main gradients go to the
        // host (4 bytes), the host steps Adam, the updated fp32 parameters come back (4 bytes);
        // with --overlap-cpu-optimizer-d2h-h2d the three are pipelined parameter by parameter,
        // and the device's own part runs meanwhile. Every rank of a node (one per device, of
        // whichever stage) steps at the same time on the node's CPUs.
        const double onHost = offload * updated;
        const double transfer = 4.0 * onHost / hostLink;   // each direction
        const double cpu = onHost * hostRanks / m.options.host_adam_params_per_s;
        est.optimizer = std::max(est.optimizer, std::max(transfer, cpu));
    }

    // With a profile, each stage says which of its numbers came from the profile and which
    // from the analytic defaults (docs/formats.md, prediction.notes).
    if (m.haveTables) {
        const bool computeFromTable = table && (nDense > 0 || moeFromTable);
        est.from_profile = computeFromTable || collFromTable.table || dev.eff_from_profile || dev.mem_from_profile
            || (m.rhoFromProfile && nMoe > 0 && ep > 1);   // at EP 1 rho changes nothing (section 3.4)
        if (ctx.notes) {
            const std::string knobsText = "TP " + std::to_string(tp) + ", CP " + std::to_string(cp);
            if (!table)
                est.notes.push_back(stage.device_type + ": layer compute analytic (the profile has no entry for " + knobsText + ")");
            else if (!computeFromTable)
                est.notes.push_back(stage.device_type + ": layer compute analytic (the profile's entry for " + knobsText
                                    + " has no ffn_fwd_s and ffn_bwd_s, which MoE layers need)");
            else if (nMoe > 0 && !moeFromTable)
                est.notes.push_back(stage.device_type + ": layer compute from the profile table (" + knobsText
                                    + ") for dense layers; MoE layers analytic (the entry has no ffn_fwd_s and ffn_bwd_s)");
            else
                est.notes.push_back(stage.device_type + ": layer compute from the profile table (" + knobsText + ")");
            if (collFromTable.table && collFromTable.analytic)
                est.notes.push_back(stage.device_type + ": collective times from the profile table where it has the primitive, "
                                    "link and group size, the others analytic");
            else if (collFromTable.table)
                est.notes.push_back(stage.device_type + ": collective times from the profile table");
            else if (collFromTable.analytic)
                est.notes.push_back(stage.device_type + ": collective times analytic (no matching profile table)");
            est.notes.push_back(stage.device_type + (dev.eff_from_profile ? ": GEMM efficiency from the profile"
                                                                           : ": GEMM efficiency from the catalog default"));
            est.notes.push_back(stage.device_type + (dev.mem_from_profile ? ": memory overhead and activation factor from the profile"
                                                                           : ": memory overhead and activation factor defaults"));
            if (nMoe > 0 && ep > 1)
                est.notes.push_back(m.rhoFromProfile ? "router imbalance from the profile" : "router imbalance from the model");
        }
    }
    return est;
}

double CostModel::tiedEmbeddingSync(const StagePlan& first, const StagePlan& last) const
{
    return tiedEmbeddingSync(first, last, d->model.training.use_distributed_optimizer);
}

double CostModel::tiedEmbeddingSync(const StagePlan& first, const StagePlan& last, bool distributedOptimizer) const
{
    // The last stage holds a copy of the word embedding for the output layer. After the
    // data-parallel sync the two ranks that hold it (same TP and DP rank) all-reduce its fp32
    // main gradient, V h / t values, with nothing left to hide behind; then the optimizer's
    // gradient-norm all-reduce over every stage of the pipeline makes all of them wait
    // (Megatron-Core finalize_model_grads: _allreduce_word_embedding_grads; clip_grad_norm).
    const Impl& m = *d;
    if (!m.model.embeddingOnLastStage())
        return 0.0;
    const DeviceInfo& da = m.device(first.device_type);
    const DeviceInfo& db = m.device(last.device_type);
    const GroupLink link = m.between(m.stageNodes(first), first, da, last, db);
    // The gradient buffer: fp32, or half precision (section 5.1).
    const double bytes = stateBytes(m.model.training).gradient * m.shape.paddedVocab(first.tp) * m.shape.h / std::max(1, first.tp);
    // Different DP on the two ends (FlagScale meshes): every pipeline from a rank of the first
    // stage to one of the last has its own pair, so a rank of the end with fewer replicas is in
    // r = max / min pairs and runs r all-reduces one after the other (FlagScale
    // finalize_model_grads.py, _allreduce_word_embedding_grads). With the distributed optimizer
    // the launcher gives --use-partial-reduce-for-shared-embedding: each rank reduces only its
    // 1 / DP shard of the rows, split over its pairs, 1 / max(DP) of the gradient per pair.
    const int hi = std::max({1, first.dp, last.dp});
    const int lo = std::max(1, std::min(first.dp, last.dp));
    if (hi == lo || hi % lo != 0)
        return m.coll(Collective::AllReduce, bytes, 2, link, da, nullptr);
    const double pairs = static_cast<double>(hi / lo);
    if (distributedOptimizer)
        return pairs * m.coll(Collective::AllReduce, bytes / hi, 2, link, da, nullptr);
    return pairs * m.coll(Collective::AllReduce, bytes, 2, link, da, nullptr);
}

Prediction CostModel::estimate(const Plan& plan) const
{
    const Impl& m = *d;
    Prediction pred;
    pred.overlap = m.options.overlap;
    pred.memory_headroom = m.options.memory_headroom;
    const int P = plan.pp();
    if (P < 1)
        throw InputError("", "plan.stages", "a plan needs at least one stage");
    const int M = plan.numMicrobatches();
    if (M < 1)
        throw InputError("", "plan.global_batch_size",
                         "global batch " + std::to_string(plan.global_batch_size)
                             + " is smaller than DP x micro-batch of the first stage");
    int layers = 0;
    for (int i = 0; i < P; ++i) {
        const auto& st = plan.stages[static_cast<std::size_t>(i)];
        const std::string where = "plan.stages[" + std::to_string(i) + "]";
        if (st.tp < 1 || st.cp < 1 || st.dp < 1 || st.ep < 1 || st.etp < 1 || st.edp < 1 || st.micro_batch_size < 1)
            throw InputError("", where, "parallel sizes and micro-batch size must be positive");
        if (st.ep * st.etp * st.edp != st.tp * st.cp * st.dp)
            throw InputError("", where, "EP*ETP*EDP must equal TP*CP*DP (" + std::to_string(st.ep * st.etp * st.edp)
                                 + " vs " + std::to_string(st.tp * st.cp * st.dp) + ")");
        if (st.num_layers < 0)
            throw InputError("", where + ".num_layers", "must not be negative");
        layers += st.num_layers;
        m.device(st.device_type);
    }
    if (layers != m.model.num_layers)
        throw InputError("", "plan.stages", "the stages hold " + std::to_string(layers) + " layers, the model has "
                             + std::to_string(m.model.num_layers));

    const int vpp = std::max(1, plan.vpp);
    if (vpp > kMaxVpp)
        throw InputError("", "plan.vpp", "expected at most " + std::to_string(kMaxVpp) + " virtual stages per pipeline rank, got "
                                             + std::to_string(vpp));
    pred.num_microbatches = M;
    pred.stages.reserve(static_cast<std::size_t>(P));
    const bool oneTp = plan.oneTpSize();
    pred.overlap.tp_comm = pred.overlap.tp_comm && oneTp;   // the switch as the plan can use it
    // Megatron-LM refuses --overlap-param-gather without the distributed optimizer (there is
    // no parameter all-gather to overlap): a prediction records only switches its plan can run.
    pred.overlap.param_gather = pred.overlap.param_gather && plan.distributed_optimizer;
    const std::vector<std::vector<LayerRange>> chunks = vpp > 1 ? plan.rankLayers() : std::vector<std::vector<LayerRange>>();
    for (int i = 0; i < P; ++i) {
        StageContext ctx;
        if (vpp > 1)
            ctx.layers = chunks[static_cast<std::size_t>(i)];
        ctx.tp_comm_overlap = oneTp;
        ctx.target = plan.target;
        ctx.stage_index = i;
        ctx.num_stages = P;
        ctx.num_microbatches = M;
        ctx.vpp = vpp;
        ctx.sequence_parallel = plan.sequence_parallel;
        ctx.distributed_optimizer = plan.distributed_optimizer;
        ctx.optimizer_offload_fraction = plan.optimizer_offload_fraction;
        ctx.next = i + 1 < P ? &plan.stages[static_cast<std::size_t>(i + 1)] : nullptr;
        ctx.wrap = (vpp > 1 && i == P - 1 && P > 1) ? &plan.stages.front() : nullptr;
        pred.stages.push_back(estimateStage(plan.stages[static_cast<std::size_t>(i)], ctx));
    }

    // Pipeline (section 8): plain 1F1B T = sum c_i + (M - 1) max c_i; interleaved, the
    // simulated schedule (with v equal chunks per rank it is T = sum c_i / v + (M v - 1)
    // max c_i / v, the closed form kept where simulateInterleaved does not apply).
    // Tail (section 8): every stage's reduce-scatter from its own last backward, which ends
    // drain_i = sum_{j < i} t_bwd,j / v before stage 0's (the cool-down hands the last
    // gradient down the pipeline), the tied all-reduce between the end stages once both have
    // synced, then the gradient-norm all-reduce over the whole pipeline, then every stage's
    // optimizer step and parameter all-gather: the wait for the barrier (the latest sync end,
    // or the end stages' later sync end plus the all-reduce, from stage 0's last backward)
    // plus the longest step.
    setDrains(pred.stages, vpp);
    // Interleaved (section 8): the pipeline's end from the event simulation of the schedule
    // with every chunk's own time, which the closed form below takes as equal shares of the
    // rank's pass; each stage's drain is then where its own last backward ends.
    const double simulated = simulateInterleaved(pred.stages, M, vpp);
    if (vpp > 1 && simulated < 0) {
        pred.notes.push_back("pipeline time from the closed form of the interleaved schedule (a rank's chunks taken as "
                             "equal shares of its pass): "
                             + (M % P != 0 ? "its " + std::to_string(M) + " micro-batches are not a multiple of the "
                                                 + std::to_string(P) + " stages, which Megatron-LM's schedule needs"
                                           : "a group of " + std::to_string(P) + " micro-batches alone has more than "
                                                 + std::to_string(kMaxSimulatedBlocks / 6) + " blocks to simulate"));
    }
    // Tied embeddings (section 7.1): the end stages' all-reduce, shown on the two stages that
    // run it.
    const double tied = P > 1 ? tiedEmbeddingSync(plan.stages.front(), plan.stages.back(), plan.distributed_optimizer) : 0.0;
    if (tied > 0) {
        for (StageEstimate* st : {&pred.stages.front(), &pred.stages.back()}) {
            st->dp_sync += tied;
            st->embedding_sync = tied;
        }
    }
    const int bottleneck = bottleneckStage(pred);   // P >= 1 here
    const BarrierWait wait = barrierWait(pred);
    const int stepper = stepStage(pred);
    double sum = 0;
    for (const StageEstimate& st : pred.stages)
        sum += st.t_fwd + st.t_bwd;
    const StageEstimate& b = pred.stages[static_cast<std::size_t>(bottleneck)];
    const StageEstimate& longestStep = pred.stages[static_cast<std::size_t>(stepper)];
    const double mx = b.t_fwd + b.t_bwd;
    double pipe = 0;
    if (simulated >= 0)
        pipe = simulated;
    else if (vpp > 1)
        pipe = interleavedClosedForm(pred.stages, M, vpp);
    else
        pipe = sum + (M - 1.0) * mx;
    pred.iteration_time_s = pipe + wait.time + longestStep.afterBarrier();

    pred.breakdown.compute = M * b.compute;
    pred.breakdown.tensor_parallel = M * b.tensor_parallel;
    pred.breakdown.expert_dispatch = M * b.expert_dispatch;
    // Both passes' sends: the forward's activation (p2p_send) and the backward's gradient wait,
    // the rest of t_fwd + t_bwd once compute, TP and dispatch are taken out.
    // A difference: what is rounding of the sum (1e-17 s of a stage without sends) is none.
    const double sends = b.sends();
    pred.breakdown.pipeline_send = sends > 1e-12 * (b.t_fwd + b.t_bwd) ? M * sends : 0.0;
    pred.breakdown.pipeline_bubble = std::max(0.0, pipe - M * (b.t_fwd + b.t_bwd));
    pred.breakdown.dp_sync = wait.time + longestStep.param_gather;
    pred.breakdown.optimizer = longestStep.optimizer;

    const double T = pred.iteration_time_s;
    const int gbs = plan.global_batch_size;
    pred.tokens_per_s = T > 0 ? static_cast<double>(gbs) * m.model.seq_length / T : 0.0;
    // Counted with the output layer's vocabulary, padded for the last stage's TP.
    const double flops = modelFlopsPerIteration(m.model, gbs, plan.stages.empty() ? 1 : plan.stages.back().tp);
    const int devicesUsed = plan.numDevices();
    double peakSum = 0;
    // The peak of the precision the GEMMs run in: FP8 training is measured against the FP8
    // peak, as NVIDIA's recipes report it ("MFU = ... / (peak GPU FLOPS)" with 1979 TFLOP/s for
    // H100 FP8; dgxc-benchmarking llama3.1/README_8b.md).
    for (const auto& st : plan.stages) {
        const DeviceInfo& dev = m.device(st.device_type);
        peakSum += (dev.fp8 ? dev.fp8_peak : dev.peak) * st.numDevices();
    }
    pred.tflops_per_device = (T > 0 && devicesUsed > 0) ? flops / (T * devicesUsed) / 1e12 : 0.0;
    pred.mfu = (T > 0 && peakSum > 0) ? flops / (T * peakSum) : 0.0;

    // Feasibility: every device of every stage must fit.
    double peakMem = 0, worst = 0;
    for (int i = 0; i < P; ++i) {
        const auto& st = pred.stages[static_cast<std::size_t>(i)];
        const double total = st.memory.total();
        peakMem = std::max(peakMem, total);
        const double shortfall = total - st.memory.capacity;
        if (shortfall > 0) {
            pred.feasible = false;
            if (shortfall / GiB > worst) {
                worst = shortfall / GiB;
                char buf[200];
                std::snprintf(buf, sizeof buf, "stage %d (%s) needs %.1f GiB of %.1f GiB (short %.1f GiB)", i,
                              plan.stages[static_cast<std::size_t>(i)].device_type.c_str(), total / GiB,
                              st.memory.capacity / GiB, shortfall / GiB);
                pred.infeasible_reason = buf;
            }
        }
    }
    pred.memory_shortfall_gib = worst;
    pred.peak_memory_gib = peakMem / GiB;

    // Host memory per node under optimizer offload: every rank of every stage on the node,
    // against the node's host memory where the cluster gives it.
    if (plan.optimizer_offload_fraction > 0) {
        std::map<int, double> perNode;
        for (int i = 0; i < P; ++i)
            for (const auto& slot : plan.stages[static_cast<std::size_t>(i)].devices)
                perNode[slot.node] += slot.count * pred.stages[static_cast<std::size_t>(i)].memory.host;
        double worstHost = 0;
        for (const auto& [id, bytes] : perNode) {
            const NodeInfo* n = m.node(id);
            const double cap = n ? n->host_memory : 0.0;
            if (bytes / GiB > pred.host_memory_per_node_gib
                || (bytes / GiB == pred.host_memory_per_node_gib && cap / GiB > pred.host_memory_capacity_gib)) {
                pred.host_memory_per_node_gib = bytes / GiB;
                pred.host_memory_capacity_gib = cap / GiB;
            }
            const double shortfall = cap > 0 ? bytes - cap : 0.0;
            if (shortfall > 0) {
                pred.feasible = false;
                if (shortfall / GiB > worstHost) {
                    worstHost = shortfall / GiB;
                    const Node* node = m.cluster.node(id);
                    char buf[240];
                    std::snprintf(buf, sizeof buf, "node %s needs %.1f GiB of host memory of %.1f GiB (short %.1f GiB)",
                                  node ? node->host.c_str() : std::to_string(id).c_str(), bytes / GiB, cap / GiB,
                                  shortfall / GiB);
                    if (worstHost > pred.memory_shortfall_gib || pred.infeasible_reason.empty()) {
                        pred.infeasible_reason = buf;
                        pred.memory_shortfall_gib = worstHost;
                    }
                }
            }
        }
    }

    if (m.haveTables) {
        // Each stage's notes once; a note that only some stages of its device type have names
        // them ("stages 0, 2: H800: collective times from the profile table"), so that two
        // notes of one type do not read as a contradiction.
        std::vector<std::pair<std::string, std::vector<int>>> stageNotes;
        for (std::size_t i = 0; i < pred.stages.size(); ++i)
            for (const auto& n : pred.stages[i].notes) {
                auto at = std::find_if(stageNotes.begin(), stageNotes.end(), [&](const auto& e) { return e.first == n; });
                if (at == stageNotes.end())
                    stageNotes.push_back({n, {static_cast<int>(i)}});
                else
                    at->second.push_back(static_cast<int>(i));
            }
        for (const auto& [n, where] : stageNotes) {
            const std::string& type = plan.stages[static_cast<std::size_t>(where.front())].device_type;
            int ofType = 0;
            for (const StagePlan& st : plan.stages)
                ofType += st.device_type == type ? 1 : 0;
            std::string text = n;
            if (static_cast<int>(where.size()) < ofType) {
                std::string list;
                for (std::size_t k = 0; k < where.size();) {
                    std::size_t e = k;
                    while (e + 1 < where.size() && where[e + 1] == where[e] + 1)
                        ++e;
                    list += (list.empty() ? "" : ", ") + std::to_string(where[k])
                        + (e > k ? (e == k + 1 ? ", " : "-") + std::to_string(where[e]) : std::string());
                    k = e + 1;
                }
                text = (where.size() > 1 ? "stages " : "stage ") + list + ": " + n;
            }
            if (std::find(pred.notes.begin(), pred.notes.end(), text) == pred.notes.end())
                pred.notes.push_back(text);
        }
        pred.used_profile = std::any_of(pred.stages.begin(), pred.stages.end(), [](const StageEstimate& st) { return st.from_profile; });
        if (!pred.used_profile)   // one note below says it for every stage; an entry that MoE layers cannot use says why
            std::erase_if(pred.notes, [](const std::string& n) { return n.find("ffn_fwd_s") == std::string::npos; });
        // Measured times cannot beat the hardware: more model FLOPs per second than the
        // devices' peak means the profile does not describe this model or these devices.
        if (pred.mfu > 1.0) {
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "the profile's times put this plan at %.0f%% of the devices' peak (MFU above 100%%): "
                          "check that the profile was measured for this model and these devices", 100 * pred.mfu);
            pred.notes.insert(pred.notes.begin(), buf);
        }
        if (!pred.used_profile)
            pred.notes.push_back(pred.notes.empty() ? "the profile has no entry for this plan; every number is an analytic default"
                                                    : "nothing of the profile applies to this plan; every number is an analytic default");
    } else {
        pred.notes.push_back(m.profile ? "the profile is empty: every number is an analytic default from the device catalog"
                                       : "no profile: every number is an analytic default from the device catalog");
    }
    // Where the defaults are known to run fast: on NVLink4 (H100-class) devices the accuracy
    // benchmark puts them 19-29 % under NVIDIA's published DGX Cloud step times and up to 45 %
    // above Megatron-LM's published throughput for its smallest models (docs/cost-model.md
    // section 10). Said where no profile entry was used, so that a plan is not trusted blindly.
    if (!pred.used_profile
        && std::any_of(plan.stages.begin(), plan.stages.end(), [&](const StagePlan& st) {
               const DeviceType* t = m.catalog.find(st.device_type);
               return t && t->intra_link_kind == "NVLink4";
           }))
        pred.notes.push_back("on NVLink4 (H100-class) devices the analytic defaults run 19-29 % faster than NVIDIA's published "
                             "step times (docs/cost-model.md section 10): a profile calibrated from a log of your run "
                             "(hapmoe calibrate) brings them to your devices");
    const TrainingSpec& training = m.model.training;
    if (training.cross_entropy_loss_fusion && training.cross_entropy_fusion_impl == CrossEntropyFusionImpl::TE
        && !teCrossEntropyRuns(training, plan.target))
        pred.notes.push_back("cross-entropy costed with the native fusion: the plan is for Megatron-LM, which refuses "
                             "--cross-entropy-fusion-impl te (its launcher writes native; section 3.6)");
    // FP8 (section 3.7): where the model's linear layers run in FP8, and where they cannot.
    if (m.model.training.fp8())
        for (const auto& st : plan.stages) {
            const DeviceInfo& dev = m.device(st.device_type);
            const std::string note = dev.fp8 ? st.device_type + ": the linear layers' GEMMs in FP8 at its FP8 peak, with their casts"
                                                   + std::string(m.haveTables ? " (a profile table's layer times are used as measured)" : "")
                                                   + "; its share of the MFU is over that FP8 peak, as NVIDIA's recipes count it"
                                             : st.device_type + ": " + fp8Unavailable(m.catalog, st.device_type, m.model.training.fp8_recipe)
                                                   + ", so its GEMMs are costed in " + toString(m.model.training.precision)
                                                   + " (FP8 training cannot run on it)";
            if (std::find(pred.notes.begin(), pred.notes.end(), note) == pred.notes.end())
                pred.notes.push_back(note);
        }
    return pred;
}

} // namespace hapmoe
