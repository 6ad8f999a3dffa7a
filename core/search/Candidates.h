#pragma once
// The stage choices open from a partial pipeline, shared by HS-DP and the exhaustive
// oracle so that both search the same space. Pipelines are built from the last stage
// backwards: a partial pipeline holds the layers [j, N), and the device type being filled
// (`cur`) has its positions [m, total) taken. Internal to core/search.

#include "search/SearchRun.h"
#include "search/StageEvaluator.h"

#include <array>
#include <utility>
#include <vector>

namespace hapmoe {

struct Partial {
    int j = 0;                 // layers still to place (they go to earlier stages)
    int k = 0;                 // stages placed so far
    unsigned mask = 0;         // types holding a stage
    int cur = -1;              // type of the earliest stage placed so far
    int m = 0;                 // free positions [0, m) of type cur
    StageShape next;           // the earliest stage placed so far (valid when k > 0)
    int tie_tp = 0, tie_dp = 0;  // the last stage's TP and DP (tied embeddings)
    StageShape last;             // the last stage (valid when k > 0; tied embeddings)
};

struct Choice {
    StageShape shape;
    int n = 0;
};

// Where a stage that fits nowhere is, for the no-plan reason: "H800, 16 devices, 15 layers",
// and when its host memory share is what misses, "in its nodes' host memory".
std::string shortfallWhere(const SearchSpace& space, const Choice& c, bool onHost);
// The stage's shortfall offered to its type's closest (RunResult::type_shortfall).
void noteShortfall(RunResult& result, const SearchSpace& space, const Choice& c, double gib, bool onHost);

class Candidates {
public:
    Candidates(const SearchSpace& space, const RunConfig& config, const TypeSpeeds& speed);

    // Calls f(choice) for every stage that may come before the partial pipeline, and
    // counts the choices the load-balance rule removes.
    template <class F>
    void forEach(const Partial& p, F&& f, long long& loadPruned) const;
    // The same, grouped: f(choice without knob, knob indices) per (type, group, layers).
    template <class F>
    void forEachGroup(const Partial& p, F&& f, long long& loadPruned) const;

    // Calls f(type, group size, knob indices) for every stage option of the run, wherever
    // it may sit (bounds that must hold for every position: HsDp's floors).
    template <class F>
    void forEachOption(F&& f) const
    {
        for (int h = 0; h < static_cast<int>(m_opts.size()); ++h)
            for (const Opt& o : m_opts[static_cast<std::size_t>(h)])
                f(h, o.d, o.knobs);
    }

    // Whether the run's target can launch a complete plan: a rule the stage options do not
    // express (Megatron-LM's node order) is checked on the plan (deploymentProblems). HS-DP
    // and the oracle keep only such plans, else one that cannot run would push out one that can.
    bool runnable(const Plan& plan) const;

    // Whether the pipeline is complete and acceptable once `c` (holding layer 0) is placed.
    bool acceptFirst(const Partial& p, const Choice& c) const;
    Partial after(const Partial& p, const Choice& c) const;

    const RunConfig& config() const { return m_config; }

private:
    struct Opt {
        int d;
        std::vector<int> knobs;   // indices into SearchSpace::knobs(type, d)
        // Load balance (docs/search.md section 4): the layer counts [lo, hi] the stage may
        // hold, indexed by 2 * (holds the first layer) + (holds the last), since the first
        // stage's embedding and the last stage's output layer count as work (layerWindow in Candidates.cpp).
        std::array<std::pair<int, int>, 4> window{};
        bool vary = false;        // SearchSpace::knobsVary(type, d)
    };
    bool closes(int type, int m) const;   // may a type's use end at position m?
    bool typeOpens(const Partial& p, int type) const;

    const SearchSpace& m_space;
    RunConfig m_config;
    std::vector<std::vector<Opt>> m_opts;   // per type
};

template <class F>
void Candidates::forEach(const Partial& p, F&& f, long long& loadPruned) const
{
    forEachGroup(
        p,
        [&](Choice c, const std::vector<int>& knobs) {
            for (int ki : knobs) {
                c.shape.knob = ki;
                c.shape.mbs = m_config.batch / m_space.knobs(c.shape.type, c.shape.d)[static_cast<std::size_t>(ki)].dp;
                f(c);
            }
        },
        loadPruned);
}

template <class F>
void Candidates::forEachGroup(const Partial& p, F&& f, long long& loadPruned) const
{
    const int N = m_space.model().num_layers;
    if ((m_config.max_pp > 0 && p.k >= m_config.max_pp) || (m_config.even_pp > 0 && p.k >= m_config.even_pp))
        return;
    for (int h = 0; h < m_space.numTypes(); ++h) {
        if (!(m_config.type_mask & (1u << h)))
            continue;
        int m;
        if (p.k > 0 && h == p.cur) {
            m = p.m;
        } else {
            if (!typeOpens(p, h))
                continue;
            m = m_space.types()[static_cast<std::size_t>(h)].total;
        }
        for (const Opt& o : m_opts[static_cast<std::size_t>(h)]) {
            if (o.d > m || !m_space.validGroup(h, m - o.d, o.d))
                continue;
            if (m_config.one_size_per_type && p.k > 0 && h == p.cur && o.d != p.next.d
                && m_space.nodeSize(h, m - o.d) == m_space.nodeSize(h, p.next.start))
                continue;   // one group size per node size of a type
            // TP and ETP divide the devices the group has on each node, which on a type of
            // mixed node sizes depends on where it sits (SearchSpace::knobFits).
            const std::vector<int>* knobs = &o.knobs;
            std::vector<int> fitting;
            if (o.vary) {
                const std::vector<Knob>& all = m_space.knobs(h, o.d);
                for (int ki : o.knobs)
                    if (m_space.knobFits(h, m - o.d, o.d, all[static_cast<std::size_t>(ki)]))
                        fitting.push_back(ki);
                if (fitting.empty())
                    continue;
                knobs = &fitting;
            }
            Choice c;
            c.shape = {h, m - o.d, o.d, -1, 0};
            int lo = 1, hi = p.j;
            if (m_config.even_pp > 0)
                lo = hi = N / m_config.even_pp;
            // The stage holding layer 0 (n == p.j) is the first: its window counts the
            // embedding; the stage placed first here (p.k == 0) is the last.
            int midLo = lo, midHi = std::min(hi, p.j - 1);
            bool firstOk = lo <= p.j && p.j <= hi;
            if (m_config.load_balance) {
                const bool last = p.k == 0;
                const auto [wlo, whi] = o.window[last ? 1 : 0];
                const auto [flo, fhi] = o.window[last ? 3 : 2];
                const int before = std::max(0, midHi - midLo + 1) + (firstOk ? 1 : 0);
                midLo = std::max(midLo, wlo);
                midHi = std::min(midHi, whi);
                firstOk = firstOk && flo <= p.j && p.j <= fhi;
                const int after = std::max(0, midHi - midLo + 1) + (firstOk ? 1 : 0);
                loadPruned += static_cast<long long>(o.knobs.size()) * (before - after);
            }
            auto visit = [&](int n) {
                if (isFullOfKLevel(m_config.fixed_level) && n <= m_config.fixed_level - 1)
                    return;   // Megatron's full-k setting needs k < layers on every stage
                c.n = n;
                f(c, *knobs);
            };
            for (int n = midLo; n <= midHi; ++n)
                visit(n);
            if (firstOk)
                visit(p.j);
        }
    }
}

} // namespace hapmoe
