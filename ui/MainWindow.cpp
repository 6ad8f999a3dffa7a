#include "MainWindow.h"

#include "AutosaveManager.h"
#include "CalibrateDialog.h"
#include "ClusterLayout.h"
#include "ClusterScene.h"
#include "ClusterView.h"
#include "DevicePalette.h"
#include "DeviceTypesDialog.h"
#include "ModelPanel.h"
#include "PlanExplorerWidget.h"
#include "ProblemsPanel.h"
#include "ProjectDocument.h"
#include "PropertyEditor.h"
#include "SearchPanel.h"
#include "SearchRunner.h"
#include "ElidedLinesDelegate.h"
#include "ElidedStatusBar.h"
#include "Theme.h"
#include "UndoKeyForwarder.h"

#include "hardware/DeviceCatalog.h"
#include "cost/CostModel.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "megatron/ScriptImport.h"
#include "util/EmbeddedResources.h"
#include "util/InputError.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QHeaderView>
#include <QTreeWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QResizeEvent>
#include <QScreen>
#include <QScrollArea>
#include <QStyle>
#include <QSet>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QRegularExpression>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>

#include <algorithm>
#include <iostream>
#include <map>

namespace hapmoe::ui {

namespace {
constexpr int kMaxRecent = 8;
const char* kFileFilter = QT_TRANSLATE_NOOP("MainWindow", "HAPMoE projects (*.hapmoe);;JSON (*.json);;All files (*)");
const char* kOpenFilter = QT_TRANSLATE_NOOP("MainWindow", "Projects, plans, models and clusters (*.hapmoe *.json);;"
                                                          "Launch scripts (*.sh *.bash);;All files (*)");

// Whether opening the file changes the project open now (a launch script's model, a model or
// cluster file) rather than replacing it (a project, a plan): no need to ask to save first.
bool loadsIntoProject(const QString& fileName)
{
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("sh") || suffix == QLatin1String("bash"))
        return true;
    try {
        const std::string path = fileName.toStdString();
        const std::string format = detectFormat(readTextFile(path), path);
        return format == kModelFormat || format == kClusterFormat;
    } catch (const std::exception&) {
        return false;   // openFile says what is wrong with it
    }
}
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_document(new ProjectDocument(this))
{
    initStudioResources();
    setWindowIcon(studioIcon(QStringLiteral("app")));
    setObjectName(QStringLiteral("MainWindow"));
    m_autosave = new AutosaveManager(m_document, this);

    m_scene = new ClusterScene(m_document, this);
    m_view = new ClusterView(m_scene);
    m_view->setObjectName(QStringLiteral("clusterView"));
    m_modelPanel = new ModelPanel(m_document);
    m_explorer = new PlanExplorerWidget;
    m_explorer->setObjectName(QStringLiteral("planExplorer"));
    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_view, studioIcon(QStringLiteral("connect")), tr("Cluster designer"));
    m_tabs->addTab(m_modelPanel, deviceIcon(QStringLiteral("H800")), tr("Model"));
    m_tabs->addTab(m_explorer, studioIcon(QStringLiteral("run")), tr("Results"));
    setCentralWidget(m_tabs);

    createDocks();
    createActions();

    m_totals = new QLabel;
    m_totals->setObjectName(QStringLiteral("clusterTotals"));
    m_problemCount = new QLabel;
    m_zoom = new QLabel;
    m_zoom->setObjectName(QStringLiteral("zoomLabel"));
    setStatusBar(new ElidedStatusBar(this));
    statusBar()->addWidget(m_totals, 1);
    statusBar()->addPermanentWidget(m_problemCount);
    statusBar()->addPermanentWidget(m_zoom);

    connect(m_document, &ProjectDocument::clusterChanged, this, &MainWindow::updateStatus);
    connect(m_document, &ProjectDocument::clusterChanged, this, &MainWindow::updateOutdated);
    connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::updateOutdated);
    connect(m_document, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document, &ProjectDocument::fileNameChanged, this, &MainWindow::updateTitle);
    connect(m_document, &ProjectDocument::projectReset, this, [this] {
        m_saveFolder.clear();   // a plan document's opening sets it again
        updateTitle();
        m_explorer->clear();
        showSavedPlans();
        updateOutdated();
        QMetaObject::invokeMethod(m_view, &ClusterView::zoomToFit, Qt::QueuedConnection);
    });
    connect(m_view, &ClusterView::zoomChanged, this,
            [this](double z) { m_zoom->setText(tr("Zoom %1 %").arg(qRound(z * 100))); });
    connect(m_problems, &ProblemsPanel::problemCountChanged, this, [this](int n) {
        m_problemCount->setText(n == 0 ? tr("No problems") : (n == 1 ? tr("\u26a0 1 problem") : tr("\u26a0 %1 problems").arg(n)));
    });
    connect(m_problems, &ProblemsPanel::problemActivated, this, [this](const QList<int>& ids) {
        showTab(QStringLiteral("designer"));
        m_scene->selectIds(QSet<int>(ids.begin(), ids.end()));
        if (!ids.isEmpty())
            if (auto* item = m_scene->selectedItems().value(0))
                m_view->ensureVisible(item);
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::onTabChanged);
    // The Properties dock says it beside the field too, but a click elsewhere on the canvas
    // that ended the entry also shows another item there.
    connect(m_properties, &PropertyEditor::inputRejected, this, &MainWindow::showRefusedValue);
    connect(m_searchPanel, &SearchPanel::inputRejected, this, &MainWindow::showRefusedValue);
    for (auto signal : {&ProjectDocument::clusterChanged, &ProjectDocument::modelChanged, &ProjectDocument::searchSettingsChanged,
                        &ProjectDocument::profileChanged, &ProjectDocument::projectReset})
        connect(m_document, signal, this, &MainWindow::clearRefusedValue);
    // A field of the Model tab that shows a value the model did not take: Run refuses until
    // it is corrected or undone (the search would run on the value the field no longer shows).
    connect(m_modelPanel, &ModelPanel::pendingEditChanged, m_searchPanel, &SearchPanel::setPendingEdit);
    connect(m_document, &ProjectDocument::clusterChanged, this, &MainWindow::followNames);
    connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::followNames);
    // Launchers and plans are offered in the project's folder.
    connect(m_document, &ProjectDocument::fileNameChanged, this, [this] {
        m_explorer->setExportFolder(projectFolder());
    });
    connect(m_searchPanel, &SearchPanel::searchFinished, this, &MainWindow::onSearchFinished);
    connect(m_searchPanel, &SearchPanel::planActivated, this, [this](int row) {
        if (row >= 0 && row < m_explorer->planCount())
            m_explorer->selectPlan(row);
    });
    connect(m_searchPanel, &SearchPanel::searchStarted, this, [this] {
        m_runAction->setEnabled(false);
        m_cancelAction->setEnabled(true);
        updateProfileActions();
    });
    connect(m_searchPanel, &SearchPanel::searchStopped, this, [this] {
        m_runAction->setEnabled(true);
        m_cancelAction->setEnabled(false);
        updateProfileActions();
    });
    // The palette lists the project's own device types with the built-in ones.
    connect(m_document, &ProjectDocument::devicesChanged, this, [this] { m_palette->setCatalog(m_document->catalog()); });
    // Plans costed with another profile are outdated, as after a model edit.
    connect(m_document, &ProjectDocument::profileChanged, this, &MainWindow::updateOutdated);
    connect(m_document, &ProjectDocument::profileChanged, this, &MainWindow::updateProfileActions);
    connect(m_document, &ProjectDocument::profileChanged, this, &MainWindow::clearWhatIfMessage);
    connect(m_explorer, &PlanExplorerWidget::stageHovered, m_scene, &ClusterScene::highlightNodes);
    connect(m_explorer, &PlanExplorerWidget::selectionChanged, m_searchPanel, &SearchPanel::showCurrentPlan);
    connect(m_explorer, &PlanExplorerWidget::selectionChanged, this, &MainWindow::updateProfileActions);
    connect(m_explorer, &PlanExplorerWidget::newSearchSuggested, this,
            [this](const QString& reason) { statusBar()->showMessage(whatIfMessagePrefix() + reason, 10000); });
    // A what-if suggestion speaks of inputs and a plan: once they are reset, the project
    // changes or the view is left, it would mislead.
    connect(m_explorer, &PlanExplorerWidget::newSearchSuggestionWithdrawn, this, &MainWindow::clearWhatIfMessage);
    connect(m_document, &ProjectDocument::clusterChanged, this, &MainWindow::clearWhatIfMessage);
    connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::clearWhatIfMessage);
    connect(m_document, &ProjectDocument::projectReset, this, &MainWindow::clearWhatIfMessage);

    // 1600 x 1000 shows the canvas, the palette and the search side by side; smaller
    // screens get most of their available area.
    QSize size(1600, 1000);
    if (const QScreen* screen = QGuiApplication::primaryScreen(); screen && QGuiApplication::platformName() != QLatin1String("offscreen"))
        size = size.boundedTo(screen->availableGeometry().size() * 0.95);
    resize(size);
    newProject();
    loadExample();
}

MainWindow::~MainWindow()
{
    // Children are deleted in the order they were made, the document first. The scene's items,
    // deleted after it, would report their deselection to the property editor, which reads the
    // document.
    m_scene->blockSignals(true);
}

void MainWindow::createDocks()
{
    setDockNestingEnabled(true);
    auto dock = [this](const QString& title, const QString& name, QWidget* widget, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(widget);
        d->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
        addDockWidget(area, d);
        return d;
    };
    m_palette = new DevicePalette;
    m_palette->setObjectName(QStringLiteral("devicePalette"));
    QDockWidget* paletteDock = dock(tr("Devices"), QStringLiteral("devicesDock"), m_palette, Qt::LeftDockWidgetArea);

    m_presets = new QTreeWidget;
    m_presets->setObjectName(QStringLiteral("clusterPresets"));
    m_presets->setAlternatingRowColors(true);
    m_presets->setRootIsDecorated(false);
    // One line per device type of a preset, so a narrow dock shows the whole composition.
    m_presets->setUniformRowHeights(false);
    m_presets->setHeaderLabels({tr("Preset"), tr("Devices")});
    m_presets->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_presets->header()->setStretchLastSection(true);
    m_presets->setTextElideMode(Qt::ElideRight);
    m_presets->setItemDelegateForColumn(1, new ElidedLinesDelegate(m_presets));
    m_presets->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);   // the lines are elided to the width in view
    for (const auto& p : clusterPresets()) {
        // "32 devices: 910B-376T 2x8 + MI300X 2x8": the name already tells the device count.
        QString summary = QString::fromStdString(p.summary);
        summary.remove(QRegularExpression(QStringLiteral("^\\d+ devices?: ")));
        summary.replace(QStringLiteral(" + "), QStringLiteral("\n"));
        auto* item = new QTreeWidgetItem(m_presets, {QString::fromStdString(p.name), summary});
        item->setData(0, Qt::UserRole, QString::fromStdString(p.name));
        const QString tip = QString::fromStdString(p.summary + "\n" + p.source);
        item->setToolTip(0, tip);
        item->setToolTip(1, tip);
    }
    m_presets->setToolTip(tr("Click a preset to load it (undoable)"));
    connect(m_presets, &QTreeWidget::itemClicked, this,
            [this](QTreeWidgetItem* item) { loadClusterPreset(item->data(0, Qt::UserRole).toString()); });
    // The highlighted preset is the one the canvas shows: after an undo, a file or New, the
    // list follows (none when the cluster is not a preset).
    const auto followPreset = [this] {
        const QString name = QString::fromStdString(m_document->cluster().name);
        QTreeWidgetItem* shown = nullptr;
        for (int i = 0; i < m_presets->topLevelItemCount() && !shown; ++i)
            if (m_presets->topLevelItem(i)->data(0, Qt::UserRole).toString() == name)
                shown = m_presets->topLevelItem(i);
        m_presets->clearSelection();
        m_presets->setCurrentItem(shown);
    };
    connect(m_document, &ProjectDocument::clusterReset, this, followPreset);
    // An edit that makes the cluster no longer the preset renames it ("32-3 (edited)").
    connect(m_document, &ProjectDocument::clusterNameChanged, this, followPreset);
    QDockWidget* presetDock = dock(tr("Cluster presets"), QStringLiteral("presetsDock"), m_presets, Qt::LeftDockWidgetArea);
    splitDockWidget(paletteDock, presetDock, Qt::Vertical);

    // The two form panels scroll when the screen is short (1280 x 800, 1366 x 768) rather than
    // set the window's minimum height.
    auto scrollable = [](QWidget* form, int minimumWidth) {
        auto* area = new QScrollArea;
        form->setMinimumWidth(minimumWidth);
        area->setMinimumWidth(minimumWidth + area->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
        area->setObjectName(form->objectName() + QStringLiteral("Scroll"));
        area->setWidget(form);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        return area;
    };
    m_properties = new PropertyEditor(m_document, m_scene);
    m_properties->setObjectName(QStringLiteral("propertyEditor"));
    QDockWidget* propDock = dock(tr("Properties"), QStringLiteral("propertiesDock"), scrollable(m_properties, m_properties->minimumSizeHint().width()), Qt::RightDockWidgetArea);
    m_searchPanel = new SearchPanel(m_document);
    m_searchPanel->setObjectName(QStringLiteral("searchPanel"));
    QDockWidget* searchDock = dock(tr("Search"), QStringLiteral("searchDock"), scrollable(m_searchPanel, m_searchPanel->minimumSizeHint().width()), Qt::RightDockWidgetArea);
    splitDockWidget(propDock, searchDock, Qt::Vertical);
    m_problems = new ProblemsPanel(m_document);
    m_problems->setObjectName(QStringLiteral("problemsPanel"));
    QDockWidget* problemsDock = dock(tr("Problems"), QStringLiteral("problemsDock"), m_problems, Qt::LeftDockWidgetArea);
    splitDockWidget(presetDock, problemsDock, Qt::Vertical);

    m_designDocks = {paletteDock, presetDock, propDock, problemsDock};

    // Widths for a 1600 px window; in a narrower one the columns narrow with it
    // (fitDocksToWidth), down to minimums that keep the palette's names and figures readable
    // and the search panel's fields.
    m_palette->setMinimumWidth(200);
    resizeDocks({paletteDock, propDock}, {245, 480}, Qt::Horizontal);
    m_dockColumnWidths = {{Qt::LeftDockWidgetArea, 245}, {Qt::RightDockWidgetArea, 480}};
    resizeDocks({paletteDock, presetDock, problemsDock}, {430, 300, 200}, Qt::Vertical);
    resizeDocks({propDock, searchDock}, {300, 630}, Qt::Vertical);
}

int MainWindow::dockColumnWidth(Qt::DockWidgetArea area) const
{
    int width = 0;
    for (QDockWidget* d : findChildren<QDockWidget*>())
        if (!d->isHidden() && !d->isFloating() && dockWidgetArea(d) == area)
            width = std::max(width, d->width());
    return width;
}

void MainWindow::fitDocksToWidth()
{
    QList<QDockWidget*> docks;
    QList<int> widths;
    for (Qt::DockWidgetArea area : {Qt::LeftDockWidgetArea, Qt::RightDockWidgetArea}) {
        for (QDockWidget* d : findChildren<QDockWidget*>()) {
            if (!d->isHidden() && !d->isFloating() && dockWidgetArea(d) == area && m_dockColumnWidths.contains(area)) {
                docks << d;   // one per column: resizeDocks sets the column's width
                widths << m_dockColumnWidths.value(area);
                break;
            }
        }
    }
    if (docks.isEmpty())
        return;
    // In a window narrower than the one the widths were given in, the columns keep their
    // share of its width, down to their minimum widths, so that the canvas does not give
    // way alone.
    if (width() < m_dockColumnsWindowWidth) {
        for (int i = 0; i < docks.size(); ++i) {
            int w = qRound(double(widths[i]) * width() / m_dockColumnsWindowWidth);
            // Not so narrow that the device palette scrolls sideways (its figures cut).
            if (QDockWidget* palette = qobject_cast<QDockWidget*>(m_palette->parentWidget());
                palette && dockWidgetArea(palette) == dockWidgetArea(docks[i]) && !palette->isHidden())
                w = std::max(w, m_palette->sizeHintForColumn(0) + 2 * m_palette->spacing() + 2 * m_palette->frameWidth()
                                    + m_palette->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_palette) + 2);
            widths[i] = std::min(w, widths[i]);
        }
    }
    resizeDocks(docks, widths, Qt::Horizontal);
}

bool MainWindow::event(QEvent* event)
{
    // The separators between the docks and the tabs belong to the window: a press and drag
    // on one and its release reach it, and the release leaves the widths the user chose.
    // Other presses and releases that no child took (on a label, the status bar) reach it
    // too; they change no width and are not a choice.
    const auto columnWidths = [this] {
        return std::pair{dockColumnWidth(Qt::LeftDockWidgetArea), dockColumnWidth(Qt::RightDockWidgetArea)};
    };
    if (event->type() == QEvent::MouseButtonPress)
        m_dockWidthsAtPress = columnWidths();
    const bool handled = QMainWindow::event(event);
    if (event->type() == QEvent::MouseButtonRelease && columnWidths() != m_dockWidthsAtPress) {
        for (Qt::DockWidgetArea area : {Qt::LeftDockWidgetArea, Qt::RightDockWidgetArea})
            if (const int w = dockColumnWidth(area); w > 0)
                m_dockColumnWidths[area] = w;
        m_dockColumnsWindowWidth = width();
    }
    return handled;
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    // Qt shrinks the docks with the window and gives all the room to the central widget when
    // it grows: the columns would stay as narrow as the smallest size made them.
    fitDocksToWidth();
}

QString MainWindow::whatIfMessagePrefix()
{
    return tr("What-if: ");
}

void MainWindow::clearWhatIfMessage()
{
    // Only the what-if suggestion: a file's warnings or "Saved" keep their time.
    if (statusBar()->currentMessage().startsWith(whatIfMessagePrefix()))
        statusBar()->clearMessage();
}

void MainWindow::showRefusedValue(const QString& message)
{
    m_refusedValueMessage = message;
    statusBar()->showMessage(message, 10000);
}

void MainWindow::clearRefusedValue()
{
    // Only that message: a file's warnings or "Saved" keep their time.
    if (!m_refusedValueMessage.isEmpty() && statusBar()->currentMessage() == m_refusedValueMessage)
        statusBar()->clearMessage();
    m_refusedValueMessage.clear();
}

void MainWindow::onTabChanged()
{
    if (m_tabs->currentWidget() != m_explorer)
        clearWhatIfMessage();
    // The canvas's actions act on the canvas only while it shows (Del on the Results tab
    // must not delete hidden nodes); the design docks step aside for the results.
    for (QAction* a : std::as_const(m_canvasActions))
        a->setEnabled(m_tabs->currentWidget() == m_view);
    if (m_tabs->currentWidget() != m_view && m_connectAction->isChecked())
        m_connectAction->setChecked(false);
    // The canvas's zoom means nothing where the canvas is out of sight.
    m_zoom->setVisible(m_tabs->currentWidget() == m_view);
    // The design docks step aside for the results and the model (whose groups then stand in
    // two columns in a 1600 px window; the status bar still counts the problems).
    const bool away = m_tabs->currentWidget() != m_view;
    const bool wasAway = m_designDocksAway;
    m_designDocksAway = away;
    if (away && !wasAway) {
        // The other docks of their columns take the room they leave; their sizes are put
        // back on return, so that the round trip leaves every dock as it was.
        m_dockSizes.clear();
        m_widthWhenAway = width();
        for (QDockWidget* d : findChildren<QDockWidget*>())
            if (!d->isHidden() && !d->isFloating())
                m_dockSizes.insert(d, d->size());
    }
    for (QDockWidget* d : std::as_const(m_designDocks)) {
        const bool aside = m_designDockShown.contains(d);   // stepped aside now
        QAction* toggle = d->toggleViewAction();
        if (away && !aside) {
            m_designDockShown[d] = !d->isHidden();
            d->hide();
            // The View menu keeps the user's setting (ticked: the dock comes back with the
            // designer), not the step aside; the entry waits for the tab the dock belongs to.
            const QSignalBlocker block(toggle);   // toggled() would show or hide the dock
            toggle->setChecked(m_designDockShown.value(d, true));
            toggle->setEnabled(false);
        } else if (!away && aside) {
            toggle->setEnabled(true);
            d->setVisible(m_designDockShown.value(d, true));
            m_designDockShown.remove(d);
        }
    }
    if (away || !wasAway)
        return;
    {
        // A column the user made wider or narrower on the Results tab keeps the new width;
        // heights are put back in every column. After the window changed size, the columns
        // take the widths the user gave them, as far as the new size leaves room for them.
        QSet<Qt::DockWidgetArea> resizedAway;
        for (auto it = m_dockSizes.cbegin(); it != m_dockSizes.cend(); ++it) {
            QDockWidget* d = it.key();
            if (width() != m_widthWhenAway) {
                resizedAway.insert(dockWidgetArea(d));
            } else if (!m_designDocks.contains(d) && !d->isHidden() && d->width() != it.value().width()) {
                resizedAway.insert(dockWidgetArea(d));
                m_dockColumnWidths[dockWidgetArea(d)] = d->width();
                m_dockColumnsWindowWidth = width();
            }
        }
        QList<QDockWidget*> docks, wide;
        QList<int> heights, widths;
        for (auto it = m_dockSizes.cbegin(); it != m_dockSizes.cend(); ++it) {
            if (it.key()->isHidden() || it.key()->isFloating())
                continue;
            docks << it.key();
            heights << it.value().height();
            if (!resizedAway.contains(dockWidgetArea(it.key()))) {
                wide << it.key();
                widths << it.value().width();
            }
        }
        if (!docks.isEmpty())
            resizeDocks(docks, heights, Qt::Vertical);
        if (!wide.isEmpty())
            resizeDocks(wide, widths, Qt::Horizontal);
        if (width() != m_widthWhenAway)
            fitDocksToWidth();
    }
}

void MainWindow::createActions()
{
    QUndoStack* stack = m_document->undoStack();
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* newAct = file->addAction(tr("&New"), QKeySequence::New, this, [this] {
        if (maybeSave())
            newProject();
    });
    QAction* openAct = file->addAction(tr("&Open\u2026"), QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open"), QString(), tr(kOpenFilter));
        if (!path.isEmpty() && (loadsIntoProject(path) || maybeSave()))
            openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(tr("Open &Example"), this, [this] {
        if (maybeSave())
            loadExample();
    });
    file->addSeparator();
    QAction* saveAct = file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    file->addAction(tr("Save &As\u2026"), QKeySequence::SaveAs, this, &MainWindow::saveAs);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = stack->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = stack->createRedoAction(this, tr("&Redo"));
    // Ctrl+Shift+Z (the platform's Redo on Linux) and Ctrl+Y, which many users expect too.
    QList<QKeySequence> redoKeys = QKeySequence::keyBindings(QKeySequence::Redo);
    if (!redoKeys.contains(QKeySequence(tr("Ctrl+Y"))))
        redoKeys << QKeySequence(tr("Ctrl+Y"));
    redo->setShortcuts(redoKeys);
    edit->addAction(undo);
    edit->addAction(redo);
    // In a field with nothing of its own to undo, the keys undo and redo the project's edits.
    auto* forwarder = new UndoKeyForwarder(this, undo, redo);
    forwarder->setPendingCheck([this](const QWidget* field) { return m_modelPanel->holdsPendingEdit(field); });
    qApp->installEventFilter(forwarder);
    edit->addSeparator();
    m_canvasActions << edit->addAction(tr("&Copy"), QKeySequence::Copy, m_view, &ClusterView::copySelection)
                    << edit->addAction(tr("&Paste"), QKeySequence::Paste, m_view, &ClusterView::paste)
                    << edit->addAction(tr("&Delete"), QKeySequence::Delete, m_view, &ClusterView::deleteSelection)
                    << edit->addAction(tr("Select &All"), QKeySequence::SelectAll, m_view, &ClusterView::selectAllItems);

    QMenu* cluster = menuBar()->addMenu(tr("&Cluster"));
    QAction* addSwitch = cluster->addAction(studioIcon(QStringLiteral("switch")), tr("Add &Switch"), m_view,
                                            &ClusterView::addSwitchAtCenter);
    // Ctrl+Shift+S is Save As on GNOME, KDE and macOS (QKeySequence::SaveAs); Ctrl+Shift+W is
    // no standard key on any platform (the table in Qt's qplatformtheme.cpp).
    addSwitch->setShortcut(QKeySequence(tr("Ctrl+Shift+W", "add switch")));
    m_addSwitchAction = addSwitch;
    m_connectAction = cluster->addAction(studioIcon(QStringLiteral("connect")), tr("&Connect Tool"));
    m_connectAction->setCheckable(true);
    m_connectAction->setShortcut(QKeySequence(tr("Ctrl+L")));
    m_connectAction->setToolTip(tr("Connect: drag from one node or switch to another (or Shift+drag at any time)"));
    connect(m_connectAction, &QAction::toggled, m_view, &ClusterView::setConnectMode);
    connect(m_view, &ClusterView::connectModeChanged, m_connectAction, &QAction::setChecked);
    QAction* snap = cluster->addAction(studioIcon(QStringLiteral("snap")), tr("S&nap to Grid"));
    snap->setCheckable(true);
    snap->setChecked(true);
    connect(snap, &QAction::toggled, m_scene, &ClusterScene::setSnapToGrid);
    m_canvasActions << addSwitch << m_connectAction << snap;
    cluster->addSeparator();
    QAction* deviceTypes = cluster->addAction(tr("Device &Types\u2026"), this, [this] { editDeviceTypes(); });
    deviceTypes->setObjectName(QStringLiteral("editDeviceTypes"));
    deviceTypes->setToolTip(tr("Change a device type's figures for this project, or add a type of its own"));
    m_palette->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_palette->addAction(deviceTypes);
    QMenu* presetMenu = cluster->addMenu(tr("&Presets"));
    for (const auto& p : clusterPresets()) {
        const QString name = QString::fromStdString(p.name);
        presetMenu->addAction(name, this, [this, name] { loadClusterPreset(name); });
    }

    QMenu* model = menuBar()->addMenu(tr("&Model"));
    for (const auto& p : modelPresets()) {
        const QString name = QString::fromStdString(p.name);
        model->addAction(name, this, [this, name] {
            m_modelPanel->loadPreset(name);
            showTab(QStringLiteral("model"));
        });
    }
    model->addSeparator();
    model->addAction(tr("&Import Megatron Script\u2026"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Import a Megatron-LM launch script"), QString(),
                                                          tr("Shell scripts (*.sh *.bash);;All files (*)"));
        if (path.isEmpty())
            return;
        const QString error = m_modelPanel->importScript(path);
        if (!error.isEmpty())
            showError(tr("Cannot import the script"), error);
        showTab(QStringLiteral("model"));
    });

    QMenu* search = menuBar()->addMenu(tr("&Search"));
    m_runAction = search->addAction(studioIcon(QStringLiteral("run")), tr("&Run Search"), QKeySequence(Qt::Key_F5), this, [this] {
        // The Search dock says why it refuses; a field at fault on the Model tab is named in the
        // status bar too, beside the field the user is looking at.
        if (!m_searchPanel->run() && !m_modelPanel->pendingEdit().isEmpty())
            statusBar()->showMessage(tr("Cannot search: %1").arg(m_modelPanel->pendingEdit()), 10000);
    });
    m_cancelAction = search->addAction(studioIcon(QStringLiteral("stop")), tr("&Cancel Search"),
                                       QKeySequence(Qt::Key_Escape | Qt::SHIFT), m_searchPanel, &SearchPanel::cancel);
    m_cancelAction->setEnabled(false);
    search->addSeparator();
    m_loadProfileAction = search->addAction(tr("Load &Profile\u2026"), this, [this] {
        if (const QString path = openFileInProjectFolder(tr("Load profile"), tr("HAPMoE profiles (*.json);;All files (*)"));
            !path.isEmpty())
            loadProfile(path);
    });
    m_loadProfileAction->setObjectName(QStringLiteral("loadProfileAction"));
    m_loadProfileAction->setToolTip(tr("Cost plans with measured tables (a hapmoe.profile file, as hapmoe plan --profile)"));
    m_clearProfileAction = search->addAction(tr("C&lear Profile"), this, &MainWindow::clearProfile);
    m_clearProfileAction->setObjectName(QStringLiteral("clearProfileAction"));
    m_clearProfileAction->setToolTip(tr("Cost plans with the analytic defaults"));
    m_calibrateAction = search->addAction(tr("&Calibrate from Training Log\u2026"), this, [this] {
        if (const QString path = openFileInProjectFolder(tr("Megatron-LM training log of the selected plan's run"),
                                                         tr("Training logs (*.log *.txt *.out);;All files (*)"));
            !path.isEmpty())
            calibrateFromLog(path);
    });
    m_calibrateAction->setObjectName(QStringLiteral("calibrateAction"));
    m_calibrateAction->setEnabled(false);   // until a plan is selected (updateProfileActions)
    m_calibrateAction->setToolTip(tr("Fit the profile to a Megatron-LM log of a run of the selected plan "
                                     "(device efficiency, memory overhead, router imbalance), as hapmoe calibrate"));
    m_searchPanel->setProfileActions(m_loadProfileAction, m_clearProfileAction);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_canvasActions << m_viewMenu->addAction(tr("Zoom &In"), QKeySequence::ZoomIn, this, [this] { m_view->zoomBy(1.25); })
                    << m_viewMenu->addAction(tr("Zoom &Out"), QKeySequence::ZoomOut, this, [this] { m_view->zoomBy(0.8); });
    QAction* fit = m_viewMenu->addAction(studioIcon(QStringLiteral("fit")), tr("Zoom to &Fit"), QKeySequence(tr("Ctrl+0")),
                                         m_view, &ClusterView::zoomToFit);
    m_canvasActions << fit;
    m_viewMenu->addSeparator();
    auto* themes = new QActionGroup(this);
    QAction* light = m_viewMenu->addAction(tr("&Light Palette"), this, [this] { setTheme(false); });
    QAction* dark = m_viewMenu->addAction(tr("&Dark Palette"), this, [this] { setTheme(true); });
    light->setCheckable(true);
    dark->setCheckable(true);
    themes->addAction(light);
    themes->addAction(dark);
    (currentTheme() == ThemeKind::Dark ? dark : light)->setChecked(true);
    m_viewMenu->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>())
        m_viewMenu->addAction(d->toggleViewAction());

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setIconSize(QSize(20, 20));
    const QStyle* st = style();
    newAct->setIcon(st->standardIcon(QStyle::SP_FileIcon));
    openAct->setIcon(st->standardIcon(QStyle::SP_DialogOpenButton));
    saveAct->setIcon(st->standardIcon(QStyle::SP_DialogSaveButton));
    undo->setIcon(st->standardIcon(QStyle::SP_ArrowBack));
    redo->setIcon(st->standardIcon(QStyle::SP_ArrowForward));
    bar->addAction(newAct);
    bar->addAction(openAct);
    bar->addAction(saveAct);
    bar->addSeparator();
    bar->addAction(undo);
    bar->addAction(redo);
    // Undo and redo carry the command's name in their text: icon only, the name in the tooltip.
    for (QAction* a : {undo, redo})
        if (auto* button = qobject_cast<QToolButton*>(bar->widgetForAction(a)))
            button->setToolButtonStyle(Qt::ToolButtonIconOnly);
    bar->addSeparator();
    bar->addAction(addSwitch);
    bar->addAction(m_connectAction);
    bar->addAction(snap);
    bar->addAction(fit);
    bar->addSeparator();
    bar->addAction(m_runAction);
    bar->addAction(m_cancelAction);
}

// ---------------------------------------------------------------- documents

Project MainWindow::exampleProject()
{
    for (const auto& [path, content] : resources::embeddedResources()) {
        if (path.starts_with("examples/") && path.ends_with(".hapmoe")) {
            try {
                return readProject(content, std::string(path));
            } catch (const std::exception&) {
                break;   // fall back to the presets below
            }
        }
    }
    Project p;
    p.name = "Example";
    if (const ModelSpec* m = findModelPreset("Mixtral-S"))
        p.model = *m;
    if (const Cluster* c = findClusterPreset("32-3"))
        p.cluster = *c;
    return p;
}

void MainWindow::newProject()
{
    Project p;
    p.name = "Untitled";
    if (const ModelSpec* m = findModelPreset("Mixtral-S"))
        p.model = *m;
    m_document->resetProject(p, QString());
    m_autosave->discard();
}

void MainWindow::loadExample()
{
    Project p = exampleProject();
    fitLayout(p.cluster);
    m_document->resetProject(p, QString());
}

void MainWindow::appendOthers(std::vector<SavedPlan>& plans, const SearchResult& search)
{
    // The search compared its plans with these: the project keeps them to compare again.
    if (search.current)
        plans.push_back(SavedPlan{search.current->plan, search.current->prediction, SavedPlan::Source::Current});
    if (search.plans.empty())
        return;   // a search that found no plan leaves none but the current configuration
    if (search.uniform_baseline)
        plans.push_back(SavedPlan{search.uniform_baseline->plan, search.uniform_baseline->prediction, SavedPlan::Source::Uniform,
                                  search.uniform_baseline->plain_time_s});
    if (search.metis_baseline)
        plans.push_back(SavedPlan{search.metis_baseline->plan, search.metis_baseline->prediction, SavedPlan::Source::MetisStyle,
                                  search.metis_baseline->plain_time_s});
}

void MainWindow::takeSearchSettings(Project& p, const SearchResult& search)
{
    // What the search ran with, so that Run searches as it did (hapmoe plan --algorithm,
    // --target, --optimizer-offload, --mbs auto, --max-vpp). The target as asked: `target`
    // is the best plan's when the search took any; a document without `searched_target`
    // (older) leaves the project's Any, which finds the fastest plan of either.
    if (search.searched_target)
        p.search.target = *search.searched_target;
    p.search.algorithm = search.algorithm;
    p.search.optimizer_offload = search.optimizer_offload;
    p.search.search_micro_batch = !search.micro_batch_sizes.empty();
    p.search.max_vpp = search.max_vpp;
}

Project MainWindow::projectFromPlan(const PlanDocument& doc, const std::string& file, Warnings& warnings)
{
    Project p;
    p.name = QFileInfo(QString::fromStdString(file)).completeBaseName().toStdString();
    p.model = doc.model;
    p.cluster = doc.cluster;
    p.devices = doc.devices;
    const DeviceCatalog catalog = catalogWith(p.devices, file);
    validatePlanDocument(doc, catalog, file);
    // The search's plans that do not pass the same check are left out, as `hapmoe validate`
    // names them (search.alternatives[i]...); one without a prediction (written by hand) gets
    // the estimate `hapmoe estimate --plan` gives, not zeros.
    PlanDocument checked = doc;
    for (auto& w : dropInvalidSearchPlans(checked, catalog, file))
        warnings.push_back(std::move(w));
    if (checked.search) {
        const CostModel cost(doc.model, doc.cluster, catalog);
        auto estimated = [&cost](RankedPlan& rp) {
            if (rp.prediction.stages.empty())
                rp.prediction = cost.estimate(rp.plan);
        };
        for (RankedPlan& rp : checked.search->plans)
            estimated(rp);
        for (auto* other : {&checked.search->uniform_baseline, &checked.search->metis_baseline, &checked.search->current})
            if (*other)
                estimated(**other);
    }
    if (checked.search && !checked.search->plans.empty()) {
        // The search's ranked plans (the document's plan is the first) and the configuration
        // it was compared with.
        for (const RankedPlan& rp : checked.search->plans)
            p.plans.push_back(SavedPlan{rp.plan, rp.prediction, SavedPlan::Source::Search, rp.plain_time_s});
        appendOthers(p.plans, *checked.search);
        p.search.top_k = std::max(1, static_cast<int>(doc.search->plans.size()));
        p.plans_cancelled = checked.search->cancelled;
        p.plans_timed_out = checked.search->timed_out && !checked.search->cancelled;
        takeSearchSettings(p, *checked.search);
    } else {
        // A plan without a search (hapmoe estimate --json, or written by hand): its prediction,
        // or the estimate `hapmoe estimate --plan` gives. It is kept as the configuration the
        // project's searches compare with, as `hapmoe import -o` keeps a script's.
        const Prediction prediction = doc.prediction ? *doc.prediction : CostModel(doc.model, doc.cluster, catalog).estimate(doc.plan);
        p.plans.push_back(SavedPlan{doc.plan, prediction, SavedPlan::Source::Current});
    }
    for (auto& w : ProjectDocument::dropUnfitPlans(p, catalog, file))
        warnings.push_back(std::move(w));
    return p;
}

bool MainWindow::openFile(const QString& fileName)
{
    // A launch script (hapmoe-studio train.sh) is imported into the project's model, as
    // Model > Import Megatron Script does.
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("sh") || suffix == QLatin1String("bash")) {
        const QString error = m_modelPanel->importScript(fileName);
        if (!error.isEmpty()) {
            showError(tr("Cannot import the script"), error);
            return false;
        }
        showTab(QStringLiteral("model"));
        return true;
    }
    try {
        const std::string path = fileName.toStdString();
        const std::string text = readTextFile(path);
        // What the studio opens: the error for anything else names those, and where another
        // kind of file goes.
        static const std::string kOpened = "\"hapmoe.project\", \"hapmoe.plan\", \"hapmoe.model\" or \"hapmoe.cluster\"";
        const std::string format = [&] {
            try {
                return detectFormat(text, path);
            } catch (const InputError& e) {
                if (e.where() == "format")
                    throw InputError(path, "format", "missing required key (expected " + kOpened + ", the documents the studio opens)");
                throw;
            }
        }();
        if (format != kProjectFormat && format != kPlanFormat && format != kModelFormat && format != kClusterFormat)
            throw InputError(path, "format", "expected " + kOpened + " (the documents the studio opens), got \"" + format + "\""
                                                 + (format == kProfileFormat ? ": load a profile with Search > Load Profile"
                                                    : format == kDevicesFormat ? ": add device types with Cluster > Device Types"
                                                                               : ""));
        // A plan document (hapmoe plan -o plan.json) opens as a new project of its model,
        // cluster and device types, with its plans to explore.
        if (format == kPlanFormat) {
            Warnings warnings;
            Project p;
            QString opened;
            std::string noPlan;   // why the document's search found no plan
            // The context's warnings are readPlan's too: kept only when it is all there is to read.
            Warnings contextWarnings;
            if (const PlanContext context = readPlanContext(text, path, &contextWarnings); !context.has_plan && !context.no_plan_reason.empty()) {
                warnings = std::move(contextWarnings);
                // What `hapmoe plan` writes when nothing fits: the model and cluster to search
                // again, on more devices or with other settings.
                p.name = QFileInfo(fileName).completeBaseName().toStdString();
                p.model = context.model;
                p.cluster = context.cluster;
                p.devices = context.devices;
                catalogWith(p.devices, path);   // an alias that names another type is refused
                if (context.search)
                    takeSearchSettings(p, *context.search);
                noPlan = context.no_plan_reason;
                opened = tr("Opened the model and cluster of %1 as a new project; its search found no feasible plan: %2")
                             .arg(QFileInfo(fileName).fileName(), QString::fromStdString(context.no_plan_reason));
            } else {
                p = projectFromPlan(readPlan(text, path, &warnings), path, warnings);
                opened = tr("Opened the plans of %1 as a new project").arg(QFileInfo(fileName).fileName());
            }
            fitLayout(p.cluster);
            m_document->resetProject(p, QString(), true);
            if (p.plans.empty() && !noPlan.empty()) {
                // The Search dock and the explorer say why there is no plan, as after a search.
                SearchResult none;
                none.no_plan_reason = noPlan;
                m_searchPanel->showSavedPlans(none, QFileInfo(fileName).fileName());
                m_explorer->setResult(none);
            }
            // Save As offers the plan's folder.
            m_saveFolder = QFileInfo(fileName).absolutePath();
            showWithWarnings({opened}, warnings);
            if (!p.plans.empty())
                showTab(QStringLiteral("results"));
            return true;
        }
        // A model or cluster file (hapmoe.model, hapmoe.cluster, as the command line takes
        // them) goes into the project open now, in place of its model or cluster, as a preset
        // does: one step to undo.
        if (format == kModelFormat || format == kClusterFormat) {
            Warnings warnings;
            const QString name = QFileInfo(fileName).fileName();
            if (format == kModelFormat) {
                m_document->setModel(readValidModel(text, path, &warnings), tr("Load model %1").arg(name));
                showTab(QStringLiteral("model"));
            } else {
                Cluster c = readValidCluster(text, path, m_document->catalog(), &warnings);
                fitLayout(c);
                m_document->setCluster(c, tr("Load cluster %1").arg(name));
                showTab(QStringLiteral("designer"));
                m_view->zoomToFit();
            }
            showWithWarnings({format == kModelFormat ? tr("Loaded the model of %1 into the project").arg(name)
                                                     : tr("Loaded the cluster of %1 into the project").arg(name)},
                             warnings);
            return true;
        }
        Warnings warnings;
        Project p = readProject(text, path, &warnings);
        // On the project's own device types, not those of the project open now.
        const DeviceCatalog catalog = catalogWith(p.devices, path);
        ProjectDocument::checkProjectProfile(p, catalog, path, &warnings);
        for (auto& w : ProjectDocument::dropUnfitPlans(p, catalog, path))
            warnings.push_back(std::move(w));
        // A user's drawing is kept as it is; a cluster without any layout gets one, and one
        // drawn denser than the canvas items (files the command line wrote from a preset) is
        // spread just enough that no two items overlap.
        fitLayout(p.cluster);
        m_document->resetProject(p, QFileInfo(fileName).absoluteFilePath());
        addRecentFile(QFileInfo(fileName).absoluteFilePath());
        showWithWarnings({}, warnings);
        return true;
    } catch (const std::exception& e) {
        // InputError::what() names the file, the JSON path and what was expected.
        showError(tr("Cannot open %1").arg(QFileInfo(fileName).fileName()), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::saveTo(const QString& fileName)
{
    try {
        m_document->save(fileName);
        m_autosave->discard();
        addRecentFile(QFileInfo(fileName).absoluteFilePath());
        statusBar()->showMessage(tr("Saved %1").arg(fileName), 5000);
        return true;
    } catch (const std::exception& e) {
        showError(tr("Cannot save %1").arg(QFileInfo(fileName).fileName()), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::save()
{
    if (m_document->fileName().isEmpty())
        return saveAs();
    return saveTo(m_document->fileName());
}

bool MainWindow::saveAs()
{
    const QString name = m_document->displayName();
    const QString start = m_document->fileName().isEmpty() && !m_saveFolder.isEmpty() ? QDir(m_saveFolder).filePath(name) : name;
    QString path = QFileDialog::getSaveFileName(this, tr("Save project"), start, tr(kFileFilter));
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".hapmoe");
    return saveTo(path);
}

bool MainWindow::loadProfile(const QString& fileName)
{
    try {
        Warnings warnings;
        const Profile profile = ProjectDocument::readProfileFile(fileName, m_document->model(), m_document->catalog(), &warnings);
        m_document->setProfile(profile, QFileInfo(fileName).absoluteFilePath());
        showWithWarnings({tr("%1: the next search uses it").arg(SearchPanel::profileSummary(profile, fileName.toStdString()))},
                         warnings);
        return true;
    } catch (const std::exception& e) {
        // InputError::what() names the file, the JSON path and what was expected.
        showError(tr("Cannot load the profile %1").arg(QFileInfo(fileName).fileName()), QString::fromUtf8(e.what()));
        return false;
    }
}

void MainWindow::clearProfile()
{
    if (!m_document->profile())
        return;
    m_document->clearProfile();
    statusBar()->showMessage(tr("Analytic defaults: the next search uses no profile"), 10000);
}

QString MainWindow::projectFolder() const
{
    return m_document->fileName().isEmpty() ? QString() : QFileInfo(m_document->fileName()).absolutePath();
}

QString MainWindow::openFileInProjectFolder(const QString& title, const QString& filter)
{
    return QFileDialog::getOpenFileName(this, title, projectFolder(), filter);
}

CalibrateDialog* MainWindow::calibrateFromLog(const QString& logFile)
{
    const std::optional<PlanDocument> doc = m_explorer->selectedPlanDocument();
    if (!doc || !m_explorer->context().catalog) {
        showError(tr("Cannot calibrate"), tr("Select the plan the run used in the Results tab (run a search, or open a "
                                             "project or plan file with saved plans)."));
        return nullptr;
    }
    // Window-modal: the plan it calibrates stays the one it was opened for. The base is the
    // project's profile, which "Use as Project Profile" replaces (as hapmoe calibrate starts
    // from a project's profile); the plan's device types are those it was costed on.
    const ExplorerContext& context = m_explorer->context();
    auto* dialog = new CalibrateDialog(*doc, *context.catalog, m_document->profile(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &CalibrateDialog::useProfile, this, [this](const Profile& profile, const QString& log) {
        m_document->setProfile(profile, QString());
        statusBar()->showMessage(tr("Profile calibrated from %1: the next search uses it (Edit > Undo gives the previous one back)")
                                     .arg(QFileInfo(log).fileName()),
                                 15000);
    });
    dialog->resize(std::min(900, std::max(600, width() * 3 / 5)), std::min(760, std::max(480, height() * 4 / 5)));
    dialog->open();
    dialog->calibrate(logFile);
    return dialog;
}

void MainWindow::updateProfileActions()
{
    const bool idle = !m_searchPanel->isRunning();
    m_loadProfileAction->setEnabled(idle);
    m_clearProfileAction->setEnabled(idle && m_document->profile().has_value());
    m_calibrateAction->setEnabled(idle && m_explorer->selectedPlan() >= 0);
}

Cluster MainWindow::clusterPresetOrShorthand(const QString& name, const DeviceCatalog& catalog)
{
    const std::string spec = name.trimmed().toStdString();
    if (const Cluster* preset = findClusterPreset(spec))
        return *preset;
    // A shorthand has a colon, which no preset name has; its own errors say what is wrong.
    if (spec.find(':') != std::string::npos)
        return clusterFromShorthand(spec, catalog);
    std::string names;
    for (const PresetInfo& p : clusterPresets())
        names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("", "", "no cluster preset named \"" + spec + "\"; the presets are " + names
                                 + ", or a shorthand TYPE:NODESxPER_NODE,... such as \"H800:2x8,910B-376T:2x8\"");
}

bool MainWindow::loadClusterPreset(const QString& name)
{
    Cluster c;
    try {
        c = clusterPresetOrShorthand(name, m_document->catalog());
    } catch (const InputError& e) {
        showError(tr("Unknown cluster"), QString::fromStdString(e.what()));
        return false;
    }
    fitLayout(c);
    m_document->setCluster(c, tr("Load cluster preset %1").arg(name));
    showTab(QStringLiteral("designer"));
    m_view->zoomToFit();
    return true;
}

void MainWindow::showTab(const QString& name)
{
    if (name == QLatin1String("designer") || name == QLatin1String("cluster"))
        m_tabs->setCurrentWidget(m_view);
    else if (name == QLatin1String("model"))
        m_tabs->setCurrentWidget(m_modelPanel);
    else if (name == QLatin1String("results"))
        m_tabs->setCurrentWidget(m_explorer);
}

bool MainWindow::offerRecovery()
{
    const auto orphans = AutosaveManager::orphans();
    if (orphans.isEmpty())
        return false;
    const AutosaveManager::Recovery& r = orphans.first();
    const QString what = r.originalPath.isEmpty() ? r.name : r.originalPath;
    QString text = tr("HAPMoE Studio did not close properly. Unsaved changes to %1 from %2 were kept.\n\nRecover them?")
                       .arg(what, QLocale().toString(r.savedAt.toLocalTime(), QLocale::ShortFormat));
    // A project opened already (a file given on the command line) gives way to the recovered one.
    if (m_document->isModified() || !m_document->fileName().isEmpty())
        text += tr(" They replace %1, which is open now.").arg(m_document->displayName());
    const auto answer = QMessageBox::question(this, tr("Recover unsaved work"), text,
                                              QMessageBox::Yes | QMessageBox::No | QMessageBox::Cancel, QMessageBox::Yes);
    if (answer == QMessageBox::Cancel)
        return false;   // keep it for another time
    bool recovered = false;
    if (answer == QMessageBox::Yes) {
        if (!maybeSave())
            return false;   // the open project stays, and the autosave for another time
        recovered = recover(r.autosavePath, r.originalPath);
        if (!recovered)
            return false;
    }
    for (const auto& o : orphans)
        if (o.id == r.id)
            AutosaveManager::remove(o);
    return recovered;
}

bool MainWindow::recover(const QString& autosavePath, const QString& originalPath)
{
    try {
        const std::string path = autosavePath.toStdString();
        Project p = readProject(readTextFile(path), path);
        const DeviceCatalog catalog = catalogWith(p.devices, path);
        ProjectDocument::checkProjectProfile(p, catalog, path);
        const Warnings dropped = ProjectDocument::dropUnfitPlans(p, catalog, path);
        m_document->resetProject(p, originalPath, true);
        if (!dropped.empty())
            statusBar()->showMessage(QString::fromStdString(dropped.front()), 15000);
        else
            statusBar()->showMessage(tr("Recovered the unsaved changes to %1").arg(m_document->displayName()), 15000);
        m_autosave->saveNow();
        return true;
    } catch (const std::exception& e) {
        showError(tr("Cannot recover"), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified() || m_batch)
        return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"), tr("%1 has unsaved changes. Save them?").arg(m_document->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    if (answer == QMessageBox::Discard) {
        m_autosave->discard();
        return true;
    }
    return false;
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    // Closing during a search: stop it; the runner waits for its workers when destroyed.
    m_searchPanel->cancel();
    m_autosave->discard();
    event->accept();
}

void MainWindow::showWithWarnings(QStringList lines, const std::vector<std::string>& warnings)
{
    // The status bar's line goes after a while: the warnings stay in the Problems dock.
    QStringList notes;
    for (const auto& w : warnings)
        notes << QString::fromStdString(w);
    m_problems->setFileNotes(notes);
    lines << notes;
    if (!lines.isEmpty())
        statusBar()->showMessage(lines.join(QStringLiteral("; ")), 15000);
}

void MainWindow::showError(const QString& title, const QString& message)
{
    m_lastError = message;
    if (m_batch) {
        std::cerr << title.toStdString() << ": " << message.toStdString() << std::endl;
        return;
    }
    QMessageBox::critical(this, title, message);
}

void MainWindow::updateTitle()
{
    setWindowTitle(tr("%1[*] \u2014 HAPMoE Studio").arg(m_document->displayName()));
    setWindowModified(m_document->isModified());
}

QString MainWindow::statusSummary() const { return m_totals->text(); }

void MainWindow::updateStatus()
{
    const Cluster& c = m_document->cluster();
    const DeviceCatalog& catalog = m_document->catalog();
    std::map<std::string, int> perType;
    double peak = 0;
    int devices = 0;
    for (const auto& n : c.nodes) {
        const DeviceType* t = catalog.find(n.device_type);
        perType[t ? t->name : n.device_type] += n.count;
        devices += n.count;
        if (t)
            peak += n.count * t->bf16_tflops;
    }
    QStringList parts;
    for (const auto& [type, count] : perType)
        parts << QStringLiteral("%1 \u00d7 %2").arg(count).arg(QString::fromStdString(type));
    const int nodes = static_cast<int>(c.nodes.size());
    m_totals->setText(tr("%1  |  %2 in %3  |  peak %4 PFLOP/s BF16")
                          .arg(parts.isEmpty() ? tr("no devices") : parts.join(QStringLiteral(", ")),
                               devices == 1 ? tr("1 device") : tr("%1 devices").arg(devices),
                               nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(nodes))
                          .arg(peak / 1000.0, 0, 'f', 1));
}

// ---------------------------------------------------------------- recent files

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::addRecentFile(const QString& fileName)
{
    QStringList files = recentFiles();
    files.removeAll(fileName);
    files.prepend(fileName);
    while (files.size() > kMaxRecent)
        files.removeLast();
    QSettings().setValue(QStringLiteral("recentFiles"), files);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = recentFiles();
    for (const QString& f : files)
        m_recentMenu->addAction(QFileInfo(f).fileName() + QStringLiteral("  (") + QFileInfo(f).absolutePath() +
                                    QLatin1Char(')'),
                                this, [this, f] {
                                    if (maybeSave())
                                        openFile(f);
                                });
    if (files.isEmpty())
        m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear List"), this, [] { QSettings().remove(QStringLiteral("recentFiles")); });
    }
}

// ---------------------------------------------------------------- search results

void MainWindow::onSearchFinished(const SearchResult& result)
{
    ExplorerContext context;
    context.model = m_searchPanel->runner()->model();
    context.cluster = m_searchPanel->runner()->cluster();
    context.catalog = m_searchPanel->runner()->catalog();   // the device types it ran on
    context.script = currentScript();
    context.profile = m_searchPanel->runner()->profile();   // the profile the search ran with
    m_explorer->setContext(context);
    m_explorer->setResult(result);
    // The project keeps what the explorer shows: the plans of this search, or none when it
    // found none (the previous search's plans would be saved as if they were its result).
    std::vector<SavedPlan> saved;
    for (const auto& rp : result.plans)
        saved.push_back(SavedPlan{rp.plan, rp.prediction, SavedPlan::Source::Search, rp.plain_time_s});
    appendOthers(saved, result);
    m_document->setSavedPlans(saved, context.model, context.cluster, context.profile, *context.catalog, result.cancelled,
                              result.timed_out);
    updateOutdated();
    if (!result.plans.empty())
        showTab(QStringLiteral("results"));
}

std::optional<ImportedScript> MainWindow::currentScript() const
{
    const std::string& script = m_document->project().current_script;
    if (script.empty())
        return std::nullopt;
    try {
        return importMegatronScript(readTextFile(script), script, m_document->project().current_script_inputs);
    } catch (const std::exception&) {
        // The search panel says why the script is not used when a search starts.
        return std::nullopt;
    }
}

void MainWindow::followNames()
{
    // Plans that still fit the project differ from it in canvas positions and names only.
    if (m_explorer->planCount() > 0 && m_document->savedPlansCurrent())
        m_explorer->followNames(m_document->model(), m_document->cluster());
}

void MainWindow::updateOutdated()
{
    const bool outdated = m_explorer->planCount() > 0 && !m_document->savedPlansCurrent();
    m_explorer->setOutdated(outdated);
    m_searchPanel->setOutdated(outdated);
}

void MainWindow::showSavedPlans()
{
    const Project& p = m_document->project();
    SearchResult result;
    for (const auto& sp : p.plans) {
        if (!sp.prediction)
            continue;
        const RankedPlan ranked{sp.plan, *sp.prediction, sp.plain_time_s};
        switch (sp.source) {
        case SavedPlan::Source::Current: result.current = ranked; break;
        case SavedPlan::Source::Uniform: result.uniform_baseline = ranked; break;
        case SavedPlan::Source::MetisStyle: result.metis_baseline = ranked; break;
        case SavedPlan::Source::Search: result.plans.push_back(ranked); break;
        }
    }
    result.cancelled = p.plans_cancelled;
    result.timed_out = p.plans_timed_out;
    // The Search dock lists the same plans in the same rows as the explorer (before the
    // explorer selects its first row, which the dock then highlights).
    m_searchPanel->showSavedPlans(result, m_document->displayName());
    if (result.plans.empty() && !result.current)
        return;
    ExplorerContext context;
    context.model = p.model;
    context.cluster = p.cluster;
    context.catalog = m_document->catalog();
    // Exports of the saved plans carry the script's other flags, as after a search.
    context.script = currentScript();
    // The file keeps plans only with the profile they were costed with (savedPlansCurrent).
    context.profile = p.profile;
    m_explorer->setContext(context);
    m_explorer->setResult(result);
}

bool MainWindow::editDeviceTypes(const QString& select)
{
    // Window-modal: the types it edits are the project's as they were when it opened.
    auto* dialog = new DeviceTypesDialog(m_document, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!select.isEmpty() && !dialog->selectType(select)) {
        delete dialog;
        return false;
    }
    dialog->open();
    return true;
}

void MainWindow::setTheme(bool dark)
{
    applyTheme(dark ? ThemeKind::Dark : ThemeKind::Light);
    QSettings().setValue(QStringLiteral("theme"), dark ? QStringLiteral("dark") : QStringLiteral("light"));
    m_scene->update();
}

} // namespace hapmoe::ui
