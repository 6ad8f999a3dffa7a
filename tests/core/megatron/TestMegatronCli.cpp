// The hapmoe import, export and calibrate commands end to end: exit codes, files written
// atomically, refusals, and a host name that would run a command.

#include "MegatronTestUtil.h"

#include <QFileInfo>
#include <QTest>

using namespace hapmoe;

namespace {

struct Run {
    int code = -1;
    QString out;
};

Run hapmoeCli(const QStringList& args, const QString& workDir)
{
    QProcess p;
    p.setWorkingDirectory(workDir);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(HAPMOE_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(120000))
        return r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAll());
    return r;
}

QString data(const char* name) { return QString::fromStdString(test::dataFile(name)); }

} // namespace

class TestMegatronCli : public QObject {
    Q_OBJECT

private slots:
    void importScript()
    {
        QTemporaryDir dir;
        Run r = hapmoeCli({"import", data("train_gpt3_175b_distributed.sh")}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("parallel: TP8 PP16 CP1"));
        QVERIFY(r.out.contains("world: 16 nodes x 8 processes = 128"));
        QVERIFY(r.out.contains("positional parameter $1"));
        r = hapmoeCli({"import", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8", "-o", "p.hapmoe"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("predicted iteration"));
        r = hapmoeCli({"validate", dir.filePath("p.hapmoe")}, dir.path());
        QCOMPARE(r.code, 0);
        test::writeText(dir.filePath("bad.sh"), "echo no launcher here\n");
        QCOMPARE(hapmoeCli({"import", dir.filePath("bad.sh")}, dir.path()).code, 2);
        QCOMPARE(hapmoeCli({"import", dir.filePath("missing.sh")}, dir.path()).code, 2);
    }

    void scriptOnEstimateAndPlan()
    {
        QTemporaryDir dir;
        // The script's own configuration (TP1 PP4 EP8 on 4 x 8) estimated on a cluster.
        Run r = hapmoeCli({"estimate", "--script", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("PP 4"));
        QVERIFY(r.out.contains("global batch 256"));
        // The search from the script's model prints the current configuration beside the best plan.
        r = hapmoeCli({"plan", "--script", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:2x8,A100-80GB:2x8",
                       "--time-limit", "60"},
                      dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("current"));
        QVERIFY(r.out.contains("this plan"));
    }

    void exportPlan()
    {
        QTemporaryDir dir;
        Run r = hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "megatron", "--script",
                           data("train_mixtral_8x7b_distributed.sh"), "-o", "launch.sh"},
                          dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(QFileInfo(dir.filePath("launch.sh")).isExecutable());
        QCOMPARE(test::runBash({"-n", dir.filePath("launch.sh")}, dir.path()), 0);
        QVERIFY(r.out.contains("node order"));
        r = hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "flagscale", "-o", "fs.sh"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(QFile::exists(dir.filePath("fs.hostfile")));
        QCOMPARE(test::runBash({"-n", dir.filePath("fs.sh")}, dir.path()), 0);
        QCOMPARE(hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "deepspeed"}, dir.path()).code, 2);
    }

    void hostileHostRefused()
    {
        QTemporaryDir dir;
        QFile f(data("mixtral_h800_plan.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray plan = f.readAll();
        const QByteArray marker = dir.filePath("PWNED").toUtf8();
        plan.replace("\"node1\"", "\"$(touch " + marker + ")\"");
        QVERIFY(test::writeText(dir.filePath("evil.json"), plan.toStdString()));
        const Run r = hapmoeCli({"export", dir.filePath("evil.json"), "--format", "megatron", "-o", "launch.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY(!QFile::exists(dir.filePath("launch.sh")));   // nothing half-written
        QVERIFY(!QFile::exists(QString::fromUtf8(marker)));
    }

    void calibrateLog()
    {
        QTemporaryDir dir;
        Run r = hapmoeCli({"calibrate", "--log", data("train_mixtral_h800.log"), "--plan", data("mixtral_h800_plan.json"), "-o",
                           "profile.json"},
                          dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("measured 10234.5 ms"));
        QVERIFY(r.out.contains("predicted after"));
        QVERIFY(r.out.contains("router imbalance rho: 1.400"));
        QCOMPARE(hapmoeCli({"validate", dir.filePath("profile.json")}, dir.path()).code, 0);
        test::writeText(dir.filePath("empty.log"), "nothing\n");
        QCOMPARE(hapmoeCli({"calibrate", "--log", dir.filePath("empty.log"), "--plan", data("mixtral_h800_plan.json")}, dir.path()).code, 2);
    }
};

QTEST_APPLESS_MAIN(TestMegatronCli)
#include "TestMegatronCli.moc"
