#pragma once
// The pipeline as a strip of stages: each stage as wide as its share of the layers,
// filled with its device type's colour and labelled with its knobs, recompute and devices.
// A legend names the device types. Hovering a stage shows its time and memory and emits
// stageHovered so that the cluster canvas can light up its devices.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QStringList>
#include <QWidget>

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
    // Compact: two lines per stage (for the compare view).
    void setCompact(bool compact);
    // Layer count per unit of width; set the same value on several views to compare widths.
    void setTotalLayers(int layers);

    int stageCount() const;
    const StagePlan* stage(int index) const;
    QRect stageRect(int index) const;
    int stageAt(const QPoint& pos) const;
    int hoveredStage() const { return m_hovered; }
    QString stageToolTip(int index) const;
    // The lines written in a stage's box, in the forms chosen for the current width.
    QStringList stageLines(int index) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void stageHovered(int stage);   // -1 when the mouse leaves the strip

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    int stripHeight() const;
    std::vector<QStringList> boxLines() const;
    void setHovered(int stage);

    Plan m_plan;
    Prediction m_prediction;
    int m_bottleneck = -1;
    int m_hovered = -1;
    int m_totalLayers = 0;
    bool m_compact = false;
    bool m_hasPlan = false;
    QString m_emptyText = tr("Select a plan to see its stages");
};

} // namespace hapmoe::ui
