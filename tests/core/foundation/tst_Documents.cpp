// The JSON file formats (docs/formats.md): every format round-trips, migrations run in
// one chain, unknown keys warn, newer versions are refused, errors name file and path,
// validation catches impossible shapes, and saves are atomic.

#include "io/Documents.h"
#include "io/Presets.h"
#include "util/Strings.h"

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <climits>
#include <cmath>

using namespace hapmoe;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string dataFile(const char* name)
{
    return readTextFile(std::string(HAPMOE_TEST_DATA_DIR) + "/foundation/" + name);
}

// Every field set away from its default, so a field the reader drops changes the output.
ModelSpec fullModel()
{
    ModelSpec m;
    m.name = "round-trip";
    m.source = "hand-made";
    m.description = "every field set";
    m.num_layers = 6;
    m.hidden_size = 1024;
    m.ffn_hidden_size = 2816;
    m.num_attention_heads = 16;
    m.num_query_groups = 4;
    m.kv_channels = 96;
    m.vocab_size = 50257;
    m.seq_length = 2048;
    m.max_position_embeddings = 8192;
    m.swiglu = true;
    m.add_bias_linear = true;
    m.untie_embeddings_and_output_weights = true;
    m.normalization = "LayerNorm";
    m.num_experts = 16;
    m.moe_ffn_hidden_size = 704;
    m.moe_router_topk = 4;
    m.moe_layer_pattern = {0, 1, 1, 0, 1, 1};
    m.moe_shared_expert_intermediate_size = 1408;
    m.moe_token_dispatcher_type = TokenDispatcher::Flex;
    m.training.micro_batch_size = 2;
    m.training.global_batch_size = 96;
    m.training.precision = Precision::FP16;
    m.training.use_distributed_optimizer = false;
    m.training.router_imbalance = 1.37;
    m.training.imbalance_weight = 0.25;
    return m;
}

Plan fullPlan()
{
    Plan p;
    p.name = "HS-DP #1";
    p.vpp = 2;
    p.global_batch_size = 96;
    p.sequence_parallel = false;
    p.distributed_optimizer = false;
    p.target = Target::FlagScale;
    StagePlan s;
    s.device_type = "H800";
    s.devices = {{0, 0, 4}, {0, 4, 4}};
    s.first_layer = 0;
    s.num_layers = 4;
    s.tp = 2;
    s.cp = 2;
    s.dp = 2;
    s.ep = 4;
    s.etp = 1;
    s.edp = 2;
    s.recompute = Recompute::Full;
    s.recompute_layers = 3;
    s.micro_batch_size = 2;
    p.stages.push_back(s);
    s.device_type = "910B-376T";
    s.devices = {{1, 0, 8}};
    s.first_layer = 4;
    s.num_layers = 2;
    s.recompute = Recompute::Selective;
    s.recompute_layers = 0;
    s.recompute_modules = recompute_module::moe_act | recompute_module::layernorm;
    p.stages.push_back(s);
    p.unused = {{2, 8, "pipeline needs only two stages"}};
    return p;
}

Prediction fullPrediction()
{
    Prediction p;
    p.iteration_time_s = 12.5;
    p.tokens_per_s = 15728.64;
    p.tflops_per_device = 210.25;
    p.mfu = 0.3125;
    p.peak_memory_gib = 61.75;
    p.num_microbatches = 24;
    p.feasible = false;
    p.infeasible_reason = "stage 2 (910B) needs 71.3 GiB of 64 GiB (short 7.3 GiB)";
    p.memory_shortfall_gib = 7.3;
    p.used_profile = true;
    p.breakdown = {6.5, 1.25, 2.0, 1.5, 0.75, 0.5};
    StageEstimate s;
    s.t_fwd = 0.125;
    s.t_bwd = 0.25;
    s.compute = 0.25;
    s.tensor_parallel = 0.0625;
    s.expert_dispatch = 0.03125;
    s.p2p_send = 0.001;
    s.dp_sync = 0.5;
    s.embedding_sync = 0.125;   // part of dp_sync (tied embeddings)
    s.param_gather = 0.0625;    // part of dp_sync (after the optimizer step)
    s.optimizer = 0.2;
    s.model_flops = 1.5e15;
    s.memory = {10.5 * (1ull << 30), 5.25 * (1ull << 30), 21.0 * (1ull << 30), 12.0 * (1ull << 30),
                1.5 * (1ull << 30), 3.0 * (1ull << 30), 80.0 * (1ull << 30)};
    s.notes = {"compute from profile table"};
    p.stages = {s, s};
    p.notes = {"collectives from analytic defaults"};
    return p;
}

Cluster smallCluster()
{
    Cluster c = clusterFromShorthand("H800:1x8,910B:2x8", DeviceCatalog::builtin());
    c.name = "round-trip cluster";
    c.description = "two types";
    c.source = "hand-made";
    c.nodes[1].nics = 4;
    c.nodes[1].nic_gbit = 200;
    c.nodes[2].host_memory_gib = 1536;
    c.nodes[2].host_link_gbytes_per_s = 64;
    c.cross_vendor = {"flagcx", 12.5, 35};
    return c;
}

template <typename F>
InputError expectError(F&& f)
{
    try {
        f();
    } catch (const InputError& e) {
        return e;
    }
    throw std::runtime_error("expected an InputError");
}

} // namespace

class tst_Documents : public QObject {
    Q_OBJECT
private slots:
    void modelRoundTrip();
    void writersCheckWhatReadsBack();
    void defaultImbalanceCappedByExperts();
    void moeLayerFreqAsInteger();
    void clusterRoundTrip();
    void profileRoundTrip();
    void planRoundTrip();
    void projectRoundTrip();
    void exampleProjectLoads();
    void migratesModelV1();
    void migratesClusterV1();
    void migratedErrorsNameTheKeyAsWritten();
    void migratedChecksNameTheKeyAsWritten();
    void migrationTakesNullAsMissing();
    void documentVersionAsTheReadersTakeIt();
    void projectKeepsItsProfile();
    void projectKeepsScriptInputs();
    void longValuesInErrorsAreCut();
    void unknownKeysWarn();
    void misspeltKeysAreRefused();
    void newerVersionRefused();
    void wrongFormatRefused();
    void errorsNameFileAndPath();
    void malformedJsonGivesLineAndColumn();
    void detectFormat_();
    void validateModelCatchesShapes();
    void validateClusterCatchesProblems();
    void validatePlanCatchesMegatronRules();
    void duplicateKeysAndHugeNumbersRefused();
    void duplicateKeyAmongManyKeys();
    void binaryDataIsNotJson();
    void enumerationsIgnoreCaseAndSeparators();
    void profileAndSettingsBounds();
    void profileAliasesAreOneType();
    void writersSurviveBadEncoding();
    void readTextFileRefusesNonFiles();
    void messagesQuoteValuesAsTheyAre();
    void formatReadFromTheHead();
    void atomicSaveReplaces();
    void atomicSaveFailureLeavesOldFile();
    void atomicSaveKeepsALink();
};

void tst_Documents::modelRoundTrip()
{
    const std::string once = writeModel(fullModel());
    const ModelSpec back = readModel(once, "m.json");
    QCOMPARE(q(writeModel(back)), q(once));
    QCOMPARE(back.moe_layer_pattern.size(), std::size_t(6));
    QCOMPARE(back.numMoeLayers(), 4);
    QCOMPARE(back.training.router_imbalance, 1.37);
    QVERIFY(back.training.precision == Precision::FP16);
    QVERIFY(back.moe_token_dispatcher_type == TokenDispatcher::Flex);
    // Gradient precision: absent is Megatron-LM's default for the precision (half for fp16),
    // and is written only when given.
    QVERIFY(!back.training.accumulate_allreduce_grads_in_fp32);
    QVERIFY(!back.training.fp32Gradients());
    QVERIFY(once.find("accumulate_allreduce_grads_in_fp32") == std::string::npos);
    ModelSpec fp32Grads = fullModel();
    fp32Grads.training.accumulate_allreduce_grads_in_fp32 = true;
    const ModelSpec given = readModel(writeModel(fp32Grads), "m.json");
    QCOMPARE(given.training.accumulate_allreduce_grads_in_fp32, std::optional<bool>(true));
    QVERIFY(given.training.fp32Gradients());
    ModelSpec bf16 = fullModel();
    bf16.training.precision = Precision::BF16;
    QVERIFY(bf16.training.fp32Gradients());
    // FP8 (--fp8-format, --fp8-param-gather): absent is none and off, written only when set.
    QCOMPARE(back.training.fp8_format, Fp8Format::None);
    QVERIFY(once.find("fp8") == std::string::npos);
    ModelSpec fp8 = fullModel();
    fp8.training.fp8_format = Fp8Format::E4M3;
    fp8.training.fp8_param_gather = true;
    const std::string fp8Text = writeModel(fp8);
    QVERIFY(fp8Text.find("\"fp8_format\": \"e4m3\"") != std::string::npos);
    const ModelSpec fp8Back = readModel(fp8Text, "m.json");
    QCOMPARE(fp8Back.training.fp8_format, Fp8Format::E4M3);
    QVERIFY(fp8Back.training.fp8_param_gather);
    // --fp8-recipe: delayed (Megatron-LM's default) is not written, another is, and comes back.
    QVERIFY(fp8Text.find("fp8_recipe") == std::string::npos);
    QCOMPARE(fp8Back.training.fp8_recipe, Fp8Recipe::Delayed);
    fp8.training.fp8_recipe = Fp8Recipe::MXFP8;
    const std::string mxText = writeModel(fp8);
    QVERIFY(mxText.find("\"fp8_recipe\": \"mxfp8\"") != std::string::npos);
    QCOMPARE(readModel(mxText, "m.json").training.fp8_recipe, Fp8Recipe::MXFP8);
    nlohmann::json badRecipe = nlohmann::json::parse(mxText);
    badRecipe["training"]["fp8_recipe"] = "nvfp4";
    try {
        readModel(badRecipe.dump(2), "m.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("model.training.fp8_recipe"));
    }
    ModelSpec gatherOnly = fullModel();
    gatherOnly.training.fp8_param_gather = true;
    try {
        validateModel(gatherOnly, "m.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("model.training.fp8_param_gather"));
    }
    nlohmann::json badFp8 = nlohmann::json::parse(fp8Text);
    badFp8["training"]["fp8_format"] = "e5m2";
    try {
        readModel(badFp8.dump(2), "m.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("model.training.fp8_format"));
    }
    QVERIFY(once.find("\"format\": \"hapmoe.model\"") != std::string::npos);
    QVERIFY(once.find("\"version\": 2") != std::string::npos);
    // The vocabulary padding multiple: absent is Megatron-LM's default 128; a given one is kept.
    QCOMPARE(back.make_vocab_size_divisible_by, 128);
    QVERIFY(once.find("\"make_vocab_size_divisible_by\": 128") != std::string::npos);
    nlohmann::json absent = nlohmann::json::parse(once);
    absent.erase("make_vocab_size_divisible_by");
    QCOMPARE(readModel(absent.dump(2), "m.json").make_vocab_size_divisible_by, 128);
    ModelSpec bySixtyFour = fullModel();
    bySixtyFour.make_vocab_size_divisible_by = 64;
    QCOMPARE(readModel(writeModel(bySixtyFour), "m.json").make_vocab_size_divisible_by, 64);
    // The dropouts: absent is Megatron-LM's 0.1 each; given ones are kept; a probability only.
    QCOMPARE(readModel(absent.dump(2), "m.json").attention_dropout, 0.1);
    QCOMPARE(readModel(absent.dump(2), "m.json").hidden_dropout, 0.1);
    ModelSpec noDropout = fullModel();
    noDropout.attention_dropout = 0.0;
    noDropout.hidden_dropout = 0.05;
    const ModelSpec dropoutBack = readModel(writeModel(noDropout), "m.json");
    QCOMPARE(dropoutBack.attention_dropout, 0.0);
    QCOMPARE(dropoutBack.hidden_dropout, 0.05);
    // The fused cross-entropy: written only when on, with its implementation.
    QVERIFY(once.find("cross_entropy") == std::string::npos);
    ModelSpec fusedLoss = fullModel();
    fusedLoss.training.cross_entropy_loss_fusion = true;
    fusedLoss.training.cross_entropy_fusion_impl = CrossEntropyFusionImpl::TE;
    const std::string fusedText = writeModel(fusedLoss);
    QVERIFY(fusedText.find("\"cross_entropy_fusion_impl\": \"te\"") != std::string::npos);
    const ModelSpec fusedBack = readModel(fusedText, "m.json");
    QVERIFY(fusedBack.training.cross_entropy_loss_fusion);
    QCOMPARE(fusedBack.training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::TE);
    nlohmann::json badDropout = nlohmann::json::parse(once);
    badDropout["attention_dropout"] = -0.1;
    try {
        readModel(badDropout.dump(2), "m.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.where()), QStringLiteral("model.attention_dropout"));
    }
}

void tst_Documents::writersCheckWhatReadsBack()
{
    // A wrong value is quoted back cut to 60 characters, not in full.
    nlohmann::json m = nlohmann::json::parse(writeModel(fullModel()));
    m["training"]["precision"] = std::string(100000, 'x');
    try {
        readModel(m.dump(), "m.json");
        QFAIL("no exception");
    } catch (const InputError& e) {
        QVERIFY2(e.detail().size() < 200, e.detail().c_str());
        QVERIFY(e.detail().find("got \"" + std::string(57, 'x') + "...\"") != std::string::npos);
    }
    // What a writer checks before writing: more than 5 million values (a plan's thousand
    // alternatives on a large cluster) or nesting beyond 256 would not read back.
    std::string many = "[";
    for (int i = 0; i < 5'000'001; ++i)
        many += "0,";
    many.back() = ']';
    QVERIFY_THROWS_EXCEPTION(InputError, checkReadsBack(many, "big.json"));
    QVERIFY_THROWS_EXCEPTION(InputError, checkReadsBack(std::string(300, '[') + std::string(300, ']'), "deep.json"));
    checkReadsBack(writeModel(fullModel()), "m.json");
}

void tst_Documents::moeLayerFreqAsInteger()
{
    ModelSpec m = fullModel();
    m.moe_layer_pattern.clear();
    m.moe_layer_freq = 2;
    const ModelSpec back = readModel(writeModel(m), "m.json");
    QCOMPARE(back.moe_layer_freq, 2);
    QVERIFY(back.moe_layer_pattern.empty());
    QCOMPARE(back.numMoeLayers(), 3);   // layers 0, 2, 4 of 6
    // Megatron-LM's default FFN size when absent: SwiGLU int(4h*2/3/64)*64 = 2688 for h = 1024.
    const ModelSpec dflt = readModel(R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024,
        "num_attention_heads": 8, "vocab_size": 1000, "seq_length": 128, "swiglu": true})", "d.json");
    QCOMPARE(dflt.ffn_hidden_size, 2688);
}

void tst_Documents::clusterRoundTrip()
{
    const Cluster c = smallCluster();
    const std::string once = writeCluster(c);
    const Cluster back = readCluster(once, "c.json");
    QCOMPARE(q(writeCluster(back)), q(once));
    QCOMPARE(back.totalDevices(), 24);
    QCOMPARE(back.nodes[1].nic_gbit, 200.0);
    QCOMPARE(back.nodes[2].host_memory_gib, 1536.0);
    QCOMPARE(back.nodes[2].host_link_gbytes_per_s, 64.0);
    // The host fields are written only where given: nodes 0 and 1 have neither.
    QCOMPARE(QString::fromStdString(once).count(QStringLiteral("\"host_memory_gib\"")), 1);
    QCOMPARE(QString::fromStdString(once).count(QStringLiteral("\"host_link_gbytes_per_s\"")), 1);
    QCOMPARE(q(back.cross_vendor.method), QStringLiteral("flagcx"));
    QCOMPARE(back.links.size(), c.links.size());
}

void tst_Documents::profileRoundTrip()
{
    Profile p;
    p.name = "measured";
    p.source = "calibrated from train.log";
    p.compute = {{"H800", 2, 2, 8192, 0.004, 0.008, 0.002, 0.004}, {"MI300X", 1, 1, 4096, 0.003, 0.006, 0.0015, 0.003}};
    p.collectives = {{Collective::AllToAll, LinkClass::CrossType, 16, 33554432, 0.012, ""},
                     {Collective::ReduceScatter, LinkClass::InterNode, 4, 1048576, 0.0002, "H800"}};
    p.memory = {{"910B-376T", 4.25, 1.125}};
    p.device_efficiency = {{"H800", 0.61}, {"MI300X", 0.44}};
    p.router_imbalance = 1.42;
    const std::string once = writeProfile(p);
    const Profile back = readProfile(once, "p.json");
    QCOMPARE(q(writeProfile(back)), q(once));
    QVERIFY(back.collectives[0].primitive == Collective::AllToAll);
    QVERIFY(back.collectives[0].link == LinkClass::CrossType);
    QCOMPARE(*back.router_imbalance, 1.42);
    QVERIFY(once.find("\"all_to_all\"") != std::string::npos);
}

void tst_Documents::planRoundTrip()
{
    PlanDocument d;
    d.model = fullModel();
    d.cluster = smallCluster();
    d.plan = fullPlan();
    d.prediction = fullPrediction();
    SearchResult r;
    r.algorithm = Algorithm::MetisStyle;
    r.target = Target::Megatron;
    r.plans = {{fullPlan(), fullPrediction(), 1.75}, {fullPlan(), Prediction{}}};
    r.max_vpp = 4;
    r.interleave_cut = InterleaveCut::Cancelled;
    r.uniform_baseline = RankedPlan{fullPlan(), fullPrediction()};
    r.current = RankedPlan{fullPlan(), Prediction{}};
    r.states = 123456789012LL;
    r.pruned = {11, 22, 33};
    r.time_s = 4.5;
    r.timed_out = true;
    r.cancelled = true;
    r.no_plan_reason = "none";
    r.offload_needed = true;
    r.exact_fallback = true;
    r.exact_check = ExactCheck::Finished;
    r.optimizer_offload = OptimizerOffload::Fastest;
    r.exact_check_s = 0.75;
    r.exact_check_work = 123456;
    r.exact_check_budget = 500000;
    r.pruned_best_s = 1.25;
    d.search = r;
    d.plan.optimizer_offload_fraction = 0.25;
    d.prediction->host_memory_per_node_gib = 96.5;
    d.prediction->host_memory_capacity_gib = 512;
    d.prediction->stages[0].memory.host = 12.0 * (1ull << 30);
    d.prediction->stages[0].memory.host_capacity = 64.0 * (1ull << 30);
    d.prediction->overlap = {false, true, true, false};
    d.prediction->memory_headroom = 0.05;
    const std::string once = writePlan(d);
    const PlanDocument back = readPlan(once, "plan.json");
    QVERIFY(back.prediction->overlap == (OverlapSwitches{false, true, true, false}));
    // Selective recompute's modules, in Megatron-Core's order; a plan without them (older
    // documents) takes Megatron-Core's default, core attention.
    QCOMPARE(back.plan.stages[1].recompute_modules, recompute_module::moe_act | recompute_module::layernorm);
    QCOMPARE(nlohmann::json::parse(once)["plan"]["stages"][1]["recompute_modules"].dump(), std::string(R"(["moe_act","layernorm"])"));
    QCOMPARE(nlohmann::json::parse(once)["plan"]["stages"][0].count("recompute_modules"), std::size_t(0));
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["plan"]["stages"][1].erase("recompute_modules");
        QCOMPARE(readPlan(j.dump(), "old.json").plan.stages[1].recompute_modules, recompute_module::core_attn);
        j["plan"]["stages"][1]["recompute_modules"] = {"moe_act", "gdn_norm_out"};
        InputError e = expectError([&] { readPlan(j.dump(), "plan.json"); });
        QCOMPARE(q(e.what()), QStringLiteral("plan.json: plan.stages[1].recompute_modules[1]: expected one of core_attn, moe_act, "
                                             "layernorm, mla_up_proj, mlp, moe, shared_experts, got \"gdn_norm_out\""));
        j["plan"]["stages"][0]["recompute_modules"] = {"moe_act"};
        e = expectError([&] { readPlan(j.dump(), "plan.json"); });
        QCOMPARE(q(e.where()), QStringLiteral("plan.stages[0].recompute_modules"));
    }
    QCOMPARE(back.prediction->memory_headroom, 0.05);
    QCOMPARE(back.prediction->stages[1].param_gather, 0.0625);
    QCOMPARE(back.prediction->stages[1].beforeBarrier(), 0.5 - 0.125 - 0.0625);
    // Written before the barrier (no param_gather_s): all of the sync comes before it; a
    // value above what the sync leaves after the tied all-reduce is cut to it.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["prediction"]["stages"][1].erase("param_gather_s");
        QCOMPARE(readPlan(j.dump(), "old.json").prediction->stages[1].param_gather, 0.0);
        j["prediction"]["stages"][1]["param_gather_s"] = 9.0;
        QCOMPARE(readPlan(j.dump(), "odd.json").prediction->stages[1].param_gather, 0.375);
    }
    // A headroom above half of the memory is refused, naming the field.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["prediction"]["memory_headroom"] = 0.8;
        const InputError e = expectError([&] { readPlan(j.dump(), "plan.json"); });
        QCOMPARE(q(e.where()), QStringLiteral("prediction.memory_headroom"));
    }
    // A prediction written without the switches (older documents) takes the cost model's defaults.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["prediction"].erase("overlap");
        QVERIFY(readPlan(j.dump(), "old.json").prediction->overlap == OverlapSwitches{});
    }
    QCOMPARE(q(writePlan(back)), q(once));
    QVERIFY(back.search && back.search->uniform_baseline && back.search->current && !back.search->metis_baseline);
    QCOMPARE(back.search->states, 123456789012LL);
    QCOMPARE(back.search->plans.size(), std::size_t(2));
    // The interleaving pass: its bound, whether it was cut, and each interleaved plan's time
    // under plain 1F1B (written only for those).
    QCOMPARE(back.search->max_vpp, 4);
    QVERIFY(back.search->interleave_cut == InterleaveCut::Cancelled);
    QCOMPARE(nlohmann::json::parse(once)["search"]["interleave_cut"].get<std::string>(), std::string("cancelled"));
    QCOMPARE(back.search->plans[0].plain_time_s, 1.75);
    QCOMPARE(back.search->plans[1].plain_time_s, 0.0);
    QCOMPARE(nlohmann::json::parse(once)["search"]["alternatives"][1].count("plain_time_s"), std::size_t(0));
    QVERIFY(back.search->offload_needed);
    QVERIFY(back.search->exact_fallback);
    QVERIFY(back.search->exact_check == ExactCheck::Finished);
    QVERIFY(back.search->optimizer_offload == OptimizerOffload::Fastest);
    QCOMPARE(back.search->exact_check_s, 0.75);
    QCOMPARE(back.search->exact_check_work, 123456LL);
    QCOMPARE(back.search->exact_check_budget, 500000LL);
    // What became of the exact check: each status reads back; a document of the check's
    // first version (no status, no budget) reads "finished" from `finished`, and a check that
    // ran without finishing as stopped by its budget; `finished` must agree with the status.
    for (const ExactCheck c : {ExactCheck::WorkBudget, ExactCheck::TimeLimit, ExactCheck::Cancelled, ExactCheck::NotTriedWork,
                               ExactCheck::NotTriedTime}) {
        nlohmann::json j = nlohmann::json::parse(once);
        j["search"]["exact_check"]["status"] = toString(c);
        j["search"]["exact_check"]["finished"] = false;
        QVERIFY(readPlan(j.dump(), "plan.json").search->exact_check == c);
    }
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["search"]["exact_check"].erase("status");
        j["search"]["exact_check"].erase("budget");
        QVERIFY(readPlan(j.dump(), "old.json").search->exact_check == ExactCheck::Finished);
        j["search"]["exact_check"]["finished"] = false;
        QVERIFY(readPlan(j.dump(), "old.json").search->exact_check == ExactCheck::WorkBudget);
        j["search"]["exact_check"]["status"] = "finished";
        // The search section describes how the plan was found: one that cannot be read is
        // left out with a warning naming the field, and the plan is read.
        Warnings w;
        const PlanDocument odd = readPlan(j.dump(), "odd.json", &w);
        QVERIFY(!odd.search);
        QCOMPARE(w.size(), std::size_t(1));
        QCOMPARE(q(w[0]), QStringLiteral("odd.json: search.exact_check.finished: expected true with status \"finished\"; the search "
                                         "section is left out"));
    }
    // A search section that is not an object at all: left out the same way.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["search"] = 5;
        Warnings w;
        QVERIFY(!readPlan(j.dump(), "odd.json", &w).search);
        QCOMPARE(w.size(), std::size_t(1));
        QCOMPARE(q(w[0]), QStringLiteral("odd.json: search: expected an object, got 5; the search section is left out"));
    }
    // An alternative or a baseline that cannot be read is left out, the others kept.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["search"]["alternatives"][0]["plan"]["vpp"] = "two";
        j["search"]["baselines"]["uniform"]["plan"]["stages"][0]["tp"] = -1;
        Warnings w;
        const PlanDocument odd = readPlan(j.dump(), "odd.json", &w);
        QCOMPARE(odd.search->plans.size(), std::size_t(1));
        QVERIFY(!odd.search->uniform_baseline && odd.search->current);
        QCOMPARE(w.size(), std::size_t(2));
        QCOMPARE(q(w[0]), QStringLiteral("odd.json: search.alternatives[0].plan.vpp: expected a positive integer, got \"two\"; left out "
                                         "(the search's plans are kept for comparison only)"));
        QVERIFY(w[1].rfind("odd.json: search.baselines.uniform.plan.stages[0].tp: ", 0) == 0);
    }
    // "plan" edited by hand, no longer the search's best: read as it is, with a warning that
    // the command line and the studio would read different plans.
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["plan"] = j["search"]["alternatives"][0]["plan"];   // as hapmoe plan writes them
        j.erase("prediction");
        Warnings same;
        readPlan(j.dump(), "plan.json", &same);
        QVERIFY2(same.empty(), same.empty() ? "" : same[0].c_str());
        j["plan"]["global_batch_size"] = 2 * j["plan"]["global_batch_size"].get<int>();
        Warnings w;
        QCOMPARE(readPlan(j.dump(), "edited.json", &w).plan.global_batch_size, 2 * j["search"]["alternatives"][0]["plan"]["global_batch_size"].get<int>());
        QCOMPARE(w.size(), std::size_t(1));
        QCOMPARE(q(w[0]), QStringLiteral("edited.json: plan differs from search.alternatives[0], the search's best (edited by hand?): "
                                         "hapmoe estimate and export use \"plan\", the studio opens the search's alternatives"));
    }
    // A prediction of another plan (stages edited by hand, the old figures kept): the plan's
    // is left out with a warning, so that the studio and estimate compute it again; a search
    // alternative with one is left out (kept for comparison only).
    {
        nlohmann::json j = nlohmann::json::parse(once);
        j["prediction"]["stages"].erase(j["prediction"]["stages"].size() - 1);
        j["search"]["alternatives"][0]["prediction"]["stages"].erase(0);
        Warnings w;
        const PlanDocument odd = readPlan(j.dump(), "edited.json", &w);
        QVERIFY(!odd.prediction);
        QCOMPARE(odd.search->plans.size(), std::size_t(1));
        QVERIFY2(w.size() >= 2, w.empty() ? "" : w[0].c_str());
        const std::string n = std::to_string(odd.plan.stages.size());
        QCOMPARE(q(w[0]), QString::fromStdString("edited.json: prediction.stages: " + std::to_string(odd.plan.stages.size() - 1)
                                                 + " stages for the plan's " + n
                                                 + " (a prediction of another plan): left out, and the plan is estimated again"));
        QVERIFY2(w[1].find("search.alternatives[0].prediction.stages: expected one per stage of the plan") != std::string::npos, w[1].c_str());
    }
    // A check whose one-plan pass finished and whose K-plan pass stopped: plan #1 is exact.
    {
        PlanDocument best = d;
        best.search->exact_check = ExactCheck::TimeLimit;
        best.search->exact_check_best = true;
        const std::string text = writePlan(best);
        QVERIFY(nlohmann::json::parse(text)["search"]["exact_check"]["best_exact"].get<bool>());
        QVERIFY(readPlan(text, "plan.json").search->exact_check_best);
        QVERIFY(!back.search->exact_check_best);
        QVERIFY(nlohmann::json::parse(once)["search"]["exact_check"].count("best_exact") == 0);
        // Only with a check that stopped: with "finished" the search section is left out.
        nlohmann::json j = nlohmann::json::parse(once);
        j["search"]["exact_check"]["best_exact"] = true;
        Warnings w;
        QVERIFY(!readPlan(j.dump(), "odd.json", &w).search);
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY2(w[0].rfind("odd.json: search.exact_check.best_exact: expected only with a check that stopped", 0) == 0, w[0].c_str());
    }
    // The device types the plan was costed with beyond the built-in catalog ("devices"): none
    // here, so no key; a replaced H800 and a new type read back as written, and a bad figure
    // is named by its path, as in a hapmoe.devices file.
    {
        QVERIFY(nlohmann::json::parse(once).count("devices") == 0);
        QVERIFY(back.devices.empty());
        const DeviceCatalog& cat = DeviceCatalog::builtin();
        QVERIFY(typesBeyondBuiltin(d.cluster, cat).empty());
        DeviceType h800 = *cat.find("H800");
        h800.bf16_tflops = 600;
        DeviceType x100 = h800;
        x100.name = "X100";
        x100.aliases.clear();
        DeviceCatalog own = cat;
        own.merge(DeviceCatalog({h800, x100}));
        Cluster c = d.cluster;
        c.nodes.front().device_type = "h800";   // an alias: the entry is the type's own
        c.nodes.back().device_type = "X100";
        const std::vector<DeviceType> beyond = typesBeyondBuiltin(c, own);
        QCOMPARE(beyond.size(), std::size_t(2));   // H800 replaced and X100; 910B as built in
        QCOMPARE(beyond.front().name, std::string("H800"));
        QCOMPARE(beyond.front().bf16_tflops, 600.0);
        PlanDocument withDevices = d;
        withDevices.cluster = c;
        withDevices.devices = beyond;
        const std::string text = writePlan(withDevices);
        const PlanDocument read = readPlan(text, "own.json");
        QCOMPARE(read.devices.size(), beyond.size());
        QCOMPARE(read.devices.back().name, beyond.back().name);
        QCOMPARE(readDocumentDevices(text, "own.json").front().bf16_tflops, 600.0);
        QCOMPARE(q(writePlan(read)), q(text));
        nlohmann::json j = nlohmann::json::parse(text);
        j["devices"][0]["memory_gib"] = -1;
        const InputError e = expectError([&] { readPlan(j.dump(), "own.json"); });
        QCOMPARE(q(e.file()), QStringLiteral("own.json"));
        QCOMPARE(q(e.where()), QStringLiteral("devices[0].memory_gib"));
    }
    // A search whose check was off writes no exact_check.
    {
        PlanDocument off = d;
        off.search->exact_check = ExactCheck::Off;
        QVERIFY(writePlan(off).find("exact_check") == std::string::npos);
    }
    QCOMPARE(back.search->pruned_best_s, 1.25);
    QCOMPARE(back.prediction->host_memory_capacity_gib, 512.0);
    QCOMPARE(back.prediction->stages[0].memory.host_capacity, 64.0 * (1ull << 30));
    QCOMPARE(back.plan.optimizer_offload_fraction, 0.25);
    QCOMPARE(back.prediction->host_memory_per_node_gib, 96.5);
    QCOMPARE(back.prediction->stages[0].memory.host, 12.0 * (1ull << 30));
    // A plan without offload leaves the key out (documents written before it read the same).
    QVERIFY(writePlan(PlanDocument{d.model, d.cluster, fullPlan(), std::nullopt, std::nullopt, {}}).find("optimizer_offload_fraction")
            == std::string::npos);
    // Memory is stored in GiB and read back to bytes: 10.5 GiB of weights.
    QCOMPARE(back.prediction->stages[0].memory.weights, 10.5 * (1ull << 30));
    QCOMPARE(back.prediction->stages[0].memory.total(), (10.5 + 5.25 + 21 + 12 + 1.5 + 3) * (1ull << 30));
    // The contract's key names.
    for (const char* key : {"\"iteration_time_s\"", "\"data_parallel_sync\"", "\"memory_gib\"", "\"t_fwd_s\"", "\"p2p_s\"",
                            "\"metis_style\"", "\"alternatives\"", "\"first_local\"", "\"recompute_layers\"", "\"edp\""})
        QVERIFY2(once.find(key) != std::string::npos, key);
}

void tst_Documents::projectRoundTrip()
{
    Project p;
    p.name = "my project";
    p.model = fullModel();
    p.cluster = smallCluster();
    p.search = {Target::Megatron, Algorithm::Exhaustive, 3, 0.3, 1.5, 12, true, OptimizerOffload::Always, 0.1};
    p.plans = {{fullPlan(), fullPrediction(), SavedPlan::Source::Search, 2.5}, {fullPlan(), std::nullopt, SavedPlan::Source::Current}};
    p.current_script = "/home/me/train.sh";
    const std::string once = writeProject(p);
    const Project back = readProject(once, "p.hapmoe");
    QCOMPARE(q(writeProject(back)), q(once));
    QVERIFY(back.plans[0].prediction.has_value());
    QVERIFY(!back.plans[1].prediction.has_value());
    // An interleaved plan keeps its plain-1F1B time (written only for such plans).
    QCOMPARE(back.plans[0].plain_time_s, 2.5);
    QCOMPARE(back.plans[1].plain_time_s, 0.0);
    QCOMPARE(nlohmann::json::parse(once)["plans"][1].count("plain_time_s"), std::size_t(0));
    // Where each plan comes from: a search, or the configuration the user runs today.
    QVERIFY(back.plans[0].source == SavedPlan::Source::Search);
    QVERIFY(back.plans[1].source == SavedPlan::Source::Current);
    // And the search's baselines, by their names in the file.
    {
        Project withBaselines = p;
        withBaselines.plans.push_back({fullPlan(), fullPrediction(), SavedPlan::Source::Uniform});
        withBaselines.plans.push_back({fullPlan(), fullPrediction(), SavedPlan::Source::MetisStyle});
        const std::string text = writeProject(withBaselines);
        QCOMPARE(nlohmann::json::parse(text)["plans"][2]["source"].get<std::string>(), std::string("uniform"));
        QCOMPARE(nlohmann::json::parse(text)["plans"][3]["source"].get<std::string>(), std::string("metis_style"));
        const Project read = readProject(text, "b.hapmoe");
        QVERIFY(read.plans[2].source == SavedPlan::Source::Uniform);
        QVERIFY(read.plans[3].source == SavedPlan::Source::MetisStyle);
        QCOMPARE(q(writeProject(read)), q(text));
    }
    // A file without "source" (written before it existed) reads as search plans, silently;
    // an unknown source names the entry.
    nlohmann::json j = nlohmann::json::parse(once);
    j["plans"][1].erase("source");
    Warnings warnings;
    QVERIFY(readProject(j.dump(), "old.hapmoe", &warnings).plans[1].source == SavedPlan::Source::Search);
    QVERIFY(warnings.empty());
    j["plans"][1]["source"] = "yesterday";
    const InputError e = expectError([&] { readProject(j.dump(), "p.hapmoe"); });
    QCOMPARE(q(e.where()), QStringLiteral("plans[1].source"));
    QVERIFY(back.search.algorithm == Algorithm::Exhaustive);
    QCOMPARE(back.search.top_k, 3);
    QVERIFY(back.search.optimizer_offload == OptimizerOffload::Always);
    QCOMPARE(back.search.memory_headroom, 0.1);
    // The "fastest" offload policy is written and read by its name.
    Project fastest = p;
    fastest.search.optimizer_offload = OptimizerOffload::Fastest;
    const std::string fastestText = writeProject(fastest);
    QVERIFY(fastestText.find("\"optimizer_offload\": \"fastest\"") != std::string::npos);
    QVERIFY(readProject(fastestText, "p.hapmoe").search.optimizer_offload == OptimizerOffload::Fastest);
    // Searching the micro-batch sizes: off by default (files written before it read so),
    // written and read back when on.
    QVERIFY(!back.search.search_micro_batch);
    Project sizes = p;
    sizes.search.search_micro_batch = true;
    const std::string sizesText = writeProject(sizes);
    QVERIFY(sizesText.find("\"search_micro_batch\": true") != std::string::npos);
    QVERIFY(readProject(sizesText, "p.hapmoe").search.search_micro_batch);
    nlohmann::json old = nlohmann::json::parse(sizesText);
    old["search"].erase("search_micro_batch");
    Warnings none;
    QVERIFY(!readProject(old.dump(), "old.hapmoe", &none).search.search_micro_batch);
    QVERIFY(none.empty());
    // The interleaving bound: 1 by default (files written before it read so), written and
    // read back; 0 or above kMaxVpp refused, naming the field.
    QCOMPARE(back.search.max_vpp, 1);
    Project deep = p;
    deep.search.max_vpp = 4;
    const std::string deepText = writeProject(deep);
    QVERIFY(deepText.find("\"max_vpp\": 4") != std::string::npos);
    QCOMPARE(readProject(deepText, "p.hapmoe").search.max_vpp, 4);
    old = nlohmann::json::parse(deepText);
    old["search"].erase("max_vpp");
    QCOMPARE(readProject(old.dump(), "old.hapmoe", &none).search.max_vpp, 1);
    QVERIFY(none.empty());
    for (const int bad : {0, kMaxVpp + 1}) {
        old["search"]["max_vpp"] = bad;
        const InputError e = expectError([&] { readProject(old.dump(), "p.hapmoe"); });
        QCOMPARE(q(e.where()), QStringLiteral("search.max_vpp"));
    }
    // The project's own device types ("devices", the hapmoe.devices layout): none, no key; a
    // built-in type with other figures and a new one read back as written, and cost the
    // project through catalogWith. An alias that names another type, or a bad figure, is
    // refused naming its path.
    QCOMPARE(nlohmann::json::parse(once).count("devices"), std::size_t(0));
    QVERIFY(back.devices.empty());
    {
        Project own = p;
        DeviceType h800 = *DeviceCatalog::builtin().find("H800");
        h800.bf16_tflops = 600;
        DeviceType x100 = h800;
        x100.name = "X100";
        x100.aliases = {"x-100"};
        own.devices = {h800, x100};
        const std::string text = writeProject(own);
        const Project read = readProject(text, "own.hapmoe");
        QCOMPARE(q(writeProject(read)), q(text));
        QCOMPARE(read.devices.size(), std::size_t(2));
        QCOMPARE(readDocumentDevices(text, "own.hapmoe").back().name, std::string("X100"));
        const DeviceCatalog catalog = catalogWith(read.devices, "own.hapmoe");
        QCOMPARE(catalog.find("H800")->bf16_tflops, 600.0);
        QCOMPARE(catalog.find("x-100")->name, std::string("X100"));
        QCOMPARE(catalog.types().size(), DeviceCatalog::builtin().types().size() + 1);   // H800 replaced, X100 added
        nlohmann::json bad = nlohmann::json::parse(text);
        bad["devices"][1]["aliases"] = {"910B"};   // the built-in 910B-376T's alias
        InputError e = expectError([&] { readProject(bad.dump(), "own.hapmoe"); });
        QCOMPARE(q(e.file()), QStringLiteral("own.hapmoe"));
        QCOMPARE(q(e.where()), QStringLiteral("devices[1].aliases"));
        bad = nlohmann::json::parse(text);
        bad["devices"][0]["bf16_tflops"] = 0;
        e = expectError([&] { readProject(bad.dump(), "own.hapmoe"); });
        QCOMPARE(q(e.where()), QStringLiteral("devices[0].bf16_tflops"));
    }
}

void tst_Documents::exampleProjectLoads()
{
    const std::string text = readTextFile(std::string(HAPMOE_SOURCE_DIR) + "/resources/examples/example.hapmoe");
    const Project p = readProject(text, "example.hapmoe");
    validateModel(p.model, "example.hapmoe");
    validateCluster(p.cluster, DeviceCatalog::builtin(), "example.hapmoe");
    QCOMPARE(q(p.model.name), QStringLiteral("Mixtral-S"));
    QCOMPARE(p.cluster.totalDevices(), 32);
}

void tst_Documents::defaultImbalanceCappedByExperts()
{
    // 2 experts, top-2: every token goes to both, so the max over mean load is E / k = 1. The
    // default imbalance 1.2 is capped there (a file without router_imbalance used to be
    // refused); a value given above E / k stays an error.
    const std::string head = R"({"format": "hapmoe.model", "version": 2, "name": "two", "num_layers": 2, "hidden_size": 512,
        "num_attention_heads": 8, "vocab_size": 1000, "seq_length": 256, "num_experts": 2, "moe_router_topk": 2)";
    const ModelSpec m = readModel(head + "}", "two.json");
    QCOMPARE(m.training.router_imbalance, 1.0);
    validateModel(m, "two.json");
    const ModelSpec eight = readModel(R"({"format": "hapmoe.model", "version": 2, "name": "eight", "num_layers": 2,
        "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 1000, "seq_length": 256, "num_experts": 8, "moe_router_topk": 2})",
                                      "eight.json");
    QCOMPARE(eight.training.router_imbalance, 1.2);   // below E / k = 4: the default as it is
    const ModelSpec given = readModel(head + R"(, "training": {"router_imbalance": 1.2}})", "given.json");
    QVERIFY_THROWS_EXCEPTION(InputError, validateModel(given, "given.json"));
}

void tst_Documents::migratesModelV1()
{
    // tests/data/foundation/model-v1.json: training settings at the top level, "fp16": true.
    Warnings w;
    const ModelSpec m = readModel(dataFile("model-v1.json"), "model-v1.json", &w);
    QCOMPARE(m.training.micro_batch_size, 2);
    QCOMPARE(m.training.global_batch_size, 512);
    QVERIFY(m.training.precision == Precision::FP16);
    QCOMPARE(m.training.use_distributed_optimizer, false);
    QCOMPARE(m.training.router_imbalance, 1.5);
    QCOMPARE(m.training.imbalance_weight, 0.5);
    QCOMPARE(w.size(), std::size_t(1));
    QVERIFY(q(w[0]).contains("migrated from hapmoe.model version 1 to 2"));
    // Written back as version 2, which reads without a migration.
    Warnings w2;
    readModel(writeModel(m), "again.json", &w2);
    QVERIFY(w2.empty());
}

void tst_Documents::migratesClusterV1()
{
    // tests/data/foundation/cluster-v1.json: "gpus", "type", link bandwidth 3200 and 800 Gb/s.
    Warnings w;
    const Cluster c = readCluster(dataFile("cluster-v1.json"), "cluster-v1.json", &w);
    QCOMPARE(c.nodes[0].count, 8);
    QCOMPARE(q(c.nodes[1].device_type), QStringLiteral("910B"));
    QCOMPARE(c.links[0].bandwidth_gbytes_per_s, 400.0);   // 3200 Gb/s / 8
    QCOMPARE(c.links[1].bandwidth_gbytes_per_s, 100.0);   // 800 Gb/s / 8
    QCOMPARE(w.size(), std::size_t(1));
}

void tst_Documents::migratedErrorsNameTheKeyAsWritten()
{
    // An error in a version-1 file names the key the file has, not its version-2 name, and
    // quotes the value as written.
    auto modelV1 = [](const char* edit) {
        nlohmann::json j = nlohmann::json::parse(dataFile("model-v1.json"));
        j.merge_patch(nlohmann::json::parse(edit));
        return j.dump();
    };
    InputError e = expectError([&] { readModel(modelV1(R"({"micro_batch_size": -2})"), "m1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("model.micro_batch_size"));
    QVERIFY2(q(e.detail()).contains("got -2"), e.what());
    e = expectError([&] { readModel(modelV1(R"({"fp16": "yes"})"), "m1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("model.fp16"));
    QCOMPARE(q(e.detail()), QStringLiteral("expected true or false, got \"yes\""));
    e = expectError([&] { readModel(modelV1(R"({"training": {"global_batch_size": 64}})"), "m1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("model.global_batch_size"));
    QVERIFY(q(e.detail()).contains("keep one"));

    auto clusterV1 = [](const char* edit) {
        nlohmann::json j = nlohmann::json::parse(dataFile("cluster-v1.json"));
        nlohmann::json patch = nlohmann::json::parse(edit);
        for (auto it = patch.begin(); it != patch.end(); ++it)
            j[nlohmann::json::json_pointer(it.key())] = it.value();
        return j.dump();
    };
    e = expectError([&] { readCluster(clusterV1(R"({"/nodes/1/gpus": -8})"), "c1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.nodes[1].gpus"));
    QVERIFY2(q(e.detail()).contains("got -8"), e.what());
    // A rate that is no rate is not divided by 8: the message quotes -800, not -100.
    e = expectError([&] { readCluster(clusterV1(R"({"/links/1/bandwidth_gbit": -800})"), "c1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.links[1].bandwidth_gbit"));
    QVERIFY2(q(e.detail()).contains("got -800"), e.what());
    e = expectError([&] { readCluster(clusterV1(R"({"/nodes/0/count": 8})"), "c1.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.nodes[0].gpus"));
    QVERIFY(q(e.detail()).contains("keep one"));
    // A file already in version 2 keeps its paths.
    nlohmann::json v2 = nlohmann::json::parse(writeCluster(smallCluster()));
    v2["nodes"][0]["count"] = -8;
    e = expectError([&] { readCluster(v2.dump(), "c2.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.nodes[0].count"));
}

void tst_Documents::migratedChecksNameTheKeyAsWritten()
{
    // validateModel's and validateCluster's errors on a version-1 file name its keys too:
    // readValidModel and readValidCluster run them where the migration's renames are known.
    nlohmann::json m = nlohmann::json::parse(dataFile("model-v1.json"));
    m["micro_batch_size"] = 3;   // 512 is not a multiple of 3
    InputError e = expectError([&] { readValidModel(m.dump(), "m1.json"); });
    QCOMPARE(q(e.what()), QStringLiteral("m1.json: model.global_batch_size: must be divisible by micro_batch_size (3), got 512"));
    // The same model as version 2 keeps its own path.
    e = expectError([&] { readValidModel(writeModel(readModel(m.dump(), "m1.json")), "m2.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("model.training.global_batch_size"));
    // A valid file reads as readModel reads it.
    QCOMPARE(readValidModel(dataFile("model-v1.json"), "m1.json").training.global_batch_size, 512);

    nlohmann::json c = nlohmann::json::parse(dataFile("cluster-v1.json"));
    c["nodes"][1]["gpus"] = kMaxDevicesPerNode + 1;
    e = expectError([&] { readValidCluster(c.dump(), "c1.json", DeviceCatalog::builtin()); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.nodes[1].gpus"));
    QVERIFY2(q(e.detail()).contains("at most 4096"), e.what());

    // resolveModel, behind the command line's --model FILE, reads files the same way.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("m1.json")).toStdString();
    saveFileAtomically(path, m.dump());
    e = expectError([&] { resolveModel(path); });
    QCOMPARE(q(e.where()), QStringLiteral("model.global_batch_size"));
}

void tst_Documents::migrationTakesNullAsMissing()
{
    // A null value counts as missing (docs/formats.md): beside the key's version-2 form it is
    // no second value, and the version-2 value is read.
    nlohmann::json m = nlohmann::json::parse(dataFile("model-v1.json"));
    m["micro_batch_size"] = nullptr;
    m["training"] = {{"micro_batch_size", 4}};
    QCOMPARE(readValidModel(m.dump(), "m1null.json").training.micro_batch_size, 4);
    // A null version-2 value gives way to the version-1 key's.
    m["micro_batch_size"] = 8;
    m["training"] = {{"micro_batch_size", nullptr}};
    QCOMPARE(readModel(m.dump(), "m1.json").training.micro_batch_size, 8);

    nlohmann::json c = nlohmann::json::parse(dataFile("cluster-v1.json"));
    c["nodes"][0]["gpus"] = nullptr;
    c["nodes"][0]["count"] = 4;
    c["links"][0]["bandwidth_gbit"] = nullptr;
    c["links"][0]["bandwidth_gbytes_per_s"] = 50;
    const Cluster back = readCluster(c.dump(), "c1null.json");
    QCOMPARE(back.nodes[0].count, 4);
    QCOMPARE(back.links[0].bandwidth_gbytes_per_s, 50.0);   // as written: no Gb/s to convert
}

void tst_Documents::documentVersionAsTheReadersTakeIt()
{
    // What `hapmoe validate` prints: the version the file has and the one it was migrated to.
    nlohmann::json m = nlohmann::json::parse(dataFile("model-v1.json"));
    m["version"] = 1.0;   // a whole number, which the readers take as 1
    DocumentVersion v = documentVersion(m.dump(), "m.json");
    QCOMPARE(q(v.format), QStringLiteral("hapmoe.model"));
    QCOMPARE(v.version, 1);
    QCOMPARE(v.current, 2);
    readModel(m.dump(), "m.json");   // and the reader agrees
    v = documentVersion(writeCluster(smallCluster()), "c.json");
    QCOMPARE(v.version, 2);
    QCOMPARE(v.current, 2);
    v = documentVersion(R"({"format": "hapmoe.project", "version": 1})", "p.hapmoe");
    QCOMPARE(v.version, 1);
    QCOMPARE(v.current, 1);
    // A version the readers refuse is none; the reader says why.
    v = documentVersion(R"({"format": "hapmoe.model", "version": 1.5})", "m.json");
    QCOMPARE(v.version, 0);
    QCOMPARE(q(expectError([] { documentVersion("{\"version\": 1}", "x.json"); }).where()), QStringLiteral("format"));
}

void tst_Documents::projectKeepsScriptInputs()
{
    // What the imported script is read with (`NODES=4 bash train.sh 70B "a b"`) goes with its path.
    Project p;
    p.name = "scripted";
    p.model = fullModel();
    p.cluster = smallCluster();
    p.current_script = "/home/me/train.sh";
    p.current_script_inputs.arguments = {"70B", "a b", ""};
    p.current_script_inputs.environment = {{"NNODES", "4"}, {"_MODE", "x=y \"z\""}};
    const std::string once = writeProject(p);
    const Project back = readProject(once, "p.hapmoe");
    QCOMPARE(q(writeProject(back)), q(once));
    QVERIFY(back.current_script_inputs == p.current_script_inputs);
    QCOMPARE(back.current_script_inputs.arguments.size(), std::size_t(3));
    QCOMPARE(q(back.current_script_inputs.arguments[1]), QStringLiteral("a b"));
    QCOMPARE(q(back.current_script_inputs.environment.at("_MODE")), QStringLiteral("x=y \"z\""));
    const nlohmann::json j = nlohmann::json::parse(once);
    QCOMPARE(q(j["current_script_inputs"]["arguments"][0].get<std::string>()), QStringLiteral("70B"));
    QCOMPARE(q(j["current_script_inputs"]["environment"]["NNODES"].get<std::string>()), QStringLiteral("4"));

    // Without inputs (every project before the key) the key is not written, and a file
    // without it, or with null, or with either member alone, reads as given.
    Project plain = p;
    plain.current_script_inputs = {};
    const std::string plainText = writeProject(plain);
    QVERIFY(plainText.find("current_script_inputs") == std::string::npos);
    Warnings warnings;
    const Project old = readProject(plainText, "old.hapmoe", &warnings);
    QVERIFY(old.current_script_inputs.empty());
    QVERIFY(warnings.empty());
    QCOMPARE(q(writeProject(old)), q(plainText));
    nlohmann::json none = j;
    none["current_script_inputs"] = nullptr;
    QVERIFY(readProject(none.dump(), "null.hapmoe").current_script_inputs.empty());
    nlohmann::json argsOnly = j;
    argsOnly["current_script_inputs"].erase("environment");
    const Project a = readProject(argsOnly.dump(), "args.hapmoe");
    QCOMPARE(a.current_script_inputs.arguments.size(), std::size_t(3));
    QVERIFY(a.current_script_inputs.environment.empty());

    // Strict as the other keys: a value that is no string, a name the shell takes for no
    // variable, each named by its JSON path.
    nlohmann::json bad = j;
    bad["current_script_inputs"]["arguments"][1] = 70;
    InputError e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.file()), QStringLiteral("bad.hapmoe"));
    QCOMPARE(q(e.where()), QStringLiteral("current_script_inputs.arguments[1]"));
    bad = j;
    bad["current_script_inputs"]["environment"]["1BAD"] = "x";
    e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.where()), QStringLiteral("current_script_inputs.environment.1BAD"));
    bad = j;
    bad["current_script_inputs"]["environment"]["NNODES"] = 4;
    e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.where()), QStringLiteral("current_script_inputs.environment.NNODES"));
    bad = j;
    bad["current_script_inputs"]["arguments"] = "70B";
    e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.where()), QStringLiteral("current_script_inputs.arguments"));
}

void tst_Documents::projectKeepsItsProfile()
{
    // The project holds the measured profile its searches use, as a hapmoe.profile's fields,
    // and the file it was loaded from.
    Project p;
    p.name = "profiled";
    p.model = fullModel();
    p.cluster = smallCluster();
    Profile prof;
    prof.name = "H800 at half";
    prof.source = "calibrated from train.log";
    prof.compute = {{"H800", 2, 1, 8192, 0.004, 0.008, 0.002, 0.004}};
    prof.collectives = {{Collective::AllToAll, LinkClass::CrossType, 16, 33554432, 0.012, ""}};
    prof.memory = {{"910B-376T", 4.25, 1.125}};
    prof.device_efficiency = {{"H800", 0.25}};
    prof.router_imbalance = 1.42;
    p.profile = prof;
    p.profile_file = "/home/me/h800.profile.json";
    const std::string once = writeProject(p);
    const Project back = readProject(once, "p.hapmoe");
    QCOMPARE(q(writeProject(back)), q(once));
    QVERIFY(back.profile.has_value());
    QCOMPARE(q(writeProfile(*back.profile)), q(writeProfile(prof)));
    QCOMPARE(q(back.profile_file), QStringLiteral("/home/me/h800.profile.json"));
    // Embedded without format and version, as the model and the cluster are.
    const nlohmann::json j = nlohmann::json::parse(once);
    QVERIFY(!j["profile"].contains("format"));
    QCOMPARE(j["profile"]["device_efficiency"]["H800"].get<double>(), 0.25);

    // A project without a profile (every project before the key) reads as before and writes
    // no profile key.
    Project plain = p;
    plain.profile.reset();
    plain.profile_file.clear();
    Warnings warnings;
    const Project old = readProject(writeProject(plain), "old.hapmoe", &warnings);
    QVERIFY(!old.profile.has_value());
    QVERIFY(warnings.empty());
    QVERIFY(writeProject(plain).find("\"profile\":") == std::string::npos);
    // "profile": null counts as missing.
    nlohmann::json none = nlohmann::json::parse(writeProject(plain));
    none["profile"] = nullptr;
    QVERIFY(!readProject(none.dump(), "null.hapmoe").profile.has_value());

    // Read and checked as a profile file: errors name the project's path of the field.
    nlohmann::json bad = j;
    bad["profile"]["compute"][0]["tokens"] = 0;
    InputError e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.file()), QStringLiteral("bad.hapmoe"));
    QCOMPARE(q(e.where()), QStringLiteral("profile.compute[0].tokens"));
    bad = j;
    bad["profile"]["device_efficiency"]["H800"] = 1.5;
    e = expectError([&] { readProject(bad.dump(), "bad.hapmoe"); });
    QCOMPARE(q(e.where()), QStringLiteral("profile.device_efficiency.H800"));
    // validateProfile, which needs the catalog, with the project's file: "h800" and "H800" are
    // one device type.
    bad = j;
    bad["profile"]["device_efficiency"]["h800"] = 0.5;
    const Project twice = readProject(bad.dump(), "twice.hapmoe");
    e = expectError([&] { validateProfile(*twice.profile, DeviceCatalog::builtin(), "twice.hapmoe"); });
    QVERIFY2(q(e.where()).startsWith(QStringLiteral("profile.device_efficiency.")), e.what());
    // An entry for a type the catalog does not know is named, not refused.
    Profile unknown = prof;
    unknown.memory.push_back({"H900", 1, 1});
    const Warnings unused = profileWarnings(unknown, DeviceCatalog::builtin(), "u.json");
    QCOMPARE(unused.size(), std::size_t(1));
    QCOMPARE(q(unused[0]), QStringLiteral("u.json: profile.memory[1].device_type: unknown device type \"H900\"; the entry is not used"));
    // Times that fall as the work grows, in the order of the work whatever the file's order,
    // and a fractional byte count: each named, with both points of a falling pair.
    Profile odd;
    odd.compute.push_back({"H800", 1, 1, 8192, 0.020, 0.040, 0, 0});
    odd.compute.push_back({"h800", 1, 1, 4096, 0.025, 0.030, 0, 0});
    odd.collectives.push_back({Collective::AllReduce, LinkClass::IntraNode, 8, 1048576, 0.0002, ""});
    odd.collectives.push_back({Collective::AllReduce, LinkClass::IntraNode, 8, 2097152.5, 0.0001, ""});
    const Warnings w = profileWarnings(odd, DeviceCatalog::builtin(), "odd.json");
    QCOMPARE(w.size(), std::size_t(3));
    QCOMPARE(q(w[0]), QStringLiteral("odd.json: profile.compute[0].dense_layer_fwd_s: 0.02 s for 8192 tokens is less than "
                                     "compute[1]'s 0.025 s for 4096; expected times that grow with the tokens (a measurement to repeat)"));
    QCOMPARE(q(w[1]), QStringLiteral("odd.json: profile.collectives[1].bytes: 2097152.5 is not a whole number of bytes"));
    QVERIFY2(q(w[2]).startsWith(QStringLiteral("odd.json: profile.collectives[1].time_s: 0.0001 s for 2097152.5 bytes is less than collectives[0]'s 0.0002 s")),
             w[2].c_str());
    // A profile that holds nothing the cost model uses (a file whose only key was misspelled
    // and ignored) is valid, and said to change nothing; one with just a rho is not empty.
    Profile nothing;
    const Warnings emptyProfile = profileWarnings(nothing, DeviceCatalog::builtin(), "e.json");
    QCOMPARE(emptyProfile.size(), std::size_t(1));
    QVERIFY2(q(emptyProfile[0]).startsWith(QStringLiteral("e.json: profile: no compute or collective table")), emptyProfile[0].c_str());
    nothing.router_imbalance = 1.3;
    QVERIFY(profileWarnings(nothing, DeviceCatalog::builtin(), "e.json").empty());
}

void tst_Documents::longValuesInErrorsAreCut()
{
    // A number of 100,000 digits (beyond a double) where a number of layers belongs: the error
    // says where it is and shows the start and end of the number, not all of it.
    nlohmann::json j = nlohmann::json::parse(writeModel(*findModelPreset("Mixtral-S")));
    std::string text = j.dump();
    const std::string layers = "\"num_layers\":24";
    QVERIFY(text.find(layers) != std::string::npos);
    text.replace(text.find(layers), layers.size(), "\"num_layers\":" + std::string(100000, '7'));
    try {
        readModel(text, "long.json");
        QFAIL("a string of digits was taken as a layer count");
    } catch (const InputError& e) {
        const std::string what = e.what();
        QVERIFY2(what.size() < 4000, qPrintable(QString::number(what.size())));
        QVERIFY2(what.rfind("long.json: line 1, column ", 0) == 0, what.substr(0, 200).c_str());
        QVERIFY2(what.find("malformed JSON: the number 7777") != std::string::npos, what.substr(0, 200).c_str());
        QVERIFY2(what.find("characters left out") != std::string::npos, what.substr(0, 200).c_str());
    }
    // Cut between UTF-8 characters, and counted in characters: 3,000 two-byte "é".
    std::string accents;
    for (int i = 0; i < 3000; ++i)
        accents += "\xc3\xa9";
    const InputError e("f", "w", accents);
    QVERIFY(QString::fromUtf8(e.what()).toUtf8() == QByteArray(e.what()));   // valid UTF-8
    QVERIFY2(std::string(e.what()).find("(2360 characters left out)") != std::string::npos, e.what());
}

void tst_Documents::misspeltKeysAreRefused()
{
    // A key near a known one would have its default taken in silence: "num_expert" read a
    // 128-expert model as dense. Refused, naming the key meant (docs/formats.md).
    const std::string base = dataFile("model-unknown-keys.json");
    auto refusal = [&](const std::string& from, const std::string& to) {
        std::string text = base;
        const std::size_t at = text.find("\"" + from + "\"");
        if (at == std::string::npos)
            return std::string("no key ") + from;
        text.replace(at, from.size() + 2, "\"" + to + "\"");
        try {
            readModel(text, "m.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("read");
    };
    // One edit away, letters written another way, the key cut short before a word.
    QCOMPARE(q(refusal("num_experts", "num_expert")),
             QStringLiteral("m.json: model.num_expert: unknown key; did you mean \"num_experts\"? (a misspelt key would be "
                            "ignored and the default taken)"));
    QVERIFY(q(refusal("moe_router_topk", "moe_router_top_k")).contains("did you mean \"moe_router_topk\""));
    QVERIFY(q(refusal("num_layers", "numLayers")).contains("model.numLayers: unknown key; did you mean \"num_layers\""));
    QVERIFY(q(refusal("global_batch_size", "global_batch")).contains("model.training.global_batch: unknown key; did you mean "
                                                                     "\"global_batch_size\""));
    // Far from every known key: a warning, as before (unknownKeysWarn).
    Warnings w;
    readModel(base, "m.json", &w);
    QVERIFY(q(w[0]).contains("model.rope_theta: unknown key ignored"));

    // A training setting beside the shape (version 1's place, Megatron-LM's flat flags).
    {
        std::string text = base;
        text.replace(text.find('{'), 1, "{\"global_batch_size\": 2048, ");
        QVERIFY_THROWS_EXCEPTION(InputError, readModel(text, "m.json"));
        try {
            readModel(text, "m.json");
        } catch (const InputError& e) {
            QCOMPARE(q(e.where()), QStringLiteral("model.global_batch_size"));
            QVERIFY(q(e.detail()).startsWith(QStringLiteral("expected under \"training\"")));
        }
    }
    // A dense model with the sizes of a MoE one (num_experts 0 or left out).
    {
        std::string text = base;
        const std::size_t at = text.find("\"num_experts\"");
        text.replace(at, text.find(',', at) - at, "\"num_experts\": 0");
        try {
            readModel(text, "m.json");
            QFAIL("a dense model with moe_ffn_hidden_size read");
        } catch (const InputError& e) {
            QCOMPARE(q(e.where()), QStringLiteral("model.num_experts"));
            QVERIFY2(q(e.detail()).startsWith(QStringLiteral("expected at least 1 for a model with moe_ffn_hidden_size")), e.what());
        }
    }
}

void tst_Documents::unknownKeysWarn()
{
    Warnings w;
    const ModelSpec m = readModel(dataFile("model-unknown-keys.json"), "u.json", &w);
    QCOMPARE(q(m.name), QStringLiteral("Mixtral-S"));
    QCOMPARE(w.size(), std::size_t(2));
    QVERIFY(q(w[0]).contains("model.rope_theta: unknown key ignored"));
    QVERIFY(q(w[1]).contains("model.training.lr: unknown key ignored"));

    // 30 more unknown keys, one of 5000 characters: twenty are named (the long one quoted and
    // cut to 60 characters), the other ten counted in one line.
    std::string text = dataFile("model-unknown-keys.json");
    std::string extra = "{\"" + std::string(5000, 'a') + "\": 1";
    for (int i = 0; i < 29; ++i)
        extra += ", \"x" + std::to_string(10 + i) + "\": 1";
    text.replace(text.find('{'), 1, extra + ", ");
    Warnings many;
    readModel(text, "u.json", &many);
    QCOMPARE(many.size(), std::size_t(22));   // 20 at the top, its count, training.lr
    QVERIFY2(q(many[0]).startsWith(QStringLiteral("u.json: model.\"aaaa")) && many[0].size() < 150, many[0].c_str());
    QCOMPARE(q(many[20]), QStringLiteral("u.json: model: 11 more unknown keys ignored"));
}

void tst_Documents::newerVersionRefused()
{
    const InputError e = expectError([] {
        readCluster(R"({"format": "hapmoe.cluster", "version": 3, "nodes": []})", "future.json");
    });
    QCOMPARE(q(e.where()), QStringLiteral("version"));
    QVERIFY(q(e.detail()).contains("newer"));
}

void tst_Documents::wrongFormatRefused()
{
    const InputError e = expectError([] { readModel(writeCluster(smallCluster()), "c.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("format"));
    QCOMPARE(q(e.detail()), QStringLiteral("expected \"hapmoe.model\", got \"hapmoe.cluster\""));
}

void tst_Documents::errorsNameFileAndPath()
{
    std::string text = writeCluster(smallCluster());
    const auto pos = text.find("\"count\": 8", text.find("\"id\": 2"));
    text.replace(pos, 10, "\"count\": -8");
    const InputError e = expectError([&] { readCluster(text, "bad.json"); });
    QCOMPARE(q(e.what()), QStringLiteral("bad.json: cluster.nodes[2].count: expected a positive integer, got -8"));
}

void tst_Documents::malformedJsonGivesLineAndColumn()
{
    const InputError e = expectError([] { readModel("{\n  \"format\": \"hapmoe.model\",\n  \"version\": 2,,\n}", "m.json"); });
    // Line 3 is `  "version": 2,,`: 2 spaces, 10 characters of "version":, a space, "2", a comma
    // (column 15); the offending second comma is column 16.
    QCOMPARE(q(e.where()), QStringLiteral("line 3, column 16"));
    QVERIFY(q(e.detail()).startsWith("malformed JSON"));
}

void tst_Documents::detectFormat_()
{
    QCOMPARE(q(detectFormat(writeProfile(Profile{}), "p")), QStringLiteral("hapmoe.profile"));
    const InputError e = expectError([] { detectFormat(R"({"version": 1})", "x.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("format"));
}

void tst_Documents::validateModelCatchesShapes()
{
    struct Case {
        const char* path;
        void (*change)(ModelSpec&);
    };
    const Case cases[] = {
        {"model.num_query_groups", [](ModelSpec& m) { m.num_query_groups = 6; }},          // 16 % 6
        {"model.num_attention_heads", [](ModelSpec& m) { m.kv_channels = 0; m.num_attention_heads = 12; m.num_query_groups = 4; }},   // 1024 % 12
        {"model.moe_router_topk", [](ModelSpec& m) { m.moe_router_topk = 17; }},
        {"model.moe_layer_freq", [](ModelSpec& m) { m.moe_layer_pattern = {1, 0}; }},
        {"model.moe_layer_freq", [](ModelSpec& m) { m.moe_layer_pattern = {0, 0, 0, 0, 0, 0}; }},
        {"model.training.global_batch_size", [](ModelSpec& m) { m.training.global_batch_size = 97; }},
        {"model.training.imbalance_weight", [](ModelSpec& m) { m.training.imbalance_weight = 1.5; }},
        {"model.hidden_size", [](ModelSpec& m) { m.hidden_size = 0; }},
        {"model.max_position_embeddings", [](ModelSpec& m) { m.max_position_embeddings = 1024; }},
        // 16 experts, top-4: an expert gets at most every token, 16 / 4 = 4 times the mean.
        {"model.training.router_imbalance", [](ModelSpec& m) { m.training.router_imbalance = 4.5; }},
        {"model.num_layers", [](ModelSpec& m) { m.num_layers = kMaxLayers + 1; m.moe_layer_pattern.clear(); }},
        // The router's recipe (Megatron-Core: the expert bias needs sigmoid-like scores; groups
        // split the 16 experts evenly and must reach the top-4).
        {"model.moe_router_enable_expert_bias", [](ModelSpec& m) { m.moe_router_enable_expert_bias = true; }},
        {"model.moe_router_num_groups", [](ModelSpec& m) { m.moe_router_num_groups = 3; m.moe_router_group_topk = 1; }},
        {"model.moe_router_group_topk", [](ModelSpec& m) { m.moe_router_num_groups = 4; m.moe_router_group_topk = 5; }},
        {"model.moe_router_group_topk", [](ModelSpec& m) { m.moe_router_num_groups = 8; m.moe_router_group_topk = 1; }},
        // Multi-latent attention's sizes and the MTP depths.
        {"model.kv_lora_rank", [](ModelSpec& m) { m.multi_latent_attention = true; m.kv_lora_rank = 0; }},
        {"model.v_head_dim", [](ModelSpec& m) { m.multi_latent_attention = true; m.v_head_dim = 0; }},
        {"model.mtp_num_layers", [](ModelSpec& m) { m.mtp_num_layers = -1; }},
    };
    validateModel(fullModel(), "ok.json");
    for (const auto& c : cases) {
        ModelSpec m = fullModel();
        c.change(m);
        const InputError e = expectError([&] { validateModel(m, "m.json"); });
        QCOMPARE(q(e.where()), QString::fromLatin1(c.path));
    }
    // DeepSeek-V3's router: sigmoid scores with the expert bias, 4 of 8 groups of 32 experts.
    const ModelSpec v3 = resolveModel("DeepSeek-V3");
    QCOMPARE(v3.moe_router_score_function, RouterScore::Sigmoid);
    QVERIFY(v3.moe_router_enable_expert_bias);
    QCOMPARE(v3.moe_router_num_groups, 8);
    QCOMPARE(v3.moe_router_group_topk, 4);
    QCOMPARE(v3.moe_router_topk_scaling_factor, 2.5);
    validateModel(v3, "v3.json");
    // They go out only where they are not Megatron-LM's defaults, and come back.
    const std::string text = writeModel(v3);
    QCOMPARE(nlohmann::json::parse(text).at("moe_router_score_function").get<std::string>(), std::string("sigmoid"));
    QVERIFY(!nlohmann::json::parse(writeModel(fullModel())).contains("moe_router_score_function"));
    const ModelSpec back = readModel(text, "v3.json");
    QCOMPARE(back.moe_router_num_groups, 8);
    QCOMPARE(back.moe_router_topk_scaling_factor, 2.5);
    // kv_channels given: hidden need not divide by heads (Qwen3-30B-A3B: 2048 hidden, 32 x 128).
    ModelSpec m = fullModel();
    m.num_attention_heads = 12;
    m.num_query_groups = 4;
    m.kv_channels = 128;
    validateModel(m, "m.json");
}

void tst_Documents::validateClusterCatchesProblems()
{
    const auto& cat = DeviceCatalog::builtin();
    validateCluster(smallCluster(), cat, "ok.json");
    struct Case {
        const char* path;
        void (*change)(Cluster&);
    };
    const Case cases[] = {
        {"cluster.nodes", [](Cluster& c) { c.nodes.clear(); c.links.clear(); }},
        {"cluster.nodes[1].device_type", [](Cluster& c) { c.nodes[1].device_type = "TPUv9"; }},
        {"cluster.nodes[2].id", [](Cluster& c) { c.nodes[2].id = c.nodes[0].id; }},
        {"cluster.switches[0].id", [](Cluster& c) { c.switches[0].id = 1; }},
        {"cluster.links[0].b", [](Cluster& c) { c.links[0].b = 999; }},
        {"cluster.links[1].bandwidth_gbytes_per_s", [](Cluster& c) { c.links[1].bandwidth_gbytes_per_s = -1; }},
        {"cluster.nodes[0].host", [](Cluster& c) { c.nodes[0].host = "$(reboot)"; }},
        {"cluster.nodes[2].host", [](Cluster& c) { c.nodes[2].host = c.nodes[0].host; }},
        {"cluster.nodes[1].host_memory_gib", [](Cluster& c) { c.nodes[1].host_memory_gib = -1; }},
        {"cluster.nodes[0].host_link_gbytes_per_s", [](Cluster& c) { c.nodes[0].host_link_gbytes_per_s = -32; }},
        // Device counts are summed in an int: a node of INT_MAX devices is refused, not a wrapped sum.
        {"cluster.nodes[0].count", [](Cluster& c) { c.nodes[0].count = INT_MAX; }},
        {"cluster.nodes[2].count", [](Cluster& c) { c.nodes[2].count = kMaxDevicesPerNode + 1; }},
    };
    for (const auto& cs : cases) {
        Cluster c = smallCluster();
        cs.change(c);
        const InputError e = expectError([&] { validateCluster(c, cat, "c.json"); });
        QCOMPARE(q(e.where()), QString::fromLatin1(cs.path));
    }
    // Host names ignore case (RFC 4343): one host for a hostfile, named as written.
    Cluster c = smallCluster();
    c.nodes[0].host = "gpu-a";
    c.nodes[2].host = "GPU-A";
    const InputError e = expectError([&] { validateCluster(c, cat, "c.json"); });
    QCOMPARE(q(e.where()), QStringLiteral("cluster.nodes[2].host"));
    QCOMPARE(q(e.detail()), QStringLiteral("host \"GPU-A\" appears on more than one node (host names ignore case: nodes[0] is \"gpu-a\")"));
}

void tst_Documents::validatePlanCatchesMegatronRules()
{
    // plan-valid.json: a 24-layer model (seq 4096, 8 query groups), two stages of 12 layers,
    // TP 2 DP 4 MBS 1 each, global batch 256.
    const auto& cat = DeviceCatalog::builtin();
    const PlanDocument valid = readPlan(dataFile("plan-valid.json"), "plan.json");
    validatePlanDocument(valid, cat, "plan.json");
    struct Case {
        const char* path;
        void (*change)(PlanDocument&);
    };
    const Case cases[] = {
        // 256 sequences in micro-batches of DP 4 x MBS 3 = 12: not a whole number.
        {"plan.global_batch_size", [](PlanDocument& d) { d.plan.stages[0].micro_batch_size = d.plan.stages[1].micro_batch_size = 3; }},
        // Stage 1 would run 8 sequences per micro-batch against stage 0's 4.
        {"plan.stages[1].micro_batch_size", [](PlanDocument& d) { d.plan.stages[1].micro_batch_size = 2; }},
        {"plan.global_batch_size", [](PlanDocument& d) { d.plan.global_batch_size = 255; }},
        // Context parallelism splits the 4096-token sequence into 2 x CP chunks.
        // (CP 2 x DP 2 x MBS 2 keeps stage 0's 4 sequences per micro-batch.)
        {"plan.stages[0].cp", [](PlanDocument& d) {
             d.model.seq_length = 4094;
             d.plan.stages[0].cp = 2;
             d.plan.stages[0].dp = 2;
             d.plan.stages[0].micro_batch_size = 2;
         }},
        {"plan.stages[1].recompute_layers", [](PlanDocument& d) { d.plan.stages[1].recompute = Recompute::Full;
                                                                  d.plan.stages[1].recompute_layers = 50; }},
        {"plan.stages[0].recompute_layers", [](PlanDocument& d) { d.plan.stages[0].recompute = Recompute::Selective;
                                                                  d.plan.stages[0].recompute_layers = 5; }},
        // At most kMaxVpp virtual stages (a stage of fewer layers than chunks has empty ones).
        {"plan.vpp", [](PlanDocument& d) { d.plan.vpp = kMaxVpp + 1; }},
        // Interleaved 1F1B runs micro-batches in groups of PP (Megatron-LM r0.8 schedules.py):
        // 12 / (DP 4 x MBS 1) = 3 micro-batches on 2 stages.
        {"plan.vpp", [](PlanDocument& d) { d.plan.vpp = 2; d.plan.global_batch_size = 12; }},
        {"plan.unused[0].node", [](PlanDocument& d) { d.plan.unused = {{5, 99, ""}}; }},
        {"plan.unused[0].count", [](PlanDocument& d) { d.plan.unused = {{0, 1, "idle"}}; }},   // node 0's 8 are all used
        // A spare node of 8: two entries may not declare 9 of them idle.
        {"plan.unused[1].count", [](PlanDocument& d) {
             Node spare = d.cluster.nodes[0];
             spare.id = 7;
             spare.host = "spare";
             d.cluster.nodes.push_back(spare);
             d.plan.unused = {{7, 8, "not needed"}, {7, 1, "not needed either"}};
         }},
        {"plan.stages[0].devices", [](PlanDocument& d) { d.plan.stages[0].devices.clear(); }},
        // Megatron-Core offloads the optimizer only from the distributed optimizer.
        {"plan.distributed_optimizer", [](PlanDocument& d) {
             d.plan.distributed_optimizer = false;
             d.plan.optimizer_offload_fraction = 0.5;
         }},
        // first_local + count beyond an int does not wrap around into the node.
        {"plan.stages[0].devices[0].first_local", [](PlanDocument& d) { d.plan.stages[0].devices[0].first_local = INT_MAX; }},
        // 65536 x 65536 x DP is not 0 (or any other wrapped value) devices.
        {"plan.stages[1]", [](PlanDocument& d) { d.plan.stages[1].tp = d.plan.stages[1].cp = 65536; }},
        // DP x MBS of 4 x INT_MAX sequences per micro-batch: a 64-bit count, not a wrapped one.
        {"plan.global_batch_size", [](PlanDocument& d) {
             d.plan.stages[0].micro_batch_size = d.plan.stages[1].micro_batch_size = INT_MAX;
         }},
    };
    for (const auto& c : cases) {
        PlanDocument d = valid;
        c.change(d);
        const InputError e = expectError([&] { validatePlanDocument(d, cat, "plan.json"); });
        QCOMPARE(q(e.where()), QString::fromLatin1(c.path));
        QCOMPARE(q(e.file()), QStringLiteral("plan.json"));
    }
    // What FlagScale's meshes allow: a stage with half the DP runs twice the micro-batch size.
    PlanDocument hetero = valid;
    hetero.plan.stages[1].tp = 4;
    hetero.plan.stages[1].dp = 2;
    hetero.plan.stages[1].micro_batch_size = 2;
    hetero.plan.stages[1].recompute = Recompute::Full;
    hetero.plan.stages[1].recompute_layers = 12;
    hetero.plan.vpp = 2;
    validatePlanDocument(hetero, cat, "plan.json");
    // 16 / 4 = 4 micro-batches on 2 stages: interleaving allowed.
    PlanDocument interleaved = valid;
    interleaved.plan.vpp = 2;
    interleaved.plan.global_batch_size = 16;
    validatePlanDocument(interleaved, cat, "plan.json");
    interleaved.plan.global_batch_size = 12;
    QCOMPARE(q(expectError([&] { validatePlanDocument(interleaved, cat, "plan.json"); }).detail()),
             QStringLiteral("interleaved 1F1B (vpp 2) needs the micro-batches (3 = global_batch_size / (dp x micro_batch_size)) "
                            "to be a multiple of the 2 pipeline stages; use vpp 1 or a global batch of a multiple of 8"));

    // The numbers in the messages are the file's, not wrapped ones.
    PlanDocument wide = valid;
    wide.plan.stages[1].tp = wide.plan.stages[1].cp = 65536;
    QCOMPARE(q(expectError([&] { validatePlanDocument(wide, cat, "plan.json"); }).detail()),
             QStringLiteral("tp*cp*dp = 17179869184 but the stage has 8 devices"));
    PlanDocument far = valid;
    far.plan.stages[0].devices[0].first_local = INT_MAX;
    QVERIFY2(q(expectError([&] { validatePlanDocument(far, cat, "plan.json"); }).detail()).startsWith("devices [2147483647, 2147483655)"),
             "first_local + count");
}

void tst_Documents::duplicateKeysAndHugeNumbersRefused()
{
    const InputError dup = expectError([] {
        readModel(R"({"format": "hapmoe.model", "version": 2, "num_layers": "x", "hidden_size": 1024, "num_layers": 24,
                      "num_attention_heads": 8, "vocab_size": 1000, "seq_length": 128})", "m.json");
    });
    QCOMPARE(q(dup.file()), QStringLiteral("m.json"));
    // The second "num_layers" opens at column 82 of line 1 (81 characters before it).
    QCOMPARE(q(dup.where()), QStringLiteral("line 1, column 82"));
    QVERIFY2(q(dup.detail()).contains(QStringLiteral("\"num_layers\" appears twice")), qPrintable(q(dup.detail())));
    // The same key in two different objects is fine; in a nested object the message says where.
    const InputError nested = expectError([] {
        readModel(R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024,
                      "num_attention_heads": 8, "vocab_size": 1000, "seq_length": 128,
                      "training": {"micro_batch_size": 1, "micro_batch_size": 2}})", "m.json");
    });
    QVERIFY2(q(nested.detail()).contains(QStringLiteral("\"micro_batch_size\" in \"training\"")), qPrintable(q(nested.detail())));
    // Line 3 is `    "training": {"micro_batch_size": 1, "micro_batch_size": 2}}`: 4 spaces,
    // 13 characters of `"training": {`, 21 of `"micro_batch_size": 1`, 2 of ", ": the second
    // key opens at column 41.
    const std::string nestedText = R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024,
"num_attention_heads": 8, "vocab_size": 1000, "seq_length": 128,
    "training": {"micro_batch_size": 1, "micro_batch_size": 2}})";
    const InputError nestedAt = expectError([&] { readModel(nestedText, "m.json"); });
    QCOMPARE(q(nestedAt.where()), QStringLiteral("line 3, column 41"));
    readModel(R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                  "vocab_size": 1000, "seq_length": 128, "training": {"micro_batch_size": 1}, "description": "micro_batch_size"})",
              "m.json");

    // 1e999 overflows a double: the file, the line and column of the number.
    const InputError huge = expectError([] {
        readModel("{\"format\": \"hapmoe.model\", \"version\": 2,\n  \"num_layers\": 1e999}", "m.json");
    });
    QCOMPARE(q(huge.file()), QStringLiteral("m.json"));
    QCOMPARE(q(huge.where()), QStringLiteral("line 2, column 17"));
    QVERIFY2(q(huge.detail()).contains(QStringLiteral("1e999")), qPrintable(q(huge.detail())));
}

void tst_Documents::duplicateKeyAmongManyKeys()
{
    // An object of 400,000 keys (unknown ones, ignored) with its first key again at the end: the
    // repeat is found where it is, and reading such a file takes a moment, not minutes (each key
    // is looked up among those seen, not compared with every one of them).
    constexpr int kKeys = 400000;
    std::string text = R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024,
"num_attention_heads": 8, "vocab_size": 1000, "seq_length": 128)";
    for (int i = 0; i < kKeys; ++i)
        text += ", \"k" + std::to_string(i) + "\": 1";
    const ModelSpec m = readModel(text + "}", "many.json");
    QCOMPARE(m.num_layers, 2);
    text += ",\n\"k0\": 2}";
    const InputError dup = expectError([&] { readModel(text, "many.json"); });
    QCOMPARE(q(dup.where()), QStringLiteral("line 3, column 1"));
    QVERIFY2(q(dup.detail()).contains(QStringLiteral("\"k0\" appears twice")), qPrintable(q(dup.detail())));
}

void tst_Documents::binaryDataIsNotJson()
{
    // nlohmann reads a NUL byte as the end of the input ("unexpected end of input"), and a
    // valid document followed by NUL padding would pass; both are not JSON texts.
    const InputError first = expectError([] { readModel(std::string("\0\x01\x02", 3), "m.bin"); });
    QCOMPARE(q(first.where()), QStringLiteral("line 1, column 1"));
    QCOMPARE(q(first.detail()), QStringLiteral("malformed JSON: not a JSON text (binary data at byte 0)"));
    std::string padded = writeModel(fullModel());
    const std::size_t size = padded.size();
    padded += std::string(4, '\0');
    const InputError tail = expectError([&] { readModel(padded, "m.json"); });
    QCOMPARE(q(tail.detail()), QStringLiteral("malformed JSON: not a JSON text (binary data at byte %1)").arg(size));
}

void tst_Documents::enumerationsIgnoreCaseAndSeparators()
{
    // docs/formats.md: enumerations match ignoring case, '-', '_' and spaces; normalization
    // is one of them and reads back in Megatron-LM's spelling.
    const auto withNorm = [](const std::string& value) {
        return R"({"format": "hapmoe.model", "version": 2, "num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                   "vocab_size": 1000, "seq_length": 128, "normalization": ")" + value + "\"}";
    };
    for (const char* v : {"rmsnorm", "RMSNORM", "rms_norm", "RMS-Norm", "RMSNorm"})
        QCOMPARE(q(readModel(withNorm(v), "m.json").normalization), QStringLiteral("RMSNorm"));
    for (const char* v : {"layernorm", "LAYER_NORM", "Layer Norm", "LayerNorm"})
        QCOMPARE(q(readModel(withNorm(v), "m.json").normalization), QStringLiteral("LayerNorm"));
    const InputError bad = expectError([&] { readModel(withNorm("batchnorm"), "m.json"); });
    QCOMPARE(q(bad.where()), QStringLiteral("model.normalization"));
    QVERIFY2(q(bad.detail()).contains(QStringLiteral("\"RMSNorm\", \"LayerNorm\", got \"batchnorm\"")), qPrintable(q(bad.detail())));
}

void tst_Documents::profileAndSettingsBounds()
{
    const std::string head = R"({"format": "hapmoe.profile", "version": 1, )";
    // The FFN is part of the layer: 0.05 s of FFN in a 0.008 s layer backward is refused.
    const InputError ffn = expectError([&] {
        readProfile(head + R"("compute": [{"device_type": "H800", "tokens": 4096, "dense_layer_fwd_s": 0.004,
                        "dense_layer_bwd_s": 0.008, "ffn_fwd_s": 0.002, "ffn_bwd_s": 0.05}]})", "p.json");
    });
    QCOMPARE(q(ffn.where()), QStringLiteral("profile.compute[0].ffn_bwd_s"));
    // A layer time below the profile's 1 ns is the field named, not the FFN time compared with it.
    const InputError layer = expectError([&] {
        readProfile(head + R"("compute": [{"device_type": "H800", "tokens": 4096, "dense_layer_fwd_s": 1e-10,
                        "dense_layer_bwd_s": 0.008, "ffn_fwd_s": 0.002}]})", "p.json");
    });
    QCOMPARE(q(layer.where()), QStringLiteral("profile.compute[0].dense_layer_fwd_s"));
    const InputError overhead = expectError([&] {
        readProfile(head + R"("memory": [{"device_type": "H800", "fixed_overhead_gib": 97656250}]})", "p.json");
    });
    QCOMPARE(q(overhead.where()), QStringLiteral("profile.memory[0].fixed_overhead_gib"));
    const InputError factor = expectError([&] {
        readProfile(head + R"("memory": [{"device_type": "H800", "activation_factor": 1e308}]})", "p.json");
    });
    QCOMPARE(q(factor.where()), QStringLiteral("profile.memory[0].activation_factor"));

    // Project search settings are held to what the CLI accepts.
    const std::string text = readTextFile(std::string(HAPMOE_SOURCE_DIR) + "/resources/examples/example.hapmoe");
    auto withSetting = [&](const std::string& key, const std::string& value) {
        std::string t = text;
        const std::string at = "\"" + key + "\": ";
        const auto pos = t.find(at);
        const auto end = t.find_first_of(",\n}", pos + at.size());
        return t.replace(pos + at.size(), end - pos - at.size(), value);
    };
    QCOMPARE(q(expectError([&] { readProject(withSetting("delta", "1.5"), "x.hapmoe"); }).where()),
             QStringLiteral("search.delta"));
    QCOMPARE(q(expectError([&] { readProject(withSetting("time_limit_s", "1e308"), "x.hapmoe"); }).where()),
             QStringLiteral("search.time_limit_s"));
    QCOMPARE(readProject(withSetting("delta", "0.5"), "x.hapmoe").search.delta, 0.5);
}

void tst_Documents::profileAliasesAreOneType()
{
    // "H800-SXM" is a catalog alias of "H800": two compute entries for one point under the two
    // names would make the estimate depend on the order of the file.
    Profile p;
    ComputeEntry e;
    e.device_type = "H800";
    e.tp = 2;
    e.tokens = 4096;
    e.dense_layer_fwd_s = 0.01;
    e.dense_layer_bwd_s = 0.02;
    p.compute.push_back(e);
    validateProfile(p, DeviceCatalog::builtin(), "p.json");
    e.device_type = "H800-SXM";
    p.compute.push_back(e);
    const InputError err = expectError([&] { validateProfile(p, DeviceCatalog::builtin(), "p.json"); });
    QCOMPARE(q(err.where()), QStringLiteral("profile.compute[1].device_type"));
    p.compute.pop_back();
    p.device_efficiency = {{"H800", 0.6}, {"NVIDIA H800", 0.7}};
    QCOMPARE(q(expectError([&] { validateProfile(p, DeviceCatalog::builtin(), "p.json"); }).where()).left(25),
             QStringLiteral("profile.device_efficiency"));
}

void tst_Documents::writersSurviveBadEncoding()
{
    // A name read from a Latin-1 script is not UTF-8; saving replaces the byte instead of failing.
    ModelSpec m = fullModel();
    m.name = "caf\xe9";
    const ModelSpec back = readModel(writeModel(m), "m.json");
    QCOMPARE(q(back.name), QStringLiteral("caf\uFFFD"));
}

void tst_Documents::readTextFileRefusesNonFiles()
{
    QTemporaryDir dir;
    const InputError e = expectError([&] { readTextFile(dir.path().toStdString()); });
    QCOMPARE(q(e.detail()), QStringLiteral("is a directory, expected a file"));
    const InputError missing = expectError([&] { readTextFile(dir.filePath("none.json").toStdString()); });
    QVERIFY(q(missing.detail()).startsWith("cannot open file"));
    const InputError device = expectError([] { readTextFile("/dev/zero"); });
    QCOMPARE(q(device.detail()), QStringLiteral("is not a regular file"));
}

void tst_Documents::atomicSaveReplaces()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("plan.json").toStdString();
    saveFileAtomically(path, "first");
    QCOMPARE(q(readTextFile(path)), QStringLiteral("first"));
    saveFileAtomically(path, writeModel(fullModel()));
    QCOMPARE(q(readModel(readTextFile(path), path).name), QStringLiteral("round-trip"));
    // No temporary file is left beside it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

void tst_Documents::atomicSaveFailureLeavesOldFile()
{
    QTemporaryDir dir;
    // Target is a non-empty directory: the rename fails after the data was written.
    QVERIFY(QDir(dir.path()).mkdir("target"));
    QFile keep(dir.filePath("target/keep"));
    QVERIFY(keep.open(QIODevice::WriteOnly));
    keep.close();
    bool threw = false;
    try {
        saveFileAtomically(dir.filePath("target").toStdString(), "data");
    } catch (const std::runtime_error& e) {
        threw = true;
        QVERIFY(QString::fromLatin1(e.what()).contains("rename failed"));
    }
    QVERIFY(threw);
    QVERIFY(QFileInfo(dir.filePath("target/keep")).exists());
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);   // temp removed
    // A folder that does not exist: nothing is created.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, saveFileAtomically(dir.filePath("missing/x.json").toStdString(), "x"));
    // A named pipe (like a device) is not replaced by a regular file of the same name.
    const std::string fifo = dir.filePath("pipe.json").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    threw = false;
    try {
        saveFileAtomically(fifo, "data");
    } catch (const std::runtime_error& e) {
        threw = true;
        QVERIFY2(QString::fromLatin1(e.what()).contains("not a regular file"), e.what());
    }
    QVERIFY(threw);
    struct stat st {};
    QCOMPARE(::stat(fifo.c_str(), &st), 0);
    QVERIFY(S_ISFIFO(st.st_mode));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System).size(), 1);   // the pipe, no temporary
}

void tst_Documents::atomicSaveKeepsALink()
{
    // Saving through a link replaces the file it points to; the link stays a link.
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("plans"));
    const QString real = dir.filePath("plans/v3.json");
    const QString link = dir.filePath("current.json");
    saveFileAtomically(real.toStdString(), "old");
    QVERIFY(QFile::link(real, link));
    saveFileAtomically(link.toStdString(), "new");
    QVERIFY(QFileInfo(link).isSymLink());
    QCOMPARE(q(readTextFile(real.toStdString())), QStringLiteral("new"));
    QCOMPARE(QDir(dir.filePath("plans")).entryList(QDir::Files | QDir::Hidden).size(), 1);   // no temporary left
}

void tst_Documents::messagesQuoteValuesAsTheyAre()
{
    // A value just outside a bound prints with the digits that tell it from the bound; a
    // plain one prints as written.
    QCOMPARE(valueForMessage(1000000.5), std::string("1000000.5"));
    QCOMPARE(valueForMessage(0.9999999), std::string("0.9999999"));
    QCOMPARE(valueForMessage(4.0000001), std::string("4.0000001"));
    QCOMPARE(valueForMessage(0.1), std::string("0.1"));
    QCOMPARE(valueForMessage(1e15), std::string("1e+15"));
    QCOMPARE(valueForMessage(1099511627776.5), std::string("1099511627776.5"));
    // Control characters a terminal would act on, C1 and the Unicode line separators included,
    // print as escapes; other text as it is.
    QCOMPARE(printableText("a\x1b[31mb"), std::string("a\\x1b[31mb"));
    QCOMPARE(printableText("NV\u0085IDIA \u009b2J"), std::string("NV\\u0085IDIA \\u009B2J"));
    QCOMPARE(printableText("MY\u2028GPU\u2029"), std::string("MY\\u2028GPU\\u2029"));
    QCOMPARE(printableText("H800 \u00e9\u2027"), std::string("H800 \u00e9\u2027"));
    // A control character is placed by characters, not bytes: the third of "中文\u0085X".
    nlohmann::json model = nlohmann::json::parse(writeModel(fullModel()));
    model["name"] = "中文\u0085X";
    try {
        readModel(model.dump(), "m.json");
        QFAIL("a C1 control in a name must be refused");
    } catch (const InputError& e) {
        QCOMPARE(e.where(), std::string("model.name"));
        QCOMPARE(e.detail(), std::string("expected one line of printable text, got the control character U+0085 at character 3"));
    }
    // A number too small for a double is placed where it stands as a value, not where the
    // same text stands inside a string.
    try {
        readModel("{\"format\": \"hapmoe.model\", \"description\": \"see 1e-9999 here\",\n  \"num_layers\": 1e-9999}", "m.json");
        QFAIL("an underflow must be refused");
    } catch (const InputError& e) {
        QCOMPARE(e.where(), std::string("line 2, column 17"));
        QVERIFY2(e.detail().find("the number 1e-9999 is too small for a double") != std::string::npos, e.what());
    }
}

void tst_Documents::formatReadFromTheHead()
{
    // The format and version are read from the head of a document, as the writers put them
    // first: what comes after is the reader's to check (a plan file of megabytes is parsed
    // once, by its reader).
    const std::string head = R"({"format": "hapmoe.plan", "version": 2, "model": {"name": )";
    QCOMPARE(detectFormat(head + "[broken", "p.json"), std::string(kPlanFormat));
    const DocumentVersion v = documentVersion(head + "[broken", "p.json");
    QCOMPARE(v.format, std::string(kPlanFormat));
    QCOMPARE(v.version, 2);
    // Anywhere at the top level, after nested values too.
    QCOMPARE(detectFormat(R"({"model": {"format": "x", "version": 9}, "version": 1, "format": "hapmoe.model"})", "m.json"),
             std::string(kModelFormat));
    QCOMPARE(documentVersion(R"({"model": {"version": 9}, "format": "hapmoe.model", "version": 1})", "m.json").version, 1);
    // Without a string format in the head, the whole parse says what is wrong, as it did.
    auto errorOf = [](const std::string& text) {
        try {
            documentVersion(text, "bad.json");
        } catch (const InputError& e) {
            return e.where() + ": " + e.detail();
        }
        return std::string("accepted");
    };
    QVERIFY2(errorOf(R"({"format": "hapmoe.model", "format": "hapmoe.plan", "version": 2})").find("appears twice") != std::string::npos,
             errorOf(R"({"format": "hapmoe.model", "format": "hapmoe.plan"})").c_str());
    QVERIFY2(errorOf(R"({"format": 5, "version": 2})").rfind("format: expected a string", 0) == 0, errorOf(R"({"format": 5})").c_str());
    QVERIFY2(errorOf(R"({"version": 2, "name": "x"})").rfind("format: missing required key", 0) == 0, errorOf(R"({"version": 2})").c_str());
    QVERIFY2(errorOf(R"({"format": "hapmoe.model", "version": 2, "x": [)").find("malformed JSON") == std::string::npos,
             "a broken tail is the reader's to report");
    QVERIFY2(errorOf(R"({"version": 2, "x": [)").find("malformed JSON") != std::string::npos, errorOf(R"({"version": 2, "x": [)").c_str());
}

QTEST_GUILESS_MAIN(tst_Documents)
#include "tst_Documents.moc"
