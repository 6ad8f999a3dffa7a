#pragma once
// The cluster canvas: one item per node, switch and link of the document. Listens to the
// document's signals; user moves are turned into one MoveItemsCommand on mouse release.

#include <QGraphicsScene>
#include <QHash>
#include <QPair>
#include <QPointF>
#include <QSet>
#include <QVector>

namespace hapmoe::ui {

class EndpointItem;
class LinkItem;
class NodeItem;
class ProjectDocument;
class SwitchItem;

class ClusterScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit ClusterScene(ProjectDocument* document, QObject* parent = nullptr);
    ~ClusterScene() override;

    ProjectDocument* document() const { return m_document; }
    NodeItem* nodeItem(int id) const { return m_nodes.value(id); }
    SwitchItem* switchItem(int id) const { return m_switches.value(id); }
    LinkItem* linkItem(int a, int b) const;
    EndpointItem* endpoint(int id) const;
    int linkCount() const { return int(m_links.size()); }

    QSet<int> selectedIds() const;
    QList<QPair<int, int>> selectedLinks() const;
    void selectIds(const QSet<int>& ids);

    bool snapToGrid() const { return m_snap; }
    void setSnapToGrid(bool on);
    bool isDragging() const { return m_dragging; }

    // Highlights the given nodes (a hovered pipeline stage); empty clears.
    void highlightNodes(const QVector<int>& ids);
    QRectF itemsRect() const;

    // Marks the items each link's line passes under (LinkItem::setCrossedItems), then lays
    // out the labels. Runs once per event-loop turn after items move or change
    // (scheduleLinkLayout), a few times a second during a drag.
    void layoutLinks();
    void scheduleLinkLayout();
    // Places every link's label where it covers no node, switch or other label, sliding it
    // along its line (from the node's end for a link between a node and a switch, from the
    // middle otherwise); a label with no such place is not drawn, and shows, when its link is
    // selected, off the items or at least off the link's two ends.
    void layoutLinkLabels();

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;
    void drawBackground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuild();
    void addNodeItem(int id);
    void addSwitchItem(int id);
    void addLinkItem(int a, int b);
    void removeEndpoint(int id);
    void removeLinkItem(int a, int b);
    void updateProblems();

    static QPair<int, int> key(int a, int b) { return a < b ? qMakePair(a, b) : qMakePair(b, a); }

    ProjectDocument* m_document;
    QHash<int, NodeItem*> m_nodes;
    QHash<int, SwitchItem*> m_switches;
    QHash<QPair<int, int>, LinkItem*> m_links;
    QVector<int> m_highlighted;
    bool m_snap = true;
    bool m_dragging = false;
    bool m_linkLayoutPending = false;
};

} // namespace hapmoe::ui
