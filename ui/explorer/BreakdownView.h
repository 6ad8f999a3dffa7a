#pragma once
// Where the iteration time goes: compute, tensor-parallel communication, expert dispatch,
// pipeline sends, pipeline bubble, data-parallel sync and the optimizer step (the prediction's
// TimeBreakdown), as horizontal bars with shares, and the per-stage times beneath. The page
// scrolls rather than squeeze the bars or the table in a short window.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QBrush>
#include <QPalette>
#include <QStringList>
#include <QWidget>

class QCustomPlot;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QScrollArea;
class QTableWidget;

namespace hapmoe::ui {

class BreakdownView : public QWidget {
    Q_OBJECT
public:
    // The per-stage table's columns. The times per micro-batch add up:
    // Fwd + Bwd = Compute + TpComm + Dispatch + Send (StageEstimate, CostModel.h). The last
    // three are per iteration, the parts of the stage's tail the DP sync and optimizer bars
    // take: the sync before the gradient-norm barrier (StageEstimate::dp_sync less the
    // all-gather), the parameter all-gather and the optimizer step after it.
    enum Column { StageColumn, DeviceColumn, FwdColumn, BwdColumn, ComputeColumn, TpColumn, DispatchColumn,
                  SendColumn, SyncColumn, GatherColumn, StepColumn, ColumnCount };

    explicit BreakdownView(QWidget* parent = nullptr);

    void setPlan(const Plan& plan, const Prediction& prediction);
    void clear();
    // What the view says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);
    // A dense model has no expert dispatch: its bar and column are left out.
    void setExpertDispatch(bool shown);
    bool expertDispatchShown() const { return m_dispatchShown; }

    // The seven components in componentNames()' order, in seconds (the dispatch's too when
    // its bar is left out).
    QVector<double> components() const { return m_values; }
    // The components that have a bar, as indexes into components(), top to bottom.
    QVector<int> shownComponents() const { return m_shown; }
    static QStringList componentNames();
    static constexpr int DispatchComponent = 2;   // "Expert dispatch" in componentNames()
    // The components before this one are the bottleneck stage's terms over the micro-batches
    // (compute, TP/CP comm, expert dispatch, pipeline send); the rest are the iteration's.
    static constexpr int FirstIterationComponent = 4;
    // The components' seconds in the same order (What-if lists them too).
    static QVector<double> componentValues(const Prediction& prediction);
    // A component's bar: its colour, the bubble's hatched.
    static QBrush componentBrush(int component, const QPalette& palette);
    QCustomPlot* chart() const { return m_plot; }
    // What the bars add up to, in words ("Iteration 7.401 s = bottleneck S1 × 32 ...").
    QString barsTitle() const;
    QTableWidget* stageTable() const { return m_table; }
    // The prediction's notes under the table (which figures came from a profile, FP8, ...).
    QLabel* notesLabel() const { return m_notes; }
    // The seconds behind a cell of the table (its text is rounded), 0 for a text column.
    double cellSeconds(int row, Column column) const;
    QScrollArea* scrollArea() const { return m_scroll; }
    // The height below which the chart would squeeze its bars; the page scrolls instead.
    int chartMinimumHeight() const;

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The title on two lines, or three when the chart is too narrow for the first.
    void fitTitle();
    // The value axis long enough for each bar's label to end inside the chart.
    void fitValueRange();
    // The table as tall as its rows (and a scroll bar when its columns are wider).
    void fitTableHeight();
    void updateMinimumSizes();
    // Each bar's brush from the palette (the send and the bubble follow the theme).
    void colorBars();

    QScrollArea* m_scroll;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QLabel* m_caption;
    QTableWidget* m_table;
    QLabel* m_notes;
    QVector<double> m_values;
    QVector<int> m_shown;
    Plan m_plan;               // what setPlan showed last, for setExpertDispatch to redraw
    Prediction m_prediction;
    bool m_dispatchShown = true;
    QVector<QCPItemText*> m_barLabels;
    // Each bar's label with what the DP sync and optimizer bars hold by stage, and without
    // it, for a chart too narrow for the long form (fitValueRange).
    QStringList m_barTexts, m_barShortTexts;
    QStringList m_titleParts;   // "Iteration …", "= bottleneck …", "+ the tail of …"
    QString m_emptyText = tr("No plan to show: run a search and select a plan");
};

} // namespace hapmoe::ui
