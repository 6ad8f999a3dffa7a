// A measured profile in the studio: Search > Load Profile reads and checks a hapmoe.profile,
// the project keeps it (undoable, saved in the file), and the searches, the explorer's
// What-if and the saved plans use it, as `hapmoe plan --profile` does.

#include "GuiTestSupport.h"
#include "PlanExplorerWidget.h"
#include "ProjectDocument.h"
#include "SearchPanel.h"
#include "SearchRunner.h"
#include "WhatIfPanel.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// The H800 at half its catalog efficiency (the MAMF fraction, docs/formats.md) and a
// calibrated router imbalance other than the model's 1.2: two numbers every plan on an H800
// moves with.
Profile halfH800()
{
    Profile p;
    p.name = "H800 at half";
    p.source = "test: catalog efficiency halved";
    p.device_efficiency["H800"] = DeviceCatalog::builtin().find("H800")->default_efficiency / 2;
    p.router_imbalance = 1.5;
    return p;
}

QString writeProfileFile(const QTemporaryDir& dir, const QString& name, const std::string& text)
{
    const QString path = dir.filePath(name);
    return writeTextFile(path, QByteArray::fromStdString(text)) ? path : QString();
}

// Runs the panel's search and waits for its result (3 minutes at most).
SearchResult searchToTheEnd(SearchPanel* panel)
{
    QSignalSpy finished(panel, &SearchPanel::searchFinished);
    if (!panel->run() || !QTest::qWaitFor([&] { return !finished.isEmpty(); }, 180000))
        return {};
    return finished.first().first().value<SearchResult>();
}

} // namespace

class ProfileTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void searchUsesTheLoadedProfile()
    {
        // Mixtral-S on the paper's 16-1 (one H800 node and one 910B node, Table 1).
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        SearchPanel* panel = w->searchPanel();
        QCOMPARE(panel->profileLabel()->text(), QStringLiteral("Analytic defaults (no profile)"));
        QVERIFY(!w->clearProfileAction()->isEnabled());
        // The dock's button offers the menu's two actions.
        QVERIFY(panel->profileButton()->menu());
        QCOMPARE(panel->profileButton()->menu()->actions(),
                 (QList<QAction*>{w->loadProfileAction(), w->clearProfileAction()}));
        const SearchResult analytic = searchToTheEnd(panel);
        QVERIFY2(!analytic.plans.empty(), analytic.no_plan_reason.c_str());
        QVERIFY(!analytic.plans.front().prediction.used_profile);

        QTemporaryDir dir;
        const QString file = writeProfileFile(dir, QStringLiteral("h800-half.json"), writeProfile(halfH800()));
        QVERIFY(w->loadProfile(file));
        QCOMPARE(panel->profileLabel()->text(), QStringLiteral("Profile: H800 at half (h800-half.json)"));
        QVERIFY(w->clearProfileAction()->isEnabled());
        // The plans of the analytic search are outdated, as after a model edit.
        QVERIFY(!panel->outdatedLabel()->isHidden());
        QVERIFY(panel->outdatedLabel()->text().contains(QStringLiteral("profile")));

        // Load and Clear are locked while a search runs: it reads the profile when it starts.
        QSignalSpy finished(panel, &SearchPanel::searchFinished);
        QVERIFY(panel->run());
        QVERIFY(!w->loadProfileAction()->isEnabled());
        QVERIFY(!w->clearProfileAction()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 180000);
        const SearchResult measured = finished.first().first().value<SearchResult>();
        QVERIFY2(!measured.plans.empty(), measured.no_plan_reason.c_str());
        QVERIFY(w->loadProfileAction()->isEnabled());

        // The core with the same profile and options, as `hapmoe plan --profile` runs it,
        // gives the same best plan and iteration time.
        const Profile profile = halfH800();
        CostOptions costOptions;
        costOptions.memory_headroom = w->document()->searchSettings().memory_headroom;
        const CostModel cost(w->document()->model(), w->document()->cluster(), DeviceCatalog::builtin(), &profile, costOptions);
        const SearchResult core = runSearch(cost, panel->currentOptions());
        QVERIFY(!core.plans.empty());
        const Prediction& best = measured.plans.front().prediction;
        QCOMPARE(best.iteration_time_s, core.plans.front().prediction.iteration_time_s);
        QCOMPARE(QString::fromStdString(writePlan({w->document()->model(), w->document()->cluster(), measured.plans.front().plan,
                                                   std::nullopt, std::nullopt, {}})),
                 QString::fromStdString(writePlan({w->document()->model(), w->document()->cluster(), core.plans.front().plan,
                                                   std::nullopt, std::nullopt, {}})));
        QVERIFY(best.used_profile);
        // Half the H800's efficiency, and a larger rho: the best plan is slower than without.
        QVERIFY2(best.iteration_time_s > analytic.plans.front().prediction.iteration_time_s,
                 qPrintable(QStringLiteral("%1 s with the profile, %2 s without")
                                .arg(best.iteration_time_s)
                                .arg(analytic.plans.front().prediction.iteration_time_s)));
        QVERIFY(panel->outdatedLabel()->isHidden());

        // What-if re-estimates with the profile, its calibrated rho in the rho box: the
        // unchanged plan shows the figures listed.
        auto* whatIf = qobject_cast<WhatIfPanel*>(w->explorer()->view(QStringLiteral("whatif")));
        QVERIFY(whatIf);
        w->explorer()->selectPlan(0);
        QCOMPARE(whatIf->rhoBox()->value(), 1.5);
        QVERIFY(whatIf->whatIfPrediction().has_value());
        QCOMPARE(whatIf->whatIfPrediction()->iteration_time_s, best.iteration_time_s);

        // Clearing the profile outdates these plans; undoing it makes them current again.
        w->clearProfile();
        QCOMPARE(panel->profileLabel()->text(), QStringLiteral("Analytic defaults (no profile)"));
        QVERIFY(!panel->outdatedLabel()->isHidden());
        QVERIFY(!w->document()->savedPlansCurrent());
        w->document()->undoStack()->undo();
        QVERIFY(panel->outdatedLabel()->isHidden());
        QVERIFY(w->document()->savedPlansCurrent());
        QCOMPARE(panel->profileLabel()->text(), QStringLiteral("Profile: H800 at half (h800-half.json)"));
    }

    void badProfileChangesNothing()
    {
        auto w = makeWindow();
        w->loadExample();
        QTemporaryDir dir;
        Profile bad = halfH800();
        bad.device_efficiency["H800"] = 1.5;   // more than the peak
        const QString file = writeProfileFile(dir, QStringLiteral("bad.json"), writeProfile(bad));
        const int steps = w->document()->undoStack()->count();
        QVERIFY(!w->loadProfile(file));
        // The message names the file, the field and what was expected.
        QVERIFY2(w->lastError().contains(file), qPrintable(w->lastError()));
        QVERIFY2(w->lastError().contains(QStringLiteral("profile.device_efficiency.H800")), qPrintable(w->lastError()));
        QVERIFY2(w->lastError().contains(QStringLiteral("expected")), qPrintable(w->lastError()));
        QVERIFY(!w->document()->profile());
        QCOMPARE(w->document()->undoStack()->count(), steps);
        QVERIFY(!w->document()->isModified());
        // Two entries for one device type under two of its names (validateProfile, which
        // needs the catalog): refused too.
        Profile twice = halfH800();
        twice.device_efficiency["h800"] = 0.3;
        QVERIFY(!w->loadProfile(writeProfileFile(dir, QStringLiteral("twice.json"), writeProfile(twice))));
        QVERIFY(!w->document()->profile());
        QVERIFY(!w->loadProfile(dir.filePath(QStringLiteral("missing.json"))));
        QCOMPARE(panel(w)->profileLabel()->text(), QStringLiteral("Analytic defaults (no profile)"));
    }

    void profileIsUndoableAndSavedWithTheProject()
    {
        auto w = makeWindow();
        w->loadExample();
        QTemporaryDir dir;
        const QString file = writeProfileFile(dir, QStringLiteral("h800-half.json"), writeProfile(halfH800()));
        QVERIFY(w->loadProfile(file));
        QVERIFY(w->document()->isModified());
        QCOMPARE(w->document()->undoStack()->undoText(), QStringLiteral("Load profile"));
        w->document()->undoStack()->undo();
        QVERIFY(!w->document()->profile());
        QVERIFY(!w->document()->isModified());
        w->document()->undoStack()->redo();
        QVERIFY(w->document()->profile());

        // Saved in the project: reopened without the profile file, it is the same profile.
        const QString project = dir.filePath(QStringLiteral("profiled.hapmoe"));
        QVERIFY(w->saveTo(project));
        QVERIFY(QFile::remove(file));
        auto other = makeWindow();
        QVERIFY(other->openFile(project));
        QVERIFY(other->document()->profile());
        QCOMPARE(QString::fromStdString(writeProfile(*other->document()->profile())),
                 QString::fromStdString(writeProfile(halfH800())));
        QCOMPARE(panel(other)->profileLabel()->text(), QStringLiteral("Profile: H800 at half (h800-half.json)"));
        QVERIFY(panel(other)->profileLabel()->toolTip().contains(file));
        QVERIFY(!other->document()->isModified());

        // A project whose embedded profile breaks a rule is refused, naming the field.
        Project broken = readProject(readTextFile(project.toStdString()), "p");
        broken.profile->device_efficiency["h800"] = 0.3;
        const QString bad = dir.filePath(QStringLiteral("bad.hapmoe"));
        saveFileAtomically(bad.toStdString(), writeProject(broken));
        QVERIFY(!other->openFile(bad));
        QVERIFY2(other->lastError().contains(QStringLiteral("profile.device_efficiency.")), qPrintable(other->lastError()));
        QVERIFY(other->document()->profile());   // the open project is kept
    }

private:
    static SearchPanel* panel(const std::unique_ptr<MainWindow>& w) { return w->searchPanel(); }
};

QTEST_MAIN(ProfileTest)
#include "ProfileTest.moc"
