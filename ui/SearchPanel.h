#pragma once
// Search settings (target, algorithm, top K, delta, eta, time limit), Run and Cancel, live
// progress (states explored, pruned by each rule, best time so far) and the ranked plans
// with the baselines when the search ends.

#include "search/Search.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTreeWidget;

namespace hapmoe::ui {

class ProjectDocument;
class SearchRunner;

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
    // Options the search runs with (from the document's settings).
    SearchOptions currentOptions() const;

public slots:
    // Returns false (and says why in the panel) when the project cannot be searched.
    bool run();
    void cancel();
    // Highlights the plan the explorer shows (same row order: plans, then baselines).
    void showCurrentPlan(int row);

signals:
    void searchStarted();
    void searchFinished(const hapmoe::SearchResult& result);
    void planActivated(int row);

private:
    void refreshSettings();
    void commitSettings();
    void showProgress(const SearchProgress& progress);
    void showResult(const SearchResult& result);
    void setRunning(bool running);

    ProjectDocument* m_document;
    SearchRunner* m_runner;
    QComboBox* m_target;
    QComboBox* m_algorithm;
    QComboBox* m_offload;
    QSpinBox* m_topK;
    QDoubleSpinBox* m_delta;
    QDoubleSpinBox* m_eta;
    QDoubleSpinBox* m_timeLimit;
    QCheckBox* m_exact;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_states;
    QLabel* m_pruned;
    QLabel* m_best;
    QLabel* m_status;
    QString m_scriptNote;   // how the imported script's own run differs from the comparison
    QTreeWidget* m_results;
    bool m_updating = false;
};

} // namespace hapmoe::ui
