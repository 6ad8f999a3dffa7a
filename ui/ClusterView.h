#pragma once
// The view of the cluster canvas: accepts device drops from the palette (MIME type
// application/x-hapmoe-device), connects items (Connect tool: drag from one item to another or
// click one then the other; or Shift+drag from an item),
// zooms with the wheel, pans with the middle button, deletes, nudges, copies and pastes.

#include <QGraphicsView>
#include <QLineF>
#include <QList>

class QGraphicsLineItem;
class QMimeData;

namespace hapmoe::ui {

class ClusterScene;
class ProjectDocument;

class ClusterView : public QGraphicsView {
    Q_OBJECT
public:
    static constexpr const char* kDeviceMimeType = "application/x-hapmoe-device";
    static constexpr const char* kItemsMimeType = "application/x-hapmoe-cluster-items";

    explicit ClusterView(ClusterScene* scene, QWidget* parent = nullptr);

    ClusterScene* clusterScene() const { return m_scene; }
    ProjectDocument* document() const;

    // The drop handler (also called by tests): adds a node of the device type in the MIME
    // data at the viewport position, linked to the item under it if any (then placed after
    // the nodes already below that switch, or beside that node). It never lands on another
    // item and the view shows it. With Shift held, asks for the number of devices. Returns the new node id, or -1.
    int handleDrop(const QMimeData* mime, const QPoint& viewportPos, Qt::KeyboardModifiers modifiers);

    int defaultDeviceCount() const { return m_defaultCount; }
    void setDefaultDeviceCount(int count) { m_defaultCount = count; }

    bool connectMode() const { return m_connectMode; }
    void setConnectMode(bool on);

    double zoom() const;
    void zoomBy(double factor);
    void zoomToFit();

    void deleteSelection();
    void copySelection();
    void paste();
    void selectAllItems();
    void addSwitchAtCenter();

signals:
    void zoomChanged(double zoom);
    void connectModeChanged(bool on);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    int endpointAt(const QPoint& viewportPos) const;
    // Where an item (or a pasted group) whose bodies are `bodies`, moved by `wanted`,
    // overlaps no node or switch: `wanted` itself when free, else the nearest free grid
    // offset, searched in growing rings around it; beside the whole drawing when none is near.
    QPointF freeSpot(QPointF wanted, const QList<QRectF>& bodies) const;
    bool isFree(const QRectF& sceneRect) const;
    // Where a node dropped on the item `target` goes before freeSpot: see handleDrop.
    QPointF besideChildren(int target) const;
    // New items show: a fitted view fits again, a zoomed one scrolls to them.
    void reveal(const QSet<int>& ids, bool wasFitted);
    // Ends a Connect gesture at the endpoint `to` (-1: nowhere, nothing is linked).
    void finishConnect(int to);
    // The Connect gesture's line, from the item it starts at to the scene point `to`.
    QLineF rubberLine(const QPointF& to) const;
    // Fitted (true): zoomToFit again on every resize, no scroll bars. The user's zoom or pan ends it.
    void setAutoFit(bool on);

    ClusterScene* m_scene;
    int m_defaultCount = 8;
    bool m_connectMode = false;
    int m_connectFrom = -1;
    bool m_connectPending = false;   // Connect tool: clicked on the first item, waiting for the second click
    QGraphicsLineItem* m_rubberLink = nullptr;
    bool m_panning = false;
    QPoint m_panStart;
    int m_pasteCount = 0;
    bool m_autoFit = true;   // keep fitting on resize until the user zooms or pans
    bool m_refitQueued = false;
};

} // namespace hapmoe::ui
