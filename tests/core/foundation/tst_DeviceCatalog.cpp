// The built-in device catalog (resources/devices.json): every required type is present,
// figures match ../shared/reference/device-specs.md, look-ups accept aliases, and user
// catalogs override or extend it.

#include "hardware/DeviceCatalog.h"

#include <QtTest>

using namespace hapmoe;

class tst_DeviceCatalog : public QObject {
    Q_OBJECT
private slots:
    void requiredTypes_data();
    void requiredTypes();
    void figuresFromDeviceSpecs();
    void everyFigureHasASource();
    void aliasesAndNormalization();
    void unknownTypeListsKnown();
    void userCatalogOverridesAndExtends();
    void badCatalogNamesThePath();
};

void tst_DeviceCatalog::requiredTypes_data()
{
    QTest::addColumn<QString>("name");
    for (const char* n : {"A100-80GB", "H100-SXM", "H800", "H200", "H20", "B200", "L40S", "MI250X", "MI300X", "MI325X",
                          "910B-376T", "910B-313T", "910B-280T", "910C", "Gaudi2", "Gaudi3"})
        QTest::newRow(n) << QString::fromLatin1(n);
}

void tst_DeviceCatalog::requiredTypes()
{
    QFETCH(QString, name);
    const DeviceType* t = DeviceCatalog::builtin().find(name.toStdString());
    QVERIFY2(t, qPrintable(name));
    QCOMPARE(QString::fromStdString(t->name), name);
    QVERIFY(t->bf16_tflops > 0);
    QVERIFY(t->memory_gib > 0);
    QVERIFY(t->intra_node_gbps > 0);
    QVERIFY(t->inter_node_gbps > 0);
    QVERIFY(t->default_efficiency > 0 && t->default_efficiency <= 1);
    QVERIFY(!t->collective_library.empty());
}

void tst_DeviceCatalog::figuresFromDeviceSpecs()
{
    const auto& c = DeviceCatalog::builtin();
    // device-specs.md section 4 (dense BF16, memory, HBM, intra uni, inter per GPU).
    QCOMPARE(c.get("H800").bf16_tflops, 989.0);
    QCOMPARE(c.get("H800").intra_node_gbps, 200.0);   // 400 GB/s bidirectional NVLink
    QCOMPARE(c.get("H800").inter_node_gbps, 50.0);    // CX7 400 Gb/s
    QCOMPARE(c.get("A100-80GB").bf16_tflops, 312.0);  // not the sparse 624
    QCOMPARE(c.get("A100-80GB").hbm_gbps, 2039.0);
    QCOMPARE(c.get("MI300X").bf16_tflops, 1307.4);
    QCOMPARE(c.get("MI300X").memory_gib, 192.0);
    QCOMPARE(c.get("MI300X").intra_node_gbps, 448.0);  // 64 GB/s per peer x 7
    QCOMPARE(c.get("910B-376T").bf16_tflops, 353.9);
    QCOMPARE(c.get("910B-313T").bf16_tflops, 294.9);
    QCOMPARE(c.get("910B-280T").bf16_tflops, 245.8);
    QCOMPARE(c.get("910B-376T").memory_gib, 64.0);
    QCOMPARE(c.get("910B-376T").intra_node_gbps, 196.0);
    QCOMPARE(c.get("910C").bf16_tflops, 707.8);        // 2 dies x 353.9
    QCOMPARE(c.get("Gaudi2").intra_node_gbps, 262.5);  // 21 x 100 GbE
    QCOMPARE(c.get("Gaudi3").inter_node_gbps, 75.0);   // 3 x 200 GbE
    QCOMPARE(c.get("B200").memory_gib, 180.0);         // DGX B200 datasheet
    QCOMPARE(c.get("L40S").bf16_tflops, 362.05);
    // Default efficiency = the ml-engineering MAMF fraction where published:
    // A100 271.2/312 = 86.9%, H100 794.5/989 = 80.3%, MI300X 668.4/1300 = 51.4%,
    // MI325X 784.9/1300 = 60.4%, B200 1745/2250 = 77.6%, Gaudi2 418.7/432 = 96.9%,
    // Gaudi3 1243/1835 = 67.7%.
    QCOMPARE(c.get("A100-80GB").default_efficiency, 0.869);
    QCOMPARE(c.get("H100-SXM").default_efficiency, 0.803);
    QCOMPARE(c.get("MI300X").default_efficiency, 0.514);
    QCOMPARE(c.get("MI325X").default_efficiency, 0.604);
    QCOMPARE(c.get("B200").default_efficiency, 0.776);
    QCOMPARE(c.get("Gaudi2").default_efficiency, 0.969);
    QVERIFY(qAbs(c.get("Gaudi3").default_efficiency * c.get("Gaudi3").bf16_tflops - 1243.0) < 1.0);
    QCOMPARE(QString::fromStdString(c.get("MI300X").collective_library), QStringLiteral("RCCL"));
    QCOMPARE(QString::fromStdString(c.get("910B").collective_library), QStringLiteral("HCCL"));
    QCOMPARE(c.get("H100-SXM").compute_capability, 9.0);
    QCOMPARE(c.get("A100-80GB").compute_capability, 8.0);
    // Dense FP8 peaks (resources/devices.json sources): H100 1,979 as NVIDIA's DGXC recipes
    // state it; twice BF16 on MI300X; Gaudi3's FP8 equals its BF16; none on A100 or 910B.
    QCOMPARE(c.get("H100-SXM").fp8_tflops, 1979.0);
    QCOMPARE(c.get("H800").fp8_tflops, 1979.0);
    QCOMPARE(c.get("MI300X").fp8_tflops, 2614.9);
    QCOMPARE(c.get("Gaudi3").fp8_tflops, 1835.0);
    QVERIFY(!c.get("A100-80GB").hasFp8());
    QVERIFY(!c.get("910B-376T").hasFp8());
    QVERIFY(!c.get("910C").hasFp8());
}

void tst_DeviceCatalog::everyFigureHasASource()
{
    for (const auto& t : DeviceCatalog::builtin().types()) {
        for (const char* field : {"bf16_tflops", "fp8_tflops", "memory_gib", "hbm_gbps", "intra_node_gbps", "inter_node_gbps", "default_efficiency"}) {
            const auto it = t.sources.find(field);
            QVERIFY2(it != t.sources.end() && it->second.size() > 10, qPrintable(QString::fromStdString(t.name) + " " + field));
        }
    }
}

void tst_DeviceCatalog::aliasesAndNormalization()
{
    const auto& c = DeviceCatalog::builtin();
    struct Case {
        const char* query;
        const char* canonical;
    };
    const Case cases[] = {{"h800", "H800"},           {"NVIDIA H800 SXM", "H800"},       {"910B", "910B-376T"},
                          {"910b", "910B-376T"},      {"Ascend910B", "910B-376T"},       {"ascend_910b", "910B-376T"},
                          {"Ascend 910B", "910B-376T"}, {"910b 313t", "910B-313T"},      {"mi300x", "MI300X"},
                          {"AMD Instinct MI300X", "MI300X"}, {"Gaudi 3", "Gaudi3"},      {"a100", "A100-80GB"},
                          {"A100_80GB", "A100-80GB"}, {"h100", "H100-SXM"},              {"h100sxm", "H100-SXM"}};
    for (const auto& cs : cases) {
        const DeviceType* t = c.find(cs.query);
        QVERIFY2(t, cs.query);
        QCOMPARE(QString::fromStdString(t->name), QString::fromLatin1(cs.canonical));
    }
    QVERIFY(!c.find("H900"));
    QVERIFY(!c.find(""));
    QVERIFY(!c.find("---"));
}

void tst_DeviceCatalog::unknownTypeListsKnown()
{
    try {
        DeviceCatalog::builtin().get("H900", "cluster.nodes[2].device_type");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("cluster.nodes[2].device_type"));
        QVERIFY(QString::fromStdString(e.detail()).contains("unknown device type \"H900\""));
        QVERIFY(QString::fromStdString(e.detail()).contains("MI300X"));
    }
}

void tst_DeviceCatalog::userCatalogOverridesAndExtends()
{
    const char* user = R"({"format": "hapmoe.devices", "version": 1, "devices": [
      {"name": "H800", "aliases": ["our-h800"], "vendor": "NVIDIA", "bf16_tflops": 989, "memory_gib": 80, "hbm_gbps": 3350,
       "intra_node_gbps": 160, "inter_node_gbps": 50, "collective_library": "NCCL", "default_efficiency": 0.65,
       "sources": {"intra_node_gbps": "measured"}},
      {"name": "MyChip", "vendor": "Acme", "bf16_tflops": 500, "memory_gib": 96, "hbm_gbps": 3000, "intra_node_gbps": 300,
       "inter_node_gbps": 50, "collective_library": "NCCL", "default_devices_per_node": 4, "colour": "red"}]})";
    Warnings warnings;
    const DeviceCatalog extra = DeviceCatalog::fromJson(user, "user.json", &warnings);
    QCOMPARE(warnings.size(), std::size_t(1));   // "colour" is unknown
    QVERIFY(QString::fromStdString(warnings[0]).contains("devices[1].colour"));
    DeviceCatalog merged = DeviceCatalog::builtin();
    const auto before = merged.types().size();
    merged.merge(extra);
    QCOMPARE(merged.types().size(), before + 1);
    QCOMPARE(merged.get("h800").intra_node_gbps, 160.0);
    QCOMPARE(merged.get("our-h800").default_efficiency, 0.65);
    QCOMPARE(merged.get("mychip").default_devices_per_node, 4);
    QCOMPARE(merged.get("MI300X").bf16_tflops, 1307.4);   // untouched

    // A new type whose alias names a built-in one would shadow it: refused, with the path.
    const DeviceCatalog shadow = DeviceCatalog::fromJson(R"({"format": "hapmoe.devices", "version": 1, "devices": [
      {"name": "MyDev", "aliases": ["h800"], "vendor": "Acme", "bf16_tflops": 500, "memory_gib": 96, "hbm_gbps": 3000,
       "intra_node_gbps": 300, "inter_node_gbps": 50, "collective_library": "NCCL"}]})", "shadow.json");
    DeviceCatalog again = DeviceCatalog::builtin();
    try {
        again.merge(shadow, "shadow.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("shadow.json"));
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("devices[0].aliases"));
        QVERIFY(QString::fromStdString(e.detail()).contains(QStringLiteral("already names H800")));
    }
    QCOMPARE(again.get("h800").bf16_tflops, 989.0);

    // A type replaces another by its name only, in any case, and the catalog's spelling stays;
    // a name that is another type's alias would replace it under that alias: refused.
    DeviceType lower = DeviceCatalog::builtin().get("H800");
    lower.name = "h800";
    lower.intra_node_gbps = 160;
    DeviceCatalog cased = DeviceCatalog::builtin();
    cased.merge(DeviceCatalog({lower}), "cased.json");
    QCOMPARE(cased.get("H800").name, std::string("H800"));
    QCOMPARE(cased.get("H800").intra_node_gbps, 160.0);
    // An entry without hbm_efficiency (a file written before the field) keeps the catalog's
    // STREAM fraction, H100's 2.90 of 3.35 TB/s (device-specs.md section 4); one that gives it wins.
    lower.hbm_efficiency = 0;
    DeviceCatalog older = DeviceCatalog::builtin();
    older.merge(DeviceCatalog({lower}), "older.json");
    QCOMPARE(older.get("H800").hbm_efficiency, 2.90 / 3.35);
    lower.hbm_efficiency = 0.75;
    older.merge(DeviceCatalog({lower}), "newer.json");
    QCOMPARE(older.get("H800").hbm_efficiency, 0.75);
    DeviceType aliased = lower;
    aliased.name = "NVIDIA H800";
    aliased.aliases.clear();
    DeviceCatalog byAlias = DeviceCatalog::builtin();
    try {
        byAlias.merge(DeviceCatalog({aliased}), "alias.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("alias.json"));
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("devices[0].name"));
        QVERIFY2(QString::fromStdString(e.detail()).contains(QStringLiteral("\"NVIDIA H800\" is an alias of H800")), e.what());
    }
    QCOMPARE(byAlias.get("NVIDIA H800").name, std::string("H800"));
}

void tst_DeviceCatalog::badCatalogNamesThePath()
{
    const char* bad = R"({"format": "hapmoe.devices", "version": 1, "devices": [
      {"name": "X", "vendor": "Acme", "bf16_tflops": -5, "memory_gib": 96, "hbm_gbps": 3000, "intra_node_gbps": 300,
       "inter_node_gbps": 50, "collective_library": "NCCL"}]})";
    try {
        DeviceCatalog::fromJson(bad, "bad.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("bad.json"));
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("devices[0].bf16_tflops"));
        QCOMPARE(QString::fromStdString(e.detail()), QStringLiteral("expected a number >= 1e-06 and <= 1e+09, got -5"));
    }
    // 1e308 GiB of memory would make every capacity infinite: the figure is bounded.
    const char* huge = R"({"format": "hapmoe.devices", "version": 1, "devices": [
      {"name": "X", "vendor": "Acme", "bf16_tflops": 500, "memory_gib": 1e308, "hbm_gbps": 3000, "intra_node_gbps": 300,
       "inter_node_gbps": 50, "collective_library": "NCCL"}]})";
    try {
        DeviceCatalog::fromJson(huge, "huge.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("devices[0].memory_gib"));
        QCOMPARE(QString::fromStdString(e.detail()), QStringLiteral("expected a positive number up to 1e+06, got 1e+308"));
    }
    // Names go into cluster shorthands ("H800:2x8,910B:1x8"), text into tables and comments:
    // ':' or ',' in a name, a line break in a vendor, and more devices per node than a node
    // may have are refused where they are.
    auto refusal = [](const std::string& field) -> std::pair<QString, QString> {
        const std::string text = R"({"format": "hapmoe.devices", "version": 1, "devices": [{)" + field
            + R"(, "bf16_tflops": 500, "memory_gib": 96, "hbm_gbps": 3000, "intra_node_gbps": 300,
               "inter_node_gbps": 50, "collective_library": "NCCL"}]})";
        try {
            DeviceCatalog::fromJson(text, "c.json");
        } catch (const InputError& e) {
            return {QString::fromStdString(e.where()), QString::fromStdString(e.detail())};
        }
        return {};
    };
    QCOMPARE(refusal(R"("name": "X1:2x8", "vendor": "Acme")").first, QStringLiteral("devices[0].name"));
    QVERIFY(refusal(R"("name": "a,b", "vendor": "Acme")").second.startsWith("expected a name without ':' or ','"));
    QCOMPARE(refusal(R"("name": "X", "aliases": ["ok", "b:c"], "vendor": "Acme")").first, QStringLiteral("devices[0].aliases[1]"));
    QCOMPARE(refusal(R"("name": "X", "vendor": "Acme\nrm -rf")"),
             std::make_pair(QStringLiteral("devices[0].vendor"),
                            QStringLiteral("expected one line of printable text, got the control character 0x0a at character 5")));
    QCOMPARE(refusal(R"("name": "X", "vendor": "Acme", "default_devices_per_node": 100000)").first,
             QStringLiteral("devices[0].default_devices_per_node"));
    QCOMPARE(refusal(R"("name": "X", "vendor": "Acme", "default_devices_per_node": 4096)").first, QString());
    try {
        DeviceCatalog::fromJson(R"({"format": "hapmoe.devices", "version": 2, "devices": []})", "new.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("version"));
    }
}

QTEST_GUILESS_MAIN(tst_DeviceCatalog)
#include "tst_DeviceCatalog.moc"
