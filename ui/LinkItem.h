#pragma once
// A link between two canvas items, labelled with its bandwidth and latency.

#include "hardware/Cluster.h"

#include <QColor>
#include <QGraphicsItem>

namespace hapmoe::ui {

class EndpointItem;

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
    void updateGeometry();
    void detach();   // forget the endpoints before they are deleted

    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    QRectF labelRect() const;

    Link m_link;
    EndpointItem* m_a;
    EndpointItem* m_b;
    QPointF m_p1, m_p2;
    QString m_label;
    bool m_cross = false;
};

} // namespace hapmoe::ui
