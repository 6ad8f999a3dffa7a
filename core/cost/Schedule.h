#pragma once
// The event-driven pipeline simulator (plain and interleaved 1F1B) and the closed form of
// the paper's eq. 4 and 5 (appendix B). The simulator gives the start and end of every
// forward and backward block on every stage; it feeds the GUI timeline and the
// Chrome/Perfetto trace, and checks the closed form.

#include "cost/Prediction.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe {

struct ScheduleBlock {
    int stage = 0;          // pipeline rank
    int microbatch = 0;
    int chunk = 0;          // virtual stage index on this rank (0 for plain 1F1B)
    bool forward = true;
    double start = 0;
    double end = 0;
};

struct ScheduleInput {
    std::vector<double> t_fwd;   // per pipeline rank, per micro-batch, per chunk
    std::vector<double> t_bwd;
    // Optional, per rank, per chunk: each chunk's own forward and backward (StageEstimate::
    // chunk_fwd), which take the place of t_fwd and t_bwd for that rank.
    std::vector<std::vector<double>> chunk_fwd, chunk_bwd;
    std::vector<double> p2p;     // send time from rank i to rank i+1 (size PP-1, may be empty)
    int microbatches = 1;
    int vpp = 1;
    // Record every block (Schedule::blocks); without, only the makespan and the per-rank
    // figures are kept (CostModel::estimate, which needs no more).
    bool keep_blocks = true;
};

struct Schedule {
    std::vector<ScheduleBlock> blocks;
    double makespan = 0;                 // end of the last backward
    std::vector<double> busy;            // per rank
    std::vector<double> rank_end;        // per rank, the end of its last block
    // Per rank, per chunk: the end of the chunk's last backward, where its gradients are all
    // ready (the data-parallel reduce-scatter of its buffer can finish; docs/cost-model.md
    // section 7).
    std::vector<std::vector<double>> chunk_bwd_end;
    // Per rank, per chunk: the start of the chunk's first forward, where its parameters are
    // first needed (the distributed optimizer's all-gather must have brought them).
    std::vector<std::vector<double>> chunk_fwd_start;
    int bottleneck_stage = 0;
};

// Throws std::invalid_argument when t_fwd/t_bwd sizes differ, or when vpp > 1 and the number
// of micro-batches is not a multiple of the pipeline size (Megatron's interleaved schedule
// with the default micro-batch group of PP requires it).
Schedule simulatePipeline(const ScheduleInput& in);

// The schedule of these stages as the cost model gives them: per rank, one chunk's share of
// its forward and backward (t_fwd / vpp, t_bwd / vpp), and each chunk's own time where the
// stage has one per chunk (StageEstimate::chunk_fwd, chunk_bwd). CostModel::estimate, the
// trace and the GUI timeline simulate the same input.
ScheduleInput scheduleInput(const std::vector<StageEstimate>& stages, int microbatches, int vpp);

// The most blocks (2 M v PP) simulateInterleaved runs for one iteration (about 40 ms).
inline constexpr long long kMaxSimulatedBlocks = 400'000;

// The interleaved schedule (vpp > 1) of the stages' chunk times (StageEstimate::chunk_fwd,
// chunk_bwd; equal shares of t_fwd and t_bwd where a stage has none): returns the end of its
// last block and sets every stage's drain to how long before that its own last block ends
// (docs/cost-model.md section 8). A schedule of more than maxBlocks blocks is extrapolated
// from two shorter ones (its steady state repeats every group of PP micro-batches). Returns
// -1 and changes nothing when it does not apply: vpp 1, micro-batches not a multiple of the
// stages, a group of micro-batches alone beyond maxBlocks, chunk times of another vpp, or
// none at all (a document written before they were kept, whose iteration time is the
// closed form's).
double simulateInterleaved(std::vector<StageEstimate>& stages, int microbatches, int vpp,
                           long long maxBlocks = kMaxSimulatedBlocks);

// The interleaved closed form sum_i c_i / v + (M v - 1) max_i c_i / v (c_i = t_fwd + t_bwd of
// stage i): exact for equal chunks, what the iteration takes where simulateInterleaved does not apply, and
// what `hapmoe estimate` sets beside the simulated schedule to show what uneven chunks cost.
double interleavedClosedForm(const std::vector<StageEstimate>& stages, int microbatches, int vpp);

// Closed form (paper eq. 4-5): T_edge + T_middle for plain 1F1B, without p2p.
double closedFormPipelineTime(const std::vector<double>& t_fwd, const std::vector<double>& t_bwd, int microbatches);

// What a stage does after its last backward (docs/cost-model.md section 8): its exposed
// gradient reduce-scatter (without the tied embeddings' all-reduce), that all-reduce (the two
// end stages with tied embeddings, else 0), its optimizer step and its exposed parameter
// all-gather (distributed optimizer), the last two after the gradient-norm all-reduce.
struct StageTail {
    double sync = 0;
    double embedding = 0;
    double optimizer = 0;
    double gather = 0;
    // How long before stage 0's last backward the stage's own ends (StageEstimate::drain).
    double drain = 0;
};

// Where the tails sit in an iteration of the given time. The iteration counts
// T = P + max(max_i (sync_i - drain_i), max(sync_0, sync_last - drain_last) + AR)
//       + max_i (optimizer_i + gather_i),
// P the end of stage 0's last backward as the iteration counts it (the closed form's; with
// interleaving, the simulated schedule's): every stage starts its sync at the end of its own
// last backward so counted, P - drain_i (after waiting there from its simulated last backward
// when that ends earlier, which with interleaving it does not), the end stages all-reduce the tied
// embedding after both their syncs, every stage waits for the gradient-norm all-reduce, which
// spans the pipeline and ends when the last sync or all-reduce ends (at least at T less the
// longest step), then steps its optimizer and gathers its parameters. The longest step then
// ends at T.
struct TailSpan {
    double wait_start = 0;   // the stage's simulated last backward; waits until sync_start
    double sync_start = 0, sync_end = 0;
    double embedding_start = 0, embedding_end = 0;   // equal when the stage has no all-reduce
    // The gradient-norm barrier: the stage waits from embedding_end until optimizer_start.
    double optimizer_start = 0, optimizer_end = 0;
    double gather_start = 0, gather_end = 0;        // equal when nothing is exposed

    // The stage's three waits, each [first, second] (empty when second <= first): for the
    // closed form's end of its last backward, for the other end stage's sync before the tied
    // all-reduce (empty without one), and at the gradient-norm barrier.
    std::array<std::pair<double, double>, 3> waits() const
    {
        return {{{wait_start, sync_start}, {sync_end, embedding_start}, {embedding_end, optimizer_start}}};
    }
};
// The tail of a stage as CostModel::estimate costs it.
inline StageTail stageTail(const StageEstimate& e)
{
    return {e.beforeBarrier(), e.embedding_sync, e.optimizer, e.param_gather, e.drain};
}
// Every stage's tail (stageTail), in stage order.
inline std::vector<StageTail> stageTails(const std::vector<StageEstimate>& stages)
{
    std::vector<StageTail> tails;
    tails.reserve(stages.size());
    for (const StageEstimate& e : stages)
        tails.push_back(stageTail(e));
    return tails;
}
std::vector<TailSpan> placeTails(const Schedule& schedule, const std::vector<StageTail>& tails, double iterationTime);
// P above (the end of stage 0's last backward): the iteration time less the wait for the
// barrier and the longest step.
double drainedPipelineEnd(const std::vector<StageTail>& tails, double iterationTime);

// Writes the schedule as Chrome/Perfetto trace-event JSON ("traceEvents", "X" events,
// one thread per stage, microseconds); with tails, each stage's wait, sync, tied-embedding
// all-reduce, wait at the gradient-norm barrier, optimizer step and parameter all-gather
// after its blocks (placeTails).
std::string toChromeTrace(const Schedule& schedule, const std::vector<std::string>& stageNames,
                          const std::vector<StageTail>& tails = {}, double iterationTime = 0);

} // namespace hapmoe
