#pragma once
// Search settings (target, algorithm, top K, delta, eta, time limit), Run and Cancel, live
// progress (states explored, pruned by each rule, best time so far) and the ranked plans
// with the baselines when the search ends.

#include "profile/Profile.h"
#include "search/Search.h"

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;
class QTreeWidget;
class QAction;

namespace hapmoe::ui {

class ProjectDocument;
class SearchRunner;
class SpinBoxRangeCheck;

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(ProjectDocument* document, QWidget* parent = nullptr);
    ~SearchPanel() override;

    SearchRunner* runner() const { return m_runner; }
    bool isRunning() const;
    QPushButton* runButton() const { return m_run; }
    QPushButton* cancelButton() const { return m_cancel; }
    QTreeWidget* resultList() const { return m_results; }
    QLabel* statusLabel() const { return m_status; }
    // The finished search's notes under the status, folded behind notesToggle() ("2 notes").
    QLabel* notesLabel() const { return m_notes; }
    QToolButton* notesToggle() const { return m_notesToggle; }
    QLabel* outdatedLabel() const { return m_outdated; }
    // "Profile: NAME (file)" or "Analytic defaults": what the next search costs plans with.
    QLabel* profileLabel() const { return m_profile; }
    // The main window's Load Profile and Clear Profile actions, in the menu of a button beside
    // the label.
    void setProfileActions(QAction* load, QAction* clear);
    QPushButton* profileButton() const { return m_profileButton; }
    // The label's text for a project's profile and the file it came from.
    static QString profileSummary(const std::optional<Profile>& profile, const std::string& file);
    // Options the search runs with (from the document's settings).
    SearchOptions currentOptions() const;
    // The status's comparison of the best plan with the uniform baseline, right both ways:
    // "1.68× faster than the uniform baseline", "the uniform baseline is 1.68× faster".
    static QString baselineComparison(double planSeconds, double baselineSeconds);
    // The same for a search's result, or why there is none to make: no uniform baseline
    // (none fits the cluster, or the search stopped before it ran) or one that does not fit.
    // Empty without plans, and for the uniform search, whose best plan is its baseline.
    static QString baselineStatus(const SearchResult& result);
    // What the status says of the exact check (docs/search.md section 7: what it found, or
    // which limit stopped it or kept it from running) and of the optimizer offload; empty
    // without plans, and when there is nothing to say.
    static QString checkStatus(const SearchResult& result);
    // How the run ended, the status's first part: "5 plans in 1.2 s", the micro-batch sizes
    // searched, a cancel or the time limit (best so far shown), and the list of alternatives
    // the time limit cut short (SearchResult::list_cut); without plans, why there are none.
    static QString runStatus(const SearchResult& result);
    // The best plan against the current configuration: "1.05× faster than the current
    // configuration" (per sequence when their global batches differ; "0.2 % faster" below
    // 1.005x, "as fast as" below 0.05 %), or core's currentConfigurationNote when the current
    // one is as fast or faster; empty without plans, without a current configuration, or when
    // it does not fit (its row says why).
    static QString currentStatus(const SearchResult& result);
    // Why the line under the settings says a value was not taken; empty when it is hidden.
    QString inputMessage() const;
    // The ranked list's columns.
    enum ResultColumn { RankColumn, PlanColumn, IterationColumn, TokensColumn, MfuColumn, ShapeColumn, ResultColumnCount };

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;
    // The theme changed: the outdated line's colour follows; a font or style: the settings'
    // widths are measured again.
    void changeEvent(QEvent* event) override;

public slots:
    // Returns false (and says why in the panel, and in refusal()) when the project cannot be
    // searched.
    bool run();
    void cancel();
    // Why the last run() returned false ("Cannot search: cluster.nodes[1].host: ..."); empty
    // after a run that started.
    QString refusal() const { return m_refusal; }
    // Stops a running search whose project is gone (New, Open, a reset): its result is
    // dropped when it arrives, and the list keeps what the new project shows.
    void abandon();
    // Highlights the plan the explorer shows (same row order: plans, then baselines).
    void showCurrentPlan(int row);
    // The plans a project was opened with (`saved.plans` in their saved order, then the
    // current configuration when the file has it), in the list as the explorer shows them.
    // The file keeps the plans, not the search's counts or baselines, so the panel shows no
    // progress and no counts, and says where the plans came from (`source`, the file's
    // name). Without plans: the panel as before any search. Ignored while a search runs.
    void showSavedPlans(const SearchResult& saved, const QString& source);
    // The listed plans were computed for a model or cluster that has changed since: a line
    // above the list says so (the explorer's title does too) until the next search.
    void setOutdated(bool outdated);
    // A field elsewhere (the Model tab) shows a value the project did not take, named in
    // `problem` ("Layers is 0, ..."): Run refuses, naming it, until it is empty again.
    void setPendingEdit(const QString& problem);

signals:
    // A value typed into a setting was not taken; the message names the field.
    void inputRejected(const QString& message);
    void searchStarted();
    void searchFinished(const hapmoe::SearchResult& result);
    // The run is over, whether it finished, failed or was abandoned.
    void searchStopped();
    void planActivated(int row);

private:
    void refreshSettings();
    void commitSettings();
    void showProgress(const SearchProgress& progress);
    void showResult(const SearchResult& result);
    // The ranked plans, then the baselines and the current configuration; the first selected.
    // experts: the model is a mixture of experts; a dense model's shapes leave out EP and ETP.
    void fillList(const SearchResult& result, bool experts);
    // Progress and counts are a running or finished search's; plans from a file have neither.
    void showSearchFigures(bool visible);
    // Columns as wide as their contents, the plan's name taking what is left; in a narrow
    // dock Tokens/s, then MFU, give way (the explorer's table and the name's tooltip have
    // them), so that the shape at the right end is never cut.
    void fitResultColumns();
    // The settings' label and field pairs, two to a row or one (a narrow dock).
    void arrangeSettings(bool twoColumns);
    // The box's minimum widths with two pairs a row and with one; it asks for the second.
    void measureSettings();
    // Two pairs a row when the panel, this wide, has room for them.
    void arrangeForWidth(int width);
    void setRunning(bool running);
    // The status line (rich text or plain) and the notes folded under it (plain text each).
    void showStatus(const QString& text, const QStringList& notes = {});
    void refreshProfile();

    ProjectDocument* m_document;
    SearchRunner* m_runner;
    QComboBox* m_target;
    QComboBox* m_algorithm;
    QComboBox* m_offload;
    QDoubleSpinBox* m_headroom = nullptr;   // per cent of device memory kept free
    QSpinBox* m_topK;
    QSpinBox* m_maxVpp;
    QDoubleSpinBox* m_delta;
    QDoubleSpinBox* m_eta;
    QDoubleSpinBox* m_timeLimit;
    QCheckBox* m_exact;
    QCheckBox* m_microBatch = nullptr;   // search micro-batch sizes 1, 2, 4, 8
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QFormLayout* m_live;
    QLabel* m_states;
    QLabel* m_pruned;
    QLabel* m_best;
    QLabel* m_status;
    QToolButton* m_notesToggle = nullptr;
    QLabel* m_notes = nullptr;
    bool m_notesOpen = false;   // the user unfolded the notes: they stay so for the next search
    QLabel* m_outdated;
    QLabel* m_profile;
    QPushButton* m_profileButton;   // its menu: Load Profile..., Clear Profile
    QString m_scriptNote;   // how the imported script's own run differs from the comparison
    QString m_scriptProblem;   // why the imported script's configuration is not estimated
    QTreeWidget* m_results;
    bool m_updating = false;
    bool m_abandoned = false;      // the running search's project is gone: drop its result
    QString m_refusal;             // why the last Run was refused, as plain text
    bool m_refusalShown = false;   // the status says why Run refused; cleared by the next edit
    QString m_pendingEdit;         // a field elsewhere holds a value not taken (setPendingEdit)
    bool m_pendingShown = false;   // the status says Run refused for it
    SpinBoxRangeCheck* m_rangeCheck = nullptr;   // and its line under the settings
    QWidget* m_settingsBox = nullptr;
    QGridLayout* m_settingsForm = nullptr;
    QList<QPair<QLabel*, QWidget*>> m_settingPairs;   // label (none for the check box), field
    bool m_twoColumns = true;
    int m_twoColumnsMinWidth = 0;   // the box's minimum width with two pairs a row
};

} // namespace hapmoe::ui
