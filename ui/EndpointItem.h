#pragma once
// Base of the canvas items a link can end on (nodes and switches): carries the cluster id,
// keeps its links following it, snaps to the grid while dragged, draws problem badges and
// the highlight of a hovered pipeline stage.

#include <QGraphicsItem>
#include <QList>
#include <QStringList>

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
    // the outline, the badge and the highlight.
    virtual QRectF body() const = 0;

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;
    // Draws the badge at the item's top-right corner (rect: the item's body).
    void paintBadge(QPainter* painter, const QRectF& body) const;
    void paintHighlight(QPainter* painter, const QRectF& body, double radius) const;
    void refreshToolTip();
    virtual QString baseToolTip() const = 0;

private:
    int m_id;
    QList<LinkItem*> m_links;
    QStringList m_problems;
    bool m_highlighted = false;
};

} // namespace hapmoe::ui
