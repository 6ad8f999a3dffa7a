#include "ClusterView.h"

#include "ClusterScene.h"
#include "EndpointItem.h"
#include "NodeItem.h"
#include "SwitchItem.h"
#include "ProjectDocument.h"

#include "hardware/DeviceCatalog.h"

#include <QApplication>
#include <QClipboard>
#include <QDragEnterEvent>
#include <QGraphicsLineItem>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QResizeEvent>
#include <QScrollBar>
#include <QtMath>

#include <optional>

namespace hapmoe::ui {

namespace {

// The clipboard form of a selection: plain JSON of the items and the links among them.
QByteArray itemsToJson(const ClusterItems& items)
{
    QJsonArray nodes, switches, links;
    for (const auto& n : items.nodes)
        nodes.append(QJsonObject{{"id", n.id}, {"host", QString::fromStdString(n.host)},
                                 {"device_type", QString::fromStdString(n.device_type)}, {"count", n.count},
                                 {"nics", n.nics}, {"nic_gbit", n.nic_gbit}, {"host_memory_gib", n.host_memory_gib},
                                 {"host_link_gbytes_per_s", n.host_link_gbytes_per_s}, {"x", n.x}, {"y", n.y}});
    for (const auto& s : items.switches)
        switches.append(QJsonObject{{"id", s.id}, {"name", QString::fromStdString(s.name)}, {"x", s.x}, {"y", s.y}});
    for (const auto& l : items.links)
        links.append(QJsonObject{{"a", l.a}, {"b", l.b}, {"bandwidth", l.bandwidth_gbytes_per_s},
                                 {"latency", l.latency_us}});
    return QJsonDocument(QJsonObject{{"nodes", nodes}, {"switches", switches}, {"links", links}}).toJson();
}

ClusterItems itemsFromJson(const QByteArray& data)
{
    ClusterItems items;
    const QJsonObject root = QJsonDocument::fromJson(data).object();
    for (const auto& v : root.value("nodes").toArray()) {
        const QJsonObject o = v.toObject();
        Node n;
        n.id = o.value("id").toInt();
        n.host = o.value("host").toString().toStdString();
        n.device_type = o.value("device_type").toString().toStdString();
        n.count = std::max(1, o.value("count").toInt(8));
        n.nics = std::max(0, o.value("nics").toInt());
        n.nic_gbit = std::max(0.0, o.value("nic_gbit").toDouble());
        n.host_memory_gib = std::max(0.0, o.value("host_memory_gib").toDouble());
        n.host_link_gbytes_per_s = std::max(0.0, o.value("host_link_gbytes_per_s").toDouble());
        n.x = o.value("x").toDouble();
        n.y = o.value("y").toDouble();
        items.nodes.push_back(n);
    }
    for (const auto& v : root.value("switches").toArray()) {
        const QJsonObject o = v.toObject();
        Switch s;
        s.id = o.value("id").toInt();
        s.name = o.value("name").toString().toStdString();
        s.x = o.value("x").toDouble();
        s.y = o.value("y").toDouble();
        items.switches.push_back(s);
    }
    for (const auto& v : root.value("links").toArray()) {
        const QJsonObject o = v.toObject();
        Link l;
        l.a = o.value("a").toInt();
        l.b = o.value("b").toInt();
        l.bandwidth_gbytes_per_s = o.value("bandwidth").toDouble();
        l.latency_us = o.value("latency").toDouble();
        items.links.push_back(l);
    }
    return items;
}

} // namespace

ClusterView::ClusterView(ClusterScene* scene, QWidget* parent) : QGraphicsView(scene, parent), m_scene(scene)
{
    setAcceptDrops(true);
    setDragMode(QGraphicsView::RubberBandDrag);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setMouseTracking(true);   // the Connect line follows the pointer between two clicks
    auto growSceneRect = [this] {
        setSceneRect(QRectF(-4000, -3000, 12000, 8000).united(m_scene->itemsRect().adjusted(-2000, -1500, 2000, 1500)));
        // Fitted, the view shows every item and needs no scroll bars; once an item lies
        // outside it (dragged or dropped beyond the edge), the bars come back.
        // (An empty cluster has nothing outside the view.)
        const QRectF items = m_scene->itemsRect();
        if (m_autoFit && !items.isNull() && !mapToScene(viewport()->rect()).boundingRect().contains(items))
            setAutoFit(false);
    };
    growSceneRect();
    connect(document(), &ProjectDocument::clusterChanged, this, growSceneRect);
    // A whole new cluster (a preset, a file, or the undo of one) is shown whole, once the
    // scene rect has grown to it (queued: growSceneRect follows on clusterChanged). A Connect
    // waiting for its second click ends with the cluster it started in, or with its item.
    connect(document(), &ProjectDocument::clusterReset, this, &ClusterView::zoomToFit, Qt::QueuedConnection);
    connect(document(), &ProjectDocument::clusterReset, this, [this] { finishConnect(-1); });
    auto endConnectOf = [this](int id) {
        if (id == m_connectFrom)
            finishConnect(-1);
    };
    connect(document(), &ProjectDocument::nodeRemoved, this, endConnectOf);
    connect(document(), &ProjectDocument::switchRemoved, this, endConnectOf);
    // A fitted view fits again when items go (a delete, the undo of a drop): what is left
    // is shown whole, not off-centre. Once per event-loop pass, however many went.
    auto refitAfterRemoval = [this] {
        if (!m_autoFit || m_refitQueued)
            return;
        m_refitQueued = true;
        QMetaObject::invokeMethod(this, [this] {
            m_refitQueued = false;
            if (m_autoFit)
                zoomToFit();
        }, Qt::QueuedConnection);
    };
    connect(document(), &ProjectDocument::nodeRemoved, this, refitAfterRemoval);
    connect(document(), &ProjectDocument::switchRemoved, this, refitAfterRemoval);
    setAutoFit(true);
}

void ClusterView::setAutoFit(bool on)
{
    m_autoFit = on;
    const Qt::ScrollBarPolicy policy = on ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded;
    setHorizontalScrollBarPolicy(policy);
    setVerticalScrollBarPolicy(policy);
}

ProjectDocument* ClusterView::document() const { return m_scene->document(); }

int ClusterView::endpointAt(const QPoint& viewportPos) const
{
    for (QGraphicsItem* item : items(viewportPos))
        if (auto* e = dynamic_cast<EndpointItem*>(item))
            return e->id();
    return -1;
}

bool ClusterView::isFree(const QRectF& sceneRect) const
{
    // Bodies keep a grid step apart, so that two items never touch.
    const QRectF around = sceneRect.adjusted(-EndpointItem::kGrid, -EndpointItem::kGrid, EndpointItem::kGrid, EndpointItem::kGrid);
    for (QGraphicsItem* item : m_scene->items(around, Qt::IntersectsItemBoundingRect))
        if (auto* e = dynamic_cast<EndpointItem*>(item); e && e->mapRectToScene(e->body()).intersects(around))
            return false;
    return true;
}

QPointF ClusterView::freeSpot(QPointF wanted, const QList<QRectF>& bodies) const
{
    // Each body free, not the group's outline: two copied nodes far apart fit on either side
    // of what lies between them.
    auto freeAt = [&](QPointF p) {
        for (const QRectF& b : bodies)
            if (!isFree(b.translated(p)))
                return false;
        return true;
    };
    if (freeAt(wanted))
        return wanted;
    QRectF body;
    for (const QRectF& b : bodies)
        body = body.united(b);
    const QRectF all = m_scene->itemsRect();
    // Rectangles of growing size around the wanted point, three grid steps wide for each
    // one high, so that an item goes beside its neighbours (nodes are 190 wide and 76 high)
    // before it goes below them; of a rectangle's free positions the nearest wins, the right
    // before the left. 60 rings reach 3600 px sideways and 1200 px up or down.
    const double step = EndpointItem::kGrid;
    const double stepX = 3 * step;
    constexpr int kRings = 60;
    // A group as large as that search reaches (a pasted block of a large cluster), or of
    // more items than it can test at each place, goes straight beside the drawing.
    const bool large = body.width() > kRings * step || body.height() > kRings * step || bodies.size() > 64;
    for (int r = 1; r <= kRings && !large; ++r) {
        std::optional<QPointF> best;
        double bestDistance = 0;
        auto consider = [&](int i, int j) {
            const QPointF p = wanted + QPointF(i * stepX, j * step);
            const double d = double(i) * i + double(j) * j;   // in rings: sideways counts as near as down
            if ((!best || d < bestDistance) && freeAt(p)) {
                best = p;
                bestDistance = d;
            }
        };
        for (int k = -r + 1; k < r; ++k) {
            consider(r, k);
            consider(-r, k);
        }
        for (int k = -r; k <= r; ++k) {
            consider(k, r);
            consider(k, -r);
        }
        if (best)
            return *best;
    }
    // Beside the whole drawing, level with the wanted point.
    const double x = all.right() + 2 * step - body.left();
    return QPointF(qRound(x / step) * step, wanted.y());
}

QPointF ClusterView::besideChildren(int target) const
{
    const Cluster& c = document()->cluster();
    constexpr double kColumn = 12 * EndpointItem::kGrid;   // a node (190) and a gap
    if (const Node* n = c.node(target))
        return QPointF(n->x + kColumn, n->y);
    const Switch* sw = c.switchById(target);
    if (!sw)
        return {};
    // The nodes linked to the switch and drawn below it: the last in reading order, and the
    // left edge of their block.
    const Node* last = nullptr;
    double left = 0;
    for (const Link& l : c.links) {
        const int other = l.a == target ? l.b : l.b == target ? l.a : -1;
        const Node* n = other >= 0 ? c.node(other) : nullptr;
        if (!n || n->y <= sw->y)
            continue;
        left = last ? std::min(left, n->x) : n->x;
        if (!last || n->y > last->y + 1e-9 || (std::abs(n->y - last->y) <= 1e-9 && n->x > last->x))
            last = n;
    }
    if (!last)
        return QPointF(sw->x, sw->y + 7 * EndpointItem::kGrid);
    // After the last one in its row; when that place is taken (the next switch's nodes start
    // there), a new row under the block, from its left edge.
    const QPointF after(last->x + kColumn, last->y);
    if (isFree(NodeItem::bodyRect().translated(after)))
        return after;
    return QPointF(left, last->y + 6 * EndpointItem::kGrid);
}

void ClusterView::reveal(const QSet<int>& ids, bool wasFitted)
{
    QRectF rect;
    for (int id : ids)
        if (EndpointItem* e = m_scene->endpoint(id))
            rect = rect.united(e->sceneBoundingRect());
    if (rect.isNull())
        return;
    if (wasFitted)
        zoomToFit();
    else
        ensureVisible(rect, 40, 40);
}

int ClusterView::handleDrop(const QMimeData* mime, const QPoint& viewportPos, Qt::KeyboardModifiers modifiers)
{
    if (!mime || !mime->hasFormat(QString::fromLatin1(kDeviceMimeType)))
        return -1;
    const QString type = QString::fromUtf8(mime->data(QString::fromLatin1(kDeviceMimeType)));
    if (type.isEmpty())
        return -1;
    int count = m_defaultCount;
    if (modifiers & Qt::ShiftModifier) {
        bool ok = false;
        count = QInputDialog::getInt(this, tr("Add %1 node").arg(type), tr("Devices in the node:"), count, 1, 4096, 1, &ok);
        if (!ok)
            return -1;
    }
    QPointF pos = mapToScene(viewportPos);
    // Dropped on an item, the new node is linked to it: on a switch, after the last of the
    // nodes already hanging below it (its last row, to the right), or just below it when it
    // has none; on a node, beside it to the right.
    const int target = endpointAt(viewportPos);
    if (target >= 0)
        pos = besideChildren(target);
    if (m_scene->snapToGrid())
        pos = EndpointItem::snapped(pos);
    pos = freeSpot(pos, {NodeItem::bodyRect()});
    const bool fitted = m_autoFit;
    const int id = document()->addNode(type, count, pos, target);
    m_scene->selectIds({id});
    reveal({id}, fitted);
    return id;
}

// A device drop is always a copy: Shift (which asks for the device count here) makes some
// platforms propose a move, and a move would take the entry out of the palette.
void ClusterView::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasFormat(QString::fromLatin1(kDeviceMimeType))) {
        event->setDropAction(Qt::CopyAction);
        event->accept();
    } else {
        QGraphicsView::dragEnterEvent(event);
    }
}

void ClusterView::dragMoveEvent(QDragMoveEvent* event)
{
    if (event->mimeData()->hasFormat(QString::fromLatin1(kDeviceMimeType))) {
        event->setDropAction(Qt::CopyAction);
        event->accept();
    } else {
        QGraphicsView::dragMoveEvent(event);
    }
}

void ClusterView::dropEvent(QDropEvent* event)
{
    event->setDropAction(Qt::CopyAction);
    if (handleDrop(event->mimeData(), event->position().toPoint(), event->modifiers()) >= 0)
        event->accept();
    else
        event->ignore();
}

void ClusterView::setConnectMode(bool on)
{
    if (on == m_connectMode)
        return;
    m_connectMode = on;
    if (!on)
        finishConnect(-1);
    setDragMode(on ? QGraphicsView::NoDrag : QGraphicsView::RubberBandDrag);
    viewport()->setCursor(on ? Qt::CrossCursor : Qt::ArrowCursor);
    emit connectModeChanged(on);
}

double ClusterView::zoom() const { return transform().m11(); }

void ClusterView::zoomBy(double factor)
{
    setAutoFit(false);
    const double target = qBound(0.1, zoom() * factor, 4.0);
    const double f = target / zoom();
    scale(f, f);
    emit zoomChanged(zoom());
}

void ClusterView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    if (m_autoFit)
        zoomToFit();
}

void ClusterView::zoomToFit()
{
    setAutoFit(true);
    const QRectF rect = m_scene->itemsRect();
    if (rect.isEmpty()) {
        resetTransform();
        centerOn(0, 0);
    } else {
        resetTransform();
        fitInView(rect.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
        if (zoom() > 1.25) {   // a small cluster stays at a readable size, not blown up
            const double f = 1.25 / zoom();
            scale(f, f);
        }
        centerOn(rect.center());
    }
    emit zoomChanged(zoom());
}

void ClusterView::wheelEvent(QWheelEvent* event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0)
        zoomBy(std::pow(1.15, steps));
    event->accept();
}

void ClusterView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::MiddleButton) {
        m_panning = true;
        setAutoFit(false);
        m_panStart = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    if (m_connectPending) {   // the second click of a Connect: on the other item, or anywhere to give up
        if (event->button() == Qt::LeftButton)
            finishConnect(endpointAt(event->position().toPoint()));
        else
            finishConnect(-1);
        event->accept();
        return;
    }
    if (event->button() == Qt::LeftButton && (m_connectMode || (event->modifiers() & Qt::ShiftModifier))) {
        const int from = endpointAt(event->position().toPoint());
        if (from >= 0) {
            m_connectFrom = from;
            m_rubberLink = m_scene->addLine(rubberLine(mapToScene(event->position().toPoint())),
                                            QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
            m_rubberLink->setZValue(5);
            event->accept();
            return;
        }
    }
    QGraphicsView::mousePressEvent(event);
}

QLineF ClusterView::rubberLine(const QPointF& to) const
{
    // From the outline of the item it starts at, as the link will be drawn; nothing while the
    // pointer is still on that item.
    const EndpointItem* from = m_scene->endpoint(m_connectFrom);
    if (!from || from->sceneOutline().contains(to))
        return QLineF(to, to);
    return QLineF(from->edgeToward(to), to);
}

void ClusterView::mouseMoveEvent(QMouseEvent* event)
{
    if (m_panning) {
        const QPoint delta = event->position().toPoint() - m_panStart;
        m_panStart = event->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        event->accept();
        return;
    }
    if (m_rubberLink) {
        m_rubberLink->setLine(rubberLine(mapToScene(event->position().toPoint())));
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void ClusterView::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_panning && event->button() == Qt::MiddleButton) {
        m_panning = false;
        viewport()->setCursor(m_connectMode ? Qt::CrossCursor : Qt::ArrowCursor);
        event->accept();
        return;
    }
    if (m_connectFrom >= 0 && !m_connectPending) {
        const int to = endpointAt(event->position().toPoint());
        // Released on the item it started from: a click. With the Connect tool the line
        // follows the pointer to the second click.
        if (to == m_connectFrom && m_connectMode)
            m_connectPending = true;
        else
            finishConnect(to);
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void ClusterView::finishConnect(int to)
{
    delete m_rubberLink;
    m_rubberLink = nullptr;
    const int from = m_connectFrom;
    m_connectFrom = -1;
    m_connectPending = false;
    if (from >= 0 && to >= 0 && to != from)
        document()->connectItems(from, to);
}

void ClusterView::keyPressEvent(QKeyEvent* event)
{
    QPointF step;
    switch (event->key()) {
    case Qt::Key_Delete:
    case Qt::Key_Backspace:
        deleteSelection();
        return;
    case Qt::Key_Escape:
        finishConnect(-1);
        setConnectMode(false);
        m_scene->clearSelection();
        return;
    case Qt::Key_Left: step = QPointF(-EndpointItem::kGrid, 0); break;
    case Qt::Key_Right: step = QPointF(EndpointItem::kGrid, 0); break;
    case Qt::Key_Up: step = QPointF(0, -EndpointItem::kGrid); break;
    case Qt::Key_Down: step = QPointF(0, EndpointItem::kGrid); break;
    default:
        QGraphicsView::keyPressEvent(event);
        return;
    }
    QHash<int, QPointF> positions;
    for (int id : m_scene->selectedIds())
        if (EndpointItem* e = m_scene->endpoint(id))
            positions.insert(id, e->pos() + step);
    if (!positions.isEmpty())
        document()->moveItems(positions, ProjectDocument::MoveKind::Nudge);   // nudges in a row merge
}

void ClusterView::deleteSelection()
{
    const QSet<int> ids = m_scene->selectedIds();
    const auto links = m_scene->selectedLinks();
    if (!ids.isEmpty() || !links.isEmpty())
        document()->removeItems(ids, links);
}

void ClusterView::copySelection()
{
    const QSet<int> ids = m_scene->selectedIds();
    if (ids.isEmpty())
        return;
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(kItemsMimeType), itemsToJson(document()->itemsFor(ids)));
    QApplication::clipboard()->setMimeData(mime);
    m_pasteCount = 0;
}

void ClusterView::paste()
{
    const QMimeData* mime = QApplication::clipboard()->mimeData();
    if (!mime || !mime->hasFormat(QString::fromLatin1(kItemsMimeType)))
        return;
    const ClusterItems items = itemsFromJson(mime->data(QString::fromLatin1(kItemsMimeType)));
    ++m_pasteCount;
    // Each paste 40 px further from the originals, then on to where the copies overlap none
    // of the items already drawn.
    QList<QRectF> group;
    for (const Node& n : items.nodes)
        group << NodeItem::bodyRect().translated(n.x, n.y);
    for (const Switch& sw : items.switches)
        group << SwitchItem::bodyRect().translated(sw.x, sw.y);
    const QPointF wanted = QPointF(40, 40) * m_pasteCount;
    const QPointF offset = freeSpot(wanted, group);
    const bool fitted = m_autoFit;
    const QList<int> ids = document()->pasteItems(items, offset);
    const QSet<int> created(ids.begin(), ids.end());
    m_scene->selectIds(created);
    reveal(created, fitted);
}

void ClusterView::selectAllItems()
{
    for (QGraphicsItem* item : m_scene->items())
        if (item->flags() & QGraphicsItem::ItemIsSelectable)
            item->setSelected(true);
}

void ClusterView::addSwitchAtCenter()
{
    QPointF pos = mapToScene(viewport()->rect().center());
    pos = EndpointItem::snapped(pos);
    pos = freeSpot(pos, {SwitchItem::bodyRect()});
    const bool fitted = m_autoFit;
    const int id = document()->addSwitch(pos);
    m_scene->selectIds({id});
    reveal({id}, fitted);
}

} // namespace hapmoe::ui
