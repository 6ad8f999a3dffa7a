#include "ClusterScene.h"

#include "CollectiveLibraries.h"

#include "LinkItem.h"
#include "NodeItem.h"
#include "ProjectDocument.h"
#include "SwitchItem.h"
#include "Theme.h"

#include "hardware/ClusterTopology.h"
#include "hardware/DeviceCatalog.h"

#include <QApplication>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace hapmoe::ui {

ClusterScene::ClusterScene(ProjectDocument* document, QObject* parent)
    : QGraphicsScene(parent), m_document(document)
{
    setItemIndexMethod(QGraphicsScene::NoIndex);   // small scenes, many moves
    connect(document, &ProjectDocument::clusterReset, this, &ClusterScene::rebuild);
    connect(document, &ProjectDocument::nodeAdded, this, &ClusterScene::addNodeItem);
    connect(document, &ProjectDocument::switchAdded, this, &ClusterScene::addSwitchItem);
    connect(document, &ProjectDocument::linkAdded, this, &ClusterScene::addLinkItem);
    connect(document, &ProjectDocument::nodeRemoved, this, &ClusterScene::removeEndpoint);
    connect(document, &ProjectDocument::switchRemoved, this, &ClusterScene::removeEndpoint);
    connect(document, &ProjectDocument::linkRemoved, this, &ClusterScene::removeLinkItem);
    connect(document, &ProjectDocument::nodeChanged, this, [this](int id) {
        if (NodeItem* item = m_nodes.value(id))
            if (const Node* n = m_document->cluster().node(id))
                item->setNode(*n);
        scheduleLabelLayout();
    });
    connect(document, &ProjectDocument::switchChanged, this, [this](int id) {
        if (SwitchItem* item = m_switches.value(id))
            if (const Switch* s = m_document->cluster().switchById(id))
                item->setSwitch(*s);
        scheduleLabelLayout();   // the switch's size follows its label
    });
    connect(document, &ProjectDocument::linkChanged, this, [this](int a, int b) {
        if (LinkItem* item = linkItem(a, b))
            if (const Link* l = m_document->findLink(a, b))
                item->setLink(*l);
    });
    connect(document, &ProjectDocument::clusterChanged, this, &ClusterScene::updateProblems);
    rebuild();
}

ClusterScene::~ClusterScene()
{
    // Links first: they hold pointers to their endpoints.
    for (LinkItem* link : std::as_const(m_links))
        delete link;
    m_links.clear();
}

LinkItem* ClusterScene::linkItem(int a, int b) const { return m_links.value(key(a, b)); }

EndpointItem* ClusterScene::endpoint(int id) const
{
    if (NodeItem* n = m_nodes.value(id))
        return n;
    return m_switches.value(id);
}

void ClusterScene::rebuild()
{
    for (LinkItem* link : std::as_const(m_links))
        delete link;
    m_links.clear();
    qDeleteAll(m_nodes);
    m_nodes.clear();
    qDeleteAll(m_switches);
    m_switches.clear();
    const Cluster& c = m_document->cluster();
    for (const auto& n : c.nodes)
        addNodeItem(n.id);
    for (const auto& s : c.switches)
        addSwitchItem(s.id);
    for (const auto& l : c.links)
        addLinkItem(l.a, l.b);
    highlightNodes(m_highlighted);
    updateProblems();
}

void ClusterScene::addNodeItem(int id)
{
    const Node* n = m_document->cluster().node(id);
    if (!n || m_nodes.contains(id))
        return;
    auto* item = new NodeItem(*n);
    addItem(item);
    m_nodes.insert(id, item);
    scheduleLabelLayout();
}

void ClusterScene::addSwitchItem(int id)
{
    const Switch* s = m_document->cluster().switchById(id);
    if (!s || m_switches.contains(id))
        return;
    auto* item = new SwitchItem(*s);
    addItem(item);
    m_switches.insert(id, item);
    scheduleLabelLayout();
}

void ClusterScene::addLinkItem(int a, int b)
{
    const Link* l = m_document->findLink(a, b);
    EndpointItem* ea = endpoint(a);
    EndpointItem* eb = endpoint(b);
    if (!l || !ea || !eb || m_links.contains(key(a, b)))
        return;
    auto* item = new LinkItem(*l, ea, eb);
    addItem(item);
    m_links.insert(key(a, b), item);
    scheduleLabelLayout();
}

void ClusterScene::removeEndpoint(int id)
{
    // Any link still attached is removed with its endpoint.
    for (auto it = m_links.begin(); it != m_links.end();) {
        if (it.key().first == id || it.key().second == id) {
            delete it.value();
            it = m_links.erase(it);
        } else {
            ++it;
        }
    }
    delete m_nodes.take(id);
    delete m_switches.take(id);
    scheduleLabelLayout();
}

void ClusterScene::removeLinkItem(int a, int b)
{
    delete m_links.take(key(a, b));
    scheduleLabelLayout();
}

void ClusterScene::scheduleLabelLayout()
{
    if (m_labelLayoutPending)
        return;
    m_labelLayoutPending = true;
    // While items are dragged the labels ride along their lines and are placed again a few
    // times a second, not on every mouse move (a layout of 1,000 links takes milliseconds).
    QTimer::singleShot(m_dragging ? 100 : 0, this, &ClusterScene::layoutLinkLabels);
}

namespace {

// Rectangles in a grid of square cells, for the layout's free-place tests: a test looks at
// the rectangles of the cells it touches only.
class RectGrid {
public:
    void add(const QRectF& r)
    {
        const int index = int(m_rects.size());
        m_rects.push_back(r);
        forCells(r, [&](qint64 cell) {
            m_cells[cell].push_back(index);
            return false;
        });
    }
    bool intersects(const QRectF& r) const
    {
        return forCells(r, [&](qint64 cell) {
            const auto it = m_cells.find(cell);
            return it != m_cells.end()
                && std::any_of(it->second.begin(), it->second.end(), [&](int i) { return m_rects[std::size_t(i)].intersects(r); });
        });
    }
    bool contains(QPointF p) const
    {
        const auto it = m_cells.find(key(cellOf(p.x()), cellOf(p.y())));
        return it != m_cells.end()
            && std::any_of(it->second.begin(), it->second.end(), [&](int i) { return m_rects[std::size_t(i)].contains(p); });
    }

private:
    static constexpr double kCell = 256;
    static int cellOf(double v) { return int(std::floor(v / kCell)); }
    static qint64 key(int x, int y) { return (qint64(x) << 32) ^ qint64(quint32(y)); }
    // Calls f for each cell r touches until f returns true; returns whether one did.
    template <class F>
    bool forCells(const QRectF& r, F f) const
    {
        for (int x = cellOf(r.left()); x <= cellOf(r.right()); ++x)
            for (int y = cellOf(r.top()); y <= cellOf(r.bottom()); ++y)
                if (f(key(x, y)))
                    return true;
        return false;
    }
    std::vector<QRectF> m_rects;
    std::unordered_map<qint64, std::vector<int>> m_cells;
};

} // namespace

void ClusterScene::layoutLinkLabels()
{
    m_labelLayoutPending = false;
    constexpr double kMargin = 3;   // px kept free between labels
    // The items as far as they draw (body, problem badge, highlight ring) and take clicks:
    // their bounding rectangles.
    RectGrid items, labels;
    for (const NodeItem* n : std::as_const(m_nodes))
        items.add(n->sceneBoundingRect());
    for (const SwitchItem* s : std::as_const(m_switches))
        items.add(s->sceneBoundingRect());
    auto isFree = [&](const QRectF& r) { return !items.intersects(r) && !labels.intersects(r); };
    // Links between switches (the few trunk links) first, then the rest, each group in id
    // order: the result does not depend on the hash's order.
    std::vector<std::pair<QPair<int, int>, LinkItem*>> links;
    links.reserve(std::size_t(m_links.size()));
    for (auto it = m_links.cbegin(); it != m_links.cend(); ++it)
        links.emplace_back(it.key(), it.value());
    auto trunk = [&](const QPair<int, int>& k) { return m_switches.contains(k.first) && m_switches.contains(k.second); };
    std::sort(links.begin(), links.end(), [&](const auto& x, const auto& y) {
        if (trunk(x.first) != trunk(y.first))
            return trunk(x.first);
        return x.first < y.first;
    });
    for (const auto& [k, link] : links) {
        const double length = QLineF(link->p1(), link->p2()).length();
        // Candidate centres every 4 px along the line (at least 24 places on short lines),
        // numbered from the node's end for a link between a node and a switch (a switch's
        // fan of links spreads out towards its nodes), else from the first end.
        const int steps = std::max(24, int(length / 4));
        const bool aIsNode = m_nodes.contains(link->link().a), bIsNode = m_nodes.contains(link->link().b);
        const bool fromB = bIsNode && !aIsNode;
        auto tAt = [&](int i) { return fromB ? 1.0 - double(i) / steps : double(i) / steps; };
        auto pointAt = [&](int i) { return link->p1() + tAt(i) * (link->p2() - link->p1()); };
        // The stretches of the line that no item covers, as runs of candidate numbers
        // [first, last], from that end.
        auto freeStretches = [&]() {
            std::vector<std::pair<int, int>> runs;
            for (int i = 1; i < steps; ++i) {
                if (items.contains(pointAt(i)))
                    continue;
                if (!runs.empty() && runs.back().second == i - 1)
                    runs.back().second = i;
                else
                    runs.push_back({i, i});
            }
            return runs;
        };
        std::vector<double> ts;
        ts.reserve(std::size_t(steps));
        if (aIsNode != bIsNode) {
            // Every label of a fan just off its node, the closest place that is free.
            for (int i = 1; i < steps; ++i)
                ts.push_back(tAt(i));
        } else {
            // Between two switches or two nodes: the middle of the first stretch of the line
            // that no item covers (the middle of the line when nothing lies across it), then
            // outwards from the middle.
            if (const auto runs = freeStretches(); !runs.empty())
                ts.push_back(tAt((runs.front().first + runs.front().second) / 2));
            ts.push_back(0.5);
            for (int i = 1; i < steps / 2; ++i) {
                ts.push_back(0.5 - double(i) / steps);
                ts.push_back(0.5 + double(i) / steps);
            }
        }
        bool placed = false;
        double onSelect = -1;   // where the label shows when selected, if it has no place
        for (double t : ts) {
            const QRectF r = link->labelRectAt(t).adjusted(-kMargin, -kMargin, kMargin, kMargin);
            if (isFree(r)) {
                link->setLabelPlacement(t, true);
                labels.add(r);
                placed = true;
                break;
            }
            if (onSelect < 0 && !items.intersects(r))
                onSelect = t;
        }
        if (!placed) {
            // Selected, it shows off the items if any place is (over other labels then),
            // else at the middle of the longest stretch of its line that no item covers.
            if (onSelect < 0) {
                const auto runs = freeStretches();
                const auto longest = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
                    return a.second - a.first < b.second - b.first;
                });
                onSelect = longest != runs.end() ? tAt((longest->first + longest->second) / 2) : 0.5;
            }
            link->setLabelPlacement(onSelect, false);
        }
    }
}

QSet<int> ClusterScene::selectedIds() const
{
    QSet<int> ids;
    for (QGraphicsItem* item : selectedItems())
        if (auto* e = dynamic_cast<EndpointItem*>(item))
            ids.insert(e->id());
    return ids;
}

QList<QPair<int, int>> ClusterScene::selectedLinks() const
{
    QList<QPair<int, int>> links;
    for (QGraphicsItem* item : selectedItems())
        if (item->type() == LinkItem::Type) {
            const Link& l = static_cast<LinkItem*>(item)->link();
            links.append({l.a, l.b});
        }
    return links;
}

void ClusterScene::selectIds(const QSet<int>& ids)
{
    clearSelection();
    for (int id : ids)
        if (EndpointItem* e = endpoint(id))
            e->setSelected(true);
}

void ClusterScene::setSnapToGrid(bool on)
{
    m_snap = on;
    update();
}

void ClusterScene::highlightNodes(const QVector<int>& ids)
{
    m_highlighted = ids;
    for (NodeItem* item : std::as_const(m_nodes))
        item->setHighlighted(ids.contains(item->id()));
}

QRectF ClusterScene::itemsRect() const
{
    QRectF rect;
    for (NodeItem* n : m_nodes)
        rect = rect.united(n->sceneBoundingRect());
    for (SwitchItem* s : m_switches)
        rect = rect.united(s->sceneBoundingRect());
    return rect;
}

void ClusterScene::updateProblems()
{
    QHash<int, QStringList> byId;
    try {
        ClusterTopology topology(m_document->cluster(), m_document->catalog());
        for (const auto& problem : topology.problems())
            for (int id : problem.ids)
                byId[id].append(QString::fromStdString(problem.message));
    } catch (const std::exception&) {
        // The problems panel reports what cannot be analysed.
    }
    for (NodeItem* n : std::as_const(m_nodes))
        n->setProblems(byId.value(n->id()));
    for (SwitchItem* s : std::as_const(m_switches))
        s->setProblems(byId.value(s->id()));
    // Oversubscribed switches show their ratio (docs/cost-model.md section 6).
    const SwitchUplinks uplinks = switchUplinks(m_document->cluster(), &m_document->catalog());
    for (SwitchItem* s : std::as_const(m_switches))
        s->setOversubscription(uplinks.oversubscription(s->id()));
    scheduleLabelLayout();   // an oversubscribed switch's label may take a second line
    // Links between nodes whose collective libraries differ: their traffic crosses the bridge.
    for (LinkItem* link : std::as_const(m_links))
        link->setCrossVendor(crossesBridge(m_document->cluster(), m_document->catalog(), link->link().a, link->link().b));
}

void ClusterScene::mousePressEvent(QGraphicsSceneMouseEvent* event)
{
    if (event->button() == Qt::LeftButton)
        m_dragging = true;
    QGraphicsScene::mousePressEvent(event);
}

void ClusterScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* event)
{
    QGraphicsScene::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || !m_dragging)
        return;
    m_dragging = false;
    // One undo step for the whole drag: compare the items with the document.
    QHash<int, QPointF> moved;
    const Cluster& c = m_document->cluster();
    for (NodeItem* n : std::as_const(m_nodes))
        if (const Node* node = c.node(n->id()); node && n->pos() != QPointF(node->x, node->y))
            moved.insert(n->id(), n->pos());
    for (SwitchItem* s : std::as_const(m_switches))
        if (const Switch* sw = c.switchById(s->id()); sw && s->pos() != QPointF(sw->x, sw->y))
            moved.insert(s->id(), s->pos());
    if (!moved.isEmpty())
        m_document->moveItems(moved);
}

void ClusterScene::drawBackground(QPainter* painter, const QRectF& rect)
{
    const QPalette pal = QApplication::palette();
    painter->fillRect(rect, pal.color(QPalette::Base));
    if (!m_snap)
        return;
    // Dots on the snap grid, every second grid line, faint enough to stay behind labels.
    const double step = EndpointItem::kGrid * 2;
    QColor dot = pal.color(QPalette::Text);
    dot.setAlpha(isDark(pal) ? 50 : 40);
    painter->setPen(QPen(dot, 2));
    const double left = std::floor(rect.left() / step) * step;
    const double top = std::floor(rect.top() / step) * step;
    QVector<QPointF> points;
    for (double x = left; x < rect.right(); x += step)
        for (double y = top; y < rect.bottom(); y += step)
            points.append(QPointF(x, y));
    if (points.size() < 200000)
        painter->drawPoints(points.constData(), int(points.size()));
}

} // namespace hapmoe::ui
