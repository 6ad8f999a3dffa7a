#include "search/StageEvaluator.h"

#include "plan/Deployability.h"
#include "util/Hash.h"

#include <algorithm>
#include <set>

namespace hapmoe {

Recompute recomputeOfLevel(int level)
{
    if (level <= 0)
        return Recompute::None;
    if (level == 1 || level == kSelectiveWide)
        return Recompute::Selective;
    return Recompute::Full;
}

int recomputeLayersOfLevel(int level, int numLayers)
{
    if (!isFullOfKLevel(level))
        return 0;   // 0 = every layer of the stage (StagePlan); not read unless full
    const int k = level - 1;
    return k >= numLayers ? 0 : k;
}

std::vector<int> recomputeLevels(int layers, bool light, bool wide)
{
    std::vector<int> out = {0};
    if (light)
        out.push_back(1);
    if (wide)
        out.push_back(kSelectiveWide);
    for (int k = 1; k < layers; k *= 2)
        out.push_back(k + 1);
    out.push_back(kFullAll);
    return out;
}

unsigned selectiveRecomputeModulesOfTypes(const CostModel& cost, const std::vector<std::string>& typeNames)
{
    // What saves memory for element-wise work (docs/search.md section 1): the attention core
    // where the scores are stored (unfused); in MoE layers the pre-MLP norm and, where
    // Megatron-Core can (grouped GEMM, which the launchers write for NVIDIA devices of compute
    // capability 8.0 and above and for AMD CDNA3: writesGroupedGemm), the experts' activation.
    // Under FP8 with delayed scaling Megatron-Core refuses those two.
    const ModelSpec& m = cost.model();
    unsigned modules = cost.options().fused_attention ? 0u : recompute_module::core_attn;
    if (m.isMoe() && refusedRecomputeModules(m) == 0) {
        modules |= recompute_module::layernorm;
        const bool groupedGemm = std::all_of(typeNames.begin(), typeNames.end(), [&](const std::string& t) {
            return writesGroupedGemm(cost.catalog(), t);
        });
        if (groupedGemm)
            modules |= recompute_module::moe_act;
    }
    // Multi-latent attention keeps a query and key wider than its latents: its up projections
    // are cheap to repeat against what their outputs hold (docs/cost-model.md section 3.8).
    if (m.multi_latent_attention)
        modules |= recompute_module::mla_up_proj;
    // Nothing saves memory cheaply: Megatron-Core's default, which then never fits where
    // no recompute does not.
    return modules == 0 ? recompute_module::defaults : modules;
}

unsigned selectiveRecomputeModules(const CostModel& cost, const SearchSpace& space, unsigned typeMask)
{
    std::vector<std::string> names;
    for (int h = 0; h < space.numTypes(); ++h)
        if (h >= 32 || (typeMask & (1u << h)))
            names.push_back(space.types()[static_cast<std::size_t>(h)].name);
    return selectiveRecomputeModulesOfTypes(cost, names);
}

bool selectiveRecomputeSavesMemory(const CostModel& cost, unsigned modules)
{
    return !(cost.options().fused_attention && modules == recompute_module::core_attn);
}

unsigned wideSelectiveRecomputeModules(const CostModel& cost)
{
    // Megatron-Core's checkpoints of whole blocks (TransformerConfig.recompute_modules: "mlp"
    // the dense MLP, "moe" the MoE layer, docs/cost-model.md section 3.5): each keeps only its
    // input, so the block's intermediate activations (the experts' with their dispatch buffers,
    // or the dense FFN's) are made again in backward by repeating its forward. The MoE layer's
    // pre-MLP norm goes with it where Megatron-Core takes it (not under delayed FP8), as the
    // MoE recipes write it (Megatron-MoE-ModelZoo best_practice/qwen3/run_235b.sh:
    // "--recompute-modules layernorm moe"). The experts' activation and the shared experts
    // are inside `moe` and add nothing. With fused attention the core saves nothing.
    const ModelSpec& m = cost.model();
    bool dense = false, moe = false;
    for (int l = 0; l < m.num_layers; ++l)
        (m.isMoeLayer(l) ? moe : dense) = true;
    unsigned modules = cost.options().fused_attention ? 0u : recompute_module::core_attn;
    if (dense)
        modules |= recompute_module::mlp;
    if (moe) {
        modules |= recompute_module::moe;
        if (!(refusedRecomputeModules(m) & recompute_module::layernorm))
            modules |= recompute_module::layernorm;
    }
    if (m.multi_latent_attention)   // as the DeepSeek-V3 recipe writes it: "mla_up_proj mlp"
        modules |= recompute_module::mla_up_proj;
    return (modules & (recompute_module::mlp | recompute_module::moe)) ? modules : 0u;
}

std::size_t StageEvaluator::KeyHash::operator()(const Key& k) const noexcept
{
    return hashWords(k.a, k.b, k.c);
}

StageEvaluator::StageEvaluator(const CostModel& cost, const SearchSpace& space, double offloadFraction)
    : m_cost(cost), m_space(space), m_offload(offloadFraction)
{
    const ModelSpec& m = space.model();
    m_selectiveModules = selectiveRecomputeModules(cost, space);
    m_wideModules = wideSelectiveRecomputeModules(cost);
    m_moePrefix.assign(static_cast<std::size_t>(m.num_layers + 1), 0);
    for (int l = 0; l < m.num_layers; ++l)
        m_moePrefix[static_cast<std::size_t>(l + 1)] = m_moePrefix[static_cast<std::size_t>(l)] + (m.isMoeLayer(l) ? 1 : 0);
}

StagePlan StageEvaluator::makeStage(const StageShape& s, int firstLayer, int numLayers, int level, unsigned modules) const
{
    const Knob& k = m_space.knobs(s.type, s.d)[static_cast<std::size_t>(s.knob)];
    StagePlan st;
    st.device_type = m_space.types()[static_cast<std::size_t>(s.type)].name;
    st.devices = m_space.slots(s.type, s.start, s.d);
    st.first_layer = firstLayer;
    st.num_layers = numLayers;
    st.tp = k.tp;
    st.cp = k.cp;
    st.dp = k.dp;
    st.ep = k.ep;
    st.etp = k.etp;
    st.edp = k.edp;
    st.recompute = recomputeOfLevel(level);
    st.recompute_layers = recomputeLayersOfLevel(level, numLayers);
    st.recompute_modules = level == kSelectiveWide ? m_wideModules : modules ? modules : m_selectiveModules;
    st.micro_batch_size = s.mbs;
    return st;
}

StageEvaluator::Key StageEvaluator::baseKey(const StageQuery& q) const
{
    // What estimateStage reads (CostModel.cpp) apart from the place in the pipeline and the
    // next stage: the stage's type, nodes (start, d), knobs, micro-batch, its layer count and
    // MoE layer count, first/last (embedding, output) and M.
    const ModelSpec& m = m_space.model();
    const int last = q.first_layer + q.num_layers;
    const std::uint64_t nMoe = static_cast<std::uint64_t>(m_moePrefix[static_cast<std::size_t>(last)]
                                                         - m_moePrefix[static_cast<std::size_t>(q.first_layer)]);
    Key k;
    k.a = static_cast<std::uint64_t>(q.shape.type)
        | static_cast<std::uint64_t>(m_space.canonicalStart(q.shape.type, q.shape.start)) << 8
        | static_cast<std::uint64_t>(q.shape.d) << 24 | static_cast<std::uint64_t>(q.shape.knob) << 40
        | static_cast<std::uint64_t>(q.shape.mbs) << 52;
    k.b = static_cast<std::uint64_t>(q.num_layers) | nMoe << 12 | static_cast<std::uint64_t>(q.holdsEmbedding()) << 24
        | static_cast<std::uint64_t>(q.holdsOutput(m.num_layers)) << 25 | static_cast<std::uint64_t>(q.microbatches) << 26;
    k.c = static_cast<std::uint64_t>(q.fixed_level + 2)   // a fixed recompute level, or 1 = the least that fits
        | static_cast<std::uint64_t>(q.ignore_memory) << 32 | static_cast<std::uint64_t>(m_tpOverlap) << 33
        | static_cast<std::uint64_t>(q.no_selective) << 34 | static_cast<std::uint64_t>(q.selective_modules) << 35
        | static_cast<std::uint64_t>(m_target == Target::Megatron) << 63;
    return k;
}

double StageEvaluator::tiedSync(const StageShape& first, const StageShape& last)
{
    // Exact positions, not canonical ones: whether the two stages share a node matters.
    const Knob& kf = m_space.knobs(first.type, first.d)[static_cast<std::size_t>(first.knob)];
    const int dpLast = m_space.knobs(last.type, last.d)[static_cast<std::size_t>(last.knob)].dp;
    Key k;
    k.a = static_cast<std::uint64_t>(first.type) | static_cast<std::uint64_t>(first.start) << 8
        | static_cast<std::uint64_t>(first.d) << 32;
    k.b = static_cast<std::uint64_t>(last.type) | static_cast<std::uint64_t>(last.start) << 8
        | static_cast<std::uint64_t>(last.d) << 32;
    // The first stage's TP, and both DP (the partial reduce of different DP).
    k.c = static_cast<std::uint64_t>(kf.tp) | static_cast<std::uint64_t>(kf.dp) << 16
        | static_cast<std::uint64_t>(dpLast) << 40;
    if (const double* known = m_tied.find(k))
        return *known;
    const double t = m_cost.tiedEmbeddingSync(makeStage(first, 0, 1, 0), makeStage(last, 0, 1, 0));
    m_tied.emplace(k, t);
    return t;
}

bool StageEvaluator::distributedOptimizer() const
{
    // Megatron-Core offloads the optimizer only from the distributed optimizer
    // (megatron/core/optimizer/__init__.py raises otherwise).
    return m_space.model().training.use_distributed_optimizer || m_offload > 0;
}

StageEstimate StageEvaluator::estimate(const StageQuery& q, int level, const StagePlan* nextPlan, int inflight)
{
    // One evaluate() may try several recompute levels of the same stage: build the stage
    // once (its device slots cost allocations) and change only the recompute fields.
    if (!m_scratchValid) {
        m_scratch = makeStage(q.shape, q.first_layer, q.num_layers, level, q.selective_modules);
        m_scratchValid = true;
    } else {
        m_scratch.recompute_modules = level == kSelectiveWide ? m_wideModules
            : q.selective_modules                             ? q.selective_modules
                                                              : m_selectiveModules;
        m_scratch.recompute = recomputeOfLevel(level);
        m_scratch.recompute_layers = recomputeLayersOfLevel(level, q.num_layers);
    }
    const StagePlan& st = m_scratch;
    StageContext ctx;
    // The cost model reads the stage's place through PP - i (micro-batches in flight),
    // i == 0 (embedding), i == PP - 1 (output layer) and the next stage.
    const bool first = q.holdsEmbedding();
    const bool last = q.holdsOutput(m_space.model().num_layers);
    ctx.stage_index = first ? 0 : 1;
    ctx.num_stages = ctx.stage_index + (last ? 1 : std::max(2, inflight));
    ctx.num_microbatches = q.microbatches;
    ctx.vpp = 1;
    ctx.sequence_parallel = true;
    ctx.distributed_optimizer = distributedOptimizer();
    ctx.optimizer_offload_fraction = m_offload;
    ctx.notes = false;
    ctx.tp_comm_overlap = m_tpOverlap;
    ctx.target = m_target;
    ctx.next = nextPlan;
    ++m_calls;
    return m_cost.estimateStage(st, ctx);
}

StageCost StageEvaluator::evaluate(const StageQuery& q)
{
    m_scratchValid = false;
    const Key key = baseKey(q);
    ShapeRecord& rec = m_records[key];
    const int N = m_space.model().num_layers;
    const int inflight = std::min(q.from_end + 1, q.microbatches);
    if (rec.level.empty()) {
        const std::size_t size = static_cast<std::size_t>(std::min(q.microbatches, N) + 1);
        rec.level.assign(size, -3);
        rec.shortfall.assign(size, 0.0);
        rec.onHost.assign(size, 0);
    }
    const std::size_t slot = static_cast<std::size_t>(std::min(inflight, static_cast<int>(rec.level.size()) - 1));

    // The next stage as a plan, built only when the cost model is called (cache hits are
    // the common case and would otherwise pay for its allocations).
    StagePlan nextPlan;
    bool nextBuilt = false;
    auto nextOf = [&]() -> const StagePlan* {
        if (!q.next)
            return nullptr;
        if (!nextBuilt) {
            nextPlan = makeStage(*q.next, q.first_layer + q.num_layers, 1, 0);
            nextBuilt = true;
        }
        return &nextPlan;
    };

    // The last estimate made while looking for the least recompute: the cost below reuses
    // it when it is for the level found (same stage, same next stage).
    StageEstimate probed;
    int probedLevel = -100;
    int level = q.fixed_level;
    if (level < 0) {
        // The least recompute that fits: none < selective < full of k layers (k rising) <
        // full of all. Memory falls along the full-k levels, so a bisection finds k.
        if (rec.level[slot] == -3) {
            int found = -2;
            double shortfall = 0;
            bool onHost = false;
            auto fitsAt = [&](int lv, double* miss) {
                const StageEstimate e = estimate(q, lv, nextOf(), inflight);
                probed = e;
                probedLevel = lv;
                if (miss) {
                    *miss = e.memory.shortfall() / (1024.0 * 1024.0 * 1024.0);
                    onHost = e.memory.shortOnHost();
                }
                return e.memory.fits();
            };
            // Memory grows with the micro-batches in flight at every level, so what a slot
            // with fewer in flight refused is refused here, and what a slot with more in
            // flight accepted is accepted here: the neighbours bound the answer.
            int below = -3, above = -3;
            for (std::size_t a = slot; a-- > 0;)
                if (rec.level[a] != -3) {
                    below = rec.level[a];
                    break;
                }
            for (std::size_t b = slot + 1; b < rec.level.size(); ++b)
                if (rec.level[b] != -3) {
                    above = rec.level[b];
                    break;
                }
            if (below == -2) {
                fitsAt(kFullAll, &shortfall);   // nothing fits; the shortfall is this slot's
                found = -2;
            } else if (below >= 0 && below == above)
                found = below;
            else if (below < 1 && fitsAt(0, nullptr))
                found = 0;
            else if (below < 2 && !q.no_selective && fitsAt(1, nullptr))
                found = 1;
            else if (!fitsAt(kFullAll, &shortfall))
                found = -2;
            else {
                int lo = 1, hi = q.num_layers;   // full of hi layers (= all) fits
                if (below >= 2)
                    lo = below == kFullAll ? q.num_layers : std::min(below - 1, q.num_layers);
                while (lo < hi) {
                    const int mid = (lo + hi) / 2;
                    if (fitsAt(mid + 1, nullptr))
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                found = hi >= q.num_layers ? kFullAll : hi + 1;
            }
            rec.level[slot] = found;
            rec.shortfall[slot] = shortfall;
            rec.onHost[slot] = onHost;
        }
        level = rec.level[slot];
        if (level == -2) {
            StageCost out;
            out.fits = false;
            out.shortfall_gib = rec.shortfall[slot];
            out.short_on_host = rec.onHost[slot];
            return out;
        }
    }
    // The p2p send reads the next stage's device type and nodes only (CostModel.cpp,
    // sendTo), not its knobs. A fixed level must be checked against memory per slot.
    const std::uint64_t nextKey = q.next
        ? (1ull | static_cast<std::uint64_t>(q.next->type) << 1
           | static_cast<std::uint64_t>(m_space.canonicalStart(q.next->type, q.next->start)) << 9
           | static_cast<std::uint64_t>(q.next->d) << 29
           | static_cast<std::uint64_t>(m_space.shareNode(q.shape.type, q.shape.start, q.shape.d, q.next->type,
                                                          q.next->start, q.next->d))
               << 50)
        : 0;
    if (q.fixed_level >= 0 && !q.ignore_memory) {
        // Memory at this slot for the fixed level.
        if (rec.level[slot] == -3) {
            const StageEstimate e = estimate(q, level, nextOf(), inflight);
            probed = e;
            probedLevel = level;
            rec.level[slot] = e.memory.fits() ? level : -2;
            rec.shortfall[slot] = e.memory.shortfall() / (1024.0 * 1024.0 * 1024.0);
            rec.onHost[slot] = e.memory.shortOnHost();
        }
        if (rec.level[slot] == -2) {
            StageCost out;
            out.fits = false;
            out.shortfall_gib = rec.shortfall[slot];
            out.short_on_host = rec.onHost[slot];
            return out;
        }
    }
    for (const CostEntry& ce : rec.costs)
        if (ce.level == level && ce.next == nextKey)
            return ce.cost;

    const StageEstimate e = probedLevel == level ? probed : estimate(q, level, nextOf(), inflight);
    StageCost out;
    out.fits = true;
    out.level = level;
    out.c = e.t_fwd + e.t_bwd;
    out.bwd = e.t_bwd;
    out.sync = e.beforeBarrier();
    out.step = e.afterBarrier();
    out.compute = e.compute;
    // Heterogeneous communication (paper section 3.4, pruning 3): the activation send to a
    // stage of another device type, and expert dispatch when the EP group spans nodes.
    double hetero = 0;
    if (q.next && q.next->type != q.shape.type)
        hetero += e.p2p_send;
    const Knob& kn = m_space.knobs(q.shape.type, q.shape.d)[static_cast<std::size_t>(q.shape.knob)];
    if (kn.ep > 1 && m_space.spansNodes(q.shape.type, q.shape.start, q.shape.d))
        hetero += e.expert_dispatch;
    out.hetero_comm = hetero;
    rec.costs.push_back({level, nextKey, out});
    return out;
}

} // namespace hapmoe
