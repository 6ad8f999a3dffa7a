#pragma once
// What the cost model says about a plan: per-stage times and memory, the iteration time
// and its breakdown. Times in seconds, memory in bytes (the JSON writer converts to GiB).

#include <algorithm>
#include <string>
#include <vector>

namespace hapmoe {

// How model FLOPs count the attention core (QK^T and the product with V). Megatron-LM's
// num_floating_point_operations counted the full s x s at core_r0.8.0 (the 2024 README
// figures); since then it counts the causal half ("/ 2 # causal mask", d98e8a64), so that
// MFU stays a fraction of the peak at long sequences.
enum class FlopCounting { CausalHalf, FullSquare };

// Megatron-LM's overlap switches, as the cost model assumes them (CostOptions::overlap) and
// as a prediction records them, so that a re-estimate of the same plan assumes the same.
struct OverlapSwitches {
    // --overlap-grad-reduce / --overlap-param-gather: DP traffic hides behind backward/forward.
    bool grad_reduce = true;
    bool param_gather = true;
    // --tp-comm-overlap (Transformer Engine userbuffers): TP collectives hide behind the GEMMs;
    // only with sequence parallelism, which Megatron-LM asserts for it.
    bool tp_comm = false;
    // Megatron-LM's overlap_p2p_comm (on by default; --no-overlap-p2p-communication turns it
    // off): with the interleaved schedule a chunk's send runs while the next chunk computes.
    // Megatron-LM turns it off for plain 1F1B, so it applies only with VPP > 1.
    bool p2p = true;
    bool operator==(const OverlapSwitches&) const = default;
};

struct MemoryBreakdown {
    double weights = 0;
    double gradients = 0;
    double optimizer = 0;
    double activations = 0;
    double moe_buffers = 0;
    double overhead = 0;
    double capacity = 0;     // the device's memory
    // Host memory this device's rank holds under optimizer offload (fp32 master weights, Adam
    // moments and the pinned gradient copy); not part of total(), which is device memory.
    double host = 0;
    // This rank's share of its node's host memory (the node's host_memory_gib over its
    // devices, the smallest over the stage's nodes); 0 when the cluster does not say.
    double host_capacity = 0;
    double total() const { return weights + gradients + optimizer + activations + moe_buffers + overhead; }
    bool hostFits() const { return host_capacity <= 0 || host <= host_capacity; }
    bool fits() const { return total() <= capacity && hostFits(); }
    // By how much the device misses, in bytes: the larger of the device-memory and the
    // host-memory shortfall (negative or zero when it fits).
    double shortfall() const
    {
        const double device = total() - capacity;
        return host_capacity > 0 ? std::max(device, host - host_capacity) : device;
    }
    // Whether shortfall() is the host memory's: its share misses by more than the device.
    bool shortOnHost() const { return host_capacity > 0 && host - host_capacity > total() - capacity; }
};

// Per micro-batch, per stage (one virtual chunk summed over the stage's layers).
struct StageEstimate {
    double t_fwd = 0;              // forward of one micro-batch, all of the stage's layers
    double t_bwd = 0;              // backward, including recompute
    // With interleaving (vpp > 1), each of the rank's chunks for one micro-batch, sends
    // included: the chunk's layers, the embedding in chunk 0 of the first rank, the output
    // layer in the last chunk of the last rank. They add up to t_fwd and t_bwd; empty without
    // interleaving.
    std::vector<double> chunk_fwd, chunk_bwd;
    // With interleaving and --overlap-grad-reduce, per chunk: its gradient buffer's reduce-
    // scatter (all-reduce without the distributed optimizer), bucket by bucket, its last bucket,
    // and the compute of one micro-batch's backward of the chunk it starts in; simulateInterleaved
    // places them after each chunk's last backward and sets dp_sync from them (docs/cost-model.md
    // section 7). Empty otherwise, and not kept in documents (whose dp_sync holds the result).
    std::vector<double> chunk_reduce, chunk_reduce_last, chunk_reduce_window;
    // The same for --overlap-param-gather: each chunk's parameter all-gather, its last (first
    // needed) bucket, and the chunk's forward compute of one micro-batch, which uses them; each
    // must end before the chunk's first forward of the iteration needs it.
    std::vector<double> chunk_gather, chunk_gather_last, chunk_gather_window;
    // Components of t_fwd + t_bwd, for the breakdown.
    double compute = 0;            // GEMMs, attention, router, experts (incl. imbalance), recompute
    double tensor_parallel = 0;    // TP/SP collectives and exposed CP exchange
    double expert_dispatch = 0;    // dispatch + combine (eq. 3), forward and backward
    double p2p_send = 0;           // activation send to the next stage, per micro-batch
    // Both passes' sends per micro-batch: t_fwd = forward compute + TP + dispatch + its send,
    // t_bwd the same for the backward (its gradient wait), and compute, TP and dispatch hold
    // both passes, so what remains of t_fwd + t_bwd is the two sends.
    double sends() const { return std::max(0.0, t_fwd + t_bwd - compute - tensor_parallel - expert_dispatch); }
    double dp_sync = 0;            // exposed gradient reduce-scatter + param all-gather, per iteration
    // Of dp_sync, on the first and last stage with tied embeddings and PP > 1: the all-reduce
    // of the embedding gradient between the two (CostModel::tiedEmbeddingSync).
    double embedding_sync = 0;
    // Of dp_sync, the exposed parameter all-gather of the distributed optimizer, which runs
    // after the optimizer step (the rest of dp_sync runs before the gradient-norm barrier).
    double param_gather = 0;
    double optimizer = 0;          // optimizer step, per iteration
    // The tail around the gradient-norm all-reduce, which spans every stage of the pipeline
    // (docs/cost-model.md section 8): what the stage does before it (its reduce-scatter) and
    // after it (its optimizer step and parameter all-gather). The tied all-reduce, between the
    // end stages' syncs and the barrier, is neither (barrierWait).
    double beforeBarrier() const { return std::max(0.0, dp_sync - embedding_sync - param_gather); }
    double afterBarrier() const { return optimizer + param_gather; }
    // How long before stage 0's last backward this stage's last backward ends: the backward of
    // one micro-batch of every stage before it (1F1B's cool-down hands the last gradient down
    // the pipeline); with interleaving, where the simulated schedule ends the stage's blocks
    // (simulateInterleaved). Its sync starts there, not when the whole pipeline has drained
    // (docs/cost-model.md section 8). Set by CostModel::estimate.
    double drain = 0;
    // Its sync counted from the end of stage 0's last backward (may be negative: it ends earlier).
    double syncAfterPipeline() const { return beforeBarrier() - drain; }
    double model_flops = 0;        // model FLOPs of one micro-batch on this stage (all replicas)
    MemoryBreakdown memory;        // one device of the stage
    std::vector<std::string> notes;  // which numbers came from a profile table and which from defaults
    bool from_profile = false;       // at least one number of the stage came from the profile
};

// Sets every stage's drain (StageEstimate::drain): the backward of one micro-batch of every
// stage before it, one chunk's share with v virtual stages per rank; the closed form's, which
// simulateInterleaved (cost/Schedule.h) replaces where it simulates an interleaved schedule.
inline void setDrains(std::vector<StageEstimate>& stages, int vpp)
{
    double drain = 0;
    for (StageEstimate& st : stages) {
        st.drain = drain;
        drain += st.t_bwd / std::max(1, vpp);
    }
}

struct TimeBreakdown {
    double compute = 0;
    double tensor_parallel = 0;
    double expert_dispatch = 0;
    // The slowest stage's activation sends and gradient waits (both passes; StageEstimate::
    // p2p_send is the forward's) over
    // the micro-batches: part of its forward and backward, not idle time.
    double pipeline_send = 0;
    double pipeline_bubble = 0;
    double dp_sync = 0;
    double optimizer = 0;
};

struct Prediction {
    double iteration_time_s = 0;
    double tokens_per_s = 0;
    double tflops_per_device = 0;   // model FLOPs per device per second (Megatron's counting)
    double mfu = 0;                 // model FLOPs / (sum of peak of devices used * time); FP8 peak under FP8
    double peak_memory_gib = 0;
    double host_memory_per_node_gib = 0;   // optimizer offload: the busiest node's ranks together
    double host_memory_capacity_gib = 0;   // that node's host memory (Node::host_memory_gib), 0 = unknown
    TimeBreakdown breakdown;
    std::vector<StageEstimate> stages;
    int num_microbatches = 0;
    bool feasible = true;
    std::string infeasible_reason;   // "stage 2 (910B) needs 71.3 GiB of 64 GiB (short 7.3 GiB)"
    double memory_shortfall_gib = 0; // the largest shortfall over stages (0 when feasible)
    bool used_profile = false;       // at least one number came from a profile table
    std::vector<std::string> notes;  // which numbers came from tables and which from defaults
    OverlapSwitches overlap;         // the switches the times assume (CostOptions::overlap)
    double memory_headroom = 0;      // the fraction of memory the capacities keep free (CostOptions)
};

// The stage whose forward + backward per micro-batch is largest (it sets the 1F1B steady
// state, paper eq. 5), the stage that reaches the gradient-norm barrier last (its sync, and
// on an end stage with tied embeddings the all-reduce after it: barrierWait) and the stage
// with the longest step after it (StageEstimate::afterBarrier): the first on ties.
// CostModel::estimate assembles the iteration and its breakdown from these three, and every
// view names them. -1 without stages.
namespace detail {
template <typename Key>
int firstLargestStage(const std::vector<StageEstimate>& stages, Key key)
{
    int best = -1;
    double mx = 0;
    for (int i = 0; i < static_cast<int>(stages.size()); ++i) {
        const double v = key(stages[static_cast<std::size_t>(i)]);
        if (best < 0 || v > mx) {
            mx = v;
            best = i;
        }
    }
    return best;
}
} // namespace detail

inline int bottleneckStage(const Prediction& p)
{
    return detail::firstLargestStage(p.stages, [](const StageEstimate& e) { return e.t_fwd + e.t_bwd; });
}

// The fullest stage of a feasible plan that keeps no memory free (memory_headroom 0) when
// its devices are more than `share` full, else -1: the model counts a runtime overhead
// (MemoryBreakdown::overhead) but not the allocator's fragmentation, so such a plan may
// still run out of memory; the front ends say so and point at the headroom option.
inline int nearlyFullStage(const Prediction& p, double share = 0.95)
{
    if (!p.feasible || p.memory_headroom > 0)
        return -1;
    int fullest = -1;
    double most = share;
    for (int i = 0; i < static_cast<int>(p.stages.size()); ++i) {
        const MemoryBreakdown& m = p.stages[static_cast<std::size_t>(i)].memory;
        if (m.capacity > 0 && m.total() / m.capacity > most) {
            most = m.total() / m.capacity;
            fullest = i;
        }
    }
    return fullest;
}

// When the last stage reaches the gradient-norm barrier, counted from the end of stage 0's
// last backward (docs/cost-model.md section 8): every stage's sync starts at its own last
// backward, `drain` before that, and with tied embeddings the two end stages all-reduce the
// embedding gradient once the later of their two syncs has ended. So the wait is the latest
// sync end or the end stages' later sync end plus the all-reduce, whichever is later, never
// less than stage 0's own sync. `stage` is the stage that arrives last: on the first case the
// stage whose sync ends last (the first on ties), on the second the end stage whose sync ends
// later (stage 0 on ties), and `tied` says whether the all-reduce is part of the wait.
struct BarrierWait {
    int stage = -1;
    double time = 0;
    bool tied = false;
};

// The wait itself, from the latest sync end, the end stages' later sync end (both counted
// from the end of stage 0's last backward) and their all-reduce (0 without tied embeddings):
// the one formula the cost model, the trace (placeTails) and the search (HS-DP closing a
// pipeline) share. Without an all-reduce it is the latest sync end, the same number.
inline double barrierWaitTime(double longestSync, double endsSync, double allReduce)
{
    return allReduce > 0 ? std::max(longestSync, endsSync + allReduce) : longestSync;
}

inline BarrierWait barrierWait(const Prediction& p)
{
    BarrierWait w;
    w.stage = detail::firstLargestStage(p.stages, [](const StageEstimate& e) { return e.syncAfterPipeline(); });
    if (w.stage < 0)
        return w;
    const double longest = p.stages[static_cast<std::size_t>(w.stage)].syncAfterPipeline();
    const StageEstimate& first = p.stages.front();
    const StageEstimate& last = p.stages.back();
    const double allReduce = p.stages.size() > 1 ? std::max(first.embedding_sync, last.embedding_sync) : 0.0;
    const double ends = std::max(first.syncAfterPipeline(), last.syncAfterPipeline());
    w.time = barrierWaitTime(longest, ends, allReduce);
    if (allReduce > 0 && ends + allReduce >= longest) {
        w.stage = last.syncAfterPipeline() > first.syncAfterPipeline() ? static_cast<int>(p.stages.size()) - 1 : 0;
        w.tied = true;
    }
    return w;
}

// The stage that reaches the gradient-norm barrier last (barrierWait).
inline int syncStage(const Prediction& p)
{
    return barrierWait(p).stage;
}

inline int stepStage(const Prediction& p)
{
    return detail::firstLargestStage(p.stages, [](const StageEstimate& e) { return e.afterBarrier(); });
}

} // namespace hapmoe
