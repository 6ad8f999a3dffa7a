#pragma once
// A plottable that draws a whole pipeline schedule: a lane per stage, a rectangle per
// forward or backward block, the stage-boundary send inside each block, idle time
// (bubbles) hatched, and the DP sync and optimizer step after each stage's last backward.
// It draws only the blocks inside the visible time range and batches rectangles by
// colour, so a redraw costs O(visible blocks) painter calls instead of one item per block.

#include "PlanTimeline.h"

#include <qcustomplot.h>

#include <vector>

namespace hapmoe::ui {

class TimelineBlocks : public QCPAbstractPlottable {
    Q_OBJECT
public:
    TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setTimeline(const PlanTimeline& timeline);
    const PlanTimeline& timeline() const { return m_timeline; }

    // Index into timeline().schedule.blocks of the block at plot coordinates, or -1.
    int blockAt(double time, double lane) const;
    // Blocks drawn in the last draw() call (for the benchmark's report).
    int lastDrawnBlocks() const { return m_lastDrawn; }

    static constexpr double kLaneHalfHeight = 0.38;
    // Below this width per block (mean block duration in pixels) the blocks are drawn as
    // solid forward and backward bands, without sends and bubble hatch: single blocks are
    // no longer visible there and alternating one-pixel blocks make a moiré.
    static constexpr double kDenseBlockPixels = 2.0;
    // Whether the last draw() drew bands instead of blocks.
    bool lastDrawDense() const { return m_lastDense; }
    // Blocks of a lane the last draw() wrote a micro-batch number in.
    int lastNumberedBlocks(int lane) const
    {
        return lane >= 0 && lane < static_cast<int>(m_lastNumbered.size()) ? m_lastNumbered[static_cast<size_t>(lane)] : 0;
    }

    double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    // Pixel rectangle of [t0, t1] in a lane between lane + h0 and lane + h1.
    QRectF laneRect(double t0, double t1, int lane, double h0 = -kLaneHalfHeight, double h1 = kLaneHalfHeight) const;
    void drawBlocks(QCPPainter* painter);
    void drawBands(QCPPainter* painter);
    void drawTail(QCPPainter* painter);   // DP sync, optimizer step and the bottleneck frame

    // Per lane, indices of its blocks sorted by start (blocks of a lane never overlap, so
    // their ends are sorted too and a binary search finds the first visible one).
    std::vector<std::vector<int>> m_lanes;
    std::vector<std::vector<std::pair<double, double>>> m_bubbles;
    PlanTimeline m_timeline;
    double m_meanBlock = 0;   // mean duration of a block (s)
    int m_lastDrawn = 0;
    std::vector<int> m_lastNumbered;   // per lane
    bool m_lastDense = false;
};

} // namespace hapmoe::ui
