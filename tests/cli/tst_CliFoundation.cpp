// The hapmoe command line: presets lists what the product promises, validate accepts the
// shipped files, and every file of the bad-input corpus (tests/bad-input/expected.tsv)
// gives exit code 2 and a message naming the field.

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

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

} // namespace

class tst_CliFoundation : public QObject {
    Q_OBJECT
private slots:
    void helpAndVersion();
    void presetsListsPaperClusters();
    void presetsListsRequiredModels();
    void presetsListsDevices();
    void presetsRejectsUnknownKind();
    void validateShippedFiles();
    void validateSummary();
    void validateWarnsButPasses();
    void badInputCorpus_data();
    void badInputCorpus();
    void validateMissingFile();
    void validateMixedKeepsGoing();
    void repeatedOptionIsRefused();
    void numbersSayWhatIsExpected();
    void timeLimitBeyondMeaningIsNoLimit();
    void estimateNamesTheResponsibleFlag();
    void sequenceParallelWithoutTensorParallelIsOff();
    void estimateTargetsWhatCanRunIt();
    void planJsonWithoutFeasiblePlan();
    void notJsonAndDuplicateKeyPositions();
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
    QVERIFY(QRegularExpression("^H800\\s+NVIDIA\\s+989\\.0\\s+80\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
    QVERIFY(QRegularExpression("^910B-376T\\s+Huawei\\s+353\\.9\\s+64\\s", QRegularExpression::MultilineOption).match(r.out).hasMatch());
    const Run s = hapmoe({"presets", "devices", "--sources"});
    QVERIFY(s.out.contains("msmodeling"));
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
    QFile f(tmp.filePath("island.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format": "hapmoe.cluster", "version": 2, "nodes": [
        {"id": 0, "host": "a", "device_type": "H800", "count": 8}, {"id": 1, "host": "b", "device_type": "H800", "count": 8},
        {"id": 2, "host": "c", "device_type": "H800", "count": 8}],
        "switches": [{"id": 3}], "links": [{"a": 0, "b": 3, "bandwidth_gbytes_per_s": 400}, {"a": 1, "b": 3, "bandwidth_gbytes_per_s": 400}]})");
    f.close();
    const Run island = hapmoe({"validate", f.fileName()});
    QCOMPARE(island.exitCode, 0);
    QVERIFY(island.err.contains("has no link"));
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
}

void tst_CliFoundation::numbersSayWhatIsExpected()
{
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
    QVERIFY2(r.err.contains("--etp: EP*ETP = 3 does not divide the 16 devices of a stage"), qPrintable(r.err));
    // Two flags above 1 whose product (2 x 3 = 6) does not divide 16: both are named.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--tp", "2", "--pp", "3"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--tp/--pp: TP*CP*PP = 6 does not divide"), qPrintable(r.err));
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
    r = hapmoe({"export", f.fileName(), "--format", "flagscale", "-o", tmp.filePath("launch.sh")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(QFileInfo::exists(tmp.filePath("launch.sh")));
    r = hapmoe(args);
    QVERIFY2(r.out.contains("note: the plan's target is flagscale"), qPrintable(r.out));
    // One device type: Megatron-LM runs it, and the target stays megatron without a note.
    r = hapmoe({"estimate", "--model", "Mixtral-S", "--cluster", "H800:2x8", "--pp", "2", "--json"});
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["plan"].toObject()["target"].toString(), QStringLiteral("megatron"));
    QVERIFY(!r.err.contains("target"));
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
    // The document is refused where a plan is needed, with the reason.
    QTemporaryDir tmp;
    QFile f(tmp.filePath("none.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(r.out.toUtf8());
    f.close();
    const Run v = hapmoe({"validate", f.fileName()});
    QCOMPARE(v.exitCode, 2);
    QVERIFY2(v.err.contains("plan: the document holds no plan: the search found none (search.no_plan_reason: no plan fits"),
             qPrintable(v.err));
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
}

QTEST_GUILESS_MAIN(tst_CliFoundation)
#include "tst_CliFoundation.moc"
