// The hapmoe command line: presets lists what the product promises, validate accepts the
// shipped files, and every file of the bad-input corpus (tests/bad-input/expected.tsv)
// gives exit code 2 and a message naming the field.

#include <cmath>

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <functional>

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run hapmoe(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(HAPMOE_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The "prediction" object of the plan document a --json run printed.
QJsonObject prediction(const Run& r)
{
    return QJsonDocument::fromJson(r.out.toUtf8()).object()["prediction"].toObject();
}

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A hapmoe.cluster of three 8-device H800 nodes (ids 0-2) with the given switches and links.
QByteArray threeH800Nodes(const char* switchesAndLinks)
{
    return QByteArray(R"({"format": "hapmoe.cluster", "version": 2, "nodes": [
        {"id": 0, "host": "a", "device_type": "H800", "count": 8}, {"id": 1, "host": "b", "device_type": "H800", "count": 8},
        {"id": 2, "host": "c", "device_type": "H800", "count": 8}], )")
        + switchesAndLinks + "}";
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The plan of "estimate --model Mixtral-S --cluster H800:2x8 --pp 2 --json" (two stages of
// TP1 DP8 on one node each), without its prediction.
QJsonObject twoStagePlan()
{
    QProcess p;
    p.start(QStringLiteral(HAPMOE_CLI_PATH), {"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--json"});
    p.waitForFinished(60000);
    QJsonObject doc = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    doc.remove("prediction");
    return doc;
}

} // namespace

class tst_CliFoundation : public QObject {
    Q_OBJECT
private slots:
    void helpAndVersion();
    void estimateSaysWhatUnevenChunksCost();
    void estimateTableGivesModelSizeAndMicroBatch();
    void estimateSaysAProfileCostedPlanIsCostedWithout();
    void optionsWithNothingToActOnAreNamed();
    void presetsListsPaperClusters();
    void presetsListsRequiredModels();
    void presetsListsDevices();
    void presetsRejectsUnknownKind();
    void presetsJsonReadsBack();
    void validateJsonNamesEveryFile();
    void validateShippedFiles();
    void validateSummary();
    void validateWarnsButPasses();
    void badInputCorpus_data();
    void badInputCorpus();
    void validateMissingFile();
    void validateMixedKeepsGoing();
    void validateDevicesAgainstTheCatalog();
    void planDocumentsCarryTheirDeviceTypes();
    void missingFileArgumentShowsTheUsage();
    void repeatedOptionIsRefused();
    void optionsAndFileNamesAreToldApart();
    void numbersSayWhatIsExpected();
    void timeLimitBeyondMeaningIsNoLimit();
    void estimateNamesTheResponsibleFlag();
    void sequenceParallelWithoutTensorParallelIsOff();
    void estimateTargetsWhatCanRunIt();
    void scriptTargetsWhatCanRunIt();
    void planJsonWithoutFeasiblePlan();
    void notJsonAndDuplicateKeyPositions();
    void planNumbersBeyondAnInt();
    void clusterNodeOfTooManyDevices();
    void absurdTimesInExponentForm();
    void outputNeverReplacesAnInput();
    void outputMustBeAFileInAWritableFolder();
    void standardOutputThatCannotBeWritten();
    void importDeviceWithCluster();
    void exportedLauncherImportsBack();
    void baselineOfAnotherTargetSaysSo();
    void noPlanSaysWhatTheHostLacks();
    void megatronScriptKeepsMegatronOnANearTie();
    void flagscaleToStdoutNamesNoHostfile();
    void idleDevicesOfANodeReadBack();
    void calibrateRefusesAProfileItCannotRead();
    void traceOnlyOfSchedulesThatCanBeWritten();
    void importChecksTheWorldTheScriptStarts();
    void calibrateRefusesRouterCountsOfNoLayer();
    void projectProfileCostsItsSavedPlans();
    void closedPipeEndsNoCommandEarly();
    void interruptedSearchKeepsWhatItFound();
    void aliasedTypesReadAsTheCatalogSpellsThem();
};

void tst_CliFoundation::helpAndVersion()
{
    const Run help = hapmoe({"--help"});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains("presets"));
    const Run version = hapmoe({"--version"});
    QCOMPARE(version.exitCode, 0);
    QVERIFY(version.out.startsWith("hapmoe "));
    QCOMPARE(hapmoe({"frobnicate"}).exitCode, 2);
    // Words these do not take are refused, not ignored.
    for (const QStringList& args : {QStringList{"--version", "extra"}, QStringList{"help", "plan", "extra"}, QStringList{"--help", "x"}}) {
        const Run r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("unexpected argument \"" + args.last() + "\""), qPrintable(r.err));
    }
    QCOMPARE(hapmoe({"help", "plan"}).exitCode, 0);
    QCOMPARE(hapmoe({}).exitCode, 2);
    QCOMPARE(hapmoe({"validate"}).exitCode, 2);
    QCOMPARE(hapmoe({"validate", "--bogus", "x"}).exitCode, 2);
    QCOMPARE(hapmoe({"presets", "--help"}).exitCode, 0);
    QCOMPARE(hapmoe({"validate", "--help"}).exitCode, 0);
}

void tst_CliFoundation::presetsListsPaperClusters()
{
    const Run r = hapmoe({"presets", "clusters"});
    QCOMPARE(r.exitCode, 0);
    // HAPMoE paper Table 1, with the device count each symbol starts with.
    for (const char* name : {"16-1-h", "16-2-h", "16-3-h", "16-1", "16-2", "16-3", "24-1", "24-2", "24-3", "32-1", "32-2", "32-3"}) {
        const QRegularExpression line(QStringLiteral("^%1\\s+%2\\s").arg(QRegularExpression::escape(name), QString::fromLatin1(name).section('-', 0, 0)),
                                      QRegularExpression::MultilineOption);
        QVERIFY2(line.match(r.out).hasMatch(), name);
    }
    QVERIFY(QRegularExpression("^mixed-1088\\s+1088\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
}

void tst_CliFoundation::presetsListsRequiredModels()
{
    const Run r = hapmoe({"presets", "models"});
    QCOMPARE(r.exitCode, 0);
    for (const char* name : {"Mixtral-S", "Mixtral-L", "LLaMA-2-7B", "LLaMA-2-13B", "Mixtral-8x7B", "Mixtral-8x22B",
                             "Qwen3-235B-A22B", "Qwen3-30B-A3B", "GPT-22B", "GPT-175B", "GPT-530B", "GPT-1T",
                             "Megatron-GPT-1.7B", "Megatron-GPT-462B"}) {
        const QRegularExpression line(QStringLiteral("^%1\\s").arg(QRegularExpression::escape(name)), QRegularExpression::MultilineOption);
        QVERIFY2(line.match(r.out).hasMatch(), name);
    }
    // Mixtral-S row: 24 layers, hidden 4096 (paper appendix A).
    QVERIFY(QRegularExpression("^Mixtral-S\\s+24\\s+4096\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
    const Run all = hapmoe({"presets"});
    QCOMPARE(all.exitCode, 0);
    QVERIFY(all.out.contains("Mixtral-L") && all.out.contains("32-3") && all.out.contains("MI300X"));
}

void tst_CliFoundation::presetsListsDevices()
{
    const Run r = hapmoe({"presets", "devices"});
    QCOMPARE(r.exitCode, 0);
    // BF16, then FP8 (none on the 910B), then memory.
    QVERIFY(QRegularExpression("^H800\\s+NVIDIA\\s+989\\.0\\s+1979\\.0\\s+80\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
    QVERIFY(QRegularExpression("^910B-376T\\s+Huawei\\s+353\\.9\\s+-\\s+64\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
    const Run s = hapmoe({"presets", "devices", "--sources"});
    QVERIFY(s.out.contains("msmodeling"));
}

void tst_CliFoundation::presetsJsonReadsBack()
{
    // --json prints the presets as the documents the other commands read: the devices as a
    // hapmoe.devices catalog (given back as --devices it changes nothing), every model and
    // cluster as a file that validate accepts and estimate takes. Figures as in the tables:
    // H800 989 TFLOP/s, 80 GiB (device-specs.md).
    const Run r = hapmoe({"presets", "--json"});
    QCOMPARE(r.exitCode, 0);
    QJsonParseError error{};
    const QJsonObject all = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(all.keys(), (QStringList{"clusters", "devices", "models"}));
    const QJsonObject devices = all["devices"].toObject();
    QCOMPARE(devices["format"].toString(), QStringLiteral("hapmoe.devices"));
    bool h800 = false;
    for (const QJsonValue d : devices["devices"].toArray()) {
        if (d["name"].toString() == QStringLiteral("H800")) {
            h800 = true;
            QCOMPARE(d["bf16_tflops"].toDouble(), 989.0);
            QCOMPARE(d["memory_gib"].toDouble(), 80.0);
            QVERIFY(!d["sources"].toObject().isEmpty());
        }
    }
    QVERIFY(h800);
    QTemporaryDir dir;
    const QString devicesFile = dir.filePath("devices.json");
    QFile f(devicesFile);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(devices).toJson());
    f.close();
    const Run plain = hapmoe({"presets", "devices"});
    const Run again = hapmoe({"presets", "devices", "--devices", devicesFile});
    QCOMPARE(again.exitCode, 0);
    QCOMPARE(again.out, plain.out);
    QCOMPARE(all["models"].toArray().size(), static_cast<qsizetype>(hapmoe({"presets", "models"}).out.count("\n") - 4));
    const QJsonObject model = all["models"].toArray().first().toObject();
    const QJsonObject cluster = all["clusters"].toArray().first().toObject();
    QCOMPARE(model["format"].toString(), QStringLiteral("hapmoe.model"));
    QCOMPARE(cluster["format"].toString(), QStringLiteral("hapmoe.cluster"));
    for (const auto& [name, doc] : {std::pair{QStringLiteral("model.json"), model}, std::pair{QStringLiteral("cluster.json"), cluster}}) {
        QFile out(dir.filePath(name));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(doc).toJson());
    }
    QCOMPARE(hapmoe({"validate", dir.filePath("model.json"), dir.filePath("cluster.json")}).exitCode, 0);
    // Only the kind asked for.
    const QJsonObject onlyModels = QJsonDocument::fromJson(hapmoe({"presets", "models", "--json"}).out.toUtf8()).object();
    QCOMPARE(onlyModels.keys(), QStringList{"models"});
}

void tst_CliFoundation::validateJsonNamesEveryFile()
{
    // --json: one entry per file, in order, valid or not; the error as the text form gives it
    // (file, JSON path, what was expected); exit 2 when any file is invalid, as without it.
    const QString root = QStringLiteral(HAPMOE_SOURCE_DIR);
    const QString good = root + "/resources/devices.json";
    const QString bad = root + "/tests/bad-input/cluster-huge-bandwidth.json";
    const Run r = hapmoe({"validate", "--json", good, bad});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonArray files = QJsonDocument::fromJson(r.out.toUtf8()).object()["files"].toArray();
    QCOMPARE(files.size(), 2);
    QCOMPARE(files[0]["file"].toString(), good);
    QVERIFY(files[0]["valid"].toBool());
    QCOMPARE(files[0]["format"].toString(), QStringLiteral("hapmoe.devices"));
    QVERIFY(files[0]["summary"].toString().startsWith(QStringLiteral("hapmoe.devices v1, ")));
    QVERIFY(!files[1]["valid"].toBool());
    QCOMPARE(files[1]["format"].toString(), QStringLiteral("hapmoe.cluster"));
    const QJsonObject error = files[1]["error"].toObject();
    QCOMPARE(error["file"].toString(), bad);
    QCOMPARE(error["where"].toString(), QStringLiteral("cluster.links[0].bandwidth_gbytes_per_s"));
    QCOMPARE(error["detail"].toString(), QStringLiteral("expected at most 1e+09 GB/s, got 1e+308"));
    const Run text = hapmoe({"validate", bad});
    QVERIFY2(text.err.contains(error["message"].toString()), qPrintable(text.err));
    QCOMPARE(hapmoe({"validate", "--json", good}).exitCode, 0);
}

void tst_CliFoundation::presetsRejectsUnknownKind()
{
    const Run r = hapmoe({"presets", "gpus"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("gpus"));
}

void tst_CliFoundation::validateShippedFiles()
{
    const QString root = QStringLiteral(HAPMOE_SOURCE_DIR) + "/resources";
    QStringList files{root + "/devices.json", root + "/examples/example.hapmoe"};
    for (const QString& sub : {QStringLiteral("models"), QStringLiteral("clusters")})
        for (const QString& f : QDir(root + "/" + sub).entryList({"*.json"}, QDir::Files))
            files << root + "/" + sub + "/" + f;
    for (const QString& f : QDir(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/foundation").entryList({"*.json"}, QDir::Files))
        files << QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/foundation/" + f;
    QVERIFY(files.size() > 30);
    const Run r = hapmoe(QStringList{"validate"} + files);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.out.count(": ok ("), files.size());
}

void tst_CliFoundation::validateSummary()
{
    const QString file = QStringLiteral(HAPMOE_SOURCE_DIR) + "/resources/clusters/32-3.json";
    const Run r = hapmoe({"validate", file});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out.trimmed(), file + ": ok (hapmoe.cluster v2, 32 devices)");

    // A leaf switch with 800 GB/s of node links and 400 GB/s up (docs/cost-model.md section 6).
    QTemporaryDir tmp;
    const QString path = tmp.filePath("leaves.json");
    QVERIFY(writeFile(path, threeH800Nodes(R"("switches": [{"id": 10, "name": "leaf-a"}, {"id": 11, "name": "leaf-b"}, {"id": 12, "name": "spine"}],
        "links": [{"a": 0, "b": 10, "bandwidth_gbytes_per_s": 400}, {"a": 1, "b": 10, "bandwidth_gbytes_per_s": 400},
                  {"a": 2, "b": 11, "bandwidth_gbytes_per_s": 400}, {"a": 10, "b": 12, "bandwidth_gbytes_per_s": 400},
                  {"a": 11, "b": 12, "bandwidth_gbytes_per_s": 400}])")));
    const Run leaves = hapmoe({"validate", path});
    QCOMPARE(leaves.exitCode, 0);
    QCOMPARE(leaves.out.trimmed(), path + ": ok (hapmoe.cluster v2, 24 devices; oversubscribed: switch \"leaf-a\" 2:1)");
}

void tst_CliFoundation::validateWarnsButPasses()
{
    const QString dir = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/foundation/";
    const Run r = hapmoe({"validate", dir + "model-unknown-keys.json", dir + "cluster-v1.json"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.contains("model.rope_theta: unknown key ignored"));
    QVERIFY(r.err.contains("migrated from hapmoe.cluster version 1 to 2"));
    // A broken alternative in the search section is reported; the plan itself is valid.
    const Run alt = hapmoe({"validate", dir + "plan-bad-alternative.json"});
    QCOMPARE(alt.exitCode, 0);
    QVERIFY2(alt.err.contains("search.alternatives[1].plan.stages[1]: tp*cp*dp = 16 but the stage has 8 devices"), qPrintable(alt.err));
    // An island is a warning, not an error: the file is still a valid cluster.
    QTemporaryDir tmp;
    const QString path = tmp.filePath("island.json");
    QVERIFY(writeFile(path, threeH800Nodes(R"("switches": [{"id": 3}],
        "links": [{"a": 0, "b": 3, "bandwidth_gbytes_per_s": 400}, {"a": 1, "b": 3, "bandwidth_gbytes_per_s": 400}])")));
    const Run island = hapmoe({"validate", path});
    QCOMPARE(island.exitCode, 0);
    QVERIFY(island.err.contains("has no link"));
    // But no plan runs across it: the search refuses the cluster, and an estimate refuses a
    // plan on nodes that do not reach each other (node c has no link).
    const Run plan = hapmoe({"plan", "--model", "LLaMA-2-7B", "--cluster", path});
    QCOMPARE(plan.exitCode, 2);
    QVERIFY2(plan.err.contains(path + ": links: node \"c\" (id 2) has no link"), qPrintable(plan.err));
    const Run across = hapmoe({"estimate", "--model", "LLaMA-2-7B", "--cluster", path, "--tp", "8", "--gbs", "24"});
    QCOMPARE(across.exitCode, 2);
    QVERIFY2(across.err.contains("the plan uses nodes with no path between them (c cannot reach a)"), qPrintable(across.err));
}

void tst_CliFoundation::badInputCorpus_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    QFile table(QStringLiteral(HAPMOE_BAD_INPUT_DIR) + "/expected.tsv");
    QVERIFY(table.open(QIODevice::ReadOnly | QIODevice::Text));
    int rows = 0;
    while (!table.atEnd()) {
        const QString line = QString::fromUtf8(table.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const QStringList cols = line.split('\t');
        QCOMPARE(cols.size(), 2);
        QTest::newRow(qPrintable(cols[0])) << cols[0] << cols[1];
        ++rows;
    }
    QVERIFY(rows >= 24);
}

void tst_CliFoundation::badInputCorpus()
{
    QFETCH(QString, file);
    QFETCH(QString, expected);
    const QString path = QStringLiteral(HAPMOE_BAD_INPUT_DIR) + "/" + file;
    QVERIFY(QFileInfo::exists(path));
    const Run r = hapmoe({"validate", path});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(expected), qPrintable("stderr: " + r.err + "\nexpected: " + expected));
    QVERIFY(r.err.contains(path));   // the message names the file
    QVERIFY(r.out.isEmpty());
}

void tst_CliFoundation::validateMissingFile()
{
    const Run r = hapmoe({"validate", "/nonexistent/model.json"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("/nonexistent/model.json: cannot open file"));
}

void tst_CliFoundation::validateDevicesAgainstTheCatalog()
{
    // docs/formats.md: a name or alias that already names another type is refused. validate
    // checks a hapmoe.devices file as --devices merges it, not only on its own.
    QTemporaryDir tmp;
    const QString path = tmp.filePath("dev.json");
    QVERIFY(writeFile(path, R"({"format": "hapmoe.devices", "version": 1, "devices": [{"name": "MyGPU", "aliases": ["h800"],
        "vendor": "NVIDIA", "bf16_tflops": 500, "memory_gib": 96, "hbm_gbps": 3000, "intra_node_gbps": 300,
        "inter_node_gbps": 50, "collective_library": "NCCL"}]})"));
    const Run r = hapmoe({"validate", path});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(path + ": devices[0].aliases: \"h800\" already names H800"), qPrintable(r.err));
}

void tst_CliFoundation::planDocumentsCarryTheirDeviceTypes()
{
    // A plan costed with a --devices file's figures (an H800 at 600 TFLOP/s and 96 GiB, and a
    // type of one's own) carries them ("devices", docs/formats.md): estimate --plan, export and
    // validate read it on the same devices with no --devices; a --devices file given again
    // wins for the types it names.
    QTemporaryDir tmp;
    const QString own = tmp.filePath("own.json");
    QVERIFY(writeFile(own, R"({"format": "hapmoe.devices", "version": 1, "devices": [
        {"name": "H800", "vendor": "NVIDIA", "bf16_tflops": 600, "memory_gib": 96, "hbm_gbps": 3350, "intra_node_gbps": 200,
         "inter_node_gbps": 50, "collective_library": "NCCL", "compute_capability": 9.0, "default_efficiency": 0.75},
        {"name": "X100", "vendor": "NVIDIA", "bf16_tflops": 600, "memory_gib": 96, "hbm_gbps": 3350, "intra_node_gbps": 200,
         "inter_node_gbps": 50, "collective_library": "NCCL", "compute_capability": 9.0, "default_efficiency": 0.75}]})"));
    const QString plan = tmp.filePath("plan.json");
    const Run made = hapmoe({"estimate", "--devices", own, "--model", "Mixtral-S", "--cluster", "H800:1x8,X100:1x8", "--pp", "2",
                             "--ep", "8", "--distributed-optimizer", "--json"});
    QCOMPARE(made.exitCode, 0);
    QVERIFY(writeFile(plan, made.out.toUtf8()));
    const QJsonObject doc = QJsonDocument::fromJson(made.out.toUtf8()).object();
    QCOMPARE(doc["devices"].toArray().size(), 2);
    const double stored = prediction(made)["iteration_time_s"].toDouble();
    const Run again = hapmoe({"estimate", "--plan", plan, "--json"});
    QCOMPARE(again.exitCode, 0);
    QCOMPARE(prediction(again)["iteration_time_s"].toDouble(), stored);
    QCOMPARE(prediction(again)["stages"].toArray()[0].toObject()["memory_gib"].toObject()["capacity"].toDouble(), 96.0);
    QCOMPARE(hapmoe({"validate", plan}).exitCode, 0);
    QCOMPARE(hapmoe({"export", plan, "--format", "megatron"}).exitCode, 0);
    // The plan as a cluster (--cluster PLAN.json) comes with its types too.
    const Run onItsCluster = hapmoe({"estimate", "--plan", plan, "--cluster", plan, "--json"});
    QCOMPARE(onItsCluster.exitCode, 0);
    QCOMPARE(prediction(onItsCluster)["iteration_time_s"].toDouble(), stored);
    QCOMPARE(hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", plan, "--pp", "2", "--ep", "8", "--distributed-optimizer"})
                 .exitCode,
             0);
    // The built-in H800 given back as --devices replaces the plan's: another time.
    const QString builtin = tmp.filePath("builtin.json");
    const QJsonObject catalog = QJsonDocument::fromJson(hapmoe({"presets", "devices", "--json"}).out.toUtf8()).object()["devices"].toObject();
    QVERIFY(writeFile(builtin, QJsonDocument(catalog).toJson()));
    const Run replaced = hapmoe({"estimate", "--plan", plan, "--devices", builtin, "--json"});
    QCOMPARE(replaced.exitCode, 0);
    QVERIFY(prediction(replaced)["iteration_time_s"].toDouble() != stored);
    // A project carries its own types the same way (Project::devices, which the studio's
    // Device Types editor keeps): validate, and estimate or plan on its cluster, read them
    // with no --devices, and the plans written from it carry them on.
    QJsonObject project{{"format", "hapmoe.project"}, {"version", 1}, {"name", "own types"}, {"model", doc["model"]},
                        {"cluster", doc["cluster"]}, {"devices", doc["devices"]}};
    const QString projectFile = tmp.filePath("project.hapmoe");
    QVERIFY(writeFile(projectFile, QJsonDocument(project).toJson()));
    QCOMPARE(hapmoe({"validate", projectFile}).exitCode, 0);
    const Run onProject = hapmoe({"estimate", "--model", projectFile, "--cluster", projectFile, "--pp", "2", "--ep", "8",
                                  "--distributed-optimizer", "--json"});
    QCOMPARE(onProject.exitCode, 0);
    QCOMPARE(prediction(onProject)["iteration_time_s"].toDouble(), stored);
    const Run planned = hapmoe({"plan", "--model", projectFile, "--cluster", projectFile, "--time-limit", "30", "--json"});
    QCOMPARE(planned.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(planned.out.toUtf8()).object()["devices"].toArray().size(), 2);
    // A project gives export its saved plans (--saved-plan); one with none says how to get a
    // plan; a launch script is no document at all: the error says which command reads it.
    const Run notAPlan = hapmoe({"export", projectFile, "--format", "megatron"});
    QCOMPARE(notAPlan.exitCode, 2);
    QVERIFY2(notAPlan.err.contains("plans: the project holds no saved plan") && notAPlan.err.contains("hapmoe plan --model FILE"),
             qPrintable(notAPlan.err));
    const QString script = tmp.filePath("train.sh");
    QVERIFY(writeFile(script, "#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2\n"));
    const Run notADocument = hapmoe({"validate", script});
    QCOMPARE(notADocument.exitCode, 2);
    QVERIFY2(notADocument.err.contains("`hapmoe import FILE` reads a Megatron-LM or FlagScale launch script"), qPrintable(notADocument.err));
    // Given as --model only, its types still name the shorthand's.
    const Run modelOnly = hapmoe({"estimate", "--model", projectFile, "--cluster", "X100:2x8", "--pp", "2", "--ep", "8", "--distributed-optimizer"});
    QVERIFY2(modelOnly.exitCode == 0, qPrintable(modelOnly.err));
    project.remove("devices");
    QVERIFY(writeFile(projectFile, QJsonDocument(project).toJson()));
    const Run withoutTypes = hapmoe({"validate", projectFile});
    QCOMPARE(withoutTypes.exitCode, 2);
    QVERIFY2(withoutTypes.err.contains("unknown device type \"X100\""), qPrintable(withoutTypes.err));
    // Without the file, a type of one's own is unknown, and the error says where types come from.
    const Run unknown = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "X100:1x8"});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains("unknown device type \"X100\"") && unknown.err.contains("given with --devices FILE"),
             qPrintable(unknown.err));
}

void tst_CliFoundation::exportedLauncherImportsBack()
{
    // An exported launcher names its hosts (NODE_HOSTS): imported with no cluster, or with
    // --device, the cluster the import makes takes those hosts, so the launcher reads back; a
    // cluster of other hosts is refused, saying which cluster is needed.
    QTemporaryDir tmp;
    const QString plan = tmp.filePath("plan.json"), launcher = tmp.filePath("run.sh");
    const Run made = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "16-1-h", "--pp", "2", "--ep", "8",
                             "--distributed-optimizer", "--json"});
    QCOMPARE(made.exitCode, 0);
    QVERIFY(writeFile(plan, made.out.toUtf8()));
    QCOMPARE(hapmoe({"export", plan, "--format", "megatron", "-o", launcher}).exitCode, 0);
    const Run plain = hapmoe({"import", launcher});
    QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
    const QString project = tmp.filePath("back.hapmoe");
    const Run device = hapmoe({"import", launcher, "--device", "H800", "-o", project});
    QVERIFY2(device.exitCode == 0, qPrintable(device.err));
    // An unknown --device is refused before the script is read: nothing on stdout.
    const Run unknownDevice = hapmoe({"import", launcher, "--device", "H900"});
    QCOMPARE(unknownDevice.exitCode, 2);
    QVERIFY2(unknownDevice.err.contains("--device: unknown device type \"H900\""), qPrintable(unknownDevice.err));
    QVERIFY2(unknownDevice.out.isEmpty(), qPrintable(unknownDevice.out));
    const QJsonObject back = QJsonDocument::fromJson(readFile(project)).object();
    const QJsonArray nodes = back["cluster"].toObject()["nodes"].toArray();
    const QJsonArray planned = QJsonDocument::fromJson(made.out.toUtf8()).object()["cluster"].toObject()["nodes"].toArray();
    QCOMPARE(nodes.size(), planned.size());
    for (int i = 0; i < nodes.size(); ++i)
        QCOMPARE(nodes[i].toObject()["host"].toString(), planned[i].toObject()["host"].toString());
    // Hosts the cluster could not have are the launcher's fault, said as such.
    const QString text = QString::fromUtf8(readFile(launcher));
    const QRegularExpression hostsLine(QStringLiteral("^NODE_HOSTS=\\(.*\\)$"), QRegularExpression::MultilineOption);
    QVERIFY(hostsLine.match(text).hasMatch());
    const struct {
        const char* hosts;
        const char* error;
    } bad[] = {{"NODE_HOSTS=(h800-0)", "NODE_HOSTS: names 1 hosts for the script's 2 nodes"},
               {"NODE_HOSTS=(h800-0 h800-0)", "NODE_HOSTS[1]: host \"h800-0\" is named twice"},
               {"NODE_HOSTS=('bad host' h800-1)", "NODE_HOSTS[0]: expected a host name, got \"bad host\""}};
    for (const auto& b : bad) {
        const QString edited = tmp.filePath("edited.sh");
        QVERIFY(writeFile(edited, QString(text).replace(hostsLine, QString::fromLatin1(b.hosts)).toUtf8()));
        const Run r = hapmoe({"import", edited, "--device", "H800"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QString::fromLatin1(b.error)), qPrintable(r.err));
    }
    // The project the import wrote holds the launcher's plan as its current configuration:
    // export and estimate take it from there (--saved-plan, from 1), and say so.
    const Run again = hapmoe({"export", project, "--format", "megatron"});
    QVERIFY2(again.exitCode == 0, qPrintable(again.err));
    QVERIFY2(again.err.contains("is a project: its saved plan 1 of 1 (") && again.err.contains("the current configuration) is used"),
             qPrintable(again.err));
    const Run estimated = hapmoe({"estimate", "--plan", project, "--json"});
    QVERIFY2(estimated.exitCode == 0, qPrintable(estimated.err));
    QVERIFY(prediction(estimated)["iteration_time_s"].toDouble() > 0);
    const Run beyond = hapmoe({"estimate", "--plan", project, "--saved-plan", "2"});
    QCOMPARE(beyond.exitCode, 2);
    QVERIFY2(beyond.err.contains("--saved-plan: expected 1 to 1 (the project's saved plans), got 2"), qPrintable(beyond.err));
    const Run onAPlan = hapmoe({"export", plan, "--saved-plan", "1", "--format", "megatron"});
    QCOMPARE(onAPlan.exitCode, 2);
    QVERIFY2(onAPlan.err.contains("is a plan document, which holds one plan"), qPrintable(onAPlan.err));
    const Run other = hapmoe({"import", launcher, "--cluster", "H800:2x8"});
    QCOMPARE(other.exitCode, 2);
    QVERIFY2(other.err.contains("is not a node of the cluster H800:2x8 (its hosts: node0, node1); give the cluster the script was "
                                "written for (--cluster)"),
             qPrintable(other.err));
}

void tst_CliFoundation::missingFileArgumentShowsTheUsage()
{
    // The error, then the command's help as written (line breaks, not escapes).
    for (const char* cmd : {"validate", "import", "export"}) {
        const Run r = hapmoe({cmd});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(!r.err.contains("\\x0a"), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("\n\nUsage: hapmoe %1").arg(cmd)), qPrintable(r.err));
    }
    for (const QStringList& args : {QStringList{"estimate", "foo"}, QStringList{"calibrate", "foo"}, QStringList{"plan", "foo"},
                                    QStringList{"presets", "devices", "models"}}) {
        const Run r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(!r.err.contains("\\x0a") && r.err.contains(QStringLiteral("\n\nUsage: hapmoe %1").arg(args.front())), qPrintable(r.err));
    }
    // Another usage error says where the options are listed.
    const Run unknown = hapmoe({"plan", "--bogus"});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains("unknown option --bogus") && unknown.err.contains("\"hapmoe plan --help\" lists the options"),
             qPrintable(unknown.err));
}

void tst_CliFoundation::validateMixedKeepsGoing()
{
    // One bad file among good ones: every file is reported, the exit code is 2.
    const QString good = QStringLiteral(HAPMOE_SOURCE_DIR) + "/resources/models/mixtral-l.json";
    const QString bad = QStringLiteral(HAPMOE_BAD_INPUT_DIR) + "/model-topk-gt-experts.json";
    const Run r = hapmoe({"validate", good, bad, good});
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(r.out.count(": ok ("), 2);
    QVERIFY(r.err.contains("model.moe_router_topk"));
}

void tst_CliFoundation::repeatedOptionIsRefused()
{
    // Every option takes one value; the second is not silently the one used.
    const Run r = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--tp", "2", "--tp", "4"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("option --tp is given twice (\"2\" and \"4\"); give it once"), qPrintable(r.err));
    const Run eq = hapmoe({"plan", "--model", "mixtral-s", "--cluster=16-1-h", "--cluster", "16-1"});
    QCOMPARE(eq.exitCode, 2);
    QVERIFY2(eq.err.contains("option --cluster is given twice"), qPrintable(eq.err));
    QTemporaryDir tmp;
    const Run o = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "-o", tmp.filePath("a.json"), "-o",
                          tmp.filePath("b.json")});
    QCOMPARE(o.exitCode, 2);
    QVERIFY2(o.err.contains("option -o is given twice"), qPrintable(o.err));
    QVERIFY(QDir(tmp.path()).isEmpty());
    // Switches too: "--json --json" is as likely a slip as "--tp 2 --tp 4".
    const Run sw = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "--json", "--json"});
    QCOMPARE(sw.exitCode, 2);
    QVERIFY2(sw.err.contains("option --json is given twice; give it once"), qPrintable(sw.err));
}

void tst_CliFoundation::optionsAndFileNamesAreToldApart()
{
    // "--tp --pp 2": --tp has no value; "--pp" is not taken as one.
    const Run v = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--tp", "--pp", "2"});
    QCOMPARE(v.exitCode, 2);
    QVERIFY2(v.err.contains("option --tp needs a value, got the option --pp"), qPrintable(v.err));
    // A single-dash word is an unknown option, not a file name; after "--" it is a file name.
    const QString example = QStringLiteral(HAPMOE_SOURCE_DIR) + "/resources/examples/example.hapmoe";
    const Run x = hapmoe({"validate", "-x", example});
    QCOMPARE(x.exitCode, 2);
    QVERIFY2(x.err.contains("unknown option -x (a file whose name starts with '-' goes after \"--\")"), qPrintable(x.err));
    const Run dd = hapmoe({"validate", "--", example});
    QCOMPARE(dd.exitCode, 0);
    const Run missing = hapmoe({"validate", "--", "-x"});
    QCOMPARE(missing.exitCode, 2);
    QVERIFY2(missing.err.contains("-x"), qPrintable(missing.err));
    // -h is --help in every command, and "help plan" is "plan --help".
    const Run h = hapmoe({"plan", "-h"});
    QCOMPARE(h.exitCode, 0);
    QVERIFY(h.out.startsWith("Usage: hapmoe plan "));
    const Run help = hapmoe({"help", "plan"});
    QCOMPARE(help.exitCode, 0);
    QCOMPARE(help.out, h.out);
}

void tst_CliFoundation::numbersSayWhatIsExpected()
{
    // An empty value names its option (an empty --devices used to say only "cannot open file").
    for (const QStringList& args : {QStringList{"presets", "--devices="}, QStringList{"presets", "--devices", ""}}) {
        const Run r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("option --devices needs a value, got \"\""), qPrintable(r.err));
    }
    // The int range is the problem, and the message says so.
    Run r = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--gbs", "2147483648"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--gbs: expected an integer from 1 to 1000000000, got \"2147483648\" (too large)"), qPrintable(r.err));
    r = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--tp", "0"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--tp: expected an integer from 1 to 1000000000, got \"0\" (too small)"), qPrintable(r.err));
    // Bounds are printed as written (">= 0", not ">= 0.000000"); infinity is not a number here.
    r = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "--delta", "-1"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--delta: expected a finite number >= 0, got \"-1\""), qPrintable(r.err));
    QVERIFY(!r.err.contains("0.000000"));
    for (const char* v : {"inf", "-inf", "nan", "1e400"}) {
        r = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "--time-limit", v});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--time-limit: expected a finite number >= 0, got \"%1\"").arg(v)), qPrintable(r.err));
    }
    // A positive denormal is a positive number: accepted (a delta of 5e-324 is no tolerance).
    r = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "--delta", "5e-324"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
}

void tst_CliFoundation::timeLimitBeyondMeaningIsNoLimit()
{
    // Above 1e7 s a limit means nothing: the search runs to the end instead of stopping at once.
    for (const char* v : {"1e10", "1e300"}) {
        const Run r = hapmoe({"plan", "--model", "mixtral-s", "--cluster", "16-1-h", "--time-limit", v});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("HAPMoE plan for Mixtral-S on 16-1-h"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("time limit reached"), qPrintable(r.out));
    }
}

void tst_CliFoundation::estimateNamesTheResponsibleFlag()
{
    // 16 devices: PP 5 alone, or ETP 3 alone, is the flag that does not divide them.
    Run r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "5"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--pp: TP*CP*PP = 5 does not divide the cluster's 16 devices"), qPrintable(r.err));
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--etp", "3"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--etp: EP*ETP = 1 x 3 = 3 does not divide the 16 devices of a stage"), qPrintable(r.err));
    // ETP taken from TP (an MoE model's default) is said to be so.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--ep", "4", "--tp", "4"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--ep/--etp: EP*ETP = 4 x 4 = 16 does not divide the 8 devices of a stage (TP*CP*DP) (an MoE "
                            "model's ETP is its TP unless --etp gives it)"),
             qPrintable(r.err));
    // A stage over two device types names PP, with its value and the stage's devices.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "16-1"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--pp: with PP 1, stage 0 of 16 devices would span device types H800 and 910B-376T"), qPrintable(r.err));
    // Two flags above 1 whose product (2 x 3 = 6) does not divide 16: both are named.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--tp", "2", "--pp", "3"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--tp/--pp: TP*CP*PP = 6 does not divide"), qPrintable(r.err));
    // A recompute module the model has none of is accepted, as Megatron-Core accepts it, and
    // said to recompute nothing: Mixtral-S has only MoE layers and no shared experts.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--ep", "8", "--distributed-optimizer", "--recompute", "selective",
                "--recompute-modules", "mlp,shared_experts,core_attn"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("note: --recompute-modules mlp recomputes nothing: it is the dense layers' MLP, and every layer of "
                            "Mixtral-S is an MoE layer"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("note: --recompute-modules shared_experts recomputes nothing: Mixtral-S has no shared experts"), qPrintable(r.out));
}

void tst_CliFoundation::sequenceParallelWithoutTensorParallelIsOff()
{
    // Megatron-LM's validate_args turns sequence parallelism off when TP is 1 ("Disabling
    // sequence parallelism because tensor model parallelism is disabled"); so does estimate.
    const QStringList base{"estimate", "--model", "LLaMA-2-7B", "--cluster", "H100:1x8", "--sequence-parallel"};
    Run r = hapmoe(base + QStringList{"--tp", "1"});
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));
    QVERIFY2(r.out.contains("note: --sequence-parallel is ignored with --tp 1"), qPrintable(r.out));
    QVERIFY2(!r.out.section('\n', 0, 0).contains("SP"), qPrintable(r.out.section('\n', 0, 0)));
    r = hapmoe(base + QStringList{"--tp", "1", "--json"});
    QVERIFY2(r.err.contains("note: --sequence-parallel is ignored with --tp 1"), qPrintable(r.err));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["sequence_parallel"].toBool(true), false);
    // With TP 2 the header says SP.
    r = hapmoe(base + QStringList{"--tp", "2"});
    QVERIFY2(r.out.section('\n', 0, 0).contains(", SP"), qPrintable(r.out));
    // An MoE model with TP 2 runs it without the flag (Megatron-Core's MoELayer.forward refuses
    // to train with TP > 1 and no sequence parallelism), and says so; a dense one does not.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--tp", "2", "--pp", "2", "--json"});
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));
    QVERIFY2(r.err.contains("note: sequence parallelism is on without --sequence-parallel: Megatron-Core's MoE layer refuses"),
             qPrintable(r.err));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["sequence_parallel"].toBool(false), true);
    r = hapmoe({"estimate", "--model", "LLaMA-2-7B", "--cluster", "H100:1x8", "--tp", "2", "--json"});
    QVERIFY(!r.err.contains("sequence parallelism is on"));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["sequence_parallel"].toBool(true), false);

    // A plan file with TP 2 on stage 0 and TP 1 on stage 1: SP only where TP > 1. Stage 0
    // (TP2 DP4, MBS 2) and stage 1 (TP1 DP8, MBS 1) run the same 8 sequences per micro-batch.
    r = hapmoe({"estimate", "--model", "LLaMA-2-7B", "--cluster", "H100:2x8", "--tp", "2", "--pp", "2", "--mbs", "2",
                "--sequence-parallel", "--json"});
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));
    QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QJsonObject plan = doc["plan"].toObject();
    QJsonArray stages = plan["stages"].toArray();
    QCOMPARE(stages.size(), 2);
    QJsonObject st = stages[1].toObject();
    st["tp"] = 1;
    st["dp"] = 8;
    st["etp"] = 1;
    st["edp"] = 8;
    st["micro_batch_size"] = 1;
    stages[1] = st;
    plan["stages"] = stages;
    doc["plan"] = plan;
    doc.remove("prediction");
    QTemporaryDir tmp;
    QFile f(tmp.filePath("mixed.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(doc).toJson());
    f.close();
    r = hapmoe({"estimate", "--plan", f.fileName()});
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));
    QVERIFY2(r.out.section('\n', 0, 0).contains(", SP on stages 0 (TP > 1)"), qPrintable(r.out.section('\n', 0, 0)));
}

void tst_CliFoundation::estimateTargetsWhatCanRunIt()
{
    // 16-1 is 8 H800 (NCCL) and 8 910B (HCCL): one Megatron-LM job speaks one collective
    // library, FlagScale's heterogeneous meshes run both. The flag form's plan targets FlagScale
    // and says so; an export in that format succeeds.
    QTemporaryDir tmp;
    const QStringList args{"estimate", "--model", "Mixtral-S", "--cluster", "16-1", "--tp", "1", "--pp", "4", "--ep", "4", "--etp", "1"};
    Run r = hapmoe(args + QStringList{"--json"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["target"].toString(), QStringLiteral("flagscale"));
    QVERIFY2(r.err.contains("note: the plan's target is flagscale (export it with --format flagscale): Megatron-LM cannot run it"),
             qPrintable(r.err));
    QFile f(tmp.filePath("plan.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(r.out.toUtf8());
    f.close();
    r = hapmoe({"export", f.fileName(), "--format", "flagscale", "-o", tmp.filePath("run-16.sh"), "--hostfile", tmp.filePath("nodes.txt")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(QFileInfo::exists(tmp.filePath("run-16.sh")));
    // The usage comment runs the launcher by the name it was written as, with its hostfile.
    QFile launcher(tmp.filePath("run-16.sh"));
    QVERIFY(launcher.open(QIODevice::ReadOnly));
    const QByteArray text = launcher.readAll();
    QVERIFY2(text.contains("# Usage: bash run-16.sh NODE_RANK   (or export NODE_RANK). The hostfile nodes.txt lists the same order."),
             text.left(600).constData());
    r = hapmoe(args);
    QVERIFY2(r.out.contains("note: the plan's target is flagscale"), qPrintable(r.out));
    // One device type: Megatron-LM runs it, and the target stays megatron without a note.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--json"});
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["target"].toString(), QStringLiteral("megatron"));
    QVERIFY(!r.err.contains("target"));
    // CP 2 on NCCL and HCCL stages: Megatron-LM speaks one library, FlagScale asserts CP 1. The
    // note says neither runs it, and the export refuses it in both formats.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "16-1", "--pp", "4", "--cp", "2", "--ep", "2", "--distributed-optimizer", "--json"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("note: neither Megatron-LM nor FlagScale can launch it: Megatron-LM: "), qPrintable(r.err));
    QVERIFY2(r.err.contains("; FlagScale: ") && r.err.contains(" (hapmoe export refuses it)"), qPrintable(r.err));
    QFile cp(tmp.filePath("cp.json"));
    QVERIFY(cp.open(QIODevice::WriteOnly));
    cp.write(r.out.toUtf8());
    cp.close();
    for (const char* format : {"megatron", "FlagScale"}) {
        const Run e = hapmoe({"export", cp.fileName(), "--format", format});
        QCOMPARE(e.exitCode, 2);
        QVERIFY2(e.err.contains("refused"), qPrintable(e.err));
    }
    // The plan file names a target; estimating it says that target refuses it.
    const Run again = hapmoe({"estimate", "--plan", cp.fileName()});
    QVERIFY2(again.out.contains("note: the plan's target megatron cannot launch it (hapmoe export refuses it)"), qPrintable(again.out));
    // A plan that does not fit is exported as written, with a warning: Mixtral 8x7B (46.7e9
    // parameters, 18 bytes each without the distributed optimizer) on one 8-GPU node at TP 1.
    r = hapmoe({"estimate", "--model", "Mixtral-8x7B", "--cluster", "H800:1x8", "--json"});
    QCOMPARE(r.exitCode, 1);
    QFile big(tmp.filePath("big.json"));
    QVERIFY(big.open(QIODevice::WriteOnly));
    big.write(r.out.toUtf8());
    big.close();
    const Run e = hapmoe({"export", big.fileName(), "--format", "megatron", "-o", tmp.filePath("big.sh")});
    QCOMPARE(e.exitCode, 0);
    QVERIFY2(e.err.contains("warning: the plan does not fit in device memory (stage 0 (H800) needs"), qPrintable(e.err));
}

void tst_CliFoundation::scriptTargetsWhatCanRunIt()
{
    // A Megatron-LM script (PP 4 over 4 nodes of 8) on 2 H800 and 2 910B nodes: stages 0-1 on
    // NCCL, 2-3 on HCCL. `estimate --script`, `import` and the search's current configuration
    // all give it FlagScale's target and say why; before, estimate --script said megatron and
    // nothing, while the flag form of the same plan said flagscale.
    QTemporaryDir tmp;
    const QString script = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_8x7b_distributed.sh";
    const QString cluster = QStringLiteral("H800:2x8,910B:2x8");
    const Run e = hapmoe({"estimate", "--script", script, "--cluster", cluster, "--json"});
    QVERIFY2(e.exitCode == 0, qPrintable(e.err));
    QCOMPARE(QJsonDocument::fromJson(e.out.toUtf8()).object()["plan"].toObject()["target"].toString(), QStringLiteral("flagscale"));
    QVERIFY2(e.err.contains("note: the plan's target is flagscale (export it with --format flagscale): Megatron-LM cannot run it, "
                            "stage 2 (910B-376T) uses HCCL, stage 0 uses NCCL"),
             qPrintable(e.err));
    const QString project = tmp.filePath("project.json");
    const Run i = hapmoe({"import", script, "--cluster", cluster, "-o", project});
    QVERIFY2(i.exitCode == 0, qPrintable(i.err));
    QVERIFY2(i.err.contains("Megatron-LM cannot launch this configuration on the cluster: stage 2 (910B-376T) uses HCCL")
                 && i.err.contains("the project's plan targets flagscale"),
             qPrintable(i.err));
    const QJsonArray plans = QJsonDocument::fromJson(readFile(project)).object()["plans"].toArray();
    QCOMPARE(plans.size(), 1);
    QCOMPARE(plans[0].toObject()["plan"].toObject()["target"].toString(), QStringLiteral("flagscale"));
    // On one device type Megatron-LM runs it: the target stays, nothing is said.
    const Run same = hapmoe({"estimate", "--script", script, "--cluster", "H800:4x8", "--json"});
    QCOMPARE(QJsonDocument::fromJson(same.out.toUtf8()).object()["plan"].toObject()["target"].toString(), QStringLiteral("megatron"));
    QVERIFY2(!same.err.contains("target"), qPrintable(same.err));
}

void tst_CliFoundation::planJsonWithoutFeasiblePlan()
{
    // Mixtral-L (about 122B parameters, paper appendix A) cannot fit on 8 H800 without
    // optimizer offload: exit 1, and --json still prints the hapmoe.plan document with no plan
    // and the reason (docs/formats.md).
    const Run r = hapmoe({"plan", "--model", "Mixtral-L", "--cluster", "H800:1x8", "--optimizer-offload", "never", "--json"});
    QCOMPARE(r.exitCode, 1);
    QJsonParseError error;
    const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(r.out));
    QCOMPARE(doc["format"].toString(), QStringLiteral("hapmoe.plan"));
    QVERIFY(doc["plan"].isNull());
    QCOMPARE(doc["model"].toObject()["name"].toString(), QStringLiteral("Mixtral-L"));
    const QJsonObject search = doc["search"].toObject();
    QVERIFY(search["alternatives"].toArray().isEmpty());
    QVERIFY2(search["no_plan_reason"].toString().startsWith("no plan fits in device memory"), qPrintable(search["no_plan_reason"].toString()));
    QVERIFY(r.err.contains("no feasible plan: " + search["no_plan_reason"].toString()));
    // -o writes the same document.
    QTemporaryDir tmp;
    const Run o = hapmoe({"plan", "--model", "Mixtral-L", "--cluster", "H800:1x8", "--optimizer-offload", "never", "-o",
                          tmp.filePath("o.json")});
    QCOMPARE(o.exitCode, 1);
    QCOMPARE(QJsonDocument::fromJson(readFile(tmp.filePath("o.json"))).object()["search"].toObject()["no_plan_reason"],
             search["no_plan_reason"]);
    // The document is valid and says why it holds no plan; it is refused where a plan is
    // needed, with the reason, and its model and cluster can be searched again (the model on
    // a larger cluster).
    QFile f(tmp.filePath("none.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(r.out.toUtf8());
    f.close();
    const Run v = hapmoe({"validate", f.fileName()});
    QCOMPARE(v.exitCode, 0);
    QVERIFY2(v.out.contains("ok (hapmoe.plan v1, no plan (the search found none: no plan fits"), qPrintable(v.out));
    const Run e = hapmoe({"estimate", "--plan", f.fileName()});
    QCOMPARE(e.exitCode, 2);
    QVERIFY2(e.err.contains("plan: the document holds no plan: the search found none (search.no_plan_reason: no plan fits"),
             qPrintable(e.err));
    const Run again = hapmoe({"plan", "--model", f.fileName(), "--cluster", "H800:4x8", "--optimizer-offload", "never"});
    QCOMPARE(again.exitCode, 0);
    QVERIFY2(again.out.startsWith("HAPMoE plan for Mixtral-L on H800:4x8 (32 devices)"), qPrintable(again.out));
    const Run cluster = hapmoe({"plan", "--model", "Mixtral-S", "--cluster", f.fileName()});
    QVERIFY2(cluster.exitCode == 0 || cluster.exitCode == 1, qPrintable(cluster.err));
    QVERIFY2(!cluster.err.contains("holds no plan"), qPrintable(cluster.err));
}

void tst_CliFoundation::notJsonAndDuplicateKeyPositions()
{
    // binary-garbage.json is the bytes 00 01 02 ff fe: not a JSON text from its first byte.
    Run r = hapmoe({"validate", QStringLiteral(HAPMOE_BAD_INPUT_DIR) + "/binary-garbage.json"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("line 1, column 1: malformed JSON: not a JSON text (binary data at byte 0)"), qPrintable(r.err));
    QVERIFY(!r.err.contains("end of input"));
    // model-duplicate-key.json gives "num_layers" again on line 8, indented by two spaces.
    r = hapmoe({"validate", QStringLiteral(HAPMOE_BAD_INPUT_DIR) + "/model-duplicate-key.json"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("line 8, column 3: malformed JSON: the key \"num_layers\" appears twice in one object"), qPrintable(r.err));
    // A model whose unknown key holds an array of 5 million zeros and one: no hapmoe document
    // holds that many values, and reading its tree would take some 50 bytes each.
    QTemporaryDir tmp;
    const QString huge = tmp.filePath("huge.json");
    QByteArray text = "{\"format\": \"hapmoe.model\", \"version\": 2, \"padding\": [0";
    text.reserve(10'000'100);
    for (int i = 0; i < 5'000'000; ++i)
        text += ",0";
    text += "]}";
    QVERIFY(writeFile(huge, text));
    r = hapmoe({"validate", huge});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(huge + ": the document holds more than 5 million JSON values"), qPrintable(r.err));
}

void tst_CliFoundation::planNumbersBeyondAnInt()
{
    // Knobs, slots and batch figures each fit an int, their products and sums need not: a stage
    // without devices whose products wrap to 0 (TP 65536 x DP 65536) used to pass the device
    // check and divide the global batch by a wrapped 0 (SIGFPE); a slot at INT_MAX wrapped into
    // the node and was accepted.
    QTemporaryDir tmp;
    const QJsonObject base = twoStagePlan();
    QVERIFY(base["plan"].isObject());
    // alone: stage 0 is the only stage (all 24 layers), of a dense model whose heads the TP
    // below divides, so that no other rule stops the plan before the batch check.
    auto withStage0 = [&](const QString& name, const std::function<void(QJsonObject&)>& change, bool alone) {
        QJsonObject doc = base;
        QJsonObject plan = doc["plan"].toObject();
        QJsonArray stages = plan["stages"].toArray();
        QJsonObject st = stages[0].toObject();
        change(st);
        stages[0] = st;
        if (alone)
            stages.removeAt(1);
        plan["stages"] = stages;
        doc["plan"] = plan;
        if (alone) {
            QJsonObject model = doc["model"].toObject();
            model["num_experts"] = 0;
            model["moe_ffn_hidden_size"] = 0;   // a dense model has no expert FFN (validateModel)
            model["hidden_size"] = 65536;
            model["num_attention_heads"] = 65536;
            model["num_query_groups"] = 0;
            doc["model"] = model;
        }
        const QString path = tmp.filePath(name);
        writeFile(path, QJsonDocument(doc).toJson());
        return path;
    };
    const QString wrapped = withStage0("wrapped.json", [](QJsonObject& st) {
        st["devices"] = QJsonArray();
        st["num_layers"] = 24;
        st["tp"] = 65536;
        st["dp"] = 65536;
        st["ep"] = 65536;
        st["etp"] = 65536;
        st["edp"] = 1;
        st["micro_batch_size"] = 65536;
    }, true);
    for (const QStringList& args : {QStringList{"validate", wrapped}, QStringList{"estimate", "--plan", wrapped},
                                    QStringList{"export", wrapped, "--format", "megatron"}}) {
        const Run r = hapmoe(args);
        QVERIFY2(r.exitCode == 2, qPrintable(args.join(' ') + ": " + r.err));
        QVERIFY2(r.err.contains(wrapped + ": plan.stages[0].devices: expected at least one device slot"), qPrintable(r.err));
    }
    const QString slot = withStage0("slot.json", [](QJsonObject& st) {
        QJsonArray devices = st["devices"].toArray();
        QJsonObject d = devices[0].toObject();
        d["first_local"] = 2147483647;
        devices[0] = d;
        st["devices"] = devices;
    }, false);
    Run r = hapmoe({"validate", slot});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("plan.stages[0].devices[0].first_local: devices [2147483647, 2147483655) do not fit node 0 of 8"), qPrintable(r.err));
    r = hapmoe({"export", slot, "--format", "megatron"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.out.isEmpty());
    const QString wide = withStage0("wide.json", [](QJsonObject& st) {
        st["tp"] = 65536;
        st["cp"] = 65536;
    }, false);
    r = hapmoe({"validate", wide});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("plan.stages[0]: tp*cp*dp = 34359738368 but the stage has 8 devices"), qPrintable(r.err));
}

void tst_CliFoundation::clusterNodeOfTooManyDevices()
{
    // The device counts of a cluster add up in an int: a node of INT_MAX devices made the sum
    // negative, and the cluster was reported as having no devices at all.
    QTemporaryDir tmp;
    const QString path = tmp.filePath("huge.json");
    QVERIFY(writeFile(path, R"({"format": "hapmoe.cluster", "version": 2, "nodes": [
        {"id": 0, "host": "a", "device_type": "H800", "count": 2147483647},
        {"id": 1, "host": "b", "device_type": "H800", "count": 8}]})"));
    for (const QStringList& args : {QStringList{"validate", path}, QStringList{"plan", "--model", "Mixtral-S", "--cluster", path}}) {
        const Run r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(path + ": cluster.nodes[0].count: expected at most 4096 devices in a node, got 2147483647"),
                 qPrintable(r.err));
    }
    // 300 nodes of 4096 devices, 1,228,800 in all: past the 2^20 a cluster may hold (an
    // estimate over 81.9 million devices took 39 s and 3.8 GB), in a file and in shorthand.
    QString nodes;
    for (int i = 0; i < 300; ++i)
        nodes += QStringLiteral("%1{\"id\": %2, \"host\": \"n%2\", \"device_type\": \"H800\", \"count\": 4096}")
                     .arg(i ? QStringLiteral(", ") : QString())
                     .arg(i);
    const QString many = tmp.filePath("many.json");
    QVERIFY(writeFile(many, (R"({"format": "hapmoe.cluster", "version": 2, "nodes": [)" + nodes + "]}").toUtf8()));
    const Run file = hapmoe({"validate", many});
    QCOMPARE(file.exitCode, 2);
    QVERIFY2(file.err.contains(many + ": cluster.nodes: expected at most 1,048,576 devices in all, got 1228800"), qPrintable(file.err));
    const Run shorthand = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:200x4096,H100:100x4096"});
    QCOMPARE(shorthand.exitCode, 2);
    QVERIFY2(shorthand.err.contains("item 2: at most 1,048,576 devices in a cluster, got 1228800 so far"), qPrintable(shorthand.err));
}

void tst_CliFoundation::absurdTimesInExponentForm()
{
    // A valid but absurd bridge between vendors (1e-6 GB/s, the least a rate may be: a link
    // of 1e-320 GB/s is refused, as is a latency beyond a second, docs/formats.md) makes each
    // pipeline send (each of the 8 TP ranks sends its eighth of 4096 x 4096 x 2 bytes) last
    // 4.2e3 s, and 262,144 micro-batches make the iteration about 2.2e9 s; the tables print it
    // in exponent form instead of a fixed-point number of ten digits and more.
    QTemporaryDir tmp;
    const QString path = tmp.filePath("slow.json");
    QVERIFY(writeFile(path, R"({"format": "hapmoe.cluster", "version": 2, "nodes": [
        {"id": 0, "host": "a", "device_type": "H800", "count": 8}, {"id": 1, "host": "b", "device_type": "MI300X", "count": 8}],
        "switches": [{"id": 2}], "links": [{"a": 0, "b": 2, "bandwidth_gbytes_per_s": 50},
        {"a": 1, "b": 2, "bandwidth_gbytes_per_s": 50}], "cross_vendor": {"bandwidth_gbytes_per_s": 1e-6}})"));
    const QStringList args = {"estimate", "--model", "Mixtral-S", "--cluster", path, "--pp", "2", "--tp", "8", "--recompute", "full",
                              "--gbs", "262144"};
    const Run r = hapmoe(args);
    QCOMPARE(r.exitCode, 0);
    const QRegularExpression iteration(QStringLiteral("iteration (\\d(\\.\\d{1,3})?e\\+\\d{2,3}) s"));
    const QRegularExpressionMatch m = iteration.match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    // The table shows the prediction's own iteration time, to four significant digits.
    const Run json = hapmoe(args + QStringList{"--json"});
    QCOMPARE(json.exitCode, 0);
    const double predicted = prediction(json)["iteration_time_s"].toDouble();
    QVERIFY2(predicted > 1e9, qPrintable(QString::number(predicted)));   // ten digits and more in fixed notation
    QVERIFY2(std::fabs(m.captured(1).toDouble() / predicted - 1) < 5e-4, qPrintable(m.captured(1)));
    QVERIFY2(!r.out.contains(QRegularExpression(QStringLiteral("\\d{20}"))), qPrintable(r.out));

    // A link of 1e-320 GB/s would make the send infinite: refused, naming the field.
    const QString denormal = tmp.filePath("denormal.json");
    QVERIFY(writeFile(denormal, R"({"format": "hapmoe.cluster", "version": 2, "nodes": [
        {"id": 0, "host": "a", "device_type": "H800", "count": 8}, {"id": 1, "host": "b", "device_type": "H800", "count": 8}],
        "switches": [{"id": 2}], "links": [{"a": 0, "b": 2, "bandwidth_gbytes_per_s": 1e-320},
        {"a": 1, "b": 2, "bandwidth_gbytes_per_s": 50}]})"));
    const Run refused = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", denormal, "--pp", "2", "--tp", "8"});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains(denormal + ": cluster.links[0].bandwidth_gbytes_per_s: expected at least 1e-06 GB/s"),
             qPrintable(refused.err));
}

void tst_CliFoundation::outputNeverReplacesAnInput()
{
    // An output path naming one of the command's inputs (directly, relatively or through a
    // link) is refused before anything runs, and the input keeps its content.
    QTemporaryDir tmp;
    const QDir dir(tmp.path());
    const QString model = tmp.filePath("model.json");
    QVERIFY(QFile::copy(QStringLiteral(HAPMOE_SOURCE_DIR) + "/resources/models/mixtral-s.json", model));
    const QString plan = tmp.filePath("plan.json");
    QVERIFY(writeFile(plan, QJsonDocument(twoStagePlan()).toJson()));
    const QString script = tmp.filePath("train.sh");
    QVERIFY(QFile::copy(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_8x7b_distributed.sh", script));
    const QString log = tmp.filePath("train.log");
    QVERIFY(QFile::copy(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_h800.log", log));
    const QString runPlan = tmp.filePath("run-plan.json");
    QVERIFY(QFile::copy(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/mixtral_h800_plan.json", runPlan));
    QVERIFY(QFile::link(model, tmp.filePath("link.json")));
    const QMap<QString, QByteArray> before{{model, readFile(model)}, {plan, readFile(plan)}, {script, readFile(script)},
                                           {log, readFile(log)}, {runPlan, readFile(runPlan)}};
    struct Case {
        QStringList args;
        QString expected;
    };
    const Case cases[] = {
        {{"plan", "--model", model, "--cluster", "16-1-h", "-o", model}, model + ": -o: is the same file as the input --model"},
        {{"plan", "--model", model, "--cluster", "16-1-h", "-o", tmp.filePath("link.json")}, "-o: is the same file as the input --model"},
        {{"estimate", "--plan", plan, "--trace", plan}, plan + ": --trace: is the same file as the input --plan"},
        {{"import", script, "--cluster", "H800:4x8", "-o", script}, script + ": -o: is the same file as the input SCRIPT"},
        {{"export", plan, "--format", "megatron", "-o", plan}, plan + ": -o: is the same file as the input PLAN.json"},
        {{"export", plan, "--format", "megatron", "--script", script, "-o", script}, "-o: is the same file as the input --script"},
        {{"calibrate", "--log", log, "--plan", runPlan, "-o", runPlan}, runPlan + ": -o: is the same file as the input --plan"},
        {{"calibrate", "--log", log, "--plan", runPlan, "-o", log}, log + ": -o: is the same file as the input --log"},
    };
    for (const Case& c : cases) {
        const Run r = hapmoe(c.args);
        QVERIFY2(r.exitCode == 2, qPrintable(c.args.join(' ') + ": " + r.err));
        QVERIFY2(r.err.contains(c.expected), qPrintable(c.args.join(' ') + ": " + r.err));
        for (auto it = before.begin(); it != before.end(); ++it)
            QVERIFY2(readFile(it.key()) == it.value(), qPrintable(c.args.join(' ') + " changed " + it.key()));
    }
    // Relative spellings of the same file are the same file.
    QProcess p;
    p.setWorkingDirectory(tmp.path());
    p.start(QStringLiteral(HAPMOE_CLI_PATH), {"import", "./train.sh", "-o", "train.sh"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(readFile(script) == before[script]);
    QCOMPARE(dir.entryList(QDir::Files | QDir::Hidden).size(), 6);   // nothing written
}

void tst_CliFoundation::outputMustBeAFileInAWritableFolder()
{
    // Every command that writes a file checks it before it computes: a named pipe (as a device)
    // would be replaced by a regular file, a directory or an empty name cannot take one.
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath("pipe.json");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    const QString script = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_8x7b_distributed.sh";
    const QString log = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_h800.log";
    const QString runPlan = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/mixtral_h800_plan.json";
    const QList<QStringList> commands{
        {"plan", "--model", "Mixtral-S", "--cluster", "16-1-h", "-o"},
        {"estimate", "--model", "Mixtral-S", "--cluster", "16-1-h", "--pp", "2", "--trace"},
        {"import", script, "--cluster", "H800:4x8", "-o"},
        {"calibrate", "--log", log, "--plan", runPlan, "-o"},
    };
    for (const QStringList& command : commands) {
        Run r = hapmoe(command + QStringList{fifo});
        QVERIFY2(r.exitCode == 2, qPrintable(command.join(' ') + ": " + r.err));
        QVERIFY2(r.err.contains(fifo + ": " + command.last() + ": is not a regular file"), qPrintable(r.err));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out));   // refused before anything ran
        struct stat st {};
        QCOMPARE(::stat(fifo.toLocal8Bit().constData(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode));
        r = hapmoe(command + QStringList{tmp.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(tmp.path() + ": " + command.last() + ": is a directory, expected a file"), qPrintable(r.err));
        r = hapmoe(command + QStringList{QString()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("option " + command.last() + " needs a value, got \"\""), qPrintable(r.err));
        r = hapmoe(command + QStringList{"/nonexistent/out.json"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("/nonexistent/out.json: " + command.last() + ": the folder /nonexistent does not exist"), qPrintable(r.err));
        // "-" is not taken for standard output, nor written as a file named "-".
        QProcess dash;
        dash.setWorkingDirectory(tmp.path());
        dash.start(QStringLiteral(HAPMOE_CLI_PATH), command + QStringList{"-"});
        QVERIFY(dash.waitForFinished(60000));
        QCOMPARE(dash.exitCode(), 2);
        QVERIFY2(QString::fromUtf8(dash.readAllStandardError()).contains(command.last() + ": expected a file name, got \"-\""),
                 qPrintable(command.join(' ')));
    }
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden | QDir::System), QStringList{"pipe.json"});
    // A read-only file is not replaced (the atomic save's rename would). Root may write any
    // file, so the check holds for other users only.
    if (::geteuid() == 0)
        QSKIP("run as root, who may replace a read-only file");
    const QString readOnly = tmp.filePath("kept.json");
    QVERIFY(writeFile(readOnly, "old"));
    QVERIFY(QFile::setPermissions(readOnly, QFileDevice::ReadOwner));
    for (const QStringList& command : commands) {
        const Run r = hapmoe(command + QStringList{readOnly});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(readOnly + ": " + command.last() + ": the file is read-only"), qPrintable(r.err));
        QCOMPARE(readFile(readOnly), QByteArray("old"));
    }
}

void tst_CliFoundation::standardOutputThatCannotBeWritten()
{
    // "hapmoe plan --json > plan.json" on a full disk: the document is cut short, and the exit
    // code says so instead of 0.
    if (!QFileInfo(QStringLiteral("/dev/full")).exists())
        QSKIP("no /dev/full");
    for (const QStringList& args : {QStringList{"presets"}, QStringList{"plan", "--model", "Mixtral-S", "--cluster", "16-1-h", "--json"}}) {
        QProcess p;
        p.setStandardOutputFile(QStringLiteral("/dev/full"));
        p.start(QStringLiteral(HAPMOE_CLI_PATH), args);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(QString::fromUtf8(p.readAllStandardError()).contains("error: cannot write to standard output"), qPrintable(args.join(' ')));
    }
}

void tst_CliFoundation::importDeviceWithCluster()
{
    // --device names the type of the script's nodes when no cluster is given; with --cluster it
    // would be ignored without a word.
    const Run r = hapmoe({"import", QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_8x7b_distributed.sh", "--cluster",
                          "H800:4x8", "--device", "910B"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--device cannot be combined with --cluster"), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    // Megatron's Mixtral example gives --sequence-parallel at TP 1, where Megatron-LM turns it
    // off: the summary says so rather than "sequence parallel".
    const Run ok = hapmoe({"import", QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_8x7b_distributed.sh",
                           "--cluster", "H800:4x8"});
    QCOMPARE(ok.exitCode, 0);
    QVERIFY2(ok.out.contains("no sequence parallel (--sequence-parallel is off at TP 1)"), qPrintable(ok.out));
    // The script's overlap switches (--overlap-grad-reduce and --overlap-param-gather, lines
    // 59-60; no --tp-comm-overlap), which the estimate of the script costs.
    QVERIFY2(ok.out.contains("\noverlap: gradient reduce, parameter gather, no TP communication\n"), qPrintable(ok.out));

    // A FlagScale heterogeneous script whose meshes need 16 ranks (TP 2 x DP 4 and TP 4 x DP 2)
    // on the one node of 8 processes it starts: FlagScale's world check, also without --cluster.
    QTemporaryDir tmp;
    const QString hetero = tmp.filePath("hetero.sh");
    QVERIFY(writeFile(hetero, "torchrun --nnodes 1 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 32 "
                              "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --bf16 --micro-batch-size 1 --untie-embeddings-and-output-weights "
                              "--global-batch-size 16 --pipeline-model-parallel-size 2 --enable-hetero --hetero-pipeline-layer-split 18 14 "
                              "--hetero-process-meshes 2 1 1 4 1 4 1 1 2 1 --hetero-device-types H800 A100 "
                              "--hetero-current-device-type H800\n"));
    const Run mismatch = hapmoe({"import", hetero});
    QCOMPARE(mismatch.exitCode, 2);
    QVERIFY2(mismatch.err.contains("--hetero-process-meshes: the meshes hold 16 ranks (the sum of TP*CP*DP*PP), the script starts 8 "
                                   "processes; FlagScale stops with \"World size mismatch\""),
             qPrintable(mismatch.err));
}

void tst_CliFoundation::noPlanSaysWhatTheHostLacks()
{
    // Mixtral-8x22B (141 B parameters) on two H800 nodes of 256 GiB of host memory each: even
    // with the optimizer offloaded nothing fits, and the stage closest to fitting is short of
    // its nodes' host memory. The reason says so, and gives the whole model's optimizer states
    // (12 bytes a parameter: 1.5 TiB) against the host memory the nodes give (512 GiB).
    QTemporaryDir tmp;
    const QString path = tmp.filePath("host.json");
    QVERIFY(writeFile(path, R"({"format": "hapmoe.cluster", "version": 2, "name": "host",
        "nodes": [{"id": 0, "host": "a", "device_type": "H800", "count": 8, "host_memory_gib": 256},
                  {"id": 1, "host": "b", "device_type": "H800", "count": 8, "host_memory_gib": 256}],
        "links": [{"a": 0, "b": 1, "bandwidth_gbytes_per_s": 50}]})"));
    const Run r = hapmoe({"plan", "--model", "Mixtral-8x22B", "--cluster", path});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("no plan fits in device and host memory: the closest stage (H800, ") && r.err.contains(", in its nodes' host memory) is short by "),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("the optimizer states of the whole model take 1.5 TiB in host memory when all offloaded, and the cluster "
                            "gives 512.0 GiB on the H800 nodes"),
             qPrintable(r.err));
}

void tst_CliFoundation::megatronScriptKeepsMegatronOnANearTie()
{
    // A Megatron-LM script of a Qwen3-30B-like MoE model on four H800 nodes: the fastest plan
    // of either target runs on FlagScale (3.849 s, meshes of different TP), 0.03 % faster than
    // the best Megatron-LM plan (3.850 s). For the script's own framework, `plan --script`
    // without --target gives the Megatron-LM plan (within 1 %: docs/search.md section 1);
    // --target any gives the fastest.
    QTemporaryDir tmp;
    const QString script = tmp.filePath("moe.sh");
    QVERIFY(writeFile(script, "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 48 --hidden-size 2048 "
                              "--ffn-hidden-size 6144 --num-attention-heads 32 --group-query-attention --num-query-groups 4 "
                              "--seq-length 4096 --max-position-embeddings 4096 --normalization RMSNorm --position-embedding-type rope "
                              "--swiglu --disable-bias-linear --untie-embeddings-and-output-weights --vocab-size 151936 "
                              "--micro-batch-size 1 --global-batch-size 512 --bf16 --num-experts 128 --moe-ffn-hidden-size 768 "
                              "--moe-router-topk 8 --moe-token-dispatcher-type alltoall --moe-grouped-gemm "
                              "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --expert-model-parallel-size 8 "
                              "--expert-tensor-parallel-size 1 --sequence-parallel --use-distributed-optimizer "
                              "--overlap-grad-reduce --overlap-param-gather --decoder-first-pipeline-num-layers 10 "
                              "--decoder-last-pipeline-num-layers 10 --recompute-granularity selective "
                              "--recompute-modules moe_act layernorm\n"));
    // The best plan's heading and iteration time, as `hapmoe plan` prints them.
    const QRegularExpression heading("HS-DP +\\(target (\\w+)[^\\n]*\\n(?:[^\\n]*\\n)*?  iteration ([0-9.]+) s");
    const Run own = hapmoe({"plan", "--script", script, "--cluster", "H800:4x8"});
    const Run any = hapmoe({"plan", "--script", script, "--cluster", "H800:4x8", "--target", "any"});
    const QRegularExpressionMatch ownBest = heading.match(own.out), anyBest = heading.match(any.out);
    QVERIFY2(own.exitCode == 0 && ownBest.hasMatch(), qPrintable(own.out + own.err));
    QVERIFY2(any.exitCode == 0 && anyBest.hasMatch(), qPrintable(any.out + any.err));
    QCOMPARE(ownBest.captured(1), QStringLiteral("megatron"));
    QCOMPARE(anyBest.captured(1), QStringLiteral("flagscale"));
    const double ownTime = ownBest.captured(2).toDouble();
    const double anyTime = anyBest.captured(2).toDouble();
    QVERIFY2(anyTime < ownTime && ownTime <= anyTime * 1.01, qPrintable(QString("%1 s against %2 s").arg(ownTime).arg(anyTime)));
}

void tst_CliFoundation::baselineOfAnotherTargetSaysSo()
{
    // 16-2 mixes H800 (NCCL) and MI300X (RCCL). For Megatron-LM the plan stays on one vendor;
    // the uniform baseline uses every device, which only FlagScale can launch (search.md
    // section 6), and its line says so rather than pass for a faster Megatron-LM plan.
    const Run r = hapmoe({"plan", "--model", "Mixtral-S", "--cluster", "16-2", "--target", "megatron"});
    QCOMPARE(r.exitCode, 0);
    QRegularExpressionMatch uniform = QRegularExpression("uniform baseline +[0-9.]+ s +\\(([^)]*)\\)").match(r.out);
    QVERIFY2(uniform.hasMatch(), qPrintable(r.out));
    QVERIFY2(uniform.captured(1).endsWith(", target flagscale, which --target megatron leaves out"), qPrintable(uniform.captured(1)));
    QVERIFY2(!r.out.contains(QRegularExpression("Metis-style baseline[^\n]*target")), qPrintable(r.out));
}

void tst_CliFoundation::flagscaleToStdoutNamesNoHostfile()
{
    // A FlagScale launcher printed to stdout has no hostfile beside it (--hostfile needs -o):
    // its usage line points at its own NODE_HOSTS array instead; with -o it names the file.
    QTemporaryDir tmp;
    const QString plan = tmp.filePath("p.json");
    QCOMPARE(hapmoe({"plan", "--model", "Mixtral-S", "--cluster", "32-3", "-o", plan}).exitCode, 0);
    const Run out = hapmoe({"export", plan, "--format", "flagscale"});
    QCOMPARE(out.exitCode, 0);
    QVERIFY2(out.out.contains("NODE_HOSTS lists the nodes in rank order"), qPrintable(out.out.left(600)));
    QVERIFY(!out.out.contains("hostfile beside it"));
    const Run file = hapmoe({"export", plan, "--format", "flagscale", "-o", tmp.filePath("run.sh")});
    QCOMPARE(file.exitCode, 0);
    QVERIFY(readFile(tmp.filePath("run.sh")).contains("The hostfile beside it lists the same order."));
}

void tst_CliFoundation::idleDevicesOfANodeReadBack()
{
    // A plan on devices 2-7 of the two 910B nodes and 0-5 of the MI300X nodes of 32-3
    // (tests/data/megatron/partial_nodes_plan.json): its launchers make those devices visible
    // (NODE_DEVICES), and read back they give the same devices. Megatron-LM refuses the plan
    // (HCCL and RCCL in one job), so the FlagScale launcher is the one read back.
    QTemporaryDir tmp;
    const QString plan = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/partial_nodes_plan.json";
    for (const char* format : {"flagscale", "megatron"}) {
        const QString script = tmp.filePath(QString::fromLatin1(format) + ".sh");
        const Run e = hapmoe({"export", plan, "--format", format, "-o", script});
        if (e.exitCode != 0) {   // Megatron-LM cannot mix HCCL and RCCL: refused, nothing to read
            QCOMPARE(QString::fromLatin1(format), QStringLiteral("megatron"));
            continue;
        }
        QVERIFY(readFile(script).contains("NODE_DEVICES=( 2,3,4,5,6,7 2,3,4,5,6,7 0,1,2,3,4,5 0,1,2,3,4,5 )"));
        const Run r = hapmoe({"estimate", "--script", script, "--cluster", "32-3", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray stages = QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["stages"].toArray();
        QCOMPARE(stages.size(), 3);
        const QJsonArray first = stages[0].toObject()["devices"].toArray();
        QCOMPARE(first.size(), 2);
        for (const QJsonValue& slot : first) {
            QCOMPARE(slot.toObject()["first_local"].toInt(), 2);
            QCOMPARE(slot.toObject()["count"].toInt(), 6);
        }
        QCOMPARE(stages[1].toObject()["devices"].toArray()[0].toObject()["first_local"].toInt(), 0);
    }
}

void tst_CliFoundation::calibrateRefusesAProfileItCannotRead()
{
    // Router counts near the largest double: their plain sum overflows (1e308 + 1e308), which
    // gave a mean of infinity, rho 0.75, and a profile that validate, estimate and plan then
    // refused. The mean is now a sum of c / n, so rho stays at or above 1 and the profile
    // written is one the tools read (calibrate also reads it back before writing it).
    QTemporaryDir tmp;
    QByteArray log = readFile(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_h800.log");
    QVERIFY(log.contains("1300 1000 1000 1000 900 900 950 950"));
    log.replace("1300 1000 1000 1000 900 900 950 950", "1e308 1e308 1 1 1 1 1 1");
    // rho (4 + 1.5) / 2 = 2.75 (layer 0: 1e308 over a mean of 2e308 / 8; layer 1: 1500 / 1000)
    // puts the prediction at peak efficiency above the logged 10.2 s, where no efficiency can be
    // fitted (calibrate exits 1); 20 s per iteration can be.
    for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
        log.replace(v, "(ms): 20000.0");
    QVERIFY(writeFile(tmp.filePath("run.log"), log));
    const QString profile = tmp.filePath("profile.json");
    const Run r = hapmoe({"calibrate", "--log", tmp.filePath("run.log"), "--plan",
                          QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/mixtral_h800_plan.json", "-o", profile});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(QFileInfo::exists(profile));
    const Run v = hapmoe({"validate", profile});
    QCOMPARE(v.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(readFile(profile)).object();
    QVERIFY2(std::abs(doc.value("router_imbalance").toDouble() - 2.75) < 1e-12,
             qPrintable(QString::number(doc.value("router_imbalance").toDouble())));
}

void tst_CliFoundation::traceOnlyOfSchedulesThatCanBeWritten()
{
    // 65536 micro-batches on 8 stages are 1,048,576 blocks: the trace document would take
    // gigabytes of memory (a global batch of a million sequences ran out of memory and aborted).
    QTemporaryDir tmp;
    const QString trace = tmp.filePath("trace.json");
    Run r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--pp", "8", "--gbs", "65536", "--trace", trace});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--trace: the schedule has 1048576 blocks (65536 micro-batches x 8 stages x VPP 1 x forward and "
                            "backward), more than the 1000000 a trace is written for"),
             qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(trace));
    // An interleaved plan whose 3 micro-batches are not a multiple of PP 2 has no schedule
    // (Megatron-LM r0.8 runs them in groups of PP): the plan document is refused, with or
    // without --trace, and the message says why instead of naming the simulator.
    QJsonObject doc = twoStagePlan();
    QJsonObject plan = doc["plan"].toObject();
    plan["vpp"] = 2;
    plan["global_batch_size"] = 24;
    doc["plan"] = plan;
    const QString path = tmp.filePath("vpp.json");
    QVERIFY(writeFile(path, QJsonDocument(doc).toJson()));
    for (const QStringList& args : {QStringList{"estimate", "--plan", path, "--trace", trace}, QStringList{"estimate", "--plan", path},
                                    QStringList{"validate", path}}) {
        r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("plan.vpp: interleaved 1F1B (vpp 2) needs the micro-batches (3 = global_batch_size / "
                                "(dp x micro_batch_size)) to be a multiple of the 2 pipeline stages"),
                 qPrintable(r.err));
        QVERIFY(!r.err.contains("simulatePipeline"));
        QVERIFY(!QFileInfo::exists(trace));
    }
    // A schedule of fair size is written.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--pp", "8", "--gbs", "64", "--trace", trace});
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));
    QVERIFY(QJsonDocument::fromJson(readFile(trace)).object().contains("traceEvents"));
}


void tst_CliFoundation::importChecksTheWorldTheScriptStarts()
{
    // Megatron-LM's rules that hold whatever the devices are (world size over TP x PP x CP,
    // global batch over DP x micro-batch) are checked on the nodes the script starts, also
    // without --cluster or --device: 2 nodes x 8 processes at TP 2 CP 2 give DP 4, which 127
    // sequences do not divide, so Megatron-LM stops at its start (exit code 2, as with --device).
    QTemporaryDir tmp;
    const QString script = tmp.filePath("gbs.sh");
    const QByteArray text = "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
                            "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                            "--global-batch-size GBS --tensor-model-parallel-size 2 --context-parallel-size 2 --bf16\n";
    QVERIFY(writeFile(script, QByteArray(text).replace("GBS", "127")));
    const Run bad = hapmoe({"import", script});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("--global-batch-size (plan.global_batch_size): the script's configuration on its 2 nodes of 8 "
                              "processes: must be divisible by dp x micro_batch_size (4), got 127"),
             qPrintable(bad.err));
    QVERIFY(writeFile(script, QByteArray(text).replace("GBS", "128")));
    const Run good = hapmoe({"import", script});
    QCOMPARE(good.exitCode, 0);
    QVERIFY2(good.out.contains("parallel: TP2 PP1 CP2"), qPrintable(good.out));
}

void tst_CliFoundation::calibrateRefusesRouterCountsOfNoLayer()
{
    // Router counts are checked at their line: a layer index above the plan's model's 32
    // layers, and a line of one count for 8 experts (before, such a line was skipped).
    QTemporaryDir tmp;
    const QString plan = QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/mixtral_h800_plan.json";
    const QByteArray log = readFile(QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/megatron/train_mixtral_h800.log");
    const QByteArray line = "router layer 0 tokens per expert: 1300 1000 1000 1000 900 900 950 950";
    QVERIFY(log.contains(line));
    const struct {
        QByteArray replacement;
        QString expected;
    } cases[] = {
        {"router layer 99999 tokens per expert: 1300 1000 1000 1000 900 900 950 950",
         "line 22: tokens per expert of layer 99999: the plan's model \"Mixtral 8x7B (train_mixtral_8x7b_distributed.sh)\" has "
         "32 layers"},
        {"router layer 0 tokens per expert: 1300", "line 22: tokens per expert of layer 0: expected 8 counts, one per expert"},
    };
    for (const auto& c : cases) {
        const QString file = tmp.filePath("train.log");
        QVERIFY(writeFile(file, QByteArray(log).replace(line, c.replacement)));
        const Run r = hapmoe({"calibrate", "--log", file, "--plan", plan});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(c.expected), qPrintable(r.err));
    }
}

void tst_CliFoundation::estimateTableGivesModelSizeAndMicroBatch()
{
    // The model's size under the title: Mixtral 8x7B's 46.7 billion parameters, 12.9 billion
    // active (Jiang et al. 2024, arXiv:2401.04088, section 2; by hand from its shape:
    // 46,702,792,704 and 12,879,925,248). A dense model has no active count.
    Run r = hapmoe({"estimate", "--model", "Mixtral-8x7B", "--cluster", "A100-80GB:2x8", "--tp", "2", "--pp", "2", "--ep", "4",
                    "--mbs", "2", "--recompute", "full", "--distributed-optimizer"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("model: 46.70 billion parameters, 12.88 billion active per token\n"), qPrintable(r.out));
    // Each stage's micro-batch size, which its forward and backward times are of.
    const QStringList lines = r.out.split('\n');
    const auto header = std::find_if(lines.begin(), lines.end(), [](const QString& l) { return l.startsWith("stage "); });
    QVERIFY(header != lines.end() && std::next(header) != lines.end());
    const QStringList columns = header->split(' ', Qt::SkipEmptyParts);
    const int mbs = static_cast<int>(columns.indexOf("MBS"));
    QVERIFY2(mbs > 0, qPrintable(*header));
    QCOMPARE(std::next(header)->split(' ', Qt::SkipEmptyParts).value(mbs), QStringLiteral("2"));
    r = hapmoe({"estimate", "--model", "LLaMA-2-7B", "--cluster", "A100-80GB:1x8", "--tp", "8"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("model: 6.74 billion parameters\n"), qPrintable(r.out));
}

void tst_CliFoundation::estimateSaysAProfileCostedPlanIsCostedWithout()
{
    // A plan document records that its prediction used a profile, not the profile itself:
    // estimating it without --profile gives the analytic defaults' figure, and says so.
    QTemporaryDir dir;
    const Run made = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--ep", "8",
                             "--distributed-optimizer", "--json"});
    QCOMPARE(made.exitCode, 0);
    QJsonObject doc = QJsonDocument::fromJson(made.out.toUtf8()).object();
    QJsonObject prediction = doc["prediction"].toObject();
    prediction["used_profile"] = true;
    prediction["iteration_time_s"] = 9.5;   // as a profile made it
    doc["prediction"] = prediction;
    const QString path = dir.filePath("profiled.json");
    QVERIFY(writeFile(path, QJsonDocument(doc).toJson()));
    const Run r = hapmoe({"estimate", "--plan", path});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("note: the plan's prediction (9.500 s) was costed with a profile, which a plan document does not hold"),
             qPrintable(r.out));
    // Not said of a plan costed without one.
    const QString plain = dir.filePath("plain.json");
    QVERIFY(writeFile(plain, made.out.toUtf8()));
    QVERIFY(!hapmoe({"estimate", "--plan", plain}).out.contains("costed with a profile"));
}

void tst_CliFoundation::optionsWithNothingToActOnAreNamed()
{
    // The prunings' tolerances and the exact check belong to HS-DP's pruned search: given with
    // --exact or another algorithm they are warned, as --max-vpp is for FlagScale.
    Run r = hapmoe({"plan", "--model", "Mixtral-S", "--cluster", "16-1", "--exact", "--delta", "0.5", "--exact-check", "5"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("warning: --delta is not used: --exact searches without the prunings"), qPrintable(r.err));
    QVERIFY2(r.err.contains("warning: --exact-check is not used: --exact searches without the prunings"), qPrintable(r.err));
    r = hapmoe({"plan", "--model", "Mixtral-S", "--cluster", "16-1", "--algorithm", "uniform", "--eta", "3"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("warning: --eta is not used: the uniform search has no prunings"), qPrintable(r.err));
    r = hapmoe({"plan", "--model", "Mixtral-S", "--cluster", "16-1", "--delta", "0.3"});
    QVERIFY2(!r.err.contains("not used"), qPrintable(r.err));
    // estimate with nothing to estimate names its three forms, not one missing option.
    r = hapmoe({"estimate"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("nothing to estimate: give --plan FILE, --script FILE --cluster C, or --model M --cluster C"),
             qPrintable(r.err));
}

void tst_CliFoundation::estimateSaysWhatUnevenChunksCost()
{
    // A layout whose chunks a rank holds unevenly (7 + 1, 1 + 8, 1 + 8, 1 + 5 layers): the
    // estimate is the simulated schedule, and a line says what it costs against equal chunks
    // (docs/cost-model.md section 8: +32.9 % at this global batch of 32).
    QTemporaryDir tmp;
    const QString script = tmp.filePath("skew.sh");
    const QByteArray text = "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                            "--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
                            "--seq-length 4096 --max-position-embeddings 4096 --swiglu --disable-bias-linear --normalization RMSNorm "
                            "--position-embedding-type rope --untie-embeddings-and-output-weights --num-experts 8 --moe-router-topk 2 "
                            "--moe-token-dispatcher-type alltoall --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
                            "--expert-model-parallel-size 4 --sequence-parallel "
                            "--pipeline-model-parallel-layout 'Ettttttt|t|t|t|t|tttttttt|tttttttt|tttttL' --micro-batch-size 1 "
                            "--global-batch-size 32 --bf16 --use-distributed-optimizer --vocab-size 32000\n";
    QVERIFY(writeFile(script, text));
    const Run r = hapmoe({"estimate", "--script", script, "--cluster", "H100:4x8"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("with the rank's chunks equal (+32.9%: uneven chunks stall the schedule)"), qPrintable(r.out));
    // Even chunks (4 + 4 a rank): within a percent, no line.
    QByteArray even = text;
    even.replace("Ettttttt|t|t|t|t|tttttttt|tttttttt|tttttL", "Etttt|tttt|tttt|tttt|tttt|tttt|tttt|ttttL");
    QVERIFY(writeFile(script, even));
    const Run e = hapmoe({"estimate", "--script", script, "--cluster", "H100:4x8"});
    QCOMPARE(e.exitCode, 0);
    QVERIFY2(!e.out.contains("pipeline:"), qPrintable(e.out));
}

void tst_CliFoundation::projectProfileCostsItsSavedPlans()
{
    // A project's saved plans were costed with its profile: estimate --plan PROJECT uses it
    // (with a note) unless --profile gives another, and its bounds are checked as validate
    // checks them.
    QTemporaryDir tmp;
    const QString plan = tmp.filePath("plan.json"), launcher = tmp.filePath("run.sh"), project = tmp.filePath("p.hapmoe");
    const Run made = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "16-1-h", "--pp", "2", "--ep", "8",
                             "--distributed-optimizer", "--json"});
    QCOMPARE(made.exitCode, 0);
    QVERIFY(writeFile(plan, made.out.toUtf8()));
    QCOMPARE(hapmoe({"export", plan, "--format", "megatron", "-o", launcher}).exitCode, 0);
    QCOMPARE(hapmoe({"import", launcher, "--device", "H800", "-o", project}).exitCode, 0);
    const Run plain = hapmoe({"estimate", "--plan", project, "--json"});
    QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));

    // The H800 at 40 % of its peak (the catalog's GEMM fraction is 0.803 x 0.935 = 0.75).
    const QJsonObject profile{{"name", "slow"}, {"device_efficiency", QJsonObject{{"H800", 0.4}}}};
    QJsonObject withProfile = QJsonDocument::fromJson(readFile(project)).object();
    withProfile["profile"] = profile;
    QVERIFY(writeFile(project, QJsonDocument(withProfile).toJson()));
    QJsonObject standalone = profile;
    standalone["format"] = "hapmoe.profile";
    standalone["version"] = 1;
    const QString profileFile = tmp.filePath("slow.json");
    QVERIFY(writeFile(profileFile, QJsonDocument(standalone).toJson()));
    const Run own = hapmoe({"estimate", "--plan", project, "--json"});
    QVERIFY2(own.exitCode == 0, qPrintable(own.err));
    QVERIFY2(own.err.contains("note: the project's profile \"slow\" is used, as for its saved plans"), qPrintable(own.err));
    const Run given = hapmoe({"estimate", "--plan", project, "--profile", profileFile, "--json"});
    QVERIFY2(given.exitCode == 0, qPrintable(given.err));
    const double t = prediction(own)["iteration_time_s"].toDouble();
    QCOMPARE(t, prediction(given)["iteration_time_s"].toDouble());
    QVERIFY2(t > 1.5 * prediction(plain)["iteration_time_s"].toDouble(), qPrintable(QString::number(t)));

    // Out of its bounds, the project is refused by every command that reads it, as by validate.
    withProfile["profile"] = QJsonObject{{"compute", QJsonArray{QJsonObject{{"device_type", "H800"}, {"tokens", 1e15},
                                                                            {"dense_layer_fwd_s", 0.01}, {"dense_layer_bwd_s", 0.02}}}}};
    QVERIFY(writeFile(project, QJsonDocument(withProfile).toJson()));
    for (const QStringList& args : {QStringList{"validate", project}, QStringList{"estimate", "--plan", project},
                                    QStringList{"export", project, "--format", "megatron"}}) {
        const Run r = hapmoe(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("profile.compute[0].tokens: expected tokens per device-replica from 1 to 1e+09, got 1e+15"),
                 qPrintable(r.err));
    }
}

void tst_CliFoundation::closedPipeEndsNoCommandEarly()
{
    // Standard output a pipe whose reader is gone before the command writes (`| head -1`
    // having read its line): no SIGPIPE death. The -o file is written whole, the command
    // says its printed summary is incomplete, and exits 2 as for a full disk.
    QTemporaryDir tmp;
    const QString script = tmp.filePath("train.sh"), project = tmp.filePath("p.hapmoe");
    QVERIFY(writeFile(script, "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
                              "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 "
                              "--micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16\n"));
    int fds[2];
    QCOMPARE(::pipe(fds), 0);
    ::close(fds[0]);   // the reader, gone
    QProcess p;
    p.setChildProcessModifier([w = fds[1]] { ::dup2(w, STDOUT_FILENO); });
    p.start(QStringLiteral(HAPMOE_CLI_PATH), {"import", script, "--device", "H800", "-o", project});
    QVERIFY(p.waitForFinished(60000));
    ::close(fds[1]);
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains("standard output was closed before the end (the pipe's reader stopped reading)"), qPrintable(err));
    const Run valid = hapmoe({"validate", project});
    QVERIFY2(valid.exitCode == 0, qPrintable(valid.err));
}

void tst_CliFoundation::aliasedTypesReadAsTheCatalogSpellsThem()
{
    // A plan written by hand may name a type by an alias: estimate --json and the launcher
    // spell it as the catalog does, as a search would have written it.
    QTemporaryDir tmp;
    const Run made = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--ep", "8", "--json"});
    QCOMPARE(made.exitCode, 0);
    // Every stage's and node's type by the alias "nvidia h800".
    QString aliased = made.out;
    aliased.replace(QStringLiteral("\"device_type\": \"H800\""), QStringLiteral("\"device_type\": \"nvidia h800\""));
    QVERIFY(aliased != made.out);
    const QString file = tmp.filePath("aliased.json");
    QVERIFY(writeFile(file, aliased.toUtf8()));
    const Run again = hapmoe({"estimate", "--plan", file, "--json"});
    QVERIFY2(again.exitCode == 0, qPrintable(again.err));
    QVERIFY2(!again.out.contains("nvidia h800"), qPrintable(again.out));
    const QJsonObject back = QJsonDocument::fromJson(again.out.toUtf8()).object();
    QCOMPARE(back["plan"].toObject()["stages"].toArray()[0].toObject()["device_type"].toString(), QStringLiteral("H800"));
    QCOMPARE(back["cluster"].toObject()["nodes"].toArray()[0].toObject()["device_type"].toString(), QStringLiteral("H800"));
    QCOMPARE(prediction(again)["iteration_time_s"].toDouble(), prediction(made)["iteration_time_s"].toDouble());
}

void tst_CliFoundation::interruptedSearchKeepsWhatItFound()
{
    // Ctrl-C (SIGINT) during a search stops it as the studio's Cancel does: the best plan so
    // far is printed and written with -o (its document says cancelled), and the exit status
    // is the signal's, 128 + 2. The exhaustive search of Mixtral-S on one node of 8 H100 runs
    // for minutes (docs/search.md), so it is still searching when the signal comes.
    QTemporaryDir tmp;
    const QString out = tmp.filePath("plan.json");
    QProcess p;
    p.start(QStringLiteral(HAPMOE_CLI_PATH), {"plan", "--model", "Mixtral-S", "--cluster", "H100:1x8", "--algorithm", "exhaustive", "-o", out});
    QVERIFY(p.waitForStarted(10000));
    QVERIFY(!p.waitForFinished(3000));   // still searching
    QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGINT), 0);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 128 + SIGINT);
    const QString stdOut = QString::fromUtf8(p.readAllStandardOutput()), stdErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(stdErr.contains("hapmoe plan: interrupted (SIGINT)"), qPrintable(stdErr));
    QVERIFY2(stdOut.contains("(interrupted: best plan so far)") || stdErr.contains("cancelled before it found a plan"), qPrintable(stdOut));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(doc.value("search").toObject().value("cancelled").toBool());
}

QTEST_GUILESS_MAIN(tst_CliFoundation)
#include "tst_CliFoundation.moc"
