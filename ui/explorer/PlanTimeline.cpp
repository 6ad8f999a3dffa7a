#include "PlanTimeline.h"

#include "ExplorerPlan.h"
#include "ExplorerStyle.h"

#include <algorithm>
#include <exception>

namespace hapmoe::ui {

std::vector<std::pair<double, double>> PlanTimeline::bubbles(int stage) const
{
    std::vector<std::pair<double, double>> busy;
    for (const ScheduleBlock& b : schedule.blocks) {
        if (b.stage == stage)
            busy.emplace_back(b.start, b.end);
    }
    std::sort(busy.begin(), busy.end());
    std::vector<std::pair<double, double>> idle;
    double t = 0;
    // A gap shorter than this is rounding of the simulator, not a bubble.
    const double eps = pipelineEnd * 1e-9;
    for (const auto& [s, e] : busy) {
        if (s > t + eps)
            idle.emplace_back(t, s);
        t = std::max(t, e);
    }
    return idle;
}

double PlanTimeline::sendIn(const ScheduleBlock& b) const
{
    const auto& sends = b.forward ? sendFwd : sendBwd;
    if (b.stage < 0 || b.stage >= static_cast<int>(sends.size()))
        return 0;
    const auto& chunks = sends[static_cast<size_t>(b.stage)];
    return b.chunk >= 0 && b.chunk < static_cast<int>(chunks.size()) ? chunks[static_cast<size_t>(b.chunk)] : 0.0;
}

const TailSpan& PlanTimeline::tailOf(int stage) const
{
    static const TailSpan none;
    if (stage < 0 || stage >= static_cast<int>(tailSpans.size()))
        return none;
    return tailSpans[static_cast<size_t>(stage)];
}

PlanTimeline buildPlanTimeline(const Plan& plan, const Prediction& prediction, int mtpLayers)
{
    PlanTimeline tl;
    const int pp = plan.pp();
    if (pp == 0 || static_cast<int>(prediction.stages.size()) != pp)
        return tl;
    tl.stages = pp;
    tl.vpp = std::max(1, plan.vpp);
    tl.microbatches = prediction.num_microbatches > 0 ? prediction.num_microbatches : plan.numMicrobatches();
    tl.microbatches = std::max(1, tl.microbatches);
    // The stage that sets the steady state (paper eq. 5), as the breakdown names it. Not the
    // simulator's busiest rank: its busy times are sums of M blocks, whose rounding can break
    // an exact tie of t_fwd + t_bwd in favour of another stage.
    const int bottleneck = bottleneckStage(prediction);
    const long long blocks = 2LL * tl.microbatches * tl.vpp * pp;
    if (blocks > PlanTimeline::kMaxBlocks) {
        PlanTimeline big;
        big.microbatches = tl.microbatches;
        big.vpp = tl.vpp;
        big.tooManyBlocks = blocks;
        big.iterationEnd = prediction.iteration_time_s;
        big.bottleneck = bottleneck;
        return big;
    }

    // With interleaving each rank runs vpp chunks per micro-batch, each its own time where
    // the cost model gives them (an embedding or output layer, a layout's uneven chunks).
    const ScheduleInput in = scheduleInput(prediction.stages, tl.microbatches, tl.vpp);
    tl.tailInputs = stageTails(prediction.stages);
    for (int i = 0; i < pp; ++i) {
        const StageEstimate& s = prediction.stages[static_cast<size_t>(i)];
        // The stage's sends per pass, split over its chunks that send: every chunk, except
        // on the last rank, whose chunks but its last send the wrap to rank 0 (none at VPP 1).
        // The backward's are what its pass times hold besides compute, TP and dispatch
        // (as the breakdown counts pipeline_send), less the forward's.
        const int sending = i + 1 < pp ? tl.vpp : tl.vpp - 1;
        // A difference of rounding (sends hidden behind their chunks) is none.
        double bwdSends = s.sends() - s.p2p_send;
        if (bwdSends <= 1e-12 * (s.t_fwd + s.t_bwd))
            bwdSends = 0;
        std::vector<double> f(static_cast<size_t>(tl.vpp), 0.0), b(static_cast<size_t>(tl.vpp), 0.0);
        for (int c = 0; c < sending; ++c) {
            f[static_cast<size_t>(c)] = s.p2p_send / sending;
            b[static_cast<size_t>(c)] = bwdSends / sending;
        }
        tl.sendFwd.push_back(std::move(f));
        tl.sendBwd.push_back(std::move(b));
        const StagePlan& sp = plan.stages[static_cast<size_t>(i)];
        tl.deviceTypes.push_back(QString::fromStdString(sp.device_type));
        tl.stageNames << QStringLiteral("S%1 · %2 · %3")
                             .arg(i)
                             .arg(QString::fromStdString(sp.device_type), style::layerRange(plan, i, mtpLayers));
    }
    try {
        tl.schedule = simulatePipeline(in);
    } catch (const std::exception&) {
        return PlanTimeline{};   // inconsistent times (a plan the cost model could not cost): nothing to draw
    }
    tl.pipelineEnd = tl.schedule.makespan;
    tl.laneEnd.assign(static_cast<size_t>(pp), 0.0);
    for (const ScheduleBlock& b : tl.schedule.blocks) {
        if (b.stage >= 0 && b.stage < pp)
            tl.laneEnd[static_cast<size_t>(b.stage)] = std::max(tl.laneEnd[static_cast<size_t>(b.stage)], b.end);
    }
    tl.iterationEnd = std::max(prediction.iteration_time_s, tl.pipelineEnd);

    tl.bottleneck = bottleneck;
    // The last sync and the longest step as CostModel::estimate picks them, when there are.
    const int syncer = syncStage(prediction), stepper = stepStage(prediction);
    tl.syncLane = prediction.stages[static_cast<size_t>(syncer)].beforeBarrier() > 0 ? syncer : -1;
    tl.stepLane = prediction.stages[static_cast<size_t>(stepper)].afterBarrier() > 0 ? stepper : -1;
    // T = T_pipe + wait for the barrier + longest step (docs/cost-model.md section 8): each
    // sync starts at its stage's last backward, placed by the core as the CLI's trace places
    // them.
    tl.syncStart = drainedPipelineEnd(tl.tailInputs, tl.iterationEnd);
    tl.tailSpans = placeTails(tl.schedule, tl.tailInputs, tl.iterationEnd);
    return tl;
}

} // namespace hapmoe::ui
