#pragma once
// The pipeline as a strip of stages: each stage as wide as its share of the layers,
// filled with its device type's colour and labelled with its knobs, recompute and devices.
// A legend names the device types. Hovering a stage shows its time and memory and emits
// stageHovered so that the cluster canvas can light up its devices.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QColor>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

namespace hapmoe::ui {

class StagePartitionView : public QWidget {
    Q_OBJECT
public:
    explicit StagePartitionView(QWidget* parent = nullptr);

    void setPlan(const Plan& plan, const Prediction& prediction, int bottleneckStage);
    void clear();
    // What the view says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);
    QString emptyText() const { return m_emptyText; }
    // Compact: two lines per stage (for the compare view).
    void setCompact(bool compact);
    // Layer count per unit of width; set the same value on several views to compare widths.
    void setTotalLayers(int layers);
    // Whether the model has experts: a dense model's stages show no EP, ETP and EDP.
    // What the model adds to the stages' text: the expert knobs (EP, ETP, EDP) of an MoE
    // model, and the MTP depths the last stage holds (style::layerRange).
    void setModelTraits(bool expertKnobs, int mtpLayers);

    int stageCount() const;
    const StagePlan* stage(int index) const;
    QRect stageRect(int index) const;
    int stageAt(const QPoint& pos) const;
    int hoveredStage() const { return m_hovered; }
    QString stageToolTip(int index) const;
    // The lines written in a stage's box as they are drawn: in the forms chosen for the
    // current width, a name or recompute line too wide for the boxes split over two ("S2"
    // over "910B", "rc:" over "none"); in an upright box, its columns.
    QStringList stageLines(int index) const;
    // A box too narrow for lines across it writes them upright, bottom to top.
    bool stageUpright(int index) const;
    // Whether a stage's box carries the recompute mark (a hatched band along its bottom,
    // named in the legend): every stage that recomputes, however narrow its box.
    bool stageMarkedRecompute(int index) const;
    // The legend's entries as written ("H800 (64 devices)", "bottleneck stage (S4)",
    // "recompute (S0)").
    QStringList legendTexts() const;
    // Whether every legend entry is written whole (the legend wraps onto more lines).
    bool legendFits() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void stageHovered(int stage);   // -1 when the mouse leaves the strip

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    // One line (across a box) or column (upright): a bold part, then a regular one.
    struct TextRun {
        QString bold;
        QString regular;
    };
    struct BoxText {
        std::vector<TextRun> lines;
        bool upright = false;
    };
    // A legend entry: a device type (its colour) or the bottleneck mark, where it goes.
    struct LegendEntry {
        QString text;
        QColor color;
        bool bottleneck = false;
        bool recompute = false;   // the recompute mark's hatch
        int x = 0;
        int row = 0;
    };
    int stripHeight() const;
    int markHeight() const;
    bool anyRecompute() const;
    std::vector<LegendEntry> legendEntries() const;
    int legendRows() const;
    int stageLeft(int index) const;
    int stageRight(int index) const;
    std::vector<BoxText> layoutBoxes() const;
    const std::vector<BoxText>& boxes() const;
    void relayout();
    void setHovered(int stage);

    Plan m_plan;
    Prediction m_prediction;
    int m_bottleneck = -1;
    int m_hovered = -1;
    int m_totalLayers = 0;
    bool m_compact = false;
    bool m_expertKnobs = true;
    int m_mtpLayers = 0;
    bool m_hasPlan = false;
    // The boxes' text for the width they were laid out at (layoutBoxes), until that changes.
    mutable std::optional<std::vector<BoxText>> m_boxes;
    mutable int m_boxesWidth = -1;
    mutable int m_hintedHeight = -1;   // in the last size hint
    QString m_emptyText = tr("Select a plan to see its stages");
};

} // namespace hapmoe::ui
