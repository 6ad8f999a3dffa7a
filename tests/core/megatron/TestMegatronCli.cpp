// The hapmoe import, export and calibrate commands end to end: exit codes, files written
// atomically, refusals, and a host name that would run a command.

#include "MegatronTestUtil.h"

#include "io/Documents.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
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

QString fileText(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// The Mixtral 8x7B script with selective recompute and VPP 4 (2 layers a chunk at PP 4);
// empty when the script cannot be read or no longer has the lines replaced.
QString interleavedScript(const QTemporaryDir& dir)
{
    QFile in(data("train_mixtral_8x7b_distributed.sh"));
    if (!in.open(QIODevice::ReadOnly))
        return {};
    QString text = QString::fromUtf8(in.readAll());
    if (!text.contains("    --recompute-granularity full\n    --recompute-method uniform\n    --recompute-num-layers 1\n"))
        return {};
    text.replace("    --recompute-granularity full\n    --recompute-method uniform\n    --recompute-num-layers 1\n",
                 "    --recompute-granularity selective\n");
    text.replace("--pipeline-model-parallel-size 4", "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2");
    if (!test::writeText(dir.filePath("vpp.sh"), text.toStdString()))
        return {};
    return dir.filePath("vpp.sh");
}

} // namespace

class TestMegatronCli : public QObject {
    Q_OBJECT

private slots:
    void importScript()
    {
        QTemporaryDir dir;
        Run r = hapmoeCli({"import", data("train_gpt3_175b_distributed.sh")}, dir.path());
        QCOMPARE(r.code, 0);
        // GPT-3 is dense: no expert sizes (its plan has ETP 1, not Megatron's MoE default = TP).
        QVERIFY2(r.out.contains("parallel: TP8 PP16 CP1 VPP1"), qPrintable(r.out));
        QVERIFY(r.out.contains("world: 16 nodes x 8 processes = 128"));
        QVERIFY(r.out.contains("positional parameter $1"));
        r = hapmoeCli({"import", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8", "-o", "p.hapmoe"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(" EP8 ETP"), qPrintable(r.out));
        QVERIFY(r.out.contains("predicted iteration"));
        r = hapmoeCli({"validate", dir.filePath("p.hapmoe")}, dir.path());
        QCOMPARE(r.code, 0);
        test::writeText(dir.filePath("bad.sh"), "echo no launcher here\n");
        QCOMPARE(hapmoeCli({"import", dir.filePath("bad.sh")}, dir.path()).code, 2);
        // 12 layers over PP 8 on the one node of 8 the script starts (gpt-oss's example sets
        // PP to the world size): refused, and the message says where the world comes from,
        // with -o as without (the project would be on those nodes).
        test::writeText(dir.filePath("pp8.sh"),
                        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 12 --hidden-size 1024 --num-attention-heads 8 "
                        "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 16 "
                        "--pipeline-model-parallel-size 8 --bf16\n");
        for (const QStringList& extra : {QStringList{}, QStringList{"-o", "pp8.hapmoe"}}) {
            r = hapmoeCli(QStringList{"import", dir.filePath("pp8.sh")} + extra, dir.path());
            QCOMPARE(r.code, 2);
            QVERIFY2(r.out.contains("12 layers do not split evenly over PP 8 (the world is the 8 processes the script starts as read"),
                     qPrintable(r.out));
        }
        QVERIFY(!QFile::exists(dir.filePath("pp8.hapmoe")));
        QCOMPARE(hapmoeCli({"import", dir.filePath("missing.sh")}, dir.path()).code, 2);
    }

    void projectExportsIntoItsScript()
    {
        // A project imported from a script exports into it, as the studio's export does: the
        // original's entry and data flags stay (the benchmark launcher has mock data instead).
        QTemporaryDir dir;
        test::writeText(dir.filePath("train.sh"),
                        "torchrun --nproc_per_node 8 pretrain_qwen.py --num-layers 8 --hidden-size 1024 --num-attention-heads 8 "
                        "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 16 "
                        "--tensor-model-parallel-size 2 --sequence-parallel --bf16 --data-path /data/corpus_text_document\n");
        Run r = hapmoeCli({"import", "train.sh", "--cluster", "H800:1x8", "-o", "p.hapmoe"}, dir.path());
        QCOMPARE(r.code, 0);
        r = hapmoeCli({"export", "p.hapmoe", "--format", "megatron", "-o", "launch.sh"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("train.sh, the script the project was imported from"), qPrintable(r.out));
        const QString launcher = fileText(dir.filePath("launch.sh"));
        QVERIFY(launcher.contains("pretrain_qwen.py"));
        QVERIFY(launcher.contains("/data/corpus_text_document"));
        QVERIFY(!launcher.contains("--mock-data"));
        // Writing over that script is refused, and it is left as it was.
        const QString before = fileText(dir.filePath("train.sh"));
        r = hapmoeCli({"export", "p.hapmoe", "--format", "megatron", "-o", "train.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("-o: is the same file as the input the script the project was imported from ("), qPrintable(r.out));
        QCOMPARE(fileText(dir.filePath("train.sh")), before);
        r = hapmoeCli({"export", "p.hapmoe", "--format", "flagscale", "-o", "fs.sh", "--hostfile", "train.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("--hostfile: is the same file as the input the script the project was imported from ("), qPrintable(r.out));
        QCOMPARE(fileText(dir.filePath("train.sh")), before);
        // The project keeps the script's absolute path: an export from another folder finds it.
        QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
        r = hapmoeCli({"export", "../p.hapmoe", "--format", "megatron", "-o", "launch.sh"}, dir.filePath("elsewhere"));
        QCOMPARE(r.code, 0);
        QVERIFY(fileText(dir.filePath("elsewhere/launch.sh")).contains("pretrain_qwen.py"));
        // Gone, the launcher is a benchmark run, with a warning.
        QVERIFY(QFile::remove(dir.filePath("train.sh")));
        r = hapmoeCli({"export", "p.hapmoe", "--format", "megatron", "-o", "bench.sh"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("the script it was imported from no longer reads"), qPrintable(r.out));
        QVERIFY(fileText(dir.filePath("bench.sh")).contains("--mock-data"));
    }

    void flagscaleScriptNamesItsDevices()
    {
        // --hetero-device-types names the meshes' devices: without --cluster the project's
        // cluster is those meshes in nodes of the script's 8 processes (reference section 9's
        // example, H800 standing in for its A800). A label the catalog does not have is said,
        // with how to give it.
        QTemporaryDir dir;
        const std::string head = "torchrun --nnodes 2 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 32 "
                                 "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
                                 "--bf16 --untie-embeddings-and-output-weights --tensor-model-parallel-size 4 "
                                 "--pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16 --sequence-parallel "
                                 "--enable-hetero --hetero-pipeline-layer-split 18 14 --hetero-process-meshes 2 1 1 4 1 4 1 1 2 1 ";
        test::writeText(dir.filePath("fs.sh"), head + "--hetero-device-types H800 A100 --hetero-current-device-type H800\n");
        Run r = hapmoeCli({"import", "fs.sh", "-o", "fs.hapmoe"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("the project's cluster is the meshes' devices, H800:1x8,A100-80GB:1x8"), qPrintable(r.out));
        QVERIFY(r.out.contains("stage 1: A100-80GB, layers 18-31, 8 devices"));
        QVERIFY(!r.out.contains("does not say which devices"));
        test::writeText(dir.filePath("biv.sh"), head + "--hetero-device-types H800 BIV150S --hetero-current-device-type H800\n");
        r = hapmoeCli({"import", "biv.sh", "-o", "biv.hapmoe"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("give the cluster it runs on with --cluster (its meshes: H800:1x8,BIV150S:1x8), and the device "
                                "type BIV150S, which the catalog does not have, in a hapmoe.devices file with --devices"),
                 qPrintable(r.out));
        QVERIFY(!QFile::exists(dir.filePath("biv.hapmoe")));
    }

    void scriptArgumentsAndEnvironment()
    {
        QTemporaryDir dir;
        // The GPT-3 example takes its paths from $1 ... $5: given, they leave no warning.
        Run r = hapmoeCli({"import", data("train_gpt3_175b_distributed.sh"), "--script-args", "/ckpt /tb /v.json /m /d"},
                          dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(!r.out.contains("positional parameter"));
        // A script choosing its layers by an argument and its nodes by the environment.
        test::writeText(dir.filePath("pick.sh"),
                        "if [ \"$1\" = 70B ]; then L=80; else L=32; fi\n"
                        "torchrun --nnodes ${NNODES:-1} --nproc_per_node 8 pretrain_gpt.py --num-layers $L --hidden-size 4096 "
                        "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                        "--global-batch-size 64 --tensor-model-parallel-size 8 --bf16\n");
        r = hapmoeCli({"import", dir.filePath("pick.sh")}, dir.path());
        QVERIFY(r.out.contains("model: 32 layers"));
        QVERIFY(r.out.contains("the script's arguments are not given"));
        r = hapmoeCli({"import", dir.filePath("pick.sh"), "--script-args", "70B", "--script-env", "NNODES=2", "-o", "p.hapmoe"},
                      dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("model: 80 layers"));
        QVERIFY(r.out.contains("world: 2 nodes x 8 processes = 16"));
        QVERIFY(!r.out.contains("as read"));
        // The project keeps what the script was read with.
        const Project saved = readProject(readTextFile(dir.filePath("p.hapmoe").toStdString()), "p.hapmoe");
        QCOMPARE(saved.current_script_inputs.arguments, std::vector<std::string>{"70B"});
        QCOMPARE(saved.current_script_inputs.environment.at("NNODES"), std::string("2"));
        // estimate and plan take them with --script.
        r = hapmoeCli({"estimate", "--script", dir.filePath("pick.sh"), "--script-args", "70B", "--script-env", "NNODES=2",
                       "--cluster", "H100-SXM:2x8", "--json"},
                      dir.path());
        QVERIFY2(r.code == 0 || r.code == 1, qPrintable(r.out));
        QVERIFY(r.out.contains("\"num_layers\": 80"));
        // Refusals, exit code 2: a name that is no variable, an unterminated quote, an option
        // without the script it is for.
        r = hapmoeCli({"import", dir.filePath("pick.sh"), "--script-env", "1X=2"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.contains("--script-env"));
        QVERIFY(r.out.contains("\"1X=2\""));
        // A variable given twice, as any option given twice: the second would silently win.
        r = hapmoeCli({"import", dir.filePath("pick.sh"), "--script-env", "NNODES=2", "--script-env", "NNODES=4"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("--script-env: NNODES is given twice (NNODES=2, then NNODES=4); give each variable once"),
                 qPrintable(r.out));
        r = hapmoeCli({"import", dir.filePath("pick.sh"), "--script-args", "'70B"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.contains("unterminated single quote"));
        r = hapmoeCli({"estimate", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--script-args", "70B"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.contains("--script-args needs --script"));
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

    void scriptOverlapSwitches()
    {
        // The script's --overlap-grad-reduce and --overlap-param-gather hide its data-parallel
        // traffic; the same script without them (Megatron-LM's default) exposes it, and only
        // the data-parallel sync changes.
        QTemporaryDir dir;
        QFile in(data("train_mixtral_8x7b_distributed.sh"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(in.readAll());
        QVERIFY(text.contains("    --overlap-param-gather\n") && text.contains("    --overlap-grad-reduce\n"));
        text.remove("    --overlap-param-gather\n").remove("    --overlap-grad-reduce\n");
        QVERIFY(test::writeText(dir.filePath("plain.sh"), text.toStdString()));

        auto estimate = [&](const QString& script) {
            QProcess p;   // the document on stdout; the script's warnings go to stderr
            p.start(QStringLiteral(HAPMOE_CLI_PATH), {"estimate", "--script", script, "--cluster", "H800:4x8", "--json"});
            p.waitForFinished(120000);
            const PlanDocument d = readPlan(p.readAllStandardOutput().toStdString(), "estimate.json");
            return d.prediction.value_or(Prediction{});
        };
        const Prediction overlapped = estimate(data("train_mixtral_8x7b_distributed.sh"));
        const Prediction plain = estimate(dir.filePath("plain.sh"));
        QVERIFY(plain.breakdown.dp_sync > overlapped.breakdown.dp_sync);
        QCOMPARE(plain.breakdown.compute, overlapped.breakdown.compute);
        QCOMPARE(plain.iteration_time_s - plain.breakdown.dp_sync, overlapped.iteration_time_s - overlapped.breakdown.dp_sync);

        // The search compares plans with the traffic overlapped, as its exports run, and says so.
        const Run r = hapmoeCli({"plan", "--script", dir.filePath("plain.sh"), "--cluster", "H800:4x8", "--time-limit", "60"},
                                dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("without --overlap-grad-reduce the script does not overlap its data-parallel traffic"));

        // So with --fp8: the current configuration is costed in FP8 as the plans are, and the
        // warning says the script itself runs without it; with --gbs at the plans' global
        // batch, with a note.
        const std::pair<QStringList, const char*> overrides[] = {
            {{"--fp8", "hybrid"}, "the script runs without FP8; the plans and the current configuration are costed in FP8 (hybrid, "
                                  "delayed scaling), as --fp8 says"},
            {{"--gbs", "512"}, "note: the current configuration is costed at the plans' global batch, 512 sequences (it was set up "
                               "for 256)"}};
        for (const auto& [flags, said] : overrides) {
            const Run o = hapmoeCli(QStringList{"plan", "--script", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8",
                                                "--time-limit", "60"} + flags,
                                    dir.path());
            QVERIFY2(o.code == 0, qPrintable(o.out));
            QVERIFY2(o.out.contains(said), qPrintable(o.out));
        }

        // The prediction records the switches it assumed, and estimate --plan re-estimates a
        // plan file with them: the same figure as the script's own estimate.
        QVERIFY(!plain.overlap.grad_reduce && !plain.overlap.param_gather && overlapped.overlap.grad_reduce);
        {
            QProcess p;
            p.start(QStringLiteral(HAPMOE_CLI_PATH), {"estimate", "--script", dir.filePath("plain.sh"), "--cluster", "H800:4x8", "--json"});
            p.waitForFinished(120000);
            QVERIFY(test::writeText(dir.filePath("plain-plan.json"), p.readAllStandardOutput().toStdString()));
        }
        QProcess p;
        p.start(QStringLiteral(HAPMOE_CLI_PATH), {"estimate", "--plan", dir.filePath("plain-plan.json"), "--json"});
        p.waitForFinished(120000);
        const Prediction replanned = readPlan(p.readAllStandardOutput().toStdString(), "again.json").prediction.value_or(Prediction{});
        QCOMPARE(replanned.iteration_time_s, plain.iteration_time_s);
        QVERIFY(!replanned.overlap.grad_reduce);
        // The table for people names switches other than the flag form's defaults.
        const Run table = hapmoeCli({"estimate", "--plan", dir.filePath("plain-plan.json")}, dir.path());
        QVERIFY2(table.out.contains("overlap: no --overlap-grad-reduce, no --overlap-param-gather, no --tp-comm-overlap"),
                 qPrintable(table.out));
        QVERIFY(!hapmoeCli({"estimate", "--script", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8"}, dir.path())
                     .out.contains("overlap:"));

        // import prints the script as it runs and, when the overlap the exports switch on
        // changes it, that figure too; the project keeps the latter, which the searches and the
        // studio's What-if start from.
        const Run imp = hapmoeCli({"import", dir.filePath("plain.sh"), "--cluster", "H800:4x8", "-o", "plain.hapmoe"}, dir.path());
        QVERIFY2(imp.code == 0, qPrintable(imp.out));
        QVERIFY(imp.out.contains(QStringLiteral("predicted iteration %1 s").arg(plain.iteration_time_s, 0, 'f', 3)));
        QVERIFY(imp.out.contains(QStringLiteral("with the data-parallel overlap of exported scripts %1 s")
                                     .arg(overlapped.iteration_time_s, 0, 'f', 3)));
        const Project project = readProject(readTextFile(dir.filePath("plain.hapmoe").toStdString()), "plain.hapmoe");
        QCOMPARE(project.plans.size(), std::size_t(1));
        QVERIFY(project.plans.front().prediction.has_value());
        QCOMPARE(project.plans.front().prediction->iteration_time_s, overlapped.iteration_time_s);
        QVERIFY(project.plans.front().prediction->overlap.grad_reduce);
        // A script that overlaps already prints one figure.
        const Run same = hapmoeCli({"import", data("train_mixtral_8x7b_distributed.sh"), "--cluster", "H800:4x8"}, dir.path());
        QVERIFY(!same.out.contains("with the data-parallel overlap of exported scripts"));
    }

    void moeScriptWithTpGetsSequenceParallel()
    {
        // Megatron-Core's MoELayer.forward raises in training when TP > 1 and sequence
        // parallelism is off: a Mixtral script at TP 2 without --sequence-parallel is costed
        // with it, and the warning names the flag.
        QTemporaryDir dir;
        const std::string script = "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                   "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 "
                                   "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 "
                                   "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --bf16 "
                                   "--disable-bias-linear\n";
        QVERIFY(test::writeText(dir.filePath("moe.sh"), script));
        QProcess p;
        p.start(QStringLiteral(HAPMOE_CLI_PATH), {"estimate", "--script", dir.filePath("moe.sh"), "--cluster", "H800:2x8", "--json"});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("moe.sh: line 1: an MoE model with TP > 1 needs --sequence-parallel"), qPrintable(err));
        const PlanDocument d = readPlan(p.readAllStandardOutput().toStdString(), "estimate.json");
        QVERIFY(d.plan.sequence_parallel);
    }

    void currentConfigurationFasterThanThePlans()
    {
        // The search places plain 1F1B by default. A script that runs the best plain plan
        // interleaved beats every plan found, and the output says to keep it and how to let
        // the search try it. Mixtral 8x7B for Megatron-LM on 4 x 8 H800 (this cost model's
        // figures: the plan PP 8 at 4.826 s, interleaved at VPP 4 4.547 s): its launcher,
        // exported from "plan --max-vpp 4", is the current configuration of a plain search.
        QTemporaryDir dir;
        const Run found = hapmoeCli({"plan", "--model", "Mixtral-8x7B", "--cluster", "H800:4x8", "--target", "megatron",
                                     "--max-vpp", "4", "-o", "interleaved.json"},
                                    dir.path());
        QVERIFY2(found.code == 0, qPrintable(found.out));
        const Run e = hapmoeCli({"export", "interleaved.json", "--format", "megatron", "-o", "vpp.sh"}, dir.path());
        QVERIFY2(e.code == 0, qPrintable(e.out));
        const Run r = hapmoeCli({"plan", "--script", "vpp.sh", "--cluster", "H800:4x8", "--time-limit", "60"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const QRegularExpression plan(QStringLiteral("this plan +([0-9.]+) s")), current(QStringLiteral("current +([0-9.]+) s"));
        const double planTime = plan.match(r.out).captured(1).toDouble(), currentTime = current.match(r.out).captured(1).toDouble();
        QVERIFY2(planTime > 0 && currentTime > 0, qPrintable(r.out));
        QVERIFY2(currentTime < planTime, qPrintable(r.out));
        QVERIFY2(r.out.contains("note: the current configuration is faster than every plan found: keep it (its interleaved "
                                "schedule, VPP 4, is one the search did not try: set the maximum VPP to 4 to try it)"),
                 qPrintable(r.out));
    }

    void maxVppInterleavesThePlans()
    {
        // A script that interleaves (PP 4, VPP 4, selective recompute) planned with --max-vpp 4:
        // the plans found are tried at VPP 2 to 4, and the best is interleaved and faster than
        // both its plain form and the script (this cost model: PP 8, VPP 4 at 4.547 s, 4.826 s
        // plain, the script 5.498 s). Its time is the
        // one the exported launcher is estimated at when read back: the search costs the plan
        // the launcher runs (chunks, recompute, micro-batches).
        QTemporaryDir dir;
        const QString script = interleavedScript(dir);
        QVERIFY(!script.isEmpty());
        const Run r = hapmoeCli({"plan", "--script", script, "--cluster", "H800:4x8", "--max-vpp", "4", "-o", "plan.json"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("Interleaved 1F1B at VPP 2 to 4 (--max-vpp): the plan is faster interleaved."), qPrintable(r.out));
        const QRegularExpression header(QStringLiteral("HS-DP  \\(target megatron, PP ([0-9]+), VPP ([0-9]+),"));
        const QRegularExpressionMatch h = header.match(r.out);
        QVERIFY2(h.hasMatch(), qPrintable(r.out));
        QVERIFY(h.captured(2).toInt() >= 2 && h.captured(2).toInt() <= 4);
        const QRegularExpression plainTime(QStringLiteral("iteration ([0-9.]+) s,.*\\(([0-9.]+) s under plain 1F1B\\)"));
        const QRegularExpressionMatch t = plainTime.match(r.out);
        QVERIFY2(t.hasMatch(), qPrintable(r.out));
        const double planTime = t.captured(1).toDouble();
        QVERIFY(planTime < t.captured(2).toDouble());
        const double currentTime = QRegularExpression(QStringLiteral("current +([0-9.]+) s")).match(r.out).captured(1).toDouble();
        QVERIFY2(planTime > 0 && planTime < currentTime, qPrintable(r.out));
        QVERIFY(!r.out.contains("note: the current configuration is faster"));

        const Run e = hapmoeCli({"export", "plan.json", "--format", "megatron", "--script", script, "-o", "launch.sh"}, dir.path());
        QVERIFY2(e.code == 0, qPrintable(e.out));
        const Run back = hapmoeCli({"estimate", "--script", "launch.sh", "--cluster", "H800:4x8"}, dir.path());
        QVERIFY2(back.code == 0, qPrintable(back.out));
        QVERIFY2(back.out.contains(QStringLiteral("VPP %1,").arg(h.captured(2))), qPrintable(back.out));
        const double readBack = QRegularExpression(QStringLiteral("iteration ([0-9.]+) s")).match(back.out).captured(1).toDouble();
        QCOMPARE(readBack, planTime);

        // 0 and above 512 are refused, naming the flag.
        for (const char* bad : {"0", "513"}) {
            const Run b = hapmoeCli({"plan", "--script", script, "--cluster", "H800:4x8", "--max-vpp", bad}, dir.path());
            QCOMPARE(b.code, 2);
            QVERIFY2(b.out.contains("--max-vpp"), qPrintable(b.out));
        }
    }


    void flagscaleRoundTrip()
    {
        // A heterogeneous plan (H800 + 910B, TP/DP per mesh, full recompute on the 910B mesh)
        // exported for FlagScale and read back: "hapmoe import" shows its meshes, and
        // "hapmoe estimate --script" predicts the iteration "hapmoe estimate --plan" does.
        QTemporaryDir dir;
        const PlanDocument d = test::h800And910bPlan();
        QVERIFY(test::writeText(dir.filePath("plan.json"), writePlan(d)));
        Run r = hapmoeCli({"export", "plan.json", "--format", "flagscale", "-o", "launch.sh"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        r = hapmoeCli({"import", "launch.sh", "--cluster", "H800:2x8,910B:2x8"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("parallel: FlagScale heterogeneous, 2 meshes, PP4 (sum of the meshes' PP), no VPP, CPU communication\n"
                                "  mesh 0: 910B-376T, TP4 CP1 EP4 ETP2 DP2 PP2, micro-batch 2, stages 0-1, layers [6,6], recompute "
                                "full, full (3 layers)\n"
                                "  mesh 1: H800, TP2 CP1 EP4 ETP1 DP4 PP2, micro-batch 1, stages 2-3, layers [10,10], recompute none, "
                                "none\n"),
                 qPrintable(r.out));
        QVERIFY(!r.out.contains("not read"));
        QVERIFY(!r.out.contains("parallel: TP"));
        const QRegularExpression iteration(QStringLiteral("iteration ([0-9.]+) s"));
        r = hapmoeCli({"estimate", "--plan", "plan.json"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const QString planned = iteration.match(r.out).captured(1);
        r = hapmoeCli({"estimate", "--script", "launch.sh", "--cluster", "H800:2x8,910B:2x8"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const QString current = iteration.match(r.out).captured(1);
        QVERIFY2(!planned.isEmpty(), qPrintable(r.out));
        QCOMPARE(current, planned);
        // A broken mesh rule is an error naming the flag (exit code 2).
        QFile f(dir.filePath("launch.sh"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(f.readAll());
        f.close();
        QVERIFY(text.contains("--hetero-pipeline-layer-split 6 6 10 10"));
        text.replace("--hetero-pipeline-layer-split 6 6 10 10", "--hetero-pipeline-layer-split 6 6 10 9");
        QVERIFY(test::writeText(dir.filePath("bad.sh"), text.toStdString()));
        r = hapmoeCli({"import", "bad.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("bad.sh: --hetero-pipeline-layer-split: expected 4 layer counts (one per pipeline stage, the sum of "
                                "the meshes' PP) that sum to --num-layers 32, got 4 counts summing to 31: \"6 6 10 9\""),
                 qPrintable(r.out));
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
        // Imported again without --cluster, the launcher's NODE_TYPES give the project's
        // cluster (its H800 nodes), not the H100-SXM a script that does not say would get.
        QFile launcher(dir.filePath("launch.sh"));
        QVERIFY(launcher.open(QIODevice::ReadOnly));
        QVERIFY(launcher.readAll().contains("NODE_TYPES=( H800 H800 H800 H800 )   # device type of each node"));
        r = hapmoeCli({"import", "launch.sh", "-o", "again.hapmoe"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("the project's cluster is the script's NODE_TYPES, H800:4x8"), qPrintable(r.out));
        QVERIFY(!r.out.contains("does not say which devices it runs on"));
        // The original's own default port stays the launcher's (Megatron-LM's Mixtral example
        // writes MASTER_PORT=${MASTER_PORT:-"29500"}); --master-port gives another.
        QFile original(data("train_mixtral_8x7b_distributed.sh"));
        QVERIFY(original.open(QIODevice::ReadOnly));
        test::writeText(dir.filePath("port.sh"), original.readAll().replace("MASTER_PORT:-\"6000\"", "MASTER_PORT:-\"29500\"").toStdString());
        r = hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "megatron", "--script", "port.sh", "-o", "port-launch.sh"},
                      dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        auto launcherText = [&] {
            QFile f(dir.filePath("port-launch.sh"));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        QVERIFY(launcherText().contains("MASTER_PORT=\"${MASTER_PORT:-29500}\""));
        r = hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "megatron", "--script", "port.sh", "--master-port", "7000",
                       "-o", "port-launch.sh"},
                      dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(launcherText().contains("MASTER_PORT=\"${MASTER_PORT:-7000}\""));
        r = hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "flagscale", "-o", "fs.sh"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(QFile::exists(dir.filePath("fs.hostfile")));
        QCOMPARE(test::runBash({"-n", dir.filePath("fs.sh")}, dir.path()), 0);
        QCOMPARE(hapmoeCli({"export", data("mixtral_h800_plan.json"), "--format", "deepspeed"}, dir.path()).code, 2);
    }

    void rmsNormModelExportsRope()
    {
        // The reviewer's repro: LLaMA-2-7B (RMSNorm, rotary positions: no position table in the
        // cost model) must not get Megatron-LM's default learned_absolute table.
        QTemporaryDir dir;
        Run r = hapmoeCli({"estimate", "--model", "LLaMA-2-7B", "--cluster", "H100:1x8", "--tp", "2", "--json"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const int start = r.out.indexOf('{');
        QVERIFY(test::writeText(dir.filePath("ll.json"), r.out.mid(start, r.out.lastIndexOf('}') - start + 1).toStdString()));
        r = hapmoeCli({"export", "ll.json", "--format", "megatron", "-o", "ll.sh"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QFile f(dir.filePath("ll.sh"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray script = f.readAll();
        QVERIFY(script.contains("    --normalization RMSNorm\n    --position-embedding-type rope\n"));
    }

    void reviewFindings()
    {
        QTemporaryDir dir;
        // Usage errors carry "error:" like every other error of the tool.
        Run r = hapmoeCli({"estimate", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--tp", "abc"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("hapmoe estimate: error: --tp: expected an integer from 1 to "), qPrintable(r.out));
        r = hapmoeCli({"plan", "--model", "Mixtral-S", "--cluster", "H800:1x8", "--target", "x"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("hapmoe plan: error: --target: expected megatron, flagscale or any, got \"x\""), qPrintable(r.out));
        // Plain import: EP 4 over 6 experts, or EP 2 on a dense model, is a model Megatron-LM refuses.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                 "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
                                 "--bf16 --vocab-size 32000 --disable-bias-linear ";
        test::writeText(dir.filePath("ne.sh"), head + "--num-experts 6 --expert-model-parallel-size 4\n");
        test::writeText(dir.filePath("dense.sh"), head + "--expert-model-parallel-size 2\n");
        r = hapmoeCli({"import", "ne.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("hapmoe import: error: ne.sh: --expert-model-parallel-size: EP 4 does not divide the 6 experts"),
                 qPrintable(r.out));
        r = hapmoeCli({"import", "dense.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("dense.sh: --expert-model-parallel-size: EP 2 without --num-experts"), qPrintable(r.out));
        // A variable set on a command before the launch is not the launch's environment.
        test::writeText(dir.filePath("cvd.sh"), "CUDA_VISIBLE_DEVICES=0 python -c \"import torch\"\n" + head + "\n");
        r = hapmoeCli({"import", "cvd.sh"}, dir.path());
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.out.contains("CUDA_VISIBLE_DEVICES"), qPrintable(r.out));
    }

    void importFollowsFunctionCalls()
    {
        // The launch command inside a function, with the model's flags passed by the call (bash
        // runs torchrun ... pretrain_gpt.py --num-layers 32 ...), and the sequence length given
        // as --encoder-seq-length, Megatron-LM's other name for it.
        QTemporaryDir dir;
        QVERIFY(test::writeText(dir.filePath("run.sh"),
                                "run() { torchrun --nproc_per_node 8 pretrain_gpt.py \"$@\"; }; run --num-layers 32 --hidden-size 4096 "
                                "--num-attention-heads 32 --encoder-seq-length 4096 --max-position-embeddings 4096 "
                                "--micro-batch-size 1 --bf16 --vocab-size 32000\n"));
        Run r = hapmoeCli({"import", "run.sh"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("world: 1 nodes x 8 processes = 8"), qPrintable(r.out));
        QVERIFY2(r.out.contains("model: 32 layers, hidden 4096, FFN 16384, 32 heads, seq 4096"), qPrintable(r.out));
        // Defined but never called: bash runs no torchrun, and neither does the import.
        QVERIFY(test::writeText(dir.filePath("never.sh"), "run() { torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32; }\n"));
        r = hapmoeCli({"import", "never.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("never.sh: no launch command found") && r.out.contains("functions whose commands bash does not run: run (line 1, never called)"),
                 qPrintable(r.out));
    }

    void scriptSizesNameTheirFlag()
    {
        // 2 nodes x 8 = 16 ranks: only PP 5 (or only CP 3) is given, so that flag is named,
        // not --tensor-model-parallel-size.
        QTemporaryDir dir;
        const std::string head = "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 30 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --bf16 ";
        QVERIFY(test::writeText(dir.filePath("pp5.sh"), head + "--pipeline-model-parallel-size 5\n"));
        QVERIFY(test::writeText(dir.filePath("cp3.sh"), head + "--context-parallel-size 3\n"));
        QVERIFY(test::writeText(dir.filePath("tp2cp3.sh"), head + "--tensor-model-parallel-size 2 --context-parallel-size 3\n"));
        QVERIFY(test::writeText(dir.filePath("ep3.sh"), head + "--num-experts 6 --expert-model-parallel-size 3\n"));
        Run r = hapmoeCli({"estimate", "--script", "pp5.sh", "--cluster", "H800:2x8"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("pp5.sh: --pipeline-model-parallel-size: world size 16 is not divisible by TP*PP*CP = 5"), qPrintable(r.out));
        r = hapmoeCli({"estimate", "--script", "cp3.sh", "--cluster", "H800:2x8"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("cp3.sh: --context-parallel-size: world size 16 is not divisible by TP*PP*CP = 3"), qPrintable(r.out));
        r = hapmoeCli({"estimate", "--script", "tp2cp3.sh", "--cluster", "H800:2x8"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("--tensor-model-parallel-size/--context-parallel-size: world size 16 is not divisible by TP*PP*CP = 6"),
                 qPrintable(r.out));
        r = hapmoeCli({"estimate", "--script", "ep3.sh", "--cluster", "H800:2x8"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("ep3.sh: --expert-model-parallel-size: world size 16 is not divisible by ETP*EP*PP = 3"), qPrintable(r.out));
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
        QVERIFY(r.out.contains("measured 10234.7 ms"));   // median of intervals 2-5 (TestLogCalibration)
        QVERIFY2(r.out.contains(QStringLiteral("reproduces the logged 10234.7 ms: hapmoe estimate --plan %1 --profile profile.json")
                                    .arg(data("mixtral_h800_plan.json"))),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("predicted after"));
        QVERIFY(r.out.contains("router imbalance rho: 1.400"));
        // The efficiency before is the analytic default, which the line derives: H800's MAMF
        // fraction 0.803 (catalog) x 253.7/271.2 = 0.751.
        QVERIFY2(r.out.contains("(was 0.751, 0.935 x the catalog's 0.803: x"), qPrintable(r.out));
        QCOMPARE(hapmoeCli({"validate", dir.filePath("profile.json")}, dir.path()).code, 0);
        test::writeText(dir.filePath("empty.log"), "nothing\n");
        QCOMPARE(hapmoeCli({"calibrate", "--log", dir.filePath("empty.log"), "--plan", data("mixtral_h800_plan.json")}, dir.path()).code, 2);
    }

    void calibrateScalesTheBaseTablesOrFails()
    {
        // The profiler's table (12 / 24 ms per layer at 4096 tokens) is far slower than the
        // logged run: the written profile scales it, and estimate then gives the logged 10234.7 ms.
        QTemporaryDir dir;
        test::writeText(dir.filePath("base.json"),
                        R"({"format":"hapmoe.profile","version":1,"compute":[{"device_type":"H800","tp":1,"cp":1,"tokens":4096,)"
                        R"("dense_layer_fwd_s":0.012,"dense_layer_bwd_s":0.024,"ffn_fwd_s":0.008,"ffn_bwd_s":0.016}]})");
        Run r = hapmoeCli({"calibrate", "--log", data("train_mixtral_h800.log"), "--plan", data("mixtral_h800_plan.json"), "--profile",
                           "base.json", "-o", "cal.json"},
                          dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("predicted after  10234.7 ms"));
        r = hapmoeCli({"estimate", "--plan", data("mixtral_h800_plan.json"), "--profile", "cal.json"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("iteration 10.235 s"), qPrintable(r.out));
        // Two names of one device type in the base: refused as validate refuses them.
        test::writeText(dir.filePath("twice.json"),
                        R"({"format":"hapmoe.profile","version":1,"device_efficiency":{"H800":0.5,"h800":0.6}})");
        r = hapmoeCli({"calibrate", "--log", data("train_mixtral_h800.log"), "--plan", data("mixtral_h800_plan.json"), "--profile",
                       "twice.json"},
                      dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("names the same device type; expected one entry per type"), qPrintable(r.out));
        // 22 h per iteration: no efficiency reproduces it; exit 1, a warning, nothing written.
        QFile f(data("train_mixtral_h800.log"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray slow = f.readAll();
        for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
            slow.replace(v, "(ms): 80000000.0");
        test::writeText(dir.filePath("slow.log"), slow.toStdString());
        r = hapmoeCli({"calibrate", "--log", "slow.log", "--plan", data("mixtral_h800_plan.json"), "-o", "slow.json"}, dir.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("warning: the calibration failed: the run is slower than the model allows at 1/500 of the default "
                                "efficiency; no profile is written"),
                 qPrintable(r.out));
        QVERIFY(!QFile::exists(dir.filePath("slow.json")));
    }

    void scriptModelRefused()
    {
        // A script whose model Megatron-LM would refuse: exit 2 with the script and the flag,
        // from import (which writes nothing), estimate --script and plan --script.
        QTemporaryDir dir;
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --num-attention-heads 32 "
                                 "--seq-length 4096 --bf16 ";
        test::writeText(dir.filePath("nohidden.sh"), head + "\n");
        test::writeText(dir.filePath("nan.sh"), head + "--hidden-size nan\n");
        test::writeText(dir.filePath("topk.sh"), head + "--hidden-size 4096 --num-experts 8 --moe-router-topk 9\n");
        test::writeText(dir.filePath("gbs.sh"), head + "--hidden-size 4096 --global-batch-size 12 --micro-batch-size 2\n");
        const std::string interleaved = head + "--hidden-size 4096 --micro-batch-size 1 --tensor-model-parallel-size 2 "
                                               "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4 ";
        test::writeText(dir.filePath("vpp.sh"), interleaved + "--global-batch-size 24\n");
        test::writeText(dir.filePath("vpp22.sh"), interleaved + "--global-batch-size 22\n");
        struct Case {
            QStringList args;
            QString message;
        };
        const QList<Case> cases = {
            {{"import", "nohidden.sh", "-o", "p.hapmoe"},
             "hapmoe import: error: nohidden.sh: --hidden-size: missing: Megatron-LM needs it (a positive integer)"},
            {{"import", "nan.sh", "--cluster", "H800:1x8", "-o", "p.hapmoe"},
             "hapmoe import: error: nan.sh: --hidden-size: line 1: expected an integer from 1 to 100000000, got \"nan\""},
            {{"import", "topk.sh", "-o", "p.hapmoe"},
             "hapmoe import: error: topk.sh: --moe-router-topk: expected an integer in [1, num_experts = 8], got 9"},
            {{"estimate", "--script", "nan.sh", "--cluster", "H800:1x8"},
             "hapmoe estimate: error: nan.sh: --hidden-size: line 1: expected an integer from 1 to 100000000"},
            {{"estimate", "--script", "topk.sh", "--cluster", "H800:1x8"},
             "hapmoe estimate: error: topk.sh: --moe-router-topk: "},
            {{"plan", "--script", "nohidden.sh", "--cluster", "H800:1x8"},
             "hapmoe plan: error: nohidden.sh: --hidden-size: missing"},
            // 12 sequences on DP 8 x MBS 2: the plan's batch rule, named by the script and the flag.
            {{"import", "gbs.sh", "--cluster", "H800:1x8", "-o", "p.hapmoe"},
             "hapmoe import: error: gbs.sh: --global-batch-size (plan.global_batch_size): the script's configuration on "
             "H800:1x8: must be divisible by dp x micro_batch_size (16), got 12"},
            // TP 2 x PP 4 on 8 GPUs leaves DP 1: 24 micro-batches, 2 chunks of 4 layers per rank,
            // and 24 is a multiple of PP 4, so this one passes; 22 below is not (Megatron-LM's
            // interleaved schedule raises "number of microbatches ... is not divisible by
            // pipeline-model-parallel-size").
            {{"import", "vpp22.sh", "--cluster", "H800:1x8", "-o", "p.hapmoe"},
             "hapmoe import: error: vpp22.sh: --global-batch-size (plan.vpp): the script's configuration on H800:1x8: "
             "interleaved 1F1B (vpp 2) needs the micro-batches (22 = global_batch_size / (dp x micro_batch_size)) to be a "
             "multiple of the 4 pipeline stages; use vpp 1 or a global batch of a multiple of 4"},
        };
        for (const Case& c : cases) {
            const Run r = hapmoeCli(c.args, dir.path());
            QVERIFY2(r.code == 2, qPrintable(c.args.join(' ') + "\n" + r.out));
            QVERIFY2(r.out.contains(c.message), qPrintable(r.out));
        }
        QVERIFY(!QFile::exists(dir.filePath("p.hapmoe")));
        const Run vpp = hapmoeCli({"import", "vpp.sh", "--cluster", "H800:1x8", "-o", "vpp.hapmoe"}, dir.path());
        QVERIFY2(vpp.code == 0, qPrintable(vpp.out));
        QVERIFY(vpp.out.contains("VPP2"));
        // A process count torchrun cannot start is refused, naming the file and the option.
        test::writeText(dir.filePath("nproc.sh"), "torchrun --nproc_per_node 0 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                                                  "--num-attention-heads 2 --seq-length 128 --vocab-size 1000\n");
        const Run n = hapmoeCli({"import", "nproc.sh"}, dir.path());
        QCOMPARE(n.code, 2);
        QVERIFY2(n.out.contains("nproc.sh: --nproc_per_node: --nproc_per_node 0 starts no worker process"), qPrintable(n.out));
    }

    void exportLeavesNothingBehind()
    {
        // Every output path is checked before the first is written: a hostfile that cannot be
        // written leaves no launcher pointing at it.
        QTemporaryDir dir;
        const QString plan = data("mixtral_h800_plan.json");
        Run r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", "/nonexistent/h"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("hapmoe export: error: /nonexistent/h: --hostfile: the folder /nonexistent does not exist"),
                 qPrintable(r.out));
        QVERIFY(QDir(dir.path()).isEmpty());
        QVERIFY(QDir(dir.path()).mkdir("sub"));
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", "sub"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("sub: --hostfile: is a directory, expected a file"), qPrintable(r.out));
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", "e2.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("--hostfile: e2.sh is the launcher itself (-o)"), qPrintable(r.out));
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "/nonexistent/e.sh"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("/nonexistent/e.sh: -o: the folder /nonexistent does not exist"), qPrintable(r.out));
        r = hapmoeCli({"export", plan, "--format", "megatron", "--hostfile", "h"}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("--hostfile needs -o"), qPrintable(r.out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
        // A failure the checks cannot foresee (a file name longer than the file system takes)
        // undoes the launcher already saved: a new one is removed, an old one restored.
        const QString longName = QString(300, QLatin1Char('h'));
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", longName}, dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("cannot save " + longName), qPrintable(r.out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
        QVERIFY(test::writeText(dir.filePath("e2.sh"), "old launcher\n"));
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", longName}, dir.path());
        QCOMPARE(r.code, 2);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"e2.sh"});
        QCOMPARE(QString::fromStdString(readTextFile(dir.filePath("e2.sh").toStdString())), QStringLiteral("old launcher\n"));
        QVERIFY(QFile::remove(dir.filePath("e2.sh")));
        // The same with writable paths writes both.
        r = hapmoeCli({"export", plan, "--format", "flagscale", "-o", "e2.sh", "--hostfile", "sub/h"}, dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY(QFile::exists(dir.filePath("e2.sh")) && QFile::exists(dir.filePath("sub/h")));
    }

    void calibrateRefusesImpossibleLogs()
    {
        QTemporaryDir dir;
        QFile f(data("train_mixtral_h800.log"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray log = f.readAll();
        auto run = [&](const QByteArray& from, const QByteArray& to) {
            QByteArray text = log;
            text.replace(from, to);
            test::writeText(dir.filePath("run.log"), text.toStdString());
            return hapmoeCli({"calibrate", "--log", "run.log", "--plan", data("mixtral_h800_plan.json"), "-o", "profile.json"},
                             dir.path());
        };
        // Iteration 2 on line 16: 0, -5 and nan are invalid values, not a missing line.
        for (const char* v : {"0", "-5", "nan", "1e308"}) {
            const Run r = run("(ms): 10234.1", QByteArray("(ms): ") + v);
            QCOMPARE(r.code, 2);
            QVERIFY2(r.out.contains(QStringLiteral("run.log: line 16: elapsed time per iteration (ms): expected a positive number "
                                                   "of milliseconds, at most 86400000 (one day), got \"%1\"").arg(v)),
                     qPrintable(r.out));
            QVERIFY(!r.out.contains("not a Megatron-LM training log"));
        }
        Run r = run("(ms): 10234.1", "(ms): 0.001");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("run.log: line 16: elapsed time per iteration 0.001 ms is shorter than the "), qPrintable(r.out));
        r = run("max reserved: 43520.00", "max reserved: 99999999999");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("run.log: line 12: max reserved (MB): expected at most 81920.0"), qPrintable(r.out));
        // A 32-rank log against a plan of 16 devices (plan-valid.json).
        r = hapmoeCli({"calibrate", "--log", data("train_mixtral_h800.log"), "--plan",
                       QStringLiteral(HAPMOE_TEST_DATA_DIR) + "/foundation/plan-valid.json", "-o", "profile.json"},
                      dir.path());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.contains("train_mixtral_h800.log: line 1: the run has world size 32, the plan \"two stages on 16-1-h\" has "
                                "world size 16"),
                 qPrintable(r.out));
        QVERIFY(!QFile::exists(dir.filePath("profile.json")));
    }
};

QTEST_APPLESS_MAIN(TestMegatronCli)
#include "TestMegatronCli.moc"
