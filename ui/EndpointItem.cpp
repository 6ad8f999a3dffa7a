#include "EndpointItem.h"

#include "ClusterScene.h"
#include "LinkItem.h"

#include <QPainter>
#include <QtMath>

namespace hapmoe::ui {

EndpointItem::EndpointItem(int id) : m_id(id)
{
    setFlags(ItemIsMovable | ItemIsSelectable | ItemIsFocusable | ItemSendsGeometryChanges);
    setAcceptHoverEvents(true);
    setZValue(1);
}

EndpointItem::~EndpointItem() = default;

void EndpointItem::addLink(LinkItem* link) { m_links.append(link); }
void EndpointItem::removeLink(LinkItem* link) { m_links.removeAll(link); }

void EndpointItem::setProblems(const QStringList& problems)
{
    if (problems == m_problems)
        return;
    m_problems = problems;
    refreshToolTip();
    update();
}

void EndpointItem::setHighlighted(bool on)
{
    if (on == m_highlighted)
        return;
    m_highlighted = on;
    update();
}

void EndpointItem::refreshToolTip()
{
    QString tip = baseToolTip();
    for (const auto& p : m_problems)
        tip += QStringLiteral("\n\u26a0 ") + p;
    setToolTip(tip);
}

QVariant EndpointItem::itemChange(GraphicsItemChange change, const QVariant& value)
{
    if (change == ItemPositionChange) {
        auto* clusterScene = qobject_cast<ClusterScene*>(scene());
        if (clusterScene && clusterScene->snapToGrid() && clusterScene->isDragging()) {
            return snapped(value.toPointF());
        }
    } else if (change == ItemPositionHasChanged) {
        for (LinkItem* link : std::as_const(m_links))
            link->updateGeometry();
    }
    return QGraphicsItem::itemChange(change, value);
}

void EndpointItem::paintBadge(QPainter* painter, const QRectF& body) const
{
    if (m_problems.isEmpty())
        return;
    const QRectF badge(body.right() - 11, body.top() - 9, 20, 20);
    painter->setPen(QPen(Qt::white, 1.5));
    painter->setBrush(QColor(0xd3, 0x2f, 0x2f));
    painter->drawEllipse(badge);
    QFont f = painter->font();
    f.setBold(true);
    f.setPointSizeF(9);
    painter->setFont(f);
    painter->drawText(badge, Qt::AlignCenter, m_problems.size() > 1 ? QString::number(m_problems.size())
                                                                  : QStringLiteral("!"));
}

void EndpointItem::paintHighlight(QPainter* painter, const QRectF& body, double radius) const
{
    if (!m_highlighted)
        return;
    painter->setPen(QPen(QColor(0xff, 0xb3, 0x00), 5));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(body.adjusted(-5, -5, 5, 5), radius + 4, radius + 4);
}

} // namespace hapmoe::ui
