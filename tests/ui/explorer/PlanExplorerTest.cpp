// Offscreen tests of the plan explorer, driving the real widgets.

#include "ExplorerFixtures.h"

#include "BreakdownView.h"
#include "ChartExport.h"
#include "CompareView.h"
#include "ExportDialog.h"
#include "MemoryBarsPlot.h"
#include "PlanExplorerWidget.h"
#include "PlanListModel.h"
#include "PlanTableView.h"
#include "PlanTimeline.h"
#include "SpinBoxRangeCheck.h"
#include "StagePartitionView.h"
#include "TimelineBlocks.h"
#include "TimelinePlot.h"
#include "WhatIfPanel.h"
#include "cost/Schedule.h"
#include "io/Documents.h"

#include "ExplorerStyle.h"
#include "Theme.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtTest>

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>

using namespace hapmoe;
using namespace hapmoe::ui;

class PlanExplorerTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void selectingAPlanDrivesTheViews();
    void hoveringAStageEmitsItsNodes();
    void timelineOfEqualStagesMatchesTheClosedForm();
    void tiedEmbeddingAllReduceWaitsForBothEnds();
    void longestTailEndsAtTheIterationTime();
    void interleavedTimelineHasAllChunks();
    void timelineSendsFollowTheChunks();
    void timelineNamesItsWaits();
    void scheduleTooLargeToDrawSaysSo();
    void timelineZoomsHorizontallyAndShowsBlockToolTips();
    void planListSortsByIterationTime();
    void compareShowsTwoPlansOnASharedTimeAxis();
    void compareChartsKeepReadableSizesInASmallWindow();
    void compareChartsFitTheViewportWidth();
    void compareTableKeepsItsColumnsInANarrowView();
    void compareMemoryChartsKeepOneScale();
    void compareMarksDifferencesBelowTheShownDigits();
    void compareRanksIterationTimesPerSequenceAcrossBatches();
    void mfuAbovePeakIsMarked();
    void longPlanNamesAreElidedNotClipped();
    void whatIfRhoChangesTheIterationTime();
    void whatIfMicroBatchSize();
    void whatIfFp8();
    void whatIfRecompute();
    void whatIfOffloadTradesMemoryForTime();
    void whatIfKeepsThePredictionsSwitches();
    void whatIfRemovingAUsedNodeAsksForANewSearch();
    void whatIfKeepsTheInterleavedGroups();
    void exportDialogSavesALauncher();
    void exportDialogRefusesAPlanTheTargetCannotRun();
    void chartsSaveAsPngSvgAndPdf();
    void breakdownTitleNamesTheBottleneckAndTheTail();
    void tiedStagesNameTheFirstAsTheBottleneckEverywhere();
    void breakdownTableColumnsAddUp();
    void breakdownStaysReadableInASmallWindow();
    void chartsWithoutAPlanShowAPlaceholder();
    void noPlanSaysWhyWithoutClaimingABest();
    void whatIfWithoutAPlanSaysWhy();
    void planTitleCountsInTheSingular();
    void nearlyFullPlanSaysSo();
    void breakdownTitleCountsInTheSingular();
    void memoryLegendNamesWhatTheBarsHold();
    void memoryKeptFreeIsNamedAsSuch();
    void memoryLabelsStandAboveBarAndCapacity();
    void memoryBarsWriteTheirTotals();
    void memoryStageLabelsFitBetweenTheBars();
    void memoryBarLabelsStayInTheChart();
    void memoryChartSaysWhereOffloadedStatesWent();
    void memoryChartSaysASharedRecomputeOnce();
    void whatIfListsEveryBreakdownTerm();
    void denseModelShowsNoExpertFigures();
    void tabBarStaysPutAcrossViews();
    void whatIfWithdrawsItsSuggestion();
    void whatIfNamesTheRangeOfARefusedValue();
    void stageBoxTextReachesAaContrast();
    void breakdownColorsAreNotDeviceColors();
    void narrowStageBoxesNameAndMarkRecompute();
    void denseTimelineDrawsBands();
    void timelineNamesOnlyLanesWithRoom();
    void timelineLaneNamesShortenInANarrowChart();
    void bottleneckMarkAndDeviceColoursStandApart();
    void partitionBoxesAlwaysNameTheirDeviceType();
    void peakMemoryColumnShowsTheFullestDevice();
    void optimizerColumnShowsWhereTheStatesAre();
    void layoutColumnTellsEqualPlansApart();
    void partitionTextFitsEveryBox();
    void exportDialogOpensAtItsSizeForTheWindow();
    void exportDialogWrapsCheckLabels();
    void exportDialogStatusReadsOnBothThemes();
    void exportDialogEmptiesWhenThePlansGo();
    void stageBoxesOfAsManyLayersReadAlike();
    void whatIfChangeHighlightFollowsTheTheme();
    void planTitleWritesPercentAsTheTablesDo();
    void chartsFollowALiveThemeSwitch();
    void timelineNumbersLanesOfLikeBlocksAlike();
    void longPipelineTimelineScrollsWithReadableLanes();
    void exportDialogKeepsTheTargetOnARefresh();
    void unlaunchableCurrentHasNoTarget();

private:
    PlanExplorerWidget* makeExplorer();
    // The model and cluster of the plans, with the built-in catalog.
    ExplorerContext context() const;

    ModelSpec m_model;
    Cluster m_cluster;
    std::unique_ptr<CostModel> m_cost;
    SearchResult m_result;
    std::unique_ptr<PlanExplorerWidget> m_explorer;
};

void PlanExplorerTest::initTestCase()
{
    m_model = test::mixtralS();
    m_cluster = test::cluster16_1();
    m_cost = std::make_unique<CostModel>(m_model, m_cluster, DeviceCatalog::builtin());
    m_result.target = Target::FlagScale;
    m_result.plans = {test::costed(*m_cost, test::heteroPlan16_1())};
    m_result.uniform_baseline = test::costed(*m_cost, test::uniformPlan16_1());
    Plan current = test::uniformPlan16_1();
    current.name = "current (train.sh)";
    current.stages[0].recompute = Recompute::None;
    current.stages[1].recompute = Recompute::None;
    m_result.current = test::costed(*m_cost, current);
    m_explorer.reset(makeExplorer());
}

ExplorerContext PlanExplorerTest::context() const
{
    ExplorerContext ctx;
    ctx.model = m_model;
    ctx.cluster = m_cluster;
    ctx.catalog = DeviceCatalog::builtin();
    return ctx;
}

PlanExplorerWidget* PlanExplorerTest::makeExplorer()
{
    auto* w = new PlanExplorerWidget;
    w->setContext(context());
    w->setResult(m_result);
    w->resize(1400, 900);
    w->show();
    return w;
}

void PlanExplorerTest::selectingAPlanDrivesTheViews()
{
    PlanExplorerWidget* w = m_explorer.get();
    // Rows: the ranked plan, the uniform baseline, the current configuration.
    QCOMPARE(w->planCount(), 3);
    QCOMPARE(w->selectedPlan(), 0);

    // Click the baseline's row in the table (source row 1) through the viewport.
    auto* table = qobject_cast<PlanTableView*>(w->view(QStringLiteral("plans")));
    QVERIFY(table);
    table->sortByColumn(0, Qt::AscendingOrder);
    int viewRow = -1;
    for (int r = 0; r < table->model()->rowCount(); ++r) {
        if (table->model()->index(r, 0).data().toString() == QLatin1String("uniform 12/12"))
            viewRow = r;
    }
    QVERIFY(viewRow >= 0);
    QSignalSpy selected(w, &PlanExplorerWidget::selectionChanged);
    const QRect cell = table->visualRect(table->model()->index(viewRow, 2));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(w->selectedPlan(), 1);
    const RankedPlan& uniform = *m_result.uniform_baseline;

    // Partition: one box per stage, widths in proportion to the layers (12:12 here).
    auto* partition = qobject_cast<StagePartitionView*>(w->view(QStringLiteral("partition")));
    QVERIFY(partition);
    QCOMPARE(partition->stageCount(), 2);
    QCOMPARE(QString::fromStdString(partition->stage(0)->device_type), QStringLiteral("H800"));
    QCOMPARE(QString::fromStdString(partition->stage(1)->device_type), QStringLiteral("910B-376T"));
    QVERIFY(std::abs(partition->stageRect(0).width() - partition->stageRect(1).width()) <= 1);

    // Timeline: PP x M x 2 blocks for plain 1F1B = 2 x (256 / (DP 4 x mbs 1)) x 2 = 256.
    auto* timeline = qobject_cast<TimelinePlot*>(w->view(QStringLiteral("timeline")));
    QVERIFY(timeline);
    QCOMPARE(uniform.prediction.num_microbatches, 64);
    QCOMPARE(timeline->blockCount(), 2 * 64 * 2);
    int forward = 0;
    for (const ScheduleBlock& b : timeline->timeline().schedule.blocks)
        forward += b.forward ? 1 : 0;
    QCOMPARE(forward, 2 * 64);

    // Memory bars: the stacked components of each stage add up to the core's total.
    auto* memory = qobject_cast<MemoryBarsPlot*>(w->view(QStringLiteral("memory")));
    QVERIFY(memory);
    QCOMPARE(memory->stageCount(), 2);
    for (int s = 0; s < 2; ++s) {
        const MemoryBreakdown& m = uniform.prediction.stages[static_cast<size_t>(s)].memory;
        QVERIFY(m.total() > 0);
        QVERIFY(qFuzzyCompare(memory->stackedTotalGiB(s), m.total() / (1024.0 * 1024.0 * 1024.0)));
        QVERIFY(qFuzzyCompare(memory->capacityGiB(s), m.capacity / (1024.0 * 1024.0 * 1024.0)));
    }

    // Breakdown: the seven components are the prediction's, the send between dispatch and
    // bubble, and they add up to the iteration time (docs/cost-model.md section 8).
    auto* breakdown = qobject_cast<BreakdownView*>(w->view(QStringLiteral("breakdown")));
    QVERIFY(breakdown);
    QCOMPARE(breakdown->components().size(), 7);
    QCOMPARE(BreakdownView::componentNames().size(), 7);
    QCOMPARE(BreakdownView::componentNames()[3], QStringLiteral("Pipeline send"));
    QCOMPARE(breakdown->components()[0], uniform.prediction.breakdown.compute);
    QCOMPARE(breakdown->components()[2], uniform.prediction.breakdown.expert_dispatch);
    QCOMPARE(breakdown->components()[3], uniform.prediction.breakdown.pipeline_send);
    QCOMPARE(breakdown->components()[4], uniform.prediction.breakdown.pipeline_bubble);
    double sum = 0;
    for (double v : breakdown->components())
        sum += v;
    QVERIFY2(std::abs(sum - uniform.prediction.iteration_time_s) <= 1e-9 * uniform.prediction.iteration_time_s,
             qPrintable(QStringLiteral("%1 vs %2").arg(sum, 0, 'g', 12).arg(uniform.prediction.iteration_time_s, 0, 'g', 12)));

    // Back to the heterogeneous plan: 14:10 layers give a wider first stage.
    w->selectPlan(0);
    QCOMPARE(partition->stageCount(), 2);
    QCOMPARE(partition->stage(0)->num_layers, 14);
    QVERIFY(partition->stageRect(0).width() > partition->stageRect(1).width());
    const double ratio = double(partition->stageRect(0).width()) / partition->stageRect(1).width();
    QVERIFY2(std::abs(ratio - 14.0 / 10.0) < 0.02, qPrintable(QString::number(ratio)));
    QCOMPARE(timeline->blockCount(), 2 * 64 * 2);
}

namespace {
// The row of a table whose vertical header reads `header`; -1 when none does.
int tableRow(const QTableWidget* table, const QString& header)
{
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->verticalHeaderItem(r) && table->verticalHeaderItem(r)->text() == header)
            return r;
    return -1;
}

// The comparison of the first two of `plans` in a view of 1100 x 900: its table.
QTableWidget* compareFirstTwo(CompareView& compare, const std::vector<ExplorerPlan>& plans)
{
    compare.resize(1100, 900);
    compare.setPlans(plans);
    compare.setCompared({0, 1});
    return compare.table();
}

// Lets posted resizes, layout requests and delayed item layouts run.
void settle()
{
    for (int i = 0; i < 3; ++i) {
        QApplication::processEvents();
        QTest::qWait(1);
    }
}
} // namespace

namespace {
// A mouse move without buttons at a widget position (the offscreen platform has no cursor
// to move, so the event goes to the widget directly).
void moveMouse(QWidget* w, const QPoint& pos)
{
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), w->mapToGlobal(QPointF(pos)), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(w, &move);
}
} // namespace

void PlanExplorerTest::hoveringAStageEmitsItsNodes()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* partition = qobject_cast<StagePartitionView*>(w->view(QStringLiteral("partition")));
    QSignalSpy hovered(w, &PlanExplorerWidget::stageHovered);
    moveMouse(partition, partition->stageRect(1).center());
    QCOMPARE(hovered.count(), 1);
    // Stage 1 of the heterogeneous plan runs on node 1 (the 910B node).
    QCOMPARE(hovered.last().at(0).value<QVector<int>>(), QVector<int>{1});
    QVERIFY(partition->stageToolTip(1).contains(QStringLiteral("GiB")));
    moveMouse(partition, partition->stageRect(0).center());
    QCOMPARE(hovered.count(), 2);
    QCOMPARE(hovered.last().at(0).value<QVector<int>>(), QVector<int>{0});
    // Leaving the strip clears the highlight.
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(partition, &leave);
    QCOMPARE(hovered.count(), 3);
    QVERIFY(hovered.last().at(0).value<QVector<int>>().isEmpty());
}

namespace {

// Four stages of 6 layers on 2 devices of one node each, with t_f = 1 and t_b = 2 per
// micro-batch: timelines whose shape is known by hand. Their drains are 0, 2, 4 and 6, as
// CostModel::estimate sets them (setDrains).
std::pair<Plan, Prediction> fourEqualStages(const std::string& type)
{
    Plan plan;
    Prediction pred;
    for (int i = 0; i < 4; ++i) {
        plan.stages.push_back(test::stage(type, 0, 2 * i, 2, 6 * i, 6, 2, 1, 2, 1, 1, 1));
        StageEstimate e;
        e.t_fwd = 1;
        e.t_bwd = 2;
        pred.stages.push_back(e);
    }
    setDrains(pred.stages, 1);
    return {plan, pred};
}

// The timeline's tooltip at time t (seconds) on a lane, as the mouse would find it.
QString tipAt(const TimelinePlot& plot, double t, int lane)
{
    return plot.toolTipAt(QPoint(int(plot.xAxis->coordToPixel(t)), int(plot.yAxis->coordToPixel(lane))));
}

} // namespace

void PlanExplorerTest::timelineOfEqualStagesMatchesTheClosedForm()
{
    // Four equal stages, t_f = 1, t_b = 2, M = 8: eq. 4 gives
    // sum c_i + (M - 1) max c_i = 4 * 3 + 7 * 3 = 33 and every stage idles (PP - 1) * 3 = 9.
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 8;
    pred.iteration_time_s = 33;
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(int(tl.schedule.blocks.size()), 4 * 8 * 2);
    QCOMPARE(tl.pipelineEnd, 33.0);
    for (int s = 0; s < 4; ++s) {
        double idle = 0;
        for (const auto& [a, b] : tl.bubbles(s))
            idle += b - a;
        // Each stage is busy M * (t_f + t_b) = 24 of the 33, so it idles 9: the bubbles
        // before its last backward plus the tail after it.
        QCOMPARE(idle + (33.0 - tl.laneEnd[static_cast<size_t>(s)]), 9.0);
    }
}

void PlanExplorerTest::timelineNumbersLanesOfLikeBlocksAlike()
{
    // Four stages whose backwards differ by at most 4 % (2, 2.03, 1.98, 2.06 s; the last stage
    // holds the output layer), 32 micro-batches: at any width, either every lane's blocks
    // are numbered or none are. Decided block by block, a width where the numbers just fit
    // numbered the slowest lane alone.
    auto [plan, pred] = fourEqualStages("H800");
    const double bwd[4] = {2.0, 2.03, 1.98, 2.06};
    double sum = 0, slowest = 0;
    for (int s = 0; s < 4; ++s) {
        pred.stages[static_cast<size_t>(s)].t_bwd = bwd[s];
        sum += 1 + bwd[s];
        slowest = std::max(slowest, 1 + bwd[s]);
    }
    setDrains(pred.stages, 1);
    pred.num_microbatches = 32;
    pred.iteration_time_s = sum + 31 * slowest;   // eq. 4
    TimelinePlot plot;
    plot.setTimeline(buildPlanTimeline(plan, pred));
    plot.show();
    int numberedWidths = 0, unnumberedWidths = 0;
    for (int width = 500; width <= 2600; width += 7) {
        plot.resize(width, 320);
        plot.replot();
        int lanes = 0;
        for (int s = 0; s < 4; ++s)
            lanes += plot.blocks()->lastNumberedBlocks(s) > 0 ? 1 : 0;
        QVERIFY2(lanes == 0 || lanes == 4, qPrintable(QStringLiteral("%1 px: %2 of 4 lanes numbered").arg(width).arg(lanes)));
        (lanes == 4 ? numberedWidths : unnumberedWidths) += 1;
    }
    QVERIFY(numberedWidths > 0 && unnumberedWidths > 0);   // the sweep crosses the point where they fit
}

void PlanExplorerTest::tiedEmbeddingAllReduceWaitsForBothEnds()
{
    // Four equal stages (t_f = 1, t_b = 2, M = 8): stage 0's last backward ends at 33 (the
    // makespan, timelineOfEqualStagesMatchesTheClosedForm), stage 3's three backwards of 2
    // earlier, at 27 (its drain, 6). With tied embeddings the end stages' DP sync of 0.5
    // holds an all-reduce of 0.25 between them. Stage 3 syncs its own 0.25 in [27, 27.25] and
    // waits for stage 0's, in [33, 33.25]; the all-reduce runs on both in [33.25, 33.5], and
    // each one's optimizer step (0.125) follows: T = 33 + max(0.25, 0.25 - 6) + 0.25 + 0.125
    // = 33.625.
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 8;
    pred.iteration_time_s = 33.625;
    for (StageEstimate& st : pred.stages) {
        st.dp_sync = 0.25;
        st.optimizer = 0.125;
    }
    for (StageEstimate* st : {&pred.stages.front(), &pred.stages.back()}) {
        st->dp_sync = 0.5;
        st->embedding_sync = 0.25;
    }
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    const TailSpan first = tl.tailOf(0), last = tl.tailOf(3), middle = tl.tailOf(1);
    QCOMPARE(tl.syncStart, 33.0);
    QCOMPARE(first.wait_start, 33.0);
    QCOMPARE(first.sync_start, 33.0);
    QCOMPARE(first.sync_end, 33.25);
    QCOMPARE(last.wait_start, 27.0);
    QCOMPARE(last.sync_start, 27.0);
    QCOMPARE(last.sync_end, 27.25);
    for (const TailSpan& t : {first, last}) {
        QCOMPARE(t.embedding_start, 33.25);
        QCOMPARE(t.embedding_end, 33.5);
        QCOMPARE(t.optimizer_end, 33.625);
    }
    // No all-reduce on the middle stages: stage 1 ends its last backward at 31, syncs in
    // [31, 31.25], waits for the gradient-norm all-reduce, which follows the end stages'
    // all-reduce, and steps in [33.5, 33.625] with the others.
    QCOMPARE(middle.wait_start, 31.0);
    QCOMPARE(middle.sync_start, 31.0);
    QCOMPARE(middle.embedding_start, middle.sync_end);
    QCOMPARE(middle.optimizer_start, 33.5);
    QCOMPARE(middle.optimizer_end, 33.625);

    // The chart says what the end stage's lane holds between its sync and its optimizer step.
    TimelinePlot plot;
    plot.resize(900, 400);
    plot.setTimeline(tl);
    plot.replot();
    plot.xAxis->setRange(26.9, 33.7);
    plot.replot();
    QVERIFY2(tipAt(plot, 27.1, 3).contains(QStringLiteral("Data-parallel gradient sync")), qPrintable(tipAt(plot, 27.1, 3)));
    QVERIFY2(tipAt(plot, 30.0, 3).contains(QStringLiteral("other end stage")), qPrintable(tipAt(plot, 30.0, 3)));
    QVERIFY2(tipAt(plot, 33.1, 0).contains(QStringLiteral("Data-parallel gradient sync")), qPrintable(tipAt(plot, 33.1, 0)));
    QVERIFY2(tipAt(plot, 33.4, 3).contains(QStringLiteral("all-reduce")), qPrintable(tipAt(plot, 33.4, 3)));
    QVERIFY2(tipAt(plot, 33.4, 1).contains(QStringLiteral("gradient-norm all-reduce")), qPrintable(tipAt(plot, 33.4, 1)));
    QVERIFY2(tipAt(plot, 33.6, 1).contains(QStringLiteral("Optimizer step")), qPrintable(tipAt(plot, 33.6, 1)));
}

void PlanExplorerTest::longestTailEndsAtTheIterationTime()
{
    // Four equal stages (t_f = 1, t_b = 2, M = 8) end their last backward at 33, 31, 29 and
    // 27 (timelineOfEqualStagesMatchesTheClosedForm). Stage 2 has the longest sync, 0.5, and
    // the longest optimizer step, 0.25 (an offloaded step, say), the others 0.25 and 0.125.
    // Stage 2 syncs in [29, 29.5], long before stage 0's sync ends at 33.25, where the
    // gradient-norm all-reduce lets every stage step: T = 33 + 0.25 + 0.25 = 33.5
    // (docs/cost-model.md section 8), and stage 2's step ends at T, not at 29.75.
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 8;
    pred.iteration_time_s = 33.5;
    for (int s = 0; s < 4; ++s) {
        pred.stages[static_cast<size_t>(s)].dp_sync = s == 2 ? 0.5 : 0.25;
        pred.stages[static_cast<size_t>(s)].optimizer = s == 2 ? 0.25 : 0.125;
    }
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(tl.syncLane, 0);
    QCOMPARE(tl.stepLane, 2);
    QCOMPARE(tl.syncStart, 33.0);
    auto checkTails = [](const PlanTimeline& tl, double iteration) {
        double end = 0;
        for (int s = 0; s < tl.stages; ++s) {
            const TailSpan& t = tl.tailOf(s);
            QCOMPARE(t.wait_start, tl.laneEnd[static_cast<size_t>(s)]);
            QVERIFY(t.sync_start >= t.wait_start);
            end = std::max(end, t.gather_end);
        }
        QVERIFY2(std::abs(end - iteration) <= 1e-9, qPrintable(QStringLiteral("%1 vs %2").arg(end, 0, 'g', 15).arg(iteration, 0, 'g', 15)));
    };
    checkTails(tl, pred.iteration_time_s);
    QCOMPARE(tl.tailOf(2).wait_start, 29.0);
    QCOMPARE(tl.tailOf(2).sync_start, 29.0);
    QCOMPARE(tl.tailOf(2).sync_end, 29.5);
    QCOMPARE(tl.tailOf(2).optimizer_start, 33.25);
    QCOMPARE(tl.tailOf(2).optimizer_end, 33.5);

    // The last sync and the longest step on different stages: stage 1 syncs 4 from its last
    // backward at 31 and steps 0.125, stage 2 syncs 0.25 and steps 2 (an optimizer step of 1
    // and a parameter all-gather of 1), the others sync 0.25 and step 0.125. Every stage
    // steps after the gradient-norm all-reduce, at 31 + 4 = 35: T = 35 + 2 = 37, where each
    // stage's own sync + step, from its own last backward, would end by 35.125. Both parts are above 5 % of the
    // iteration, so the lanes are marked apart ("last sync", "longest step").
    for (int s = 0; s < 4; ++s) {
        StageEstimate& e = pred.stages[static_cast<size_t>(s)];
        e.dp_sync = s == 1 ? 4.0 : s == 2 ? 1.25 : 0.25;
        e.param_gather = s == 2 ? 1.0 : 0.0;
        e.optimizer = s == 2 ? 1.0 : 0.125;
    }
    pred.iteration_time_s = 37;
    const PlanTimeline apart = buildPlanTimeline(plan, pred);
    QCOMPARE(apart.syncLane, 1);
    QCOMPARE(apart.stepLane, 2);
    QCOMPARE(apart.syncStart, 33.0);
    checkTails(apart, 37.0);
    for (int s = 0; s < 4; ++s)
        QCOMPARE(apart.tailOf(s).optimizer_start, 35.0);
    QCOMPARE(apart.tailOf(1).sync_start, 31.0);
    QCOMPARE(apart.tailOf(2).sync_end, 29.25);
    QCOMPARE(apart.tailOf(2).gather_start, 36.0);
    TimelinePlot marks;
    marks.resize(900, 400);
    marks.setTimeline(apart);
    const QMap<double, QString> labels = qSharedPointerCast<QCPAxisTickerText>(marks.yAxis->ticker())->ticks();
    QVERIFY2(labels.value(1).endsWith(QStringLiteral("◀ last sync")), qPrintable(labels.value(1)));
    QVERIFY2(labels.value(2).endsWith(QStringLiteral("◀ longest step")), qPrintable(labels.value(2)));
    marks.xAxis->setRange(32.9, 37.1);
    marks.replot();
    QVERIFY2(tipAt(marks, 34.0, 2).contains(QStringLiteral("gradient-norm all-reduce")), qPrintable(tipAt(marks, 34.0, 2)));
    QVERIFY2(tipAt(marks, 36.5, 2).contains(QStringLiteral("Parameter all-gather")), qPrintable(tipAt(marks, 36.5, 2)));

    // The same with the real cost model: the four-stage plan on 32-3 (910B 2x8 + MI300X 2x8),
    // whose lanes end at different times, with the whole optimizer step offloaded to the
    // host on the MI300X stages' side: the step's length differs per stage, and whichever
    // stage's tail is longest ends at the prediction's iteration time.
    const Cluster cluster = test::cluster32_3();
    const CostModel cost(m_model, cluster, DeviceCatalog::builtin());
    Plan offloaded = test::heteroPlan32_3();
    offloaded.optimizer_offload_fraction = 1.0;
    for (const Plan& p : {test::heteroPlan32_3(), offloaded}) {
        const RankedPlan costedPlan = test::costed(cost, p);
        const PlanTimeline real = buildPlanTimeline(costedPlan.plan, costedPlan.prediction);
        QCOMPARE(real.stages, 4);
        QVERIFY(real.laneEnd[0] > real.laneEnd[3]);
        checkTails(real, costedPlan.prediction.iteration_time_s);
    }
}

void PlanExplorerTest::scheduleTooLargeToDrawSaysSo()
{
    // Four stages and 300,000 micro-batches (a what-if global batch of that many sequences)
    // make 2 x 300,000 x 4 = 2,400,000 blocks, above the 2,000,000 the timeline simulates
    // and draws: the chart says so, and keeps the iteration time and bottleneck.
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 300000;
    pred.iteration_time_s = 900009;   // 4 x 3 + 299,999 x 3
    pred.stages[2].t_bwd = 2.5;       // stage 2 the bottleneck
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QVERIFY(tl.empty());
    QCOMPARE(tl.tooManyBlocks, 2400000LL);
    QVERIFY(tl.schedule.blocks.empty());
    QCOMPARE(tl.iterationEnd, 900009.0);
    QCOMPARE(tl.bottleneck, 2);
    TimelinePlot plot;
    plot.setTimeline(tl);
    QCOMPARE(style::chartPlaceholder(&plot), TimelinePlot::tooLargeText(tl));
    QVERIFY2(style::chartPlaceholder(&plot).contains(QStringLiteral("2,400,000")), qPrintable(style::chartPlaceholder(&plot)));
    // At the bound it draws as before: 2 x 250,000 x 4 = 2,000,000 blocks.
    pred.num_microbatches = 250000;
    const PlanTimeline drawn = buildPlanTimeline(plan, pred);
    QCOMPARE(drawn.tooManyBlocks, 0LL);
    QCOMPARE(static_cast<long long>(drawn.schedule.blocks.size()), 2000000LL);
}

void PlanExplorerTest::interleavedTimelineHasAllChunks()
{
    // Interleaved 1F1B with vpp = 2: PP x M x vpp x 2 blocks = 4 x 8 x 2 x 2 = 128.
    auto [plan, pred] = fourEqualStages("MI300X");
    plan.vpp = 2;
    pred.num_microbatches = 8;
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(int(tl.schedule.blocks.size()), 128);
    int chunk1 = 0;
    for (const ScheduleBlock& b : tl.schedule.blocks) {
        chunk1 += b.chunk == 1 ? 1 : 0;
        // Each chunk does half of the stage's work.
        QCOMPARE(b.end - b.start, b.forward ? 0.5 : 1.0);
    }
    QCOMPARE(chunk1, 64);
    // Each rank holds two chunks of 3 layers, virtual stages r and 4 + r: rank 0 has layers
    // 0-2 and 12-14 (Megatron-LM's interleaved placement), which the lane names, the stage
    // boxes and their tooltips say.
    QCOMPARE(tl.stageNames.value(0), QStringLiteral("S0 · MI300X · L0-2,12-14"));
    QCOMPARE(tl.stageNames.value(3), QStringLiteral("S3 · MI300X · L9-11,21-23"));
    StagePartitionView partition;
    partition.resize(1200, 120);
    partition.setPlan(plan, pred, 0);
    QVERIFY2(partition.stageToolTip(1).contains(QStringLiteral("Layers 3-5, 15-17 (6)")), qPrintable(partition.stageToolTip(1)));
    QVERIFY2(partition.stageLines(1).join(QLatin1Char('|')).contains(QStringLiteral("6 layers (L3-5,15-17)")),
             qPrintable(partition.stageLines(1).join(QLatin1Char('|'))));
}

void PlanExplorerTest::timelineNamesItsWaits()
{
    // Four equal stages, M = 8, t_b = 2: stage s's last backward ends its drain (s x t_b)
    // before stage 0's, and no stage steps its optimizer before the gradient-norm barrier,
    // after stage 0's last backward: stage s waits 2s seconds, stippled, and the legend says
    // "Waiting" after the bubble. A sync of 1 s on every stage moves the barrier and the
    // waits alike. One stage alone waits for nothing, and the legend leaves it out.
    auto names = [](const TimelinePlot& p) {
        QStringList n;
        for (int i = 0; i < p.legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(p.legend->item(i)))
                n << item->plottable()->name();
        return n;
    };
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 8;
    TimelinePlot plot;
    for (double sync : {0.0, 1.0}) {
        for (StageEstimate& e : pred.stages)
            e.dp_sync = sync;
        const PlanTimeline tl = buildPlanTimeline(plan, pred);
        for (int s = 0; s < 4; ++s) {
            const TailSpan& t = tl.tailOf(s);
            QCOMPARE(t.optimizer_start - std::max(t.sync_end, t.embedding_end), 2.0 * s);
        }
        plot.setTimeline(tl);
        const QStringList legend = names(plot);
        QVERIFY2(legend.indexOf(QStringLiteral("Waiting")) == legend.indexOf(QStringLiteral("Idle (bubble)")) + 1,
                 qPrintable(legend.join(QLatin1Char('|'))));
    }
    plan.stages.resize(1);
    pred.stages.resize(1);
    plot.setTimeline(buildPlanTimeline(plan, pred));
    QVERIFY2(!names(plot).contains(QStringLiteral("Waiting")), qPrintable(names(plot).join(QLatin1Char('|'))));
}

void PlanExplorerTest::timelineSendsFollowTheChunks()
{
    // The send strips inside the blocks, with the real cost model on the four-stage plan of
    // 32-3 (910B 2x8 + MI300X 2x8). Plain 1F1B: every stage but the last sends its activation
    // at the end of each forward and waits for the gradient at the start of each backward.
    // Interleaved (VPP 2): every chunk of the first three ranks sends to the next rank, and
    // the last rank's first chunk sends to rank 0 (the wrap), its last chunk nothing. Each
    // stage's strips add up to its sends: the forward's p2p_send, and the backward's, the
    // rest of its pass times once compute, TP and dispatch are taken out (as the breakdown
    // counts them); the backward's equal the forward's where they overlap with nothing.
    // Megatron-LM's p2p overlap is off here: on, the interleaved sends hide behind the
    // chunks (docs/cost-model.md section 6) and there is no strip to draw.
    const Cluster cluster = test::cluster32_3();
    CostOptions exposed;
    exposed.overlap.p2p = false;
    const CostModel cost(m_model, cluster, DeviceCatalog::builtin(), nullptr, exposed);
    for (const int vpp : {1, 2}) {
        Plan p = test::heteroPlan32_3();
        p.vpp = vpp;
        const RankedPlan costed = test::costed(cost, p);
        QVERIFY(costed.prediction.feasible);
        const PlanTimeline tl = buildPlanTimeline(costed.plan, costed.prediction);
        QCOMPARE(tl.stages, 4);
        for (int s = 0; s < 4; ++s) {
            const StageEstimate& e = costed.prediction.stages[static_cast<size_t>(s)];
            const auto& f = tl.sendFwd[static_cast<size_t>(s)];
            const auto& b = tl.sendBwd[static_cast<size_t>(s)];
            QCOMPARE(int(f.size()), vpp);
            QCOMPARE(int(b.size()), vpp);
            double fs = 0, bs = 0;
            for (int c = 0; c < vpp; ++c) {
                fs += f[static_cast<size_t>(c)];
                bs += b[static_cast<size_t>(c)];
                const bool sends = s < 3 || c + 1 < vpp;
                QCOMPARE(f[static_cast<size_t>(c)] > 0, sends);
                QCOMPARE(b[static_cast<size_t>(c)] > 0, sends);
            }
            QVERIFY(qAbs(fs - e.p2p_send) <= 1e-12 * qMax(1.0, e.p2p_send));
            const double rest = e.t_fwd + e.t_bwd - e.compute - e.tensor_parallel - e.expert_dispatch;
            QVERIFY2(qAbs(fs + bs - rest) <= 1e-9 * (e.t_fwd + e.t_bwd), qPrintable(QStringLiteral("vpp %1 S%2: %3 + %4 vs %5").arg(vpp).arg(s).arg(fs).arg(bs).arg(rest)));
            if (vpp == 1 && s < 3)
                QVERIFY(qAbs(bs - fs) <= 1e-12 * fs);
        }
        // A block's strip is its chunk's.
        for (const ScheduleBlock& blk : tl.schedule.blocks)
            QCOMPARE(tl.sendIn(blk), (blk.forward ? tl.sendFwd : tl.sendBwd)[static_cast<size_t>(blk.stage)][static_cast<size_t>(blk.chunk)]);
    }
    // With the overlap on (Megatron-LM's default) the interleaved sends hide behind their
    // chunks: no strip at all, not one of a rounding residue (a tooltip once read "incl. 0 s").
    Plan p = test::heteroPlan32_3();
    p.vpp = 2;
    const RankedPlan hidden = test::costed(CostModel(m_model, cluster, DeviceCatalog::builtin()), p);
    const PlanTimeline tl = buildPlanTimeline(hidden.plan, hidden.prediction);
    for (const ScheduleBlock& blk : tl.schedule.blocks)
        QCOMPARE(tl.sendIn(blk), 0.0);
}

void PlanExplorerTest::timelineZoomsHorizontallyAndShowsBlockToolTips()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("timeline"));
    auto* timeline = qobject_cast<TimelinePlot*>(w->view(QStringLiteral("timeline")));
    QVERIFY(timeline->isVisible());
    const QCPRange before = timeline->xAxis->range();
    const QCPRange lanes = timeline->yAxis->range();

    // Wheel up over the middle of the chart zooms the time axis only.
    const QPoint centre = timeline->axisRect()->rect().center();
    QWheelEvent wheel(QPointF(centre), timeline->mapToGlobal(QPointF(centre)), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(timeline, &wheel);
    QVERIFY(timeline->xAxis->range().size() < before.size());
    QCOMPARE(timeline->yAxis->range().lower, lanes.lower);
    QCOMPARE(timeline->yAxis->range().upper, lanes.upper);

    // The first forward block of stage 0 (micro-batch 0, starting at t = 0).
    timeline->xAxis->setRange(0, timeline->timeline().pipelineEnd / 16);
    timeline->replot();
    const ScheduleBlock* first = nullptr;
    for (const ScheduleBlock& b : timeline->timeline().schedule.blocks) {
        if (b.stage == 0 && b.forward && b.microbatch == 0)
            first = &b;
    }
    QVERIFY(first);
    QCOMPARE(first->start, 0.0);
    const QPoint pos(int(timeline->xAxis->coordToPixel((first->start + first->end) / 2)), int(timeline->yAxis->coordToPixel(0)));
    const QString tip = timeline->toolTipAt(pos);
    QVERIFY2(tip.contains(QStringLiteral("Forward of micro-batch 0")), qPrintable(tip));

    // Panning never leaves the iteration.
    timeline->xAxis->setRange(-10 * timeline->timeLimit(), -9 * timeline->timeLimit());
    QVERIFY(timeline->xAxis->range().lower >= -0.021 * timeline->timeLimit());
    timeline->resetZoom();

    // The Chrome trace has one complete ("X") event per block, and after them each stage's
    // tail as the chart draws it (core placeTails): the optimizer steps end where the chart's do.
    const QJsonDocument trace = QJsonDocument::fromJson(timeline->chromeTrace());
    int blocks = 0;
    std::vector<double> stepEnds;
    for (const QJsonValue& v : trace.object().value(QStringLiteral("traceEvents")).toArray()) {
        const QJsonObject e = v.toObject();
        const QString cat = e.value(QStringLiteral("cat")).toString();
        if (cat == QLatin1String("forward") || cat == QLatin1String("backward"))
            ++blocks;
        if (cat == QLatin1String("optimizer"))
            stepEnds.push_back((e.value(QStringLiteral("ts")).toDouble() + e.value(QStringLiteral("dur")).toDouble()) * 1e-6);
    }
    QCOMPARE(blocks, timeline->blockCount());
    QCOMPARE(int(stepEnds.size()), timeline->timeline().stages);
    for (int s = 0; s < timeline->timeline().stages; ++s)
        QVERIFY(std::abs(stepEnds[static_cast<size_t>(s)] - timeline->timeline().tailOf(s).optimizer_end) <= 1e-9);
}

void PlanExplorerTest::planListSortsByIterationTime()
{
    PlanExplorerWidget* w = m_explorer.get();
    auto* table = qobject_cast<PlanTableView*>(w->view(QStringLiteral("plans")));
    // Click the "Iteration" header: the fastest plan comes first.
    const int col = 2;
    const int x = table->horizontalHeader()->sectionViewportPosition(col) + table->horizontalHeader()->sectionSize(col) / 2;
    QTest::mouseClick(table->horizontalHeader()->viewport(), Qt::LeftButton, {}, QPoint(x, table->horizontalHeader()->height() / 2));
    double fastest = 1e300;
    for (const RankedPlan* rp : {&m_result.plans[0], &*m_result.uniform_baseline, &*m_result.current})
        fastest = std::min(fastest, rp->prediction.iteration_time_s);
    const Qt::SortOrder order = table->horizontalHeader()->sortIndicatorOrder();
    const int firstRow = order == Qt::AscendingOrder ? 0 : table->model()->rowCount() - 1;
    QCOMPARE(table->model()->index(firstRow, col).data(Qt::UserRole).toDouble(), fastest);
    // Selection still speaks in source rows.
    w->selectPlan(2);
    QCOMPARE(w->selectedPlan(), 2);
    QCOMPARE(table->selectedSourceRow(), 2);
    table->sortByColumn(0, Qt::AscendingOrder);
}

void PlanExplorerTest::compareShowsTwoPlansOnASharedTimeAxis()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(w->view(QStringLiteral("compare")));
    QVERIFY(compare);
    // By default the selected plan is compared with the user's current configuration (row 2).
    QCOMPARE(compare->compared(), (QList<int>{0, 2}));

    // Tick the uniform baseline too, then untick the current configuration.
    auto* chooser = compare->findChild<QListWidget*>(QStringLiteral("compareChooser"));
    QVERIFY(chooser);
    chooser->item(1)->setCheckState(Qt::Checked);
    QCOMPARE(compare->compared(), (QList<int>{0, 1, 2}));
    chooser->item(2)->setCheckState(Qt::Unchecked);
    QCOMPARE(compare->compared(), (QList<int>{0, 1}));

    QCOMPARE(compare->table()->columnCount(), 2);
    QCOMPARE(compare->timelines().size(), 2);
    QCOMPARE(compare->partitions().size(), 2);
    QCOMPARE(compare->memoryPlots().size(), 2);
    // 14/10 vs 12/12 layers and different knobs are highlighted; both use 16 devices.
    const QStringList diff = compare->differingRows();
    QVERIFY2(diff.contains(QStringLiteral("Layers per stage")), qPrintable(diff.join(',')));
    QVERIFY(diff.contains(QStringLiteral("TP/CP/DP per stage")));
    QVERIFY(diff.contains(QStringLiteral("Iteration time")));
    QVERIFY(!diff.contains(QStringLiteral("Devices used")));
    // The highlight follows the theme: pale amber under black text in the light theme, a dark
    // amber under the theme's light text in the dark one (readable, not glaring), and back.
    const int layersRow = tableRow(compare->table(), QStringLiteral("Layers per stage"));
    QVERIFY(layersRow >= 0);
    // Per-stage rows list the stages in order, equal neighbours once with their count.
    QCOMPARE(compare->table()->item(layersRow, 0)->text(), QStringLiteral("14 | 10"));
    QCOMPARE(compare->table()->item(layersRow, 1)->text(), QStringLiteral("12 ×2"));
    const QPalette light = compare->palette();
    QPalette darkPalette = light;
    darkPalette.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    darkPalette.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    darkPalette.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    darkPalette.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    QTableWidgetItem* cell = compare->table()->item(layersRow, 0);
    QCOMPARE(cell->background().color(), QColor(255, 236, 179));
    QCOMPARE(cell->foreground().color(), QColor(Qt::black));
    compare->setPalette(darkPalette);
    QApplication::processEvents();
    // 30 % amber 500 (255, 193, 7) over the base (30, 30, 30): (98, 79, 23).
    QCOMPARE(cell->background().color(), QColor(98, 79, 23));
    QCOMPARE(cell->foreground().color(), QColor(0xe0, 0xe0, 0xe0));
    QCOMPARE(compare->differingRows(), diff);
    compare->setPalette(light);
    QApplication::processEvents();
    QCOMPARE(cell->background().color(), QColor(255, 236, 179));

    // One time axis: both timelines span the longer iteration, and zooming one moves the other.
    const double longer = std::max(m_result.plans[0].prediction.iteration_time_s, m_result.uniform_baseline->prediction.iteration_time_s);
    TimelinePlot* a = compare->timelines()[0];
    TimelinePlot* b = compare->timelines()[1];
    QVERIFY(std::abs(a->timeLimit() - b->timeLimit()) < 1e-12);
    QVERIFY(a->timeLimit() >= longer * (1 - 1e-9));
    a->xAxis->setRange(0.1 * longer, 0.2 * longer);
    QCOMPARE(b->xAxis->range().lower, a->xAxis->range().lower);
    QCOMPARE(b->xAxis->range().upper, a->xAxis->range().upper);
    // Partitions on one layer scale: 24 layers fill the same width in both.
    QCOMPARE(compare->partitions()[0]->stageRect(1).right(), compare->partitions()[1]->stageRect(1).right());
}

namespace {

// Every entry of a chart's legend at least as wide as its swatch and text need: none cut off.
bool legendEntriesUncut(QCPLegend* legend, int chartWidth)
{
    for (int i = 0; i < legend->itemCount(); ++i) {
        const QCPAbstractLegendItem* item = legend->item(i);
        if (item && (item->outerRect().width() < item->minimumOuterSizeHint().width() || item->outerRect().right() > chartWidth))
            return false;
    }
    return true;
}

} // namespace

void PlanExplorerTest::compareChartsKeepReadableSizesInASmallWindow()
{
    // About what a 1280 x 800 window leaves the explorer with its docks open.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->resize(600, 650);
    w->selectPlan(0);
    w->showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(w->view(QStringLiteral("compare")));
    QVERIFY(compare);
    QCOMPARE(compare->timelines().size(), 2);
    QCOMPARE(compare->memoryPlots().size(), 2);
    QApplication::processEvents();

    // The view fits the room it is given: the window need not grow.
    QVERIFY2(w->minimumSizeHint().height() <= 650, qPrintable(QString::number(w->minimumSizeHint().height())));
    QCOMPARE(w->size(), QSize(600, 650));
    // The table takes at most 35 % of the splitter, the charts the rest, and they scroll
    // rather than shrink.
    const QList<int> sizes = compare->splitter()->sizes();
    QVERIFY2(sizes[0] <= 0.35 * (sizes[0] + sizes[1]) + 1, qPrintable(QStringLiteral("%1 %2").arg(sizes[0]).arg(sizes[1])));
    QVERIFY(compare->chartArea()->verticalScrollBar()->maximum() > 0);

    const int line = compare->fontMetrics().height();
    for (TimelinePlot* t : compare->timelines()) {
        t->replot();
        // Each lane at least as tall as a line of its label.
        QVERIFY2(t->axisRect()->height() >= t->timeline().stages * line,
                 qPrintable(QStringLiteral("%1 px for %2 lanes").arg(t->axisRect()->height()).arg(t->timeline().stages)));
    }
    TimelinePlot* first = compare->timelines().front();
    TimelinePlot* last = compare->timelines().back();
    // One legend, uncut; the times are written once, under the last chart.
    QVERIFY(first->legend->visible());
    QVERIFY(!last->legend->visible());
    QVERIFY(legendEntriesUncut(first->legend, first->width()));
    QVERIFY(!first->xAxis->tickLabels());
    QVERIFY(first->xAxis->label().isEmpty());
    QVERIFY(last->xAxis->tickLabels());
    QVERIFY(!last->xAxis->label().isEmpty());
    // One time is one x position in every chart: the lane labels' margins are the same.
    QTRY_COMPARE(first->axisRect()->left(), last->axisRect()->left());
    QCOMPARE(first->axisRect()->width(), last->axisRect()->width());

    // 600 px hold one memory chart per row; each keeps a readable size.
    QCOMPARE(compare->memoryColumns(), 1);
    for (MemoryBarsPlot* m : compare->memoryPlots()) {
        QVERIFY(m->height() >= 320);
        QVERIFY(m->width() >= 420);
    }
    // The memory charts do not zoom: the wheel over one scrolls the charts.
    {
        QScrollBar* bar = compare->chartArea()->verticalScrollBar();
        bar->setValue(0);
        MemoryBarsPlot* m = compare->memoryPlots().front();
        const QPointF centre = m->rect().center();
        QWheelEvent wheel(centre, m->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(m, &wheel);
        QVERIFY(bar->value() > 0);
    }
    // A wide window puts them side by side, at the same height.
    w->resize(1500, 1000);
    QApplication::processEvents();
    QCOMPARE(compare->memoryColumns(), 2);
    QTRY_COMPARE(compare->memoryPlots()[0]->y(), compare->memoryPlots()[1]->y());
    QCOMPARE(compare->memoryPlots()[0]->height(), compare->memoryPlots()[1]->height());

    // Each chart's title is written in the theme's text colour, also after a switch to dark.
    QPalette dark = w->palette();
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    for (const QPalette& pal : {w->palette(), dark}) {
        w->setPalette(pal);
        QApplication::processEvents();
        QList<QCustomPlot*> charts;
        for (TimelinePlot* t : compare->timelines())
            charts << t;
        for (MemoryBarsPlot* m : compare->memoryPlots())
            charts << m;
        int titles = 0;
        for (QCustomPlot* c : charts)
            for (QCPLayoutElement* e : c->plotLayout()->elements(true))
                if (auto* title = qobject_cast<QCPTextElement*>(e); title && !title->text().isEmpty()) {
                    QCOMPARE(title->textColor(), pal.color(QPalette::Text));
                    ++titles;
                }
        QVERIFY(titles >= 4);   // two plans, a timeline and a memory chart each
    }
}

namespace {

// Every legend entry as tall as its text needs (a squeezed legend row cuts them in half).
bool legendEntriesFullHeight(QCPLegend* legend)
{
    for (int i = 0; i < legend->itemCount(); ++i) {
        const QCPAbstractLegendItem* item = legend->item(i);
        if (item && item->outerRect().height() < item->minimumOuterSizeHint().height())
            return false;
    }
    return true;
}

} // namespace

void PlanExplorerTest::compareChartsFitTheViewportWidth()
{
    // The explorer's width in windows of 1024 x 700 to 1920 x 1080 (985 px in a 1440 x 900
    // one with the Search dock open, where the memory charts stand two abreast but the seven
    // entries of a legend in one row are 640 px wide). The chart area never scrolls sideways,
    // so every chart must end inside it, and the time axis must reach the iteration's end.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(0);
    w->showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(w->view(QStringLiteral("compare")));
    QVERIFY(compare);
    QCOMPARE(compare->timelines().size(), 2);
    QWidget* viewport = compare->chartArea()->viewport();
    for (int width : {600, 860, 985, 1100, 1300, 1500, 1780}) {
        w->resize(width, 560);
        settle();
        const QString at = QStringLiteral("explorer %1 px wide, viewport %2 px").arg(width).arg(viewport->width());
        QVERIFY2(compare->chartArea()->widget()->width() <= viewport->width(), qPrintable(at));
        QList<QCustomPlot*> charts;
        for (TimelinePlot* t : compare->timelines())
            charts << t;
        for (MemoryBarsPlot* m : compare->memoryPlots())
            charts << m;
        for (QCustomPlot* c : charts) {
            const int right = c->mapTo(viewport, QPoint(c->width(), 0)).x();
            QVERIFY2(right <= viewport->width(), qPrintable(QStringLiteral("%1: a chart ends at %2").arg(at).arg(right)));
        }
        for (TimelinePlot* t : compare->timelines()) {
            t->replot();
            QVERIFY2(t->xAxis->range().upper >= t->timeline().iterationEnd, qPrintable(at));
            QVERIFY2(t->axisRect()->rect().right() <= t->width(), qPrintable(at));
        }
        TimelinePlot* first = compare->timelines().front();
        QVERIFY2(legendEntriesUncut(first->legend, first->width()), qPrintable(at));
        QVERIFY2(legendEntriesFullHeight(first->legend), qPrintable(at));
    }

    // One lane per plan (all 24 layers on the H800 node, with and without recompute): the
    // plot area's least height does not squeeze the legend above it.
    SearchResult oneStage;
    for (Recompute rc : {Recompute::None, Recompute::Full}) {
        Plan plan;
        plan.global_batch_size = 256;
        plan.stages = {test::stage("H800", 0, 0, 8, 0, 24, 1, 8, 8, 1, 1, 1, rc)};
        oneStage.plans.push_back(test::costed(*m_cost, plan));
    }
    w->setResult(oneStage);
    w->resize(985, 560);
    w->showView(QStringLiteral("compare"));
    settle();
    QCOMPARE(compare->timelines().size(), 2);
    TimelinePlot* first = compare->timelines().front();
    QCOMPARE(first->timeline().stages, 1);
    first->replot();
    QVERIFY(legendEntriesFullHeight(first->legend));
    QVERIFY(legendEntriesUncut(first->legend, first->width()));
}

void PlanExplorerTest::whatIfOffloadTradesMemoryForTime()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    QCOMPARE(whatIf->offloadBox()->value(), 0);
    // All of the optimizer in host memory (docs/cost-model.md section 7.3): the 12 bytes per
    // parameter of the shard leave every stage, and the host's Adam step takes longer.
    whatIf->offloadBox()->setValue(100);
    QVERIFY(whatIf->whatIfPrediction().has_value());
    const Prediction& p = *whatIf->whatIfPrediction();
    const Prediction& base = m_result.plans[0].prediction;
    QVERIFY(p.peak_memory_gib < base.peak_memory_gib);
    QVERIFY(p.breakdown.optimizer > base.breakdown.optimizer);
    for (const StageEstimate& st : p.stages)
        QCOMPARE(st.memory.optimizer, 0.0);
    // The same figure as the cost model gives for the plan with the fraction set.
    Plan plan = m_result.plans[0].plan;
    plan.optimizer_offload_fraction = 1.0;
    CostModel cost(m_model, m_cluster, DeviceCatalog::builtin());
    QCOMPARE(p.iteration_time_s, cost.estimate(plan).iteration_time_s);
    whatIf->offloadBox()->setValue(0);
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, base.iteration_time_s);
}

void PlanExplorerTest::whatIfKeepsThePredictionsSwitches()
{
    // A plan whose prediction assumed other overlap switches than the cost model's defaults
    // (the configuration of a script without --overlap-grad-reduce, as hapmoe estimate
    // --script costs it): What-if re-estimates with the prediction's switches, so that the
    // unchanged plan shows no change.
    const RankedPlan& ranked = m_result.plans.front();
    CostOptions exposed;
    exposed.overlap.grad_reduce = false;
    exposed.overlap.param_gather = false;
    const Prediction asRun = CostModel(m_model, m_cluster, DeviceCatalog::builtin(), nullptr, exposed).estimate(ranked.plan);
    QVERIFY2(asRun.iteration_time_s > ranked.prediction.iteration_time_s,
             qPrintable(QString("%1 vs %2").arg(asRun.iteration_time_s).arg(ranked.prediction.iteration_time_s)));
    WhatIfPanel whatIf;
    whatIf.setContext(context());
    ExplorerPlan entry;
    entry.ranked = RankedPlan{ranked.plan, asRun};
    whatIf.setPlan(&entry);
    QVERIFY(whatIf.whatIfPrediction().has_value());
    QCOMPARE(whatIf.whatIfPrediction()->iteration_time_s, asRun.iteration_time_s);
    QVERIFY(whatIf.hint().isEmpty());
}

void PlanExplorerTest::compareTableKeepsItsColumnsInANarrowView()
{
    // About what a 1024 x 700 window leaves the explorer: the list of plans would leave the
    // table no room for its columns, so the plans are ticked in a button's menu instead.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->resize(390, 600);
    w->selectPlan(0);
    w->showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(w->view(QStringLiteral("compare")));
    QVERIFY(compare);
    settle();
    QVERIFY(compare->choosesInAMenu());
    auto* list = compare->findChild<QListWidget*>(QStringLiteral("compareChooser"));
    auto* button = compare->findChild<QToolButton*>(QStringLiteral("compareChooserButton"));
    QVERIFY(list && button);
    QVERIFY(!list->isVisible());
    QVERIFY(button->isVisible());
    // Both plans' columns in view, each wide enough for its figures.
    QTableWidget* table = compare->table();
    QCOMPARE(table->columnCount(), 2);
    QCOMPARE(table->horizontalScrollBar()->maximum(), 0);
    for (int c = 0; c < 2; ++c)
        QVERIFY2(table->columnWidth(c) >= table->fontMetrics().horizontalAdvance(table->item(1, c)->text()),
                 qPrintable(QString::number(table->columnWidth(c))));
    // The menu ticks plans as the list does.
    QMenu* menu = button->menu();
    QVERIFY(menu);
    QMetaObject::invokeMethod(menu, "aboutToShow");
    QCOMPARE(menu->actions().size(), list->count());
    QVERIFY(menu->actions()[0]->isChecked());
    menu->actions()[1]->setChecked(true);
    QCOMPARE(compare->compared(), (QList<int>{0, 1, 2}));
    QCOMPARE(table->columnCount(), 3);

    // Wide again: the list is back beside the table.
    w->resize(900, 600);
    settle();
    QVERIFY(!compare->choosesInAMenu());
    QVERIFY(list->isVisible());
    QVERIFY(!button->isVisible());
}

void PlanExplorerTest::compareMarksDifferencesBelowTheShownDigits()
{
    // The same plan twice, the second 0.1 ms slower per iteration: both print the same
    // iteration time (four significant digits), yet the row is marked as differing, the
    // first is in bold, and the tooltip gives the values in full.
    std::vector<ExplorerPlan> plans(2);
    plans[0].ranked = m_result.plans.front();
    plans[1].ranked = m_result.plans.front();
    plans[1].ranked.plan.name = "twin";
    plans[1].ranked.prediction.iteration_time_s += 1e-4;
    CompareView compare;
    QTableWidget* table = compareFirstTwo(compare, plans);
    const int row = tableRow(table, QStringLiteral("Iteration time"));
    QVERIFY(row >= 0);
    QCOMPARE(table->item(row, 0)->text(), table->item(row, 1)->text());
    QVERIFY(compare.differingRows().contains(QStringLiteral("Iteration time")));
    QVERIFY(table->item(row, 0)->font().bold());
    QVERIFY(!table->item(row, 1)->font().bold());
    QVERIFY2(table->item(row, 1)->toolTip().contains(QStringLiteral("differ below the shown digits")), qPrintable(table->item(row, 1)->toolTip()));
    // Figures equal in value stay unmarked.
    QVERIFY(!compare.differingRows().contains(QStringLiteral("Peak memory")));
}

void PlanExplorerTest::compareRanksIterationTimesPerSequenceAcrossBatches()
{
    // A current configuration that keeps its own global batch (SearchResult::current_note):
    // the search's plan, T seconds for B sequences, against one of 0.6 T for B / 2. The
    // second's iteration is the shorter, but per sequence it takes 1.2 T / B, 20 % more: the
    // first is in bold, and each tooltip gives the time per sequence.
    std::vector<ExplorerPlan> plans(2);
    plans[0].ranked = m_result.plans.front();
    plans[1].ranked = m_result.plans.front();
    plans[1].ranked.plan.name = "current (train.sh)";
    const double t = plans[0].ranked.prediction.iteration_time_s;
    const int batch = plans[0].ranked.plan.global_batch_size;
    QVERIFY(batch % 2 == 0);
    plans[1].ranked.plan.global_batch_size = batch / 2;
    plans[1].ranked.prediction.iteration_time_s = 0.6 * t;
    CompareView compare;
    QTableWidget* table = compareFirstTwo(compare, plans);
    const int row = tableRow(table, QStringLiteral("Iteration time"));
    QVERIFY(row >= 0);
    QVERIFY(table->item(row, 0)->font().bold());
    QVERIFY(!table->item(row, 1)->font().bold());
    QVERIFY2(table->item(row, 1)->toolTip().contains(QStringLiteral("for a global batch of %1: %2 per sequence")
                                                         .arg(batch / 2)
                                                         .arg(style::formatSeconds(1.2 * t / batch))),
             qPrintable(table->item(row, 1)->toolTip()));
    QVERIFY2(table->item(row, 0)->toolTip().contains(QStringLiteral("for a global batch of %1: %2 per sequence")
                                                         .arg(batch)
                                                         .arg(style::formatSeconds(t / batch))),
             qPrintable(table->item(row, 0)->toolTip()));
    QVERIFY(compare.differingRows().contains(QStringLiteral("Global batch")));

    // Of one batch, the shorter iteration is the better.
    plans[1].ranked.plan.global_batch_size = batch;
    compareFirstTwo(compare, plans);
    QVERIFY(!table->item(row, 0)->font().bold());
    QVERIFY(table->item(row, 1)->font().bold());
    QVERIFY(!table->item(row, 1)->toolTip().contains(QStringLiteral("per sequence")));
}

void PlanExplorerTest::mfuAbovePeakIsMarked()
{
    // A profile whose times beat the hardware gives MFU above 100 %: the plan list marks the
    // figure as a problem and its tooltip says why; 99.9 % is not marked.
    std::vector<ExplorerPlan> plans(1);
    plans[0].ranked = m_result.plans.front();
    plans[0].ranked.prediction.mfu = 1.253;
    PlanListModel model;
    model.setPlans(plans);
    const QModelIndex mfu = model.index(0, PlanListModel::Mfu);
    QCOMPARE(mfu.data().toString(), QStringLiteral("125.3 %"));
    QCOMPARE(mfu.data(Qt::ForegroundRole).value<QBrush>().color(), style::problemColor());
    QVERIFY(mfu.data(Qt::ToolTipRole).toString().contains(QStringLiteral("MFU above 100 %")));
    // The TFLOP/s beside it too; the other figures stay as they are.
    const QModelIndex tflops = model.index(0, PlanListModel::TflopsPerDevice);
    QCOMPARE(tflops.data(Qt::ForegroundRole).value<QBrush>().color(), style::problemColor());
    QVERIFY(tflops.data(Qt::ToolTipRole).toString().contains(QStringLiteral("MFU above 100 %")));
    QVERIFY(!model.index(0, PlanListModel::IterationTime).data(Qt::ForegroundRole).isValid());
    plans[0].ranked.prediction.mfu = 0.999;
    model.setPlans(plans);
    QVERIFY(!model.index(0, PlanListModel::Mfu).data(Qt::ForegroundRole).isValid());
    QVERIFY(!model.index(0, PlanListModel::Mfu).data(Qt::ToolTipRole).toString().contains(QStringLiteral("MFU above")));
}

void PlanExplorerTest::longPlanNamesAreElidedNotClipped()
{
    // A current configuration named after a long script: the plan table's name column stays
    // within its bound (the figures keep the room) and shows the name's ends, and the
    // comparison's header shortens it with an ellipsis; both tooltips hold it whole.
    SearchResult result = m_result;
    const QString longName = QStringLiteral("current (pretrain_mixtral_8x7b_distributed_with_expert_parallel.sh)");
    result.current->plan.name = longName.toStdString();
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    w.resize(1024, 700);
    w.show();
    QApplication::processEvents();
    auto* table = qobject_cast<PlanTableView*>(w.view(QStringLiteral("plans")));
    QVERIFY(table);
    const int nameWidth = table->horizontalHeader()->sectionSize(PlanListModel::Name);
    QVERIFY2(nameWidth <= table->nameColumnBound(), qPrintable(QString::number(nameWidth)));
    QVERIFY(table->fontMetrics().horizontalAdvance(longName) > nameWidth);
    QCOMPARE(table->textElideMode(), Qt::ElideMiddle);
    int row = -1;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, PlanListModel::Name).data().toString() == longName)
            row = r;
    QVERIFY(row >= 0);
    QVERIFY(table->model()->index(row, PlanListModel::Name).data(Qt::ToolTipRole).toString().contains(longName.toHtmlEscaped()));

    w.selectPlan(0);
    w.showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(w.view(QStringLiteral("compare")));
    QVERIFY(compare);
    QApplication::processEvents();
    QTableWidget* cmp = compare->table();
    int column = -1;
    for (int c = 0; c < cmp->columnCount(); ++c)
        if (cmp->horizontalHeaderItem(c)->toolTip() == longName)
            column = c;
    QVERIFY(column >= 0);
    const QString shown = cmp->horizontalHeaderItem(column)->text();
    QVERIFY2(shown.endsWith(QChar(0x2026)) && longName.startsWith(shown.chopped(1)), qPrintable(shown));
    QVERIFY2(QFontMetrics(cmp->horizontalHeader()->font()).horizontalAdvance(shown) < cmp->horizontalHeader()->sectionSize(column),
             qPrintable(shown));
    // Wider, it shows more of the name.
    w.resize(1900, 900);
    QApplication::processEvents();
    QVERIFY2(cmp->horizontalHeaderItem(column)->text().size() > shown.size(), qPrintable(cmp->horizontalHeaderItem(column)->text()));
}

void PlanExplorerTest::compareMemoryChartsKeepOneScale()
{
    // Sixteen stages of one device taking no, selective and full recompute in turn (upright
    // labels over narrow bars, which need room above the plot area) beside the two-stage
    // plan (labels across, which do not): side by side on one memory scale, both plot areas
    // start and end at the same height. Then beside the uniform plan, whose shared recompute
    // is a note under its bars: the same.
    Plan sixteen;
    sixteen.name = "sixteen stages";
    sixteen.global_batch_size = 256;
    sixteen.target = Target::FlagScale;
    int layer = 0;
    for (int s = 0; s < 16; ++s) {
        const int layers = s < 8 ? 2 : 1;
        sixteen.stages.push_back(test::stage(s < 8 ? "H800" : "910B-376T", s / 8, s % 8, 1, layer, layers, 1, 1, 1, 1, 1, 1,
                                             std::array{Recompute::None, Recompute::Selective, Recompute::Full}[s % 3]));
        layer += layers;
    }
    std::vector<ExplorerPlan> plans(2);
    plans[0].ranked = m_result.plans.front();
    plans[1].ranked = test::costed(*m_cost, sixteen);
    CompareView compare;
    compare.resize(1100, 900);
    compare.show();
    compare.setPlans(plans);
    compare.setCompared({0, 1});
    QTRY_VERIFY(compare.memoryPlots().size() == 2 && compare.memoryPlots()[1]->barLabelRotation() == -90.0);
    QCOMPARE(compare.memoryColumns(), 2);
    MemoryBarsPlot* few = compare.memoryPlots()[0];
    MemoryBarsPlot* many = compare.memoryPlots()[1];
    QVERIFY(few->recomputeNote().isEmpty() && many->recomputeNote().isEmpty());
    QVERIFY2(few->barLabel(0).endsWith(QStringLiteral(": none")), qPrintable(few->barLabel(0)));
    QVERIFY2(many->barLabel(1).startsWith(QStringLiteral("rc: sel")), qPrintable(many->barLabel(1)));
    QTRY_COMPARE(few->barLabelRotation(), 0.0);
    QTRY_VERIFY(many->labelRoom() > 0 && few->axisRect()->top() == many->axisRect()->top());
    QTRY_COMPARE(few->axisRect()->bottom(), many->axisRect()->bottom());
    QCOMPARE(few->yAxis->range().upper, many->yAxis->range().upper);

    plans[0].ranked = *m_result.uniform_baseline;
    compare.setPlans(plans);
    compare.setCompared({0, 1});
    QTRY_VERIFY(compare.memoryPlots().size() == 2 && compare.memoryPlots()[1]->barLabelRotation() == -90.0);
    MemoryBarsPlot* uniform = compare.memoryPlots()[0];
    many = compare.memoryPlots()[1];
    QCOMPARE(uniform->recomputeNote(), QStringLiteral("recompute: full 12/12 in every stage"));
    QVERIFY(uniform->barLabel(0).isEmpty());
    QTRY_VERIFY(many->labelRoom() > 0 && uniform->axisRect()->top() == many->axisRect()->top());
    QTRY_COMPARE(uniform->axisRect()->bottom(), many->axisRect()->bottom());
    QCOMPARE(uniform->yAxis->range().upper, many->yAxis->range().upper);
}

void PlanExplorerTest::whatIfFp8()
{
    // FP8 GEMMs (docs/cost-model.md section 3.7): the hetero plan on 16-1 has a 910B stage,
    // which has no FP8 tensor cores: refused, naming the stage. The H800 stage alone, all 24
    // layers on its node, re-estimates as the cost model does with the model in FP8.
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    QCOMPARE(Fp8Format(whatIf->fp8Box()->currentData().toInt()), Fp8Format::None);
    whatIf->fp8Box()->setCurrentIndex(whatIf->fp8Box()->findData(int(Fp8Format::Hybrid)));
    QVERIFY(!whatIf->whatIfPrediction().has_value());
    QVERIFY2(whatIf->problem().startsWith(QStringLiteral("Stage 1 runs on 910B-376T: its catalog entry gives no FP8 rate")),
             qPrintable(whatIf->problem()));
    whatIf->fp8Box()->setCurrentIndex(0);
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, m_result.plans[0].prediction.iteration_time_s);

    Plan h800 = m_result.plans[0].plan;
    h800.stages.resize(1);
    h800.stages[0].first_layer = 0;
    h800.stages[0].num_layers = m_model.num_layers;
    WhatIfPanel panel;
    panel.setContext(context());
    ExplorerPlan entry;
    entry.ranked = test::costed(*m_cost, h800);
    panel.setPlan(&entry);
    panel.fp8Box()->setCurrentIndex(panel.fp8Box()->findData(int(Fp8Format::Hybrid)));
    QVERIFY2(panel.whatIfPrediction().has_value(), qPrintable(panel.problem()));
    ModelSpec fp8 = m_model;
    fp8.training.fp8_format = Fp8Format::Hybrid;
    const double expected = CostModel(fp8, m_cluster, DeviceCatalog::builtin()).estimate(h800).iteration_time_s;
    QCOMPARE(panel.whatIfPrediction()->iteration_time_s, expected);
    QVERIFY(expected < entry.ranked.prediction.iteration_time_s);
}

void PlanExplorerTest::whatIfRecompute()
{
    // Every stage's recompute (docs/cost-model.md sections 3.5 and 5.2), against none on
    // every stage (the plan recomputes 4 of the 910B stage's layers in full): the experts'
    // activation and the pre-MLP norm recomputed take memory off every stage for more
    // backward time, as the cost model gives it for the plan with that recompute; the 910B
    // stage cannot run moe_act (no grouped GEMM there), which a hint says; full recompute of
    // every layer keeps less still.
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    QComboBox* box = whatIf->recomputeBox();
    QCOMPARE(box->currentData().toInt(), -1);
    const Prediction& base = m_result.plans[0].prediction;
    box->setCurrentIndex(box->findData(int(WhatIfRecompute::None)));
    QVERIFY2(whatIf->whatIfPrediction().has_value(), qPrintable(whatIf->problem()));
    const Prediction none = *whatIf->whatIfPrediction();
    box->setCurrentIndex(box->findData(int(WhatIfRecompute::MoeActLayernorm)));
    QVERIFY2(whatIf->whatIfPrediction().has_value(), qPrintable(whatIf->problem()));
    const Prediction selective = *whatIf->whatIfPrediction();
    Plan plan = m_result.plans[0].plan;
    for (StagePlan& st : plan.stages) {
        st.recompute = Recompute::Selective;
        st.recompute_layers = 0;
        st.recompute_modules = recompute_module::moe_act | recompute_module::layernorm;
    }
    QCOMPARE(selective.iteration_time_s, m_cost->estimate(plan).iteration_time_s);
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
        QVERIFY(selective.stages[i].memory.activations < none.stages[i].memory.activations);
        QVERIFY(selective.stages[i].t_bwd > none.stages[i].t_bwd);
        QCOMPARE(selective.stages[i].t_fwd, none.stages[i].t_fwd);
    }
    QVERIFY2(whatIf->hint().contains(QStringLiteral("No launcher can run this recompute")), qPrintable(whatIf->hint()));
    // The MoE layer whole with its norm (the search's whole-block setting): its forward again
    // in backward, the dispatch included, for less memory than the element-wise modules.
    box->setCurrentIndex(box->findData(int(WhatIfRecompute::MoeLayer)));
    QVERIFY2(whatIf->whatIfPrediction().has_value(), qPrintable(whatIf->problem()));
    const Prediction whole = *whatIf->whatIfPrediction();
    for (StagePlan& st : plan.stages)
        st.recompute_modules = recompute_module::layernorm | recompute_module::moe;
    QCOMPARE(whole.iteration_time_s, m_cost->estimate(plan).iteration_time_s);
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
        QVERIFY(whole.stages[i].memory.activations < selective.stages[i].memory.activations);
        QVERIFY(whole.stages[i].t_bwd > selective.stages[i].t_bwd);
    }
    // Mixtral has no dense layer: no mlp, nor all three blocks together.
    QCOMPARE(box->findData(int(WhatIfRecompute::Mlp)), -1);
    QCOMPARE(box->findData(int(WhatIfRecompute::WholeBlocks)), -1);
    box->setCurrentIndex(box->findData(int(WhatIfRecompute::Full)));
    QVERIFY(whatIf->whatIfPrediction()->peak_memory_gib < selective.peak_memory_gib);
    box->setCurrentIndex(0);
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, base.iteration_time_s);
}

void PlanExplorerTest::whatIfMicroBatchSize()
{
    // The hetero plan on 16-1 runs DP 4 x MBS 1 on the H800 stage and DP 2 x MBS 2 on the
    // 910B stage (FlagScale's rule). At a first micro-batch size of 2 the step is 8
    // sequences: the 910B stage runs 4, and M = 256 / 8 = 32, the cost model's figure for
    // that plan.
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    QCOMPARE(whatIf->microBatchBox()->value(), 1);
    whatIf->microBatchBox()->setValue(2);
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->whatIfPrediction()->num_microbatches, 32);
    Plan twice = m_result.plans[0].plan;
    twice.stages[0].micro_batch_size = 2;
    twice.stages[1].micro_batch_size = 4;
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, m_cost->estimate(twice).iteration_time_s);
    // A step the global batch does not divide: 256 / (4 x 3) is not whole.
    whatIf->microBatchBox()->setValue(3);
    QVERIFY(!whatIf->whatIfPrediction().has_value());
    QVERIFY2(whatIf->problem().contains(QStringLiteral("not a multiple of DP × micro-batch = 12")), qPrintable(whatIf->problem()));
    QVERIFY2(whatIf->hint().contains(QStringLiteral("A smaller micro-batch size")), qPrintable(whatIf->hint()));
    whatIf->microBatchBox()->setValue(1);
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, m_result.plans[0].prediction.iteration_time_s);

    // With the meshes the other way round (DP 2 first, then DP 4), an odd first size leaves
    // the second stage a half sequence: refused, with what would keep the plan.
    Plan mirrored = m_result.plans[0].plan;
    mirrored.stages[0].tp = 4;
    mirrored.stages[0].dp = 2;
    mirrored.stages[0].micro_batch_size = 2;
    mirrored.stages[1].tp = 2;
    mirrored.stages[1].dp = 4;
    mirrored.stages[1].micro_batch_size = 1;
    WhatIfPanel panel;
    panel.setContext(context());
    ExplorerPlan entry;
    entry.ranked = test::costed(*m_cost, mirrored);
    panel.setPlan(&entry);
    QCOMPARE(panel.microBatchBox()->value(), 2);
    QVERIFY(panel.whatIfPrediction().has_value());
    panel.microBatchBox()->setValue(1);
    QVERIFY(!panel.whatIfPrediction().has_value());
    QVERIFY2(panel.problem().contains(QStringLiteral("Micro-batch size 1 gives stage 1 (DP 4) 2 / 4 sequences per micro-batch")),
             qPrintable(panel.problem()));
    QVERIFY(panel.hint().contains(QStringLiteral("Search micro-batch size")));
}

void PlanExplorerTest::whatIfRhoChangesTheIterationTime()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    // Unchanged inputs re-estimate the same plan to the same time.
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, m_result.plans[0].prediction.iteration_time_s);
    QCOMPARE(whatIf->rhoBox()->value(), 1.2);

    // Type rho = 2 into the box: the MoE critical path grows by 1 + gamma (min(rho, EP) - 1) (eq. 2).
    QDoubleSpinBox* rho = whatIf->rhoBox();
    rho->selectAll();
    QTest::keyClicks(rho, QStringLiteral("2.00"));
    QTest::keyClick(rho, Qt::Key_Return);
    QCOMPARE(rho->value(), 2.0);
    QVERIFY(whatIf->whatIfPrediction().has_value());
    const double t = whatIf->whatIfPrediction()->iteration_time_s;
    QVERIFY(t > m_result.plans[0].prediction.iteration_time_s);

    // Same figure as the cost model gives directly for rho = 2.
    ModelSpec model = m_model;
    model.training.router_imbalance = 2.0;
    CostModel cost(model, m_cluster, DeviceCatalog::builtin());
    QCOMPARE(t, cost.estimate(m_result.plans[0].plan).iteration_time_s);

    // A larger global batch: M doubles (512 / (4 x 1) = 128).
    whatIf->globalBatchBox()->setValue(512);
    QCOMPARE(whatIf->whatIfPrediction()->num_microbatches, 128);
    // The hint speaks of throughput, which a larger batch may raise while each iteration
    // takes longer: here rho 2 costs more than the doubled batch gains (tokens/s about 0.73
    // of the plan's), and the hint gives the fall in whole percent.
    const double ratio = whatIf->whatIfPrediction()->tokens_per_s / m_result.plans[0].prediction.tokens_per_s;
    QVERIFY2(ratio < 0.85, qPrintable(QString::number(ratio)));
    const QString fell = QStringLiteral("Tokens/s fell by %1 %").arg(100 * (1 - ratio), 0, 'f', 0);
    QVERIFY2(whatIf->hint().contains(fell), qPrintable(whatIf->hint() + " / " + fell));
    QVERIFY(!whatIf->hint().contains(QStringLiteral("iteration time")));
    // A batch the first stage's DP x mbs = 4 does not divide is refused with a hint.
    QSignalSpy suggested(w, &PlanExplorerWidget::newSearchSuggested);
    whatIf->globalBatchBox()->setValue(258);
    QVERIFY(!whatIf->whatIfPrediction().has_value());
    QVERIFY(!whatIf->problem().isEmpty());
    QCOMPARE(suggested.count(), 1);
    // A batch of 4 is one micro-batch (DP x mbs = 4) for the plan's stages: the hint says so.
    whatIf->globalBatchBox()->setValue(4);
    QCOMPARE(whatIf->whatIfPrediction()->num_microbatches, 1);
    QVERIFY2(whatIf->hint().contains(QStringLiteral("1 micro-batch for %1 stages").arg(m_result.plans[0].plan.pp())),
             qPrintable(whatIf->hint()));
    whatIf->globalBatchBox()->setValue(256);
    rho->setValue(1.2);

    // Mixtral-S gives no positions of its own (max_position_embeddings 0: the sequence
    // length's): a longer sequence needs no other change, and nothing is said of positions.
    QCOMPARE(m_model.max_position_embeddings, 0);
    whatIf->sequenceLengthBox()->setValue(8192);
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QVERIFY2(!whatIf->hint().contains(QStringLiteral("positions")), qPrintable(whatIf->hint()));
    whatIf->sequenceLengthBox()->setValue(4096);

    // With 4096 positions of its own, 8192 tokens are beyond them: the estimate raises
    // --max-position-embeddings with the sequence, as the cost model gives for that model,
    // and the hint says the model needs the same change.
    WhatIfPanel own;
    ExplorerContext ctx = context();
    ctx.model.max_position_embeddings = 4096;
    own.setContext(ctx);
    ExplorerPlan entry;
    entry.ranked = m_result.plans.front();
    own.setPlan(&entry);
    own.sequenceLengthBox()->setValue(8192);
    QVERIFY(own.whatIfPrediction().has_value());
    ModelSpec longer = ctx.model;
    longer.seq_length = 8192;
    longer.max_position_embeddings = 8192;
    QCOMPARE(own.whatIfPrediction()->iteration_time_s,
             CostModel(longer, m_cluster, DeviceCatalog::builtin()).estimate(m_result.plans[0].plan).iteration_time_s);
    QVERIFY2(own.hint().contains(QStringLiteral("Sequence length 8192 is beyond the model's 4096 positions")),
             qPrintable(own.hint()));
}

void PlanExplorerTest::whatIfRemovingAUsedNodeAsksForANewSearch()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    whatIf->nodeTypeBox()->setCurrentText(QStringLiteral("910B-376T"));
    QCOMPARE(whatIf->nodeCountBox()->value(), 1);
    QSignalSpy suggested(w, &PlanExplorerWidget::newSearchSuggested);
    // Adding a node: the plan is unchanged (same time), its 8 devices would sit idle.
    whatIf->nodeCountBox()->setValue(2);
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, m_result.plans[0].prediction.iteration_time_s);
    QVERIFY(whatIf->hint().contains(QStringLiteral("The added devices (8 910B-376T) sit idle")));
    QCOMPARE(suggested.count(), 1);
    // Another type in the box keeps the 910B change: still two 910B nodes, and back on
    // 910B-376T the box says so.
    const int other = whatIf->nodeTypeBox()->findText(QStringLiteral("H800"));
    QVERIFY(other >= 0);
    whatIf->nodeTypeBox()->setCurrentIndex(other);
    QVERIFY(whatIf->hint().contains(QStringLiteral("The added devices (8 910B-376T) sit idle")));
    whatIf->nodeTypeBox()->setCurrentText(QStringLiteral("910B-376T"));
    QCOMPARE(whatIf->nodeCountBox()->value(), 2);
    suggested.clear();
    whatIf->nodeCountBox()->setValue(1);
    whatIf->nodeCountBox()->setValue(2);
    QCOMPARE(suggested.count(), 1);
    // Removing the only 910B node: the plan runs on it, so only a new search can help.
    whatIf->nodeCountBox()->setValue(0);
    QVERIFY(!whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->problem(), QStringLiteral("The plan runs on 1 910B-376T node; it cannot run on 0."));
    QVERIFY2(whatIf->hint().contains(QStringLiteral("a cluster without 910B-376T nodes")), qPrintable(whatIf->hint()));
    QCOMPARE(suggested.count(), 2);
    whatIf->nodeCountBox()->setValue(1);
}

void PlanExplorerTest::whatIfKeepsTheInterleavedGroups()
{
    // The uniform plan with VPP 2 on its 2 stages: 256 / (DP 4 x MBS 1) = 64 micro-batches.
    // Interleaved 1F1B runs them in groups of PP (Megatron-LM r0.8 schedules.py), so a batch
    // of 260 (65 micro-batches) is refused and 264 (66) is costed.
    Plan interleaved = test::uniformPlan16_1();
    interleaved.vpp = 2;
    SearchResult result;
    result.target = Target::Megatron;
    result.plans = {test::costed(*m_cost, interleaved)};
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    w.resize(1400, 900);
    w.show();
    w.selectPlan(0);
    auto* whatIf = qobject_cast<WhatIfPanel*>(w.view(QStringLiteral("whatif")));
    QVERIFY(whatIf && whatIf->isEnabled());
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->whatIfPrediction()->num_microbatches, 64);
    whatIf->globalBatchBox()->setValue(260);
    QVERIFY(!whatIf->whatIfPrediction().has_value());
    QVERIFY2(whatIf->problem().contains(QStringLiteral("65 micro-batches to be a multiple of the 2 stages")),
             qPrintable(whatIf->problem()));
    QVERIFY(whatIf->hint().contains(QStringLiteral("multiple of 8")));
    whatIf->globalBatchBox()->setValue(264);
    QVERIFY(whatIf->problem().isEmpty());
    QVERIFY(whatIf->whatIfPrediction().has_value());
    QCOMPARE(whatIf->whatIfPrediction()->num_microbatches, 66);
}

namespace {
// Answers the next modal file dialog with a path, as a user typing it would.
void answerFileDialog(const QString& path)
{
    QTimer::singleShot(50, [path] {
        auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
        if (!dialog)
            return answerFileDialog(path);
        auto* edit = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
        if (edit)
            edit->setText(path);
        else
            dialog->selectFile(path);
        static_cast<QDialog*>(dialog)->accept();   // QFileDialog::accept checks the name, as a click on Save
    });
}
} // namespace

void PlanExplorerTest::exportDialogSavesALauncher()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);   // the heterogeneous plan: FlagScale
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    QVERIFY(dialog);
    dialog->show();
    QCOMPARE(dialog->format(), LauncherFormat::FlagScale);
    QVERIFY2(dialog->result().ok, dialog->result().refusal.c_str());
    QVERIFY(dialog->checksList()->count() > 0);
    QVERIFY(dialog->saveLauncherButton()->isEnabled());

    QTemporaryDir dir;
    QVERIFY2(dialog->preview()->toPlainText().contains(QStringLiteral("# Usage: bash run_flagscale.sh NODE_RANK")),
             qPrintable(dialog->preview()->toPlainText().left(600)));
    // Saved under another name: its usage comment runs it by that name.
    const QString path = dir.filePath(QStringLiteral("mixtral-16.sh"));
    answerFileDialog(path);
    QTest::mouseClick(dialog->saveLauncherButton(), Qt::LeftButton);
    QTRY_VERIFY(QFile::exists(path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray script = f.readAll();
    QCOMPARE(script, QByteArray::fromStdString(dialog->result().script));
    QVERIFY2(script.contains("# Usage: bash mixtral-16.sh NODE_RANK"), script.left(600).constData());
    QVERIFY(QFileInfo(path).isExecutable());
    // FlagScale's hostfile (one "host slots=N type=T" line per node) is written beside it.
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("mixtral-16.hostfile"))));
    // Another target, then back: each launcher with its own default name again, so that a
    // save does not offer to overwrite the other target's file.
    dialog->setFormat(LauncherFormat::Megatron);
    dialog->setFormat(LauncherFormat::FlagScale);
    QVERIFY2(dialog->preview()->toPlainText().contains(QStringLiteral("# Usage: bash run_flagscale.sh NODE_RANK")),
             qPrintable(dialog->preview()->toPlainText().left(600)));

    // The plan JSON reads back as the same plan.
    const QString planPath = dir.filePath(QStringLiteral("plan.json"));
    answerFileDialog(planPath);
    QTest::mouseClick(dialog->savePlanButton(), Qt::LeftButton);
    QTRY_VERIFY(QFile::exists(planPath));
    const PlanDocument doc = readPlan(readTextFile(planPath.toStdString()), planPath.toStdString());
    QCOMPARE(doc.plan.pp(), 2);
    QCOMPARE(doc.plan.stages[0].num_layers, 14);
    QCOMPARE(doc.plan.stages[1].device_type, std::string("910B-376T"));
    dialog->hide();
}

void PlanExplorerTest::exportDialogRefusesAPlanTheTargetCannotRun()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    // Upstream Megatron-LM needs the same TP on every stage (TP2 vs TP4 here) and one
    // vendor: the launcher is refused with the reason and cannot be saved.
    dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(static_cast<int>(LauncherFormat::Megatron)));
    QCOMPARE(dialog->format(), LauncherFormat::Megatron);
    QVERIFY(!dialog->result().ok);
    QVERIFY(!dialog->result().refusal.empty());
    QVERIFY(dialog->refusalLabel()->text().contains(QStringLiteral("Refused")));
    QVERIFY(!dialog->saveLauncherButton()->isEnabled());
    QTemporaryDir dir;
    QVERIFY(!dialog->saveLauncher(dir.filePath(QStringLiteral("x.sh"))).isEmpty());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.sh"))));
}

void PlanExplorerTest::chartsSaveAsPngSvgAndPdf()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* timeline = qobject_cast<TimelinePlot*>(w->view(QStringLiteral("timeline")));
    QTemporaryDir dir;
    const QByteArray magic[] = {QByteArray("\x89PNG"), QByteArray("<?xml"), QByteArray("%PDF")};
    const QString names[] = {QStringLiteral("t.png"), QStringLiteral("t.svg"), QStringLiteral("t.pdf")};
    for (int i = 0; i < 3; ++i) {
        const QString path = dir.filePath(names[i]);
        QCOMPARE(saveChart(timeline, path), QString());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.read(5).startsWith(magic[i]), qPrintable(names[i]));
    }
    // The PNG is drawn at twice the widget's size.
    const QImage png(dir.filePath(QStringLiteral("t.png")));
    QCOMPARE(png.width(), 2 * timeline->width());
    QVERIFY(!saveChart(timeline, dir.filePath(QStringLiteral("t.bmp"))).isEmpty());

    // A file that cannot be written (its folder is a file): the message names the file and
    // the reason, and nothing is left behind.
    const QString notAFolder = dir.filePath(QStringLiteral("t.png"));
    const QString error = saveChart(timeline, notAFolder + QStringLiteral("/chart.png"));
    QVERIFY2(error.contains(QStringLiteral("t.png/chart.png")) && error.contains(QStringLiteral("Not a directory")),
             qPrintable(error));
    QCOMPARE(QImage(notAFolder).width(), png.width());
}

void PlanExplorerTest::breakdownTitleNamesTheBottleneckAndTheTail()
{
    // Three stages: S1 has the largest forward + backward (3 + 5 = 8 against 6 and 7), S2
    // the DP sync that ends last (9.4 from its last backward, which ends 4 + 5 = 9 before
    // S0's: 0.4 after it) and the longest optimizer step (0.3), as CostModel picks them.
    Plan plan;
    Prediction pred;
    const double fwd[] = {2, 3, 3}, bwd[] = {4, 5, 4}, sync[] = {0.1, 0.1, 9.4}, opt[] = {0.1, 0.0, 0.3};
    for (int i = 0; i < 3; ++i) {
        plan.stages.push_back(test::stage("H800", 0, 2 * i, 2, 8 * i, 8, 2, 1, 2, 1, 1, 1));
        StageEstimate e;
        e.t_fwd = fwd[i];
        e.t_bwd = bwd[i];
        e.dp_sync = sync[i];
        e.optimizer = opt[i];
        pred.stages.push_back(e);
    }
    setDrains(pred.stages, 1);
    pred.num_microbatches = 32;
    // Eq. 4: sum c_i + (M - 1) max c_i + wait + max step = 21 + 31 * 8 + 0.4 + 0.3 = 269.7.
    pred.iteration_time_s = 269.7;
    QCOMPARE(bottleneckStage(pred), 1);
    QCOMPARE(syncStage(pred), 2);
    QCOMPARE(stepStage(pred), 2);
    // The timeline marks the same two stages (the tail, 0.7 s, is far below 5 % of the
    // iteration, so its lane keeps a plain label).
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(tl.bottleneck, 1);
    QCOMPARE(tl.syncLane, 2);
    QCOMPARE(tl.stepLane, 2);

    BreakdownView view;
    view.setPlan(plan, pred);
    const QString title = view.barsTitle();
    QVERIFY2(title.contains(QStringLiteral("Iteration 269.700 s")), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("bottleneck S1 × 32 micro-batches")), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("+ the tail of S2 (DP sync + optimizer)")), qPrintable(title));
    // The last sync and the longest step on different stages: S0's sync ends last (0.1 after
    // its own last backward, the others' end before it), S2, now of DP 1, steps longest (0.7).
    // The title names both.
    pred.stages[2].dp_sync = 0;
    pred.stages[2].optimizer = 0.7;
    QCOMPARE(syncStage(pred), 0);
    QCOMPARE(stepStage(pred), 2);
    view.setPlan(plan, pred);
    QVERIFY2(view.barsTitle().contains(QStringLiteral("+ the last DP sync to end (S0)")), qPrintable(view.barsTitle()));
    QVERIFY2(view.barsTitle().contains(QStringLiteral("+ the longest step (S2: optimizer)")), qPrintable(view.barsTitle()));
    // The DP sync and optimizer bars say which stage each holds, so that they can be traced
    // to the table: S0's sync past its last backward (0.1 s) and S2's step (0.7 s).
    {
        QStringList labels;
        for (int i = 0; i < view.chart()->itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(view.chart()->item(i)))
                labels << t->text();
        const auto ending = [&](const QString& tail) {
            return std::count_if(labels.begin(), labels.end(), [&](const QString& l) { return l.endsWith(tail); }) == 1;
        };
        QVERIFY2(ending(QStringLiteral("):  S0 sync 100.0 ms")), qPrintable(labels.join(QLatin1Char('|'))));
        QVERIFY2(ending(QStringLiteral("):  S2 step")), qPrintable(labels.join(QLatin1Char('|'))));
        // The table's bold cells hold those figures: S0's sync (0.1 s, all of it past its own
        // last backward, drain 0) and S2's step (0.7 s); no other tail cell is bold.
        QTableWidget* table = view.stageTable();
        using C = BreakdownView::Column;
        auto bold = [table](int row, C column) { return table->item(row, column)->font().bold(); };
        QCOMPARE(table->item(0, C::SyncColumn)->text(), QStringLiteral("100.00"));
        QVERIFY(bold(0, C::SyncColumn));
        // Its tooltip quotes the bar's part as the bar writes it.
        QVERIFY2(table->item(0, C::SyncColumn)->toolTip().contains(QStringLiteral("the DP sync bar's \"S0 sync 100.0 ms\"")),
                 qPrintable(table->item(0, C::SyncColumn)->toolTip()));
        QCOMPARE(table->item(2, C::StepColumn)->text(), QStringLiteral("700.00"));
        QVERIFY(bold(2, C::StepColumn));
        for (int row = 0; row < 3; ++row)
            for (C c : {C::SyncColumn, C::GatherColumn, C::StepColumn})
                QCOMPARE(bold(row, c), (row == 0 && c == C::SyncColumn) || (row == 2 && c == C::StepColumn));
    }
    // With a parameter all-gather on S2 and tied embeddings, the three parts; in a narrow
    // chart each on a line of its own, every line within the chart's width.
    pred.stages[2].dp_sync = pred.stages[2].param_gather = 0.05;
    for (StageEstimate* e : {&pred.stages.front(), &pred.stages.back()}) {
        e->embedding_sync = 0.02;
        e->dp_sync += 0.02;
    }
    view.resize(400, 600);
    view.setPlan(plan, pred);
    QApplication::processEvents();
    const QString split = view.barsTitle();
    QVERIFY2(split.contains(QStringLiteral("+ the last DP sync to end (S0)\n+ tied-embedding all-reduce (S0, S2)\n"
                                           "+ the longest step (S2: optimizer + all-gather)")),
             qPrintable(split));
    // The all-gather (50 ms) has a column of its own, bold on S2, beside the step; S2's sync
    // column holds its tied all-reduce (20 ms), dp_sync less the all-gather.
    {
        QTableWidget* table = view.stageTable();
        using C = BreakdownView::Column;
        QCOMPARE(table->item(2, C::GatherColumn)->text(), QStringLiteral("50.00"));
        QVERIFY(table->item(2, C::GatherColumn)->font().bold());
        QVERIFY(table->item(2, C::StepColumn)->font().bold());
        QCOMPARE(table->item(2, C::SyncColumn)->text(), QStringLiteral("20.00"));
        QVERIFY(!table->item(2, C::SyncColumn)->font().bold());
    }
    auto* titleElement = view.chart()->findChild<QCPTextElement*>(QStringLiteral("breakdownTitle"));
    QVERIFY(titleElement);
    for (const QString& l : split.split(QLatin1Char('\n')))
        QVERIFY2(QFontMetrics(titleElement->font()).horizontalAdvance(l) <= view.chart()->width(), qPrintable(l));
    for (StageEstimate* e : {&pred.stages.front(), &pred.stages.back()}) {
        e->dp_sync -= 0.02;
        e->embedding_sync = 0;
    }
    pred.stages[2].dp_sync = pred.stages[2].param_gather = 0;
    // No stage with DP above 1: the title names only the optimizer step, not a sync of 0 s.
    for (StageEstimate& e : pred.stages)
        e.dp_sync = 0;
    view.setPlan(plan, pred);
    QVERIFY2(view.barsTitle().contains(QStringLiteral("(S2: optimizer)")), qPrintable(view.barsTitle()));
    QVERIFY2(!view.barsTitle().contains(QStringLiteral("DP sync")), qPrintable(view.barsTitle()));
    view.clear();
    QVERIFY(view.barsTitle().isEmpty());
}

void PlanExplorerTest::tiedStagesNameTheFirstAsTheBottleneckEverywhere()
{
    // Three stages with t_fwd + t_bwd = 1 s exactly (0.7 + 0.3, 0.15 + 0.85, 0.1 + 0.9), as
    // S10-S14 of Megatron-GPT-70B on 16-3 tie. Summed block by block in 1F1B order over 8
    // micro-batches, the simulator's busy times come out 8 - 1e-15, 8 - 1e-15 and 8: its
    // busiest rank is S2. CostModel::estimate takes the first largest: S0, in every view.
    Plan plan;
    Prediction pred;
    const double fwd[] = {0.7, 0.15, 0.1};
    for (int i = 0; i < 3; ++i) {
        plan.stages.push_back(test::stage("H800", 0, 2 * i, 2, 8 * i, 8, 2, 1, 2, 1, 1, 1));
        StageEstimate e;
        e.t_fwd = fwd[i];
        e.t_bwd = 1.0 - fwd[i];
        QCOMPARE(e.t_fwd + e.t_bwd, 1.0);
        pred.stages.push_back(e);
    }
    plan.global_batch_size = 8;
    pred.num_microbatches = 8;
    // Eq. 4: sum c_i + (M - 1) max c_i = 3 + 7 = 10 s.
    pred.iteration_time_s = 10;
    pred.feasible = true;
    QCOMPARE(bottleneckStage(pred), 0);
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(tl.bottleneck, 0);

    SearchResult result;
    result.plans = {RankedPlan{plan, pred}};
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    w.resize(1400, 900);
    w.show();
    QCOMPARE(w.selectedPlan(), 0);
    auto* partition = qobject_cast<StagePartitionView*>(w.view(QStringLiteral("partition")));
    QVERIFY(partition->stageToolTip(0).contains(QStringLiteral("(bottleneck)")));
    QVERIFY(!partition->stageToolTip(2).contains(QStringLiteral("(bottleneck)")));
    auto* timeline = qobject_cast<TimelinePlot*>(w.view(QStringLiteral("timeline")));
    QCOMPARE(timeline->timeline().bottleneck, 0);
    const QMap<double, QString> ticks = qSharedPointerCast<QCPAxisTickerText>(timeline->yAxis->ticker())->ticks();
    QVERIFY2(ticks.value(0).contains(QStringLiteral("bottleneck")), qPrintable(ticks.value(0)));
    QVERIFY2(!ticks.value(2).contains(QStringLiteral("bottleneck")), qPrintable(ticks.value(2)));
    auto* breakdown = qobject_cast<BreakdownView*>(w.view(QStringLiteral("breakdown")));
    QVERIFY2(breakdown->barsTitle().contains(QStringLiteral("bottleneck S0 × 8 micro-batches")), qPrintable(breakdown->barsTitle()));
}

void PlanExplorerTest::breakdownTableColumnsAddUp()
{
    // The four-stage plan on 32-3 (Table 1: 910B 2x8 + MI300X 2x8), plain 1F1B, costed by the
    // real cost model: S0-S2 send to the next stage, S3 sends nothing.
    const Cluster cluster = test::cluster32_3();
    const CostModel cost(m_model, cluster, DeviceCatalog::builtin());
    const RankedPlan hetero = test::costed(cost, test::heteroPlan32_3());
    const Prediction& pred = hetero.prediction;
    QCOMPARE(static_cast<int>(pred.stages.size()), 4);
    BreakdownView view;
    view.resize(900, 700);
    view.show();
    view.setPlan(hetero.plan, pred);
    QTableWidget* table = view.stageTable();
    QCOMPARE(table->rowCount(), 4);
    // Under the table, the prediction's notes as the CLI prints them (here, no profile).
    QVERIFY(view.notesLabel()->isVisibleTo(&view));
    for (const std::string& note : pred.notes)
        QVERIFY2(view.notesLabel()->text().contains(QString::fromStdString(note).toHtmlEscaped()), note.c_str());
    QVERIFY(view.notesLabel()->text().contains(QStringLiteral("no profile: every number is an analytic default")));
    QVERIFY(table->horizontalHeaderItem(BreakdownView::SendColumn)->text().contains(QStringLiteral("fwd + bwd")));
    QVERIFY(table->horizontalHeaderItem(BreakdownView::SendColumn)->toolTip().contains(QStringLiteral("backward")));

    using C = BreakdownView::Column;
    auto shown = [table](int row, C column) {
        bool ok = false;
        const double ms = QLocale().toDouble(table->item(row, column)->text(), &ok);   // grouped: "1,234.56"
        return ok ? ms : std::numeric_limits<double>::quiet_NaN();
    };
    for (int s = 0; s < 4; ++s) {
        const StageEstimate& e = pred.stages[static_cast<size_t>(s)];
        QCOMPARE(view.cellSeconds(s, C::FwdColumn), e.t_fwd);
        QCOMPARE(view.cellSeconds(s, C::BwdColumn), e.t_bwd);
        QCOMPARE(view.cellSeconds(s, C::ComputeColumn), e.compute);
        QCOMPARE(view.cellSeconds(s, C::TpColumn), e.tensor_parallel);
        QCOMPARE(view.cellSeconds(s, C::DispatchColumn), e.expert_dispatch);
        const double send = view.cellSeconds(s, C::SendColumn);
        // Compute + TP comm + Dispatch + Send = Fwd + Bwd, to the last bit ...
        const double total = e.t_fwd + e.t_bwd;
        const double parts = e.compute + e.tensor_parallel + e.expert_dispatch + send;
        QVERIFY2(std::abs(parts - total) <= 1e-12 * total, qPrintable(QStringLiteral("S%1: %2 vs %3").arg(s).arg(parts).arg(total)));
        // ... and as shown: six figures rounded to 0.01 ms are within 0.03 ms of each other.
        const double shownTotal = shown(s, C::FwdColumn) + shown(s, C::BwdColumn);
        const double shownParts = shown(s, C::ComputeColumn) + shown(s, C::TpColumn) + shown(s, C::DispatchColumn) + shown(s, C::SendColumn);
        QVERIFY2(std::abs(shownParts - shownTotal) <= 0.03 + 1e-9,
                 qPrintable(QStringLiteral("S%1: %2 vs %3 ms").arg(s).arg(shownParts).arg(shownTotal)));
        QVERIFY(std::abs(shownTotal - 1e3 * total) <= 0.01);
        // Plain 1F1B sends the gradient back over the activation's link with the same bytes
        // (docs/cost-model.md section 6): the column holds twice the forward send, which is
        // what p2p_send alone, the column's former content, leaves out.
        if (s < 3) {
            QVERIFY(e.p2p_send > 0);
            QVERIFY2(qFuzzyCompare(send, 2 * e.p2p_send), qPrintable(QStringLiteral("S%1: %2 vs 2 x %3").arg(s).arg(send).arg(e.p2p_send)));
        } else {
            QCOMPARE(e.p2p_send, 0.0);
            QVERIFY(std::abs(send) <= 1e-12 * total);
        }
    }
}

void PlanExplorerTest::breakdownStaysReadableInASmallWindow()
{
    // About what 1280 x 800 and 1024 x 700 windows leave the explorer with their docks open;
    // there the bars were 11 px apart, the table showed one row and cut its last header.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(0);
    w->showView(QStringLiteral("breakdown"));
    auto* view = qobject_cast<BreakdownView*>(w->view(QStringLiteral("breakdown")));
    QVERIFY(view);
    QCustomPlot* chart = view->chart();
    QScrollArea* scroll = view->scrollArea();
    QTableWidget* table = view->stageTable();
    QScrollBar* page = scroll->verticalScrollBar();
    for (const QSize size : {QSize(600, 650), QSize(400, 600)}) {
        w->resize(size);
        settle();
        // The page fits the room it is given: the window need not grow.
        QCOMPARE(w->size(), size);
        chart->replot();
        const QString where = QStringLiteral("%1 x %2").arg(size.width()).arg(size.height());
        // Seven bars a line and a quarter apart at least, each label within the chart.
        const int line = chart->fontMetrics().height();
        QVERIFY2(chart->axisRect()->height() >= 7 * 1.25 * line, qPrintable(where));
        int labels = 0;
        for (int i = 0; i < chart->itemCount(); ++i) {
            auto* t = qobject_cast<QCPItemText*>(chart->item(i));
            if (!t || t->objectName() == QLatin1String("chartPlaceholder"))
                continue;
            ++labels;
            QVERIFY2(t->right->pixelPosition().x() <= chart->axisRect()->right() + 1, qPrintable(where + QStringLiteral(": ") + t->text()));
        }
        QCOMPARE(labels, 7);
        // Every line of the title fits the chart's width.
        auto* title = chart->findChild<QCPTextElement*>(QStringLiteral("breakdownTitle"));
        QVERIFY(title);
        for (const QString& l : view->barsTitle().split(QLatin1Char('\n')))
            QVERIFY2(QFontMetrics(title->font()).horizontalAdvance(l) <= chart->width(), qPrintable(where + QStringLiteral(": ") + l));

        // The page scrolls down to the table, which shows all its rows.
        QVERIFY(page->maximum() > 0);
        page->setValue(page->maximum());
        settle();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->verticalScrollBar()->maximum(), 0);
        const QRect lastRow = table->visualItemRect(table->item(table->rowCount() - 1, BreakdownView::StepColumn));
        QVERIFY(table->viewport()->rect().contains(QRect(QPoint(0, lastRow.top()), QSize(1, lastRow.height()))));
        const QPoint tableBottom = table->mapTo(scroll->viewport(), QPoint(0, table->height()));
        QVERIFY2(tableBottom.y() <= scroll->viewport()->height(), qPrintable(where));
        // No header is cut: when the columns are wider than the page, the table scrolls sideways.
        QHeaderView* header = table->horizontalHeader();
        for (int c = 0; c < header->count(); ++c)
            QVERIFY(header->sectionSize(c) >= header->sectionSizeHint(c));
        QCOMPARE(table->horizontalScrollBar()->maximum() > 0, header->length() > table->viewport()->width());

        // The chart does not zoom: the wheel over it scrolls the page.
        page->setValue(0);
        const QPointF centre = chart->rect().center();
        QWheelEvent wheel(centre, chart->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(chart, &wheel);
        QVERIFY2(page->value() > 0, qPrintable(where));
    }
}

void PlanExplorerTest::chartsWithoutAPlanShowAPlaceholder()
{
    const auto placeholder = style::chartPlaceholder;
    TimelinePlot timeline;
    MemoryBarsPlot memory;
    for (QCustomPlot* plot : std::initializer_list<QCustomPlot*>{&timeline, &memory}) {
        QVERIFY(placeholder(plot).startsWith(QStringLiteral("No plan to show")));
        QVERIFY(!plot->layer(QStringLiteral("axes"))->visible());
        QVERIFY(!plot->layer(QStringLiteral("legend"))->visible());
    }
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 8;
    pred.iteration_time_s = 33;
    timeline.setTimeline(buildPlanTimeline(plan, pred));
    memory.setPlan(m_result.uniform_baseline->plan, m_result.uniform_baseline->prediction);
    for (QCustomPlot* plot : std::initializer_list<QCustomPlot*>{&timeline, &memory}) {
        QVERIFY(placeholder(plot).isEmpty());
        QVERIFY(plot->layer(QStringLiteral("axes"))->visible());
        QVERIFY(plot->layer(QStringLiteral("legend"))->visible());
    }
    // Empty again: no axis left to show negative times.
    timeline.clear();
    QVERIFY(!placeholder(&timeline).isEmpty());
    QVERIFY(!timeline.layer(QStringLiteral("axes"))->visible());

    // Before a search the chart asks for one and the stage strip stands aside, rather than
    // say the same under the tab bar; with plans listed and none selected it asks for one.
    {
        PlanExplorerWidget fresh;
        fresh.resize(1000, 700);
        fresh.show();
        QApplication::processEvents();
        auto* strip = qobject_cast<StagePartitionView*>(fresh.view(QStringLiteral("partition")));
        QVERIFY(strip);
        QVERIFY(!strip->isVisible());
        const QString chartSays = placeholder(qobject_cast<QCustomPlot*>(fresh.view(QStringLiteral("timeline"))));
        QVERIFY2(chartSays.startsWith(QStringLiteral("No plan to show")), qPrintable(chartSays));
        QCOMPARE(strip->emptyText(), QStringLiteral("Select a plan to see its stages"));
    }

    // The what-if fields show a dash, not the least values of their boxes (a 128-token
    // sequence for a model of 4096), until there is a plan; then the plan's.
    WhatIfPanel whatIf;
    whatIf.setContext(context());
    for (QAbstractSpinBox* box : std::initializer_list<QAbstractSpinBox*>{whatIf.globalBatchBox(), whatIf.microBatchBox(), whatIf.sequenceLengthBox(),
                                                                         whatIf.rhoBox(), whatIf.offloadBox(), whatIf.nodeCountBox()})
        QCOMPARE(box->text(), QStringLiteral("\u2013"));
    ExplorerPlan entry;
    entry.ranked = m_result.plans.front();
    whatIf.setPlan(&entry);
    QCOMPARE(whatIf.sequenceLengthBox()->value(), m_model.seq_length);
    QCOMPARE(whatIf.sequenceLengthBox()->text(), QStringLiteral("%1 tokens").arg(m_model.seq_length));
    // One node of the type on 16-1: "1 node", not "1 nodes".
    QCOMPARE(whatIf.nodeCountBox()->value(), 1);
    QCOMPARE(whatIf.nodeCountBox()->text(), QStringLiteral("1 node"));
    whatIf.nodeCountBox()->setValue(2);
    QCOMPARE(whatIf.nodeCountBox()->text(), QStringLiteral("2 nodes"));
}

void PlanExplorerTest::noPlanSaysWhyWithoutClaimingABest()
{
    // A search that ran to its end: the core's reason names the shortfall, and stays as it is.
    SearchResult done;
    done.no_plan_reason = "no plan fits in device memory: the closest stage (S0, 910B-376T) is short by 12.5 GiB";
    done.pruned = {100, 900, 0};
    QCOMPARE(noPlanReason(done), QString::fromStdString(done.no_plan_reason));

    // Cut short by the time limit: 96 layers of hidden 8192 without offload on 32-3 pruned
    // 667,114 options for load balance and 27,003,317 for memory in 30 s; 27,003,317 /
    // 27,670,431 = 97.6 % were short of memory, which is what there is to say.
    SearchResult cut;
    cut.timed_out = true;
    cut.no_plan_reason = "the time limit ran out before a plan was found";
    cut.pruned = {667114, 27003317, 0};
    const QString reason = noPlanReason(cut);
    QVERIFY2(reason.startsWith(QString::fromStdString(cut.no_plan_reason)), qPrintable(reason));
    QVERIFY2(reason.contains(QStringLiteral("97.6 % of the options pruned so far were short of memory")), qPrintable(reason));
    QVERIFY(!reason.contains(QStringLiteral("best so far")));
    // Mostly load balance: memory is not the obstacle, nothing is added.
    cut.pruned = {900, 100, 0};
    QCOMPARE(noPlanReason(cut), QString::fromStdString(cut.no_plan_reason));
}

void PlanExplorerTest::whatIfWithoutAPlanSaysWhy()
{
    // Like the charts, What-if says why it has no plan: none before a search, none to select
    // after a search that found none (GPT-1T on one H800 node), one to select otherwise.
    PlanExplorerWidget w;
    w.setContext(context());
    auto* whatIf = qobject_cast<WhatIfPanel*>(w.view(QStringLiteral("whatif")));
    QVERIFY(whatIf);
    auto* hint = whatIf->findChild<QLabel*>(QStringLiteral("whatIfHint"));
    QVERIFY(hint);
    QVERIFY2(hint->text().contains(QStringLiteral("No plan to show: run a search")), qPrintable(hint->text()));

    SearchResult none;
    none.no_plan_reason = "no plan fits in device memory";
    w.setResult(none);
    QCOMPARE(whatIf->emptyText(), QStringLiteral("The search found no feasible plan (the reason is above)"));
    QVERIFY2(hint->text().contains(QStringLiteral("The search found no feasible plan")), qPrintable(hint->text()));
    QVERIFY(!hint->text().contains(QStringLiteral("Select a plan")));

    w.setResult(m_result);
    QVERIFY(whatIf->isEnabled());
    QVERIFY(!hint->text().contains(QStringLiteral("no feasible plan")));
}

void PlanExplorerTest::planTitleCountsInTheSingular()
{
    // All 24 layers on the H800 node: one stage, and with a global batch of DP 8 x
    // micro-batch 1 = 8 sequences, one micro-batch.
    Plan plan;
    plan.name = "one stage";
    plan.global_batch_size = 8;
    plan.stages = {test::stage("H800", 0, 0, 8, 0, 24, 1, 8, 8, 1, 1, 1, Recompute::Full)};
    SearchResult result;
    result.plans = {test::costed(*m_cost, plan)};
    QCOMPARE(result.plans[0].prediction.num_microbatches, 1);
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    auto* title = w.findChild<QLabel*>(QStringLiteral("planTitle"));
    QVERIFY(title);
    QVERIFY2(title->text().contains(QStringLiteral(" · 1&nbsp;stage · <span style=\"white-space:nowrap\">1 micro-batch</span> · ")), qPrintable(title->text()));
    QVERIFY(!title->text().contains(QStringLiteral("stages")));
    QVERIFY2(title->text().startsWith(QStringLiteral("<b>one stage</b> (search) · ")), qPrintable(title->text()));

    // A baseline without a name of its own is named by its kind, once: "<b>uniform
    // baseline</b> · ...", not "... (uniform baseline)" after it again.
    Plan unnamed = plan;
    unnamed.name.clear();
    result.uniform_baseline = test::costed(*m_cost, unnamed);
    w.setResult(result);
    w.selectPlan(1);
    QVERIFY2(title->text().startsWith(QStringLiteral("<b>uniform baseline</b> · 1&nbsp;stage")), qPrintable(title->text()));

    w.setResult(m_result);
    QVERIFY2(title->text().contains(QStringLiteral(" · 2&nbsp;stages · <span style=\"white-space:nowrap\">64 micro-batches</span> · ")), qPrintable(title->text()));
}

void PlanExplorerTest::nearlyFullPlanSaysSo()
{
    // Stage 1's devices filled to 97.5 % of their 80 GiB with nothing kept free (core
    // nearlyFullStage: above 95 %): the plan's title says "S1 at 97.5 % of memory", and the
    // title's and the plan table's tooltips say why and point at "Keep free". At 95 % exactly,
    // or with memory kept free, neither says anything.
    SearchResult result = m_result;
    Prediction& p = result.plans.front().prediction;
    for (StageEstimate& st : p.stages) {
        st.memory = MemoryBreakdown{};
        st.memory.capacity = 80 * style::kGiB;
        st.memory.weights = 40 * style::kGiB;
    }
    p.stages[1].memory.weights = 76 * style::kGiB;
    p.stages[1].memory.overhead = 2 * style::kGiB;
    p.feasible = true;
    p.memory_headroom = 0;
    QCOMPARE(nearlyFullStage(p), 1);
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    w.selectPlan(0);
    auto* title = w.findChild<QLabel*>(QStringLiteral("planTitle"));
    QVERIFY(title);
    QVERIFY2(title->text().contains(QStringLiteral(" · S1&nbsp;at&nbsp;97.5&nbsp;%&nbsp;of&nbsp;memory")), qPrintable(title->text()));
    QVERIFY2(title->toolTip().contains(QStringLiteral("S1's devices use 78.00 GiB of 80.00 GiB (97.5 %)")), qPrintable(title->toolTip()));
    QVERIFY2(title->toolTip().contains(QStringLiteral("2.00 GiB of runtime overhead")), qPrintable(title->toolTip()));
    QVERIFY2(title->toolTip().contains(QStringLiteral("Keep free")), qPrintable(title->toolTip()));
    auto* table = qobject_cast<PlanTableView*>(w.view(QStringLiteral("plans")));
    QVERIFY(table);
    bool tipFound = false;
    for (int r = 0; r < table->model()->rowCount(); ++r) {
        const QString tip = table->model()->index(r, PlanListModel::PeakMemory).data(Qt::ToolTipRole).toString();
        tipFound = tipFound || tip.contains(QStringLiteral("with no memory kept free"));
    }
    QVERIFY(tipFound);

    p.stages[1].memory.weights = 74 * style::kGiB;   // 76 of 80: 95 %, not above
    QCOMPARE(nearlyFullStage(p), -1);
    p.stages[1].memory.weights = 76 * style::kGiB;
    p.memory_headroom = 0.05;
    QCOMPARE(nearlyFullStage(p), -1);
    p.memory_headroom = 0;
    p.feasible = false;
    QCOMPARE(nearlyFullStage(p), -1);
    p.feasible = true;
    w.setResult(m_result);   // the fixture's plans leave more than 5 % of their devices free
    w.selectPlan(0);
    QVERIFY(!title->text().contains(QStringLiteral("of&nbsp;memory")));
    QVERIFY(title->toolTip().isEmpty());
}

void PlanExplorerTest::breakdownTitleCountsInTheSingular()
{
    // The plan of planTitleCountsInTheSingular: one stage, DP 8 x micro-batch 1 = the global
    // batch of 8, so one micro-batch.
    Plan plan;
    plan.name = "one stage";
    plan.global_batch_size = 8;
    plan.stages = {test::stage("H800", 0, 0, 8, 0, 24, 1, 8, 8, 1, 1, 1, Recompute::Full)};
    const RankedPlan costed = test::costed(*m_cost, plan);
    QCOMPARE(costed.prediction.num_microbatches, 1);
    BreakdownView view;
    view.setPlan(costed.plan, costed.prediction);
    QVERIFY2(view.barsTitle().contains(QStringLiteral("bottleneck S0 × 1 micro-batch + bubble")), qPrintable(view.barsTitle()));
    QVERIFY(!view.barsTitle().contains(QStringLiteral("micro-batches")));
}

void PlanExplorerTest::memoryKeptFreeIsNamedAsSuch()
{
    // An 80 GiB H800 keeping 10 % free may fill 72 GiB (CostModel: capacity = memory x (1 -
    // headroom)): the plan list says "of 80", the chart's line is the usable memory.
    style::FullestDevice f{0, 67.7 * style::kGiB, 72 * style::kGiB, 0.1};
    QCOMPARE(style::fullestDeviceText(f), QStringLiteral("67.7/72 of 80 GiB"));
    f.headroom = 0;
    f.capacity = 80 * style::kGiB;
    QCOMPARE(style::fullestDeviceText(f), QStringLiteral("67.7/80 GiB"));
    // A usable memory that is not whole GiB keeps its decimal: 90 % of a 64 GiB 910B is
    // 57.6 GiB, which "58" overstated.
    f = {0, 45.1 * style::kGiB, 0.9 * 64 * style::kGiB, 0.1};
    QCOMPARE(style::fullestDeviceText(f), QStringLiteral("45.1/57.6 of 64 GiB"));
    QCOMPARE(style::usableMemoryText(72 * style::kGiB, 0.1), QStringLiteral("72.00 GiB usable of 80.00 GiB (10 % kept free)"));

    const RankedPlan& hetero = m_result.plans.front();
    Prediction keptFree = hetero.prediction;
    keptFree.memory_headroom = 0.1;
    MemoryBarsPlot memory;
    memory.resize(900, 420);
    memory.show();
    memory.setPlan(hetero.plan, keptFree);
    QStringList names;
    for (int i = 0; i < memory.legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(memory.legend->item(i)))
            names << item->plottable()->name();
    QCOMPARE(names.back(), QStringLiteral("Usable memory (10 % kept free)"));
    memory.setPlan(hetero.plan, hetero.prediction);
    QCOMPARE(hetero.prediction.memory_headroom, 0.0);
}

void PlanExplorerTest::memoryLegendNamesWhatTheBarsHold()
{
    // Mixtral-S has MoE dispatch buffers on every stage; with none (a dense model's
    // prediction) the legend leaves the entry out and keeps its order.
    const RankedPlan& hetero = m_result.plans.front();
    MemoryBarsPlot memory;
    memory.resize(900, 420);
    memory.show();
    auto names = [&]() {
        QStringList list;
        for (int i = 0; i < memory.legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(memory.legend->item(i)))
                list << item->plottable()->name();
        return list;
    };
    memory.setPlan(hetero.plan, hetero.prediction);
    QCOMPARE(names(), (QStringList{"Weights", "Gradients", "Optimizer states", "Activations", "MoE buffers", "Overhead",
                                   "Device capacity"}));
    Prediction dense = hetero.prediction;
    for (StageEstimate& st : dense.stages)
        st.memory.moe_buffers = 0;
    memory.setPlan(hetero.plan, dense);
    QCOMPARE(names(), (QStringList{"Weights", "Gradients", "Optimizer states", "Activations", "Overhead", "Device capacity"}));
    memory.setPlan(hetero.plan, hetero.prediction);
    QCOMPARE(names().size(), 7);
}

void PlanExplorerTest::memoryLabelsStandAboveBarAndCapacity()
{
    // The uniform baseline recomputes 12 of 12 layers on both stages: said once under the
    // bars, and nothing over them (the labels still stand on the higher of bar and line).
    const RankedPlan& uniform = *m_result.uniform_baseline;
    MemoryBarsPlot memory;
    memory.resize(900, 420);
    memory.show();
    memory.setPlan(uniform.plan, uniform.prediction);
    memory.replot();
    QCOMPARE(memory.recomputeNote(), QStringLiteral("recompute: full 12/12 in every stage"));
    for (int s = 0; s < memory.stageCount(); ++s) {
        QCOMPARE(memory.barLabelBaseGiB(s), std::max(memory.stackedTotalGiB(s), memory.capacityGiB(s)));
        QVERIFY2(memory.barLabel(s).isEmpty(), qPrintable(memory.barLabel(s)));
    }

    // The heterogeneous plan's stages differ (none, full 4/10): no note, each bar says its own.
    const RankedPlan& hetero = m_result.plans.front();
    memory.setPlan(hetero.plan, hetero.prediction);
    memory.replot();
    QVERIFY2(memory.recomputeNote().isEmpty(), qPrintable(memory.recomputeNote()));
    for (int s = 0; s < memory.stageCount(); ++s) {
        const StagePlan& sp = hetero.plan.stages[static_cast<size_t>(s)];
        QVERIFY(hetero.prediction.stages[static_cast<size_t>(s)].memory.fits());
        QCOMPARE(memory.barLabelBaseGiB(s), std::max(memory.stackedTotalGiB(s), memory.capacityGiB(s)));
        QCOMPARE(memory.barLabel(s), QStringLiteral("recompute: %1").arg(style::recomputeLabel(sp)));
    }
    QCOMPARE(memory.barLabel(1), QStringLiteral("recompute: full 4/10"));
    // Two bars in 120 pixels leave no room for "recompute: full 4/10": the short form on
    // every bar, and the full text in the tooltip.
    memory.resize(120, 420);
    memory.replot();
    for (int s = 0; s < memory.stageCount(); ++s) {
        const StagePlan& sp = hetero.plan.stages[static_cast<size_t>(s)];
        const QString rc = style::recomputeLabel(sp);
        QVERIFY2(!memory.barLabel(s).contains(QStringLiteral("recompute")), qPrintable(memory.barLabel(s)));
        // Still says what it is, as the stage strip's narrowest form does ("rc: full 4/10").
        QCOMPARE(memory.barLabel(s), style::recomputeShortLabel(sp));
        QVERIFY(memory.barLabel(s).startsWith(QStringLiteral("rc: ")));
        QVERIFY(memory.toolTipForStage(s).contains(QStringLiteral("Recompute: %1").arg(rc)));
        QCOMPARE(memory.barLabelBaseGiB(s), std::max(memory.stackedTotalGiB(s), memory.capacityGiB(s)));
    }
}

namespace {

// Eight stages of four devices on 32-3 (Table 1: 910B 2x8 + MI300X 2x8), three layers
// each, TP2 DP2 EP4, costed. With mixedRecompute the stages take none, selective and full
// in turn (three of eight at most alike: no recompute shared by most, a label on each bar).
RankedPlan eightStagesOn32_3(const ModelSpec& model, bool mixedRecompute = false)
{
    const Cluster cluster = test::cluster32_3();
    const CostModel cost(model, cluster, DeviceCatalog::builtin());
    Plan plan;
    plan.name = "eight stages";
    plan.global_batch_size = 256;
    plan.target = Target::FlagScale;
    for (int s = 0; s < 8; ++s)
        plan.stages.push_back(test::stage(s < 4 ? "910B-376T" : "MI300X", s / 2, (s % 2) * 4, 4, 3 * s, 3, 2, 2, 4, 1, 1, 1));
    if (mixedRecompute) {
        for (int s = 0; s < 8; ++s)
            plan.stages[static_cast<size_t>(s)].recompute = std::array{Recompute::None, Recompute::Selective, Recompute::Full}[s % 3];
    }
    return test::costed(cost, plan);
}

} // namespace

void PlanExplorerTest::memoryStageLabelsFitBetweenTheBars()
{
    // Eight labels under eight bars.
    const RankedPlan eight = eightStagesOn32_3(m_model, true);
    QCOMPARE(static_cast<int>(eight.prediction.stages.size()), 8);

    MemoryBarsPlot memory;
    memory.show();
    memory.setPlan(eight.plan, eight.prediction);
    const QFontMetrics fm(memory.xAxis->tickLabelFont());
    auto widest = [&fm](const QString& text) {
        int w = 0;
        for (const QString& line : text.split(QLatin1Char('\n')))
            w = std::max(w, fm.horizontalAdvance(line));
        return w;
    };
    // Two neighbouring labels do not meet when half of each fits in the bars' spacing.
    auto noneMeet = [&] {
        for (int s = 0; s + 1 < memory.stageCount(); ++s) {
            if ((widest(memory.tickLabel(s)) + widest(memory.tickLabel(s + 1))) / 2.0 > memory.barSpacing())
                return false;
        }
        return true;
    };

    // Wide: the device type in full under the stage.
    memory.resize(1400, 420);
    memory.replot();
    QCOMPARE(memory.tickLabelRotation(), 0.0);
    QCOMPARE(memory.tickLabel(0), QStringLiteral("S0\n910B-376T"));
    QCOMPARE(memory.tickLabel(7), QStringLiteral("S7\nMI300X"));
    QVERIFY(noneMeet());

    // The memory tab of a 1280-pixel window: "910B-376T" no longer fits between two bars,
    // the short name does.
    memory.resize(600, 420);
    memory.replot();
    QVERIFY2(widest(QStringLiteral("910B-376T")) > memory.barSpacing() - 8, qPrintable(QString::number(memory.barSpacing())));
    QCOMPARE(memory.tickLabelRotation(), 0.0);
    QCOMPARE(memory.tickLabel(0), QStringLiteral("S0\n910B"));
    QCOMPARE(memory.tickLabel(7), QStringLiteral("S7\nMI300X"));
    QVERIFY(noneMeet());
    // The legend wraps instead of cutting its entries.
    QVERIFY(legendEntriesUncut(memory.legend, memory.width()));

    // Narrower: "S0 910B" no longer fits between two bars. The stage alone under each bar,
    // and the type once on a second line under each run of stages on it (S0-S3 on 910B,
    // S4-S7 on MI300X), at the run's middle and within its width.
    memory.resize(320, 420);
    memory.replot();
    QVERIFY(widest(QStringLiteral("910B")) > memory.barSpacing() - 8);
    QCOMPARE(memory.tickLabelRotation(), 0.0);
    QCOMPARE(memory.tickLabel(0), QStringLiteral("S0"));
    QCOMPARE(memory.tickLabel(7), QStringLiteral("S7"));
    QVERIFY(noneMeet());
    const QMap<double, QString> ticks = memory.xAxis->ticker().dynamicCast<QCPAxisTickerText>()->ticks();
    QCOMPARE(ticks.size(), 8 + 2);
    for (const auto& [middle, type] : {std::pair{1.5, QStringLiteral("910B")}, std::pair{5.5, QStringLiteral("MI300X")}}) {
        const QStringList lines = ticks.value(middle).split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[0].isEmpty());   // on the types' line, under the stages' numbers
        QVERIFY2(lines[1].startsWith(type), qPrintable(lines[1]));
        QVERIFY(fm.horizontalAdvance(lines[1]) <= 4 * memory.barSpacing() - 8);
    }
    QVERIFY(legendEntriesUncut(memory.legend, memory.width()));
    // The stages take turns at none, selective and full: no recompute shared by most, so
    // each bar has its own label, and "rc: none" is wider than the spacing: upright above
    // the bars.
    QVERIFY(memory.recomputeNote().isEmpty());
    QCOMPARE(memory.barLabel(0), QStringLiteral("rc: none"));
    QCOMPARE(memory.barLabel(1), QStringLiteral("rc: sel"));
    QCOMPARE(memory.barLabel(2), QStringLiteral("rc: full 3/3"));
    QCOMPARE(memory.barLabelRotation(), -90.0);

    // Narrower still, "S0" wider than the room between two bars: one line each, upright,
    // a line's height within the spacing.
    memory.resize(240, 420);
    memory.replot();
    QVERIFY(widest(QStringLiteral("S0")) > memory.barSpacing() - 8);
    QCOMPARE(memory.tickLabelRotation(), -90.0);
    QVERIFY(!memory.tickLabel(0).contains(QLatin1Char('\n')));
    QVERIFY2(fm.height() <= memory.barSpacing(), qPrintable(QString::number(memory.barSpacing())));
    QCOMPARE(memory.xAxis->ticker().dynamicCast<QCPAxisTickerText>()->ticks().size(), 8);   // no run's type
    QVERIFY(legendEntriesUncut(memory.legend, memory.width()));
    QCOMPARE(memory.barLabelRotation(), -90.0);
    memory.resize(1400, 420);
    memory.replot();
    QCOMPARE(memory.barLabelRotation(), 0.0);
    QCOMPARE(memory.tickLabelRotation(), 0.0);
}

void PlanExplorerTest::memoryBarLabelsStayInTheChart()
{
    // Eight stages on 32-3 in a memory tab about as narrow as a 1024 x 700 window leaves it,
    // their recompute choices too different for a note under the bars: the labels stand
    // upright above bars near the top of the scale, and the plot area leaves them room
    // under the legend instead of cutting them off (as long as the bars keep half of the
    // height).
    const RankedPlan eight = eightStagesOn32_3(m_model, true);
    MemoryBarsPlot memory;
    memory.show();
    memory.setPlan(eight.plan, eight.prediction);
    const QList<QSize> sizes = {QSize(390, 260), QSize(390, 300), QSize(600, 300), QSize(900, 420)};
    for (const QSize size : sizes) {
        memory.resize(size);
        memory.replot();
        QApplication::processEvents();   // the queued replot with the room the labels asked for
        memory.replot();
        QVERIFY(memory.recomputeNote().isEmpty());
        const int top = memory.axisRect()->outerRect().top();
        int labels = 0;
        for (int i = 0; i < memory.itemCount(); ++i) {
            auto* label = qobject_cast<QCPItemText*>(memory.item(i));
            if (!label || !label->text().startsWith(QStringLiteral("r")))
                continue;
            ++labels;
            double highest = std::numeric_limits<double>::max();
            for (QCPItemAnchor* a : {label->topLeft, label->topRight, label->bottomLeft, label->bottomRight})
                highest = std::min(highest, a->pixelPosition().y());
            QVERIFY2(highest >= top - 1,
                     qPrintable(QStringLiteral("%1 x %2: \"%3\" (rotation %4) reaches y %5 over the plot area's top %6")
                                    .arg(size.width()).arg(size.height()).arg(label->text()).arg(label->rotation())
                                    .arg(highest).arg(top)));
        }
        QCOMPARE(labels, 8);
        if (size.width() == 390)
            QCOMPARE(memory.barLabelRotation(), -90.0);   // upright: the labels that need the room
        // The bars keep half the height.
        QVERIFY(memory.axisRect()->height() >= (memory.axisRect()->bottom() - top) / 2 - 1);
    }

    // Only S0 recomputes (as Megatron-GPT-70B's first stage on 16-3): the note under the bars
    // names it where it fits the plot area's width; where it does not, S0's label over its
    // bar does, within the chart, and the shorter note stays within the width too.
    RankedPlan first = eightStagesOn32_3(m_model);
    first.plan.stages[0].recompute = Recompute::Full;
    first = test::costed(CostModel(m_model, test::cluster32_3(), DeviceCatalog::builtin()), first.plan);
    memory.setPlan(first.plan, first.prediction);
    const QFontMetrics noteFm(memory.xAxis->labelFont());
    bool named = false;
    bool over = false;
    for (const QSize size : sizes + QList<QSize>{QSize(200, 300)}) {
        memory.resize(size);
        memory.replot();
        QApplication::processEvents();
        memory.replot();
        const QString note = memory.recomputeNote();
        QVERIFY2(noteFm.horizontalAdvance(note) <= memory.axisRect()->width() || note.startsWith(QStringLiteral("recompute: none unless")),
                 qPrintable(QStringLiteral("%1: %2").arg(size.width()).arg(note)));
        // Under the stage labels, inside the widget.
        QVERIFY(memory.axisRect()->outerRect().bottom() <= memory.height());
        const QFontMetrics tickFm(memory.xAxis->tickLabelFont());
        const int ticks = memory.tickLabelRotation() == 0 ? 2 * tickFm.height() : tickFm.horizontalAdvance(memory.tickLabel(0));
        QVERIFY(memory.axisRect()->margins().bottom() >= ticks + noteFm.height());
        if (note == QStringLiteral("recompute: none; S0: full 3/3")) {
            named = true;
            QVERIFY(memory.barLabel(0).isEmpty());
        } else {
            QCOMPARE(note, QStringLiteral("recompute: none unless written above the bar"));
            over = true;
            QVERIFY(memory.barLabel(0).endsWith(QStringLiteral("full 3/3")));
            const QRectF chart(0, 0, memory.width(), memory.height());
            int found = 0;
            for (int i = 0; i < memory.itemCount(); ++i) {
                auto* label = qobject_cast<QCPItemText*>(memory.item(i));
                if (!label || label->text() != memory.barLabel(0))
                    continue;
                ++found;
                for (QCPItemAnchor* a : {label->topLeft, label->topRight, label->bottomLeft, label->bottomRight})
                    QVERIFY(chart.contains(a->pixelPosition()));
            }
            QCOMPARE(found, 1);
        }
        for (int s = 1; s < memory.stageCount(); ++s)
            QVERIFY(memory.barLabel(s).isEmpty());
    }
    QVERIFY(named && over);
}

void PlanExplorerTest::memoryChartSaysWhereOffloadedStatesWent()
{
    // The bars are device memory: with half of the optimizer offloaded the chart says so and
    // gives the busiest node's host memory, and whether the cluster bounds it.
    RankedPlan offloaded = *m_result.uniform_baseline;
    offloaded.plan.optimizer_offload_fraction = 0.5;
    offloaded.prediction.host_memory_per_node_gib = 412;
    MemoryBarsPlot memory;
    memory.setPlan(offloaded.plan, offloaded.prediction);
    auto* note = memory.findChild<QCPTextElement*>(QStringLiteral("hostMemoryNote"));
    QVERIFY(note);
    QVERIFY2(note->text().contains(QStringLiteral("50 % in host memory")), qPrintable(note->text()));
    QVERIFY(note->text().contains(QStringLiteral("412 GiB on the busiest node, not checked")));
    offloaded.prediction.host_memory_capacity_gib = 1024;
    memory.setPlan(offloaded.plan, offloaded.prediction);
    QVERIFY2(note->text().contains(QStringLiteral("412 GiB on the busiest node of 1024 GiB")), qPrintable(note->text()));
    memory.setPlan(m_result.uniform_baseline->plan, m_result.uniform_baseline->prediction);
    QVERIFY(note->text().isEmpty());
}

void PlanExplorerTest::denseTimelineDrawsBands()
{
    // 4 stages x 256 micro-batches x 2 = 2048 blocks of 1 and 2 s over 4 x 3 + 255 x 3 = 777 s.
    auto [plan, pred] = fourEqualStages("H800");
    pred.num_microbatches = 256;
    pred.iteration_time_s = 777;
    TimelinePlot timeline;
    timeline.resize(800, 300);
    timeline.show();
    timeline.setTimeline(buildPlanTimeline(plan, pred));
    QCOMPARE(timeline.timeline().pipelineEnd, 777.0);
    // Whole iteration: a mean block of 1.5 s is well under 2 pixels at under 1 pixel per s.
    timeline.replot();
    QVERIFY(timeline.blocks()->lastDrawDense());
    // The legend says what the bands draw: no sends, the bubbles as gaps (not hatched).
    auto names = [&timeline] {
        QStringList n;
        for (int i = 0; i < timeline.legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(timeline.legend->item(i)))
                n << item->plottable()->name();
        return n;
    };
    QVERIFY2(!names().contains(QStringLiteral("Stage send")), qPrintable(names().join(QLatin1Char('|'))));
    QVERIFY2(names().contains(QStringLiteral("Idle (gap; zoom in for blocks)")), qPrintable(names().join(QLatin1Char('|'))));
    // 40 s in view: about 20 pixels per second, the blocks themselves, and the whole legend.
    timeline.xAxis->setRange(300, 340);
    timeline.replot();
    QVERIFY(!timeline.blocks()->lastDrawDense());
    const QStringList whole = names();
    QVERIFY2(whole.indexOf(QStringLiteral("Stage send")) == whole.indexOf(QStringLiteral("Backward")) + 1, qPrintable(whole.join(QLatin1Char('|'))));
    QVERIFY2(whole.contains(QStringLiteral("Idle (bubble)")), qPrintable(whole.join(QLatin1Char('|'))));
}

void PlanExplorerTest::timelineNamesOnlyLanesWithRoom()
{
    // Sixteen stages, the slowest (the bottleneck) S9: in a chart as low as a 1024 x 700
    // window leaves it, the lanes are lower than a line of text and only some are named,
    // never two closer than a line, the bottleneck among them; in a tall chart, all.
    Plan plan;
    Prediction pred;
    for (int i = 0; i < 16; ++i) {
        plan.stages.push_back(test::stage("H800", i, 0, 8, 2 * i, 2, 1, 8, 8, 1, 1, 1));
        StageEstimate e;
        e.t_fwd = i == 9 ? 1.5 : 1;
        e.t_bwd = 2 * e.t_fwd;
        pred.stages.push_back(e);
    }
    pred.num_microbatches = 32;
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(tl.bottleneck, 9);
    TimelinePlot timeline;
    timeline.show();
    timeline.setTimeline(tl);
    const int line = QFontMetrics(timeline.yAxis->tickLabelFont()).height();
    for (int height : {900, 260}) {
        timeline.resize(600, height);
        timeline.replot();
        const double lane = double(timeline.axisRect()->height()) / 16;
        QMap<double, QString> ticks = qSharedPointerCast<QCPAxisTickerText>(timeline.yAxis->ticker())->ticks();
        QList<int> named;
        for (auto it = ticks.cbegin(); it != ticks.cend(); ++it)
            if (!it.value().isEmpty())
                named << qRound(it.key());
        QCOMPARE(named.size(), timeline.namedLanes());
        if (lane >= line) {
            QCOMPARE(named.size(), 16);
            continue;
        }
        QVERIFY2(named.size() < 16, qPrintable(QString::number(lane)));
        QVERIFY(named.contains(9));
        QVERIFY(ticks.value(9).contains(QStringLiteral("bottleneck")));
        for (int a = 0; a < named.size(); ++a)
            for (int b = a + 1; b < named.size(); ++b)
                QVERIFY2(std::abs(named[a] - named[b]) * lane >= line - 0.5,
                         qPrintable(QStringLiteral("S%1 and S%2 %3 px apart").arg(named[a]).arg(named[b]).arg(std::abs(named[a] - named[b]) * lane)));
    }
    // One layer: "L17", not "L17-17".
    plan.stages[3].num_layers = 1;
    QVERIFY(buildPlanTimeline(plan, pred).stageNames[3].endsWith(QStringLiteral("L6")));
    // A model with multi-token prediction: its MTP depths are costed on the last stage
    // (docs/cost-model.md section 3.9), and that lane says so; no other lane does. (The layers
    // run on from S3's one: S15 holds 29 and 30.)
    const PlanTimeline mtp = buildPlanTimeline(plan, pred, 1);
    QVERIFY2(mtp.stageNames.back().endsWith(QStringLiteral("L29-30 +MTP")), qPrintable(mtp.stageNames.back()));
    QVERIFY2(mtp.stageNames[3].endsWith(QStringLiteral("L6")), qPrintable(mtp.stageNames[3]));
    QVERIFY2(buildPlanTimeline(plan, pred, 2).stageNames.back().endsWith(QStringLiteral("+2 MTP")), qPrintable(mtp.stageNames.back()));
}

void PlanExplorerTest::timelineLaneNamesShortenInANarrowChart()
{
    // Four stages of 6 layers, S3 the bottleneck: in a wide chart the full names, in a chart
    // as narrow as a 1024 x 700 window leaves it (about 390 pixels) names that take at most
    // 30 % of its width, the bottleneck still marked.
    auto [plan, pred] = fourEqualStages("910B-376T");
    pred.num_microbatches = 8;
    pred.stages[3].t_bwd = 2.5;
    const PlanTimeline tl = buildPlanTimeline(plan, pred);
    QCOMPARE(tl.bottleneck, 3);
    TimelinePlot timeline;
    timeline.show();
    timeline.setTimeline(tl);
    const QFontMetrics fm(timeline.yAxis->tickLabelFont());
    auto ticks = [&] { return qSharedPointerCast<QCPAxisTickerText>(timeline.yAxis->ticker())->ticks(); };
    timeline.resize(1600, 400);
    timeline.replot();
    QCOMPARE(ticks().value(0), QStringLiteral("S0 · 910B-376T · L0-5"));
    QVERIFY(ticks().value(3).contains(QStringLiteral("bottleneck")));
    timeline.resize(390, 300);
    timeline.replot();
    for (const QString& label : ticks())
        QVERIFY2(fm.horizontalAdvance(label) <= 0.3 * 390, qPrintable(label));
    QVERIFY(ticks().value(0).startsWith(QStringLiteral("S0")));
    QVERIFY(ticks().value(3).contains(QStringLiteral("◀")));
    // Nothing reads as nothing, in seconds like its neighbours, not "0 µs".
    QCOMPARE(style::formatSeconds(0), QStringLiteral("0 s"));
    QCOMPARE(style::formatSeconds(830e-6), QStringLiteral("830 µs"));
}

void PlanExplorerTest::bottleneckMarkAndDeviceColoursStandApart()
{
    QPalette light;
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, Qt::black);
    QPalette dark;
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    // Every type of the built-in catalog (resources/devices.json).
    const QStringList types = {"A100-80GB", "H100-SXM", "H800", "H200", "H20", "B200", "L40S", "MI250X",
                               "MI300X", "MI325X", "910B-376T", "910C", "Gaudi2"};
    for (const QPalette& pal : {light, dark}) {
        const QColor mark = style::bottleneckMarkColor(pal);
        for (const QString& t : types) {
            const QColor d = style::deviceColor(t);
            const int distance = std::abs(d.red() - mark.red()) + std::abs(d.green() - mark.green()) + std::abs(d.blue() - mark.blue());
            QVERIFY2(distance > 200, qPrintable(t));
        }
        // No device type is a red that reads as a problem or as the bubble hatch: at least
        // 25 degrees of hue away (the palette's rule, ExplorerStyle.cpp).
        for (const QColor& red : {style::problemColor(), style::bubbleColor(pal)}) {
            for (const QString& t : types) {
                const QColor d = style::deviceColor(t);
                int dh = std::abs(d.hsvHue() - red.hsvHue());
                dh = std::min(dh, 360 - dh);
                QVERIFY2(d.hsvSaturationF() < 0.4 || dh >= 25, qPrintable(t));
            }
        }
        // The send strip and the bubble hatch differ from the background in both themes.
        const QColor base = pal.color(QPalette::Base);
        QVERIFY(std::abs(style::communicationColor(pal).lightness() - base.lightness()) > 100);
        QVERIFY(std::abs(style::bubbleColor(pal).lightness() - base.lightness()) > 60);
    }
    // Saturated types differ in hue by at least 20 degrees (a shade of one hue would read as
    // the same type); L40S is told apart by being grey.
    for (int i = 0; i < types.size(); ++i) {
        for (int j = i + 1; j < types.size(); ++j) {
            const QColor a = style::deviceColor(types[i]), b = style::deviceColor(types[j]);
            if (a.hsvSaturationF() < 0.4 || b.hsvSaturationF() < 0.4)
                continue;
            int dh = std::abs(a.hsvHue() - b.hsvHue());
            dh = std::min(dh, 360 - dh);
            QVERIFY2(dh >= 20, qPrintable(types[i] + QLatin1Char('/') + types[j]));
        }
    }
}

void PlanExplorerTest::partitionBoxesAlwaysNameTheirDeviceType()
{
    // 20 layers on one stage and 2 on another: the narrow box still names its type.
    Plan plan;
    Prediction pred;
    plan.stages.push_back(test::stage("A100-80GB", 0, 0, 8, 0, 22, 1, 8, 8, 1, 1, 1));
    plan.stages.push_back(test::stage("910B-376T", 1, 0, 8, 22, 2, 1, 8, 8, 1, 1, 1));
    pred.stages.resize(2);
    StagePartitionView view;
    view.resize(700, view.sizeHint().height());
    view.show();
    view.setPlan(plan, pred, 0);
    QCOMPARE(style::shortDeviceName(QStringLiteral("910B-376T")), QStringLiteral("910B"));
    QCOMPARE(style::shortDeviceName(QStringLiteral("A100-80GB")), QStringLiteral("A100"));
    QCOMPARE(style::shortDeviceName(QStringLiteral("H800")), QStringLiteral("H800"));
    // The narrow box is 700 * 2 / 24 = 58 pixels wide: lines across it, split where needed.
    view.resize(700, view.height());
    QVERIFY(!view.stageUpright(1));
    const QStringList narrow = view.stageLines(1);
    const QStringList wide = view.stageLines(0);
    QVERIFY2(narrow.join(QLatin1Char('\n')).contains(QStringLiteral("910B")), qPrintable(narrow.join(QLatin1Char('|'))));
    QVERIFY2(wide.join(QLatin1Char('\n')).contains(QStringLiteral("A100")), qPrintable(wide.join(QLatin1Char('|'))));
    // One scheme on every box: the same number of lines, the knobs in the same form.
    QCOMPARE(narrow.size(), wide.size());
    const int knobs = narrow.indexOf(QRegularExpression(QStringLiteral("T(P)?1 .*")));
    QVERIFY2(knobs > 0, qPrintable(narrow.join(QLatin1Char('|'))));
    QCOMPARE(wide[knobs].left(2), narrow[knobs].left(2));
    // The recompute line says what it is in every form ("rc: none", or "rc:" over "none",
    // never a bare "none").
    const int rc = narrow.indexOf(QRegularExpression(QStringLiteral("(rc|recompute):.*")));
    QVERIFY2(rc > 0, qPrintable(narrow.join(QLatin1Char('|'))));
    QVERIFY(narrow[rc].contains(QStringLiteral("none")) || narrow.value(rc + 1) == QStringLiteral("none"));

    // At half the width the narrow box (29 pixels) is too narrow for lines across it: it
    // names its stage and type upright.
    view.resize(350, view.height());
    QVERIFY(view.stageUpright(1));
    QVERIFY(!view.stageUpright(0));
    QVERIFY2(view.stageLines(1).value(0).startsWith(QStringLiteral("S1 910B")), qPrintable(view.stageLines(1).join(QLatin1Char('|'))));
    QVERIFY2(view.stageLines(0).join(QLatin1Char('\n')).contains(QStringLiteral("A100")), qPrintable(view.stageLines(0).join(QLatin1Char('|'))));

    // A dense model's stages have no expert knobs to show: no EP, ETP or EDP line, nor in
    // the tooltip.
    view.resize(700, view.height());
    QVERIFY2(view.stageLines(0).join(QLatin1Char('|')).contains(QStringLiteral("EP")), qPrintable(view.stageLines(0).join(QLatin1Char('|'))));
    view.setModelTraits(false, 0);
    QVERIFY2(!view.stageLines(0).join(QLatin1Char('|')).contains(QStringLiteral("EP")), qPrintable(view.stageLines(0).join(QLatin1Char('|'))));
    QVERIFY(!view.stageToolTip(0).contains(QStringLiteral("EDP")));
    QVERIFY(view.stageToolTip(0).contains(QStringLiteral("TP1 CP1 DP8")));

    // Stages of other micro-batch sizes (FlagScale's meshes: DP 8 x MBS 1 and DP 4 x MBS 2
    // run the same step): every box written across says its size at every width, since a
    // stage of MBS 2 runs half as many micro-batches.
    view.setModelTraits(true, 0);
    plan.stages[1].tp = 2;
    plan.stages[1].dp = 4;
    plan.stages[1].micro_batch_size = 2;
    view.setPlan(plan, pred, 0);
    int across = 0;   // boxes written across, whose grid line was checked
    for (int width : {1400, 700, 500, 420}) {
        view.resize(width, view.height());
        for (int i = 0; i < 2; ++i) {
            if (view.stageUpright(i))
                continue;
            ++across;
            const QString text = view.stageLines(i).join(QLatin1Char('|'));
            const QString size = QString::number(plan.stages[static_cast<size_t>(i)].micro_batch_size);
            QVERIFY2(text.contains(QRegularExpression(QStringLiteral("(MBS|mbs| m)%1\\b").arg(size))),
                     qPrintable(QStringLiteral("%1 px, S%2: %3").arg(width).arg(i).arg(text)));
        }
    }
    QVERIFY2(across >= 4, qPrintable(QString::number(across)));   // both boxes at 1400 and 700 px at least
}

void PlanExplorerTest::optimizerColumnShowsWhereTheStatesAre()
{
    // Alternatives can keep different shares of the optimizer in host memory (the K fastest
    // over the shares, docs/search.md section 1). The column says where, sorts by the share,
    // and is shown only when some plan offloads.
    std::vector<ExplorerPlan> plans(3);
    const double shares[] = {0.5, 1.0, 0.0};
    for (int i = 0; i < 3; ++i) {
        plans[std::size_t(i)].rank = i + 1;
        plans[std::size_t(i)].ranked.plan.name = "HS-DP #" + std::to_string(i + 1);
        plans[std::size_t(i)].ranked.plan.optimizer_offload_fraction = shares[i];
    }
    PlanListModel model;
    PlanTableView table(&model);
    model.setPlans(plans);
    QCOMPARE(model.headerData(PlanListModel::Optimizer, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Optimizer"));
    QCOMPARE(model.index(0, PlanListModel::Optimizer).data().toString(), QStringLiteral("50 % on host"));
    QCOMPARE(model.index(1, PlanListModel::Optimizer).data().toString(), QStringLiteral("all on host"));
    QCOMPARE(model.index(2, PlanListModel::Optimizer).data().toString(), QStringLiteral("on devices"));
    QCOMPARE(model.index(1, PlanListModel::Optimizer).data(PlanListModel::SortRole).toDouble(), 1.0);
    QVERIFY(!table.isColumnHidden(PlanListModel::Optimizer));
    // On the devices only: nothing to tell apart, the column is hidden.
    for (ExplorerPlan& e : plans)
        e.ranked.plan.optimizer_offload_fraction = 0.0;
    model.setPlans(plans);
    QVERIFY(table.isColumnHidden(PlanListModel::Optimizer));
}

void PlanExplorerTest::layoutColumnTellsEqualPlansApart()
{
    // HS-DP #4 and #5 of `hapmoe plan --model Mixtral-S --cluster 24-1 --top 5`: the same
    // stages, S4 and S5 swapped (DP 2 at MBS 2 and TP 2 at MBS 4 run the same step), and so
    // the same figures to the millisecond. The layout column is where they differ: a group per
    // device type, runs of equal stages merged, EDP (which follows from the others) and sizes
    // of 1 other than DP's left out.
    auto plan = [](bool swapped) {
        Plan p;
        p.stages = {test::stage("910B-376T", 0, 0, 4, 0, 2, 1, 4, 1, 4, 1, 1), test::stage("910B-376T", 0, 4, 4, 2, 2, 1, 4, 1, 4, 1, 1),
                    test::stage("910B-376T", 1, 0, 4, 4, 2, 1, 4, 1, 1, 4, 1), test::stage("910B-376T", 1, 4, 4, 6, 2, 1, 4, 1, 1, 4, 1),
                    test::stage("H800", 2, 0, 2, 8, 4, 1, 2, 1, 2, 1, 2), test::stage("H800", 2, 2, 2, 12, 4, 2, 1, 1, 2, 1, 4),
                    test::stage("H800", 2, 4, 4, 16, 8, 1, 4, 1, 2, 2, 1, Recompute::Full, 2)};
        if (swapped)
            std::swap(p.stages[4], p.stages[5]);
        return p;
    };
    std::vector<ExplorerPlan> plans(2);
    for (int i = 0; i < 2; ++i) {
        plans[std::size_t(i)].rank = i + 4;
        plans[std::size_t(i)].ranked.plan = plan(i == 1);
    }
    PlanListModel model;
    model.setPlans(plans);
    QCOMPARE(model.headerData(PlanListModel::Layout, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Layout"));
    QCOMPARE(model.index(0, PlanListModel::Layout).data().toString(),
             QStringLiteral("910B-376T: 2L DP4 ETP4 ×2, 2L DP4 ×2 | H800: 4L DP2 ETP2 MBS2, 4L TP2 DP1 ETP2 MBS4, "
                            "8L DP4 ETP2 rc full 2/8"));
    QCOMPARE(model.index(1, PlanListModel::Layout).data().toString(),
             QStringLiteral("910B-376T: 2L DP4 ETP4 ×2, 2L DP4 ×2 | H800: 4L TP2 DP1 ETP2 MBS4, 4L DP2 ETP2 MBS2, "
                            "8L DP4 ETP2 rc full 2/8"));
    // The tooltip has a line per stage with its layers, and says that #5 holds #4's stages in
    // another order (core reorderedFrom); #4's says nothing of the kind.
    const QString tip = model.index(1, PlanListModel::Layout).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("S4 H800, L8-11: TP2 DP1 ETP2 MBS4<br>S5 H800, L12-15: DP2 ETP2 MBS2")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("The stages of #4 in another order")), qPrintable(tip));
    QVERIFY(!model.index(0, PlanListModel::Layout).data(Qt::ToolTipRole).toString().contains(QStringLiteral("another order")));
    // Devices: a plan that names none of the cluster's other devices (written by hand, as
    // partial_nodes_plan.json leaves 8 of 32 out) has them counted apart, with the idle and
    // left-out ones it does name.
    plans[0].unaccounted = 8;
    plans[1].ranked.plan.unused = {{3, 4, std::string(UnusedDevices::kLeftIdle) + ": faster without them"}};
    plans[1].unaccounted = 2;
    model.setPlans(plans);
    QCOMPARE(model.index(0, PlanListModel::Devices).data().toString(), QStringLiteral("24 (+8 unused)"));
    QCOMPARE(model.index(1, PlanListModel::Devices).data().toString(), QStringLiteral("24 (+4 idle, +2 unused)"));
    QVERIFY(model.index(0, PlanListModel::Devices).data(Qt::ToolTipRole).toString().contains(
        QStringLiteral("8 device(s) of the cluster unused: the plan does not say why")));
    // A dense plan: no expert sizes to show.
    Plan dense;
    dense.stages = {test::stage("A100-80GB", 0, 0, 8, 0, 16, 2, 4, 1, 1, 4, 1), test::stage("A100-80GB", 1, 0, 8, 16, 16, 2, 4, 1, 1, 4, 1)};
    QCOMPARE(style::stagesSummary(dense), QStringLiteral("A100-80GB: 16L TP2 DP4 ×2"));
}

void PlanExplorerTest::peakMemoryColumnShowsTheFullestDevice()
{
    // Two stages: 70 GiB on a 192 GiB MI300X (36 %) and 60 GiB on an 80 GiB H800 (75 %).
    // The column names the H800, the fuller device, though the MI300X holds more bytes; it
    // sorts by the share.
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    ExplorerPlan e;
    e.ranked.plan.stages.push_back(test::stage("MI300X", 0, 0, 8, 0, 16, 1, 8, 8, 1, 1, 1));
    e.ranked.plan.stages.push_back(test::stage("H800", 1, 0, 8, 16, 16, 1, 8, 8, 1, 1, 1));
    e.ranked.prediction.stages.resize(2);
    e.ranked.prediction.stages[0].memory.weights = 70 * GiB;
    e.ranked.prediction.stages[0].memory.capacity = 192 * GiB;
    e.ranked.prediction.stages[1].memory.weights = 60 * GiB;
    e.ranked.prediction.stages[1].memory.capacity = 80 * GiB;
    e.ranked.prediction.peak_memory_gib = 70;
    PlanListModel model;
    model.setPlans({e});
    const QModelIndex cell = model.index(0, PlanListModel::PeakMemory);
    QCOMPARE(model.data(cell, Qt::DisplayRole).toString(), QStringLiteral("60.0/80 GiB"));
    QCOMPARE(model.data(cell, PlanListModel::SortRole).toDouble(), 60.0 / 80.0);   // the H800's share
    QVERIFY(model.data(cell, Qt::ToolTipRole).toString().contains(QStringLiteral("stage 1 (H800), 60.0 of 80 GiB (75 %)")));
    // The header says which device it is, since elsewhere "peak memory" is the most bytes.
    QCOMPARE(model.headerData(PlanListModel::PeakMemory, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Fullest device"));
    QVERIFY(model.headerData(PlanListModel::PeakMemory, Qt::Horizontal, Qt::ToolTipRole).toString().contains(QStringLiteral("most bytes")));

    // Compare ranks the fullest device by share too: a twin with 70 GiB on each device
    // (87.5 % of the H800) is the fuller, though its most bytes (70 GiB) equal the first's;
    // the peak-memory row (bytes) is shown but not ranked.
    ExplorerPlan twin = e;
    twin.ranked.plan.name = "twin";
    twin.ranked.prediction.stages[1].memory.weights = 70 * GiB;
    CompareView compare;
    QTableWidget* table = compareFirstTwo(compare, {e, twin});
    const int fullest = tableRow(table, QStringLiteral("Fullest device")), peak = tableRow(table, QStringLiteral("Peak memory"));
    QVERIFY(fullest >= 0 && peak >= 0);
    QCOMPARE(table->item(fullest, 0)->text(), QStringLiteral("60.0/80 GiB (S1)"));
    QCOMPARE(table->item(fullest, 1)->text(), QStringLiteral("70.0/80 GiB (S1)"));
    QVERIFY(table->item(fullest, 0)->font().bold() && !table->item(fullest, 1)->font().bold());
    QVERIFY(!table->item(peak, 0)->font().bold() && !table->item(peak, 1)->font().bold());
}

namespace {
// Whether every line of every box of the strip fits the box as drawn (nothing elided);
// `why` says which does not. The stage's name (bold) comes first, with its device type
// where there is room for it.
bool partitionTextFits(const StagePartitionView& view, QString* why)
{
    QFont boldFont = view.font();
    boldFont.setBold(true);
    const QFontMetrics fm(view.font());
    const QFontMetrics bold(boldFont);
    for (int i = 0; i < view.stageCount(); ++i) {
        const QRect box = view.stageRect(i);
        const QStringList lines = view.stageLines(i);
        const QString name = QStringLiteral("S%1").arg(i);
        const QString type = style::shortDeviceName(QString::fromStdString(view.stage(i)->device_type));
        const auto fail = [&](const QString& what) {
            *why = QStringLiteral("S%1 (%2 x %3 px): %4 in [%5]").arg(i).arg(box.width()).arg(box.height())
                       .arg(what, lines.join(QLatin1Char('|')));
            return false;
        };
        if (view.stageUpright(i)) {
            // Columns from the bottom up, each within the box's height, as many as the box
            // is wide for; the first has the name in bold, then " · " and the rest. A box
            // narrower than a capital letter has no text.
            if (lines.isEmpty() && box.width() - 4 < fm.capHeight() + 3)
                continue;
            if (lines.isEmpty() || !lines.front().startsWith(name))
                return fail(QStringLiteral("no stage name first"));
            if (lines.size() * fm.height() > std::max(box.width(), fm.height()))
                return fail(QStringLiteral("more columns than the box is wide"));
            for (const QString& l : lines) {
                const qsizetype cut = l == lines.front() ? l.indexOf(QStringLiteral(" · ")) : 0;
                const QString head = cut < 0 ? l : l.left(cut);
                const int length = (l == lines.front() ? bold.horizontalAdvance(head) : 0) + fm.horizontalAdvance(l.mid(head.size()));
                if (length > box.height() - 7)
                    return fail(QStringLiteral("\"%1\" longer than the box").arg(l));
            }
            if (!lines.front().contains(type) && bold.horizontalAdvance(name + QLatin1Char(' ') + type) <= box.height() - 11)
                return fail(QStringLiteral("the type is missing"));
            continue;
        }
        if (lines.size() * fm.height() > box.height() - 7)
            return fail(QStringLiteral("more lines than the box is high"));
        // The name's line, or its two lines ("S2" over "910B"), are bold.
        const int nameLines = lines.value(0) == name ? 2 : 1;
        for (int l = 0; l < lines.size(); ++l) {
            if (!lines[l].isEmpty() && (l < nameLines ? bold : fm).horizontalAdvance(lines[l]) > box.width() - 13)
                return fail(QStringLiteral("\"%1\" wider than the box").arg(lines[l]));
        }
        // Only a box too narrow even for "S12" (the comparison's, which never stand
        // upright) goes without its name.
        if (!lines.value(0).startsWith(name) && bold.horizontalAdvance(name) <= box.width() - 13)
            return fail(QStringLiteral("no stage name first"));
    }
    return true;
}
} // namespace

void PlanExplorerTest::partitionTextFitsEveryBox()
{
    // The shapes that strained the strip: the 24-1 plan (four 910B stages of 2 layers, two
    // H800 stages of 8) and sixteen stages of 1 to 3 layers on three device types.
    Plan six;
    for (int s = 0; s < 4; ++s)
        six.stages.push_back(test::stage("910B-376T", s / 2, (s % 2) * 4, 4, 2 * s, 2, 1, 4, 1, 1, 4, 1));
    six.stages.push_back(test::stage("H800", 2, 0, 4, 8, 8, 1, 4, 4, 1, 1, 1));
    six.stages.push_back(test::stage("H800", 2, 4, 4, 16, 8, 1, 4, 2, 1, 2, 1));
    Plan sixteen;
    int layer = 0;
    for (int s = 0; s < 16; ++s) {
        const int layers = s < 8 ? 2 : s < 12 ? 1 : 3;
        const char* type = s < 8 ? "H800" : s < 12 ? "A100-80GB" : "MI300X";
        sixteen.stages.push_back(test::stage(type, s, 0, 8, layer, layers, s < 12 ? 1 : 8, s < 12 ? 8 : 1, 8, 1, 1, 1,
                                             s == 3 ? Recompute::Full : Recompute::None, s == 3 ? 1 : 0));
        layer += layers;
    }
    for (const Plan* plan : {&six, &sixteen}) {
        Prediction pred;
        pred.stages.resize(plan->stages.size());
        for (bool compact : {false, true}) {
            // In a layout, as in the explorer, which gives the strip the height it asks for.
            QWidget page;
            auto* layout = new QVBoxLayout(&page);
            auto* strip = new StagePartitionView(&page);
            layout->addWidget(strip);
            layout->addStretch(1);
            const StagePartitionView& view = *strip;
            strip->setCompact(compact);
            strip->setPlan(*plan, pred, plan->pp() - 1);
            page.show();
            // The explorer's width in 1920 x 1080, 1280 x 800 and 1024 x 700 windows, and less.
            for (int width : {1300, 900, 600, 390, 250}) {
                page.resize(width, 400);
                settle();
                QString why;
                QVERIFY2(partitionTextFits(view, &why),
                         qPrintable(QStringLiteral("%1 stages, %2 px%3: %4").arg(plan->pp()).arg(width)
                                        .arg(compact ? QStringLiteral(", compact") : QString(), why)));
                // The strip is as high as its lines (six, or seven when a line is split) and
                // its legend's (which wraps rather than cut an entry).
                QCOMPARE(view.height(), view.sizeHint().height());
                QVERIFY2(view.legendFits(), qPrintable(QStringLiteral("%1 px").arg(width)));
                // The six stages differ in EDP (4, 1 and 2 at EP 1, 4 and 2): in every form a box
                // written across keeps it, so that no two read alike where they are not (upright
                // boxes keep the name, layers and recompute alone).
                if (plan == &six && !compact)
                    for (int i = 0; i < view.stageCount(); ++i) {
                        if (view.stageUpright(i))
                            continue;
                        const QString text = view.stageLines(i).join(QLatin1Char(' '));
                        const int edp = plan->stages[static_cast<size_t>(i)].edp;
                        QVERIFY2(text.contains(QStringLiteral("EDP%1").arg(edp)) || text.contains(QStringLiteral("ED%1").arg(edp)),
                                 qPrintable(QStringLiteral("%1 px, S%2: %3").arg(width).arg(i).arg(text)));
                    }
            }
        }
    }
}

namespace {
// The colour of the first <span style='color:#rrggbb'> in a label's rich text.
QColor spanColour(const QString& html)
{
    const auto m = QRegularExpression(QStringLiteral("color:(#[0-9a-fA-F]{6})")).match(html);
    return m.hasMatch() ? QColor(m.captured(1)) : QColor();
}
} // namespace

void PlanExplorerTest::exportDialogOpensAtItsSizeForTheWindow()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    QVERIFY(dialog);
    dialog->hide();
    // 85 % of the window: 1900 x 0.85 = 1615, 1150 x 0.85 = 977.5; 1280 x 0.85 = 1088, 800 x 0.85 = 680.
    QCOMPARE(dialog->sizeFor(QSize(1900, 1150)), QSize(1615, 977));
    QCOMPARE(dialog->sizeFor(QSize(1280, 800)), QSize(1088, 680));
    // A window smaller than the dialog's minimum: the window's size, never more.
    QCOMPARE(dialog->sizeFor(QSize(300, 200)), QSize(300, 200));

    w->resize(1900, 1150);
    settle();
    dialog->show();
    settle();
    QCOMPARE(dialog->size(), QSize(1615, 977));
    // The launcher reads without scrolling sideways, and all checks are in view.
    QCOMPARE(dialog->preview()->horizontalScrollBar()->maximum(), 0);
    QCOMPARE(dialog->checksList()->verticalScrollBar()->maximum(), 0);
    QVERIFY(dialog->splitter()->sizes().at(0) > dialog->splitter()->sizes().at(1));   // the launcher has the room

    dialog->hide();
    w->resize(1280, 800);
    settle();
    dialog->show();
    settle();
    QCOMPARE(dialog->size(), QSize(1088, 680));
    QVERIFY(QRect(QPoint(0, 0), w->size()).contains(QRect(QPoint(0, 0), dialog->size())));
    // One row per check (icons of the text's height): all of them fit here too.
    QCOMPARE(dialog->checksList()->verticalScrollBar()->maximum(), 0);
    dialog->hide();
    w->resize(1400, 900);
    settle();
}

void PlanExplorerTest::exportDialogWrapsCheckLabels()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(static_cast<int>(LauncherFormat::FlagScale)));
    dialog->show();
    settle();
    QListWidget* checks = dialog->checksList();
    QVERIFY(checks->wordWrap());
    QCOMPARE(checks->textElideMode(), Qt::ElideNone);
    QVERIFY(checks->count() > 0);
    // The longest label, e.g. "--optimizer-cpu-offload needs --use-precision-aware-optimizer".
    QListWidgetItem* longest = checks->item(0);
    for (int row = 1; row < checks->count(); ++row)
        if (checks->item(row)->text().size() > longest->text().size())
            longest = checks->item(row);
    QCOMPARE(longest->toolTip(), longest->text());
    const int line = checks->fontMetrics().lineSpacing();
    QVERIFY2(checks->fontMetrics().horizontalAdvance(longest->text()) > 200, qPrintable(longest->text()));

    // A narrow column: the label wraps onto more lines and stays within the column.
    const int total = dialog->splitter()->sizes().at(0) + dialog->splitter()->sizes().at(1);
    dialog->splitter()->setSizes({total - 200, 200});
    QTRY_VERIFY2(checks->visualItemRect(longest).height() >= 2 * line,
                 qPrintable(QStringLiteral("%1 px high").arg(checks->visualItemRect(longest).height())));
    QVERIFY(checks->visualItemRect(longest).right() <= checks->viewport()->width());
    QCOMPARE(checks->horizontalScrollBar()->maximum(), 0);
    // Every line of the last label can be scrolled into view.
    checks->scrollToBottom();
    settle();
    QListWidgetItem* last = checks->item(checks->count() - 1);
    QVERIFY(checks->viewport()->rect().contains(checks->visualItemRect(last)));

    // A wide column again: the label takes one line again.
    dialog->splitter()->setSizes({total - 700, 700});
    QTRY_VERIFY2(checks->visualItemRect(longest).height() < 2 * line,
                 qPrintable(QStringLiteral("%1 px high").arg(checks->visualItemRect(longest).height())));
    dialog->hide();
}

void PlanExplorerTest::exportDialogStatusReadsOnBothThemes()
{
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(static_cast<int>(LauncherFormat::FlagScale)));
    QVERIFY(dialog->result().ok);
    dialog->show();
    for (ThemeKind kind : {ThemeKind::Dark, ThemeKind::Light}) {
        applyTheme(kind);   // the open dialog follows
        settle();
        const QPalette pal = dialog->palette();
        QCOMPARE(isDark(pal), kind == ThemeKind::Dark);
        // "All checks pass" at 4.5:1 on the dialog's window (WCAG 2.1 criterion 1.4.3); the
        // former #2e7d32 was 2.7:1 on the dark window.
        const QColor pass = spanColour(dialog->refusalLabel()->text());
        QVERIFY2(pass.isValid(), qPrintable(dialog->refusalLabel()->text()));
        QCOMPARE(pass, statusColor(Status::Ok, pal));
        QVERIFY(contrastRatio(pass, pal.color(QPalette::Window)) >= 4.5);

        // Megatron-LM refuses the plan (TP differs per stage): the refusal and the failed
        // checks in the problem colour, readable on the window and in the list.
        dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(static_cast<int>(LauncherFormat::Megatron)));
        QVERIFY(!dialog->result().ok);
        const QColor refused = spanColour(dialog->refusalLabel()->text());
        QCOMPARE(refused, statusColor(Status::Problem, pal));
        QVERIFY(contrastRatio(refused, pal.color(QPalette::Window)) >= 4.5);
        int failed = 0;
        for (int row = 0; row < dialog->checksList()->count(); ++row) {
            if (dialog->result().checks[std::size_t(row)].ok)
                continue;
            ++failed;
            const QColor fg = dialog->checksList()->item(row)->foreground().color();
            QVERIFY(contrastRatio(fg, dialog->checksList()->palette().color(QPalette::Base)) >= 4.5);
        }
        QVERIFY(failed > 0);
        dialog->formatBox()->setCurrentIndex(dialog->formatBox()->findData(static_cast<int>(LauncherFormat::FlagScale)));
    }
    dialog->hide();
}

void PlanExplorerTest::memoryChartSaysASharedRecomputeOnce()
{
    // Eight stages on 32-3 without recompute in a chart about the size a 1024 x 700 window
    // gives it: "recompute: none" once under the bars, no label over them, and the bars
    // keep most of the chart's height.
    RankedPlan eight = eightStagesOn32_3(m_model);
    MemoryBarsPlot memory;
    memory.show();
    memory.setPlan(eight.plan, eight.prediction);
    memory.resize(620, 235);
    memory.replot();
    QApplication::processEvents();
    memory.replot();
    QCOMPARE(memory.recomputeNote(), QStringLiteral("recompute: none in every stage"));
    for (int s = 0; s < memory.stageCount(); ++s)
        QVERIFY2(memory.barLabel(s).isEmpty(), qPrintable(memory.barLabel(s)));
    QVERIFY2(memory.axisRect()->height() > memory.height() / 2,
             qPrintable(QStringLiteral("%1 of %2").arg(memory.axisRect()->height()).arg(memory.height())));

    // Only S0 recomputes (as Megatron-GPT-70B's first stage on 16-3): the note names it.
    eight.plan.stages[0].recompute = Recompute::Full;
    eight.plan.stages[0].recompute_layers = 3;
    memory.setPlan(eight.plan, eight.prediction);
    memory.replot();
    QApplication::processEvents();
    memory.replot();
    QCOMPARE(memory.recomputeNote(), QStringLiteral("recompute: none; S0: full 3/3"));
    QVERIFY(memory.barLabel(0).isEmpty());
    QVERIFY(memory.axisRect()->height() > memory.height() / 2);
    // Three stages in a row that recompute alike are a range, two are named.
    for (int s : {1, 2}) {
        eight.plan.stages[static_cast<size_t>(s)].recompute = Recompute::Full;
        eight.plan.stages[static_cast<size_t>(s)].recompute_layers = 3;
    }
    eight.plan.stages[7].recompute = Recompute::Selective;
    memory.setPlan(eight.plan, eight.prediction);
    memory.replot();
    QApplication::processEvents();
    memory.replot();
    QCOMPARE(memory.recomputeNote(), QStringLiteral("recompute: none; S0–S2: full 3/3; S7: selective"));
    for (int s : {1, 2})
        eight.plan.stages[static_cast<size_t>(s)].recompute = Recompute::None;
    eight.plan.stages[7].recompute = Recompute::None;
    memory.setPlan(eight.plan, eight.prediction);
    // Too narrow for that note: the exception over its bar, the rule under the bars.
    memory.resize(200, 300);
    memory.replot();
    QApplication::processEvents();
    memory.replot();
    QCOMPARE(memory.recomputeNote(), QStringLiteral("recompute: none unless written above the bar"));
    QCOMPARE(memory.barLabel(0), QStringLiteral("rc: full 3/3"));
    QVERIFY(memory.barLabel(1).isEmpty());
}

void PlanExplorerTest::whatIfListsEveryBreakdownTerm()
{
    // The figures end with the Breakdown's seven bars, DP sync among them, each the
    // prediction's TimeBreakdown term as the Breakdown writes it.
    WhatIfPanel whatIf;
    whatIf.setContext(context());
    ExplorerPlan entry;
    entry.ranked = m_result.plans.front();
    whatIf.setPlan(&entry);
    QTableWidget* table = whatIf.figuresTable();
    const QStringList names = BreakdownView::componentNames();
    const QVector<double> values = BreakdownView::componentValues(entry.prediction());
    QCOMPARE(values.size(), 7);
    QCOMPARE(values[5], entry.prediction().breakdown.dp_sync);
    QVERIFY(entry.prediction().breakdown.dp_sync > 0);
    QCOMPARE(table->rowCount(), 6 + names.size());
    for (int i = 0; i < names.size(); ++i) {
        const int row = 6 + i;
        QCOMPARE(table->verticalHeaderItem(row)->text(), names[i]);
        QCOMPARE(table->item(row, 0)->text(), style::formatSeconds(values[i]));
        QCOMPARE(table->item(row, 1)->text(), style::formatSeconds(values[i]));   // unchanged inputs
    }
    QCOMPARE(table->verticalHeaderItem(6 + 5)->text(), QStringLiteral("DP sync"));
    // Memory as the plan list ranks it: the fullest device, with its stage.
    QCOMPARE(table->verticalHeaderItem(4)->text(), QStringLiteral("Fullest device"));
    const style::FullestDevice f = style::fullestDevice(entry.prediction());
    QVERIFY(f.stage >= 0);
    QCOMPARE(table->item(4, 0)->text(), QStringLiteral("%1 (S%2)").arg(style::fullestDeviceText(f)).arg(f.stage));
    QCOMPARE(table->item(4, 1)->text(), table->item(4, 0)->text());
    QVERIFY(table->item(4, 0)->toolTip().contains(QStringLiteral("the most bytes on a device")));

    // Where the change moves the bottleneck, the bottleneck stage's terms (compute, TP/CP,
    // dispatch, send) of the two columns are of two stages: the change names them instead of
    // a percentage (a send that went to 0 s read -100 %, a gain it was not). Mixtral 8x7B's
    // best plan on an H800, two 910B and an MI300X node at router imbalance 3: the bottleneck
    // leaves the H800 stage.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ExplorerContext mixed = context();
    mixed.model = *findModelPreset("Mixtral-8x7B");
    mixed.cluster = clusterFromShorthand("H800:1x8,910B:2x8,MI300X:1x8", cat);
    const SearchResult found = runSearch(CostModel(mixed.model, mixed.cluster, cat), SearchOptions{});
    QVERIFY(!found.plans.empty());
    WhatIfPanel moving;
    moving.setContext(mixed);
    ExplorerPlan best;
    best.ranked = found.plans.front();
    moving.setPlan(&best);
    moving.rhoBox()->setValue(3.0);
    QVERIFY(moving.whatIfPrediction().has_value());
    const int before = bottleneckStage(best.prediction()), after = bottleneckStage(*moving.whatIfPrediction());
    QVERIFY2(before != after, qPrintable(QStringLiteral("S%1").arg(before)));
    const QString moved = QStringLiteral("S%1 → S%2").arg(before).arg(after);
    for (int i = 0; i < BreakdownView::FirstIterationComponent; ++i)
        QCOMPARE(moving.figuresTable()->item(6 + i, 2)->text(), moved);
    QVERIFY(!moving.figuresTable()->item(6 + BreakdownView::FirstIterationComponent, 2)->text().contains(QStringLiteral("→")));
}

void PlanExplorerTest::denseModelShowsNoExpertFigures()
{
    // LLaMA-2-7B (dense, 32 layers) on 16-1: the 910B node is the slower, so with 16 + 16
    // layers the last stage is the bottleneck and sends nothing on; with 29 + 3 the H800
    // stage is, and it sends its activations to the 910B.
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(llama && !llama->isMoe());
    const CostModel cost(*llama, m_cluster, DeviceCatalog::builtin());
    auto densePlan = [](const char* name, int first) {
        Plan p;
        p.name = name;
        p.global_batch_size = 256;
        p.target = Target::FlagScale;
        p.stages = {test::stage("H800", 0, 0, 8, 0, first, 2, 4, 1, 1, 8, 1),
                    test::stage("910B-376T", 1, 0, 8, first, 32 - first, 2, 4, 1, 1, 8, 1)};
        return p;
    };
    SearchResult result;
    result.target = Target::FlagScale;
    result.plans = {test::costed(cost, densePlan("even 16/16", 16)), test::costed(cost, densePlan("front 29/3", 29))};
    const Prediction& even = result.plans[0].prediction;
    const Prediction& front = result.plans[1].prediction;
    QVERIFY(even.feasible && front.feasible);
    QCOMPARE(bottleneckStage(even), 1);
    QCOMPARE(bottleneckStage(front), 0);
    QCOMPARE(even.breakdown.pipeline_send, 0.0);
    QVERIFY(front.breakdown.pipeline_send > 0);
    QCOMPARE(even.breakdown.expert_dispatch, 0.0);

    ExplorerContext ctx = context();
    ctx.model = *llama;
    PlanExplorerWidget w;
    w.setContext(ctx);
    w.setResult(result);
    w.resize(1400, 900);
    w.show();

    // Breakdown: six bars, no "Expert dispatch" among the ticks, nor a Dispatch column; the
    // bars still add up to the iteration time.
    auto* breakdown = qobject_cast<BreakdownView*>(w.view(QStringLiteral("breakdown")));
    QVERIFY(breakdown);
    QCOMPARE(breakdown->shownComponents(), QVector<int>({0, 1, 3, 4, 5, 6}));
    QCOMPARE(breakdown->chart()->plottableCount(), 6);
    QVERIFY(breakdown->stageTable()->isColumnHidden(BreakdownView::DispatchColumn));
    auto* ticker = dynamic_cast<QCPAxisTickerText*>(breakdown->chart()->yAxis->ticker().data());
    QVERIFY(ticker);
    QVERIFY(!ticker->ticks().values().contains(QStringLiteral("Expert dispatch")));
    QCOMPARE(ticker->ticks().value(2), QStringLiteral("Pipeline send"));

    // Compare: no EP/ETP/EDP row; the pipeline send differs (0 against more) but is not
    // ranked: the 0 of a plan whose bottleneck is its last stage is not a better plan.
    auto* compare = qobject_cast<CompareView*>(w.view(QStringLiteral("compare")));
    QVERIFY(compare);
    compare->setCompared({0, 1});
    QTableWidget* table = compare->table();
    int sendRow = -1;
    for (int r = 0; r < table->rowCount(); ++r) {
        const QString name = table->verticalHeaderItem(r)->text();
        QVERIFY2(!name.startsWith(QStringLiteral("EP/")), qPrintable(name));
        if (name == QStringLiteral("Pipeline send"))
            sendRow = r;
    }
    QVERIFY(sendRow >= 0);
    QVERIFY(compare->differingRows().contains(QStringLiteral("Pipeline send")));
    QVERIFY(!table->item(sendRow, 0)->font().bold() && !table->item(sendRow, 1)->font().bold());
    QVERIFY(!table->verticalHeaderItem(sendRow)->toolTip().isEmpty());
    for (StagePartitionView* partition : compare->partitions())
        QVERIFY2(!partition->stageToolTip(0).contains(QStringLiteral("EDP")), qPrintable(partition->stageToolTip(0)));

    // What-if: the Breakdown's terms less the dispatch.
    auto* whatIf = qobject_cast<WhatIfPanel*>(w.view(QStringLiteral("whatif")));
    QVERIFY(whatIf);
    QTableWidget* figures = whatIf->figuresTable();
    for (int r = 0; r < figures->rowCount(); ++r)
        QCOMPARE(figures->isRowHidden(r), figures->verticalHeaderItem(r)->text() == QStringLiteral("Expert dispatch"));
    // No router, so no router imbalance to try (the Model tab disables its field too).
    QVERIFY(whatIf->isEnabled());
    QVERIFY(!whatIf->rhoBox()->isEnabled());

    // A MoE model again: the seven bars and the column are back, and rho can be tried.
    w.setContext(context());
    QVERIFY(whatIf->rhoBox()->isEnabled());
    QCOMPARE(breakdown->shownComponents().size(), 7);
    QVERIFY(!breakdown->stageTable()->isColumnHidden(BreakdownView::DispatchColumn));
}

void PlanExplorerTest::stageBoxTextReachesAaContrast()
{
    // WCAG 2.1 AA: 4.5:1 for small text. White on the H800 green was 3.40:1 (hand
    // calculation: L(#3f9e3f) = 0.259, 1.05 / 0.309), black on it is 6.18:1.
    QVERIFY(std::abs(style::contrastRatio(Qt::white, QColor(0x3f, 0x9e, 0x3f)) - 3.40) < 0.01);
    QCOMPARE(style::textOn(QColor(0x3f, 0x9e, 0x3f)), QColor(Qt::black));
    QCOMPARE(style::textOn(QColor(0xe0, 0x6b, 0x16)), QColor(Qt::black));   // MI300X: 3.34 white, 6.28 black
    QCOMPARE(style::textOn(QColor(0x0a, 0x82, 0xd1)), QColor(Qt::black));   // A100: 4.10 white, 5.12 black
    QCOMPARE(style::textOn(QColor(0x68, 0x1f, 0x99)), QColor(Qt::white));   // 910C purple
    QVERIFY(std::abs(style::contrastRatio(Qt::black, Qt::white) - 21.0) < 1e-9);
    // Every device colour, and its lighter hover shade, in both themes (the fills do not
    // depend on the theme).
    QVERIFY(style::deviceColors().size() >= 14);
    for (const QColor& c : style::deviceColors()) {
        for (const QColor& fill : {c, c.lighter(125)}) {
            const double ratio = style::contrastRatio(style::textOn(fill), fill);
            QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1: %2").arg(fill.name()).arg(ratio)));
        }
    }
}

void PlanExplorerTest::memoryBarsWriteTheirTotals()
{
    // Each bar's total (the sum of its parts, one decimal) inside its top, as the tooltip's
    // "Total" row gives it; hidden where the bar is too narrow for the text.
    const RankedPlan& hetero = m_result.plans.front();
    MemoryBarsPlot memory;
    memory.resize(900, 420);
    memory.show();
    memory.setPlan(hetero.plan, hetero.prediction);
    memory.replot();
    QVERIFY(memory.stageCount() >= 2);
    for (int s = 0; s < memory.stageCount(); ++s) {
        const double total = hetero.prediction.stages[static_cast<size_t>(s)].memory.total() / style::kGiB;
        QCOMPARE(memory.barFigure(s), QString::number(total, 'f', 1));
        QVERIFY(std::abs(memory.stackedTotalGiB(s) - total) < 1e-9);
        QVERIFY(memory.toolTipForStage(s).contains(style::formatGiB(total * style::kGiB)));
    }
    // 60 pixels for two bars: 18 pixels a bar, narrower than any "NN.N".
    memory.resize(60, 420);
    memory.replot();
    for (int s = 0; s < memory.stageCount(); ++s)
        QVERIFY2(memory.barFigure(s).isEmpty(), qPrintable(memory.barFigure(s)));
    memory.clear();
    QVERIFY(memory.barFigure(0).isEmpty());
}

namespace {

// CIE76 colour difference (Euclidean distance in CIELAB, D65): about 2.3 is just noticeable;
// the Expert-dispatch bar's old #ab47bc was 10 from the 910B's #9e379e, TP's #5c6bc0 19 from
// the A100's #0a82d1.
double deltaE(const QColor& a, const QColor& b)
{
    const auto lab = [](const QColor& c) {
        const auto lin = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        const double r = lin(c.redF()), g = lin(c.greenF()), bl = lin(c.blueF());
        const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047;
        const double y = 0.2126 * r + 0.7152 * g + 0.0722 * bl;
        const double z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
        const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
        return std::array<double, 3>{116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
    };
    const auto p = lab(a), q = lab(b);
    return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

} // namespace

void PlanExplorerTest::breakdownColorsAreNotDeviceColors()
{
    QVERIFY(deltaE(QColor(0xab, 0x47, 0xbc), QColor(0x9e, 0x37, 0x9e)) < 12);   // the old dispatch bar
    // The memory bars' MoE buffers had that purple too; their brown stands 20 or more from
    // every device colour and from the parts stacked next to it.
    for (const QColor& d : style::deviceColors())
        QVERIFY2(deltaE(style::memoryColor(style::MemoryPart::MoeBuffers), d) >= 20, qPrintable(d.name()));
    for (auto part : {style::MemoryPart::Activations, style::MemoryPart::Overhead})
        QVERIFY(deltaE(style::memoryColor(style::MemoryPart::MoeBuffers), style::memoryColor(part)) >= 20);
    const QStringList names = BreakdownView::componentNames();
    for (const QPalette& pal : {themePalette(ThemeKind::Light), themePalette(ThemeKind::Dark)}) {
        std::vector<QColor> terms;
        for (int i = 0; i < names.size(); ++i)
            terms.push_back(BreakdownView::componentBrush(i, pal).color());
        // The solid bars (all but the grey send and the hatched bubble, kept apart by their
        // lack of hue and their hatch) at least 25 from every device colour.
        for (int i = 0; i < names.size(); ++i) {
            if (i == 3 || i == 4)
                continue;
            for (const QColor& d : style::deviceColors())
                QVERIFY2(deltaE(terms[static_cast<size_t>(i)], d) >= 25,
                         qPrintable(QStringLiteral("%1 %2 vs %3: %4").arg(names[i], terms[static_cast<size_t>(i)].name(), d.name())
                                        .arg(deltaE(terms[static_cast<size_t>(i)], d))));
        }
        // The bubble's red at least 25 from every device colour too (no device takes red).
        for (const QColor& d : style::deviceColors())
            QVERIFY(deltaE(terms[4], d) >= 25);
        // And the seven apart from each other.
        for (size_t i = 0; i < terms.size(); ++i)
            for (size_t j = i + 1; j < terms.size(); ++j)
                QVERIFY2(deltaE(terms[i], terms[j]) >= 20,
                         qPrintable(QStringLiteral("%1 vs %2: %3").arg(names[static_cast<int>(i)], names[static_cast<int>(j)]).arg(deltaE(terms[i], terms[j]))));
    }
}

void PlanExplorerTest::narrowStageBoxesNameAndMarkRecompute()
{
    // Megatron-GPT-70B on 16-3 in a 1024 x 700 window: eight 910B stages of 2 layers and
    // eight MI300X stages of 8 to 9 in a 630-pixel strip; only S0 recomputes.
    Plan plan;
    plan.global_batch_size = 384;
    for (int s = 0; s < 16; ++s) {
        const bool ascend = s < 8;
        plan.stages.push_back(test::stage(ascend ? "910B-376T" : "MI300X", ascend ? 0 : 1, s % 8, 1,
                                          ascend ? 2 * s : 16 + 8 * (s - 8), ascend ? 2 : 8, 1, 1, 1, 1, 1, 1,
                                          s == 0 ? Recompute::Full : Recompute::None, s == 0 ? 2 : 0));
    }
    StagePartitionView view;
    view.setPlan(plan, Prediction{}, 10);
    view.resize(630, view.minimumSizeHint().height());
    view.show();
    for (int s = 0; s < 8; ++s) {
        QVERIFY(view.stageUpright(s));
        QVERIFY2(view.stageLines(s).value(0).startsWith(QStringLiteral("S%1").arg(s)),
                 qPrintable(QStringLiteral("S%1: %2").arg(s).arg(view.stageLines(s).join(QLatin1Char('|')))));
        QCOMPARE(view.stageMarkedRecompute(s), s == 0);
    }
    QVERIFY(view.legendTexts().contains(QStringLiteral("recompute (S0)")));
    // Narrower than the old limit (box less 4 pixels under a capital letter and 3): the
    // stage number still stands in a 1000-pixel strip of 60 two-layer stages.
    Plan many;
    for (int s = 0; s < 60; ++s)
        many.stages.push_back(test::stage("910B-376T", s / 8, s % 8, 1, 2 * s, 2, 1, 1, 1, 1, 1, 1));
    view.setPlan(many, Prediction{}, -1);
    const QFontMetrics fm(view.font());
    for (int width = 400; width <= 1200; width += 50) {
        view.resize(width, view.minimumSizeHint().height());
        // Boxes of as many layers are named alike (all or none): by the narrowest of them.
        int slot = view.stageRect(0).width();
        for (int s = 1; s < 60; ++s)
            slot = std::min(slot, view.stageRect(s).width());
        const bool named = view.stageLines(1).value(0).startsWith(QStringLiteral("S1"));
        if (slot - 2 >= fm.capHeight() + 1)
            QVERIFY2(named, qPrintable(QString::number(width)));
        for (int s = 0; s < 60; ++s)
            QVERIFY2(view.stageLines(s).isEmpty() != named, qPrintable(QStringLiteral("%1 px, S%2").arg(width).arg(s)));
    }
    QVERIFY(view.legendTexts().filter(QStringLiteral("recompute")).isEmpty());
}

void PlanExplorerTest::stageBoxesOfAsManyLayersReadAlike()
{
    // Megatron-GPT-70B on 16-3 (the search's plan): eight 910B stages of 2 layers, then
    // MI300X stages of 8 and 9 layers. Boxes of as many layers differ in width by a pixel of
    // rounding and in their names' length (S9, S10): at no strip width may one of them be
    // written across and another upright (at 1024 x 700, S8 stood across and S9 upright).
    Plan plan;
    plan.global_batch_size = 384;
    int first = 0;
    for (int s = 0; s < 16; ++s) {
        const bool ascend = s < 8;
        const int layers = ascend ? 2 : (s % 2 == 0 ? 8 : 9);
        plan.stages.push_back(test::stage(ascend ? "910B-376T" : "MI300X", ascend ? 0 : 1, s % 8, 1, first, layers,
                                          1, 1, 1, 1, 1, 1));
        first += layers;
    }
    StagePartitionView view;
    view.setPlan(plan, Prediction{}, 10);
    view.show();
    QSet<bool> seen;
    for (int width = 300; width <= 1600; ++width) {
        view.resize(width, view.minimumSizeHint().height());
        std::map<int, bool> upright;
        std::map<int, int> columns;   // upright: as many columns in every box of a group, the bottleneck's too
        for (int s = 0; s < 16; ++s) {
            const int layers = plan.stages[std::size_t(s)].num_layers;
            const bool u = view.stageUpright(s);
            if (u) {
                const int n = static_cast<int>(view.stageLines(s).size());
                if (!columns.count(layers))
                    columns[layers] = n;
                QVERIFY2(columns[layers] == n, qPrintable(QStringLiteral("%1 px: S%2 writes %3 columns, another box of as many layers %4")
                                                              .arg(width).arg(s).arg(n).arg(columns[layers])));
            }
            seen.insert(u);
            if (!upright.count(layers))
                upright[layers] = u;
            QVERIFY2(upright[layers] == u,
                     qPrintable(QStringLiteral("%1 px: S%2 (%3 layers) %4, another box of as many layers %5")
                                    .arg(width)
                                    .arg(s)
                                    .arg(layers)
                                    .arg(u ? QStringLiteral("upright") : QStringLiteral("across"),
                                         upright[layers] ? QStringLiteral("upright") : QStringLiteral("across"))));
        }
    }
    QCOMPARE(seen, QSet<bool>({true, false}));   // the widths crossed from one way to the other
}

void PlanExplorerTest::whatIfChangeHighlightFollowsTheTheme()
{
    // The Change cell of a figure that moved was pale amber under black text on both themes,
    // a bright patch on the dark one. It takes Compare's highlight of what differs, in the
    // palette's colours, and follows a theme switch; its text reads at 4.5:1 or more (WCAG
    // 2.1 criterion 1.4.3).
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf);
    whatIf->globalBatchBox()->setValue(512);   // every time figure moves
    QTableWidget* figures = whatIf->figuresTable();
    int moved = -1;
    for (int r = 0; r < figures->rowCount() && moved < 0; ++r)
        if (figures->item(r, 2) && !figures->item(r, 2)->text().isEmpty() && figures->item(r, 2)->text() != QLatin1String("0.0 %"))
            moved = r;
    QVERIFY(moved >= 0);
    for (ThemeKind kind : {ThemeKind::Dark, ThemeKind::Light}) {
        applyTheme(kind);
        QApplication::processEvents();
        const QPalette pal = whatIf->palette();
        QCOMPARE(isDark(pal), kind == ThemeKind::Dark);
        const QTableWidgetItem* item = figures->item(moved, 2);
        const QColor bg = item->background().color();
        const QColor fg = item->foreground().color();
        QCOMPARE(bg, style::differsBackground(pal));
        QCOMPARE(fg, style::differsForeground(pal));
        QVERIFY2(contrastRatio(fg, bg) >= 4.5, qPrintable(QStringLiteral("%1 on %2").arg(fg.name(), bg.name())));
        // On the dark theme the cell stays dark, as the table's base.
        QCOMPARE(bg.lightness() < 128, kind == ThemeKind::Dark);
    }
    applyTheme(ThemeKind::Light);
}

void PlanExplorerTest::chartsFollowALiveThemeSwitch()
{
    // Switched while the window is open, every chart of every view takes the new theme's
    // background and text: the breakdown chart took the theme before (its view saw the change
    // first, while the chart still had the old palette).
    PlanExplorerWidget* w = m_explorer.get();
    w->selectPlan(0);
    for (const QString& view : {QStringLiteral("timeline"), QStringLiteral("memory"), QStringLiteral("breakdown"), QStringLiteral("compare")})
        w->showView(view);
    for (ThemeKind kind : {ThemeKind::Dark, ThemeKind::Light, ThemeKind::Dark, ThemeKind::Light}) {
        applyTheme(kind);
        QApplication::processEvents();
        const QList<QCustomPlot*> plots = w->findChildren<QCustomPlot*>();
        QVERIFY(plots.size() >= 3);
        for (QCustomPlot* plot : plots) {
            const QPalette pal = plot->palette();
            QCOMPARE(isDark(pal), kind == ThemeKind::Dark);
            QCOMPARE(plot->xAxis->tickLabelColor(), pal.color(QPalette::Text));
            const QImage image = plot->toPixmap(200, 120).toImage();
            QCOMPARE(image.pixelColor(1, 1), pal.color(QPalette::Base));
        }
    }
}

void PlanExplorerTest::planTitleWritesPercentAsTheTablesDo()
{
    // The plan table writes "39.2 %", the memory chart "10 % kept free": the title said
    // "optimizer 50% in host memory". A space, unbreakable in the title, which wraps.
    SearchResult offloaded;
    offloaded.plans = {*m_result.uniform_baseline};
    offloaded.plans.front().plan.optimizer_offload_fraction = 0.5;
    offloaded.plans.front().prediction.host_memory_per_node_gib = 412;
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(offloaded);
    auto* title = w.findChild<QLabel*>(QStringLiteral("planTitle"));
    QVERIFY(title);
    QVERIFY2(title->text().contains(QStringLiteral("optimizer 50&nbsp;% in host memory")), qPrintable(title->text()));
    auto* table = qobject_cast<PlanTableView*>(w.view(QStringLiteral("plans")));
    QVERIFY(table);
    bool mfu = false;
    for (int c = 0; c < table->model()->columnCount(); ++c)
        mfu = mfu || table->model()->index(0, c).data().toString().endsWith(QStringLiteral(" %"));
    QVERIFY(mfu);
}

void PlanExplorerTest::longPipelineTimelineScrollsWithReadableLanes()
{
    // Sixteen stages in a 1024 x 700 window left about 110 px for 16 lanes, 7 px each, and
    // named only every third. The lanes keep a line of their names each (every lane named)
    // and the Timeline page scrolls down, as Compare's charts do.
    Plan plan;
    plan.name = "16 stages";
    plan.global_batch_size = 32;
    int first = 0;
    for (int s = 0; s < 16; ++s) {
        const int layers = s < 8 ? 2 : 1;   // Mixtral-S's 24 layers
        plan.stages.push_back(test::stage(s < 8 ? "H800" : "910B-376T", s / 8, s % 8, 1, first, layers, 1, 1, 1, 1, 1, 1));
        first += layers;
    }
    SearchResult result;
    result.plans = {test::costed(*m_cost, plan)};
    PlanExplorerWidget w;
    w.setContext(context());
    w.setResult(result);
    w.resize(1024, 620);   // the explorer's share of a 1024 x 700 window
    w.show();
    w.showView(QStringLiteral("timeline"));
    settle();
    settle();
    auto* timeline = qobject_cast<TimelinePlot*>(w.view(QStringLiteral("timeline")));
    QVERIFY(timeline);
    QCOMPARE(timeline->timeline().stages, 16);
    QTRY_VERIFY2(double(timeline->axisRect()->height()) / 16 >= timeline->minimumLaneHeight(),
                 qPrintable(QStringLiteral("%1 px for 16 lanes").arg(timeline->axisRect()->height())));
    QCOMPARE(timeline->namedLanes(), 16);
    auto* scroll = w.findChild<QScrollArea*>(QStringLiteral("timelineScroll"));
    QVERIFY(scroll);
    QVERIFY2(scroll->verticalScrollBar()->maximum() > 0, "the page scrolls rather than squeeze the lanes");
    QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
    // A two-stage plan fills the page without scrolling.
    w.setResult(m_result);
    w.selectPlan(0);
    settle();
    settle();
    QTRY_COMPARE(scroll->verticalScrollBar()->maximum(), 0);
}

void PlanExplorerTest::exportDialogEmptiesWhenThePlansGo()
{
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(0);
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    QVERIFY(dialog);
    w->showView(QStringLiteral("export"));
    QVERIFY(dialog->isVisible());
    QVERIFY(dialog->hasPlan());
    QVERIFY(dialog->saveLauncherButton()->isEnabled());
    QVERIFY(dialog->refusalLabel()->text().contains(QStringLiteral("All checks pass")));

    // File > New or Open clears the explorer: the dialog closes, empties, and can save nothing.
    const auto expectEmpty = [&] {
        QVERIFY(!dialog->isVisible());
        QVERIFY(!dialog->hasPlan());
        QVERIFY(!dialog->copyButton()->isEnabled());
        QVERIFY(!dialog->saveLauncherButton()->isEnabled());
        QVERIFY(!dialog->savePlanButton()->isEnabled());
        QVERIFY2(!dialog->refusalLabel()->text().contains(QStringLiteral("All checks pass")),
                 qPrintable(dialog->refusalLabel()->text()));
        QVERIFY2(!dialog->preview()->toPlainText().contains(QStringLiteral("torchrun")) &&
                     !dialog->preview()->toPlainText().contains(QStringLiteral("# Usage")),
                 qPrintable(dialog->preview()->toPlainText().left(300)));
        QTemporaryDir dir;
        QVERIFY(!dialog->saveLauncher(dir.filePath(QStringLiteral("x.sh"))).isEmpty());
        QVERIFY(!dialog->savePlanJson(dir.filePath(QStringLiteral("plan.json"))).isEmpty());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.sh"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("plan.json"))));
    };
    w->clear();
    expectEmpty();
    if (QTest::currentTestFailed())
        return;

    // Plans again: the dialog has the selected one; then a search that finds no plan empties it.
    w->setResult(m_result);
    QVERIFY(dialog->hasPlan());
    QVERIFY(dialog->saveLauncherButton()->isEnabled());
    w->showView(QStringLiteral("export"));
    QVERIFY(dialog->isVisible());
    SearchResult none;
    none.no_plan_reason = "no placement fits in device memory";
    w->setResult(none);
    expectEmpty();
}

void PlanExplorerTest::exportDialogKeepsTheTargetOnARefresh()
{
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(1);   // the uniform baseline, a Megatron-LM plan
    auto* dialog = qobject_cast<ExportDialog*>(w->view(QStringLiteral("export")));
    QVERIFY(dialog);
    QCOMPARE(dialog->format(), LauncherFormat::Megatron);
    dialog->setFormat(LauncherFormat::FlagScale);   // the user's choice
    QVERIFY2(dialog->result().ok, dialog->result().refusal.c_str());
    dialog->copyButton()->click();
    QCOMPARE(dialog->statusText(), QStringLiteral("Launcher copied to the clipboard."));

    // Refreshes of the same plan (the project changed and changed back; a new context) keep
    // the target and the status line.
    w->setOutdated(true);
    w->setOutdated(false);
    w->setContext(context());
    QCOMPARE(dialog->format(), LauncherFormat::FlagScale);
    QCOMPARE(dialog->statusText(), QStringLiteral("Launcher copied to the clipboard."));

    // Another plan: its own preferred target, and a status line that spoke of the last plan goes.
    w->selectPlan(0);   // the heterogeneous plan: FlagScale
    QCOMPARE(dialog->format(), LauncherFormat::FlagScale);
    QCOMPARE(dialog->statusText(), QString());
    w->selectPlan(2);   // the current configuration: Megatron-LM
    QCOMPARE(dialog->format(), LauncherFormat::Megatron);
}

QTEST_MAIN(PlanExplorerTest)
namespace {
QTabWidget* tabsOf(PlanExplorerWidget* w)
{
    for (QWidget* p = w->view(QStringLiteral("timeline")); p; p = p->parentWidget())
        if (auto* tabs = qobject_cast<QTabWidget*>(p))
            return tabs;
    return nullptr;
}
} // namespace

void PlanExplorerTest::tabBarStaysPutAcrossViews()
{
    // Compare draws the partition of every plan it compares and has no stage strip of the
    // selected plan: leaving it out must not move the tab bar, or a second click where
    // "What-if" was would land on the compare page.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->selectPlan(0);
    QTabWidget* tabs = tabsOf(w.get());
    QVERIFY(tabs);
    auto* strip = w->view(QStringLiteral("partition"));
    w->showView(QStringLiteral("timeline"));
    QApplication::processEvents();
    const QRect whatIfTab(tabs->tabBar()->mapTo(w.get(), tabs->tabBar()->tabRect(4).topLeft()), tabs->tabBar()->tabRect(4).size());
    for (const QString& name : {QStringLiteral("compare"), QStringLiteral("whatif"), QStringLiteral("memory"),
                                QStringLiteral("compare"), QStringLiteral("breakdown"), QStringLiteral("timeline")}) {
        w->showView(name);
        QApplication::processEvents();
        const QRect tab(tabs->tabBar()->mapTo(w.get(), tabs->tabBar()->tabRect(4).topLeft()), tabs->tabBar()->tabRect(4).size());
        QVERIFY2(tab == whatIfTab, qPrintable(QStringLiteral("%1: What-if tab at y %2, was %3").arg(name).arg(tab.y()).arg(whatIfTab.y())));
        // The strip of the selected plan shows under the tabs, except on Compare.
        QCOMPARE(strip->isVisible(), name != QLatin1String("compare"));
        if (strip->isVisible())
            QVERIFY(strip->mapTo(w.get(), QPoint()).y() >= tab.bottom());
    }
    // A click where the What-if tab is, after Compare, opens What-if.
    w->showView(QStringLiteral("compare"));
    QApplication::processEvents();
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->mapFrom(w.get(), whatIfTab.center()));
    QVERIFY(w->view(QStringLiteral("whatif"))->isVisible());
    QVERIFY(strip->isVisible());
}

void PlanExplorerTest::whatIfWithdrawsItsSuggestion()
{
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    QSignalSpy suggested(w.get(), &PlanExplorerWidget::newSearchSuggested);
    QSignalSpy withdrawn(w.get(), &PlanExplorerWidget::newSearchSuggestionWithdrawn);
    w->selectPlan(1);
    w->selectPlan(0);
    // Selecting a plan suggests nothing: only changed inputs do.
    QCOMPARE(suggested.count(), 0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf);
    // 258 and 262 are not multiples of the first stage's DP x micro-batch (4): a new search
    // is suggested.
    const auto suggest = [&] {
        whatIf->globalBatchBox()->setValue(whatIf->globalBatchBox()->value() == 258 ? 262 : 258);
        return suggested.count() == 1 && !whatIf->hint().isEmpty();
    };
    QVERIFY(suggest());
    // Reset: the plan as it is, and the suggestion no longer holds.
    QPushButton* reset = nullptr;
    for (QPushButton* b : whatIf->findChildren<QPushButton*>())
        if (b->text() == QLatin1String("Reset"))
            reset = b;
    QVERIFY(reset);
    QTest::mouseClick(reset, Qt::LeftButton);
    QCOMPARE(whatIf->globalBatchBox()->value(), 256);
    QCOMPARE(withdrawn.count(), 1);
    QCOMPARE(suggested.count(), 1);
    // A batch it divides again withdraws it too.
    suggested.clear();
    QVERIFY(suggest());
    whatIf->globalBatchBox()->setValue(256);
    QCOMPARE(withdrawn.count(), 2);
    // Another view: the suggestion names inputs out of sight.
    suggested.clear();
    QVERIFY(suggest());
    w->showView(QStringLiteral("timeline"));
    QCOMPARE(withdrawn.count(), 3);
    // Another plan.
    w->showView(QStringLiteral("whatif"));
    suggested.clear();
    QVERIFY(suggest());
    w->selectPlan(1);
    QCOMPARE(withdrawn.count(), 4);
    // A new context (after a search).
    suggested.clear();
    QVERIFY(suggest());
    w->setContext(context());
    QCOMPARE(withdrawn.count(), 5);
    QCOMPARE(suggested.count(), 1);
}

void PlanExplorerTest::whatIfNamesTheRangeOfARefusedValue()
{
    // rho goes from 1 to 16 (WhatIfPanel): 0.5 typed and Enter keeps 1.20, and the panel
    // says why under its fields.
    std::unique_ptr<PlanExplorerWidget> w(makeExplorer());
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    w->selectPlan(0);
    w->showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<WhatIfPanel*>(w->view(QStringLiteral("whatif")));
    QVERIFY(whatIf);
    auto* message = whatIf->findChild<QLabel*>(QStringLiteral("whatIfInputMessage"));
    QVERIFY(message && !message->isVisible());
    QDoubleSpinBox* rho = whatIf->rhoBox();
    // Its tooltip says the range beforehand: a value above 16 cannot be typed at all.
    QVERIFY2(SpinBoxRangeCheck::toolTipText(rho).endsWith(QStringLiteral("From 1.00 to 16.00.")), qPrintable(SpinBoxRangeCheck::toolTipText(rho)));
    rho->setFocus();
    rho->selectAll();
    QTest::keyClicks(rho, QStringLiteral("0.5"));
    QTest::keyClick(rho, Qt::Key_Return);
    QCOMPARE(rho->value(), 1.2);
    QCOMPARE(whatIf->inputMessage(), QStringLiteral("Router imbalance ρ: at least 1.00, not 0.5; it stays 1.20."));
    QVERIFY(message->isVisible());
    QVERIFY(message->text().contains(QStringLiteral("at least 1.00")));
    // A value it takes: the message goes.
    rho->selectAll();
    QTest::keyClicks(rho, QStringLiteral("1.5"));
    QTest::keyClick(rho, Qt::Key_Return);
    QCOMPARE(rho->value(), 1.5);
    QVERIFY(whatIf->inputMessage().isEmpty());
    QVERIFY(!message->isVisible());
    // The node count of a type that is not there: 0 is allowed, a negative count cannot
    // even be typed; the sequence length goes from 128 tokens.
    QSpinBox* seq = whatIf->sequenceLengthBox();
    seq->setFocus();
    seq->selectAll();
    QTest::keyClicks(seq, QStringLiteral("64"));
    rho->setFocus();   // leaving the field ends the entry as Enter does
    QCOMPARE(whatIf->inputMessage(),
             QStringLiteral("Sequence length: at least 128 tokens, not 64; it stays %1 tokens.").arg(m_model.seq_length));
}

void PlanExplorerTest::unlaunchableCurrentHasNoTarget()
{
    // The script's configuration in FP8 over H800 and 910B (no FP8 rate, another collective
    // library): neither Megatron-LM nor FlagScale can launch it, so the Target column says
    // none and the tooltip gives the rule, where it said Megatron-LM.
    ModelSpec fp8 = m_model;
    fp8.training.fp8_format = Fp8Format::Hybrid;
    const CostModel cost(fp8, m_cluster, DeviceCatalog::builtin());
    SearchResult r = m_result;
    Plan current = test::uniformPlan16_1();
    current.target = Target::Megatron;
    r.current = test::costed(cost, current);
    PlanExplorerWidget w;
    ExplorerContext ctx = context();
    ctx.model = fp8;
    w.setContext(ctx);
    w.setResult(r);
    auto* table = qobject_cast<PlanTableView*>(w.view(QStringLiteral("plans")));
    QVERIFY(table);
    bool seen = false;
    for (int row = 0; row < table->model()->rowCount(); ++row) {
        const QModelIndex source = table->model()->index(row, PlanListModel::Source);
        if (source.data().toString() != QLatin1String("current"))
            continue;
        seen = true;
        const QModelIndex target = table->model()->index(row, PlanListModel::TargetColumn);
        QCOMPARE(target.data().toString(), QStringLiteral("none"));
        const QString tip = target.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("On this cluster neither Megatron-LM nor FlagScale can launch it: stage 1 (910B-376T)")),
                 qPrintable(tip));
    }
    QVERIFY(seen);
    // The search's own plans keep their target.
    QCOMPARE(table->model()->index(0, PlanListModel::TargetColumn).data().toString(), QStringLiteral("FlagScale"));
    // So does the Compare view, which compares the best plan with the current configuration
    // and gives each one's global batch.
    auto* compare = qobject_cast<CompareView*>(w.view(QStringLiteral("compare")));
    QVERIFY(compare);
    QTableWidget* figures = compare->table();
    int targetRow = -1, batchRow = -1;
    for (int row = 0; row < figures->rowCount(); ++row) {
        if (figures->verticalHeaderItem(row)->text() == QStringLiteral("Target"))
            targetRow = row;
        if (figures->verticalHeaderItem(row)->text() == QStringLiteral("Global batch"))
            batchRow = row;
    }
    QVERIFY(targetRow >= 0 && batchRow >= 0);
    QStringList targets;
    for (int column = 0; column < figures->columnCount(); ++column) {
        targets << figures->item(targetRow, column)->text();
        QCOMPARE(figures->item(batchRow, column)->text(), QString::number(current.global_batch_size));
    }
    QVERIFY2(targets.contains(QStringLiteral("none")) && targets.contains(QStringLiteral("FlagScale")), qPrintable(targets.join(',')));
}

#include "PlanExplorerTest.moc"
