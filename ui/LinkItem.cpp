#include "LinkItem.h"

#include "EndpointItem.h"
#include "Theme.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

namespace hapmoe::ui {

namespace {
QFont labelFont()
{
    QFont f = QApplication::font();
    f.setPointSizeF(8);
    return f;
}
} // namespace

LinkItem::LinkItem(const Link& link, EndpointItem* a, EndpointItem* b) : m_a(a), m_b(b)
{
    setFlags(ItemIsSelectable);
    setZValue(0);
    m_a->addLink(this);
    m_b->addLink(this);
    setLink(link);
}

LinkItem::~LinkItem() { detach(); }

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
    m_link = link;
    const double bw = link.bandwidth_gbytes_per_s;
    m_label = QStringLiteral("%1 GB/s \u00b7 %2 \u00b5s").arg(bw, 0, 'f', bw < 10 ? 1 : 0).arg(link.latency_us, 0, 'g', 3);
    setToolTip(QObject::tr("Link %1 \u2013 %2\n%3 GB/s per direction, %4 \u00b5s latency")
                   .arg(link.a).arg(link.b).arg(bw).arg(link.latency_us));
    updateGeometry();
}

void LinkItem::setCrossVendor(bool cross)
{
    m_cross = cross;
    update();
}

void LinkItem::updateGeometry()
{
    if (!m_a || !m_b)
        return;
    prepareGeometryChange();
    m_p1 = m_a->pos();
    m_p2 = m_b->pos();
    update();
}

QRectF LinkItem::labelRect() const
{
    const QFontMetricsF fm(labelFont());
    const QSizeF size(fm.horizontalAdvance(m_label) + 10, fm.height() + 4);
    const QPointF mid = (m_p1 + m_p2) / 2;
    return QRectF(mid - QPointF(size.width() / 2, size.height() / 2), size);
}

QRectF LinkItem::boundingRect() const
{
    return QRectF(m_p1, m_p2).normalized().adjusted(-8, -8, 8, 8).united(labelRect().adjusted(-2, -2, 2, 2));
}

QPainterPath LinkItem::shape() const
{
    QPainterPath line(m_p1);
    line.lineTo(m_p2);
    QPainterPathStroker stroker;
    stroker.setWidth(12);
    QPainterPath path = stroker.createStroke(line);
    path.addRect(labelRect());
    return path;
}

void LinkItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const QPalette pal = QApplication::palette();
    painter->setRenderHint(QPainter::Antialiasing);
    const bool selected = option->state & QStyle::State_Selected;
    // Width grows with the logarithm of the bandwidth: 25 GB/s ~ 1.5 px, 3200 GB/s ~ 5 px.
    const double width = qBound(1.2, 0.7 * std::log2(std::max(1.0, m_link.bandwidth_gbytes_per_s)) - 1.8, 5.0);
    QColor color = m_cross ? QColor(0xe0, 0x7b, 0x00) : (isDark(pal) ? QColor(0x9a, 0xa5, 0xb1) : QColor(0x6b, 0x77, 0x85));
    if (selected)
        color = pal.color(QPalette::Highlight);
    painter->setPen(QPen(color, selected ? width + 2 : width, m_cross ? Qt::DashLine : Qt::SolidLine, Qt::RoundCap));
    painter->drawLine(m_p1, m_p2);

    // Zoomed out until the label's text would be under 5 px tall (a large cluster fitted in
    // the window), the label is noise over the nodes: the line alone is drawn, and the
    // tooltip and the property editor still give the figures.
    const double scale = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    if (scale * QFontMetricsF(labelFont()).height() < 5.0)
        return;
    const QRectF label = labelRect();
    painter->setPen(QPen(color, 1));
    painter->setBrush(pal.color(QPalette::Base));
    painter->drawRoundedRect(label, 4, 4);
    painter->setFont(labelFont());
    painter->setPen(pal.color(QPalette::Text));
    painter->drawText(label, Qt::AlignCenter, m_label);
}

} // namespace hapmoe::ui
