#include "LinkItem.h"

#include "ClusterScene.h"
#include "EndpointItem.h"
#include "Theme.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

#include <algorithm>
#include <vector>

namespace hapmoe::ui {

namespace {
QFont labelFont()
{
    QFont f = QApplication::font();
    f.setPointSizeF(8);
    return f;
}
} // namespace

// A link's label: drawn by its own item (LinkItem::m_labelItem), above every line. A click
// on it selects its link (Ctrl toggles it), whatever line passes under it.
class LinkLabelItem : public QGraphicsItem {
public:
    explicit LinkLabelItem(LinkItem* link) : m_link(link)
    {
        setAcceptedMouseButtons(Qt::LeftButton);
        setZValue(0.5);
    }
    // Before the label's rectangle changes (the scene's index and the old area).
    void aboutToChange() { prepareGeometryChange(); }
    QPainterPath shape() const override
    {
        QPainterPath path;
        path.addRect(m_link->labelRect());
        return path;
    }
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override
    {
        if (event->modifiers() & Qt::ControlModifier) {
            m_link->setSelected(!m_link->isSelected());
        } else if (!m_link->isSelected()) {
            if (scene())
                scene()->clearSelection();
            m_link->setSelected(true);
        }
        event->accept();
    }
    QRectF boundingRect() const override
    {
        const QRectF label = m_link->labelRect();
        return label.isEmpty() ? QRectF() : label.adjusted(-1, -1, 1, 1);
    }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        // Zoomed out until the label's line would be under 8 px tall (a large cluster fitted
        // in the window), the label is noise over the nodes: the line alone is drawn, and
        // the tooltip and the property editor still give the figures.
        const double scale = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        if (scale * QFontMetricsF(labelFont()).height() < 8.0)
            return;
        const QRectF label = m_link->labelRect();
        if (label.isEmpty())
            return;
        const QPalette pal = QApplication::palette();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QPen(m_link->lineColor(), 1));
        painter->setBrush(pal.color(QPalette::Base));
        painter->drawRoundedRect(label, 4, 4);
        painter->setFont(labelFont());
        painter->setPen(pal.color(QPalette::Text));
        painter->drawText(label, Qt::AlignCenter, m_link->m_label);
    }

private:
    LinkItem* m_link;
};

LinkItem::LinkItem(const Link& link, EndpointItem* a, EndpointItem* b) : m_a(a), m_b(b)
{
    setFlags(ItemIsSelectable);
    setZValue(0);
    m_labelItem = new LinkLabelItem(this);
    m_a->addLink(this);
    m_b->addLink(this);
    setLink(link);
}

LinkItem::~LinkItem()
{
    detach();
    delete m_labelItem;   // leaves the scene with it
}

void LinkItem::labelAboutToChange()
{
    if (m_labelItem)
        m_labelItem->aboutToChange();
}

QColor LinkItem::lineColor() const
{
    const QPalette pal = QApplication::palette();
    if (isSelected())
        return pal.color(QPalette::Highlight);
    return m_cross ? QColor(0xe0, 0x7b, 0x00) : (isDark(pal) ? QColor(0x9a, 0xa5, 0xb1) : QColor(0x6b, 0x77, 0x85));
}

void LinkItem::detach()
{
    if (m_a)
        m_a->removeLink(this);
    if (m_b)
        m_b->removeLink(this);
    m_a = m_b = nullptr;
}

void LinkItem::setLink(const Link& link)
{
    labelAboutToChange();   // its width follows the text
    prepareGeometryChange();
    m_link = link;
    const double bw = link.bandwidth_gbytes_per_s;
    m_label = QStringLiteral("%1 GB/s \u00b7 %2 \u00b5s").arg(bw, 0, 'f', bw < 10 ? 1 : 0).arg(link.latency_us, 0, 'g', 3);
    const QFontMetricsF fm(labelFont());
    m_labelSize = QSizeF(fm.horizontalAdvance(m_label) + 10, fm.height() + 4);
    updateToolTip();
    updateGeometry();
}

void LinkItem::updateToolTip()
{
    QString tip = QObject::tr("Link %1 \u2013 %2\n%3 GB/s per direction, %4 \u00b5s latency")
                      .arg(m_link.a)
                      .arg(m_link.b)
                      .arg(m_link.bandwidth_gbytes_per_s)
                      .arg(m_link.latency_us);
    if (m_cross)
        tip += QLatin1Char('\n')
            + QObject::tr("Between collective libraries: its traffic crosses the cross-vendor bridge "
                          "(Properties, with nothing selected)");
    setToolTip(tip);
    if (m_labelItem)
        m_labelItem->setToolTip(tip);
}

void LinkItem::setCrossVendor(bool cross)
{
    if (cross == m_cross)
        return;
    m_cross = cross;
    updateToolTip();
    update();
    if (m_labelItem)
        m_labelItem->update();   // its outline takes the line's colour
}

void LinkItem::updateGeometry()
{
    if (!m_a || !m_b)
        return;
    labelAboutToChange();
    prepareGeometryChange();
    // From outline to outline along the line between the centres: a line from centre to
    // centre ran under both bodies, and one that ends inside a body looks the same as one
    // that passes under it.
    const QPointF ca = m_a->sceneCentre(), cb = m_b->sceneCentre();
    m_p1 = m_a->edgeToward(cb);
    m_p2 = m_b->edgeToward(ca);
    if (QPointF::dotProduct(m_p2 - m_p1, cb - ca) <= 0)   // the bodies overlap along the line
        m_p1 = m_p2 = (m_p1 + m_p2) / 2;
    const QLineF centres(ca, cb);
    m_normal = centres.length() > 0 ? QPointF(-centres.dy(), centres.dx()) / centres.length() : QPointF(0, -1);
    if (m_normal.y() > 0 || (m_normal.y() == 0 && m_normal.x() < 0))
        m_normal = -m_normal;
    update();
    if (auto* clusterScene = qobject_cast<ClusterScene*>(scene()))
        clusterScene->scheduleLinkLayout();
}

void LinkItem::setLabelPlacement(double t, double offset, bool shown)
{
    if (t == m_labelT && offset == m_labelOffset && shown == m_labelShown)
        return;
    labelAboutToChange();
    prepareGeometryChange();
    m_labelT = t;
    m_labelOffset = offset;
    m_labelShown = shown;
    update();
}

QRectF LinkItem::labelRectAt(double t, double offset) const
{
    const QSizeF size = m_labelSize;
    const QPointF centre = m_p1 + t * (m_p2 - m_p1) + offset * m_normal;
    return QRectF(centre - QPointF(size.width() / 2, size.height() / 2), size);
}

QRectF LinkItem::labelRect() const
{
    if (!m_labelShown && !isSelected())
        return {};
    return labelRectAt(m_labelT, m_labelOffset);
}

void LinkItem::setCrossedItems(const QList<EndpointItem*>& items)
{
    if (items == m_crossed)
        return;
    m_crossed = items;
    update();
}

void LinkItem::forgetItem(EndpointItem* item)
{
    if (m_crossed.removeAll(item) > 0)
        update();
}

QRectF LinkItem::boundingRect() const
{
    // The label's place, drawn or not (a selected link shows it), so that selecting needs no
    // geometry change.
    return QRectF(m_p1, m_p2).normalized().adjusted(-8, -8, 8, 8).united(labelRectAt(m_labelT, m_labelOffset).adjusted(-2, -2, 2, 2));
}

QPainterPath LinkItem::shape() const
{
    QPainterPath line(m_p1);
    line.lineTo(m_p2);
    QPainterPathStroker stroker;
    stroker.setWidth(12);
    QPainterPath path = stroker.createStroke(line);
    if (const QRectF label = labelRect(); !label.isEmpty())
        path.addRect(label);
    return path;
}

QVariant LinkItem::itemChange(GraphicsItemChange change, const QVariant& value)
{
    if (change == ItemSelectedChange) {
        labelAboutToChange();   // a label without a place shows while its link is selected
    } else if (change == ItemSelectedHasChanged) {
        // A selected link's label is drawn above the items, so that it shows even where the
        // layout found it no place (it keeps off its two ends). Its line stays under the
        // items (where it passes under one, their names stay readable) and under every
        // label, above the other lines.
        const bool on = value.toBool();
        setZValue(on ? 0.25 : 0);
        if (m_labelItem) {
            m_labelItem->setZValue(on ? 2.5 : 0.5);
            m_labelItem->update();
        }
    } else if (change == ItemSceneHasChanged && m_labelItem) {
        if (m_labelItem->scene())
            m_labelItem->scene()->removeItem(m_labelItem);
        if (QGraphicsScene* s = scene())
            s->addItem(m_labelItem);
    }
    return QGraphicsItem::itemChange(change, value);
}

void LinkItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const bool selected = option->state & QStyle::State_Selected;
    // Width grows with the logarithm of the bandwidth: 25 GB/s ~ 1.5 px, 3200 GB/s ~ 5 px.
    const double width = qBound(1.2, 0.7 * std::log2(std::max(1.0, m_link.bandwidth_gbytes_per_s)) - 1.8, 5.0);
    QPen pen(lineColor(), selected ? width + 2 : width, m_cross ? Qt::DashLine : Qt::SolidLine, Qt::RoundCap);
    const QLineF line(m_p1, m_p2);
    if (m_crossed.isEmpty() || line.length() == 0) {
        painter->setPen(pen);
        painter->drawLine(line);
        return;
    }
    // Cut around the items it passes under, so that the canvas shows between the line and
    // their outlines, where a link of theirs touches them: the pieces' round caps stay the
    // gap away from the outlines.
    const double gap = kCrossingGapPx / QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    std::vector<LineSpan> cuts;
    for (const EndpointItem* item : std::as_const(m_crossed))
        if (const auto span = item->outlineSpan(line, gap + pen.widthF() / 2))
            cuts.push_back(*span);
    std::sort(cuts.begin(), cuts.end(), [](const LineSpan& a, const LineSpan& b) { return a.from < b.from; });
    double from = 0;
    auto piece = [&](double to) {
        if (to <= from)
            return;
        // The dashes run on across the cuts (the offset is in pen widths; setting one makes
        // a solid pen a custom dash pattern, so only a dashed pen takes it).
        if (m_cross)
            pen.setDashOffset(from * line.length() / pen.widthF());
        painter->setPen(pen);
        painter->drawLine(line.pointAt(from), line.pointAt(to));
    };
    for (const LineSpan& cut : cuts) {
        piece(std::min(cut.from, 1.0));
        from = std::max(from, cut.to);
    }
    piece(1.0);
}

} // namespace hapmoe::ui
