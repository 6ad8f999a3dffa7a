#pragma once
// One search run: a fixed deployment target, micro-batch layout and (for Megatron-LM and
// the baselines) fixed knobs, searched by HS-DP or by the exhaustive oracle. runSearch
// splits the whole space into runs and spreads them over threads. Internal to core/search.

#include "search/Search.h"
#include "search/SearchSpace.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hapmoe {

// How fast each device type of the search space runs the model (paper section 3.4, pruning 1),
// from the cost model, so that a profile's tables count. Indexed by SearchSpace type.
struct TypeSpeeds {
    std::vector<double> layers_per_s;   // P_h: layers per second of one device (TP 1)
    // The embedding a first stage runs and the output layer with its loss a last stage runs,
    // forward and backward, in layers of that type (0 when the stage holds neither).
    std::vector<double> first_extra;
    std::vector<double> last_extra;

    // Every type at one layer per second and no extra work (the oracle, which has no window).
    static TypeSpeeds uniform(int types)
    {
        const auto n = static_cast<std::size_t>(types);
        return {std::vector<double>(n, 1.0), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
    }
};

struct RunConfig {
    Target target = Target::FlagScale;   // Megatron or FlagScale, never Any
    int mbs0 = 1;                        // micro-batch size of the first mesh
    int batch = 1;                       // sequences per micro-batch step: DP_0 * mbs0
    int microbatches = 1;                // M = GBS / batch
    unsigned type_mask = ~0u;            // device types the run may use
    bool require_all_types = false;      // every type of type_mask must hold a stage
    bool all_devices = false;            // the plan must use every device (uniform baseline)
    // Megatron-LM (and the uniform baseline): one group size, knob tuple, recompute level.
    int fixed_d = 0;
    Knob fixed_knob;
    int fixed_level = -1;                // -1: each stage takes the least that fits
    // Metis-style: EP and ETP fixed on every stage (0 = free).
    int fixed_ep = 0, fixed_etp = 0;
    bool ignore_target_rules = false;    // baselines: the cost model's space, no launcher rules
    int even_pp = 0;                     // > 0: exactly this many stages with N / PP layers each
    bool load_balance = true;
    double delta = 0.2;
    bool comm_prune = true;
    double eta = 2.0;
    int max_pp = 0;
    // Heuristic: the stages of one device type all have the same group size (one FlagScale
    // mesh size per type); on with the other heuristics, off with `exact`.
    bool one_size_per_type = false;
    // --tp-comm-overlap (CostOptions::overlap.tp_comm) holds only for a pipeline of one TP
    // size (StageContext::tp_comm_overlap). With the switch on, a FlagScale run either keeps
    // every stage at one TP (only_tp) and costs the overlap, or mixes TP sizes and costs none.
    int only_tp = 0;                     // > 0: every stage has this TP
    bool tp_comm_overlap = true;         // StageContext::tp_comm_overlap of the run's stages
    int keep = 1;                        // complete plans to keep
    // The other jobs' best (Incumbent) times this bounds the run's plans: above 1 for
    // Megatron-LM runs of a search for either target (Search.cpp, kMegatronPreference).
    double incumbent_slack = 1.0;
    // Whether the keep plans are the exact keep best (a partial plan goes only when keep
    // others dominate it), or the best exactly and distinct others at least as slow as the
    // next ranks (one dominator suffices, much faster with many plans). On with `exact`.
    bool exact_alternatives = false;
    std::string label;                   // for the alternatives' names

    // Whether a stage that takes its own least recompute may take selective recompute:
    // FlagScale's per-stage lists switch only full recompute, and selective is one setting
    // for every stage (deploymentProblems, flagscale.selective-recompute), so a FlagScale run
    // goes from none to full. The baselines cost the model's own space.
    bool perStageSelective() const { return fixed_level >= 0 || target != Target::FlagScale || ignore_target_rules; }
};

struct RunPlan {
    double objective = 0;   // sum c + (M - 1) max c + wait for the barrier + max step (CostModel.h)
    Plan plan;
};

// Plans that are one alternative for the merge (the same stages on the same devices; the
// recompute settings aside, since the least recompute that fits is the faster copy) share
// this key. The keep-th best counts alternatives, not the copies of one plan that several
// jobs, bottleneck passes or recompute levels find: counted as many, they would make a bound
// that prunes the real second and third plans.
std::string alternativeKey(const Plan& plan);

// Inserts `item` into `list` (best first, at most `keep`) unless an alternative with its key
// is there already; a better copy replaces the one kept. Returns whether the list changed.
template <class T, class Objective, class Key>
bool keepDistinct(std::vector<T>& list, T item, std::size_t keep, Objective objective, Key key)
{
    const auto& itemKey = key(item);
    const auto same = std::find_if(list.begin(), list.end(), [&](const T& x) { return key(x) == itemKey; });
    if (same != list.end()) {
        if (objective(item) >= objective(*same))
            return false;
        list.erase(same);
    }
    if (list.size() >= keep && objective(item) >= objective(list.back()))
        return false;
    auto it = std::upper_bound(list.begin(), list.end(), objective(item),
                               [&](double v, const T& x) { return v < objective(x); });
    list.insert(it, std::move(item));
    if (list.size() > keep)
        list.pop_back();
    return true;
}

// The best objectives found so far by all jobs of one phase (main search, one baseline), one
// per alternative (alternativeKey): a job may drop a partial plan that cannot beat the
// `keep`-th of them. Strict comparison keeps the final list independent of which job
// finishes first.
class Incumbent {
public:
    explicit Incumbent(std::size_t keep) : m_keep(keep) {}
    void offer(double objective, const std::string& key);
    double bound() const { return m_bound.load(std::memory_order_relaxed); }

private:
    std::size_t m_keep;
    std::mutex m_mutex;
    std::vector<std::pair<double, std::string>> m_best;
    std::atomic<double> m_bound{std::numeric_limits<double>::infinity()};
};

// Shared between the threads of one runSearch: cancel, deadline, counters, progress.
struct RunControl {
    const std::atomic<bool>* cancel = nullptr;
    std::chrono::steady_clock::time_point deadline{};
    bool has_deadline = false;
    std::atomic<bool> timed_out{false};
    // A pass's own limits (the exact check, SearchOptions::exact_check_work): its work, in
    // tenths (10 per partial plan a state extends, 1 per stage option refused for memory:
    // stopAfter; a state keeps more partial plans when K plans are asked for), and
    // a deadline never later than the search's. Past either, stopAfter() (and stop(), for the
    // deadline) ends the pass without the search counting as timed out.
    std::chrono::steady_clock::time_point pass_deadline{};
    bool has_pass_deadline = false;
    long long pass_work_limit = 0;   // tenths; 0 = none
    std::atomic<long long> pass_work{0};
    std::atomic<long long> states{0};
    std::atomic<long long> extended{0};   // partial plans the states expanded extended (work)
    std::atomic<long long> pruned_load{0}, pruned_memory{0}, pruned_comm{0};
    std::atomic<double> best{0};
    std::mutex progress_mutex;
    ProgressCallback progress;
    std::chrono::steady_clock::time_point last_report{};
    double last_fraction = 0;          // the fraction last reported (never goes back)
    Incumbent* incumbent = nullptr;   // of the phase being run
    double layer_time_floor = 0;      // no layer runs faster than this on any stage (s)
    // Progress: the estimated work of the runs finished and of all jobs started so far
    // (Searcher::jobWork, per run: a job's further recompute settings join the total as
    // they start), so that a few heavy jobs count for what they take.
    std::atomic<double> work_done{0};
    double work_total = 1;
    // The part done of the jobs running now, one slot per worker thread: HS-DP moves its
    // slot as it places layers (JobProgress), so that the bar moves while a heavy job runs.
    // A worker clears its slot before it adds the job's whole work to work_done.
    std::unique_ptr<std::atomic<double>[]> running;
    int running_slots = 0;

    bool stop();                 // cancelled or past the deadline (sets timed_out)
    // stop(), after counting work10 tenths of work against the pass's work limit.
    bool stopAfter(long long work10);
    void addWork(double work);   // more work for work_total, from a worker thread
    void offerBest(double t);
    // finished: the search returns; only then does the fraction reach 1.
    void report(bool force = false, bool finished = false);
};

// Where a search run reports how far it got: its worker's slot in RunControl::running and
// its job's work. Without a slot (the exhaustive oracle, tests) it reports nothing.
struct JobProgress {
    std::atomic<double>* slot = nullptr;
    double work = 0;
    // done in [0, 1]: the share of the job's work done; never moves the slot back.
    void set(double done) const
    {
        if (!slot)
            return;
        const double v = work * std::clamp(done, 0.0, 1.0);
        if (v > slot->load(std::memory_order_relaxed))
            slot->store(v, std::memory_order_relaxed);
    }
};

// The stage that came closest to fitting when none does (at its most recompute): by how much
// it misses, and where ("H800, 16 devices, 15 layers"); gib < 0 when no stage missed.
struct Shortfall {
    double gib = -1;
    std::string type;    // its device type
    std::string where;
    bool closerThan(const Shortfall& o) const { return gib >= 0 && (o.gib < 0 || gib < o.gib); }
};

struct RunResult {
    std::vector<RunPlan> plans;   // best first
    // The stage of each device type (by the search space's type index) closest to fitting when
    // none fits at its most recompute, for the no-plan reason: the closest stage overall is the
    // closest of these, and may be of a type whose shortfall is not what keeps a plan out.
    std::vector<Shortfall> type_shortfall;
    long long memory_pruned = 0;
    bool complete = true;          // false when stopped early
};

} // namespace hapmoe
