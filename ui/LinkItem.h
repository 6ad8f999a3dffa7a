#pragma once
// A link between two canvas items, labelled with its bandwidth and latency. Its line runs
// between the outlines of its two ends, under the items; where it passes under another item it
// stops short of that item's outline, so that it does not look connected to it. The scene places
// the label along the line where it covers no item and no other label
// (ClusterScene::layoutLinkLabels); where there is no such place the line goes unlabelled
// until it is selected, and the tooltip and the property editor give the figures.

#include "hardware/Cluster.h"

#include <QColor>
#include <QGraphicsItem>
#include <QList>

namespace hapmoe::ui {

class EndpointItem;
class LinkLabelItem;

class LinkItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };
    LinkItem(const Link& link, EndpointItem* a, EndpointItem* b);
    ~LinkItem() override;

    int type() const override { return Type; }
    void setLink(const Link& link);
    const Link& link() const { return m_link; }
    EndpointItem* endA() const { return m_a; }
    EndpointItem* endB() const { return m_b; }
    // Cross-vendor links are drawn dashed (traffic goes through a bridge).
    void setCrossVendor(bool cross);
    bool isCrossVendor() const { return m_cross; }
    void updateGeometry();
    void detach();   // forget the endpoints before they are deleted

    // The label's place: its centre at p1 + t (p2 - p1) + offset normal(), with p1 the
    // first end of the line; not shown, where it shows while the link is selected.
    void setLabelPlacement(double t, double offset, bool shown);
    bool labelShown() const { return m_labelShown; }
    // The label's rectangle, in scene coordinates, were its centre there.
    QRectF labelRectAt(double t, double offset = 0) const;
    // The label as drawn now (scene coordinates); empty when it is not drawn.
    QRectF labelRect() const;
    // The line's ends, on the outlines of the link's two ends (scene coordinates); the same
    // point when the two bodies overlap along it.
    QPointF p1() const { return m_p1; }
    QPointF p2() const { return m_p2; }
    // A unit normal of the line between the two ends' centres, pointing up (or right for an
    // upright line): the direction a label leaves its line in.
    QPointF normal() const { return m_normal; }
    // The items the line passes under (not its ends), set by the scene's layout: the line
    // stops short of each, a few pixels off its outline.
    void setCrossedItems(const QList<EndpointItem*>& items);
    const QList<EndpointItem*>& crossedItems() const { return m_crossed; }
    void forgetItem(EndpointItem* item);   // before it is deleted
    // The gap left between the line and the outline of an item it passes under, in pixels
    // on the screen whatever the zoom.
    static constexpr double kCrossingGapPx = 5;

    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    friend class LinkLabelItem;
    QColor lineColor() const;
    void labelAboutToChange();
    void updateToolTip();

    Link m_link;
    EndpointItem* m_a;
    EndpointItem* m_b;
    QPointF m_p1, m_p2;
    QPointF m_normal{0, -1};
    QList<EndpointItem*> m_crossed;
    QString m_label;
    QSizeF m_labelSize;   // of m_label in the label font, with its padding
    double m_labelT = 0.5;
    double m_labelOffset = 0;
    bool m_labelShown = true;
    bool m_cross = false;
    // The label is an item of its own, above every line and below the nodes, so that no
    // other link's line crosses it. Created with the link, in its scene, deleted with it.
    LinkLabelItem* m_labelItem = nullptr;
};

} // namespace hapmoe::ui
