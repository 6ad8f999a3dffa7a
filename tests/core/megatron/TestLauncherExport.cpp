// Launcher export: the layout string, the Megatron-LM launcher (run with a stand-in torchrun
// that records its arguments), the export -> import round trip, bash -n, the FlagScale mesh
// list against the reference rules, refusals with the rule broken, hostile names and values.

#include "MegatronTestUtil.h"

#include "cost/CostModel.h"
#include "io/Presets.h"
#include "plan/Deployability.h"
#include "megatron/BashReader.h"
#include "megatron/FlagList.h"
#include "megatron/LauncherExport.h"
#include "megatron/MoeLayerPattern.h"
#include "megatron/PipelineLayout.h"
#include "megatron/ScriptImport.h"

#include <QTest>
#include <regex>
#include <set>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <set>

using namespace hapmoe;

namespace {

// Flags of a reference list file (one "--flag" per line, '#' comments).
std::set<std::string> referenceFlags(const std::string& name)
{
    std::set<std::string> flags;
    std::ifstream in(std::string(HAPMOE_SHARED_REFERENCE_DIR) + "/" + name);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("--", 0) != 0)
            continue;
        flags.insert(line.substr(0, line.find_first_of(" \t")));
    }
    return flags;
}

// Whether a warning of the import contains the text.
bool hasWarning(const ImportedScript& s, const std::string& text)
{
    return std::any_of(s.warnings.begin(), s.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// Whether a note of the export contains the text.
bool hasNote(const ExportResult& r, const std::string& text)
{
    return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// A plan on H800:2x8 + A100-80GB:2x8 with the A100 nodes first in the pipeline (so the node
// order differs from the cluster order) and the split [5,8,8,11].
PlanDocument megatronPlan()
{
    PlanDocument d;
    d.model = test::mixtral8x7b();
    d.cluster = test::cluster("H800:2x8,A100-80GB:2x8");
    const std::vector<int> ids = test::nodeIds(d.cluster);
    Plan& p = d.plan;
    p.name = "HS-DP #1";
    p.global_batch_size = 64;
    p.sequence_parallel = true;
    p.distributed_optimizer = true;
    const int split[4] = {5, 8, 8, 11};
    const int nodeOf[4] = {ids[2], ids[3], ids[0], ids[1]};
    int first = 0;
    for (int s = 0; s < 4; ++s) {
        // TP2 DP4 = 8 devices; EP4 ETP1 EDP2 (folding)
        StagePlan st = test::stageOn(d.cluster, {nodeOf[s]}, first, split[s], 2, 1, 4, 4, 1);
        st.recompute = Recompute::Full;
        st.recompute_layers = 2;
        first += split[s];
        p.stages.push_back(st);
    }
    return d;
}

// Three meshes: H800 (TP2 DP4 EP4, 2 stages), A100 (TP4 DP2 EP4 ETP2, 1 stage),
// 910B (TP2 DP4 EP4, 2 stages), on H800:2x8 + A100-80GB:1x8 + 910B:2x8.
PlanDocument flagscalePlan()
{
    PlanDocument d;
    d.model = test::mixtral8x7b();
    d.cluster = test::cluster("H800:2x8,A100-80GB:1x8,910B:2x8");
    const std::vector<int> ids = test::nodeIds(d.cluster);
    Plan& p = d.plan;
    p.name = "HS-DP hetero";
    p.global_batch_size = 64;
    p.target = Target::FlagScale;
    const int split[5] = {6, 7, 6, 6, 7};
    int first = 0;
    for (int s = 0; s < 5; ++s) {
        StagePlan st;
        if (s < 2)
            st = test::stageOn(d.cluster, {ids[static_cast<std::size_t>(s)]}, first, split[s], 2, 1, 4, 4, 1);
        else if (s == 2)
            st = test::stageOn(d.cluster, {ids[2]}, first, split[s], 4, 1, 2, 4, 2);
        else
            st = test::stageOn(d.cluster, {ids[static_cast<std::size_t>(s)]}, first, split[s], 2, 1, 4, 4, 1);
        // Mesh i runs MBS_i = DP0 * MBS0 / DP_i: the A100 mesh (DP2) gets 2.
        st.micro_batch_size = s == 2 ? 2 : 1;
        if (s >= 3)
            st.recompute = Recompute::Full;   // only the 910B mesh recomputes
        first += split[s];
        p.stages.push_back(st);
    }
    return d;
}

// The same plan with every node and stage on H800, where DeepEP runs (the flex dispatcher).
PlanDocument onH800(PlanDocument d)
{
    for (Node& n : d.cluster.nodes)
        n.device_type = "H800";
    for (StagePlan& st : d.plan.stages)
        st.device_type = "H800";
    return d;
}

// Stage by stage, what a launcher gives back of a plan.
void compareStages(const Plan& back, const Plan& plan)
{
    QCOMPARE(back.pp(), plan.pp());
    for (int i = 0; i < plan.pp(); ++i) {
        const StagePlan& a = plan.stages[static_cast<std::size_t>(i)];
        const StagePlan& b = back.stages[static_cast<std::size_t>(i)];
        QCOMPARE(b.device_type, a.device_type);
        QCOMPARE(b.first_layer, a.first_layer);
        QCOMPARE(b.num_layers, a.num_layers);
        QCOMPARE(b.tp, a.tp);
        QCOMPARE(b.cp, a.cp);
        QCOMPARE(b.dp, a.dp);
        QCOMPARE(b.ep, a.ep);
        QCOMPARE(b.etp, a.etp);
        QCOMPARE(b.edp, a.edp);
        QCOMPARE(b.micro_batch_size, a.micro_batch_size);
        QCOMPARE(b.recompute, a.recompute);
        QCOMPARE(b.recompute_layers, a.recompute_layers);
        QCOMPARE(b.devices.size(), a.devices.size());
        for (std::size_t k = 0; k < a.devices.size(); ++k) {
            QCOMPARE(b.devices[k].node, a.devices[k].node);
            QCOMPARE(b.devices[k].first_local, a.devices[k].first_local);
            QCOMPARE(b.devices[k].count, a.devices[k].count);
        }
    }
}

// A stand-in FlagScale source folder in dir: the FlagScale launcher checks that its entry
// FLAGSCALE_HOME/flagscale/train/train_gpt.py exists (FLAGSCALE_HOME defaults to the folder
// it runs from).
void fakeFlagScaleHome(const QTemporaryDir& dir)
{
    QDir().mkpath(dir.filePath("flagscale/train"));
    test::writeText(dir.filePath("flagscale/train/train_gpt.py"), "");
}

// The environment the launchers run in: this process's, without FLAGSCALE_HOME.
QProcessEnvironment launcherEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("FLAGSCALE_HOME");
    return env;
}

// Writes the launcher into dir, runs it for a node rank with a stand-in torchrun that
// writes CUDA_VISIBLE_DEVICES, PYTHONPATH and then one argument per line, and returns the
// lines (empty on failure). Without FLAGSCALE_HOME in the environment, dir holds a stand-in
// FlagScale entry.
std::vector<std::string> runLauncher(const QTemporaryDir& dir, const std::string& script, const QString& nodeRank,
                                     int* exitCode = nullptr, const QProcessEnvironment& baseEnv = launcherEnvironment(),
                                     QByteArray* output = nullptr)
{
    const QString bin = dir.filePath("bin");
    QDir().mkpath(bin);
    if (!baseEnv.contains("FLAGSCALE_HOME"))
        fakeFlagScaleHome(dir);
    test::writeText(bin + "/torchrun", "#!/bin/sh\n{ printf 'VISIBLE=%s\\n' \"${CUDA_VISIBLE_DEVICES:-}\"; printf 'PYTHONPATH=%s\\n' \"${PYTHONPATH:-}\"; "
                                       "for a in \"$@\"; do printf '%s\\n' \"$a\"; done; } > \"$ARGS_OUT\"\n");
    QFile::setPermissions(bin + "/torchrun", QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    test::writeText(dir.filePath("launch.sh"), script);
    QProcessEnvironment env = baseEnv;
    env.insert("PATH", bin + ":" + env.value("PATH"));
    env.insert("ARGS_OUT", dir.filePath("args.txt"));
    env.remove("NODE_RANK");
    env.remove("MASTER_ADDR");
    QFile::remove(dir.filePath("args.txt"));
    QStringList args{dir.filePath("launch.sh")};
    if (!nodeRank.isEmpty())
        args << nodeRank;
    const int rc = test::runBash(args, dir.path(), output, env);
    if (exitCode)
        *exitCode = rc;
    std::vector<std::string> out;
    QFile f(dir.filePath("args.txt"));
    if (rc != 0 || !f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray& line : f.readAll().split('\n'))
        out.push_back(line.toStdString());
    if (!out.empty() && out.back().empty())
        out.pop_back();
    return out;
}

std::vector<std::string> valuesAfter(const std::vector<std::string>& args, const std::string& flag)
{
    std::vector<std::string> values;
    auto it = std::find(args.begin(), args.end(), flag);
    if (it == args.end())
        return values;
    for (++it; it != args.end() && it->rfind("--", 0) != 0; ++it)
        values.push_back(*it);
    return values;
}

// The plan with its A100 stages on H20 (compute capability 9.0): a launcher carries FP8 flags
// only when every stage runs FP8 (Transformer Engine needs compute capability 8.9).
PlanDocument onFp8Devices(PlanDocument d)
{
    for (Node& n : d.cluster.nodes)
        if (n.device_type == "A100-80GB")
            n.device_type = "H20";
    for (StagePlan& st : d.plan.stages)
        if (st.device_type == "A100-80GB")
            st.device_type = "H20";
    return d;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// A launch of pretrain_gpt.py for megatronPlan()'s model (32 layers, h 4096), with more flags.
std::string gptLaunch(const std::string& more)
{
    return "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
           "--seq-length 4096 --max-position-embeddings 32768 --bf16" + more;
}

ExportOptions flagscaleOptions()
{
    ExportOptions o;
    o.format = LauncherFormat::FlagScale;
    return o;
}

} // namespace

class TestLauncherExport : public QObject {
    Q_OBJECT

private slots:
    void layoutString()
    {
        // [5,8,8,9] on PP=4 (reference section 4a: verified with Megatron's own parser).
        QCOMPARE(PipelineLayout::fromSplit({5, 8, 8, 9}, 1, false), std::string("Ettttt|tttttttt|tttttttt|tttttttttL"));
        QCOMPARE(PipelineLayout::fromSplit({5, 8, 8, 9}, 1, true), std::string("Et*5|t*8|t*8|t*9L"));
        for (const std::string layout : {"Ettttt|tttttttt|tttttttt|tttttttttL", "Et*5|t*8|t*8|t*9L"}) {
            std::vector<int> split;
            int vpp = 0, mtp = 0;
            std::string error;
            QVERIFY(PipelineLayout::parse(layout, 4, split, vpp, mtp, error));
            QCOMPARE(split, (std::vector<int>{5, 8, 8, 9}));
            QCOMPARE(vpp, 1);
        }
        // VPP2: stage i of the string is chunk i / PP of rank i % PP; rank 0's 5 layers
        // become 3 + 2, rank 3's 9 become 5 + 4.
        QCOMPARE(PipelineLayout::fromSplit({5, 8, 8, 9}, 2, true), std::string("Et*3|t*4|t*4|t*5|t*2|t*4|t*4|t*4L"));
        std::vector<int> split;
        int vpp = 0, mtp = 0;
        std::string error;
        QVERIFY(PipelineLayout::parse("Et*3|t*4|t*4|t*5|t*2|t*4|t*4|t*4L", 4, split, vpp, mtp, error));
        QCOMPARE(split, (std::vector<int>{5, 8, 8, 9}));
        QCOMPARE(vpp, 2);
        QVERIFY(!PipelineLayout::parse("tttt|ttttL", 2, split, vpp, mtp, error));   // no E
        QVERIFY(!PipelineLayout::parse("Et|t|tL", 2, split, vpp, mtp, error));      // 3 stages on PP2
        QVERIFY(!PipelineLayout::parse("Ex|tL", 2, split, vpp, mtp, error));
    }

    void megatronLauncher()
    {
        const PlanDocument d = megatronPlan();
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        // Node order: the A100 nodes (node2, node3) hold stages 0 and 1.
        QCOMPARE(r.node_order, (std::vector<std::string>{d.cluster.node(test::nodeIds(d.cluster)[2])->host,
                                                           d.cluster.node(test::nodeIds(d.cluster)[3])->host,
                                                           d.cluster.node(test::nodeIds(d.cluster)[0])->host,
                                                           d.cluster.node(test::nodeIds(d.cluster)[1])->host}));
        QVERIFY(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=1") != std::string::npos);   // TP 2
        QVERIFY(r.script.find("--pipeline-model-parallel-layout 'Et*5|t*8|t*8|t*11L'") != std::string::npos);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(test::runBash({"-n", dir.filePath("launch.sh")}, dir.path()), test::writeText(dir.filePath("launch.sh"), r.script) ? 0 : -2);
        const std::vector<std::string> args = runLauncher(dir, r.script, "2");
        QVERIFY(!args.empty());
        QCOMPARE(valuesAfter(args, "--node_rank"), std::vector<std::string>{"2"});
        QCOMPARE(valuesAfter(args, "--nnodes"), std::vector<std::string>{"4"});
        QCOMPARE(valuesAfter(args, "--nproc_per_node"), std::vector<std::string>{"8"});
        QCOMPARE(valuesAfter(args, "--master_addr"), std::vector<std::string>{r.node_order.front()});
        QCOMPARE(valuesAfter(args, "--pipeline-model-parallel-layout"), std::vector<std::string>{"Et*5|t*8|t*8|t*11L"});
        QCOMPARE(valuesAfter(args, "--tensor-model-parallel-size"), std::vector<std::string>{"2"});
        QCOMPARE(valuesAfter(args, "--expert-model-parallel-size"), std::vector<std::string>{"4"});
        QCOMPARE(valuesAfter(args, "--expert-tensor-parallel-size"), std::vector<std::string>{"1"});
        QCOMPARE(valuesAfter(args, "--recompute-method"), std::vector<std::string>{"block"});
        QCOMPARE(valuesAfter(args, "--recompute-num-layers"), std::vector<std::string>{"2"});
        QVERIFY(contains(args, "--use-distributed-optimizer"));
        QVERIFY(contains(args, "--sequence-parallel"));
        QVERIFY(contains(args, "--disable-bias-linear"));
        QVERIFY(contains(args, "--moe-grouped-gemm"));   // A100 and H800: compute capability 8.0 and 9.0
        // The prediction hides the data-parallel traffic (docs/cost-model.md section 7), which
        // Megatron-LM does only with these switches; the gather needs the distributed optimizer.
        QVERIFY(contains(args, "--overlap-grad-reduce"));
        QVERIFY(contains(args, "--overlap-param-gather"));
        // Every flag the launcher passes is an option of Megatron-LM (reference list).
        const std::set<std::string> known = referenceFlags("megatron-lm-flags.txt");
        QVERIFY(!known.empty());
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "pretrain_gpt.py") {
                for (std::size_t k = i + 1; k < args.size(); ++k)
                    if (args[k].rfind("--", 0) == 0)
                        QVERIFY2(known.count(args[k]), args[k].c_str());
                break;
            }
        }
        // Without a node rank the launcher stops with a usage message (exit 2).
        int rc = 0;
        runLauncher(dir, r.script, "", &rc);
        QCOMPARE(rc, 2);
        runLauncher(dir, r.script, "4", &rc);   // ranks are 0..3
        QCOMPARE(rc, 2);
        // A leading zero neither: bash reads 01 as 1 but 010 as octal 8, where torchrun reads
        // 10; "09" is no number to bash at all.
        for (const char* rank : {"01", "09", "00"}) {
            runLauncher(dir, r.script, rank, &rc);
            QVERIFY2(rc == 2, rank);
        }
        runLauncher(dir, r.script, "0", &rc);
        QCOMPARE(rc, 0);
    }

    void optimizerOffload()
    {
        // The plan's offload brings Megatron-Core's flags (cpu_offloading/README.md, with
        // --use-precision-aware-optimizer, which validate_args asserts); an original script's
        // offload is not carried over to a plan that keeps the optimizer on the devices.
        PlanDocument d = megatronPlan();
        d.plan.optimizer_offload_fraction = 0.5;
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--optimizer-cpu-offload"));
        QCOMPARE(valuesAfter(args, "--optimizer-offload-fraction"), std::vector<std::string>{"0.5"});
        QVERIFY(contains(args, "--use-precision-aware-optimizer"));
        QVERIFY(contains(args, "--overlap-cpu-optimizer-d2h-h2d"));

        d.plan.optimizer_offload_fraction = 0.0;
        ExportOptions o;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --optimizer-cpu-offload "
            "--optimizer-offload-fraction 1.0 --overlap-cpu-optimizer-d2h-h2d --use-precision-aware-optimizer\n",
            "offload.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--optimizer-cpu-offload"));
        QVERIFY(!contains(args, "--optimizer-offload-fraction"));
        QVERIFY(!contains(args, "--overlap-cpu-optimizer-d2h-h2d"));
        QVERIFY(contains(args, "--use-precision-aware-optimizer"));   // harmless on its own: kept
        QVERIFY(hasNote(r, "--optimizer-cpu-offload: not carried over (the plan keeps the optimizer on the devices)"));
        // Without the distributed optimizer the reduction still overlaps, the gather does not exist.
        d.plan.distributed_optimizer = false;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-grad-reduce"));
        QVERIFY(!contains(args, "--overlap-param-gather"));
        d.plan.distributed_optimizer = true;
    }

    void idleDevices()
    {
        // The plan uses devices 4-7 of every node: torchrun starts 4 processes per node and
        // the launcher makes only those devices visible.
        PlanDocument d = megatronPlan();
        for (auto& st : d.plan.stages) {
            st.devices.front().first_local = 4;
            st.devices.front().count = 4;
            st.tp = 2; st.dp = 2; st.ep = 4; st.etp = 1; st.edp = 1;
        }
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        const std::vector<std::string> args = runLauncher(dir, r.script, "1");
        QVERIFY(!args.empty());
        QCOMPARE(args.front(), std::string("VISIBLE=4,5,6,7"));
        QCOMPARE(valuesAfter(args, "--nproc_per_node"), std::vector<std::string>{"4"});
    }

    void moeLayerPattern()
    {
        // DeepSeek-V3's first 3 dense layers then 58 MoE layers (reference section 7).
        std::vector<std::uint8_t> p;
        QVERIFY(MoeLayerPattern::parse("([0]*3+[1]*58)", p));
        QCOMPARE(p.size(), std::size_t(61));
        QCOMPARE(MoeLayerPattern::expression(p), std::string("([0]*3+[1]*58)"));
        QVERIFY(MoeLayerPattern::parse("[1,0,1, 0]", p));
        QCOMPARE(p, (std::vector<std::uint8_t>{1, 0, 1, 0}));
        QVERIFY(!MoeLayerPattern::parse("[2]*3", p));
        QVERIFY(!MoeLayerPattern::parse("([0]*3+", p));
        // A pattern goes out as one quoted token and comes back.
        PlanDocument d = megatronPlan();
        d.model.moe_layer_pattern.assign(32, 1);
        d.model.moe_layer_pattern[0] = 0;
        d.model.moe_layer_pattern[1] = 0;
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--moe-layer-freq"), std::vector<std::string>{"([0]*2+[1]*30)"});
        const ImportedScript s = importMegatronScript(r.script, "p.sh");
        QCOMPARE(s.model.moe_layer_pattern, d.model.moe_layer_pattern);
    }

    void multiLatentAttention()
    {
        // Megatron-LM's MLA flags (arguments.py _add_mla_args) as the model gives them; no
        // --q-lora-rank for a query projected from the hidden state (its None) and no GQA flags;
        // read back the same, with the DeepSeek-V3 recipe's mla_up_proj recompute.
        PlanDocument d = megatronPlan();
        d.model.multi_latent_attention = true;
        d.model.q_lora_rank = 0;
        d.model.kv_lora_rank = 512;
        d.model.qk_head_dim = 128;
        d.model.qk_pos_emb_head_dim = 64;
        d.model.v_head_dim = 96;
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::Selective;
            st.recompute_layers = 0;
            st.recompute_modules = recompute_module::mla_up_proj;
        }
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--multi-latent-attention"));
        QVERIFY(!contains(args, "--q-lora-rank"));
        QVERIFY(!contains(args, "--group-query-attention"));
        QCOMPARE(valuesAfter(args, "--kv-lora-rank"), std::vector<std::string>{"512"});
        QCOMPARE(valuesAfter(args, "--qk-head-dim"), std::vector<std::string>{"128"});
        QCOMPARE(valuesAfter(args, "--qk-pos-emb-head-dim"), std::vector<std::string>{"64"});
        QCOMPARE(valuesAfter(args, "--v-head-dim"), std::vector<std::string>{"96"});
        QCOMPARE(valuesAfter(args, "--recompute-modules"), std::vector<std::string>{"mla_up_proj"});
        const ImportedScript s = importMegatronScript(r.script, "mla.sh");
        QVERIFY(s.model.multi_latent_attention);
        QCOMPARE(s.model.q_lora_rank, 0);
        QCOMPARE(s.model.kv_lora_rank, 512);
        QCOMPARE(s.model.v_head_dim, 96);
        const Plan back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        for (const StagePlan& st : back.stages)
            QCOMPARE(st.recompute_modules, recompute_module::mla_up_proj);

        // DeepSeek-V3's router recipe (the model's fields, Megatron-LM's --moe-router-* flags):
        // written where not the default, read back. Mixtral's 8 experts here: 2 of 4 groups.
        d.model.moe_router_score_function = RouterScore::Sigmoid;
        d.model.moe_router_enable_expert_bias = true;
        d.model.moe_router_num_groups = 4;
        d.model.moe_router_group_topk = 2;
        d.model.moe_router_topk_scaling_factor = 2.5;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--moe-router-score-function"), std::vector<std::string>{"sigmoid"});
        QVERIFY(contains(args, "--moe-router-enable-expert-bias"));
        QCOMPARE(valuesAfter(args, "--moe-router-num-groups"), std::vector<std::string>{"4"});
        QCOMPARE(valuesAfter(args, "--moe-router-group-topk"), std::vector<std::string>{"2"});
        QCOMPARE(valuesAfter(args, "--moe-router-topk-scaling-factor"), std::vector<std::string>{"2.5"});
        const ImportedScript routed = importMegatronScript(r.script, "router.sh");
        QCOMPARE(routed.model.moe_router_score_function, RouterScore::Sigmoid);
        QVERIFY(routed.model.moe_router_enable_expert_bias);
        QCOMPARE(routed.model.moe_router_num_groups, 4);
        QCOMPARE(routed.model.moe_router_group_topk, 2);
        QCOMPARE(routed.model.moe_router_topk_scaling_factor, 2.5);

        // A query latent is written.
        d.model.q_lora_rank = 1536;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--q-lora-rank"), std::vector<std::string>{"1536"});

        // Without MLA, mla_up_proj is refused as Megatron-Core's TransformerConfig refuses it.
        d.model.multi_latent_attention = false;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("mla_up_proj recompute in a model without multi-latent attention") != std::string::npos,
                 r.refusal.c_str());
    }

    void recomputeModulesRoundTrip()
    {
        // Megatron-Core's --recompute-modules (TransformerConfig, d98e8a64): the plan's modules are
        // written in Megatron-Core's order, and read back the same.
        PlanDocument d = megatronPlan();
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::Selective;
            st.recompute_layers = 0;
            st.recompute_modules = recompute_module::layernorm | recompute_module::moe_act;
        }
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--recompute-granularity"), std::vector<std::string>{"selective"});
        QCOMPARE(valuesAfter(args, "--recompute-modules"), (std::vector<std::string>{"moe_act", "layernorm"}));
        // moe_act is recomputed only in grouped GEMM ("moe_act in recompute_modules is only
        // supported with moe_grouped_gemm").
        QVERIFY(contains(args, "--moe-grouped-gemm"));
        const ImportedScript s = importMegatronScript(r.script, "rm.sh");
        const Plan back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        for (const StagePlan& st : back.stages)
            QCOMPARE(st.recompute_modules, recompute_module::layernorm | recompute_module::moe_act);

        // Megatron-Core's default alone is not written.
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = recompute_module::defaults;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(!contains(runLauncher(dir, r.script, "0"), "--recompute-modules"));

        // An original's list keeps the modules the model does not know (mhc, which d98e8a64
        // accepts), the plan's taking the place of the others.
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = recompute_module::moe;
        ExportOptions o;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --enable-mhc-connections "
            "--recompute-granularity selective --recompute-modules core_attn mhc\n",
            "orig.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QCOMPARE(valuesAfter(runLauncher(dir, r.script, "0"), "--recompute-modules"), (std::vector<std::string>{"moe", "mhc"}));

        // A plan whose selective recompute has no module the model knows (an import of
        // --recompute-modules mhc) is written with the original's list where the target takes it:
        // Megatron-LM d98e8a64 does, FlagScale's 8479eb35 does not, and an empty list would say
        // Megatron-Core's default instead.
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = 0;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --enable-mhc-connections --recompute-granularity selective "
            "--recompute-modules mhc\n",
            "mhc.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QCOMPARE(valuesAfter(runLauncher(dir, r.script, "0"), "--recompute-modules"), std::vector<std::string>{"mhc"});
        QVERIFY(r.script.find("recompute selective (no module)") != std::string::npos);
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("the plan's selective recompute has no module") != std::string::npos, r.refusal.c_str());

        // One setting for every stage.
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = recompute_module::moe;
        d.plan.stages.back().recompute_modules = recompute_module::moe_act;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("--recompute-modules is one setting for every stage") != std::string::npos, r.refusal.c_str());

        // FP8 with delayed scaling refuses moe_act and layernorm recompute (TransformerConfig:
        // "Delayed scaling does not support moe_act and layernorm recompute for fp8").
        d = onFp8Devices(d);
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = recompute_module::moe_act;
        d.model.training.fp8_format = Fp8Format::Hybrid;
        d.model.training.fp8_recipe = Fp8Recipe::Delayed;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("Delayed scaling does not support moe_act and layernorm recompute") != std::string::npos,
                 r.refusal.c_str());
        d.model.training.fp8_recipe = Fp8Recipe::Tensorwise;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
    }

    void roundTrip()
    {
        const PlanDocument d = megatronPlan();
        const ExportResult r = exportLauncher(d, {});
        QVERIFY(r.ok);
        const ImportedScript s = importMegatronScript(r.script, "launch.sh");
        const Plan back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        QCOMPARE(back.pp(), d.plan.pp());
        QCOMPARE(back.global_batch_size, d.plan.global_batch_size);
        QCOMPARE(back.vpp, d.plan.vpp);
        QCOMPARE(back.sequence_parallel, d.plan.sequence_parallel);
        QCOMPARE(back.distributed_optimizer, d.plan.distributed_optimizer);
        compareStages(back, d.plan);
        if (QTest::currentTestFailed())
            return;
        // The model comes back too.
        QCOMPARE(s.model.num_layers, d.model.num_layers);
        QCOMPARE(s.model.ffn_hidden_size, d.model.ffn_hidden_size);
        QCOMPARE(s.model.num_query_groups, d.model.num_query_groups);
        QCOMPARE(s.model.num_experts, d.model.num_experts);
        QCOMPARE(s.model.vocab_size, d.model.vocab_size);
        QCOMPARE(s.model.untie_embeddings_and_output_weights, d.model.untie_embeddings_and_output_weights);
        QVERIFY(!s.model.qk_layernorm);
        // Query and key norms (Qwen3) go out as --qk-layernorm and come back.
        PlanDocument qk = d;
        qk.model.qk_layernorm = true;
        const ExportResult rq = exportLauncher(qk, {});
        QVERIFY(rq.ok);
        QVERIFY(rq.script.find("--qk-layernorm") != std::string::npos);
        QVERIFY(importMegatronScript(rq.script, "qk.sh").model.qk_layernorm);
        // The dropouts: Megatron-LM's 0.1 needs no flag; others go out and come back.
        QVERIFY(r.script.find("-dropout") == std::string::npos);
        QCOMPARE(s.model.attention_dropout, 0.1);
        PlanDocument dropout = d;
        dropout.model.attention_dropout = 0.0;
        dropout.model.hidden_dropout = 0.125;
        const ExportResult rdo = exportLauncher(dropout, {});
        QVERIFY(rdo.ok);
        QVERIFY(rdo.script.find("--attention-dropout 0.0\n") != std::string::npos);
        QVERIFY(rdo.script.find("--hidden-dropout 0.125\n") != std::string::npos);
        const ModelSpec dropoutBack = importMegatronScript(rdo.script, "dropout.sh").model;
        QCOMPARE(dropoutBack.attention_dropout, 0.0);
        QCOMPARE(dropoutBack.hidden_dropout, 0.125);
        // The cross-entropy's kernels go out as --cross-entropy-loss-fusion (and the
        // implementation when it is not the default) and come back.
        QVERIFY(r.script.find("--cross-entropy") == std::string::npos);
        PlanDocument fused = d;
        fused.model.training.cross_entropy_loss_fusion = true;
        fused.model.training.cross_entropy_fusion_impl = CrossEntropyFusionImpl::TE;
        // Megatron-LM d98e8a64 refuses Transformer Engine's (validate_args), so a Megatron-LM
        // launcher runs the native fusion; FlagScale's Megatron-LM 8479eb35 runs it.
        const ExportResult rce = exportLauncher(fused, {});
        QVERIFY(rce.ok);
        QVERIFY(rce.script.find("--cross-entropy-loss-fusion\n") != std::string::npos);
        QVERIFY(rce.script.find("--cross-entropy-fusion-impl native\n") != std::string::npos);
        const TrainingSpec fusedBack = importMegatronScript(rce.script, "ce.sh").model.training;
        QVERIFY(fusedBack.cross_entropy_loss_fusion);
        QCOMPARE(fusedBack.cross_entropy_fusion_impl, CrossEntropyFusionImpl::Native);
        ExportOptions fsFused;
        fsFused.format = LauncherFormat::FlagScale;
        const ExportResult rceFs = exportLauncher(fused, fsFused);
        QVERIFY2(rceFs.ok, rceFs.refusal.c_str());
        QVERIFY(rceFs.script.find("--cross-entropy-fusion-impl te\n") != std::string::npos);
        QCOMPARE(importMegatronScript(rceFs.script, "ce-fs.sh").model.training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::TE);
        // Defaults an original script spells out are spelled out again.
        ExportOptions spelled;
        spelled.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --bf16 --micro-batch-size 1 --attention-dropout 0.1 "
            "--hidden-dropout 0.1 --cross-entropy-loss-fusion --cross-entropy-fusion-impl native\n",
            "spelled.sh");
        PlanDocument native = d;
        native.model.training.cross_entropy_loss_fusion = true;
        const ExportResult rs = exportLauncher(native, spelled);
        QVERIFY2(rs.ok, rs.refusal.c_str());
        QVERIFY(rs.script.find("--attention-dropout 0.1\n") != std::string::npos);
        QVERIFY(rs.script.find("--hidden-dropout 0.1\n") != std::string::npos);
        QVERIFY(rs.script.find("--cross-entropy-fusion-impl native\n") != std::string::npos);
        // The vocabulary padding multiple: Megatron-LM's 128 needs no flag; another goes out as
        // --make-vocab-size-divisible-by and comes back.
        QVERIFY(r.script.find("--make-vocab-size-divisible-by") == std::string::npos);
        QCOMPARE(s.model.make_vocab_size_divisible_by, 128);
        PlanDocument pad = d;
        pad.model.make_vocab_size_divisible_by = 64;
        const ExportResult rp = exportLauncher(pad, {});
        QVERIFY(rp.ok);
        QVERIFY(rp.script.find("--make-vocab-size-divisible-by 64") != std::string::npos);
        QCOMPARE(importMegatronScript(rp.script, "pad.sh").model.make_vocab_size_divisible_by, 64);
        // An original's other multiple is replaced by the plan model's, and the notes say so.
        ExportOptions withPad;
        withPad.original = importMegatronScript(rp.script, "pad.sh");
        const ExportResult rd = exportLauncher(d, withPad);
        QVERIFY2(rd.ok, rd.refusal.c_str());
        QVERIFY(rd.script.find("--make-vocab-size-divisible-by 128") != std::string::npos);
        QVERIFY(hasNote(rd, "--make-vocab-size-divisible-by 64 -> 128 (the plan's)"));
        // --padded-vocab-size states the vocabulary, which Megatron-LM does not pad: the import
        // takes it with a multiple of 1, and the export writes no multiple beside it.
        const std::string padded = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                   "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --bf16 "
                                   "--make-vocab-size-divisible-by 128 --padded-vocab-size 201088\n";
        const ImportedScript ps = importMegatronScript(padded, "padded.sh");
        // With --padded-vocab-size, --vocab-size is the tokenizer's: carried over as it is.
        ExportOptions tokenizer;
        tokenizer.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                                  "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --bf16 "
                                                  "--vocab-size 50257 --padded-vocab-size 50304 --tokenizer-type NullTokenizer\n",
                                                  "tok.sh");
        PlanDocument gpt2 = d;
        QCOMPARE(tokenizer.original->model.vocab_size, 50304);
        gpt2.model.vocab_size = tokenizer.original->model.vocab_size;
        gpt2.model.make_vocab_size_divisible_by = tokenizer.original->model.make_vocab_size_divisible_by;
        const ExportResult rt = exportLauncher(gpt2, tokenizer);
        QVERIFY2(rt.ok, rt.refusal.c_str());
        QVERIFY(rt.script.find("--vocab-size 50257") != std::string::npos);
        QVERIFY(rt.script.find("--padded-vocab-size 50304") != std::string::npos);
        QVERIFY(!hasNote(rt, "--vocab-size"));
        QCOMPARE(ps.model.vocab_size, 201088);
        QCOMPARE(ps.model.make_vocab_size_divisible_by, 1);
        QCOMPARE(importMegatronScript("torchrun pretrain_gpt.py --vocab-size 50257 --no-pad-vocab-size\n", "np.sh")
                     .model.make_vocab_size_divisible_by, 1);
        ExportOptions withPadded;
        withPadded.original = ps;
        PlanDocument gptOss = d;
        gptOss.model.vocab_size = 201088;
        gptOss.model.make_vocab_size_divisible_by = 1;
        const ExportResult rv = exportLauncher(gptOss, withPadded);
        QVERIFY2(rv.ok, rv.refusal.c_str());
        QVERIFY(rv.script.find("--padded-vocab-size 201088") != std::string::npos);
        QVERIFY(rv.script.find("--make-vocab-size-divisible-by 1\n") == std::string::npos);
        QVERIFY(!hasNote(rv, "--make-vocab-size-divisible-by"));
        // Another vocabulary in the plan's model replaces the original's, padded as the plan
        // was costed: a multiple of 128 x TP.
        const ExportResult rw = exportLauncher(d, withPadded);
        QVERIFY2(rw.ok, rw.refusal.c_str());
        const int tp = d.plan.stages.front().tp;
        const long long expected = (d.model.vocab_size + 128LL * tp - 1) / (128LL * tp) * (128LL * tp);
        QVERIFY(rw.script.find("--padded-vocab-size " + std::to_string(expected)) != std::string::npos);
        QVERIFY(hasNote(rw, "--padded-vocab-size: the original's 201088 is replaced by the plan model's " + std::to_string(expected)));

        // With the original script: its data, logging and checkpoint flags are carried over,
        // and the round trip still gives the plan.
        ExportOptions o;
        o.original = importMegatronScriptFile(test::dataFile("train_mixtral_8x7b_distributed.sh"));
        const ExportResult r2 = exportLauncher(d, o);
        QVERIFY2(r2.ok, r2.refusal.c_str());
        const ImportedScript s2 = importMegatronScript(r2.script, "launch2.sh");
        const Plan back2 = planFromScript(s2, d.cluster, DeviceCatalog::builtin());
        for (int i = 0; i < d.plan.pp(); ++i)
            QCOMPARE(back2.stages[static_cast<std::size_t>(i)].num_layers, d.plan.stages[static_cast<std::size_t>(i)].num_layers);
        bool save = false;
        for (const ScriptFlag& f : s2.other_flags)
            if (f.name == "--save" && f.values == std::vector<std::string>{"/checkpoints/mixtral-8x7b"}) save = true;
        QVERIFY(save);
        // The original's overlap switches are the plan's own: written once, not twice.
        QCOMPARE(std::count(s2.given_flags.begin(), s2.given_flags.end(), std::string("--overlap-grad-reduce")), 1);
        int gatherFlags = 0;
        for (const ScriptFlag& f : s2.other_flags)
            gatherFlags += f.name == "--overlap-param-gather";
        QCOMPARE(gatherFlags, 1);
        QVERIFY(s2.parallel.overlap_grad_reduce && s2.parallel.overlap_param_gather);
        QTemporaryDir dir;
        QVERIFY(test::writeText(dir.filePath("l.sh"), r2.script));
        QCOMPARE(test::runBash({"-n", dir.filePath("l.sh")}, dir.path()), 0);
    }

    void positionEmbedding()
    {
        // Megatron-LM's --position-embedding-type defaults to learned_absolute (reference
        // megatron-lm-flags-detailed.tsv), a table of max_position_embeddings x hidden
        // parameters. The cost model gives RMSNorm models rotary positions and LayerNorm models
        // the learned table (docs/cost-model.md section 1), so the launcher says rope for the
        // first and leaves Megatron's default for the second.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PlanDocument d = megatronPlan();   // Mixtral 8x7B: RMSNorm
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--position-embedding-type"), std::vector<std::string>{"rope"});
        // Export -> import: the flag is read back as a carried-over flag without a warning,
        // and the model is the same RMSNorm model.
        const ImportedScript s = importMegatronScript(r.script, "launch.sh");
        QCOMPARE(s.model.normalization, std::string("RMSNorm"));
        bool rope = false;
        for (const ScriptFlag& f : s.other_flags)
            rope = rope || (f.name == "--position-embedding-type" && f.values == std::vector<std::string>{"rope"});
        QVERIFY(rope);
        for (const std::string& w : s.warnings)
            QVERIFY2(w.find("position") == std::string::npos, w.c_str());
        // Exported again with that script as the original: rope once, no note.
        ExportOptions o;
        o.original = s;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(std::count(args.begin(), args.end(), std::string("--position-embedding-type")), 1);
        QVERIFY(!hasNote(r, "--position-embedding-type"));

        // A LayerNorm (GPT-style) model keeps Megatron's learned positions: no flag.
        d.model.normalization = "LayerNorm";
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--position-embedding-type") == std::string::npos);

        // The original's choice is kept; one that disagrees with the costed model is noted.
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 ";
        d.model.normalization = "RMSNorm";
        o.original = importMegatronScript(head + "--position-embedding-type learned_absolute\n", "a.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--position-embedding-type"), std::vector<std::string>{"learned_absolute"});
        QVERIFY(hasNote(r, "--position-embedding-type: the original's learned_absolute is kept, but the plan was costed for RMSNorm "
                           "with rotary positions (no position table)"));
        o.original = importMegatronScript(head + "--use-rotary-position-embeddings\n", "b.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--use-rotary-position-embeddings"));
        QVERIFY(!contains(args, "--position-embedding-type"));
        QVERIFY(!hasNote(r, "--position-embedding-type"));
    }

    void fp8OnlyWhereEveryStageRunsIt()
    {
        // The plan's model decides FP8: --fp8-format is written from it, and the original's other
        // FP8 flags are carried over only with it. Transformer Engine's check_fp8_support:
        // "Device compute capability 8.9 or higher required for FP8 execution", so an FP8 plan
        // with A100 stages (8.0) is refused; on H20 (9.0) it runs.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ExportOptions o;
        o.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                          "--fp8-format hybrid --fp8-amax-history-len 1024\n",
                                          "fp8.sh");
        QCOMPARE(o.original->model.training.fp8_format, Fp8Format::Hybrid);
        // A bf16 plan: neither flag.
        ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--fp8-format") && !contains(args, "--fp8-amax-history-len"));
        QVERIFY(hasNote(r, "--fp8-format -> not written (the plan's model runs its GEMMs in bf16, not FP8)"));
        QVERIFY(hasNote(r, "--fp8-amax-history-len: not carried over (the plan's model does not train in FP8 (no --fp8-format))"));
        // An FP8 plan with A100 stages cannot run.
        PlanDocument fp8 = megatronPlan();
        fp8.model.training.fp8_format = Fp8Format::Hybrid;
        r = exportLauncher(fp8, o);
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("compute capability 8.0 (Transformer Engine runs FP8 on 8.9 or higher)") != std::string::npos,
                 r.refusal.c_str());
        // On H20 it does, with the original's FP8 tuning.
        r = exportLauncher(onFp8Devices(fp8), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--fp8-format"), std::vector<std::string>{"hybrid"});
        QCOMPARE(valuesAfter(args, "--fp8-amax-history-len"), std::vector<std::string>{"1024"});
        // A script that did not train in FP8 gets --fp8-format from an FP8 plan.
        o.original = importMegatronScript(gptLaunch("\n"), "bf16.sh");
        r = exportLauncher(onFp8Devices(fp8), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QCOMPARE(valuesAfter(runLauncher(dir, r.script, "0"), "--fp8-format"), std::vector<std::string>{"hybrid"});
    }

    void topOneRoutingGetsPreSoftmax()
    {
        // Megatron-Core's TransformerConfig raises "Please use --moe-router-pre-softmax when topk
        // is 1" for softmax scores without Sinkhorn balancing: the launcher of a top-1 model
        // writes the switch, and says so.
        PlanDocument d = megatronPlan();
        d.model.moe_router_topk = 1;
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("    --moe-router-topk 1\n    --moe-router-pre-softmax\n") != std::string::npos);
        QVERIFY(hasNote(r, "--moe-router-pre-softmax: written, as Megatron-LM needs it for top-1 routing"));
        d.model.moe_router_topk = 2;
        QVERIFY(exportLauncher(d, {}).script.find("--moe-router-pre-softmax") == std::string::npos);
    }

    void gradientPrecisionIsWrittenWhereNotTheDefault()
    {
        // The plan was costed with the model's gradient precision (docs/cost-model.md 5.1):
        // the launcher writes the switch that gives it when it is not Megatron-LM's default
        // for the precision (fp32 for bf16, half for fp16), and nothing otherwise.
        PlanDocument d = megatronPlan();
        QVERIFY(d.model.training.precision == Precision::BF16);
        auto script = [&] {
            const ExportResult r = exportLauncher(d, {});
            return r.ok ? r.script : r.refusal;
        };
        QVERIFY(script().find("--grad-reduce-in-bf16") == std::string::npos);
        QVERIFY(script().find("--accumulate-allreduce-grads-in-fp32") == std::string::npos);
        d.model.training.accumulate_allreduce_grads_in_fp32 = false;
        QVERIFY(script().find("    --bf16\n    --grad-reduce-in-bf16\n") != std::string::npos);
        d.model.training.precision = Precision::FP16;
        d.model.training.accumulate_allreduce_grads_in_fp32.reset();
        QVERIFY(script().find("    --fp16\n") != std::string::npos);
        QVERIFY(script().find("--accumulate-allreduce-grads-in-fp32") == std::string::npos);
        d.model.training.accumulate_allreduce_grads_in_fp32 = true;
        QVERIFY(script().find("    --fp16\n    --accumulate-allreduce-grads-in-fp32\n") != std::string::npos);
    }

    void rampUpFollowsTheMicroBatchStep()
    {
        // Megatron-Core's RampupBatchsizeNumMicroBatchesCalculator asserts every batch of the
        // ramp is a multiple of MBS x DP. The plan (MBS 1, DP 4: a step of 4) keeps a ramp from
        // 8 by 4 and drops one from 2 by 2.
        PlanDocument d = megatronPlan();
        const int step = d.plan.global_batch_size / d.plan.numMicrobatches();
        QCOMPARE(step, 4);
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 ";
        ExportOptions o;
        o.original = importMegatronScript(head + "--rampup-batch-size 8 4 100000\n", "ramp.sh");
        QVERIFY(hasWarning(*o.original, "--rampup-batch-size is not modelled"));
        ExportResult r = exportLauncher(d, o);
        QVERIFY(r.script.find("--rampup-batch-size 8 4 100000") != std::string::npos);
        o.original = importMegatronScript(head + "--rampup-batch-size 2 2 100000\n", "ramp.sh");
        r = exportLauncher(d, o);
        QVERIFY(r.script.find("    --rampup-batch-size") == std::string::npos);
        QVERIFY(hasNote(r, "--rampup-batch-size: not carried over (every batch of the ramp must be a multiple of the plan's "
                           "micro-batch step MBS x DP = 4"));
        // The ramp must also reach the plan's global batch: from 8 by 16 it passes 64 (the
        // plan's GBS) without meeting it, which Megatron-Core asserts against.
        QCOMPARE(d.plan.global_batch_size, 64);
        o.original = importMegatronScript(head + "--rampup-batch-size 8 16 100000\n", "ramp.sh");
        r = exportLauncher(d, o);
        QVERIFY(r.script.find("    --rampup-batch-size") == std::string::npos);
        QVERIFY(hasNote(r, "--rampup-batch-size: not carried over (the ramp from 8 by 16 does not reach the plan's global batch 64"));
    }

    void environmentWordsStaySplit()
    {
        // `--lr 1e-4 $EXTRA_ARGS` in the original: bash splits the variable into arguments,
        // none when it is unset. The launcher writes it unquoted (${EXTRA_ARGS:-}), so
        // EXTRA_ARGS="--seed 7 --clip-grad 1.0" reaches torchrun as four arguments and an unset
        // one as none; quoted, it had been one argument "--seed 7 --clip-grad 1.0" (or an empty
        // one), which Megatron-LM's argparse refuses.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PlanDocument d = megatronPlan();
        ExportOptions o;
        o.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                          "--lr 1e-4 $EXTRA_ARGS\n",
                                          "extra.sh");
        const ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("\n    ${EXTRA_ARGS:-}\n") != std::string::npos);
        QVERIFY(hasNote(r, "${EXTRA_ARGS}: carried over unquoted"));
        QProcessEnvironment env = launcherEnvironment();
        env.remove("EXTRA_ARGS");
        std::vector<std::string> args = runLauncher(dir, r.script, "0", nullptr, env);
        QCOMPARE(valuesAfter(args, "--lr"), std::vector<std::string>{"1e-4"});
        QVERIFY(!contains(args, ""));
        env.insert("EXTRA_ARGS", "--seed 7 --clip-grad 1.0");
        args = runLauncher(dir, r.script, "0", nullptr, env);
        QCOMPARE(valuesAfter(args, "--seed"), std::vector<std::string>{"7"});
        QCOMPARE(valuesAfter(args, "--clip-grad"), std::vector<std::string>{"1.0"});
    }

    void replacedValuesAreNamed()
    {
        // The plan (TP2 PP4 EP4 ETP1, block recompute of 2 layers, GBS 64, SP) rewrites the
        // original's parallel flags; each changed one gets a header line with both values.
        const std::string script = "torchrun --nproc_per_node=8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                   "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                   "--num-experts 8 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
                                   "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
                                   "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
                                   "--micro-batch-size 1 --global-batch-size 64 --sequence-parallel\n";
        ExportOptions o;
        o.original = importMegatronScript(script, "orig.sh");
        PlanDocument d = megatronPlan();
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "--expert-model-parallel-size 8 -> 4 (the plan's)"));
        QVERIFY(hasNote(r, "--recompute-method uniform -> block (the plan's)"));
        // Unchanged values (TP 2, PP 4, ETP 1, full, MBS 1, GBS 64, SP) get no line.
        for (const char* same : {"--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--expert-tensor-parallel-size",
                                 "--recompute-granularity", "--micro-batch-size", "--global-batch-size", "--sequence-parallel"})
            QVERIFY2(!hasNote(r, std::string(same) + " "), same);
        QVERIFY(r.script.find("\n# --expert-model-parallel-size 8 -> 4 (the plan's)\n") != std::string::npos);

        // Without SP and recompute in the plan: the original's switches are named as not written.
        // The plan's model is then dense (EP 1): an MoE model with TP > 1 needs sequence
        // parallelism (deploymentProblems, moe.tp-needs-sp).
        d.plan.sequence_parallel = false;
        d.model.num_experts = 0;
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::None;
            st.recompute_layers = 0;
            st.ep = 1;
            st.edp = st.tp * st.cp * st.dp;
        }
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "--sequence-parallel -> not written (the plan has no sequence parallelism)"));
        QVERIFY(hasNote(r, "--recompute-granularity full -> not written (the plan's recompute is none)"));
        QVERIFY(hasNote(r, "--recompute-method uniform -> not written (the plan's recompute is none)"));
        QVERIFY(hasNote(r, "--recompute-num-layers 1 -> not written (the plan's recompute is none)"));
        // The deprecated --model-parallel-size (Megatron-LM asserts it is unset) is named too.
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --num-experts 8 --model-parallel-size 4\n",
            "alias.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "--model-parallel-size -> not written (deprecated, Megatron-LM asserts it is unset; the plan's "
                           "--tensor-model-parallel-size is 2)"));
    }

    void environmentDefaultsStayOverridable()
    {
        // NAME=${NAME:-4} lets the environment override the value; the launcher keeps that form
        // (for a plain default) and writes other exports with their value.
        ExportOptions o;
        o.original = importMegatronScript("export NCCL_IB_QPS_PER_CONNECTION=${NCCL_IB_QPS_PER_CONNECTION:-4}\n"
                                          "export NCCL_IB_TIMEOUT=\"${NCCL_IB_TIMEOUT:=22}\"\n"
                                          "export FIXED_VALUE=7\n"
                                          "export OTHER_DEFAULT=${SOMETHING_ELSE:-5}\n"
                                          "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16\n",
                                          "env.sh");
        QCOMPARE(o.original->environment_raw.at("NCCL_IB_QPS_PER_CONNECTION"), std::string("${NCCL_IB_QPS_PER_CONNECTION:-4}"));
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("export NCCL_IB_QPS_PER_CONNECTION=\"${NCCL_IB_QPS_PER_CONNECTION:-4}\"") != std::string::npos);
        QVERIFY(r.script.find("export NCCL_IB_TIMEOUT=\"${NCCL_IB_TIMEOUT:-22}\"") != std::string::npos);
        QVERIFY(r.script.find("export FIXED_VALUE=7 ") != std::string::npos);
        QVERIFY(r.script.find("export OTHER_DEFAULT=5 ") != std::string::npos);   // another variable's default: the value
        // Run: the environment's value wins, and without one the default applies.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString launcher = QString::fromStdString(r.script);
        launcher.replace(QStringLiteral("torchrun "), QStringLiteral("echo \"QPS=${NCCL_IB_QPS_PER_CONNECTION}\" > \"$ARGS_OUT\"; true "));
        QVERIFY(test::writeText(dir.filePath("env.sh"), launcher.toStdString()));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("ARGS_OUT", dir.filePath("out.txt"));
        env.insert("NCCL_IB_QPS_PER_CONNECTION", "8");
        QCOMPARE(test::runBash({dir.filePath("env.sh"), "0"}, dir.path(), nullptr, env), 0);
        QFile out(dir.filePath("out.txt"));
        QVERIFY(out.open(QIODevice::ReadOnly));
        QCOMPARE(out.readAll().trimmed(), QByteArray("QPS=8"));
        out.close();
        env.remove("NCCL_IB_QPS_PER_CONNECTION");
        QCOMPARE(test::runBash({dir.filePath("env.sh"), "0"}, dir.path(), nullptr, env), 0);
        QVERIFY(out.open(QIODevice::ReadOnly));
        QCOMPARE(out.readAll().trimmed(), QByteArray("QPS=4"));
    }

    void environmentCommandsAreNotRun()
    {
        // The launcher runs no command of the original's: $(pwd) is bash's ${PWD}, the folder
        // it starts in; a variable whose value runs another command ($(...) or backticks) is
        // written as a comment and left to the environment, with a note, not exported as the
        // command's text (NCCL would look for an interface named "$(ls ...)").
        ExportOptions o;
        o.original = importMegatronScript("export PYTHONPATH=$(pwd)/megatron\n"
                                          "export NCCL_SOCKET_IFNAME=$(ls /sys/class/net | head -1)\n"
                                          "export STAMP=`date +%s`\n"
                                          "export LAYERS=$((2 * 16))\n"
                                          "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16\n",
                                          "cmd.sh");
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("export PYTHONPATH=\"${PWD}/megatron\"   # from cmd.sh") != std::string::npos);
        QVERIFY(r.script.find("\n# NCCL_SOCKET_IFNAME is left to the environment: the original runs a command for it, "
                              "export NCCL_SOCKET_IFNAME=$(ls /sys/class/net | head -1)") != std::string::npos);
        QVERIFY(r.script.find("\n# STAMP is left to the environment") != std::string::npos);
        QVERIFY(r.script.find("export LAYERS=32 ") != std::string::npos);   // arithmetic, evaluated by the reader
        QVERIFY(r.script.find("\nexport NCCL_SOCKET_IFNAME=") == std::string::npos);
        QVERIFY(r.script.find("PWD?") == std::string::npos);   // bash always sets PWD: no check for it
        QVERIFY(hasNote(r, "left to the environment (the original runs a command for them, which the launcher does not): "
                           "NCCL_SOCKET_IFNAME, STAMP"));
        // Run: PYTHONPATH is the launcher's folder's, and the environment's interface stands.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString launcher = QString::fromStdString(r.script);
        launcher.replace(QStringLiteral("torchrun "),
                         QStringLiteral("echo \"${PYTHONPATH} ${NCCL_SOCKET_IFNAME}\" > \"$ARGS_OUT\"; true "));
        QVERIFY(test::writeText(dir.filePath("cmd.sh"), launcher.toStdString()));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("ARGS_OUT", dir.filePath("out.txt"));
        env.insert("NCCL_SOCKET_IFNAME", "ib0");
        QCOMPARE(test::runBash({dir.filePath("cmd.sh"), "0"}, dir.path(), nullptr, env), 0);
        QFile out(dir.filePath("out.txt"));
        QVERIFY(out.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(out.readAll().trimmed()), QDir(dir.path()).canonicalPath() + QStringLiteral("/megatron ib0"));

        // A Megatron-LM launcher from a FlagScale script leaves FlagScale's PYTHONPATH (its own
        // Megatron-LM) behind, with a note; the FlagScale launcher writes its own.
        ExportOptions fs;
        fs.original = importMegatronScript("export PYTHONPATH=$(pwd):$(pwd)/third_party/Megatron-LM\n"
                                           "torchrun --nproc_per_node=8 flagscale/train/train_gpt.py --num-layers 32 "
                                           "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                           "--max-position-embeddings 32768 --bf16\n",
                                           "fs.sh");
        const ExportResult m = exportLauncher(megatronPlan(), fs);
        QVERIFY2(m.ok, m.refusal.c_str());
        QVERIFY(m.script.find("export PYTHONPATH=") == std::string::npos);
        QVERIFY(hasNote(m, "PYTHONPATH: the original's $(pwd):$(pwd)/third_party/Megatron-LM (FlagScale's) is not carried over"));
    }

    void environmentDefaultsAreNamed()
    {
        // The original takes its paths from its environment with defaults of its own
        // (DATA_HOME=${DATA_HOME:-/data/mix}, ${CKPT_DIR:-/ckpt/run1}) through arrays and
        // variables, and more arguments from ${MORE_ARGS:-}, empty when read. The launcher keeps
        // each hook where one value comes from one variable ("${DATA_HOME:-/data/mix}/train"),
        // and a note names them with their flags (not the other words of the same array:
        // --split); a value it cannot keep so (a string of flags bash splits) is written as
        // read and named apart, and so is the default that gave no words.
        ExportOptions o;
        o.original = importMegatronScript(
            "DATA_HOME=${DATA_HOME:-/data/mix}\n"
            "CKPT=${CKPT_DIR:-/ckpt/run1}\n"
            "MODEL=( --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
            "--max-position-embeddings 32768 --bf16 )\n"
            "DATA=( --data-path $DATA_HOME/train_text_document --split 949,50,1 )\n"
            "LOGS=\"--tensorboard-dir ${TB_DIR:-/logs/tb} --log-timers-to-tensorboard\"\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py \"${MODEL[@]}\" \"${DATA[@]}\" --save $CKPT --load $CKPT "
            "--log-interval ${LOG_INTERVAL:-10} --eval-iters 10 $LOGS ${MORE_ARGS:-}\n",
            "defaults.sh");
        const ImportedScript& s = *o.original;
        QCOMPARE(s.environment_defaults.at("DATA_HOME"), std::vector<std::string>{"/data/mix"});
        QCOMPARE(s.environment_defaults.at("MORE_ARGS"), std::vector<std::string>{""});
        QCOMPARE(s.vanished_environment_reads, std::vector<std::string>{"MORE_ARGS"});
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY2(r.script.find("--data-path \"${DATA_HOME:-/data/mix}/train_text_document\"") != std::string::npos, r.script.c_str());
        QVERIFY(r.script.find("--save \"${CKPT_DIR:-/ckpt/run1}\"") != std::string::npos);
        QVERIFY(r.script.find("--log-interval \"${LOG_INTERVAL:-10}\"") != std::string::npos);
        QVERIFY(r.script.find("--tensorboard-dir /logs/tb") != std::string::npos);
        QVERIFY(r.script.find("--split 949,50,1") != std::string::npos);
        QVERIFY(hasNote(r, "the original's defaults for variables of its environment are kept, so that the environment changes "
                           "these values as it did the original's: DATA_HOME (--data-path); CKPT_DIR (--save, --load); "
                           "LOG_INTERVAL (--log-interval)"));
        QVERIFY(hasNote(r, "values from the original's environment, written as they were when it was read (its defaults where "
                           "unset): TB_DIR (--tensorboard-dir). Edit them here: the environment no longer changes them"));
        QVERIFY(hasNote(r, "the original's launch command also takes arguments from MORE_ARGS, which gave none when it was read"));
        // The header says so too.
        QVERIFY(r.script.find("# the original's defaults for variables of its environment are kept") != std::string::npos);
        // Run: the environment's values win where it gives them, the defaults stand elsewhere.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcessEnvironment env = launcherEnvironment();
        env.remove("CKPT_DIR");
        env.remove("LOG_INTERVAL");
        env.insert("DATA_HOME", "/mnt/corpus");
        int rc = -1;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0", &rc, env);
        QCOMPARE(rc, 0);
        QCOMPARE(valuesAfter(args, "--data-path"), std::vector<std::string>{"/mnt/corpus/train_text_document"});
        QCOMPARE(valuesAfter(args, "--save"), std::vector<std::string>{"/ckpt/run1"});
        QCOMPARE(valuesAfter(args, "--log-interval"), std::vector<std::string>{"10"});
        // Read back, the launcher gives the same values and keeps the same hooks.
        ExportOptions again;
        again.original = importMegatronScript(r.script, "hooks.sh");
        const ExportResult r2 = exportLauncher(megatronPlan(), again);
        QVERIFY2(r2.ok, r2.refusal.c_str());
        QVERIFY(r2.script.find("--data-path \"${DATA_HOME:-/data/mix}/train_text_document\"") != std::string::npos);
        QVERIFY(r2.script.find("--log-interval \"${LOG_INTERVAL:-10}\"") != std::string::npos);
        // The plan was costed for its vocabulary: a hook there would let the environment change
        // the model, so the value is written as read and named so.
        const std::string vocab = std::to_string(megatronPlan().model.vocab_size);
        ExportOptions costed;
        costed.original = importMegatronScript("MODEL=( --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                               "--seq-length 4096 --max-position-embeddings 32768 --bf16 )\n"
                                               "torchrun --nproc_per_node=8 pretrain_gpt.py \"${MODEL[@]}\" --vocab-size ${VOCAB:-"
                                                   + vocab + "}\n",
                                               "vocab.sh");
        const ExportResult rv = exportLauncher(megatronPlan(), costed);
        QVERIFY2(rv.ok, rv.refusal.c_str());
        QVERIFY(rv.script.find("--vocab-size " + vocab + "\n") != std::string::npos);
        QVERIFY(hasNote(rv, "(its defaults where unset): VOCAB (--vocab-size)"));

        // Arrays of arrays keep each element's own: --eval-iters 1 is not LOG_INTERVAL's 1.
        // A string of flags that bash splits shares its reads over all its words, so a short
        // default (PP's 1) is named for no flag there, not for --num-workers 1 either.
        ExportOptions nested;
        nested.original = importMegatronScript(
            "PP=${PP:-1}\n"
            "MODEL=( --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
            "--max-position-embeddings 32768 --bf16 )\n"
            "LOG=( --log-interval ${LOG_INTERVAL:-1} --eval-iters 1 --tensorboard-dir ${TB:-/logs/tb} )\n"
            "OTHER=\"--num-workers 1 --pipeline-model-parallel-size $PP\"\n"
            "cmd=( torchrun --nproc_per_node=8 pretrain_gpt.py \"${MODEL[@]}\" \"${LOG[@]}\" )\n"
            "\"${cmd[@]}\" $OTHER\n",
            "nested.sh");
        const ExportResult rn = exportLauncher(megatronPlan(), nested);
        QVERIFY2(rn.ok, rn.refusal.c_str());
        QVERIFY(hasNote(rn, "as it did the original's: LOG_INTERVAL (--log-interval); TB (--tensorboard-dir)"));
        QVERIFY(rn.script.find("--eval-iters 1\n") != std::string::npos);
        QVERIFY(!hasNote(rn, "PP ("));

        // Through a function's "$@", the arguments keep what they read. A value the script set
        // itself is not the environment's, even where a prefix assignment (bash's temporary
        // environment of one command) or a function's local gave the name a default for a
        // while. A switch left off (${USE_FP8:+...}) is not a default that gave no words.
        const std::string model = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                  "--max-position-embeddings 32768 --bf16";
        auto notesOf = [&](const std::string& script) {
            ExportOptions e;
            e.original = importMegatronScript(script, "f.sh");
            const ExportResult x = exportLauncher(megatronPlan(), e);
            if (!x.ok)
                return "refused: " + x.refusal;
            std::string all;
            for (const std::string& n : x.notes)
                all += n + "\n";
            return all;
        };
        const std::string viaFunction = notesOf("ARGS=( --data-path ${DATA_HOME:-/data/mix}/train --split 949,50,1 )\n"
                                                "launch() { torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " \"$@\"; }\n"
                                                "launch \"${ARGS[@]}\"\n");
        QVERIFY2(viaFunction.find("as it did the original's: DATA_HOME (--data-path)") != std::string::npos, viaFunction.c_str());
        for (const std::string& set : {std::string("CKPT=/ckpt/llama\nCKPT=${CKPT_ROOT:-/ckpt} mkdir -p /tmp/x\n"),
                                       std::string("CKPT=/ckpt/llama\nf() { local CKPT=${CKPT_ROOT:-/ckpt}; mkdir -p $CKPT/logs; }\nf\n")}) {
            const std::string notes = notesOf(set + "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " --save $CKPT\n");
            QVERIFY2(notes.find("CKPT_ROOT") == std::string::npos, notes.c_str());
        }
        const std::string switches = notesOf("torchrun --nproc_per_node=8 pretrain_gpt.py " + model
                                             + " ${USE_FP8:+--fp8-format hybrid} ${MORE:-}\n");
        QVERIFY2(switches.find("takes arguments from MORE, which gave none") != std::string::npos, switches.c_str());
        QVERIFY2(switches.find("takes arguments from MORE, USE_FP8") == std::string::npos, switches.c_str());
        QVERIFY(switches.find("switches on these words") != std::string::npos);   // environmentSwitchesAreNamed
        // A branch a test on the environment skipped (TestScriptImport::testsOnTheEnvironmentAreSaid).
        const std::string branch = notesOf("LOG=(--log-interval 1)\nif [ -n \"$WANDB_API_KEY\" ]; then\n"
                                           "  LOG+=(--wandb-project p --wandb-exp-name e)\nfi\n"
                                           "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " \"${LOG[@]}\"\n");
        QVERIFY2(branch.find("that branch was skipped when the original was read, so neither the plan nor this launcher has "
                             "them: line 2 (WANDB_API_KEY): --wandb-project p --wandb-exp-name e. Add them here")
                     != std::string::npos,
                 branch.c_str());

        // In a string of flags bash splits, a value written in the text as it is read is the
        // text's, though it holds a default's text: /data/mix/train is named for no variable,
        // CKPT's /data/mix is (--save), also across a line continuation.
        const std::string literal = notesOf("OTHER=\"--data-path /data/mix/train_text_document \\\n"
                                            "  --save ${CKPT:-/data/mix} --tensorboard-dir \\\n  \"/logs/tb/run\"\"\n"
                                            "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " $OTHER\n");
        QVERIFY2(literal.find("(its defaults where unset): CKPT (--save). Edit") != std::string::npos, literal.c_str());
        // Also past the 128 bytes a flag's places are looked up by: a 200-byte path.
        const std::string longPath = "/data/mix/" + std::string(190, 'p');
        const std::string longLiteral = notesOf("OTHER=\"--data-path " + longPath + " --save ${CKPT:-/data/mix}\"\n"
                                                "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " $OTHER\n");
        QVERIFY2(longLiteral.find("(its defaults where unset): CKPT (--save). Edit") != std::string::npos, longLiteral.c_str());
        // A default's text counts as a part of a value, not inside a longer name: MODEL_NAME's
        // gpt gave /logs/gpt/tb, not /data/gpt2-vocab.json.
        const std::string parts = notesOf("MODEL=${MODEL_NAME:-gpt}\nDATA=/data\n"
                                          "OTHER=\"--vocab-file $DATA/gpt2-vocab.json --tensorboard-dir /logs/$MODEL/tb\"\n"
                                          "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " $OTHER\n");
        QVERIFY2(parts.find("(its defaults where unset): MODEL_NAME (--tensorboard-dir). Edit") != std::string::npos, parts.c_str());
        // Where the flag's own words read the variable, its default's text counts anywhere in
        // the value: ${DATA:-/data/mix}2/train gave /data/mix2/train.
        const std::string glued = notesOf("torchrun --nproc_per_node=8 pretrain_gpt.py " + model
                                          + " --data-path ${DATA:-/data/mix}2/train\n");
        QVERIFY2(glued.find("(its defaults where unset): DATA (--data-path). Edit") != std::string::npos, glued.c_str());
        // A name counts as a whole part only, though the flag's words read it: MODEL's gpt did
        // not give /ckpt/gpt2, and CKPT's hook stays.
        ExportOptions named;
        named.original = importMegatronScript("echo \"model: ${MODEL:-gpt}\"\n"
                                              "torchrun --nproc_per_node=8 pretrain_gpt.py " + model
                                                  + " --load ${CKPT:-/ckpt}/gpt2${MODEL:+-$MODEL}\n",
                                              "named.sh");
        const ExportResult rnamed = exportLauncher(megatronPlan(), named);
        QVERIFY2(rnamed.ok, rnamed.refusal.c_str());
        QVERIFY2(rnamed.script.find("--load \"${CKPT:-/ckpt}/gpt2\"") != std::string::npos, rnamed.script.c_str());
        QVERIFY(!hasNote(rnamed, "MODEL (--load)"));
        // The text holds the flag and its values as whole words outside comments: a comment
        // that writes it, or a longer value ("--save /data/mix2"), is not the value read.
        const std::string written = notesOf("# --save /data/mix\n"
                                            "echo \"--save /data/mix2\"\n"
                                            "OTHER=\"--split 949,50,1 --save ${CKPT:-/data/mix}\"\n"
                                            "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " $OTHER\n");
        QVERIFY2(written.find("(its defaults where unset): CKPT (--save). Edit") != std::string::npos, written.c_str());
        // Nor the words of a branch the reading skipped.
        const std::string skipped = notesOf("if [ \"${STAGE:-pretrain}\" = sft ]; then\n"
                                            "  OTHER=\"--split 949,50,1 --save /data/mix\"\n"
                                            "else\n"
                                            "  OTHER=\"--split 949,50,1 --save ${CKPT:-/data/mix}\"\n"
                                            "fi\n"
                                            "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " $OTHER\n");
        QVERIFY2(skipped.find("(its defaults where unset): CKPT (--save). Edit") != std::string::npos, skipped.c_str());

        // Given in the environment of the reading, the values are the user's: nothing to name.
        ScriptInputs in;
        in.environment = {{"DATA_HOME", "/mnt/corpus"}, {"CKPT_DIR", "/mnt/ckpt"}, {"LOG_INTERVAL", "1"}, {"MORE_ARGS", ""}};
        ExportOptions given;
        given.original = importMegatronScript(
            "DATA_HOME=${DATA_HOME:-/data/mix}\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --data-path $DATA_HOME/train --save ${CKPT_DIR:-/ckpt}\n",
            "given.sh", in);
        const ExportResult rg = exportLauncher(megatronPlan(), given);
        QVERIFY2(rg.ok, rg.refusal.c_str());
        QVERIFY(rg.script.find("--data-path /mnt/corpus/train") != std::string::npos);
        QVERIFY(!hasNote(rg, "values from the original's environment"));
    }

    void environmentSwitchesAreNamed()
    {
        // ${VP_SIZE:+--num-layers-per-virtual-pipeline-stage $VP_SIZE} gives no word while
        // VP_SIZE is unset, and the plan is read without it: the import warns and the launcher
        // names the words, whether the switch is in the launch command, in a string of flags it
        // splits ($ARGS), in a text eval runs or in the arguments of a call that passes them on
        // ("$@"); also after USE_FP8=${USE_FP8:-}, which sets the name from the environment. A
        // launcher's own option (mpirun -x NAME) is not named, nor a switch the script itself
        // turns off (PP_l= ...) or the environment turns on.
        const std::string model = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                  "--max-position-embeddings 32768 --bf16";
        const std::string vpp = "--num-layers-per-virtual-pipeline-stage $VP_SIZE";
        const std::string note = "the original's launch command switches on these words when a variable of its "
                                 "environment is set; each was unset when the original was read, so neither the plan "
                                 "nor this launcher has them: ";
        auto warnedFor = [](const ImportedScript& s, const std::string& name) {
            return std::any_of(s.warnings.begin(), s.warnings.end(), [&](const std::string& w) {
                return w.find(name + " is not set when the script is read, so ${" + name + ":+") != std::string::npos;
            });
        };
        const std::vector<std::string> scripts = {
            "USE_FP8=${USE_FP8:-}\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " ${VP_SIZE:+" + vpp + "} ${USE_FP8:+--fp8-format hybrid}\n",
            "USE_FP8=${USE_FP8:-}\n"
            "ARGS=\"" + model + " ${VP_SIZE:+" + vpp + "} ${USE_FP8:+--fp8-format hybrid}\"\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py $ARGS\n",
            "USE_FP8=${USE_FP8:-}\n"
            "build() { cmd=\"torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " ${VP_SIZE:+" + vpp
                + "} ${USE_FP8:+--fp8-format hybrid}\"; }\n"
            "build\n"
            "eval \"echo starting; $cmd\"\n",
            // arrays, as Megatron-LM's examples write them; the words quoted
            "USE_FP8=${USE_FP8:-}\n"
            "MODEL=( " + model + " ${VP_SIZE:+" + vpp + "} )\n"
            "PREC=( --log-interval 10 ${USE_FP8:+\"--fp8-format\" hybrid} )\n"
            "PREC=( \"${PREC[@]}\" )\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py \"${MODEL[@]}\" \"${PREC[@]}\"\n",
            // the switches in a call's arguments, which the function passes on as "$@"
            "USE_FP8=${USE_FP8:-}\n"
            "launch() { torchrun --nproc_per_node=8 pretrain_gpt.py " + model + " \"$@\"; }\n"
            "launch --log-interval 10 ${VP_SIZE:+" + vpp + "} ${USE_FP8:+--fp8-format hybrid}\n",
        };
        for (const std::string& text : scripts) {
            ExportOptions o;
            o.original = importMegatronScript(text, "switches.sh");
            const ImportedScript& s = *o.original;
            QVERIFY2(warnedFor(s, "VP_SIZE") && warnedFor(s, "USE_FP8"), text.c_str());
            QCOMPARE(s.environment_switches.at("VP_SIZE"), std::vector<std::string>{vpp});
            const std::string fp8 = s.environment_switches.at("USE_FP8").front();
            QVERIFY(fp8 == "--fp8-format hybrid" || fp8 == "\"--fp8-format\" hybrid");
            QCOMPARE(s.parallel.vpp, 1);   // read without the switch
            const ExportResult r = exportLauncher(megatronPlan(), o);
            QVERIFY2(r.ok, r.refusal.c_str());
            QVERIFY2(hasNote(r, note + "USE_FP8 (" + fp8 + "), VP_SIZE (" + vpp + "). Add them here if the run needs them"),
                     text.c_str());
            QVERIFY(!hasNote(r, "takes arguments from USE_FP8"));   // its empty default is the switch's
            std::istringstream lines(r.script);   // in the header's note only
            for (std::string line; std::getline(lines, line);)
                QVERIFY2(line.rfind("#", 0) == 0 || line.find("--fp8-format") == std::string::npos, line.c_str());
        }
        auto exportOf = [](const std::string& text) {
            ExportOptions o;
            o.original = importMegatronScript(text, "original.sh");
            return exportLauncher(megatronPlan(), o);
        };
        // The words of an eval'd text share what the text was computed from: a path default is
        // named for its flag (written as read: no hook through eval).
        const ExportResult re = exportOf("DATA_HOME=${DATA_HOME:-/data/mix}\n"
                                         "cmd=\"torchrun --nproc_per_node=8 pretrain_gpt.py " + model
                                         + " --data-path $DATA_HOME/train --split 949,50,1\"\neval $cmd\n");
        QVERIFY2(re.ok, re.refusal.c_str());
        QVERIFY(re.script.find("--data-path /data/mix/train") != std::string::npos);
        QVERIFY(hasNote(re, "(its defaults where unset): DATA_HOME (--data-path). Edit them here"));
        // A word of the text that reads a variable itself keeps it as its own: the hook stays,
        // though the text also read EXTRA_ARGS.
        const ExportResult ro = exportOf("EXTRA=${EXTRA_ARGS:-}\n"
                                         "CMD='torchrun --nproc_per_node=8 pretrain_gpt.py " + model
                                         + " --data-path ${DATA_HOME:-/data/mix}/train --log-interval ${LOG_INTERVAL:-10}'\n"
                                           "eval \"$CMD $EXTRA\"\n");
        QVERIFY2(ro.ok, ro.refusal.c_str());
        QVERIFY(ro.script.find("--data-path \"${DATA_HOME:-/data/mix}/train\"") != std::string::npos);
        QVERIFY(ro.script.find("--log-interval \"${LOG_INTERVAL:-10}\"") != std::string::npos);

        // Not named: a launcher's own options (mpirun -x, torchrun --master_addr), a name the
        // script sets empty itself, a name the environment sets, a switch of another command
        // (a conversion step before the launch) on a name the launch command reads otherwise.
        ScriptInputs in;
        in.environment = {{"USE_FP8", "1"}};
        ExportOptions quiet;
        quiet.original = importMegatronScript("PP_l=\n"
                                              "python tools/checkpoint/convert.py ${HF_CKPT:+--load-dir $HF_CKPT} --save-dir /ckpt\n"
                                              "torchrun ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} ${MASTER_ADDR:+--master_addr $MASTER_ADDR} "
                                              "--nproc_per_node=8 pretrain_gpt.py "
                                                  + model + " ${PP_l:+--num-layers-per-virtual-pipeline-stage $PP_l}"
                                                  " ${USE_FP8:+--fp8-format hybrid} --tokenizer-model ${HF_CKPT:-/models/llama}/tok.model\n",
                                              "quiet.sh", in);
        QVERIFY(quiet.original->environment_switches.empty());
        for (const char* name : {"LD_LIBRARY_PATH", "MASTER_ADDR", "PP_l", "HF_CKPT", "USE_FP8"})
            QVERIFY2(!warnedFor(*quiet.original, name), name);
        const ExportResult rq = exportLauncher(megatronPlan(), quiet);
        QVERIFY2(rq.ok, rq.refusal.c_str());
        QVERIFY(!hasNote(rq, "switches on these words"));

        // A call's switch is dropped by a shift past where its words would have stood (they
        // would have gone with the arguments shifted off), not by one short of it; a set --
        // in a subshell leaves the call's arguments, and its switches, as they were.
        auto switchedIn = [&](const std::string& body, const std::string& args) {
            const ImportedScript s = importMegatronScript("launch() { " + body + "torchrun --nproc_per_node=8 pretrain_gpt.py "
                                                              + model + " \"$@\"; }\nlaunch " + args + "\n",
                                                          "call.sh");
            return s.environment_switches.count("USE_FP8") == 1 && warnedFor(s, "USE_FP8");
        };
        QVERIFY(!switchedIn("shift 2; ", "--bf16 ${USE_FP8:+--fp8-format hybrid} --eval-interval 100"));
        QVERIFY(switchedIn("shift 2; ", "--log-interval 10 ${USE_FP8:+--fp8-format hybrid} --eval-interval 100"));
        QVERIFY(switchedIn("shift; ", "--bf16 ${USE_FP8:+--fp8-format hybrid}"));
        QVERIFY(switchedIn("( set -- ); ", "${USE_FP8:+--fp8-format hybrid}"));
        // The switch counts at the end of its word's fields: its words are not shifted off
        // with the word's first (train), nor with a wrapper's first argument.
        QVERIFY(switchedIn("shift; ", "train${USE_FP8:+ --fp8-format hybrid} --bf16"));
        const ImportedScript wrapped = importMegatronScript(
            "launch() { local n=$1; shift; torchrun --nproc_per_node $n pretrain_gpt.py " + model + " \"$@\"; }\n"
            "main() { launch \"$@\"; }\n"
            "main 8 --bf16 ${USE_FP8:+--fp8-format hybrid}\n",
            "wrapped.sh");
        QVERIFY(warnedFor(wrapped, "USE_FP8"));
        QVERIFY(!switchedIn("set -- --log-interval 10; ", "${USE_FP8:+--fp8-format hybrid}"));
    }

    void launcherVariablesAreReserved()
    {
        // A hook on a variable the launcher sets itself (NODE_RANK, MASTER_PORT, its *_ARGS
        // arrays, ...) would read the launcher's value, not the environment's: for every name
        // either launcher assigns, the original's default is written as read instead.
        static const std::regex assigned(R"((?:^|[\s;])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\+?=)", std::regex::multiline);
        const std::string model = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                  "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16";
        for (const LauncherFormat format : {LauncherFormat::Megatron, LauncherFormat::FlagScale}) {
            const PlanDocument plan = format == LauncherFormat::Megatron ? megatronPlan() : flagscalePlan();
            ExportOptions plain;
            plain.format = format;
            plain.original = importMegatronScript(model + "\n", "plain.sh");
            const ExportResult base = exportLauncher(plan, plain);
            QVERIFY2(base.ok, base.refusal.c_str());
            std::set<std::string> names;
            for (auto it = std::sregex_iterator(base.script.begin(), base.script.end(), assigned); it != std::sregex_iterator(); ++it)
                names.insert((*it)[1].str());
            QVERIFY(names.count("NODE_RANK") && names.count("MASTER_PORT"));
            for (const std::string& name : names) {
                ExportOptions o = plain;
                o.original = importMegatronScript(model + " --tensorboard-dir ${" + name + ":-/logs/tb}\n", "hook.sh");
                const ExportResult r = exportLauncher(plan, o);
                QVERIFY2(r.ok, r.refusal.c_str());
                QVERIFY2(r.script.find("${" + name + ":-/logs/tb}") == std::string::npos, name.c_str());
                QVERIFY2(r.script.find("--tensorboard-dir /logs/tb") != std::string::npos, name.c_str());
            }
        }
    }

    void outsideValuesAreChecked()
    {
        // The original reads $5 and $CHECKPOINT_DIR without setting them (Megatron-LM's
        // examples/gpt3/train_gpt3_175b_distributed.sh takes its paths as $1..$5). The launcher
        // keeps them as ${ARG5} and ${CHECKPOINT_DIR}; under `set -u` a missing one must stop it
        // with a message naming the variable and where the original took it from, before torchrun.
        ExportOptions o;
        o.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                          "--data-path $5 --save \"$CHECKPOINT_DIR\"\n",
                                          "outside.sh");
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "set before running (the original took them from outside): ARG5 ($5), CHECKPOINT_DIR (environment)"));
        QVERIFY(r.script.find(": \"${ARG5?is not set: the original script took it from its positional parameter \\$5") != std::string::npos);
        // The launcher's own variables (NODE_RANK, MASTER_ADDR, GPUS_PER_NODE, ...) are set by it and not listed.
        QVERIFY(r.script.find("${NODE_RANK?") == std::string::npos);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(test::writeText(dir.filePath("outside.sh"), r.script));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("ARG5");
        env.remove("CHECKPOINT_DIR");
        QByteArray output;
        QVERIFY(test::runBash({dir.filePath("outside.sh"), "0"}, dir.path(), &output, env) != 0);
        QVERIFY2(output.contains("ARG5: is not set: the original script took it from its positional parameter $5"), output.constData());
        // Set, the launcher runs and passes the values on.
        env.insert("ARG5", "/data/corpus");
        env.insert("CHECKPOINT_DIR", "/ckpt");
        const QString bin = dir.filePath("bin");
        QDir().mkpath(bin);
        QVERIFY(test::writeText(bin + "/torchrun", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGS_OUT\"\n"));
        QFile::setPermissions(bin + "/torchrun", QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        env.insert("PATH", bin + ":" + env.value("PATH"));
        env.insert("ARGS_OUT", dir.filePath("args.txt"));
        env.remove("NODE_RANK");
        QCOMPARE(test::runBash({dir.filePath("outside.sh"), "0"}, dir.path(), nullptr, env), 0);
        QFile f(dir.filePath("args.txt"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::vector<std::string> args;
        for (const QByteArray& line : f.readAll().split('\n'))
            if (!line.isEmpty())
                args.push_back(line.toStdString());
        QCOMPARE(valuesAfter(args, "--data-path"), std::vector<std::string>{"/data/corpus"});
        QCOMPARE(valuesAfter(args, "--save"), std::vector<std::string>{"/ckpt"});
    }

    void interleavedAndUniform()
    {
        PlanDocument d = megatronPlan();
        // Uniform 8 layers per stage with VPP 2 -> --num-layers-per-virtual-pipeline-stage 4.
        for (int s = 0; s < 4; ++s) {
            d.plan.stages[static_cast<std::size_t>(s)].first_layer = 8 * s;
            d.plan.stages[static_cast<std::size_t>(s)].num_layers = 8;
        }
        d.plan.vpp = 2;   // M = 64 / 4 = 16, a multiple of PP 4
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--num-layers-per-virtual-pipeline-stage 4") != std::string::npos);
        QVERIFY(r.script.find("--pipeline-model-parallel-layout") == std::string::npos);
        ImportedScript s = importMegatronScript(r.script, "v.sh");
        QCOMPARE(s.parallel.vpp, 2);
        // An original's flag that left each rank one chunk (8 layers a chunk at 8 a rank) is
        // not written for a plain plan either, and the header says so, as for any other value.
        PlanDocument oneChunk = d;
        oneChunk.plan.vpp = 1;
        ExportOptions withOriginal;
        withOriginal.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --bf16 --pipeline-model-parallel-size 4 "
            "--num-layers-per-virtual-pipeline-stage 8\n",
            "orig.sh");
        QCOMPARE(withOriginal.original->parallel.vpp, 1);
        const ExportResult fromOriginal = exportLauncher(oneChunk, withOriginal);
        QVERIFY2(fromOriginal.ok, fromOriginal.refusal.c_str());
        QVERIFY(hasNote(fromOriginal, "--num-layers-per-virtual-pipeline-stage 8 -> not written (the plan has no virtual pipeline)"));
        QVERIFY(fromOriginal.script.find("--num-layers-per-virtual-pipeline-stage") == fromOriginal.script.find("--num-layers-per-virtual-pipeline-stage 8 -> not written"));
        // The interleaved-schedule check is listed for VPP 2, and not for VPP 1, where it
        // cannot apply.
        auto listsInterleaved = [](const ExportResult& e) {
            return std::any_of(e.checks.begin(), e.checks.end(),
                               [](const ExportCheck& c) { return c.rule.find("interleaved pipeline") != std::string::npos; });
        };
        QVERIFY(listsInterleaved(r));
        PlanDocument plain = d;
        plain.plan.vpp = 1;
        const ExportResult one = exportLauncher(plain, {});
        QVERIFY2(one.ok, one.refusal.c_str());
        QVERIFY(!listsInterleaved(one));
        // The stage comments give the layers each rank holds: chunk c of rank r is virtual
        // stage c * 4 + r, 4 layers each, so rank 0 holds 0-3 and 16-19.
        QVERIFY2(r.script.find(", layers 0-3, 16-19 (8),") != std::string::npos, r.script.c_str());
        QVERIFY(r.script.find(", layers 12-15, 28-31 (8),") != std::string::npos);
        // Interleaving with 18 micro-batches on PP 4 is refused (M % PP != 0).
        d.plan.global_batch_size = 72;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY(r.refusal.find("interleaved") != std::string::npos);
    }

    void refusals_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("rule");
        QTest::newRow("heads % TP") << 0 << "heads % TP == 0";
        QTest::newRow("experts % EP") << 1 << "num_experts % EP == 0";
        QTest::newRow("batch") << 2 << "GBS % (MBS*DP) == 0";
        QTest::newRow("bias with ETP > 1") << 3 << "--disable-bias-linear";
        QTest::newRow("uniform knobs") << 4 << "same TP, CP, DP, EP, ETP, MBS";
        QTest::newRow("one recompute") << 5 << "one recompute setting";
        QTest::newRow("query groups") << 6 << "query groups";
        QTest::newRow("seq with CP") << 7 << "seq % (2*CP)";
        QTest::newRow("max positions") << 8 << "max-position-embeddings";
        QTest::newRow("world size") << 9 << "plan has stages";
        // Megatron-Core's MoELayer.forward raises in training with TP > 1 and no SP.
        QTest::newRow("MoE TP without SP") << 10 << "MoE with TP > 1 needs --sequence-parallel";
    }

    void refusals()
    {
        QFETCH(int, which);
        QFETCH(QString, rule);
        PlanDocument d = megatronPlan();
        switch (which) {
        case 0: d.model.num_attention_heads = 30; d.model.num_query_groups = 0; d.model.kv_channels = 128; break;   // 30 % 2 ok -> use TP 4 below
        case 1: d.model.num_experts = 6; break;                  // 6 % EP 4
        case 2: d.plan.global_batch_size = 62; break;            // 62 % (1 * 4)
        case 3: d.model.add_bias_linear = true;
            for (auto& s : d.plan.stages) { s.ep = 2; s.etp = 2; s.edp = 2; }
            break;
        case 4: d.plan.stages[1].tp = 4; d.plan.stages[1].dp = 2; d.plan.stages[1].edp = 2; d.plan.stages[1].ep = 2;
            d.plan.stages[1].micro_batch_size = 2; break;
        case 5: d.plan.stages[3].recompute = Recompute::None; break;
        case 6: d.model.num_query_groups = 3; d.model.num_attention_heads = 30; d.model.kv_channels = 128; break;   // 3 vs TP 2
        case 7: for (auto& s : d.plan.stages) { s.tp = 1; s.cp = 2; }
            d.model.seq_length = 4094; break;                    // 4094 % 4
        case 8: d.model.max_position_embeddings = 2048; break;   // < seq 4096
        case 9: d.plan.stages[0].dp = 2; break;                  // TP*CP*DP = 4 on 8 devices
        case 10: d.plan.sequence_parallel = false; break;        // MoE at TP 2
        default: break;
        }
        if (which == 0)
            for (auto& s : d.plan.stages) { s.tp = 4; s.dp = 2; s.edp = 2; s.ep = 4; }   // 30 heads % TP 4
        for (auto& s : d.plan.stages)
            s.edp = s.tp * s.cp * s.dp / (s.ep * s.etp);
        const ExportResult r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY(r.script.empty());
        QVERIFY2(r.refusal.find(rule.toStdString()) != std::string::npos, r.refusal.c_str());
        // The failed check is listed with its rule.
        QVERIFY(std::any_of(r.checks.begin(), r.checks.end(),
                            [&](const ExportCheck& c) { return !c.ok && c.rule.find(rule.toStdString()) != std::string::npos; }));
        // Every failed check is named in words, never by Deployability's rule id
        // ("moe.bias-needs-etp1"), and a rule broken on several stages is one check.
        for (const ExportCheck& c : r.checks)
            QVERIFY2(c.ok || c.rule.find(' ') != std::string::npos, c.rule.c_str());
        if (which == 4 || which == 5) {
            // Stages that differ lead the refusal (the world size their product does not divide
            // follows from them), with FlagScale, which runs them, when it can.
            QVERIFY2(r.refusal.rfind(rule.toStdString(), 0) == 0, r.refusal.c_str());
            const bool flagScaleRuns = deploymentProblems(d.plan, d.model, d.cluster, DeviceCatalog::builtin(), Target::FlagScale).empty();
            QCOMPARE(r.refusal.find("export it for FlagScale") != std::string::npos, flagScaleRuns);
            if (which == 5)
                QVERIFY(flagScaleRuns);
        }
        if (which == 3) {   // all four stages have ETP 2 with biases
            QCOMPARE(std::count_if(r.checks.begin(), r.checks.end(), [](const ExportCheck& c) { return !c.ok; }), 1);
            const auto failed = std::find_if(r.checks.begin(), r.checks.end(), [](const ExportCheck& c) { return !c.ok; });
            QVERIFY2(failed->message.find("stage 0 ") == 0 && failed->message.find("(and 3 more stages alike)") != std::string::npos,
                     failed->message.c_str());
        }
    }

    void checksListOnlyRulesThatApply()
    {
        // megatronPlan() runs TP 2, CP 1, ETP 1 with full recompute: the rule on TP above 1
        // is listed (and passed), those on CP and ETP above 1 cannot apply and are not; nor is
        // moe_act's. At TP 1 with moe_act recompute (on the NVIDIA stages the launcher writes
        // --moe-grouped-gemm for) the TP rule goes and moe_act's comes.
        auto listed = [](const ExportResult& e, const std::string& rule) {
            const auto c = std::find_if(e.checks.begin(), e.checks.end(), [&](const ExportCheck& x) { return x.rule.find(rule) != std::string::npos; });
            return c == e.checks.end() ? std::string("absent") : c->ok ? std::string("ok") : "failed: " + c->message;
        };
        PlanDocument d = megatronPlan();
        const ExportResult tp2 = exportLauncher(d, {});
        QVERIFY2(tp2.ok, tp2.refusal.c_str());
        QCOMPARE(listed(tp2, "MoE with TP > 1 needs --sequence-parallel"), std::string("ok"));
        QCOMPARE(listed(tp2, "MoE with ETP > 1 needs --disable-bias-linear"), std::string("absent"));
        QCOMPARE(listed(tp2, "seq % (2*CP)"), std::string("absent"));
        QCOMPARE(listed(tp2, "moe_act recompute"), std::string("absent"));
        QCOMPARE(listed(tp2, "FFN % TP == 0, expert FFN % ETP == 0"), std::string("ok"));
        QCOMPARE(listed(tp2, "with SP and TP > 1: seq % (CP*TP) == 0"), std::string("ok"));
        {
            // Broken on every stage: one failed check in words, the other stages folded.
            PlanDocument odd = d;
            odd.model.moe_ffn_hidden_size = 14337;
            for (StagePlan& st : odd.plan.stages) {
                st.ep = 2;
                st.etp = 2;
                st.edp = 2;
            }
            const ExportResult r = exportLauncher(odd, {});
            QVERIFY(!r.ok);
            const std::string ffn = listed(r, "FFN % TP == 0, expert FFN % ETP == 0");
            QVERIFY2(ffn.rfind("failed: stage 0 ", 0) == 0 && ffn.find("(and 3 more stages alike)") != std::string::npos, ffn.c_str());
            QCOMPARE(std::count_if(r.checks.begin(), r.checks.end(), [](const ExportCheck& c) { return !c.ok; }), 1);
        }
        for (StagePlan& st : d.plan.stages) {
            st.tp = 1;
            st.dp = 8;
            st.edp = 2;   // EP 4 x ETP 1 x EDP 2 = 8
            st.recompute = Recompute::Selective;
            st.recompute_layers = 0;
            st.recompute_modules = recompute_module::moe_act | recompute_module::layernorm;
        }
        const ExportResult tp1 = exportLauncher(d, {});
        QVERIFY2(tp1.ok, tp1.refusal.c_str());
        QCOMPARE(listed(tp1, "MoE with TP > 1 needs --sequence-parallel"), std::string("absent"));
        QCOMPARE(listed(tp1, "moe_act recompute needs --moe-grouped-gemm"), std::string("ok"));
        QVERIFY(tp1.script.find("--moe-grouped-gemm") != std::string::npos);
        // Broken, a rule is listed whatever the sizes: moe_act on a dense model.
        d.model.num_experts = 0;
        for (StagePlan& st : d.plan.stages) {
            st.ep = 1;
            st.edp = 8;
        }
        const ExportResult dense = exportLauncher(d, {});
        QVERIFY(!dense.ok);
        QVERIFY2(listed(dense, "moe_act recompute needs --moe-grouped-gemm").rfind("failed: ", 0) == 0, dense.refusal.c_str());
    }

    void vendorsAndDevices()
    {
        // Mixed vendors are refused for Megatron-LM.
        PlanDocument d = megatronPlan();
        d.cluster = test::cluster("H800:2x8,910B:2x8");
        for (auto& s : d.plan.stages) {
            const Node* n = d.cluster.node(s.devices.front().node);
            s.device_type = DeviceCatalog::builtin().get(n->device_type).name;
        }
        ExportResult r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY(r.refusal.find("one collective library") != std::string::npos);

        // --moe-grouped-gemm from the original script on a device of compute capability 7.0.
        // The test device follows the V100 SXM2 (NVIDIA CUDA GPUs list: compute capability 7.0).
        DeviceCatalog cat = DeviceCatalog::builtin();
        cat.merge(DeviceCatalog::fromJson(
            R"({"format": "hapmoe.devices", "version": 1, "devices": [{"name": "V100-SXM2", "vendor": "NVIDIA",
                "bf16_tflops": 125, "memory_gib": 32, "hbm_gbps": 900, "intra_link_kind": "NVLink2",
                "intra_node_gbps": 150, "inter_node_gbps": 12.5, "collective_library": "NCCL",
                "compute_capability": 7.0, "default_efficiency": 0.7, "default_devices_per_node": 8}]})",
            "v100.json"));
        PlanDocument v = megatronPlan();
        v.cluster = test::cluster("V100-SXM2:4x8", cat);
        const std::vector<int> ids = test::nodeIds(v.cluster);
        for (int s = 0; s < 4; ++s) {
            v.plan.stages[static_cast<std::size_t>(s)].device_type = "V100-SXM2";
            v.plan.stages[static_cast<std::size_t>(s)].devices = {{ids[static_cast<std::size_t>(s)], 0, 8}};
        }
        ExportOptions o;
        o.catalog = &cat;
        r = exportLauncher(v, o);   // no original: grouped GEMM is simply not emitted
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--moe-grouped-gemm") == std::string::npos);
        // ... nor listed as a passed check: it does not apply. Nor does the offload check
        // without an offload.
        for (const ExportCheck& c : r.checks) {
            QVERIFY2(c.rule.find("grouped-gemm") == std::string::npos, c.rule.c_str());
            QVERIFY2(c.rule.find("cpu-offload") == std::string::npos, c.rule.c_str());
        }
        o.original = importMegatronScriptFile(test::dataFile("train_mixtral_8x7b_distributed.sh"));   // asks for it
        r = exportLauncher(v, o);
        QVERIFY(!r.ok);
        QVERIFY(r.refusal.find("compute capability >= 8.0") != std::string::npos);

        // AMD CDNA3 runs it (AMD's ROCm/Megatron-LM launches its Mixtral example on MI300X with
        // --moe-grouped-gemm, examples/mixtral/train_mixtral_moe.sh at 07c55f77); CDNA2, of no
        // such published launch, does not get it.
        for (const auto& [type, grouped] : {std::pair{"MI300X", true}, std::pair{"MI250X", false}}) {
            PlanDocument amd = megatronPlan();
            amd.cluster = test::cluster(std::string(type) + ":4x8");
            const std::vector<int> amdIds = test::nodeIds(amd.cluster);
            for (int s = 0; s < 4; ++s) {
                amd.plan.stages[static_cast<std::size_t>(s)].device_type = type;
                amd.plan.stages[static_cast<std::size_t>(s)].devices = {{amdIds[static_cast<std::size_t>(s)], 0, 8}};
            }
            const ExportResult ra = exportLauncher(amd, {});
            QVERIFY2(ra.ok, ra.refusal.c_str());
            QCOMPARE(ra.script.find("--moe-grouped-gemm") != std::string::npos, grouped);
        }
    }

    void overlapSwitchesAndTheirConflicts()
    {
        // The exported script switches on --overlap-grad-reduce. FlagScale's --moe-fb-overlap
        // cannot be combined with it and needs DualPipeV, another schedule than the plan's
        // 1F1B: neither is carried over. Megatron-LM asserts Transformer Engine >= 2.8.0 for
        // --delay-wgrad-compute with --overlap-grad-reduce (arguments.py validate_args): kept,
        // with a note.
        const std::string original = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                     "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                     "--use-dualpipev --moe-fb-overlap --delay-wgrad-compute";
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.original = importMegatronScript(original + "\n", "dualpipe.sh");
        ExportResult r = exportLauncher(flagscalePlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-grad-reduce"));
        QVERIFY(!contains(args, "--moe-fb-overlap"));
        QVERIFY(!contains(args, "--use-dualpipev"));
        QVERIFY(hasNote(r, "--moe-fb-overlap: not carried over (it needs DualPipeV and cannot be combined with --overlap-grad-reduce"));
        QVERIFY(hasNote(r, "--use-dualpipev: not carried over (another pipeline schedule"));

        // Megatron-LM asserts --overlap-moe-expert-parallel-comm for --delay-wgrad-compute.
        QVERIFY(hasNote(r, "--delay-wgrad-compute: not carried over (it needs --overlap-moe-expert-parallel-comm)"));

        // The EP all-to-all overlap needs EP > 1, a virtual pipeline when PP > 1, the
        // alltoall or flex dispatcher and no full recompute (reference section 5).
        o.format = LauncherFormat::Megatron;
        o.original = importMegatronScript(original + " --overlap-moe-expert-parallel-comm\n", "a2a.sh");
        PlanDocument d = megatronPlan();
        QVERIFY(d.plan.pp() > 1 && d.plan.stages.front().ep > 1);
        d.plan.vpp = 1;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--overlap-moe-expert-parallel-comm"));
        QVERIFY(!contains(args, "--delay-wgrad-compute"));
        QVERIFY(hasNote(r, "--overlap-moe-expert-parallel-comm: not carried over (it needs a virtual pipeline when PP > 1 in this plan)"));
        d.plan.vpp = 2;
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::None;
            st.recompute_layers = 0;
        }
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-moe-expert-parallel-comm"));
        QVERIFY(contains(args, "--delay-wgrad-compute"));
        QVERIFY(hasNote(r, "--delay-wgrad-compute: kept; with --overlap-grad-reduce it needs Transformer Engine >= 2.8.0"));

        // Megatron-LM d98e8a64 asserts "disable moe in recompute_modules when enabling
        // overlap_moe_expert_parallel_comm" (TransformerConfig): a plan that recomputes the
        // whole MoE layer leaves the overlap out.
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::Selective;
            st.recompute_modules = recompute_module::layernorm | recompute_module::moe;
        }
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--overlap-moe-expert-parallel-comm"));
        QCOMPARE(valuesAfter(args, "--recompute-modules"), (std::vector<std::string>{"layernorm", "moe"}));
        QVERIFY(hasNote(r, "--overlap-moe-expert-parallel-comm: not carried over (it cannot be combined with recomputing the "
                           "whole MoE layer (moe) in this plan)"));
        QVERIFY(!contains(args, "--delay-wgrad-compute"));

        // The same plan under Megatron-LM d98e8a64 also leaves out the MoE recipes' CUDA graphs
        // of the moe_router scope ("moe recompute is not supported with moe_router CUDA graph")
        // and fine-grained offloading inside the MoE layer ("Cannot offload ... while
        // recomputing the entire MoE layer"); FlagScale's Megatron-LM 8479eb35 has neither rule.
        const std::string recipe = original + " --cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router "
                                              "moe_preprocess --fine-grained-activation-offloading --offload-modules expert_fc1 moe_act";
        o.original = importMegatronScript(recipe + "\n", "graphs.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        for (const char* flag : {"--cuda-graph-impl", "--cuda-graph-scope", "--fine-grained-activation-offloading", "--offload-modules"})
            QVERIFY2(!contains(args, flag), flag);
        QVERIFY(hasNote(r, "--cuda-graph-scope: not carried over (Megatron-LM does not run Transformer Engine's CUDA graphs of "
                           "the moe_router scope with the whole MoE layer recomputed (moe) in this plan)"));
        QVERIFY(hasNote(r, "--offload-modules: not carried over (Megatron-LM does not offload activations inside the MoE layer "
                           "(moe_act, expert_fc1, fused_group_mlp) that this plan recomputes whole (moe))"));
        // Also by --cuda-graph-modules, the flag --cuda-graph-scope is the deprecated alias of.
        o.original = importMegatronScript(original + " --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router\n",
                                          "modules.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--cuda-graph-modules"));
        QVERIFY(!contains(args, "--cuda-graph-impl"));
        o.original = importMegatronScript(recipe + "\n", "graphs.sh");
        // With the experts' activation recomputed instead, both stay.
        for (StagePlan& st : d.plan.stages)
            st.recompute_modules = recompute_module::layernorm | recompute_module::moe_act;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--cuda-graph-scope"), (std::vector<std::string>{"attn", "moe_router", "moe_preprocess"}));
        QCOMPARE(valuesAfter(args, "--offload-modules"), (std::vector<std::string>{"expert_fc1", "moe_act"}));
    }

    void tpCommOverlapFollowsThePrediction()
    {
        // A prediction that assumed --tp-comm-overlap (a search for a script that switches it
        // on) gets the flag in its launcher once, whether or not the original carries it over;
        // a prediction without it leaves it out; stages of different TP cannot share Transformer
        // Engine's userbuffers (one TP size), so the flag stays off with a note.
        PlanDocument d = megatronPlan();
        QVERIFY(d.plan.stages.front().tp == 2 && d.plan.sequence_parallel);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto tpOverlapFlags = [&](const PlanDocument& doc, const ExportOptions& o) {
            const ExportResult r = exportLauncher(doc, o);
            if (!r.ok)
                qWarning("%s", r.refusal.c_str());
            const std::vector<std::string> args = runLauncher(dir, r.script, "0");
            return std::count(args.begin(), args.end(), std::string("--tp-comm-overlap"));
        };
        ExportOptions o;
        o.format = LauncherFormat::Megatron;
        QCOMPARE(tpOverlapFlags(d, o), 0);   // no prediction
        d.prediction = Prediction{};
        QCOMPARE(tpOverlapFlags(d, o), 0);   // the default switches: no TP overlap
        d.prediction->overlap.tp_comm = true;
        QCOMPARE(tpOverlapFlags(d, o), 1);
        o.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                          "--tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap\n",
                                          "tpo.sh");
        QCOMPARE(tpOverlapFlags(d, o), 1);

        PlanDocument mixed = flagscalePlan();
        mixed.plan.sequence_parallel = true;
        mixed.prediction = Prediction{};
        mixed.prediction->overlap.tp_comm = true;
        ExportOptions fs;
        fs.format = LauncherFormat::FlagScale;
        const ExportResult r = exportLauncher(mixed, fs);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(!contains(runLauncher(dir, r.script, "0"), "--tp-comm-overlap"));
        QVERIFY(hasNote(r, "--tp-comm-overlap: not written: the stages' TP sizes differ"));
        // The original's own flag is not carried over to such a plan either.
        fs.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                           "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
                                           "--tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap\n",
                                           "tpo.sh");
        const ExportResult carried = exportLauncher(mixed, fs);
        QVERIFY2(carried.ok, carried.refusal.c_str());
        QVERIFY(!contains(runLauncher(dir, carried.script, "0"), "--tp-comm-overlap"));
        QVERIFY(hasNote(carried, "--tp-comm-overlap: not carried over (the stages' TP sizes differ"));
    }

    void maxConnectionsStaysOverridable()
    {
        // Without TP or CP no rule fixes CUDA_DEVICE_MAX_CONNECTIONS, so the original's
        // ${CUDA_DEVICE_MAX_CONNECTIONS:-1} stays in that form (docs/megatron.md): the
        // environment can still override it. With TP 2 it is 1, as Megatron-LM asserts.
        PlanDocument d = megatronPlan();
        const std::vector<int> ids = test::nodeIds(d.cluster);
        d.plan.stages.clear();
        d.plan.sequence_parallel = false;
        const int split[4] = {5, 8, 8, 11};
        int first = 0;
        for (int s = 0; s < 4; ++s) {
            d.plan.stages.push_back(test::stageOn(d.cluster, {ids[(s + 2) % 4]}, first, split[s], 1, 1, 8, 4, 1));
            first += split[s];
        }
        ExportOptions o;
        o.original = importMegatronScript("export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}\n"
                                          "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                          "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16\n",
                                          "m.sh");
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=\"${CUDA_DEVICE_MAX_CONNECTIONS:-1}\"\n") != std::string::npos);
        // FlagScale's launcher carries the original's 1 over too, after the device types'
        // blocks (it was left out without a word).
        ExportOptions fs = o;
        fs.format = LauncherFormat::FlagScale;
        r = exportLauncher(d, fs);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY2(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=\"${CUDA_DEVICE_MAX_CONNECTIONS:-1}\"   # from m.sh\n")
                     != std::string::npos,
                 r.script.c_str());
        r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n") != std::string::npos);
    }

    void foreignEntryKeepsItsFlags()
    {
        // An entry script of another project adds flags to Megatron-LM's parser
        // (extra_args_provider; examples/multimodal/train.py requires --language-model-type):
        // they are carried over for it, in one note. Megatron-LM's own pretrain_gpt.py would
        // stop on them ("unrecognized arguments"), so there they are dropped, each with a note.
        const std::string flags = gptLaunch(" --language-model-type qwen2.0_72B --freeze-ViT").substr(
                                      std::string("torchrun --nproc_per_node=8 pretrain_gpt.py").size()) + "\n";
        QTemporaryDir dir;
        ExportOptions o;
        o.original = importMegatronScript("torchrun --nproc_per_node=8 examples/multimodal/train.py" + flags, "mm.sh");
        ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "examples/multimodal/train.py"));
        QCOMPARE(valuesAfter(args, "--language-model-type"), std::vector<std::string>{"qwen2.0_72B"});
        QVERIFY(contains(args, "--freeze-ViT"));
        QVERIFY(hasNote(r, "kept for the original's entry examples/multimodal/train.py, which adds flags of its own to Megatron-LM's "
                           "(not options of Megatron-LM d98e8a64): --language-model-type, --freeze-ViT"));
        o.original = importMegatronScript("torchrun --nproc_per_node=8 pretrain_gpt.py" + flags, "gpt.sh");
        r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "pretrain_gpt.py"));
        QVERIFY(!contains(args, "--language-model-type"));
        QVERIFY(hasNote(r, "--language-model-type: not carried over (not an option of Megatron-LM d98e8a64)"));
    }

    void selfAppendingPathRunsWithoutIt()
    {
        // export PYTHONPATH=${PYTHONPATH}:./Megatron-LM appends to the environment's value, empty
        // when unset; the launcher runs under set -u, so it reads ${PYTHONPATH:-} and starts
        // where PYTHONPATH is not set.
        QTemporaryDir dir;
        ExportOptions o;
        o.original = importMegatronScript("export PYTHONPATH=${PYTHONPATH}:./Megatron-LM\n" + gptLaunch("") + "\n", "p.sh");
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY2(r.script.find("export PYTHONPATH=\"${PYTHONPATH:-}:./Megatron-LM\"   # from p.sh\n") != std::string::npos, r.script.c_str());
        QProcessEnvironment env = launcherEnvironment();
        env.remove("PYTHONPATH");
        int rc = -1;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0", &rc, env);
        QCOMPARE(rc, 0);
        QVERIFY(contains(args, "pretrain_gpt.py"));
    }

    void commandValuesOfFlags()
    {
        // Megatron-LM's multimodal NVLM script: --data-path `pwd`/...; Pai-Megatron-Patch:
        // --tensorboard-dir .../$(date ...). The launcher's folder is ${PWD}; another command is
        // not run: its text is written, with a note.
        QTemporaryDir dir;
        ExportOptions o;
        o.original = importMegatronScript(gptLaunch(" --data-path `pwd`/data/x --tensorboard-dir /out/tb-$(date +%F)") + "\n", "c.sh");
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--data-path \"${PWD}/data/x\"") != std::string::npos);
        QVERIFY(hasNote(r, "--tensorboard-dir: the original ran a command for its value, which the launcher does not run; "
                           "written as the text /out/tb-$(date +%F)"));
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        const std::vector<std::string> data = valuesAfter(args, "--data-path");
        QCOMPARE(data.size(), std::size_t(1));
        QVERIFY2(data.front().size() > 7 && data.front().front() == '/' && data.front().find('`') == std::string::npos
                     && data.front().substr(data.front().size() - 7) == "/data/x",
                 data.front().c_str());
        QCOMPARE(valuesAfter(args, "--tensorboard-dir"), std::vector<std::string>{"/out/tb-$(date +%F)"});
        // The entry script's path too (Megatron-LM's old pretrain_gpt3_175B.sh: DIR=`pwd`, then
        // python -u ${DIR}/pretrain_gpt.py).
        ExportOptions e;
        std::string launch = gptLaunch("");
        launch.replace(launch.find("pretrain_gpt.py"), 15, "`pwd`/pretrain_gpt.py");
        e.original = importMegatronScript(launch + "\n", "e.sh");
        const ExportResult x = exportLauncher(megatronPlan(), e);
        QVERIFY2(x.ok, x.refusal.c_str());
        QVERIFY2(x.script.find("torchrun \"${DISTRIBUTED_ARGS[@]}\" \"${PWD}/pretrain_gpt.py\"") != std::string::npos, x.script.c_str());
    }

    void multimodalSequencesWrittenBack()
    {
        // examples/multimodal/train.py: the language model runs at --decoder-seq-length (the
        // plan's sequence), the vision encoder at --seq-length, which goes back as it was.
        ExportOptions o;
        o.original = importMegatronScript("torchrun --nproc_per_node=8 examples/multimodal/train.py --num-layers 8 --hidden-size 1024 "
                                          "--num-attention-heads 8 --seq-length 576 --decoder-seq-length 1024 "
                                          "--max-position-embeddings 4096 --bf16 --micro-batch-size 1 --global-batch-size 8\n",
                                          "mm.sh");
        PlanDocument d;
        d.model = o.original->model;
        d.cluster = test::cluster("H800:1x8");
        d.plan = planFromScript(*o.original, d.cluster, DeviceCatalog::builtin());
        const ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY2(r.script.find("--seq-length 576\n") != std::string::npos, r.script.c_str());
        QVERIFY(r.script.find("--decoder-seq-length 1024\n") != std::string::npos);
        QCOMPARE(importMegatronScript(r.script, "again.sh").model.seq_length, 1024);
    }

    void kernelsMegatronLmRefuses()
    {
        // Megatron-LM d98e8a64's validate_args asserts not (--cross-entropy-loss-fusion and
        // --cross-entropy-fusion-impl te) ("disabled due to stability issues"); FlagScale's
        // Megatron-LM 8479eb35 has no such assert. Its TEGroupedMLP asserts not (linear bias
        // and bias-dropout fusion), which is on by default.
        PlanDocument d = megatronPlan();
        d.model.training.cross_entropy_loss_fusion = true;
        d.model.training.cross_entropy_fusion_impl = CrossEntropyFusionImpl::TE;
        d.model.add_bias_linear = true;
        const ExportResult mg = exportLauncher(d, ExportOptions{});
        QVERIFY2(mg.ok, mg.refusal.c_str());
        QVERIFY(mg.script.find("--cross-entropy-loss-fusion") != std::string::npos);
        QVERIFY2(mg.script.find("--cross-entropy-fusion-impl native") != std::string::npos, mg.script.c_str());
        QVERIFY(mg.script.find("--cross-entropy-fusion-impl te\n") == std::string::npos);
        QVERIFY(hasNote(mg, "--cross-entropy-fusion-impl te -> native (Megatron-LM d98e8a64 refuses"));
        // Costed with te or native as the plan's target says (CostModel's StageContext::target).
        QVERIFY(hasNote(mg, "the plan, made for either framework, was costed with te"));
        PlanDocument forMegatron = d;
        forMegatron.plan.target = Target::Megatron;
        QVERIFY(hasNote(exportLauncher(forMegatron, ExportOptions{}), "the plan, made for Megatron-LM, was costed with native"));
        PlanDocument forFlagScale = d;
        forFlagScale.plan.target = Target::FlagScale;
        QVERIFY(hasNote(exportLauncher(forFlagScale, ExportOptions{}), "the plan, made for FlagScale, was costed with te, and native's"));
        QVERIFY(mg.script.find("--moe-grouped-gemm") != std::string::npos);
        QVERIFY(mg.script.find("--no-bias-dropout-fusion") != std::string::npos);
        ExportOptions fsOptions;
        fsOptions.format = LauncherFormat::FlagScale;
        const ExportResult fs = exportLauncher(d, fsOptions);
        QVERIFY2(fs.ok, fs.refusal.c_str());
        QVERIFY(fs.script.find("--cross-entropy-fusion-impl te") != std::string::npos);
        QVERIFY(fs.script.find("--no-bias-dropout-fusion") == std::string::npos);
        // A plan made for Megatron-LM was costed with native: the FlagScale launcher runs that,
        // and says so (it ran te, 11 % faster than costed for Qwen3-30B-A3B on B200 and H100).
        const ExportResult fsOfMegatron = exportLauncher(forMegatron, fsOptions);
        QVERIFY2(fsOfMegatron.ok, fsOfMegatron.refusal.c_str());
        QVERIFY(fsOfMegatron.script.find("--cross-entropy-fusion-impl native") != std::string::npos);
        QVERIFY(fsOfMegatron.script.find("--cross-entropy-fusion-impl te\n") == std::string::npos);
        QVERIFY(hasNote(fsOfMegatron, "the plan, made for Megatron-LM, was costed with native, which Megatron-LM d98e8a64 runs"));
        // Without the bias, the fusion stays on.
        d.model.add_bias_linear = false;
        QVERIFY(exportLauncher(d, ExportOptions{}).script.find("--no-bias-dropout-fusion") == std::string::npos);
    }

    void carriedFlagsMeetThePlansRules()
    {
        // Flags of the original that Megatron-LM's validation would refuse beside the plan
        // are dropped with the rule (reference sections 2, 5 and 6); those that fit stay.
        const std::string head = "export CUDA_DEVICE_MAX_CONNECTIONS=32\n"
                                 "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 ";
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ExportOptions o;

        // PP 4, VPP 2, 16 micro-batches, full recompute, TP 2.
        PlanDocument d = megatronPlan();
        d.plan.vpp = 2;
        o.original = importMegatronScript(head + "--microbatch-group-size-per-virtual-pipeline-stage 2 --no-overlap-p2p-communication "
                                                 "--cpu-offloading-num-layers 2 --use-megatron-fsdp "
                                                 "--data-parallel-sharding-strategy optim_grads_params\n",
                                          "a.sh");
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--microbatch-group-size-per-virtual-pipeline-stage"));   // 2 < PP 4
        QVERIFY(hasNote(r, "--microbatch-group-size-per-virtual-pipeline-stage: not carried over (it must be from PP to the 16 micro-batches"));
        QVERIFY(contains(args, "--no-overlap-p2p-communication"));   // PP 4 > 2
        QVERIFY(!contains(args, "--cpu-offloading-num-layers"));
        QVERIFY(hasNote(r, "--cpu-offloading-num-layers: not carried over (activation offload cannot be combined with PP > 1 or recompute)"));
        QVERIFY(!contains(args, "--use-megatron-fsdp"));
        QVERIFY(!contains(args, "--data-parallel-sharding-strategy"));
        QVERIFY(hasNote(r, "--use-megatron-fsdp: not carried over (the plan is costed and written for the distributed optimizer"));
        // TP 2: Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1; the original's 32 is replaced, and said so.
        QVERIFY(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n") != std::string::npos);
        QVERIFY(r.script.find("CUDA_DEVICE_MAX_CONNECTIONS=32") == std::string::npos);
        QVERIFY(hasNote(r, "CUDA_DEVICE_MAX_CONNECTIONS: the original's 32 is replaced by 1"));

        o.original = importMegatronScript(head + "--microbatch-group-size-per-virtual-pipeline-stage 8 --vocab-size 151936\n", "b.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--microbatch-group-size-per-virtual-pipeline-stage"), std::vector<std::string>{"8"});
        // The plan was costed with its model's vocabulary (Mixtral's 32000), and its model is
        // not the script's (a dense 32-layer model): both are said.
        QCOMPARE(valuesAfter(args, "--vocab-size"), std::vector<std::string>{"32000"});
        QVERIFY(hasNote(r, "--vocab-size: the original's 151936 is replaced by the plan model's 32000"));
        QVERIFY(hasNote(r, "the original script describes another model (32 layers, hidden 4096, 0 experts) than the plan "
                         "(32 layers, hidden 4096, 8 experts)"));
        // Megatron-LM d98e8a64's NullTokenizer has exactly its --vocab-size (null_tokenizer.py:
        // the end-of-document token is the last id), so the flag is the plan's vocabulary, and
        // imported again the launcher's vocabulary is the plan's.
        o.original = importMegatronScript(head + "--tokenizer-type NullTokenizer --vocab-size 151936\n", "n.sh");
        QCOMPARE(o.original->model.vocab_size, 151936);
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--vocab-size"), std::vector<std::string>{"32000"});
        QVERIFY(hasNote(r, "--vocab-size: the original's 151936 is replaced by the plan model's 32000"));
        QCOMPARE(importMegatronScript(r.script, "again.sh").model.vocab_size, 32000);
        // A benchmark launcher (no original) runs on mock data with the NullTokenizer alike;
        // the NullTokenizer of FlagScale's Megatron-LM 8479eb35 adds the end-of-document token
        // (vocab_size returns _vocab_size_without_eod + 1): one less there.
        ExportOptions bench;
        const ExportResult b = exportLauncher(d, bench);
        QVERIFY2(b.ok, b.refusal.c_str());
        QVERIFY(b.script.find("--vocab-size 32000") != std::string::npos);
        QCOMPARE(importMegatronScript(b.script, "bench.sh").model.vocab_size, 32000);
        ExportOptions benchFs;
        benchFs.format = LauncherFormat::FlagScale;
        PlanDocument dfs = d;
        dfs.plan.vpp = 1;
        for (StagePlan& st : dfs.plan.stages)
            st.chunk_layers.clear();
        const ExportResult bfs = exportLauncher(dfs, benchFs);
        QVERIFY2(bfs.ok, bfs.refusal.c_str());
        QVERIFY(bfs.script.find("--vocab-size 31999") != std::string::npos);
        QCOMPARE(importMegatronScript(bfs.script, "bench-fs.sh").model.vocab_size, 32000);

        // With the EP all-to-all overlap kept (VPP, no full recompute) the original's 32 stays:
        // Megatron-LM then warns instead of asserting 1.
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::None;
            st.recompute_layers = 0;
        }
        o.original = importMegatronScript(head + "--overlap-moe-expert-parallel-comm\n", "c.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("export CUDA_DEVICE_MAX_CONNECTIONS=32\n") != std::string::npos);
        QVERIFY(hasNote(r, "CUDA_DEVICE_MAX_CONNECTIONS=32 kept from the original"));

        // PP 2 with VPP: no P2P overlap needs PP > 2. CP 2: the hierarchical sizes must
        // multiply to CP, which a2a+p2p needs.
        PlanDocument two = megatronPlan();
        const std::vector<int> ids = test::nodeIds(two.cluster);
        two.plan.stages.clear();
        two.plan.vpp = 2;
        for (int s = 0; s < 2; ++s) {
            StagePlan st = test::stageOn(two.cluster, {ids[2 + s]}, 16 * s, 16, 2, 2, 2, 4, 1);
            two.plan.stages.push_back(st);
        }
        two.plan.unused.clear();
        o.original = importMegatronScript(head + "--context-parallel-size 2 --cp-comm-type a2a+p2p "
                                                 "--hierarchical-context-parallel-sizes 2 2 --no-overlap-p2p-communication\n",
                                          "d.sh");
        r = exportLauncher(two, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--no-overlap-p2p-communication"));
        QVERIFY(hasNote(r, "--no-overlap-p2p-communication: not carried over (with a virtual pipeline it needs PP > 2)"));
        QVERIFY(!contains(args, "--hierarchical-context-parallel-sizes"));
        QVERIFY(!contains(args, "--cp-comm-type"));
        QVERIFY(hasNote(r, "--hierarchical-context-parallel-sizes: not carried over (its sizes must multiply to the plan's CP 2)"));
        o.original = importMegatronScript(head + "--cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 1\n", "e.sh");
        r = exportLauncher(two, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--hierarchical-context-parallel-sizes"), (std::vector<std::string>{"2", "1"}));
        QCOMPARE(valuesAfter(args, "--cp-comm-type"), std::vector<std::string>{"a2a+p2p"});
    }

    void flagscaleMeshes()
    {
        const PlanDocument d = flagscalePlan();
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        const ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        QVERIFY(test::writeText(dir.filePath("launch.sh"), r.script));
        QCOMPARE(test::runBash({"-n", dir.filePath("launch.sh")}, dir.path()), 0);
        const std::vector<std::string> args0 = runLauncher(dir, r.script, "0");
        const std::vector<std::string> args4 = runLauncher(dir, r.script, "4");
        QVERIFY(!args0.empty());
        QVERIFY(!args4.empty());

        // The mesh list, checked against the rules of reference section 9.
        const std::vector<std::string> meshTokens = valuesAfter(args0, "--hetero-process-meshes");
        QCOMPARE(meshTokens, (std::vector<std::string>{"2", "1", "4", "4", "2", "4", "1", "4", "2", "1", "2", "1", "4", "4", "2"}));
        QCOMPARE(meshTokens.size() % 5, std::size_t(0));   // 5 ints per mesh: TP CP EP DP PP
        const std::vector<std::string> etp = valuesAfter(args0, "--expert-tensor-parallel-size-per-process-mesh");
        QCOMPARE(etp, (std::vector<std::string>{"1", "2", "1"}));
        int sumPP = 0, world = 0;
        const int meshes = static_cast<int>(meshTokens.size() / 5);
        const int mbs = std::stoi(valuesAfter(args0, "--micro-batch-size").front());
        const int gbs = std::stoi(valuesAfter(args0, "--global-batch-size").front());
        const int dp0 = std::stoi(meshTokens[3]);
        for (int m = 0; m < meshes; ++m) {
            const int tp = std::stoi(meshTokens[5 * m]), cp = std::stoi(meshTokens[5 * m + 1]), ep = std::stoi(meshTokens[5 * m + 2]),
                      dp = std::stoi(meshTokens[5 * m + 3]), pp = std::stoi(meshTokens[5 * m + 4]);
            sumPP += pp;
            world += tp * cp * dp * pp;
            QCOMPARE(cp, 1);                                                       // ParallelContext asserts CP == 1
            QCOMPARE((tp * cp * dp * pp) % (std::stoi(etp[static_cast<std::size_t>(m)]) * ep * pp), 0);   // folding per mesh
            QCOMPARE((dp0 * mbs) % dp, 0);                                         // MBS_i = DP0*MBS/DP_i integral
            QCOMPARE(d.model.num_experts % ep, 0);
        }
        QCOMPARE(std::stoi(valuesAfter(args0, "--pipeline-model-parallel-size").front()), sumPP);   // global PP = sum of mesh PP
        QCOMPARE(world, d.plan.numDevices());                                       // world = sum TP*CP*DP*PP = 40
        QCOMPARE(world, 40);
        QCOMPARE(gbs % (mbs * dp0), 0);
        const std::vector<std::string> split = valuesAfter(args0, "--hetero-pipeline-layer-split");
        QCOMPARE(static_cast<int>(split.size()), sumPP);
        int layers = 0;
        for (const std::string& n : split) layers += std::stoi(n);
        QCOMPARE(layers, d.model.num_layers);
        QCOMPARE(valuesAfter(args0, "--hetero-device-types"), (std::vector<std::string>{"H800", "A100-80GB", "910B-376T"}));
        // Each node says its own type; vendors with different libraries talk through gloo.
        QCOMPARE(valuesAfter(args0, "--hetero-current-device-type"), std::vector<std::string>{"H800"});
        QCOMPARE(valuesAfter(args4, "--hetero-current-device-type"), std::vector<std::string>{"910B-376T"});
        QVERIFY(contains(args0, "--hetero-use-cpu-communication"));
        QCOMPARE(valuesAfter(args0, "--nproc_per_node"), std::vector<std::string>{"8"});
        // Per-stage recompute: stages 0-2 off, stages 3-4 full, over M = 64 / (1 * 4) = 16 micro-batches.
        QCOMPARE(valuesAfter(args0, "--recompute-granularity-per-stage-micro-batch"),
                 (std::vector<std::string>{"[3, 16, 0]", "[2, 16, 1]"}));
        QCOMPARE(valuesAfter(args0, "--recompute-num-layers-per-stage-micro-batch"),
                 (std::vector<std::string>{"[3, 16, 0]", "[2, 16, 1]"}));
        // Hostfile: node-rank order with type= on every line.
        const std::vector<int> ids = test::nodeIds(d.cluster);
        std::string expected = "# node-rank order; FlagScale hostfile format \"<host> slots=<N> type=<TYPE>\"\n";
        const char* types[5] = {"H800", "H800", "A100-80GB", "910B-376T", "910B-376T"};
        for (int n = 0; n < 5; ++n)
            expected += d.cluster.node(ids[static_cast<std::size_t>(n)])->host + " slots=8 type=" + types[n] + "\n";
        QCOMPARE(r.hostfile, expected);
        // Every flag is an option of FlagScale's Megatron-LM (reference list).
        const std::set<std::string> known = referenceFlags("flagscale-megatron-flags.txt");
        // The entry through FLAGSCALE_HOME, which defaults to the folder the launcher runs from.
        auto entry = std::find(args0.begin(), args0.end(), dir.filePath("flagscale/train/train_gpt.py").toStdString());
        QVERIFY(entry != args0.end());
        for (auto it = entry + 1; it != args0.end(); ++it)
            if (it->rfind("--", 0) == 0)
                QVERIFY2(known.count(*it), it->c_str());
    }

    void aliasesSpelledByTheCatalog()
    {
        // A plan may name a stage's type by an alias ("h800", "NVIDIA H800"): the launcher
        // spells it as the catalog does, so that the hostfile's type=, --hetero-device-types
        // and each node's current type agree (FlagScale matches them as strings).
        PlanDocument d = flagscalePlan();
        d.plan.stages[0].device_type = "h800";
        d.plan.stages[1].device_type = "NVIDIA H800";
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        const ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        const ExportResult plain = exportLauncher(flagscalePlan(), o);
        QCOMPARE(r.script, plain.script);
        QCOMPARE(r.hostfile, plain.hostfile);
    }

    void flagscaleRoundTrip_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("H800 + 910B, full recompute on the 910B mesh") << 0;
        QTest::newRow("H800 + A100 + 910B, ETP 2 on the A100 mesh") << 1;
    }

    void flagscaleRoundTrip()
    {
        // Export a heterogeneous plan for FlagScale, import the launcher back: the same stages
        // (device types, layers, TP/CP/EP/ETP/DP/MBS, recompute, devices) and, with the
        // script's own overlap switches, the same predicted iteration.
        QFETCH(int, which);
        const PlanDocument d = which == 0 ? test::h800And910bPlan() : flagscalePlan();
        const ExportResult r = exportLauncher(d, flagscaleOptions());
        QVERIFY2(r.ok, r.refusal.c_str());
        // Both plans have 910B stages: the header says what FlagScale needs on those nodes,
        // and not Megatron-LM's MindSpeed recipe.
        QVERIFY2(r.script.find("# FlagScale runs the Ascend or Gaudi stages through its vendor adaptation") != std::string::npos,
                 r.script.c_str());
        QVERIFY(r.script.find("mindspeed.megatron_adaptor") == std::string::npos);
        const ImportedScript s = importMegatronScript(r.script, "launch.sh");
        QVERIFY(s.invalid_values.empty());
        QVERIFY(s.parallel.hetero());
        QCOMPARE(static_cast<int>(s.parallel.meshes.size()), static_cast<int>(planMeshes(d.plan).size()));
        QCOMPARE(s.node_hosts, r.node_order);
        QCOMPARE(s.node_processes, std::vector<int>(r.node_order.size(), 8));   // NODE_SLOTS[NODE_RANK]
        // A slot count of 0 written in the array is refused on its node rank, as --nproc_per_node
        // 0 is, not taken for 1 process on every node.
        {
            std::string zero = r.script;
            const std::size_t at = zero.find("NODE_SLOTS=( 8");
            QVERIFY(at != std::string::npos);
            zero.replace(at, 14, "NODE_SLOTS=( 0");
            const ImportedScript z = importMegatronScript(zero, "zero.sh");
            QCOMPARE(z.invalid_values.size(), std::size_t(1));
            QVERIFY2(z.invalid_values.front().detail.find("node rank 0's --nproc_per_node 0 starts no worker process") != std::string::npos,
                     z.invalid_values.front().detail.c_str());
            // One slot count for every node rank but the last: that rank gets none.
            std::string short_ = r.script;
            const std::size_t from = short_.find("NODE_SLOTS=(");
            const std::size_t to = short_.find(')', from);
            short_.replace(from, to - from + 1, "NODE_SLOTS=( 8 )");
            const ImportedScript one = importMegatronScript(short_, "short.sh");
            QVERIFY(std::any_of(one.invalid_values.begin(), one.invalid_values.end(), [](const InvalidFlagValue& v) {
                return v.detail.find("node rank 1 has none, and torchrun refuses an empty --nproc_per_node") != std::string::npos;
            }));
        }
        QCOMPARE(static_cast<int>(s.node_device_types.size()), static_cast<int>(r.node_order.size()));   // NODE_TYPES[NODE_RANK]
        for (const std::string& w : s.warnings)
            QVERIFY2(w.find("array index") == std::string::npos && w.find("not read") == std::string::npos, w.c_str());
        const Plan back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        QCOMPARE(back.target, Target::FlagScale);
        QCOMPARE(back.global_batch_size, d.plan.global_batch_size);
        QCOMPARE(back.numMicrobatches(), d.plan.numMicrobatches());
        QCOMPARE(back.distributed_optimizer, d.plan.distributed_optimizer);
        compareStages(back, d.plan);
        QVERIFY(back.unused.empty());
        QVERIFY(deploymentProblems(back, s.model, d.cluster, DeviceCatalog::builtin(), Target::FlagScale).empty());

        // The same prediction: the plan as "hapmoe estimate --plan" costs it, the script as
        // "hapmoe estimate --script" does (loadScriptConfiguration, scriptCostOptions).
        ModelSpec scriptModel = s.model;
        scriptModel.training.global_batch_size = back.global_batch_size;
        scriptModel.training.micro_batch_size = s.parallel.micro_batch_size;
        const Prediction planned = CostModel(d.model, d.cluster, DeviceCatalog::builtin()).estimate(d.plan);
        const Prediction current =
            CostModel(scriptModel, d.cluster, DeviceCatalog::builtin(), nullptr, scriptCostOptions(s)).estimate(back);
        QVERIFY(planned.iteration_time_s > 0);
        QCOMPARE(current.iteration_time_s, planned.iteration_time_s);
        QCOMPARE(current.peak_memory_gib, planned.peak_memory_gib);

        // Each node rank's label (NODE_TYPES[NODE_RANK]) must be the type of its NODE_HOSTS
        // node: on a cluster that has other types on those hosts the script is refused.
        if (which == 0) {
            try {
                planFromScript(s, test::cluster("910B:2x8,H800:2x8"), DeviceCatalog::builtin());
                QFAIL("accepted");
            } catch (const InputError& e) {
                QCOMPARE(std::string(e.what()),
                         std::string("launch.sh: --hetero-current-device-type: node rank 0 runs as 910B-376T, but cluster "
                                     "910B:2x8,H800:2x8 has H800 devices on node2 (the node order is NODE_HOSTS)"));
            }
        }
        // Exported again, the plan read back writes the same launcher.
        PlanDocument again = d;
        again.plan = back;
        again.plan.name = d.plan.name;
        QCOMPARE(exportLauncher(again, flagscaleOptions()).script, r.script);

        // With the launcher as the original script (--script), each vendor's defaults stay in
        // its case branch: the importer reads both branches, and they used to come back as
        // global exports "# from launch.sh" that every node ran.
        ExportOptions withOriginal = flagscaleOptions();
        withOriginal.original = s;
        const std::string reexported = exportLauncher(d, withOriginal).script;
        QVERIFY(reexported.find("        export HCCL_CONNECT_TIMEOUT=\"${HCCL_CONNECT_TIMEOUT:-1200}\"\n") != std::string::npos);
        QVERIFY(reexported.find("        export NCCL_DEBUG=\"${NCCL_DEBUG:-WARN}\"\n") != std::string::npos);
        QVERIFY2(reexported.find("# from launch.sh") == std::string::npos, reexported.c_str());
    }

    void flagscaleRefusals()
    {
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        PlanDocument d = flagscalePlan();
        d.plan.stages[2].micro_batch_size = 1;   // must be DP0*MBS0/DP = 4/2 = 2
        ExportResult r = exportLauncher(d, o);
        QVERIFY(!r.ok);
        QVERIFY(r.refusal.find("MBS") != std::string::npos);
        d = flagscalePlan();
        d.plan.vpp = 2;
        QVERIFY(!exportLauncher(d, o).ok);
        // Tied embeddings need the first and last mesh with the same TP: make the last mesh TP4.
        d = flagscalePlan();
        d.model.untie_embeddings_and_output_weights = false;
        QVERIFY(exportLauncher(d, o).ok);   // TP 2 and 2
        for (int s = 3; s < 5; ++s) {
            auto& st = d.plan.stages[static_cast<std::size_t>(s)];
            st.tp = 4; st.dp = 2; st.micro_batch_size = 2; st.edp = 1; st.etp = 2;
        }
        r = exportLauncher(d, o);
        QVERIFY(!r.ok);
        QVERIFY(r.refusal.find("tied embeddings") != std::string::npos);
    }

    void hostileNamesAndValues()
    {
        // Host names that would run a command are refused, for both targets.
        for (const std::string host : {"$(reboot)", "node1;touch x", "`id`", "a b", "-oProxyCommand=x", "node\nreboot", ""}) {
            PlanDocument d = megatronPlan();
            d.cluster.nodes[1].host = host;
            for (LauncherFormat f : {LauncherFormat::Megatron, LauncherFormat::FlagScale}) {
                ExportOptions o;
                o.format = f;
                const ExportResult r = exportLauncher(d, o);
                QVERIFY2(!r.ok, host.c_str());
                QVERIFY(r.script.empty());
                QVERIFY(r.refusal.find("host name") != std::string::npos);
            }
        }
        // Values from the original script and names in the plan are quoted: running the
        // launcher passes them through as text and creates nothing.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string marker = dir.filePath("PWNED").toStdString();
        const std::string original = "export EVIL='$(touch " + marker + ")'\n"
                                     "torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                     "--save '/ckpt/$(touch " + marker + ")/a b' --load \"/x/\\`touch " + marker + "\\`\" "
                                     "--data-path \"/d/it's \\\"quoted\\\"; touch " + marker + "\"\n";
        ExportOptions o;
        o.original = importMegatronScript(original, "evil.sh");
        PlanDocument d = megatronPlan();
        d.plan.name = "plan\ntouch " + marker;
        d.model.name = "model $(touch " + marker + ")";
        const ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!args.empty());
        QVERIFY(!QFile::exists(QString::fromStdString(marker)));
        QCOMPARE(valuesAfter(args, "--save"), std::vector<std::string>{"/ckpt/$(touch " + marker + ")/a b"});
        QCOMPARE(valuesAfter(args, "--load"), std::vector<std::string>{"/x/`touch " + marker + "`"});
        QCOMPARE(valuesAfter(args, "--data-path"), std::vector<std::string>{"/d/it's \"quoted\"; touch " + marker});
        QVERIFY(!QFile::exists(QString::fromStdString(marker)));
    }

    void blockRecomputePerModelChunk()
    {
        // Megatron-LM's block method recomputes the first --recompute-num-layers layers of each
        // model chunk: megatron/core/recompute.py loops over num_layers_per_pipeline_rank =
        // len(self.layers) of one chunk's TransformerBlock (Megatron-LM d98e8a64; reference
        // section 5 says "per pipeline stage", which with VPP is a chunk). A plan that
        // recomputes 4 of a rank's 8 layers over 2 chunks is therefore block 2, and 3 of 8
        // cannot be written.
        PlanDocument d = megatronPlan();
        d.plan.vpp = 2;   // M = 64 / (1 * 4) = 16, a multiple of PP 4
        for (int s = 0; s < 4; ++s) {
            StagePlan& st = d.plan.stages[static_cast<std::size_t>(s)];
            st.first_layer = 8 * s;
            st.num_layers = 8;
            st.recompute_layers = 4;
        }
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--num-layers-per-virtual-pipeline-stage"), std::vector<std::string>{"4"});
        QCOMPARE(valuesAfter(args, "--recompute-method"), std::vector<std::string>{"block"});
        QCOMPARE(valuesAfter(args, "--recompute-num-layers"), std::vector<std::string>{"2"});
        // Imported again, the launcher is the plan: 4 layers per rank.
        const Plan back = planFromScript(importMegatronScript(r.script, "vpp.sh"), d.cluster, DeviceCatalog::builtin());
        QCOMPARE(back.vpp, 2);
        for (const StagePlan& st : back.stages)
            QCOMPARE(st.recompute_layers, 4);
        // A layout's uneven chunks: [5,8,8,11] over 2 chunks are 3+2, 4+4, 4+4, 6+5; block 2
        // recomputes 4 layers on every rank.
        d = megatronPlan();
        d.plan.vpp = 2;
        for (StagePlan& st : d.plan.stages)
            st.recompute_layers = 4;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--recompute-num-layers 2\n") != std::string::npos);
        // 3 layers a stage: stage 0's chunks of 3 and 2 give 2 at block 1, 4 at block 2. Refused.
        for (StagePlan& st : d.plan.stages)
            st.recompute_layers = 3;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY(r.script.empty());
        QVERIFY2(r.refusal.find("stage 0 (A100-80GB) recomputes 3 of its 5 layers, which no --recompute-num-layers n gives it and the "
                                "stages before it (Megatron-LM's block method recomputes the first n layers of each stage, in each of "
                                "its 2 model chunks)")
                     != std::string::npos,
                 r.refusal.c_str());
        // Without VPP nothing changes: block k per rank.
        d.plan.vpp = 1;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--recompute-num-layers 3\n") != std::string::npos);
    }

    void denseModelKeepsEtpOne()
    {
        // A dense model has no experts to split: its stages have ETP 1 and EDP all of the
        // stage's devices, as the search's plans do. Exported at TP 2 (the launcher
        // writes no ETP flag for it, so Megatron-LM's default, TP, only has to divide the
        // stage) and imported again, they still do.
        const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
        QVERIFY(llama);
        PlanDocument d = megatronPlan();
        d.model = *llama;
        for (StagePlan& st : d.plan.stages) {
            st.ep = 1;
            st.etp = 1;
            st.edp = st.tp * st.cp * st.dp;
        }
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--expert-tensor-parallel-size") == std::string::npos);
        const Plan back = planFromScript(importMegatronScript(r.script, "dense.sh"), d.cluster, DeviceCatalog::builtin());
        QCOMPARE(back.pp(), 4);
        for (const StagePlan& st : back.stages) {
            QCOMPARE(st.tp, 2);
            QCOMPARE(st.etp, 1);
            QCOMPARE(st.edp, 8);
        }
    }

    void blockRecomputeOfUnevenStages()
    {
        // Block n recomputes the first n layers of a stage, all of them on a stage of n layers
        // or fewer (megatron/core/recompute.py checkpoints the layers whose index is below
        // --recompute-num-layers, with no bound on it). On megatronPlan's 5/8/8/11 layers, 5
        // layers recomputed on every stage is every layer of the first and 5 of the others:
        // one setting, block 5, whether the first stage's plan says 5 or "all" (0).
        PlanDocument d = megatronPlan();
        for (StagePlan& st : d.plan.stages)
            st.recompute_layers = 5;
        for (int all : {5, 0}) {
            d.plan.stages[0].recompute_layers = all;
            const ExportResult r = exportLauncher(d, {});
            QVERIFY2(r.ok, r.refusal.c_str());
            QVERIFY(r.script.find("--recompute-method block\n    --recompute-num-layers 5\n") != std::string::npos);
            const Plan back = planFromScript(importMegatronScript(r.script, "block.sh"), d.cluster, DeviceCatalog::builtin());
            QCOMPARE(back.pp(), 4);
            QCOMPARE(back.stages[0].recompute, Recompute::Full);
            QVERIFY(back.stages[0].recompute_layers == 0 || back.stages[0].recompute_layers == 5);   // all 5
            for (int s = 1; s < 4; ++s)
                QCOMPARE(back.stages[static_cast<std::size_t>(s)].recompute_layers, 5);
        }
        // Every layer of the 8-layer second stage with 5 of the others: block 5 would
        // recompute only 5 of its 8. Megatron-LM has no such setting.
        d.plan.stages[1].recompute_layers = 0;
        const ExportResult r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("one recompute setting") != std::string::npos, r.refusal.c_str());
    }

    void unevenChunksOfALayout()
    {
        // A layout may place a rank's layers unevenly over its chunks ('Ettt|t|tt|ttL' at PP 2:
        // rank 0 holds layers 0-2 and 4-5, rank 1 layers 3 and 6-7, pipeline_parallel_layer_layout.py).
        // The plan keeps those chunks, its stages hold those layers, and the launcher writes
        // the layout back (in its shorthand), which imports to the same chunks.
        const ImportedScript s = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 "
            "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Ettt|t|tt|ttL'\n",
            "layout.sh");
        PlanDocument d;
        d.model = s.model;
        d.cluster = test::cluster("H800:1x8");
        d.plan = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        QCOMPARE(d.plan.vpp, 2);
        // Rank 0's 3 + 2 is the even spread, which needs no list; rank 1's 1 + 2 is not.
        QVERIFY(d.plan.stages[0].chunk_layers.empty());
        QCOMPARE(d.plan.stages[1].chunk_layers, (std::vector<int>{1, 2}));
        QCOMPARE(PipelineLayout::rankLayerRanges(d.plan), (std::vector<std::string>{"0-2, 4-5", "3, 6-7"}));
        // The even spread would have given rank 0 layers 0-2 and 5-6.
        QCOMPARE(PipelineLayout::rankLayerRanges({5, 3}, 2), (std::vector<std::string>{"0-2, 5-6", "3-4, 7"}));
        const ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY2(!args.empty(), r.script.c_str());
        QCOMPARE(valuesAfter(args, "--pipeline-model-parallel-layout"), std::vector<std::string>{"Et*3|t|t*2|t*2L"});
        QCOMPARE(planFromScript(importMegatronScript(r.script, "back.sh"), d.cluster, DeviceCatalog::builtin()).stages[1].chunk_layers,
                 (std::vector<int>{1, 2}));
        // The plan document keeps the chunks, and checks them.
        const PlanDocument back = readPlan(writePlan(d), "p.json");
        QCOMPARE(back.plan.stages[1].chunk_layers, (std::vector<int>{1, 2}));
        PlanDocument wrong = d;
        wrong.plan.stages[1].chunk_layers = {2, 2};   // 4 in a stage of 3
        try {
            validatePlanDocument(wrong, DeviceCatalog::builtin(), "p.json");
            QFAIL("no exception");
        } catch (const InputError& e) {
            QCOMPARE(e.where(), std::string("plan.stages[1].chunk_layers"));
            QVERIFY2(std::string(e.what()).find("the chunks hold 4 layers, the stage has 3") != std::string::npos, e.what());
        }

        // Empty chunks: 'E|t*4|t*4|L' gives rank 0 the embedding alone in its first chunk and
        // layers 4-7 (virtual stage 2) in its second, rank 1 layers 0-3 and the loss alone.
        // The plan keeps them, nothing refuses them, and the layout comes back as it was.
        const ImportedScript e = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 "
            "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'E|t*4|t*4|L'\n",
            "empty.sh");
        PlanDocument de = d;
        de.model = e.model;
        de.plan = planFromScript(e, de.cluster, DeviceCatalog::builtin());
        QCOMPARE(de.plan.stages[0].chunk_layers, (std::vector<int>{0, 4}));
        QCOMPARE(de.plan.stages[1].chunk_layers, (std::vector<int>{4, 0}));
        QCOMPARE(PipelineLayout::rankLayerRanges(de.plan), (std::vector<std::string>{"4-7", "0-3"}));
        const ExportResult re = exportLauncher(de, {});
        QVERIFY2(re.ok, re.refusal.c_str());
        QTemporaryDir dirE;
        QCOMPARE(valuesAfter(runLauncher(dirE, re.script, "0"), "--pipeline-model-parallel-layout"),
                 std::vector<std::string>{"E|t*4|t*4|L"});
    }

    void mtpLayersInTheLayout()
    {
        // Reference section 4a: "The count of `m` must equal `--mtp-num-layers`", and all `m`
        // sit in the last chunk of one rank. Its "(or be 0)" holds only without the flag:
        // validate_layer_layout (Megatron-LM d98e8a64) asserts count == mtp_num_layers, or
        // mtp_num_layers None with no `m`. The model's --mtp-num-layers is written, so the plan's
        // layout must hold that many `m`: after the last rank's decoder layers.
        PlanDocument d = megatronPlan();   // split [5,8,8,11]: written as a layout
        d.model.mtp_num_layers = 1;
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--mtp-num-layers"), std::vector<std::string>{"1"});
        const std::vector<std::string> layout = valuesAfter(args, "--pipeline-model-parallel-layout");
        QCOMPARE(layout, std::vector<std::string>{"Et*5|t*8|t*8|t*11mL"});
        std::vector<int> split;
        int vpp = 0, mtp = 0;
        std::string error;
        QVERIFY(PipelineLayout::parse(layout.front(), 4, split, vpp, mtp, error));
        QCOMPARE(mtp, 1);
        QCOMPARE(split, (std::vector<int>{5, 8, 8, 11}));
        // With VPP 2 the MTP layer goes into the last chunk of the last rank.
        QCOMPARE(PipelineLayout::fromSplit({5, 8, 8, 11}, 2, true, 2), std::string("Et*3|t*4|t*4|t*6|t*2|t*4|t*4|t*5mmL"));
        // Read back: the model's MTP depth, the layout's `m` agreeing with it.
        const ImportedScript back = importMegatronScript(r.script, "mtp.sh");
        QCOMPARE(back.model.mtp_num_layers, 1);
        QVERIFY(back.invalid_values.empty());
        // A model without MTP: no `m`, and an original's --mtp-num-layers is not carried over
        // (the plan was costed without it), with a note.
        d.model.mtp_num_layers = 0;
        r = exportLauncher(d, {});
        QVERIFY(r.script.find("'Et*5|t*8|t*8|t*11L'") != std::string::npos);
        ExportOptions o;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --mtp-num-layers 1\n",
            "mtp.sh");
        QCOMPARE(o.original->model.mtp_num_layers, 1);
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--mtp-num-layers"));
        QCOMPARE(valuesAfter(args, "--pipeline-model-parallel-layout"), std::vector<std::string>{"Et*5|t*8|t*8|t*11L"});
        QVERIFY2(r.script.find("--mtp-num-layers: not carried over (the plan's model has no multi-token prediction") != std::string::npos,
                 r.script.c_str());
    }

    void flagscaleMtpRules()
    {
        // flagscale-hetero-flags.txt: "Tied embeddings or MTP require the first and last meshes to
        // have the same TP", and --use-partial-reduce-for-shared-embedding is "Required when
        // embeddings are tied ... or MTP is on, --use-distributed-optimizer is set, and the first
        // and last meshes have different DP". The plan's model is untied, with one MTP depth.
        ExportOptions o = flagscaleOptions();
        PlanDocument d = flagscalePlan();   // first mesh H800 TP2 DP4, last mesh 910B TP2 DP4
        d.model.mtp_num_layers = 1;
        d.plan.distributed_optimizer = true;
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--mtp-num-layers 1") != std::string::npos);
        QVERIFY(r.script.find("--use-partial-reduce-for-shared-embedding") == std::string::npos);   // same DP
        // Last mesh TP4 DP2: refused with MTP (accepted without it, the model being untied).
        for (int s = 3; s < 5; ++s) {
            StagePlan& st = d.plan.stages[static_cast<std::size_t>(s)];
            st.tp = 4; st.dp = 2; st.micro_batch_size = 2; st.etp = 2; st.edp = 1;
        }
        PlanDocument untied = d;
        untied.model.mtp_num_layers = 0;
        QVERIFY(exportLauncher(untied, o).ok);
        r = exportLauncher(d, o);
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("--mtp-num-layers needs the first and last mesh to have the same TP (2 vs 4)") != std::string::npos,
                 r.refusal.c_str());
        // Last mesh TP2 DP2 on 4 devices per node: same TP, DPs 4 and 2 divide; with the
        // distributed optimizer the partial reduce is written.
        d = flagscalePlan();
        d.model.mtp_num_layers = 1;
        d.plan.distributed_optimizer = true;
        for (int s = 3; s < 5; ++s) {
            StagePlan& st = d.plan.stages[static_cast<std::size_t>(s)];
            st.devices.front().count = 4;
            st.dp = 2; st.micro_batch_size = 2; st.edp = 1;
        }
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        const std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--use-partial-reduce-for-shared-embedding"));
        QCOMPARE(valuesAfter(args, "--hetero-process-meshes"),
                 (std::vector<std::string>{"2", "1", "4", "4", "2", "4", "1", "4", "2", "1", "2", "1", "4", "2", "2"}));
        // The same plan without MTP and untied: no partial reduce.
        d.model.mtp_num_layers = 0;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--use-partial-reduce-for-shared-embedding") == std::string::npos);
    }

    void flexDispatcher()
    {
        // Reference section 1: --moe-flex-dispatcher-backend is HEAD-only (Megatron-LM d98e8a64,
        // default deepep); section 7: --moe-enable-deepep "means flex+deepep". FlagScale's
        // Megatron-LM 8479eb35 has no backend flag and its MoEFlexTokenDispatcher asserts
        // --moe-enable-deepep. Both versions' DeepEP path asserts TPxEP > 1 over the expert grid
        // (token_dispatcher.py: tp_size is the expert-TP group).
        // DeepEP runs on neither the A100 (compute capability 8.0) nor the 910B of these plans'
        // clusters (deepseek-ai/DeepEP README: SM90 and NVLink): refused, then on H800 only.
        PlanDocument d = flagscalePlan();
        d.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
        ExportResult r = exportLauncher(d, flagscaleOptions());
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("flex dispatcher needs devices DeepEP runs on") != std::string::npos, r.refusal.c_str());
        QVERIFY2(r.refusal.find("compute capability 8.0") != std::string::npos, r.refusal.c_str());
        d = onH800(d);
        r = exportLauncher(d, flagscaleOptions());
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--moe-token-dispatcher-type"), std::vector<std::string>{"flex"});
        QVERIFY(contains(args, "--moe-enable-deepep"));
        PlanDocument m = onH800(megatronPlan());
        m.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
        r = exportLauncher(m, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--moe-enable-deepep"));   // deprecated there; deepep is the default backend
        // EP 1 and ETP 1: refused for both targets.
        for (StagePlan& st : m.plan.stages) {
            st.ep = 1; st.etp = 1; st.edp = st.tp * st.cp * st.dp;
        }
        r = exportLauncher(m, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("flex dispatcher needs ETP*EP > 1") != std::string::npos, r.refusal.c_str());
        QVERIFY(!exportLauncher(m, flagscaleOptions()).ok);
        // Megatron-LM's HybridEP backend has no such limit.
        ExportOptions o;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --moe-flex-dispatcher-backend hybridep\n",
            "hybridep.sh");
        r = exportLauncher(m, o);
        QVERIFY2(r.ok, r.refusal.c_str());
    }

    void originalEnvironmentWins()
    {
        // docs/megatron.md section 2: the launcher sets NCCL_DEBUG (and HCCL_CONNECT_TIMEOUT) as
        // defaults, "then the original script's exported variables": a value the original
        // exports is the one the training sees, for both targets.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString bin = dir.filePath("bin");
        QDir().mkpath(bin);
        test::writeText(bin + "/torchrun", "#!/bin/sh\nprintf '%s\\n' \"NCCL_DEBUG=${NCCL_DEBUG:-}\" > \"$ARGS_OUT\"\n");
        QFile::setPermissions(bin + "/torchrun", QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QProcessEnvironment env = launcherEnvironment();
        env.insert("PATH", bin + ":" + env.value("PATH"));
        env.insert("ARGS_OUT", dir.filePath("env.txt"));
        env.remove("NCCL_DEBUG");
        fakeFlagScaleHome(dir);
        ExportOptions o;
        o.original = importMegatronScript(
            "export NCCL_DEBUG=INFO\n"
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16\n",
            "env.sh");
        for (LauncherFormat f : {LauncherFormat::Megatron, LauncherFormat::FlagScale}) {
            o.format = f;
            const ExportResult r = exportLauncher(f == LauncherFormat::Megatron ? megatronPlan() : flagscalePlan(), o);
            QVERIFY2(r.ok, r.refusal.c_str());
            QVERIFY(test::writeText(dir.filePath("launch.sh"), r.script));
            QCOMPARE(test::runBash({dir.filePath("launch.sh"), "0"}, dir.path(), nullptr, env), 0);
            QFile out(dir.filePath("env.txt"));
            QVERIFY(out.open(QIODevice::ReadOnly));
            QCOMPARE(out.readAll().trimmed(), QByteArray("NCCL_DEBUG=INFO"));
        }
        // Without it the default stays.
        o.original.reset();
        o.format = LauncherFormat::Megatron;
        const ExportResult r = exportLauncher(megatronPlan(), o);
        QVERIFY(r.script.find("export NCCL_DEBUG=\"${NCCL_DEBUG:-WARN}\"") != std::string::npos);
    }

    void replacedMeshFlagsAreNoted()
    {
        // docs/megatron.md section 2: the original's flags the plan writes again are listed in
        // the header when their value changes. A FlagScale original's meshes (reference section
        // 9: --hetero-process-meshes, --hetero-pipeline-layer-split) are replaced by the plan's.
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.original = importMegatronScript(
            "torchrun --nnodes 2 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 "
            "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --enable-hetero "
            "--hetero-process-meshes 2 1 1 4 1 4 1 1 2 1 --hetero-device-types A800 A100 --hetero-current-device-type A800 "
            "--hetero-pipeline-layer-split 18 14\n",
            "hetero.sh");
        const ExportResult r = exportLauncher(flagscalePlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "--hetero-pipeline-layer-split 18 14 -> 6 7 6 6 7 (the plan's)"));
        QVERIFY(hasNote(r, "--hetero-process-meshes 2 1 1 4 1 4 1 1 2 1 -> 2 1 4 4 2 4 1 4 2 1 2 1 4 4 2 (the plan's)"));
        QVERIFY(hasNote(r, "--hetero-device-types A800 A100 -> H800 A100-80GB 910B-376T (the plan's)"));
        QVERIFY(!hasNote(r, "--hetero-current-device-type"));   // set per node by design
        QVERIFY(r.script.find("# --hetero-pipeline-layer-split 18 14 -> 6 7 6 6 7 (the plan's)") != std::string::npos);
    }

    void catalogStringsInComments()
    {
        // A catalog's vendor and collective library reach the comment above each device type's
        // environment; a line break in them must not end the comment and start a command
        // (docs/megatron.md section 2, "Values that reach the script": names in comments lose
        // their control characters). Both writers. A hapmoe.devices file with a line break in
        // those fields is refused when read; a catalog built in code is not checked, so the
        // writers hold the line themselves.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string marker = dir.filePath("PWNED").toStdString();
        const std::string acme = "{\"format\": \"hapmoe.devices\", \"version\": 1, \"devices\": [{\"name\": \"XPU1\", "
                                 "\"vendor\": \"ACME\\ntouch PWNED\", \"bf16_tflops\": 300, \"memory_gib\": 80, \"hbm_gbps\": 2000, "
                                 "\"intra_node_gbps\": 200, \"inter_node_gbps\": 25, \"collective_library\": \"XCCL\"}]}";
        try {
            DeviceCatalog::fromJson(acme, "acme.json");
            QFAIL("a vendor with a line break is read");
        } catch (const InputError& e) {
            QCOMPARE(e.where(), std::string("devices[0].vendor"));
        }
        DeviceType xpu1 = *DeviceCatalog::builtin().find("H800");
        xpu1.name = "XPU1";
        xpu1.aliases.clear();
        xpu1.vendor = "ACME\ntouch " + marker + "\n#";
        xpu1.collective_library = "XCCL\ntouch " + marker;
        xpu1.compute_capability = 0;
        DeviceCatalog cat = DeviceCatalog::builtin();
        cat.merge(DeviceCatalog({xpu1}), "acme.json");
        PlanDocument d;
        d.model = test::mixtral8x7b();
        d.cluster = test::cluster("XPU1:1x8,H800:1x8", cat);
        const std::vector<int> ids = test::nodeIds(d.cluster);
        d.plan.name = "XPU1 + H800";
        d.plan.global_batch_size = 64;
        d.plan.target = Target::FlagScale;
        for (int s = 0; s < 2; ++s)
            d.plan.stages.push_back(test::stageOn(d.cluster, {ids[static_cast<std::size_t>(s)]}, 16 * s, 16, 2, 1, 4, 4, 1));
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.catalog = &cat;
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("        # XCCL touch " + marker + " (ACME touch " + marker + " #)\n") != std::string::npos);
        QVERIFY(!runLauncher(dir, r.script, "0").empty());
        QVERIFY(!QFile::exists(QString::fromStdString(marker)));

        // Megatron-LM: one vendor, the same comment line at the top of the environment.
        PlanDocument m = d;
        m.cluster = test::cluster("XPU1:2x8", cat);
        const std::vector<int> xpu = test::nodeIds(m.cluster);
        m.plan.target = Target::Megatron;
        m.plan.stages.clear();
        for (int s = 0; s < 2; ++s)
            m.plan.stages.push_back(test::stageOn(m.cluster, {xpu[static_cast<std::size_t>(s)]}, 16 * s, 16, 2, 1, 4, 4, 1));
        o.format = LauncherFormat::Megatron;
        r = exportLauncher(m, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("# Environment for XCCL touch " + marker + " (ACME touch " + marker + " #); Megatron-LM asserts")
                != std::string::npos);
        QVERIFY(!runLauncher(dir, r.script, "0").empty());
        QVERIFY(!QFile::exists(QString::fromStdString(marker)));

        // A ${NAME} in a name is comment text: the launcher does not ask for NAME to be set
        // (only what its code reads from outside is checked, docs/megatron.md section 2).
        PlanDocument named = megatronPlan();
        named.plan.name = "plan ${PLAN_SUFFIX}";
        named.model.name = "model ${MODEL_SUFFIX}";
        r = exportLauncher(named, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("# Plan: plan ${PLAN_SUFFIX}; model: model ${MODEL_SUFFIX} (32 layers)") != std::string::npos);
        QVERIFY(r.script.find("${PLAN_SUFFIX?") == std::string::npos);
        QVERIFY(!hasNote(r, "set before running"));
        QVERIFY(!runLauncher(dir, r.script, "0").empty());
    }

    void fp8RecipeRoundTrip()
    {
        // The plan's model's --fp8-recipe goes out when it is not Megatron-LM's default
        // (delayed), or when the original spelled it out, and comes back; a recipe the plan's
        // devices cannot run is refused (mxfp8 needs compute capability 10.x, the H100 has 9.0).
        PlanDocument d = onFp8Devices(megatronPlan());
        d.model.training.fp8_format = Fp8Format::Hybrid;
        ExportResult r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--fp8-recipe") == std::string::npos);
        d.model.training.fp8_recipe = Fp8Recipe::Blockwise;
        r = exportLauncher(d, {});
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--fp8-recipe blockwise\n") != std::string::npos);
        QCOMPARE(importMegatronScript(r.script, "b.sh").model.training.fp8_recipe, Fp8Recipe::Blockwise);
        ExportOptions spelled;
        spelled.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --bf16 --micro-batch-size 1 --fp8-format hybrid --fp8-recipe delayed\n",
            "spelled.sh");
        d.model.training.fp8_recipe = Fp8Recipe::Delayed;
        r = exportLauncher(d, spelled);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("--fp8-recipe delayed\n") != std::string::npos);
        d.model.training.fp8_recipe = Fp8Recipe::MXFP8;
        r = exportLauncher(d, {});
        QVERIFY(!r.ok);
        QVERIFY2(r.refusal.find("Transformer Engine runs the mxfp8 recipe on NVIDIA compute capability 10.x") != std::string::npos,
                 r.refusal.c_str());
    }

    void carriedFlagsNeedThePlansSetup()
    {
        // Flags of the original that Megatron-LM's validate_args asserts against the plan are
        // dropped with the rule (megatron-and-flagscale.md): "--hybrid-context-parallel cannot
        // be used with PP>1" (section 2); "fp8 param gather requires the distributed optimizer
        // or an FSDP variant" (section 3), and with optimizer CPU offload "it needs
        // --fp8-recipe delayed" (section 6); --overlap-param-gather "needs the former plus
        // dist-opt", and "--overlap-param-gather-with-optimizer-step also needs VPP and is not
        // supported with distributed checkpointing" (section 6; --ckpt-format defaults to
        // torch_dist, megatron-lm-flags-detailed.tsv).
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16 ";
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ExportOptions o;
        o.original = importMegatronScript(head + "--hybrid-context-parallel --fp8-format hybrid --fp8-param-gather "
                                                 "--overlap-param-gather-with-optimizer-step\n",
                                          "a.sh");
        PlanDocument d = onFp8Devices(megatronPlan());   // PP 4, distributed optimizer, no VPP
        d.model.training.fp8_format = Fp8Format::Hybrid;
        d.model.training.fp8_param_gather = true;   // as the import reads the original
        QVERIFY(o.original->model.training.fp8_param_gather);
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--hybrid-context-parallel"));
        QVERIFY(hasNote(r, "--hybrid-context-parallel: not carried over (it cannot be used with PP > 1; the plan's PP is 4)"));
        QVERIFY(contains(args, "--fp8-param-gather"));   // with the distributed optimizer
        QVERIFY(!contains(args, "--overlap-param-gather-with-optimizer-step"));
        QVERIFY(hasNote(r, "--overlap-param-gather-with-optimizer-step: not carried over (needs a virtual pipeline)"));

        // Without the distributed optimizer the launcher writes no --overlap-param-gather.
        d.plan.distributed_optimizer = false;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--overlap-param-gather"));
        QVERIFY(!contains(args, "--fp8-param-gather"));
        QVERIFY(hasNote(r, "--fp8-param-gather -> not written (it needs the distributed optimizer or an FSDP variant; the plan "
                           "does not use the distributed optimizer)"));
        QVERIFY(!contains(args, "--overlap-param-gather-with-optimizer-step"));
        QVERIFY(hasNote(r, "--overlap-param-gather-with-optimizer-step: not carried over (it needs --overlap-param-gather, which "
                           "needs the distributed optimizer; the plan does not use it)"));

        // VPP 2 with the distributed optimizer: still refused with distributed checkpoints,
        // kept with --ckpt-format torch.
        d = onFp8Devices(megatronPlan());
        d.plan.vpp = 2;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-param-gather"));
        QVERIFY(!contains(args, "--overlap-param-gather-with-optimizer-step"));
        QVERIFY(hasNote(r, "--overlap-param-gather-with-optimizer-step: not carried over (it is not supported with distributed "
                           "checkpointing, which --ckpt-format torch_dist (Megatron-LM's default) is; --ckpt-format torch allows it)"));
        o.original = importMegatronScript(head + "--ckpt-format torch --overlap-param-gather-with-optimizer-step\n", "b.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-param-gather-with-optimizer-step"));
        QCOMPARE(valuesAfter(args, "--ckpt-format"), std::vector<std::string>{"torch"});

        // Optimizer CPU offload with another fp8 recipe: no fp8 param gather.
        d = onFp8Devices(megatronPlan());
        d.model.training.fp8_format = Fp8Format::E4M3;
        d.model.training.fp8_param_gather = true;
        d.plan.optimizer_offload_fraction = 0.5;
        o.original = importMegatronScript(head + "--fp8-format e4m3 --fp8-recipe tensorwise --fp8-param-gather\n", "c.sh");
        QCOMPARE(o.original->model.training.fp8_recipe, Fp8Recipe::Tensorwise);
        d.model.training.fp8_recipe = Fp8Recipe::Tensorwise;   // as the import reads the original
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--fp8-recipe"), std::vector<std::string>{"tensorwise"});
        QVERIFY(!contains(args, "--fp8-param-gather"));
        QVERIFY(hasNote(r, "--fp8-param-gather -> not written (with the plan's optimizer CPU offload it needs --fp8-recipe "
                           "delayed, not tensorwise)"));
        // A plan whose model keeps bf16 weights does not write the original's flag.
        d.model.training.fp8_param_gather = false;
        d.plan.optimizer_offload_fraction = 0;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(!contains(runLauncher(dir, r.script, "0"), "--fp8-param-gather"));
        QVERIFY(hasNote(r, "--fp8-param-gather -> not written (the plan's model keeps its weights in bf16)"));

        // PP 1: the hybrid context parallelism stays.
        PlanDocument one;
        one.model = test::mixtral8x7b();
        one.cluster = test::cluster("H800:1x8");
        one.plan.global_batch_size = 64;
        one.plan.distributed_optimizer = true;
        one.plan.stages.push_back(test::stageOn(one.cluster, test::nodeIds(one.cluster), 0, 32, 2, 1, 4, 4, 1));
        o.original = importMegatronScript(head + "--hybrid-context-parallel\n", "d.sh");
        r = exportLauncher(one, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(contains(runLauncher(dir, r.script, "0"), "--hybrid-context-parallel"));
    }

    void flagscaleDropsHeadOnlyValues()
    {
        // Reference section 1: "Some values are also HEAD-only: --moe-router-score-function
        // sqrtsoftplus (8479eb35 allows only softmax and sigmoid), --moe-router-load-balancing-type
        // quantile_balancing, and the --recompute-modules entries gdn_*, gdp_* and mhc".
        // FlagScale runs 8479eb35: those values go, the rest of each list stays. Section 7:
        // --moe-router-enable-expert-bias needs sigmoid or sqrtsoftplus, and several
        // load-balancing types take one --moe-aux-loss-coeff each.
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --moe-router-score-function sqrtsoftplus "
            "--moe-router-enable-expert-bias --moe-router-load-balancing-type seq_aux_loss quantile_balancing "
            "--moe-aux-loss-coeff 1e-3 0 --recompute-modules core_attn mhc gdn_norm_out gdp_qkv\n",
            "head.sh");
        PlanDocument d = flagscalePlan();
        for (StagePlan& st : d.plan.stages)
            st.recompute = Recompute::Selective;
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--moe-router-score-function"));
        QVERIFY(hasNote(r, "--moe-router-score-function sqrtsoftplus: not carried over (FlagScale's Megatron-LM 8479eb35 does not "
                           "accept this value)"));
        QVERIFY(!contains(args, "--moe-router-enable-expert-bias"));
        QVERIFY(hasNote(r, "--moe-router-enable-expert-bias: not carried over (it needs --moe-router-score-function sigmoid, and the "
                           "original's sqrtsoftplus is not carried over)"));
        QCOMPARE(valuesAfter(args, "--moe-router-load-balancing-type"), std::vector<std::string>{"seq_aux_loss"});
        QVERIFY(hasNote(r, "--moe-router-load-balancing-type quantile_balancing: not carried over (FlagScale's Megatron-LM 8479eb35 "
                           "does not accept this value); seq_aux_loss kept"));
        QCOMPARE(valuesAfter(args, "--moe-aux-loss-coeff"), std::vector<std::string>{"1e-3"});
        QVERIFY(hasNote(r, "--moe-aux-loss-coeff 0: not carried over (one coefficient per load-balancing type, and that type is "
                           "not carried over); 1e-3 kept"));
        QCOMPARE(valuesAfter(args, "--recompute-modules"), std::vector<std::string>{"core_attn"});
        QVERIFY(hasNote(r, "--recompute-modules mhc gdn_norm_out gdp_qkv: not carried over (FlagScale's Megatron-LM 8479eb35 does "
                           "not accept these values); core_attn kept"));
        QVERIFY(r.script.find("    --recompute-modules core_attn\n") != std::string::npos);

        // A list left empty is not written (an empty list cannot be passed: reference section 1).
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --recompute-modules mhc "
            "--moe-router-load-balancing-type quantile_balancing\n",
            "mhc.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        // The plan's own module (Megatron-Core's default, core attention) takes the list's place.
        QCOMPARE(valuesAfter(args, "--recompute-modules"), std::vector<std::string>{"core_attn"});
        QVERIFY(!contains(args, "--moe-router-load-balancing-type"));
        QVERIFY(hasNote(r, "--recompute-modules mhc: not carried over (FlagScale's Megatron-LM 8479eb35 does not accept this value); "
                           "core_attn kept"));

        // Megatron-LM d98e8a64 accepts them all.
        PlanDocument m = megatronPlan();
        for (StagePlan& st : m.plan.stages) {
            st.recompute = Recompute::Selective;
            st.recompute_layers = 0;
        }
        o.format = LauncherFormat::Megatron;
        o.original = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 32768 --bf16 --moe-router-score-function sqrtsoftplus "
            "--moe-router-load-balancing-type quantile_balancing --recompute-modules core_attn mhc\n",
            "head.sh");
        r = exportLauncher(m, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QCOMPARE(valuesAfter(args, "--moe-router-score-function"), std::vector<std::string>{"sqrtsoftplus"});
        QCOMPARE(valuesAfter(args, "--moe-router-load-balancing-type"), std::vector<std::string>{"quantile_balancing"});
        QCOMPARE(valuesAfter(args, "--recompute-modules"), (std::vector<std::string>{"core_attn", "mhc"}));
    }

    void flagscaleImportPath()
    {
        // FlagScale runs its own Megatron-LM (third_party/Megatron-LM, patched: reference
        // section 9), which must come before any other on PYTHONPATH, as FlagScale's runner
        // (flagscale/runner/runner_train.py) puts it. The original's PYTHONPATH, written for its
        // own Megatron-LM checkout, is not carried over; the environment's still follows.
        const std::string original = "export PYTHONPATH=/workspace/Megatron-LM:${PYTHONPATH}\n"
                                     "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                     "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 32768 --bf16\n";
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.original = importMegatronScript(original, "pp.sh");
        ExportResult r = exportLauncher(flagscalePlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(hasNote(r, "PYTHONPATH: the original's /workspace/Megatron-LM:${PYTHONPATH} is not carried over; the launcher puts "
                           "FlagScale and its Megatron-LM (FLAGSCALE_HOME and FLAGSCALE_HOME/third_party/Megatron-LM) first, then "
                           "the PYTHONPATH of the environment it runs in"));
        QVERIFY(r.script.find("export PYTHONPATH=\"/workspace") == std::string::npos);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcessEnvironment env = launcherEnvironment();
        env.insert("PYTHONPATH", "/site/extra");
        std::vector<std::string> args = runLauncher(dir, r.script, "0", nullptr, env);
        QVERIFY(args.size() > 1);
        QCOMPARE(args[1], "PYTHONPATH=" + dir.path().toStdString() + ":" + dir.path().toStdString() + "/third_party/Megatron-LM:/site/extra");

        // Megatron-LM runs the original's own checkout: its PYTHONPATH stays.
        o.format = LauncherFormat::Megatron;
        r = exportLauncher(megatronPlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(!hasNote(r, "PYTHONPATH"));
        args = runLauncher(dir, r.script, "0", nullptr, env);
        QVERIFY(args.size() > 1);
        QCOMPARE(args[1], std::string("PYTHONPATH=/workspace/Megatron-LM:/site/extra"));
    }

    void environmentPerDeviceTypeOfTheOriginal()
    {
        // A FlagScale script that sets its environment by its node's device type, taken from
        // its node rank: read as node 0 alone, the launcher gave every node the H800 branch's
        // NCCL_IB_DISABLE, the 910B nodes the default HCCL_CONNECT_TIMEOUT and no set_env.sh.
        // It is read once per device type (NODE_RANK 0, 2, 3), and each type's own settings go
        // into its case branch, the vendor's set_env.sh before its exports; the settings all
        // readings share come after the block, the original's cd too. Its labels stay
        // (Ascend910B for 910B-376T), and so does its master address.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string file = dir.filePath("hetero.sh").toStdString();
        test::writeText(QString::fromStdString(file),
                        "NODE_RANK=${NODE_RANK:-0}\n"
                        "NODE_TYPES=(H800 H800 A100 Ascend910B Ascend910B)\n"
                        "DEVICE_TYPE=${NODE_TYPES[$NODE_RANK]}\n"
                        "if [ \"$DEVICE_TYPE\" = Ascend910B ]; then\n"
                        "    source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
                        "    export HCCL_CONNECT_TIMEOUT=1800\n"
                        "else\n"
                        "    export NCCL_IB_DISABLE=0\n"
                        "fi\n"
                        "export SHARED_SETTING=7\n"
                        "cd /opt/FlagScale\n"
                        "torchrun --nnodes 5 --node_rank $NODE_RANK --nproc_per_node 8 --master_addr 10.1.0.10 --master_port 7000 "
                        "flagscale/train/train_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                        "--max-position-embeddings 32768 --bf16 --enable-hetero --hetero-process-meshes 2 1 4 4 2 4 1 4 2 1 2 1 4 4 2 "
                        "--hetero-device-types H800 A100 Ascend910B --hetero-current-device-type $DEVICE_TYPE "
                        "--hetero-pipeline-layer-split 6 7 6 6 7 --pipeline-model-parallel-size 5 --tensor-model-parallel-size 2 "
                        "--sequence-parallel --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 "
                        "--expert-tensor-parallel-size-per-process-mesh 1 2 1 --swiglu --ffn-hidden-size 14336 "
                        "--group-query-attention --num-query-groups 8 --normalization RMSNorm --disable-bias-linear "
                        "--untie-embeddings-and-output-weights --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000\n");
        ExportOptions o;
        o.format = LauncherFormat::FlagScale;
        o.original = importMegatronScriptFile(file);
        QCOMPARE(o.original->current_device_type, std::string("H800"));
        const ExportResult r = exportLauncher(flagscalePlan(), o);
        QVERIFY2(r.ok, r.refusal.c_str());
        const std::string& sh = r.script;
        const std::size_t esac = sh.find("esac\n");
        const std::size_t h800 = sh.find("    H800)\n"), a100 = sh.find("    A100)\n"), ascend = sh.find("    Ascend910B)\n");
        QVERIFY2(h800 != std::string::npos && a100 != std::string::npos && ascend != std::string::npos && esac != std::string::npos,
                 sh.c_str());
        auto inBranch = [&](std::size_t from, const std::string& line) {
            const std::size_t at = sh.find(line, from);
            return at != std::string::npos && at < sh.find(";;", from);
        };
        QVERIFY(inBranch(h800, "export NCCL_IB_DISABLE=0   # from " + file + " (as read for the H800 nodes)"));
        QVERIFY(inBranch(a100, "export NCCL_IB_DISABLE=0   # from " + file + " (as read for the A100 nodes)"));
        QVERIFY(!inBranch(ascend, "NCCL_IB_DISABLE"));
        QVERIFY(inBranch(ascend, "source /usr/local/Ascend/ascend-toolkit/set_env.sh   # from " + file + " line 5"));
        QVERIFY(inBranch(ascend, "export HCCL_CONNECT_TIMEOUT=1800   # from " + file + " (as read for the Ascend910B nodes)"));
        QVERIFY(!inBranch(ascend, "HCCL_CONNECT_TIMEOUT:-1200"));   // the original's value, not the default
        QVERIFY(sh.find("source ", esac) == std::string::npos);
        QVERIFY(sh.find("export SHARED_SETTING=7   # from " + file + "\n", esac) != std::string::npos);
        QVERIFY(sh.find("cd /opt/FlagScale   # from " + file + " line 11\n", esac) != std::string::npos);
        QVERIFY(sh.find("NODE_TYPES=( H800 H800 A100 Ascend910B Ascend910B )") != std::string::npos);
        QVERIFY(sh.find("--hetero-device-types H800 A100 Ascend910B") != std::string::npos);
        QVERIFY(r.hostfile.find("type=Ascend910B") != std::string::npos);
        QVERIFY(sh.find("MASTER_ADDR=\"${MASTER_ADDR:-10.1.0.10}\"") != std::string::npos);
        QVERIFY(hasNote(r, "the original was read as a node of each of its device types (H800, A100, Ascend910B, NODE_RANK set to a "
                           "node of each): its exports that differ by type (HCCL_CONNECT_TIMEOUT, NCCL_IB_DISABLE) and its cd and source "
                           "commands of one type are written for each type in its case branch"));
        test::writeText(dir.filePath("launch.sh"), sh);
        QCOMPARE(test::runBash({QStringLiteral("-n"), dir.filePath("launch.sh")}, dir.path()), 0);

        // A Megatron-LM launcher for the 910B nodes alone takes the 910B reading.
        PlanDocument ascendOnly = flagscalePlan();
        ascendOnly.cluster = test::cluster("910B:2x8");
        const std::vector<int> ids = test::nodeIds(ascendOnly.cluster);
        ascendOnly.plan.stages = {test::stageOn(ascendOnly.cluster, {ids[0]}, 0, 16, 2, 1, 4, 4, 1),
                                  test::stageOn(ascendOnly.cluster, {ids[1]}, 16, 16, 2, 1, 4, 4, 1)};
        ascendOnly.plan.target = Target::Megatron;
        o.format = LauncherFormat::Megatron;
        const ExportResult m = exportLauncher(ascendOnly, o);
        QVERIFY2(m.ok, m.refusal.c_str());
        QVERIFY(m.script.find("export HCCL_CONNECT_TIMEOUT=1800   # from " + file + " (as read for the Ascend910B nodes)") != std::string::npos);
        QVERIFY(m.script.find("source /usr/local/Ascend/ascend-toolkit/set_env.sh") != std::string::npos);
        QVERIFY(m.script.find("export NCCL_IB_DISABLE") == std::string::npos);   // the note names it, nothing sets it
    }

    void originalFlagsAgainstThePlansCosting()
    {
        // The export says where the original's flags and the plan's costing part: the
        // original's --grad-reduce-in-bf16 is dropped (the plan's model reduces gradients in
        // fp32, Megatron-LM's default with bf16: reference section 2), its --tp-comm-overlap
        // is kept though the plan was costed without it, and FlagScale's entry gives way to
        // pretrain_gpt.py in a Megatron-LM launcher, which does not put FlagScale on PYTHONPATH.
        const std::string head = "torchrun --nproc_per_node=8 ENTRY --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                 "--seq-length 4096 --max-position-embeddings 32768 --bf16 --tensor-model-parallel-size 2 "
                                 "--sequence-parallel --grad-reduce-in-bf16 --tp-comm-overlap\n";
        auto withEntry = [&](const std::string& entry) {
            std::string text = head;
            return text.replace(text.find("ENTRY"), 5, entry);
        };
        PlanDocument d = megatronPlan();
        d.prediction = Prediction{};   // overlap.tp_comm off
        ExportOptions o;
        o.original = importMegatronScript(withEntry("pretrain_gpt.py"), "g.sh");
        ExportResult r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QTemporaryDir dir;
        std::vector<std::string> args = runLauncher(dir, r.script, "0");
        QVERIFY(!contains(args, "--grad-reduce-in-bf16"));
        QVERIFY(hasNote(r, "--grad-reduce-in-bf16 -> not written (the plan's model reduces gradients in fp32)"));
        QVERIFY(contains(args, "--tp-comm-overlap"));
        QVERIFY(hasNote(r, "--tp-comm-overlap: kept from the original, but the plan was costed without it"));
        // The original names no tokenizer, so neither does the launcher: Megatron-LM would
        // build none, and a note says what to add.
        QVERIFY(!contains(args, "--tokenizer-type"));
        QVERIFY(hasNote(r, "--tokenizer-type: not written, as the original passes none the launcher keeps"));
        {
            ExportOptions named = o;
            named.original = importMegatronScript(withEntry("pretrain_gpt.py --tokenizer-type GPT2BPETokenizer"), "t.sh");
            const ExportResult t = exportLauncher(d, named);
            QVERIFY2(t.ok, t.refusal.c_str());
            QVERIFY(!hasNote(t, "--tokenizer-type"));
        }
        // A value the original passes with its quote characters (an array element "--split
        // '99,1,0'" that bash splits) is written without them, and said.
        {
            ExportOptions quoted = o;
            quoted.original = importMegatronScript("A=(\"--split '99,1,0'\")\n" + withEntry("pretrain_gpt.py ${A[@]}"), "q.sh");
            const ExportResult q = exportLauncher(d, quoted);
            QVERIFY2(q.ok, q.refusal.c_str());
            const std::vector<std::string> qargs = runLauncher(dir, q.script, "0");
            const auto split = std::find(qargs.begin(), qargs.end(), "--split");
            QVERIFY(split != qargs.end() && split + 1 != qargs.end());
            QCOMPARE(*(split + 1), std::string("99,1,0"));
            QVERIFY(hasNote(q, "--split: the original passes '99,1,0' with its quote characters, which Megatron-LM would take as "
                               "part of the value; written without them, 99,1,0"));
        }
        // Costed with the overlap: nothing to say.
        d.prediction->overlap.tp_comm = true;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(!hasNote(r, "--tp-comm-overlap"));
        QVERIFY(!hasNote(r, "--overlap-grad-reduce"));
        // A plan costed with its data-parallel traffic exposed (a script without the overlap
        // switches) still gets them, as every exported launcher does, and a note says so.
        QVERIFY(d.plan.distributed_optimizer);
        d.prediction->overlap.grad_reduce = false;
        d.prediction->overlap.param_gather = false;
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        args = runLauncher(dir, r.script, "0");
        QVERIFY(contains(args, "--overlap-grad-reduce") && contains(args, "--overlap-param-gather"));
        QVERIFY(hasNote(r, "--overlap-grad-reduce, --overlap-param-gather: written, as in every exported launcher, but the plan "
                           "was costed without them"));
        d.prediction->overlap.grad_reduce = true;
        r = exportLauncher(d, o);
        QVERIFY(hasNote(r, "--overlap-param-gather: written, as in every exported launcher, but the plan was costed without it"));
        d.prediction->overlap.param_gather = true;
        // FlagScale's entry.
        o.original = importMegatronScript(withEntry("flagscale/train/train_gpt.py"), "fs.sh");
        r = exportLauncher(d, o);
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("torchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py \\\n") != std::string::npos);
        QVERIFY(hasNote(r, "the original's entry flagscale/train/train_gpt.py -> pretrain_gpt.py (a Megatron-LM launcher runs "
                           "Megatron-LM's entry; FlagScale's needs its PYTHONPATH, which --format flagscale writes)"));
    }

    void flagscaleHome()
    {
        // The header says to run from the FlagScale source folder or set FLAGSCALE_HOME: the
        // entry is FLAGSCALE_HOME/flagscale/train/train_gpt.py (reference section 9: FlagScale
        // launches flagscale/train/train_gpt.py), so the launcher runs from any folder, and
        // stops with a message (exit 2) when the entry is not there.
        const ExportResult r = exportLauncher(flagscalePlan(), flagscaleOptions());
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("torchrun \"${DISTRIBUTED_ARGS[@]}\" \"${FLAGSCALE_HOME}/flagscale/train/train_gpt.py\" \\\n")
                != std::string::npos);
        QTemporaryDir home, dir;
        QVERIFY(home.isValid() && dir.isValid());
        fakeFlagScaleHome(home);
        QProcessEnvironment env = launcherEnvironment();
        env.insert("FLAGSCALE_HOME", home.path());
        std::vector<std::string> args = runLauncher(dir, r.script, "0", nullptr, env);
        QVERIFY(!args.empty());
        QVERIFY(contains(args, home.filePath("flagscale/train/train_gpt.py").toStdString()));
        // The caller's PYTHONPATH follows FlagScale's folders; unset, it leaves no empty entry
        // (which Python reads as the current folder).
        env.remove("PYTHONPATH");
        args = runLauncher(dir, r.script, "0", nullptr, env);
        QVERIFY(args.size() > 1);
        QCOMPARE(args[1], "PYTHONPATH=" + home.path().toStdString() + ":" + home.path().toStdString() + "/third_party/Megatron-LM");
        env.insert("PYTHONPATH", "/site/extra");
        args = runLauncher(dir, r.script, "0", nullptr, env);
        QVERIFY(args.size() > 1);
        QCOMPARE(args[1], "PYTHONPATH=" + home.path().toStdString() + ":" + home.path().toStdString() + "/third_party/Megatron-LM:/site/extra");
        // FLAGSCALE_HOME without FlagScale in it.
        env.insert("FLAGSCALE_HOME", dir.filePath("nowhere"));
        int rc = 0;
        QByteArray output;
        QVERIFY(runLauncher(dir, r.script, "0", &rc, env, &output).empty());
        QCOMPARE(rc, 2);
        QVERIFY2(output.contains("/nowhere/flagscale/train/train_gpt.py not found; run it from the FlagScale source folder or set "
                                 "FLAGSCALE_HOME"),
                 output.constData());
        // An entry given with the export is used as it is.
        ExportOptions o = flagscaleOptions();
        o.entry_script = "my_train.py";
        const ExportResult own = exportLauncher(flagscalePlan(), o);
        QVERIFY(own.script.find("torchrun \"${DISTRIBUTED_ARGS[@]}\" my_train.py \\\n") != std::string::npos);
        QVERIFY(own.script.find("train_gpt.py not found") == std::string::npos);
    }

    void flagscaleRecomputeOfUnevenStages()
    {
        // Block n recomputes the first n layers of a stage (reference section 5: "with block
        // the number of layers recomputed per PP stage (1..layers per stage)"). The stages of
        // flagscalePlan hold 6/7/6/6/7 layers; recomputing 6 layers on each is every layer of
        // a 6-layer stage and 6 of 7 elsewhere: one setting, block 6 (uniform 1 would
        // recompute all 7 layers of stages 1 and 4).
        PlanDocument d = flagscalePlan();
        for (StagePlan& st : d.plan.stages) {
            st.recompute = Recompute::Full;
            st.recompute_layers = 6;
        }
        ExportResult r = exportLauncher(d, flagscaleOptions());
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("    --recompute-granularity full\n    --recompute-method block\n    --recompute-num-layers 6\n")
                != std::string::npos);
        QVERIFY(r.script.find("-per-stage-micro-batch") == std::string::npos);
        // Read back: 6 layers recomputed on every stage (0 = all of a 6-layer stage's), and
        // the same prediction.
        const auto recomputed = [](const StagePlan& st) {
            return st.recompute != Recompute::Full ? 0
                : st.recompute_layers <= 0 || st.recompute_layers >= st.num_layers ? st.num_layers : st.recompute_layers;
        };
        ImportedScript s = importMegatronScript(r.script, "launch.sh");
        Plan back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        QCOMPARE(back.pp(), 5);
        for (const StagePlan& st : back.stages) {
            QCOMPARE(st.recompute, Recompute::Full);
            QCOMPARE(recomputed(st), 6);
        }
        const Prediction planned = CostModel(d.model, d.cluster, DeviceCatalog::builtin()).estimate(d.plan);
        ModelSpec scriptModel = s.model;
        scriptModel.training.global_batch_size = back.global_batch_size;
        scriptModel.training.micro_batch_size = s.parallel.micro_batch_size;
        QCOMPARE(CostModel(scriptModel, d.cluster, DeviceCatalog::builtin(), nullptr, scriptCostOptions(s)).estimate(back).iteration_time_s,
                 planned.iteration_time_s);

        // Per-stage lists (reference section 9: [n_stages, M, flag], M = 64 / (1 * 4) = 16):
        // stages 0-2 off, stage 3 every one of its 6 layers (uniform 1), stage 4 the first 6
        // of 7 (block 6). Stages 3 and 4 both say 6 layers but are two settings.
        for (int i = 0; i < 3; ++i) {
            d.plan.stages[static_cast<std::size_t>(i)].recompute = Recompute::None;
            d.plan.stages[static_cast<std::size_t>(i)].recompute_layers = 0;
        }
        r = exportLauncher(d, flagscaleOptions());
        QVERIFY2(r.ok, r.refusal.c_str());
        QVERIFY(r.script.find("    --recompute-granularity-per-stage-micro-batch '[3, 16, 0]' '[1, 16, 1]' '[1, 16, 1]'\n")
                != std::string::npos);
        QVERIFY(r.script.find("    --recompute-method-per-stage-micro-batch '[3, 16, 0]' '[1, 16, 0]' '[1, 16, 1]'\n")
                != std::string::npos);
        QVERIFY(r.script.find("    --recompute-num-layers-per-stage-micro-batch '[3, 16, 0]' '[1, 16, 1]' '[1, 16, 6]'\n")
                != std::string::npos);
        s = importMegatronScript(r.script, "launch.sh");
        back = planFromScript(s, d.cluster, DeviceCatalog::builtin());
        for (int i = 0; i < 5; ++i)
            QCOMPARE(recomputed(back.stages[static_cast<std::size_t>(i)]), i < 3 ? 0 : 6);
    }

    void flagListsMatchReference()
    {
        // The embedded lists are the reference lists.
        QCOMPARE(FlagList::megatron().flags(), referenceFlags("megatron-lm-flags.txt"));
        QCOMPARE(FlagList::flagscale().flags(), referenceFlags("flagscale-megatron-flags.txt"));
        // Megatron-LM's value counts and choices are the reference table's nargs and choices
        // (columns 5 and 6 of megatron-lm-flags-detailed.tsv; choices of string options).
        std::ifstream table(std::string(HAPMOE_SHARED_REFERENCE_DIR) + "/megatron-lm-flags-detailed.tsv");
        std::string line;
        int rows = 0;
        while (std::getline(table, line)) {
            if (line.rfind("--", 0) != 0)
                continue;
            std::vector<std::string> col;
            for (std::size_t at = 0;;) {
                const std::size_t tab = line.find('\t', at);
                col.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
                if (tab == std::string::npos)
                    break;
                at = tab + 1;
            }
            QVERIFY(col.size() >= 6);
            const std::string& nargs = col[4];
            const FlagList::ValueCount want = nargs == "None" ? FlagList::ValueCount{1, 1}
                : nargs == "+"                               ? FlagList::ValueCount{1, -1}
                : nargs == "*"                               ? FlagList::ValueCount{0, -1}
                : nargs == "?"                               ? FlagList::ValueCount{0, 1}
                                                             : FlagList::ValueCount{std::stoi(nargs), std::stoi(nargs)};
            for (std::size_t at = 0; at < col[0].size();) {
                const std::size_t space = col[0].find(' ', at);
                const std::string option = col[0].substr(at, space == std::string::npos ? std::string::npos : space - at);
                const auto got = FlagList::megatron().valueCount(option);
                QVERIFY2(got && got->min == want.min && got->max == want.max, option.c_str());
                const std::vector<std::string>* choices = FlagList::megatron().choices(option);
                if (!col[5].empty() && nargs == "None" && (col[3] == "None" || col[3] == "str")) {
                    QVERIFY2(choices, option.c_str());
                    std::string joined;
                    for (const std::string& c : *choices)
                        joined += (joined.empty() ? "" : ",") + c;
                    QCOMPARE(joined, col[5]);
                }
                at = space == std::string::npos ? col[0].size() : space + 1;
            }
            ++rows;
        }
        QCOMPARE(rows, 838);
        QVERIFY(!FlagList::flagscale().valueCount("--lr"));   // FlagScale's list does not record them
        QCOMPARE(FlagList::megatron().flags().size(), std::size_t(878));   // the list's own header: 878 option strings
    }
};

QTEST_APPLESS_MAIN(TestLauncherExport)
#include "TestLauncherExport.moc"
