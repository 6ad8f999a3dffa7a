// Running the search from the GUI: the ranked list appears, Cancel answers at once, the GUI
// thread is never blocked while the search runs on the largest paper cluster (32-x), and
// closing the window during a search cancels it cleanly.

#include "GuiTestSupport.h"

#include "ExplorerStyle.h"
#include "ModelPanel.h"
#include "PlanExplorerWidget.h"
#include "ProjectDocument.h"
#include "SearchPanel.h"
#include "SearchRunner.h"

#include "io/Presets.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QScrollArea>
#include <QScrollBar>
#include <QElapsedTimer>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QGroupBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoStack>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// Wall-time bounds are asserted only when HAPMOE_TIMING_ASSERTS=1 (see README, "Tests").
bool timingAsserts()
{
    return qEnvironmentVariableIntValue("HAPMOE_TIMING_ASSERTS") == 1;
}

// Records the longest interval between ticks of a 5 ms timer on the GUI thread while a
// condition holds: how long the event loop was kept from running.
class GuiThreadWatch : public QObject {
public:
    explicit GuiThreadWatch(std::function<bool()> active) : m_active(std::move(active))
    {
        m_timer.setInterval(5);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            if (m_active() && m_last >= 0)
                m_maxGapMs = std::max(m_maxGapMs, (now - m_last) / 1e6);
            m_last = now;
            ++m_ticks;
        });
        m_clock.start();
        m_timer.start();
    }
    double maxGapMs() const { return m_maxGapMs; }
    int ticks() const { return m_ticks; }

private:
    std::function<bool()> m_active;
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = -1;
    double m_maxGapMs = 0;
    int m_ticks = 0;
};

void useLargestPaperCluster(MainWindow& w)
{
    // 32-3 (Table 1 of the paper: 910B 2x8 + MI300X 2x8) with Mixtral-S, as in the example.
    w.loadExample();
    QVERIFY(w.loadClusterPreset(QStringLiteral("32-3")));
    SearchSettings s = w.document()->searchSettings();
    s.top_k = 3;
    s.time_limit_s = 60;
    w.document()->setSearchSettings(s);
}

// The exhaustive oracle on the largest paper cluster with the given time limit (0: none),
// a search long enough to watch, cancel or abandon in the middle.
void useLongSearch(MainWindow& w, double timeLimitS)
{
    useLargestPaperCluster(w);
    SearchSettings s = w.document()->searchSettings();
    s.algorithm = Algorithm::Exhaustive;
    s.time_limit_s = timeLimitS;
    w.document()->setSearchSettings(s);
}

// Runs the panel's search and waits for its result (3 minutes at most).
bool searchToTheEnd(SearchPanel* panel)
{
    QSignalSpy finished(panel, &SearchPanel::searchFinished);
    return panel->run() && QTest::qWaitFor([&] { return !finished.isEmpty(); }, 180000);
}

// The text a chart of the explorer shows in place of a plan.
QString chartPlaceholder(QWidget* chart)
{
    return style::chartPlaceholder(qobject_cast<QCustomPlot*>(chart));
}

} // namespace

class SearchPanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void baselineComparisonReadsRightBothWays()
    {
        // A plan of 1.0 s against a baseline of 1.68 s is 1.68x faster; of 1.68 s against
        // 1.0 s, the baseline is (the status once said "0.60x faster").
        QCOMPARE(SearchPanel::baselineComparison(1.0, 1.68), QStringLiteral("1.68\u00d7 faster than the uniform baseline"));
        QCOMPARE(SearchPanel::baselineComparison(1.68, 1.0), QStringLiteral("the uniform baseline is 1.68\u00d7 faster"));
        QCOMPARE(SearchPanel::baselineComparison(1.0, 1.001), QStringLiteral("as fast as the uniform baseline"));
    }

    void baselineStatusSaysWhyThereIsNoComparison()
    {
        // docs/gui.md: the status compares the best plan with the uniform baseline either
        // way; without a baseline, or with one that does not fit, it says why instead of
        // nothing. Plans of 1.0 s and a baseline of 1.68 s give 1.68x.
        SearchResult r;
        r.plans.push_back(RankedPlan{});
        r.plans.front().prediction.feasible = true;
        r.plans.front().prediction.iteration_time_s = 1.0;
        QCOMPARE(SearchPanel::baselineStatus(r), QStringLiteral("no comparison with the uniform baseline: no uniform split fits this cluster"));
        r.timed_out = true;
        QCOMPARE(SearchPanel::baselineStatus(r), QStringLiteral("no comparison with the uniform baseline: the search stopped before it ran"));
        r.timed_out = false;
        r.uniform_baseline = RankedPlan{};
        r.uniform_baseline->prediction.feasible = false;
        r.uniform_baseline->prediction.infeasible_reason = "stage 0 needs 91.2 GiB of 80 GiB";
        QCOMPARE(SearchPanel::baselineStatus(r),
                 QStringLiteral("no comparison with the uniform baseline: it does not fit (stage 0 needs 91.2 GiB of 80 GiB)"));
        r.uniform_baseline->prediction.feasible = true;
        r.uniform_baseline->prediction.iteration_time_s = 1.68;
        QCOMPARE(SearchPanel::baselineStatus(r), QStringLiteral("1.68\u00d7 faster than the uniform baseline"));
        r.algorithm = Algorithm::Uniform;   // its best plan is the baseline
        QCOMPARE(SearchPanel::baselineStatus(r), QString());
    }

    void currentStatusComparesPerSequence()
    {
        // The status compares the best plan with the configuration run today. A plan of 2.0 s
        // for 64 sequences against a current one of 2.2 s for the same 64: 2.2 / 2.0 = 1.10x.
        SearchResult r;
        QCOMPARE(SearchPanel::currentStatus(r), QString());   // neither a plan nor a current one
        r.plans.push_back(RankedPlan{});
        r.plans.front().prediction.feasible = true;
        r.plans.front().prediction.iteration_time_s = 2.0;
        r.plans.front().plan.global_batch_size = 64;
        r.current = RankedPlan{};
        r.current->prediction.feasible = true;
        r.current->prediction.iteration_time_s = 2.2;
        r.current->plan.global_batch_size = 64;
        QCOMPARE(SearchPanel::currentStatus(r), QStringLiteral("1.10× faster than the current configuration"));
        // Its own batch of 32 in 1.1 s: 1.1 / 32 = 0.034375 s against 2.0 / 64 = 0.03125 s per
        // sequence, 1.10x, said per sequence.
        r.current->plan.global_batch_size = 32;
        r.current->prediction.iteration_time_s = 1.1;
        QCOMPARE(SearchPanel::currentStatus(r), QStringLiteral("1.10× faster than the current configuration per sequence"));
        // 2.004 s for 64: 0.2 % slower, below the two decimals of a factor.
        r.current->plan.global_batch_size = 64;
        r.current->prediction.iteration_time_s = 2.004;
        QCOMPARE(SearchPanel::currentStatus(r), QStringLiteral("0.2 % faster than the current configuration"));
        // 2.0005 s: 0.025 %, which one decimal rounds to none: level.
        r.current->prediction.iteration_time_s = 2.0005;
        QCOMPARE(SearchPanel::currentStatus(r), QStringLiteral("as fast as the current configuration"));
        // Faster than the plan: core's advice (currentConfigurationNote).
        r.current->prediction.iteration_time_s = 1.9;
        QCOMPARE(SearchPanel::currentStatus(r), QStringLiteral("the current configuration is faster than every plan found: keep it"));
        // One that does not fit is not compared (its row says why).
        r.current->prediction.feasible = false;
        QCOMPARE(SearchPanel::currentStatus(r), QString());
    }

    void checkStatusSaysWhatTheCheckDid()
    {
        // docs/gui.md and docs/search.md section 7: the status says what the exact check found,
        // or which limit stopped it or kept it from running, and why the plans offload.
        SearchResult r;
        QCOMPARE(SearchPanel::checkStatus(r), QString());   // no plans: nothing to say
        r.plans.push_back(RankedPlan{});
        r.plans.front().prediction.feasible = true;
        r.plans.front().prediction.iteration_time_s = 11.13;
        QCOMPARE(SearchPanel::checkStatus(r), QString());   // the check was off
        r.exact_check = ExactCheck::Finished;
        r.exact_check_s = 0.052;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("exact: the check (52 ms) found nothing faster"));
        r.pruned_best_s = 11.36;   // Mixtral-S on 24-1
        r.exact_check_s = 0.174;
        QCOMPARE(SearchPanel::checkStatus(r),
                 QStringLiteral("the exact check (174 ms) found a faster plan than the pruned search's 11.360 s"));
        r.plans.front().prediction.iteration_time_s = 101.883;   // Mixtral-L on 16-2, "if needed"
        r.pruned_best_s = 92.136;
        r.exact_check_s = 0.31;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check (310 ms) found plans with the optimizer on the "
                                                             "devices (the pruned search's best offloaded it: 92.136 s)"));
        r.pruned_best_s = 0;
        r.exact_check = ExactCheck::WorkBudget;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check stopped at its work budget, so a faster plan may "
                                                             "exist (tick Exact to search without the prunings)"));
        r.exact_check = ExactCheck::TimeLimit;
        QVERIFY(SearchPanel::checkStatus(r).startsWith(QStringLiteral("the exact check stopped at the time limit, ")));
        // With K plans, its one-plan pass finished: #1 is exact, the alternatives are not.
        r.exact_check_best = true;
        QCOMPARE(r.plans.size(), std::size_t(1));   // the best alone (found on the devices)
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check found the best plan, then stopped at the time limit "
                                                             "before the alternatives: #1 is the exact best, the next are not "
                                                             "known (tick Exact to find them)"));
        r.plans.push_back(r.plans.front());   // the pruned search's alternatives after it
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check found the best plan, then stopped at the time limit "
                                                             "before the alternatives: #1 is the exact best, the others are not "
                                                             "known to be the next best"));
        r.plans.pop_back();
        r.exact_check_best = false;
        r.exact_check = ExactCheck::NotTriedWork;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check was not tried (the pruned search alone did more "
                                                             "work than its budget), so a faster plan may exist"));
        r.exact_check = ExactCheck::NotTriedTime;
        QCOMPARE(SearchPanel::checkStatus(r),
                 QStringLiteral("the exact check was not tried (the time limit was near), so a faster plan may exist"));
        r.exact_check = ExactCheck::Cancelled;   // the status says "cancelled" already
        QCOMPARE(SearchPanel::checkStatus(r), QString());
        // The offload: needed ("if needed"), or the fastest share ("fastest").
        r.exact_check = ExactCheck::Off;
        r.offload_needed = true;
        r.plans.front().plan.optimizer_offload_fraction = 0.25;
        QCOMPARE(SearchPanel::checkStatus(r),
                 QStringLiteral("the search found no plan with the optimizer on the devices, so these keep it in host memory"));
        r.optimizer_offload = OptimizerOffload::Fastest;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("25 % of the optimizer in host memory gives the fastest plan"));
        r.exact_check = ExactCheck::Finished;
        r.pruned_best_s = 92.136;
        r.plans.front().prediction.iteration_time_s = 91.589;
        r.exact_check_s = 1.755;
        QCOMPARE(SearchPanel::checkStatus(r), QStringLiteral("the exact check (1.755 s) found a faster plan than the pruned "
                                                             "search's 92.136 s; 25 % of the optimizer in host memory gives the "
                                                             "fastest plan"));
    }

    void runStatusSaysHowTheRunEnded()
    {
        // The status's first part: the count and time, a cancel or the time limit, and a list
        // of alternatives the time limit cut short (search.list_cut, docs/search.md).
        SearchResult r;
        r.plans.resize(3);
        r.time_s = 4.2;
        QCOMPARE(SearchPanel::runStatus(r), QStringLiteral("3 plans in 4.200 s"));
        r.timed_out = true;
        r.list_cut = true;
        QCOMPARE(SearchPanel::runStatus(r),
                 QStringLiteral("3 plans in 4.200 s \u2013 time limit reached, best so far shown; the time limit ended the list at 3 plans"));
        r.plans.resize(1);
        r.micro_batch_sizes = {1, 2};
        QCOMPARE(SearchPanel::runStatus(r), QStringLiteral("1 plan in 4.200 s over micro-batch sizes 1, 2 \u2013 time limit reached, best "
                                                           "so far shown; the time limit ended the list at its first plan"));
        r.cancelled = true;
        r.list_cut = false;
        QVERIFY(SearchPanel::runStatus(r).endsWith(QStringLiteral(" \u2013 cancelled, best so far shown")));
        r.plans.clear();
        QVERIFY(SearchPanel::runStatus(r).startsWith(QStringLiteral("No plan found: ")));
    }

    void reorderedAlternativeSaysSo()
    {
        // Mixtral-S on 24-1, five plans: "PP7 sizes vary" for all of them, and #5 holds #4's stages
        // in another order (docs/search.md section 1): its shape's tooltip says so, the others'
        // do not.
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("24-1")));
        SearchSettings s = w->document()->searchSettings();
        s.top_k = 5;
        w->document()->setSearchSettings(s);
        SearchPanel* panel = w->searchPanel();
        QVERIFY(searchToTheEnd(panel));
        QTreeWidget* list = panel->resultList();
        QVERIFY(list->topLevelItemCount() >= 5);
        for (int i = 0; i < 5; ++i) {
            const QString tip = list->topLevelItem(i)->toolTip(SearchPanel::ShapeColumn);
            QCOMPARE(tip.contains(QStringLiteral("The stages of HS-DP #4 in another order")), i == 4);
        }
    }

    void denseModelListsNoExpertKnobs()
    {
        // Megatron-GPT-70B (dense) on 16-3: the Shape column read "PP2 TP1 DP8 EP1" and its
        // tooltip "... EP1 ETP1 EDP1", expert knobs the explorer leaves out for a dense model.
        // The search there finds no uniform baseline: the status says so. MFU is written
        // "39.2 %" as the plan table writes it.
        auto w = makeWindow();
        const ModelSpec* gpt = findModelPreset("Megatron-GPT-70B");
        QVERIFY(gpt);
        QVERIFY(!gpt->isMoe());
        w->document()->setModel(*gpt, QStringLiteral("Load"));
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-3")));
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(searchToTheEnd(panel));
        const SearchResult result = finished.first().first().value<SearchResult>();
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        QTreeWidget* list = panel->resultList();
        QVERIFY(list->topLevelItemCount() > 0);
        for (int i = 0; i < list->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* item = list->topLevelItem(i);
            for (const QString& text : {item->text(SearchPanel::ShapeColumn), item->toolTip(SearchPanel::ShapeColumn)})
                QVERIFY2(!text.contains(QStringLiteral("EP")) && !text.contains(QStringLiteral("ETP")), qPrintable(text));
            // "PP9 sizes vary" or "PP2 TP1 DP8"; stage by stage in the tooltip.
            QVERIFY2(item->text(SearchPanel::ShapeColumn).contains(QStringLiteral(" DP")) ||
                         item->text(SearchPanel::ShapeColumn).endsWith(QStringLiteral(" sizes vary")),
                     qPrintable(item->text(SearchPanel::ShapeColumn)));
            QVERIFY2(item->toolTip(SearchPanel::ShapeColumn).contains(QStringLiteral(": TP1 CP1 DP")) ||
                         item->toolTip(SearchPanel::ShapeColumn).contains(QStringLiteral(" CP1 DP")),
                     qPrintable(item->toolTip(SearchPanel::ShapeColumn)));
            const QString mfu = item->text(SearchPanel::MfuColumn);
            QVERIFY2(mfu.isEmpty() || QRegularExpression(QStringLiteral("^[0-9]+\\.[0-9] %$")).match(mfu).hasMatch(), qPrintable(mfu));
        }
        auto* progress = panel->findChild<QProgressBar*>();
        QVERIFY(progress);
        QCOMPARE(progress->text(), QStringLiteral("100 %"));   // as "Keep free: 0.0 %" above it
        const QString status = panel->statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("uniform baseline")), qPrintable(status));
        if (!result.uniform_baseline)
            QVERIFY2(status.contains(QStringLiteral("no uniform split fits this cluster")), qPrintable(status));
    }

    void runShowsRankedPlans()
    {
        auto w = makeWindow();
        useLargestPaperCluster(*w);
        QCOMPARE(w->document()->cluster().totalDevices(), 32);
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QVERIFY2(panel->isRunning(), qPrintable(panel->statusLabel()->text()));
        QVERIFY(!panel->runButton()->isEnabled());
        QVERIFY(panel->cancelButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);   // may have ended already
        QVERIFY(!panel->isRunning());

        const SearchResult result = finished.first().first().value<SearchResult>();
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        QVERIFY(result.plans.size() <= 3);
        QVERIFY(result.states > 0);
        // Ranked: best first; the list shows the plans, then the baselines.
        for (size_t i = 1; i < result.plans.size(); ++i)
            QVERIFY(result.plans[i - 1].prediction.iteration_time_s <= result.plans[i].prediction.iteration_time_s);
        const int baselines = int(result.uniform_baseline.has_value()) + int(result.metis_baseline.has_value()) +
                              int(result.current.has_value());
        QCOMPARE(panel->resultList()->topLevelItemCount(), int(result.plans.size()) + baselines);
        QCOMPARE(panel->resultList()->topLevelItem(0)->text(1), QString::fromStdString(result.plans[0].plan.name));
        // Iteration times as the plan table writes them ("706.3 ms", "7.295 s"): plans a
        // fraction of a millisecond apart do not read alike.
        for (size_t i = 0; i < result.plans.size(); ++i)
            QCOMPARE(panel->resultList()->topLevelItem(int(i))->text(SearchPanel::IterationColumn),
                     style::formatSeconds(result.plans[i].prediction.iteration_time_s));
        QCOMPARE(w->explorer()->planCount(), int(result.plans.size()) + baselines);
        QCOMPARE(w->document()->project().plans.size(), savedRows(result));   // kept with the project, baselines too
    }

    void rankedListShowsEveryColumnWhole()
    {
        // Mixtral-S on 32-3, as in the example: shapes whose sizes vary ("PP3 sizes vary"), uniform ones
        // ("PP2 TP1 DP16 EP8") and the baselines' longer names. The shape, at the right end,
        // was cut off at every dock width.
        auto w = makeWindow();
        w->loadExample();
        SearchPanel* panel = w->searchPanel();
        QVERIFY(searchToTheEnd(panel));
        QTreeWidget* list = panel->resultList();
        QVERIFY(list->topLevelItemCount() > 2);
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("searchDock"));
        QVERIFY(dock);
        // The dock's narrowest (the list's own minimum, about 330 px), and wider.
        for (const int width : {0, 420, 520, 700}) {
            w->resizeDocks({dock}, {width}, Qt::Horizontal);
            QApplication::processEvents();
            QHeaderView* header = list->header();
            const QString where = QStringLiteral("list %1 px wide").arg(list->viewport()->width());
            // Nothing to scroll sideways: every column shown ends inside the list.
            QCOMPARE(list->horizontalScrollBar()->maximum(), 0);
            QVERIFY2(header->length() <= list->viewport()->width(), qPrintable(where));
            for (int c : {SearchPanel::RankColumn, SearchPanel::PlanColumn, SearchPanel::IterationColumn, SearchPanel::ShapeColumn})
                QVERIFY(!header->isSectionHidden(c));
            // The shape in full on every row, and the ranked plans' names (a baseline's may
            // be elided); the tooltips hold the shape stage by stage and the name.
            auto whole = [&](const QTreeWidgetItem* item, int c) {
                const QFontMetrics fm(item->font(c));
                return fm.elidedText(item->text(c), Qt::ElideRight, header->sectionSize(c) - 6) == item->text(c);
            };
            for (int i = 0; i < list->topLevelItemCount(); ++i) {
                const QTreeWidgetItem* item = list->topLevelItem(i);
                QVERIFY2(whole(item, SearchPanel::ShapeColumn), qPrintable(where + QStringLiteral(": ") + item->text(SearchPanel::ShapeColumn)));
                if (!item->font(SearchPanel::PlanColumn).italic())
                    QVERIFY2(whole(item, SearchPanel::PlanColumn), qPrintable(where + QStringLiteral(": ") + item->text(SearchPanel::PlanColumn)));
                QVERIFY(item->toolTip(SearchPanel::ShapeColumn).contains(QStringLiteral("S0 ")));
                QVERIFY(item->toolTip(SearchPanel::PlanColumn).startsWith(item->text(SearchPanel::PlanColumn)));
            }
        }
        // Wide enough, every figure is there.
        w->resizeDocks({dock}, {900}, Qt::Horizontal);
        QApplication::processEvents();
        QVERIFY(!list->header()->isSectionHidden(SearchPanel::TokensColumn));
        QVERIFY(!list->header()->isSectionHidden(SearchPanel::MfuColumn));
    }

    void settingsTakeOnePairARowWhenNarrow()
    {
        // In the default dock (480 px at 1600 px) the settings stand two pairs a row: Target
        // beside Algorithm. Narrowed (in a 1024 px window), one pair a row, Algorithm under
        // Target. At either width no field is narrower than its minimum,
        // and the panel never asks for more than the one-column width.
        auto w = makeWindow();
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("searchDock"));
        auto* target = w->findChild<QComboBox*>(QStringLiteral("searchTarget"));
        auto* algorithm = w->findChild<QComboBox*>(QStringLiteral("searchAlgorithm"));
        auto* headroom = w->findChild<QDoubleSpinBox*>(QStringLiteral("searchHeadroom"));
        QVERIFY(dock && target && algorithm && headroom);
        auto* box = w->searchPanel()->findChild<QGroupBox*>();
        QVERIFY(box && box->title() == QStringLiteral("Search settings"));
        const auto fieldsWhole = [&] {   // every field of the box: combo boxes, spin boxes, the check box
            for (QWidget* f : box->findChildren<QWidget*>())
                if ((qobject_cast<QComboBox*>(f) || qobject_cast<QAbstractSpinBox*>(f) || qobject_cast<QCheckBox*>(f))
                    && f->width() < f->minimumSizeHint().width())
                    return false;
            return true;
        };
        const auto top = [&](QWidget* f) { return f->mapTo(w.get(), QPoint()).y(); };
        w->resizeDocks({dock}, {480}, Qt::Horizontal);
        QTRY_COMPARE(top(algorithm), top(target));
        QVERIFY(fieldsWhole());
        w->resizeDocks({dock}, {0}, Qt::Horizontal);   // as narrow as it goes
        QTRY_VERIFY(top(algorithm) > top(target));
        // The narrowest is the plan list's: rank, name, iteration and shape whole (about 330 px).
        QVERIFY2(dock->width() < 345, qPrintable(QString::number(dock->width())));
        QVERIFY(fieldsWhole());
        auto* scroll = w->findChild<QScrollArea*>(QStringLiteral("searchPanelScroll"));
        QVERIFY(scroll);
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
        QVERIFY(w->searchPanel()->width() <= scroll->viewport()->width());   // nothing cut on the right
        w->resizeDocks({dock}, {480}, Qt::Horizontal);
        QTRY_COMPARE(top(algorithm), top(target));
    }

    void summaryOutlivesAnUndoneChange()
    {
        // The example searched, then a node given 4 devices instead of 8: the red line says
        // the plans are out of date (a rename would keep them). Undone, the line goes and the search's summary is still there; a new search
        // hides the line while it runs (its list is empty until it ends).
        auto w = makeWindow();
        w->loadExample();
        SearchPanel* panel = w->searchPanel();
        QVERIFY(searchToTheEnd(panel));
        const QString summary = panel->statusLabel()->text();
        QVERIFY2(summary.contains(QStringLiteral("faster than the uniform baseline")), qPrintable(summary));
        auto* outdated = panel->findChild<QLabel*>(QStringLiteral("searchOutdated"));
        QVERIFY(outdated && outdated->isHidden());
        Node n = w->document()->cluster().nodes.front();
        n.count = 4;
        w->document()->setNode(n);
        QVERIFY(!outdated->isHidden());
        w->document()->undoStack()->undo();
        QVERIFY(outdated->isHidden());
        QCOMPARE(panel->statusLabel()->text(), summary);
        w->document()->undoStack()->redo();
        QVERIFY(!outdated->isHidden());
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QVERIFY(outdated->isHidden());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        QVERIFY(outdated->isHidden());
    }

    void clusterWithIslandIsRefused()
    {
        // The example (Mixtral-S on 32-3) with one node's links removed: that node cannot
        // reach the others, so a plan over all of them could not run. The search refuses
        // it, as `hapmoe plan` does, and names the field.
        auto w = makeWindow();
        w->loadExample();
        Cluster c = w->document()->cluster();
        QVERIFY(c.nodes.size() >= 2);
        const int cut = c.nodes.back().id;
        const auto before = c.links.size();
        std::erase_if(c.links, [cut](const Link& l) { return l.a == cut || l.b == cut; });
        QVERIFY(c.links.size() < before);
        w->document()->setCluster(c, QStringLiteral("unlink a node"));
        SearchPanel* panel = w->searchPanel();
        QSignalSpy started(panel, &SearchPanel::searchStarted);
        QVERIFY(!panel->run());
        QVERIFY(!panel->isRunning());
        QCOMPARE(started.count(), 0);
        const QString status = panel->statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("Cannot search: cluster.links: ")), qPrintable(status));
        QVERIFY2(status.contains(QString::fromStdString(c.nodes.back().host)), qPrintable(status));
        // Linked again, it runs.
        w->document()->undoStack()->undo();
        QVERIFY(panel->run());
        panel->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isRunning(), 60000);
    }

    void memoryHeadroomSetting()
    {
        // "Keep free: 5 %" is saved in the project and every plan of the search leaves 5 % of
        // each device's memory free: the H800's 80 GiB become 76 (the paper's 16-1 cluster,
        // Mixtral-S of the example).
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        SearchPanel* panel = w->searchPanel();
        auto* headroom = panel->findChild<QDoubleSpinBox*>(QStringLiteral("searchHeadroom"));
        QVERIFY(headroom);
        QCOMPARE(headroom->value(), 0.0);
        headroom->setValue(5);
        QCOMPARE(w->document()->searchSettings().memory_headroom, 0.05);
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult r = finished.first().first().value<SearchResult>();
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        for (const RankedPlan& rp : r.plans) {
            QCOMPARE(rp.prediction.memory_headroom, 0.05);
            for (std::size_t s = 0; s < rp.plan.stages.size(); ++s) {
                const MemoryBreakdown& m = rp.prediction.stages[s].memory;
                const double gib = 1024.0 * 1024.0 * 1024.0;
                QCOMPARE(m.capacity / gib, rp.plan.stages[s].device_type == "H800" ? 76.0 : 64.0 * 0.95);
                QVERIFY(m.total() <= m.capacity);
            }
        }
        // Undo gives the setting back.
        w->document()->undoStack()->undo();
        QCOMPARE(headroom->value(), 0.0);
        // A finer fraction from a project file (0.1234) shows rounded (12.3 %) and is kept as
        // it is when another setting changes.
        SearchSettings fine = w->document()->searchSettings();
        fine.memory_headroom = 0.1234;
        w->document()->setSearchSettings(fine);
        QCOMPARE(headroom->value(), 12.3);
        auto* topK = panel->findChild<QSpinBox*>(QStringLiteral("searchTopK"));
        QVERIFY(topK);
        topK->setValue(topK->value() + 1);
        QCOMPARE(w->document()->searchSettings().memory_headroom, 0.1234);
        headroom->setValue(10);
        QCOMPARE(w->document()->searchSettings().memory_headroom, 0.1);
    }

    void microBatchSetting()
    {
        // "Search micro-batch size" is saved in the project; the search then runs
        // each size that divides the example's global batch and says so, and undo takes the
        // setting back (SearchEngineTest::microBatchSizesAreSearchedEach checks the merge).
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        SearchPanel* panel = w->searchPanel();
        auto* sizes = panel->findChild<QCheckBox*>(QStringLiteral("searchMicroBatch"));
        QVERIFY(sizes);
        QVERIFY(!sizes->isChecked());
        sizes->setChecked(true);
        QVERIFY(w->document()->searchSettings().search_micro_batch);
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult r = finished.first().first().value<SearchResult>();
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        QCOMPARE(r.micro_batch_sizes, microBatchCandidates(w->document()->model().training.global_batch_size,
                                                           w->document()->model().training.micro_batch_size));
        const QString expected = QStringLiteral(" over micro-batch sizes 1, 2, 4, 8");
        QVERIFY2(panel->statusLabel()->text().contains(expected), qPrintable(panel->statusLabel()->text()));
        w->document()->undoStack()->undo();
        QVERIFY(!sizes->isChecked());
        QVERIFY(!w->document()->searchSettings().search_micro_batch);
    }

    void maxVppSetting()
    {
        // "Max VPP: 4" is saved in the project, and the search tries Megatron-LM's interleaved
        // schedule on its plans: Mixtral-S on 16-1-h (two nodes of 8 H800), where the best plan
        // becomes PP 8 at VPP 3, 7.040 s against 7.147 s plain (this cost model's figures).
        // The list shows the VPP in the shape and the plain time in the iteration's tool tip,
        // the status says how many plans interleaving made faster, and undo takes it back.
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        SearchPanel* panel = w->searchPanel();
        auto* maxVpp = panel->findChild<QSpinBox*>(QStringLiteral("searchMaxVpp"));
        QVERIFY(maxVpp);
        QCOMPARE(maxVpp->value(), 1);
        QCOMPARE(maxVpp->text(), QStringLiteral("1 (plain)"));
        maxVpp->setValue(4);
        QCOMPARE(w->document()->searchSettings().max_vpp, 4);
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult r = finished.first().first().value<SearchResult>();
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        QCOMPARE(r.max_vpp, 4);
        const RankedPlan& best = r.plans.front();
        QVERIFY(best.plan.vpp > 1 && best.plan.vpp <= 4);
        QVERIFY(best.plain_time_s > best.prediction.iteration_time_s);
        const QTreeWidgetItem* first = panel->resultList()->topLevelItem(0);
        QVERIFY(first);
        QVERIFY2(first->text(SearchPanel::ShapeColumn).startsWith(QStringLiteral("PP%1 VPP%2 ").arg(best.plan.pp()).arg(best.plan.vpp)),
                 qPrintable(first->text(SearchPanel::ShapeColumn)));
        QVERIFY2(first->toolTip(SearchPanel::IterationColumn).contains(QStringLiteral("under plain 1F1B: interleaving (VPP %1)").arg(best.plan.vpp)),
                 qPrintable(first->toolTip(SearchPanel::IterationColumn)));
        const auto interleaved = std::count_if(r.plans.begin(), r.plans.end(), [](const RankedPlan& p) { return p.plain_time_s > 0; });
        const QString expected = QStringLiteral("%1 of the %2 plans %3 faster interleaved (tried up to VPP 4)")
                                     .arg(interleaved)
                                     .arg(r.plans.size())
                                     .arg(interleaved == 1 ? QStringLiteral("is") : QStringLiteral("are"));
        QVERIFY2(panel->statusLabel()->text().contains(expected), qPrintable(panel->statusLabel()->text()));
        w->document()->undoStack()->undo();
        QCOMPARE(maxVpp->value(), 1);
        QCOMPARE(w->document()->searchSettings().max_vpp, 1);
    }

    void optimizerOffloadSetting()
    {
        // Mixtral-L (about 122 B parameters, paper appendix A) on 16-1 (Table 1: H800 1x8 +
        // 910B 1x8) fits only with the optimizer states in host memory, as the paper ran it.
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        const ModelSpec* large = findModelPreset("Mixtral-L");
        QVERIFY(large);
        w->document()->setModel(*large, QStringLiteral("Mixtral-L"));
        SearchPanel* panel = w->searchPanel();
        auto* offload = panel->findChild<QComboBox*>(QStringLiteral("searchOffload"));
        QVERIFY(offload);
        QCOMPARE(OptimizerOffload(offload->currentData().toInt()), OptimizerOffload::IfNeeded);
        offload->setCurrentIndex(offload->findData(int(OptimizerOffload::Never)));
        QVERIFY(w->document()->searchSettings().optimizer_offload == OptimizerOffload::Never);

        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        QVERIFY(finished.first().first().value<SearchResult>().plans.empty());
        QVERIFY2(panel->statusLabel()->text().contains(QStringLiteral("No plan found")), qPrintable(panel->statusLabel()->text()));
        // The charts say that the search found nothing, not that it has yet to run.
        for (const QString& view : {QStringLiteral("timeline"), QStringLiteral("memory")}) {
            const QString text = chartPlaceholder(w->explorer()->view(view));
            QVERIFY2(text.contains(QStringLiteral("found no feasible plan")), qPrintable(view + QStringLiteral(": ") + text));
        }

        offload->setCurrentIndex(offload->findData(int(OptimizerOffload::IfNeeded)));
        finished.clear();
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult r = finished.first().first().value<SearchResult>();
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        QVERIFY(r.plans.front().plan.optimizer_offload_fraction > 0);
        QVERIFY(chartPlaceholder(w->explorer()->view(QStringLiteral("timeline"))).isEmpty());
        QVERIFY2(panel->statusLabel()->text().contains(QStringLiteral("host memory")), qPrintable(panel->statusLabel()->text()));
        // The explorer's title says where the optimizer lives.
        bool titled = false;
        for (QLabel* l : w->explorer()->findChildren<QLabel*>())
            titled = titled || (l->text().contains(QStringLiteral("optimizer")) && l->text().contains(QStringLiteral("in host memory")));
        QVERIFY(titled);
    }

    void importedScriptRunsWithoutOverlap()
    {
        // A script without --overlap-grad-reduce leaves its data-parallel traffic exposed
        // (Megatron-LM's default); the search compares it with the traffic overlapped, as the
        // exported scripts run, and the status says so beside the "now" row.
        auto w = makeWindow();
        w->loadExample();
        w->document()->setCluster(clusterFromShorthand("H800:1x8", w->document()->catalog()), QStringLiteral("H800:1x8"));
        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("train.sh"));
        QVERIFY(writeTextFile(script, "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                      "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --bf16 "
                                      "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 32 "
                                      "--use-distributed-optimizer\n"));
        const QString error = w->modelPanel()->importScript(script);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        QVERIFY(finished.first().first().value<SearchResult>().current.has_value());
        // The note is folded under the status line, which compares the best plan with the
        // script's configuration.
        const SearchResult first = finished.first().first().value<SearchResult>();
        QVERIFY2(panel->notesLabel()->text().contains(QStringLiteral("without --overlap-grad-reduce the script does not overlap")),
                 qPrintable(panel->notesLabel()->text()));
        QVERIFY(panel->notesToggle()->isVisibleTo(panel));
        QCOMPARE(panel->notesToggle()->text(), QStringLiteral("1 note"));
        QVERIFY(!panel->notesLabel()->isVisibleTo(panel));
        QVERIFY(!SearchPanel::currentStatus(first).isEmpty());
        QVERIFY2(panel->statusLabel()->text().contains(SearchPanel::currentStatus(first).toHtmlEscaped()),
                 qPrintable(panel->statusLabel()->text()));
        panel->notesToggle()->click();
        QVERIFY(panel->notesLabel()->isVisibleTo(panel));
        QVERIFY(first.current->prediction.overlap.grad_reduce);
        QVERIFY(!first.current->prediction.overlap.tp_comm);

        // A script with --tp-comm-overlap: the exports keep the flag, so every plan of the
        // search, the current one included, is costed with it (exportCostOptions).
        QVERIFY(writeTextFile(script, "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                      "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --bf16 "
                                      "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 32 "
                                      "--tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap "
                                      "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather\n"));
        QVERIFY(w->modelPanel()->importScript(script).isEmpty());
        finished.clear();
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult second = finished.first().first().value<SearchResult>();
        QVERIFY(second.current && second.current->prediction.overlap.tp_comm);
        QVERIFY(!second.plans.empty());
        for (const RankedPlan& rp : second.plans)
            QVERIFY(rp.prediction.overlap.tp_comm);

        // The model edited to 6 layers: the script's stages hold 8. The search ends with its
        // plans and says why the "now" row is missing (it used to fail on every run).
        ModelSpec edited = w->document()->model();
        edited.num_layers = 6;
        w->document()->setModel(edited, QStringLiteral("Change Layers"), QStringLiteral("num_layers"));
        finished.clear();
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult third = finished.first().first().value<SearchResult>();
        QVERIFY(!third.plans.empty() && !third.current);
        QVERIFY2(panel->notesLabel()->text().contains(
                     QStringLiteral("the imported configuration (train.sh) is not estimated: plan.stages: the stages hold 8 layers, the model has 6")),
                 qPrintable(panel->notesLabel()->text()));
        QVERIFY(panel->notesLabel()->isVisibleTo(panel));   // unfolded above: it stays so
        // The script gone: the row is missing again, with the reading error.
        QVERIFY(QFile::remove(script));
        finished.clear();
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        QVERIFY2(panel->notesLabel()->text().contains(QStringLiteral("the imported configuration (train.sh) is not estimated: ")),
                 qPrintable(panel->notesLabel()->text()));
    }

    void guiThreadNeverBlockedDuringSearch()
    {
        auto w = makeWindow();
        // The exhaustive oracle on 32-3 runs until the 4 s limit: a long window to watch.
        useLongSearch(*w, 4);
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        GuiThreadWatch watch([panel] { return panel->isRunning(); });
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QVERIFY2(panel->isRunning(), qPrintable(panel->statusLabel()->text()));
        // Meanwhile the GUI keeps working: the canvas takes edits during the search.
        QTest::qWait(200);
        QVERIFY(panel->isRunning());
        QVERIFY(dropDevice(*w, QStringLiteral("H800"), w->clusterView()->viewport()->rect().center()));
        w->document()->undoStack()->undo();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
        qInfo("GUI thread: %d ticks of a 5 ms timer, longest gap %.1f ms during the search", watch.ticks(),
              watch.maxGapMs());
        QVERIFY(watch.ticks() > 20);
        // The 50 ms bound is a wall-time figure: printed always, asserted on request
        // (HAPMOE_TIMING_ASSERTS=1) so that a loaded CI machine cannot make the suite flaky.
        if (timingAsserts())
            QVERIFY2(watch.maxGapMs() < 50.0, qPrintable(QString::number(watch.maxGapMs())));
    }

    void cancelMidwayRespondsAtOnce()
    {
        auto w = makeWindow();
        useLongSearch(*w, 0);
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(panel->runner()->lastProgress().states > 0, 60000);
        QVERIFY(panel->isRunning());

        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
        // The GUI answers: a queued event runs, and the Cancel button is already disabled.
        bool answered = false;
        QTimer::singleShot(0, this, [&] { answered = true; });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 1000);
        const qint64 respondMs = clock.elapsed();
        QVERIFY(!panel->cancelButton()->isEnabled());
        QTRY_VERIFY2_WITH_TIMEOUT(!finished.isEmpty(), qPrintable(panel->statusLabel()->text()), 30000);
        const qint64 stopMs = clock.elapsed();
        qInfo("cancel: GUI answered after %lld ms, search stopped after %lld ms", respondMs, stopMs);
        if (timingAsserts())
            QVERIFY2(respondMs < 100, qPrintable(QString::number(respondMs)));
        const SearchResult result = finished.first().first().value<SearchResult>();
        QVERIFY(result.cancelled);
        QVERIFY(panel->runButton()->isEnabled());
        QVERIFY(panel->statusLabel()->text().contains(QStringLiteral("cancelled")));
    }

    void newProjectDropsTheRunningSearch()
    {
        // File > New during a search: the search stops, its plans (for the old cluster) never
        // reach the new project, the settings unlock, and the progress of a cancelled search
        // stays below 100 %.
        auto w = makeWindow();
        useLongSearch(*w, 0);
        SearchPanel* panel = w->searchPanel();
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QSignalSpy stopped(panel, &SearchPanel::searchStopped);
        QVERIFY(panel->run());
        QTRY_VERIFY_WITH_TIMEOUT(panel->runner()->lastProgress().states > 0, 60000);
        QVERIFY(!panel->findChild<QGroupBox*>()->isEnabled());   // settings locked while it runs
        w->newProject();
        QTRY_VERIFY_WITH_TIMEOUT(!stopped.isEmpty(), 30000);
        QVERIFY(finished.isEmpty());
        QCOMPARE(w->explorer()->planCount(), 0);
        QVERIFY(w->document()->project().plans.empty());
        QVERIFY(panel->runButton()->isEnabled());
        QVERIFY(panel->findChild<QGroupBox*>()->isEnabled());
        QVERIFY(panel->runner()->lastProgress().fraction < 1.0);
    }

    void canvasActionsOnlyOnTheDesigner()
    {
        // Del or Ctrl+A pressed on the Model or Results tab must not change the hidden canvas.
        auto w = makeWindow();
        const int devices = w->document()->cluster().totalDevices();
        QVERIFY(devices > 0);
        w->clusterScene()->selectIds(QSet<int>{w->document()->cluster().nodes.front().id});
        w->showTab(QStringLiteral("model"));
        QAction* del = nullptr;
        for (QAction* a : w->findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QKeySequence::Delete))
                del = a;
        QVERIFY(del);
        QVERIFY(!del->isEnabled());
        del->trigger();   // a disabled action does nothing
        QCOMPARE(w->document()->cluster().totalDevices(), devices);
        w->showTab(QStringLiteral("designer"));
        QVERIFY(del->isEnabled());
    }

    void designerOnlyStatusAndDocksOffTheDesigner()
    {
        // The status bar's "Zoom 125 %" is the canvas's: it showed on the Results and Model
        // tabs too, where no canvas is in sight. The design docks step aside on the Results
        // tab; the View menu showed them unticked, as if the user had closed them.
        auto w = makeWindow();
        auto* zoom = w->findChild<QLabel*>(QStringLiteral("zoomLabel"));
        QVERIFY(zoom);
        w->showTab(QStringLiteral("designer"));
        QVERIFY(zoom->isVisible());
        QVERIFY2(QRegularExpression(QStringLiteral("^Zoom [0-9]+ %$")).match(zoom->text()).hasMatch(), qPrintable(zoom->text()));
        auto* problems = w->findChild<QDockWidget*>(QStringLiteral("problemsDock"));
        auto* presets = w->findChild<QDockWidget*>(QStringLiteral("presetsDock"));
        QVERIFY(problems && presets);
        presets->toggleViewAction()->trigger();   // the user closes one of them
        QVERIFY(presets->isHidden());
        QVERIFY(!problems->isHidden());
        for (const QString& tab : {QStringLiteral("results"), QStringLiteral("model")}) {
            w->showTab(tab);
            QVERIFY2(!zoom->isVisible(), qPrintable(tab));
        }
        w->showTab(QStringLiteral("results"));
        QVERIFY(problems->isHidden());   // stepped aside
        QVERIFY(problems->toggleViewAction()->isChecked());   // but still the user's setting
        QVERIFY(!presets->toggleViewAction()->isChecked());
        QVERIFY(!problems->toggleViewAction()->isEnabled());
        w->showTab(QStringLiteral("designer"));
        QVERIFY(zoom->isVisible());
        QVERIFY(!problems->isHidden());
        QVERIFY(presets->isHidden());
        QVERIFY(problems->toggleViewAction()->isEnabled() && problems->toggleViewAction()->isChecked());
        QVERIFY(!presets->toggleViewAction()->isChecked());
        presets->toggleViewAction()->trigger();
        QVERIFY(!presets->isHidden());
    }

    void closingDuringSearchCancelsCleanly()
    {
        auto w = makeWindow();
        useLongSearch(*w, 0);
        QPointer<SearchRunner> runner = w->searchPanel()->runner();
        QVERIFY(w->searchPanel()->run());
        QTRY_VERIFY_WITH_TIMEOUT(runner->lastProgress().states > 0, 60000);
        QVERIFY(runner->isRunning());
        QVERIFY(w->close());   // batch mode: no question; the search is cancelled
        QElapsedTimer clock;
        clock.start();
        w.reset();             // the runner's destructor waits for the workers
        qInfo("window destroyed %lld ms after closing during a search", clock.elapsed());
        QVERIFY(runner.isNull());
    }
};

QTEST_MAIN(SearchPanelTest)
#include "SearchPanelTest.moc"
