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
    // What the view says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);

    int stageCount() const { return m_stages; }
    // Sum of the stacked bars drawn for a stage, in GiB (read back from the chart data).
    double stackedTotalGiB(int stage) const;
    double capacityGiB(int stage) const;
    QString toolTipForStage(int stage) const;
    // The text above a stage's bar as drawn (abbreviated when the bars are narrow), and
    // the value (GiB) it stands on: the larger of the bar and the capacity line.
    QString barLabel(int stage) const;
    double barLabelBaseGiB(int stage) const;
    // The stage's total (GiB, one decimal) written at the top inside its bar as drawn;
    // empty when the bar is too narrow or too short for it (the tooltip has it then).
    QString barFigure(int stage) const;
    // Under the bars, the recompute choice that every stage (or most) shares, which their
    // labels then leave out: "recompute: none in every stage", "recompute: none; S0: full
    // 2/2" (the others named, when that fits the width), "recompute: none unless written
    // above the bar"; empty when the stages differ too much, each bar saying its own.
    QString recomputeNote() const;
    // -90 when the labels above the bars stand upright (too narrow bars for one line), else 0.
    double barLabelRotation() const;
    // The stage's label under its bar as drawn: "S0" and the device type on a second line,
    // the type shortened ("910B") when the bars are narrow, and on one line turned upright
    // (tickLabelRotation() -90) when even that does not fit between two bars.
    QString tickLabel(int stage) const;
    double tickLabelRotation() const;
    // Pixels from one bar's centre to the next, after the last layout.
    double barSpacing() const;
    // Same value-axis upper bound on several charts (compare view).
    void setMaxGiB(double gib);
    double dataMaxGiB() const;
    // The room (pixels above the plot area) the labels over the bars take, and a least room
    // to leave whatever they need: charts side by side on one scale leave the same.
    int labelRoom() const { return m_labelRoom; }
    void setLabelRoomFloor(int pixels);

    QSize sizeHint() const override;

signals:
    // The room the labels above the bars need changed (after a layout).
    void labelRoomChanged();

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;
    // Wraps the legend to the width, and lays out again when the stage labels changed form.
    void updateLayout() override;

private:
    // Chooses each label's form for the current bar width and leaves the labels room above
    // the plot area (after each layout).
    void fitLabels();
    // Shows each total inside its bar where the bar has room for it (after each layout).
    void fitFigures();
    // Chooses the stage labels' form for the current bar spacing; true when it changed.
    bool fitTickLabels();
    // Puts the host-memory note under the legend, or takes it out of the layout.
    void showHostNote(bool shown);

    std::array<QCPBars*, 6> m_bars{};
    QCPGraph* m_capacity;
    QSharedPointer<QCPAxisTickerText> m_ticker;
    Plan m_plan;
    Prediction m_prediction;
    std::vector<QCPItemText*> m_labels;
    std::vector<QCPItemText*> m_figures;   // the totals inside the bars
    QCPTextElement* m_hostNote = nullptr;
    int m_stages = 0;
    QString m_commonRecompute;   // left out of the labels over the bars (recomputeNote)
    // The note under the bars naming every stage's recompute, and the one that leaves the
    // exceptions to the labels over their bars (for a narrow chart); empty without a note.
    QStringList m_recomputeNotes;
    QString m_emptyText = tr("No plan to show: run a search and select a plan");
    int m_tickForm = -1;   // index into the forms of fitTickLabels(); -1: none chosen yet
    int m_labelRoom = 0;
    int m_labelRoomFloor = 0;
    int m_baseTopMargin = 0;   // the plot area's own least top margin
};

} // namespace hapmoe::ui
