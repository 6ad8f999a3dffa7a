// The "hapmoe estimate" command: output, JSON keys, trace, exit codes (0 fits, 1 a stage does
// not fit, 2 bad input).

#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

class TestEstimateCli : public QObject {
    Q_OBJECT
private:
    struct Run {
        int code = -1;
        QByteArray out, err;
    };
    static Run hapmoe(const QStringList& args)
    {
        QProcess p;
        p.start(QStringLiteral(HAPMOE_CLI_PATH), args);
        p.waitForFinished(60000);
        return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
    }

private slots:
    void flagFormTable()
    {
        const Run r = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:2x8", "--tp", "8", "--pp", "2", "--gbs",
                              "64", "--sequence-parallel", "--distributed-optimizer"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("iteration"));
        QVERIFY(r.out.contains("A100-80GB"));
        QVERIFY(r.out.contains("breakdown"));
    }

    void jsonHasThePredictionKeys()
    {
        QTemporaryDir dir;
        const QString trace = dir.filePath("trace.json");
        const Run r = hapmoe({"estimate", "--model", "mixtral-s", "--cluster", "16-1", "--tp", "8", "--pp", "2",
                              "--sequence-parallel", "--distributed-optimizer", "--recompute", "full", "--json", "--trace",
                              trace});
        QCOMPARE(r.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(doc.value("format").toString(), QString("hapmoe.plan"));
        const QJsonObject p = doc.value("prediction").toObject();
        for (const char* k : {"iteration_time_s", "tokens_per_s", "tflops_per_device", "mfu", "peak_memory_gib"})
            QVERIFY2(p.value(k).toDouble() > 0, k);
        const QJsonObject b = p.value("breakdown").toObject();
        for (const char* k : {"compute", "tensor_parallel", "expert_dispatch", "pipeline_bubble", "data_parallel_sync",
                              "optimizer"})
            QVERIFY2(b.contains(k), k);
        const QJsonArray stages = p.value("stages").toArray();
        QCOMPARE(stages.size(), 2);
        const QJsonObject mem = stages.at(1).toObject().value("memory_gib").toObject();
        for (const char* k : {"weights", "gradients", "optimizer", "activations", "moe_buffers", "overhead", "total", "capacity"})
            QVERIFY2(mem.contains(k), k);
        QCOMPARE(mem.value("capacity").toDouble(), 64.0);   // 910B-376T
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(f.readAll()).object().value("traceEvents").toArray().size() > 2 * 2 * 256);
    }

    void infeasibleExitsOne()
    {
        // LLaMA-2 7B unsharded on one 64 GB 910B: 18 B/param alone is 113 GiB.
        const Run r = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "910B:1x1", "--gbs", "4"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("stage 0 (910B-376T) needs"));
        QVERIFY(r.err.contains("short"));
        // With the optimizer in host memory 6 B/param stay (6.74e9 x 6 = 37.7 GiB) and the
        // activations of one 4096-token micro-batch fit in the rest.
        const Run off = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "910B:1x1", "--gbs", "4",
                                "--optimizer-cpu-offload"});
        QCOMPARE(off.code, 0);
        QVERIFY(off.out.contains("optimizer states: 100% in host memory"));
    }

    void badInputExitsTwo()
    {
        QCOMPARE(hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--tp", "3"}).code, 2);
        QCOMPARE(hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--recompute", "most"}).code, 2);
        QCOMPARE(hapmoe({"estimate", "--model", "no-such-model", "--cluster", "A100:1x8"}).code, 2);
        QCOMPARE(hapmoe({"estimate", "--cluster", "A100:1x8"}).code, 2);
        QCOMPARE(hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--optimizer-offload-fraction", "1.5"}).code, 2);
        QCOMPARE(hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:1x8", "--recompute-layers", "2"}).code, 2);
        const Run r = hapmoe({"estimate", "--plan", "/nonexistent/plan.json"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("plan.json"));
    }

    void planFileRoundTrip()
    {
        QTemporaryDir dir;
        const Run a = hapmoe({"estimate", "--model", "llama2-7b", "--cluster", "A100:2x8", "--tp", "4", "--pp", "2", "--gbs",
                              "64", "--json"});
        QCOMPARE(a.code, 0);
        QFile f(dir.filePath("plan.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(a.out);
        f.close();
        const Run b = hapmoe({"estimate", "--plan", f.fileName(), "--json"});
        QCOMPARE(b.code, 0);
        const double ta = QJsonDocument::fromJson(a.out).object()["prediction"].toObject()["iteration_time_s"].toDouble();
        const double tb = QJsonDocument::fromJson(b.out).object()["prediction"].toObject()["iteration_time_s"].toDouble();
        QCOMPARE(ta, tb);
    }
};

QTEST_GUILESS_MAIN(TestEstimateCli)
#include "tst_EstimateCli.moc"
