#include "search/HsDp.h"

#include "cost/Prediction.h"
#include "util/FlatMap.h"
#include "util/Hash.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>

namespace hapmoe {

namespace {

using StateKey = std::array<std::int32_t, 9>;

struct StateKeyHash {
    std::size_t operator()(const StateKey& k) const noexcept
    {
        std::uint64_t h = 1469598103934665603ull;
        for (std::int32_t v : k) {
            h ^= static_cast<std::uint32_t>(v);
            h *= 1099511628211ull;
            h ^= h >> 31;
        }
        return static_cast<std::size_t>(h);
    }
};

// A partial pipeline, as the stage it placed and the entry of the stage after it; its
// (S, C, A, B) live in the states' Pareto sets (EntryRef).
struct Entry {
    int parent = -1;        // entry of the stage after this one (-1 for the last stage)
    Choice choice;
    int level = 0;
};

// An entry of a state's Pareto set, with its (S, C, A, B) kept inline: the dominance scans
// and the extensions then read one contiguous array instead of the whole entry table.
// S = sum c, C = max c, A = the latest end of a sync before the gradient-norm barrier,
// counted from the end of the last backward of the stage placed last (the earliest in the
// pipeline so far; each sync starts at its own stage's last backward, which ends the backward
// of every stage before it earlier: the drain), B = the longest optimizer step and parameter
// all-gather after it (StageCost::sync and step). L = the last stage's sync end the same way,
// with tied embeddings (0 otherwise): the all-reduce of the embedding gradient starts when the
// later of the two end stages' syncs ends, so the wait for the barrier is max(A, max(L, sync
// of the first stage) + the all-reduce).
struct EntryRef {
    double S, C, A, B, L;
    int idx;
    // With exact alternatives: how many entries of the set dominate this one (each counted
    // once, ties by insertion order); it goes when that reaches the plans kept.
    int dominators = 0;
};

// Whether partial plan y completes to a plan no slower than x does, whatever the stages still
// to come (docs/search.md section 3): they add the same sum, raise both plans' maxima to the
// same values at most and lower both A and L by the same backward times (the drain), so y's
// larger C, A or B costs it at most (M - 1)(C_y - C_x), A_y - A_x and B_y - B_x, which its
// smaller S must pay for. A and L enter the objective in one maximum (the wait for the
// barrier), so together they cost y at most the larger of A_y - A_x and L_y - L_x. Implied by
// Pareto dominance in (S, C, A, B, L), and transitive, as the one-pass insertion needs.
// The stages still to come drain at least `drained` (their layers' least backward): the wait
// then reads max(0, A - drained) of an A at most, and the same of L (it never drops below
// stage 0's own sync, >= 0), so A and L are compared above that floor only (exact).
inline bool dominates(double m1, double drained, const EntryRef& y, const EntryRef& x)
{
    if (y.S > x.S)
        return false;   // every term added below is >= 0
    auto left = [drained](double v) { return std::max(0.0, v - drained); };
    return y.S + m1 * std::max(0.0, y.C - x.C) + std::max({0.0, left(y.A) - left(x.A), left(y.L) - left(x.L)})
        + std::max(0.0, y.B - x.B)
        <= x.S;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

struct State {
    Partial p;
    std::vector<EntryRef> entries;
    // Bounds of S over the entries ever inserted: still bounds after removals. dominates()
    // needs S_y <= S_x, so a new entry below the least S cannot be dominated, and one above
    // the largest cannot dominate: the insertion then tests only the other way.
    double loS = kInf, hiS = -kInf;
    void widen(double S)
    {
        loS = std::min(loS, S);
        hiS = std::max(hiS, S);
    }
};

struct FrontItem {
    int knob;
    StageCost cost;
    // Whether this knob's c pays for the larger L of its candidates against every later knob
    // of the front (tied embeddings: L goes down by the stage's backward): c + max(0, bwd_h -
    // bwd) <= c_h for every later h. Needed for it to cover an entry (apply).
    bool coversLater = false;
};

struct FrontKey {
    std::uint64_t a = 0, b = 0, c = 0;
    bool operator==(const FrontKey& o) const { return a == o.a && b == o.b && c == o.c; }
};

struct FrontKeyHash {
    std::size_t operator()(const FrontKey& k) const noexcept { return hashWords(k.a, k.b, k.c); }
};

struct Final {
    double objective;
    Choice choice;
    int level;
    int parent;
    std::string key = {};   // alternativeKey of its plan
};

} // namespace

void fillUnused(Plan& plan, const SearchSpace& space, const std::string& reason)
{
    plan.unused.clear();
    // Only the nodes the plan touches get a map of their devices (a plan on a few nodes of a
    // cluster of thousands is given its idle nodes in one pass).
    std::unordered_map<int, std::vector<bool>> used;
    std::unordered_map<int, int> count;
    for (const Node& n : space.cluster().nodes)
        count[n.id] = std::max(0, n.count);
    for (const StagePlan& st : plan.stages)
        for (const DeviceSlot& s : st.devices) {
            const auto c = count.find(s.node);
            if (c == count.end())
                continue;
            std::vector<bool>& bits = used[s.node];
            bits.resize(static_cast<std::size_t>(c->second), false);
            for (int i = std::max(0, s.first_local); i < s.first_local + s.count && i < c->second; ++i)
                bits[static_cast<std::size_t>(i)] = true;
        }
    for (const Node& n : space.cluster().nodes) {
        const auto u = used.find(n.id);
        const int idle = u == used.end() ? std::max(0, n.count) : static_cast<int>(std::count(u->second.begin(), u->second.end(), false));
        if (idle > 0)
            plan.unused.push_back({n.id, idle, reason});
    }
}

struct HsDp::Scratch {
    std::vector<State> states;
    std::vector<Entry> entries;
};

HsDp::HsDp(const SearchSpace& space, StageEvaluator& evaluator, const TypeSpeeds& speed)
    : m_space(space), m_eval(evaluator), m_speed(speed), m_scratch(std::make_unique<Scratch>())
{
}

HsDp::~HsDp() = default;

RunResult HsDp::run(const RunConfig& config, RunControl& control, const JobProgress& progress)
{
    RunResult result;
    m_eval.setTpCommOverlap(config.tp_comm_overlap);
    m_eval.setTarget(config.target);
    const int N = m_space.model().num_layers;
    const int M = config.microbatches;
    const Candidates cand(m_space, config, m_speed);
    const unsigned modules = m_eval.selectiveModulesFor(config.type_mask);   // selective recompute's
    const bool tied = config.target == Target::FlagScale && m_space.model().embeddingOnLastStage();
    // Tied embeddings cost an all-reduce between the first and the last stage when a pipeline
    // closes (CostModel::tiedEmbeddingSync): the last stage's place enters the state.
    const bool tiedSync = m_space.model().embeddingOnLastStage();
    const bool exactK = config.max_pp > 0 || config.even_pp > 0;
    const int kCap = std::max(M - 1, 1);
    const double m1 = M - 1.0;
    // A floor on what one more layer adds to sum c: the fastest one-layer stage of the
    // run's options, without recompute, p2p, embedding or output layer (stage times are
    // sums of per-layer times plus those non-negative extras: CostModel::estimateStage).
    double floor = std::numeric_limits<double>::infinity();
    // The same for the backward alone: j layers still to place drain at least j bwdFloor
    // (dominates()).
    double bwdFloor = std::numeric_limits<double>::infinity();
    const double inf0 = std::numeric_limits<double>::infinity();
    std::vector<double> rho;
    std::vector<int> probeLayers;
    // The time of one layer on a shape, as the floors take it: a middle stage without
    // recompute, p2p, embedding or output layer, whether it fits or not.
    auto oneLayer = [&](const StageShape& shape, int layer) {
        StageQuery q;
        q.shape = shape;
        q.first_layer = layer;
        q.num_layers = 1;
        q.from_end = 1;
        q.microbatches = M;
        q.fixed_level = 0;
        q.ignore_memory = true;
        q.middle = true;
        return m_eval.evaluate(q);
    };
    {
        // One layer of each kind the model has, wherever it is (a dense first layer only,
        // as DeepSeek's first_k_dense_replace = 1 gives, still needs its own probe: the MoE
        // layer's time is no floor for it), costed as a middle stage (StageQuery::middle).
        int denseLayer = -1, moeLayer = -1;
        for (int l = 0; l < N; ++l) {
            if (m_space.model().isMoeLayer(l) && moeLayer < 0)
                moeLayer = l;
            if (!m_space.model().isMoeLayer(l) && denseLayer < 0)
                denseLayer = l;
        }
        for (int layer : {denseLayer, moeLayer})
            if (layer >= 0)
                probeLayers.push_back(layer);
        // Every stage option at every position it may take (one per canonical start): a
        // group's time depends on where it sits (one node or two, the NIC), and a floor taken
        // at one position only is no floor. On a type whose nodes differ in size a size may
        // not even fit at the end of the type's positions (8 devices on nodes of 8 and 2).
        rho.assign(static_cast<std::size_t>(m_space.numTypes()), std::numeric_limits<double>::infinity());
        cand.forEachOption([&](int h, int d, const std::vector<int>& knobs) {
            // Valid groups start inside a node at a multiple of d or at a node's first device
            // (SearchSpace::validGroup); on a regular type the first node has every
            // canonical start.
            const TypeInfo& t = m_space.types()[static_cast<std::size_t>(h)];
            auto probeAt = [&](int start) {
                if (!m_space.validGroup(h, start, d))
                    return;
                for (int ki : knobs) {
                    const Knob& k = m_space.knobs(h, d)[static_cast<std::size_t>(ki)];
                    if (!m_space.knobFits(h, start, d, k))
                        continue;
                    const StageShape shape{h, start, d, ki, config.batch / k.dp};
                    for (int layer : probeLayers) {
                        const StageCost one = oneLayer(shape, layer);
                        const double c1 = one.c;
                        floor = std::min(floor, c1);
                        bwdFloor = std::min(bwdFloor, one.bwd);
                        double& r = rho[static_cast<std::size_t>(h)];
                        r = std::min(r, c1 * d);
                    }
                }
            };
            const std::size_t nodes = t.regular ? std::min<std::size_t>(1, t.node_start.size()) : t.node_start.size();
            for (std::size_t n = 0; n < nodes; ++n) {
                const int first = t.node_start[n], count = t.node_counts[n];
                if (d > count)
                    probeAt(first);
                for (int start = first; d <= count && start + d <= first + count; start += d)
                    probeAt(start);
            }
        });
        if (!(floor < std::numeric_limits<double>::infinity())) {
            floor = 0;
            std::fill(rho.begin(), rho.end(), 0.0);
        }
        if (!(bwdFloor < std::numeric_limits<double>::infinity()))
            bwdFloor = 0;
    }
    // A floor on the bottleneck of the stages still to come: j layers on the devices left,
    // a stage of d devices of type h needing at least n rho_h / d (rho_h: the least
    // device-seconds of one layer on type h), so max c >= j / sum_h (R_h / rho_h).
    auto capacityFloor = [&](const Partial& q) {
        if (q.j <= 0)
            return 0.0;
        double speed = 0;
        for (int h = 0; h < m_space.numTypes(); ++h) {
            if (!(config.type_mask & (1u << h)))
                continue;
            int left;
            if (q.k == 0)
                left = m_space.types()[static_cast<std::size_t>(h)].total;
            else if (h == q.cur)
                left = q.m;
            else if (q.mask & (1u << h))
                left = 0;
            else
                left = m_space.types()[static_cast<std::size_t>(h)].total;
            const double r = rho[static_cast<std::size_t>(h)];
            if (left > 0) {
                if (r <= 0)
                    return 0.0;
                if (r < std::numeric_limits<double>::infinity())
                    speed += left / r;
            }
        }
        return speed > 0 ? q.j / speed : std::numeric_limits<double>::infinity();
    };

    std::vector<FlatMap<StateKey, int, StateKeyHash>> buckets(static_cast<std::size_t>(N + 1));
    std::vector<std::vector<int>> order(static_cast<std::size_t>(N + 1));
    std::vector<State>& states = m_scratch->states;
    std::vector<Entry>& entries = m_scratch->entries;
    std::vector<Final> finals;
    const std::size_t keep = static_cast<std::size_t>(std::max(1, config.keep));
    // Dominators that retire a partial plan: one, or with exact alternatives as many as the
    // plans kept (docs/search.md section 5).
    const std::size_t retire = config.exact_alternatives ? keep : 1;
    const int retireCount = static_cast<int>(retire);

    auto keyOf = [&](const Partial& p) {
        StateKey k{};
        k[0] = p.j;
        k[1] = exactK ? p.k : std::min(p.k, kCap);
        k[2] = static_cast<std::int32_t>(p.mask);
        k[3] = p.cur;
        k[4] = p.m;
        k[5] = p.k > 0 ? p.next.d : 0;
        k[6] = tiedSync && p.k > 0 ? 1 + p.last.type + 64 * p.last.d : 0;   // its start is the type's total - d
        k[7] = tied ? p.tie_tp : 0;
        k[8] = tied || tiedSync ? p.tie_dp : 0;   // the all-reduce reads both ends' DP
        return k;
    };
    // Knob fronts of this run, keyed by what a stage's cost reads except the knob.
    FlatMap<FrontKey, std::vector<FrontItem>, FrontKeyHash> fronts;
    // Per stage shape (type, nodes, knob; the micro-batch follows from the knob in a run):
    // the least time of one layer without recompute, p2p, embedding or output layer. A stage
    // of n layers of that shape costs at least n times it (same argument as `floor`).
    std::unordered_map<std::uint64_t, double> knobFloors;
    auto knobFloor = [&](const StageShape& sh) {
        if (!(floor > 0))
            return 0.0;
        const std::uint64_t key = static_cast<std::uint64_t>(sh.type)
            | static_cast<std::uint64_t>(m_space.canonicalStart(sh.type, sh.start)) << 8
            | static_cast<std::uint64_t>(sh.d) << 28 | static_cast<std::uint64_t>(sh.knob) << 44;
        auto it = knobFloors.find(key);
        if (it != knobFloors.end())
            return it->second;
        double best = inf0;
        for (int layer : probeLayers)
            best = std::min(best, oneLayer(sh, layer).c);
        if (!(best < inf0))
            best = 0;
        knobFloors.emplace(key, best);
        return best;
    };
    std::vector<int> moePrefix(static_cast<std::size_t>(N + 1), 0);
    for (int l = 0; l < N; ++l)
        moePrefix[static_cast<std::size_t>(l + 1)] = moePrefix[static_cast<std::size_t>(l)] + (m_space.model().isMoeLayer(l) ? 1 : 0);
    auto frontKey = [&](const Choice& c, const Partial& p, bool first) {
        const int fl = p.j - c.n;
        FrontKey k;
        k.a = static_cast<std::uint64_t>(c.shape.type)
            | static_cast<std::uint64_t>(m_space.canonicalStart(c.shape.type, c.shape.start)) << 8
            | static_cast<std::uint64_t>(c.shape.d) << 24 | static_cast<std::uint64_t>(c.n) << 40
            | static_cast<std::uint64_t>(first) << 52;
        k.b = static_cast<std::uint64_t>(moePrefix[static_cast<std::size_t>(p.j)] - moePrefix[static_cast<std::size_t>(fl)])
            | static_cast<std::uint64_t>(p.j == N) << 12 | static_cast<std::uint64_t>(std::min(p.k + 1, M)) << 13
            | static_cast<std::uint64_t>(p.k > 0) << 40;
        if (p.k > 0)
            k.c = static_cast<std::uint64_t>(p.next.type)
                | static_cast<std::uint64_t>(m_space.canonicalStart(p.next.type, p.next.start)) << 8
                | static_cast<std::uint64_t>(p.next.d) << 24
                | static_cast<std::uint64_t>(
                      m_space.shareNode(c.shape.type, c.shape.start, c.shape.d, p.next.type, p.next.start, p.next.d))
                    << 40;
        return k;
    };
    auto bound = [&]() {
        return finals.size() < keep ? std::numeric_limits<double>::infinity() : finals.back().objective;
    };
    // A whole plan as the merge returns it (docs/search.md section 1).
    auto planOf = [&](const Final& f) {
        Plan plan;
        plan.target = config.target;
        plan.vpp = 1;
        plan.distributed_optimizer = m_eval.distributedOptimizer();
        plan.optimizer_offload_fraction = m_eval.offloadFraction();
        plan.global_batch_size = config.batch * M;
        plan.stages.push_back(m_eval.makeStage(f.choice.shape, 0, f.choice.n, f.level, modules));
        int at = f.choice.n;
        for (int ei = f.parent; ei >= 0;) {
            const Entry& e = entries[static_cast<std::size_t>(ei)];
            plan.stages.push_back(m_eval.makeStage(e.choice.shape, at, e.choice.n, e.level, modules));
            at += e.choice.n;
            ei = e.parent;
        }
        // Sequence parallelism wherever TP splits a stage; Megatron-LM turns it off where TP
        // is 1 (validate_args), and the plan says so, as its launcher and a re-import do.
        plan.sequence_parallel = std::any_of(plan.stages.begin(), plan.stages.end(), [](const StagePlan& st) { return st.tp > 1; });
        return plan;
    };
    // A plan the target cannot run (a rule the stage options do not express, such as
    // Megatron-LM's node order) must neither be kept nor become the other jobs' bound: it
    // would prune the plans that can run (the merge drops it only afterwards).
    // The same plan comes again from the next bottleneck pass, and the same stages with more
    // recompute from a later level: finals keep one copy of each alternative (alternativeKey).
    auto addFinal = [&](Final f) {
        if (finals.size() >= keep && f.objective >= finals.back().objective)
            return;
        const Plan plan = planOf(f);
        if (!cand.runnable(plan))
            return;
        f.key = alternativeKey(plan);
        if (!keepDistinct(finals, f, keep, [](const Final& x) { return x.objective; },
                          [](const Final& x) -> const std::string& { return x.key; }))
            return;
        control.offerBest(finals.front().objective);
        if (control.incumbent)
            control.incumbent->offer(f.objective, f.key);
    };

    // Bottleneck cap (docs/search.md section 4): a pass only admits stages with c <= cap.
    // Any plan whose bottleneck exceeds the cap costs more than (M - 1) cap + N floor, so
    // once the keep-th best plan found (or another job's) is below that, the pass was
    // exact; otherwise the cap rises to the level that makes it so, and one more pass
    // settles it. Tight caps remove most stage options, which makes the passes cheap.
    long long loadPruned = 0, memPruned = 0, commPruned = 0, expanded = 0;
    // The work: the partial plans (entries) the expanded states extend, each by every stage
    // option. With K plans asked for a state keeps up to K of them per Pareto point, so
    // counting states would let the exact check's budget run many times as long.
    long long extended = 0;
    long long counted10 = 0;   // the work (RunControl::stopAfter) of these counts already counted
    auto flush = [&]() {
        if (control.pass_work_limit > 0)   // the work since the last look (stopNow)
            control.pass_work += 10 * extended + memPruned - counted10;
        control.states += expanded;
        control.extended += extended;
        control.pruned_load += loadPruned;
        control.pruned_memory += memPruned;
        control.pruned_comm += commPruned;
        expanded = extended = loadPruned = memPruned = commPruned = 0;
        counted10 = 0;
    };
    // Every 64 states, or after kLookEvery10 tenths of work: stop? The work since the last look
    // counts against a pass's work limit.
    constexpr long long kLookEvery10 = 10 * 2048;
    auto stopNow = [&]() {
        const long long now10 = 10 * extended + memPruned;
        const long long work10 = now10 - counted10;
        counted10 = now10;
        return control.stopAfter(work10);
    };
    const double inf = std::numeric_limits<double>::infinity();
    // The other jobs' best, as far above it as this run may keep plans (RunConfig::incumbent_slack).
    auto incumbentBound = [&]() { return control.incumbent ? control.incumbent->bound() * config.incumbent_slack : inf; };
    Partial rootPartial;
    rootPartial.j = N;
    const double c0 = capacityFloor(rootPartial);
    if (c0 == inf)
        return result;   // no device in the run's types
    double cap = (c0 > 0 && M > 1) ? c0 * 1.05 : inf;
    bool capped = false;
    for (int pass = 0;; ++pass) {
        states.clear();
        entries.clear();
        finals.clear();
        for (auto& b : buckets)
            b.clear();
        for (auto& o : order)
            o.clear();
        capped = false;
        fronts.clear();   // fronts leave out knobs above this pass's cap
        const double inc0 = incumbentBound();
        if (inc0 < inf && M > 1) {
            const double need = (inc0 - floor * N) / (M - 1);
            if (need < c0)
                break;   // no plan of this run can beat the other jobs' best
            cap = std::min(cap, need * (1 + 1e-12));
        }
        // Root: nothing placed.
        {
            State root;
            root.p.j = N;
            root.p.k = 0;
            Entry e;
            entries.push_back(e);
            root.entries.push_back({0.0, 0.0, 0.0, 0.0, 0.0, 0});
            root.widen(0.0);
            states.push_back(root);
            buckets[static_cast<std::size_t>(N)].emplace(keyOf(root.p), 0);
            order[static_cast<std::size_t>(N)].push_back(0);
        }


        std::vector<EntryRef> live;   // reused: no allocation per state
        std::vector<std::size_t> firstCover;   // per live entry, reused (apply)
        std::vector<double> lowS;   // reused (apply, K plans)
        // Progress (the bar only): the first pass, with its tight cap, is cheap; the second,
        // when there is one, takes most of the time. A first pass without a cap is the only
        // one. Within a pass the states crowd where the first third to half of the layers is
        // placed (Mixtral-L over mixed-1088: 35, 76 and 90 % of a 1.2 s pass done at 31, 42
        // and 50 % of the layers), so x layers placed of N count as 1 - (1 - x / N)^2 of it.
        // docs/search.md section 5.
        auto passDone = [&](double placed) {
            const double left = 1.0 - placed / N;
            const double done = 1.0 - left * left;
            if (pass == 0)
                progress.set(cap < inf ? 0.2 * done : done);
            else
                progress.set(0.2 + 0.8 * done);
        };
        for (int j = N; j >= 1; --j) {
            const std::vector<int> bucketStates = order[static_cast<std::size_t>(j)];
            std::size_t at = 0;
            for (int si : bucketStates) {
                ++at;
                // Every 64 states, or sooner when they hold many partial plans (K plans asked
                // for keep up to K a Pareto point: 64 states of Mixtral-S on 16-1 with --top
                // 1000 took over a second, past --time-limit).
                if (((expanded & 63) == 0 || 10 * extended + memPruned - counted10 >= kLookEvery10) && stopNow()) {
                    result.complete = false;
                    break;
                }
                ++expanded;
                const Partial p = states[static_cast<std::size_t>(si)].p;
                // Entries of this state that are still worth extending.
                live.clear();
                {
                    const double inc = incumbentBound();
                    const double loc = bound();
                    const double capC = capacityFloor(p);
                    std::vector<EntryRef>& own = states[static_cast<std::size_t>(si)].entries;
                    // What the rest adds at least: its sum s >= floor j, and the wait drops
                    // below A by no more than the rest's backward, a part of s, so s + wait >=
                    // max(floor j, A) (docs/search.md section 3).
                    for (const EntryRef& e : own) {
                        const double lb = e.S + (M - 1) * std::max(e.C, capC) + std::max(floor * p.j, e.A) + e.B;
                        if (lb > inc || lb >= loc)
                            continue;
                        live.push_back(e);
                    }
                    // Nothing reads a state's set once it is expanded (plans are rebuilt
                    // from `entries`): its memory goes back to the allocator for the
                    // states being filled, which keeps the peak down.
                    std::vector<EntryRef>().swap(own);
                }
                if (live.empty())
                    continue;
                extended += static_cast<long long>(live.size());
                // One stage option (with its knob) applied to every live entry of the state.
                // With a knob front, the knob is the front's `knobIndex`-th and an entry whose
                // `firstCover` is below it is left out: the caller has applied that earlier
                // knob (with exact alternatives, K earlier knobs) of the same stage option,
                // whose candidate from such an entry dominates this knob's (coversAll: a step
                // within the entry's B, and a c smaller by enough to pay for a larger A or L),
                // so the earlier ones dominate (or were pruned by bounds this one cannot pass:
                // the bound grows with S + A), and the sets are the same.
                auto apply = [&](const Choice& c, const StageCost& sc, std::size_t knobIndex = 0) {
                    auto covered = [&](std::size_t li) { return knobIndex > 0 && firstCover[li] < knobIndex; };
                    if (sc.c > cap) {
                        capped = true;
                        return;
                    }
                    const bool first = c.n == p.j;
                    const Partial q2 = first ? Partial{} : cand.after(p, c);
                    const double tiedAr = first && tiedSync && p.k > 0 ? m_eval.tiedSync(c.shape, p.last) : 0.0;
                    const double capC = first ? 0.0 : capacityFloor(q2);
                    if (capC == std::numeric_limits<double>::infinity())
                        return;   // layers left but no device left
                    // What the stages before this one drain at least (dominates()).
                    const double drained = bwdFloor * q2.j;
                    const double inc = incumbentBound();
                    // Every candidate of this call has C >= max(c, capC), A >= sync and B >= step,
                    // and an entry with C, A - bwd and B within those maps onto exactly them
                    // (A = max(sync, A - bwd): the stage's backward is part of the drain of
                    // every stage after it). So the least S of such entries, Sa, gives a
                    // candidate that dominates the candidate of any entry with S > Sa: those
                    // are left out (the Pareto insertion would drop them too). Not for the first stage, whose candidates
                    // are plans ranked by objective, not a Pareto set.
                    // With tied embeddings the candidates keep their entries' L less the same
                    // backward, so the one of least S (La its L) dominates those with
                    // S > Sa + max(0, La - L). With
                    // exact alternatives (K plans), Sa is the K-th least such S: K candidates
                    // must dominate the ones left out (not counted with tied embeddings, where
                    // the shortcut is left out).
                    double Sa = kInf, La = 0;
                    if (!first && !(retire > 1 && tiedSync)) {
                        const double Cmin = std::max(sc.c, capC);
                        lowS.clear();
                        for (std::size_t li = 0; li < live.size(); ++li) {
                            const EntryRef& e = live[li];
                            if (e.C <= Cmin && e.A - sc.bwd <= sc.sync && e.B <= sc.step && !covered(li)) {
                                if (retire > 1)
                                    lowS.push_back(e.S);
                                else if (e.S < Sa || (e.S == Sa && e.L < La)) {
                                    Sa = e.S;
                                    La = e.L;
                                }
                            }
                        }
                        if (retire > 1 && lowS.size() >= retire) {
                            std::nth_element(lowS.begin(), lowS.begin() + static_cast<std::ptrdiff_t>(retire - 1), lowS.end());
                            Sa = lowS[retire - 1];
                        }
                    }
                    int target = -1;
                    for (std::size_t li = 0; li < live.size(); ++li) {
                        const EntryRef& e = live[li];
                        if (e.S > Sa + std::max(0.0, La - e.L) || covered(li))
                            continue;
                        const double S = e.S + sc.c;
                        // The stages still to come have a bottleneck of at least capC, so a
                        // smaller max c so far makes no difference: max(C, capC) is exact
                        // and lets more entries dominate one another.
                        const double C = std::max(std::max(e.C, sc.c), capC);
                        // A: the latest sync end so far, counted from the end of this stage's last
                        // backward; the syncs of the stages after it start that much earlier,
                        // their drain (docs/cost-model.md section 8).
                        const double A = std::max(sc.sync, e.A - sc.bwd), B = std::max(e.B, sc.step);
                        // The last stage's sync end the same way: set by the first stage placed
                        // (the pipeline's last).
                        const double L = tiedSync ? (p.k == 0 ? sc.sync : e.L - sc.bwd) : 0.0;
                        // What the rest of the pipeline adds at least (strict test against the
                        // other jobs' best: see Incumbent; max(floor j, A): see the live set).
                        const double lb = S + (M - 1) * std::max(C, capC) + std::max(floor * q2.j, A) + B;
                        if (lb >= bound() || lb > inc)
                            continue;
                        const int parent = p.k == 0 ? -1 : e.idx;
                        if (first) {
                            // The wait for the barrier: the latest sync end, or the end stages' later
                            // sync end plus the tied all-reduce (docs/cost-model.md section 8), all
                            // from the end of this stage's last backward.
                            const double wait = barrierWaitTime(A, std::max(L, sc.sync), tiedAr);
                            // Written as lb is (q2.j = 0 here): with no all-reduce the two are the
                            // same number, which the strict incumbent test of the next bottleneck
                            // pass needs (a plan's lb must not exceed its own objective).
                            addFinal({S + (M - 1) * C + wait + B, c, sc.level, parent});
                            continue;
                        }
                        if (target < 0) {
                            const StateKey key = keyOf(q2);
                            const auto [slot, added]
                                = buckets[static_cast<std::size_t>(q2.j)].emplace(key, static_cast<int>(states.size()));
                            if (added) {
                                State ns;
                                ns.p = q2;
                                states.push_back(std::move(ns));
                                order[static_cast<std::size_t>(q2.j)].push_back(*slot);
                            }
                            target = *slot;
                        }
                        // Insertion into the state's set (dominates() over (S, C, A, B, L)). The
                        // S bounds serve the one-dominator pass; the sorted K pass below starts
                        // and stops by S itself.
                        State& ts = states[static_cast<std::size_t>(target)];
                        std::vector<EntryRef>& list = ts.entries;
                        const EntryRef fresh{S, C, A, B, L, -1};
                        // The entry kept: its stage in the entry table, its values in the set.
                        auto newEntry = [&](int dominatedBy) {
                            ts.widen(S);
                            Entry ne;
                            ne.parent = parent;
                            ne.choice = c;
                            ne.level = sc.level;
                            entries.push_back(ne);
                            EntryRef kept = fresh;
                            kept.idx = static_cast<int>(entries.size()) - 1;
                            kept.dominators = dominatedBy;
                            return kept;
                        };
                        const bool mayBeDominated = S >= ts.loS, mayDominate = S <= ts.hiS;
                        int dominators = 0;
                        if (retire == 1 && (mayBeDominated || mayDominate)) {
                            // One dominator retires an entry: in one pass. No entry of the list
                            // dominates another and the relation is transitive, so once the new
                            // entry has dominated one (and compaction has begun), no later entry
                            // can dominate the new one: a dominated entry is always found before
                            // anything has moved.
                            bool dominated = false;
                            std::size_t kept = 0, r = 0;
                            for (; r < list.size(); ++r) {
                                const EntryRef& o = list[r];
                                if (mayBeDominated && dominates(m1, drained, o, fresh)) {
                                    dominated = true;
                                    break;
                                }
                                if (mayDominate && dominates(m1, drained, fresh, o))
                                    continue;   // the new entry dominates this one: drop it
                                if (kept != r)
                                    list[kept] = o;
                                ++kept;
                            }
                            if (dominated) {
                                // Rounding aside, nothing was dropped before (transitivity);
                                // if it was, the list still closes up.
                                if (kept != r)
                                    list.erase(list.begin() + static_cast<std::ptrdiff_t>(kept), list.begin() + static_cast<std::ptrdiff_t>(r));
                                continue;
                            }
                            list.resize(kept);
                        } else if (retire > 1) {
                            // Exact alternatives (K plans): an entry goes only when K entries of
                            // the set dominate it. Each of them, completed as it would be, gives a
                            // distinct plan no slower, so the entry's plans are not among the K
                            // best (docs/search.md section 5). An entry counts for another only
                            // if it was there first or is not dominated by it in return, which
                            // orders the counts (no two equal entries retire each other). The
                            // set is kept sorted by S: what dominates the new entry lies before
                            // it (S no larger), what it dominates from its place on.
                            const auto at = std::lower_bound(list.begin(), list.end(), S,
                                                             [](const EntryRef& o, double v) { return o.S < v; });
                            for (auto it = list.begin(); it != list.end() && it->S <= S; ++it)
                                if (dominates(m1, drained, *it, fresh) && ++dominators >= retireCount)
                                    break;
                            if (dominators >= retireCount)
                                continue;
                            std::size_t kept = static_cast<std::size_t>(at - list.begin());
                            const std::size_t place = kept;
                            for (std::size_t r = kept; r < list.size(); ++r) {
                                EntryRef o = list[r];
                                if (dominates(m1, drained, fresh, o) && !dominates(m1, drained, o, fresh)
                                    && ++o.dominators >= retireCount)
                                    continue;
                                list[kept++] = o;
                            }
                            list.resize(kept);
                            list.insert(list.begin() + static_cast<std::ptrdiff_t>(place), newEntry(dominators));
                            continue;
                        }
                        list.push_back(newEntry(dominators));
                    }
                };
                // Evaluates one knob; false when memory or communication prunes it.
                auto evaluate = [&](const Choice& c, StageCost& sc) {
                    StageQuery q;
                    q.shape = c.shape;
                    q.first_layer = p.j - c.n;
                    q.num_layers = c.n;
                    q.from_end = p.k;
                    q.microbatches = M;
                    q.next = p.k > 0 ? &p.next : nullptr;
                    q.fixed_level = config.fixed_level;
                    q.no_selective = !config.perStageSelective();
                    q.selective_modules = modules;
                    sc = m_eval.evaluate(q);
                    if (!sc.fits) {
                        ++memPruned;
                        ++result.memory_pruned;
                        noteShortfall(result, m_space, c, sc.shortfall_gib, sc.short_on_host);
                        return false;
                    }
                    if (config.comm_prune && sc.hetero_comm > config.eta * sc.compute) {
                        ++commPruned;
                        return false;
                    }
                    return true;
                };
                // One state may hold thousands of partial plans when K plans are asked for,
                // each extended by every option against lists as long: its options look to
                // stop every 16 groups too (a state of Mixtral-S on 16-1 with --top 1000 ran
                // 0.8 s past --time-limit), and a stop leaves the state half done.
                bool stoppedInState = false;
                int groupsSinceLook = 0;
                cand.forEachGroup(
                    p,
                    [&](Choice c, const std::vector<int>& knobs) {
                        if (stoppedInState || (++groupsSinceLook % 16 == 0 && stopNow())) {
                            stoppedInState = true;
                            return;
                        }
                        const bool first = c.n == p.j;
                        // Before any knob is evaluated: the stage needs at least n rho_h / d
                        // (rho_h: least device-seconds of one layer on type h), so a stage
                        // above the cap, or one that cannot bring any live entry under the
                        // best plans, is skipped without calling the cost model (exact: the
                        // same bounds as in apply, with c replaced by its floor).
                        {
                            const double cl = c.n * rho[static_cast<std::size_t>(c.shape.type)] / c.shape.d;
                            if (cl > cap && cl < inf) {
                                capped = true;
                                return;
                            }
                            double capQ = 0;
                            if (!first) {
                                Partial q;
                                q.j = p.j - c.n;
                                q.k = p.k + 1;
                                q.mask = p.mask | (1u << c.shape.type);
                                q.cur = c.shape.type;
                                q.m = c.shape.start;
                                capQ = capacityFloor(q);
                                if (capQ == inf)
                                    return;   // layers left but no device left
                            }
                            const double inc = incumbentBound();
                            const double loc = bound();
                            bool any = false;
                            for (const EntryRef& e : live) {
                                const double C = std::max(std::max(e.C, cl), capQ);
                                const double lb = e.S + (M - 1) * C + std::max(cl + floor * (p.j - c.n), e.A) + e.B;
                                if (!(lb >= loc || lb > inc)) {
                                    any = true;
                                    break;
                                }
                            }
                            if (!any)
                                return;
                        }
                        const auto& kl = m_space.knobs(c.shape.type, c.shape.d);
                        if (first || (tied && p.k == 0)) {
                            // The first stage must pass the target's rules on its own knobs
                            // (micro-batch, tied embeddings), and the last stage's TP and DP
                            // enter the state (tied embeddings): no knob may be dropped here.
                            for (int ki : knobs) {
                                c.shape.knob = ki;
                                c.shape.mbs = config.batch / kl[static_cast<std::size_t>(ki)].dp;
                                if (first && !cand.acceptFirst(p, c))
                                    continue;
                                if (c.n * knobFloor(c.shape) > cap) {
                                    capped = true;   // apply would refuse it
                                    continue;
                                }
                                StageCost sc;
                                if (evaluate(c, sc))
                                    apply(c, sc);
                            }
                            return;
                        }
                        // Elsewhere a stage's knobs reach the rest of the pipeline only through
                        // (c, bwd, sync, step): keep the knobs no other dominates (exact).
                        const FrontKey fk = frontKey(c, p, first);
                        const std::vector<FrontItem>* front = fronts.find(fk);
                        if (!front) {
                            std::vector<FrontItem> all;
                            for (int ki : knobs) {
                                if (first && kl[static_cast<std::size_t>(ki)].dp * config.mbs0 != config.batch)
                                    continue;   // the first mesh runs the given micro-batch size
                                c.shape.knob = ki;
                                c.shape.mbs = config.batch / kl[static_cast<std::size_t>(ki)].dp;
                                // A knob whose floor is above the cap would be refused by
                                // apply, and every knob it dominates as well: leaving it out
                                // of the front changes nothing but the cost-model calls.
                                if (c.n * knobFloor(c.shape) > cap) {
                                    capped = true;
                                    continue;
                                }
                                StageCost sc;
                                if (evaluate(c, sc))
                                    all.push_back({ki, sc});
                            }
                            std::stable_sort(all.begin(), all.end(), [](const FrontItem& a, const FrontItem& b) {
                                if (a.cost.c != b.cost.c)
                                    return a.cost.c < b.cost.c;
                                if (a.cost.sync != b.cost.sync)
                                    return a.cost.sync < b.cost.sync;
                                return a.cost.step < b.cost.step;
                            });
                            // Sorted by c: a knob is dominated when one kept before it has no
                            // larger step and a c smaller by enough to pay for its larger sync or
                            // smaller backward (from any entry, the two candidates then satisfy
                            // dominates(): A and L differ by at most max(0, sync_g - sync_f,
                            // bwd_f - bwd_g)); with exact alternatives (K plans), when K kept before
                            // it do (each gives a distinct plan no slower than it would).
                            auto knobDominates = [](const StageCost& g, const StageCost& f) {
                                return g.step <= f.step && g.c + std::max({0.0, g.sync - f.sync, f.bwd - g.bwd}) <= f.c;
                            };
                            std::vector<FrontItem> kept;
                            for (const FrontItem& f : all)
                                if (static_cast<std::size_t>(std::count_if(kept.begin(), kept.end(), [&](const FrontItem& g) {
                                        return knobDominates(g.cost, f.cost);
                                    })) < retire)
                                    kept.push_back(f);
                            for (std::size_t g = 0; g < kept.size(); ++g) {
                                kept[g].coversLater = true;
                                for (std::size_t h = g + 1; h < kept.size() && kept[g].coversLater; ++h)
                                    kept[g].coversLater = kept[g].cost.c + std::max(0.0, kept[h].cost.bwd - kept[g].cost.bwd) <= kept[h].cost.c;
                            }
                            front = fronts.emplace(fk, std::move(kept)).first;
                        }
                        // The front is sorted by c: an entry gains nothing from the knobs after
                        // one whose candidate dominates theirs (apply). firstCover: the first such
                        // knob of each live entry, or with exact alternatives (K plans) the K-th
                        // (K candidates must dominate the later ones).
                        const std::size_t nf = front->size();
                        // Knob g covers entry e when its candidate from e dominates every later
                        // knob's: its step within e's B (B stays e's), and a c smaller by enough
                        // to pay for its A (max(sync, A - bwd), as apply computes it) above
                        // each later one's, and with tied embeddings for its smaller backward
                        // (L goes down by less: FrontItem::coversLater).
                        // A is compared above what the stages before drain at least (dominates()).
                        const double drained = bwdFloor * (p.j - c.n);
                        auto coversAll = [&](const EntryRef& e, std::size_t g) {
                            const FrontItem& fg = (*front)[g];
                            if (fg.cost.step > e.B || (tiedSync && !fg.coversLater))
                                return false;
                            const double Ag = std::max(0.0, std::max(fg.cost.sync, e.A - fg.cost.bwd) - drained);
                            for (std::size_t h = g + 1; h < nf; ++h) {
                                const StageCost& ch = (*front)[h].cost;
                                const double Ah = std::max(0.0, std::max(ch.sync, e.A - ch.bwd) - drained);
                                if (fg.cost.c + std::max(0.0, Ag - Ah) > ch.c)
                                    return false;
                            }
                            return true;
                        };
                        firstCover.assign(live.size(), nf);
                        for (std::size_t li = 0; nf > retire && li < live.size(); ++li) {
                            std::size_t covers = 0;
                            for (std::size_t g = 0; g + 1 < nf; ++g)
                                if (coversAll(live[li], g) && ++covers == retire) {
                                    firstCover[li] = g;
                                    break;
                                }
                        }
                        for (std::size_t fi = 0; fi < nf; ++fi) {
                            const FrontItem& f = (*front)[fi];
                            c.shape.knob = f.knob;
                            c.shape.mbs = config.batch / kl[static_cast<std::size_t>(f.knob)].dp;
                            apply(c, f.cost, fi);
                        }
                    },
                    loadPruned);
                if (stoppedInState) {
                    result.complete = false;
                    break;
                }
                if (expanded >= 256) {
                    flush();
                    passDone(N - j + static_cast<double>(at) / bucketStates.size());
                    control.report();
                }
            }
            flush();
            if (result.complete)   // a stop may have left the bucket half done
                passDone(N - j + 1);
            control.report();
            if (!result.complete)
                break;
            // Free the bucket's memory; its states are done.
            buckets[static_cast<std::size_t>(j)] = {};
        }
        flush();
        if (!result.complete || !capped)
            break;
        double kth = finals.size() >= keep ? finals.back().objective : inf;
        kth = std::min(kth, incumbentBound());
        if (kth < inf) {
            const double need = (kth - floor * N) / (M - 1);
            if (need <= cap)
                break;   // every plan above the cap is worse than what is kept
            cap = need * (1 + 1e-12);
        } else {
            cap *= 2.0;
        }
    }
    flush();

    for (const Final& f : finals) {
        RunPlan rp;
        rp.objective = f.objective;
        rp.plan = planOf(f);
        result.plans.push_back(std::move(rp));
    }
    return result;
}

} // namespace hapmoe
