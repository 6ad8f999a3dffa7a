#include "EndpointItem.h"

#include "ClusterScene.h"
#include "LinkItem.h"

#include <QPainter>
#include <QtMath>

#include <algorithm>

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
        // Links it passes over, or no longer does, are cut around it (or no longer are) at
        // the next layout, whether it has links of its own or not.
        if (auto* clusterScene = qobject_cast<ClusterScene*>(scene()))
            clusterScene->scheduleLinkLayout();
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

void EndpointItem::paintHighlight(QPainter* painter) const
{
    if (!m_highlighted)
        return;
    painter->setPen(QPen(QColor(0xff, 0xb3, 0x00), 5));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(body().adjusted(-5, -5, 5, 5), cornerRadius() + 4, cornerRadius() + 4);
}

QPainterPath EndpointItem::sceneOutline(double grow) const
{
    QPainterPath path;
    path.addRoundedRect(body().adjusted(-grow, -grow, grow, grow), cornerRadius() + grow, cornerRadius() + grow);
    return mapToScene(path);
}

std::optional<LineSpan> EndpointItem::outlineSpan(const QLineF& sceneLine, double grow) const
{
    // The rounded rectangle as the union of a rectangle as wide as it and one as high, each
    // short of the corners, and a circle in each corner. It is convex, so the line meets it
    // in one span, from the first entry into a part to the last exit.
    const QLineF line(mapFromScene(sceneLine.p1()), mapFromScene(sceneLine.p2()));
    const QRectF b = body().adjusted(-grow, -grow, grow, grow);
    const double r = std::min({cornerRadius() + grow, b.width() / 2, b.height() / 2});
    std::optional<LineSpan> span;
    auto add = [&](std::optional<LineSpan> part) {
        if (part)
            span = span ? LineSpan{std::min(span->from, part->from), std::max(span->to, part->to)} : *part;
    };
    add(lineSpanInRect(line, b.adjusted(0, r, 0, -r)));
    add(lineSpanInRect(line, b.adjusted(r, 0, -r, 0)));
    const QRectF corners = b.adjusted(r, r, -r, -r);
    for (const QPointF& corner : {corners.topLeft(), corners.topRight(), corners.bottomLeft(), corners.bottomRight()})
        add(lineSpanInCircle(line, corner, r));
    return span;
}

QPointF EndpointItem::edgeToward(const QPointF& scenePoint) const
{
    const QPointF centre = sceneCentre();
    const QLineF ray(centre, scenePoint);
    const auto span = outlineSpan(ray);
    if (ray.length() == 0 || !span)
        return centre;
    return ray.pointAt(span->to);
}

} // namespace hapmoe::ui
