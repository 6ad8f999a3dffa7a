#pragma once
// A link between two canvas items, labelled with its bandwidth and latency. The scene places
// the label along the line where it covers no item and no other label
// (ClusterScene::layoutLinkLabels); where there is no such place the line goes unlabelled
// until it is selected, and the tooltip and the property editor give the figures.

#include "hardware/Cluster.h"

#include <QColor>
#include <QGraphicsItem>

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

    // The label's place: its centre at p1 + t (p2 - p1), with p1 the first endpoint; not
    // shown, t is where it shows while the link is selected.
    void setLabelPlacement(double t, bool shown);
    bool labelShown() const { return m_labelShown; }
    // The label's rectangle, in scene coordinates, were its centre at t.
    QRectF labelRectAt(double t) const;
    // The label as drawn now (scene coordinates); empty when it is not drawn.
    QRectF labelRect() const;
    QPointF p1() const { return m_p1; }
    QPointF p2() const { return m_p2; }

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
    QString m_label;
    QSizeF m_labelSize;   // of m_label in the label font, with its padding
    double m_labelT = 0.5;
    bool m_labelShown = true;
    bool m_cross = false;
    // The label is an item of its own, above every line and below the nodes, so that no
    // other link's line crosses it. Created with the link, in its scene, deleted with it.
    LinkLabelItem* m_labelItem = nullptr;
};

} // namespace hapmoe::ui
