#pragma once
// Where the iteration time goes: compute, tensor-parallel communication, expert dispatch,
// pipeline bubble, data-parallel sync and the optimizer step (the prediction's
// TimeBreakdown), as horizontal bars with shares, and the per-stage times beneath.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QWidget>

class QCustomPlot;
class QCPTextElement;
class QTableWidget;
class QLabel;

namespace hapmoe::ui {

class BreakdownView : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownView(QWidget* parent = nullptr);

    void setPlan(const Plan& plan, const Prediction& prediction);
    void clear();
    // What the view says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);

    // The six components in display order, in seconds.
    QVector<double> components() const { return m_values; }
    static QStringList componentNames();
    QCustomPlot* chart() const { return m_plot; }
    // What the bars add up to, in words ("Iteration 7.401 s = bottleneck S1 × 32 ...").
    QString barsTitle() const;
    // The stage whose forward + backward per micro-batch is largest (it sets the steady
    // state, paper eq. 5), and the stage with the longest tail (DP sync + optimizer step);
    // the first on ties, as the cost model picks them. -1 without stages.
    static int bottleneckStage(const Prediction& prediction);
    static int tailStage(const Prediction& prediction);
    QTableWidget* stageTable() const { return m_table; }

protected:
    void changeEvent(QEvent* event) override;

private:
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QTableWidget* m_table;
    QLabel* m_summary;
    QVector<double> m_values;
    QString m_emptyText = tr("No plan to show: run a search and select a plan");
};

} // namespace hapmoe::ui
