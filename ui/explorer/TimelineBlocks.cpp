#include "TimelineBlocks.h"

#include "ExplorerStyle.h"

#include <algorithm>

namespace hapmoe::ui {

TimelineBlocks::TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis)
{
    setSelectable(QCP::stNone);
    setAntialiasedFill(false);
    setName(QStringLiteral("schedule"));
}

void TimelineBlocks::setTimeline(const PlanTimeline& timeline)
{
    m_timeline = timeline;
    m_lanes.assign(static_cast<size_t>(timeline.stages), {});
    m_bubbles.assign(static_cast<size_t>(timeline.stages), {});
    const auto& blocks = m_timeline.schedule.blocks;
    for (int i = 0; i < static_cast<int>(blocks.size()); ++i) {
        const int s = blocks[static_cast<size_t>(i)].stage;
        if (s >= 0 && s < timeline.stages)
            m_lanes[static_cast<size_t>(s)].push_back(i);
    }
    for (auto& lane : m_lanes) {
        std::sort(lane.begin(), lane.end(), [&blocks](int a, int b) {
            return blocks[static_cast<size_t>(a)].start < blocks[static_cast<size_t>(b)].start;
        });
    }
    for (int s = 0; s < timeline.stages; ++s)
        m_bubbles[static_cast<size_t>(s)] = m_timeline.bubbles(s);
    double busy = 0;
    for (const ScheduleBlock& b : blocks)
        busy += b.end - b.start;
    m_meanBlock = blocks.empty() ? 0 : busy / static_cast<double>(blocks.size());
}

int TimelineBlocks::blockAt(double time, double lane) const
{
    const int s = static_cast<int>(std::lround(lane));
    if (s < 0 || s >= static_cast<int>(m_lanes.size()) || std::abs(lane - s) > kLaneHalfHeight)
        return -1;
    const auto& blocks = m_timeline.schedule.blocks;
    const auto& idx = m_lanes[static_cast<size_t>(s)];
    auto it = std::lower_bound(idx.begin(), idx.end(), time, [&blocks](int i, double t) {
        return blocks[static_cast<size_t>(i)].end < t;
    });
    if (it != idx.end() && blocks[static_cast<size_t>(*it)].start <= time)
        return *it;
    return -1;
}

double TimelineBlocks::selectTest(const QPointF&, bool, QVariant*) const
{
    return -1;   // not selectable; hovering is handled by TimelinePlot
}

QCPRange TimelineBlocks::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_timeline.stages > 0;
    return QCPRange(0, std::max(m_timeline.iterationEnd, 1e-9));
}

QCPRange TimelineBlocks::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    foundRange = m_timeline.stages > 0;
    return QCPRange(-0.5, m_timeline.stages - 0.5);
}

QRectF TimelineBlocks::laneRect(double t0, double t1, int lane, double h0, double h1) const
{
    QCPAxis* kx = keyAxis();
    QCPAxis* vy = valueAxis();
    const double x0 = kx->coordToPixel(t0), x1 = kx->coordToPixel(t1);
    const double y0 = vy->coordToPixel(lane + h0), y1 = vy->coordToPixel(lane + h1);
    return QRectF(QPointF(std::min(x0, x1), std::min(y0, y1)), QPointF(std::max(x0, x1), std::max(y0, y1)));
}

void TimelineBlocks::draw(QCPPainter* painter)
{
    m_lastDrawn = 0;
    m_lastDense = false;
    m_lastNumbered.clear();
    QCPAxis* kx = keyAxis();
    QCPAxis* vy = valueAxis();
    if (!kx || !vy || m_timeline.stages == 0)
        return;
    const QCPRange range = kx->range();
    const QPalette& pal = mParentPlot->palette();

    painter->setAntialiasing(false);
    // Lane backgrounds tinted by device type, so each lane reads as its stage.
    for (int s = 0; s < m_timeline.stages; ++s) {
        // Pre-blended with the background rather than drawn translucent: opaque fills are
        // cheaper. One strength for every lane (a lighter or darker tint would read as
        // another device type); a thin gap separates neighbouring lanes.
        const QColor device = style::deviceColor(m_timeline.deviceTypes[static_cast<size_t>(s)]);
        const QColor tint = style::mix(pal.color(QPalette::Base), device, 0.18);
        painter->setPen(Qt::NoPen);
        painter->setBrush(tint);
        painter->drawRect(laneRect(std::max(range.lower, 0.0), std::min(range.upper, m_timeline.iterationEnd), s, -0.47, 0.47));
    }

    const double pixelsPerSecond = kx->axisRect()->width() / std::max(range.size(), 1e-12);
    m_lastDense = m_meanBlock * pixelsPerSecond < kDenseBlockPixels;
    if (m_lastDense)
        drawBands(painter);
    else
        drawBlocks(painter);
    drawTail(painter);
}

void TimelineBlocks::drawBands(QCPPainter* painter)
{
    // Forward work in the upper half of the lane, backward in the lower half; blocks a few
    // pixels apart merge into one band. Warm-up then reads as a forward-only band,
    // the steady state as both, and cool-down as backward only; the gaps are the bubbles.
    const QCPRange range = keyAxis()->range();
    const auto& blocks = m_timeline.schedule.blocks;
    // Blocks closer than this merge: in 1F1B's steady state consecutive forwards are one
    // backward apart, and at this zoom a backward is a few pixels at most.
    const double mergeGap = 2 * kDenseBlockPixels * range.size() / std::max(1, keyAxis()->axisRect()->width());
    QVector<QRectF> fwd, bwd;
    for (int s = 0; s < m_timeline.stages; ++s) {
        const auto& idx = m_lanes[static_cast<size_t>(s)];
        auto it = std::lower_bound(idx.begin(), idx.end(), range.lower, [&blocks](int i, double t) {
            return blocks[static_cast<size_t>(i)].end < t;
        });
        double run[2][2] = {{-1, -1}, {-1, -1}};   // [forward, backward][start, end]
        auto flush = [&](int k) {
            if (run[k][0] >= 0)
                (k == 0 ? fwd : bwd).push_back(k == 0 ? laneRect(run[k][0], run[k][1], s, -kLaneHalfHeight, 0)
                                                      : laneRect(run[k][0], run[k][1], s, 0, kLaneHalfHeight));
            run[k][0] = run[k][1] = -1;
        };
        for (; it != idx.end(); ++it) {
            const ScheduleBlock& b = blocks[static_cast<size_t>(*it)];
            if (b.start > range.upper)
                break;
            ++m_lastDrawn;
            const int k = b.forward ? 0 : 1;
            if (run[k][0] >= 0 && b.start - run[k][1] <= mergeGap) {
                run[k][1] = std::max(run[k][1], b.end);
            } else {
                flush(k);
                run[k][0] = b.start;
                run[k][1] = b.end;
            }
        }
        flush(0);
        flush(1);
    }
    for (QVector<QRectF>* rects : {&fwd, &bwd}) {
        for (QRectF& r : *rects) {
            if (r.width() < 1.0)
                r.setWidth(1.0);
        }
    }
    painter->setPen(Qt::NoPen);
    painter->setBrush(style::forwardColor());
    painter->drawRects(fwd);
    painter->setBrush(style::backwardColor());
    painter->drawRects(bwd);
}

void TimelineBlocks::drawBlocks(QCPPainter* painter)
{
    const QCPRange range = keyAxis()->range();
    const auto& blocks = m_timeline.schedule.blocks;
    const QPalette& pal = mParentPlot->palette();

    // Bubbles: idle time of each stage, hatched on the page's background, as the legend
    // shows them (on a lane's tint the thin red lines mix to grey or brown: green lanes).
    painter->setPen(Qt::NoPen);
    const QBrush hatch(style::bubbleColor(pal), Qt::BDiagPattern);
    for (int s = 0; s < m_timeline.stages; ++s) {
        QVector<QRectF> rects;
        for (const auto& [a, b] : m_bubbles[static_cast<size_t>(s)]) {
            if (b < range.lower || a > range.upper)
                continue;
            rects.push_back(laneRect(std::max(a, range.lower), std::min(b, range.upper), s));
        }
        if (rects.isEmpty())
            continue;
        painter->setBrush(pal.color(QPalette::Base));
        painter->drawRects(rects);
        painter->setBrush(hatch);
        painter->drawRects(rects);
    }

    // Blocks, batched by colour. Blocks narrower than a pixel are still drawn one pixel
    // wide so a zoomed-out schedule keeps its shape.
    QVector<QRectF> fwd[2], bwd[2], comm;
    struct Label { QRectF rect; int block; QString text; };   // text: the number, set below
    std::vector<Label> labels;
    const QFontMetricsF fm(mParentPlot->font());
    // The widest number of the schedule, which the blocks' median width is held against
    // (below): on the Compare page the blocks of two plans with as many micro-batches alike.
    QString widest = QString::number(std::max(0, m_timeline.microbatches - 1));
    if (m_timeline.vpp > 1)
        widest += QStringLiteral(".%1").arg(m_timeline.vpp - 1);
    const double minLabelWidth = fm.horizontalAdvance(widest) + 2;
    for (int s = 0; s < m_timeline.stages; ++s) {
        const auto& idx = m_lanes[static_cast<size_t>(s)];
        auto it = std::lower_bound(idx.begin(), idx.end(), range.lower, [&blocks](int i, double t) {
            return blocks[static_cast<size_t>(i)].end < t;
        });
        for (; it != idx.end(); ++it) {
            const ScheduleBlock& b = blocks[static_cast<size_t>(*it)];
            if (b.start > range.upper)
                break;
            QRectF r = laneRect(b.start, b.end, s);
            if (r.width() < 1.0)
                r.setWidth(1.0);
            (b.forward ? fwd : bwd)[b.chunk % 2].push_back(r);
            ++m_lastDrawn;
            // The send to the next stage closes each forward block; the gradient
            // received back from it opens each backward block (cost/CostModel.h).
            if (const double p2p = m_timeline.sendIn(b); p2p > 0) {
                const double c0 = b.forward ? b.end - p2p : b.start;
                const double c1 = b.forward ? b.end : b.start + p2p;
                QRectF c = laneRect(c0, c1, s, -kLaneHalfHeight, -kLaneHalfHeight * 0.45);
                if (c.width() >= 1.0)
                    comm.push_back(c);
            }
            if (r.height() >= fm.height())
                labels.push_back({r, *it, {}});
        }
    }
    const QPen edge(pal.color(QPalette::Base), 0);   // separates adjacent blocks in either theme
    for (int c = 0; c < 2; ++c) {
        painter->setPen(fwd[c].size() < 600 ? edge : QPen(Qt::NoPen));
        painter->setBrush(style::forwardColor(c));
        painter->drawRects(fwd[c]);
        painter->setPen(bwd[c].size() < 600 ? edge : QPen(Qt::NoPen));
        painter->setBrush(style::backwardColor(c));
        painter->drawRects(bwd[c]);
    }
    painter->setPen(Qt::NoPen);
    painter->setBrush(style::communicationColor(pal));
    painter->drawRects(comm);

    // Micro-batch numbers. Whether forwards (and backwards) are numbered is decided once for
    // the schedule, by their median width against the widest number: decided block by block,
    // lanes of blocks a pixel apart were numbered on one and not on the next. Then each block
    // whose own number fits is numbered.
    auto medianWidth = [&labels, &blocks](bool forward) {
        std::vector<double> widths;
        for (const Label& l : labels)
            if (blocks[static_cast<size_t>(l.block)].forward == forward)
                widths.push_back(l.rect.width());
        if (widths.empty())
            return 0.0;
        std::nth_element(widths.begin(), widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2), widths.end());
        return widths[widths.size() / 2];
    };
    const bool numbered[2] = {medianWidth(false) >= minLabelWidth, medianWidth(true) >= minLabelWidth};
    std::erase_if(labels, [&](Label& l) {
        const ScheduleBlock& b = blocks[static_cast<size_t>(l.block)];
        if (!numbered[b.forward ? 1 : 0])
            return true;
        l.text = QString::number(b.microbatch);
        if (m_timeline.vpp > 1)
            l.text += QStringLiteral(".%1").arg(b.chunk);
        return fm.horizontalAdvance(l.text) + 1 > l.rect.width();
    });
    m_lastNumbered.assign(static_cast<size_t>(m_timeline.stages), 0);
    for (const Label& l : labels)
        ++m_lastNumbered[static_cast<size_t>(blocks[static_cast<size_t>(l.block)].stage)];
    painter->setFont(mParentPlot->font());
    // F and B before the numbers when every numbered block in view has room for them, so
    // that forwards and backwards are numbered alike ("0" and "0", or "F0" and "B0").
    const double wideLabel = fm.horizontalAdvance(QStringLiteral("B88.8")) + 6;
    const bool passLetters = std::all_of(labels.begin(), labels.end(), [wideLabel](const Label& l) { return l.rect.width() >= wideLabel; });
    for (const Label& l : labels) {
        const ScheduleBlock& b = blocks[static_cast<size_t>(l.block)];
        const QColor fill = b.forward ? style::forwardColor(b.chunk) : style::backwardColor(b.chunk);
        painter->setPen(style::textOn(fill));
        const QString text = passLetters ? (b.forward ? QLatin1Char('F') : QLatin1Char('B')) + l.text : l.text;
        if (fm.horizontalAdvance(text) + 1 <= l.rect.width())
            painter->drawText(l.rect, Qt::AlignCenter, text);
    }
}

void TimelineBlocks::drawTail(QCPPainter* painter)
{
    const QCPRange range = keyAxis()->range();
    // DP sync from the stage's last backward, optimizer step and parameter all-gather; where
    // the stage waits (for the closed form's end of its last backward, the other end stage's
    // sync, the gradient-norm all-reduce) its lane is stippled (style::waitBrush).
    // The pale tail colours get a darker outline of their own hue, so that they stand out
    // from the pale lane tint of any device type.
    auto segment = [&](double a, double b, int s, const QBrush& brush, bool outlined) {
        if (b > a && b >= range.lower && a <= range.upper) {
            painter->setPen(outlined ? QPen(brush.color().darker(170), 1) : QPen(Qt::NoPen));
            painter->setBrush(brush);
            painter->drawRect(laneRect(a, b, s));
        }
    };
    const QBrush wait = style::waitBrush(mParentPlot->palette());
    for (int s = 0; s < m_timeline.stages; ++s) {
        const TailSpan& t = m_timeline.tailOf(s);
        // The waits (TailSpan::waits), stippled over the lane's tint.
        for (const auto& [a, b] : t.waits())
            segment(a, b, s, wait, false);
        segment(t.sync_start, t.sync_end, s, style::dpSyncColor(), true);
        // The tied embeddings' all-reduce: the sync colour, crossed, after the wait for the
        // other end stage.
        segment(t.embedding_start, t.embedding_end, s, style::dpSyncColor(), true);
        segment(t.embedding_start, t.embedding_end, s, style::embeddingSyncBrush(), false);
        segment(t.optimizer_start, t.optimizer_end, s, style::optimizerColor(), true);
        segment(t.gather_start, t.gather_end, s, style::dpSyncColor(), true);
    }

    // The bottleneck lane gets a frame in the text colour, which no device type uses.
    const int bn = m_timeline.bottleneck;
    if (bn >= 0 && bn < m_timeline.stages) {
        painter->setPen(QPen(style::bottleneckMarkColor(mParentPlot->palette()), 2.5));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(laneRect(std::max(range.lower, 0.0), std::min(range.upper, m_timeline.iterationEnd), bn, -0.47, 0.47));
    }
}

void TimelineBlocks::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const
{
    painter->setPen(Qt::NoPen);
    painter->setBrush(style::forwardColor());
    painter->drawRect(QRectF(rect.left(), rect.top(), rect.width() / 2, rect.height()));
    painter->setBrush(style::backwardColor());
    painter->drawRect(QRectF(rect.center().x(), rect.top(), rect.width() / 2, rect.height()));
}

} // namespace hapmoe::ui
