#pragma once
// The main window of hapmoe-studio: the cluster designer, the model panel and the results
// (plan explorer) as tabs; the device palette, cluster presets, property editor, search
// panel and problems list as docks. Owns the document and its autosave; only this class
// shows message boxes.

#include "megatron/ScriptImport.h"
#include "search/Search.h"

#include <QHash>
#include <QMainWindow>
#include <QStringList>

#include <optional>
#include <string>
#include <utility>
#include <vector>

class QAction;
class QDockWidget;
class QLabel;
class QTreeWidget;
class QMenu;
class QTabWidget;

namespace hapmoe {
struct PlanDocument;
struct SavedPlan;
struct Project;
}

namespace hapmoe::ui {

class AutosaveManager;
class CalibrateDialog;
class ClusterScene;
class ClusterView;
class DevicePalette;
class ModelPanel;
class PlanExplorerWidget;
class ProblemsPanel;
class ProjectDocument;
class PropertyEditor;
class SearchPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ProjectDocument* document() const { return m_document; }
    ClusterScene* clusterScene() const { return m_scene; }
    ClusterView* clusterView() const { return m_view; }
    DevicePalette* devicePalette() const { return m_palette; }
    QTreeWidget* clusterPresetList() const { return m_presets; }
    PropertyEditor* propertyEditor() const { return m_properties; }
    ProblemsPanel* problemsPanel() const { return m_problems; }
    ModelPanel* modelPanel() const { return m_modelPanel; }
    SearchPanel* searchPanel() const { return m_searchPanel; }
    PlanExplorerWidget* explorer() const { return m_explorer; }
    AutosaveManager* autosave() const { return m_autosave; }
    QTabWidget* tabs() const { return m_tabs; }
    QAction* addSwitchAction() const { return m_addSwitchAction; }

    // Batch mode (screenshots, tests): no dialogs; errors go to stderr and lastError().
    void setBatchMode(bool on) { m_batch = on; }
    QString lastError() const { return m_lastError; }

    // The built-in example project (resources/examples), or a default project.
    static Project exampleProject();
    void newProject();
    void loadExample();
    bool openFile(const QString& fileName);
    bool saveTo(const QString& fileName);
    bool save();
    bool saveAs();
    // A cluster preset by name (any case), or the shorthand TYPE:NODESxPER_NODE,... as the
    // CLI's --cluster takes it ("H800:2x8,910B-376T:2x8").
    bool loadClusterPreset(const QString& name);
    // The cluster loadClusterPreset loads, a shorthand's types read from catalog (the
    // project's); throws InputError naming the presets when the name is neither a preset nor
    // a valid shorthand.
    static Cluster clusterPresetOrShorthand(const QString& name, const DeviceCatalog& catalog);
    // Cluster > Device Types: the project's own types (DeviceTypesDialog), window-modal and
    // open until its OK or Cancel, at the type `select` names (its name or an alias; the
    // first type when empty). Returns false, opening nothing, when no type has that name.
    bool editDeviceTypes(const QString& select = {});
    // Reads a hapmoe.profile file, checks it as `hapmoe validate` does and makes it the
    // project's (one undo step); a bad file shows a message naming the file, the field and what
    // was expected, and changes nothing.
    bool loadProfile(const QString& fileName);
    // Back to the analytic defaults (one undo step).
    void clearProfile();
    // Search > Calibrate from Training Log: a CalibrateDialog for the explorer's selected plan,
    // on the device types it was costed on, from the project's profile, reading logFile;
    // "Use as Project Profile" makes the calibrated profile the project's (one undo step).
    // Returns the open dialog, or nullptr (and a message) when no plan is selected.
    CalibrateDialog* calibrateFromLog(const QString& logFile);
    QAction* loadProfileAction() const { return m_loadProfileAction; }
    QAction* clearProfileAction() const { return m_clearProfileAction; }
    QAction* calibrateAction() const { return m_calibrateAction; }
    // "designer", "model" or "results".
    void showTab(const QString& name);
    // Offers the autosaves of sessions that crashed; returns true if one was recovered.
    bool offerRecovery();
    // Loads an autosave as a modified project under its original file name.
    bool recover(const QString& autosavePath, const QString& originalPath);
    QString statusSummary() const;
    QStringList recentFiles() const;

protected:
    void closeEvent(QCloseEvent* event) override;
    bool event(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void createActions();
    void createDocks();
    void updateTitle();
    void updateStatus();
    void addRecentFile(const QString& fileName);
    void rebuildRecentMenu();
    bool maybeSave();
    void showError(const QString& title, const QString& message);
    // The lines, then a file's warnings, on one status-bar message (nothing when both are empty).
    void showWithWarnings(QStringList lines, const std::vector<std::string>& warnings);
    void onSearchFinished(const SearchResult& result);
    // A plan document as a new project: its model, cluster and device types, and its plans
    // (the search's ranked plans and current configuration, or the one plan, estimated when the
    // document has no prediction). Throws InputError as readPlan and validatePlanDocument do.
    static Project projectFromPlan(const PlanDocument& doc, const std::string& file, Warnings& warnings);
    // The current configuration and the baselines of a search, as saved plans.
    static void appendOthers(std::vector<SavedPlan>& plans, const SearchResult& search);
    // The settings a search ran with (its document's "search"), as the project's.
    static void takeSearchSettings(Project& p, const SearchResult& search);
    void showSavedPlans();
    // Marks the explorer's plans as computed for an earlier model or cluster.
    void updateOutdated();
    // The project's Megatron script, imported; none when it has none or it cannot be read.
    std::optional<ImportedScript> currentScript() const;
    void setTheme(bool dark);
    // The saved project's folder (empty for a project never saved), where file dialogs start.
    QString projectFolder() const;
    // A file to open, asked for in the project's folder; empty when the user cancels.
    QString openFileInProjectFolder(const QString& title, const QString& filter);
    // Load and Clear Profile: not while a search runs (it reads the profile when it starts);
    // Calibrate also needs a selected plan.
    void updateProfileActions();
    // Another tab: the canvas actions (copy, paste, delete, select all, add switch, connect,
    // snap to grid, zoom) are enabled only on the Cluster designer; the Results tab takes the width of the
    // designer's docks (palette, presets, properties, problems), and back on another tab
    // they show as the user last left them.
    void onTabChanged();
    // The side dock columns at the widths the user gave them, narrower in proportion when
    // they would leave the central tabs less than their share of a small window.
    void fitDocksToWidth();
    int dockColumnWidth(Qt::DockWidgetArea area) const;
    // The explorer's what-if suggestion, and its removal once it is stale.
    static QString whatIfMessagePrefix();
    void clearWhatIfMessage();
    // A value a field did not take, in the status bar until the project changes (an undo,
    // another value): then the value it says the field kept may no longer be the field's.
    void showRefusedValue(const QString& message);
    void clearRefusedValue();
    // Renamed hosts or model while the plans stay current: the explorer's exports use the
    // names as they are now.
    void followNames();

    ProjectDocument* m_document;
    AutosaveManager* m_autosave;
    ClusterScene* m_scene;
    ClusterView* m_view;
    DevicePalette* m_palette;
    QTreeWidget* m_presets;
    PropertyEditor* m_properties;
    ProblemsPanel* m_problems;
    ModelPanel* m_modelPanel;
    SearchPanel* m_searchPanel;
    PlanExplorerWidget* m_explorer;
    QTabWidget* m_tabs;
    QLabel* m_totals;
    QLabel* m_zoom;
    QLabel* m_problemCount;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_connectAction = nullptr;
    QAction* m_addSwitchAction = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
    QAction* m_loadProfileAction = nullptr;
    QAction* m_clearProfileAction = nullptr;
    QAction* m_calibrateAction = nullptr;
    QString m_lastError;
    QString m_saveFolder;   // where Save As starts for a project never saved (a plan document's folder)
    QString m_refusedValueMessage;   // showRefusedValue's message while the status bar shows it
    bool m_batch = false;
    QList<QDockWidget*> m_designDocks;
    // Edit and canvas actions (copy, paste, delete, select all, add switch, connect, zoom):
    // enabled only while the canvas is on screen, so a key pressed on the Model or Results
    // tab never changes a cluster the user cannot see.
    QList<QAction*> m_canvasActions;
    QHash<QDockWidget*, bool> m_designDockShown;   // of the docks a tab has stepped aside: shown before
    QHash<QDockWidget*, QSize> m_dockSizes;         // every dock's size when they went away
    bool m_designDocksAway = false;
    int m_widthWhenAway = 0;                        // the window's width when they went away
    // The width of each side column as the user left it (a separator dragged): the window
    // growing again gives it back, however narrow a smaller window made it.
    QHash<Qt::DockWidgetArea, int> m_dockColumnWidths;
    int m_dockColumnsWindowWidth = 1600;            // the window's width when they were given
    std::pair<int, int> m_dockWidthsAtPress{-1, -1};   // left and right column widths at the last press
};

} // namespace hapmoe::ui
