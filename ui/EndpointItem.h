#pragma once
// Base of the canvas items a link can end on (nodes and switches): carries the cluster id,
// keeps its links following it, snaps to the grid while dragged, draws problem badges and
// the highlight of a hovered pipeline stage.

#include "LineSpan.h"

#include <QGraphicsItem>
#include <QList>
#include <QPainterPath>
#include <QStringList>

#include <optional>

namespace hapmoe::ui {

class LinkItem;

class EndpointItem : public QGraphicsItem {
public:
    explicit EndpointItem(int id);
    ~EndpointItem() override;

    int id() const { return m_id; }
    void addLink(LinkItem* link);
    void removeLink(LinkItem* link);

    void setProblems(const QStringList& problems);
    const QStringList& problems() const { return m_problems; }
    void setHighlighted(bool on);
    bool isHighlighted() const { return m_highlighted; }

    static constexpr double kGrid = 20.0;
    // p on the nearest grid point.
    static QPointF snapped(QPointF p) { return {qRound(p.x() / kGrid) * kGrid, qRound(p.y() / kGrid) * kGrid}; }
    // The item's body in its own coordinates: boundingRect() without the margin it keeps for
    // the outline, the badge and the highlight. Drawn as a rectangle with corners of
    // cornerRadius().
    virtual QRectF body() const = 0;
    virtual double cornerRadius() const = 0;
    // The body's outline in scene coordinates, grown by grow on every side.
    QPainterPath sceneOutline(double grow = 0) const;
    // Where a line (scene coordinates) runs inside that outline, rounded corners included:
    // the range of its parameter (LineSpan); none where it misses.
    std::optional<LineSpan> outlineSpan(const QLineF& sceneLine, double grow = 0) const;
    QPointF sceneCentre() const { return mapToScene(body().center()); }
    // Where the line from the body's centre towards scenePoint leaves the body's outline:
    // the end of a link drawn to it.
    QPointF edgeToward(const QPointF& scenePoint) const;

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;
    // Draws the badge at the item's top-right corner (rect: the item's body).
    void paintBadge(QPainter* painter, const QRectF& body) const;
    void paintHighlight(QPainter* painter) const;
    void refreshToolTip();
    virtual QString baseToolTip() const = 0;

private:
    int m_id;
    QList<LinkItem*> m_links;
    QStringList m_problems;
    bool m_highlighted = false;
};

} // namespace hapmoe::ui
