#pragma once
// Memory per device of each stage (QCustomPlot): stacked weights, gradients, optimizer
// states, activations, MoE buffers and overhead, the device's capacity as a line over
// each bar, and the recompute choice that made the stage fit written above it.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <qcustomplot.h>

#include <array>

namespace hapmoe::ui {

class MemoryBarsPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit MemoryBarsPlot(QWidget* parent = nullptr);

    void setPlan(const Plan& plan, const Prediction& prediction);
    void clear();

    int stageCount() const { return m_stages; }
    // Sum of the stacked bars drawn for a stage, in GiB (read back from the chart data).
    double stackedTotalGiB(int stage) const;
    double capacityGiB(int stage) const;
    QString toolTipForStage(int stage) const;
    // The text above a stage's bar as drawn (abbreviated when the bars are narrow), and
    // the value (GiB) it stands on: the larger of the bar and the capacity line.
    QString barLabel(int stage) const;
    double barLabelBaseGiB(int stage) const;
    // Same value-axis upper bound on several charts (compare view).
    void setMaxGiB(double gib);
    double dataMaxGiB() const;

    QSize sizeHint() const override;

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Chooses each label's form for the current bar width (after each layout).
    void fitLabels();

    std::array<QCPBars*, 6> m_bars{};
    QCPGraph* m_capacity;
    QSharedPointer<QCPAxisTickerText> m_ticker;
    Plan m_plan;
    Prediction m_prediction;
    std::vector<QCPItemText*> m_labels;
    QCPTextElement* m_hostNote = nullptr;
    int m_stages = 0;
};

} // namespace hapmoe::ui
