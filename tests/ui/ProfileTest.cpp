// A measured profile in the studio: Search > Load Profile reads and checks a hapmoe.profile,
// the project keeps it (undoable, saved in the file), and the searches, the explorer's
// What-if and the saved plans use it, as `hapmoe plan --profile` does.

#include "CalibrateDialog.h"
#include "GuiTestSupport.h"
#include "PlanExplorerWidget.h"
#include "ProjectDocument.h"
#include "SearchPanel.h"
#include "SearchRunner.h"
#include "WhatIfPanel.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LogCalibration.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenu>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTextBrowser>
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

    void calibrateFromATrainingLog()
    {
        // The Mixtral 8x7B run on 4 x 8 H800 of the core's calibration test
        // (tests/data/megatron): the plan document opened as a project, its log read by
        // Search > Calibrate from Training Log, as `hapmoe calibrate --log LOG --plan PLAN`.
        const QString data = QStringLiteral(HAPMOE_TEST_DATA_DIR "/megatron/");
        const QString planFile = data + QStringLiteral("mixtral_h800_plan.json");
        const QString logFile = data + QStringLiteral("train_mixtral_h800.log");
        auto w = makeWindow();
        // No plan to calibrate: a new project has none, the action is off and the call says why.
        w->newProject();
        QVERIFY(!w->calibrateAction()->isEnabled());
        QVERIFY(!w->calibrateFromLog(logFile));
        QVERIFY2(w->lastError().contains(QStringLiteral("Select the plan the run used")), qPrintable(w->lastError()));

        QVERIFY2(w->openFile(planFile), qPrintable(w->lastError()));
        QVERIFY(w->explorer()->selectedPlan() >= 0);
        QVERIFY(w->calibrateAction()->isEnabled());
        QVERIFY(!w->document()->profile());
        CalibrateDialog* dialog = w->calibrateFromLog(logFile);
        QVERIFY(dialog);
        QSignalSpy finished(dialog, &CalibrateDialog::finished);
        dialog->waitForFinished();
        QVERIFY(!dialog->isRunning());
        QCOMPARE(finished.size(), 1);
        QVERIFY2(dialog->errorText().isEmpty(), qPrintable(dialog->errorText()));
        QVERIFY(dialog->hasProfile());
        QVERIFY(dialog->useButton()->isEnabled());
        // The log's steady intervals 2-5 (10234.1, 10236.5, 10231.9, 10235.3 ms) have the
        // median 10234.7 ms; the fit reproduces it within 0.1 %, and the figures are the core's.
        const CalibrationResult& r = *dialog->result();
        QVERIFY(std::abs(r.measured_iteration_s - 10.2347) < 1e-9);
        QVERIFY(std::abs(r.predicted_after_s - r.measured_iteration_s) <= 1e-3 * r.measured_iteration_s);
        const PlanDocument doc = readPlan(readTextFile(planFile.toStdString()), "plan");
        const CalibrationResult cli = calibrateFromLog(
            parseMegatronLog(readTextFile(logFile.toStdString()), "train_mixtral_h800.log"), doc, DeviceCatalog::builtin(),
            "train_mixtral_h800.log");
        QCOMPARE(r.profile.device_efficiency, cli.profile.device_efficiency);
        QCOMPARE(r.predicted_before_s, cli.predicted_before_s);
        QVERIFY(r.rho && std::abs(*r.rho - 1.4) < 1e-12);   // router counts: (1.3 + 1.5) / 2
        const QString report = dialog->report()->toPlainText();
        for (const char* shown : {"10234.7 ms", "predicted after", "0.00 %", "Router imbalance ρ 1.400", "14.20 GiB"})
            QVERIFY2(report.contains(QString::fromUtf8(shown)), qPrintable(report));

        // Saved as a profile file (atomically), it reads back as the same profile.
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("calibrated.json"));
        QCOMPARE(dialog->saveProfile(saved), QString());
        const Profile reread = readProfile(readTextFile(saved.toStdString()), "calibrated.json");
        QCOMPARE(reread.device_efficiency, r.profile.device_efficiency);
        QVERIFY(!dialog->saveProfile(dir.filePath(QStringLiteral("no/such/folder/p.json"))).isEmpty());

        // Used as the project's profile: one undo step, named after the log, and the plans,
        // costed without it, are outdated.
        const int undoBefore = w->document()->undoStack()->count();
        dialog->useButton()->click();
        QVERIFY(w->document()->profile());
        QCOMPARE(w->document()->profile()->device_efficiency, r.profile.device_efficiency);
        QCOMPARE(w->document()->project().profile_file, std::string());
        QCOMPARE(w->searchPanel()->profileLabel()->text(),
                 QStringLiteral("Profile: calibrated from train_mixtral_h800.log (saved in the project)"));
        QCOMPARE(w->document()->undoStack()->count(), undoBefore + 1);
        QVERIFY(w->explorer()->isOutdated());
        w->document()->undoStack()->undo();
        QVERIFY(!w->document()->profile());

        // A log of another run (world size 64 for the plan's 32 devices) is refused with its
        // line, and nothing can be used or saved.
        std::string other = readTextFile(logFile.toStdString());
        other.replace(other.find("world size: 32"), 14, "world size: 64");
        const QString otherLog = dir.filePath(QStringLiteral("other.log"));
        QVERIFY(writeTextFile(otherLog, QByteArray::fromStdString(other)));
        CalibrateDialog* refused = w->calibrateFromLog(otherLog);
        QVERIFY(refused);
        refused->waitForFinished();
        QVERIFY2(refused->errorText().startsWith(QStringLiteral("other.log: line 1: ")), qPrintable(refused->errorText()));
        QVERIFY2(refused->errorText().contains(QStringLiteral("expected the log of a run of this plan")),
                 qPrintable(refused->errorText()));
        QVERIFY(!refused->hasProfile());
        QVERIFY(!refused->useButton()->isEnabled());
        QVERIFY(!refused->saveButton()->isEnabled());
        QVERIFY(refused->report()->toPlainText().contains(QStringLiteral("The log cannot calibrate this plan")));
        // A file that does not exist: named, not a crash.
        refused->calibrate(dir.filePath(QStringLiteral("missing.log")));
        refused->waitForFinished();
        QVERIFY2(refused->errorText().startsWith(QStringLiteral("missing.log")), qPrintable(refused->errorText()));
        QVERIFY(!w->document()->profile());
        refused->reject();

        // With a profile loaded, the calibration starts from it, the profile "Use as Project
        // Profile" replaces: the efficiency before is its H800 figure, and the dialog says so.
        w->document()->setProfile(halfH800(), QString());
        CalibrateDialog* onProfile = w->calibrateFromLog(logFile);
        QVERIFY(onProfile);
        onProfile->waitForFinished();
        QVERIFY(onProfile->hasProfile());
        QCOMPARE(onProfile->result()->efficiency_before.at("H800"), halfH800().device_efficiency.at("H800"));
        QVERIFY(onProfile->report()->toPlainText().contains(QStringLiteral("replaces the project's profile \"H800 at half\"")));
        // A second read started while the first runs: the first is dropped, one finished()
        // follows, with the second log's outcome.
        QSignalSpy once(onProfile, &CalibrateDialog::finished);
        onProfile->calibrate(otherLog);
        onProfile->calibrate(logFile);
        onProfile->waitForFinished();
        QTRY_COMPARE(once.size(), 1);
        QVERIFY(onProfile->hasProfile());
        QCOMPARE(onProfile->logFile(), logFile);
        // Closed while a read runs: the dialog goes (WA_DeleteOnClose), the read ends on its
        // own copies, and nothing changes.
        QPointer<CalibrateDialog> closing(w->calibrateFromLog(logFile));
        QVERIFY(closing);
        closing->reject();
        QTRY_VERIFY(closing.isNull());
        QTest::qWait(200);
        QCOMPARE(w->document()->profile()->name, halfH800().name);
        onProfile->reject();
    }

private:
    static SearchPanel* panel(const std::unique_ptr<MainWindow>& w) { return w->searchPanel(); }
};

QTEST_MAIN(ProfileTest)
#include "ProfileTest.moc"
