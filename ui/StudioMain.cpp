#include "StudioMain.h"

#include "CalibrateDialog.h"
#include "MainWindow.h"
#include "ModelPanel.h"
#include "ClusterScene.h"
#include "LinkItem.h"
#include "ExplorerPlan.h"
#include "PlanExplorerWidget.h"
#include "ProjectDocument.h"
#include "SearchPanel.h"
#include "Theme.h"

#include "io/Presets.h"
#include "util/InputError.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDialog>
#include <QDir>
#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QSettings>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <iostream>

namespace hapmoe::ui {

namespace {

constexpr int kMaxSide = 16384;   // --size: the largest side of the window

struct Options {
    QString file;
    bool runSearch = false;
    QString screenshot;
    bool quit = false;
    QString tab;
    QString view;
    int plan = -1;
    QString theme;
    QSize size;   // empty: the window's default
    QString clusterPreset;
    QString modelPreset;
    QString profile;   // a hapmoe.profile file the project takes
    QString select;   // a node or switch (its id, host or name), or a link: its two ends joined by ','
    QString deviceTypes;   // Cluster > Device Types opened at this type
    QString calibrateLog;  // Search > Calibrate from Training Log with this log, for the selected plan
};

// The id of the node or switch `what` names (its id, a node's host or a switch's name), or -1.
int itemId(const Cluster& c, const QString& what)
{
    bool numeric = false;
    const int id = what.toInt(&numeric);
    if (numeric)
        return c.node(id) || c.switchById(id) ? id : -1;
    for (const Node& n : c.nodes)
        if (QString::fromStdString(n.host).compare(what, Qt::CaseInsensitive) == 0)
            return n.id;
    for (const Switch& s : c.switches)
        if (QString::fromStdString(s.name).compare(what, Qt::CaseInsensitive) == 0)
            return s.id;
    return -1;
}

// After the window is shown (and the search finished): choose the tab and view, then save
// the screenshot and/or quit.
// failed: what was asked for did not happen (a search Run refused); the screenshot, if any,
// is still taken, of the reason shown, and the exit code is 2.
void finish(MainWindow& window, const Options& o, bool failed = false)
{
    if (!o.tab.isEmpty())
        window.showTab(o.tab);
    // A screenshot of something other than what was asked for would mislead: say so, and
    // exit with 2 when running in batch.
    bool understood = true;
    if (const QStringList ends = o.select.split(QLatin1Char(',')); ends.size() == 2) {
        // A link: host names and switch names hold no comma.
        const Cluster& c = window.document()->cluster();
        const int a = itemId(c, ends[0].trimmed()), b = itemId(c, ends[1].trimmed());
        if (LinkItem* link = a >= 0 && b >= 0 ? window.clusterScene()->linkItem(a, b) : nullptr) {
            window.clusterScene()->clearSelection();
            link->setSelected(true);
        } else if (a < 0 || b < 0) {
            std::cerr << "--select: no node or switch has the id, host or name \"" << (a < 0 ? ends[0] : ends[1]).trimmed().toStdString()
                      << "\"" << std::endl;
            understood = false;
        } else {
            std::cerr << "--select: no link joins \"" << ends[0].toStdString() << "\" and \"" << ends[1].toStdString()
                      << "\"" << std::endl;
            understood = false;
        }
    } else if (!o.select.isEmpty()) {
        const int id = itemId(window.document()->cluster(), o.select);
        if (id >= 0) {
            window.clusterScene()->selectIds({id});
        } else {
            std::cerr << "--select: no node or switch has the id, host or name \"" << o.select.toStdString() << "\""
                      << std::endl;
            understood = false;
        }
    }
    if (o.plan >= 0) {
        if (o.plan < window.explorer()->planCount()) {
            window.explorer()->selectPlan(o.plan);
        } else {
            if (window.explorer()->planCount() == 0)
                std::cerr << "--plan: there are no plans (add --run-search, or open a project or plan file with saved plans)"
                          << std::endl;
            else
                std::cerr << "--plan: there are " << window.explorer()->planCount() << " plans (rows 0 to "
                          << window.explorer()->planCount() - 1 << ")" << std::endl;
            understood = false;
        }
    }
    // After the plan is chosen, so that the export dialog is filled for that plan.
    if (!o.view.isEmpty()) {
        window.showTab(QStringLiteral("results"));
        window.explorer()->showView(o.view);
        if (o.view == QLatin1String("export")) {
            QWidget* dialog = window.explorer()->view(o.view);
            if (!dialog || !dialog->isVisible()) {
                // After a search that found nothing, its reason was printed above; without one,
                // say where plans come from.
                if (o.runSearch)
                    std::cerr << "--view export: the search found no plan to export (its reason is above)" << std::endl;
                else
                    std::cerr << "--view export: there is no plan to export (add --run-search, or open a project "
                                 "with saved plans)"
                              << std::endl;
                understood = false;
            }
        }
    }
    bool fitFailed = false;   // as hapmoe calibrate: exit code 1 when no scale reproduces the log
    if (!o.calibrateLog.isEmpty()) {
        // After the plan is chosen: the log is of a run of that plan.
        if (CalibrateDialog* dialog = window.calibrateFromLog(o.calibrateLog)) {
            dialog->waitForFinished();
            if (!dialog->errorText().isEmpty()) {
                std::cerr << "--calibrate-log: " << dialog->errorText().toStdString() << std::endl;
                failed = true;
            } else if (!dialog->hasProfile()) {
                std::cerr << "--calibrate-log: the calibration failed: " << dialog->result()->fit_failure << std::endl;
                fitFailed = true;
            }
        } else {
            understood = false;   // no plan selected: calibrateFromLog said so
        }
    }
    if (!o.deviceTypes.isEmpty() && !window.editDeviceTypes(o.deviceTypes)) {
        std::cerr << "--device-types: no device type is named \"" << o.deviceTypes.toStdString() << "\"" << std::endl;
        understood = false;
    }
    if (o.screenshot.isEmpty() && !o.quit)
        return;
    if (!understood) {
        QApplication::exit(2);
        return;
    }
    // Let layouts and charts settle before grabbing.
    QTimer::singleShot(400, &window, [&window, o, failed, fitFailed] {
        int code = failed ? 2 : fitFailed ? 1 : 0;
        if (!o.screenshot.isEmpty()) {
            QDir().mkpath(QFileInfo(o.screenshot).absolutePath());
            const QPixmap shot = grabWithDialogs(&window);
            if (!shot.save(o.screenshot)) {
                std::cerr << "cannot write " << o.screenshot.toStdString() << std::endl;
                code = 1;
            } else {
                std::cout << "screenshot " << o.screenshot.toStdString() << " (" << shot.width() << "x"
                          << shot.height() << ")" << std::endl;
            }
        }
        window.document()->undoStack()->setClean();
        QApplication::exit(code);
    });
}

} // namespace

QPixmap grabWithDialogs(QWidget* window, QList<QRect>* bodies)
{
    QPixmap shot = window->grab();
    QPainter painter(&shot);
    for (QWidget* top : QApplication::topLevelWidgets()) {
        auto* dialog = qobject_cast<QDialog*>(top);
        if (!dialog || !dialog->isVisible() || !dialog->parentWidget() || dialog->parentWidget()->window() != window)
            continue;
        const QPixmap body = dialog->grab();
        const QPalette pal = dialog->palette();
        const int titleHeight = dialog->fontMetrics().height() + 10;
        const QSize bodySize = dialog->size();
        const QSize frameSize(bodySize.width(), bodySize.height() + titleHeight);
        // Centred, kept inside the picture: where the screen puts the dialog is up to the
        // window manager (offscreen, to a screen smaller than the window).
        const QPoint pos(std::max(0, (window->width() - frameSize.width()) / 2),
                         std::max(0, (window->height() - frameSize.height()) / 2));
        const QRect frame(pos, frameSize);
        painter.fillRect(frame.translated(5, 5), QColor(0, 0, 0, 70));   // shadow
        const QRect title(frame.topLeft(), QSize(frame.width(), titleHeight));
        painter.fillRect(title, isDark(pal) ? pal.color(QPalette::Window).lighter(140)
                                            : pal.color(QPalette::Window).darker(112));
        QFont bold = dialog->font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.setPen(pal.color(QPalette::WindowText));
        painter.drawText(title.adjusted(10, 0, -10, 0), Qt::AlignVCenter | Qt::AlignLeft, dialog->windowTitle());
        const QRect bodyRect(frame.left(), frame.top() + titleHeight, bodySize.width(), bodySize.height());
        painter.drawPixmap(bodyRect, body);
        painter.setPen(pal.color(QPalette::Dark));
        painter.drawRect(frame.adjusted(0, 0, -1, -1));
        if (bodies)
            bodies->append(bodyRect);
    }
    return shot;
}

namespace {

// The studio's options, for a run and for --help and --version, which need no display.
struct CommandLine {
    QCommandLineParser parser;
    const QCommandLineOption runSearch{QStringLiteral("run-search"), QObject::tr("Run the search to the end")};
    const QCommandLineOption screenshot{QStringLiteral("screenshot"), QObject::tr("Save a screenshot and exit"),
                                        QStringLiteral("OUT.png")};
    const QCommandLineOption quit{QStringLiteral("quit"), QObject::tr("Exit when done")};
    const QCommandLineOption tab{QStringLiteral("tab"), QObject::tr("Tab to show: designer, model, results"),
                                 QStringLiteral("NAME")};
    const QCommandLineOption view{QStringLiteral("view"),
                                  QObject::tr("Explorer view: plans, partition, timeline, memory, breakdown, compare, "
                                              "whatif, export"),
                                  QStringLiteral("NAME")};
    const QCommandLineOption plan{QStringLiteral("plan"),
                                  QObject::tr("Row of the plan to select, from 0 (the best plan) in the plan table's order"),
                                  QStringLiteral("N")};
    const QCommandLineOption theme{QStringLiteral("theme"), QObject::tr("Palette: light or dark"), QStringLiteral("NAME")};
    const QCommandLineOption size{QStringLiteral("size"), QObject::tr("Window size, e.g. 1600x1000"), QStringLiteral("WxH")};
    const QCommandLineOption clusterPreset{QStringLiteral("cluster-preset"),
                                           QObject::tr("Load a cluster preset, or a cluster from the shorthand "
                                                       "TYPE:NODESxPER_NODE,... such as H800:2x8,910B-376T:2x8"),
                                           QStringLiteral("NAME")};
    const QCommandLineOption modelPreset{QStringLiteral("model-preset"), QObject::tr("Load a model preset"),
                                         QStringLiteral("NAME")};
    const QCommandLineOption profile{QStringLiteral("profile"),
                                     QObject::tr("Load a hapmoe.profile (measured tables) for the searches, as hapmoe plan --profile"),
                                     QStringLiteral("FILE")};
    const QCommandLineOption select{QStringLiteral("select"),
                                    QObject::tr("Select a node or switch by id, host or switch name, or the link between two: A,B"), QStringLiteral("ITEM")};
    const QCommandLineOption deviceTypes{QStringLiteral("device-types"),
                                         QObject::tr("Open Cluster > Device Types at this type (its name or an alias)"),
                                         QStringLiteral("TYPE")};
    const QCommandLineOption calibrateLog{QStringLiteral("calibrate-log"),
                                          QObject::tr("Calibrate the selected plan's profile from a Megatron-LM training log "
                                                      "(Search > Calibrate from Training Log), as hapmoe calibrate --log"),
                                          QStringLiteral("FILE")};

    CommandLine()
    {
        parser.setApplicationDescription(QObject::tr("Heterogeneity-aware parallelism planner for MoE training"));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("FILE"), QObject::tr("Project to open (default: the built-in example), a plan document (hapmoe plan -o) to open as a new project, a model or cluster file (hapmoe.model, hapmoe.cluster) to load into the example's project, or a Megatron-LM launch script (.sh, .bash) to import into its model"));
        parser.addOptions({runSearch, screenshot, quit, tab, view, plan, theme, size, clusterPreset, modelPreset, profile, select,
                           deviceTypes, calibrateLog});
    }
};

} // namespace

bool asksForHelpOrVersion(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--")
            break;
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" || a == "--version")
            return true;
    }
    return false;
}

int studioInfoMain(QCoreApplication& app)
{
    CommandLine cl;
    // Whatever else is given: the answer to --help or --version does not depend on it.
    cl.parser.parse(app.arguments());
    if (cl.parser.isSet(QStringLiteral("version")))
        cl.parser.showVersion();
    cl.parser.showHelp(0);
    return 0;   // not reached: both exit
}

int studioMain(QApplication& app)
{
    CommandLine cl;
    QCommandLineParser& parser = cl.parser;
    const QCommandLineOption& runSearch = cl.runSearch;
    const QCommandLineOption& screenshot = cl.screenshot;
    const QCommandLineOption& quit = cl.quit;
    const QCommandLineOption& tab = cl.tab;
    const QCommandLineOption& view = cl.view;
    const QCommandLineOption& plan = cl.plan;
    const QCommandLineOption& theme = cl.theme;
    const QCommandLineOption& size = cl.size;
    const QCommandLineOption& clusterPreset = cl.clusterPreset;
    const QCommandLineOption& modelPreset = cl.modelPreset;
    const QCommandLineOption& profile = cl.profile;
    const QCommandLineOption& select = cl.select;
    parser.process(app);

    Options o;
    o.file = parser.positionalArguments().value(0);
    o.runSearch = parser.isSet(runSearch);
    o.screenshot = parser.value(screenshot);
    o.quit = parser.isSet(quit) || !o.screenshot.isEmpty();
    o.tab = parser.value(tab);
    o.deviceTypes = parser.value(cl.deviceTypes);
    o.calibrateLog = parser.value(cl.calibrateLog);
    o.view = parser.value(view);
    if (parser.isSet(view) && !PlanExplorerWidget::viewNames().contains(o.view)) {
        std::cerr << "--view: unknown view \"" << o.view.toStdString() << "\"; the views are "
                  << PlanExplorerWidget::viewNames().join(QStringLiteral(", ")).toStdString() << std::endl;
        return 2;
    }
    // A value the studio would ignore (and show something else than asked for) is refused.
    const QStringList tabs{QStringLiteral("designer"), QStringLiteral("cluster"), QStringLiteral("model"), QStringLiteral("results")};
    if (parser.isSet(tab) && !tabs.contains(o.tab)) {
        std::cerr << "--tab: unknown tab \"" << o.tab.toStdString() << "\"; the tabs are designer, model, results"
                  << std::endl;
        return 2;
    }
    if (parser.isSet(plan)) {
        bool number = false;
        o.plan = parser.value(plan).toInt(&number);
        if (!number || o.plan < 0) {
            std::cerr << "--plan: expected a row number from 0, got \"" << parser.value(plan).toStdString() << "\""
                      << std::endl;
            return 2;
        }
    }
    o.theme = parser.isSet(theme) ? parser.value(theme) : QSettings().value(QStringLiteral("theme")).toString();
    if (parser.isSet(theme) && o.theme != QLatin1String("light") && o.theme != QLatin1String("dark")) {
        std::cerr << "--theme: expected light or dark, got \"" << o.theme.toStdString() << "\"" << std::endl;
        return 2;
    }
    o.clusterPreset = parser.value(clusterPreset);
    o.modelPreset = parser.value(modelPreset);
    o.profile = parser.value(profile);
    if (parser.isSet(modelPreset) && !findModelPreset(o.modelPreset.toStdString())) {
        QStringList names;
        for (const auto& p : modelPresets())
            names << QString::fromStdString(p.name);
        std::cerr << "--model-preset: no model preset named \"" << o.modelPreset.toStdString() << "\"; the presets are "
                  << names.join(QStringLiteral(", ")).toStdString() << std::endl;
        return 2;
    }
    if (parser.isSet(clusterPreset)) {
        // A shorthand may name the types of the project FILE (Project::devices); a file that
        // cannot be read says so when it is opened.
        DeviceCatalog catalog = DeviceCatalog::builtin();
        if (!o.file.isEmpty()) {
            try {
                const std::string path = o.file.toStdString();
                const std::string text = readTextFile(path);
                if (detectFormat(text, path) == kProjectFormat)
                    catalog = catalogWith(readDocumentDevices(text, path), path);
            } catch (const std::exception&) {
            }
        }
        try {
            MainWindow::clusterPresetOrShorthand(o.clusterPreset, catalog);
        } catch (const InputError& e) {
            std::cerr << "--cluster-preset: " << e.what() << std::endl;
            return 2;
        }
    }
    o.select = parser.value(select);
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        bool w = false, h = false;
        if (wh.size() == 2)
            o.size = QSize(wh[0].toInt(&w), wh[1].toInt(&h));
        if (!w || !h || o.size.width() <= 0 || o.size.height() <= 0) {
            std::cerr << "--size: expected WIDTHxHEIGHT in pixels such as 1600x1000, got \""
                      << parser.value(size).toStdString() << "\"" << std::endl;
            return 2;
        }
        // A screenshot is an image of that size in memory: 16384 x 16384 is 1 GiB.
        if (o.size.width() > kMaxSide || o.size.height() > kMaxSide) {
            std::cerr << "--size: at most " << kMaxSide << " pixels a side, got \"" << parser.value(size).toStdString() << "\""
                      << std::endl;
            return 2;
        }
    }
    const bool batch = o.quit;

    applyTheme(o.theme == QLatin1String("dark") ? ThemeKind::Dark : ThemeKind::Light);
    MainWindow window;
    window.setBatchMode(batch);
    if (o.size.isValid())
        window.resize(o.size);
    // Shown before the file opens: a status message (the file's warnings) hides the cluster
    // totals only while it lasts, which a window shown afterwards would not honour, and an
    // error box has the window to sit on.
    window.show();
    if (o.size.isValid()) {
        // The window's minimum (its docks' and the canvas's) wins over a smaller size: say so,
        // and in batch mode do not take a screenshot of a size other than the one asked for.
        QCoreApplication::processEvents();
        if (window.size() != o.size) {
            std::cerr << "--size: the window cannot be";
            if (window.width() != o.size.width())
                std::cerr << " narrower than " << window.width() << " px";
            if (window.height() != o.size.height())
                std::cerr << (window.width() != o.size.width() ? " nor" : "") << " lower than " << window.height() << " px";
            std::cerr << ", got \"" << parser.value(size).toStdString() << "\"" << std::endl;
            if (batch)
                return 2;
        }
    }
    if (!o.file.isEmpty() && !window.openFile(o.file)) {
        if (batch)
            return 2;
    }
    if (!o.clusterPreset.isEmpty() && !window.loadClusterPreset(o.clusterPreset) && batch)
        return 2;
    if (!o.modelPreset.isEmpty())
        window.modelPanel()->loadPreset(o.modelPreset);
    // As the presets: an edit of the opened project (undoable), which leaves it unmodified.
    if (!o.profile.isEmpty() && !window.loadProfile(o.profile) && batch)
        return 2;
    if (!o.clusterPreset.isEmpty() || !o.modelPreset.isEmpty() || !o.profile.isEmpty())
        window.document()->undoStack()->setClean();
    if (!batch)
        QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });

    if (o.runSearch) {
        QObject::connect(window.searchPanel(), &SearchPanel::searchFinished, &window, [&window, o](const SearchResult& r) {
            std::cout << "search: " << r.plans.size() << " plans, " << r.states << " states, " << r.time_s << " s";
            if (!r.plans.empty())
                std::cout << ", best " << r.plans.front().prediction.iteration_time_s << " s/iteration";
            else
                std::cout << ": no plan: " << noPlanReason(r).toStdString();
            std::cout << std::endl;
            finish(window, o);
        });
        QTimer::singleShot(0, &window, [&window, o] {
            if (!window.searchPanel()->run()) {
                std::cerr << "--run-search: " << window.searchPanel()->refusal().toStdString() << std::endl;
                finish(window, o, true);
            }
        });
    } else {
        QTimer::singleShot(0, &window, [&window, o] { finish(window, o); });
    }
    return app.exec();
}

} // namespace hapmoe::ui
