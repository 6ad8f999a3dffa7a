// ClusterTopology on hand-made graphs: widest paths computed by hand, node-to-node transit
// refused, islands and other problems, link classes and the stage order of device types.

#include "hardware/ClusterTopology.h"
#include "util/InputError.h"

#include <QtTest>

#include <algorithm>

using namespace hapmoe;

namespace {

Node node(int id, const char* type, int count = 8)
{
    Node n;
    n.id = id;
    n.host = "n" + std::to_string(id);
    n.device_type = type;
    n.count = count;
    return n;
}

Switch sw(int id) { return Switch{id, "s" + std::to_string(id), 0, 0}; }

//   A(0,H800) --400-- S(10) --50-- T(11) --300-- C(2,MI300X)
//   B(1,H800) --100-- S(10)        A --20-- T,   A --500-- C (direct cable)
Cluster handMade()
{
    Cluster c;
    c.nodes = {node(0, "H800"), node(1, "H800"), node(2, "MI300X")};
    c.switches = {sw(10), sw(11)};
    c.links = {{0, 10, 400, 1}, {1, 10, 100, 1}, {10, 11, 50, 1}, {2, 11, 300, 1}, {0, 11, 20, 1}, {0, 2, 500, 1}};
    return c;
}

bool hasKind(const std::vector<TopologyProblem>& problems, TopologyProblem::Kind kind)
{
    return std::any_of(problems.begin(), problems.end(), [&](const TopologyProblem& p) { return p.kind == kind; });
}

} // namespace

class tst_ClusterTopology : public QObject {
    Q_OBJECT
private slots:
    void widestPathByHand();
    void nodesDoNotForward();
    void routesOnlyThroughSwitches();
    void duplicateHostNamesAreOneProblemPerName();
    void bottleneckBetweenGroups();
    void islandsAndProblems();
    void badLinksAndUnknownDevices();
    void noDevices();
    void classify();
    void typeOrderKeepsFastBoundaries();
};

void tst_ClusterTopology::widestPathByHand()
{
    const Cluster c = handMade();
    const ClusterTopology t(c, DeviceCatalog::builtin());
    // A-B: A-S-B = min(400, 100) = 100 (A-T-S-B = min(20, 50, 100) = 20 is narrower).
    QCOMPARE(t.widestPath(0, 1), 100.0);
    QCOMPARE(t.widestPath(1, 0), 100.0);
    // A-C: the direct cable, 500 (vs A-S-T-C = min(400, 50, 300) = 50).
    QCOMPARE(t.widestPath(0, 2), 500.0);
    // Same node: the device type's intra-node bandwidth (H800 NVLink 200 GB/s).
    QCOMPARE(t.widestPath(0, 0), 200.0);
    QCOMPARE(t.widestPath(2, 2), 448.0);
    // Unknown ids and switches are not endpoints.
    QCOMPARE(t.widestPath(0, 42), 0.0);
    QCOMPARE(t.widestPath(0, 10), 0.0);
    QVERIFY(t.problems().empty());
}

void tst_ClusterTopology::nodesDoNotForward()
{
    const Cluster c = handMade();
    const ClusterTopology t(c, DeviceCatalog::builtin());
    // B-C: B-S-T-C = min(100, 50, 300) = 50. Through host A it would be B-S-A-C =
    // min(100, 400, 500) = 100, but hosts do not route traffic.
    QCOMPARE(t.widestPath(1, 2), 50.0);
}

void tst_ClusterTopology::routesOnlyThroughSwitches()
{
    // A chain of hosts, 0-1 and 1-2, linked directly: one component, but 0 and 2 can only
    // talk through host 1, which does not forward (widestPath says 0): a "no route" problem.
    Cluster chain;
    for (int i = 0; i < 3; ++i)
        chain.nodes.push_back(node(i, "H800"));
    chain.links.push_back({0, 1, 50, 1});
    chain.links.push_back({1, 2, 50, 1});
    const ClusterTopology t(chain, DeviceCatalog::builtin());
    QCOMPARE(t.components().size(), std::size_t(1));
    QCOMPARE(t.widestPath(0, 2), 0.0);
    auto problems = t.problems();
    QCOMPARE(problems.size(), std::size_t(1));
    QVERIFY(problems[0].kind == TopologyProblem::Kind::NoRoute);
    QCOMPARE(problems[0].ids, (std::vector<int>{0, 2}));
    QCOMPARE(QString::fromStdString(problems[0].message),
             QStringLiteral("node n0 cannot reach node n2: no route through switches or a direct link (a host does not forward traffic)"));

    // Host 1 on two switches that are not linked: 0 (on switch 10) and 2 (on switch 11) have
    // no route; linking the switches gives one fabric and no problem.
    Cluster dual;
    for (int i = 0; i < 3; ++i)
        dual.nodes.push_back(node(i, "H800"));
    dual.switches = {sw(10), sw(11)};
    dual.links = {{0, 10, 50, 1}, {1, 10, 50, 1}, {1, 11, 50, 1}, {2, 11, 50, 1}};
    QCOMPARE(ClusterTopology(dual, DeviceCatalog::builtin()).problems().size(), std::size_t(1));
    dual.links.push_back({10, 11, 400, 1});
    QVERIFY(ClusterTopology(dual, DeviceCatalog::builtin()).problems().empty());

    // Six nodes on switch 10 and one on switch 11, host 6 on both: the message names up to
    // five nodes and counts the rest ("and 2 more", never "and 1 more").
    Cluster wide;
    for (int i = 0; i < 8; ++i)
        wide.nodes.push_back(node(i, "H800"));
    wide.switches = {sw(10), sw(11)};
    for (int i = 0; i < 6; ++i)
        wide.links.push_back({i, 10, 50, 1});
    wide.links.push_back({6, 10, 50, 1});
    wide.links.push_back({6, 11, 50, 1});
    wide.links.push_back({7, 11, 50, 1});
    const auto wideProblems = ClusterTopology(wide, DeviceCatalog::builtin()).problems();
    QCOMPARE(wideProblems.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(wideProblems[0].message),
             QStringLiteral("nodes n0, n1, n2, n3 and 2 more cannot reach node n7: no route through switches or a direct link "
                            "(a host does not forward traffic)"));
    wide.links.erase(wide.links.begin() + 5);   // n5 leaves: five names fit
    wide.nodes.erase(wide.nodes.begin() + 5);
    QVERIFY(ClusterTopology(wide, DeviceCatalog::builtin()).problems().front().message.starts_with("nodes n0, n1, n2, n3 and n4 cannot reach"));

    // The hand-made cluster (every node on a switch) has none.
    QVERIFY(ClusterTopology(handMade(), DeviceCatalog::builtin()).problems().empty());
}

void tst_ClusterTopology::duplicateHostNamesAreOneProblemPerName()
{
    // Four nodes on one switch; three of them named "gpu-a" or "GPU-A": one problem naming all three
    // nodes (the readers refuse such a file, an editor shows it until the names differ).
    Cluster c;
    for (int i = 0; i < 4; ++i)
        c.nodes.push_back(node(i, "H800"));
    c.switches = {sw(10)};
    for (int i = 0; i < 4; ++i)
        c.links.push_back({i, 10, 50, 1});
    QVERIFY(ClusterTopology(c, DeviceCatalog::builtin()).problems().empty());
    // Host names ignore case (RFC 4343): "GPU-A" is the same host.
    for (int i : {0, 2})
        c.nodes[std::size_t(i)].host = "gpu-a";
    c.nodes[3].host = "GPU-A";
    const auto problems = ClusterTopology(c, DeviceCatalog::builtin()).problems();
    QCOMPARE(problems.size(), std::size_t(1));
    QVERIFY(problems[0].kind == TopologyProblem::Kind::DuplicateHost);
    QCOMPARE(problems[0].ids, (std::vector<int>{0, 2, 3}));
    QCOMPARE(QString::fromStdString(problems[0].message),
             QStringLiteral("host \"gpu-a\" names 3 nodes, \"gpu-a\" (id 0), \"gpu-a\" (id 2) and \"GPU-A\" (id 3) (host names ignore case); "
                            "a launcher's hostfile needs a name per node"));
}

void tst_ClusterTopology::bottleneckBetweenGroups()
{
    const Cluster c = handMade();
    const ClusterTopology t(c, DeviceCatalog::builtin());
    // {A, B} x {C}: min(500, 50) = 50.
    QCOMPARE(t.bottleneck({0, 1}, {2}), 50.0);
    QCOMPARE(t.bottleneck({0}, {1, 2}), 100.0);   // min(100, 500)
    QCOMPARE(t.bottleneck({}, {2}), 0.0);
}

void tst_ClusterTopology::islandsAndProblems()
{
    Cluster c = handMade();
    // D(3) and E(4) hang off their own switch U(12): an island of two nodes.
    c.nodes.push_back(node(3, "910B"));
    c.nodes.push_back(node(4, "910B"));
    c.switches.push_back(sw(12));
    c.links.push_back({3, 12, 200, 1});
    c.links.push_back({4, 12, 200, 1});
    // F(5) has no link at all.
    c.nodes.push_back(node(5, "910B"));
    const ClusterTopology t(c, DeviceCatalog::builtin());
    const auto comps = t.components();
    QCOMPARE(comps.size(), std::size_t(3));
    QCOMPARE(comps[0], (std::vector<int>{0, 1, 2}));
    QCOMPARE(comps[1], (std::vector<int>{3, 4}));
    QCOMPARE(comps[2], (std::vector<int>{5}));
    QCOMPARE(t.widestPath(0, 3), 0.0);
    QCOMPARE(t.widestPath(3, 4), 200.0);
    const auto problems = t.problems();
    QCOMPARE(problems.size(), std::size_t(2));
    const auto island = std::find_if(problems.begin(), problems.end(), [](const auto& p) { return p.kind == TopologyProblem::Kind::Island; });
    QVERIFY(island != problems.end());
    QCOMPARE(island->ids, (std::vector<int>{3, 4}));
    QVERIFY(QString::fromStdString(island->message).startsWith("nodes n3 and n4 form an island"));
    // The count is of the largest connected part, which is what the island cannot reach.
    QVERIFY2(QString::fromStdString(island->message).endsWith("form an island: no path to the 3 nodes of the largest connected part"),
             island->message.c_str());
    const auto unlinked = std::find_if(problems.begin(), problems.end(), [](const auto& p) { return p.kind == TopologyProblem::Kind::Unlinked; });
    QVERIFY(unlinked != problems.end());
    QCOMPARE(unlinked->ids, (std::vector<int>{5}));
    // A plan may run inside one connected part, never across two; a search needs the whole.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    requireConnected(c, cat, "c.json", {0, 1, 2});
    requireConnected(c, cat, "c.json", {3, 4});
    requireConnected(c, cat, "c.json", {5});
    for (const std::vector<int>& ids : {std::vector<int>{0, 3}, std::vector<int>{4, 5}, std::vector<int>{}}) {
        try {
            requireConnected(c, cat, "c.json", ids);
            QFAIL("nodes that do not reach each other were accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("c.json"));
            QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("links"));
        }
    }
}

void tst_ClusterTopology::badLinksAndUnknownDevices()
{
    Cluster c = handMade();
    c.nodes[1].device_type = "Z900";
    c.links.push_back({2, 99, 100, 1});    // missing id
    c.links.push_back({2, 2, 100, 1});     // self loop
    c.links.push_back({1, 11, -5, 1});     // negative bandwidth
    const ClusterTopology t(c, DeviceCatalog::builtin());
    const auto problems = t.problems();
    QVERIFY(hasKind(problems, TopologyProblem::Kind::UnknownDevice));
    QCOMPARE(std::count_if(problems.begin(), problems.end(), [](const auto& p) { return p.kind == TopologyProblem::Kind::BadLink; }), 3L);
    // Bad links are left out of the graph; the good ones still answer.
    QCOMPARE(t.widestPath(0, 1), 100.0);
    QCOMPARE(t.widestPath(1, 1), 0.0);   // unknown type: no intra-node figure
}

void tst_ClusterTopology::noDevices()
{
    const Cluster empty;
    const ClusterTopology t(empty, DeviceCatalog::builtin());
    QVERIFY(hasKind(t.problems(), TopologyProblem::Kind::NoDevices));
    QVERIFY(t.components().empty());
    QVERIFY(t.typeOrder().empty());
}

void tst_ClusterTopology::classify()
{
    Cluster c = handMade();
    c.nodes[1].device_type = "h800-sxm";   // an alias of H800
    const ClusterTopology t(c, DeviceCatalog::builtin());
    QVERIFY(t.classify({0}) == LinkClass::IntraNode);
    QVERIFY(t.classify({0, 0}) == LinkClass::IntraNode);
    QVERIFY(t.classify({0, 1}) == LinkClass::InterNode);
    QVERIFY(t.classify({0, 1, 2}) == LinkClass::CrossType);
    const auto byType = t.nodesByType();
    QCOMPARE(byType.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(byType[0].first), QStringLiteral("H800"));
    QCOMPARE(byType[0].second, (std::vector<int>{0, 1}));
    QCOMPARE(QString::fromStdString(toString(LinkClass::CrossType)), QStringLiteral("cross_type"));
}

void tst_ClusterTopology::typeOrderKeepsFastBoundaries()
{
    // Types X (H800), Y (910B), Z (MI300X), one node each, all on one switch S(9) plus a
    // direct 100 GB/s cable X-Z. Bottlenecks by hand: X-Y = min(10, 10) = 10,
    // Y-Z = 10, X-Z = 100 (cable). Any order with X and Z adjacent has boundaries {100, 10};
    // X, Y, Z would have {10, 10}.
    Cluster c;
    c.nodes = {node(0, "H800"), node(1, "910B"), node(2, "MI300X")};
    c.switches = {sw(9)};
    c.links = {{0, 9, 10, 1}, {1, 9, 10, 1}, {2, 9, 10, 1}, {0, 2, 100, 1}};
    const ClusterTopology t(c, DeviceCatalog::builtin());
    QCOMPARE(t.bottleneck({0}, {2}), 100.0);
    QCOMPARE(t.bottleneck({0}, {1}), 10.0);
    const auto order = t.typeOrder();
    QCOMPARE(order.size(), std::size_t(3));
    const auto x = std::find(order.begin(), order.end(), "H800") - order.begin();
    const auto z = std::find(order.begin(), order.end(), "MI300X") - order.begin();
    QCOMPARE(std::abs(x - z), 1L);
    QCOMPARE(QString::fromStdString(order[0]), QStringLiteral("H800"));   // first-appearance order breaks ties
}

QTEST_GUILESS_MAIN(tst_ClusterTopology)
#include "tst_ClusterTopology.moc"
