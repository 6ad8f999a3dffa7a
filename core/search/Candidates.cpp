#include "search/Candidates.h"

#include "plan/Deployability.h"

#include <algorithm>
#include <cmath>

namespace hapmoe {

namespace {

// The layer counts [lo, hi] of a stage with N layers to share, load-balance bounds shareLo =
// (1 - delta) w (a fraction of the layers) and workHi = (1 + delta) w' W (layers), and its own
// end work `extra` (embedding and/or output layer, in layers of its type).
std::pair<int, int> layerWindow(int N, double shareLo, double workHi, double extra)
{
    // Clamped before the conversion: a wide tolerance (RunConfig::delta) must not overflow int.
    const int lo = static_cast<int>(std::clamp(std::floor(shareLo * (N + extra) - extra), 1.0, static_cast<double>(N)));
    const int hi = static_cast<int>(std::clamp(std::ceil(workHi - extra), 1.0, static_cast<double>(N)));
    return {lo, std::max(lo, hi)};
}

} // namespace

Candidates::Candidates(const SearchSpace& space, const RunConfig& config, const TypeSpeeds& speeds)
    : m_space(space), m_config(config), m_opts(static_cast<std::size_t>(space.numTypes()))
{
    const int N = space.model().num_layers;
    const std::vector<double>& speed = speeds.layers_per_s;
    // Load balance (paper section 3.4, pruning 1): a stage of d devices of type h holds
    // about the share w = d P_h / sum over the run's types of (devices * P_h) of the work.
    // Its work counts, in layers of its type, the embedding if it is the first stage and the
    // output layer with its loss if it is the last (x). It holds at least (1 - delta) w of
    // the layers and its own x, and at most (1 + delta) w' of the run's work W: the N layers
    // and both ends' x at the run's share-weighted mean, since where an end stage's x alone
    // exceeds its share the other stages take the layers it cannot (layerWindow()).
    double total = 0;
    for (int h = 0; h < space.numTypes(); ++h)
        if (config.type_mask & (1u << h))
            total += space.types()[static_cast<std::size_t>(h)].total * speed[static_cast<std::size_t>(h)];
    double work = N;
    for (int h = 0; h < space.numTypes(); ++h)
        if ((config.type_mask & (1u << h)) && total > 0) {
            const auto i = static_cast<std::size_t>(h);
            work += space.types()[i].total * speed[i] / total * (speeds.first_extra[i] + speeds.last_extra[i]);
        }
    for (int h = 0; h < space.numTypes(); ++h) {
        if (!(config.type_mask & (1u << h)))
            continue;
        for (int d : space.sizes(h)) {
            if (config.fixed_d > 0 && d != config.fixed_d)
                continue;
            Opt o;
            o.d = d;
            o.vary = space.knobsVary(h, d);
            const std::vector<Knob>& ks = space.knobs(h, d);
            for (std::size_t i = 0; i < ks.size(); ++i) {
                const Knob& k = ks[i];
                if (config.target == Target::FlagScale && !config.ignore_target_rules && k.cp != 1)
                    continue;   // FlagScale's ParallelContext asserts CP == 1
                if (config.batch % k.dp != 0)
                    continue;   // mesh micro-batch DP_0 * MBS_0 / DP_i must be whole
                if (config.fixed_d > 0) {
                    const Knob& f = config.fixed_knob;
                    if (k.tp != f.tp || k.cp != f.cp || k.dp != f.dp || k.ep != f.ep || k.etp != f.etp)
                        continue;
                }
                if (config.fixed_ep > 0 && (k.ep != config.fixed_ep || k.etp != config.fixed_etp))
                    continue;
                if (config.only_tp > 0 && k.tp != config.only_tp)
                    continue;
                o.knobs.push_back(static_cast<int>(i));
            }
            if (o.knobs.empty())
                continue;
            const double ph = speed[static_cast<std::size_t>(h)];
            const double w = total > 0 ? d * ph / total : 0;
            // On a type whose nodes differ in size a plan may leave the nodes of one size idle
            // (their mesh would need a micro-batch size the batch does not allow, or one node
            // size suits the model better), so the upper end also allows the share the group
            // has when the type runs only on its nodes of one size that can hold the group.
            double wMax = w;
            const TypeInfo& t = space.types()[static_cast<std::size_t>(h)];
            if (t.size_devices.size() > 1 && total > 0) {
                for (const auto& [size, classDevices] : t.size_devices) {
                    const bool fits = size % d == 0 || (d % size == 0 && d <= classDevices);
                    if (fits)
                        wMax = std::max(wMax, d * ph / (total - (t.total - classDevices) * ph));
                }
            }
            const auto i = static_cast<std::size_t>(h);
            for (int end = 0; end < 4; ++end)
                o.window[static_cast<std::size_t>(end)] =
                    layerWindow(N, (1.0 - config.delta) * w, (1.0 + config.delta) * wMax * work,
                                (end >= 2 ? speeds.first_extra[i] : 0.0) + (end % 2 == 1 ? speeds.last_extra[i] : 0.0));
            m_opts[static_cast<std::size_t>(h)].push_back(std::move(o));
        }
    }
}

bool Candidates::closes(int type, int m) const
{
    if (m_config.all_devices)
        return m == 0;
    if (m_config.target == Target::Megatron && !m_config.ignore_target_rules) {
        // torchrun runs the same number of processes on every node: use whole nodes.
        const TypeInfo& t = m_space.types()[static_cast<std::size_t>(type)];
        return std::binary_search(t.node_start.begin(), t.node_start.end(), m);
    }
    return true;
}

bool Candidates::typeOpens(const Partial& p, int type) const
{
    if (p.k == 0)
        return true;
    if (p.mask & (1u << type))
        return false;   // a type never comes back after another (FlagScale's rank order)
    if (!closes(p.cur, p.m))
        return false;
    if (m_config.target == Target::Megatron && !m_config.ignore_target_rules) {
        const unsigned mask = p.mask | (1u << type);
        if (m_space.mixesLibraries(mask))
            return false;
        // The same --nproc_per_node on every node used: the next type starts on its last node
        // (positions are taken from the top), which must match the node the current type
        // ends on. Nodes further down are checked with the whole plan (runnable); nodes the
        // plan leaves idle do not count.
        const TypeInfo& b = m_space.types()[static_cast<std::size_t>(type)];
        if (b.node_counts.back() != m_space.nodeSize(p.cur, p.m))
            return false;
    }
    return true;
}

bool Candidates::runnable(const Plan& plan) const
{
    const Target target = m_config.ignore_target_rules ? Target::Any : m_config.target;
    return deploymentProblems(plan, m_space.model(), m_space.cluster(), m_space.catalog(), target).empty();
}

bool Candidates::acceptFirst(const Partial& p, const Choice& c) const
{
    const Knob& kn = m_space.knobs(c.shape.type, c.shape.d)[static_cast<std::size_t>(c.shape.knob)];
    if (kn.dp * m_config.mbs0 != m_config.batch)
        return false;   // the first mesh runs the given micro-batch size
    if (!closes(c.shape.type, c.shape.start))
        return false;
    const unsigned mask = p.mask | (1u << c.shape.type);
    if (m_config.require_all_types && mask != (m_config.type_mask & ((1u << m_space.numTypes()) - 1)))
        return false;
    if (m_config.even_pp > 0 && p.k + 1 != m_config.even_pp)
        return false;
    if (m_config.target == Target::FlagScale && !m_config.ignore_target_rules && p.k > 0
        && m_space.model().embeddingOnLastStage()) {
        // Tied embeddings or MTP: the first and last mesh share TP, and their DP divide one another.
        if (kn.tp != p.tie_tp)
            return false;
        if (m_space.model().training.use_distributed_optimizer && kn.dp % p.tie_dp != 0 && p.tie_dp % kn.dp != 0)
            return false;
    }
    return true;
}

Partial Candidates::after(const Partial& p, const Choice& c) const
{
    Partial q;
    q.j = p.j - c.n;
    q.k = p.k + 1;
    q.mask = p.mask | (1u << c.shape.type);
    q.cur = c.shape.type;
    q.m = c.shape.start;
    q.next = c.shape;
    if (p.k == 0) {
        const Knob& kn = m_space.knobs(c.shape.type, c.shape.d)[static_cast<std::size_t>(c.shape.knob)];
        q.tie_tp = kn.tp;
        q.tie_dp = kn.dp;
        q.last = c.shape;
    } else {
        q.tie_tp = p.tie_tp;
        q.tie_dp = p.tie_dp;
        q.last = p.last;
    }
    return q;
}

std::string shortfallWhere(const SearchSpace& space, const Choice& c, bool onHost)
{
    return space.types()[static_cast<std::size_t>(c.shape.type)].name + ", " + std::to_string(c.shape.d) + " devices, "
        + std::to_string(c.n) + " layers" + (onHost ? ", in its nodes' host memory" : "");
}

void noteShortfall(RunResult& result, const SearchSpace& space, const Choice& c, double gib, bool onHost)
{
    const auto t = static_cast<std::size_t>(c.shape.type);
    if (result.type_shortfall.size() <= t)
        result.type_shortfall.resize(t + 1);
    Shortfall& s = result.type_shortfall[t];
    if (s.gib < 0 || gib < s.gib) {   // the text only when it is the closest so far
        s.gib = gib;
        s.type = space.types()[t].name;
        s.where = shortfallWhere(space, c, onHost);
    }
}

} // namespace hapmoe
