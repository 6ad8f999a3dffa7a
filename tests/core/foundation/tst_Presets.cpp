// Built-in presets (resources/models, resources/clusters) and name resolution: every name
// the product promises resolves case-insensitively, the paper's Table 1 clusters have the
// published composition, model shapes reproduce published parameter counts, and the
// cluster shorthand builds the documented network.

#include "hardware/ClusterTopology.h"
#include "io/Documents.h"
#include "io/Presets.h"

#include <QtTest>

#include <QTemporaryDir>

#include <map>

using namespace hapmoe;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Parameters of a Mixtral/Qwen-style model from its preset fields: attention (Q, K, V, O),
// SwiGLU experts (3 matrices), router, two RMSNorms per layer, untied embeddings.
double moeParameters(const ModelSpec& m)
{
    const double h = m.hidden_size;
    const double q = static_cast<double>(m.num_attention_heads) * m.kvChannels();
    const double kv = static_cast<double>(m.queryGroups()) * m.kvChannels();
    const double attention = h * q + 2 * h * kv + q * h;
    const double experts = m.num_experts * 3.0 * h * m.expertFfn();
    const double layer = attention + experts + h * m.num_experts + 2 * h;
    return m.num_layers * layer + 2.0 * m.vocab_size * h + h;
}

} // namespace

class tst_Presets : public QObject {
    Q_OBJECT
private slots:
    void requiredModels_data();
    void requiredModels();
    void paperModelShapes();
    void publishedParameterCounts();
    void korthikantiModels();
    void paperClusters_data();
    void paperClusters();
    void largeMixedCluster();
    void presetsHaveSources();
    void shorthandBuildsNetwork();
    void shorthandErrors();
    void largeClustersAreDrawnAboutSquare();
    void resolveOrder();
    void resolveUnknownListsPresets();
};

void tst_Presets::requiredModels_data()
{
    QTest::addColumn<QString>("name");
    for (const char* n : {"Mixtral-S", "mixtral-s", "MIXTRAL-L", "LLaMA-2-7B", "llama-2-13b", "Mixtral-8x7B", "mixtral 8x22b",
                          "Qwen3-235B-A22B", "qwen3-30b-a3b", "GPT-22B", "GPT-175B", "GPT-530B", "GPT-1T", "Megatron-GPT-1.7B",
                          "Megatron-GPT-7.1B", "Megatron-GPT-16B", "Megatron-GPT-32B", "Megatron-GPT-70B", "Megatron-GPT-119B",
                          "Megatron-GPT-177B", "Megatron-GPT-314B", "Megatron-GPT-462B"})
        QTest::newRow(n) << QString::fromLatin1(n);
}

void tst_Presets::requiredModels()
{
    QFETCH(QString, name);
    const ModelSpec* m = findModelPreset(name.toStdString());
    QVERIFY2(m, qPrintable(name));
    validateModel(*m, "preset");
    QVERIFY(!m->source.empty());
}

void tst_Presets::paperModelShapes()
{
    // HAPMoE paper, appendix A.
    const ModelSpec& s = *findModelPreset("Mixtral-S");
    QCOMPARE(s.num_layers, 24);
    QCOMPARE(s.hidden_size, 4096);
    QCOMPARE(s.ffn_hidden_size, 14336);
    QCOMPARE(s.num_attention_heads, 32);
    QCOMPARE(s.num_query_groups, 8);
    QCOMPARE(s.num_experts, 8);
    QCOMPARE(s.moe_router_topk, 2);
    QVERIFY(s.moe_token_dispatcher_type == TokenDispatcher::AllGather);
    QCOMPARE(s.seq_length, 4096);
    QCOMPARE(s.training.micro_batch_size, 1);
    QCOMPARE(s.training.global_batch_size, 256);
    QVERIFY(s.training.use_distributed_optimizer);
    QVERIFY(s.training.precision == Precision::BF16);
    const ModelSpec& l = *findModelPreset("Mixtral-L");
    QCOMPARE(l.num_layers, 48);
    QCOMPARE(l.hidden_size, 6144);
    QCOMPARE(l.ffn_hidden_size, 16384);
    QCOMPARE(l.num_attention_heads, 48);
    QCOMPARE(l.num_query_groups, 8);
    QVERIFY(l.moe_token_dispatcher_type == TokenDispatcher::AllToAll);
    QCOMPARE(l.training.global_batch_size, 512);
    // LLaMA-2 (arXiv:2307.09288): 7B = 32 x 4096, 13B = 40 x 5120; paper section 5.1 uses seq 4096.
    QCOMPARE(findModelPreset("LLaMA-2-7B")->num_layers, 32);
    QCOMPARE(findModelPreset("LLaMA-2-13B")->hidden_size, 5120);
    QCOMPARE(findModelPreset("LLaMA-2-13B")->seq_length, 4096);
    QVERIFY(!findModelPreset("LLaMA-2-7B")->isMoe());
}

void tst_Presets::publishedParameterCounts()
{
    // Mixtral-L: "approximately 122B parameters" (paper appendix A); the formula gives 120.6B.
    QVERIFY(qAbs(moeParameters(*findModelPreset("Mixtral-L")) / 122e9 - 1) < 0.02);
    // Mixtral 8x7B: 46.7B total (arXiv:2401.04088 section 2).
    QVERIFY(qAbs(moeParameters(*findModelPreset("Mixtral-8x7B")) / 46.7e9 - 1) < 0.005);
    // Mixtral 8x22B: 141B total (Mistral AI model card).
    QVERIFY(qAbs(moeParameters(*findModelPreset("Mixtral-8x22B")) / 141e9 - 1) < 0.01);
    // Qwen3-235B-A22B: 235B total (arXiv:2505.09388 Table 2); Qwen3-30B-A3B: 30.5B.
    QVERIFY(qAbs(moeParameters(*findModelPreset("Qwen3-235B-A22B")) / 235e9 - 1) < 0.01);
    QVERIFY(qAbs(moeParameters(*findModelPreset("Qwen3-30B-A3B")) / 30.5e9 - 1) < 0.01);
}

void tst_Presets::korthikantiModels()
{
    // published-runs.md section 1.2 (Table 3): heads, hidden, layers; v = 51200, s = 2048.
    struct Row {
        const char* name;
        int heads, hidden, layers, gbs;
    };
    for (const Row& r : {Row{"GPT-22B", 64, 6144, 48, 4}, Row{"GPT-175B", 96, 12288, 96, 64}, Row{"GPT-530B", 128, 20480, 105, 280},
                         Row{"GPT-1T", 160, 25600, 128, 512}}) {
        const ModelSpec& m = *findModelPreset(r.name);
        QCOMPARE(m.num_attention_heads, r.heads);
        QCOMPARE(m.hidden_size, r.hidden);
        QCOMPARE(m.num_layers, r.layers);
        QCOMPARE(m.ffn_hidden_size, 4 * r.hidden);
        QCOMPARE(m.vocab_size, 51200);
        QCOMPARE(m.seq_length, 2048);
        QCOMPARE(m.training.global_batch_size, r.gbs);
        QVERIFY(!m.swiglu && m.add_bias_linear && !m.untie_embeddings_and_output_weights);
        // Korthikanti Sec. 5.1 Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); 175B -> 174.6e9.
        const double h = m.hidden_size, l = m.num_layers;
        const double p = 12 * l * h * h * (1 + 13 / (12 * h) + (m.vocab_size + m.seq_length) / (12 * l * h));
        if (QString::fromLatin1(r.name) == "GPT-175B")
            QVERIFY(qAbs(p / 175e9 - 1) < 0.01);
    }
}

void tst_Presets::paperClusters_data()
{
    // HAPMoE paper Table 1: symbol -> hardware configuration (nodes of 8 devices).
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("h800");
    QTest::addColumn<int>("ascend");
    QTest::addColumn<int>("mi300x");
    QTest::newRow("16-1-h") << "16-1-h" << 2 << 0 << 0;
    QTest::newRow("16-2-h") << "16-2-h" << 0 << 2 << 0;
    QTest::newRow("16-3-h") << "16-3-h" << 0 << 0 << 2;
    QTest::newRow("16-1") << "16-1" << 1 << 1 << 0;
    QTest::newRow("16-2") << "16-2" << 1 << 0 << 1;
    QTest::newRow("16-3") << "16-3" << 0 << 1 << 1;
    QTest::newRow("24-1") << "24-1" << 1 << 2 << 0;
    QTest::newRow("24-2") << "24-2" << 1 << 0 << 2;
    QTest::newRow("24-3") << "24-3" << 0 << 2 << 1;
    QTest::newRow("32-1") << "32-1" << 2 << 2 << 0;
    QTest::newRow("32-2") << "32-2" << 2 << 0 << 2;
    QTest::newRow("32-3") << "32-3" << 0 << 2 << 2;
}

void tst_Presets::paperClusters()
{
    QFETCH(QString, name);
    QFETCH(int, h800);
    QFETCH(int, ascend);
    QFETCH(int, mi300x);
    const Cluster* c = findClusterPreset(name.toUpper().toStdString());   // case-insensitive
    QVERIFY(c);
    QCOMPARE(q(c->name), name);
    std::map<std::string, int> nodes;
    for (const auto& n : c->nodes) {
        QCOMPARE(n.count, 8);
        ++nodes[DeviceCatalog::builtin().get(n.device_type).name];
    }
    QCOMPARE(nodes["H800"], h800);
    QCOMPARE(nodes["910B-376T"], ascend);
    QCOMPARE(nodes["MI300X"], mi300x);
    QCOMPARE(c->totalDevices(), 8 * (h800 + ascend + mi300x));
    QVERIFY(name.startsWith(QString::number(c->totalDevices())));
    const ClusterTopology topo(*c, DeviceCatalog::builtin());
    QVERIFY(topo.problems().empty());
    QCOMPARE(topo.components().size(), std::size_t(1));
}

void tst_Presets::largeMixedCluster()
{
    const Cluster* c = findClusterPreset("mixed-1088");
    QVERIFY(c);
    QCOMPARE(c->totalDevices(), 1088);
    const ClusterTopology topo(*c, DeviceCatalog::builtin());
    QCOMPARE(topo.nodesByType().size(), std::size_t(4));
    QVERIFY(topo.problems().empty());
    // An A100 node's uplink is 8 x 25 GB/s = 200 GB/s; an H800 node's 8 x 50 = 400. Between
    // them the narrowest hop is the A100 uplink.
    const auto groups = topo.nodesByType();
    QCOMPARE(topo.widestPath(groups[0].second.front(), groups[3].second.front()), 200.0);
    std::size_t paper = 0;
    for (const auto& p : clusterPresets())
        paper += p.source.find("Table 1") != std::string::npos ? 1 : 0;
    QCOMPARE(paper, std::size_t(12));
}

void tst_Presets::presetsHaveSources()
{
    QVERIFY(modelPresets().size() >= 21);
    for (const auto& p : modelPresets()) {
        QVERIFY2(p.source.size() > 10, p.name.c_str());
        QVERIFY(!p.summary.empty());
    }
    for (const auto& p : clusterPresets())
        QVERIFY2(p.source.size() > 10, p.name.c_str());
    // The paper's models and clusters come first, in the paper's order.
    QCOMPARE(q(modelPresets().front().name), QStringLiteral("Mixtral-S"));
    QCOMPARE(q(clusterPresets().front().name), QStringLiteral("16-1-h"));
    QCOMPARE(q(clusterPresets()[11].name), QStringLiteral("32-3"));
}

void tst_Presets::shorthandBuildsNetwork()
{
    const Cluster c = clusterFromShorthand("A100-80GB:8x8,H100-SXM:4x8", DeviceCatalog::builtin());
    QCOMPARE(c.nodes.size(), std::size_t(12));
    QCOMPARE(c.totalDevices(), 96);
    QCOMPARE(q(c.nodes[0].host), QStringLiteral("node0"));
    QCOMPARE(q(c.nodes[11].host), QStringLiteral("node11"));
    QCOMPARE(q(c.nodes[8].device_type), QStringLiteral("H100-SXM"));
    QCOMPARE(c.switches.size(), std::size_t(3));   // two leaves and a spine
    QCOMPARE(c.links.size(), std::size_t(14));     // 12 uplinks + 2 leaf-spine
    // Uplinks: devices x catalog inter-node GB/s: A100 8 x 25 = 200, H100 8 x 50 = 400.
    QCOMPARE(c.links[0].bandwidth_gbytes_per_s, 200.0);
    QCOMPARE(c.links[9].bandwidth_gbytes_per_s, 400.0);
    // Leaf to spine carries all of a leaf's nodes: 8 x 200 = 1600 for the A100 leaf.
    QCOMPARE(c.links[8].bandwidth_gbytes_per_s, 1600.0);
    validateCluster(c, DeviceCatalog::builtin(), "shorthand");
    const ClusterTopology topo(c, DeviceCatalog::builtin());
    QVERIFY(topo.problems().empty());
    QCOMPARE(topo.widestPath(0, 1), 200.0);    // two A100 nodes under one leaf
    QCOMPARE(topo.widestPath(8, 9), 400.0);    // two H100 nodes
    QCOMPARE(topo.widestPath(0, 8), 200.0);    // across the spine, the A100 uplink limits
    QVERIFY(topo.classify({0, 8}) == LinkClass::CrossType);
    // Nodes-only form takes the catalog's devices per node (MI250X: 4 per node).
    QCOMPARE(clusterFromShorthand(" mi250x : 3 ", DeviceCatalog::builtin()).totalDevices(), 12);
    // No switch that joins nothing: one type has its leaf and no spine, one node no network.
    const Cluster oneType = clusterFromShorthand("H800:3x8", DeviceCatalog::builtin());
    QCOMPARE(oneType.switches.size(), std::size_t(1));
    QCOMPARE(oneType.links.size(), std::size_t(3));
    QCOMPARE(ClusterTopology(oneType, DeviceCatalog::builtin()).widestPath(0, 2), 400.0);
    QVERIFY(ClusterTopology(oneType, DeviceCatalog::builtin()).problems().empty());
    const Cluster oneNode = clusterFromShorthand("H800:1x8", DeviceCatalog::builtin());
    QVERIFY(oneNode.switches.empty() && oneNode.links.empty());
    validateCluster(oneNode, DeviceCatalog::builtin(), "shorthand");
    QVERIFY(ClusterTopology(oneNode, DeviceCatalog::builtin()).problems().empty());
}

namespace {
// Width over height of the rectangle through the centres of a cluster's items.
double drawingAspect(const Cluster& c)
{
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (const Node& n : c.nodes) {
        x0 = std::min(x0, n.x), x1 = std::max(x1, n.x);
        y0 = std::min(y0, n.y), y1 = std::max(y1, n.y);
    }
    for (const Switch& s : c.switches) {
        x0 = std::min(x0, s.x), x1 = std::max(x1, s.x);
        y0 = std::min(y0, s.y), y1 = std::max(y1, s.y);
    }
    return (x1 - x0) / (y1 - y0);
}
} // namespace

void tst_Presets::largeClustersAreDrawnAboutSquare()
{
    // Nodes go in rows under their leaf switch, with the columns per row (at most 8) that make
    // the drawing closest to 4:3. Four blocks of 34 nodes: 3 columns, 12 rows. The drawing
    // is 4 x 3 x 140 + 3 x 100 - 140 = 1840 wide between the outer node centres and 260 +
    // 11 x 120 = 1580 tall from the spine, 1.16:1; in rows of 8 it was 4580 x 740, 6.2:1, and
    // the canvas opened it at a tenth of its size.
    const Cluster c = clusterFromShorthand("H800:34x8,MI300X:34x8,910B-376T:34x8,A100-80GB:34x8", DeviceCatalog::builtin());
    QCOMPARE(c.nodes[1].x - c.nodes[0].x, 140.0);
    QCOMPARE(c.nodes[3].x, c.nodes[0].x);   // the fourth node starts the second row
    QCOMPARE(c.nodes[3].y - c.nodes[0].y, 120.0);
    QCOMPARE(c.nodes[33].y, 260.0 + 11 * 120.0);
    QVERIFY(std::abs(drawingAspect(c) - 1840.0 / 1580.0) < 1e-9);
    // Small clusters keep one row per leaf: 2 nodes per type side by side.
    const Cluster small = clusterFromShorthand("H800:2x8,910B-376T:2x8", DeviceCatalog::builtin());
    QCOMPARE(small.nodes[0].y, small.nodes[1].y);
    // The large presets are drawn the same way: none wider than 2:1.
    for (const char* name : {"a100-h100-256", "h800-910b-512", "mixed-1088"}) {
        const Cluster* preset = findClusterPreset(name);
        QVERIFY(preset);
        QVERIFY2(drawingAspect(*preset) < 2.0 && drawingAspect(*preset) > 0.75, name);
    }
}

void tst_Presets::shorthandErrors()
{
    for (const char* bad : {"", "H800", "H800:", "H800:0x8", "H800:2x-8", "H800:2x8,", "H900:2x8", "H800:twox8", ":2x8", "H800:2x8x2"}) {
        bool threw = false;
        try {
            clusterFromShorthand(bad, DeviceCatalog::builtin());
        } catch (const InputError& e) {
            threw = true;
            QVERIFY(q(e.where()).startsWith("cluster shorthand"));
        }
        QVERIFY2(threw, bad);
    }
    // A spine over 25,000 H800 of 50 GB/s NICs carries 1.25e6 GB/s, which a cluster file takes
    // (up to 1e9 GB/s a link): the cluster validates and reads back, so a plan written for it
    // does too.
    const Cluster big = clusterFromShorthand("H800:3125x8,910B:10x8", DeviceCatalog::builtin());
    double widest = 0;
    for (const Link& l : big.links)
        widest = std::max(widest, l.bandwidth_gbytes_per_s);
    QCOMPARE(widest, 3125 * 8 * 50.0);
    validateCluster(readCluster(writeCluster(big), "big.json"), DeviceCatalog::builtin(), "big.json");
    // A type whose NIC figure (within the catalog's bounds) would give a link beyond that is
    // refused here, naming the type's figure, not later as a link of a file the user never wrote.
    DeviceCatalog fast = DeviceCatalog::builtin();
    DeviceType nic = *fast.find("H800");
    nic.name = "FastNIC";
    nic.aliases.clear();
    nic.inter_node_gbps = 1e7;   // the most a catalog takes
    fast.merge(DeviceCatalog({nic}));
    // One type: no spine, node links of 8 x 1e7 = 8e7 GB/s, which a file takes.
    QCOMPARE(clusterFromShorthand("FastNIC:13x8", fast).totalDevices(), 104);
    // Under a spine: the leaf's link is 104 x 1e7 = 1.04e9 GB/s.
    try {
        clusterFromShorthand("FastNIC:13x8,H800:1x8", fast);
        QFAIL("a link beyond 1e9 GB/s was built");
    } catch (const InputError& e) {
        QVERIFY2(q(e.where()).endsWith(", item 1"), e.what());
        QVERIFY2(q(e.detail()).contains("device type \"FastNIC\"'s inter_node_gbps"), e.what());
        QVERIFY2(q(e.detail()).contains("GB/s x 104 devices gives its switch's link to the spine"), e.what());
        QVERIFY2(q(e.detail()).contains("at most 1e+09 GB/s"), e.what());
    }
    // A node of 200 such devices: its own link is 2e9 GB/s.
    QVERIFY_THROWS_EXCEPTION(InputError, clusterFromShorthand("FastNIC:2x200", fast));
    QCOMPARE(clusterFromShorthand("FastNIC:1x200", fast).totalDevices(), 200);   // one node: no link
}

void tst_Presets::resolveOrder()
{
    QTemporaryDir dir;
    // A file named like a preset loses to the preset; a real path is read as a file.
    const std::string path = dir.filePath("my.json").toStdString();
    ModelSpec m = *findModelPreset("Mixtral-S");
    m.name = "from file";
    saveFileAtomically(path, writeModel(m));
    QCOMPARE(q(resolveModel(path).name), QStringLiteral("from file"));
    QCOMPARE(q(resolveModel("mixtral-s").name), QStringLiteral("Mixtral-S"));
    Cluster c = *findClusterPreset("16-1");
    c.name = "cluster file";
    const std::string cpath = dir.filePath("c.json").toStdString();
    saveFileAtomically(cpath, writeCluster(c));
    QCOMPARE(q(resolveCluster(cpath, DeviceCatalog::builtin()).name), QStringLiteral("cluster file"));
    QCOMPARE(resolveCluster("32-3", DeviceCatalog::builtin()).totalDevices(), 32);
    QCOMPARE(resolveCluster("H800:2x8,910B:2x8", DeviceCatalog::builtin()).totalDevices(), 32);
    // A model taken from a project file.
    Project p;
    p.model = m;
    p.cluster = c;
    const std::string ppath = dir.filePath("p.hapmoe").toStdString();
    saveFileAtomically(ppath, writeProject(p));
    QCOMPARE(q(resolveModel(ppath).name), QStringLiteral("from file"));
    QCOMPARE(q(resolveCluster(ppath, DeviceCatalog::builtin()).name), QStringLiteral("cluster file"));
}

void tst_Presets::resolveUnknownListsPresets()
{
    try {
        resolveModel("Mixtral-XL");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QVERIFY(q(e.detail()).contains("Mixtral-S"));
    }
    try {
        resolveCluster("64-1", DeviceCatalog::builtin());
        QFAIL("no exception");
    } catch (const InputError& e) {
        QVERIFY(q(e.detail()).contains("32-3"));
    }
}

QTEST_GUILESS_MAIN(tst_Presets)
#include "tst_Presets.moc"
