// The project document through the main window: save and reopen, the title's modified
// mark, a bad file naming its field, recent files and the autosave that survives a crash.

#include "GuiTestSupport.h"

#include "AutosaveManager.h"
#include "ClusterScene.h"
#include "ExportDialog.h"
#include "PlanExplorerWidget.h"
#include "ProblemsPanel.h"
#include "ProjectDocument.h"
#include "PropertyEditor.h"
#include "SearchPanel.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QPushButton>
#include <QSpinBox>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

SearchResult searchToEnd(MainWindow& w)
{
    QSignalSpy finished(w.searchPanel(), &SearchPanel::searchFinished);
    if (!w.searchPanel()->run())
        return {};
    if (!finished.wait(120000) && finished.isEmpty())
        return {};
    return finished.first().first().value<SearchResult>();
}

QString planTitle(MainWindow& w)
{
    auto* title = w.explorer()->findChild<QLabel*>(QStringLiteral("planTitle"));
    return title ? title->text() : QString();
}

} // namespace

class ProjectFileTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void titleCarriesNameAndModifiedMark()
    {
        auto w = makeWindow();
        w->newProject();
        QVERIFY(w->windowTitle().startsWith(QStringLiteral("Untitled[*]")));
        QVERIFY(!w->isWindowModified());
        QVERIFY(dropDevice(*w, QStringLiteral("H800"), w->clusterView()->viewport()->rect().center()));
        QVERIFY(w->isWindowModified());
        w->document()->undoStack()->undo();
        QVERIFY(!w->isWindowModified());
    }

    void saveReopenAndCompare()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("cluster-a.hapmoe"));
        auto w = makeWindow();
        w->loadExample();
        ProjectDocument* doc = w->document();
        const size_t nodes = doc->cluster().nodes.size();
        QVERIFY(nodes > 0);
        // Edits of every kind: a node linked to a switch, a setting, a model field.
        const int sw = doc->cluster().switches.front().id;
        QVERIFY(dropDevice(*w, QStringLiteral("H20"), viewportPosOf(*w, sw)));
        SearchSettings settings = doc->searchSettings();
        settings.top_k = 3;
        settings.delta = 0.35;
        doc->setSearchSettings(settings);
        ModelSpec model = doc->model();
        model.training.global_batch_size = 512;
        doc->setModel(model, QStringLiteral("GBS"));
        QVERIFY(w->isWindowModified());

        QVERIFY(w->saveTo(path));
        QVERIFY(QFile::exists(path));
        QVERIFY(!w->isWindowModified());
        QVERIFY(w->windowTitle().startsWith(QStringLiteral("cluster-a.hapmoe")));
        QCOMPARE(w->recentFiles().value(0), QFileInfo(path).absoluteFilePath());

        auto w2 = makeWindow();
        QVERIFY(w2->openFile(path));
        const Project& a = doc->project();
        const Project& b = w2->document()->project();
        const std::string sa = writeProject(a), sb = writeProject(b);
        QCOMPARE(sb, sa);
        QCOMPARE(b.cluster.nodes.size(), nodes + 1);
        QCOMPARE(b.cluster.nodes.back().device_type, std::string("H20"));
        QCOMPARE(b.cluster.nodes.back().x, a.cluster.nodes.back().x);
        QCOMPARE(b.search.top_k, 3);
        QCOMPARE(b.search.delta, 0.35);
        QCOMPARE(b.model.training.global_batch_size, 512);
        QVERIFY(!w2->isWindowModified());
        QCOMPARE(w2->document()->fileName(), QFileInfo(path).absoluteFilePath());
    }

    void denseDrawingsAreSpreadOnOpen()
    {
        // A project the command line wrote (hapmoe import -o --cluster 24-1) carries the
        // preset's positions, 140 units apart for items 200 wide: opened, the items are spread
        // just enough not to overlap (fitLayout), keeping their arrangement.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Cluster* preset = findClusterPreset("24-1");
        QVERIFY(preset);
        Project p;
        p.name = "dense";
        p.model = *findModelPreset("Mixtral-S");
        p.cluster = *preset;
        QVERIFY(std::abs(p.cluster.nodes[2].x - p.cluster.nodes[1].x) < 200);
        const QString path = dir.filePath(QStringLiteral("dense.hapmoe"));
        QVERIFY(writeTextFile(path, QByteArray::fromStdString(writeProject(p))));
        auto w = makeWindow();
        QVERIFY(w->openFile(path));
        const Cluster& c = w->document()->cluster();
        std::vector<std::pair<double, double>> at;
        for (const Node& n : c.nodes)
            at.emplace_back(n.x, n.y);
        for (const Switch& sw : c.switches)
            at.emplace_back(sw.x, sw.y);
        for (std::size_t i = 0; i < at.size(); ++i)
            for (std::size_t j = i + 1; j < at.size(); ++j)
                QVERIFY2(std::abs(at[i].first - at[j].first) >= 200 || std::abs(at[i].second - at[j].second) >= 90,
                         qPrintable(QString("items %1 and %2 overlap").arg(i).arg(j)));
        // Left to right as drawn.
        QVERIFY(c.nodes[0].x < c.nodes[1].x && c.nodes[1].x < c.nodes[2].x);
    }

    void unplacedLargeClusterOpensAboutSquare()
    {
        // A cluster file without positions (every item at 0, 0) of 4 x 34 nodes under 4 leaves:
        // the Studio lays it out in blocks of rows (layoutColumns, the rule of the shorthand
        // clusters) instead of one row of 136 nodes, 31 000 units wide.
        QTemporaryDir dir;
        Cluster c = clusterFromShorthand("H800:34x8,MI300X:34x8,910B-376T:34x8,A100-80GB:34x8", DeviceCatalog::builtin());
        for (Node& n : c.nodes)
            n.x = n.y = 0;
        for (Switch& sw : c.switches)
            sw.x = sw.y = 0;
        Project p;
        p.name = "unplaced";
        p.model = *findModelPreset("Mixtral-S");
        p.cluster = c;
        const QString path = dir.filePath(QStringLiteral("unplaced.hapmoe"));
        QVERIFY(writeTextFile(path, QByteArray::fromStdString(writeProject(p))));
        auto w = makeWindow();
        QVERIFY(w->openFile(path));
        const Cluster& opened = w->document()->cluster();
        double left = 1e18, right = -1e18, top = 1e18, bottom = -1e18;
        std::vector<std::pair<double, double>> at;
        for (const Node& n : opened.nodes)
            at.emplace_back(n.x, n.y);
        for (const Switch& sw : opened.switches)
            at.emplace_back(sw.x, sw.y);
        for (const auto& [x, y] : at) {
            left = std::min(left, x);
            right = std::max(right, x);
            top = std::min(top, y);
            bottom = std::max(bottom, y);
        }
        const double aspect = (right - left) / (bottom - top);
        QVERIFY2(aspect > 0.75 && aspect < 2.0, qPrintable(QString::number(aspect)));
        for (std::size_t i = 0; i < at.size(); ++i)
            for (std::size_t j = i + 1; j < at.size(); ++j)
                QVERIFY2(std::abs(at[i].first - at[j].first) >= 200 || std::abs(at[i].second - at[j].second) >= 90,
                         qPrintable(QString("items %1 and %2 overlap").arg(i).arg(j)));
        // Each leaf's block sits under it: its nodes' mean x is the leaf's x (within a column).
        for (const Switch& sw : opened.switches) {
            double sum = 0;
            int count = 0;
            for (const Link& l : opened.links)
                if (l.b == sw.id && opened.node(l.a)) {
                    sum += opened.node(l.a)->x;
                    ++count;
                }
            if (count > 0)
                QVERIFY2(std::abs(sum / count - sw.x) <= 240, sw.name.c_str());
        }
    }

    void savedPlansFollowTheirClusterAndModel()
    {
        // Mixtral-S on the paper's 16-1-h (H800 2x8): a search of a few milliseconds.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        ProjectDocument* doc = w->document();
        const SearchResult first = searchToEnd(*w);
        QVERIFY2(!first.plans.empty(), first.no_plan_reason.c_str());
        QCOMPARE(doc->project().plans.size(), savedRows(first));
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());

        // Moving a node on the canvas changes nothing the plans depend on.
        const Node node = doc->cluster().nodes.front();
        doc->moveItems({{node.id, QPointF(node.x + 40, node.y)}});
        QVERIFY(doc->savedPlansCurrent());

        // Another cluster: the plans name nodes of the old one. The explorer says so, and
        // the file keeps no plan that `hapmoe validate` would refuse.
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-2-h")));
        QVERIFY(!doc->savedPlansCurrent());
        QVERIFY(w->explorer()->isOutdated());
        QVERIFY2(planTitle(*w).contains(QStringLiteral("run the search again")), qPrintable(planTitle(*w)));
        // The export dialog says so too, in place of "All checks pass", and its launcher is
        // the plan's: the H800s of the searched cluster, not the 910Bs of the new one.
        auto* exportDialog = qobject_cast<ExportDialog*>(w->explorer()->view(QStringLiteral("export")));
        QVERIFY(exportDialog);
        QVERIFY(exportDialog->isOutdated());
        QVERIFY(!w->searchPanel()->outdatedLabel()->isHidden());
        const QString verdict = exportDialog->refusalLabel()->text();
        QVERIFY2(verdict.contains(QStringLiteral("Outdated")) && !verdict.contains(QStringLiteral("All checks pass")),
                 qPrintable(verdict));
        QCOMPARE(QString::fromStdString(exportDialog->document().cluster.nodes.front().device_type), QStringLiteral("H800"));
        QVERIFY(doc->cluster().nodes.front().device_type != "H800");
        const QString stale = dir.filePath(QStringLiteral("stale.hapmoe"));
        QVERIFY(w->saveTo(stale));
        QVERIFY(readProject(readTextFile(stale.toStdString()), stale.toStdString()).plans.empty());

        // Undo brings the cluster of the search back, and its plans with it.
        doc->undoStack()->undo();
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());
        QVERIFY(!planTitle(*w).contains(QStringLiteral("run the search again")));
        QVERIFY(!exportDialog->isOutdated());
        QVERIFY(w->searchPanel()->outdatedLabel()->isHidden());
        QVERIFY2(exportDialog->refusalLabel()->text().contains(QStringLiteral("All checks pass")),
                 qPrintable(exportDialog->refusalLabel()->text()));
        const QString good = dir.filePath(QStringLiteral("good.hapmoe"));
        QVERIFY(w->saveTo(good));
        QCOMPARE(readProject(readTextFile(good.toStdString()), good.toStdString()).plans.size(), savedRows(first));

        // A model change outdates them too.
        ModelSpec model = doc->model();
        model.training.global_batch_size *= 2;
        doc->setModel(model, QStringLiteral("GBS"));
        QVERIFY(!doc->savedPlansCurrent());
        QVERIFY(w->explorer()->isOutdated());
        doc->undoStack()->undo();
        QVERIFY(doc->savedPlansCurrent());

        // A search that finds nothing replaces the plans of the one before: Qwen3-235B-A22B
        // (about 235e9 parameters) cannot fit on 16 H800s without offloading the optimizer.
        const ModelSpec* large = findModelPreset("Qwen3-235B-A22B");
        QVERIFY(large);
        doc->setModel(*large, QStringLiteral("Qwen3"));
        SearchSettings settings = doc->searchSettings();
        settings.optimizer_offload = OptimizerOffload::Never;
        doc->setSearchSettings(settings);
        const SearchResult none = searchToEnd(*w);
        QVERIFY(none.plans.empty());
        QVERIFY(doc->project().plans.empty());
        QCOMPARE(w->explorer()->planCount(), 0);
    }

    void bridgeChangeOutdatesThePlans()
    {
        // Mixtral-S on the paper's 16-2 (H800 1x8 + MI300X 1x8): the bridge carries what
        // crosses between the two libraries, so the plans searched before a change to it no
        // longer predict the cluster (docs/cost-model.md section 4.1).
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-2")));
        ProjectDocument* doc = w->document();
        const SearchResult first = searchToEnd(*w);
        QVERIFY2(!first.plans.empty(), first.no_plan_reason.c_str());
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());
        QVERIFY(w->searchPanel()->outdatedLabel()->isHidden());

        // Typed on the cluster page (nothing selected): 2.5 GB/s (hardware/Cluster.h's
        // default) becomes 1.25 GB/s, a 10 Gb/s link. The search showed the plans; the
        // Properties dock is the designer's.
        w->showTab(QStringLiteral("designer"));
        w->clusterScene()->clearSelection();
        QApplication::processEvents();
        QDoubleSpinBox* bandwidth = w->propertyEditor()->bridgeBandwidthEditor();
        QVERIFY(bandwidth->isVisible() && bandwidth->isEnabled());
        bandwidth->setFocus();
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("1.25"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 1.25);
        QVERIFY(!doc->savedPlansCurrent());
        QVERIFY(w->explorer()->isOutdated());
        QVERIFY(!w->searchPanel()->outdatedLabel()->isHidden());
        QVERIFY2(planTitle(*w).contains(QStringLiteral("run the search again")), qPrintable(planTitle(*w)));

        // Undo puts the searched bridge back, and the plans with it.
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 2.5);
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());
        QVERIFY(w->searchPanel()->outdatedLabel()->isHidden());
    }

    void searchSettingsStayWithinWhatTheFileTakes()
    {
        // readProject (core/io/Documents.cpp) takes delta in [0, 1) and eta above 0, at most
        // 1e6: the boxes' ends at two decimals are 0.99 and 0.01, and a project saved with
        // them opens again.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        ProjectDocument* doc = w->document();
        auto* delta = w->searchPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("searchDelta"));
        auto* eta = w->searchPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("searchEta"));
        QVERIFY(delta && eta);
        QCOMPARE(delta->minimum(), 0.0);
        QCOMPARE(delta->maximum(), 0.99);
        QCOMPARE(eta->minimum(), 0.01);
        QCOMPARE(eta->maximum(), 1e6);
        delta->setValue(5);   // bounded to 0.99
        eta->setValue(0);     // bounded to 0.01
        QCOMPARE(doc->searchSettings().delta, 0.99);
        QCOMPARE(doc->searchSettings().eta, 0.01);
        const QString path = dir.filePath(QStringLiteral("ends.hapmoe"));
        QVERIFY(w->saveTo(path));
        const Project reopened = readProject(readTextFile(path.toStdString()), path.toStdString());
        QCOMPARE(reopened.search.delta, 0.99);
        QCOMPARE(reopened.search.eta, 0.01);

        // Typed below the range, a value is refused by name, in the dock and the status bar.
        eta->setFocus();
        eta->selectAll();
        QTest::keyClicks(eta, QStringLiteral("0"));
        QTest::keyClick(eta, Qt::Key_Return);
        QCOMPARE(doc->searchSettings().eta, 0.01);
        const QString refused = QStringLiteral("\u03b7 (comm.): at least 0.01, not 0; it stays 0.01.");
        QCOMPARE(w->searchPanel()->inputMessage(), refused);
        QCOMPARE(w->statusBar()->currentMessage(), refused);
        // An undo changes the settings: the message, which says eta stays 0.01, goes.
        doc->undoStack()->undo();
        QCOMPARE(w->searchPanel()->inputMessage(), QString());
        QCOMPARE(w->statusBar()->currentMessage(), QString());

        // A file's eta finer than the box (0.005, which the reader takes) is not rounded by a
        // change of another setting.
        Project fine = MainWindow::exampleProject();
        fine.search.eta = 0.005;
        const QString finePath = dir.filePath(QStringLiteral("fine.hapmoe"));
        saveFileAtomically(finePath.toStdString(), writeProject(fine));
        QVERIFY(w->openFile(finePath));
        auto* topK = w->searchPanel()->findChild<QSpinBox*>(QStringLiteral("searchTopK"));
        topK->setValue(topK->value() + 1);
        QCOMPARE(doc->searchSettings().eta, 0.005);
    }

    void renamesKeepThePlansAndExportsUseTheCurrentNames()
    {
        // Mixtral-S on 16-1-h (H800 2x8). A plan names nodes by id; the model's name and a
        // node's host name do not change what it runs, but the host name goes into the
        // launcher (NODE_HOSTS).
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        ProjectDocument* doc = w->document();
        const SearchResult result = searchToEnd(*w);
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        auto* exportDialog = qobject_cast<ExportDialog*>(w->explorer()->view(QStringLiteral("export")));
        QVERIFY(exportDialog);

        ModelSpec model = doc->model();
        model.name = "Renamed model";
        model.description = "another description";
        model.source = "another source";
        doc->setModel(model, QStringLiteral("Name"));
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());

        Node node = doc->cluster().nodes.front();
        const std::string oldHost = node.host;
        node.host = "gpu-renamed-0";
        doc->setNode(node);
        QVERIFY(doc->savedPlansCurrent());
        QVERIFY(!w->explorer()->isOutdated());
        QVERIFY(!exportDialog->isOutdated());
        const QString script = QString::fromStdString(exportDialog->result().script);
        QVERIFY2(script.contains(QStringLiteral("gpu-renamed-0")), qPrintable(script));
        QVERIFY2(!script.contains(QString::fromStdString(oldHost) + QLatin1Char(' '))
                     && !script.contains(QString::fromStdString(oldHost) + QLatin1Char('"')),
                 qPrintable(script));
        QCOMPARE(exportDialog->document().cluster.nodes.front().host, std::string("gpu-renamed-0"));

        const QString path = dir.filePath(QStringLiteral("renamed.hapmoe"));
        QVERIFY(w->saveTo(path));
        const Project saved = readProject(readTextFile(path.toStdString()), path.toStdString());
        QCOMPARE(saved.plans.size(), savedRows(result));
        QCOMPARE(saved.model.name, std::string("Renamed model"));
    }

    void exportStatusSpeaksOfTheShownLauncherOnly()
    {
        // Mixtral-S on 16-1-h: the status line under the launcher says what was saved or
        // copied, until another target or plan shows another launcher.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        const SearchResult result = searchToEnd(*w);
        QVERIFY(result.plans.size() >= 2);
        auto* exportDialog = qobject_cast<ExportDialog*>(w->explorer()->view(QStringLiteral("export")));
        QVERIFY(exportDialog);
        exportDialog->copyButton()->click();
        QCOMPARE(exportDialog->statusText(), QStringLiteral("Launcher copied to the clipboard."));
        exportDialog->setFormat(exportDialog->format() == LauncherFormat::Megatron ? LauncherFormat::FlagScale : LauncherFormat::Megatron);
        QCOMPARE(exportDialog->statusText(), QString());
        exportDialog->setFormat(exportDialog->format() == LauncherFormat::Megatron ? LauncherFormat::FlagScale : LauncherFormat::Megatron);
        QVERIFY(exportDialog->copyButton()->isEnabled());
        exportDialog->copyButton()->click();
        QCOMPARE(exportDialog->statusText(), QStringLiteral("Launcher copied to the clipboard."));
        // The same plan again (the explorer refreshes it): the line stays.
        w->explorer()->selectPlan(0);
        QCOMPARE(exportDialog->statusText(), QStringLiteral("Launcher copied to the clipboard."));
        w->explorer()->selectPlan(1);
        QCOMPARE(exportDialog->statusText(), QString());

        // Save launcher opens in the project's folder once the project has a file.
        const QString path = dir.filePath(QStringLiteral("p.hapmoe"));
        QVERIFY(w->saveTo(path));
        QCOMPARE(exportDialog->folder(), QFileInfo(path).absolutePath());
        QString shownFolder;
        QTimer::singleShot(0, [&] {
            if (auto* fd = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) {
                shownFolder = fd->directory().absolutePath();
                fd->selectFile(dir.filePath(QStringLiteral("run.sh")));
                QMetaObject::invokeMethod(fd, "accept");
            }
        });
        exportDialog->saveLauncherButton()->click();
        QCOMPARE(shownFolder, QDir(dir.path()).absolutePath());
        QVERIFY2(exportDialog->statusText().startsWith(QStringLiteral("Saved ")), qPrintable(exportDialog->statusText()));
        w->explorer()->selectPlan(0);
        QCOMPARE(exportDialog->statusText(), QString());
    }

    void openDropsPlansOfAnotherCluster()
    {
        // A file whose cluster was edited after its search (as older versions saved it): the
        // plan's stages name MI300X nodes that now hold H800s.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();   // Mixtral-S on 32-3: 910B-376T 2x8 + MI300X 2x8
        const SearchResult result = searchToEnd(*w);
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        Project p = w->document()->project();
        QVERIFY(!p.plans.empty());
        bool changed = false;
        for (auto& n : p.cluster.nodes)
            if (n.device_type == "MI300X") {
                n.device_type = "H800";
                changed = true;
            }
        QVERIFY(changed);
        const QString path = dir.filePath(QStringLiteral("edited.hapmoe"));
        saveFileAtomically(path.toStdString(), writeProject(p));

        auto w2 = makeWindow();
        QVERIFY(w2->openFile(path));
        QVERIFY(w2->document()->project().plans.empty());
        QCOMPARE(w2->explorer()->planCount(), 0);
        const QString message = w2->statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("edited.hapmoe")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("plans[0].plan.stages")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("the plan is not shown (run the search again)")), qPrintable(message));
        QVERIFY(!w2->isWindowModified());

        // A fault of the project's own cluster (two hosts of one name) is named at its own
        // path, and the advice is to mend it, since no search runs before it is mended.
        Project clash = w->document()->project();
        QVERIFY(clash.cluster.nodes.size() > 1);
        clash.cluster.nodes[0].host = "node-a";
        clash.cluster.nodes[1].host = "NODE-A";   // host names ignore case
        const QString clashing = dir.filePath(QStringLiteral("clash.hapmoe"));
        saveFileAtomically(clashing.toStdString(), writeProject(clash));
        auto w4 = makeWindow();
        QVERIFY(w4->openFile(clashing));
        QVERIFY(w4->document()->project().plans.empty());
        const QString clashMessage = w4->statusBar()->currentMessage();
        QVERIFY2(clashMessage.contains(QStringLiteral("clash.hapmoe: cluster.nodes[1].host: ")), qPrintable(clashMessage));
        QVERIFY2(clashMessage.contains(QStringLiteral("the saved plans are not shown (mend it, see Problems, and run the search again)")),
                 qPrintable(clashMessage));
        QCOMPARE(clashMessage.count(QStringLiteral("cluster.nodes[1].host")), 1);   // said once, not once per plan
        QVERIFY(clash.plans.size() > 1);
        QVERIFY(!w4->searchPanel()->run());
        QVERIFY2(w4->searchPanel()->refusal().startsWith(QStringLiteral("Cannot search: cluster.nodes[1].host: ")),
                 qPrintable(w4->searchPanel()->refusal()));

        // The same file with its own cluster keeps its plans.
        const QString intact = dir.filePath(QStringLiteral("intact.hapmoe"));
        QVERIFY(w->saveTo(intact));
        auto w3 = makeWindow();
        QVERIFY(w3->openFile(intact));
        QCOMPARE(w3->document()->project().plans.size(), savedRows(result));
        QCOMPARE(w3->explorer()->planCount(), int(savedRows(result)));
    }

    void planDocumentOpensAsANewProject()
    {
        // What `hapmoe plan -o plan.json` writes (Mixtral-S on 16-1-h, three plans) opens as a
        // new, unsaved project of its model and cluster with its ranked plans in the explorer.
        QTemporaryDir dir;
        const ModelSpec model = *findModelPreset("Mixtral-S");
        const Cluster cluster = *findClusterPreset("16-1-h");
        const CostModel cost(model, cluster, DeviceCatalog::builtin());
        SearchOptions options;
        options.top_k = 3;
        options.target = Target::Megatron;
        options.max_vpp = 2;
        const SearchResult r = runSearch(cost, options);
        QVERIFY(r.plans.size() >= 2);
        const QString path = dir.filePath(QStringLiteral("plan.json"));
        saveFileAtomically(path.toStdString(),
                           writePlan(PlanDocument{model, cluster, r.plans.front().plan, r.plans.front().prediction, r, {}}));
        auto w = makeWindow();
        QVERIFY(w->openFile(path));
        // The ranked plans, then the baselines the search compared them with.
        const std::size_t baselines = (r.uniform_baseline ? 1 : 0) + (r.metis_baseline ? 1 : 0);
        QCOMPARE(w->explorer()->planCount(), int(r.plans.size() + baselines));
        const Project& opened = w->document()->project();
        QCOMPARE(opened.plans.size(), r.plans.size() + baselines);
        for (std::size_t i = 0; i < r.plans.size(); ++i)
            QCOMPARE(opened.plans[i].prediction->iteration_time_s, r.plans[i].prediction.iteration_time_s);
        if (r.uniform_baseline)
            QVERIFY(opened.plans[r.plans.size()].source == SavedPlan::Source::Uniform);
        QCOMPARE(QString::fromStdString(writeCluster(opened.cluster)).size() > 0, true);
        QCOMPARE(opened.cluster.totalDevices(), cluster.totalDevices());
        QVERIFY(w->document()->fileName().isEmpty());   // saved only where the user says
        QVERIFY(w->isWindowModified());
        QVERIFY(w->document()->savedPlansCurrent());
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("plan.json")), qPrintable(w->statusBar()->currentMessage()));
        // Run searches as the document's search did (--target megatron --max-vpp 2): the target
        // asked for is `searched_target`; `target` is its best plan's, which a search of any
        // target records too.
        QVERIFY(opened.search.target == Target::Megatron);
        QCOMPARE(opened.search.max_vpp, 2);
        QCOMPARE(opened.search.top_k, int(r.plans.size()));
        for (const std::optional<Target> searched : {std::optional<Target>(Target::Any), std::optional<Target>()}) {
            SearchResult asked = r;
            asked.searched_target = searched;   // any, or a document written before the key
            const QString anyPath = dir.filePath(QStringLiteral("any.json"));
            saveFileAtomically(anyPath.toStdString(), writePlan(PlanDocument{model, cluster, r.plans.front().plan,
                                                                             r.plans.front().prediction, asked, {}}));
            auto again = makeWindow();
            QVERIFY(again->openFile(anyPath));
            QVERIFY(again->document()->project().search.target == Target::Any);
        }

        // What `hapmoe plan` writes when nothing fits: its model and cluster, to search again.
        SearchResult none;
        none.no_plan_reason = "stage 0 needs 91.2 GiB of 80";
        const QString empty = dir.filePath(QStringLiteral("none.json"));
        saveFileAtomically(empty.toStdString(), writeNoPlan(model, cluster, none));
        QVERIFY(w->openFile(empty));
        QVERIFY(w->document()->project().plans.empty());
        QCOMPARE(w->document()->cluster().totalDevices(), cluster.totalDevices());
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("found no feasible plan: stage 0 needs 91.2 GiB of 80")),
                 qPrintable(w->statusBar()->currentMessage()));
        // The Search dock and the explorer say so too, as after a search that found nothing
        // (the status bar's message goes after a while).
        const QString searchStatus = w->searchPanel()->findChild<QLabel*>(QStringLiteral("searchStatus"))->text();
        QVERIFY2(searchStatus.contains(QStringLiteral("The search saved in none.json found no feasible plan: stage 0 needs 91.2 GiB of 80")),
                 qPrintable(searchStatus));
        const QString title = w->explorer()->findChild<QLabel*>(QStringLiteral("planTitle"))->text();
        QVERIFY2(title.contains(QStringLiteral("No plan: stage 0 needs 91.2 GiB of 80")), qPrintable(title));

        // A plan with neither search nor prediction is estimated as `hapmoe estimate --plan` does.
        const QString bare = dir.filePath(QStringLiteral("bare.json"));
        saveFileAtomically(bare.toStdString(), writePlan(PlanDocument{model, cluster, r.plans.back().plan, std::nullopt, std::nullopt, {}}));
        QVERIFY(w->openFile(bare));
        QCOMPARE(w->explorer()->planCount(), 1);
        QCOMPARE(w->document()->project().plans.front().prediction->iteration_time_s,
                 cost.estimate(r.plans.back().plan).iteration_time_s);
        // It is the configuration a search compares with, as an imported script's is: the
        // search costs it beside its plans (the same figure as the estimate's, a plain plan of
        // the search's own cost options) and the project keeps it.
        QVERIFY(w->document()->project().plans.front().source == SavedPlan::Source::Current);
        const SearchResult searched = searchToEnd(*w);
        QVERIFY(!searched.plans.empty());
        QVERIFY(searched.current.has_value());
        QCOMPARE(searched.current->plan.stages.size(), r.plans.back().plan.stages.size());
        QCOMPARE(searched.current->prediction.iteration_time_s, cost.estimate(r.plans.back().plan).iteration_time_s);
        const auto kept = std::count_if(w->document()->project().plans.begin(), w->document()->project().plans.end(),
                                        [](const SavedPlan& sp) { return sp.source == SavedPlan::Source::Current; });
        QCOMPARE(kept, 1);
        // A plan that does not fit its own cluster is refused, naming the field.
        Plan wrong = r.plans.front().plan;
        wrong.stages.front().tp = 3;
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        saveFileAtomically(bad.toStdString(), writePlan(PlanDocument{model, cluster, wrong, std::nullopt, std::nullopt, {}}));
        QVERIFY(!w->openFile(bad));
        QVERIFY2(w->lastError().contains(QStringLiteral("plan.stages[0]")), qPrintable(w->lastError()));
    }

    void badAlternativeIsLeftOutAndTheRestEstimated()
    {
        // A plan document whose search holds two alternatives without predictions, the second
        // broken (TP x CP x DP = 16 on 8 devices). The studio showed the first with zeros and
        // pointed at plans[1]; it now leaves the broken one out, naming it as `hapmoe validate`
        // does (search.alternatives[1]...), and estimates the other as `hapmoe estimate --plan`.
        const std::string path = std::string(HAPMOE_TEST_DATA_DIR) + "/foundation/plan-bad-alternative.json";
        const PlanDocument doc = readPlan(readTextFile(path), path);
        auto w = makeWindow();
        QVERIFY(w->openFile(QString::fromStdString(path)));
        const Project& opened = w->document()->project();
        QCOMPARE(opened.plans.size(), std::size_t(1));
        QVERIFY(opened.plans.front().prediction.has_value());
        const double estimated = CostModel(doc.model, doc.cluster, DeviceCatalog::builtin()).estimate(doc.plan).iteration_time_s;
        QVERIFY(estimated > 1.0);   // 10.406 s: two H800 stages of Mixtral-S, 64 micro-batches
        QCOMPARE(opened.plans.front().prediction->iteration_time_s, estimated);
        QCOMPARE(w->explorer()->planCount(), 1);
        const QString message = w->statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("search.alternatives[1].plan.stages[1]: tp*cp*dp = 16 but the stage has 8 devices")),
                 qPrintable(message));
        QVERIFY2(!message.contains(QStringLiteral("plans[1]")), qPrintable(message));
        // The status bar's line goes after a while; the Problems dock keeps the note (a
        // warning: it stops nothing) until another file or project.
        const auto noted = [&w] {
            const QStringList messages = w->problemsPanel()->messages();
            return std::any_of(messages.begin(), messages.end(), [](const QString& m) {
                return m.contains(QStringLiteral("search.alternatives[1].plan.stages[1]: tp*cp*dp = 16"));
            });
        };
        QVERIFY(noted());
        w->newProject();
        QVERIFY(!noted());
    }

    void openedPlansShowInTheSearchDock()
    {
        // Mixtral-S on the paper's 16-1-h (H800 2x8): a search of a few milliseconds.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        const SearchResult result = searchToEnd(*w);
        QVERIFY2(result.plans.size() >= 2, result.no_plan_reason.c_str());
        const QString path = dir.filePath(QStringLiteral("planned.hapmoe"));
        QVERIFY(w->saveTo(path));

        // A new window opens the file: the dock lists the plans and the baselines the explorer
        // shows, row for row, and invents no counts: the file keeps the plans and the baselines
        // the search compared them with, not its counts.
        auto w2 = makeWindow();
        QVERIFY(w2->openFile(path));
        SearchPanel* panel = w2->searchPanel();
        QTreeWidget* list = panel->resultList();
        const int plans = static_cast<int>(result.plans.size());
        const int baselines = (result.uniform_baseline ? 1 : 0) + (result.metis_baseline ? 1 : 0);
        QVERIFY(baselines > 0);
        QCOMPARE(w2->explorer()->planCount(), plans + baselines);
        QCOMPARE(list->topLevelItemCount(), plans + baselines);
        for (int i = 0; i < plans; ++i) {
            QCOMPARE(list->topLevelItem(i)->text(SearchPanel::RankColumn), QString::number(i + 1));
            QCOMPARE(list->topLevelItem(i)->text(SearchPanel::PlanColumn), QString::fromStdString(result.plans[size_t(i)].plan.name));
        }
        for (int i = plans; i < plans + baselines; ++i)
            QCOMPARE(list->topLevelItem(i)->text(SearchPanel::RankColumn), QStringLiteral("base"));
        const Project& reopened = w2->document()->project();
        if (result.uniform_baseline) {
            const auto uniform = std::find_if(reopened.plans.begin(), reopened.plans.end(),
                                              [](const SavedPlan& sp) { return sp.source == SavedPlan::Source::Uniform; });
            QVERIFY(uniform != reopened.plans.end());
            QCOMPARE(uniform->prediction->iteration_time_s, result.uniform_baseline->prediction.iteration_time_s);
        }
        QCOMPARE(list->currentItem(), list->topLevelItem(0));
        auto* progress = panel->findChild<QProgressBar*>();
        auto* states = panel->findChild<QLabel*>(QStringLiteral("searchStates"));
        auto* best = panel->findChild<QLabel*>(QStringLiteral("searchBest"));
        QVERIFY(progress && states && best);
        QVERIFY(progress->isHidden());
        QVERIFY(states->isHidden());
        QCOMPARE(best->text(), QStringLiteral("%1 s").arg(result.plans.front().prediction.iteration_time_s, 0, 'f', 3));
        const QString status = panel->statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("planned.hapmoe")) && status.contains(QStringLiteral("saved"))
                     && status.contains(baselines == 1 ? QStringLiteral("and a baseline") : QStringLiteral("and the baselines")),
                 qPrintable(status));

        // A click on the second row shows that plan in the explorer.
        const QRect second = list->visualItemRect(list->topLevelItem(1));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, second.center());
        QCOMPARE(w2->explorer()->selectedPlan(), 1);

        // A search brings back its progress and counts.
        const SearchResult again = searchToEnd(*w2);
        QVERIFY(!again.plans.empty());
        QVERIFY(!progress->isHidden());
        QCOMPARE(progress->value(), progress->maximum());
        QVERIFY(!states->isHidden());
        QVERIFY(states->text().remove(QLatin1Char(',')).toLongLong() > 0);

        // A new project has no plans: the dock is as before any search.
        w2->newProject();
        QCOMPARE(list->topLevelItemCount(), 0);
        QVERIFY(!progress->isHidden());
        QCOMPARE(progress->value(), 0);
        QCOMPARE(states->text(), QStringLiteral("\u2013"));
        QVERIFY(panel->statusLabel()->text().isEmpty());
    }

    void plansOfAStoppedSearchReopenAsTheBestSoFar()
    {
        // A search stopped by Cancel or its time limit leaves the best plans it had; the file
        // says so (plans_cancelled, plans_timed_out), and the reopened dock repeats it, since a
        // search run to its end may find a faster plan. The result is the search's own, marked
        // as the runner marks a cancelled one (SearchResult::cancelled).
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        SearchResult result = searchToEnd(*w);
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        result.cancelled = true;
        emit w->searchPanel()->searchFinished(result);
        const QString cancelled = dir.filePath(QStringLiteral("cancelled.hapmoe"));
        QVERIFY(w->saveTo(cancelled));
        QVERIFY(readTextFile(cancelled.toStdString()).find("\"plans_cancelled\": true") != std::string::npos);
        auto w2 = makeWindow();
        QVERIFY(w2->openFile(cancelled));
        QCOMPARE(w2->explorer()->planCount(), int(savedRows(result)));
        QString status = w2->searchPanel()->statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("the search that found them was cancelled: the best so far")), qPrintable(status));

        result.cancelled = false;
        result.timed_out = true;
        emit w->searchPanel()->searchFinished(result);
        const QString timedOut = dir.filePath(QStringLiteral("timed-out.hapmoe"));
        QVERIFY(w->saveTo(timedOut));
        const std::string text = readTextFile(timedOut.toStdString());
        QVERIFY(text.find("\"plans_timed_out\": true") != std::string::npos);
        QVERIFY(text.find("plans_cancelled") == std::string::npos);
        QVERIFY(w2->openFile(timedOut));
        status = w2->searchPanel()->statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("reached its time limit: the best so far")), qPrintable(status));

        // A search run to its end clears the mark.
        searchToEnd(*w);
        const QString finished = dir.filePath(QStringLiteral("finished.hapmoe"));
        QVERIFY(w->saveTo(finished));
        QVERIFY(readTextFile(finished.toStdString()).find("plans_") == std::string::npos);
        QVERIFY(w2->openFile(finished));
        QVERIFY(!w2->searchPanel()->statusLabel()->text().contains(QStringLiteral("best so far")));
    }

    void currentConfigurationOpensAsCurrent()
    {
        // A project whose saved plan is the configuration the user runs today (what
        // `hapmoe import -o --cluster` writes: source "current") opens as the current
        // configuration, not as a search result, in the explorer and the dock, and a save
        // keeps it so.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        const SearchResult result = searchToEnd(*w);
        QVERIFY2(!result.plans.empty(), result.no_plan_reason.c_str());
        const QString path = dir.filePath(QStringLiteral("imported.hapmoe"));
        QVERIFY(w->saveTo(path));
        Project p = readProject(readTextFile(path.toStdString()), path.toStdString());
        p.plans = {SavedPlan{result.plans.front().plan, result.plans.front().prediction, SavedPlan::Source::Current}};
        p.plans.front().plan.name = "current (train.sh)";
        saveFileAtomically(path.toStdString(), writeProject(p));

        auto w2 = makeWindow();
        QVERIFY(w2->openFile(path));
        QCOMPARE(w2->explorer()->planCount(), 1);
        auto* table = qobject_cast<QAbstractItemView*>(w2->explorer()->view(QStringLiteral("plans")));
        QVERIFY(table && table->model());
        int sourceColumn = -1;
        for (int c = 0; c < table->model()->columnCount(); ++c)
            if (table->model()->headerData(c, Qt::Horizontal).toString() == QLatin1String("Source"))
                sourceColumn = c;
        QVERIFY(sourceColumn >= 0);
        QCOMPARE(table->model()->index(0, sourceColumn).data().toString(), QStringLiteral("current"));
        QTreeWidget* list = w2->searchPanel()->resultList();
        QCOMPARE(list->topLevelItemCount(), 1);
        QCOMPARE(list->topLevelItem(0)->text(SearchPanel::RankColumn), QStringLiteral("now"));
        const QString again = dir.filePath(QStringLiteral("again.hapmoe"));
        QVERIFY(w2->saveTo(again));
        const Project back = readProject(readTextFile(again.toStdString()), again.toStdString());
        QCOMPARE(back.plans.size(), size_t(1));
        QVERIFY(back.plans.front().source == SavedPlan::Source::Current);
    }

    void modelAndClusterFilesLoadIntoTheProject()
    {
        // A hapmoe.model or hapmoe.cluster file, as `hapmoe plan --model M --cluster C` takes
        // them, replaces the open project's model or cluster (one undoable step each) and keeps
        // the rest; a bad one is refused naming the field, and the project is untouched.
        QTemporaryDir dir;
        auto w = makeWindow();
        w->loadExample();
        const std::string exampleCluster = writeCluster(w->document()->cluster());
        const QString modelPath = dir.filePath(QStringLiteral("qwen.json"));
        saveFileAtomically(modelPath.toStdString(), writeModel(*findModelPreset("Qwen3-30B-A3B")));
        QVERIFY2(w->openFile(modelPath), qPrintable(w->lastError()));
        QCOMPARE(w->document()->model().name, std::string("Qwen3-30B-A3B"));
        QCOMPARE(writeCluster(w->document()->cluster()), exampleCluster);
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("qwen.json")), qPrintable(w->statusBar()->currentMessage()));

        const QString clusterPath = dir.filePath(QStringLiteral("mixed.json"));
        saveFileAtomically(clusterPath.toStdString(), writeCluster(clusterFromShorthand("A100:2x8,H100:2x8", DeviceCatalog::builtin())));
        QVERIFY2(w->openFile(clusterPath), qPrintable(w->lastError()));
        QCOMPARE(w->document()->cluster().totalDevices(), 32);
        QCOMPARE(w->document()->model().name, std::string("Qwen3-30B-A3B"));
        w->document()->undoStack()->undo();
        QCOMPARE(writeCluster(w->document()->cluster()), exampleCluster);

        QFile bad(dir.filePath(QStringLiteral("bad-model.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(QByteArray::fromStdString(writeModel(*findModelPreset("Mixtral-S")))
                      .replace("\"num_layers\": 24", "\"num_layers\": \"many\""));
        bad.close();
        const std::string before = w->document()->serialize();
        QVERIFY(!w->openFile(bad.fileName()));
        QVERIFY2(w->lastError().contains(QStringLiteral("bad-model.json")) && w->lastError().contains(QStringLiteral("num_layers")),
                 qPrintable(w->lastError()));
        QCOMPARE(w->document()->serialize(), before);
        // A document the studio does not open as a file (a profile) is refused naming those it
        // does and where a profile goes.
        const QString profilePath = dir.filePath(QStringLiteral("profile.json"));
        saveFileAtomically(profilePath.toStdString(), "{\"format\": \"hapmoe.profile\", \"version\": 1}\n");
        QVERIFY(!w->openFile(profilePath));
        QVERIFY2(w->lastError().contains(QStringLiteral("format: expected \"hapmoe.project\", \"hapmoe.plan\", \"hapmoe.model\" or "
                                                        "\"hapmoe.cluster\" (the documents the studio opens), got \"hapmoe.profile\": "
                                                        "load a profile with Search > Load Profile")),
                 qPrintable(w->lastError()));
        QCOMPARE(w->document()->serialize(), before);
    }

    void badFileNamesTheField()
    {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.hapmoe"));
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->saveTo(good));
        QFile in(good);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray text = in.readAll();
        in.close();
        // The third node's count becomes a string.
        int at = -1;
        for (int i = 0; i < 3; ++i)
            at = text.indexOf("\"count\": 8", at + 1);
        QVERIFY(at > 0);
        text.replace(at, int(strlen("\"count\": 8")), "\"count\": \"eight\"");
        const QString bad = dir.filePath(QStringLiteral("bad.hapmoe"));
        QFile out(bad);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();

        const std::string before = w->document()->serialize();
        QVERIFY(!w->openFile(bad));
        QVERIFY2(w->lastError().contains(QStringLiteral("bad.hapmoe")), qPrintable(w->lastError()));
        QVERIFY2(w->lastError().contains(QStringLiteral("cluster.nodes[2].count")), qPrintable(w->lastError()));
        QCOMPARE(w->document()->serialize(), before);   // the open project is untouched

        QFile truncated(dir.filePath(QStringLiteral("truncated.hapmoe")));
        QVERIFY(truncated.open(QIODevice::WriteOnly));
        truncated.write(text.left(text.size() / 2));
        truncated.close();
        QVERIFY(!w->openFile(truncated.fileName()));
        QVERIFY(w->lastError().contains(QStringLiteral("truncated.hapmoe")));

        // Outside batch mode (a file given on the command line, File > Open) the reason is
        // shown in a message box over the window.
        w->setBatchMode(false);
        QString shown;
        QTimer::singleShot(0, w.get(), [&shown] {
            for (QWidget* top : QApplication::topLevelWidgets()) {
                if (auto* box = qobject_cast<QMessageBox*>(top); box && box->isVisible()) {
                    shown = box->windowTitle() + QLatin1Char('\n') + box->text();
                    box->done(QMessageBox::Ok);
                }
            }
        });
        QVERIFY(!w->openFile(truncated.fileName()));
        QVERIFY2(shown.contains(QStringLiteral("Cannot open truncated.hapmoe")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("malformed JSON")), qPrintable(shown));
        QCOMPARE(w->document()->serialize(), before);
    }

    void autosaveSurvivesACrash()
    {
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(!w->autosave()->saveNow());   // nothing unsaved, nothing written
        QVERIFY(dropDevice(*w, QStringLiteral("B200"), w->clusterView()->viewport()->rect().center()));
        QVERIFY(w->autosave()->saveNow());
        const QString autosave = w->autosave()->autosavePath();
        QVERIFY(QFile::exists(autosave));
        // The running session holds its lock: its autosave is not an orphan.
        for (const auto& o : AutosaveManager::orphans())
            QVERIFY(o.autosavePath != autosave);

        // A crashed session leaves its autosave and metadata without a live lock.
        const QDir dir(AutosaveManager::directory());
        QVERIFY(QFile::copy(autosave, dir.filePath(QStringLiteral("crashed.hapmoe"))));
        QVERIFY(QFile::copy(autosave.chopped(7) + QStringLiteral(".json"), dir.filePath(QStringLiteral("crashed.json"))));
        const auto orphans = AutosaveManager::orphans();
        auto it = std::find_if(orphans.begin(), orphans.end(), [](const auto& o) { return o.id == QLatin1String("crashed"); });
        QVERIFY(it != orphans.end());

        auto w2 = makeWindow();
        QVERIFY(w2->recover(it->autosavePath, it->originalPath));
        QCOMPARE(w2->document()->serialize(), w->document()->serialize());
        QVERIFY(w2->isWindowModified());   // recovered work is unsaved work

        // Offered where a project is open already (a file given on the command line, then
        // edited), the prompt says that project gives way, and its unsaved changes are asked
        // about before the recovered project replaces it.
        auto w3 = makeWindow();
        QVERIFY(dropDevice(*w3, QStringLiteral("H800"), w3->clusterView()->viewport()->rect().center()));
        QVERIFY(w3->isWindowModified());
        QStringList asked;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&] {
            for (QWidget* top : QApplication::topLevelWidgets()) {
                auto* box = qobject_cast<QMessageBox*>(top);
                if (!box || !box->isVisible())
                    continue;
                asked << box->windowTitle() + QLatin1Char('\n') + box->text();
                if (QAbstractButton* yes = box->button(QMessageBox::Yes))
                    yes->click();
                else if (QAbstractButton* discard = box->button(QMessageBox::Discard))
                    discard->click();
            }
        });
        answer.start(20);
        w3->setBatchMode(false);   // the questions a user sees
        QVERIFY(w3->offerRecovery());
        w3->setBatchMode(true);
        answer.stop();
        QCOMPARE(asked.size(), 2);
        QVERIFY2(asked[0].startsWith(QStringLiteral("Recover unsaved work")) && asked[0].contains(QStringLiteral("which is open now")),
                 qPrintable(asked[0]));
        QVERIFY2(asked[1].startsWith(QStringLiteral("Unsaved changes")), qPrintable(asked[1]));
        QCOMPARE(w3->document()->serialize(), w->document()->serialize());
        QVERIFY2(w3->statusBar()->currentMessage().startsWith(QStringLiteral("Recovered the unsaved changes")),
                 qPrintable(w3->statusBar()->currentMessage()));
        AutosaveManager::remove(*it);
        QVERIFY(!QFile::exists(it->autosavePath));

        // Undoing back to the clean state removes the session's autosave.
        w->document()->undoStack()->undo();
        QVERIFY(!QFile::exists(autosave));
    }
};

QTEST_MAIN(ProjectFileTest)
#include "ProjectFileTest.moc"
