// The cluster designer driven through the real widgets: palette drops, links drawn with the
// mouse, moves, the property editor (the cluster's cross-vendor bridge among it), copy and
// paste, presets, problem badges, undo and redo.

#include "GuiTestSupport.h"
#include "DevicePalette.h"

#include "ClusterScene.h"
#include "ElidedLinesDelegate.h"
#include "LinkItem.h"
#include "NodeItem.h"
#include "ProblemsPanel.h"

#include "io/Presets.h"
#include "ProjectDocument.h"
#include "PropertyEditor.h"
#include "SwitchItem.h"
#include "TestClusters.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"

#include <QLabel>
#include <QDoubleSpinBox>
#include <QGraphicsLineItem>
#include <QPainter>
#include <QPainterPathStroker>
#include <QMetaEnum>
#include <QPushButton>
#include <QTemporaryDir>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTreeWidget>
#include <QUndoStack>

#include <algorithm>
#include <set>
#include <utility>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// Drops two nodes from the palette, 400 pixels apart on the canvas's centre line, into a new
// project; returns their ids (left, right), or {-1, -1} when a drop failed.
std::pair<int, int> dropTwoNodes(MainWindow& w, const QString& left, const QString& right)
{
    w.newProject();
    const QPoint c = w.clusterView()->viewport()->rect().center();
    if (!dropDevice(w, left, c - QPoint(200, 0)) || !dropDevice(w, right, c + QPoint(200, 0)))
        return {-1, -1};
    const auto& nodes = w.document()->cluster().nodes;
    if (nodes.size() != 2)
        return {-1, -1};
    return {nodes[0].id, nodes[1].id};
}

// Adds two H800 nodes centred at a and b, where they are put, and links them; returns the
// link's item, or nullptr.
LinkItem* linkNodesAt(MainWindow& w, QPointF a, QPointF b)
{
    const int first = w.document()->addNode(QStringLiteral("H800"), 8, a);
    const int second = w.document()->addNode(QStringLiteral("H800"), 8, b);
    return w.document()->connectItems(first, second) ? w.clusterScene()->linkItem(first, second) : nullptr;
}

// Whether p lies on the outline of the item's body (rounded corners included), within
// tolerance scene units either side of it.
bool onOutline(const EndpointItem* item, QPointF p, double tolerance = 1.0)
{
    QPainterPathStroker band;
    band.setWidth(2 * tolerance);
    return band.createStroke(item->sceneOutline()).contains(p);
}

// The scene drawn at one pixel per unit, with pixel (x - left, y - top) centred on the scene
// point (x, y), so that a line along a whole coordinate covers its row of pixels.
QImage renderScene(QGraphicsScene* scene, const QRect& area)
{
    QImage image(area.size(), QImage::Format_ARGB32);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    scene->render(&painter, QRectF(image.rect()), QRectF(area).translated(-0.5, -0.5));
    return image;
}

// Drops one H800 node at the canvas's centre into a new project; returns its id, or -1.
int dropOneNode(MainWindow& w)
{
    w.newProject();
    if (!dropDevice(w, QStringLiteral("H800"), w.clusterView()->viewport()->rect().center()))
        return -1;
    return w.document()->cluster().nodes.front().id;
}

} // namespace

class ClusterDesignerTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void dropFromPaletteAddsNode()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        QCOMPARE(doc->cluster().nodes.size(), size_t(0));
        const QPoint at = w->clusterView()->viewport()->rect().center();
        QVERIFY(dropDevice(*w, QStringLiteral("H800"), at));

        QCOMPARE(doc->cluster().nodes.size(), size_t(1));
        const Node node = doc->cluster().nodes.front();
        QCOMPARE(node.device_type, std::string("H800"));
        QCOMPARE(node.count, 8);   // the default node size
        // The node sits where it was dropped, snapped to the 20-unit grid.
        const QPointF scenePos = w->clusterView()->mapToScene(at);
        QVERIFY(std::abs(node.x - scenePos.x()) <= 10.0 + 1e-9);
        QVERIFY(std::abs(node.y - scenePos.y()) <= 10.0 + 1e-9);
        QCOMPARE(std::fmod(node.x, 20.0), 0.0);
        QVERIFY(w->clusterScene()->nodeItem(node.id));
        QVERIFY(doc->isModified());

        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(0));
        QVERIFY(!w->clusterScene()->nodeItem(node.id));
        QVERIFY(!doc->isModified());
        doc->undoStack()->redo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(1));
        QVERIFY(w->clusterScene()->nodeItem(node.id));
    }

    void dropOnSwitchAddsNodeAndLinkInOneStep()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        w->clusterView()->addSwitchAtCenter();
        QCOMPARE(doc->cluster().switches.size(), size_t(1));
        const int sw = doc->cluster().switches.front().id;
        const int before = doc->undoStack()->count();
        QVERIFY(dropDevice(*w, QStringLiteral("MI300X"), viewportPosOf(*w, sw)));
        QCOMPARE(doc->cluster().nodes.size(), size_t(1));
        QCOMPARE(doc->cluster().links.size(), size_t(1));
        QCOMPARE(doc->undoStack()->count(), before + 1);   // node and link: one step
        // 8 MI300X with one 400 Gb/s NIC each (50 GB/s, device-specs.md section 4): 400 GB/s.
        QCOMPARE(doc->cluster().links.front().bandwidth_gbytes_per_s, 400.0);
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(0));
        QCOMPARE(doc->cluster().links.size(), size_t(0));
        QCOMPARE(doc->cluster().switches.size(), size_t(1));
    }

    void dropsAreCopiesAndJoinTheSwitchsRow()
    {
        // The example: leaf-0 with its two 910B nodes, leaf-1 with its two MI300X nodes.
        auto w = makeWindow();
        w->loadExample();
        QApplication::processEvents();
        ProjectDocument* doc = w->document();
        const Switch* leaf0 = nullptr;
        for (const Switch& sw : doc->cluster().switches)
            if (sw.name.rfind("leaf-0", 0) == 0)
                leaf0 = &sw;
        QVERIFY(leaf0);
        const int leafId = leaf0->id;
        // A drop the platform proposes as a move (Shift held on some) is taken as a copy, so
        // the palette keeps its entry.
        DevicePalette* palette = w->devicePalette();
        const int rows = palette->count();
        std::unique_ptr<QMimeData> mime(palette->mimeDataForRow(palette->rowOf(QStringLiteral("910B-376T"))));
        QWidget* viewport = w->clusterView()->viewport();
        const QPoint at = viewportPosOf(*w, leafId);
        QDragEnterEvent enter(at, Qt::CopyAction | Qt::MoveAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        enter.setDropAction(Qt::MoveAction);
        QApplication::sendEvent(viewport, &enter);
        QVERIFY(enter.isAccepted());
        QCOMPARE(enter.dropAction(), Qt::CopyAction);
        QDropEvent drop(QPointF(at), Qt::CopyAction | Qt::MoveAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        drop.setDropAction(Qt::MoveAction);
        QApplication::sendEvent(viewport, &drop);
        QVERIFY(drop.isAccepted());
        QCOMPARE(drop.dropAction(), Qt::CopyAction);
        QCOMPARE(palette->count(), rows);
        // Its place: after leaf-0's two nodes (x 0 and 200, y 380) the row is taken by
        // leaf-1's (x 540), so it starts a row under them, at x 0, 120 lower.
        const Node added = doc->cluster().nodes.back();
        QCOMPARE(added.x, doc->cluster().nodes.front().x);
        QCOMPARE(added.y, doc->cluster().nodes.front().y + 120);
        // The next one goes beside it in that row.
        QVERIFY(dropDevice(*w, QStringLiteral("910B-376T"), viewportPosOf(*w, leafId)));
        QCOMPARE(doc->cluster().nodes.back().y, added.y);
        QCOMPARE(doc->cluster().nodes.back().x, added.x + 240);
    }

    void connectTwoNodesWithTheMouse()
    {
        auto w = makeWindow();
        const auto [a, b] = dropTwoNodes(*w, QStringLiteral("H800"), QStringLiteral("910B-376T"));
        QVERIFY(a >= 0 && b >= 0);
        ProjectDocument* doc = w->document();
        QWidget* viewport = w->clusterView()->viewport();

        // Shift+drag from one node to the other draws a link.
        const QPoint pa = viewportPosOf(*w, a), pb = viewportPosOf(*w, b);
        QTest::mousePress(viewport, Qt::LeftButton, Qt::ShiftModifier, pa);
        QTest::mouseMove(viewport, (pa + pb) / 2);
        // The line being drawn leaves the node's outline, where the link will end.
        const QGraphicsLineItem* rubber = nullptr;
        for (const QGraphicsItem* item : w->clusterScene()->items())
            if (item->type() == QGraphicsLineItem::Type)
                rubber = static_cast<const QGraphicsLineItem*>(item);
        QVERIFY(rubber);
        QVERIFY(onOutline(w->clusterScene()->endpoint(a), rubber->line().p1()));
        QTest::mouseMove(viewport, pb);
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::ShiftModifier, pb);
        QCOMPARE(doc->cluster().links.size(), size_t(1));
        const Link link = doc->cluster().links.front();
        QCOMPARE(std::min(link.a, link.b), std::min(a, b));
        QCOMPARE(std::max(link.a, link.b), std::max(a, b));
        // Node uplinks: 8 x 50 GB/s (H800, CX7 400 Gb/s) and 8 x 25 GB/s (910B, 200GE RoCE),
        // device-specs.md section 4; a direct link runs at the slower side: 200 GB/s.
        QCOMPARE(link.bandwidth_gbytes_per_s, 200.0);
        QVERIFY(w->clusterScene()->linkItem(a, b));

        // The Connect tool does the same without Shift; a second link between the same
        // pair is refused.
        w->clusterView()->setConnectMode(true);
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, pb);
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, pa);
        QCOMPARE(doc->cluster().links.size(), size_t(1));
        w->clusterView()->setConnectMode(false);

        // Undo the link, then both nodes; redo everything.
        QUndoStack* stack = doc->undoStack();
        stack->undo();
        QCOMPARE(doc->cluster().links.size(), size_t(0));
        QVERIFY(!w->clusterScene()->linkItem(a, b));
        stack->undo();
        stack->undo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(0));
        stack->redo();
        stack->redo();
        stack->redo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(2));
        QCOMPARE(doc->cluster().links.size(), size_t(1));
        QVERIFY(w->clusterScene()->linkItem(a, b));
    }

    void dragMovesNodeInOneUndoStep()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        QWidget* viewport = w->clusterView()->viewport();
        QVERIFY(dropDevice(*w, QStringLiteral("H100-SXM"), viewport->rect().center()));
        const Node start = doc->cluster().nodes.front();
        const int steps = doc->undoStack()->count();
        const QPoint p = viewportPosOf(*w, start.id);
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, p);
        for (int i = 1; i <= 6; ++i)
            QTest::mouseMove(viewport, p + QPoint(15 * i, 8 * i));
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, p + QPoint(90, 48));
        const Node moved = doc->cluster().nodes.front();
        QVERIFY(moved.x != start.x || moved.y != start.y);
        QCOMPARE(std::fmod(moved.x, 20.0), 0.0);   // snapped
        QCOMPARE(std::fmod(moved.y, 20.0), 0.0);
        QCOMPARE(doc->undoStack()->count(), steps + 1);   // the whole drag is one step
        // A second drag of the same node right after is a step of its own: one undo takes
        // the node back to where the first drag left it.
        const QPoint q = viewportPosOf(*w, start.id);
        QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, q);
        for (int i = 1; i <= 6; ++i)
            QTest::mouseMove(viewport, q + QPoint(0, 10 * i));
        QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, q + QPoint(0, 60));
        QCOMPARE(doc->undoStack()->count(), steps + 2);
        QVERIFY(doc->cluster().nodes.front().y > moved.y);
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.front().x, moved.x);
        QCOMPARE(doc->cluster().nodes.front().y, moved.y);
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.front().x, start.x);
        QCOMPARE(doc->cluster().nodes.front().y, start.y);
        QCOMPARE(w->clusterScene()->nodeItem(start.id)->pos(), QPointF(start.x, start.y));
        // Arrow-key nudges in a row are one step, a grid step each.
        w->clusterScene()->selectIds({start.id});
        w->clusterView()->setFocus();
        QTest::keyClick(viewport, Qt::Key_Right);
        QTest::keyClick(viewport, Qt::Key_Right);
        QTest::keyClick(viewport, Qt::Key_Down);
        QCOMPARE(doc->cluster().nodes.front().x, start.x + 2 * EndpointItem::kGrid);
        QCOMPARE(doc->cluster().nodes.front().y, start.y + EndpointItem::kGrid);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.front().x, start.x);
        QCOMPARE(doc->cluster().nodes.front().y, start.y);
    }

    void propertyEditorChangesNodeCount()
    {
        auto w = makeWindow();
        const int id = dropOneNode(*w);
        QVERIFY(id >= 0);
        ProjectDocument* doc = w->document();
        QWidget* viewport = w->clusterView()->viewport();
        w->clusterScene()->clearSelection();
        QTest::mouseClick(viewport, Qt::LeftButton, Qt::NoModifier, viewportPosOf(*w, id));
        QCOMPARE(w->clusterScene()->selectedIds(), QSet<int>{id});

        QSpinBox* count = w->propertyEditor()->nodeCountEditor();
        QVERIFY(count->isVisible());
        QCOMPARE(count->value(), 8);
        count->setFocus();
        count->selectAll();
        QTest::keyClicks(count, QStringLiteral("16"));
        QCOMPARE(doc->cluster().nodes.front().count, 8);   // not committed while typing
        QTest::keyClick(count, Qt::Key_Return);
        QCOMPARE(doc->cluster().nodes.front().count, 16);
        // 16 H800 at 989 TFLOP/s each (device-specs.md section 4): 15.8 PFLOP/s.
        QVERIFY2(w->statusSummary().contains(QStringLiteral("16 \u00d7 H800")), qPrintable(w->statusSummary()));
        QVERIFY2(w->statusSummary().contains(QStringLiteral("15.8 PFLOP/s")), qPrintable(w->statusSummary()));
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.front().count, 8);
        QCOMPARE(count->value(), 8);   // the editor follows the document
        doc->undoStack()->redo();
        QCOMPARE(doc->cluster().nodes.front().count, 16);
    }

    void propertyEditorNamesTheRangeOfARefusedValue()
    {
        // The example's first link. A link's bandwidth goes from 0.1 to 1e9 GB/s
        // (PropertyEditor); 0 typed and Enter keeps its bandwidth, and the dock says why, next
        // to the field and in the status bar.
        auto w = makeWindow();
        w->loadExample();
        w->resize(1600, 1000);
        QApplication::processEvents();
        ProjectDocument* doc = w->document();
        const Link link = doc->cluster().links.front();
        ClusterScene* scene = w->clusterScene();
        // A node first: its taller page (a wrapped note under seven fields) must not leave the
        // link's page as tall, the message far below its two fields.
        scene->clearSelection();
        scene->nodeItem(doc->cluster().nodes.front().id)->setSelected(true);
        QApplication::processEvents();
        scene->clearSelection();
        QApplication::processEvents();
        scene->linkItem(link.a, link.b)->setSelected(true);
        QApplication::processEvents();
        PropertyEditor* editor = w->propertyEditor();
        QDoubleSpinBox* bandwidth = editor->linkBandwidthEditor();
        QVERIFY(bandwidth->isVisible());
        const double kept = link.bandwidth_gbytes_per_s;
        auto* message = editor->findChild<QLabel*>(QStringLiteral("propertyInputMessage"));
        QVERIFY(message && !message->isVisible());
        const QString keptText = QStringLiteral("%1 GB/s").arg(kept, 0, 'f', 1);
        bandwidth->setFocus();
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("0"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->findLink(link.a, link.b)->bandwidth_gbytes_per_s, kept);
        QCOMPARE(bandwidth->value(), kept);
        QCOMPARE(editor->inputMessage(), QStringLiteral("Bandwidth: at least 0.1 GB/s, not 0; it stays %1.").arg(keptText));
        QVERIFY(message->isVisible());
        QVERIFY(message->text().contains(QStringLiteral("at least 0.1 GB/s")));
        // Close to the field: right under the link's form, not under the node page's height.
        QVERIFY2(message->mapTo(editor, QPoint()).y() - bandwidth->mapTo(editor, QPoint()).y() < 3 * bandwidth->height(),
                 qPrintable(QStringLiteral("%1 px below").arg(message->mapTo(editor, QPoint()).y() - bandwidth->mapTo(editor, QPoint()).y())));
        QCOMPARE(w->statusBar()->currentMessage(), editor->inputMessage());
        // 0.001: the box takes one decimal, so "0.00" is what stands when the entry ends.
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("0.001"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->findLink(link.a, link.b)->bandwidth_gbytes_per_s, kept);
        QCOMPARE(editor->inputMessage(), QStringLiteral("Bandwidth: at least 0.1 GB/s, not 0.0; it stays %1.").arg(keptText));
        // A value in range is taken and the message goes.
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("250"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->findLink(link.a, link.b)->bandwidth_gbytes_per_s, 250.0);
        QVERIFY2(editor->inputMessage().isEmpty(), qPrintable(editor->inputMessage()));
        QVERIFY(!message->isVisible());

        // A node's device count goes from 1 to 4096: 0 keeps 8, said when the entry ends by
        // leaving the field as well as by Enter.
        const Node node = doc->cluster().nodes.front();
        scene->clearSelection();
        scene->nodeItem(node.id)->setSelected(true);
        QSpinBox* count = editor->nodeCountEditor();
        QVERIFY(count->isVisible());
        count->setFocus();
        count->selectAll();
        QTest::keyClicks(count, QStringLiteral("0"));
        editor->findChild<QLineEdit*>(QStringLiteral("nodeHost"))->setFocus();
        QCOMPARE(doc->cluster().node(node.id)->count, node.count);
        QCOMPARE(editor->inputMessage(), QStringLiteral("Devices: at least 1, not 0; it stays %1.").arg(node.count));
        // Another item shown: the message about this one goes.
        scene->clearSelection();
        QVERIFY(editor->inputMessage().isEmpty());
    }

    void selectedLinkRunsUnderTheItems()
    {
        // The example's spine - leaf-0 link, selected with a click on its line: the line ends
        // on both switches' outlines, under them, so that their names stay on top.
        auto w = makeWindow();
        w->loadExample();
        QApplication::processEvents();
        ClusterScene* scene = w->clusterScene();
        ClusterView* view = w->clusterView();
        int spine = -1, leaf = -1;
        for (const Switch& sw : w->document()->cluster().switches) {
            if (sw.name == "spine")
                spine = sw.id;
            else if (sw.name.rfind("leaf-0", 0) == 0)
                leaf = sw.id;
        }
        QVERIFY(spine >= 0 && leaf >= 0);
        LinkItem* link = scene->linkItem(spine, leaf);
        QVERIFY(link);
        SwitchItem* spineItem = scene->switchItem(spine);
        SwitchItem* leafItem = scene->switchItem(leaf);
        const QRectF spineBody = spineItem->mapRectToScene(SwitchItem::bodyRect());
        const QRectF leafBody = leafItem->mapRectToScene(SwitchItem::bodyRect());
        // A point of the line off both switches and off its label.
        QPointF onLine;
        for (double t = 0.1; t < 0.95 && onLine.isNull(); t += 0.05) {
            const QPointF p = link->p1() + t * (link->p2() - link->p1());
            if (!spineBody.adjusted(-10, -10, 10, 10).contains(p) && !leafBody.adjusted(-10, -10, 10, 10).contains(p)
                && !link->labelRect().adjusted(-10, -10, 10, 10).contains(p))
                onLine = p;
        }
        QVERIFY(!onLine.isNull());
        scene->clearSelection();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, view->mapFromScene(onLine));
        QCOMPARE(scene->selectedLinks().size(), 1);
        QVERIFY(link->isSelected());
        // Where the line meets each switch, on its outline, a unit inside the body the switch
        // is the topmost item: the line's round cap goes under it.
        for (SwitchItem* end : {spineItem, leafItem}) {
            const QPointF tip = static_cast<EndpointItem*>(end) == link->endA() ? link->p1() : link->p2();
            QVERIFY(onOutline(end, tip));
            const QPointF inside = tip + (end->pos() - tip) / QLineF(tip, end->pos()).length();
            QVERIFY(end->mapRectToScene(SwitchItem::bodyRect()).contains(inside));
            QVERIFY(link->shape().contains(inside));
            const QList<QGraphicsItem*> top = scene->items(inside, Qt::IntersectsItemShape, Qt::DescendingOrder, view->transform());
            QVERIFY(!top.isEmpty());
            QVERIFY2(top.front() == end, qPrintable(QStringLiteral("type %1 on top").arg(top.front()->type())));
        }
        // Still drawn above the other lines, and its label above the switches.
        for (const Link& l : w->document()->cluster().links)
            if (LinkItem* other = scene->linkItem(l.a, l.b); other != link)
                QVERIFY(link->zValue() > other->zValue());
        const QList<QGraphicsItem*> atLabel = scene->items(link->labelRect().center(), Qt::IntersectsItemShape, Qt::DescendingOrder);
        QVERIFY(!atLabel.isEmpty() && atLabel.front()->zValue() > leafItem->zValue());
    }

    void propertyEditorKeepsValidHostNames()
    {
        // The host name rule of the readers and the export (hostNameProblem): "node_0" is
        // taken, "a..b" (an empty label) is not, and the field shows the kept name again.
        auto w = makeWindow();
        const int id = dropOneNode(*w);
        QVERIFY(id >= 0);
        ProjectDocument* doc = w->document();
        w->clusterScene()->clearSelection();
        QTest::mouseClick(w->clusterView()->viewport(), Qt::LeftButton, Qt::NoModifier, viewportPosOf(*w, id));
        auto* host = w->propertyEditor()->findChild<QLineEdit*>(QStringLiteral("nodeHost"));
        QVERIFY(host && host->isVisible());
        auto type = [&](const QString& text) {
            host->setFocus();
            host->selectAll();
            QTest::keyClicks(host, text);
            QTest::keyClick(host, Qt::Key_Return);
        };
        type(QStringLiteral("node_0"));
        QCOMPARE(doc->cluster().nodes.front().host, std::string("node_0"));
        type(QStringLiteral("a..b"));
        QCOMPARE(doc->cluster().nodes.front().host, std::string("node_0"));
        QCOMPARE(host->text(), QStringLiteral("node_0"));
    }

    void propertyEditorShowsSwitchOversubscription()
    {
        // Two nodes below a leaf switch at 400 GB/s each, the leaf linked up at 400 GB/s: the
        // leaf takes 800 GB/s in and 400 GB/s up, oversubscribed 2:1, so traffic that leaves
        // it gets half of each node's link (docs/cost-model.md section 6).
        auto w = makeWindow();
        ProjectDocument* doc = w->document();
        Cluster c = hapmoe::test::nodesOf("H800", 3);
        hapmoe::test::addSwitches(c, {10, 11, 12});
        for (int i = 0; i < 3; ++i) {
            c.nodes[static_cast<std::size_t>(i)].x = c.switches[static_cast<std::size_t>(i)].x = 250.0 * i;
            c.switches[static_cast<std::size_t>(i)].y = 200;
        }
        c.links = {{0, 10, 400, 5}, {1, 10, 400, 5}, {2, 11, 400, 5}, {10, 12, 400, 5}, {11, 12, 400, 5}};
        doc->setCluster(c, QStringLiteral("two leaves"));
        QLabel* info = w->propertyEditor()->findChild<QLabel*>(QStringLiteral("switchInfo"));
        QVERIFY(info);
        w->clusterScene()->selectIds({10});
        QVERIFY(info->isVisible());
        QVERIFY2(info->text().contains(QStringLiteral("Links to nodes: 800 GB/s. Links to switches: 400 GB/s.")), qPrintable(info->text()));
        QVERIFY2(info->text().contains(QStringLiteral("Oversubscribed 2:1: traffic that leaves this switch gets 50 % of each node's link")),
                 qPrintable(info->text()));
        w->clusterScene()->selectIds({11});
        QVERIFY(!info->text().contains(QStringLiteral("Oversubscribed")));
        // The canvas shows the ratio on the switch, and follows an edit of the uplink.
        QCOMPARE(w->clusterScene()->switchItem(10)->oversubscriptionText(), QStringLiteral("2:1"));
        QVERIFY(w->clusterScene()->switchItem(10)->toolTip().contains(QStringLiteral("Oversubscribed 2:1")));
        QVERIFY(w->clusterScene()->switchItem(11)->oversubscriptionText().isEmpty());
        Link wider = c.links[3];
        wider.bandwidth_gbytes_per_s = 800;
        doc->setLink(wider);
        QVERIFY(w->clusterScene()->switchItem(10)->oversubscriptionText().isEmpty());
        doc->undoStack()->undo();
        QCOMPARE(w->clusterScene()->switchItem(10)->oversubscriptionText(), QStringLiteral("2:1"));
    }

    void propertyEditorSetsHostMemoryAndLink()
    {
        auto w = makeWindow();
        const int id = dropOneNode(*w);
        QVERIFY(id >= 0);
        ProjectDocument* doc = w->document();
        w->clusterScene()->selectIds({id});

        QDoubleSpinBox* memory = w->propertyEditor()->hostMemoryEditor();
        QDoubleSpinBox* link = w->propertyEditor()->hostLinkEditor();
        QVERIFY(memory->isVisible() && link->isVisible());
        QCOMPARE(memory->value(), 0.0);
        QCOMPARE(memory->text(), QStringLiteral("not checked"));
        memory->setFocus();
        memory->selectAll();
        QTest::keyClicks(memory, QStringLiteral("2048"));
        QTest::keyClick(memory, Qt::Key_Return);
        QCOMPARE(doc->cluster().nodes.front().host_memory_gib, 2048.0);
        link->setValue(64);
        QCOMPARE(doc->cluster().nodes.front().host_link_gbytes_per_s, 64.0);
        // Each is one undo step, and the editor follows the document.
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.front().host_link_gbytes_per_s, 0.0);
        QCOMPARE(doc->cluster().nodes.front().host_memory_gib, 2048.0);
        QCOMPARE(link->value(), 0.0);
        // Copy and paste keep the host fields.
        w->clusterView()->copySelection();
        w->clusterView()->paste();
        QCOMPARE(doc->cluster().nodes.size(), std::size_t(2));
        QCOMPARE(doc->cluster().nodes.back().host_memory_gib, 2048.0);
    }

    void copyPasteAndDelete()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        QWidget* viewport = w->clusterView()->viewport();
        const QPoint c = viewport->rect().center();
        QVERIFY(dropDevice(*w, QStringLiteral("A100-80GB"), c - QPoint(150, 0)));
        QVERIFY(dropDevice(*w, QStringLiteral("A100-80GB"), c + QPoint(150, 0)));
        const int a = doc->cluster().nodes[0].id, b = doc->cluster().nodes[1].id;
        QVERIFY(doc->connectItems(a, b));
        w->clusterScene()->selectIds({a, b});
        w->clusterView()->copySelection();
        w->clusterView()->paste();
        QCOMPARE(doc->cluster().nodes.size(), size_t(4));
        QCOMPARE(doc->cluster().links.size(), size_t(2));   // the link among the copies comes along
        QCOMPARE(w->clusterScene()->selectedIds().size(), 2);
        QVERIFY(!w->clusterScene()->selectedIds().contains(a));

        // Delete key on the canvas removes the pasted pair and its link, in one step.
        w->clusterView()->setFocus();
        QTest::keyClick(viewport, Qt::Key_Delete);
        QCOMPARE(doc->cluster().nodes.size(), size_t(2));
        QCOMPARE(doc->cluster().links.size(), size_t(1));
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(4));
        QCOMPARE(doc->cluster().links.size(), size_t(2));
    }

    void newItemsLandOnFreeGroundInView()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        ClusterView* view = w->clusterView();
        // No two bodies overlap, and every item is inside the view.
        auto bodyOf = [&](int id) {
            EndpointItem* e = w->clusterScene()->endpoint(id);
            return e->mapRectToScene(e->body());
        };
        auto check = [&](const char* step) {
            std::vector<std::pair<int, QRectF>> bodies;
            for (const Node& n : doc->cluster().nodes)
                bodies.emplace_back(n.id, bodyOf(n.id));
            for (const Switch& sw : doc->cluster().switches)
                bodies.emplace_back(sw.id, bodyOf(sw.id));
            const QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
            for (std::size_t i = 0; i < bodies.size(); ++i) {
                QVERIFY2(shown.contains(bodies[i].second), qPrintable(QStringLiteral("%1: item %2 is out of view").arg(step).arg(bodies[i].first)));
                for (std::size_t j = i + 1; j < bodies.size(); ++j)
                    QVERIFY2(!bodies[i].second.intersects(bodies[j].second),
                             qPrintable(QStringLiteral("%1: items %2 and %3 overlap").arg(step).arg(bodies[i].first).arg(bodies[j].first)));
            }
        };
        // Add Switch twice with the view unmoved: the second one beside the first.
        view->addSwitchAtCenter();
        view->addSwitchAtCenter();
        QCOMPARE(doc->cluster().switches.size(), std::size_t(2));
        check("two switches");
        if (QTest::currentTestFailed())
            return;
        // Five nodes dropped on the first switch: each linked to it, below it, none on another.
        const int sw = doc->cluster().switches.front().id;
        for (int i = 0; i < 5; ++i)
            QVERIFY(dropDevice(*w, QStringLiteral("H800"), viewportPosOf(*w, sw)));
        QCOMPARE(doc->cluster().nodes.size(), std::size_t(5));
        QCOMPARE(doc->cluster().links.size(), std::size_t(5));
        // One row under the switch, side by side, left to right.
        for (std::size_t i = 1; i < doc->cluster().nodes.size(); ++i) {
            QCOMPARE(doc->cluster().nodes[i].y, doc->cluster().nodes.front().y);
            QVERIFY(doc->cluster().nodes[i].x > doc->cluster().nodes[i - 1].x);
        }
        QVERIFY(doc->cluster().nodes.front().y > doc->cluster().switches.front().y);
        check("five drops on a switch");
        if (QTest::currentTestFailed())
            return;
        // Everything copied and pasted twice: the copies overlap nothing, hosts stay unique.
        view->selectAllItems();
        view->copySelection();
        view->paste();
        view->paste();
        QCOMPARE(doc->cluster().nodes.size(), std::size_t(15));
        QCOMPARE(doc->cluster().switches.size(), std::size_t(6));
        check("two pastes");
        std::set<std::string> hosts;
        for (const Node& n : doc->cluster().nodes)
            QVERIFY2(hosts.insert(n.host).second, n.host.c_str());
    }

    void connectToolLinksWithTwoClicks()
    {
        auto w = makeWindow();
        const auto [a, b] = dropTwoNodes(*w, QStringLiteral("H800"), QStringLiteral("H800"));
        QVERIFY(a >= 0 && b >= 0);
        ProjectDocument* doc = w->document();
        ClusterView* view = w->clusterView();
        view->setConnectMode(true);
        // Click a, move, click b: one link. Clicking the empty canvas after a gives up.
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, a));
        QTest::mouseMove(view->viewport(), viewportPosOf(*w, a) + QPoint(0, 150));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, QPoint(5, 5));
        QCOMPARE(doc->cluster().links.size(), std::size_t(0));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, a));
        QTest::mouseMove(view->viewport(), (viewportPosOf(*w, a) + viewportPosOf(*w, b)) / 2);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, b));
        QCOMPARE(doc->cluster().links.size(), std::size_t(1));
        QCOMPARE(std::set<int>({doc->cluster().links.front().a, doc->cluster().links.front().b}), std::set<int>({a, b}));
        // Escape between the clicks ends the tool and links nothing.
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, b));
        QTest::keyClick(view->viewport(), Qt::Key_Escape);
        QVERIFY(!view->connectMode());
        QCOMPARE(doc->cluster().links.size(), std::size_t(1));
        // A preset loaded between the clicks ends the Connect: the second click, on an item
        // of the new cluster, links nothing.
        view->setConnectMode(true);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, a));
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        QApplication::processEvents();
        const std::size_t presetLinks = doc->cluster().links.size();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewportPosOf(*w, doc->cluster().nodes.back().id));
        QCOMPARE(doc->cluster().links.size(), presetLinks);
    }

    void editedPresetIsNamedSo()
    {
        // A preset's name stays only while the cluster is that preset: launchers' headers and
        // the presets list said "32-3" of a cluster with a node added.
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        QVERIFY(w->loadClusterPreset(QStringLiteral("32-3")));
        QTreeWidget* list = w->clusterPresetList();
        QCOMPARE(doc->cluster().name, std::string("32-3"));
        QCOMPARE(list->currentItem() ? list->currentItem()->data(0, Qt::UserRole).toString() : QString(), QStringLiteral("32-3"));
        Node n = doc->cluster().nodes.front();
        n.count = 4;
        doc->setNode(n);
        QCOMPARE(doc->cluster().name, std::string("32-3 (edited)"));
        QVERIFY(list->currentItem() == nullptr);
        // Moving a node is not an edit of the cluster; undoing the change gives the name back.
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().name, std::string("32-3"));
        QCOMPARE(list->currentItem() ? list->currentItem()->data(0, Qt::UserRole).toString() : QString(), QStringLiteral("32-3"));
        n = doc->cluster().nodes.front();
        n.x += 120;
        doc->setNode(n);
        QCOMPARE(doc->cluster().name, std::string("32-3"));
    }

    void presetLoadsInOneClick()
    {
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        QTreeWidget* list = w->clusterPresetList();
        QTreeWidgetItem* item = nullptr;
        for (int i = 0; i < list->topLevelItemCount(); ++i)
            if (list->topLevelItem(i)->data(0, Qt::UserRole).toString() == QLatin1String("32-3"))
                item = list->topLevelItem(i);
        QVERIFY(item);
        list->scrollToItem(item);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::NoModifier, list->visualItemRect(item).center());
        // Table 1 of the paper: 32-3 = 910B (2x8) + MI300X (2x8).
        QCOMPARE(doc->cluster().nodes.size(), size_t(4));
        QCOMPARE(doc->cluster().totalDevices(), 32);
        QCOMPARE(w->clusterScene()->nodeItem(doc->cluster().nodes.front().id) != nullptr, true);
        // Peak: 16 x 353.9 (910B-376T) + 16 x 1307.4 (MI300X) TFLOP/s (device-specs.md
        // section 4) = 26,580.8 TFLOP/s.
        QVERIFY2(w->statusSummary().contains(QStringLiteral("26.6 PFLOP/s")), qPrintable(w->statusSummary()));
        QVERIFY(w->statusSummary().contains(QStringLiteral("32 devices in 4 nodes")));
        QCOMPARE(list->selectedItems(), QList<QTreeWidgetItem*>{item});
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().nodes.size(), size_t(0));
        // The list no longer highlights the preset the canvas stopped showing.
        QVERIFY(list->selectedItems().isEmpty());
        doc->undoStack()->redo();
        QCOMPARE(list->selectedItems(), QList<QTreeWidgetItem*>{item});
        doc->undoStack()->undo();
        // One node of eight H800: the singular, "in 1 node".
        QVERIFY(w->loadClusterPreset(QStringLiteral("H800:1x8")));
        QVERIFY2(w->statusSummary().contains(QStringLiteral("8 devices in 1 node ")), qPrintable(w->statusSummary()));
    }

    void linkLabelsAvoidItemsAndEachOther()
    {
        // a100-h100-256: two leaves with a fan of 16 links each over four rows of nodes.
        // Each label sits on its own line, off every node and switch and off the other
        // labels; the drawing has room for all 34.
        auto w = makeWindow();
        QVERIFY(w->loadClusterPreset(QStringLiteral("a100-h100-256")));
        QApplication::processEvents();   // the layout runs once per event-loop turn
        ClusterScene* scene = w->clusterScene();
        const Cluster& c = w->document()->cluster();
        QCOMPARE(scene->linkCount(), 34);
        // The items' bounding rectangles hold what they draw around their bodies (the
        // problem badge, the highlight ring) and where they take clicks.
        std::vector<QRectF> bodies, labels;
        for (const Node& n : c.nodes)
            bodies.push_back(scene->nodeItem(n.id)->sceneBoundingRect());
        for (const Switch& sw : c.switches)
            bodies.push_back(scene->switchItem(sw.id)->sceneBoundingRect());
        for (const Link& l : c.links) {
            const LinkItem* link = scene->linkItem(l.a, l.b);
            QVERIFY(link->labelShown());
            const QRectF r = link->labelRect();
            // Its centre is on its line.
            const QLineF line(link->p1(), link->p2());
            const QPointF d = r.center() - link->p1();
            const double cross = (line.dx() * d.y() - line.dy() * d.x()) / line.length();
            QVERIFY2(std::abs(cross) < 1e-6, qPrintable(QString::number(cross)));
            for (const QRectF& b : bodies)
                QVERIFY(!r.intersects(b));
            for (const QRectF& o : labels)
                QVERIFY(!r.intersects(o));
            labels.push_back(r);
        }
        // A click on a label selects its link, whichever lines pass under it (h800-910b-512:
        // fans of 32 links whose lines cross other links' labels).
        QVERIFY(w->loadClusterPreset(QStringLiteral("h800-910b-512")));
        QApplication::processEvents();
        ClusterView* view = w->clusterView();
        view->zoomBy(2.5);   // labels readable, as when one clicks them
        int clicked = 0;
        for (const Link& l : w->document()->cluster().links) {
            const LinkItem* item = scene->linkItem(l.a, l.b);
            if (!item->labelShown())
                continue;
            view->centerOn(item->labelRect().center());
            QApplication::processEvents();
            const QPoint at = view->mapFromScene(item->labelRect().center());
            QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, at);
            const auto chosen = scene->selectedLinks();
            QVERIFY2(chosen.size() == 1 && ((chosen.front().first == l.a && chosen.front().second == l.b)
                                            || (chosen.front().first == l.b && chosen.front().second == l.a)),
                     qPrintable(QStringLiteral("label of %1-%2").arg(l.a).arg(l.b)));
            ++clicked;
        }
        QVERIFY(clicked >= 60);

        // Two nodes a few pixels apart: no room for the label on the line between them, so
        // it is not drawn, until the link is selected (then beside the middle of its line, off
        // both nodes, above the items).
        w->newProject();
        const int a = w->document()->addNode(QStringLiteral("H800"), 8, QPointF(0, 0));
        const int b = w->document()->addNode(QStringLiteral("H800"), 8, QPointF(0, NodeItem::bodyRect().height() + 10));
        QVERIFY(w->document()->connectItems(a, b));
        QApplication::processEvents();
        LinkItem* tight = scene->linkItem(a, b);
        QVERIFY(!tight->labelShown());
        QVERIFY(tight->labelRect().isEmpty());
        tight->setSelected(true);
        QVERIFY(!tight->labelRect().isEmpty());
        // The line runs from y = 38 to 48 (the bodies are 76 high, their centres 86 apart);
        // the label sits on the normal through its middle, to the right (x > 0), the first
        // side tried for an upright line.
        QCOMPARE(tight->p1(), QPointF(0, 38));
        QCOMPARE(tight->p2(), QPointF(0, 48));
        QCOMPARE(tight->labelRect().center().y(), 43.0);
        QVERIFY(tight->labelRect().center().x() > 0);
        QVERIFY(!tight->labelRect().intersects(scene->nodeItem(a)->sceneBoundingRect()));
        QVERIFY(!tight->labelRect().intersects(scene->nodeItem(b)->sceneBoundingRect()));
        // The label is drawn above the items (the topmost item at its centre is not a node),
        // the line under them.
        const QList<QGraphicsItem*> atLabel = scene->items(tight->labelRect().center(), Qt::IntersectsItemShape, Qt::DescendingOrder);
        QVERIFY(!atLabel.isEmpty() && atLabel.front() != scene->nodeItem(a) && atLabel.front() != tight);
        QVERIFY(atLabel.front()->zValue() > scene->nodeItem(a)->zValue());
        QVERIFY(tight->zValue() < scene->nodeItem(a)->zValue());
        // Moved apart, the label has room again, on the line between the two bodies.
        tight->setSelected(false);
        w->document()->moveItems({{b, QPointF(0, 400)}});
        QApplication::processEvents();
        QVERIFY(tight->labelShown());
        QVERIFY(!tight->labelRect().intersects(scene->nodeItem(a)->mapRectToScene(NodeItem::bodyRect())));
        QVERIFY(!tight->labelRect().intersects(scene->nodeItem(b)->mapRectToScene(NodeItem::bodyRect())));

        // A node put over the middle of a link: the label goes to a free stretch of the line
        // when one is long enough, and otherwise, selected, shows in the middle of the longest
        // free stretch, not over the node in the way.
        w->newProject();
        const int left = w->document()->addNode(QStringLiteral("H800"), 8, QPointF(0, 0));
        const int right = w->document()->addNode(QStringLiteral("H800"), 8, QPointF(700, 0));
        QVERIFY(w->document()->connectItems(left, right));
        const int middle = w->document()->addNode(QStringLiteral("H800"), 8, QPointF(350, 0));
        QApplication::processEvents();
        LinkItem* across = scene->linkItem(left, right);
        const QRectF inTheWay = scene->nodeItem(middle)->mapRectToScene(NodeItem::bodyRect());
        QVERIFY(across->labelShown());
        QVERIFY(!across->labelRect().intersects(inTheWay));
        w->document()->moveItems({{right, QPointF(500, 0)}, {middle, QPointF(250, 0)}});
        QApplication::processEvents();
        QVERIFY(!across->labelShown());   // 54 px on either side of the middle node: too short
        across->setSelected(true);
        const QRectF covered = scene->nodeItem(middle)->mapRectToScene(NodeItem::bodyRect());
        QVERIFY2(!covered.contains(across->labelRect().center()),
                 qPrintable(QStringLiteral("label at %1, %2").arg(across->labelRect().center().x()).arg(across->labelRect().center().y())));
        for (int end : {left, right})
            QVERIFY(!across->labelRect().intersects(scene->nodeItem(end)->sceneBoundingRect()));
    }

    void linksEndOnTheOutlinesOfTheirEnds()
    {
        // A link is drawn from outline to outline along the line between the two centres, not
        // from centre to centre under both bodies. Bodies (NodeItem, SwitchItem::bodyRect): a
        // node is 190 x 76 with corners of radius 8, a switch 190 x 40 with ends of radius 20.
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        ClusterScene* scene = w->clusterScene();
        // Side by side: the half widths, 95 in from each centre.
        const LinkItem* level = linkNodesAt(*w, QPointF(0, 0), QPointF(400, 0));
        QVERIFY(level);
        QCOMPARE(level->p1(), QPointF(95, 0));
        QCOMPARE(level->p2(), QPointF(305, 0));
        // Slanted along (0.8, 0.6): out through the long side, y = 38, at x = 38 * 0.8 / 0.6,
        // on its straight part (|x| < 95 - 8).
        const LinkItem* slanted = linkNodesAt(*w, QPointF(0, 1000), QPointF(400, 1300));
        QVERIFY(slanted);
        QCOMPARE(slanted->p1(), QPointF(38 * 0.8 / 0.6, 1038));
        QCOMPARE(slanted->p2(), QPointF(400 - 38 * 0.8 / 0.6, 1300 - 38));
        // Towards the body's corner (95, 38): out through the rounded corner, 8 from the
        // corner circle's centre (87, 30), on the line between the centres.
        const LinkItem* corner = linkNodesAt(*w, QPointF(0, 2000), QPointF(950, 2380));
        QVERIFY(corner);
        const QPointF arc = corner->p1() - QPointF(87, 2030);
        QVERIFY2(std::abs(std::hypot(arc.x(), arc.y()) - 8) < 1e-9, qPrintable(QString::number(std::hypot(arc.x(), arc.y()))));
        QVERIFY(arc.x() > 0 && arc.y() > 0);
        QVERIFY(std::abs(corner->p1().x() * 380 - (corner->p1().y() - 2000) * 950) < 1e-6);
        // A switch above a node: the switch's lower edge, 20 below its centre; the node's top.
        const int sw = doc->addSwitch(QPointF(0, 3000));
        const int below = doc->addNode(QStringLiteral("H800"), 8, QPointF(0, 3200));
        QVERIFY(doc->connectItems(sw, below));
        const LinkItem* uplink = scene->linkItem(sw, below);
        QVERIFY(uplink);
        QCOMPARE(uplink->p1(), QPointF(0, 3020));
        QCOMPARE(uplink->p2(), QPointF(0, 3162));

        // Every link of a large drawing (fans of 16 from two leaves over four rows): its ends
        // within a unit of its two items' outlines, none at a centre.
        QVERIFY(w->loadClusterPreset(QStringLiteral("a100-h100-256")));
        QApplication::processEvents();
        for (const Link& l : w->document()->cluster().links) {
            const LinkItem* item = scene->linkItem(l.a, l.b);
            QVERIFY(onOutline(item->endA(), item->p1()));
            QVERIFY(onOutline(item->endB(), item->p2()));
            QVERIFY(QLineF(item->p1(), item->endA()->sceneCentre()).length() >= 20);
            QVERIFY(QLineF(item->p2(), item->endB()->sceneCentre()).length() >= 20);
        }
    }

    void linkStopsShortOfItemsItPassesUnder()
    {
        // A link between two nodes whose line passes under a third: the line touches its
        // own ends' outlines but stops 5 pixels short of the third's on both sides
        // (LinkItem::kCrossingGapPx), so that it does not look linked to it.
        auto w = makeWindow();
        w->newProject();
        ProjectDocument* doc = w->document();
        ClusterScene* scene = w->clusterScene();
        const LinkItem* across = linkNodesAt(*w, QPointF(0, 0), QPointF(700, 0));
        QVERIFY(across);
        const int middle = doc->addNode(QStringLiteral("H800"), 8, QPointF(350, 0));
        QApplication::processEvents();
        QCOMPARE(across->crossedItems(), QList<EndpointItem*>{scene->nodeItem(middle)});
        // Drawn at 100 %, the line along y = 0 from x = 95 to 605; the middle body spans
        // x = 255 to 445, so the gaps are 250 to 255 and 445 to 450. The label keeps 15 units
        // off the bodies (their bounding rectangles and its margin); the grid's dots are at
        // multiples of 40.
        const QRect area(-120, -60, 940, 120);
        const QColor ground = QApplication::palette().color(QPalette::Base);
        auto lineAt = [&](const QImage& image, int x) {
            return contrastRatio(image.pixelColor(x - area.left(), -area.top()), ground) > 2.0;
        };
        QImage image = renderScene(scene, area);
        for (int x : {97, 247, 453, 603})
            QVERIFY2(lineAt(image, x), qPrintable(QStringLiteral("no line at x = %1").arg(x)));
        for (int x : {252, 448})
            QVERIFY2(!lineAt(image, x), qPrintable(QStringLiteral("line at x = %1").arg(x)));
        // The middle node moved off the line: the line runs whole again.
        doc->moveItems({{middle, QPointF(350, 200)}});
        QApplication::processEvents();
        QVERIFY(across->crossedItems().isEmpty());
        image = renderScene(scene, area);
        for (int x : {252, 448})
            QVERIFY2(lineAt(image, x), qPrintable(QStringLiteral("no line at x = %1").arg(x)));
    }

    void selectedLinkLabelKeepsOffItsEnds()
    {
        // A selected link's label is drawn above the items: wherever it goes, it covers
        // neither end (their icon and name), on a short link and on a long one.
        auto w = makeWindow();
        w->newProject();
        ClusterScene* scene = w->clusterScene();
        auto offBothEnds = [&](const LinkItem* link) {
            const QRectF label = link->labelRect();
            return !label.isEmpty() && !label.intersects(link->endA()->sceneBoundingRect())
                && !label.intersects(link->endB()->sceneBoundingRect());
        };
        // Short: 20 units between the bodies, no room for the label (about 90 wide) on its
        // line, which runs from x = 95 to 115.
        LinkItem* shortLink = linkNodesAt(*w, QPointF(0, 0), QPointF(210, 0));
        // Short and slanted: the bodies' corners 10 units apart across, 24 down.
        LinkItem* slanted = linkNodesAt(*w, QPointF(0, 400), QPointF(200, 500));
        // Long: 610 units between the bodies.
        LinkItem* longLink = linkNodesAt(*w, QPointF(0, 800), QPointF(800, 800));
        QVERIFY(shortLink && slanted && longLink);
        QApplication::processEvents();
        QVERIFY(!shortLink->labelShown());
        QVERIFY(longLink->labelShown());
        for (LinkItem* link : {shortLink, slanted, longLink}) {
            scene->clearSelection();
            link->setSelected(true);
            QVERIFY2(offBothEnds(link), qPrintable(QStringLiteral("label at %1, %2")
                                                       .arg(link->labelRect().center().x())
                                                       .arg(link->labelRect().center().y())));
        }
        // The short link's label above the middle of its line (x = 105, the first side tried
        // for a level line), just clear of the nodes' bounding rectangles (38 + 12 above the
        // centres, and the label's half height and margin): between 50 and 100 above.
        scene->clearSelection();
        shortLink->setSelected(true);
        const QPointF centre = shortLink->labelRect().center();
        QCOMPARE(centre.x(), 105.0);
        QVERIFY2(centre.y() < -50 && centre.y() > -100, qPrintable(QString::number(centre.y())));
        // The long link's on its line, between the bodies.
        QCOMPARE(longLink->labelRect().center().y(), 800.0);
    }

    void fittedCanvasHasNoScrollBars()
    {
        // Fitted, the canvas shows every item, so it has no scroll bars; the user's zoom
        // brings them back (the scene reaches far beyond the items for dragging), and Zoom
        // to Fit hides them again.
        auto w = makeWindow();
        QVERIFY(w->loadClusterPreset(QStringLiteral("24-1")));
        QApplication::processEvents();
        ClusterView* view = w->clusterView();
        const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
        QVERIFY(visible.contains(w->clusterScene()->itemsRect()));
        QCOMPARE(view->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
        QCOMPARE(view->verticalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
        QVERIFY(!view->horizontalScrollBar()->isVisible());
        view->zoomBy(1.5);
        QApplication::processEvents();
        QVERIFY(view->horizontalScrollBar()->isVisible());
        QVERIFY(view->verticalScrollBar()->isVisible());
        view->zoomToFit();
        QApplication::processEvents();
        QVERIFY(!view->horizontalScrollBar()->isVisible());
        QVERIFY(!view->verticalScrollBar()->isVisible());
        // A larger preset zooms out to show it whole; its undo brings back the 24-1 cluster
        // at the zoom that shows it whole, not the large preset's.
        const double small = view->zoom();
        QVERIFY(w->loadClusterPreset(QStringLiteral("mixed-1088")));
        QApplication::processEvents();
        QVERIFY(view->zoom() < small * 0.6);
        w->document()->undoStack()->undo();
        QApplication::processEvents();
        QCOMPARE(view->zoom(), small);
        QVERIFY(view->mapToScene(view->viewport()->rect()).boundingRect().contains(w->clusterScene()->itemsRect()));
        // Redo brings the large one back, whole and still fitted (no scroll bars).
        w->document()->undoStack()->redo();
        QApplication::processEvents();
        QVERIFY(view->zoom() < small * 0.6);
        QVERIFY(view->mapToScene(view->viewport()->rect()).boundingRect().contains(w->clusterScene()->itemsRect()));
        QCOMPARE(view->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
    }

    void undoOfADropRefitsAFittedView()
    {
        // A fitted view widens for a node dropped at its right edge; undoing the drop fits
        // the cluster as it was, not the wider drawing off-centre.
        auto w = makeWindow();
        QVERIFY(w->loadClusterPreset(QStringLiteral("24-1")));
        QApplication::processEvents();
        ClusterView* view = w->clusterView();
        const double fitted = view->zoom();
        const QRect r = view->viewport()->rect();
        QVERIFY(dropDevice(*w, QStringLiteral("H800"), QPoint(r.right() - 5, r.top() + 30)));
        QApplication::processEvents();
        QVERIFY(view->zoom() < fitted);
        w->document()->undoStack()->undo();
        QApplication::processEvents();
        QCOMPARE(view->zoom(), fitted);
        QCOMPARE(view->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
    }

    void addSwitchKeyIsNoStandardKey()
    {
        // Ctrl+Shift+S is QKeySequence::SaveAs on GNOME, KDE and macOS (Qt's key binding table,
        // qplatformtheme.cpp): Add Switch has a key of its own, which no standard key of this
        // platform uses either.
        auto w = makeWindow();
        const QList<QKeySequence> keys = w->addSwitchAction()->shortcuts();
        QCOMPARE(keys.size(), 1);
        QVERIFY(keys.front() != QKeySequence(QStringLiteral("Ctrl+Shift+S")));
        QCOMPARE(keys.front(), QKeySequence(QStringLiteral("Ctrl+Shift+W")));
        const QMetaEnum standard = QMetaEnum::fromType<QKeySequence::StandardKey>();
        for (int i = 0; i < standard.keyCount(); ++i)
            QVERIFY2(!QKeySequence::keyBindings(QKeySequence::StandardKey(standard.value(i))).contains(keys.front()),
                     standard.key(i));
        // Add Switch by its key adds a switch (one undo step).
        const std::size_t switches = w->document()->cluster().switches.size();
        w->clusterView()->setFocus();
        QTest::keySequence(w.get(), keys.front());
        QCOMPARE(w->document()->cluster().switches.size(), switches + 1);
    }

    void problemsNameWhatTheFilesRefuse()
    {
        // validateCluster refuses these, as the files and Run do; the topology finds nothing
        // wrong with them. Each is a row of the Problems panel naming the JSON path.
        auto w = makeWindow();
        w->loadExample();
        ProjectDocument* doc = w->document();
        const int before = w->problemsPanel()->problemCount();
        const auto hasRow = [&](const QString& text) {
            const QStringList rows = w->problemsPanel()->messages();
            return std::any_of(rows.begin(), rows.end(), [&](const QString& row) { return row.contains(text); });
        };
        // 1,000,000,000 devices in node 0: above kMaxDevicesPerNode (core/io/Documents.h).
        Node node = doc->cluster().nodes.front();
        const int count = node.count;
        node.count = 1000000000;
        doc->setNode(node);
        QVERIFY2(hasRow(QStringLiteral("cluster.nodes[0].count: expected at most")), qPrintable(w->problemsPanel()->messages().join('\n')));
        QCOMPARE(w->problemsPanel()->problemCount(), before + 1);
        // Clicking the row selects the node.
        QSignalSpy activated(w->problemsPanel(), &ProblemsPanel::problemActivated);
        auto* tree = w->problemsPanel()->findChild<QTreeWidget*>();
        for (int i = 0; i < tree->topLevelItemCount(); ++i)
            if (tree->topLevelItem(i)->text(1).contains(QStringLiteral("count")))
                emit tree->itemActivated(tree->topLevelItem(i), 1);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.front().front().value<QList<int>>(), QList<int>{node.id});
        node.count = count;
        doc->setNode(node);
        QCOMPARE(w->problemsPanel()->problemCount(), before);

        // An empty host name (hostNameProblem): a launcher could not name the node.
        node.host.clear();
        doc->setNode(node);
        QVERIFY2(hasRow(QStringLiteral("cluster.nodes[0].host: expected a host name")), qPrintable(w->problemsPanel()->messages().join('\n')));
        doc->undoStack()->undo();
        QCOMPARE(w->problemsPanel()->problemCount(), before);

        // Opened from a file: a node id used twice (the reader takes it; validateCluster does
        // not), with a host name of its own.
        Project p = MainWindow::exampleProject();
        Node twin = p.cluster.nodes.front();
        twin.host = "twin";
        twin.x += 400;
        p.cluster.nodes.push_back(twin);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("twin.hapmoe"));
        saveFileAtomically(path.toStdString(), writeProject(p));
        QVERIFY(w->openFile(path));
        const QString where = QStringLiteral("cluster.nodes[%1].id: id %2 is already used by cluster.nodes[0].id")
                                  .arg(p.cluster.nodes.size() - 1)
                                  .arg(twin.id);
        QVERIFY2(hasRow(where), qPrintable(w->problemsPanel()->messages().join('\n')));
    }

    void refusedValueMessageGoesWhenTheValueChanges()
    {
        // "Bandwidth: ... it stays 250.0 GB/s." speaks of the link as it is; an undo that puts
        // the example's bandwidth back makes it wrong, so the status bar and the dock drop it.
        auto w = makeWindow();
        w->loadExample();
        ProjectDocument* doc = w->document();
        const Link link = doc->cluster().links.front();
        w->clusterScene()->clearSelection();
        w->clusterScene()->linkItem(link.a, link.b)->setSelected(true);
        QApplication::processEvents();
        PropertyEditor* editor = w->propertyEditor();
        QDoubleSpinBox* bandwidth = editor->linkBandwidthEditor();
        bandwidth->setFocus();
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("250"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->findLink(link.a, link.b)->bandwidth_gbytes_per_s, 250.0);
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("0"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        const QString refused = QStringLiteral("Bandwidth: at least 0.1 GB/s, not 0; it stays 250.0 GB/s.");
        QCOMPARE(w->statusBar()->currentMessage(), refused);
        QCOMPARE(editor->inputMessage(), refused);
        doc->undoStack()->undo();
        QCOMPARE(doc->findLink(link.a, link.b)->bandwidth_gbytes_per_s, link.bandwidth_gbytes_per_s);
        QCOMPARE(w->statusBar()->currentMessage(), QString());
        QCOMPARE(editor->inputMessage(), QString());
        // Another message in the status bar (a file's warnings, "Saved") is not this one's to clear.
        w->statusBar()->showMessage(QStringLiteral("Saved x.hapmoe"), 5000);
        doc->undoStack()->redo();
        QCOMPARE(w->statusBar()->currentMessage(), QStringLiteral("Saved x.hapmoe"));
    }

    void undoKeysReachTheProjectFromAField()
    {
        // The example's first node has 8 devices; 4 typed and Enter is one undo step.
        auto w = makeWindow();
        w->loadExample();
        ProjectDocument* doc = w->document();
        const Node node = doc->cluster().nodes.front();
        QCOMPARE(node.count, 8);
        w->clusterScene()->clearSelection();
        w->clusterScene()->nodeItem(node.id)->setSelected(true);
        QApplication::processEvents();
        QSpinBox* count = w->propertyEditor()->nodeCountEditor();
        count->setFocus();
        count->selectAll();
        QTest::keyClicks(count, QStringLiteral("4"));
        QTest::keyClick(count, Qt::Key_Return);
        QCOMPARE(doc->cluster().node(node.id)->count, 4);
        QVERIFY(count->hasFocus());
        // The spin box shows its value: Ctrl+Z and Ctrl+Y undo and redo the project's edit.
        QTest::keyClick(count, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(doc->cluster().node(node.id)->count, 8);
        QCOMPARE(count->value(), 8);
        QTest::keyClick(count, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(doc->cluster().node(node.id)->count, 4);
        QTest::keyClick(count, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);   // nothing left to redo
        QCOMPARE(doc->cluster().node(node.id)->count, 4);

        // The host field, untouched since it was shown: nothing of its own to undo.
        auto* host = w->propertyEditor()->findChild<QLineEdit*>(QStringLiteral("nodeHost"));
        QVERIFY(host);
        host->setFocus();
        QVERIFY(!host->isUndoAvailable());
        QTest::keyClick(host, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(doc->cluster().node(node.id)->count, 8);
        QTest::keyClick(host, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(doc->cluster().node(node.id)->count, 4);

        // Typing in it, not yet taken: Ctrl+Z undoes the typing, not the project.
        const QString hostName = host->text();
        host->end(false);
        QTest::keyClicks(host, QStringLiteral("x"));
        QCOMPARE(host->text(), hostName + QStringLiteral("x"));
        QTest::keyClick(host, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(host->text(), hostName);
        QCOMPARE(doc->cluster().node(node.id)->count, 4);

        // A spin box with a number typed and not taken (its entry not ended): its own undo.
        count->setFocus();
        count->selectAll();
        QTest::keyClicks(count, QStringLiteral("2"));
        QTest::keyClick(count, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(doc->cluster().node(node.id)->count, 4);
        QCOMPARE(count->text(), QStringLiteral("4"));
    }

    void bridgeIsEditedOnTheClusterPage()
    {
        // The 16-2 preset (resources/clusters/16-2.json): an H800 node (NCCL) and an MI300X
        // node (RCCL) with the default bridge of hardware/Cluster.h, 2.5 GB/s per connection
        // and 100 us (gloo over TCP, docs/cost-model.md section 2).
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-2")));
        ProjectDocument* doc = w->document();
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 2.5);
        QCOMPARE(doc->cluster().cross_vendor.latency_us, 100.0);
        w->clusterScene()->clearSelection();
        QApplication::processEvents();
        PropertyEditor* editor = w->propertyEditor();
        QDoubleSpinBox* bandwidth = editor->bridgeBandwidthEditor();
        QDoubleSpinBox* latency = editor->bridgeLatencyEditor();
        QVERIFY(bandwidth->isVisible() && bandwidth->isEnabled());
        QVERIFY(latency->isVisible() && latency->isEnabled());
        QCOMPARE(bandwidth->value(), 2.5);
        QCOMPARE(latency->value(), 100.0);
        QVERIFY2(editor->bridgeNote()->text().contains(QStringLiteral("between NCCL and RCCL devices")),
                 qPrintable(editor->bridgeNote()->text()));

        // Typed and Enter: one undo step each, and only the field typed in changes.
        const int steps = doc->undoStack()->count();
        bandwidth->setFocus();
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("10"));
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 2.5);   // not while typing
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 10.0);
        QCOMPARE(doc->cluster().cross_vendor.latency_us, 100.0);
        latency->setFocus();
        latency->selectAll();
        QTest::keyClicks(latency, QStringLiteral("20"));
        QTest::keyClick(latency, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.latency_us, 20.0);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 10.0);
        QCOMPARE(doc->undoStack()->count(), steps + 2);
        // The file keeps what was set.
        const Cluster reread = readCluster(writeCluster(doc->cluster()), "bridge.json");
        QCOMPARE(reread.cross_vendor.bandwidth_gbytes_per_s, 10.0);
        QCOMPARE(reread.cross_vendor.latency_us, 20.0);

        // Undo and redo go through the project, and the fields follow.
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().cross_vendor.latency_us, 100.0);
        QCOMPARE(latency->value(), 100.0);
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 2.5);
        QCOMPARE(bandwidth->value(), 2.5);
        doc->undoStack()->redo();
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 10.0);
        QCOMPARE(bandwidth->value(), 10.0);

        // validateCluster takes a bandwidth above 0 (core/io/Documents.cpp); at two decimals
        // the box starts at 0.01 GB/s. 0 is refused by name, in the dock and the status bar.
        bandwidth->setFocus();
        bandwidth->selectAll();
        QTest::keyClicks(bandwidth, QStringLiteral("0"));
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 10.0);
        QCOMPARE(bandwidth->value(), 10.0);
        const QString refused = QStringLiteral("Bridge bandwidth: at least 0.01 GB/s, not 0; it stays 10.00 GB/s.");
        QCOMPARE(editor->inputMessage(), refused);
        QCOMPARE(w->statusBar()->currentMessage(), refused);
        auto* message = editor->findChild<QLabel*>(QStringLiteral("propertyInputMessage"));
        QVERIFY(message && message->isVisible());
        // Next to the bridge's fields: right under the group, before the canvas tips.
        const int gap = message->mapTo(editor, QPoint()).y()
            - (editor->bridgeNote()->mapTo(editor, QPoint()).y() + editor->bridgeNote()->height());
        QVERIFY2(gap >= 0 && gap < 2 * latency->height(), qPrintable(QStringLiteral("%1 px below the note").arg(gap)));
        // An undo changes the bridge: the message goes.
        doc->undoStack()->undo();
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 2.5);
        QCOMPARE(editor->inputMessage(), QString());

        // A figure finer than the box shows (1 GbE, 0.125 GB/s, shown as 0.13) stays as it is
        // when the latency is changed.
        CrossVendorBridge fine = doc->cluster().cross_vendor;
        fine.bandwidth_gbytes_per_s = 0.125;
        doc->setBridge(fine);
        QCOMPARE(bandwidth->text(), QStringLiteral("0.13 GB/s"));
        latency->setFocus();
        latency->selectAll();
        QTest::keyClicks(latency, QStringLiteral("50"));
        QTest::keyClick(latency, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.latency_us, 50.0);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 0.125);

        // A cluster of one library (16-1-h: two H800 nodes) sends nothing over the bridge: its
        // figures show, but an edit would change no prediction, so they are not editable.
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1-h")));
        w->clusterScene()->clearSelection();
        QApplication::processEvents();
        QVERIFY(bandwidth->isVisible() && !bandwidth->isEnabled() && !latency->isEnabled());
        QVERIFY2(editor->bridgeNote()->text().contains(QStringLiteral("are all NCCL")), qPrintable(editor->bridgeNote()->text()));
    }

    void crossVendorLinkSaysTheBridgeCarriesItsTraffic()
    {
        // A direct link between an H800 node (NCCL) and an MI300X node (RCCL): the cost model
        // sends between them over the bridge (docs/cost-model.md section 4.1), so the link's
        // page says so with the bridge's figures, and its button leads to the bridge.
        auto w = makeWindow();
        const auto [h800, mi300x] = dropTwoNodes(*w, QStringLiteral("H800"), QStringLiteral("MI300X"));
        QVERIFY(h800 >= 0 && mi300x >= 0);
        ProjectDocument* doc = w->document();
        QVERIFY(doc->connectItems(h800, mi300x));
        ClusterScene* scene = w->clusterScene();
        QVERIFY(scene->linkItem(h800, mi300x)->isCrossVendor());
        QVERIFY(scene->linkItem(h800, mi300x)->toolTip().contains(QStringLiteral("cross-vendor bridge")));
        scene->clearSelection();
        scene->linkItem(h800, mi300x)->setSelected(true);
        QApplication::processEvents();
        PropertyEditor* editor = w->propertyEditor();
        QLabel* note = editor->linkBridgeNote();
        QVERIFY(editor->linkBandwidthEditor()->isVisible());
        QVERIFY(note->isVisible());
        // The default bridge of hardware/Cluster.h: 2.5 GB/s per connection, 100 us.
        QCOMPARE(note->text(), QStringLiteral("Between NCCL (H800) and RCCL (MI300X) the plans send over the cross-vendor "
                                              "bridge, 2.5 GB/s per connection and 100 \u00b5s, not at this link's figures."));
        QVERIFY(editor->showBridgeButton()->isVisible());

        // The button shows the cluster page, the bridge's bandwidth ready to type into.
        QTest::mouseClick(editor->showBridgeButton(), Qt::LeftButton);
        QVERIFY(scene->selectedItems().isEmpty());
        QDoubleSpinBox* bandwidth = editor->bridgeBandwidthEditor();
        QVERIFY(bandwidth->isVisible() && bandwidth->isEnabled());
        QVERIFY(bandwidth->hasFocus());
        QTest::keyClicks(bandwidth, QStringLiteral("12.5"));   // 100 Gb/s
        QTest::keyClick(bandwidth, Qt::Key_Return);
        QCOMPARE(doc->cluster().cross_vendor.bandwidth_gbytes_per_s, 12.5);
        // The link's page names the new figure.
        scene->linkItem(h800, mi300x)->setSelected(true);
        QApplication::processEvents();
        QVERIFY2(note->text().contains(QStringLiteral("12.5 GB/s per connection")), qPrintable(note->text()));

        // A link within one library (two H800 nodes) carries its own traffic: no note.
        const auto [a, b] = dropTwoNodes(*w, QStringLiteral("H800"), QStringLiteral("H800"));
        QVERIFY(doc->connectItems(a, b));
        QVERIFY(!scene->linkItem(a, b)->isCrossVendor());
        scene->clearSelection();
        scene->linkItem(a, b)->setSelected(true);
        QApplication::processEvents();
        QVERIFY(editor->linkBandwidthEditor()->isVisible());
        QVERIFY(!note->isVisible());
        QVERIFY(!editor->showBridgeButton()->isVisible());
    }

    void presetCompositionElidesLineByLine()
    {
        // The Devices column of a two-type preset holds two lines ("910B-376T 2x8" over
        // "MI300X 2x8"); in a narrow dock each line ends in "…" instead of being cut, and the
        // tooltip has the composition in full.
        auto w = makeWindow();
        QTreeWidget* presets = w->clusterPresetList();
        QVERIFY(qobject_cast<ElidedLinesDelegate*>(presets->itemDelegateForColumn(1)));
        const QFontMetrics fm(presets->font());
        const QString text = QStringLiteral("910B-376T 2x8\nMI300X 2x8");
        const int width = fm.horizontalAdvance(QStringLiteral("910B-376T 2x"));
        const QStringList lines = ElidedLinesDelegate::elideLines(text, fm, width).split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].endsWith(QChar(0x2026)), qPrintable(lines[0]));
        for (const QString& line : lines)
            QVERIFY2(fm.horizontalAdvance(line) <= width, qPrintable(line));
        QCOMPARE(ElidedLinesDelegate::elideLines(text, fm, 1000), text);
        // As the delegate gets it: the view's display text has QChar::LineSeparator for '\n'.
        QString display = text;
        display.replace(QLatin1Char('\n'), QChar(QChar::LineSeparator));
        const QStringList shown = ElidedLinesDelegate::elideLines(display, fm, width).split(QChar(QChar::LineSeparator));
        QCOMPARE(shown, lines);
        for (int i = 0; i < presets->topLevelItemCount(); ++i)
            if (presets->topLevelItem(i)->text(1).contains(QLatin1Char('\n')))
                QVERIFY(!presets->topLevelItem(i)->toolTip(1).isEmpty());
    }

    void problemsShowAsBadgesAndInTheList()
    {
        auto w = makeWindow();
        const auto [a, b] = dropTwoNodes(*w, QStringLiteral("H800"), QStringLiteral("H800"));
        QVERIFY(a >= 0 && b >= 0);
        ProjectDocument* doc = w->document();
        // Two nodes without links: each is unlinked, and the cluster falls apart in islands.
        QVERIFY(w->problemsPanel()->problemCount() >= 2);
        QVERIFY(!w->clusterScene()->nodeItem(a)->problems().isEmpty());
        QVERIFY(!w->clusterScene()->nodeItem(b)->problems().isEmpty());
        QVERIFY(doc->connectItems(a, b));
        QCOMPARE(w->problemsPanel()->problemCount(), 0);
        QVERIFY(w->clusterScene()->nodeItem(a)->problems().isEmpty());
        // An unknown device type is flagged on its node.
        Node n = *doc->cluster().node(a);
        n.device_type = "TPU-v9";
        doc->setNode(n);
        QVERIFY(!w->clusterScene()->nodeItem(a)->problems().isEmpty());
        QVERIFY(w->problemsPanel()->messages().join(' ').contains(QStringLiteral("TPU-v9")));
        n.device_type = "H800";
        doc->setNode(n);
        QCOMPARE(w->problemsPanel()->problemCount(), 0);
        // Both nodes under one host name: one problem, on both nodes' badges, until renamed.
        Node twin = *doc->cluster().node(b);
        const std::string ownHost = twin.host;
        twin.host = n.host;
        doc->setNode(twin);
        QCOMPARE(w->problemsPanel()->problemCount(), 1);
        QVERIFY2(w->problemsPanel()->messages().front().contains(QStringLiteral("names 2 nodes")),
                 qPrintable(w->problemsPanel()->messages().front()));
        QVERIFY(!w->clusterScene()->nodeItem(a)->problems().isEmpty());
        QVERIFY(!w->clusterScene()->nodeItem(b)->problems().isEmpty());
        twin.host = ownHost;
        doc->setNode(twin);
        QCOMPARE(w->problemsPanel()->problemCount(), 0);
        // A flex-dispatcher model: an A100 node (compute capability 8.0) has no DeepEP
        // (deepseek-ai/DeepEP README), and the panel names it; the H800 node runs it.
        n.device_type = "A100-80GB";
        doc->setNode(n);
        QCOMPARE(w->problemsPanel()->problemCount(), 0);   // nothing wrong with alltoall
        const ModelSpec* preset = findModelPreset("Mixtral-S");
        QVERIFY(preset && preset->isMoe());
        ModelSpec m = *preset;
        m.moe_token_dispatcher_type = TokenDispatcher::Flex;
        doc->setModel(m, QStringLiteral("flex"));
        QCOMPARE(w->problemsPanel()->problemCount(), 1);
        const QString message = w->problemsPanel()->messages().join(' ');
        QVERIFY2(message.contains(QStringLiteral("A100-80GB")) && message.contains(QStringLiteral("compute capability 8.0")),
                 qPrintable(message));
        // The other node an A100 as well: one problem for the type, naming both nodes' count,
        // and clicking it selects both on the canvas.
        Node other = *doc->cluster().node(b);
        other.device_type = "A100-80GB";
        doc->setNode(other);
        QCOMPARE(w->problemsPanel()->problemCount(), 1);
        QVERIFY2(w->problemsPanel()->messages().front().startsWith(QStringLiteral("2 A100-80GB nodes: ")),
                 qPrintable(w->problemsPanel()->messages().front()));
        // The message as written: neither the tooltip's host list nor the row's wrap points.
        QVERIFY(!w->problemsPanel()->messages().front().contains(QStringLiteral("\n")));
        QVERIFY(!w->problemsPanel()->messages().front().contains(QChar(0x200b)));
        QSignalSpy activated(w->problemsPanel(), &ProblemsPanel::problemActivated);
        auto* tree = w->problemsPanel()->findChild<QTreeWidget*>();
        QVERIFY(tree);
        emit tree->itemActivated(tree->topLevelItem(0), 1);
        QCOMPARE(activated.count(), 1);
        QList<int> ids = activated.front().front().value<QList<int>>();
        std::sort(ids.begin(), ids.end());
        QCOMPARE(ids, (QList<int>{std::min(a, b), std::max(a, b)}));
    }
};

QTEST_MAIN(ClusterDesignerTest)
#include "ClusterDesignerTest.moc"
