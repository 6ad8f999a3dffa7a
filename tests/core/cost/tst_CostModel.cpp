// Unit tests of the cost model against hand calculations and published figures. Each
// expected number says where it comes from (docs/cost-model.md has the formulas).

#include "TestClusters.h"

#include "cost/CollectiveModel.h"
#include "cost/CostModel.h"
#include "cost/ProfileCheck.h"
#include "cost/Schedule.h"
#include "cost/UniformPlan.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "profile/ProfileTables.h"
#include "util/InputError.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

using namespace hapmoe;

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// A GPT of Korthikanti Table 3 / Narayanan et al.: MHA, GeLU FFN 4h, biases, LayerNorm,
// learned positions, tied embeddings, vocabulary 51200, sequence 2048.
ModelSpec gpt(int layers, int hidden, int heads)
{
    ModelSpec m;
    m.name = "gpt";
    m.num_layers = layers;
    m.hidden_size = hidden;
    m.ffn_hidden_size = 4 * hidden;
    m.num_attention_heads = heads;
    m.vocab_size = 51200;
    m.seq_length = 2048;
    m.swiglu = false;
    m.add_bias_linear = true;
    m.normalization = "LayerNorm";
    return m;
}

// LLaMA-2 7B (Touvron et al. 2023, Table 1 and the HF config): 32 x 4096, FFN 11008 SwiGLU,
// 32 heads, vocabulary 32000, RMSNorm, no biases, untied output.
ModelSpec llama7b()
{
    ModelSpec m;
    m.num_layers = 32;
    m.hidden_size = 4096;
    m.ffn_hidden_size = 11008;
    m.num_attention_heads = 32;
    m.vocab_size = 32000;
    m.seq_length = 4096;
    m.swiglu = true;
    m.add_bias_linear = false;
    m.untie_embeddings_and_output_weights = true;
    m.normalization = "RMSNorm";
    return m;
}

// Mixtral 8x7B (Jiang et al. 2024, HF config): LLaMA-like, FFN 14336, 8 KV groups, 8 experts top-2.
ModelSpec mixtral8x7b()
{
    ModelSpec m = llama7b();
    m.ffn_hidden_size = 14336;
    m.num_query_groups = 8;
    m.num_experts = 8;
    m.moe_router_topk = 2;
    return m;
}

using test::nodesOf;

// One layer in the middle of a pipeline (no embedding, no output layer, no send).
StageEstimate oneLayer(const CostModel& cm, StagePlan s, bool sp, int inFlightStages = 1)
{
    s.first_layer = 1;
    s.num_layers = 1;
    StageContext ctx;
    ctx.stage_index = 1;
    ctx.num_stages = 1 + inFlightStages + 1;
    ctx.num_microbatches = 1;
    ctx.sequence_parallel = sp;
    ctx.distributed_optimizer = false;
    return cm.estimateStage(s, ctx);
}

// A stage in the middle of a three-stage pipeline: no embedding, no output layer.
StageContext middleStage(bool distributedOptimizer)
{
    StageContext ctx;
    ctx.stage_index = 1;
    ctx.num_stages = 3;
    ctx.distributed_optimizer = distributedOptimizer;
    return ctx;
}

StagePlan stageOn(const char* type, int node, int count, int tp)
{
    StagePlan s;
    s.device_type = type;
    s.devices = {{node, 0, count}};
    s.tp = tp;
    s.dp = count / tp;
    s.edp = count;
    return s;
}

// One decoder layer (layer 1) of a stage of the given type on TP 1: with middleStage, a layer
// in the middle of a pipeline (no embedding, no output layer).
// Mixtral 8x7B with every other layer MoE (moe_layer_freq 2: layers 0, 2, 4, ... MoE).
ModelSpec alternatingMixtral()
{
    ModelSpec m = mixtral8x7b();
    m.moe_layer_freq = 2;
    return m;
}

// All 32 of its layers on one node of 8 H800: TP 1, EP 8.
StagePlan wholeModelOnOneH800Node()
{
    StagePlan st = stageOn("H800", 0, 8, 1);
    st.first_layer = 0;
    st.num_layers = 32;
    st.ep = 8;
    st.edp = 1;
    return st;
}

StagePlan oneLayerOn(const char* type)
{
    StagePlan s = stageOn(type, 0, 1, 1);
    s.first_layer = 1;
    s.num_layers = 1;
    return s;
}

// A row of a profile's collective table: `primitive` over a TP group of 4 moving `bytes`.
void addTpCollective(Profile& profile, Collective primitive, double bytes, double seconds)
{
    CollectiveEntry e;
    e.primitive = primitive;
    e.group_size = 4;
    e.bytes = bytes;
    e.time_s = seconds;
    profile.collectives.push_back(e);
}

// Calculon's A100 size curve (0.6, 0.9, 0.95 at 1, 16, >= 128 GFLOP, over 0.95), log-linear
// between the points, at a GEMM's FLOPs on A100 (docs/cost-model.md section 3.1).
double calculonSizeFactor(double a100Flops)
{
    if (a100Flops >= 128e9)
        return 1.0;
    const bool low = a100Flops < 16e9;
    const double x0 = low ? 1e9 : 16e9, x1 = low ? 16e9 : 128e9;
    const double y0 = (low ? 0.6 : 0.9) / 0.95, y1 = (low ? 0.9 : 0.95) / 0.95;
    return y0 * std::pow(y1 / y0, std::log(a100Flops / x0) / std::log(x1 / x0));
}

// A launcher without --overlap-grad-reduce: the gradient reduce-scatter is exposed.
CostOptions exposedGradReduce()
{
    CostOptions o;
    o.overlap.grad_reduce = false;
    return o;
}

// 16 sequences in two micro-batches of 8 over DP 8 x 1 (or DP 1 x 8), distributed optimizer.
Plan twoMicroBatchesOfEight()
{
    Plan plan;
    plan.global_batch_size = 16;
    plan.distributed_optimizer = true;
    return plan;
}

// One H800 node and one 910B node (8 devices each) behind a 2.5 GB/s, 100 us bridge.
Cluster bridgedH800And910B()
{
    Cluster c = nodesOf("H800", 1);
    Cluster d = nodesOf("910B", 1, 8, 1);
    c.nodes.push_back(d.nodes[0]);
    c.cross_vendor.bandwidth_gbytes_per_s = 2.5;
    c.cross_vendor.latency_us = 100;
    return c;
}

// Two stages of 16 layers at TP 8, on nodes 0 and 1; first() is the context of the first,
// which sends to the second.
struct TwoStages {
    StagePlan a, b;
    StageContext first() const
    {
        StageContext ctx;
        ctx.stage_index = 0;
        ctx.num_stages = 2;
        ctx.next = &b;
        return ctx;
    }
};
TwoStages twoStages(const char* typeA, const char* typeB)
{
    TwoStages t{stageOn(typeA, 0, 8, 8), stageOn(typeB, 1, 8, 8)};
    t.a.num_layers = t.b.num_layers = 16;
    t.b.first_layer = 16;
    return t;
}

// The whole model on one 8-GPU H100 node (TP 2, DP 4), all of its optimizer in host memory.
Plan wholeModelOffloaded(const ModelSpec& m)
{
    Plan plan;
    plan.global_batch_size = 64;
    plan.optimizer_offload_fraction = 1.0;
    StagePlan whole = stageOn("H100-SXM", 0, 8, 2);
    whole.first_layer = 0;
    whole.num_layers = m.num_layers;
    plan.stages = {whole};
    return plan;
}

// A profile with one compute entry: H800 at TP 8, CP 1, 4096 tokens, the given dense-layer
// and FFN times (seconds) forward and backward.
Profile h800LayerProfile(double denseFwd, double denseBwd, double ffnFwd, double ffnBwd)
{
    Profile prof;
    ComputeEntry e;
    e.device_type = "H800";
    e.tp = 8;
    e.cp = 1;
    e.tokens = 4096;
    e.dense_layer_fwd_s = denseFwd;
    e.dense_layer_bwd_s = denseBwd;
    e.ffn_fwd_s = ffnFwd;
    e.ffn_bwd_s = ffnBwd;
    prof.compute.push_back(e);
    return prof;
}

} // namespace

class TestCostModel : public QObject {
    Q_OBJECT
private slots:
    void parametersLlama7b();
    void parametersMixtral();
    void parametersGptNarayanan_data();
    void parametersGptNarayanan();
    void parametersMla();
    void flopsMla();
    void activationsMla();
    void multiTokenPrediction();
    void flopsKorthikanti_data();
    void flopsKorthikanti();
    void activationsKorthikantiTable2_data();
    void activationsKorthikantiTable2();
    void dropoutKernels();
    void activationsInFlight();
    void outputLayerInFlightWithAllWarmup();
    void keyValueGroupsReplicateBeyondTp();
    void bytesPerParameter();
    void tpReplicatedParametersStayWhole();
    void leastModelStateOverAllDevices();
    void dataParallelOverlapSwitches();
    void interleavedSyncsOverlapChunkByChunk();
    void optimizerCpuOffload();
    void hostMemoryAndLinkOfTheNode();
    void nodeIdsAreOnlyLabels();
    void expertParametersOverEdp();
    void dispatchVolumeEq3();
    void moeLayerTpCollectivesAttentionOnly();
    void allGatherDispatcherSpansTpTimesEp();
    void contextParallelRingUsesOnePeerLink();
    void profiledMoeBackwardUsesFfnBwd();
    void outputLayerAndFusedAttention();
    void fusedCrossEntropy();
    void fp8LinearLayers();
    void fp8MoeLayer();
    void fp8UnderSequenceParallelism();
    void fp8Recipes();
    void vocabParallelBoundaries();
    void vocabularyPaddedForTp();
    void sharedExpertJoinsTheOverlapWindow();
    void tpCommOverlapNeedsSequenceParallel();
    void oversubscribedLeafSwitches();
    void predictionRecordsOverlapSwitches();
    void imbalanceScalesMoePath();
    void imbalanceCappedAtExpertsOverTopk();
    void recomputeOrdering();
    void blockRecomputeTakesTheFirstLayers();
    void selectiveRecomputeModules();
    void crossVendorSendUsesBridge();
    void tiedEmbeddingGradientAllReduce();
    void tiedEmbeddingPartialReduceOfDifferentDp();
    void tiedAllReduceHidesBehindALongerSync();
    void interNodeSendAndInterleavedOverlap();
    void drawnLinksBoundTheNics();
    void contextParallelShardsWithDataParallel();
    void expertGradientsShareTheOverlapWindow();
    void expertBucketsFollowTheDataParallelSize();
    void fullMeshGroupsUseTheirLinks();
    void infeasibleSaysStageAndShortfall();
    void closedFormEqualsSimulatorForEqualStages();
    void simulatorBoundsForUnequalStages();
    void interleavedSimulatorMatchesClosedForm();
    void interleavedRanksCostTheirChunksLayers();
    void interleavedUnevenChunksAreSimulated();
    void estimateUsesTheFixedAssembly();
    void tailWaitsAtTheGradientNormBarrier();
    void chromeTrace();
    void profileInterpolationLogLog();
    void profileOverridesDefaults();
    void profileNamesAndNotes();
    void profilePlausibility();
    void uniformPlanPlacement();
    void uniformPlanFollowsMegatronCoreRules();
    void badPlanThrows();
};

void TestCostModel::parametersLlama7b()
{
    // Published: 6.74e9 parameters (LLaMA-2 paper; 6,738,415,616 in the HF checkpoint).
    const ParameterCount c = countParameters(llama7b());
    QCOMPARE(c.total, 6738415616.0);
    QCOMPARE(c.active, c.total);
}

void TestCostModel::parametersMixtral()
{
    // Published: 46.7e9 total, 12.9e9 active (Mixtral of Experts, Jiang et al. 2024).
    const ParameterCount c = countParameters(mixtral8x7b());
    QVERIFY2(std::fabs(c.total / 46.7e9 - 1) < 0.002, qPrintable(QString::number(c.total)));
    QVERIFY2(std::fabs(c.active / 12.9e9 - 1) < 0.005, qPrintable(QString::number(c.active)));
    // Hand count: 32 x 8 experts x 3 x 4096 x 14336 expert weights.
    QCOMPARE(c.expert_per_layer, 8.0 * 3 * 4096 * 14336);

    // Qwen3's query and key norms (--qk-layernorm): two RMSNorm weights of head_dim 128 per
    // layer (Qwen3-30B-A3B config.json: q_norm, k_norm), 48 x 2 x 128 parameters in all.
    const ModelSpec qwen = resolveModel("Qwen3-30B-A3B");
    QVERIFY(qwen.qk_layernorm);
    ModelSpec without = qwen;
    without.qk_layernorm = false;
    QCOMPARE(countParameters(qwen).total - countParameters(without).total, 48.0 * 2 * 128);
}

void TestCostModel::parametersMla()
{
    // DeepSeek-V3 (config.json: h 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, query
    // and key heads of 128 + 64 rotary channels, values of 128; 3 dense layers of FFN 18432, 58
    // MoE layers of 256 experts of 2048 and one shared, top-8; vocabulary 129280, untied). One
    // layer's attention by hand, with Megatron-Core MLASelfAttention's shapes:
    //   down projections  7168 x 1536 + 7168 x (512 + 64)          =  15,138,816
    //   up projections    1536 x 128 x 192 + 512 x 128 x (128 + 128) =  54,525,952
    //   output projection 128 x 128 x 7168                          = 117,440,512
    //   norms             2 x 7168, and the latents' 1536 + 512     =      16,384
    //                                                               = 187,121,664
    // Published: 671B parameters, 37B activated (DeepSeek-V3 technical report, arXiv:2412.19437,
    // without the 14B of its multi-token-prediction module).
    const ParameterCount v3 = countParameters(resolveModel("DeepSeek-V3"));
    QCOMPARE(v3.dense_per_layer, 187121664.0);
    // 61 x 187,121,664 + 3 x 3 x 7168 x 18432 + 58 x (256 + 1) x 3 x 7168 x 2048
    // + 58 x 256 x 7168 (routers) + 2 x 129280 x 7168 + 7168 (final norm)
    QCOMPARE(v3.total, 671026404352.0);
    QVERIFY(std::fabs(v3.total / 671e9 - 1) < 1e-4);
    // Activated: 8 of 256 experts. 37.55e9 with both embeddings, 36.63e9 without the input
    // embedding (a lookup): DeepSeek's "37B" lies between.
    QCOMPARE(v3.active, 37552282624.0);
    QVERIFY(v3.active - 129280.0 * 7168 < 37e9 && v3.active > 37e9);

    // DeepSeek-V2-Lite (no query latent: the query comes from h 2048 over 16 heads; kv_lora_rank
    // 512; 1 dense layer of FFN 10944, 26 MoE layers of 64 experts of 1408 and 2 shared,
    // top-6, vocabulary 102400): attention 2048 x 3072 + 2048 x 576 + 512 x 4096
    // + 2048 x 2048 + 2 x 2048 + 512 = 13,767,168. Published: 15.7B, 2.4B activated
    // (DeepSeek-V2 report, arXiv:2405.04434).
    const ParameterCount lite = countParameters(resolveModel("DeepSeek-V2-Lite"));
    QCOMPARE(lite.dense_per_layer, 13767168.0);
    QCOMPARE(lite.total, 15706484224.0);
    QCOMPARE(lite.active - 102400.0 * 2048, 2451435008.0);   // 2.45e9 without the input embedding
}

void TestCostModel::flopsMla()
{
    // Megatron-LM's model FLOPs for MLA (megatron/training/training.py
    // num_floating_point_operations, main 40d590d7), per token of DeepSeek-V3 at s 4096 without
    // multi-token prediction, causal attention counted at half:
    //   6 L (q_lora (h + n (dn + dr) + 1) + kv_lora (h + n (dn + dv) + 1) + h dr + n dv h
    //        + s n (dn + dr) / 2 + s n dv / 2)
    //   + 12 L h (F g 3 / L + F_e k g 58 / L + F_s g 58 / L) + 6 h V,   g = 3/2 (SwiGLU)
    //   = 249,812,054,016. Its "+ 1" terms (the latents' norms, 6 x 61 x (1536 + 512) =
    //   749,568) are not GEMM work and are left out here: 249,811,304,448.
    ModelSpec v3 = resolveModel("DeepSeek-V3");
    QCOMPARE(v3.mtp_num_layers, 1);   // the preset trains with one MTP depth, counted below
    v3.mtp_num_layers = 0;
    const double perToken = modelFlopsPerIteration(v3, 1, 1, FlopCounting::CausalHalf) / 4096;
    QVERIFY2(std::fabs(perToken / 249811304448.0 - 1) < 1e-12, qPrintable(QString::number(perToken, 'f', 0)));
    // One MTP depth (training.py: its layer counted with the decoder's, of the last layer's
    // kind, MoE here; + 6 (3h + 2h^2) for its norms and eh_proj; the logits once more):
    // 259,992,950,784 by Megatron-LM's formula, 259,992,059,904 without the norms' + 1 and 3h.
    v3.mtp_num_layers = 1;
    const double withMtp = modelFlopsPerIteration(v3, 1, 1, FlopCounting::CausalHalf) / 4096;
    QVERIFY2(std::fabs(withMtp / 259992059904.0 - 1) < 1e-12, qPrintable(QString::number(withMtp, 'f', 0)));
    v3.mtp_num_layers = 0;
    // Over the full s x s (core_r0.8.0's counting) the core counts twice:
    // + 6 L s n ((dn + dr) + dv) / 2 = 6 x 61 x 4096 x 128 x 320 / 2.
    const double full = modelFlopsPerIteration(v3, 1, 1, FlopCounting::FullSquare) / 4096;
    QVERIFY2(std::fabs(full - perToken - 6.0 * 61 * 4096 * 128 * 320 / 2) < 1, qPrintable(QString::number(full - perToken, 'f', 0)));
}

void TestCostModel::activationsMla()
{
    // One MoE layer of DeepSeek-V2-Lite at TP 2 with sequence parallelism, one micro-batch of
    // s = 4096 tokens in flight. What attention keeps per token (bytes, 2 per element):
    //   query and key, 16 x (128 + 64) / 2 = 1536 wide each; value 16 x 128 / 2 = 1024;
    //   the core's output (the projection's input), 1024;
    //   the key/value latent, kv_lora_rank 512 / 2 (SP), its norm's input and output.
    // mla_up_proj recompute (Megatron-Core discards the up projections' output after the
    // attention core's forward) drops the query, key and value: 2 x (1536 + 1536 + 1024)
    // = 8192 bytes per token, 33,554,432 for the micro-batch.
    const ModelSpec m = resolveModel("DeepSeek-V2-Lite");
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", c.nodes.front().id, 2, 2);
    st.recompute = Recompute::Selective;
    st.recompute_modules = recompute_module::core_attn;
    const StageEstimate kept = oneLayer(cm, st, true);
    st.recompute_modules = recompute_module::core_attn | recompute_module::mla_up_proj;
    const StageEstimate dropped = oneLayer(cm, st, true);
    QCOMPARE(kept.memory.activations - dropped.memory.activations, 8192.0 * 4096);
    // ... and repeats the up projections in backward: more time, the same forward.
    QCOMPARE(dropped.t_fwd, kept.t_fwd);
    QVERIFY(dropped.t_bwd > kept.t_bwd);

    // The latents with their norms: without --qk-layernorm the up projections keep the latent
    // alone, 2 x 512 / 2 bytes per token less, and have no latent norm weights.
    ModelSpec plain = m;
    plain.qk_layernorm = false;
    const CostModel cmPlain(plain, c, DeviceCatalog::builtin());
    st.recompute_modules = recompute_module::core_attn;
    QCOMPARE(kept.memory.activations - oneLayer(cmPlain, st, true).memory.activations, 512.0 * 4096);
    QCOMPARE(countParameters(m).dense_per_layer - countParameters(plain).dense_per_layer, 512.0);
}

void TestCostModel::multiTokenPrediction()
{
    // One MTP depth of DeepSeek-V2-Lite on the last of two stages (TP 1, EP 1, no distributed
    // optimizer). Megatron-Core's MultiTokenPredictionLayer: a transformer layer of the last
    // decoder layer's kind (MoE) and eh_proj (2h to h), with the enorm, hnorm and final norm,
    // and the word embedding for the next tokens' lookup, which an untied model's last stage
    // holds besides its output layer. Its weights:
    //   attention 13,767,168 + experts 64 x 3 x 2048 x 1408 + shared 3 x 2048 x 2816
    //   + router 64 x 2048 + eh_proj 2 x 2048 x 2048 + norms 3 x 2048 + embedding 102,400 x 2048
    //   = 802,957,824 parameters, 2 bytes each in bf16.
    ModelSpec m = resolveModel("DeepSeek-V2-Lite");
    QCOMPARE(m.mtp_num_layers, 0);
    const Cluster c = nodesOf("H100-SXM", 1);
    StagePlan st = stageOn("H100-SXM", c.nodes.front().id, 8, 1);
    st.first_layer = 14;
    st.num_layers = 13;
    StageContext ctx;
    ctx.stage_index = 1;
    ctx.num_stages = 2;
    ctx.num_microbatches = 8;
    ctx.distributed_optimizer = false;
    const StageEstimate without = CostModel(m, c, DeviceCatalog::builtin()).estimateStage(st, ctx);
    m.mtp_num_layers = 1;
    const CostModel withMtp(m, c, DeviceCatalog::builtin());
    const StageEstimate with = withMtp.estimateStage(st, ctx);
    QCOMPARE(with.memory.weights - without.memory.weights, 2.0 * 802957824);
    // All of it but the embedding's copy is the depth's own (ParameterCount::mtp).
    QCOMPARE(countParameters(m).mtp, 802957824.0 - 102400.0 * 2048);
    // Model FLOPs of one micro-batch over the stage's 8 replicas (Megatron's counting), 3 x the
    // forward per token:
    //   the MoE layer: projections 2 (2048 x 576 + 2048 x 3072 + 512 x 16 x 256 + 16 x 128 x 2048)
    //   = 27,525,120; the causal core 4096 x 16 x (192 + 128) = 20,971,520; 6 experts
    //   2 x 2048 x 1408 x 3 x 6 = 103,809,024; shared 2 x 2048 x 2816 x 3 = 34,603,008;
    //   eh_proj 2 x 2 x 2048 x 2048 = 16,777,216; the logits 2 x 2048 x 102,400 = 419,430,400:
    //   623,116,288 in all.
    const double perToken = 623116288.0;
    QVERIFY2(std::fabs((with.model_flops - without.model_flops) / (3 * perToken * 4096 * 8) - 1) < 1e-12,
             qPrintable(QString::number(with.model_flops - without.model_flops)));
    // Its time: at least the layer's forward and backward again, on the last stage alone.
    QVERIFY(with.t_fwd > without.t_fwd && with.t_bwd > without.t_bwd);
    ctx.stage_index = 0;
    const StageEstimate firstStage = withMtp.estimateStage(st, ctx);
    QCOMPARE(firstStage.t_fwd, CostModel(resolveModel("DeepSeek-V2-Lite"), c, DeviceCatalog::builtin()).estimateStage(st, ctx).t_fwd);
    // The embedding's copy on the last stage is all-reduced with the first stage's, as a tied
    // one is (section 7.1); without MTP an untied model has nothing to reduce there.
    QVERIFY(withMtp.tiedEmbeddingSync(st, st) > 0);
    QCOMPARE(CostModel(resolveModel("DeepSeek-V2-Lite"), c, DeviceCatalog::builtin()).tiedEmbeddingSync(st, st), 0.0);
}

void TestCostModel::parametersGptNarayanan_data()
{
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("heads");
    QTest::newRow("22B") << 48 << 6144 << 64;
    QTest::newRow("175B") << 96 << 12288 << 96;
    QTest::newRow("530B") << 105 << 20480 << 128;
    QTest::newRow("1T") << 128 << 25600 << 160;
}

void TestCostModel::parametersGptNarayanan()
{
    // Narayanan et al. 2021 eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); our count adds
    // only the final LayerNorm (2h).
    QFETCH(int, layers);
    QFETCH(int, hidden);
    QFETCH(int, heads);
    const double l = layers, h = hidden, V = 51200, s = 2048;
    const double expected = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)) + 2 * h;
    const ParameterCount c = countParameters(gpt(layers, hidden, heads));
    QVERIFY2(std::fabs(c.total / expected - 1) < 1e-12, qPrintable(QString::number(c.total)));
}

void TestCostModel::flopsKorthikanti_data() { parametersGptNarayanan_data(); }

void TestCostModel::flopsKorthikanti()
{
    // Korthikanti App. A: 72 B s L h^2 (1 + s/(6h) + V/(12 h L)), equal to Megatron core_r0.8.0's
    // num_floating_point_operations for MHA and FFN 4h.
    QFETCH(int, layers);
    QFETCH(int, hidden);
    QFETCH(int, heads);
    const double B = 64, s = 2048, L = layers, h = hidden, V = 51200;
    const double expected = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
    const double got = modelFlopsPerIteration(gpt(layers, hidden, heads), 64, 1, FlopCounting::FullSquare);
    QVERIFY(std::fabs(got / expected - 1) < 1e-12);
    // Megatron-LM d98e8a64 counts the attention core's causal half: its 4 s q per token and
    // layer (forward) becomes 2 s q, so s/(6h) becomes s/(12h) for MHA.
    const double causal = 72 * B * s * L * h * h * (1 + s / (12 * h) + V / (12 * h * L));
    QVERIFY(std::fabs(modelFlopsPerIteration(gpt(layers, hidden, heads), 64) / causal - 1) < 1e-12);
    if (layers == 96) {
        // Published MFU of 175B on 64 A100 at 13.75 s/iteration: 51.4 %.
        QCOMPARE(std::round(1000 * got / (13.75 * 64 * 312e12)) / 1000, 0.514);
    }
}

void TestCostModel::activationsKorthikantiTable2_data()
{
    QTest::addColumn<bool>("sp");
    QTest::addColumn<int>("recompute");
    QTest::addColumn<double>("attentionDropout");
    QTest::addColumn<double>("hiddenDropout");
    QTest::addColumn<double>("perLayerOverSbh");   // Table 2 bracket for 22B, t = 8
    const double a = 64, s = 2048, h = 6144, t = 8;
    QTest::newRow("tp") << false << 0 << 0.1 << 0.1 << (10 + 24 / t + 5 * a * s / (h * t));
    QTest::newRow("tp+sp") << true << 0 << 0.1 << 0.1 << (34 / t + 5 * a * s / (h * t));
    QTest::newRow("tp+selective") << false << 1 << 0.1 << 0.1 << (10 + 24 / t);
    QTest::newRow("tp+sp+selective") << true << 1 << 0.1 << 0.1 << (34 / t);
    QTest::newRow("full") << false << 2 << 0.1 << 0.1 << 2.0;
    // Without dropout Table 2 loses its masks: the attention dropout's mask (a s^2 b) and
    // output (2 a s^2 b), leaving the softmax output (2 a s^2 b) as the input of the product
    // with V, and the two hidden-dropout masks (sbh each) after the projection and fc2.
    QTest::newRow("tp, no dropout") << false << 0 << 0.0 << 0.0 << (8 + 24 / t + 2 * a * s / (h * t));
    QTest::newRow("tp+sp, no dropout") << true << 0 << 0.0 << 0.0 << (32 / t + 2 * a * s / (h * t));
    QTest::newRow("tp, attention dropout only") << false << 0 << 0.1 << 0.0 << (8 + 24 / t + 5 * a * s / (h * t));
    QTest::newRow("tp, hidden dropout only") << false << 0 << 0.0 << 0.1 << (10 + 24 / t + 2 * a * s / (h * t));
    QTest::newRow("tp+selective, no dropout") << false << 1 << 0.0 << 0.0 << (8 + 24 / t);
    QTest::newRow("full, no dropout") << false << 2 << 0.0 << 0.0 << 2.0;
}

void TestCostModel::activationsKorthikantiTable2()
{
    QFETCH(bool, sp);
    QFETCH(int, recompute);
    QFETCH(double, attentionDropout);
    QFETCH(double, hiddenDropout);
    QFETCH(double, perLayerOverSbh);
    ModelSpec m = gpt(48, 6144, 64);
    m.attention_dropout = attentionDropout;
    m.hidden_dropout = hiddenDropout;
    const Cluster c = nodesOf("A100-80GB", 1);
    CostOptions opt;
    opt.fused_attention = false;   // Table 2 stores the s x s scores
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
    StagePlan st = stageOn("A100-80GB", 0, 8, 8);
    st.micro_batch_size = 4;
    st.recompute = recompute == 0 ? Recompute::None : (recompute == 1 ? Recompute::Selective : Recompute::Full);
    const StageEstimate e = oneLayer(cm, st, sp);
    const double sbh = 2048.0 * 4 * 6144;
    QVERIFY2(std::fabs(e.memory.activations / (sbh * perLayerOverSbh) - 1) < 1e-12,
             qPrintable(QString("%1 vs %2").arg(e.memory.activations).arg(sbh * perLayerOverSbh)));
}

void TestCostModel::dropoutKernels()
{
    // A dropout writes its output and a 1-byte mask; without it Megatron-Core's
    // bias-dropout-add is the residual add alone (docs/cost-model.md 3.3). LLaMA-2 7B shape,
    // one layer on H100, TP 1, b 1 (T = 4096 tokens), STREAM 2.90 TB/s:
    // - hidden dropout: two masks of T h bytes in forward, read again in backward (2x);
    // - attention dropout, unfused: the dropout's read 2 + write 2 + mask 1 per score, T a s
    //   scores, again 2x in backward; the fused kernel has no score traffic to save;
    // - the first stage's embedding dropout: read 2 + write 2 + mask 1 per element, T h.
    ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const double T = 4096, h = 4096, a = 32, s = 4096, hbm = 2.90e12;
    auto times = [&](double attention, double hidden, bool fused, int stage) {
        m.attention_dropout = attention;
        m.hidden_dropout = hidden;
        CostOptions opt;
        opt.fused_attention = fused;
        const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
        StageContext ctx = middleStage(false);
        ctx.stage_index = stage;
        const StageEstimate e = cm.estimateStage(oneLayerOn("H100-SXM"), ctx);
        return std::pair{e.t_fwd, e.t_bwd};
    };
    const auto [withF, withB] = times(0.1, 0.1, true, 1);
    const auto [hiddenOffF, hiddenOffB] = times(0.1, 0.0, true, 1);
    QVERIFY2(std::fabs((withF - hiddenOffF) / (2 * T * h / hbm) - 1) < 1e-9, qPrintable(QString::number(withF - hiddenOffF)));
    QVERIFY2(std::fabs((withB - hiddenOffB) / (4 * T * h / hbm) - 1) < 1e-9, qPrintable(QString::number(withB - hiddenOffB)));
    QCOMPARE(times(0.0, 0.1, true, 1), times(0.1, 0.1, true, 1));

    const auto [unfusedF, unfusedB] = times(0.1, 0.1, false, 1);
    const auto [attentionOffF, attentionOffB] = times(0.0, 0.1, false, 1);
    const double scores = T * a * s;
    QVERIFY2(std::fabs((unfusedF - attentionOffF) / (5 * scores / hbm) - 1) < 1e-9,
             qPrintable(QString::number(unfusedF - attentionOffF)));
    QVERIFY2(std::fabs((unfusedB - attentionOffB) / (10 * scores / hbm) - 1) < 1e-9,
             qPrintable(QString::number(unfusedB - attentionOffB)));

    // The first stage's embedding: 2 T h written by the lookup, 7 T h with the dropout.
    const auto [firstF, firstB] = times(0.1, 0.1, true, 0);
    const auto [firstOffF, firstOffB] = times(0.1, 0.0, true, 0);
    const double layerF = withF - hiddenOffF, layerB = withB - hiddenOffB;
    QVERIFY2(std::fabs((firstF - firstOffF - layerF) / (5 * T * h / hbm) - 1) < 1e-9,
             qPrintable(QString::number(firstF - firstOffF - layerF)));
    QVERIFY2(std::fabs((firstB - firstOffB - layerB) / (10 * T * h / hbm) - 1) < 1e-9,
             qPrintable(QString::number(firstB - firstOffB - layerB)));

    // Memory of the first stage, one micro-batch in flight: the layer's two masks and the
    // embedding's, T h bytes each.
    auto firstStageActivations = [&](double hidden) {
        m.hidden_dropout = hidden;
        const CostModel cm(m, c, DeviceCatalog::builtin());
        StageContext ctx = middleStage(false);
        ctx.stage_index = 0;
        ctx.num_microbatches = 1;
        return cm.estimateStage(oneLayerOn("H100-SXM"), ctx).memory.activations;
    };
    QCOMPARE(firstStageActivations(0.1) - firstStageActivations(0.0), 3 * T * h);
}

void TestCostModel::activationsInFlight()
{
    // 1F1B keeps min(PP - i, M) micro-batches on stage i; interleaving multiplies stage 0 by
    // 1 + (p - 1)/(p v) (Korthikanti section 4.2.3).
    const ModelSpec m = gpt(96, 12288, 96);
    const Cluster c = nodesOf("A100-80GB", 8);
    CostOptions opt;
    opt.fused_attention = false;
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
    UniformKnobs k;
    k.tp = 8;
    k.pp = 8;
    k.global_batch_size = 64;
    k.sequence_parallel = true;
    k.recompute = Recompute::Selective;
    Plan plan = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    const Prediction plain = cm.estimate(plan);
    const double sbh = 2048.0 * 12288;
    const double perLayer = sbh * 34 / 8;   // TP+SP+selective
    const double stage0 = 8 * (12 * perLayer + sbh / 8);   // 8 in flight, plus the embedding dropout mask s b h p / t
    QVERIFY(std::fabs(plain.stages[0].memory.activations / stage0 - 1) < 1e-12);
    QVERIFY(std::fabs(plain.stages[5].memory.activations / (12 * perLayer * 3) - 1) < 1e-12);
    plan.vpp = 3;
    const Prediction inter = cm.estimate(plan);
    const double factor = 1 + 7.0 / 24.0;
    // The layers by Korthikanti's factor; the embedding's mask goes with chunk 0, which holds
    // 8 + 7 = 15 of rank 0's 31 forwards (below).
    QVERIFY(std::fabs(inter.stages[0].memory.activations / (8 * factor * 12 * perLayer + 15 * sbh / 8) - 1) < 1e-12);

    // Unequal chunks: 13 layers a rank at VPP 3 run as chunks of 5, 4 and 4 layers. Rank 0
    // holds (PP - 1) 2 + (v - 1) PP + 1 = 31 forwards, forward k of chunk (k / 8) mod 3:
    // 8 + 7 of the first chunk, 8 of each other, so 15 x 5 + 8 x 4 + 8 x 4 = 139 layers'
    // activations, where 31/3 micro-batches of 13 layers would be 134.3.
    StagePlan st = plan.stages[0];
    st.num_layers = 13;
    StageContext ctx;
    ctx.stage_index = 0;
    ctx.num_stages = 8;
    ctx.num_microbatches = 64;
    ctx.vpp = 3;
    ctx.sequence_parallel = true;
    ctx.layers = rankLayers(std::vector<int>(8, 13), 3)[0];
    QCOMPARE(ctx.layers.size(), std::size_t(3));
    QCOMPARE(ctx.layers[0].count, 5);
    QCOMPARE(ctx.layers[1].count, 4);
    const double uneven = 139 * perLayer + 15 * sbh / 8;   // and the embedding mask, with chunk 0's 15
    QVERIFY(std::fabs(cm.estimateStage(st, ctx).memory.activations / uneven - 1) < 1e-12);
}

void TestCostModel::outputLayerInFlightWithAllWarmup()
{
    // Interleaved 1F1B with as many micro-batches as stages runs every forward first
    // (schedules.py all_warmup_microbatches): the last rank's last chunk then holds the output
    // layer's input and logits of all M micro-batches (docs/cost-model.md section 5.3).
    // Megatron-GPT-1.7B (h 2048, V 131,072, s 4096) at TP 1 (no SP), PP 4, VPP 2, M 4: per
    // micro-batch 4 s h (final norm and output-layer inputs, 2 B each) + 4 s V (fp32 logits)
    // = 33.6 MB + 2.15 GB. Ranks 2 and 3, with the same six dense layers and every chunk of
    // every micro-batch in flight, differ by that alone, four times.
    const ModelSpec& m = *findModelPreset("Megatron-GPT-1.7B");
    QVERIFY(!m.training.cross_entropy_loss_fusion);
    const CostModel cm(m, nodesOf("H800", 4), DeviceCatalog::builtin());
    StagePlan st = stageOn("H800", 0, 1, 1);
    st.num_layers = 6;
    StageContext ctx;
    ctx.num_stages = 4;
    ctx.num_microbatches = 4;
    ctx.vpp = 2;
    ctx.sequence_parallel = false;
    ctx.layers = rankLayers(std::vector<int>(4, 6), 2)[3];
    ctx.stage_index = 2;
    const double middle = cm.estimateStage(st, ctx).memory.activations;
    ctx.stage_index = 3;
    const double last = cm.estimateStage(st, ctx).memory.activations;
    const double perMicrobatch = 4.0 * 4096 * 2048 + 4.0 * 4096 * 131072;
    QVERIFY2(std::fabs((last - middle) / (4 * perMicrobatch) - 1) < 1e-12, qPrintable(QString::number((last - middle) / perMicrobatch)));
}

void TestCostModel::interleavedSyncsOverlapChunkByChunk()
{
    // Interleaved (docs/cost-model.md section 7): every chunk reduce-scatters its own buffer
    // from its own last backward, through the cool-down's waits, and gathers its parameters
    // before its own first forward. GPT-22B at TP 2, PP 2, VPP 2, GBS 8 on two 910B-280T nodes,
    // then with the first on a 910B-376T: its faster stage hides less behind its own passes but
    // waits longer for the second's. Charged against one micro-batch's own pass, as without
    // interleaving, the faster device made the iteration 3.3 % longer (`hapmoe estimate` with
    // these flags and --distributed-optimizer: 2.158 s, then 2.230 s); now 2.111 s, then
    // 2.106 s there. With the cost model's default switches (here) 2.3013 s, then 2.3045 s: the
    // faster stage's reduce-scatters queue behind each other in a shorter cool-down, 0.13 %
    // the model does not take back (docs/cost-model.md section 7).
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const ModelSpec& m = *findModelPreset("GPT-22B");
    UniformKnobs k;
    k.tp = 2;
    k.pp = 2;
    k.vpp = 2;
    k.global_batch_size = 8;
    k.sequence_parallel = true;
    k.distributed_optimizer = true;
    auto iteration = [&](const char* shorthand, Prediction* keep = nullptr) {
        const Cluster c = clusterFromShorthand(shorthand, cat);
        const CostModel cm(m, c, cat);
        const Prediction p = cm.estimate(makeUniformPlan(m, c, cat, k));
        if (keep)
            *keep = p;
        return p.iteration_time_s;
    };
    Prediction slow, fast;
    const double same = iteration("910B-280T:1x8,910B-280T:1x8", &slow);
    const double faster = iteration("910B-376T:1x8,910B-280T:1x8", &fast);
    QVERIFY2(faster <= same * 1.002, qPrintable(QStringLiteral("%1 > %2").arg(faster).arg(same)));
    // Here each stage's exposed sync is at most the whole rank's estimate without the schedule
    // (one micro-batch's pass as the window): the cool-down's waits and the later chunks' first
    // forwards hide more of it. Not so in general: a chunk holding most of a rank's reduce-
    // scatter exposes it less its own window alone.
    for (const Prediction* p : {&slow, &fast}) {
        for (const StageEstimate& st : p->stages) {
            QCOMPARE(st.chunk_reduce.size(), std::size_t(2));
            QCOMPARE(st.chunk_gather.size(), std::size_t(2));
            double rs = 0, ag = 0, lastRs = 0, lastAg = 0;
            for (std::size_t c = 0; c < 2; ++c) {
                rs += st.chunk_reduce[c];
                ag += st.chunk_gather[c];
                lastRs = std::max(lastRs, st.chunk_reduce_last[c]);
                lastAg = std::max(lastAg, st.chunk_gather_last[c]);
            }
            const double bwd = st.chunk_reduce_window[0] + st.chunk_reduce_window[1];
            const double fwd = st.chunk_gather_window[0] + st.chunk_gather_window[1];
            QVERIFY(st.param_gather <= std::max(lastAg, ag - fwd) + 1e-12);
            QVERIFY(st.dp_sync - st.param_gather - st.embedding_sync <= std::max(lastRs, rs - bwd) + 1e-12);
            QVERIFY(st.param_gather >= st.chunk_gather_last[0] - 1e-12);
        }
    }
    // Simulated again (a document read back, say), the stages keep their syncs, the tied
    // embeddings' all-reduce that estimate adds after its simulation included (GPT-22B ties
    // them: the end stages all-reduce the embedding's gradient).
    std::vector<StageEstimate> again = fast.stages;
    QVERIFY(again.front().embedding_sync > 0 && again.back().embedding_sync > 0);
    QVERIFY(simulateInterleaved(again, fast.num_microbatches, 2) > 0);
    for (std::size_t i = 0; i < again.size(); ++i) {
        QCOMPARE(again[i].dp_sync, fast.stages[i].dp_sync);
        QCOMPARE(again[i].param_gather, fast.stages[i].param_gather);
        QCOMPARE(again[i].embedding_sync, fast.stages[i].embedding_sync);
    }
}

void TestCostModel::keyValueGroupsReplicateBeyondTp()
{
    // LLaMA-2 7B's shape with grouped keys and values (128 channels per head). Megatron-LM
    // allows TP % groups == 0 (reference megatron-and-flagscale.md section 2): a rank then holds
    // one whole group, so at TP 8 four groups give every rank the same 128 key and 128 value
    // channels as eight groups do (1024 / 8), not 512 / 8 = 64.
    auto layerAt = [](int groups, int tp) {
        ModelSpec m = llama7b();
        m.num_query_groups = groups;
        const CostModel cm(m, nodesOf("H100-SXM", 1), DeviceCatalog::builtin());
        return oneLayer(cm, stageOn("H100-SXM", 0, 8, tp), true);
    };
    const StageEstimate four = layerAt(4, 8), eight = layerAt(8, 8);
    QCOMPARE(four.memory.weights, eight.memory.weights);
    QCOMPARE(four.memory.activations, eight.memory.activations);
    QCOMPARE(four.t_fwd, eight.t_fwd);
    // Where the groups split (TP 4), eight groups hold 2 x (256 - 128) x 4096 more key and
    // value weights per rank than four: 1,048,576 parameters, 2 bytes each.
    QCOMPARE(layerAt(8, 4).memory.weights - layerAt(4, 4).memory.weights, 2.0 * 1048576);
}

void TestCostModel::tpReplicatedParametersStayWhole()
{
    // Megatron-Core keeps the LayerNorms, the row-parallel biases (attention projection, fc2),
    // the learned position embedding (a plain torch.nn.Embedding), the final norm and the
    // router whole on every TP rank; everything else splits over TP (docs/cost-model.md
    // section 5.1). A 2-layer GPT, h = 1024, vocabulary 51200, 2048 positions, tied
    // embeddings, one stage at TP 8 on one H100 node:
    //   split per layer     QKV 3h^2 + 3h, projection h^2, fc1 4h^2 + 4h, fc2 4h^2 = 12h^2 + 7h
    //   whole per layer     two LayerNorms 4h, projection bias h, fc2 bias h        = 6h
    //   stage               word embedding V h (split), positions 2048 h and final norm 2h (whole)
    const double h = 1024;
    const ModelSpec m = gpt(2, 1024, 16);
    const CostModel cm(m, nodesOf("H100-SXM", 1), DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 8);
    st.first_layer = 0;
    st.num_layers = 2;
    StageContext ctx;
    ctx.stage_index = 0;
    ctx.num_stages = 1;
    ctx.distributed_optimizer = false;
    const double perRank = (2 * (12 * h * h + 7 * h) + 51200 * h) / 8 + 2 * 6 * h + 2048 * h + 2 * h;
    QCOMPARE(perRank, 11812608.0);
    QCOMPARE(cm.estimateStage(st, ctx).memory.weights, 2 * perRank);

    // One MoE layer of 4 experts (top 2, F = 4h, biases) at TP 2, EP 2, ETP 2, EDP 2: the
    // attention splits as above over TP with 5h whole (norms and projection bias), the router
    // (4h weight and a bias of 4, Megatron-Core's Router with --add-bias-linear) is whole, and
    // each expert's fc2 bias (h) is whole on the two ETP ranks while its
    // fc1 (4h^2 + 4h) and fc2 (4h^2) weights split over EP x ETP.
    ModelSpec moe = gpt(4, 1024, 16);
    moe.num_experts = 4;
    moe.moe_router_topk = 2;
    const CostModel mc(moe, nodesOf("H100-SXM", 1), DeviceCatalog::builtin());
    StagePlan ms = stageOn("H100-SXM", 0, 8, 2);
    ms.ep = 2;
    ms.etp = 2;
    ms.edp = 2;
    const StageEstimate e = oneLayer(mc, ms, true);
    const double attention = (4 * h * h + 3 * h) / 2 + 5 * h;
    const double experts = 4 * (8 * h * h + 4 * h) / (2 * 2) + 4 * h / 2;
    QCOMPARE(e.memory.weights, 2 * (attention + 4 * h + 4 + experts));
}

void TestCostModel::bytesPerParameter()
{
    // Megatron dist_optimizer.md: bf16 params with fp32 grads: 18 B/param, 6 + 12/d distributed.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 2);   // TP 2, DP 4
    st.first_layer = 1;
    st.num_layers = 2;
    StageContext ctx = middleStage(false);
    // Per rank: two layers' projections and SwiGLU FFN over TP 2, their two RMSNorms (4096
    // each) whole on both ranks (section 5.1).
    const double norms = 2 * 4096.0;
    const double params = 2 * ((countParameters(m).dense_per_layer - norms + (4096.0 * 11008 * 2 + 11008.0 * 4096)) / 2 + norms);
    StageEstimate e = cm.estimateStage(st, ctx);
    QVERIFY(std::fabs((e.memory.weights + e.memory.gradients + e.memory.optimizer) / params - 18) < 1e-9);
    ctx.distributed_optimizer = true;
    e = cm.estimateStage(st, ctx);
    QVERIFY(std::fabs((e.memory.weights + e.memory.gradients + e.memory.optimizer) / params - (6 + 12.0 / 4)) < 1e-9);

    // fp16 params with fp16 grads (Megatron's default for --fp16): 20 B/param, 4 + 16/d
    // distributed; the gradient reduce-scatter moves 2 bytes per parameter instead of 4.
    ModelSpec half = m;
    half.training.precision = Precision::FP16;
    const CostModel hm(half, c, DeviceCatalog::builtin());
    ctx.distributed_optimizer = false;
    e = hm.estimateStage(st, ctx);
    QVERIFY(std::fabs((e.memory.weights + e.memory.gradients + e.memory.optimizer) / params - 20) < 1e-9);
    QVERIFY(std::fabs(e.memory.gradients / params - 2) < 1e-9);
    ctx.distributed_optimizer = true;
    e = hm.estimateStage(st, ctx);
    QVERIFY(std::fabs((e.memory.weights + e.memory.gradients + e.memory.optimizer) / params - (4 + 16.0 / 4)) < 1e-9);
    QCOMPARE(hm.minimumModelStateBytes(0.0), 20 * countParameters(half).total);
    // --accumulate-allreduce-grads-in-fp32 brings fp16 back to bf16's 18.
    half.training.accumulate_allreduce_grads_in_fp32 = true;
    const CostModel hm32(half, c, DeviceCatalog::builtin());
    ctx.distributed_optimizer = false;
    e = hm32.estimateStage(st, ctx);
    QVERIFY(std::fabs((e.memory.weights + e.memory.gradients + e.memory.optimizer) / params - 18) < 1e-9);

    // The data-parallel reduce-scatter of half the bytes: on one NVLink node the same DP 4
    // group and buckets, so the fp16 stage's exposed sync is no longer than the bf16 one's
    // and its reduce-scatter half as long (no overlap: every byte exposed).
    CostOptions noOverlap;
    noOverlap.overlap.grad_reduce = false;
    noOverlap.overlap.param_gather = false;
    ModelSpec halfOnly = m;
    halfOnly.training.precision = Precision::FP16;
    ModelSpec fullGrads = m;
    fullGrads.training.precision = Precision::FP16;
    fullGrads.training.accumulate_allreduce_grads_in_fp32 = true;
    ctx.distributed_optimizer = false;   // all-reduce only, no parameter all-gather
    const double syncHalf = CostModel(halfOnly, c, DeviceCatalog::builtin(), nullptr, noOverlap).estimateStage(st, ctx).dp_sync;
    const double syncFull = CostModel(fullGrads, c, DeviceCatalog::builtin(), nullptr, noOverlap).estimateStage(st, ctx).dp_sync;
    QVERIFY(syncHalf > 0 && syncHalf < syncFull);
}

void TestCostModel::leastModelStateOverAllDevices()
{
    // Every preset model on one stage of one device (TP, PP, DP 1) holds each parameter once:
    // 18 bytes per parameter (Megatron dist_optimizer.md), the bound the search starts from.
    // With the optimizer offloaded 6 bytes stay on the device. Mixtral 8x7B: 46.7e9 x 18 =
    // 841 GB (Jiang et al. 2024 give 46.7e9 parameters).
    const Cluster c = nodesOf("H100-SXM", 1);
    for (const PresetInfo& info : modelPresets()) {
        const ModelSpec& m = *findModelPreset(info.name);
        const CostModel cm(m, c, DeviceCatalog::builtin());
        // With the MTP depths, which a plan holds on its last stage (DeepSeek-V3).
        const double p = countParameters(m).total + countParameters(m).mtp;
        QCOMPARE(cm.minimumModelStateBytes(0.0), 18 * p);
        QCOMPARE(cm.minimumModelStateBytes(1.0), 6 * p);
        QCOMPARE(cm.minimumModelStateBytes(0.5), 12 * p);
        StagePlan st = stageOn("H100-SXM", 0, 1, 1);
        st.first_layer = 0;
        st.num_layers = m.num_layers;
        StageContext ctx;
        ctx.stage_index = 0;
        ctx.num_stages = 1;
        ctx.num_microbatches = 1;
        const StageEstimate e = cm.estimateStage(st, ctx);
        const double held = e.memory.weights + e.memory.gradients + e.memory.optimizer;
        QVERIFY2(std::fabs(held / cm.minimumModelStateBytes(0.0) - 1) < 1e-9, info.name.c_str());
    }
    const CostModel mixtral(mixtral8x7b(), c, DeviceCatalog::builtin());
    QVERIFY(std::fabs(mixtral.minimumModelStateBytes(0.0) / 18 / 46.7e9 - 1) < 0.005);
    // An H100 SXM's 80 GiB, all of it usable with no headroom.
    QCOMPARE(mixtral.deviceCapacityBytes("H100-SXM"), 80.0 * 1024 * 1024 * 1024);
    QCOMPARE(mixtral.deviceCapacityBytes("no-such-device"), 0.0);
}

void TestCostModel::dataParallelOverlapSwitches()
{
    // One GPT layer of h = 2048 has 12 h^2 + 13 h = 50,358,272 parameters (Narayanan et al.
    // eq. 2 per layer). On one 8-GPU A100 node at TP 1 the stage's DP group is the node's
    // 8 ranks. Megatron's DDP buckets hold max(4e7, 1e6 x DP) = 4e7 parameters
    // (param_and_grad_buffer.py), filled from the last parameter backwards, so one bucket of
    // 4e7 and a last one of 50,358,272 - 4e7 = 10,358,272. With the distributed
    // optimizer a bucket reduce-scatters fp32 gradients (4 B per parameter) and all-gathers
    // bf16 parameters (2 B) (docs/cost-model.md section 7).
    const ModelSpec m = gpt(3, 2048, 16);
    const DeviceCatalog cat = DeviceCatalog::builtin();
    const Cluster c = nodesOf("A100-80GB", 1);
    StagePlan st = stageOn("A100-80GB", 0, 8, 1);
    st.first_layer = 1;
    st.num_layers = 1;
    // Attention and norms 4h^2 + 8h, the GeLU MLP 8h^2 + 5h (countParameters keeps them apart).
    const ParameterCount pc = countParameters(m);
    QCOMPARE(pc.dense_per_layer, 4.0 * 2048 * 2048 + 8.0 * 2048);
    // The whole model: 3 layers, the final norm (2h) and the embeddings.
    QCOMPARE(pc.total - pc.embedding, 3 * (12.0 * 2048 * 2048 + 13.0 * 2048) + 2 * 2048);
    const DeviceType* a100 = cat.find("A100-80GB");
    QVERIFY(a100);
    GroupLink node;
    node.link = LinkClass::IntraNode;
    node.intra_bw = a100->intra_node_gbps * 1e9;
    node.nic_bw = a100->inter_node_gbps * 1e9;
    node.ranks_per_node = 8;
    const double rs1 = collectiveTime(Collective::ReduceScatter, 4e7 * 4.0, 8, node);
    const double ag1 = collectiveTime(Collective::AllGather, 4e7 * 2.0, 8, node);
    QCOMPARE(12.0 * 2048 * 2048 + 13.0 * 2048, 50358272.0);
    const double rsL = collectiveTime(Collective::ReduceScatter, 10358272.0 * 4.0, 8, node);
    const double agL = collectiveTime(Collective::AllGather, 10358272.0 * 2.0, 8, node);

    auto syncWith = [&](bool gradReduce, bool paramGather, bool distOpt) {
        CostOptions opt;
        opt.overlap.grad_reduce = gradReduce;
        opt.overlap.param_gather = paramGather;
        const CostModel cm(m, c, cat, nullptr, opt);
        return cm.estimateStage(st, middleStage(distOpt));
    };
    // Without the switches (Megatron-LM's default) nothing is hidden.
    const StageEstimate off = syncWith(false, false, true);
    QVERIFY(std::fabs(off.dp_sync - (rs1 + rsL + ag1 + agL)) < 1e-12);
    // --overlap-grad-reduce: the reduction runs during the backward, except the last bucket.
    const StageEstimate grad = syncWith(true, false, true);
    QVERIFY(std::fabs(grad.dp_sync - (std::max(rsL, rs1 + rsL - grad.t_bwd) + ag1 + agL)) < 1e-12);
    // --overlap-param-gather as well: the gather runs during the next forward, except one bucket.
    const StageEstimate both = syncWith(true, true, true);
    QVERIFY(std::fabs(both.dp_sync - (std::max(rsL, rs1 + rsL - both.t_bwd) + std::max(agL, ag1 + agL - both.t_fwd))) < 1e-12);
    QVERIFY(both.dp_sync < grad.dp_sync && grad.dp_sync < off.dp_sync);
    // The switches do not change the work itself.
    QCOMPARE(both.t_fwd, off.t_fwd);
    QCOMPARE(both.t_bwd, off.t_bwd);
}

void TestCostModel::optimizerCpuOffload()
{
    // Megatron-Core optimizer CPU offload (docs/cost-model.md section 7.3): the offloaded
    // fraction of the 12 bytes/param of the optimizer shard leaves the device; parameters (2)
    // and fp32 gradients (4) stay. LLaMA-2 7B, 2 layers, TP 2 DP 4 on one 8-GPU H100 node.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostOptions opt;
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
    StagePlan st = stageOn("H100-SXM", 0, 8, 2);
    st.first_layer = 1;
    st.num_layers = 2;
    StageContext ctx = middleStage(true);
    const StageEstimate on = cm.estimateStage(st, ctx);
    const double norms = 2 * 4096.0;   // two RMSNorms per layer, whole on each TP rank
    const double params = 2 * ((countParameters(m).dense_per_layer - norms + (4096.0 * 11008 * 2 + 11008.0 * 4096)) / 2 + norms);
    const double shard = params / 4;   // the DP rank's share of the optimizer
    QVERIFY(std::fabs(on.memory.optimizer / (12 * shard) - 1) < 1e-12);

    ctx.optimizer_offload_fraction = 1.0;
    const StageEstimate off = cm.estimateStage(st, ctx);
    QCOMPARE(off.memory.optimizer, 0.0);
    // In host memory: fp32 master weight, Adam m and v (12) and the pinned gradient copy (4).
    QVERIFY(std::fabs(off.memory.host / (16 * shard) - 1) < 1e-12);
    QCOMPARE(on.memory.host, 0.0);
    QCOMPARE(off.memory.weights, on.memory.weights);
    QCOMPARE(off.memory.gradients, on.memory.gradients);
    // Host step: the 8 ranks of the node share its CPUs at 11.6e9 / 8.2 s params/s (DeepSpeed
    // CPU-Adam), so 8 * shard / 1.4146e9 s; the link moves 4 bytes/param each way at 32 GB/s.
    const double cpu = 8 * shard / (11.6e9 / 8.2);
    const double link = 4 * shard / 32e9;
    QVERIFY(cpu > link);
    QVERIFY(std::fabs(off.optimizer / cpu - 1) < 1e-12);
    QVERIFY(off.optimizer > 10 * on.optimizer);   // the device's step is HBM-bound and much faster

    // Half offloaded: half the optimizer bytes, the host half sets the time.
    ctx.optimizer_offload_fraction = 0.5;
    const StageEstimate half = cm.estimateStage(st, ctx);
    QVERIFY(std::fabs(half.memory.optimizer / (6 * shard) - 1) < 1e-12);
    QVERIFY(std::fabs(half.memory.host / (8 * shard) - 1) < 1e-12);
    QVERIFY(std::fabs(half.optimizer / (cpu / 2) - 1) < 1e-12);

    // The plan carries the fraction to every stage.
    const Prediction pred = cm.estimate(wholeModelOffloaded(m));
    QCOMPARE(pred.stages.front().memory.optimizer, 0.0);
    // The node's 8 ranks together.
    QVERIFY(std::fabs(pred.host_memory_per_node_gib / (8 * pred.stages.front().memory.host / (1024.0 * 1024 * 1024)) - 1) < 1e-12);
}

void TestCostModel::nodeIdsAreOnlyLabels()
{
    // A node's id names it; the cluster format allows any non-negative int. Two H800 nodes
    // behind one switch (400 GB/s links) give the same prediction with ids 0 and 1 as with
    // 2,000,000,000 and 7, and the cost model's tables do not grow with the id (the second
    // would otherwise take gigabytes: one entry per id up to the largest).
    const ModelSpec m = llama7b();
    Cluster small = nodesOf("H800", 2);
    small.switches.push_back({100, "leaf", 0, 0});
    for (const Node& n : small.nodes)
        small.links.push_back({n.id, 100, 400.0, 5.0});
    Cluster large = small;
    const int ids[2] = {2000000000, 7};
    for (int i = 0; i < 2; ++i) {
        large.nodes[static_cast<std::size_t>(i)].id = ids[i];
        large.links[static_cast<std::size_t>(i)].a = ids[i];
    }
    UniformKnobs k;
    k.tp = 2;
    k.pp = 2;
    k.global_batch_size = 64;
    const Plan a = makeUniformPlan(m, small, DeviceCatalog::builtin(), k);
    const Plan b = makeUniformPlan(m, large, DeviceCatalog::builtin(), k);
    QCOMPARE(b.stages.front().devices.front().node, ids[0]);
    const Prediction pa = CostModel(m, small, DeviceCatalog::builtin()).estimate(a);
    const Prediction pb = CostModel(m, large, DeviceCatalog::builtin()).estimate(b);
    QVERIFY(pa.feasible && pb.feasible);
    QCOMPARE(pb.iteration_time_s, pa.iteration_time_s);
    QCOMPARE(pb.peak_memory_gib, pa.peak_memory_gib);
}

void TestCostModel::hostMemoryAndLinkOfTheNode()
{
    // The node's host memory and host link (docs/cost-model.md section 7.3). LLaMA-2 7B, the
    // whole model, TP 2 DP 4 on one 8-GPU H100 node, all of the optimizer offloaded.
    const ModelSpec m = llama7b();
    Cluster c = nodesOf("H100-SXM", 1);
    const Plan plan = wholeModelOffloaded(m);
    const StagePlan& whole = plan.stages.front();
    const double GiB = 1024.0 * 1024 * 1024;

    // Unknown host memory: reported, not checked.
    Prediction unknown;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        unknown = cm.estimate(plan);
    }
    QVERIFY(unknown.feasible);
    QCOMPARE(unknown.stages.front().memory.host_capacity, 0.0);
    QCOMPARE(unknown.host_memory_capacity_gib, 0.0);
    const double perRank = unknown.stages.front().memory.host;
    const double perNode = 8 * perRank / GiB;   // the node's 8 ranks
    QVERIFY(std::fabs(unknown.host_memory_per_node_gib / perNode - 1) < 1e-12);

    // Enough host memory: each rank's share is an eighth of it.
    c.nodes[0].host_memory_gib = std::ceil(perNode) + 1;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        const Prediction p = cm.estimate(plan);
        QVERIFY(p.feasible);
        QCOMPARE(p.stages.front().memory.host_capacity, c.nodes[0].host_memory_gib * GiB / 8);
        QCOMPARE(p.host_memory_capacity_gib, c.nodes[0].host_memory_gib);
        QVERIFY(p.stages.front().memory.fits());
    }

    // Too little: the node is named with what it needs, and by how much it is short.
    c.nodes[0].host_memory_gib = std::floor(perNode) - 10;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        const Prediction p = cm.estimate(plan);
        QVERIFY(!p.feasible);
        QVERIFY2(QString::fromStdString(p.infeasible_reason).startsWith(QStringLiteral("node n0 needs ")),
                 p.infeasible_reason.c_str());
        QVERIFY(p.infeasible_reason.find("of host memory") != std::string::npos);
        QVERIFY(std::fabs(p.memory_shortfall_gib - (perNode - c.nodes[0].host_memory_gib)) < 1e-9);
        // The stage's own check (what the search uses) agrees.
        QVERIFY(!p.stages.front().memory.fits());
        QVERIFY(std::fabs(p.stages.front().memory.shortfall() / GiB - (perRank / GiB - c.nodes[0].host_memory_gib / 8)) < 1e-9);
        // Device memory alone fits: the optimizer states are on the host.
        QVERIFY(p.stages.front().memory.total() <= p.stages.front().memory.capacity);
    }

    // A faster host link: the transfer is 4 bytes per offloaded parameter each way; with the
    // host Adam step made fast (options), the link sets the optimizer time.
    c.nodes[0].host_memory_gib = 0;
    CostOptions opt;
    opt.host_adam_params_per_s = 1e15;
    const double shard = unknown.stages.front().memory.host / 16;   // parameters of the rank's shard
    for (const double gbps : {0.0, 64.0}) {
        c.nodes[0].host_link_gbytes_per_s = gbps;
        const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
        StagePlan st = whole;
        StageContext ctx;
        ctx.num_stages = 1;
        ctx.optimizer_offload_fraction = 1.0;
        const StageEstimate e = cm.estimateStage(st, ctx);
        const double link = (gbps > 0 ? gbps : 32.0) * 1e9;   // 0: CostOptions::host_link_gbytes_per_s
        QVERIFY2(std::fabs(e.optimizer / (4 * shard / link) - 1) < 1e-12, qPrintable(QString::number(e.optimizer)));
    }
}

void TestCostModel::expertParametersOverEdp()
{
    // Experts are split over EP*ETP and their optimizer state over EDP (Megatron
    // theoretical_memory_usage.py): 8 experts, EP 4, ETP 1, EDP 2 on 8 devices.
    const ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 1);   // TP 1, DP 8
    st.ep = 4;
    st.etp = 1;
    st.edp = 2;
    st.first_layer = 1;
    st.num_layers = 1;
    StageContext ctx = middleStage(true);
    const StageEstimate e = cm.estimateStage(st, ctx);
    const ParameterCount pc = countParameters(m);
    const double dense = pc.dense_per_layer + 4096.0 * 8;   // attention + norms + router
    const double expert = pc.expert_per_layer / 4;
    QVERIFY(std::fabs(e.memory.optimizer / (12 * dense / 8 + 12 * expert / 2) - 1) < 1e-12);
    QVERIFY(std::fabs(e.memory.weights / (2 * (dense + expert)) - 1) < 1e-12);
}

void TestCostModel::dispatchVolumeEq3()
{
    // Paper eq. 3: D = tokens * h * beta * k * (1 - 1/EP) per dispatch; four per layer
    // (dispatch and combine, forward and backward), on the EP group's link.
    ModelSpec m = mixtral8x7b();
    m.training.router_imbalance = 1.0;   // no imbalance: the pure volume
    m.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 1);
    st.ep = 8;
    st.edp = 1;
    const StageEstimate e = oneLayer(cm, st, false);
    const double tokens = 4096, h = 4096, beta = 2, k = 2, ep = 8;
    const double D = tokens * h * beta * k * (1 - 1 / ep);
    // Intra-node: D over 450 GB/s NVLink4 times the H100 nccl-tests efficiency at D bytes per GPU
    // (Azure ND H100 v5 curve, capped at 370/450 for a non-all-reduce primitive).
    const double bw = 450e9 * intraNodeEfficiencyNvlink4(D / 1.75, false);
    QVERIFY2(std::fabs(e.expert_dispatch / (4 * D / bw) - 1) < 1e-12,
             qPrintable(QString("%1 vs %2").arg(e.expert_dispatch).arg(4 * D / bw)));
    // Same formula through collectiveTime.
    GroupLink g;
    g.intra_bw = 450e9;
    g.nvlink4 = true;
    QVERIFY(std::fabs(collectiveTime(Collective::AllToAll, D / (1 - 1 / ep), 8, g) / (D / bw) - 1) < 1e-12);
    // The NVLink4 curve: 234.45 GB/s all-reduce busbw at 16 MiB (Azure ND H100 v5); ring
    // primitives at most 370 GB/s (nccl-tests #212).
    QVERIFY(std::fabs(intraNodeEfficiencyNvlink4(16.0 * 1024 * 1024, true) - 234.45 / 450) < 1e-12);
    QCOMPARE(intraNodeEfficiencyNvlink4(8.0 * GiB, false), 370.0 / 450);

    // All-reduce inside an NVLink4 node, 1 GiB (docs/cost-model.md section 4.1): NVLink SHARP
    // moves the buffer once each way per GPU whatever the group, so its time is the measured
    // 8-GPU one, 1.75 GiB / 466.35 GB/s; a ring moves 2(n-1)/n GiB at 370 GB/s. The faster runs:
    // NVLS at 8 ranks (the measurement itself) and at 4 (1.75/466.35 < 1.5/370), the ring at 2
    // (1/370 < 1.75/466.35), which no NVLS pass beats.
    const double B = GiB;
    QVERIFY(std::fabs(collectiveTime(Collective::AllReduce, B, 8, g) / (1.75 * B / 466.35e9) - 1) < 1e-12);
    QVERIFY(std::fabs(collectiveTime(Collective::AllReduce, B, 4, g) / (1.75 * B / 466.35e9) - 1) < 1e-12);
    QVERIFY(std::fabs(collectiveTime(Collective::AllReduce, B, 2, g) / (1.0 * B / 370e9) - 1) < 1e-12);
}

void TestCostModel::moeLayerTpCollectivesAttentionOnly()
{
    // Megatron-Core's MoE layer takes the sequence-parallel tokens [S/TP, B, H] straight into
    // the dispatcher (token_dispatcher.py: permute -> A2A(EP) -> AG(ETP)), so of the dense
    // layer's two TP blocks only the attention's all-gather and reduce-scatter remain
    // (docs/cost-model.md 4.2). Mixtral 8x7B shape, T = 4096 tokens, TP 2 with SP, EP 1, on
    // 8 x H100 (NVLink4 450 GB/s). By hand: buffer T h 2 = 33,554,432 B, each rank moves half,
    // 16,777,216 B; curve index 16,777,216 / 1.75 = 9.14 MiB, between the ND H100 v5 points
    // 43.70 GB/s @ 1 MiB and 234.45 GB/s @ 16 MiB (log-log): e = 0.371178, so one all-gather
    // (or reduce-scatter) = 16,777,216 / (450e9 x 0.371178) = 100.444 us. The weight-gradient
    // re-gather hides behind the QKV input-gradient GEMM (103 GFLOP, 144 us). So the MoE layer
    // costs AG + RS per pass, 4 x 100.444 = 401.777 us per micro-batch; a dense layer twice that.
    ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    StagePlan st = stageOn("H100-SXM", 0, 8, 2);
    st.ep = 1;
    st.etp = 1;
    st.edp = 8;
    const double oneAg = 1.004442081e-4;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        const StageEstimate e = oneLayer(cm, st, true);
        QVERIFY2(std::fabs(e.tensor_parallel / (4 * oneAg) - 1) < 1e-6, qPrintable(QString::number(e.tensor_parallel)));
    }
    // A dense layer of the same shape: attention and MLP, 8 x 100.444 us.
    m.num_experts = 0;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        const StageEstimate e = oneLayer(cm, st, true);
        QVERIFY2(std::fabs(e.tensor_parallel / (8 * oneAg) - 1) < 1e-6, qPrintable(QString::number(e.tensor_parallel)));
    }
    // An MoE layer with a shared expert (a TP-split dense MLP, SharedExpertMLP) has its pair
    // back; its FC1 (2 T h F_s 2 / t = 481 GFLOP) hides the re-gather.
    m = mixtral8x7b();
    m.moe_shared_expert_intermediate_size = 14336;
    {
        const CostModel cm(m, c, DeviceCatalog::builtin());
        const StageEstimate e = oneLayer(cm, st, true);
        QVERIFY2(std::fabs(e.tensor_parallel / (8 * oneAg) - 1) < 1e-6, qPrintable(QString::number(e.tensor_parallel)));
    }
}

void TestCostModel::allGatherDispatcherSpansTpTimesEp()
{
    // Megatron-Core's MoEAllGatherTokenDispatcher: "this allgather spans the communication
    // domain of TP*EP" (expert TP x EP, ETP innermost): [(S/TP) B, H] -> [(S/TP) B (ETP EP), H],
    // and a reduce-scatter back; no further ETP exchange, and the gathered volume does not
    // depend on the routing (docs/cost-model.md 4.4). Mixtral 8x7B, T = 4096, TP 2, EP 2,
    // ETP 2, EDP 2 on 8 x H100, rho 1.5 (ignored by this volume). By hand: buffer
    // 2048 x 4096 x 2 x 4 = 67,108,864 B over 4 ranks, 3/4 on the wire = 50,331,648 B; index
    // 50,331,648 / 1.75 = 27.4 MiB, between 234.45 GB/s @ 16 MiB and 400.61 GB/s @ 128 MiB:
    // e = 0.598614 (under the 370/450 ring cap), 50,331,648 / (450e9 x 0.598614) = 186.845 us
    // for the all-gather and the same for the reduce-scatter; forward and backward each do
    // both: 4 x 186.845 = 747.381 us.
    ModelSpec m = mixtral8x7b();
    m.moe_token_dispatcher_type = TokenDispatcher::AllGather;
    m.training.router_imbalance = 1.5;
    const CostModel cm(m, nodesOf("H100-SXM", 1), DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 2);
    st.ep = 2;
    st.etp = 2;
    st.edp = 2;
    const StageEstimate e = oneLayer(cm, st, true);
    QVERIFY2(std::fabs(e.expert_dispatch / 7.473806536e-4 - 1) < 1e-6, qPrintable(QString::number(e.expert_dispatch)));
    // Its buffers (docs/cost-model.md 5.4): the gathered tokens and the un-permuted output,
    // 2 x 2048 x 4 x 4096 x 2 B = 134,217,728 B whatever the routing, and the permuted tokens
    // and their output, 2 x (2048 x 2 x 2 routed) x 4096 x 2 B x 1.5 = 201,326,592 B.
    QCOMPARE(e.memory.moe_buffers, 134217728.0 + 201326592.0);
    // The all-to-all dispatcher's: 4 x 8192 x 4096 x 2 B x 1.5 = 402,653,184 B.
    m.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
    QCOMPARE(oneLayer(CostModel(m, nodesOf("H100-SXM", 1), DeviceCatalog::builtin()), st, true).memory.moe_buffers, 402653184.0);
}

void TestCostModel::contextParallelRingUsesOnePeerLink()
{
    // A ring-attention step sends K and V to the next CP rank: on a full mesh that is one
    // peer's link, 1/7 of MI300X's 448 GB/s (device-specs.md, AMD xGMI), used at 0.75 after
    // 10 us (docs/cost-model.md 6), whatever the CP group's size. LLaMA-like GQA (h 4096,
    // 32 heads, 8 groups of 128), s 4096, CP 4, TP 1 on 8 x MI300X: T = 1024 tokens per rank.
    // By hand: step = 10 us + 2 x 1024 x 1024 x 2 B / (64e9 x 0.75) = 97.381 us; fused causal
    // core 2 T s q = 34.4 GFLOP at 1307.4 TFLOP/s x 0.514 x 0.935 x size(8.2 GFLOP-equivalent)
    // = 63.619 us. Exposed forward 3 x 97.381 - 3/4 x 63.619 = 244.430 us; backward twice the
    // exchange behind the core's backward, 2.5 x its forward (section 4.3):
    // 6 x 97.381 - 2.5 x 3/4 x 63.619 = 465.002 us; 709.433 us in all (the group's 3 links would
    // have given 3x the bandwidth).
    ModelSpec m = llama7b();
    m.num_query_groups = 8;
    const CostModel cm(m, nodesOf("MI300X", 1), DeviceCatalog::builtin());
    StagePlan st = stageOn("MI300X", 0, 8, 1);
    st.cp = 4;
    st.dp = 2;
    const StageEstimate e = oneLayer(cm, st, false);
    QVERIFY2(std::fabs(e.tensor_parallel / 7.094325517e-4 - 1) < 1e-6, qPrintable(QString::number(e.tensor_parallel)));
}

void TestCostModel::profiledMoeBackwardUsesFfnBwd()
{
    // Eq. 2 with profiled tables, per pass: t_dense - t_ffn + (1 + gamma (min(rho, EP) - 1)) k t_ffn F_e / F
    // + t_route, the backward with the profiled backward times (docs/cost-model.md 11).
    // Mixtral 8x7B (F_e = F, k 2, rho 1.2) on 8 x H800 at TP 8, T = 4096: dense 10 / 20 ms,
    // FFN 6 / 15 ms. At EP 1 the rank holds every expert, so rho does not apply (section 3.4):
    // forward 4 + 2 x 6 = 16 ms + R; backward 5 + 2 x 15 = 35 ms + 2R (R the analytic router).
    // So t_bwd - 2 t_fwd = 35 - 32 = 3 ms whatever R is.
    const ModelSpec m = mixtral8x7b();
    const Profile prof = h800LayerProfile(0.010, 0.020, 0.006, 0.015);
    const CostModel cm(m, nodesOf("H800", 1), DeviceCatalog::builtin(), &prof);
    StagePlan st = stageOn("H800", 0, 8, 8);
    const StageEstimate est = oneLayer(cm, st, true);
    QVERIFY2(std::fabs(est.t_bwd - 2 * est.t_fwd - 0.003) < 1e-12, qPrintable(QString::number(est.t_bwd - 2 * est.t_fwd)));
}

void TestCostModel::fusedCrossEntropy()
{
    // The last stage's cross-entropy over T V logits (docs/cost-model.md 3.6), LLaMA-2 7B shape
    // on H100 at TP 1, b 1 (T = 4096, V = 32000), STREAM 2.90 TB/s. Against the unfused 38 B
    // forward and 14 B backward per logit: Megatron-Core's fused kernels 26 and 14 (the fp32
    // copy with the max, the subtraction with the exp), Transformer Engine's 6 and 4 (an online
    // softmax reads the bf16 logits, a second kernel reads them again and writes the gradient
    // in their place; backward scales it in place). Activations: the fp32 softmax (4 B per
    // logit) is kept unfused and native, the bf16 gradient (2 B) by Transformer Engine's.
    const double T = 4096, V = 32000, hbm = 2.90e12;
    ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    auto last = [&](bool fusion, CrossEntropyFusionImpl impl, Target target = Target::Any) {
        m.training.cross_entropy_loss_fusion = fusion;
        m.training.cross_entropy_fusion_impl = impl;
        const CostModel cm(m, c, DeviceCatalog::builtin());
        StageContext ctx = middleStage(false);
        ctx.stage_index = 2;
        ctx.target = target;
        return cm.estimateStage(oneLayerOn("H100-SXM"), ctx);
    };
    const StageEstimate unfused = last(false, CrossEntropyFusionImpl::TE);   // the impl needs the fusion
    const StageEstimate native = last(true, CrossEntropyFusionImpl::Native);
    const StageEstimate te = last(true, CrossEntropyFusionImpl::TE);
    // Megatron-LM d98e8a64 refuses te and its launcher writes native: a plan for it is costed
    // so; FlagScale runs te.
    const StageEstimate teForMegatron = last(true, CrossEntropyFusionImpl::TE, Target::Megatron);
    QCOMPARE(teForMegatron.t_fwd, native.t_fwd);
    QCOMPARE(teForMegatron.t_bwd, native.t_bwd);
    QCOMPARE(teForMegatron.memory.activations, native.memory.activations);
    QCOMPARE(last(true, CrossEntropyFusionImpl::TE, Target::FlagScale).t_fwd, te.t_fwd);
    QVERIFY2(std::fabs((unfused.t_fwd - native.t_fwd) / (12 * T * V / hbm) - 1) < 1e-9,
             qPrintable(QString::number(unfused.t_fwd - native.t_fwd)));
    QVERIFY2(std::fabs(unfused.t_bwd - native.t_bwd) < 1e-15, qPrintable(QString::number(unfused.t_bwd - native.t_bwd)));
    QVERIFY2(std::fabs((unfused.t_fwd - te.t_fwd) / (32 * T * V / hbm) - 1) < 1e-9,
             qPrintable(QString::number(unfused.t_fwd - te.t_fwd)));
    QVERIFY2(std::fabs((unfused.t_bwd - te.t_bwd) / (10 * T * V / hbm) - 1) < 1e-9,
             qPrintable(QString::number(unfused.t_bwd - te.t_bwd)));
    QCOMPARE(native.memory.activations, unfused.memory.activations);
    QVERIFY2(std::fabs((unfused.memory.activations - te.memory.activations) / (2 * T * V) - 1) < 1e-12,
             qPrintable(QString::number(unfused.memory.activations - te.memory.activations)));
}

void TestCostModel::outputLayerAndFusedAttention()
{
    // Last stage minus a middle stage of one layer = final norm + logits GEMM + Megatron's
    // unfused cross-entropy (docs/cost-model.md 3.6). LLaMA-2 7B shape, H100, TP 1, b 1:
    // logits 2 T h V = 1.07 TFLOP (size factor 1); cross-entropy 38 B (forward) and 14 B
    // (backward) per logit; norm 4 T h; over the STREAM copy bandwidth 2.90 TB/s.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    const StagePlan st = oneLayerOn("H100-SXM");
    StageContext ctx = middleStage(false);
    const StageEstimate mid = cm.estimateStage(st, ctx);
    ctx.stage_index = 2;
    const StageEstimate last = cm.estimateStage(st, ctx);
    const double T = 4096, h = 4096, V = 32000;
    const double gemmRate = 989e12 * 0.803 * 253.7 / 271.2;   // MAMF x cuBLAS 8192^3 / MAMF
    const double hbm = 2.90e12;
    const double logits = 2 * T * h * V / gemmRate;
    const double norm = 4 * T * h / hbm;
    const double fwd = logits + 38 * T * V / hbm + norm;
    const double bwd = 2 * logits + 14 * T * V / hbm + 2 * norm;
    QVERIFY2(std::fabs((last.t_fwd - mid.t_fwd) / fwd - 1) < 1e-9, qPrintable(QString::number(last.t_fwd - mid.t_fwd)));
    QVERIFY2(std::fabs((last.t_bwd - mid.t_bwd) / bwd - 1) < 1e-9, qPrintable(QString::number(last.t_bwd - mid.t_bwd)));

    // Fused attention: backward = 2 x forward + half the attention core's forward (FlashAttention
    // recomputes the scores: 5 products against 2), so with the core's forward a = bwd - 2 fwd;
    // the causal core is 0.5 x 4 T s q FLOPs = 137 GFLOP, i.e. 43.4 GFLOP at A100's 312 TFLOP/s:
    // Calculon's size factor between 0.9/0.95 at 16 GFLOP and 1 at 128, log-linear.
    const double coreFlops = 0.5 * 4 * T * 4096.0 * 4096.0;
    const double a100Equivalent = coreFlops * 312.0 / 989.0;
    const double size = calculonSizeFactor(a100Equivalent);
    const double core = coreFlops / (gemmRate * size);
    QVERIFY2(std::fabs((mid.t_bwd - 2 * mid.t_fwd) / (0.5 * core) - 1) < 1e-9,
             qPrintable(QString::number(mid.t_bwd - 2 * mid.t_fwd)));
}

void TestCostModel::fp8LinearLayers()
{
    // --fp8-format (docs/cost-model.md section 3.7): the four linear layers' GEMMs run at the FP8
    // peak (H100 1,979 TFLOP/s, NVIDIA/dgxc-benchmarking llama3.1/README_8b.md) with the same
    // large-GEMM fraction and a size curve indexed by the time at that peak; each GEMM input is
    // cast in forward and each output gradient in backward, 2 + 1 + 1 B per element over the
    // STREAM bandwidth; the FP8 weights and their transposes add 2 B per linear parameter.
    // LLaMA-2 7B shape (h 4096, MHA, SwiGLU FFN 11008, no biases), one middle layer on H100,
    // TP 1, T = 4096 tokens.
    ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const StagePlan st = oneLayerOn("H100-SXM");
    const StageContext ctx = middleStage(false);
    const StageEstimate bf16 = CostModel(m, c, DeviceCatalog::builtin()).estimateStage(st, ctx);
    m.training.fp8_format = Fp8Format::Hybrid;
    const StageEstimate fp8 = CostModel(m, c, DeviceCatalog::builtin()).estimateStage(st, ctx);

    const double T = 4096, h = 4096, f = 11008;
    const double fraction = 0.803 * 253.7 / 271.2;   // MAMF x cuBLAS 8192^3 / MAMF
    // The size curve at the GEMM's FLOPs times 312 TFLOP/s over the peak it runs at.
    auto gemm = [&](double flops, double peak) {
        return flops / (peak * fraction * calculonSizeFactor(flops * 312e12 / peak));
    };
    const double gemms[] = {2 * T * h * 3 * h, 2 * T * h * h, 2 * T * h * 2 * f, 2 * T * f * h};   // QKV, proj, FC1, FC2
    double saved = 0;
    for (double g : gemms)
        saved += gemm(g, 989e12) - gemm(g, 1979e12);
    const double hbm = 2.90e12;
    const double castFwd = 4 * (T * h + T * h + T * h + T * f) / hbm;          // inputs of QKV, proj, FC1, FC2
    const double castBwd = 4 * (T * 3 * h + T * h + T * 2 * f + T * h) / hbm;  // their outputs' gradients
    QVERIFY2(std::fabs((bf16.t_fwd - fp8.t_fwd) / (saved - castFwd) - 1) < 1e-9, qPrintable(QString::number(bf16.t_fwd - fp8.t_fwd)));
    QVERIFY2(std::fabs((bf16.t_bwd - fp8.t_bwd) / (2 * saved - castBwd) - 1) < 1e-9,
             qPrintable(QString::number(bf16.t_bwd - fp8.t_bwd)));
    // 2.24 ms of BF16 GEMMs forward become 1.13 ms (the smaller FP8 GEMMs lose a little to the
    // size curve), and the casts add 0.13 ms forward and 0.24 ms backward.
    QVERIFY(saved > 1.10e-3 && saved < 1.12e-3);
    QVERIFY(castFwd > 0.13e-3 && castFwd < 0.14e-3);
    QCOMPARE(fp8.memory.weights - bf16.memory.weights, 2 * (4 * h * h + 3 * h * f));
    // Activations (section 5.2): the QKV, FC1 and FC2 inputs kept for the weight gradients in
    // FP8, 1 byte per element instead of 2 (h, h and F per token); the projection's input is
    // the fused attention output, kept in bf16 by the kernel, with the FP8 copy on top (q = h).
    QCOMPARE(bf16.memory.activations - fp8.memory.activations, T * (h + h + f - h));
    QVERIFY(castBwd > 0.23e-3 && castBwd < 0.25e-3);
    // --fp8-param-gather: the FP8 weights replace the bf16 ones (no copies), but only with the
    // distributed optimizer, which Megatron-LM needs to gather them.
    ModelSpec inPlace = m;
    inPlace.training.fp8_param_gather = true;
    StageContext distOpt = ctx;
    distOpt.distributed_optimizer = true;
    StageContext noDistOpt = ctx;
    noDistOpt.distributed_optimizer = false;
    QCOMPARE(CostModel(inPlace, c, DeviceCatalog::builtin()).estimateStage(st, distOpt).memory.weights, bf16.memory.weights);
    QCOMPARE(CostModel(inPlace, c, DeviceCatalog::builtin()).estimateStage(st, noDistOpt).memory.weights, fp8.memory.weights);

    // A100 has no FP8 tensor cores: its stage is costed in bf16, and a note says so.
    const Cluster a100 = nodesOf("A100-80GB", 1);
    StagePlan sa = oneLayerOn("A100-80GB");
    const StageEstimate onA100 = CostModel(m, a100, DeviceCatalog::builtin()).estimateStage(sa, ctx);
    ModelSpec plain = m;
    plain.training.fp8_format = Fp8Format::None;
    const StageEstimate a100Bf16 = CostModel(plain, a100, DeviceCatalog::builtin()).estimateStage(sa, ctx);
    QCOMPARE(onA100.t_fwd, a100Bf16.t_fwd);
    QCOMPARE(onA100.memory.weights, a100Bf16.memory.weights);
    UniformKnobs k;
    k.micro_batch_size = 1;
    k.global_batch_size = 8;
    const Prediction pa = CostModel(m, nodesOf("A100-80GB", 1), DeviceCatalog::builtin())
                              .estimate(makeUniformPlan(m, nodesOf("A100-80GB", 1), DeviceCatalog::builtin(), k));
    QVERIFY(std::find(pa.notes.begin(), pa.notes.end(),
                      "A100-80GB: compute capability 8.0 (Transformer Engine runs FP8 on 8.9 or higher), so its GEMMs are costed in bf16 (FP8 training cannot run on it)")
            != pa.notes.end());
    // The MFU of an FP8 plan is over the FP8 peak, as NVIDIA's recipes count it.
    const Prediction ph = CostModel(m, c, DeviceCatalog::builtin()).estimate(makeUniformPlan(m, c, DeviceCatalog::builtin(), k));
    QVERIFY(std::fabs(ph.mfu / (ph.tflops_per_device / 1979.0) - 1) < 1e-9);
}

void TestCostModel::fp8MoeLayer()
{
    // An MoE layer in FP8 (docs/cost-model.md section 3.7): the attention's QKV and projection
    // and the routed experts' two GEMMs run at the FP8 peak, the router stays bf16; the
    // experts' part and their casts scale by the imbalance 1 + gamma (min(rho, EP) - 1) = 1.2 (rho 1.2,
    // gamma 1). Mixtral 8x7B shape (h 4096, q 4096, kv 1024, F_e 14336, SwiGLU, 8 experts,
    // top-2) on one H100 node, TP 1, EP 8: T = 4096 tokens, 8192 routed token-expert pairs on
    // each device, one local expert. Backward: twice the GEMM saving, less the gradient casts.
    ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    StagePlan st = stageOn("H100-SXM", 0, 8, 1);
    st.ep = 8;
    st.etp = 1;
    st.edp = 8;
    const StageEstimate bf16 = oneLayer(CostModel(m, c, DeviceCatalog::builtin()), st, false);
    m.training.fp8_format = Fp8Format::Hybrid;
    const StageEstimate fp8 = oneLayer(CostModel(m, c, DeviceCatalog::builtin()), st, false);

    const double T = 4096, h = 4096, q = 4096, kv = 1024, fe = 14336, routed = 2 * T, imbalance = 1.2;
    const double fraction = 0.803 * 253.7 / 271.2;
    auto gemm = [&](double flops, double peak) {
        return flops / (peak * fraction * calculonSizeFactor(flops * 312e12 / peak));
    };
    auto saving = [&](double flops) { return gemm(flops, 989e12) - gemm(flops, 1979e12); };
    const double attention = saving(2 * T * h * (q + 2 * kv)) + saving(2 * T * q * h);
    const double experts = saving(2 * routed * h * 2 * fe) + saving(2 * routed * fe * h);
    const double hbm = 2.90e12;
    const double castFwd = 4 * (T * h + T * q + imbalance * (routed * h + routed * fe)) / hbm;
    const double castBwd = 4 * (T * (q + 2 * kv) + T * h + imbalance * (routed * 2 * fe + routed * h)) / hbm;
    const double gemmSaving = attention + imbalance * experts;
    QVERIFY2(std::fabs((bf16.t_fwd - fp8.t_fwd) / (gemmSaving - castFwd) - 1) < 1e-9,
             qPrintable(QString::number(bf16.t_fwd - fp8.t_fwd)));
    QVERIFY2(std::fabs((bf16.t_bwd - fp8.t_bwd) / (2 * gemmSaving - castBwd) - 1) < 1e-9,
             qPrintable(QString::number(bf16.t_bwd - fp8.t_bwd)));
    // The expert weights of the device (one expert: 3 h F_e) and the attention's 2 h q + 2 h kv
    // take their FP8 copies; the router's E h do not.
    QCOMPARE(fp8.memory.weights - bf16.memory.weights, 2 * (3 * h * fe + 2 * h * q + 2 * h * kv));
}

void TestCostModel::fp8UnderSequenceParallelism()
{
    // With sequence parallelism Transformer Engine casts the h-wide tensors TP gathers on the
    // rank's shard (T h / t: the QKV and FC1 inputs forward, the projection's and FC2's output
    // gradients backward), gathers the FP8 casts, 1 byte per element, and transposes each
    // gathered tensor for the weight gradient, 1 + 1 bytes per element of T h
    // (docs/cost-model.md 3.7). One LLaMA-2 7B layer in the middle of a pipeline, 4 H100 at
    // TP 4, T = 4096.
    const double T = 4096, h = 4096, t = 4, hbm = 2.90e12;
    // The TP collectives come from a table, so their times are the table's: all-gather of
    // T h bytes 10 us, of 2 T h bytes 30 us; reduce-scatter of 2 T h bytes 20 us. A dense
    // layer has two blocks, each an all-gather and a reduce-scatter forward and again
    // backward; the backward re-gathers hide behind the QKV and FC1 input-gradient GEMMs
    // (26 GFLOP for the QKV at TP 4: about 35 us in bf16, 18 us in FP8).
    Profile prof;
    const auto entry = [&prof](Collective c, double bytes, double seconds) { addTpCollective(prof, c, bytes, seconds); };
    entry(Collective::AllGather, T * h, 10e-6);
    entry(Collective::AllGather, 2 * T * h, 30e-6);
    entry(Collective::ReduceScatter, T * h, 15e-6);
    entry(Collective::ReduceScatter, 2 * T * h, 20e-6);
    ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    auto layer = [&](bool fp8, bool sp, const Profile* p) {
        m.training.fp8_format = fp8 ? Fp8Format::Hybrid : Fp8Format::None;
        const CostModel cm(m, c, DeviceCatalog::builtin(), p);
        StagePlan st = stageOn("H100-SXM", 0, 4, 4);
        st.first_layer = 1;
        st.num_layers = 1;
        StageContext ctx = middleStage(false);
        ctx.sequence_parallel = sp;
        return cm.estimateStage(st, ctx);
    };
    QVERIFY2(std::fabs(layer(false, true, &prof).tensor_parallel / (4 * (30e-6 + 20e-6)) - 1) < 1e-9,
             qPrintable(QString::number(layer(false, true, &prof).tensor_parallel)));
    QVERIFY2(std::fabs(layer(true, true, &prof).tensor_parallel / (4 * (10e-6 + 20e-6)) - 1) < 1e-9,
             qPrintable(QString::number(layer(true, true, &prof).tensor_parallel)));

    // The casts: without SP each rank casts the whole T h of those four tensors with their
    // transposes (4 B per element: read 2, write the FP8 tensor and its transpose); with SP it
    // casts a quarter of it without the transpose (3 B per element) and transposes the four
    // gathered tensors (2 B per element of T h). Sequence parallelism also splits the
    // element-wise work, alike with and without FP8, so the FP8 saving of SP over the bf16 one
    // is 4 tensors x (4 T h - 3 T h / t - 2 T h) bytes = 5 T h at t = 4.
    const double fp8Saving = layer(true, false, nullptr).compute - layer(true, true, nullptr).compute;
    const double bf16Saving = layer(false, false, nullptr).compute - layer(false, true, nullptr).compute;
    QVERIFY2(std::fabs((fp8Saving - bf16Saving) / (4 * (4 * T * h - 3 * T * h / t - 2 * T * h) / hbm) - 1) < 1e-9,
             qPrintable(QString::number(fp8Saving - bf16Saving)));
}

void TestCostModel::fp8Recipes()
{
    // Megatron-LM's --fp8-recipe changes what Transformer Engine's casts move
    // (docs/cost-model.md 3.7). One LLaMA-2 7B layer on 4 H100 at TP 4, T = 4096, q = h
    // (MHA), F = 11008 gated. The cast elements of one layer, forward and backward:
    //   without SP: inputs T (h + q/t + h + F/t), output gradients T (q/t + 2 h/t + h + 2F/t + h),
    //   together T (5h + 3F/4) at t = 4;
    //   with SP the four h-wide tensors are cast on the shard: T (8 h/t + 3 F/t).
    const double T = 4096, h = 4096, F = 11008, t = 4, hbm = 2.90e12;
    const double all = T * (5 * h + 0.75 * F);
    const double sp = T * (8 * h / t + 3 * F / t);
    // The amax all-reduces of current scaling come from a table: 4 bytes over the TP group, 5 us.
    Profile prof;
    const auto entry = [&prof](Collective c, double bytes, double seconds) { addTpCollective(prof, c, bytes, seconds); };
    entry(Collective::AllGather, T * h, 10e-6);
    entry(Collective::ReduceScatter, 2 * T * h, 20e-6);
    entry(Collective::AllReduce, 4, 5e-6);
    ModelSpec m = llama7b();
    m.training.fp8_format = Fp8Format::Hybrid;
    const Cluster c = nodesOf("H100-SXM", 1);
    auto layer = [&](Fp8Recipe recipe, bool seqPar, const Profile* p = nullptr) {
        m.training.fp8_recipe = recipe;
        const CostModel cm(m, c, DeviceCatalog::builtin(), p);
        StagePlan st = stageOn("H100-SXM", 0, 4, 4);
        st.first_layer = 1;
        st.num_layers = 1;
        StageContext ctx = middleStage(false);
        ctx.sequence_parallel = seqPar;
        return cm.estimateStage(st, ctx);
    };
    auto near = [](double got, double want) { return std::fabs(got / want - 1) < 1e-9; };
    const double delayed = layer(Fp8Recipe::Delayed, false).compute;
    const double delayedSp = layer(Fp8Recipe::Delayed, true).compute;
    // Tensorwise (current scaling) reads each tensor once more for its amax: 2 bytes per
    // element cast, with or without SP (the transposes after the gathers are alike).
    const double tensorwise = layer(Fp8Recipe::Tensorwise, false).compute - delayed;
    QVERIFY2(near(tensorwise, 2 * all / hbm), qPrintable(QString::number(tensorwise)));
    const double tensorwiseSp = layer(Fp8Recipe::Tensorwise, true).compute - delayedSp;
    QVERIFY2(near(tensorwiseSp, 2 * sp / hbm), qPrintable(QString::number(tensorwiseSp)));
    // Blockwise writes a 4-byte scale per 128 elements in each orientation: 4 + 1/16 bytes
    // per element instead of 4 without SP.
    const double blockwise = layer(Fp8Recipe::Blockwise, false).compute - delayed;
    QVERIFY2(near(blockwise, all / 16 / hbm), qPrintable(QString::number(blockwise)));
    // With SP it casts each shard both ways (4 + 1/16 bytes instead of the delayed recipe's
    // row-wise 3) and gathers each orientation, so the 2 T h bytes of transpose per gathered
    // tensor go: delayed moves 4 sp - 4 T h / t + 8 T h bytes, blockwise (4 + 1/16) sp.
    const double blockwiseSp = layer(Fp8Recipe::Blockwise, true).compute - delayedSp;
    QVERIFY2(near(blockwiseSp, (sp / 16 + 4 * T * h / t - 8 * T * h) / hbm), qPrintable(QString::number(blockwiseSp)));
    // Current scaling under SP all-reduces each gathered shard's amax over TP first: two in
    // forward (QKV and FC1 inputs), two in backward (the output gradients), 5 us each here.
    const double tpDelayed = layer(Fp8Recipe::Delayed, true, &prof).tensor_parallel;
    const double tpTensorwise = layer(Fp8Recipe::Tensorwise, true, &prof).tensor_parallel;
    QVERIFY2(near(tpTensorwise - tpDelayed, 4 * 5e-6), qPrintable(QString::number(tpTensorwise - tpDelayed)));

    // The cached FP8 weights on B200: MXFP8 keeps both orientations with an E8M0 scale per 32
    // elements, 2 + 1/16 bytes per linear-layer parameter, while the delayed recipe keeps 1
    // (compute capability 10.0 runs FP8 GEMMs in any layout, so TE makes no transpose:
    // Float8Quantizer's need_transpose). LLaMA-2 7B's layer has 4 h^2 + 3 h F linear
    // parameters, a quarter of them per rank at TP 4.
    const Cluster b200 = nodesOf("B200", 1);
    auto weights = [&](Fp8Recipe recipe) {
        m.training.fp8_recipe = recipe;
        const CostModel cm(m, b200, DeviceCatalog::builtin());
        StagePlan st = stageOn("B200", 0, 4, 4);
        st.first_layer = 1;
        st.num_layers = 1;
        return cm.estimateStage(st, middleStage(false)).memory.weights;
    };
    const double moreWeights = weights(Fp8Recipe::MXFP8) - weights(Fp8Recipe::Delayed);
    QVERIFY2(near(moreWeights, (4 * h * h + 3 * h * F) / t * (1 + 1.0 / 16)), qPrintable(QString::number(moreWeights)));
}

void TestCostModel::vocabParallelBoundaries()
{
    // LLaMA-2 7B's shape on one H100 node at TP 8, one layer per stage. The vocab-parallel
    // embedding sums the ranks' lookups (an all-reduce in forward; with SP a reduce-scatter
    // forward and an all-gather backward); the output layer's input is all-gathered forward and
    // reduce-scattered backward with SP, and only its gradient is all-reduced without SP.
    // Buffer: 4096 tokens x 4096 x 2 B = 32 MiB.
    const ModelSpec m = llama7b();
    const CostModel cm(m, nodesOf("H100-SXM", 1), DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 8);
    st.num_layers = 1;
    const DeviceType* h100 = DeviceCatalog::builtin().find("H100-SXM");
    QVERIFY(h100);
    GroupLink node;
    node.link = LinkClass::IntraNode;
    node.intra_bw = h100->intra_node_gbps * 1e9;
    node.nvlink4 = true;
    node.ranks_per_node = 8;
    const double bytes = 4096.0 * 4096 * 2;
    const double ar = collectiveTime(Collective::AllReduce, bytes, 8, node);
    const double rs = collectiveTime(Collective::ReduceScatter, bytes, 8, node);
    const double ag = collectiveTime(Collective::AllGather, bytes, 8, node);
    auto at = [&](int index, int stages, bool sp) {
        StageContext ctx;
        ctx.stage_index = index;
        ctx.num_stages = stages;
        ctx.sequence_parallel = sp;
        return cm.estimateStage(st, ctx);
    };
    for (bool sp : {false, true}) {
        const StageEstimate middle = at(1, 3, sp), first = at(0, 3, sp), last = at(2, 3, sp);
        const double embedding = sp ? rs + ag : ar;
        const double output = sp ? ag + rs : ar;
        QVERIFY(std::fabs(first.tensor_parallel - middle.tensor_parallel - embedding) < 1e-12);
        QVERIFY(std::fabs(last.tensor_parallel - middle.tensor_parallel - output) < 1e-12);
    }
}

void TestCostModel::vocabularyPaddedForTp()
{
    // Megatron-LM builds the embedding and the output layer for the vocabulary rounded up to a
    // multiple of make_vocab_size_divisible_by x TP (docs/cost-model.md section 1):
    // LLaMA's 32000 stays 32000 at TP 1 (250 x 128) and becomes 32 x 1024 = 32768 at TP 8;
    // GPT-2's 50257 becomes 393 x 128 = 50304; Qwen3's 151936 at TP 2 becomes 594 x 256 = 152064.
    QCOMPARE(paddedVocabSize(32000, 128, 1), 32000.0);
    QCOMPARE(paddedVocabSize(32000, 128, 8), 32768.0);
    QCOMPARE(paddedVocabSize(50257, 128, 1), 50304.0);
    QCOMPARE(paddedVocabSize(151936, 128, 2), 152064.0);
    QCOMPARE(paddedVocabSize(32000, 1, 8), 32000.0);
    ModelSpec padded = llama7b();
    QCOMPARE(padded.paddedVocabSize(8), 32768.0);
    ModelSpec exact = padded;
    exact.make_vocab_size_divisible_by = 1;
    QCOMPARE(exact.paddedVocabSize(8), 32000.0);

    // All 32 layers on one H100 node at TP 8, first and last stage at once (untied): the padded
    // model holds 2 x 768 x 4096 / 8 = 786,432 more parameters per rank, 2 B each in bf16, and
    // its one micro-batch in flight keeps logits over 768 / 8 more columns, 4 B x 4096 tokens x
    // 96 = 1,572,864 B (section 5.2: 4 s b v / t).
    StagePlan st = stageOn("H100-SXM", 0, 8, 8);
    st.num_layers = 32;
    StageContext ctx;   // the only stage, one micro-batch, sequence parallel
    ctx.distributed_optimizer = false;
    const Cluster c = nodesOf("H100-SXM", 1);
    const StageEstimate ep = CostModel(padded, c, DeviceCatalog::builtin()).estimateStage(st, ctx);
    const StageEstimate ee = CostModel(exact, c, DeviceCatalog::builtin()).estimateStage(st, ctx);
    QVERIFY(std::fabs(ep.memory.weights - ee.memory.weights - 2.0 * 786432) < 1e-3);
    QVERIFY(std::fabs(ep.memory.activations - ee.memory.activations - 1572864.0) < 1e-3);
    QVERIFY(ep.compute > ee.compute);

    // Megatron-LM counts the model FLOPs with the padded vocabulary (training.py,
    // num_floating_point_operations: args.padded_vocab_size): 3 passes x 2 h x 768 more logits
    // per token, over 16 sequences of 4096 tokens.
    const double more = 3.0 * 2 * 4096 * 768 * 16 * 4096;
    QVERIFY(std::fabs(modelFlopsPerIteration(padded, 16, 8) - modelFlopsPerIteration(exact, 16, 8) - more) < 1);
    QCOMPARE(modelFlopsPerIteration(padded, 16, 1), modelFlopsPerIteration(exact, 16, 1));
}

void TestCostModel::sharedExpertJoinsTheOverlapWindow()
{
    // With --tp-comm-overlap the TP collectives of a pass hide behind its GEMMs (section 4.2).
    // A shared expert is a TP-split MLP: its collectives join the attention's and so do its
    // GEMMs. Mixtral 8x7B's layer at TP 8 (ETP 8) with SP: a shared expert of 28,672 (twice the
    // expert FFN) brings more GEMM time than collectives, so less stays exposed than without it.
    ModelSpec m = mixtral8x7b();
    m.moe_ffn_hidden_size = 14336;
    CostOptions overlap;
    overlap.overlap.tp_comm = true;
    StagePlan st = stageOn("H800", 0, 8, 8);
    st.etp = 8;
    st.edp = 1;
    auto exposed = [&](double shared) {
        m.moe_shared_expert_intermediate_size = shared;
        const CostModel cm(m, nodesOf("H800", 1), DeviceCatalog::builtin(), nullptr, overlap);
        return oneLayer(cm, st, true).tensor_parallel;
    };
    const double without = exposed(0);
    QVERIFY(without > 0);
    QVERIFY2(exposed(28672) < without, qPrintable(QString("%1 vs %2").arg(exposed(28672)).arg(without)));
}

void TestCostModel::tpCommOverlapNeedsSequenceParallel()
{
    // Megatron-LM asserts --sequence-parallel for --tp-comm-overlap (arguments.py), so without
    // SP the all-reduces of a TP 8 dense layer stay exposed whatever the switch says; with SP
    // the same switch hides part of the all-gathers and reduce-scatters (section 4.2).
    const ModelSpec m = llama7b();
    CostOptions on;
    on.overlap.tp_comm = true;
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel withSwitch(m, c, DeviceCatalog::builtin(), nullptr, on);
    const CostModel without(m, c, DeviceCatalog::builtin());
    const StagePlan st = stageOn("H100-SXM", 0, 8, 8);
    const StageEstimate noSp = oneLayer(withSwitch, st, false);
    const StageEstimate noSpRef = oneLayer(without, st, false);
    QVERIFY(noSpRef.tensor_parallel > 0);
    QCOMPARE(noSp.tensor_parallel, noSpRef.tensor_parallel);
    QCOMPARE(noSp.t_fwd, noSpRef.t_fwd);
    QCOMPARE(noSp.t_bwd, noSpRef.t_bwd);
    QVERIFY(oneLayer(withSwitch, st, true).tensor_parallel < oneLayer(without, st, true).tensor_parallel);
}

void TestCostModel::oversubscribedLeafSwitches()
{
    // Four nodes of 8 H800 (50 GB/s NIC per GPU) under two leaf switches, two nodes each, with
    // the leaves joined by a spine. Node links of 400 GB/s (50 GB/s per GPU) and uplinks of
    // 400 GB/s: a leaf takes 800 GB/s in and sends 400 GB/s up, so a GPU keeps 0.5 x 50 = 25 GB/s
    // for traffic that leaves its leaf (docs/cost-model.md section 6). That is, by hand, the
    // same as node links of 200 GB/s (25 GB/s per GPU) under leaves that are not
    // oversubscribed (400 GB/s down, 400 GB/s up).
    auto fabric = [](double nodeLink, double uplink) {
        Cluster c = nodesOf("H800", 4);
        test::addSwitches(c, {10, 11, 12});
        c.links = {{0, 10, nodeLink, 5}, {1, 10, nodeLink, 5}, {2, 11, nodeLink, 5}, {3, 11, nodeLink, 5},
                   {10, 12, uplink, 5}, {11, 12, uplink, 5}};
        return c;
    };
    const Cluster over = fabric(400, 400), slowNics = fabric(200, 400), full = fabric(400, 800);
    const SwitchUplinks up = switchUplinks(over);
    QCOMPARE(up.share(0), 0.5);
    QVERIFY(up.shareLeaf({0, 1}) && !up.shareLeaf({1, 2}));
    QVERIFY(!switchUplinks(slowNics).oversubscribed() && !switchUplinks(full).oversubscribed());

    const ModelSpec m = llama7b();
    auto estimate = [&](const Cluster& c, int pp) {
        UniformKnobs k;
        k.tp = 8;
        k.pp = pp;
        k.global_batch_size = 64;
        k.sequence_parallel = true;
        k.distributed_optimizer = true;
        const Plan plan = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
        return CostModel(m, c, DeviceCatalog::builtin()).estimate(plan);
    };
    // PP 1, DP 4: every data-parallel group crosses the spine.
    const Prediction a = estimate(over, 1), b = estimate(slowNics, 1), f = estimate(full, 1);
    QVERIFY(f.breakdown.dp_sync < a.breakdown.dp_sync);
    QCOMPARE(a.breakdown.dp_sync, b.breakdown.dp_sync);
    QCOMPARE(a.iteration_time_s, b.iteration_time_s);
    // PP 2: each stage's data-parallel pair stays under its leaf, at the full 50 GB/s; the send
    // from the first leaf to the second crosses the spine at 25 GB/s.
    const Prediction a2 = estimate(over, 2), b2 = estimate(slowNics, 2), f2 = estimate(full, 2);
    QCOMPARE(a2.stages[0].dp_sync, f2.stages[0].dp_sync);
    QVERIFY(b2.stages[0].dp_sync > f2.stages[0].dp_sync);
    QCOMPARE(a2.stages[0].p2p_send, b2.stages[0].p2p_send);
    QVERIFY(a2.stages[0].p2p_send > f2.stages[0].p2p_send);

    // A node link drawn faster than the node's NICs (8 x 50 = 400 GB/s) loads the leaf no more
    // than the NICs can send: node links of 4,000 GB/s under uplinks of 800 GB/s leave the
    // leaves at 800 down / 800 up, not oversubscribed, and the prediction is that of the
    // 400 GB/s links. Without the catalog the links count as drawn (8000 / 800 = 10:1).
    const Cluster wide = fabric(4000, 800);
    QVERIFY(!switchUplinks(wide, &DeviceCatalog::builtin()).oversubscribed());
    QCOMPARE(switchUplinks(wide, &DeviceCatalog::builtin()).down.at(10), 800.0);
    QCOMPARE(switchUplinks(wide).oversubscription(10), 10.0);
    QCOMPARE(estimate(wide, 1).iteration_time_s, f.iteration_time_s);
    QCOMPARE(estimate(wide, 2).iteration_time_s, f2.iteration_time_s);
}

void TestCostModel::predictionRecordsOverlapSwitches()
{
    // Every prediction says which overlap switches its times assume, so that a re-estimate of
    // the same plan (What-if, estimate --plan, calibrate) assumes the same.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 2);
    UniformKnobs k;
    k.tp = 8;
    k.pp = 2;
    k.global_batch_size = 16;
    k.sequence_parallel = true;
    k.distributed_optimizer = true;
    const Plan plan = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    const Prediction defaults = CostModel(m, c, DeviceCatalog::builtin()).estimate(plan);
    QVERIFY(defaults.overlap == OverlapSwitches{});
    CostOptions opt;
    opt.overlap = {false, false, true, false};
    const Prediction given = CostModel(m, c, DeviceCatalog::builtin(), nullptr, opt).estimate(plan);
    QVERIFY(given.overlap == opt.overlap);
    // Exposed DP traffic makes the iteration longer; the TP overlap makes it shorter; the
    // two do not cancel to the same figure.
    QVERIFY(given.iteration_time_s != defaults.iteration_time_s);

    // Stages of different TP: the launcher leaves --tp-comm-overlap off (Transformer Engine's
    // userbuffers take one TP size), so the prediction does not assume it, and says so.
    Plan mixed = plan;
    for (StagePlan& st : mixed.stages) {
        st.dp = 1;
        st.edp = 1;
    }
    mixed.stages[0].tp = 4;
    mixed.stages[0].dp = 2;
    mixed.stages[0].ep = 1;
    mixed.stages[0].etp = 4;
    mixed.stages[0].edp = 2;
    mixed.stages[1].tp = 8;
    mixed.stages[1].etp = 8;
    mixed.stages[1].micro_batch_size = 2;   // DP x MBS equal on every stage
    mixed.global_batch_size = 16;
    CostOptions tpOnly;
    tpOnly.overlap.tp_comm = true;
    const Prediction mixedOn = CostModel(m, c, DeviceCatalog::builtin(), nullptr, tpOnly).estimate(mixed);
    const Prediction mixedOff = CostModel(m, c, DeviceCatalog::builtin()).estimate(mixed);
    QVERIFY(!mixedOn.overlap.tp_comm);
    QCOMPARE(mixedOn.iteration_time_s, mixedOff.iteration_time_s);
    QVERIFY(CostModel(m, c, DeviceCatalog::builtin(), nullptr, tpOnly).estimate(plan).overlap.tp_comm);

    // Without the distributed optimizer there is no parameter all-gather, and Megatron-LM
    // refuses --overlap-param-gather (megatron-and-flagscale.md section 2): the prediction
    // does not record it, so a re-estimate or a launcher never carries it over; the time is
    // the same either way.
    Plan plainOptimizer = plan;
    plainOptimizer.distributed_optimizer = false;
    const Prediction plainPred = CostModel(m, c, DeviceCatalog::builtin()).estimate(plainOptimizer);
    QVERIFY(!plainPred.overlap.param_gather);
    QVERIFY(plainPred.overlap.grad_reduce);
    CostOptions noGather;
    noGather.overlap.param_gather = false;
    QCOMPARE(CostModel(m, c, DeviceCatalog::builtin(), nullptr, noGather).estimate(plainOptimizer).iteration_time_s,
             plainPred.iteration_time_s);
}

void TestCostModel::imbalanceScalesMoePath()
{
    // Paper section 3.2: the MoE critical path scales by 1 + gamma (min(rho, EP) - 1).
    ModelSpec m = mixtral8x7b();
    m.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
    m.training.router_imbalance = 1.0;
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel even(m, c, DeviceCatalog::builtin());
    m.training.router_imbalance = 1.5;
    m.training.imbalance_weight = 0.5;
    const CostModel skew(m, c, DeviceCatalog::builtin());
    StagePlan st = stageOn("H100-SXM", 0, 8, 1);
    st.ep = 8;
    st.edp = 1;
    const double a = oneLayer(even, st, false).expert_dispatch;
    const double b = oneLayer(skew, st, false).expert_dispatch;
    QVERIFY(std::fabs(b / a - 1.25) < 1e-12);

    // A rank's routed pairs are at most the EP group's, EP times the mean rank's (docs/cost-model.md
    // 3.4): at EP 2, rho 3 weighs as 2, 1 + 0.5 (2 - 1) = 1.5 on the all-to-all; at EP 1 the rank
    // holds every expert and routes T k pairs whatever the routing: time and memory as rho 1.
    m.training.router_imbalance = 3.0;
    const CostModel steep(m, c, DeviceCatalog::builtin());
    st.ep = 2;
    st.edp = 4;
    QVERIFY(std::fabs(oneLayer(steep, st, false).expert_dispatch / oneLayer(even, st, false).expert_dispatch - 1.5) < 1e-12);
    st.ep = 1;
    st.edp = 8;
    const StageEstimate flat = oneLayer(even, st, true), hot = oneLayer(steep, st, true);
    QCOMPARE(hot.t_fwd, flat.t_fwd);
    QCOMPARE(hot.t_bwd, flat.t_bwd);
    QCOMPARE(hot.memory.activations, flat.memory.activations);
    QCOMPARE(hot.memory.moe_buffers, flat.memory.moe_buffers);
}

void TestCostModel::imbalanceCappedAtExpertsOverTopk()
{
    // Mixtral 8x7B: 8 experts, top-2. The busiest expert gets at most every token once, so
    // rho <= E / k = 4; a profile's rho of 100 costs what rho = 4 costs.
    const ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H800", 1);
    StagePlan st = stageOn("H800", 0, 8, 1);
    st.ep = 8;
    st.etp = 1;
    st.edp = 1;
    auto withRho = [&](double rho) {
        Profile p;
        p.router_imbalance = rho;
        const CostModel cm(m, c, DeviceCatalog::builtin(), &p);
        return oneLayer(cm, st, false);
    };
    const StageEstimate four = withRho(4.0), hundred = withRho(100.0), two = withRho(2.0);
    QCOMPARE(hundred.t_fwd, four.t_fwd);
    QCOMPARE(hundred.memory.activations, four.memory.activations);
    QVERIFY(two.t_fwd < four.t_fwd);
}

void TestCostModel::recomputeOrdering()
{
    // Korthikanti Table 4: backward none < selective < full; activations the other way.
    const ModelSpec m = gpt(48, 6144, 64);
    const Cluster c = nodesOf("A100-80GB", 1);
    CostOptions opt;
    opt.fused_attention = false;
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, opt);
    StagePlan st = stageOn("A100-80GB", 0, 8, 8);
    st.micro_batch_size = 4;
    const StageEstimate none = oneLayer(cm, st, true);
    st.recompute = Recompute::Selective;
    const StageEstimate sel = oneLayer(cm, st, true);
    st.recompute = Recompute::Full;
    const StageEstimate full = oneLayer(cm, st, true);
    QVERIFY(none.t_bwd < sel.t_bwd && sel.t_bwd < full.t_bwd);
    QVERIFY(none.memory.activations > sel.memory.activations && sel.memory.activations > full.memory.activations);
    // Full recompute repeats the forward: t_bwd(full) = t_bwd(none) + t_fwd.
    QVERIFY(std::fabs(full.t_bwd - (none.t_bwd + none.t_fwd)) < 1e-12);
    QCOMPARE(full.t_fwd, none.t_fwd);
}

void TestCostModel::selectiveRecomputeModules()
{
    // Megatron-Core's --recompute-modules (docs/cost-model.md sections 3.5 and 5.2) on the
    // stage of blockRecomputeTakesTheFirstLayers: Mixtral 8x7B with layers 0, 2, 4, ... MoE
    // (16 MoE, 16 dense), H800, TP 1, EP 8, micro-batches of T = 4096 tokens, fused attention
    // (core_attn then keeps nothing less). Bytes saved per token:
    //   moe_act   an MoE layer's expert FC2 inputs, k 2 F_e rho = 2 x 2 x 14336 x 1.2 = 68,812.8
    //   layernorm an MoE layer's pre-MLP norm output (Transformer Engine fuses the other
    //             norms into the next GEMM), 2h = 8,192
    //   mlp       a dense layer's MLP input and inner activations, 2h + 6F = 94,208
    //   moe       an MoE layer's experts, k (2h + 6 F_e) rho + 4E = 226,131.2
    const ModelSpec m = alternatingMixtral();
    const Cluster c = nodesOf("H800", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = wholeModelOnOneH800Node();
    StageContext ctx;
    ctx.stage_index = 1;   // no embedding
    ctx.num_stages = 3;    // nor output layer
    ctx.num_microbatches = 8;
    const double T = 4096, h = 4096;
    const StageEstimate none = cm.estimateStage(st, ctx);
    st.recompute = Recompute::Selective;
    auto with = [&](unsigned modules) {
        st.recompute_modules = modules;
        return cm.estimateStage(st, ctx);
    };
    auto saved = [&](unsigned modules) { return none.memory.activations - with(modules).memory.activations; };
    // In flight: min(PP - i, M) = 2 micro-batches on stage 1 of 3.
    const double perToken = 2 * 16 * T;
    QVERIFY(std::fabs(saved(recompute_module::core_attn)) < 1e-3);
    QVERIFY(std::fabs(saved(recompute_module::moe_act) - 68812.8 * perToken) < 1.0);
    QVERIFY(std::fabs(saved(recompute_module::layernorm) - 8192 * perToken) < 1.0);
    QVERIFY(std::fabs(saved(recompute_module::mlp) - 94208 * perToken) < 1.0);
    QVERIFY(std::fabs(saved(recompute_module::moe) - 226131.2 * perToken) < 1.0);
    QVERIFY(std::fabs(saved(recompute_module::shared_experts)) < 1e-3);   // Mixtral has none
    // moe recomputes the experts' activation with the rest of the layer.
    QVERIFY(std::fabs(saved(recompute_module::moe | recompute_module::moe_act) - 226131.2 * perToken) < 1.0);
    QVERIFY(std::fabs(saved(recompute_module::mlp | recompute_module::moe | recompute_module::layernorm)
                      - (94208 + 226131.2 + 8192) * perToken) < 1.0);

    // With a shared expert of F_s = 14336 (a Qwen2-MoE-style layer; its fc1 output and fc2
    // input, (2 + 2 x 2) F_s = 86,016 B per token), shared_experts drops those, and moe them
    // with the rest.
    {
        ModelSpec shared = alternatingMixtral();
        shared.moe_shared_expert_intermediate_size = 14336;
        const CostModel withShared(shared, c, DeviceCatalog::builtin());
        StagePlan s2 = wholeModelOnOneH800Node();
        const double kept = withShared.estimateStage(s2, ctx).memory.activations;
        s2.recompute = Recompute::Selective;
        s2.recompute_modules = recompute_module::shared_experts;
        QVERIFY(std::fabs(kept - withShared.estimateStage(s2, ctx).memory.activations - 86016.0 * perToken) < 1.0);
        s2.recompute_modules = recompute_module::moe;
        QVERIFY(std::fabs(kept - withShared.estimateStage(s2, ctx).memory.activations - (226131.2 + 86016.0) * perToken) < 1.0);
    }

    // Their backward repeats their forward (16 layers each), from HBM traffic at 2.90 TB/s
    // (3.35 TB/s x the STREAM fraction 0.866, resources/devices.json) where element-wise:
    //   moe_act   SwiGLU reads 2 F_e and writes F_e per routed token (k T of them), 2 bytes
    //             each: 6 x 8192 x 14336 B, times rho 1.2;
    //   layernorm reads and writes T h, 4 T h B.
    const double hbm = 2.90e12;
    auto extra = [&](unsigned modules) { return with(modules).t_bwd - none.t_bwd; };
    QVERIFY2(std::fabs(extra(recompute_module::moe_act) / (16.0 * 6 * 8192 * 14336 * 1.2 / hbm) - 1) < 1e-9,
             qPrintable(QString::number(extra(recompute_module::moe_act))));
    QVERIFY2(std::fabs(extra(recompute_module::layernorm) / (16 * 4 * T * h / hbm) - 1) < 1e-9,
             qPrintable(QString::number(extra(recompute_module::layernorm))));
    // The forward does not change; moe repeats the dispatch and combine (backward's own plus
    // forward's again: 3/2 of none's), which no other module does.
    QCOMPARE(with(recompute_module::all).t_fwd, none.t_fwd);
    QVERIFY(std::fabs(with(recompute_module::moe).expert_dispatch / none.expert_dispatch - 1.5) < 1e-12);
    QCOMPARE(with(recompute_module::moe_act).expert_dispatch, none.expert_dispatch);
    // The modules' times add up, moe with moe_act too: the activation's own checkpoint runs
    // again inside the MoE block's recompute (its memory is counted once, above).
    QVERIFY(extra(recompute_module::moe) > extra(recompute_module::moe_act));
    QVERIFY(std::fabs(extra(recompute_module::moe | recompute_module::moe_act)
                      - (extra(recompute_module::moe) + extra(recompute_module::moe_act))) < 1e-12);
    QVERIFY(std::fabs(extra(recompute_module::mlp | recompute_module::moe)
                      - (extra(recompute_module::mlp) + extra(recompute_module::moe))) < 1e-12);
    // Everything but the attention's own GEMMs, against full recompute's whole forward.
    QVERIFY(extra(recompute_module::all) < none.t_fwd);

    // Under FP8 a repeated block casts its GEMMs' inputs again (section 3.7). Current scaling
    // (tensorwise) reads each element once more than delayed scaling to find its amax, 2 bytes,
    // with the same FP8 GEMMs, so the two recipes' repeats differ by those reads alone. At
    // TP 1 (no SP) over 16 layers each:
    //   mlp  FC1's input T h and FC2's input T F: 2 x 4096 x (4096 + 14336) B;
    //   moe  the experts' FC1 inputs k T h and FC2 inputs k T F_e, times rho 1.2:
    //        2 x 2 x 4096 x (4096 + 14336) x 1.2 B.
    auto fp8Extra = [&](Fp8Recipe recipe, unsigned modules, int sharedFfn = 0) {
        ModelSpec fp8 = alternatingMixtral();
        fp8.moe_shared_expert_intermediate_size = sharedFfn;
        fp8.training.fp8_format = Fp8Format::Hybrid;
        fp8.training.fp8_recipe = recipe;
        const CostModel model(fp8, c, DeviceCatalog::builtin());
        StagePlan p = wholeModelOnOneH800Node();
        const double base = model.estimateStage(p, ctx).t_bwd;
        p.recompute = Recompute::Selective;
        p.recompute_modules = modules;
        return model.estimateStage(p, ctx).t_bwd - base;
    };
    const double mlpReads = fp8Extra(Fp8Recipe::Tensorwise, recompute_module::mlp) - fp8Extra(Fp8Recipe::Delayed, recompute_module::mlp);
    QVERIFY2(std::fabs(mlpReads / (16.0 * 2 * T * (h + 14336) / hbm) - 1) < 1e-9, qPrintable(QString::number(mlpReads)));
    const double moeReads = fp8Extra(Fp8Recipe::Tensorwise, recompute_module::moe) - fp8Extra(Fp8Recipe::Delayed, recompute_module::moe);
    QVERIFY2(std::fabs(moeReads / (16.0 * 2 * 2 * T * (h + 14336) * 1.2 / hbm) - 1) < 1e-9, qPrintable(QString::number(moeReads)));
    // With a shared expert of F_s = 14336 its GEMMs' inputs, T h and T F_s, are cast again by
    // shared_experts, and by moe beside the routed experts'.
    auto sharedExtra = [&](Fp8Recipe recipe, unsigned modules) { return fp8Extra(recipe, modules, 14336); };
    const double sharedReads = sharedExtra(Fp8Recipe::Tensorwise, recompute_module::shared_experts)
        - sharedExtra(Fp8Recipe::Delayed, recompute_module::shared_experts);
    QVERIFY2(std::fabs(sharedReads / (16.0 * 2 * T * (h + 14336) / hbm) - 1) < 1e-9, qPrintable(QString::number(sharedReads)));
    const double withShared = sharedExtra(Fp8Recipe::Tensorwise, recompute_module::moe) - sharedExtra(Fp8Recipe::Delayed, recompute_module::moe);
    QVERIFY2(std::fabs(withShared / (16.0 * 2 * T * (h + 14336) * (2 * 1.2 + 1) / hbm) - 1) < 1e-9, qPrintable(QString::number(withShared)));
}

void TestCostModel::blockRecomputeTakesTheFirstLayers()
{
    // Mixtral 8x7B with every other layer MoE (moe_layer_freq 2: layers 0, 2, 4, ... MoE) on
    // one H800 node, TP 1, EP 8, micro-batch 1 of 4096 tokens. Activation bytes per token
    // (section 5.2, h 4096, q 4096, kv 1024, SwiGLU F = F_e = 14336, k 2, rho 1.2, E 8):
    //   common      10h + 4q + 4kv                 = 40,960 + 20,480          = 61,440
    //   dense layer + (2 + 2 x 2) F                = 61,440 + 86,016          = 147,456
    //   MoE layer   + k (2h + 6 F_e) 1.2 + 4E      = 61,440 + 226,099.2 + 32  = 287,571.2
    // A layer under full recompute keeps its input, 2h = 8,192. So recomputing a MoE layer
    // saves 279,379.2 B per token and a dense one 139,264. Megatron-LM's block method
    // recomputes the first layers (transformer_block.py, _checkpointed_forward): with k = 4
    // that is layers 0-3, two MoE and two dense, not four MoE layers.
    const ModelSpec m = alternatingMixtral();
    const Cluster c = nodesOf("H800", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan st = wholeModelOnOneH800Node();
    StageContext ctx;
    ctx.stage_index = 0;
    ctx.num_stages = 1;
    ctx.num_microbatches = 8;   // one micro-batch in flight (PP 1)
    const double tokens = 4096, moeSaves = 279379.2 * tokens, denseSaves = 139264.0 * tokens;
    const double none = cm.estimateStage(st, ctx).memory.activations;
    st.recompute = Recompute::Full;
    auto saved = [&](int k) {
        st.recompute_layers = k;
        return none - cm.estimateStage(st, ctx).memory.activations;
    };
    QVERIFY(std::fabs(saved(1) - moeSaves) < 1.0);
    QVERIFY(std::fabs(saved(2) - (moeSaves + denseSaves)) < 1.0);
    QVERIFY(std::fabs(saved(4) - 2 * (moeSaves + denseSaves)) < 1.0);
    // The backward repeats the forward of those same layers: layers 2-3 (a MoE and a dense
    // one) cost what layers 0-1 cost, where MoE layers first would have made them two MoE.
    st.recompute_layers = 4;
    const double bwdFour = cm.estimateStage(st, ctx).t_bwd;
    st.recompute_layers = 2;
    const double bwdTwo = cm.estimateStage(st, ctx).t_bwd;
    st.recompute = Recompute::None;
    const double bwdNone = cm.estimateStage(st, ctx).t_bwd;
    QVERIFY(bwdTwo > bwdNone);
    QVERIFY(std::fabs((bwdFour - bwdTwo) - (bwdTwo - bwdNone)) < 1e-12);

    // PP 2, VPP 2: rank 0 runs layers 0-7 and 16-23 (chunks 0 and 2 of four). Megatron-LM's
    // --recompute-num-layers n recomputes the first n of each chunk: n = 1 gives layers 0 and
    // 16 (both MoE), and a third layer is the first chunk's second, layer 1 (dense).
    // In flight on rank 0 with 8 micro-batches: (PP - 1) 2 + (v - 1) PP + 1 = 5 forwards,
    // forward k running chunk (k / 2) mod 2: chunks 0, 0, 1, 1, 0, so three micro-batches of
    // the first chunk and two of the second (section 5.3). Recomputing layers 0 and 16 saves
    // 3 + 2 MoE layers' worth; adding layer 1 saves 3 dense layers' worth more.
    ctx.num_stages = 2;
    ctx.vpp = 2;
    ctx.layers = rankLayers({16, 16}, 2)[0];
    st.num_layers = 16;
    st.recompute = Recompute::None;
    const double noneV = cm.estimateStage(st, ctx).memory.activations;
    st.recompute = Recompute::Full;
    st.recompute_layers = 2;
    const double savedTwo = noneV - cm.estimateStage(st, ctx).memory.activations;
    st.recompute_layers = 3;
    const double savedThree = noneV - cm.estimateStage(st, ctx).memory.activations;
    QVERIFY(std::fabs(savedThree / savedTwo - (5 * moeSaves + 3 * denseSaves) / (5 * moeSaves)) < 1e-12);
}

void TestCostModel::crossVendorSendUsesBridge()
{
    // Stages on H800 and 910B (TP 8): each TP rank sends its 1/8 share of the activation
    // over its own bridge connection (gloo: one TCP connection per peer pair), at the
    // bridge's 2.5 GB/s (below the 50 GB/s NIC), plus the bridge latency.
    ModelSpec m = llama7b();
    const Cluster c = bridgedH800And910B();
    const CostModel cm(m, c, DeviceCatalog::builtin());
    const TwoStages two = twoStages("H800", "910B-376T");
    const StageEstimate e = cm.estimateStage(two.a, two.first());
    const double bytes = 4096.0 * 4096 * 2 / 8;   // s * h * 2 bytes / TP, one rank's share
    QVERIFY(std::fabs(e.p2p_send - (bytes / 2.5e9 + 100e-6)) < 1e-12);
    // What decides the bridge is the collective library, not the vendor's name: the 910B
    // listed under another vendor still speaks HCCL and still sends over the bridge.
    DeviceType renamed = DeviceCatalog::builtin().get("910B-376T");
    renamed.vendor = "NVIDIA";
    DeviceCatalog cat = DeviceCatalog::builtin();
    cat.merge(DeviceCatalog({renamed}));
    const StageEstimate same = CostModel(m, c, cat).estimateStage(two.a, two.first());
    QCOMPARE(same.p2p_send, e.p2p_send);
}

void TestCostModel::tiedEmbeddingPartialReduceOfDifferentDp()
{
    // FlagScale finalize_model_grads.py, _allreduce_word_embedding_grads: every pipeline from a
    // first-stage rank to a last-stage rank has its own two-rank group. LLaMA-7B tied, TP 2 on
    // both ends: 8 H800 (DP 4), then 4 910B (DP 2) behind the 2.5 GB/s, 100 us bridge. A 910B
    // rank is in 4 / 2 = 2 pairs. The gradient is V h / t = 32000 x 4096 / 2 fp32 values,
    // 262.144 MB; one two-rank all-reduce of B bytes takes B / 2.5e9 + 2 x 100 us.
    //  - distributed optimizer (--use-partial-reduce-for-shared-embedding): each pair reduces
    //    1 / max(DP) = 1/4 of the rows, 2 pairs: 2 x (65.536e6 / 2.5e9 + 200e-6) = 52.83 ms;
    //  - without it: the whole gradient once per pair, 2 x (262.144e6 / 2.5e9 + 200e-6) = 210.12 ms;
    //  - the same DP on both ends: the whole gradient once, 105.06 ms, with or without.
    ModelSpec m = llama7b();
    m.untie_embeddings_and_output_weights = false;
    const Cluster c = bridgedH800And910B();
    const CostModel cm(m, c, DeviceCatalog::builtin());
    StagePlan first = stageOn("H800", 0, 8, 2);
    first.num_layers = 16;
    StagePlan last = stageOn("910B-376T", 1, 4, 2);
    last.first_layer = 16;
    last.num_layers = 16;
    QCOMPARE(first.dp, 4);
    QCOMPARE(last.dp, 2);
    const double one = 65.536e6 / 2.5e9 + 2 * 100e-6;
    const double whole = 262.144e6 / 2.5e9 + 2 * 100e-6;
    QVERIFY(std::fabs(cm.tiedEmbeddingSync(first, last, true) - 2 * one) < 1e-12);
    QVERIFY(std::fabs(cm.tiedEmbeddingSync(first, last, false) - 2 * whole) < 1e-12);
    QVERIFY(std::fabs(cm.tiedEmbeddingSync(last, first, true) - 2 * one) < 1e-12);   // either end smaller
    StagePlan even = stageOn("910B-376T", 1, 8, 2);
    even.first_layer = 16;
    even.num_layers = 16;
    for (const bool distOpt : {true, false})
        QVERIFY(std::fabs(cm.tiedEmbeddingSync(first, even, distOpt) - whole) < 1e-12);
    // estimate() takes the plan's optimizer setting.
    Plan plan;
    plan.global_batch_size = 16;
    plan.stages = {first, last};
    plan.stages[1].micro_batch_size = 2;
    plan.distributed_optimizer = true;
    QVERIFY(std::fabs(cm.estimate(plan).stages[0].embedding_sync - 2 * one) < 1e-12);
    plan.distributed_optimizer = false;
    QVERIFY(std::fabs(cm.estimate(plan).stages[1].embedding_sync - 2 * whole) < 1e-12);
}

void TestCostModel::tiedEmbeddingGradientAllReduce()
{
    // LLaMA-7B with tied embeddings on two stages, H800 (TP 8) then 910B (TP 8), joined by a
    // 2.5 GB/s bridge with 100 us latency. The last stage holds a copy of the word embedding;
    // after the data-parallel reduce the two ranks all-reduce its fp32 gradient, V' h / t values
    // with the vocabulary padded to a multiple of 128 x 8 (V' = 32768): 32768 x 4096 / 8 x 4 B =
    // 67.108864 MB. A two-rank ring sends the buffer once (2 (n-1)/n = 1) in 2 (n-1) = 2 steps,
    // 67.108864e6 / 2.5e9 + 2 x 100 us = 27.0436 ms. Both end stages show
    // it; the iteration waits for it once (the gradient-norm all-reduce spans every stage).
    ModelSpec tied = llama7b();
    tied.untie_embeddings_and_output_weights = false;
    ModelSpec untied = tied;
    untied.untie_embeddings_and_output_weights = true;
    const Cluster c = bridgedH800And910B();
    const TwoStages two = twoStages("H800", "910B-376T");
    Plan plan;
    plan.global_batch_size = 16;
    plan.stages = {two.a, two.b};
    const Prediction pt = CostModel(tied, c, DeviceCatalog::builtin()).estimate(plan);
    const Prediction pu = CostModel(untied, c, DeviceCatalog::builtin()).estimate(plan);
    const double allReduce = 67.108864e6 / 2.5e9 + 2 * 100e-6;
    QVERIFY(std::fabs(pt.iteration_time_s - pu.iteration_time_s - allReduce) < 1e-12);
    QVERIFY(std::fabs(pt.breakdown.dp_sync - pu.breakdown.dp_sync - allReduce) < 1e-12);
    for (std::size_t i : {0u, 1u}) {
        QVERIFY(std::fabs(pt.stages[i].dp_sync - pu.stages[i].dp_sync - allReduce) < 1e-12);
        QVERIFY(std::fabs(pt.stages[i].embedding_sync - allReduce) < 1e-12);
        QCOMPARE(pu.stages[i].embedding_sync, 0.0);
        // Same parameters on both: the tied copy on the last stage is the untied output layer.
        QCOMPARE(pt.stages[i].memory.total(), pu.stages[i].memory.total());
    }
    // One stage holds both ends: nothing to all-reduce.
    Plan one;
    one.global_batch_size = 16;
    StagePlan whole = stageOn("H800", 0, 8, 8);
    whole.num_layers = tied.num_layers;
    one.stages = {whole};
    const Cluster h800 = nodesOf("H800", 1);
    QCOMPARE(CostModel(tied, h800, DeviceCatalog::builtin()).estimate(one).stages[0].dp_sync,
             CostModel(untied, h800, DeviceCatalog::builtin()).estimate(one).stages[0].dp_sync);
}

void TestCostModel::tiedAllReduceHidesBehindALongerSync()
{
    // The end stages' all-reduce of the tied embedding starts once both ends have synced, and
    // the gradient-norm barrier waits for the last stage to arrive: a middle stage whose sync
    // ends later than the ends' later sync plus the all-reduce hides it (docs/cost-model.md
    // section 8): T = T_pipe + max(max_i (sync_i - drain_i), max(sync_0, sync_2 - drain_2) +
    // AR) + max_i step_i.
    // LLaMA-7B with tied embeddings: 2 layers on a 910B node (TP 8, DP 1: no sync), 28 on an
    // H800 node (TP 1, DP 8, the reduce-scatter exposed: about 0.13 s, 28/16 of the 76 ms of
    // tailWaitsAtTheGradientNormBarrier), 2 on a second 910B node (TP 8, DP 1). The two 910B
    // ranks all-reduce 67.1 MB of fp32 embedding gradient between their nodes, a few ms.
    ModelSpec m = llama7b();
    m.untie_embeddings_and_output_weights = false;
    Cluster c = nodesOf("910B", 1, 8, 0);
    c.nodes.push_back(nodesOf("H800", 1, 8, 1).nodes[0]);
    c.nodes.push_back(nodesOf("910B", 1, 8, 2).nodes[0]);
    c.cross_vendor.bandwidth_gbytes_per_s = 25;
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, exposedGradReduce());
    Plan plan = twoMicroBatchesOfEight();
    StagePlan a = stageOn("910B-376T", 0, 8, 8), mid = stageOn("H800", 1, 8, 1), b = stageOn("910B-376T", 2, 8, 8);
    a.num_layers = 2;
    mid.first_layer = 2;
    mid.num_layers = 28;
    b.first_layer = 30;
    b.num_layers = 2;
    a.micro_batch_size = b.micro_batch_size = 8;   // DP 1: the same 8 sequences per micro-batch as 8 x 1
    plan.stages = {a, mid, b};
    const Prediction p = cm.estimate(plan);
    QCOMPARE(p.num_microbatches, 2);
    const StageEstimate &s0 = p.stages[0], &s1 = p.stages[1], &s2 = p.stages[2];
    const double ar = cm.tiedEmbeddingSync(a, b);
    QVERIFY(ar > 1e-3);
    QCOMPARE(s0.embedding_sync, ar);
    QCOMPARE(s2.embedding_sync, ar);
    QCOMPARE(s1.embedding_sync, 0.0);
    QCOMPARE(s0.beforeBarrier(), 0.0);
    QCOMPARE(s2.beforeBarrier(), 0.0);
    QVERIFY2(s1.beforeBarrier() > ar + 0.05, qPrintable(QStringLiteral("%1 s vs %2 s").arg(s1.beforeBarrier()).arg(ar)));
    // The middle's sync starts at its own last backward, stage 0's backward (2 layers on the
    // 910B, about 59 ms) before stage 0's: about 68 ms of it runs past the pipeline, still
    // more than the all-reduce after the ends' syncs.
    QCOMPARE(s1.drain, s0.t_bwd);
    QCOMPARE(s2.drain, s0.t_bwd + s1.t_bwd);
    QCOMPARE(s1.syncAfterPipeline(), s1.beforeBarrier() - s0.t_bwd);
    QVERIFY2(s1.syncAfterPipeline() > ar + 0.05, qPrintable(QStringLiteral("%1 s vs %2 s").arg(s1.syncAfterPipeline()).arg(ar)));
    const BarrierWait wait = barrierWait(p);
    QCOMPARE(wait.stage, 1);
    QVERIFY(!wait.tied);
    QCOMPARE(wait.time, s1.syncAfterPipeline());
    const double pipe = closedFormPipelineTime({s0.t_fwd, s1.t_fwd, s2.t_fwd}, {s0.t_bwd, s1.t_bwd, s2.t_bwd}, 2);
    const StageEstimate& stepper = p.stages[static_cast<std::size_t>(stepStage(p))];
    QVERIFY(std::fabs(p.iteration_time_s - (pipe + s1.syncAfterPipeline() + stepper.afterBarrier())) < 1e-12);
    QVERIFY(std::fabs(p.breakdown.dp_sync - (s1.syncAfterPipeline() + stepper.param_gather)) < 1e-12);
    // The trace places the all-reduce between the ends' syncs and the barrier, which the
    // middle stage reaches last; every stage steps from there.
    const std::vector<StageTail> tails = stageTails(p.stages);
    QVERIFY(std::fabs(drainedPipelineEnd(tails, p.iteration_time_s) - pipe) < 1e-12);
    // With the middle's reduce overlapped with its backward (Megatron-LM's
    // --overlap-grad-reduce) only its last bucket is exposed, 0.7 ms, less than the 4.4 ms
    // all-reduce: the ends arrive last (stage 0 on the tie), after the all-reduce, which the
    // iteration then pays in full.
    const Prediction q = CostModel(m, c, DeviceCatalog::builtin()).estimate(plan);
    const BarrierWait w2 = barrierWait(q);
    QVERIFY(q.stages[1].beforeBarrier() > 0 && q.stages[1].beforeBarrier() < ar);
    QCOMPARE(w2.stage, 0);
    QVERIFY(w2.tied);
    QCOMPARE(w2.time, ar);
    const double pipeQ = closedFormPipelineTime({q.stages[0].t_fwd, q.stages[1].t_fwd, q.stages[2].t_fwd},
                                                {q.stages[0].t_bwd, q.stages[1].t_bwd, q.stages[2].t_bwd}, 2);
    QVERIFY(std::fabs(q.iteration_time_s - (pipeQ + ar + q.stages[static_cast<std::size_t>(stepStage(q))].afterBarrier())) < 1e-12);
}

void TestCostModel::interNodeSendAndInterleavedOverlap()
{
    // A send between two H800 nodes is one message on one NIC pair: 20 us (Calculon's
    // InfiniBand latency) + bytes / (50 GB/s x 48.5/50) (nccl-tests #267: 48-49 GB/s per
    // CX-7 NIC). 1 MiB: 20 + 21.62 = 41.62 us; a ring's curve would have charged ~0.45 ms.
    GroupLink nic;
    nic.link = LinkClass::InterNode;
    nic.nic_bw = 50e9;
    nic.intra_bw = 200e9;
    QVERIFY(std::fabs(collectiveTime(Collective::SendRecv, 1048576.0, 2, nic) - (20e-6 + 1048576.0 / 48.5e9)) < 1e-15);

    // The inter-node curve at one of its own points: the measured 32-GPU all-reduce (4 nodes x
    // 8 B200, 8 x 50 GB/s NICs per node; ml-engineering) of a 128 MiB buffer ran at 197.94 GB/s
    // busbw. Each NIC carries 1/8 of a rank's ring traffic, which is how the curve is indexed,
    // so the model gives back the measurement: 2 x 31/32 x 128 MiB / 197.94 GB/s.
    GroupLink b200 = nic;
    b200.ranks_per_node = 8;
    b200.intra_bw = 900e9;
    const double buffer = 128.0 * 1048576;
    QVERIFY(std::fabs(collectiveTime(Collective::AllReduce, buffer, 32, b200) / (2 * 31.0 / 32 * buffer / 197.94e9) - 1) < 1e-12);

    // All-to-all over two H800 nodes (16 ranks, 8 per node): half of a 64 MiB send buffer
    // leaves the node through the rank's one NIC ("Alltoall cannot aggregate the bandwidth of
    // multiple NICs", nccl-tests #267): 20 us + 32 MiB / 48.5 GB/s = 0.712 ms, longer than the
    // 7/16 that stays on NVLink, so it is the time.
    GroupLink ep16 = nic;
    ep16.ranks_per_node = 8;
    ep16.nvlink4 = true;
    const double remote = 64.0 * 1048576 / 2;
    QVERIFY(std::fabs(collectiveTime(Collective::AllToAll, 64.0 * 1048576, 16, ep16) - (20e-6 + remote / 48.5e9)) < 1e-15);
    // DeepEP (flex) over the same two nodes, top-2: a token reaches 2 (1 - 1/4) = 1.5 nodes,
    // half of them remote, at 43 of 50 GB/s (DeepEP's internode figure), after the same 20 us.
    const double tokens = 16.0 * 1048576;
    QVERIFY(std::fabs(flexDispatchTime(tokens, 2, 16, ep16) - (20e-6 + tokens * 1.5 * 0.5 / (50e9 * 0.86))) < 1e-15);

    // Two LLaMA-7B stages on two H800 nodes at TP 8: each rank sends s h 2 / 8 = 4 MiB.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H800", 2);
    const TwoStages two = twoStages("H800", "H800");
    const StagePlan& a = two.a;
    const double send = 20e-6 + 4096.0 * 4096 * 2 / 8 / 48.5e9;
    StageContext ctx = two.first();
    ctx.vpp = 1;
    const CostModel cm(m, c, DeviceCatalog::builtin());
    const StageEstimate plain = cm.estimateStage(a, ctx);
    QVERIFY(ctx.sequence_parallel);   // a rank holds its 1/8 of the sequence
    QVERIFY(std::fabs(plain.p2p_send - send) < 1e-15);
    // Without sequence parallelism every TP rank holds and sends the whole 32 MiB activation
    // (Megatron-Core has no scatter-gather of pipeline tensors); Megatron-LM of 2022 sent 1/8
    // and gathered it on the next stage (CostOptions::p2p_scatter_gather).
    StageContext noSp = ctx;
    noSp.sequence_parallel = false;
    QVERIFY(std::fabs(cm.estimateStage(a, noSp).p2p_send - (20e-6 + 4096.0 * 4096 * 2 / 48.5e9)) < 1e-15);
    CostOptions scatter;
    scatter.p2p_scatter_gather = true;
    QVERIFY(std::fabs(CostModel(m, c, DeviceCatalog::builtin(), nullptr, scatter).estimateStage(a, noSp).p2p_send - send) < 1e-15);
    // Interleaved (VPP 2: 8 layers per chunk), rank 0 sends twice per micro-batch to rank 1.
    // With Megatron-LM's overlap_p2p_comm each send hides behind the next chunk: a chunk of 8
    // layers computes far longer than 0.1 ms, so nothing is exposed; without it both are.
    ctx.vpp = 2;
    CostOptions noOverlap;
    noOverlap.overlap.p2p = false;
    const StageEstimate waits = CostModel(m, c, DeviceCatalog::builtin(), nullptr, noOverlap).estimateStage(a, ctx);
    const StageEstimate overlaps = cm.estimateStage(a, ctx);
    QVERIFY(waits.t_fwd / 2 > 10 * send);
    QCOMPARE(overlaps.p2p_send, 0.0);
    QVERIFY(std::fabs(waits.p2p_send - 2 * send) < 1e-15);
    QVERIFY(std::fabs(waits.t_fwd - overlaps.t_fwd - waits.p2p_send) < 1e-12);
    QVERIFY(std::fabs(waits.t_bwd - overlaps.t_bwd - waits.p2p_send) < 1e-12);
}

void TestCostModel::drawnLinksBoundTheNics()
{
    // Two H800 nodes on one switch. With links of 400 GB/s (8 devices x 50 GB/s, as the
    // presets draw them) the cluster's links change nothing; with 80 GB/s node links each
    // device gets 10 GB/s off its node, and a send to the next stage's node is one message at
    // the widest path's share: 20 us + 4 MiB / (10 GB/s x 48.5 / 50) (section 6).
    const ModelSpec m = llama7b();
    auto linked = [](double gbytes) {
        Cluster c = nodesOf("H800", 2);
        Switch sw;
        sw.id = 10;
        sw.name = "leaf";
        c.switches.push_back(sw);
        c.links = {{0, 10, gbytes, 1}, {1, 10, gbytes, 1}};
        return c;
    };
    const TwoStages two = twoStages("H800", "H800");
    const StagePlan& a = two.a;
    const StageContext ctx = two.first();
    const Cluster bare = nodesOf("H800", 2), fast = linked(400), slow = linked(80);
    const double plain = CostModel(m, bare, DeviceCatalog::builtin()).estimateStage(a, ctx).p2p_send;
    QCOMPARE(CostModel(m, fast, DeviceCatalog::builtin()).estimateStage(a, ctx).p2p_send, plain);
    const double throttled = CostModel(m, slow, DeviceCatalog::builtin()).estimateStage(a, ctx).p2p_send;
    QVERIFY(std::fabs(throttled - (20e-6 + 4096.0 * 4096 * 2 / 8 / (10e9 * 48.5 / 50))) < 1e-12);
    // Data parallelism across the two nodes (TP 8, DP 2) reduces over the slow links too.
    StagePlan both = stageOn("H800", 0, 16, 8);
    both.devices = {{0, 0, 8}, {1, 0, 8}};
    both.num_layers = 32;
    StageContext whole;
    whole.stage_index = 0;
    whole.num_stages = 1;
    CostOptions exposed;
    exposed.overlap.grad_reduce = false;
    exposed.overlap.param_gather = false;
    const double fastSync = CostModel(m, fast, DeviceCatalog::builtin(), nullptr, exposed).estimateStage(both, whole).dp_sync;
    const double slowSync = CostModel(m, slow, DeviceCatalog::builtin(), nullptr, exposed).estimateStage(both, whole).dp_sync;
    QVERIFY2(slowSync > 4 * fastSync, qPrintable(QString("%1 vs %2").arg(slowSync).arg(fastSync)));
}

void TestCostModel::contextParallelShardsWithDataParallel()
{
    // Megatron reduces gradients and shards the distributed optimizer over DP x CP (the CP
    // ranks hold the same weights). One GPT layer of h = 2048 (12 h^2 + 13 h = 50,358,272
    // parameters) on 8 A100 at TP 1, CP 8, DP 1: the optimizer keeps 12 bytes x 50.36e6 / 8,
    // not 12 bytes x 50.36e6 (DP alone is 1), and the gradients are reduce-scattered over 8.
    const ModelSpec m = gpt(3, 2048, 16);
    const CostModel cm(m, nodesOf("A100-80GB", 1), DeviceCatalog::builtin());
    StagePlan st = stageOn("A100-80GB", 0, 8, 1);
    st.first_layer = 1;
    st.num_layers = 1;
    st.cp = 8;
    st.dp = 1;
    const StageEstimate e = cm.estimateStage(st, middleStage(true));
    const double params = 12.0 * 2048 * 2048 + 13.0 * 2048;
    QVERIFY(std::fabs(e.memory.optimizer - 12.0 * params / 8) < 1e-3);
    QVERIFY(e.dp_sync > 0);   // before, a DP of 1 meant no gradient reduction at all
    st.cp = 1;
    st.dp = 8;
    const StageEstimate dpOnly = cm.estimateStage(st, middleStage(true));
    QCOMPARE(e.memory.optimizer, dpOnly.memory.optimizer);
}

void TestCostModel::expertGradientsShareTheOverlapWindow()
{
    // Megatron overlaps the expert gradient buffers as it does the dense ones. One Mixtral-8x7B
    // layer on an H800 node at TP 8, EP 2, ETP 1: the dense part has no data-parallel peer
    // (DP 1), the experts have EDP 4 (ranks 2 apart, inside the node). Each rank holds 4
    // experts of 3 x 4096 x 14336 = 176,160,768 parameters: 704,643,072, 17 buckets of 4e7
    // (Megatron's max(4e7, 1e6 x 4)) and a last one of 24,643,072, each a reduce-scatter of
    // fp32 gradients and an all-gather of bf16 parameters over 4 ranks.
    const ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H800", 1);
    StagePlan st = stageOn("H800", 0, 8, 8);
    st.dp = 1;
    st.ep = 2;
    st.etp = 1;
    st.edp = 4;
    st.first_layer = 1;
    st.num_layers = 1;
    st.micro_batch_size = 32;   // a backward long enough to hide 17 buckets
    const DeviceType* h800 = DeviceCatalog::builtin().find("H800");
    QVERIFY(h800);
    GroupLink edp;
    edp.link = LinkClass::IntraNode;
    edp.intra_bw = h800->intra_node_gbps * 1e9;
    edp.nvlink4 = true;
    edp.ranks_per_node = 4;
    const double rs1 = collectiveTime(Collective::ReduceScatter, 4e7 * 4.0, 4, edp);
    const double ag1 = collectiveTime(Collective::AllGather, 4e7 * 2.0, 4, edp);
    const double rsL = collectiveTime(Collective::ReduceScatter, 24643072.0 * 4.0, 4, edp);
    const double agL = collectiveTime(Collective::AllGather, 24643072.0 * 2.0, 4, edp);
    CostOptions off;
    off.overlap.grad_reduce = false;
    off.overlap.param_gather = false;
    const StageEstimate exposed = CostModel(m, c, DeviceCatalog::builtin(), nullptr, off).estimateStage(st, middleStage(true));
    QVERIFY(std::fabs(exposed.dp_sync - (17 * (rs1 + ag1) + rsL + agL)) < 1e-12);
    // With the overlap the layer's backward (and forward) hides all but the last bucket:
    // 17 x rs1 is about 14 ms, inside the backward of a micro-batch of 32 sequences.
    const StageEstimate hidden = CostModel(m, c, DeviceCatalog::builtin()).estimateStage(st, middleStage(true));
    QVERIFY(hidden.compute / 3 > 17 * std::max(rs1, ag1));
    QVERIFY(std::fabs(hidden.dp_sync - (rsL + agL)) < 1e-12);
}

void TestCostModel::expertBucketsFollowTheDataParallelSize()
{
    // Megatron-Core sizes every DDP bucket from the data-parallel size (with CP), the expert
    // buffer's too: max(4e7, 1e6 x 64) = 6.4e7 parameters at DP 64, whatever EDP is
    // (distributed_data_parallel.py). One Mixtral-8x7B layer on a node of 64 H800 at TP 1,
    // DP 64, EP 8, EDP 8, without the overlap:
    // - dense: attention 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 41,943,040, two norms of
    //   4096 and the router 4096 x 8: 41,984,000 parameters, one bucket over 64 ranks;
    // - experts: one of 3 x 4096 x 14336 = 176,160,768 parameters, two buckets of 6.4e7 and a
    //   last one of 48,160,768 over 8 ranks (buckets of 4e7, EDP's, gave four and 16,160,768).
    // Each bucket a reduce-scatter of fp32 gradients and an all-gather of bf16 parameters.
    const ModelSpec m = mixtral8x7b();
    const Cluster c = nodesOf("H800", 1, 64);
    StagePlan st = stageOn("H800", 0, 64, 1);
    st.ep = 8;
    st.etp = 1;
    st.edp = 8;
    st.first_layer = 1;
    st.num_layers = 1;
    const DeviceType* h800 = DeviceCatalog::builtin().find("H800");
    QVERIFY(h800);
    auto intra = [&](int ranks) {
        GroupLink g;
        g.link = LinkClass::IntraNode;
        g.intra_bw = h800->intra_node_gbps * 1e9;
        g.nvlink4 = true;
        g.ranks_per_node = ranks;
        return g;
    };
    const auto bucket = [&](double params, int ranks) {
        return collectiveTime(Collective::ReduceScatter, params * 4.0, ranks, intra(ranks))
            + collectiveTime(Collective::AllGather, params * 2.0, ranks, intra(ranks));
    };
    CostOptions off;
    off.overlap.grad_reduce = false;
    off.overlap.param_gather = false;
    const StageEstimate e = CostModel(m, c, DeviceCatalog::builtin(), nullptr, off).estimateStage(st, middleStage(true));
    const double expected = bucket(41984000.0, 64) + 2 * bucket(6.4e7, 8) + bucket(48160768.0, 8);
    QVERIFY2(std::fabs(e.dp_sync - expected) < 1e-12, qPrintable(QStringLiteral("%1 vs %2").arg(e.dp_sync, 0, 'g', 12).arg(expected, 0, 'g', 12)));
}

void TestCostModel::fullMeshGroupsUseTheirLinks()
{
    // MI300X nodes are a full mesh of xGMI links: a device reaches each of its 7 peers over
    // its own link, 1/7 of the catalog's 448 GB/s all-to-all figure ("Peer-to-peer bandwidth
    // is 1/7 of the all-to-all figure", device-specs.md). A TP 2 pair has one link; a TP 8
    // group all seven. An H800 node (NVSwitch) gives a pair its whole figure.
    GroupLink pair;
    pair.link = LinkClass::IntraNode;
    pair.full_mesh = true;
    pair.intra_bw = 448e9 / 7;
    // A send between two MI300X: 10 us + bytes / (64 GB/s x 0.75) (ROCm blog: ~48 of 64 GB/s).
    QVERIFY(std::fabs(collectiveTime(Collective::SendRecv, 48e6, 2, pair) - (10e-6 + 48e6 / 48e9)) < 1e-12);

    const ModelSpec m = llama7b();
    auto tpTime = [&](const char* type, int tp) {
        const CostModel cm(m, nodesOf(type, 1), DeviceCatalog::builtin());
        StagePlan st = stageOn(type, 0, 8, tp);
        st.first_layer = 1;
        st.num_layers = 1;
        StageContext ctx = middleStage(true);
        ctx.sequence_parallel = false;
        return cm.estimateStage(st, ctx).tensor_parallel;
    };
    // All-reduce of the same buffer: TP 2 on the mesh uses 1/7 of the bandwidth TP 8 does,
    // and moves 1/2 of the buffer against 7/8, so it is slower by more than 3x; behind
    // NVSwitch the TP 2 all-reduce is the cheaper one.
    QVERIFY(tpTime("MI300X", 2) > 3.0 * tpTime("MI300X", 8));
    QVERIFY(tpTime("H800", 2) < tpTime("H800", 8));

    // A node of two MI300X still joins them by one xGMI link (64 GB/s), not by the platform's
    // whole 448 GB/s: TP 2 costs the same as on a node of eight.
    auto pairOn = [&](int perNode) {
        const CostModel cm(m, nodesOf("MI300X", 8 / perNode, perNode), DeviceCatalog::builtin());
        StagePlan st = stageOn("MI300X", 0, 2, 2);
        st.first_layer = 1;
        st.num_layers = 1;
        StageContext ctx = middleStage(true);
        ctx.sequence_parallel = false;
        return cm.estimateStage(st, ctx).tensor_parallel;
    };
    QCOMPARE(pairOn(2), pairOn(8));

    // Two slots on one node are one node: the same estimate as one slot of the same devices.
    const CostModel h800(m, nodesOf("H800", 2), DeviceCatalog::builtin());
    StagePlan whole = stageOn("H800", 0, 8, 2);
    whole.first_layer = 1;
    whole.num_layers = 1;
    StagePlan split = whole;
    split.devices = {{0, 0, 4}, {0, 4, 4}};
    const StageEstimate a = h800.estimateStage(whole, middleStage(true));
    const StageEstimate b = h800.estimateStage(split, middleStage(true));
    QCOMPARE(b.dp_sync, a.dp_sync);
    QCOMPARE(b.tensor_parallel, a.tensor_parallel);
    QCOMPARE(b.t_fwd, a.t_fwd);
}

void TestCostModel::infeasibleSaysStageAndShortfall()
{
    // LLaMA-2 7B on one 64 GB device without sharding: 18 B/param alone is 113 GiB.
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("910B", 1, 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    UniformKnobs k;
    k.global_batch_size = 4;
    const Plan plan = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    const Prediction p = cm.estimate(plan);
    QVERIFY(!p.feasible);
    QVERIFY(p.infeasible_reason.rfind("stage 0 (910B-376T) needs", 0) == 0);
    QVERIFY(p.infeasible_reason.find("short") != std::string::npos);
    QVERIFY(std::fabs(p.memory_shortfall_gib - (p.stages[0].memory.total() - 64 * GiB) / GiB) < 1e-9);
    QVERIFY(p.memory_shortfall_gib > 18 * 6.738e9 / GiB - 64);
}

void TestCostModel::closedFormEqualsSimulatorForEqualStages()
{
    // Equal stages: (M + P - 1) (f + b), the paper's eq. 4-5 and the simulator agree exactly.
    for (int P : {1, 2, 4, 7})
        for (int M : {1, 3, 8, 16}) {
            ScheduleInput in;
            in.microbatches = M;
            in.t_fwd.assign(static_cast<std::size_t>(P), 1.25);
            in.t_bwd.assign(static_cast<std::size_t>(P), 2.5);
            const Schedule s = simulatePipeline(in);
            QCOMPARE(s.makespan, closedFormPipelineTime(in.t_fwd, in.t_bwd, M));
            QCOMPARE(s.makespan, (M + P - 1) * 3.75);
            QCOMPARE(static_cast<int>(s.blocks.size()), 2 * P * M);
        }
}

void TestCostModel::simulatorBoundsForUnequalStages()
{
    // Unequal stages: the bottleneck rank runs M forward and M backward blocks, so the
    // makespan is at least M max c_i = closed form - (sum c_i - max c_i). Above, the closed
    // form is not a bound; docs/cost-model.md section 9 gives the gaps this test measures.
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0.2, 3.0), ratio(2.0, 3.0);
    struct Worst { double plainAny = 0, plainRealistic = 0, interleavedAny = 0, interleavedRealistic = 0; } worst;
    for (int it = 0; it < 6000; ++it) {
        const bool interleaved = it % 2 == 1;
        const bool realistic = it % 3 != 0;   // backward 2-3 x forward on every stage, as the cost model gives
        int P = 1 + static_cast<int>(rng() % 8), M = 1 + static_cast<int>(rng() % 16);
        const int V = interleaved ? 2 + static_cast<int>(rng() % 3) : 1;
        if (interleaved) {
            P = std::max(P, 2);
            M = P * (1 + static_cast<int>(rng() % std::max(1, 16 / P)));   // Megatron: M % P == 0
        }
        ScheduleInput in;
        in.microbatches = M;
        in.vpp = V;
        std::vector<double> f, b;
        double mx = 0;
        for (int i = 0; i < P; ++i) {
            f.push_back(u(rng));
            b.push_back(realistic ? f.back() * ratio(rng) : 2 * u(rng));
            mx = std::max(mx, f.back() + b.back());
            in.t_fwd.push_back(f.back() / V);   // one chunk does 1/V of the stage's work
            in.t_bwd.push_back(b.back() / V);
        }
        const double sim = simulatePipeline(in).makespan;
        double sum = 0;
        for (int i = 0; i < P; ++i)
            sum += f[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i)];
        // CostModel's assembly (section 8): sum c / V + (M V - 1) max c / V.
        const double cf = sum / V + (static_cast<double>(M) * V - 1) * mx / V;
        if (!interleaved)
            QCOMPARE(cf, closedFormPipelineTime(f, b, M));
        QVERIFY(sim >= M * mx - 1e-9);
        const double over = sim / cf - 1;
        if (!interleaved)
            worst.plainAny = std::max(worst.plainAny, over);
        if (!interleaved && realistic)
            worst.plainRealistic = std::max(worst.plainRealistic, over);
        if (interleaved)
            worst.interleavedAny = std::max(worst.interleavedAny, over);
        if (interleaved && realistic)
            worst.interleavedRealistic = std::max(worst.interleavedRealistic, over);
    }
    qInfo("simulator over closed form: plain %.2f%% (any b/f), %.2f%% (b/f 2-3); interleaved %.2f%% (any), %.2f%% (b/f 2-3)",
          100 * worst.plainAny, 100 * worst.plainRealistic, 100 * worst.interleavedAny, 100 * worst.interleavedRealistic);
    // Measured with this seed: 2.0 %, 0 %, 43.8 % and 4.7 % (docs/cost-model.md section 9).
    QVERIFY(worst.plainAny <= 0.04);
    QVERIFY(worst.plainRealistic <= 1e-9);   // with b/f from 2 to 3 on every stage the closed form is an upper bound here
    QVERIFY(worst.interleavedRealistic <= 0.06);
    QVERIFY(worst.interleavedAny <= 0.45);

    // Where the closed form is optimistic: a long forward next to a long backward. By hand
    // (plain 1F1B, P 3, M 2, f = 0.2, 5, 0.2 and b = 6, 1, 0.2): rank 1 runs both 5 s
    // forwards (0.2-5.2, 5.2-10.2) before its first backward (1F1B's order), then its
    // backwards end at 11.2 and 12.2, so rank 0's two 6 s backwards run 11.2-17.2-23.2.
    ScheduleInput odd;
    odd.microbatches = 2;
    odd.t_fwd = {0.2, 5, 0.2};
    odd.t_bwd = {6, 1, 0.2};
    QCOMPARE(closedFormPipelineTime(odd.t_fwd, odd.t_bwd, 2), 18.8);
    QVERIFY(std::fabs(simulatePipeline(odd).makespan - 23.2) < 1e-9);   // +23 %
    // Interleaved, P 2, V 4, M 2: stages of equal c = 5 but b/f of 3 and 1.5. With M = P
    // Megatron runs every forward before the first backward (all_warmup_microbatches): the
    // makespan is 12.5625 (the same from a separate event simulation of that order) against
    // the closed form's 10 / 4 + 7 x 5 / 4 = 11.25 (+12 %).
    ScheduleInput chunks;
    chunks.microbatches = 2;
    chunks.vpp = 4;
    chunks.t_fwd = {1.25 / 4, 2.0 / 4};
    chunks.t_bwd = {3.75 / 4, 3.0 / 4};
    QVERIFY(std::fabs(simulatePipeline(chunks).makespan - 12.5625) < 1e-9);
}

void TestCostModel::interleavedSimulatorMatchesClosedForm()
{
    // Narayanan et al. 2021 section 2.2.2: with v chunks the bubble is (P - 1)/v of a
    // micro-batch; equal chunks give (M v + P - 1) (f + b) per chunk, as CostModel assembles.
    for (int v : {2, 3, 4})
        for (int P : {2, 4})
            for (int M : {P, 2 * P, 4 * P}) {
                ScheduleInput in;
                in.microbatches = M;
                in.vpp = v;
                in.t_fwd.assign(static_cast<std::size_t>(P), 1.0);
                in.t_bwd.assign(static_cast<std::size_t>(P), 2.0);
                const Schedule s = simulatePipeline(in);
                QCOMPARE(s.makespan, (M * v + P - 1) * 3.0);
                QCOMPARE(static_cast<int>(s.blocks.size()), 2 * P * M * v);
            }
    // Megatron's interleaved schedule needs M to be a multiple of PP.
    ScheduleInput bad;
    bad.microbatches = 5;
    bad.vpp = 2;
    bad.t_fwd.assign(4, 1.0);
    bad.t_bwd.assign(4, 2.0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipeline(bad));
}

void TestCostModel::estimateUsesTheFixedAssembly()
{
    // CostModel.h: T = sum c_i + (M - 1) max c_i + max_i sync_i + max_i step_i (sync before
    // the gradient-norm barrier, step after it: StageEstimate::beforeBarrier / afterBarrier).
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("A100-80GB", 4);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    UniformKnobs k;
    k.tp = 8;
    k.pp = 2;
    k.global_batch_size = 32;
    k.sequence_parallel = true;
    k.distributed_optimizer = true;
    const Plan plan = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    const Prediction p = cm.estimate(plan);
    QCOMPARE(p.num_microbatches, 16);
    double sum = 0, mx = 0, before = 0, after = 0;
    std::vector<double> f, b;
    for (const auto& s : p.stages) {
        sum += s.t_fwd + s.t_bwd;
        mx = std::max(mx, s.t_fwd + s.t_bwd);
        before = std::max(before, s.dp_sync - s.param_gather);
        after = std::max(after, s.optimizer + s.param_gather);
        f.push_back(s.t_fwd);
        b.push_back(s.t_bwd);
    }
    const double sync = before + after;
    QVERIFY(std::fabs(p.iteration_time_s - (sum + 15 * mx + sync)) < 1e-12);
    QVERIFY(std::fabs(closedFormPipelineTime(f, b, 16) + sync - p.iteration_time_s) < 1e-12);
    const TimeBreakdown& t = p.breakdown;
    QVERIFY(std::fabs(t.compute + t.tensor_parallel + t.expert_dispatch + t.pipeline_send + t.pipeline_bubble + t.dp_sync
                      + t.optimizer - p.iteration_time_s) < 1e-9);
    // The bottleneck's sends (16 micro-batches) are its own bar, not idle time, so the bubble
    // is exactly the closed form's slots beyond M x mx: sum - mx.
    const std::size_t bn = f[0] + b[0] >= f[1] + b[1] ? 0 : 1;
    const StageEstimate& be = p.stages[bn];
    QVERIFY(std::fabs(t.pipeline_send - 16 * (be.t_fwd + be.t_bwd - be.compute - be.tensor_parallel - be.expert_dispatch)) < 1e-12);
    QVERIFY(std::fabs(t.pipeline_bubble - (sum - mx)) < 1e-9);
    QVERIFY(std::fabs(p.tokens_per_s - 32 * 4096 / p.iteration_time_s) < 1e-6);
    // Megatron's counting takes the padded vocabulary of the last stage's TP (8).
    QVERIFY(std::fabs(p.mfu - modelFlopsPerIteration(m, 32, 8) / (p.iteration_time_s * 32 * 312e12)) < 1e-12);
}

void TestCostModel::tailWaitsAtTheGradientNormBarrier()
{
    // Megatron-LM's optimizer step starts with the gradient-norm all-reduce (clip_grad 1.0 by
    // default), which spans every stage of the pipeline: no stage steps before the slowest
    // stage's data-parallel sync has ended, and the distributed optimizer's parameter
    // all-gather follows the step. LLaMA-7B in two stages of 16 layers: 8 H800 at TP 1 (DP 8:
    // a long reduce-scatter, a step over 1/8 of the stage's parameters) and 8 910B at TP 8
    // (DP 1: no sync, the step over the whole TP shard on slower HBM). The longest sync is
    // stage 0's, the longest step stage 1's, and the iteration pays both:
    // T = T_pipe + sync_0 + step_1, more than the longest sync + step of any one stage. The
    // gradient reduce-scatter is exposed (a launcher without --overlap-grad-reduce), so that
    // stage 0's sync is more than its last bucket; its parameter all-gather still overlaps
    // with the next forward but for the last bucket. Magnitudes: stage 0 syncs 76 ms before
    // the barrier and steps 8 ms (4.9 ms step, 2.9 ms last bucket's all-gather); stage 1 steps
    // 11.2 ms (about 421.7 M parameters x 34 B at 0.8 x 1.6 TB/s, section 7).
    const ModelSpec m = llama7b();
    const Cluster c = bridgedH800And910B();
    const CostModel cm(m, c, DeviceCatalog::builtin(), nullptr, exposedGradReduce());
    Plan plan = twoMicroBatchesOfEight();
    StagePlan first = stageOn("H800", 0, 8, 1), last = stageOn("910B-376T", 1, 8, 8);
    first.num_layers = last.num_layers = 16;
    last.first_layer = 16;
    last.micro_batch_size = 8;   // DP 1: the same 8 sequences per micro-batch as 8 x 1
    plan.stages = {first, last};
    const Prediction p = cm.estimate(plan);
    QCOMPARE(p.num_microbatches, 2);
    const StageEstimate &s0 = p.stages[0], &s1 = p.stages[1];
    QCOMPARE(syncStage(p), 0);
    QCOMPARE(stepStage(p), 1);
    QCOMPARE(s1.dp_sync, 0.0);
    QVERIFY(s0.param_gather > 0 && s0.param_gather < s0.dp_sync);   // after the step
    const double pipe = closedFormPipelineTime({s0.t_fwd, s1.t_fwd}, {s0.t_bwd, s1.t_bwd}, 2);
    const double sync0 = s0.dp_sync - s0.param_gather, step1 = s1.optimizer;
    QVERIFY(std::fabs(p.iteration_time_s - (pipe + sync0 + step1)) < 1e-12);
    const double oneStage = std::max(s0.dp_sync + s0.optimizer, s1.dp_sync + s1.optimizer);
    QVERIFY2(p.iteration_time_s > pipe + oneStage + 1e-3,
             qPrintable(QStringLiteral("%1 s vs %2 s").arg(p.iteration_time_s).arg(pipe + oneStage)));
    // The breakdown: DP sync is stage 0's sync (stage 1 gathers nothing), optimizer stage 1's.
    QVERIFY(std::fabs(p.breakdown.dp_sync - sync0) < 1e-12);
    QCOMPARE(p.breakdown.optimizer, step1);
    const TimeBreakdown& t = p.breakdown;
    QVERIFY(std::fabs(t.compute + t.tensor_parallel + t.expert_dispatch + t.pipeline_send + t.pipeline_bubble + t.dp_sync
                      + t.optimizer - p.iteration_time_s) < 1e-9);
}

void TestCostModel::chromeTrace()
{
    ScheduleInput in;
    in.microbatches = 2;
    in.t_fwd = {1e-3, 1e-3};
    in.t_bwd = {2e-3, 2e-3};
    const std::string trace = toChromeTrace(simulatePipeline(in), {"H800", "910B"});
    // A JSON document (written event by event) whose complete events ("ph": "X") hold the
    // blocks in microseconds: B0 on stage 1 lasts 2 ms.
    QJsonParseError error;
    const QJsonObject doc = QJsonDocument::fromJson(QByteArray::fromStdString(trace), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc["displayTimeUnit"].toString(), QStringLiteral("ms"));
    QVERIFY(trace.find("stage 1 (910B)") != std::string::npos);
    int blocks = 0;
    bool backward0OnStage1 = false;
    for (const QJsonValue& ev : doc["traceEvents"].toArray()) {
        const QJsonObject e = ev.toObject();
        if (e["ph"].toString() != QLatin1String("X"))
            continue;
        ++blocks;
        backward0OnStage1 = backward0OnStage1 || (e["name"].toString() == QLatin1String("B0") && e["tid"].toInt() == 1 && e["dur"].toDouble() == 2000.0);
    }
    QCOMPARE(blocks, 8);   // 2 micro-batches x 2 passes x 2 stages
    QVERIFY(backward0OnStage1);

    // Tails (Schedule.h placeTails). Two stages, 2 micro-batches, forward 1 ms, backward 2 ms:
    // stage 1 runs F0 [1, 2], B0 [2, 4], F1 [4, 5], B1 [5, 7]; stage 0 ends with B1 [7, 9], so the
    // pipeline (closed form 6 + 1 x 3 = 9 ms) ends at 9 ms, stage 1's part of it 2 ms (stage
    // 0's backward, its drain) earlier. Syncs 1 and 0.5 ms, optimizer 1 and 3 ms, and stage 0
    // gathers its parameters for 0.5 ms after its step: no stage steps before the
    // gradient-norm all-reduce, after stage 0's sync, the later to end, so T = 9 + max(1,
    // 0.5 - 2) + max(1.5, 3) = 13 ms. Stage 1 syncs from 7 to 7.5 ms, waits for the barrier
    // until 10 and steps until 13 = T; stage 0 syncs until 10, steps until 11 and gathers
    // until 11.5.
    const Schedule sched = simulatePipeline(in);
    const std::vector<StageTail> tails = {{1e-3, 0, 1e-3, 0.5e-3, 0}, {0.5e-3, 0, 3e-3, 0, 2e-3}};
    QVERIFY(std::fabs(drainedPipelineEnd(tails, 13e-3) - 9e-3) < 1e-15);
    std::vector<TailSpan> t = placeTails(sched, tails, 13e-3);
    QCOMPARE(t.size(), std::size_t(2));
    QVERIFY(std::fabs(t[1].wait_start - 7e-3) < 1e-15 && std::fabs(t[1].sync_start - 7e-3) < 1e-15);
    QVERIFY(std::fabs(t[1].sync_end - 7.5e-3) < 1e-15 && std::fabs(t[1].optimizer_start - 10e-3) < 1e-15);
    QVERIFY(std::fabs(t[1].optimizer_end - 13e-3) < 1e-15 && t[1].gather_end == t[1].gather_start);
    QVERIFY(std::fabs(t[0].sync_start - 9e-3) < 1e-15 && std::fabs(t[0].optimizer_end - 11e-3) < 1e-15);
    QVERIFY(std::fabs(t[0].gather_start - 11e-3) < 1e-15 && std::fabs(t[0].gather_end - 11.5e-3) < 1e-15);
    // A longer sync on stage 1 hides behind stage 0's last backward while it ends by 10 ms:
    // 2.5 ms leaves T at 13 ms (counted from the drained pipeline it would be 9 + 2.5 + 3 =
    // 14.5), 3.5 ms ends at 10.5 and gives T = 9 + 1.5 + 3 = 13.5 ms.
    QVERIFY(std::fabs(drainedPipelineEnd({tails[0], {2.5e-3, 0, 3e-3, 0, 2e-3}}, 13e-3) - 9e-3) < 1e-15);
    QVERIFY(std::fabs(drainedPipelineEnd({tails[0], {3.5e-3, 0, 3e-3, 0, 2e-3}}, 13.5e-3) - 9e-3) < 1e-15);
    // Tied embeddings, 0.2 ms all-reduce after both end stages' syncs (0.5 ms each): T = 9 +
    // 0.5 + 0.2 + 3 = 12.7 ms; stage 1 syncs over [7, 7.5] and waits for stage 0's sync, both
    // all-reduce over [9.5, 9.7], then step from 9.7, and stage 1's step ends at 12.7.
    t = placeTails(sched, {{0.5e-3, 0.2e-3, 1e-3, 0, 0}, {0.5e-3, 0.2e-3, 3e-3, 0, 2e-3}}, 12.7e-3);
    QVERIFY(std::fabs(t[1].sync_end - 7.5e-3) < 1e-15);
    QVERIFY(std::fabs(t[0].embedding_start - 9.5e-3) < 1e-15 && std::fabs(t[1].embedding_end - 9.7e-3) < 1e-15);
    QVERIFY(std::fabs(t[0].optimizer_start - 9.7e-3) < 1e-15 && std::fabs(t[0].optimizer_end - 10.7e-3) < 1e-15);
    QVERIFY(std::fabs(t[1].optimizer_end - 12.7e-3) < 1e-15);
    const std::string withTails = toChromeTrace(sched, {"H800", "910B"}, tails, 13e-3);
    // Equal stages: the simulator ends every lane where the closed form does, nothing to wait for.
    QVERIFY(withTails.find("\"name\":\"wait for the closed form's last backward\"") == std::string::npos);
    bool stepFound = false, barrierFound = false, gatherFound = false;
    for (const QJsonValue& ev : QJsonDocument::fromJson(QByteArray::fromStdString(withTails)).object()["traceEvents"].toArray()) {
        const QJsonObject e = ev.toObject();
        const QString name = e["name"].toString();
        const int tid = e["tid"].toInt();
        auto at = [&](double ts, double dur) {   // microseconds
            return std::fabs(e["ts"].toDouble() - ts) < 1e-6 && std::fabs(e["dur"].toDouble() - dur) < 1e-6;
        };
        if (name == QLatin1String("optimizer step") && tid == 1) {
            stepFound = true;
            QVERIFY(at(10000, 3000));
        }
        if (name == QLatin1String("wait for the gradient-norm all-reduce")) {
            barrierFound = true;
            QCOMPARE(tid, 1);   // stage 0's sync ends later: it does not wait
            QVERIFY(at(7500, 2500));
        }
        if (name == QLatin1String("parameter all-gather")) {
            gatherFound = true;
            QCOMPARE(tid, 0);
            QVERIFY(at(11000, 500));
        }
    }
    QVERIFY(stepFound && barrierFound && gatherFound);

    // Unequal stages, where the simulator beats the closed form: forward 1 and 0.5 ms,
    // backward 2 and 1 ms, 2 micro-batches. Stage 0 runs F0 [0, 1], F1 [1, 2], B0 [2.5, 4.5],
    // B1 [4.5, 6.5]; stage 1 F0 [1, 1.5], B0 [1.5, 2.5], F1 [2.5, 3], B1 [3, 4]. The closed
    // form ends stage 0 at 4.5 + 1 x 3 = 7.5 ms and stage 1 2 ms (its drain) earlier, at 5.5:
    // with no sync or step (T = 7.5 ms), stage 1 waits over [4, 5.5] and stage 0 over [6.5, 7.5].
    ScheduleInput uneven;
    uneven.t_fwd = {1e-3, 0.5e-3};
    uneven.t_bwd = {2e-3, 1e-3};
    uneven.microbatches = 2;
    const Schedule ragged = simulatePipeline(uneven);
    QVERIFY(std::fabs(ragged.makespan - 6.5e-3) < 1e-15);
    const std::vector<StageTail> none = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 2e-3}};
    t = placeTails(ragged, none, 7.5e-3);
    QVERIFY(std::fabs(t[1].wait_start - 4e-3) < 1e-15 && std::fabs(t[1].sync_start - 5.5e-3) < 1e-15);
    QVERIFY(std::fabs(t[0].wait_start - 6.5e-3) < 1e-15 && std::fabs(t[0].sync_start - 7.5e-3) < 1e-15);
    const std::string waits = toChromeTrace(ragged, {}, none, 7.5e-3);
    QVERIFY(waits.find("\"name\":\"wait for the closed form's last backward\"") != std::string::npos);
}

void TestCostModel::profileInterpolationLogLog()
{
    // Power law between neighbours: halfway (in log) between 1 MB/100 us and 100 MB/1 ms is
    // 10 MB at 10^-3.5 s; beyond the last point time grows in proportion; below the first it holds.
    const std::vector<std::pair<double, double>> pts{{1e6, 1e-4}, {1e8, 1e-3}};
    QVERIFY(std::fabs(ProfileTables::interpolateLogLog(pts, 1e7) - std::pow(10.0, -3.5)) < 1e-15);
    QCOMPARE(ProfileTables::interpolateLogLog(pts, 1e8), 1e-3);
    QVERIFY(std::fabs(ProfileTables::interpolateLogLog(pts, 4e8) - 4e-3) < 1e-15);
    QCOMPARE(ProfileTables::interpolateLogLog(pts, 1e3), 1e-4);
}

void TestCostModel::profileOverridesDefaults()
{
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H800", 1);
    const Profile prof = h800LayerProfile(0.010, 0.020, 0.006, 0.012);
    const CostModel cm(m, c, DeviceCatalog::builtin(), &prof);
    StagePlan st = stageOn("H800", 0, 8, 8);
    const StageEstimate est = oneLayer(cm, st, true);
    // The profiled layer time replaces compute and TP collectives.
    QVERIFY(std::fabs(est.t_fwd - 0.010) < 1e-12);
    QVERIFY(std::fabs(est.t_bwd - 0.020) < 1e-12);
    QVERIFY(!est.notes.empty());
    UniformKnobs k;
    k.tp = 8;
    k.global_batch_size = 8;
    k.sequence_parallel = true;
    const Prediction p = cm.estimate(makeUniformPlan(m, c, DeviceCatalog::builtin(), k));
    QVERIFY(p.used_profile);
    QVERIFY(!p.notes.empty());
    const CostModel plain(m, c, DeviceCatalog::builtin());
    const Prediction q = plain.estimate(makeUniformPlan(m, c, DeviceCatalog::builtin(), k));
    QVERIFY(!q.used_profile);
    QCOMPARE(q.notes.front(), std::string("no profile: every number is an analytic default from the device catalog"));
    // On H800 (NVLink4) the defaults are known to run fast (section 10): said without a profile,
    // not where the profile's entries were used, nor on A100 (NVLink3).
    auto saysFast = [](const Prediction& pr) {
        return std::any_of(pr.notes.begin(), pr.notes.end(), [](const std::string& n) {
            return n.rfind("on NVLink4 (H100-class) devices the analytic defaults run 19-29 % faster", 0) == 0;
        });
    };
    QVERIFY(saysFast(q));
    QVERIFY(!saysFast(p));
    const Cluster a100 = nodesOf("A100-80GB", 1);
    QVERIFY(!saysFast(CostModel(m, a100, DeviceCatalog::builtin()).estimate(makeUniformPlan(m, a100, DeviceCatalog::builtin(), k))));
    // A profile without tables, efficiencies or rho is one, and says so rather than "no profile".
    const Profile empty;
    const CostModel none(m, c, DeviceCatalog::builtin(), &empty);
    const Prediction e = none.estimate(makeUniformPlan(m, c, DeviceCatalog::builtin(), k));
    QVERIFY(!e.used_profile);
    QCOMPARE(e.notes.front(), std::string("the profile is empty: every number is an analytic default from the device catalog"));
    QVERIFY(p.mfu < 1.0);

    // Layer times no device could reach: 7B's dense layer (about 1.2 TFLOP of forward over
    // 4096 tokens, Megatron's counting) in 1 microsecond on 8 H800 is far beyond their peak.
    Profile fast = prof;
    fast.compute.front().dense_layer_fwd_s = 1e-6;
    fast.compute.front().dense_layer_bwd_s = 2e-6;
    fast.compute.front().ffn_fwd_s = 0.5e-6;
    fast.compute.front().ffn_bwd_s = 1e-6;
    const CostModel impossible(m, c, DeviceCatalog::builtin(), &fast);
    const Prediction f = impossible.estimate(makeUniformPlan(m, c, DeviceCatalog::builtin(), k));
    QVERIFY(f.mfu > 1.0);
    QVERIFY2(f.notes.front().find("MFU above 100%") != std::string::npos, f.notes.front().c_str());
}

void TestCostModel::profilePlausibility()
{
    // LLaMA-2-7B's dense layer, forward FLOPs per token (Megatron's counting, causal half):
    // 2h(q + 2kv) + 2qh + 2sq + 2hF(gl + 1) = 100,663,296 + 33,554,432 + 33,554,432 + 270,532,608
    // = 438,304,768; 4096 tokens at TP 2: 897.648 GFLOP per device forward. At 2 ms that is
    // 448.8 TFLOP/s, 45 % of H800's 989 TFLOP/s BF16 peak: plausible.
    const ModelSpec m = llama7b();
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    Profile p = h800LayerProfile(0.002, 0.004, 0, 0);
    p.compute[0].tp = 2;
    CollectiveEntry c;
    c.primitive = Collective::AllReduce;
    c.group_size = 2;
    c.bytes = 64.0 * 1024 * 1024;   // 64 MiB in 1 ms: 67 GB/s
    c.time_s = 0.001;
    p.collectives.push_back(c);
    c.bytes = 32;                   // 32 bytes in 20 us
    c.time_s = 20e-6;
    p.collectives.push_back(c);
    QVERIFY(profilePlausibilityWarnings(p, m, cat, "p.json").empty());

    // In milliseconds (2 and 4 "s"): 0.045 % of the peak, below a thousandth; a second entry
    // so is named with the first. A collective is bounded by a ring's latency, 2 (n - 1) + 1
    // steps of 50 us (0.15 ms for 2 ranks), plus its bytes at 50 MB/s: 64 MiB in 5 s is over
    // 0.15 + 1342.18 ms; 32 bytes in 1 ms over 0.15 ms.
    Profile ms = p;
    ms.compute[0].dense_layer_fwd_s = 2;
    ms.compute[0].dense_layer_bwd_s = 4;
    ms.compute.push_back(ms.compute[0]);
    ms.compute[1].tp = 1;
    ms.collectives[0].time_s = 5;
    ms.collectives[1].time_s = 0.001;
    Warnings w = profilePlausibilityWarnings(ms, m, cat, "p.json");
    QCOMPARE(w.size(), std::size_t(2));
    QVERIFY2(w[0].rfind("p.json: profile.compute[0].dense_layer_fwd_s: 2 s for 4096 tokens at TP 2 is 0.05 % of H800's BF16 "
                        "peak for this model's layer (897.648 GFLOP per device forward, 1795.296 backward); expected seconds",
                        0) == 0,
             w[0].c_str());
    QVERIFY2(w[0].find("(also compute[1])") != std::string::npos, w[0].c_str());
    QVERIFY2(w[1].rfind("p.json: profile.collectives[0]: 67108864 bytes per rank in 5 s is slower than any data-centre link "
                        "takes for it (0.15 ms of latency for a group of 2 and the bytes at 50 MB/s: 1342.327 ms)",
                        0) == 0
                 && w[1].find("(also collectives[1])") != std::string::npos,
             w[1].c_str());
    // No step at 1 MiB: 1 MiB less a byte, or 1 MiB, in 0.4 ms (2.6 GB/s, a slow Ethernet
    // link) is plausible either way.
    Profile edge = p;
    edge.collectives[0].bytes = 1024.0 * 1024 - 1;
    edge.collectives[0].time_s = 0.0004;
    QVERIFY(profilePlausibilityWarnings(edge, m, cat, "p.json").empty());
    edge.collectives[0].bytes = 1024.0 * 1024;
    QVERIFY(profilePlausibilityWarnings(edge, m, cat, "p.json").empty());

    // Faster than the device: 0.5 ms forward is 1795 TFLOP/s, 182 % of H800's 989 TFLOP/s BF16
    // peak, which a BF16 model's GEMMs run at; in FP8 (1979 TFLOP/s) it is plausible, and 0.4 ms
    // (2244 TFLOP/s, 227 %) is not.
    Profile fast = p;
    fast.compute[0].dense_layer_fwd_s = 0.0005;
    w = profilePlausibilityWarnings(fast, m, cat, "p.json");
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY2(w[0].find("dense_layer_fwd_s: 0.0005 s for 4096 tokens at TP 2 is 182 % of H800's BF16 peak") != std::string::npos
                 && w[0].find("faster than the device's BF16 peak") != std::string::npos,
             w[0].c_str());
    ModelSpec fp8 = m;
    fp8.training.fp8_format = Fp8Format::Hybrid;
    QVERIFY(profilePlausibilityWarnings(fast, fp8, cat, "p.json").empty());
    fast.compute[0].dense_layer_fwd_s = 0.0004;
    w = profilePlausibilityWarnings(fast, fp8, cat, "p.json");
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY2(w[0].find("is 227 % of H800's BF16 peak") != std::string::npos
                 && w[0].find("faster than the device's FP8 peak") != std::string::npos,
             w[0].c_str());
    // A type the catalog does not know is left to profileWarnings.
    fast.compute[0].device_type = "A800";
    QVERIFY(profilePlausibilityWarnings(fast, m, cat, "p.json").empty());
}

void TestCostModel::profileNamesAndNotes()
{
    const ModelSpec m = llama7b();
    UniformKnobs k;
    k.tp = 8;
    k.global_batch_size = 8;
    k.sequence_parallel = true;
    // An entry under a catalog alias ("NVIDIA H800") is the H800's: the same times.
    const Profile prof = h800LayerProfile(0.010, 0.020, 0.006, 0.012);
    Profile alias = prof;
    alias.compute.front().device_type = "NVIDIA H800";
    const Cluster one = nodesOf("H800", 1);
    const Plan plan = makeUniformPlan(m, one, DeviceCatalog::builtin(), k);
    const Prediction byName = CostModel(m, one, DeviceCatalog::builtin(), &prof).estimate(plan);
    const Prediction byAlias = CostModel(m, one, DeviceCatalog::builtin(), &alias).estimate(plan);
    QCOMPARE(byAlias.iteration_time_s, byName.iteration_time_s);
    QVERIFY(byAlias.used_profile);

    // Two types, a profile for one: each stage says where its numbers came from.
    Cluster two = nodesOf("H800", 1);
    const Cluster a100 = nodesOf("A100-80GB", 1, 8, 1);
    two.nodes.insert(two.nodes.end(), a100.nodes.begin(), a100.nodes.end());
    k.pp = 2;
    const Prediction mixed = CostModel(m, two, DeviceCatalog::builtin(), &prof).estimate(makeUniformPlan(m, two, DeviceCatalog::builtin(), k));
    auto has = [&](const Prediction& p, const std::string& text) {
        return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n == text; });
    };
    QVERIFY(has(mixed, "H800: layer compute from the profile table (TP 8, CP 1)"));
    QVERIFY(has(mixed, "A100-80GB: layer compute analytic (the profile has no entry for TP 8, CP 1)"));
    QVERIFY(has(mixed, "A100-80GB: GEMM efficiency from the catalog default"));
    // Two stages of one type, the profile's entry for the first's TP only: each note names
    // its stage, so that the two do not read as a contradiction; a note both have does not.
    {
        const Cluster h800s = nodesOf("H800", 2);
        k.pp = 2;
        Plan split = makeUniformPlan(m, h800s, DeviceCatalog::builtin(), k);
        split.stages[1].tp = 4;
        split.stages[1].dp = 2;
        const Prediction p = CostModel(m, h800s, DeviceCatalog::builtin(), &prof).estimate(split);
        QVERIFY(has(p, "stage 0: H800: layer compute from the profile table (TP 8, CP 1)"));
        QVERIFY(has(p, "stage 1: H800: layer compute analytic (the profile has no entry for TP 4, CP 1)"));
        QVERIFY(has(p, "H800: GEMM efficiency from the catalog default"));
    }

    // An MoE model with an entry without FFN times: eq. 2 needs the FFN's time, so its MoE
    // layers are analytic (the same as without a profile), and the note says why.
    const ModelSpec moeModel = mixtral8x7b();
    Profile noFfn = prof;
    noFfn.compute.front().ffn_fwd_s = 0;
    noFfn.compute.front().ffn_bwd_s = 0;
    k.pp = 1;
    k.ep = 8;
    k.etp = 1;
    const Plan moePlan = makeUniformPlan(moeModel, one, DeviceCatalog::builtin(), k);
    const Prediction withEntry = CostModel(moeModel, one, DeviceCatalog::builtin(), &noFfn).estimate(moePlan);
    const Prediction analytic = CostModel(moeModel, one, DeviceCatalog::builtin()).estimate(moePlan);
    QCOMPARE(withEntry.iteration_time_s, analytic.iteration_time_s);
    QVERIFY(has(withEntry, "H800: layer compute analytic (the profile's entry for TP 8, CP 1 has no ffn_fwd_s and ffn_bwd_s, "
                           "which MoE layers need)"));
}

void TestCostModel::uniformPlanPlacement()
{
    // Stage s owns global ranks [s W/PP, (s+1) W/PP) in node order.
    Cluster c = nodesOf("H800", 2);
    Cluster d = nodesOf("910B", 2, 8, 2);
    c.nodes.insert(c.nodes.end(), d.nodes.begin(), d.nodes.end());
    UniformKnobs k;
    k.tp = 4;
    k.pp = 4;
    k.global_batch_size = 64;
    const Plan p = makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k);
    QCOMPARE(p.pp(), 4);
    QCOMPARE(p.stages[0].device_type, std::string("H800"));
    QCOMPARE(p.stages[3].device_type, std::string("910B-376T"));
    QCOMPARE(p.stages[2].devices.front().node, 2);
    QCOMPARE(p.stages[1].dp, 2);
    QCOMPARE(p.stages[1].num_layers, 8);
    k.pp = 3;
    k.tp = 1;
    QVERIFY_THROWS_EXCEPTION(InputError, makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k));
}

void TestCostModel::uniformPlanFollowsMegatronCoreRules()
{
    // Megatron-Core's MoELayer.forward refuses to train with TP > 1 and no sequence
    // parallelism, so an MoE plan with TP 2 runs it; a dense one keeps Megatron's default (off).
    const Cluster c = nodesOf("H800", 2);
    UniformKnobs k;
    k.tp = 2;
    k.pp = 2;
    k.global_batch_size = 64;
    QVERIFY(makeUniformPlan(mixtral8x7b(), c, DeviceCatalog::builtin(), k).sequence_parallel);
    QVERIFY(!makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k).sequence_parallel);
    k.tp = 1;
    QVERIFY(!makeUniformPlan(mixtral8x7b(), c, DeviceCatalog::builtin(), k).sequence_parallel);

    // Block recompute with VPP: Megatron-LM recomputes --recompute-num-layers layers of each
    // model chunk. 32 layers over PP 2 are 16 per rank; VPP 2 gives chunks of 8 + 8, so 3 per
    // chunk recompute 6 of a rank's 16; VPP 4 (chunks of 4) with 4 per chunk recompute all (0).
    k.tp = 2;
    k.recompute = Recompute::Full;
    k.recompute_layers = 3;
    k.vpp = 2;
    Plan p = makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k);
    QCOMPARE(p.stages[0].recompute_layers, 6);
    QCOMPARE(p.stages[1].recompute_layers, 6);
    k.vpp = 4;
    k.recompute_layers = 4;
    QCOMPARE(makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k).stages[0].recompute_layers, 0);
    k.vpp = 1;
    k.recompute_layers = 3;
    QCOMPARE(makeUniformPlan(llama7b(), c, DeviceCatalog::builtin(), k).stages[0].recompute_layers, 3);
    // A run's own layout: 33 layers over PP 2 are 17 + 16; VPP 2 chunks 9 + 8 and 8 + 8, so
    // 8 per chunk recompute 16 of 17 on rank 0 and all of rank 1's.
    ModelSpec odd = llama7b();
    odd.num_layers = 33;
    k.vpp = 2;
    k.recompute_layers = 8;
    k.layout_given = true;
    p = makeUniformPlan(odd, c, DeviceCatalog::builtin(), k);
    QCOMPARE(p.stages[0].num_layers, 17);
    QCOMPARE(p.stages[0].recompute_layers, 16);
    QCOMPARE(p.stages[1].recompute_layers, 0);
}

void TestCostModel::badPlanThrows()
{
    const ModelSpec m = llama7b();
    const Cluster c = nodesOf("H100-SXM", 1);
    const CostModel cm(m, c, DeviceCatalog::builtin());
    UniformKnobs k;
    k.global_batch_size = 8;
    Plan p = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    p.stages[0].ep = 3;
    QVERIFY_THROWS_EXCEPTION(InputError, cm.estimate(p));
    p = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    p.stages[0].num_layers = 5;
    QVERIFY_THROWS_EXCEPTION(InputError, cm.estimate(p));
    p = makeUniformPlan(m, c, DeviceCatalog::builtin(), k);
    p.stages[0].device_type = "NoSuchGPU";
    QVERIFY_THROWS_EXCEPTION(InputError, cm.estimate(p));
}

void TestCostModel::interleavedRanksCostTheirChunksLayers()
{
    // Mixtral 8x7B cut to 8 layers, the last four MoE, on two H800 nodes (a stage per node,
    // DP 8, EP 4 so two experts per rank). With VPP 2 chunk c of rank r is virtual stage
    // c * PP + r (Megatron-LM's interleaved schedule, reference section 4a): rank 0 runs layers
    // 0-1 and 4-5, rank 1 layers 2-3 and 6-7, two MoE layers each. With VPP 1 rank 0 runs the
    // four dense layers and rank 1 the four MoE layers.
    QCOMPARE(rankLayers({4, 4}, 2)[0].size(), std::size_t(2));
    QCOMPARE(rankLayers({4, 4}, 2)[0][1].first, 4);
    QCOMPARE(rankLayers({4, 4}, 2)[1][0].first, 2);
    ModelSpec m = mixtral8x7b();
    m.num_layers = 8;
    m.moe_layer_pattern = {0, 0, 0, 0, 1, 1, 1, 1};
    const Cluster c = nodesOf("H800", 2);
    Plan plan;
    plan.global_batch_size = 16;
    for (int i = 0; i < 2; ++i) {
        StagePlan st = stageOn("H800", i, 8, 1);
        st.first_layer = 4 * i;
        st.num_layers = 4;
        st.ep = 4;
        st.edp = 2;
        plan.stages.push_back(st);
    }
    const CostModel cm(m, c, DeviceCatalog::builtin());
    const Prediction plain = cm.estimate(plan);
    plan.vpp = 2;
    const Prediction interleaved = cm.estimate(plan);
    QCOMPARE(plain.stages[0].expert_dispatch, 0.0);
    QVERIFY(plain.stages[1].expert_dispatch > 0);
    // Two MoE layers on each rank: the same dispatch and buffers on both.
    QVERIFY(interleaved.stages[0].expert_dispatch > 0);
    QVERIFY(std::fabs(interleaved.stages[0].expert_dispatch / interleaved.stages[1].expert_dispatch - 1) < 1e-12);
    QVERIFY(interleaved.stages[0].memory.moe_buffers > 0);
    // Rank 0 trades two dense layers for two MoE layers: per layer two experts (3 h F each,
    // SwiGLU) and the router (h E) in place of one dense FFN (3 h F), in bf16 (2 B each; MemoryBreakdown is in bytes).
    const double h = 4096, F = 14336;
    const double perLayer = 2 * 3 * h * F + h * 8 - 3 * h * F;
    QVERIFY(std::fabs((interleaved.stages[0].memory.weights - plain.stages[0].memory.weights) - 2 * perLayer * 2) < 1e3);
    QVERIFY(std::fabs((plain.stages[1].memory.weights - interleaved.stages[1].memory.weights) - 2 * perLayer * 2) < 1e3);
}

void TestCostModel::interleavedUnevenChunksAreSimulated()
{
    // The simulator with each chunk's own time, by hand: P 2, V 2, M 2 (M == P, so every
    // forward runs before the first backward). Rank 0's chunks take f 1, 3 and b 2, 6; rank
    // 1's f 3, 1 and b 6, 2. Rank 0: F(0,0) 0-1, F(1,0) 1-2, F(0,1) 4-7 (after rank 1's
    // F(0,0) 1-4), F(1,1) 7-10 (after rank 1's F(1,0) 4-7). Rank 1: F(0,1) 7-8, F(1,1) 10-11,
    // B(0,1) 11-13, B(1,1) 13-15. Rank 0: B(0,1) 13-19, B(1,1) 19-25. Rank 1: B(0,0) 19-25,
    // B(1,0) 25-31. Rank 0: B(0,0) 25-27, B(1,0) 31-33. Equal shares of the same passes
    // (f 2, b 4 a chunk on both ranks) give the closed form's (M V + P - 1) 6 = 30.
    ScheduleInput in;
    in.microbatches = 2;
    in.vpp = 2;
    in.t_fwd = {2, 2};
    in.t_bwd = {4, 4};
    QCOMPARE(simulatePipeline(in).makespan, 30.0);
    in.chunk_fwd = {{1, 3}, {3, 1}};
    in.chunk_bwd = {{2, 6}, {6, 2}};
    const Schedule sched = simulatePipeline(in);
    QCOMPARE(sched.makespan, 33.0);
    QCOMPARE(sched.rank_end, (std::vector<double>{33, 31}));
    QCOMPARE(sched.busy, (std::vector<double>{24, 24}));
    in.keep_blocks = false;
    QVERIFY(simulatePipeline(in).blocks.empty());
    QCOMPARE(simulatePipeline(in).makespan, 33.0);
    in.chunk_fwd = {{1, 3, 1}, {3, 1}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatePipeline(in));

    // The cost model: LLaMA-2 7B's shape cut to 8 layers on two H800 nodes, PP 2, VPP 2, 16
    // micro-batches. A rank's chunks add up to its passes, the embedding in rank 0's first
    // chunk and the output layer in rank 1's last.
    ModelSpec m = llama7b();
    m.num_layers = 8;
    const Cluster c = nodesOf("H800", 2);
    Plan plan;
    plan.global_batch_size = 128;
    plan.vpp = 2;
    for (int i = 0; i < 2; ++i) {
        StagePlan st = stageOn("H800", i, 8, 1);
        st.first_layer = 4 * i;
        st.num_layers = 4;
        plan.stages.push_back(st);
    }
    const CostModel cm(m, c, DeviceCatalog::builtin());
    const Prediction even = cm.estimate(plan);
    QCOMPARE(even.num_microbatches, 16);
    for (const StageEstimate& st : even.stages) {
        QCOMPARE(st.chunk_fwd.size(), std::size_t(2));
        QVERIFY(std::fabs(st.chunk_fwd[0] + st.chunk_fwd[1] - st.t_fwd) < 1e-12 * st.t_fwd);
        QVERIFY(std::fabs(st.chunk_bwd[0] + st.chunk_bwd[1] - st.t_bwd) < 1e-12 * st.t_bwd);
    }
    QVERIFY(even.stages[0].chunk_fwd[0] > even.stages[0].chunk_fwd[1]);   // the embedding
    QVERIFY(even.stages[1].chunk_fwd[1] > even.stages[1].chunk_fwd[0]);   // the output layer
    // The iteration's pipeline is the simulated schedule of those chunks; the tails after it.
    auto simulate = [](const Prediction& p, int vpp) { return simulatePipeline(scheduleInput(p.stages, p.num_microbatches, vpp)); };
    QVERIFY(std::fabs(drainedPipelineEnd(stageTails(even.stages), even.iteration_time_s) - simulate(even, 2).makespan) < 1e-9);
    // Equal layers a chunk: within half a percent of the closed form, which spreads the
    // embedding and output layer over the chunks.
    double sum = 0, mx = 0;
    for (const StageEstimate& st : even.stages) {
        sum += st.t_fwd + st.t_bwd;
        mx = std::max(mx, st.t_fwd + st.t_bwd);
    }
    const double closedEven = sum / 2 + (16 * 2 - 1.0) * mx / 2;
    QVERIFY(std::fabs(simulate(even, 2).makespan / closedEven - 1) < 0.005);

    // A layout's uneven chunks ('Ettt|t|t|tttL': rank 0 holds 3 + 1 layers, rank 1 1 + 3): the
    // ranks' passes are the same as with 2 + 2, so the closed form would not move, but a
    // three-layer chunk feeds a one-layer chunk and the schedule stalls.
    plan.stages[0].chunk_layers = {3, 1};
    plan.stages[1].chunk_layers = {1, 3};
    const Prediction uneven = cm.estimate(plan);
    QVERIFY(std::fabs(uneven.stages[0].t_fwd + uneven.stages[0].t_bwd - (even.stages[0].t_fwd + even.stages[0].t_bwd))
            < 1e-12 * even.stages[0].t_fwd);
    QVERIFY(uneven.stages[0].chunk_fwd[0] > 2.5 * uneven.stages[0].chunk_fwd[1]);
    const double pipe = drainedPipelineEnd(stageTails(uneven.stages), uneven.iteration_time_s);
    QVERIFY(std::fabs(pipe - simulate(uneven, 2).makespan) < 1e-9);
    QVERIFY(pipe > 1.03 * closedEven);   // 3.9 % longer
    // Each stage's sync starts where its own last backward ends in the simulation.
    const Schedule us = simulate(uneven, 2);
    QVERIFY(std::fabs(uneven.stages[1].drain - (us.makespan - us.rank_end[1])) < 1e-12);
    QCOMPARE(uneven.stages[0].drain, 0.0);
    // A schedule beyond the block bound is extrapolated from two shorter ones (4 and 8
    // micro-batches within 100 blocks; the whole one has 2 x 16 x 2 x 2 = 128): the same end
    // and drains, since after the warm-up it repeats every group of PP micro-batches.
    std::vector<StageEstimate> extrapolated = uneven.stages;
    const double end = simulateInterleaved(extrapolated, 16, 2, 100);
    QVERIFY(std::fabs(end / us.makespan - 1) < 1e-12);
    QVERIFY(std::fabs(extrapolated[1].drain - uneven.stages[1].drain) < 1e-12);
    QCOMPARE(simulateInterleaved(extrapolated, 16, 2, 40), -1.0);   // one group of 2 micro-batches is 16 blocks, 40 / 6 < 16
    // A plan document keeps the chunks' times, so a saved prediction places its stages'
    // blocks and drains as the estimate did.
    PlanDocument doc;
    doc.model = m;
    doc.cluster = c;
    doc.plan = plan;
    doc.prediction = uneven;
    const PlanDocument back = readPlan(writePlan(doc), "uneven.json");
    QVERIFY(back.prediction.has_value());
    for (std::size_t i = 0; i < 2; ++i) {
        QCOMPARE(back.prediction->stages[i].chunk_fwd, uneven.stages[i].chunk_fwd);
        QCOMPARE(back.prediction->stages[i].chunk_bwd, uneven.stages[i].chunk_bwd);
        QVERIFY(std::fabs(back.prediction->stages[i].drain - uneven.stages[i].drain) < 1e-12);
    }
    // Chunk times that are not one per virtual stage (the plan's vpp edited since), or do not
    // add up to the stage's pass, are of another prediction: left out with a warning naming
    // the field, the stage's chunks then drawn as equal shares.
    const std::string written = writePlan(doc);
    nlohmann::json j = nlohmann::json::parse(written);
    j["prediction"]["stages"][0]["chunk_fwd_s"].push_back(0.0);
    Warnings w;
    PlanDocument odd = readPlan(j.dump(), "odd.json", &w);
    QVERIFY(odd.prediction->stages[0].chunk_fwd.empty() && odd.prediction->stages[0].chunk_bwd.empty());
    QCOMPARE(odd.prediction->stages[1].chunk_fwd, uneven.stages[1].chunk_fwd);
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY2(w[0].rfind("odd.json: prediction.stages[0].chunk_fwd_s: 3 entries for the plan's vpp 2; the chunk times are of "
                        "another prediction and are left out", 0) == 0,
             w[0].c_str());
    j = nlohmann::json::parse(written);
    j["prediction"]["stages"][1]["chunk_bwd_s"][0] = 1e308;
    w.clear();
    odd = readPlan(j.dump(), "odd.json", &w);
    QVERIFY(odd.prediction->stages[1].chunk_bwd.empty());
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY2(w[0].find("prediction.stages[1].chunk_bwd_s: the times add up to") != std::string::npos, w[0].c_str());
    // vpp edited by hand: every stage's times are stale, said once for the document.
    j = nlohmann::json::parse(written);
    j["plan"]["vpp"] = 4;
    w.clear();
    odd = readPlan(j.dump(), "odd.json", &w);
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY2(w[0].rfind("odd.json: prediction.stages[0].chunk_fwd_s: 2 entries for the plan's vpp 4 (and the same on 1 more "
                        "stage); the chunk times",
                        0) == 0,
             w[0].c_str());
    j = nlohmann::json::parse(written);
    for (auto& st : j["prediction"]["stages"]) {
        st.erase("chunk_fwd_s");
        st.erase("chunk_bwd_s");
    }
    const PlanDocument old = readPlan(j.dump(), "old.json");
    QCOMPARE(old.prediction->stages[1].drain, old.prediction->stages[0].t_bwd / 2);

    // More chunks than layers leave chunks empty: VPP 8 on ranks of 4 layers is the even
    // spread [1, 1, 1, 1, 0, 0, 0, 0] with 16 micro-batches; past kMaxVpp a plan is refused.
    plan.stages[0].chunk_layers.clear();
    plan.stages[1].chunk_layers.clear();
    plan.vpp = 8;
    const Prediction many = cm.estimate(plan);
    QCOMPARE(many.stages[0].chunk_fwd.size(), std::size_t(8));
    // Rank 0's empty chunks 4-7 hold no layer: only the send of their input on to rank 1,
    // which the interleaved schedule's p2p overlap (on by default) hides here.
    QCOMPARE(many.stages[0].chunk_fwd[5], 0.0);
    QCOMPARE(many.stages[0].chunk_fwd[5], many.stages[0].chunk_fwd[7]);
    plan.vpp = kMaxVpp + 1;
    QVERIFY_THROWS_EXCEPTION(InputError, cm.estimate(plan));
}

QTEST_GUILESS_MAIN(TestCostModel)
#include "tst_CostModel.moc"
