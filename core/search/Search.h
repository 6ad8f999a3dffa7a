#pragma once
// HS-DP (paper section 3.4, appendix C) and its oracle and baselines, over the 6-D space
// (DP, PP, TP, CP, EP, expert TP) with non-uniform layer splits, a device type per stage
// and the least recompute that fits (DESIGN section 5).

#include "cost/CostModel.h"
#include "plan/Plan.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hapmoe {

enum class Algorithm { HsDp, Exhaustive, Uniform, MetisStyle };
const char* toString(Algorithm a);

// Optimizer CPU offload (Megatron-Core --optimizer-cpu-offload, fraction 1.0) in the plans:
// never; only when no plan fits without it (as the paper did for Mixtral-L on its smallest
// clusters, appendix A); always; or wherever it is faster (the devices and each share
// searched, the fastest plan kept: docs/search.md section 1).
enum class OptimizerOffload { Never, IfNeeded, Always, Fastest };
const char* toString(OptimizerOffload o);

struct SearchOptions {
    Algorithm algorithm = Algorithm::HsDp;
    Target target = Target::Any;          // Any: the best target the cluster allows
    // With target Any: a plan Megatron-LM runs comes before a faster best plan only FlagScale
    // runs when within this share of its time (0.01: 1 %); 0 = off. Among the plans the search
    // finds (its Megatron-LM runs keep plans that far above the best; a Megatron-LM plan that
    // only a FlagScale run finds may be pruned). `hapmoe plan --script` of a Megatron-LM script
    // sets it (docs/search.md section 1).
    double prefer_megatron_within = 0;
    bool exact = false;                   // turn off the load-balance and communication prunings;
                                          // the top_k plans are then the exact K best
    double delta = 0.2;                   // load-balance tolerance
    double eta = 2.0;                     // heterogeneous communication threshold
    int top_k = 1;                        // distinct plans to return
    double time_limit_s = 0;              // 0 (or above 1e7) = none; else return the best so far
    int threads = 0;                      // 0 = hardware concurrency
    std::optional<int> global_batch_size; // default: the model's training spec
    std::optional<int> micro_batch_size;
    // Micro-batch sizes searched, each in a pass of its own (the first mesh's, as
    // micro_batch_size): the plans are the K fastest over them, and each baseline the fastest
    // of its own over them (docs/search.md section 9). Empty or one value: micro_batch_size
    // alone (or the value given here).
    std::vector<int> micro_batch_sizes;
    int max_pp = 0;                       // 0 = as many as the cluster and model allow
    bool baselines = true;                // also run uniform and Metis-style
    // After the pruned HS-DP search, the same search without the prunings for at most this
    // much work (0 = none): partial plans extended by the states expanded (a state keeps
    // more of them with K plans asked for), each stage option refused for memory counting a
    // tenth (at most 2 s for the paper's clusters on the 2-core machine of docs/search.md
    // section 8; counted, not timed, so that the answer is the same on any machine). When it
    // finishes, the plans are the exact best, as with `exact`; when it does not, the pruned
    // search's plans stand (docs/search.md section 7).
    long long exact_check_work = 1000000;
    OptimizerOffload optimizer_offload = OptimizerOffload::IfNeeded;
    std::optional<Plan> current;          // the user's current configuration, estimated too
    // Megatron-LM's interleaved 1F1B for the plans found: each plan Megatron-LM can run is
    // tried at 2 to max_vpp virtual stages per pipeline rank and kept in its fastest form
    // (docs/search.md section 10). 1 = plain 1F1B only, as the paper searches.
    int max_vpp = 1;
};

// What became of the exact check (SearchOptions::exact_check_work, docs/search.md section 7).
enum class ExactCheck {
    Off,            // not run: turned off, `exact`, another algorithm, no pruned plan, the prunings'
                    // fallback already searched without them, or the search stopped before it
    Finished,       // ran to its end: the plans are the exact best
    WorkBudget,     // stopped at its work budget: the pruned search's plans stand
    TimeLimit,      // stopped early enough to leave the baselines the pruned search's time
    Cancelled,      // stopped by a cancel
    NotTriedWork,   // not tried: the pruned search alone did more work than the budget
    NotTriedTime,   // not tried: the time limit left less than twice the pruned search's time
};
// "off", "finished", "work-budget", "time-limit", "cancelled", "not-tried-work", "not-tried-time"
const char* toString(ExactCheck c);

// What stopped the interleaving pass before its end (SearchResult::interleave_cut).
enum class InterleaveCut { No, TimeLimit, Cancelled };
// "time-limit", "cancelled" ("no" for No)
const char* toString(InterleaveCut c);

struct PruneCounters {
    long long load_balance = 0;
    long long memory = 0;
    long long communication = 0;

    PruneCounters& operator+=(const PruneCounters& o)
    {
        load_balance += o.load_balance;
        memory += o.memory;
        communication += o.communication;
        return *this;
    }
};

struct SearchProgress {
    long long states = 0;
    PruneCounters pruned;
    double best_time_s = 0;   // 0 when none yet
    double fraction = 0;      // 0..1 estimate of work done; 1 only when the search ran to its end
};

struct RankedPlan {
    Plan plan;
    Prediction prediction;
    // The same pipeline's iteration time under plain 1F1B when the search interleaved it
    // (SearchOptions::max_vpp); 0 otherwise.
    double plain_time_s = 0;
};

struct SearchResult {
    Algorithm algorithm = Algorithm::HsDp;
    Target target = Target::Any;   // with SearchOptions::target Any, the best plan's
    // SearchOptions::target as asked (Any included); absent in documents written before it.
    std::optional<Target> searched_target;
    std::vector<RankedPlan> plans;               // best first, distinct
    std::optional<RankedPlan> uniform_baseline;
    std::optional<RankedPlan> metis_baseline;
    std::optional<RankedPlan> current;
    // The current configuration was given but does not describe this model and cluster (a
    // model edited since the script was read: its stages hold other layers): why, and no
    // `current`. The search's own plans stand.
    std::string current_error;
    // How the current configuration was costed where it differs from the script as written,
    // or could not run: at the search's global batch, as the plans (or, when that batch is
    // no multiple of its DP x micro-batch, at its own, compared by time per sequence); no
    // launcher that can run it on this cluster. Empty otherwise.
    std::string current_note;
    long long states = 0;
    PruneCounters pruned;
    double time_s = 0;
    double main_time_s = 0;                      // the search itself, without the baselines
    bool timed_out = false;
    bool cancelled = false;
    // With K plans, the exact check's one-plan pass finished but its K-plan pass did not
    // (exact_check says why): plan #1 is the exact best, the others not known to be the next
    // best (the pruned search's, or the first pass's on the devices: docs/search.md section 7).
    bool exact_check_best = false;
    // The time limit or a cancel stopped the baselines' searches: they may be slower than
    // their best, or missing (an exhaustive search under a time limit runs them first).
    bool baselines_cut = false;
    bool list_cut = false;   // the time limit or a cancel ended `plans` before the top_k asked for
    OptimizerOffload optimizer_offload = OptimizerOffload::IfNeeded;   // the policy searched with
    bool offload_needed = false;                 // IfNeeded, Fastest: the (pruned) search found no plan without optimizer offload
    // The prunings discarded every feasible plan that a baseline found: the search ran again
    // without them (and returns that baseline when nothing faster exists).
    bool exact_fallback = false;
    // The exact check (SearchOptions::exact_check_work): what became of it (Finished: the
    // plans are the exact best); pruned_best_s: the pruned search's best time when the check
    // replaced its best plan (by a faster one, or by one without optimizer offload that the
    // prunings had hidden, which offload_needed then no longer says), else 0; exact_check_s
    // and exact_check_work: the time and the work the check took, whether or not it finished
    // (0: it did not run); exact_check_budget: its budget, when it was tried or not for it.
    ExactCheck exact_check = ExactCheck::Off;
    double pruned_best_s = 0;
    double exact_check_s = 0;
    long long exact_check_work = 0;
    long long exact_check_budget = 0;
    bool exactChecked() const { return exact_check == ExactCheck::Finished; }
    std::string no_plan_reason;                  // set when plans is empty
    // Device types the search left out, and why: the flex dispatcher's DeepEP does not run
    // on them (deepEpUnavailable). Empty when every node was searched.
    std::string devices_left_out;
    // The micro-batch sizes searched when there were several (SearchOptions::micro_batch_sizes),
    // in the order searched: those whose search started (a time limit or a cancel can stop
    // the passes before the last); empty for a search at one size.
    std::vector<int> micro_batch_sizes;
    // SearchOptions::max_vpp searched with; interleave_cut: whether a cancel or the time
    // limit ended the interleaving pass before it had tried every candidate (the rest stay
    // plain 1F1B; the search asked for had run: cancelled and timed_out are its own);
    // interleave_tried: the candidates it tried (not kept in documents).
    int max_vpp = 1;
    InterleaveCut interleave_cut = InterleaveCut::No;
    int interleave_tried = 0;
};

using ProgressCallback = std::function<void(const SearchProgress&)>;

// The micro-batch sizes a search tries when asked to choose one: 1, 2, 4 and 8 and the
// model's own, those that divide the global batch (1 always does), ascending.
std::vector<int> microBatchCandidates(int globalBatchSize, int own = 1);

// Runs the search. Cancellation: set *cancel to true from any thread; the search returns
// promptly with what it has. The progress callback is called from worker threads,
// at most every few milliseconds, and must be thread-safe.
SearchResult runSearch(const CostModel& cost, const SearchOptions& options,
                       const std::atomic<bool>* cancel = nullptr,
                       const ProgressCallback& progress = {});

// When the given current configuration (SearchOptions::current) fits and beats every plan
// found, the advice to keep it, naming its interleaved schedule when the search placed none
// that deep (SearchResult::max_vpp below its VPP); when the best plan takes the same time,
// that it does; empty otherwise. Times are compared per sequence of the global batch.
std::string currentConfigurationNote(const SearchResult& result);
// The seconds per sequence of the global batch of a plan: how plans of different global
// batches compare (the current configuration's own batch and the search's).
double secondsPerSequence(const RankedPlan& plan);

} // namespace hapmoe
