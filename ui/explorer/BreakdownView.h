#pragma once
// Where the iteration time goes: compute, tensor-parallel communication, expert dispatch,
// pipeline bubble, data-parallel sync and the optimizer step (the prediction's
// TimeBreakdown), as horizontal bars with shares, and the per-stage times beneath.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QWidget>

class QCustomPlot;
class QTableWidget;
class QLabel;

namespace hapmoe::ui {

class BreakdownView : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownView(QWidget* parent = nullptr);

    void setPlan(const Plan& plan, const Prediction& prediction);
    void clear();

    // The six components in display order, in seconds.
    QVector<double> components() const { return m_values; }
    static QStringList componentNames();
    QCustomPlot* chart() const { return m_plot; }
    QTableWidget* stageTable() const { return m_table; }

protected:
    void changeEvent(QEvent* event) override;

private:
    QCustomPlot* m_plot;
    QTableWidget* m_table;
    QLabel* m_summary;
    QVector<double> m_values;
};

} // namespace hapmoe::ui
