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
#include <optional>
#include <unordered_map>
#include <utility>

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
        scheduleLinkLayout();
    });
    connect(document, &ProjectDocument::switchChanged, this, [this](int id) {
        if (SwitchItem* item = m_switches.value(id))
            if (const Switch* s = m_document->cluster().switchById(id))
                item->setSwitch(*s);
        scheduleLinkLayout();   // the switch's size follows its label
    });
    connect(document, &ProjectDocument::linkChanged, this, [this](int a, int b) {
        if (LinkItem* item = linkItem(a, b))
            if (const Link* l = m_document->findLink(a, b))
                item->setLink(*l);
    });
    connect(document, &ProjectDocument::clusterChanged, this, &ClusterScene::updateProblems);
    // A type's figures changed (the device type editor): the nodes show them again.
    connect(document, &ProjectDocument::devicesChanged, this, [this] {
        for (NodeItem* item : std::as_const(m_nodes))
            if (const Node* n = m_document->cluster().node(item->node().id))
                item->setNode(*n);
    });
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
    auto* item = new NodeItem(*n, m_document->catalog());
    addItem(item);
    m_nodes.insert(id, item);
    scheduleLinkLayout();
}

void ClusterScene::addSwitchItem(int id)
{
    const Switch* s = m_document->cluster().switchById(id);
    if (!s || m_switches.contains(id))
        return;
    auto* item = new SwitchItem(*s);
    addItem(item);
    m_switches.insert(id, item);
    scheduleLinkLayout();
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
    scheduleLinkLayout();
}

void ClusterScene::removeEndpoint(int id)
{
    // Any link still attached is removed with its endpoint; the others forget it.
    EndpointItem* item = endpoint(id);
    for (auto it = m_links.begin(); it != m_links.end();) {
        if (it.key().first == id || it.key().second == id) {
            delete it.value();
            it = m_links.erase(it);
        } else {
            it.value()->forgetItem(item);
            ++it;
        }
    }
    delete m_nodes.take(id);
    delete m_switches.take(id);
    scheduleLinkLayout();
}

void ClusterScene::removeLinkItem(int a, int b)
{
    delete m_links.take(key(a, b));
    scheduleLinkLayout();
}

void ClusterScene::scheduleLinkLayout()
{
    if (m_linkLayoutPending)
        return;
    m_linkLayoutPending = true;
    // While items are dragged the labels ride along their lines and are placed again a few
    // times a second, not on every mouse move (a layout of 1,000 links takes milliseconds).
    QTimer::singleShot(m_dragging ? 100 : 0, this, &ClusterScene::layoutLinks);
}

namespace {

// Whether the segment (t from 0 to 1) meets the rectangle.
bool segmentMeetsRect(const QLineF& segment, const QRectF& r)
{
    const auto span = lineSpanInRect(segment, r);
    return span && span->to >= 0 && span->from <= 1;
}

// Rectangles in a grid of square cells, for the layout's free-place tests: a test looks at
// the rectangles of the cells it touches only.
class RectGrid {
public:
    void add(const QRectF& r)
    {
        const int index = int(m_rects.size());
        m_rects.push_back(r);
        m_looked.push_back(0);
        forCells(r, [&](int x, int y) {
            m_cells[key(x, y)].push_back(index);
            return false;
        });
    }
    bool intersects(const QRectF& r) const
    {
        return forCells(r, [&](int x, int y) {
            const auto it = m_cells.find(key(x, y));
            return it != m_cells.end()
                && std::any_of(it->second.begin(), it->second.end(), [&](int i) { return m_rects[std::size_t(i)].intersects(r); });
        });
    }
    // The rectangles the segment meets. It looks at the cells the segment passes through
    // only, column by column, and at each rectangle once.
    std::vector<int> meeting(const QLineF& segment) const
    {
        std::vector<int> found;
        ++m_round;
        const QRectF extent = QRectF(segment.p1(), segment.p2()).normalized();
        for (int x = cellOf(extent.left()); x <= cellOf(extent.right()); ++x) {
            // The segment's stretch inside this column, and the rows it spans there.
            const auto span = lineSpanInRect(segment, QRectF(x * kCell, extent.top(), kCell, extent.height()));
            if (!span)
                continue;
            const double y0 = segment.pointAt(std::clamp(span->from, 0.0, 1.0)).y();
            const double y1 = segment.pointAt(std::clamp(span->to, 0.0, 1.0)).y();
            for (int y = cellOf(std::min(y0, y1)); y <= cellOf(std::max(y0, y1)); ++y)
                if (const auto it = m_cells.find(key(x, y)); it != m_cells.end())
                    for (int i : it->second)
                        if (std::exchange(m_looked[std::size_t(i)], m_round) != m_round
                            && segmentMeetsRect(segment, m_rects[std::size_t(i)]))
                            found.push_back(i);
        }
        return found;
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
    // Calls f(x, y) for each cell r touches until f returns true; returns whether one did.
    template <class F>
    bool forCells(const QRectF& r, F f) const
    {
        for (int x = cellOf(r.left()); x <= cellOf(r.right()); ++x)
            for (int y = cellOf(r.top()); y <= cellOf(r.bottom()); ++y)
                if (f(x, y))
                    return true;
        return false;
    }
    std::vector<QRectF> m_rects;
    std::unordered_map<qint64, std::vector<int>> m_cells;
    mutable std::vector<unsigned> m_looked;   // per rectangle, the last call of meeting() that looked at it
    mutable unsigned m_round = 0;
};

} // namespace

void ClusterScene::layoutLinks()
{
    m_linkLayoutPending = false;
    // The items each line passes under, other than its ends: their bodies.
    RectGrid bodies;
    QList<EndpointItem*> endpoints;
    auto addBody = [&](EndpointItem* item) {
        bodies.add(item->mapRectToScene(item->body()));
        endpoints.append(item);
    };
    for (NodeItem* n : std::as_const(m_nodes))
        addBody(n);
    for (SwitchItem* s : std::as_const(m_switches))
        addBody(s);
    for (LinkItem* link : std::as_const(m_links)) {
        const QLineF line(link->p1(), link->p2());
        QList<EndpointItem*> crossed;
        for (int i : bodies.meeting(line))
            if (EndpointItem* item = endpoints[i]; item != link->endA() && item != link->endB())
                if (const auto span = item->outlineSpan(line); span && span->to > 0 && span->from < 1)
                    crossed.append(item);
        link->setCrossedItems(crossed);
    }
    layoutLinkLabels();
}

void ClusterScene::layoutLinkLabels()
{
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
    std::vector<std::pair<LinkItem*, double>> besideLine;   // no place on the line off the items: at t
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
                link->setLabelPlacement(t, 0, true);
                labels.add(r);
                placed = true;
                break;
            }
            if (onSelect < 0 && !items.intersects(r))
                onSelect = t;
        }
        if (!placed) {
            // Selected, it shows on its line off the items if any place is (over other labels
            // then), else beside the middle of the longest stretch of its line that no item
            // covers (of the whole line when none does), once every label that has a place
            // has it.
            if (onSelect >= 0) {
                link->setLabelPlacement(onSelect, 0, false);
            } else {
                const auto runs = freeStretches();
                const auto longest = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
                    return a.second - a.first < b.second - b.first;
                });
                besideLine.emplace_back(link, longest != runs.end() ? tAt((longest->first + longest->second) / 2) : 0.5);
            }
        }
    }
    // Beside the line: moved along its normal, up (or right) first, to the nearest place off
    // the items and the labels, or if that is much further, off the items, or in a crowded
    // drawing at least off the link's two ends (never over an end's icon or name). Steps of 4
    // units, as far as both ends' and the label's sizes can take; a free place is worth a
    // line further than one over labels.
    constexpr double kStep = 4, kFarthest = 600, kFreeWorth = 24;
    for (const auto& [link, t] : besideLine) {
        const QRectF endA = link->endA()->sceneBoundingRect(), endB = link->endB()->sceneBoundingRect();
        std::optional<double> offItems, offEnds, free;
        for (double d = kStep; d <= kFarthest && !free && !(offItems && d > std::abs(*offItems) + kFreeWorth); d += kStep)
            for (double side : {1.0, -1.0}) {
                const QRectF r = link->labelRectAt(t, side * d).adjusted(-kMargin, -kMargin, kMargin, kMargin);
                if (isFree(r)) {
                    free = side * d;
                    break;
                }
                if (!offItems && !items.intersects(r))
                    offItems = side * d;
                if (!offEnds && !r.intersects(endA) && !r.intersects(endB))
                    offEnds = side * d;
            }
        link->setLabelPlacement(t, free ? *free : offItems ? *offItems : offEnds.value_or(0), false);
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
    scheduleLinkLayout();   // an oversubscribed switch's label may take a second line
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
