#include "ClusterLayout.h"

#include <QHash>
#include <QList>
#include <QSet>

#include <QPointF>

#include <algorithm>
#include <cmath>
#include <vector>
#include <map>

namespace hapmoe::ui {

namespace {
constexpr double kNodeSpacing = 230;   // node body 190 wide plus a gap for link labels
constexpr double kRowSpacing = 170;       // between switch rows, and from the last to the nodes
constexpr double kNodeRowSpacing = 120;   // between the rows of one block: node body 76 high plus a gap
} // namespace

bool needsLayout(const Cluster& cluster)
{
    QSet<QPair<double, double>> points;
    for (const auto& n : cluster.nodes)
        points.insert({n.x, n.y});
    for (const auto& s : cluster.switches)
        points.insert({s.x, s.y});
    const int items = int(cluster.nodes.size() + cluster.switches.size());
    return items > 1 && points.size() < 2;
}

void layoutCluster(Cluster& cluster)
{
    QHash<int, QList<int>> adjacency;
    for (const auto& l : cluster.links) {
        adjacency[l.a].append(l.b);
        adjacency[l.b].append(l.a);
    }
    QSet<int> switchIds;
    for (const auto& s : cluster.switches)
        switchIds.insert(s.id);

    // Root: the switch with the most switch neighbours (the spine); ties go to the first.
    int root = -1, best = -1;
    for (const auto& s : cluster.switches) {
        int sw = 0;
        for (int n : adjacency.value(s.id))
            sw += switchIds.contains(n) ? 1 : 0;
        if (sw > best) {
            best = sw;
            root = s.id;
        }
    }

    // Breadth-first layers of switches from the root; each node goes under the first
    // switch it is linked to (or in a row of its own when it has none).
    QHash<int, int> depth;
    QList<int> order;
    if (root >= 0) {
        depth.insert(root, 0);
        order.append(root);
        for (int i = 0; i < order.size(); ++i)
            for (int n : adjacency.value(order[i]))
                if (switchIds.contains(n) && !depth.contains(n)) {
                    depth.insert(n, depth.value(order[i]) + 1);
                    order.append(n);
                }
    }
    for (const auto& s : cluster.switches)   // switches not reached from the root
        if (!depth.contains(s.id)) {
            depth.insert(s.id, 0);
            order.append(s.id);
        }
    int maxDepth = 0;
    for (int d : depth)
        maxDepth = std::max(maxDepth, d);

    std::map<int, QList<int>> nodesUnder;   // switch id (or -1) -> nodes, in cluster order
    for (const auto& n : cluster.nodes) {
        int parent = -1, parentDepth = -1;
        for (int nb : adjacency.value(n.id))
            if (switchIds.contains(nb) && depth.value(nb) > parentDepth) {
                parent = nb;
                parentDepth = depth.value(nb);
            }
        nodesUnder[parent].append(n.id);
    }

    // The groups in drawing order: under the deepest switches first, then under the others,
    // then the nodes without a switch.
    QList<int> groups;
    for (int id : order)
        if (depth.value(id) == maxDepth && !nodesUnder[id].isEmpty())
            groups.append(id);
    for (int id : order)
        if (depth.value(id) != maxDepth && !nodesUnder[id].isEmpty())
            groups.append(id);
    if (!nodesUnder[-1].isEmpty())
        groups.append(-1);
    // Each group a block of rows, blocks side by side, with the column count that draws the
    // cluster about 4:3 (layoutColumns, as for the shorthand clusters).
    const double nodeY = (maxDepth + 1) * kRowSpacing + (cluster.switches.empty() ? -kRowSpacing : 0);
    const double blockGap = kNodeSpacing * 0.25;
    std::vector<int> sizes;
    for (int g : groups)
        sizes.push_back(int(nodesUnder[g].size()));
    const int columns = layoutColumns(sizes, kNodeSpacing, kNodeRowSpacing, nodeY, blockGap);

    QHash<int, QPointF> pos;
    double x = 0;
    QHash<int, double> groupCentre;
    for (int parent : groups) {
        const QList<int> nodes = nodesUnder[parent];
        const int cols = std::min(int(nodes.size()), columns);
        for (int k = 0; k < nodes.size(); ++k)
            pos.insert(nodes[k], QPointF(x + (k % cols) * kNodeSpacing, nodeY + (k / cols) * kNodeRowSpacing));
        groupCentre.insert(parent, x + (cols - 1) * kNodeSpacing / 2);
        x += cols * kNodeSpacing + blockGap;
    }

    // Switches: each above the centre of what hangs below it, deepest first.
    const double width = std::max(0.0, x - blockGap - kNodeSpacing);
    for (int d = maxDepth; d >= 0; --d) {
        QList<int> row;
        for (int id : order)
            if (depth.value(id) == d)
                row.append(id);
        for (int i = 0; i < row.size(); ++i) {
            const int id = row[i];
            double cx = 0;
            int count = 0;
            if (groupCentre.contains(id)) {
                cx += groupCentre.value(id);
                ++count;
            }
            for (int nb : adjacency.value(id))
                if (switchIds.contains(nb) && depth.value(nb) == d + 1 && pos.contains(nb)) {
                    cx += pos.value(nb).x();
                    ++count;
                }
            if (count == 0)
                cx = row.size() > 1 ? width * i / (row.size() - 1) : width / 2;
            else
                cx /= count;
            pos.insert(id, QPointF(cx, d * kRowSpacing));
        }
        // Keep switches of one row apart.
        std::sort(row.begin(), row.end(), [&](int a, int b) { return pos.value(a).x() < pos.value(b).x(); });
        for (int i = 1; i < row.size(); ++i) {
            QPointF p = pos.value(row[i]);
            const double minX = pos.value(row[i - 1]).x() + 180;
            if (p.x() < minX)
                pos.insert(row[i], QPointF(minX, p.y()));
        }
    }

    for (auto& n : cluster.nodes) {
        const QPointF p = pos.value(n.id);
        n.x = std::round(p.x() / 20) * 20;
        n.y = std::round(p.y() / 20) * 20;
    }
    for (auto& s : cluster.switches) {
        const QPointF p = pos.value(s.id);
        s.x = std::round(p.x() / 20) * 20;
        s.y = std::round(p.y() / 20) * 20;
    }
}

bool fitLayout(Cluster& cluster)
{
    if (needsLayout(cluster)) {
        layoutCluster(cluster);
        return true;
    }
    // Items are at most 200 x 90 with their margins (NodeItem, SwitchItem).
    constexpr double needX = 200, needY = 90;
    std::vector<QPointF> points;
    for (const auto& n : cluster.nodes)
        points.emplace_back(n.x, n.y);
    for (const auto& s : cluster.switches)
        points.emplace_back(s.x, s.y);
    double scale = 1;
    for (size_t i = 0; i < points.size(); ++i)
        for (size_t j = i + 1; j < points.size(); ++j) {
            const double dx = std::abs(points[i].x() - points[j].x());
            const double dy = std::abs(points[i].y() - points[j].y());
            if (dx < 1e-9 && dy < 1e-9) {
                layoutCluster(cluster);
                return true;
            }
            const double sx = dx > 1e-9 ? needX / dx : 1e9;
            const double sy = dy > 1e-9 ? needY / dy : 1e9;
            scale = std::max(scale, std::min(sx, sy));
        }
    if (scale <= 1.0 + 1e-9)
        return false;
    scale = std::min(scale, 8.0);
    auto snap = [](double v) { return std::round(v / 20) * 20; };
    for (auto& n : cluster.nodes) {
        n.x = snap(n.x * scale);
        n.y = snap(n.y * scale);
    }
    for (auto& s : cluster.switches) {
        s.x = snap(s.x * scale);
        s.y = snap(s.y * scale);
    }
    return true;
}

} // namespace hapmoe::ui
