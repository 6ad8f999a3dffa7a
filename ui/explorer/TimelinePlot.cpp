#include "TimelinePlot.h"

#include "ExplorerStyle.h"
#include "TimelineBlocks.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace hapmoe::ui {

namespace {
// A legend entry for a colour that the schedule plottable draws itself.
void setSwatch(QCPGraph* g, const QBrush& brush, const QPen& pen = QPen(Qt::NoPen))
{
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, pen.style() == Qt::NoPen ? QPen(brush.color()) : pen, brush, 11));
}

QCPGraph* addLegendSwatch(QCustomPlot* plot, const QString& name, const QBrush& brush, const QPen& pen = QPen(Qt::NoPen))
{
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setLineStyle(QCPGraph::lsNone);
    setSwatch(g, brush, pen);
    g->setSelectable(QCP::stNone);
    return g;
}
} // namespace

TimelinePlot::TimelinePlot(QWidget* parent)
    : QCustomPlot(parent)
    , m_blocks(new TimelineBlocks(xAxis, yAxis))
    , m_endLine(new QCPItemStraightLine(this))
    , m_endLabel(new QCPItemText(this))
    , m_laneTicker(new QCPAxisTickerText)
{
    setObjectName(QStringLiteral("timelinePlot"));
    setNoAntialiasingOnDrag(true);
    setPlottingHint(QCP::phCacheLabels, true);
    m_blocks->removeFromLegend();

    xAxis->setLabel(tr("time (s)"));
    yAxis->setTicker(m_laneTicker);
    yAxis->setRangeReversed(true);   // stage 0 on top, as in the paper's pipeline figures
    yAxis->grid()->setVisible(false);
    yAxis->setSubTicks(false);
    yAxis->setTickLength(0, 0);
    xAxis->grid()->setSubGridVisible(false);

    addLegendSwatch(this, tr("Forward"), style::forwardColor());
    addLegendSwatch(this, tr("Backward"), style::backwardColor());
    m_sendSwatch = addLegendSwatch(this, tr("Stage send"), Qt::NoBrush);
    m_syncSwatch = addLegendSwatch(this, tr("DP sync"), style::dpSyncColor());
    m_embeddingSwatch = addLegendSwatch(this, tr("Tied-embedding all-reduce"), style::embeddingSyncBrush(), QPen(style::dpSyncColor()));
    m_embeddingSwatch->removeFromLegend();   // only for plans that have one (setTimeline)
    m_optimizerSwatch = addLegendSwatch(this, tr("Optimizer"), style::optimizerColor());
    m_bubbleSwatch = addLegendSwatch(this, tr("Idle (bubble)"), Qt::NoBrush);
    m_waitSwatch = addLegendSwatch(this, tr("Waiting"), Qt::NoBrush);
    m_waitSwatch->removeFromLegend();   // only for plans whose stages wait (setTimeline)
    m_bottleneckSwatch = addLegendSwatch(this, tr("Bottleneck stage"), Qt::NoBrush);

    // Legend in its own row above the chart so it never covers blocks.
    legend->setVisible(true);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setIconSize(12, 12);
    axisRect()->insetLayout()->take(legend);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legend);
    plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setMargins(QMargins(4, 2, 4, 0));

    m_endLine->point1->setCoords(0, 0);
    m_endLine->point2->setCoords(0, 1);
    m_endLine->setVisible(false);
    // The iteration label sits in a strip above the plot area, ending at the dashed line,
    // so that it never covers blocks.
    m_endLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_endLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_endLabel->setPadding(QMargins(3, 1, 3, 4));   // its text clear of the top lane's frame
    m_endLabel->setVisible(false);
    m_endLabel->setClipToAxisRect(false);
    axisRect()->setMinimumMargins(QMargins(0, fontMetrics().height() + 6, 0, 0));

    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeZoomFactor(0.8);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &TimelinePlot::boundRange);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), xAxis2, qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(this, &QCustomPlot::afterReplot, this, &TimelinePlot::followDrawnForm);
    setMouseTracking(true);
    applyThemeColors();
    style::setChartPlaceholder(this, m_emptyText);
}

void TimelinePlot::applyThemeColors()
{
    style::applyChartPalette(this);
    const QPalette pal = palette();
    setSwatch(m_sendSwatch, style::communicationColor(pal));
    updateBubbleSwatch();
    setSwatch(m_waitSwatch, style::waitBrush(pal), QPen(pal.color(QPalette::Text)));
    setSwatch(m_bottleneckSwatch, Qt::NoBrush, QPen(style::bottleneckMarkColor(pal), 2.5));
    const QColor text = pal.color(QPalette::Text);
    m_endLine->setPen(QPen(text, 1, Qt::DashLine));
    m_endLabel->setColor(text);
    // No background: over the strip it needs none, and one would cut into the bottleneck
    // frame of the top lane, drawn just above the plot area.
    m_endLabel->setBrush(Qt::NoBrush);
}

void TimelinePlot::updateBubbleSwatch()
{
    const QPalette pal = palette();
    if (m_legendBanded) {
        // A gap between bands shows the lane's tint (the device type's colour, faint).
        m_bubbleSwatch->setName(tr("Idle (gap; zoom in for blocks)"));
        setSwatch(m_bubbleSwatch, pal.color(QPalette::Base), QPen(pal.color(QPalette::Mid)));
    } else {
        const QColor hatch = style::bubbleColor(pal);
        m_bubbleSwatch->setName(tr("Idle (bubble)"));
        setSwatch(m_bubbleSwatch, QBrush(hatch, Qt::BDiagPattern), QPen(hatch));
    }
}

void TimelinePlot::updateLegendEntries()
{
    const bool send = !m_legendBanded;
    if (send == legend->hasItemWithPlottable(m_sendSwatch) && m_hasTied == legend->hasItemWithPlottable(m_embeddingSwatch)
        && m_hasWaits == legend->hasItemWithPlottable(m_waitSwatch)) {
        return;
    }
    // In their places: the tied all-reduce next to "DP sync", of which it is a part, the wait
    // next to the bubble; the swatches after them move behind them.
    const std::initializer_list<QCPGraph*> tail = {m_sendSwatch,      m_syncSwatch,  m_embeddingSwatch, m_optimizerSwatch,
                                                   m_bubbleSwatch,    m_waitSwatch,  m_bottleneckSwatch};
    for (QCPGraph* g : tail)
        g->removeFromLegend();
    for (QCPGraph* g : tail)
        if ((g != m_sendSwatch || send) && (g != m_embeddingSwatch || m_hasTied) && (g != m_waitSwatch || m_hasWaits))
            g->addToLegend();
}

void TimelinePlot::followDrawnForm()
{
    // Zoomed out, blocks under two pixels merge into bands (TimelineBlocks::drawBands): no
    // sends, and the bubbles are the gaps between bands, not hatched. The form is known once
    // drawn, so the legend follows on the next frame.
    const bool banded = m_blocks->lastDrawDense() && !m_blocks->timeline().empty();
    if (banded == m_legendBanded)
        return;
    m_legendBanded = banded;
    updateBubbleSwatch();
    updateLegendEntries();
    replot(rpQueuedReplot);
}

void TimelinePlot::updateLayout()
{
    style::fitLegendColumns(legend, width());
    QCustomPlot::updateLayout();
    // Lanes lower than a line of text: only every k-th lane is named (the bottleneck and
    // the last sync and the longest step first), so that the names do not run into each other. The names
    // change the axis' width, not the lanes' height, so one more pass settles it.
    if (fitLaneLabels())
        QCustomPlot::updateLayout();
    // Above the top axis' labels when it shows (setTimeline), in pixels of this layout.
    if (xAxis2->visible())
        m_endLabel->position->setCoords(m_blocks->timeline().iterationEnd,
                                        axisRect()->top() - xAxis2->tickLabelPadding() - xAxis2->tickLengthOut()
                                            - QFontMetrics(xAxis2->tickLabelFont()).height());
    fitMinimumHeight();
}

void TimelinePlot::setLanesReadable(bool readable)
{
    m_lanesReadable = readable;
    fitMinimumHeight();
}

int TimelinePlot::minimumLaneHeight() const
{
    return QFontMetrics(yAxis->tickLabelFont()).height();
}

void TimelinePlot::fitMinimumHeight()
{
    // The legend's rows and the axes take what they take at this width; the lanes get a
    // line each on top. Queued: changing the minimum resizes the chart, which lays it out.
    const int lanes = m_blocks->timeline().stages;
    int wanted = 0;
    if (m_lanesReadable && lanes > 0 && axisRect()->height() > 0)
        wanted = height() - axisRect()->height() + lanes * minimumLaneHeight();
    if (wanted == minimumHeight())
        return;
    QMetaObject::invokeMethod(
        this, [this, wanted] { setMinimumHeight(wanted); }, Qt::QueuedConnection);
}

bool TimelinePlot::fitLaneLabels()
{
    const int lanes = static_cast<int>(m_laneLabelForms.front().size());
    if (lanes == 0)
        return false;
    // The longest form of the names within kLaneLabelShare of the chart's width, so that
    // the blocks keep the rest of a narrow chart.
    const QFontMetrics fm(yAxis->tickLabelFont());
    size_t form = 0;
    for (; form + 1 < m_laneLabelForms.size(); ++form) {
        int widest = 0;
        for (const QString& l : m_laneLabelForms[form])
            widest = std::max(widest, fm.horizontalAdvance(l));
        if (widest <= kLaneLabelShare * width())
            break;
    }
    const double lane = double(axisRect()->height()) / lanes;
    const int line = fm.height();
    const int every = lane >= line ? 1 : static_cast<int>(std::ceil(line / std::max(lane, 1.0)));
    if (every == m_laneLabelEvery && static_cast<int>(form) == m_laneLabelForm)
        return false;
    m_laneLabelEvery = every;
    m_laneLabelForm = static_cast<int>(form);
    const std::vector<QString>& labels = m_laneLabelForms[form];
    std::vector<int> named;
    const auto room = [&](int s) {
        return std::all_of(named.begin(), named.end(), [&](int n) { return std::abs(n - s) >= every; });
    };
    for (int s : {m_blocks->timeline().bottleneck, m_syncLane, m_stepLane})
        if (s >= 0 && s < lanes && room(s))
            named.push_back(s);
    for (int s = 0; s < lanes; ++s)
        if (room(s))
            named.push_back(s);
    m_laneTicker->clear();
    for (int s = 0; s < lanes; ++s)
        m_laneTicker->addTick(s, std::find(named.begin(), named.end(), s) != named.end() ? labels[static_cast<size_t>(s)] : QString());
    return true;
}

int TimelinePlot::namedLanes() const
{
    int n = 0;
    for (auto it = m_laneTicker->ticks().cbegin(); it != m_laneTicker->ticks().cend(); ++it)
        n += it.value().isEmpty() ? 0 : 1;
    return n;
}

void TimelinePlot::updateEndLabel()
{
    // Shown only while the end of the iteration is in view; outside the plot area it
    // would be drawn over the axis labels.
    const double end = m_blocks->timeline().iterationEnd;
    m_endLabel->setVisible(!m_blocks->timeline().empty() && xAxis->range().contains(end));
}

void TimelinePlot::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyThemeColors();
        replot();
    }
}

void TimelinePlot::setTimeline(const PlanTimeline& timeline)
{
    m_blocks->setTimeline(timeline);
    m_laneTicker->clear();
    for (auto& form : m_laneLabelForms)
        form.clear();
    m_laneLabelEvery = 1;
    m_laneLabelForm = 0;
    m_syncLane = m_stepLane = -1;
    // The stages whose DP sync before the gradient-norm barrier and whose optimizer step after
    // it the iteration waits for, when that part is a noticeable share of it: of the sync, what
    // runs past the end of stage 0's last backward.
    const auto noticeable = [&](double seconds) { return seconds >= 0.05 * timeline.iterationEnd; };
    if (timeline.syncLane >= 0) {
        const StageTail& t = timeline.tailInputs[static_cast<size_t>(timeline.syncLane)];
        if (noticeable(t.sync - t.drain))
            m_syncLane = timeline.syncLane;
    }
    if (timeline.stepLane >= 0) {
        const StageTail& t = timeline.tailInputs[static_cast<size_t>(timeline.stepLane)];
        if (noticeable(t.optimizer + t.gather))
            m_stepLane = timeline.stepLane;
    }
    for (int s = 0; s < timeline.stages; ++s) {
        // "S0 · H800 · L0-11", then "S0 · H800", then "S0" in a narrow chart.
        const QString full = timeline.stageNames.value(s);
        const QStringList parts = full.split(QStringLiteral(" · "));
        QString labels[3] = {full, parts.mid(0, 2).join(QStringLiteral(" · ")), parts.value(0)};
        QStringList marks;
        if (s == timeline.bottleneck)
            marks << tr("bottleneck");
        if (s == m_syncLane)
            marks << tr("last sync");
        if (s == m_stepLane)
            marks << tr("longest step");
        const QString mark = marks.isEmpty() ? QString() : QStringLiteral("  ◀ ") + marks.join(QStringLiteral(", "));
        for (int f = 0; f < 2; ++f)
            m_laneLabelForms[static_cast<size_t>(f)].push_back(labels[f] + mark);
        // The shortest form keeps the arrow: the frame and the legend say which is which.
        m_laneLabelForms[2].push_back(labels[2] + (mark.isEmpty() ? QString() : QStringLiteral(" ◀")));
        m_laneTicker->addTick(s, labels[0] + mark);
    }
    yAxis->setRange(-0.5, timeline.stages - 0.5);
    const bool tied = std::any_of(timeline.tailInputs.begin(), timeline.tailInputs.end(), [](const StageTail& t) { return t.embedding > 0; });
    // A stage waits when its tail has a gap (TailSpan::waits) a pixel of a wide chart could show.
    const double least = 1e-4 * std::max(timeline.iterationEnd, 1e-9);
    bool waits = false;
    for (int s = 0; s < timeline.stages && !waits; ++s)
        for (const auto& [a, b] : timeline.tailOf(s).waits())
            waits = waits || b - a > least;
    m_hasTied = tied;
    m_hasWaits = waits;
    updateLegendEntries();
    m_limit = std::max(timeline.iterationEnd, 1e-9);
    m_endLine->point1->setCoords(timeline.iterationEnd, 0);
    m_endLine->point2->setCoords(timeline.iterationEnd, 1);
    m_endLine->setVisible(!timeline.empty());
    m_endLabel->position->setCoords(timeline.iterationEnd, 0.0);   // top of the chart, left of the line
    m_endLabel->setText(tr("iteration %1").arg(style::formatSeconds(timeline.iterationEnd)));
    // A pipeline whose lanes make the page scroll (more than 16, a line of text each) has the
    // time axis above its lanes too, so that a time can be read wherever the page is scrolled.
    const bool ruler = m_lanesReadable && timeline.stages > kRulerLanes;
    xAxis2->setVisible(ruler);
    xAxis2->setTickLabels(ruler);
    xAxis2->grid()->setVisible(false);
    const int line = fontMetrics().height();
    axisRect()->setMinimumMargins(QMargins(0, ruler ? 2 * line + 10 : line + 6, 0, 0));
    m_endLabel->position->setTypeY(ruler ? QCPItemPosition::ptAbsolute : QCPItemPosition::ptAxisRectRatio);
    style::setChartPlaceholder(this, timeline.tooManyBlocks > 0 ? tooLargeText(timeline)
                                       : timeline.empty()       ? m_emptyText
                                                                : QString());
    resetZoom();
    updateEndLabel();
    replot();
}

QString TimelinePlot::tooLargeText(const PlanTimeline& timeline)
{
    return tr("The schedule has %L1 forward and backward blocks (%L2 micro-batches), more than the "
              "%L3 the timeline draws; the plan's figures still hold")
        .arg(timeline.tooManyBlocks)
        .arg(timeline.microbatches)
        .arg(PlanTimeline::kMaxBlocks);
}

void TimelinePlot::clear()
{
    setTimeline(PlanTimeline{});
}

void TimelinePlot::setEmptyText(const QString& text)
{
    m_emptyText = text;
    if (timeline().empty()) {
        style::setChartPlaceholder(this, text);
        replot();
    }
}

const PlanTimeline& TimelinePlot::timeline() const
{
    return m_blocks->timeline();
}

int TimelinePlot::blockCount() const
{
    return static_cast<int>(m_blocks->timeline().schedule.blocks.size());
}

void TimelinePlot::setTimeLimit(double seconds)
{
    m_limit = std::max(seconds, 1e-9);
}

void TimelinePlot::resetZoom()
{
    xAxis->setRange(0, m_limit * 1.01);
}

void TimelinePlot::boundRange(const QCPRange& range)
{
    if (m_bounding)
        return;
    // Keep the view on the iteration: no panning into negative time or far past the end,
    // and no zooming in below a microsecond.
    const double hi = m_limit * 1.05;
    QCPRange r = range;
    if (r.size() > hi * 1.02)
        r = QCPRange(-0.01 * m_limit, hi);
    if (r.size() < 1e-6)
        r = QCPRange(r.center() - 5e-7, r.center() + 5e-7);
    if (r.lower < -0.02 * m_limit)
        r = QCPRange(-0.02 * m_limit, -0.02 * m_limit + r.size());
    if (r.upper > hi)
        r = QCPRange(hi - r.size(), hi);
    if (r.lower != range.lower || r.upper != range.upper) {
        m_bounding = true;
        xAxis->setRange(r);
        m_bounding = false;
    }
    updateEndLabel();
}

QString TimelinePlot::toolTipAt(const QPoint& pos) const
{
    const PlanTimeline& tl = m_blocks->timeline();
    if (tl.empty() || !axisRect()->rect().contains(pos))
        return {};
    const double t = xAxis->pixelToCoord(pos.x());
    const double lane = yAxis->pixelToCoord(pos.y());
    const int idx = m_blocks->blockAt(t, lane);
    if (idx >= 0) {
        const ScheduleBlock& b = tl.schedule.blocks[static_cast<size_t>(idx)];
        QString tip = QStringLiteral("<b>%1 of micro-batch %2</b>").arg(b.forward ? tr("Forward") : tr("Backward")).arg(b.microbatch);
        if (tl.vpp > 1)
            tip += tr(", chunk %1").arg(b.chunk);
        tip += QStringLiteral("<br>%1<br>").arg(tl.stageNames.value(b.stage).toHtmlEscaped());
        tip += tr("%1 → %2 (%3)").arg(style::formatSeconds(b.start), style::formatSeconds(b.end), style::formatSeconds(b.end - b.start));
        // The last rank's chunks send to rank 0 (the interleaved schedule's wrap).
        const bool wrap = tl.vpp > 1 && b.stage + 1 == tl.stages;
        if (const double p2p = tl.sendIn(b); p2p > 0)
            tip += tr("<br>incl. %1 %2")
                       .arg(style::formatSeconds(p2p),
                            b.forward ? (wrap ? tr("send to stage 0's next chunk") : tr("send to the next stage"))
                                      : (wrap ? tr("gradient from stage 0's next chunk") : tr("gradient from the next stage")));
        return tip;
    }
    const int s = static_cast<int>(std::lround(lane));
    if (s >= 0 && s < tl.stages && std::abs(lane - s) <= TimelineBlocks::kLaneHalfHeight) {
        const TailSpan& tail = tl.tailOf(s);
        const QString stage = tl.stageNames.value(s).toHtmlEscaped();
        if (t >= tail.wait_start && t < tail.sync_start)
            return tr("<b>Waiting</b>: the iteration time counts this stage's last backward as ending at %1 "
                      "(the closed form of 1F1B, which the simulated blocks beat here), and its data-parallel sync "
                      "from there<br>%2")
                .arg(style::formatSeconds(tail.sync_start), stage);
        if (t >= tail.sync_start && t < tail.sync_end)
            return tr("<b>Data-parallel gradient sync</b> (exposed part)<br>%1<br>%2").arg(stage, style::formatSeconds(tail.sync_end - tail.sync_start));
        if (t >= tail.sync_end && t < tail.embedding_start)
            return tr("<b>Waiting</b> for the other end stage's data-parallel sync (tied embeddings)<br>%1").arg(stage);
        if (t >= tail.embedding_start && t < tail.embedding_end)
            return tr("<b>Tied embeddings' all-reduce</b> of the embedding gradient between S0 and S%1<br>%2<br>%3")
                .arg(tl.stages - 1)
                .arg(stage, style::formatSeconds(tail.embedding_end - tail.embedding_start));
        if (t >= tail.embedding_end && t < tail.optimizer_start)
            return tr("<b>Waiting</b> for the gradient-norm all-reduce, which spans every stage: no stage steps "
                      "its optimizer before every data-parallel sync (and the tied embeddings' all-reduce) has ended<br>%1")
                .arg(stage);
        if (t >= tail.optimizer_start && t < tail.optimizer_end)
            return tr("<b>Optimizer step</b><br>%1<br>%2").arg(stage, style::formatSeconds(tail.optimizer_end - tail.optimizer_start));
        if (t >= tail.gather_start && t < tail.gather_end)
            return tr("<b>Parameter all-gather</b> of the distributed optimizer (exposed part)<br>%1<br>%2")
                .arg(stage, style::formatSeconds(tail.gather_end - tail.gather_start));
        if (t >= 0 && t < tail.wait_start)
            return tr("<b>Idle</b> (pipeline bubble)<br>%1").arg(tl.stageNames.value(s).toHtmlEscaped());
    }
    return {};
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton)
        return;
    const QPoint pos = event->position().toPoint();
    const QString tip = toolTipAt(pos);
    if (tip.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), tip, this);
}

QByteArray TimelinePlot::chromeTrace() const
{
    const PlanTimeline& tl = m_blocks->timeline();
    std::vector<std::string> names;
    for (const QString& n : tl.stageNames)
        names.push_back(n.toStdString());
    return QByteArray::fromStdString(toChromeTrace(tl.schedule, names, tl.tailInputs, tl.iterationEnd));
}

QSize TimelinePlot::sizeHint() const
{
    const int lanes = std::max(2, m_blocks->timeline().stages);
    return {900, std::min(720, 90 + lanes * 30)};
}

} // namespace hapmoe::ui
