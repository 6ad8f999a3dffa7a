#pragma once
// The 1F1B timeline of one plan (QCustomPlot): a lane per stage, forward and backward
// blocks per micro-batch from the event simulator, bubbles, sends, DP sync and optimizer,
// the bottleneck lane framed. The time axis zooms and pans with the mouse (horizontal
// only); hovering a block shows its tooltip.

#include "PlanTimeline.h"

#include <qcustomplot.h>

#include <array>
#include <vector>

namespace hapmoe::ui {

class TimelineBlocks;

class TimelinePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit TimelinePlot(QWidget* parent = nullptr);

    void setTimeline(const PlanTimeline& timeline);
    void clear();
    // What the view says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);
    const PlanTimeline& timeline() const;
    int blockCount() const;
    TimelineBlocks* blocks() const { return m_blocks; }

    // Upper bound of the time axis when panning/zooming (shared axes use the longest plan).
    void setTimeLimit(double seconds);
    double timeLimit() const { return m_limit; }
    void resetZoom();

    // Tooltip text of the block (or DP sync/optimizer step) under a widget position.
    QString toolTipAt(const QPoint& pos) const;
    // Chrome/Perfetto trace-event JSON of the schedule.
    QByteArray chromeTrace() const;
    // What the chart says in place of a schedule too large to draw.
    static QString tooLargeText(const PlanTimeline& timeline);

    // How many lanes are named: all, unless the lanes are lower than a line of text.
    int namedLanes() const;
    // In a scroll area (the explorer's Timeline page): lanes no lower than a line of the
    // lane names, so that every lane is named; the chart's minimum height grows with the
    // stages and the page scrolls, as Compare's charts do. Off by default: the lanes share
    // the height the chart has, and only some are named when they are low.
    void setLanesReadable(bool readable);
    // The least height of a lane when they are readable: a line of the lane names.
    int minimumLaneHeight() const;

    QSize sizeHint() const override;

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;
    // Wraps the legend to the chart's width before each layout.
    void updateLayout() override;

private:
    void boundRange(const QCPRange& range);
    // Colours that depend on the theme: legend swatches, the iteration line and its label.
    void applyThemeColors();
    // The bubble's swatch: hatched, or zoomed out to bands the plain gap it is there.
    void updateBubbleSwatch();
    // The legend's entries for what the chart draws: the tied all-reduce and the waits only for
    // plans that have them; zoomed out to bands, no sends and the bubbles as gaps.
    void updateLegendEntries();
    void followDrawnForm();
    void updateEndLabel();
    // Names only as many lanes as have room for a line each; true when that changed.
    bool fitLaneLabels();
    // With readable lanes, the minimum height that gives each lane a line (applied after
    // the layout pass, which measures the legend and axes around the lanes).
    void fitMinimumHeight();

    TimelineBlocks* m_blocks;
    QCPItemStraightLine* m_endLine;
    QCPItemText* m_endLabel;
    QCPGraph* m_sendSwatch = nullptr;
    QCPGraph* m_syncSwatch = nullptr;
    QCPGraph* m_embeddingSwatch = nullptr;
    QCPGraph* m_waitSwatch = nullptr;
    QCPGraph* m_optimizerSwatch = nullptr;
    QCPGraph* m_bubbleSwatch = nullptr;
    QCPGraph* m_bottleneckSwatch = nullptr;
    QSharedPointer<QCPAxisTickerText> m_laneTicker;
    // Every lane's name with its marks, in three forms from the full name to the stage
    // alone; the chart uses the longest that fits kLaneLabelShare of its width.
    std::array<std::vector<QString>, 3> m_laneLabelForms;
    static constexpr double kLaneLabelShare = 0.3;
    int m_laneLabelForm = 0;
    int m_laneLabelEvery = 1;             // every how many lanes one is named
    int m_syncLane = -1;                  // the lane marked "last sync"
    int m_stepLane = -1;                  // the lane marked "longest step"
    double m_limit = 1;
    QString m_emptyText = tr("No plan to show: run a search and select a plan");
    bool m_bounding = false;
    bool m_lanesReadable = false;
    // More lanes than this (each a line of text) make the page scroll: the time axis shows
    // above the lanes as well (setTimeline).
    static constexpr int kRulerLanes = 16;
    bool m_hasTied = false;
    bool m_hasWaits = false;
    bool m_legendBanded = false;   // the legend describes the banded form (TimelineBlocks::lastDrawDense)
};

} // namespace hapmoe::ui
