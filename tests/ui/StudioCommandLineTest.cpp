// The studio's command line for screenshots: --view names an explorer view (an unknown one
// exits with 2 and lists the views), and --view export opens the export dialog, modeless,
// filled for the selected plan, and puts it into the screenshot of the window.

#include "GuiTestSupport.h"

#include "ExportDialog.h"
#include "PlanExplorerWidget.h"
#include "SearchPanel.h"
#include "StudioMain.h"
#include "WhatIfPanel.h"
#include "io/Documents.h"
#include "io/Presets.h"

#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

// Runs hapmoe-studio offscreen (or with no display at all) with its settings in a
// throw-away home.
Run runStudio(const QStringList& arguments, const QTemporaryDir& home, bool display = true)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (display) {
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    } else {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QString::fromLatin1(name));
    }
    env.insert(QStringLiteral("HOME"), home.path());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), home.filePath(QStringLiteral("cache")));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(HAPMOE_STUDIO_PATH), arguments);
    Run r;
    if (!p.waitForFinished(240000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(p.readAllStandardError());
    return r;
}

// Runs the window's search to its end and shows the first plan on the Results tab; the
// search's result goes to `result` when given.
bool searchAndShowFirstPlan(MainWindow* w, SearchResult* result = nullptr)
{
    QSignalSpy finished(w->searchPanel(), &SearchPanel::searchFinished);
    if (!w->searchPanel()->run())
        return false;
    if (!QTest::qWaitFor([&] { return !finished.isEmpty(); }, 180000))
        return false;
    if (w->explorer()->planCount() == 0)
        return false;
    if (result)
        *result = finished.first().first().value<SearchResult>();
    w->showTab(QStringLiteral("results"));
    w->explorer()->selectPlan(0);
    return true;
}

} // namespace

class StudioCommandLineTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void unknownViewExitsWithTwo()
    {
        QTemporaryDir home;
        const Run r = runStudio({QStringLiteral("--view"), QStringLiteral("exports"), QStringLiteral("--quit")}, home);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--view: unknown view \"exports\"")), qPrintable(r.err));
        // The message lists the views, export among them.
        for (const QString& name : PlanExplorerWidget::viewNames())
            QVERIFY2(r.err.contains(name), qPrintable(r.err));
    }

    void valuesItWouldIgnoreExitWithTwo()
    {
        // An unknown preset, tab or theme, or a size or row that is no number, would give a
        // screenshot of something else than asked for: each is refused with its option named.
        QTemporaryDir home;
        const QString shot = home.filePath(QStringLiteral("shot.png"));
        const QList<QStringList> refused{
            {QStringLiteral("--model-preset"), QStringLiteral("Mixtral-XL")},
            {QStringLiteral("--tab"), QStringLiteral("explorer")},
            {QStringLiteral("--theme"), QStringLiteral("blue")},
            {QStringLiteral("--size"), QStringLiteral("1280")},
            {QStringLiteral("--size"), QStringLiteral("1280x0")},
            // Below the window's minimum width (about 940 px: its docks' and the canvas's), and
            // an image too large to paint (99999 x 99999 x 4 bytes is 37 GiB; it crashed).
            {QStringLiteral("--size"), QStringLiteral("800x600")},
            {QStringLiteral("--size"), QStringLiteral("99999x99999")},
            {QStringLiteral("--plan"), QStringLiteral("best")},
            {QStringLiteral("--cluster-preset"), QStringLiteral("32-9")},
            {QStringLiteral("--cluster-preset"), QStringLiteral("H800:2x8,Foo:2x8")},
            // 16-2's two nodes link through their leaf switches, not to each other.
            {QStringLiteral("--select"), QStringLiteral("h800-0,mi300x-0"), QStringLiteral("--cluster-preset"), QStringLiteral("16-2")},
        };
        for (const QStringList& arguments : refused) {
            const Run r = runStudio(arguments + QStringList{QStringLiteral("--screenshot"), shot}, home);
            QVERIFY2(r.exitCode == 2, qPrintable(arguments.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
            QVERIFY2(r.err.contains(arguments.front() + QStringLiteral(": ")), qPrintable(r.err));
            QVERIFY(!QFile::exists(shot));
        }
        // The model presets are named in the message; names match whatever their case.
        const Run unknown = runStudio({QStringLiteral("--model-preset"), QStringLiteral("Mixtral-XL"), QStringLiteral("--quit")}, home);
        QVERIFY2(unknown.err.contains(QStringLiteral("Mixtral-8x7B")), qPrintable(unknown.err));
        const Run known = runStudio({QStringLiteral("--model-preset"), QStringLiteral("mixtral-s"), QStringLiteral("--tab"),
                                     QStringLiteral("model"), QStringLiteral("--quit")},
                                    home);
        QVERIFY2(known.exitCode == 0, qPrintable(known.err));
    }

    void clusterPresetTakesTheShorthand()
    {
        // As the CLI's --cluster: TYPE:NODESxPER_NODE,... (core/io/Presets.h); an unknown
        // name lists the presets, as --model-preset does.
        QTemporaryDir home;
        const Run shorthand = runStudio({QStringLiteral("--cluster-preset"), QStringLiteral("H800:2x8,910B-376T:2x8"),
                                         QStringLiteral("--quit")},
                                        home);
        QVERIFY2(shorthand.exitCode == 0, qPrintable(shorthand.err));
        const Run unknown = runStudio({QStringLiteral("--cluster-preset"), QStringLiteral("32-9"), QStringLiteral("--quit")}, home);
        QCOMPARE(unknown.exitCode, 2);
        for (const auto& p : clusterPresets())
            QVERIFY2(unknown.err.contains(QString::fromStdString(p.name)), qPrintable(unknown.err));
        QVERIFY2(unknown.err.contains(QStringLiteral("TYPE:NODESxPER_NODE")), qPrintable(unknown.err));
        // The shorthand's own error names the item at fault.
        const Run bad = runStudio({QStringLiteral("--cluster-preset"), QStringLiteral("H800:2x8,Foo:2x8"), QStringLiteral("--quit")}, home);
        QVERIFY2(bad.err.contains(QStringLiteral("item 2")) && bad.err.contains(QStringLiteral("Foo")), qPrintable(bad.err));
    }

    void deviceTypesOpensAtAType()
    {
        // --device-types opens Cluster > Device Types at a type named by its name or an alias;
        // a name no type has exits 2. A project's own types are known to it, and to a shorthand
        // given with the project.
        QTemporaryDir home;
        const Run alias = runStudio({QStringLiteral("--device-types"), QStringLiteral("h800-sxm"), QStringLiteral("--quit")}, home);
        QVERIFY2(alias.exitCode == 0, qPrintable(alias.err));
        const Run unknown = runStudio({QStringLiteral("--device-types"), QStringLiteral("X100"), QStringLiteral("--quit")}, home);
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.contains(QStringLiteral("--device-types: no device type is named \"X100\"")), qPrintable(unknown.err));
        Project project = MainWindow::exampleProject();
        DeviceType x100 = *DeviceCatalog::builtin().find("H800");
        x100.name = "X100";
        x100.aliases.clear();
        project.devices = {x100};
        const QString file = home.filePath(QStringLiteral("own.hapmoe"));
        QVERIFY(writeTextFile(file, QByteArray::fromStdString(writeProject(project))));
        const Run own = runStudio({file, QStringLiteral("--device-types"), QStringLiteral("x100"), QStringLiteral("--cluster-preset"),
                                   QStringLiteral("X100:2x8"), QStringLiteral("--quit")},
                                  home);
        QVERIFY2(own.exitCode == 0, qPrintable(own.err));
    }

    void selectTakesALink()
    {
        // A link is named by its two ends, each as a node or switch is (id, host or name).
        QTemporaryDir home;
        const Run link = runStudio({QStringLiteral("--cluster-preset"), QStringLiteral("16-2"), QStringLiteral("--select"),
                                    QStringLiteral("h800-0,leaf-0 (H800)"), QStringLiteral("--quit")},
                                   home);
        QVERIFY2(link.exitCode == 0, qPrintable(link.err));
        const Run byId = runStudio({QStringLiteral("--cluster-preset"), QStringLiteral("16-2"), QStringLiteral("--select"),
                                    QStringLiteral("2,4"), QStringLiteral("--quit")},
                                   home);
        QVERIFY2(byId.exitCode == 0, qPrintable(byId.err));
    }

    void helpAndVersionNeedNoDisplay()
    {
        QTemporaryDir home;
        const Run help = runStudio({QStringLiteral("--help")}, home, false);
        QVERIFY2(help.exitCode == 0, qPrintable(help.err));
        QVERIFY2(help.out.contains(QStringLiteral("--cluster-preset")) && help.out.contains(QStringLiteral("--screenshot")),
                 qPrintable(help.out));
        const Run version = runStudio({QStringLiteral("--version")}, home, false);
        QVERIFY2(version.exitCode == 0, qPrintable(version.err));
        QVERIFY2(version.out.contains(QStringLiteral("HAPMoE Studio")), qPrintable(version.out));
    }

    void exportViewWithoutAPlanExitsWithTwo()
    {
        // Without a search there is no plan to export: no screenshot that shows something else.
        QTemporaryDir home;
        const QString shot = home.filePath(QStringLiteral("export.png"));
        const Run r = runStudio({QStringLiteral("--view"), QStringLiteral("export"), QStringLiteral("--screenshot"), shot}, home);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--view export: there is no plan to export (add --run-search")), qPrintable(r.err));
        QVERIFY(!QFile::exists(shot));

        // A search that finds nothing: Mixtral-L's 120.6e9 parameters need 6 bytes each on the
        // devices even with the optimizer on the host (673.8 GiB), two H800s hold 160 GiB. The
        // search's reason is printed, and the export refusal points at it.
        const Run none = runStudio({QStringLiteral("--model-preset"), QStringLiteral("Mixtral-L"), QStringLiteral("--cluster-preset"),
                                    QStringLiteral("H800:1x2"), QStringLiteral("--run-search"), QStringLiteral("--view"),
                                    QStringLiteral("export"), QStringLiteral("--screenshot"), shot},
                                   home);
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains(QStringLiteral("673.8 GiB")) || none.out.contains(QStringLiteral("673.8 GiB")),
                 qPrintable(none.out + none.err));
        QVERIFY2(none.err.contains(QStringLiteral("--view export: the search found no plan to export (its reason is above)")),
                 qPrintable(none.err));
        QVERIFY(!QFile::exists(shot));
    }

    void refusedSearchExitsWithTwo()
    {
        // A cluster the search refuses (a node without a link to the others): batch mode says
        // why and exits with 2, after the screenshot of the refusal the Search dock shows.
        QTemporaryDir home;
        Project p;
        p.name = "cut";
        p.model = *findModelPreset("Mixtral-S");
        p.cluster = *findClusterPreset("16-1");
        const int last = p.cluster.nodes.back().id;
        const auto touches = [&](const Link& l) { return l.a == last || l.b == last; };
        QVERIFY(std::any_of(p.cluster.links.begin(), p.cluster.links.end(), touches));
        p.cluster.links.erase(std::remove_if(p.cluster.links.begin(), p.cluster.links.end(), touches), p.cluster.links.end());
        const QString project = home.filePath(QStringLiteral("cut.hapmoe"));
        saveFileAtomically(project.toStdString(), writeProject(p));
        const QString shot = home.filePath(QStringLiteral("refused.png"));
        const Run r = runStudio({project, QStringLiteral("--run-search"), QStringLiteral("--screenshot"), shot}, home);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--run-search: Cannot search: cluster.links: node")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("has no link to any switch or node")), qPrintable(r.err));
        QVERIFY(QFile::exists(shot));
    }

    void exportViewScreenshotHasTheRequestedSize()
    {
        QTemporaryDir home;
        const QString shot = home.filePath(QStringLiteral("export.png"));
        const Run r = runStudio({QStringLiteral("--model-preset"), QStringLiteral("Mixtral-S"), QStringLiteral("--cluster-preset"),
                                 QStringLiteral("16-1"), QStringLiteral("--run-search"), QStringLiteral("--view"),
                                 QStringLiteral("export"), QStringLiteral("--size"), QStringLiteral("1280x800"),
                                 QStringLiteral("--screenshot"), shot},
                                home);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QImage image(shot);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1280, 800));
    }

    void windowFitsSmallScreens()
    {
        // 1366 x 768 and 1280 x 800 laptop screens leave about 1024 x 700 to a window once the
        // title bar and a panel are counted: the default layout must fit in that.
        auto w = makeWindow();
        const QSize minimum = w->minimumSizeHint();
        QVERIFY2(minimum.width() <= 1024 && minimum.height() <= 700,
                 qPrintable(QStringLiteral("%1 x %2").arg(minimum.width()).arg(minimum.height())));
        w->showTab(QStringLiteral("results"));
        auto* title = w->findChild<QLabel*>(QStringLiteral("planTitle"));
        auto* exportButton = w->findChild<QPushButton*>(QStringLiteral("exportLauncherButton"));
        QVERIFY(title && exportButton);
        const auto titleAboveButtons = [&] {
            return title->mapTo(w.get(), QPoint(0, title->height())).y() <= exportButton->mapTo(w.get(), QPoint()).y();
        };
        QTRY_VERIFY(!titleAboveButtons());   // 1600 px: the title beside the buttons
        w->explorer()->showView(QStringLiteral("whatif"));
        auto* whatIf = qobject_cast<WhatIfPanel*>(w->explorer()->view(QStringLiteral("whatif")));
        auto* whatIfScroll = w->findChild<QScrollArea*>(QStringLiteral("whatIfScroll"));
        QVERIFY(whatIf && whatIfScroll);
        QTRY_VERIFY(!whatIf->isStacked());   // the inputs beside the figures

        w->resize(1024, 700);
        QTRY_COMPARE(w->size(), QSize(1024, 700));
        // The plan title goes above the explorer's buttons instead of widening the window ...
        QTRY_VERIFY(titleAboveButtons());
        QVERIFY(exportButton->isVisible());
        QVERIFY(exportButton->mapTo(w.get(), QPoint(exportButton->width(), 0)).x() <= w->width());
        // The what-if page never scrolls sideways; with the search dock widened to 600 px,
        // it puts its figures under the inputs.
        QTRY_COMPARE(whatIfScroll->horizontalScrollBar()->maximum(), 0);
        w->resizeDocks({w->findChild<QDockWidget*>(QStringLiteral("searchDock"))}, {600}, Qt::Horizontal);
        QTRY_VERIFY(whatIf->isStacked());
        QTRY_COMPARE(whatIfScroll->horizontalScrollBar()->maximum(), 0);
        QVERIFY(whatIf->width() <= whatIfScroll->viewport()->width());
        // On the designer, below the properties, the search panel scrolls instead of
        // setting the window's height.
        w->showTab(QStringLiteral("designer"));
        auto* searchScroll = w->findChild<QScrollArea*>(QStringLiteral("searchPanelScroll"));
        QVERIFY(searchScroll);
        QCOMPARE(searchScroll->widget(), static_cast<QWidget*>(w->searchPanel()));
        QTRY_VERIFY(searchScroll->verticalScrollBar()->maximum() > 0);
        QVERIFY(w->searchPanel()->width() <= searchScroll->viewport()->width());   // never cut on the right
        QCOMPARE(w->size(), QSize(1024, 700));
    }

    void docksGetTheirWidthBackAfterTheWindowShrank()
    {
        // Shrunk to 800 x 550 and grown back, the side columns return to the widths they had
        // (Qt would give all the room back to the canvas); in a 1024 x 700 window the canvas
        // keeps the larger share, the docks narrowing towards their minimum widths.
        auto w = makeWindow();
        auto dockNamed = [&](const QString& name) { return w->findChild<QDockWidget*>(name); };
        QDockWidget* left = dockNamed(QStringLiteral("devicesDock"));
        QDockWidget* right = dockNamed(QStringLiteral("propertiesDock"));
        const auto widths = [&] {
            return QStringLiteral("devices %1, properties %2, canvas %3")
                .arg(left->width()).arg(right->width()).arg(w->clusterView()->width());
        };
        // The widths the window opens with at 1600 px (MainWindow::createDocks): 245 and 480.
        QTRY_VERIFY2(std::abs(left->width() - 245) <= 3 && std::abs(right->width() - 480) <= 3, qPrintable(widths()));
        w->resize(1520, 950);
        QTRY_COMPARE(w->size(), QSize(1520, 950));
        QApplication::processEvents();
        const int leftWide = left->width(), rightWide = right->width();
        // 95 % of the window, 95 % of those widths.
        QVERIFY2(std::abs(leftWide - 233) <= 3 && std::abs(rightWide - 456) <= 3, qPrintable(widths()));
        // The window's minimum width (the docks' and the canvas's minimums) stops it at about
        // 1000 px.
        w->resize(800, 550);
        QTRY_VERIFY(w->width() < 1024 && w->height() == 550);
        QApplication::processEvents();
        QVERIFY2(left->width() < leftWide, qPrintable(widths()));
        // A click that reaches the window without moving a separator (on the status bar)
        // while it is narrow is no choice of widths: growing gives them back all the same.
        const QPointF bar(w->width() / 2.0, w->height() - 5.0);
        QMouseEvent barPress(QEvent::MouseButtonPress, bar, w->mapToGlobal(bar), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QMouseEvent barRelease(QEvent::MouseButtonRelease, bar, w->mapToGlobal(bar), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &barPress);
        QApplication::sendEvent(w.get(), &barRelease);
        w->resize(1520, 950);
        QTRY_COMPARE(w->size(), QSize(1520, 950));
        QTRY_VERIFY2(std::abs(left->width() - leftWide) <= 3 && std::abs(right->width() - rightWide) <= 3, qPrintable(widths()));

        w->resize(1024, 700);
        QTRY_COMPARE(w->size(), QSize(1024, 700));
        QApplication::processEvents();
        // The palette at its 200 px minimum rather than 245.
        QVERIFY2(left->width() <= 210, qPrintable(widths()));
        // The right column near its minimum (the search settings one pair a row, the plan
        // list's four columns; its 64 % share would be 307 px): the canvas has almost half
        // the window, where the two-column settings left it 422 px.
        QVERIFY2(right->width() < 345, qPrintable(widths()));
        QVERIFY2(w->clusterView()->width() > 470, qPrintable(widths()));
        // A width the user gives a column (a separator dragged, then released) is the one it
        // comes back to.
        w->resize(1520, 950);
        QTRY_VERIFY2(std::abs(left->width() - leftWide) <= 3, qPrintable(widths()));
        // The separator is dragged as a user drags it: press on it, move, release.
        const QPointF separator(left->geometry().right() + 2, 300);
        const QPointF dragged = separator + QPointF(300 - left->width(), 0);
        QMouseEvent press(QEvent::MouseButtonPress, separator, w->mapToGlobal(separator), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &press);
        QMouseEvent move(QEvent::MouseMove, dragged, w->mapToGlobal(dragged), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &move);
        QApplication::processEvents();
        QMouseEvent release(QEvent::MouseButtonRelease, dragged, w->mapToGlobal(dragged), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &release);
        QTRY_VERIFY2(std::abs(left->width() - 300) <= 3, qPrintable(widths()));
        w->resize(900, 600);
        QApplication::processEvents();
        w->resize(1520, 950);
        QTRY_VERIFY2(std::abs(left->width() - 300) <= 3 && std::abs(right->width() - rightWide) <= 3, qPrintable(widths()));
        // A window wider than the one they were given in leaves them as they are.
        w->resize(1700, 1000);
        QTRY_COMPARE(w->width(), 1700);
        QTRY_VERIFY2(std::abs(left->width() - 300) <= 3 && std::abs(right->width() - rightWide) <= 3, qPrintable(widths()));
    }

    void whatIfMessageLeavesTheStatusBarWhenStale()
    {
        // The example (Mixtral-S on 32-3, four stages of DP 8): a what-if batch of 16, two
        // micro-batches for four stages, puts a suggestion in the status bar; Reset, another
        // view, another tab or another cluster take it away.
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(searchAndShowFirstPlan(w.get()));
        auto* whatIf = qobject_cast<WhatIfPanel*>(w->explorer()->view(QStringLiteral("whatif")));
        QVERIFY(whatIf);
        QPushButton* reset = nullptr;
        for (QPushButton* b : whatIf->findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Reset"))
                reset = b;
        QVERIFY(reset);
        const auto message = [&] { return w->statusBar()->currentMessage(); };
        // Selecting a plan says nothing there.
        QVERIFY2(!message().startsWith(QStringLiteral("What-if:")), qPrintable(message()));
        const auto change = [&] {
            w->explorer()->showView(QStringLiteral("whatif"));
            whatIf->globalBatchBox()->setValue(16);
            return message().startsWith(QStringLiteral("What-if:"));
        };
        QVERIFY2(change(), qPrintable(message()));
        QTest::mouseClick(reset, Qt::LeftButton);
        QVERIFY2(message().isEmpty(), qPrintable(message()));
        QVERIFY2(change(), qPrintable(message()));
        w->explorer()->showView(QStringLiteral("timeline"));
        QVERIFY2(message().isEmpty(), qPrintable(message()));
        QTest::mouseClick(reset, Qt::LeftButton);
        QVERIFY2(change(), qPrintable(message()));
        w->showTab(QStringLiteral("model"));
        QVERIFY2(message().isEmpty(), qPrintable(message()));
        w->showTab(QStringLiteral("results"));
        QTest::mouseClick(reset, Qt::LeftButton);
        QVERIFY2(change(), qPrintable(message()));
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        QVERIFY2(message().isEmpty(), qPrintable(message()));
        // Other messages stay: only the what-if suggestion goes.
        w->statusBar()->showMessage(QStringLiteral("Saved example.hapmoe"), 5000);
        w->showTab(QStringLiteral("results"));
        w->showTab(QStringLiteral("designer"));
        QCOMPARE(message(), QStringLiteral("Saved example.hapmoe"));
    }

    void resultsTabTakesTheDesignDocksWidth()
    {
        // The palette, presets, properties and problems serve the designer; on the Results
        // tab their width goes to the explorer, and back on the designer they show as left,
        // a dock the user closed staying closed.
        auto w = makeWindow();
        w->resize(1024, 700);
        const QStringList design{QStringLiteral("devicesDock"), QStringLiteral("presetsDock"),
                                 QStringLiteral("propertiesDock"), QStringLiteral("problemsDock")};
        auto dockNamed = [&](const QString& name) { return w->findChild<QDockWidget*>(name); };
        for (const QString& name : design)
            QVERIFY2(dockNamed(name) && !dockNamed(name)->isHidden(), qPrintable(name));
        dockNamed(QStringLiteral("presetsDock"))->hide();
        QApplication::processEvents();
        const int designerWidth = w->tabs()->width();

        w->showTab(QStringLiteral("results"));
        QApplication::processEvents();
        for (const QString& name : design)
            QVERIFY2(dockNamed(name)->isHidden(), qPrintable(name));
        QVERIFY(!dockNamed(QStringLiteral("searchDock"))->isHidden());
        // The explorer gains at least the palette's 200 px minimum.
        QVERIFY2(w->tabs()->width() >= designerWidth + 200,
                 qPrintable(QStringLiteral("%1 -> %2 px").arg(designerWidth).arg(w->tabs()->width())));

        // The Model tab too leaves them aside, so that its groups have the width.
        w->showTab(QStringLiteral("model"));
        QApplication::processEvents();
        for (const QString& name : design)
            QVERIFY2(dockNamed(name)->isHidden(), qPrintable(name));
        w->showTab(QStringLiteral("designer"));
        QApplication::processEvents();
        for (const QString& name : design)
            QCOMPARE(dockNamed(name)->isHidden(), name == QStringLiteral("presetsDock"));
        QVERIFY(!dockNamed(QStringLiteral("devicesDock"))->isHidden());

        // Round trips to the Results tab leave every dock the size it had: the other docks
        // of a column take the room of the hidden ones and give it back.
        dockNamed(QStringLiteral("presetsDock"))->show();
        w->resize(1600, 1000);
        QApplication::processEvents();
        QHash<QString, QSize> before;
        for (QDockWidget* d : w->findChildren<QDockWidget*>())
            if (!d->isHidden())
                before.insert(d->objectName(), d->size());
        QVERIFY(before.size() >= 5);
        for (int trip = 0; trip < 3; ++trip) {
            w->showTab(QStringLiteral("results"));
            QApplication::processEvents();
            w->showTab(QStringLiteral("designer"));
            QApplication::processEvents();
        }
        for (auto it = before.cbegin(); it != before.cend(); ++it) {
            const QSize now = dockNamed(it.key())->size();
            QVERIFY2(std::abs(now.height() - it.value().height()) <= 2 && std::abs(now.width() - it.value().width()) <= 2,
                     qPrintable(QStringLiteral("%1: %2x%3 -> %4x%5").arg(it.key()).arg(it.value().width()).arg(it.value().height())
                                    .arg(now.width()).arg(now.height())));
        }
        // A column widened on the Results tab keeps its width on return.
        QDockWidget* search = dockNamed(QStringLiteral("searchDock"));
        w->showTab(QStringLiteral("results"));
        QApplication::processEvents();
        const int wider = search->width() + 80;
        w->resizeDocks({search}, {wider}, Qt::Horizontal);
        QApplication::processEvents();
        QVERIFY(std::abs(search->width() - wider) <= 2);
        w->showTab(QStringLiteral("designer"));
        QApplication::processEvents();
        QVERIFY2(std::abs(search->width() - wider) <= 2, qPrintable(QStringLiteral("%1 -> %2").arg(wider).arg(search->width())));
    }

    void exportDialogIsModelessAndInTheScreenshot()
    {
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));   // Table 1: H800 1x8 + 910B 1x8
        SearchResult result;
        QVERIFY(searchAndShowFirstPlan(w.get(), &result));
        w->explorer()->showView(QStringLiteral("export"));
        auto* dialog = w->findChild<ExportDialog*>(QStringLiteral("exportDialog"));
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(!dialog->isModal());   // shown, not exec()'d: the event loop goes on
        QVERIFY(dialog->width() <= w->width() && dialog->height() <= w->height());
        // Filled for the selected plan: its launcher names the plan.
        const QString plan = QString::fromStdString(result.plans.front().plan.name);
        QVERIFY2(dialog->preview()->toPlainText().contains(plan), qPrintable(dialog->preview()->toPlainText().left(400)));
        QVERIFY(dialog->windowTitle().contains(plan));

        // The screenshot is the window's size with the dialog's own pixels inside it.
        QApplication::processEvents();
        QList<QRect> bodies;
        const QImage shot = grabWithDialogs(w.get(), &bodies).toImage();
        const QImage window = w->grab().toImage();
        const QImage body = dialog->grab().toImage();
        QCOMPARE(shot.size(), window.size());
        QCOMPARE(bodies.size(), 1);
        QCOMPARE(bodies.front().size(), dialog->size());
        QVERIFY(QRect(QPoint(0, 0), w->size()).contains(bodies.front()));
        const QPoint offset = bodies.front().topLeft();
        int same = 0, differentFromWindow = 0, samples = 0;
        for (int y = body.height() / 8; y < body.height(); y += body.height() / 8) {
            for (int x = body.width() / 8; x < body.width(); x += body.width() / 8) {
                ++samples;
                same += shot.pixel(offset + QPoint(x, y)) == body.pixel(x, y);
                differentFromWindow += shot.pixel(offset + QPoint(x, y)) != window.pixel(offset + QPoint(x, y));
            }
        }
        QCOMPARE(same, samples);
        QVERIFY(differentFromWindow > 0);
    }
};

QTEST_MAIN(StudioCommandLineTest)
#include "StudioCommandLineTest.moc"
