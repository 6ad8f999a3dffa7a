#pragma once
// The schedule of one plan as the timeline draws it: the event simulator's forward and
// backward blocks (cost/Schedule.h) plus, per stage, the exposed data-parallel sync from its
// own last backward and the optimizer step after the gradient-norm barrier, and the
// stage-boundary sends inside the blocks. The simulator is fed the cost model's per-micro-batch times, which already
// contain the send to the next stage (cost/CostModel.h), so the makespan is the
// estimate's pipeline time and nothing is counted twice.

#include "cost/Prediction.h"
#include "cost/Schedule.h"
#include "plan/Plan.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace hapmoe::ui {

struct PlanTimeline {
    Schedule schedule;
    int stages = 0;
    int microbatches = 0;
    int vpp = 1;
    // Per stage, per chunk: the send inside each forward block (the activation to the next
    // stage, or from the last rank's chunks but its last the wrap to rank 0 when interleaved)
    // and the gradient wait inside each backward block. 0 where a chunk sends nothing.
    std::vector<std::vector<double>> sendFwd, sendBwd;
    double sendIn(const ScheduleBlock& b) const;   // 0 for a block out of range
    std::vector<double> laneEnd;    // per stage: end of its last backward
    std::vector<QString> deviceTypes;
    QStringList stageNames;         // "S0 · H800 · L0-11"
    int bottleneck = 0;
    // The stage whose data-parallel sync before the gradient-norm barrier ends last, and the
    // one with the longest optimizer step and parameter all-gather after it (the iteration
    // waits for both: docs/cost-model.md section 8); -1 when no stage has one.
    int syncLane = -1;
    int stepLane = -1;
    double pipelineEnd = 0;         // makespan of the simulator
    // The closed-form end of stage 0's last backward, P: the iteration time less the wait for
    // the gradient-norm barrier and the longest step (docs/cost-model.md section 8). Each
    // stage's DP sync starts at the closed-form end of its own last backward, P less its drain;
    // a lane whose simulated last backward ends earlier waits there, one that ends later
    // starts its sync then (placeTails).
    double syncStart = 0;
    // Per stage: own sync, tied all-reduce, optimizer step, parameter all-gather (stageTail).
    std::vector<StageTail> tailInputs;
    std::vector<TailSpan> tailSpans;     // per stage: placeTails of the schedule
    double iterationEnd = 0;        // the prediction's iteration time
    // Blocks of a schedule too large to simulate and draw (what-if can ask for a million
    // sequences); then the timeline is empty and says so. 0 otherwise.
    long long tooManyBlocks = 0;
    static constexpr long long kMaxBlocks = 2'000'000;   // about 64 MB of blocks

    bool empty() const { return stages == 0; }

    // A stage's tail after its last backward (wait_start): a wait until the closed form's end
    // of its last backward (syncStart above less its drain) when the simulated one ends
    // earlier, its own DP sync, then (first and last stage with tied
    // embeddings) the embedding all-reduce, a wait at the gradient-norm barrier, the optimizer
    // step and the parameter all-gather; core placeTails, kept in tailSpans. A stage out of
    // range gets an empty span.
    const TailSpan& tailOf(int stage) const;
    // Idle intervals of one stage between time 0 and its last backward.
    std::vector<std::pair<double, double>> bubbles(int stage) const;
};

// mtpLayers: the model's MTP depths, named on the last stage's lane (style::layerRange).
PlanTimeline buildPlanTimeline(const Plan& plan, const Prediction& prediction, int mtpLayers = 0);

} // namespace hapmoe::ui
