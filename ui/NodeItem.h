#pragma once
// A node of N devices of one type on the cluster canvas.

#include "EndpointItem.h"

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"

#include <QColor>
#include <QGraphicsItem>

namespace hapmoe::ui {

class NodeItem : public EndpointItem {
public:
    enum { Type = UserType + 1 };
    // catalog: the document's (ProjectDocument::catalog), which outlives the item; setNode
    // reads the type's figures from it again.
    NodeItem(const Node& node, const DeviceCatalog& catalog);

    int type() const override { return Type; }
    void setNode(const Node& node);
    const Node& node() const { return m_node; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    static QRectF bodyRect();
    QRectF body() const override { return bodyRect(); }
    double cornerRadius() const override { return 8; }

protected:
    QString baseToolTip() const override;

private:
    Node m_node;
    const DeviceCatalog* m_catalog;
    QString m_subtitle;   // "8 x H800"
    QString m_figures;    // "7.9 PFLOP/s · 640 GiB"
    QColor m_color;
    bool m_known = true;
};

} // namespace hapmoe::ui
