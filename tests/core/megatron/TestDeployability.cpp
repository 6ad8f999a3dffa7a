// Deployability rules (reference sections 2, 9 and 11) by rule id, meshes and the
// Megatron node order.

#include "MegatronTestUtil.h"

#include "plan/Deployability.h"

#include <QTest>

#include <algorithm>

using namespace hapmoe;

namespace {

bool hasRule(const std::vector<DeploymentProblem>& problems, const std::string& rule)
{
    return std::any_of(problems.begin(), problems.end(), [&](const DeploymentProblem& p) { return p.rule == rule; });
}

// 2 stages of 8 devices each on "H800:2x8": TP2 DP4 EP4 ETP1 EDP2, 16 + 16 layers.
struct Fixture {
    ModelSpec model = test::mixtral8x7b();
    Cluster cluster;
    Plan plan;
    explicit Fixture(const std::string& shorthand = "H800:2x8")
    {
        cluster = test::cluster(shorthand);
        const std::vector<int> ids = test::nodeIds(cluster);
        plan.global_batch_size = 64;
        plan.stages.push_back(test::stageOn(cluster, {ids[0]}, 0, 16, 2, 1, 4, 4, 1));
        plan.stages.push_back(test::stageOn(cluster, {ids[1]}, 16, 16, 2, 1, 4, 4, 1));
    }
    std::vector<DeploymentProblem> problems(Target t) const
    {
        return deploymentProblems(plan, model, cluster, DeviceCatalog::builtin(), t);
    }
};

} // namespace

class TestDeployability : public QObject {
    Q_OBJECT

private slots:
    void validPlan()
    {
        const Fixture f;
        QVERIFY(f.problems(Target::Megatron).empty());
        QVERIFY(f.problems(Target::FlagScale).empty());
        QVERIFY(f.problems(Target::Any).empty());
        QCOMPARE(bestTarget(f.plan, f.model, f.cluster, DeviceCatalog::builtin()), Target::Megatron);
    }

    void commonRules()
    {
        Fixture f;
        f.plan.stages[0].dp = 2;   // TP*CP*DP = 4 on 8 devices
        QVERIFY(hasRule(f.problems(Target::Any), "stage.knob-product"));
        f = Fixture();
        f.plan.stages[1].first_layer = 15;
        QVERIFY(hasRule(f.problems(Target::Any), "layers.cover"));
        f = Fixture();
        f.model.num_experts = 6;   // 6 % EP 4
        QVERIFY(hasRule(f.problems(Target::Any), "model.experts-divisible-by-ep"));
        f = Fixture();
        f.model.num_attention_heads = 30;
        f.model.num_query_groups = 0;
        f.model.kv_channels = 128;
        for (auto& s : f.plan.stages) { s.tp = 4; s.dp = 2; s.edp = 2; }
        QVERIFY(hasRule(f.problems(Target::Any), "model.heads-divisible-by-tp"));
        f = Fixture();
        f.plan.global_batch_size = 66;   // 66 % (MBS 1 * DP 4)
        QVERIFY(hasRule(f.problems(Target::Any), "batch.divisible"));
        f = Fixture();
        f.plan.stages[1].devices[0].node = f.plan.stages[0].devices[0].node;   // the same devices twice
        QVERIFY(hasRule(f.problems(Target::Any), "stage.devices"));
        f = Fixture();
        f.model.add_bias_linear = true;
        for (auto& s : f.plan.stages) { s.ep = 2; s.etp = 2; s.edp = 2; }
        QVERIFY(hasRule(f.problems(Target::Any), "moe.bias-needs-etp1"));
        // The flex dispatcher's DeepEP backend asserts TPxEP > 1 over the expert grid
        // (MoEFlexTokenDispatcher, Megatron-LM d98e8a64 and FlagScale's 8479eb35), so the
        // search must not return a flex plan with a stage of ETP 1 and EP 1.
        f = Fixture();
        f.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
        QVERIFY(f.problems(Target::Any).empty());   // EP 4 on every stage
        for (auto& s : f.plan.stages) { s.ep = 1; s.etp = 1; s.edp = 8; }
        QVERIFY(hasRule(f.problems(Target::Megatron), "moe.flex-needs-tp-ep"));
        QVERIFY(hasRule(f.problems(Target::FlagScale), "moe.flex-needs-tp-ep"));
        f.model.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
        QVERIFY(f.problems(Target::Any).empty());
    }

    void layerShapesAndOptimizerRules()
    {
        // Mixtral 8x7B: FFN 14336 (= 2^11 * 7), 32 heads, 8 query groups, sequence 4096; the
        // fixture has TP 2, EP 4, ETP 1 on 8 devices a stage.
        Fixture f;
        f.model.moe_layer_freq = 2;   // every other layer dense: its FFN is split over TP
        f.model.moe_ffn_hidden_size = 14336;
        for (auto& s : f.plan.stages) { s.tp = 8; s.dp = 1; s.ep = 8; s.etp = 1; s.edp = 1; }
        QVERIFY(!hasRule(f.problems(Target::Any), "model.ffn-divisible-by-tp"));   // 14336 / 8 = 1792
        f.model.ffn_hidden_size = 14000;                                            // 14000 / 8 = 1750 exactly
        QVERIFY(!hasRule(f.problems(Target::Any), "model.ffn-divisible-by-tp"));
        f.model.ffn_hidden_size = 14004;                                            // 14004 / 8 = 1750.5
        QVERIFY(hasRule(f.problems(Target::Megatron), "model.ffn-divisible-by-tp"));
        f.model.moe_layer_freq = 1;   // every layer MoE: no dense FFN is built
        QVERIFY(!hasRule(f.problems(Target::Any), "model.ffn-divisible-by-tp"));
        // The experts' FFN over ETP: 14336 / 8 = 1792, 14004 / 4 = 3501, 14004 / 8 does not divide.
        f.model.moe_ffn_hidden_size = 14004;
        for (auto& s : f.plan.stages) { s.ep = 2; s.etp = 4; s.edp = 1; }
        QVERIFY(!hasRule(f.problems(Target::Any), "model.expert-ffn-divisible-by-etp"));
        for (auto& s : f.plan.stages) { s.ep = 1; s.etp = 8; s.edp = 1; }
        QVERIFY(hasRule(f.problems(Target::Any), "model.expert-ffn-divisible-by-etp"));

        // Sequence parallelism scatters each CP rank's s / CP tokens over TP: 4096 over CP 2 and
        // TP 4 is 512 a rank; a sequence of 4100 (2 * 2050, CP's own rule holds) is not.
        Fixture g;
        for (auto& s : g.plan.stages) { s.tp = 4; s.cp = 2; s.dp = 1; }
        g.plan.sequence_parallel = true;
        QVERIFY(!hasRule(g.problems(Target::Any), "seq.sequence-parallel"));
        g.model.seq_length = 4100;
        QVERIFY(!hasRule(g.problems(Target::Any), "seq.context-parallel"));
        QVERIFY(hasRule(g.problems(Target::Any), "seq.sequence-parallel"));
        g.plan.sequence_parallel = false;
        QVERIFY(!hasRule(g.problems(Target::Any), "seq.sequence-parallel"));

        // Optimizer offload runs only in the distributed optimizer (Megatron-Core raises).
        Fixture o;
        o.plan.optimizer_offload_fraction = 0.5;
        o.plan.distributed_optimizer = true;
        QVERIFY(!hasRule(o.problems(Target::Any), "optimizer.offload-needs-distributed"));
        o.plan.distributed_optimizer = false;
        QVERIFY(hasRule(o.problems(Target::Megatron), "optimizer.offload-needs-distributed"));
        QVERIFY(hasRule(o.problems(Target::FlagScale), "optimizer.offload-needs-distributed"));

        // SharedExpertMLP asserts add_bias_linear is off.
        Fixture b;
        b.model.moe_shared_expert_intermediate_size = 4096;
        QVERIFY(!hasRule(b.problems(Target::Any), "moe.shared-expert-bias"));
        b.model.add_bias_linear = true;
        QVERIFY(hasRule(b.problems(Target::Any), "moe.shared-expert-bias"));

        // FlagScale's Megatron-LM 8479eb35 needs the query groups divisible by TP; Megatron-LM
        // d98e8a64 also takes TP a multiple of them. 8 groups at TP 16: Megatron-LM only.
        Fixture q("H800:4x8");
        q.model.num_attention_heads = 64;
        q.plan.stages.clear();
        const std::vector<int> ids = test::nodeIds(q.cluster);
        q.plan.stages.push_back(test::stageOn(q.cluster, {ids[0], ids[1]}, 0, 16, 16, 1, 1, 8, 1));
        q.plan.stages.push_back(test::stageOn(q.cluster, {ids[2], ids[3]}, 16, 16, 16, 1, 1, 8, 1));
        QVERIFY(!hasRule(q.problems(Target::Megatron), "model.query-groups-tp"));
        QVERIFY(hasRule(q.problems(Target::FlagScale), "flagscale.query-groups-tp"));

        // FlagScale rebuilds the sequence between meshes as local length x TP x CP, which
        // needs sequence parallelism where TP changes (parallel_context.py). A dense model, so
        // that TP without sequence parallelism is otherwise allowed.
        Fixture t;
        t.model.num_experts = 0;
        for (auto& s : t.plan.stages) { s.ep = 1; s.etp = 1; s.edp = 8; }
        t.plan.stages[1].tp = 4;
        t.plan.stages[1].dp = 2;
        t.plan.stages[1].edp = 8;
        t.plan.stages[1].micro_batch_size = 2;   // DP0 x MBS0 / DP1 = 4 / 2
        t.plan.sequence_parallel = true;
        QVERIFY(!hasRule(t.problems(Target::FlagScale), "flagscale.tp-change-needs-sp"));
        t.plan.sequence_parallel = false;
        QVERIFY(hasRule(t.problems(Target::FlagScale), "flagscale.tp-change-needs-sp"));
    }

    void flexDispatcherNeedsDeepEpDevices()
    {
        // DeepEP needs NVIDIA GPUs with compute capability 9.0 or more and NVLink within a node
        // (deepseek-ai/DeepEP README, requirements); AMD's port lists MI300X, MI308X and MI350X
        // (ROCm/DeepEP README). The catalog: H800 9.0 NVLink4, B200 10.0, A100-80GB 8.0, L40S
        // 8.9, MI300X, MI250X, 910B.
        for (const char* type : {"H800", "H20", "B200", "MI300X"}) {
            Fixture f(std::string(type) + ":2x8");
            f.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
            QVERIFY2(!hasRule(f.problems(Target::Any), "moe.flex-needs-deepep-device"), type);
        }
        const std::vector<std::pair<const char*, const char*>> refused = {
            {"A100-80GB", "compute capability 8.0"}, {"L40S", "compute capability 8.9"}, {"MI250X", "AMD's DeepEP port does not list"},
            {"910B", "Huawei device with no DeepEP port"}, {"Gaudi3", "Intel device with no DeepEP port"}};
        for (const auto& [type, reason] : refused) {
            Fixture f(std::string(type) + ":2x8");
            f.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
            for (Target t : {Target::Megatron, Target::FlagScale, Target::Any}) {
                const auto problems = f.problems(t);
                QVERIFY2(hasRule(problems, "moe.flex-needs-deepep-device"), type);
                for (const DeploymentProblem& p : problems)
                    if (p.rule == "moe.flex-needs-deepep-device")
                        QVERIFY2(p.message.find(reason) != std::string::npos, p.message.c_str());
            }
            f.model.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
            QVERIFY2(!hasRule(f.problems(Target::Any), "moe.flex-needs-deepep-device"), type);
        }
        // One stage on 910B is enough to refuse a flex plan on a mixed cluster.
        Fixture mixed("H800:1x8,910B:1x8");
        mixed.model.moe_token_dispatcher_type = TokenDispatcher::Flex;
        QVERIFY(hasRule(mixed.problems(Target::FlagScale), "moe.flex-needs-deepep-device"));
    }

    void megatronRules()
    {
        Fixture f;
        f.plan.stages[1].tp = 4;
        f.plan.stages[1].dp = 2;
        f.plan.stages[1].edp = 2;
        f.plan.stages[1].micro_batch_size = 2;   // same M = 64 / (2 * 2) = 16
        QVERIFY(hasRule(f.problems(Target::Megatron), "megatron.uniform-knobs"));
        QVERIFY(f.problems(Target::FlagScale).empty());
        QCOMPARE(bestTarget(f.plan, f.model, f.cluster, DeviceCatalog::builtin()), Target::FlagScale);
        f = Fixture();
        f.plan.stages[1].recompute = Recompute::Full;
        QVERIFY(hasRule(f.problems(Target::Megatron), "megatron.one-recompute"));
        QVERIFY(f.problems(Target::FlagScale).empty());   // per-stage recompute lists
        // Block n recomputes the first n layers of each stage, all of a stage of n or fewer
        // (megatron/core/recompute.py): 7 and 25 layers recomputing 7 each is block 7, whether
        // the 7-layer stage says 7 or "all" (0); "all" of a stage longer than the others' n is not.
        f = Fixture();
        f.plan.stages[0].num_layers = 7;
        f.plan.stages[1].first_layer = 7;
        f.plan.stages[1].num_layers = 25;
        for (StagePlan& st : f.plan.stages)
            st.recompute = Recompute::Full;
        f.plan.stages[1].recompute_layers = 7;
        for (int all : {0, 7}) {
            f.plan.stages[0].recompute_layers = all;
            QVERIFY(!hasRule(f.problems(Target::Megatron), "megatron.one-recompute"));
        }
        f.plan.stages[1].recompute_layers = 5;
        QVERIFY(hasRule(f.problems(Target::Megatron), "megatron.one-recompute"));
        f.plan.stages[0].recompute_layers = 5;
        f.plan.stages[1].recompute_layers = 0;   // all 25
        QVERIFY(hasRule(f.problems(Target::Megatron), "megatron.one-recompute"));
        // Mixed vendors: one Megatron-LM job speaks one collective library.
        Fixture v("H800:1x8,910B:1x8");
        QVERIFY(hasRule(v.problems(Target::Megatron), "megatron.one-vendor"));
        QVERIFY(v.problems(Target::FlagScale).empty());
        // A node shared by two non-adjacent stages cannot be ordered.
        Fixture o("H800:2x8");
        const std::vector<int> ids = test::nodeIds(o.cluster);
        o.plan.stages.clear();
        StagePlan a = test::stageOn(o.cluster, {ids[0]}, 0, 10, 1, 1, 4, 4, 1);
        a.devices = {{ids[0], 0, 4}};
        StagePlan b = test::stageOn(o.cluster, {ids[1]}, 10, 11, 1, 1, 4, 4, 1);
        b.devices = {{ids[1], 0, 4}};
        StagePlan c = test::stageOn(o.cluster, {ids[0]}, 21, 11, 1, 1, 4, 4, 1);
        c.devices = {{ids[0], 4, 4}};
        o.plan.stages = {a, b, c};
        o.plan.global_batch_size = 64;
        QVERIFY(hasRule(o.problems(Target::Megatron), "megatron.node-order"));
        // The stage order decides the node order (stage s on ranks [s*W/PP, (s+1)*W/PP)).
        Fixture r("H800:1x8,A100-80GB:1x8");
        std::swap(r.plan.stages[0].devices, r.plan.stages[1].devices);
        std::swap(r.plan.stages[0].device_type, r.plan.stages[1].device_type);
        const NodeOrder order = megatronNodeOrder(r.plan, r.cluster);
        QCOMPARE(order.nodes, (std::vector<int>{test::nodeIds(r.cluster)[1], test::nodeIds(r.cluster)[0]}));
        QCOMPARE(order.nproc_per_node, 8);
        QVERIFY(r.problems(Target::Megatron).empty());
        // Interleaving needs M to be a multiple of PP: 64 / 4 = 16 micro-batches on PP 2.
        r.plan.vpp = 2;
        QVERIFY(r.problems(Target::Megatron).empty());
        r.plan.global_batch_size = 4;   // M = 1
        QVERIFY(hasRule(r.problems(Target::Megatron), "megatron.vpp-microbatches"));
    }

    void flagscaleRules()
    {
        Fixture f;
        for (auto& s : f.plan.stages) { s.cp = 2; s.dp = 2; s.edp = 2; }
        QVERIFY(hasRule(f.problems(Target::FlagScale), "flagscale.cp"));
        QVERIFY(f.problems(Target::Megatron).empty());
        f = Fixture();
        f.plan.vpp = 2;
        QVERIFY(hasRule(f.problems(Target::FlagScale), "flagscale.no-vpp"));
        // Mesh MBS: DP0 * MBS0 / DP1 = 4 / 2 = 2 exactly.
        f = Fixture();
        f.plan.stages[1].tp = 4;
        f.plan.stages[1].dp = 2;
        f.plan.stages[1].edp = 2;
        f.plan.stages[1].micro_batch_size = 1;   // 1 * 2 * 16 micro-batches is not the global batch 64
        QVERIFY(hasRule(f.problems(Target::FlagScale), "batch.same-microbatches"));
        // Tied embeddings: first and last mesh must have the same TP.
        f.plan.stages[1].micro_batch_size = 2;
        QVERIFY(f.problems(Target::FlagScale).empty());
        f.model.untie_embeddings_and_output_weights = false;
        QVERIFY(hasRule(f.problems(Target::FlagScale), "flagscale.tied-embeddings"));
        // Device types must be contiguous in mesh order (ranks are sorted by type).
        Fixture t;
        t.cluster.nodes.clear();
        for (int i = 0; i < 3; ++i) {
            Node n;
            n.id = i;
            n.host = "n" + std::to_string(i);
            n.device_type = i == 1 ? "910B-376T" : "H800";
            n.count = 8;
            t.cluster.nodes.push_back(n);
        }
        t.plan.stages = {test::stageOn(t.cluster, {0}, 0, 10, 2, 1, 4, 4, 1), test::stageOn(t.cluster, {1}, 10, 11, 2, 1, 4, 4, 1),
                         test::stageOn(t.cluster, {2}, 21, 11, 2, 1, 4, 4, 1)};
        QVERIFY(hasRule(t.problems(Target::FlagScale), "flagscale.device-type-order"));
        // Meshes: consecutive stages with the same type and knobs.
        Fixture m("H800:2x8,910B:2x8");
        const std::vector<int> mid = test::nodeIds(m.cluster);
        m.plan.stages = {test::stageOn(m.cluster, {mid[0]}, 0, 8, 2, 1, 4, 4, 1), test::stageOn(m.cluster, {mid[1]}, 8, 8, 2, 1, 4, 4, 1),
                         test::stageOn(m.cluster, {mid[2]}, 16, 8, 2, 1, 4, 4, 1), test::stageOn(m.cluster, {mid[3]}, 24, 8, 2, 1, 4, 4, 1)};
        const std::vector<PlanMesh> meshes = planMeshes(m.plan);
        QCOMPARE(meshes.size(), std::size_t(2));
        QCOMPARE(meshes[0].num_stages, 2);
        QCOMPARE(meshes[1].first_stage, 2);
    }
};

QTEST_APPLESS_MAIN(TestDeployability)
#include "TestDeployability.moc"
