// Engineering properties of runSearch and of `hapmoe plan` (docs/search.md section 6):
// the 1F1B objective on a case small enough to write down, cancellation, the time limit,
// progress reports, determinism across thread counts, alternatives, baselines, and the
// command line's exit codes.

#include "TestClusters.h"

#include "cost/CostModel.h"
#include "cost/UniformPlan.h"
#include "hardware/DeviceCatalog.h"
#include "io/Presets.h"
#include "plan/Deployability.h"
#include "plan/PlanRelation.h"
#include "search/Interleaving.h"
#include "search/Search.h"
#include "search/SearchRun.h"
#include "search/SearchSpace.h"
#include "search/StageEvaluator.h"
#include "util/FlatMap.h"

#include <QProcess>
#include <nlohmann/json.hpp>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>

using namespace hapmoe;

namespace {

ModelSpec smallMoe(int layers)
{
    ModelSpec m;
    m.name = "small-moe";
    m.num_layers = layers;
    m.hidden_size = 2048;
    m.ffn_hidden_size = 5632;
    m.num_attention_heads = 16;
    m.num_query_groups = 4;
    m.vocab_size = 32000;
    m.seq_length = 2048;
    m.swiglu = true;
    m.untie_embeddings_and_output_weights = true;
    m.num_experts = 8;
    m.moe_router_topk = 2;
    m.moe_ffn_hidden_size = 2816;
    m.training.micro_batch_size = 1;
    m.training.global_batch_size = 16;
    return m;
}

bool samePlans(const SearchResult& a, const SearchResult& b)
{
    if (a.plans.size() != b.plans.size())
        return false;
    for (std::size_t i = 0; i < a.plans.size(); ++i) {
        const Plan& p = a.plans[i].plan;
        const Plan& q = b.plans[i].plan;
        if (p.pp() != q.pp() || a.plans[i].prediction.iteration_time_s != b.plans[i].prediction.iteration_time_s)
            return false;
        for (int s = 0; s < p.pp(); ++s) {
            const StagePlan& x = p.stages[static_cast<std::size_t>(s)];
            const StagePlan& y = q.stages[static_cast<std::size_t>(s)];
            if (x.device_type != y.device_type || x.num_layers != y.num_layers || x.tp != y.tp || x.dp != y.dp
                || x.ep != y.ep || x.etp != y.etp || x.recompute != y.recompute || x.devices.front().node != y.devices.front().node
                || x.devices.front().first_local != y.devices.front().first_local)
                return false;
        }
    }
    return true;
}

// The search, cancelled once its progress reports more than `after` states (with one
// thread the states come in the same order on every run).
SearchResult cancelledAfter(const CostModel& cost, const SearchOptions& options, long long after)
{
    std::atomic<bool> cancel{false};
    return runSearch(cost, options, &cancel, [&](const SearchProgress& p) {
        if (p.states > after)
            cancel = true;
    });
}

// A search for Megatron-LM on two threads, without baselines: the topK fastest plans, tried
// interleaved up to maxVpp (the interleaving tests take the 8 fastest).
SearchOptions megatronPlans(int maxVpp, int topK = 8)
{
    SearchOptions opt;
    opt.target = Target::Megatron;
    opt.baselines = false;
    opt.threads = 2;
    opt.top_k = topK;
    opt.max_vpp = maxVpp;
    return opt;
}

} // namespace

class SearchEngineTest : public QObject {
    Q_OBJECT

private slots:
    void singleDeviceObjectiveByHand();
    void cancelReturnsPromptly();
    void cancelKeepsTheProgressReached();
    void workBudgetStopsTheSameOnEveryRun();
    void megatronSaysWhyANodeOfAnotherSizeIsIdle();
    void timeLimitReturnsBestSoFar();
    void progressReportsGrow();
    void progressCountsTheRunningJob();
    void deterministicAcrossThreads();
    void alternativesAndBaselines();
    void optimizerOffloadWhenNothingFits();
    void fastestOffloadKeepsTheFastestPlan();
    void microBatchSizesAreSearchedEach();
    void offloadAlternativesComeFromEveryShare();
    void modelLargerThanTheClusterAnswersAtOnce();
    void hostMemoryBoundsTheOffload();
    void unrunnablePlansDoNotPrune();
    void denseEndLayerGetsItsOwnFloor();
    void smallNodeOfTheSameTypeKeepsTensorParallelism();
    void idleNodeOfAnotherSizeKeepsMegatronPipelines();
    void selectiveRecomputeRepeatsWhatSavesMemory();
    void wideSelectiveRecomputeRepeatsWholeBlocks();
    void alternativesCountDistinctPlans();
    void currentConfigurationOfAnotherModelIsLeftOut();
    void currentConfigurationOnTwoVendorsRunsUnderFlagScale();
    void currentConfigurationComparedAlike();
    void nodesWithSlowLinksAreNotInterchangeable();
    void nodesBehindOversubscribedLeavesAreNotInterchangeable();
    void flatMapKeepsEveryKeyThroughCollisionsAndGrowth();
    void prunedOutPlansAreFoundBeforeOffloading();
    void nodeListingOrderDoesNotMatter();
    void twoNodeSizesPrunedFindsTheOptimum();
    void loadBalanceCountsTheOutputLayer();
    void wideToleranceOpensTheWholeWindow();
    void exactCheckFindsWhatThePruningsHide();
    void exactCheckFindsTheBestBeforeTheAlternatives();
    void uniformAlgorithmIsComparedWithMetisStyle();
    void tiedEmbeddingsAcrossTheBridge();
    void flexDispatcherLeavesOutDevicesWithoutDeepEp();
    void reorderedAlternativesAreNamed();
    void fp8LeavesOutDevicesWithoutFp8();
    void fp8RecipeLeavesOutDevices();
    void largeRegularCluster();
    void interleavingKeepsTheFastestMegatronForm();
    void interleavingTakesTheLeastRecomputeThatFits();
    void interleavingKeepsTheOffloadPolicy();
    void cliExitCodes();
};

void SearchEngineTest::singleDeviceObjectiveByHand()
{
    // One H800 and a 2-layer model: the space holds one device group (1 device, TP = CP =
    // DP = EP = ETP = 1) with PP 1 or 2 (two stages need two devices, so only PP 1).
    // Hand assembly (CostModel.h): T = M c + tail with c = t_fwd + t_bwd and M = GBS / mbs.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ModelSpec m = smallMoe(2);
    m.training.global_batch_size = 8;
    const Cluster cluster = clusterFromShorthand("H800:1x1", cat);
    const CostModel cost(m, cluster, cat);
    SearchOptions o;
    o.exact = true;
    o.baselines = false;
    const SearchResult r = runSearch(cost, o);
    QCOMPARE(r.plans.size(), std::size_t(1));
    const Plan& p = r.plans.front().plan;
    QCOMPARE(p.pp(), 1);
    QCOMPARE(p.stages.front().num_layers, 2);
    QCOMPARE(p.numMicrobatches(), 8);
    StageContext ctx;
    ctx.num_microbatches = 8;
    const StageEstimate e = cost.estimateStage(p.stages.front(), ctx);
    const double byHand = 8 * (e.t_fwd + e.t_bwd) + e.dp_sync + e.optimizer;
    QVERIFY(std::abs(r.plans.front().prediction.iteration_time_s - byHand) <= 1e-12 * byHand);
    QCOMPARE(p.stages.front().recompute, Recompute::None);   // 2 small layers fit an 80 GB device
}

void SearchEngineTest::cancelReturnsPromptly()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:2x8,910B:2x8", cat);
    const CostModel cost(resolveModel("mixtral-s"), cluster, cat);
    std::atomic<bool> cancel{true};
    SearchOptions o;
    const SearchResult r = runSearch(cost, o, &cancel);
    QVERIFY(r.cancelled);
    QVERIFY(r.plans.empty());
    QVERIFY(!r.no_plan_reason.empty());
}

void SearchEngineTest::cancelKeepsTheProgressReached()
{
    // Cancelled early in a long search (the exact search of Mixtral-L on three device types,
    // one thread), the progress stays about where it was: the jobs still queued were counted
    // as done, and the bar jumped (from 6 % to 22 % in the studio).
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(resolveModel("mixtral-l"), clusterFromShorthand("H800:4x8,MI300X:4x8,910B:4x8", cat), cat);
    SearchOptions o;
    o.exact = true;
    o.threads = 1;
    o.baselines = false;
    std::atomic<bool> cancel{false};
    double atCancel = -1, last = 0;
    const SearchResult r = runSearch(cost, o, &cancel, [&](const SearchProgress& p) {
        last = p.fraction;
        if (atCancel < 0 && p.fraction > 0.01) {
            atCancel = p.fraction;
            cancel = true;
        }
    });
    QVERIFY(r.cancelled);
    QVERIFY(atCancel > 0);
    QVERIFY2(last < atCancel + 0.02, qPrintable(QStringLiteral("%1 after %2").arg(last).arg(atCancel)));
}

void SearchEngineTest::workBudgetStopsTheSameOnEveryRun()
{
    // The exact check stopped by its work budget after its first pass returns the same plans on
    // every run: that pass's best alone, where the other plans it had
    // met (the best of runs the threads' shared incumbent did not prune) stood as alternatives
    // and Mixtral-L on 32-1 with five plans asked came back with two, three or four.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(resolveModel("mixtral-l"), *findClusterPreset("32-1"), cat);
    SearchOptions o;
    o.top_k = 5;
    o.baselines = false;
    const auto listOf = [&](int threads) {
        SearchOptions t = o;
        t.threads = threads;
        const SearchResult r = runSearch(cost, t);
        std::vector<std::pair<double, std::string>> list;
        for (const RankedPlan& p : r.plans)
            list.emplace_back(p.prediction.iteration_time_s, alternativeKey(p.plan));
        return std::pair{list, r};
    };
    const auto [first, r] = listOf(2);
    QCOMPARE(r.exact_check, ExactCheck::WorkBudget);
    QVERIFY(r.exact_check_best);
    QCOMPARE(first.size(), std::size_t(1));   // found on the devices, where the pruned plans offload
    QCOMPARE(std::round(first.front().first * 1000) / 1000, 86.084);
    QVERIFY(listOf(2).first == first);
}

void SearchEngineTest::megatronSaysWhyANodeOfAnotherSizeIsIdle()
{
    // Megatron-LM's launcher starts as many processes on every node: LLaMA-2-7B on a node of
    // 8 H800 and one of 4 runs on the 8, and the 4 are not said to be slower to use (the
    // search's reason for devices a plan is faster without) but to be of another count.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(resolveModel("llama2-7b"), clusterFromShorthand("H800:1x8,H800:1x4", cat), cat);
    SearchOptions o;
    o.target = Target::Megatron;
    o.baselines = false;
    const SearchResult r = runSearch(cost, o);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    const Plan& plan = r.plans.front().plan;
    QCOMPARE(plan.numDevices(), 8);
    QCOMPARE(plan.unused.size(), std::size_t(1));
    QCOMPARE(plan.unused.front().count, 4);
    QVERIFY2(plan.unused.front().reason.find("not usable by Megatron-LM's launcher: it starts as many processes on every node, 8 on "
                                             "the plan's nodes, and this node has 4 devices")
                 == 0,
             plan.unused.front().reason.c_str());
}

void SearchEngineTest::timeLimitReturnsBestSoFar()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:4x8,MI300X:4x8,910B:4x8", cat);
    ModelSpec m = resolveModel("mixtral-l");
    const CostModel cost(m, cluster, cat);
    SearchOptions o;
    o.time_limit_s = 0.3;
    o.exact = true;   // far more than 0.3 s of work
    const SearchResult r = runSearch(cost, o);
    QVERIFY(r.timed_out);
    for (const RankedPlan& p : r.plans)
        QVERIFY(p.prediction.feasible);

    // A limit beyond 1e7 s means none (it would overflow the clock): the search runs to the end.
    const Cluster small = clusterFromShorthand("H800:1x8,910B:1x8", cat);
    const CostModel smallCost(resolveModel("mixtral-s"), small, cat);
    SearchOptions endless;
    endless.baselines = false;
    endless.time_limit_s = 1e10;
    const SearchResult full = runSearch(smallCost, endless);
    QVERIFY(!full.timed_out);
    QVERIFY(!full.plans.empty());
}

void SearchEngineTest::progressReportsGrow()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:1x8,910B:1x8", cat);
    const CostModel cost(resolveModel("mixtral-s"), cluster, cat);
    std::mutex mu;
    std::vector<SearchProgress> seen;
    SearchOptions o;
    o.baselines = false;
    const SearchResult r = runSearch(cost, o, nullptr, [&](const SearchProgress& p) {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(p);
    });
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back().states, r.states);
    QCOMPARE(seen.back().pruned.memory, r.pruned.memory);
    QVERIFY(seen.back().best_time_s > 0);
    QVERIFY(seen.back().fraction > 0.99);
    QVERIFY(!r.plans.empty());
    // The objective the DP reports as best is the cost model's time of the plan returned.
    QVERIFY(std::abs(seen.back().best_time_s - r.plans.front().prediction.iteration_time_s) <= 1e-9 * seen.back().best_time_s);

    // With the baselines (and on a type with nodes of two sizes, a second node order) later
    // passes add runs as they start; the fraction still never goes back, and is 1 only at the end.
    seen.clear();
    o.baselines = true;
    const Cluster sizes = clusterFromShorthand("H800:1x8,H800:1x4,910B:1x8", cat);
    const ModelSpec model = resolveModel("mixtral-s");
    const CostModel two(model, sizes, cat);
    runSearch(two, o, nullptr, [&](const SearchProgress& p) {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(p);
    });
    QVERIFY(seen.size() > 1);
    for (std::size_t i = 1; i < seen.size(); ++i)
        QVERIFY2(seen[i].fraction >= seen[i - 1].fraction, qPrintable(QString("%1 after %2").arg(seen[i].fraction).arg(seen[i - 1].fraction)));
    for (std::size_t i = 0; i + 1 < seen.size(); ++i)
        QVERIFY(seen[i].fraction < 1.0);
    QCOMPARE(seen.back().fraction, 1.0);
}

// A running HS-DP job counts the layers it has placed (docs/search.md section 5), so the
// bar moves before the first job ends. On one thread the first report always passes the
// 50 ms throttle and comes from inside the first job, after its first bucket of states:
// no job has ended then, so counting finished jobs alone it would read 0.
void SearchEngineTest::progressCountsTheRunningJob()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:1x8,910B:1x8", cat);
    const CostModel cost(resolveModel("mixtral-s"), cluster, cat);
    SearchOptions o;
    o.baselines = false;
    o.threads = 1;
    o.target = Target::FlagScale;
    std::vector<SearchProgress> seen;
    runSearch(cost, o, nullptr, [&](const SearchProgress& p) { seen.push_back(p); });
    QVERIFY(seen.size() >= 2);
    QVERIFY(seen.front().states > 0);
    QVERIFY2(seen.front().fraction > 0.0, qPrintable(QString::number(seen.front().fraction)));
    QVERIFY(seen.front().fraction < 0.5);
    for (std::size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i].fraction >= seen[i - 1].fraction);
    QCOMPARE(seen.back().fraction, 1.0);

    // Progress only feeds the bar: with the baselines (whose work counts from the start) the
    // same plans come out with and without a callback.
    o.baselines = true;
    o.threads = 2;
    o.top_k = 3;
    const SearchResult quiet = runSearch(cost, o);
    std::mutex mu;
    double last = 0;
    bool monotonic = true;
    const SearchResult watched = runSearch(cost, o, nullptr, [&](const SearchProgress& p) {
        std::lock_guard<std::mutex> lock(mu);
        monotonic = monotonic && p.fraction >= last && p.fraction <= 1.0;
        last = p.fraction;
    });
    QVERIFY(monotonic);
    QCOMPARE(last, 1.0);
    QCOMPARE(watched.plans.size(), quiet.plans.size());
    for (std::size_t i = 0; i < quiet.plans.size(); ++i) {
        // Numbered in the order listed, fastest first (the name is given after the last sort).
        QCOMPARE(quiet.plans[i].plan.name, "HS-DP #" + std::to_string(i + 1));
        QCOMPARE(watched.plans[i].prediction.iteration_time_s, quiet.plans[i].prediction.iteration_time_s);
        QCOMPARE(watched.plans[i].plan.stages.size(), quiet.plans[i].plan.stages.size());
    }
    QVERIFY(watched.uniform_baseline.has_value() == quiet.uniform_baseline.has_value());
    QVERIFY(watched.metis_baseline.has_value() == quiet.metis_baseline.has_value());
    if (quiet.metis_baseline)
        QCOMPARE(watched.metis_baseline->prediction.iteration_time_s, quiet.metis_baseline->prediction.iteration_time_s);
}

void SearchEngineTest::deterministicAcrossThreads()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:1x8,MI300X:1x8", cat);
    const CostModel cost(resolveModel("mixtral-s"), cluster, cat);
    SearchOptions o;
    o.top_k = 3;
    o.baselines = false;
    o.threads = 1;
    const SearchResult one = runSearch(cost, o);
    o.threads = 2;
    const SearchResult two = runSearch(cost, o);
    const SearchResult again = runSearch(cost, o);
    QVERIFY(!one.plans.empty());
    QVERIFY(samePlans(one, two));
    QVERIFY(samePlans(two, again));
}

void SearchEngineTest::alternativesAndBaselines()
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:1x8,910B:1x8", cat);
    const CostModel cost(resolveModel("mixtral-s"), cluster, cat);
    SearchOptions o;
    o.top_k = 3;
    o.current = std::nullopt;
    const SearchResult r = runSearch(cost, o);
    QCOMPARE(r.plans.size(), std::size_t(3));
    QVERIFY(r.uniform_baseline);
    QVERIFY(r.metis_baseline);
    const double best = r.plans.front().prediction.iteration_time_s;
    // The uniform baseline (even split, one knob tuple) lies in the FlagScale/Megatron space
    // only when deployable; the search's best never loses to a deployable baseline.
    if (r.metis_baseline->prediction.feasible)
        QVERIFY(best <= r.metis_baseline->prediction.iteration_time_s * (1 + 1e-9));
    // Uniform layers on H800 and 910B: the 910B stage is the bottleneck (paper section 5.6).
    QVERIFY(r.uniform_baseline->prediction.iteration_time_s > best);
    for (const StagePlan& st : r.uniform_baseline->plan.stages)
        QCOMPARE(st.num_layers, 24 / r.uniform_baseline->plan.pp());
    // The alternatives are distinct pipelines, not the best one with more recompute.
    for (std::size_t i = 1; i < r.plans.size(); ++i) {
        const Plan& a = r.plans[i].plan;
        const Plan& b = r.plans.front().plan;
        bool onlyRecompute = a.pp() == b.pp();
        for (int s = 0; onlyRecompute && s < a.pp(); ++s) {
            const StagePlan& x = a.stages[static_cast<std::size_t>(s)];
            const StagePlan& y = b.stages[static_cast<std::size_t>(s)];
            onlyRecompute = x.num_layers == y.num_layers && x.tp == y.tp && x.dp == y.dp && x.ep == y.ep && x.etp == y.etp
                && x.devices.front().node == y.devices.front().node && x.device_type == y.device_type;
        }
        QVERIFY2(!onlyRecompute, qPrintable(QString("alternative %1 only changes the recompute of #1").arg(i + 1)));
    }

    // The user's current configuration is estimated in the same cost model.
    SearchOptions withCurrent;
    withCurrent.baselines = false;
    withCurrent.current = r.uniform_baseline->plan;
    const SearchResult c = runSearch(cost, withCurrent);
    QVERIFY(c.current);
    QCOMPARE(c.current->prediction.iteration_time_s, r.uniform_baseline->prediction.iteration_time_s);
}

void SearchEngineTest::optimizerOffloadWhenNothingFits()
{
    // Mixtral-L (paper appendix A, about 122 B parameters) on 16-1 (8 H800 + 8 910B, Table 1):
    // 16 devices hold 18 bytes per parameter on the devices only with the optimizer states in
    // host memory, which is what the paper did on its smallest clusters (appendix A).
    const ModelSpec* large = findModelPreset("Mixtral-L");
    const ModelSpec* medium = findModelPreset("Mixtral-S");
    const Cluster* cluster = findClusterPreset("16-1");
    QVERIFY(large && medium && cluster);
    // 122e9 x 18 bytes = 2.2 TB against 16 x 64-80 GB = 1.15 TB: nothing fits on the devices;
    // 122e9 x 6 bytes (bf16 weights and fp32 gradients) = 732 GB can.
    const CostModel costL(*large, *cluster, DeviceCatalog::builtin());
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.optimizer_offload = OptimizerOffload::Never;
    const SearchResult never = runSearch(costL, opt);
    QVERIFY(never.plans.empty());
    QVERIFY2(QString::fromStdString(never.no_plan_reason).contains("no plan fits in device memory"), never.no_plan_reason.c_str());
    QVERIFY(!never.offload_needed);

    // "If needed" tries a quarter, half and all of the optimizer in host memory and keeps the
    // fastest; "always" offloads all of it, one of the shares tried, so it cannot be faster.
    opt.optimizer_offload = OptimizerOffload::IfNeeded;
    const SearchResult ifNeeded = runSearch(costL, opt);
    QVERIFY(ifNeeded.offload_needed);
    QVERIFY(!ifNeeded.plans.empty());
    const double share = ifNeeded.plans.front().plan.optimizer_offload_fraction;
    QVERIFY(share == 0.25 || share == 0.5 || share == 1.0);
    for (const RankedPlan& rp : ifNeeded.plans) {
        QCOMPARE(rp.plan.optimizer_offload_fraction, share);
        QVERIFY(rp.prediction.feasible);
    }
    opt.optimizer_offload = OptimizerOffload::Always;
    const SearchResult allOff = runSearch(costL, opt);
    QVERIFY(!allOff.plans.empty());
    for (const StageEstimate& st : allOff.plans.front().prediction.stages)
        QCOMPARE(st.memory.optimizer, 0.0);
    QVERIFY(ifNeeded.plans.front().prediction.iteration_time_s <= allOff.plans.front().prediction.iteration_time_s);
    opt.optimizer_offload = OptimizerOffload::IfNeeded;

    // Mixtral-S fits without offload, so "if needed" leaves the optimizer on the devices and
    // "always" moves it, at the cost of the host's Adam step.
    const CostModel costS(*medium, *cluster, DeviceCatalog::builtin());
    const SearchResult fits = runSearch(costS, opt);
    QVERIFY(!fits.offload_needed);
    QVERIFY(!fits.plans.empty());
    QCOMPARE(fits.plans.front().plan.optimizer_offload_fraction, 0.0);
    opt.optimizer_offload = OptimizerOffload::Always;
    const SearchResult always = runSearch(costS, opt);
    QVERIFY(!always.plans.empty());
    QCOMPARE(always.plans.front().plan.optimizer_offload_fraction, 1.0);
    QVERIFY(always.plans.front().prediction.breakdown.optimizer > fits.plans.front().prediction.breakdown.optimizer);

    // Megatron-Core offloads only from the distributed optimizer (optimizer/__init__.py raises
    // otherwise): a model trained without it gets it in its offloaded plans, and only there.
    ModelSpec plainOptimizer = *medium;
    plainOptimizer.training.use_distributed_optimizer = false;
    const CostModel costP(plainOptimizer, *cluster, DeviceCatalog::builtin());
    const SearchResult offloaded = runSearch(costP, opt);
    QVERIFY(!offloaded.plans.empty());
    for (const RankedPlan& rp : offloaded.plans) {
        QCOMPARE(rp.plan.optimizer_offload_fraction, 1.0);
        QVERIFY(rp.plan.distributed_optimizer);
        QVERIFY(deploymentProblems(rp.plan, plainOptimizer, *cluster, DeviceCatalog::builtin(), rp.plan.target).empty());
    }
    opt.optimizer_offload = OptimizerOffload::Never;
    const SearchResult onDevices = runSearch(costP, opt);
    QVERIFY(!onDevices.plans.empty());
    for (const RankedPlan& rp : onDevices.plans)
        QVERIFY(!rp.plan.distributed_optimizer);
}

void SearchEngineTest::modelLargerThanTheClusterAnswersAtOnce()
{
    // GPT-1T (Korthikanti Table 3: 128 layers, h 25600, V 51200, s 2048) has
    // 12 L h^2 (1 + 13/(12h) + (V + s)/(12 L h)) = 1.008e12 parameters (Narayanan eq. 2).
    // Even with the optimizer in host memory every parameter keeps a bf16 weight and an fp32
    // gradient on a device: 6 bytes x 1.008e12 = 5.5 TiB, against 8 x 80 GiB = 640 GiB on one
    // H800 node. The search answers before it explores a state, with the whole model's figure.
    const ModelSpec* model = findModelPreset("GPT-1T");
    QVERIFY(model);
    const Cluster cluster = test::nodesOf("H800", 1);
    const CostModel cost(*model, cluster, DeviceCatalog::builtin());
    QVERIFY(std::fabs(countParameters(*model).total / 1.008e12 - 1) < 0.001);
    SearchOptions opt;
    opt.threads = 2;
    const SearchResult r = runSearch(cost, opt);
    QVERIFY(r.plans.empty());
    QCOMPARE(r.states, 0LL);
    QCOMPARE(r.no_plan_reason,
             std::string("no plan fits in device memory: the model's 1.01 trillion parameters need at least 5.5 TiB on the devices "
                         "for their weights and gradients even with the optimizer offloaded to the host (6 bytes each), and the "
                         "cluster's 8 devices hold 640.0 GiB"));
    // With the optimizer kept on the devices: 18 bytes x 1.008e12 = 16.5 TiB.
    opt.optimizer_offload = OptimizerOffload::Never;
    const SearchResult never = runSearch(cost, opt);
    QCOMPARE(never.states, 0LL);
    QVERIFY2(never.no_plan_reason.find("need at least 16.5 TiB for their weights, gradients and optimizer states (18 bytes each; "
                                       "5.5 TiB with the optimizer offloaded to the host)")
                 != std::string::npos,
             never.no_plan_reason.c_str());
}

void SearchEngineTest::hostMemoryBoundsTheOffload()
{
    // Mixtral-L on 16-1 as above. With host memory unknown the fastest plan keeps all of the
    // optimizer on the host: 16 bytes per offloaded parameter, about 1.3 TiB on a node
    // (docs/search.md section 8). With 1 TiB per node that plan is out.
    const ModelSpec* large = findModelPreset("Mixtral-L");
    const Cluster* preset = findClusterPreset("16-1");
    QVERIFY(large && preset);
    SearchOptions opt;
    opt.threads = 2;
    double unlimitedNeed = 0;
    {
        const CostModel cost(*large, *preset, DeviceCatalog::builtin());
        opt.baselines = false;
        const SearchResult r = runSearch(cost, opt);
        QVERIFY(!r.plans.empty());
        unlimitedNeed = r.plans.front().prediction.host_memory_per_node_gib;
        opt.baselines = true;
    }
    QVERIFY2(unlimitedNeed > 1024, qPrintable(QString::number(unlimitedNeed)));

    Cluster c = *preset;
    for (Node& n : c.nodes)
        n.host_memory_gib = 1024;
    const CostModel cost(*large, c, DeviceCatalog::builtin());
    const SearchResult r = runSearch(cost, opt);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY(r.offload_needed);
    for (const RankedPlan& rp : r.plans) {
        QVERIFY(rp.prediction.feasible);
        QVERIFY(rp.prediction.host_memory_per_node_gib <= 1024);
        QCOMPARE(rp.prediction.host_memory_capacity_gib, 1024.0);
        // The search's per-rank check (an eighth of the node each) implies the node's sum.
        for (const StageEstimate& st : rp.prediction.stages)
            QVERIFY(st.memory.host <= st.memory.host_capacity);
    }
    // Only unbalanced plans fit this budget: the load-balance pruning (delta 0.2) discards
    // them while the uniform baseline (PP 2, full recompute) fits, so the search runs again
    // without the prunings, bounded by that baseline, and finds a faster plan.
    QVERIFY(r.exact_fallback);
    QVERIFY(r.uniform_baseline && r.uniform_baseline->prediction.feasible);
    QVERIFY(r.plans.front().prediction.iteration_time_s <= r.uniform_baseline->prediction.iteration_time_s);
    QVERIFY(r.plans.front().plan.name.find("baseline") == std::string::npos);

    // 64 GiB per node holds no share: 122e9 parameters x 16 bytes x 0.25 over 2 nodes is
    // about 220 GiB a node even for the smallest share.
    for (Node& n : c.nodes)
        n.host_memory_gib = 64;
    const CostModel tight(*large, c, DeviceCatalog::builtin());
    const SearchResult none = runSearch(tight, opt);
    QVERIFY(none.plans.empty());
    QVERIFY2(QString::fromStdString(none.no_plan_reason).contains("no plan fits in device and host memory"),
             none.no_plan_reason.c_str());
    QVERIFY(!none.exact_fallback);   // no baseline fits either
}

namespace {

// The same search with every pruning on but exact (--exact) and with the exhaustive oracle.
std::pair<SearchResult, SearchResult> exactAndExhaustive(const CostModel& cost, SearchOptions opt)
{
    opt.threads = 2;
    opt.baselines = false;
    opt.exact = true;
    SearchResult exact = runSearch(cost, opt);
    opt.algorithm = Algorithm::Exhaustive;
    return {std::move(exact), runSearch(cost, opt)};
}

// 8 layers of h 1024 under a 131,072-word vocabulary, GBS 16: an output layer that outweighs
// six of its layers (loadBalanceCountsTheOutputLayer).
ModelSpec wideVocabularyModel()
{
    ModelSpec m;
    m.name = "wide-vocabulary";
    m.num_layers = 8;
    m.hidden_size = 1024;
    m.num_attention_heads = 16;
    m.vocab_size = 131072;
    m.seq_length = 4096;
    m.untie_embeddings_and_output_weights = true;
    m.training.micro_batch_size = 1;
    m.training.global_batch_size = 16;
    return m;
}

// The prunings alone (no exact check, which would hide what they lose) and --exact, on two
// threads, without baselines.
std::pair<SearchResult, SearchResult> prunedAndExact(const CostModel& cost)
{
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.exact_check_work = 0;
    SearchResult pruned = runSearch(cost, opt);
    opt.exact = true;
    return {std::move(pruned), runSearch(cost, opt)};
}

} // namespace

void SearchEngineTest::unrunnablePlansDoNotPrune()
{
    // A 4-layer dense model (h 4096, F 12288, 16 heads, GBS 32) on a node of 2 and a node of 4
    // H800 for Megatron-LM. A plan over both nodes breaks Megatron-LM's node order (stage s
    // on ranks [s W/PP, (s+1) W/PP) needs nodes of one size: reference section 2), so it must
    // not become the bound that prunes the runnable ones: --exact equals the exhaustive search.
    ModelSpec m;
    m.name = "four-layer";
    m.num_layers = 4;
    m.hidden_size = 4096;
    m.ffn_hidden_size = 12288;
    m.num_attention_heads = 16;
    m.vocab_size = 32000;
    m.seq_length = 2048;
    m.swiglu = true;
    m.add_bias_linear = false;
    m.normalization = "RMSNorm";
    m.training.micro_batch_size = 1;
    m.training.global_batch_size = 32;
    m.training.use_distributed_optimizer = true;
    const Cluster c = clusterFromShorthand("H800:1x2,H800:1x4", DeviceCatalog::builtin());
    const CostModel cost(m, c, DeviceCatalog::builtin());
    SearchOptions opt;
    opt.target = Target::Megatron;
    const auto [exact, all] = exactAndExhaustive(cost, opt);
    QVERIFY2(!exact.plans.empty() && !all.plans.empty(), exact.no_plan_reason.c_str());
    QCOMPARE(exact.plans.front().prediction.iteration_time_s, all.plans.front().prediction.iteration_time_s);
    for (const RankedPlan& rp : exact.plans)
        QVERIFY(isDeployable(rp.plan, m, c, DeviceCatalog::builtin(), Target::Megatron));
}

void SearchEngineTest::denseEndLayerGetsItsOwnFloor()
{
    // Mixtral-S cut to 8 layers whose first is dense with a 1024-wide FFN (DeepSeek's
    // first_k_dense_replace = 1 pattern), GBS 16, on 4 H800 and 4 A100. HS-DP's floors (the
    // least time one more layer adds) must include the dense layer though it sits only at
    // layer 0: floors probed on MoE layers alone are above the dense layer's time, and
    // --exact then returned 0.579 s where the exhaustive search's best is 0.545 s. The same
    // with the dense layer last (there the old probes happened to give the optimum too).
    const ModelSpec* preset = findModelPreset("Mixtral-S");
    QVERIFY(preset);
    for (const bool denseLast : {false, true}) {
        ModelSpec m = *preset;
        m.num_layers = 8;
        m.ffn_hidden_size = 1024;
        m.moe_layer_pattern.assign(8, 1);
        m.moe_layer_pattern[denseLast ? 7 : 0] = 0;
        m.training.global_batch_size = 16;
        m.training.micro_batch_size = 1;
        const Cluster c = clusterFromShorthand("H800:1x4,A100-80GB:1x4", DeviceCatalog::builtin());
        const auto [exact, all] = exactAndExhaustive(CostModel(m, c, DeviceCatalog::builtin()), SearchOptions{});
        QVERIFY2(!exact.plans.empty() && !all.plans.empty(), exact.no_plan_reason.c_str());
        QCOMPARE(exact.plans.front().prediction.iteration_time_s, all.plans.front().prediction.iteration_time_s);
    }
}

void SearchEngineTest::smallNodeOfTheSameTypeKeepsTensorParallelism()
{
    // GPT-22B cut to 4 layers (64 heads, GBS 4) on one node of 8 H800: the best plan runs
    // TP 4 (PP 2). A node of 1 H800 more may stay idle, so the optimum cannot get slower. TP and ETP
    // used to divide the smallest node of the type (1), which left TP 1 everywhere: --exact
    // and the exhaustive search both gave 0.102 s against 0.041 s. TP now divides the devices
    // a group has on each of its nodes (SearchSpace::knobFits).
    ModelSpec m = *findModelPreset("GPT-22B");
    m.num_layers = 4;
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster one = clusterFromShorthand("H800:1x8", cat);
    const Cluster more = clusterFromShorthand("H800:1x8,H800:1x1", cat);
    const auto [exactOne, allOne] = exactAndExhaustive(CostModel(m, one, cat), SearchOptions{});
    const auto [exact, all] = exactAndExhaustive(CostModel(m, more, cat), SearchOptions{});
    QVERIFY(!exactOne.plans.empty() && !exact.plans.empty() && !all.plans.empty());
    const double best = exactOne.plans.front().prediction.iteration_time_s;
    QCOMPARE(exactOne.plans.front().plan.stages.front().tp, 4);
    QCOMPARE(exact.plans.front().prediction.iteration_time_s, best);
    QCOMPARE(all.plans.front().prediction.iteration_time_s, best);
    QCOMPARE(exact.plans.front().plan.stages.front().tp, 4);
    // A group over both nodes (9 devices) still keeps TP 1: 9 % 8 and the node of 1.
    const SearchSpace space(m, more, cat);
    QCOMPARE(space.pieceGcd(0, 0, 9), 1);
}

void SearchEngineTest::wideSelectiveRecomputeRepeatsWholeBlocks()
{
    // Megatron-LM's setting beside the element-wise modules (docs/search.md section 1): the
    // MoE layers whole with their pre-MLP norm ("--recompute-modules layernorm moe", as the
    // Qwen3 recipes write it), the dense MLPs whole, and the attention core where unfused; the
    // norm not under delayed-scaling FP8, which Megatron-Core refuses.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const auto wide = [&](const ModelSpec& m, bool fused = true) {
        CostOptions o;
        o.fused_attention = fused;
        return wideSelectiveRecomputeModules(CostModel(m, clusterFromShorthand("H800:1x8", cat), cat, nullptr, o));
    };
    using namespace recompute_module;
    ModelSpec moeModel = *findModelPreset("Mixtral-8x7B");
    QCOMPARE(wide(moeModel), layernorm | moe);
    QCOMPARE(wide(moeModel, false), core_attn | layernorm | moe);
    ModelSpec alternating = moeModel;
    alternating.moe_layer_freq = 2;   // layers 0, 2, 4, ... MoE, the others dense
    QCOMPARE(wide(alternating), layernorm | mlp | moe);
    moeModel.training.fp8_format = Fp8Format::Hybrid;
    moeModel.training.fp8_recipe = Fp8Recipe::Delayed;
    QCOMPARE(wide(moeModel), moe);
    QCOMPARE(wide(*findModelPreset("LLaMA-2-7B")), mlp);
    QCOMPARE(wide(*findModelPreset("LLaMA-2-7B"), false), core_attn | mlp);
    QCOMPARE(recomputeOfLevel(kSelectiveWide), Recompute::Selective);
    QCOMPARE(recomputeLayersOfLevel(kSelectiveWide, 6), 0);
    QVERIFY(!isFullOfKLevel(kSelectiveWide) && !isFullOfKLevel(kFullAll) && isFullOfKLevel(2));
    QCOMPARE(recomputeLevels(6, true, true), (std::vector<int>{0, 1, kSelectiveWide, 2, 3, 5, kFullAll}));
    // Without level 1 where core_attn alone would save nothing (fused attention, dense model).
    QCOMPARE(recomputeLevels(6, false, true), (std::vector<int>{0, kSelectiveWide, 2, 3, 5, kFullAll}));

    // Where it is the fastest setting that fits. Qwen3-30B-A3B for Megatron-LM on one node of
    // 8 H800 (GBS 512): the best plan recomputes the MoE layers whole (20.103 s, with the native
    // cross-entropy Megatron-LM runs in place of the preset's te). For its stages the
    // element-wise modules do not fit, and every full recompute setting Megatron-LM offers
    // either does not fit or is slower.
    const CostModel cost(*findModelPreset("Qwen3-30B-A3B"), clusterFromShorthand("H800:1x8", cat), cat);
    const SearchResult r = runSearch(cost, megatronPlans(1, 1));
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    const RankedPlan& best = r.plans.front();
    for (const StagePlan& st : best.plan.stages) {
        QCOMPARE(st.recompute, Recompute::Selective);
        QCOMPARE(st.recompute_modules, layernorm | moe);
    }
    int largest = 0;
    for (const StagePlan& st : best.plan.stages)
        largest = std::max(largest, st.num_layers);
    auto timeUnder = [&](Recompute kind, int k, unsigned modules) {
        Plan q = best.plan;
        for (StagePlan& st : q.stages) {
            st.recompute = kind;
            st.recompute_layers = kind == Recompute::Full && k < st.num_layers ? k : 0;
            st.recompute_modules = modules;
        }
        const Prediction p = cost.estimate(q);
        return p.feasible ? p.iteration_time_s : std::numeric_limits<double>::infinity();
    };
    QVERIFY(std::isinf(timeUnder(Recompute::None, 0, 0)));
    QVERIFY(std::isinf(timeUnder(Recompute::Selective, 0, moe_act | layernorm)));
    int fullFits = 0;
    for (int k = 1; k < largest; k *= 2) {
        const double t = timeUnder(Recompute::Full, k, defaults);
        fullFits += std::isinf(t) ? 0 : 1;
        QVERIFY(t > best.prediction.iteration_time_s);
    }
    QVERIFY(timeUnder(Recompute::Full, 0, defaults) > best.prediction.iteration_time_s);
    QVERIFY(fullFits > 0 || !std::isinf(timeUnder(Recompute::Full, 0, defaults)));
    QVERIFY(std::abs(best.prediction.iteration_time_s - 20.103) < 5e-4);
}

void SearchEngineTest::selectiveRecomputeRepeatsWhatSavesMemory()
{
    // The search's selective recompute (docs/search.md section 1): in an MoE model the
    // pre-MLP norm, and the experts' activation where every device type runs Megatron-Core's
    // grouped GEMM (NVIDIA, compute capability 8.0 and above, and AMD CDNA3, whose MI300X AMD's
    // ROCm/Megatron-LM launches with it); the attention core only where
    // its scores are stored (unfused); neither MoE module under delayed-scaling FP8.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ModelSpec moe = *findModelPreset("Mixtral-8x7B");
    const auto modules = [&](const ModelSpec& m, const char* shorthand, bool fused = true) {
        CostOptions o;
        o.fused_attention = fused;
        const CostModel cost(m, clusterFromShorthand(shorthand, cat), cat, nullptr, o);
        const SearchSpace space(m, cost.cluster(), cat);
        const unsigned set = selectiveRecomputeModules(cost, space);
        return std::pair{set, selectiveRecomputeSavesMemory(cost, set)};
    };
    using namespace recompute_module;
    QCOMPARE(modules(moe, "H800:1x8,H20:1x8"), (std::pair{moe_act | layernorm, true}));
    QCOMPARE(modules(moe, "H800:1x8,910B:1x8"), (std::pair{layernorm, true}));
    QCOMPARE(modules(moe, "H100:1x8,MI300X:1x8"), (std::pair{moe_act | layernorm, true}));
    QCOMPARE(modules(moe, "MI300X:1x8,MI250X:1x4"), (std::pair{layernorm, true}));   // CDNA2: no published launch
    {
        // Per run: the H800 alone run grouped GEMM, so a run on them (Megatron-LM cannot mix
        // NCCL and HCCL) recomputes the experts' activation too. Mixtral-L for Megatron-LM on
        // two nodes of each, keeping 5 % of every device free: the best plan, 92.604 s,
        // recomputes them on its H800 stages (with all the memory, 92.117 s without recompute).
        CostOptions headroom;
        headroom.memory_headroom = 0.05;
        const CostModel cost(*findModelPreset("Mixtral-L"), clusterFromShorthand("H800:2x8,910B:2x8", cat), cat, nullptr,
                             headroom);
        const SearchSpace space(cost.model(), cost.cluster(), cat);
        unsigned h800 = 0;
        for (int h = 0; h < space.numTypes(); ++h)
            if (space.types()[static_cast<std::size_t>(h)].name == "H800")
                h800 |= 1u << h;
        QCOMPARE(selectiveRecomputeModules(cost, space, h800), moe_act | layernorm);
        const SearchResult r = runSearch(cost, megatronPlans(1, 1));
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        QVERIFY(std::abs(r.plans.front().prediction.iteration_time_s - 92.604) < 5e-4);
        QCOMPARE(r.plans.front().plan.stages.front().recompute_modules, moe_act | layernorm);
    }
    QCOMPARE(modules(moe, "H800:1x8", false), (std::pair{core_attn | moe_act | layernorm, true}));
    const ModelSpec dense = *findModelPreset("LLaMA-2-7B");
    QCOMPARE(modules(dense, "H800:1x8"), (std::pair{core_attn, false}));
    QCOMPARE(modules(dense, "H800:1x8", false), (std::pair{core_attn, true}));
    moe.training.fp8_format = Fp8Format::Hybrid;
    moe.training.fp8_recipe = Fp8Recipe::Delayed;
    QCOMPARE(modules(moe, "H800:1x8"), (std::pair{core_attn, false}));

    // FlagScale's stages take selective recompute all together or not at all
    // (flagscale.selective-recompute): its per-stage runs go from none to full. Mixtral-S on
    // 16-1 (H800 + 910B) keeps its 12.845 s plan, where one stage recomputes 2 of 5 layers in
    // full, and no plan mixes selective with other settings.
    const ModelSpec& s = *findModelPreset("Mixtral-S");
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.top_k = 3;
    const SearchResult r = runSearch(CostModel(s, *findClusterPreset("16-1"), cat), opt);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY(std::abs(r.plans.front().prediction.iteration_time_s - 12.845) < 5e-4);
    QVERIFY(std::any_of(r.plans.front().plan.stages.begin(), r.plans.front().plan.stages.end(), [](const StagePlan& st) {
        return st.recompute == Recompute::Full && st.recompute_layers == 2 && st.num_layers == 5;
    }));
    // ... and under --target flagscale selective recompute runs as one setting of a pipeline of
    // one knob tuple: Mixtral 8x22B on two nodes of 8 H800 with micro-batches of 1 sequence
    // runs PP 8 of one tuple (TP 2, ETP 2) with moe_act and layernorm recomputed on every
    // stage in 111.519 s.
    {
        SearchOptions fs = opt;
        fs.target = Target::FlagScale;
        fs.top_k = 1;
        fs.micro_batch_size = 1;
        const SearchResult h800 = runSearch(CostModel(*findModelPreset("Mixtral-8x22B"), clusterFromShorthand("H800:2x8", cat), cat), fs);
        QVERIFY2(!h800.plans.empty(), h800.no_plan_reason.c_str());
        QVERIFY(std::abs(h800.plans.front().prediction.iteration_time_s - 111.519) < 5e-4);
        QCOMPARE(h800.plans.front().plan.target, Target::FlagScale);
        QCOMPARE(h800.plans.front().plan.pp(), 8);
        for (const StagePlan& st : h800.plans.front().plan.stages) {
            QCOMPARE(st.recompute, Recompute::Selective);
            QCOMPARE(st.recompute_modules, moe_act | layernorm);
        }
    }
    for (const RankedPlan& rp : r.plans) {
        QVERIFY2(deploymentProblems(rp.plan, s, *findClusterPreset("16-1"), cat, rp.plan.target).empty(), rp.plan.name.c_str());
        const auto selective = [](const StagePlan& st) { return st.recompute == Recompute::Selective; };
        QVERIFY(std::all_of(rp.plan.stages.begin(), rp.plan.stages.end(), selective)
                || std::none_of(rp.plan.stages.begin(), rp.plan.stages.end(), selective));
    }
}

void SearchEngineTest::idleNodeOfAnotherSizeKeepsMegatronPipelines()
{
    // Mixtral 8x7B for Megatron-LM on a node of 8 H800 and a node of 8 H20: the best plan is
    // PP 4 over both (two stages on each node, selective recompute of the experts' activation
    // and the pre-MLP norm, 29.26 s). A node of 4 H20 more, left idle, must not remove it: the
    // check that every node runs the same --nproc_per_node looked at every node of the next
    // type, used or not, and the search fell back to the H800 alone with half the optimizer
    // offloaded (40.35 s against 29.61 s, then the best plan, PP 2).
    const ModelSpec& m = *findModelPreset("Mixtral-8x7B");
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    SearchOptions opt;
    opt.target = Target::Megatron;
    opt.exact = true;
    opt.baselines = false;
    opt.threads = 2;
    const SearchResult two = runSearch(CostModel(m, clusterFromShorthand("H800:1x8,H20:1x8", cat), cat), opt);
    QVERIFY2(!two.plans.empty(), two.no_plan_reason.c_str());
    QCOMPARE(two.plans.front().plan.pp(), 4);
    QVERIFY(std::abs(two.plans.front().prediction.iteration_time_s - 29.26) < 5e-3);
    for (const StagePlan& st : two.plans.front().plan.stages) {
        QCOMPARE(st.recompute, Recompute::Selective);
        QCOMPARE(st.recompute_modules, recompute_module::moe_act | recompute_module::layernorm);
    }
    for (const char* shorthand : {"H800:1x8,H20:1x8,H20:1x4", "H800:1x8,H20:1x4,H20:1x8"}) {
        const Cluster c = clusterFromShorthand(shorthand, cat);
        const SearchResult r = runSearch(CostModel(m, c, cat), opt);
        QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
        QCOMPARE(r.plans.front().prediction.iteration_time_s, two.plans.front().prediction.iteration_time_s);
        QVERIFY(isDeployable(r.plans.front().plan, m, c, cat, Target::Megatron));
    }
}

void SearchEngineTest::alternativesCountDistinctPlans()
{
    // A dense 6-layer model (h 8192, 64 heads, 8 groups, F 24576, seq 8192, GBS 128 of MBS 4,
    // biases) on 2 x 2 MI300X for FlagScale, 30 % kept free, top 3. Every bottleneck pass and
    // recompute level offered the best plan again, and the shared bound counted each copy as
    // one of the 3 best: the bound fell to the best plan and pruned the second and third.
    // --exact returned 1 plan where the exhaustive search returns 14.104, 16.148 and 18.295 s.
    ModelSpec m;
    m.name = "six-layer";
    m.num_layers = 6;
    m.hidden_size = 8192;
    m.ffn_hidden_size = 24576;
    m.num_attention_heads = 64;
    m.num_query_groups = 8;
    m.vocab_size = 50257;
    m.seq_length = 8192;
    m.swiglu = true;
    m.add_bias_linear = true;
    m.normalization = "RMSNorm";
    m.training.micro_batch_size = 4;
    m.training.global_batch_size = 128;
    m.training.use_distributed_optimizer = true;
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    CostOptions co;
    co.memory_headroom = 0.3;
    SearchOptions opt;
    opt.target = Target::FlagScale;
    opt.top_k = 3;
    const auto [exact, all] = exactAndExhaustive(CostModel(m, clusterFromShorthand("MI300X:2x2", cat), cat, nullptr, co), opt);
    QCOMPARE(all.plans.size(), std::size_t(3));
    QCOMPARE(exact.plans.size(), all.plans.size());
    for (std::size_t k = 0; k < all.plans.size(); ++k)
        QCOMPARE(exact.plans[k].prediction.iteration_time_s, all.plans[k].prediction.iteration_time_s);
}

namespace {

// Mixtral-S as a Megatron-LM script runs it on the cluster: PP 2, EP 8, the distributed
// optimizer, node order.
Plan mixtralScriptPlan(const Cluster& c)
{
    UniformKnobs k;
    k.pp = 2;
    k.ep = 8;
    k.distributed_optimizer = true;
    return makeUniformPlan(*findModelPreset("Mixtral-S"), c, DeviceCatalog::builtin(), k);
}

// The best plan of a search for the model, with the script's plan as current configuration.
SearchResult searchWithCurrent(const ModelSpec& model, const Cluster& c, const Plan& current)
{
    const CostModel cost(model, c, DeviceCatalog::builtin());
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.top_k = 1;
    opt.current = current;
    return runSearch(cost, opt);
}

} // namespace

void SearchEngineTest::currentConfigurationOfAnotherModelIsLeftOut()
{
    // A script read for Mixtral-S (24 layers, PP 2 of 12), then the model edited to 20
    // layers: the script's stages no longer hold the model's layers. The search still
    // returns its plans; the current configuration is left out with the reason, where it
    // used to fail the whole search.
    const ModelSpec* preset = findModelPreset("Mixtral-S");
    QVERIFY(preset);
    const Cluster c = clusterFromShorthand("H800:2x8", DeviceCatalog::builtin());
    const Plan script = mixtralScriptPlan(c);
    ModelSpec edited = *preset;
    edited.num_layers = 20;
    const SearchResult r = searchWithCurrent(edited, c, script);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY(!r.current);
    QCOMPARE(QString::fromStdString(r.current_error), QStringLiteral("plan.stages: the stages hold 24 layers, the model has 20"));
    // The same script against its own model is estimated.
    const SearchResult r2 = searchWithCurrent(*preset, c, script);
    QVERIFY(r2.current && r2.current_error.empty());
}

void SearchEngineTest::currentConfigurationOnTwoVendorsRunsUnderFlagScale()
{
    // A Megatron-LM script's PP 2 over 8 H800 (NCCL) and 8 MI300X (RCCL): Megatron-LM cannot
    // launch one job on two collective libraries (reference/megatron-and-flagscale.md), so
    // the current configuration's target is FlagScale, as `hapmoe estimate` says.
    const Cluster c = clusterFromShorthand("H800:1x8,MI300X:1x8", DeviceCatalog::builtin());
    Plan script = mixtralScriptPlan(c);
    script.target = Target::Megatron;
    const SearchResult r = searchWithCurrent(*findModelPreset("Mixtral-S"), c, script);
    QVERIFY(r.current);
    QCOMPARE(int(r.current->plan.target), int(Target::FlagScale));
}

void SearchEngineTest::currentConfigurationComparedAlike()
{
    const ModelSpec* preset = findModelPreset("Mixtral-S");
    QVERIFY(preset);
    const Cluster c = clusterFromShorthand("H800:2x8", DeviceCatalog::builtin());
    const Plan script = mixtralScriptPlan(c);   // DP 8 x micro-batch 1, global batch 256
    QCOMPARE(script.global_batch_size, 256);
    const CostModel cost(*preset, c, DeviceCatalog::builtin());
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.top_k = 1;
    opt.current = script;

    // A search of another global batch (--gbs 512) costs the script's configuration at that
    // batch too, 64 micro-batches where the script runs 32, and says so.
    opt.global_batch_size = 512;
    SearchResult r = runSearch(cost, opt);
    QVERIFY(r.current);
    QCOMPARE(r.current->plan.global_batch_size, 512);
    Plan doubled = script;
    doubled.global_batch_size = 512;
    QCOMPARE(r.current->prediction.iteration_time_s, cost.estimate(doubled).iteration_time_s);
    QCOMPARE(QString::fromStdString(r.current_note),
             QStringLiteral("the current configuration is costed at the plans' global batch, 512 sequences (it was set up for 256)"));

    // A batch its DP x micro-batch (8) does not divide: its own batch, compared per sequence.
    opt.global_batch_size = 260;
    r = runSearch(cost, opt);
    QVERIFY2(!r.plans.empty() && r.current, r.no_plan_reason.c_str());
    QCOMPARE(r.current->plan.global_batch_size, 256);
    QCOMPARE(r.current->prediction.iteration_time_s, cost.estimate(script).iteration_time_s);
    QVERIFY2(r.current_note.find("runs its global batch of 256 sequences, the plans 260 (it cannot run theirs: no multiple of its "
                                 "DP x micro-batch, 8): compared by time per sequence") != std::string::npos,
             r.current_note.c_str());
    QCOMPARE(secondsPerSequence(*r.current), r.current->prediction.iteration_time_s / 256);

    // The best plan as the current configuration: the note says they take the same time.
    opt.global_batch_size.reset();
    r = runSearch(cost, opt);
    QVERIFY(!r.plans.empty());
    opt.current = r.plans.front().plan;
    r = runSearch(cost, opt);
    QVERIFY(r.current && r.current_note.empty());
    QCOMPARE(QString::fromStdString(currentConfigurationNote(r)),
             QStringLiteral("the best plan found takes the time the current configuration takes"));

    // In FP8, a PP 2 over H800 and 910B (no FP8 rate, and another collective library): neither
    // launcher can run it, which the note says; it is costed all the same.
    ModelSpec fp8 = *preset;
    fp8.training.fp8_format = Fp8Format::Hybrid;
    const Cluster mixed = clusterFromShorthand("H800:1x8,910B:1x8", DeviceCatalog::builtin());
    Plan both = mixtralScriptPlan(mixed);
    both.target = Target::Megatron;
    const SearchResult m = searchWithCurrent(fp8, mixed, both);
    QVERIFY(m.current);
    // Both launchers give the same reason, said once.
    QVERIFY2(m.current_note.find("the current configuration on this cluster: neither Megatron-LM nor FlagScale can launch it: "
                                 "stage 1 (910B-376T): its catalog entry gives no FP8 rate")
                 != std::string::npos,
             m.current_note.c_str());

    // Interleaved (VPP 2 on PP 2), the script's configuration needs its micro-batches a
    // multiple of PP: at a global batch of 24 (3 micro-batches of DP 8) it keeps its own 256,
    // compared per sequence, where costing it at 24 would have been a plan it cannot run.
    Plan interleaved = script;
    interleaved.vpp = 2;
    opt.current = interleaved;
    opt.global_batch_size = 24;
    r = runSearch(cost, opt);
    QVERIFY2(r.current, r.current_error.c_str());
    QCOMPARE(r.current->plan.global_batch_size, 256);
    QVERIFY2(r.current_note.find("(it cannot run theirs: 3 micro-batches, no multiple of its PP 2 as its interleaved schedule "
                                 "needs): compared by time per sequence") != std::string::npos,
             r.current_note.c_str());
    QVERIFY2(r.current_note.find("cannot launch") == std::string::npos, r.current_note.c_str());
    // Whether it is faster is then said per sequence.
    const std::string advice = currentConfigurationNote(r);
    QVERIFY2(advice.empty() || advice.find("per sequence, at its own global batch of 256") != std::string::npos, advice.c_str());
}

namespace {

// Three H800 nodes with the given switches and links: the exact answer equals that for the
// same cluster made irregular by an unrelated field (host memory on the last node), where
// every node is costed on its own. Returns the cluster.
Cluster expectSameAnswerAsIrregular(std::initializer_list<int> switches, const std::vector<Link>& links, int globalBatch)
{
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    auto cluster = [&](double hostMemory) {
        Cluster c = test::nodesOf("H800", 3);
        c.nodes[2].host_memory_gib = hostMemory;
        test::addSwitches(c, switches);
        c.links = links;
        return c;
    };
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.exact = true;
    opt.global_batch_size = globalBatch;
    const Cluster plain = cluster(0), irregular = cluster(2048);
    const SearchResult a = runSearch(CostModel(*llama, plain, DeviceCatalog::builtin()), opt);
    const SearchResult b = runSearch(CostModel(*llama, irregular, DeviceCatalog::builtin()), opt);
    if (a.plans.empty() || b.plans.empty())
        qWarning("no plan: %s / %s", a.no_plan_reason.c_str(), b.no_plan_reason.c_str());
    else if (a.plans.front().prediction.iteration_time_s != b.plans.front().prediction.iteration_time_s)
        qWarning("%.6f s against %.6f s", a.plans.front().prediction.iteration_time_s, b.plans.front().prediction.iteration_time_s);
    const bool same = !a.plans.empty() && !b.plans.empty()
        && a.plans.front().prediction.iteration_time_s == b.plans.front().prediction.iteration_time_s;
    return same ? plain : Cluster{};
}

} // namespace

void SearchEngineTest::nodesWithSlowLinksAreNotInterchangeable()
{
    // Three H800 nodes on one switch, the first linked at 16 GB/s instead of 400: its devices
    // get 2 GB/s each off the node (docs/cost-model.md section 6), so a stage there costs
    // more than the same stage on another node and the search may not reuse one for the
    // other.
    const Cluster c = expectSameAnswerAsIrregular({10}, {{0, 10, 16, 5}, {1, 10, 400, 5}, {2, 10, 400, 5}}, 192);
    QVERIFY(!c.nodes.empty());
}

void SearchEngineTest::nodesBehindOversubscribedLeavesAreNotInterchangeable()
{
    // Three H800 nodes: two under a leaf switch whose uplink carries an eighth of its down
    // links, the third under another leaf. A group on nodes 1 and 2 crosses the spine at an
    // eighth of the NIC rate, one on nodes 0 and 1 does not (docs/cost-model.md section 6), so
    // groups at the same offset in a node do not cost the same.
    const Cluster c = expectSameAnswerAsIrregular(
        {10, 11, 12}, {{0, 10, 400, 5}, {1, 10, 400, 5}, {2, 11, 400, 5}, {10, 12, 100, 5}, {11, 12, 400, 5}}, 128);
    QVERIFY(!c.nodes.empty());
    // The space does not treat the type as regular (its caches key groups by their offset in
    // a node); with the uplink as wide as the down links it does.
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(!SearchSpace(*llama, c, DeviceCatalog::builtin()).types().front().regular);
    Cluster wide = c;
    wide.links[3].bandwidth_gbytes_per_s = 800;
    QVERIFY(SearchSpace(*llama, wide, DeviceCatalog::builtin()).types().front().regular);
}

void SearchEngineTest::microBatchSizesAreSearchedEach()
{
    // The sizes tried when asked to choose: 1, 2, 4, 8 and the model's own, those dividing
    // the global batch, ascending.
    QCOMPARE(microBatchCandidates(256), (std::vector<int>{1, 2, 4, 8}));
    QCOMPARE(microBatchCandidates(256, 16), (std::vector<int>{1, 2, 4, 8, 16}));
    QCOMPARE(microBatchCandidates(12, 3), (std::vector<int>{1, 2, 3, 4}));
    QCOMPARE(microBatchCandidates(6, 4), (std::vector<int>{1, 2}));
    QCOMPARE(microBatchCandidates(1), std::vector<int>{1});

    // LLaMA-2 7B (global batch 256) on two A100 nodes. Searched one size at a time, the
    // best plans take 11.894 s at 1, 11.883 s at 2 and 11.920 s at 4: at 2 the GEMMs are
    // larger and the pipeline has micro-batches enough. Searched over the three, the plans
    // are the three fastest of the three searches' lists, the baselines the fastest of each
    // kind, and the counters their sums.
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(llama);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(*llama, clusterFromShorthand("A100:2x8", cat), cat);
    SearchOptions opt;
    opt.threads = 1;   // the counts of two threads depend on which finds a plan first
    opt.top_k = 3;
    std::vector<double> times, uniforms;
    long long states = 0;
    double best = std::numeric_limits<double>::infinity();
    for (const int mbs : {1, 2, 4}) {
        SearchOptions one = opt;
        one.micro_batch_size = mbs;
        const SearchResult r = runSearch(cost, one);
        QVERIFY(!r.plans.empty() && r.uniform_baseline);
        QVERIFY(r.micro_batch_sizes.empty());
        for (const RankedPlan& rp : r.plans) {
            QCOMPARE(rp.plan.stages.front().micro_batch_size, mbs);
            times.push_back(rp.prediction.iteration_time_s);
        }
        uniforms.push_back(r.uniform_baseline->prediction.iteration_time_s);
        states += r.states;
        best = std::min(best, r.plans.front().prediction.iteration_time_s);
    }
    std::sort(times.begin(), times.end());
    QVERIFY(std::abs(best - 11.883) < 5e-4);

    opt.micro_batch_sizes = {1, 2, 4};
    std::mutex mutex;
    std::vector<double> fractions;
    const SearchResult all = runSearch(cost, opt, nullptr, [&](const SearchProgress& p) {
        std::lock_guard<std::mutex> lock(mutex);
        fractions.push_back(p.fraction);
    });
    QCOMPARE(all.micro_batch_sizes, (std::vector<int>{1, 2, 4}));
    QCOMPARE(all.plans.size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
        QCOMPARE(all.plans[i].prediction.iteration_time_s, times[i]);
        QCOMPARE(all.plans[i].plan.name, "HS-DP #" + std::to_string(i + 1));
    }
    QCOMPARE(all.plans.front().plan.stages.front().micro_batch_size, 2);
    QCOMPARE(all.uniform_baseline->prediction.iteration_time_s, *std::min_element(uniforms.begin(), uniforms.end()));
    QCOMPARE(all.states, states);
    QVERIFY(!all.timed_out && !all.cancelled);
    QVERIFY(!fractions.empty() && fractions.back() == 1.0);
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));

    // A cancel between two passes: the result says so and names only the sizes searched
    // (the progress reaches a third when the first pass ends).
    {
        std::atomic<bool> cancel{false};
        const SearchResult stopped = runSearch(cost, opt, &cancel, [&](const SearchProgress& p) {
            if (p.fraction >= 1.0 / 3.0)
                cancel = true;
        });
        QVERIFY(stopped.cancelled);
        QVERIFY(!stopped.micro_batch_sizes.empty() && stopped.micro_batch_sizes.size() < 3);
        QCOMPARE(stopped.micro_batch_sizes.front(), 1);
    }

    // One size in the list is a search at that size.
    SearchOptions four = opt;
    four.micro_batch_sizes = {4};
    SearchOptions plain = opt;
    plain.micro_batch_sizes.clear();
    plain.micro_batch_size = 4;
    const SearchResult a = runSearch(cost, four), b = runSearch(cost, plain);
    QVERIFY(samePlans(a, b));
    QVERIFY(a.micro_batch_sizes.empty());
}

void SearchEngineTest::fastestOffloadKeepsTheFastestPlan()
{
    // Mixtral-L on 16-2 (8 H800 + 8 MI300X, Table 1). "If needed": the pruned search finds
    // plans only with offload, the best 81.759 s with a quarter of the optimizer in host
    // memory; the exact check then finds plans on the devices, and the policy keeps the best
    // of them, 101.883 s, though slower. "Fastest" searches the devices and every share and
    // keeps the fastest plan: 81.387 s with a quarter offloaded, which its exact check found
    // below the pruned search's 81.759 s.
    const ModelSpec* large = findModelPreset("Mixtral-L");
    QVERIFY(large);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(*large, resolveCluster("16-2", cat), cat);
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    // The last progress report gives the returned plan's time, not the faster offloaded one
    // the pruned search had reported.
    std::mutex mutex;
    double lastBest = 0;
    const SearchResult ifNeeded = runSearch(cost, opt, nullptr, [&](const SearchProgress& p) {
        std::lock_guard<std::mutex> lock(mutex);
        lastBest = p.best_time_s;
    });
    opt.optimizer_offload = OptimizerOffload::Fastest;
    const SearchResult fastest = runSearch(cost, opt);
    QVERIFY(!ifNeeded.plans.empty() && !fastest.plans.empty());
    QVERIFY(ifNeeded.exactChecked() && fastest.exactChecked());
    QCOMPARE(ifNeeded.plans.front().plan.optimizer_offload_fraction, 0.0);
    QVERIFY(std::abs(ifNeeded.plans.front().prediction.iteration_time_s - 101.883) < 5e-4);
    QVERIFY(std::abs(ifNeeded.pruned_best_s - 81.759) < 5e-4);
    QCOMPARE(lastBest, ifNeeded.plans.front().prediction.iteration_time_s);
    QCOMPARE(fastest.plans.front().plan.optimizer_offload_fraction, 0.25);
    QVERIFY(std::abs(fastest.plans.front().prediction.iteration_time_s - 81.387) < 5e-4);
    QVERIFY(std::abs(fastest.pruned_best_s - 81.759) < 5e-4);
    QVERIFY(fastest.optimizer_offload == OptimizerOffload::Fastest);
    // Three plans: the three fastest over every pass, each pass and the check looking only
    // for plans faster than the third so far; --exact's three. Whether the pruned search found
    // a plan on the devices (it did not) does not depend on K.
    {
        SearchOptions k3 = opt;
        k3.top_k = 3;
        const SearchResult three = runSearch(cost, k3);
        k3.exact = true;
        const SearchResult exact3 = runSearch(cost, k3);
        QVERIFY(three.exactChecked());
        QCOMPARE(three.plans.size(), std::size_t(3));
        QCOMPARE(three.plans.front().prediction.iteration_time_s, fastest.plans.front().prediction.iteration_time_s);
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(three.plans[i].prediction.iteration_time_s, exact3.plans[i].prediction.iteration_time_s);
            QCOMPARE(three.plans[i].plan.name, "HS-DP #" + std::to_string(i + 1));
        }
        QVERIFY(fastest.offload_needed && three.offload_needed);
    }

    // Mixtral-S on 16-1 fits on the devices, where the optimizer step costs no host time:
    // "fastest" keeps the plan "if needed" finds there.
    const ModelSpec* medium = findModelPreset("Mixtral-S");
    QVERIFY(medium);
    const CostModel costS(*medium, resolveCluster("16-1", cat), cat);
    const SearchResult fast = runSearch(costS, opt);
    opt.optimizer_offload = OptimizerOffload::IfNeeded;
    const SearchResult onDevice = runSearch(costS, opt);
    QVERIFY(!fast.plans.empty() && !onDevice.plans.empty());
    QCOMPARE(fast.plans.front().plan.optimizer_offload_fraction, 0.0);
    QVERIFY(!fast.offload_needed);
    QCOMPARE(fast.plans.front().prediction.iteration_time_s, onDevice.plans.front().prediction.iteration_time_s);
}

void SearchEngineTest::offloadAlternativesComeFromEveryShare()
{
    // Mixtral-L (about 122 B parameters) on one node of 8 MI300X: 122e9 x 18 bytes = 2.2 TB
    // against 8 x 192 GB = 1.5 TB, so "if needed" offloads. Its best plans keep half of the
    // optimizer in host memory; asked for eight, the alternatives are the eight fastest over
    // every share, as --exact's eight are: some keep all of it on the host, faster than the
    // sixth-fastest plan with half. Each share's pass and the exact check look only for plans
    // faster than the eighth so far, and the check finishes.
    const ModelSpec* large = findModelPreset("Mixtral-L");
    QVERIFY(large);
    const CostModel cost(*large, test::nodesOf("MI300X", 1), DeviceCatalog::builtin());
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.top_k = 8;
    const SearchResult eight = runSearch(cost, opt);
    opt.exact = true;
    const SearchResult exact8 = runSearch(cost, opt);
    QVERIFY(eight.offload_needed && exact8.offload_needed);
    QCOMPARE(eight.exact_check, ExactCheck::Finished);
    QCOMPARE(eight.plans.size(), std::size_t(8));
    QCOMPARE(exact8.plans.size(), std::size_t(8));
    std::set<double> shares;
    for (std::size_t i = 0; i < eight.plans.size(); ++i) {
        const RankedPlan& rp = eight.plans[i];
        QVERIFY(rp.prediction.feasible);
        QCOMPARE(rp.plan.name, "HS-DP #" + std::to_string(i + 1));
        QCOMPARE(rp.prediction.iteration_time_s, exact8.plans[i].prediction.iteration_time_s);
        QCOMPARE(rp.plan.optimizer_offload_fraction, exact8.plans[i].plan.optimizer_offload_fraction);
        if (i > 0)
            QVERIFY(eight.plans[i - 1].prediction.iteration_time_s <= rp.prediction.iteration_time_s);
        shares.insert(rp.plan.optimizer_offload_fraction);
    }
    QCOMPARE(eight.plans.front().plan.optimizer_offload_fraction, 0.5);
    QVERIFY(shares.count(1.0) == 1);
}

void SearchEngineTest::prunedOutPlansAreFoundBeforeOffloading()
{
    // LLaMA-2 7B on a node of 8 and a node of 4 H800 for Megatron-LM: only plans on one node
    // run (torchrun's one --nproc_per_node), which the load-balance pruning would discard in
    // the cluster's order. The search finds one (docs/search.md section 1), and it runs on
    // Megatron-LM.
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(llama);
    const Cluster c = clusterFromShorthand("H800:1x8,H800:1x4", DeviceCatalog::builtin());
    const CostModel cost(*llama, c, DeviceCatalog::builtin());
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.target = Target::Megatron;
    const SearchResult r = runSearch(cost, opt);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY(deploymentProblems(r.plans.front().plan, *llama, c, DeviceCatalog::builtin(), Target::Megatron).empty());

    // Mixtral 8x22B on 4 H800 and 8 910B: nothing fits on the devices, and with the prunings
    // nothing fits with any offload share either; without them a plan fits (the search used
    // to give up with exit code 1). The answer is --exact's.
    const ModelSpec* big = findModelPreset("Mixtral-8x22B");
    QVERIFY(big);
    const Cluster mixed = clusterFromShorthand("H800:1x4,910B:1x8", DeviceCatalog::builtin());
    const CostModel costB(*big, mixed, DeviceCatalog::builtin());
    SearchOptions dflt;
    dflt.threads = 2;
    dflt.baselines = false;
    const SearchResult d = runSearch(costB, dflt);
    QVERIFY2(!d.plans.empty(), d.no_plan_reason.c_str());
    QVERIFY(d.exact_fallback);
    dflt.exact = true;
    const SearchResult e = runSearch(costB, dflt);
    QVERIFY(!e.plans.empty());
    QCOMPARE(d.plans.front().prediction.iteration_time_s, e.plans.front().prediction.iteration_time_s);
}

void SearchEngineTest::nodeListingOrderDoesNotMatter()
{
    // A type whose nodes differ in size: the search numbers the devices in two canonical
    // orders (largest node first, smallest first), so the cluster's listing order changes no
    // answer. LLaMA-2 7B on H800 nodes of 2 and 8 used to give 7.480 s listed [2, 8] and a
    // faster plan listed [8, 2] (docs/search.md section 1).
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(llama);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster small = clusterFromShorthand("H800:1x2,H800:1x8", cat);
    const Cluster large = clusterFromShorthand("H800:1x8,H800:1x2", cat);
    for (const bool exact : {false, true}) {
        SearchOptions opt;
        opt.threads = 2;
        opt.baselines = false;
        opt.exact = exact;
        const SearchResult a = runSearch(CostModel(*llama, small, cat), opt);
        const SearchResult b = runSearch(CostModel(*llama, large, cat), opt);
        QVERIFY(!a.plans.empty() && !b.plans.empty());
        QCOMPARE(a.plans.front().prediction.iteration_time_s, b.plans.front().prediction.iteration_time_s);
    }
}

void SearchEngineTest::twoNodeSizesPrunedFindsTheOptimum()
{
    // On a type whose nodes differ in size the prunings allow a group size per node size and
    // a load-balance window for the type's nodes of one size (docs/search.md section 4). The
    // pruned search then finds the optimum of --exact on these clusters, where it returned
    // 7.480 s and 5.897 s plans: the optimum's H800 stages are one 8-device and one 2-device
    // mesh, or two 8-device and one 4-device mesh.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const std::pair<const char*, const char*> cases[] = {{"LLaMA-2-7B", "H800:1x2,H800:1x8"},
                                                         {"Mixtral-S", "H800:2x8,H800:1x4,910B:2x8"}};
    for (const auto& [model, shorthand] : cases) {
        const ModelSpec* m = findModelPreset(model);
        QVERIFY(m);
        const CostModel cost(*m, clusterFromShorthand(shorthand, cat), cat);
        const auto [pruned, exact] = prunedAndExact(cost);
        QVERIFY(!pruned.plans.empty() && !exact.plans.empty());
        QCOMPARE(pruned.plans.front().prediction.iteration_time_s, exact.plans.front().prediction.iteration_time_s);
        std::set<int> h800Sizes;
        for (const StagePlan& st : pruned.plans.front().plan.stages)
            if (st.device_type == "H800")
                h800Sizes.insert(st.numDevices());
        QVERIFY2(h800Sizes.size() == 2, shorthand);
    }
}

void SearchEngineTest::loadBalanceCountsTheOutputLayer()
{
    // A small model with a large vocabulary: the output layer's GEMM, 2 s h V = 1.10e12 FLOPs
    // per sequence forward, outweighs six of its layers (24 s h^2 (1 + s / 6h) = 1.72e11,
    // Korthikanti's count), and its unfused cross-entropy moves 52 B per logit (27.9 GB per
    // sequence, docs/cost-model.md section 3.6), so the stage that holds it should hold fewer
    // layers than its devices' share of the throughput gives. The load-balance window counts
    // the embedding and the output layer (docs/search.md section 4); counting layers only, the
    // pruned search returned a 4 + 4 split at 0.1478 s, against the 0.1353 s optimum of
    // --exact, whose last stage (the four A100) holds one layer.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(wideVocabularyModel(), clusterFromShorthand("A100-80GB:1x4,H20:1x4", cat), cat);
    const auto [pruned, exact] = prunedAndExact(cost);
    QVERIFY(!pruned.plans.empty() && !exact.plans.empty());
    QCOMPARE(pruned.plans.front().prediction.iteration_time_s, exact.plans.front().prediction.iteration_time_s);
    const Plan& best = pruned.plans.front().plan;
    QCOMPARE(best.pp(), 2);
    QCOMPARE(best.stages.back().num_layers, 1);
    QVERIFY(pruned.pruned.load_balance > 0);   // the window still prunes
}

void SearchEngineTest::wideToleranceOpensTheWholeWindow()
{
    // The core takes any load-balance tolerance (the CLI and the studio keep it below 1): one
    // so wide that the window's upper end, in layers, is beyond what an int holds must open
    // the window to every layer count, not wrap around to a window of one layer. The
    // wide-vocabulary model of loadBalanceCountsTheOutputLayer with delta 1e12: nothing is
    // pruned for balance, and the plan is the optimum (0.1353 s), whose last stage holds one
    // layer. Converted before it was clamped, the upper end became INT_MIN, then 1.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(wideVocabularyModel(), clusterFromShorthand("A100-80GB:1x4,H20:1x4", cat), cat);
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.delta = 1e12;
    opt.exact_check_work = 0;   // the window alone
    const SearchResult wide = runSearch(cost, opt);
    opt.delta = 0.2;
    opt.exact = true;
    const SearchResult exact = runSearch(cost, opt);
    QVERIFY(!wide.plans.empty() && !exact.plans.empty());
    QCOMPARE(wide.pruned.load_balance, 0LL);
    QCOMPARE(wide.plans.front().prediction.iteration_time_s, exact.plans.front().prediction.iteration_time_s);
    QCOMPARE(wide.plans.front().plan.stages.back().num_layers, 1);
}

void SearchEngineTest::exactCheckFindsWhatThePruningsHide()
{
    // Mixtral-S with a global batch of 8 on three nodes of two H20 and two nodes of one H800:
    // the best plan leaves devices idle, which the load-balance window, built from every
    // device of the run's types, excludes (docs/search.md section 7). The prunings alone return
    // a plan of 5.964 s, --exact one of 3.013 s. The exact check finds --exact's plan and says
    // what it replaced, with all the work it needs (a budget never reached here) and with the
    // default budget, which it counts rather than times, so that the answer is the same on
    // any machine; without it the search returns the pruned plan.
    const ModelSpec* m = findModelPreset("Mixtral-S");
    QVERIFY(m);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(*m, clusterFromShorthand("H20:3x2,H800:2x1", cat), cat);
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    opt.global_batch_size = 8;
    opt.exact_check_work = 1000000000;   // never reached here
    const SearchResult checked = runSearch(cost, opt);
    const auto [pruned, exact] = [&] {
        SearchOptions o = opt;
        o.exact_check_work = 0;
        SearchResult p = runSearch(cost, o);
        o.exact = true;
        return std::make_pair(std::move(p), runSearch(cost, o));
    }();
    QVERIFY(!checked.plans.empty() && !pruned.plans.empty() && !exact.plans.empty());
    const double tPruned = pruned.plans.front().prediction.iteration_time_s;
    const double tExact = exact.plans.front().prediction.iteration_time_s;
    QVERIFY2(tPruned > 1.5 * tExact, qPrintable(QString("pruned %1 s, exact %2 s").arg(tPruned).arg(tExact)));
    QVERIFY(pruned.exact_check == ExactCheck::Off);
    QCOMPARE(pruned.exact_check_s, 0.0);
    QVERIFY(checked.exactChecked());
    QCOMPARE(checked.exact_check_budget, opt.exact_check_work);
    QVERIFY(checked.exact_check_s > 0 && checked.exact_check_work > 0);
    {
        SearchOptions d = opt;
        d.exact_check_work = SearchOptions{}.exact_check_work;
        const SearchResult byDefault = runSearch(cost, d);
        QVERIFY(byDefault.exactChecked() && byDefault.exact_check_work <= d.exact_check_work);
        QCOMPARE(byDefault.plans.front().prediction.iteration_time_s, tExact);
        // A budget above the pruned search's work (else the check is not tried) and below
        // the check's: it stops, and the pruned plan stands.
        const long long prunedWork = pruned.states + pruned.pruned.memory / 10;
        QVERIFY2(prunedWork < checked.exact_check_work,
                 qPrintable(QString("pruned work %1, check %2").arg(prunedWork).arg(checked.exact_check_work)));
        d.exact_check_work = (prunedWork + checked.exact_check_work) / 2;
        const SearchResult cut = runSearch(cost, d);
        QVERIFY(cut.exact_check == ExactCheck::WorkBudget && cut.exact_check_s > 0 && !cut.timed_out);
        QCOMPARE(cut.plans.front().prediction.iteration_time_s, tPruned);
        // A budget below the pruned search's own work: the check is not tried.
        d.exact_check_work = prunedWork / 2;
        const SearchResult notTried = runSearch(cost, d);
        QVERIFY(notTried.exact_check == ExactCheck::NotTriedWork && notTried.exact_check_s == 0);
        QCOMPARE(notTried.exact_check_budget, prunedWork / 2);
        QCOMPARE(notTried.plans.front().prediction.iteration_time_s, tPruned);
    }
    {
        // A cancel during the check (Mixtral-L on 16-3, one thread: the pruned search expands
        // a fixed number of states, and the check about 340,000 units of work): the pruned plans stand,
        // and the result says the check was cancelled.
        const ModelSpec* large = findModelPreset("Mixtral-L");
        QVERIFY(large);
        const CostModel costC(*large, resolveCluster("16-3", cat), cat);
        SearchOptions one;
        one.threads = 1;
        one.baselines = false;
        one.exact_check_work = 0;
        const SearchResult prunedOnly = runSearch(costC, one);
        QVERIFY(!prunedOnly.plans.empty());
        one.exact_check_work = 1000000000;
        const SearchResult cancelled = cancelledAfter(costC, one, prunedOnly.states + 20000);
        QVERIFY(cancelled.cancelled);
        QVERIFY(cancelled.exact_check == ExactCheck::Cancelled && cancelled.exact_check_s > 0);
        QCOMPARE(cancelled.plans.front().prediction.iteration_time_s, prunedOnly.plans.front().prediction.iteration_time_s);
    }
    QCOMPARE(checked.plans.front().prediction.iteration_time_s, tExact);
    QCOMPARE(checked.pruned_best_s, tPruned);
    QVERIFY(!checked.timed_out && !checked.offload_needed);

    // A check that finds nothing faster keeps the pruned plan and says the plans are exact:
    // LLaMA-2 7B on the paper's 16-3 cluster, where the prunings lose nothing.
    const ModelSpec* llama = findModelPreset("LLaMA-2-7B");
    QVERIFY(llama);
    const CostModel costL(*llama, resolveCluster("16-3", cat), cat);
    SearchOptions o2;
    o2.threads = 2;
    o2.baselines = false;
    o2.exact_check_work = 1000000000;
    const SearchResult same = runSearch(costL, o2);
    o2.exact_check_work = 0;
    const SearchResult alone = runSearch(costL, o2);
    QVERIFY(!same.plans.empty() && !alone.plans.empty());
    QVERIFY(same.exactChecked());
    QCOMPARE(same.pruned_best_s, 0.0);
    QCOMPARE(same.plans.front().prediction.iteration_time_s, alone.plans.front().prediction.iteration_time_s);

    // With three plans asked for, the pruned plans start the check's incumbent, so that it
    // looks only for plans faster than the third of them, and the three fastest of both lists
    // are kept: --exact's three in both cases (on 16-3, where the prunings lose nothing, the
    // check may find nothing faster and the pruned plans stand), and plan #1 is the one-plan
    // search's.
    auto times = [](const SearchResult& r) {
        std::vector<double> t;
        for (const RankedPlan& rp : r.plans)
            t.push_back(rp.prediction.iteration_time_s);
        return t;
    };
    for (const auto& [c, o] : {std::make_pair(&cost, opt), std::make_pair(&costL, o2)}) {
        SearchOptions k3 = o;
        k3.top_k = 3;
        k3.exact_check_work = 1000000000;
        const SearchResult three = runSearch(*c, k3);
        k3.exact = true;
        const SearchResult exact3 = runSearch(*c, k3);
        QVERIFY(three.exactChecked());
        QCOMPARE(three.plans.size(), std::size_t(3));
        QCOMPARE(times(three), times(exact3));
        QCOMPARE(three.plans.front().plan.name, std::string("HS-DP #1"));
        QCOMPARE(three.plans.back().plan.name, std::string("HS-DP #3"));
    }
}

void SearchEngineTest::exactCheckFindsTheBestBeforeTheAlternatives()
{
    // With K plans asked for, the check first finds the best plan alone, then the K best
    // (docs/search.md section 7). A stop in the second pass keeps the first's answer: plan #1
    // is the exact best, the others the pruned search's. Mixtral-L on the paper's 16-3, one
    // thread (the states each pass expands are then the same from run to run): a cancel after
    // the three-plan pruned search's states, the one-plan check's and 5,000 more falls in the
    // second pass (about 27,000 states).
    const ModelSpec* large = findModelPreset("Mixtral-L");
    QVERIFY(large);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(*large, resolveCluster("16-3", cat), cat);
    SearchOptions one;
    one.threads = 1;
    one.baselines = false;
    one.exact_check_work = 1000000000;
    const SearchResult best = runSearch(cost, one);
    QVERIFY(best.exactChecked() && !best.plans.empty());
    one.exact_check_work = 0;
    const long long firstPass = best.states - runSearch(cost, one).states;
    SearchOptions three = one;
    three.top_k = 3;
    three.exact_check_work = 0;
    const SearchResult prunedOnly = runSearch(cost, three);
    three.exact_check_work = 1000000000;
    const SearchResult cut = cancelledAfter(cost, three, prunedOnly.states + firstPass + 5000);
    QVERIFY(cut.cancelled);
    QVERIFY(cut.exact_check == ExactCheck::Cancelled);
    QVERIFY(cut.exact_check_best);
    QCOMPARE(cut.plans.front().prediction.iteration_time_s, best.plans.front().prediction.iteration_time_s);
    // The others are the pruned search's three, less any the first pass found again.
    QCOMPARE(cut.plans.size(), std::size_t(3));
    for (std::size_t i = 1; i < cut.plans.size(); ++i) {
        const double t = cut.plans[i].prediction.iteration_time_s;
        QVERIFY(t >= cut.plans[i - 1].prediction.iteration_time_s);
        QVERIFY2(std::any_of(prunedOnly.plans.begin(), prunedOnly.plans.end(),
                             [&](const RankedPlan& rp) { return rp.prediction.iteration_time_s == t; })
                     || t == best.plans.front().prediction.iteration_time_s,
                 qPrintable(QString("plan #%1: %2 s").arg(i + 1).arg(t)));
    }
    // A stop in the first pass keeps the pruned plans (finished, both passes give --exact's
    // three: exactCheckFindsWhatThePruningsHide).
    const SearchResult stoppedEarly = cancelledAfter(cost, three, prunedOnly.states + 1000);
    QVERIFY(stoppedEarly.exact_check == ExactCheck::Cancelled && !stoppedEarly.exact_check_best);
    QCOMPARE(stoppedEarly.plans.front().prediction.iteration_time_s, prunedOnly.plans.front().prediction.iteration_time_s);
}

void SearchEngineTest::uniformAlgorithmIsComparedWithMetisStyle()
{
    // `--algorithm uniform` returns the uniform plan as its answer and compares it with the
    // Metis-style baseline, as a search compares its plans with both (Mixtral-S on 24-1, where
    // the Metis-style plan fits).
    const ModelSpec* m = findModelPreset("Mixtral-S");
    QVERIFY(m);
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(*m, resolveCluster("24-1", cat), cat);
    SearchOptions opt;
    opt.algorithm = Algorithm::Uniform;
    const SearchResult r = runSearch(cost, opt);
    QVERIFY(!r.plans.empty());
    QVERIFY(r.uniform_baseline && r.metis_baseline);
    QCOMPARE(r.uniform_baseline->prediction.iteration_time_s, r.plans.front().prediction.iteration_time_s);
    SearchOptions metisOpt;
    metisOpt.algorithm = Algorithm::MetisStyle;
    const SearchResult metis = runSearch(cost, metisOpt);
    QVERIFY(!metis.plans.empty());
    QCOMPARE(r.metis_baseline->prediction.iteration_time_s, metis.plans.front().prediction.iteration_time_s);
    QVERIFY(!r.baselines_cut);
}

void SearchEngineTest::tiedEmbeddingsAcrossTheBridge()
{
    // The README's 1.7B GPT with tied embeddings on two H800 and two 910B nodes: a pipeline
    // whose first and last stage sit on different vendors all-reduces the embedding gradient,
    // 4 x 131072 x 2048 = 1.07 GB at TP 1, over the 2.5 GB/s bridge: 0.43 s, more than the
    // 910B nodes can save (docs/cost-model.md section 7.1). Untied, the best plan uses both
    // vendors; tied, the search leaves the bridge out of its ends, and its time is the cost
    // model's (the DP adds the all-reduce when it closes a pipeline).
    const ModelSpec* preset = findModelPreset("Megatron-GPT-1.7B");
    QVERIFY(preset);
    ModelSpec tied = *preset;
    tied.untie_embeddings_and_output_weights = false;
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:2x8,910B:2x8", cat);
    SearchOptions opt;
    opt.exact = true;
    opt.baselines = false;
    const SearchResult untiedRun = runSearch(CostModel(*preset, cluster, cat), opt);
    QVERIFY(!untiedRun.plans.empty());
    const Plan& u = untiedRun.plans.front().plan;
    QVERIFY(u.stages.front().device_type != u.stages.back().device_type);

    const CostModel cost(tied, cluster, cat);
    const SearchResult tiedRun = runSearch(cost, opt);
    QVERIFY(!tiedRun.plans.empty());
    const Plan& t = tiedRun.plans.front().plan;
    QCOMPARE(t.stages.front().device_type, t.stages.back().device_type);
    QCOMPARE(cost.estimate(t).iteration_time_s, tiedRun.plans.front().prediction.iteration_time_s);
    // The untied answer, costed with tied embeddings, is slower by at least the all-reduce's
    // bytes over the bridge.
    const double bridged = cost.estimate(u).iteration_time_s;
    QVERIFY(bridged > tiedRun.plans.front().prediction.iteration_time_s);
    QVERIFY(bridged - untiedRun.plans.front().prediction.iteration_time_s >= 4.0 * 131072 * 2048 / 2.5e9);
}

void SearchEngineTest::reorderedAlternativesAreNamed()
{
    // Mixtral-S on the paper's 24-1 cluster, the eight best plans: #5 is #4 with its two
    // 4-layer H800 stages swapped (DP 2 at MBS 2 and TP 2 at MBS 4, the same step), 9.977 s
    // both. It holds #4's stages in another order; no other plan holds an earlier one's.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    SearchOptions o;
    o.top_k = 8;
    o.threads = 2;
    const SearchResult r = runSearch(CostModel(*findModelPreset("Mixtral-S"), *findClusterPreset("24-1"), cat), o);
    QCOMPARE(r.plans.size(), std::size_t(8));
    std::vector<const Plan*> plans;
    for (const RankedPlan& rp : r.plans)
        plans.push_back(&rp.plan);
    const std::vector<int> from = reorderedFrom(plans);
    QCOMPARE(from, (std::vector<int>{-1, -1, -1, -1, 3, -1, -1, -1}));
    const Plan& four = r.plans[3].plan;
    const Plan& five = r.plans[4].plan;
    QCOMPARE(five.stages[4].tp, four.stages[5].tp);
    QCOMPARE(five.stages[5].micro_batch_size, four.stages[4].micro_batch_size);
    // A plan is no reordering of itself, nor of one whose stages differ in anything they run
    // (a layer moved, another recompute), nor of one of another global batch.
    QVERIFY(!sameStagesReordered(four, four));
    Plan moved = five;
    moved.stages[4].num_layers += 1;
    moved.stages[5].num_layers -= 1;
    QVERIFY(!sameStagesReordered(four, moved));
    Plan recomputed = five;
    recomputed.stages[4].recompute = Recompute::Full;
    QVERIFY(!sameStagesReordered(four, recomputed));
    Plan batch = five;
    batch.global_batch_size *= 2;
    QVERIFY(!sameStagesReordered(four, batch));
}

void SearchEngineTest::flexDispatcherLeavesOutDevicesWithoutDeepEp()
{
    // DeepEP runs on NVIDIA GPUs of compute capability 9.0 or more over NVLink and on AMD's
    // MI300X port (deepseek-ai/DeepEP and ROCm/DeepEP READMEs), not on Ascend: with the flex
    // dispatcher the 910B node is left out, every plan runs on the H800 node, and the result
    // says so. On 910B alone nothing is left and the search says why at once.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ModelSpec m = smallMoe(8);
    m.moe_token_dispatcher_type = TokenDispatcher::Flex;
    SearchOptions o;
    o.top_k = 3;
    const Cluster mixed = clusterFromShorthand("H800:1x8,910B:1x8", cat);
    const SearchResult r = runSearch(CostModel(m, mixed, cat), o);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY2(r.devices_left_out.find("910B-376T: a Huawei device with no DeepEP port") != std::string::npos,
             r.devices_left_out.c_str());
    for (const RankedPlan& rp : r.plans) {
        for (const StagePlan& st : rp.plan.stages)
            QCOMPARE(st.device_type, std::string("H800"));
        QVERIFY(isDeployable(rp.plan, m, mixed, cat, rp.plan.target));
        // The 910B node (id 1) is idle in every plan, with the reason, as nodes a plan
        // leaves idle are: the plan table counts "8 (+8 idle)".
        const auto left = std::find_if(rp.plan.unused.begin(), rp.plan.unused.end(), [](const UnusedDevices& u) { return u.node == 1; });
        QVERIFY(left != rp.plan.unused.end());
        QCOMPARE(left->count, 8);
        QVERIFY2(left->reason.find("DeepEP") != std::string::npos, left->reason.c_str());
    }
    // With the alltoall dispatcher nothing is left out: Mixtral-S (too large for the H800
    // node alone in its best plan) runs on both nodes.
    const ModelSpec* mixtral = findModelPreset("Mixtral-S");
    QVERIFY(mixtral && mixtral->moe_token_dispatcher_type != TokenDispatcher::Flex);
    const SearchResult all = runSearch(CostModel(*mixtral, mixed, cat), o);
    QVERIFY(all.devices_left_out.empty());
    QCOMPARE(all.plans.front().plan.numDevices(), 16);

    m.moe_token_dispatcher_type = TokenDispatcher::Flex;
    const Cluster ascend = clusterFromShorthand("910B:2x8", cat);
    const SearchResult none = runSearch(CostModel(m, ascend, cat), o);
    QVERIFY(none.plans.empty());
    QCOMPARE(none.states, 0LL);   // refused before any state
    QVERIFY2(none.no_plan_reason.find("no device of the cluster is left") != std::string::npos, none.no_plan_reason.c_str());

    // Devices left, but too few: Qwen3-235B-A22B (flex) on 16 A100 and 16 H100 has the H100
    // half, 1.2 TiB, for the 1.3 TiB its weights and gradients need even offloaded. The
    // reason says the A100 half was left out, and what would bring it back.
    const ModelSpec* qwen = findModelPreset("Qwen3-235B-A22B");
    QVERIFY(qwen && qwen->usesFlexDispatcher());
    const SearchResult half = runSearch(CostModel(*qwen, clusterFromShorthand("A100:2x8,H100:2x8", cat), cat), o);
    QVERIFY(half.plans.empty());
    for (const char* part : {"the cluster's 16 devices hold", "the flex dispatcher needs DeepEP, so the search leaves out A100-80GB",
                             "the alltoall or allgather dispatcher runs on every device"})
        QVERIFY2(half.no_plan_reason.find(part) != std::string::npos, half.no_plan_reason.c_str());
}

void SearchEngineTest::fp8LeavesOutDevicesWithoutFp8()
{
    // FP8 training runs Transformer Engine's FP8 GEMMs on every rank: A100 (compute capability
    // 8.0, no FP8 tensor cores) cannot, H100 can (docs/cost-model.md section 3.7). The search
    // leaves the A100 node out and every plan runs, deployable, on the H100 node. On A100 alone
    // nothing is left.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ModelSpec m = smallMoe(8);
    m.training.fp8_format = Fp8Format::Hybrid;
    SearchOptions o;
    o.top_k = 3;
    const Cluster mixed = clusterFromShorthand("H100:1x8,A100:1x8", cat);
    const SearchResult r = runSearch(CostModel(m, mixed, cat), o);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY2(r.devices_left_out
                 == "FP8 training needs FP8 tensor cores, so the search leaves out A100-80GB: compute capability 8.0 "
                    "(Transformer Engine runs FP8 on 8.9 or higher)",
             r.devices_left_out.c_str());
    for (const RankedPlan& rp : r.plans) {
        for (const StagePlan& st : rp.plan.stages)
            QCOMPARE(st.device_type, std::string("H100-SXM"));
        QVERIFY(isDeployable(rp.plan, m, mixed, cat, rp.plan.target));
        const auto left = std::find_if(rp.plan.unused.begin(), rp.plan.unused.end(), [](const UnusedDevices& u) { return u.node == 1; });
        QVERIFY(left != rp.plan.unused.end());
        QVERIFY2(left->reason.starts_with("left out: FP8 training needs FP8 tensor cores"), left->reason.c_str());
    }
    // The rule the search keeps to: an FP8 plan with a stage on A100 is not deployable.
    Plan onA100 = r.plans.front().plan;
    for (StagePlan& st : onA100.stages) {
        st.device_type = "A100-80GB";
        for (auto& slot : st.devices)
            slot.node = 1;
    }
    const auto problems = deploymentProblems(onA100, m, mixed, cat, Target::Megatron);
    QVERIFY(std::any_of(problems.begin(), problems.end(), [](const DeploymentProblem& p) { return p.rule == "fp8-needs-device"; }));

    const SearchResult none = runSearch(CostModel(m, clusterFromShorthand("A100:2x8", cat), cat), o);
    QVERIFY(none.plans.empty());
    QCOMPARE(none.states, 0LL);
    QVERIFY2(none.no_plan_reason.find("no device of the cluster is left") != std::string::npos, none.no_plan_reason.c_str());
}

void SearchEngineTest::fp8RecipeLeavesOutDevices()
{
    // Transformer Engine's recipes run on fewer devices than FP8 itself
    // (transformer_engine/pytorch/quantization.py): mxfp8 needs compute capability 10.x, so of
    // B200 (10.0) and H100 (9.0) only the B200 node is used; blockwise runs on 9.0 or higher,
    // so both are; delayed and tensorwise run on 8.9 or higher (L40S), blockwise not.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    ModelSpec m = smallMoe(8);
    m.training.fp8_format = Fp8Format::Hybrid;
    m.training.fp8_recipe = Fp8Recipe::MXFP8;
    SearchOptions o;
    o.top_k = 2;
    const Cluster mixed = clusterFromShorthand("H100:1x8,B200:1x8", cat);
    const SearchResult r = runSearch(CostModel(m, mixed, cat), o);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY2(r.devices_left_out
                 == "FP8 training with the mxfp8 recipe needs its FP8 GEMMs, so the search leaves out H100-SXM: compute "
                    "capability 9.0 (Transformer Engine runs the mxfp8 recipe on NVIDIA compute capability 10.x)",
             r.devices_left_out.c_str());
    for (const RankedPlan& rp : r.plans) {
        for (const StagePlan& st : rp.plan.stages)
            QCOMPARE(st.device_type, std::string("B200"));
        QVERIFY(isDeployable(rp.plan, m, mixed, cat, rp.plan.target));
    }
    // The same plan moved onto the H100 node is refused for export, and runs with blockwise.
    Plan onH100 = r.plans.front().plan;
    for (StagePlan& st : onH100.stages) {
        st.device_type = "H100-SXM";
        for (auto& slot : st.devices)
            slot.node = 0;
    }
    auto refused = [&](const ModelSpec& model) {
        const auto problems = deploymentProblems(onH100, model, mixed, cat, Target::Megatron);
        return std::any_of(problems.begin(), problems.end(), [](const DeploymentProblem& p) { return p.rule == "fp8-needs-device"; });
    };
    QVERIFY(refused(m));
    m.training.fp8_recipe = Fp8Recipe::Blockwise;
    QVERIFY(!refused(m));
    QVERIFY(runSearch(CostModel(m, mixed, cat), o).devices_left_out.empty());

    QCOMPARE(fp8Unavailable(cat, "L40S", Fp8Recipe::Delayed), std::string());
    QCOMPARE(fp8Unavailable(cat, "L40S", Fp8Recipe::Tensorwise), std::string());
    QCOMPARE(fp8Unavailable(cat, "L40S", Fp8Recipe::Blockwise),
             std::string("compute capability 8.9 (Transformer Engine runs the blockwise recipe on NVIDIA compute capability 9.0 or higher)"));
    QCOMPARE(fp8Unavailable(cat, "MI300X", Fp8Recipe::MXFP8),
             std::string("not an NVIDIA device (Transformer Engine runs the mxfp8 recipe on NVIDIA compute capability 10.x)"));
}

void SearchEngineTest::largeRegularCluster()
{
    // 20,000 nodes of 8 H800 (160,000 devices): the space has a group size per node count, and
    // building it is linear in the nodes. Mixtral-S's global batch of 256 caps the data-parallel
    // replicas of any stage at 256, so groups of more than 256 x 8 (TP) x 16 (CP) devices get
    // no knobs at all.
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = clusterFromShorthand("H800:20000x8", cat);
    const ModelSpec m = resolveModel("mixtral-s");
    const SearchSpace space(m, cluster, cat, m.training.global_batch_size);
    QCOMPARE(space.numTypes(), 1);
    QVERIFY(space.knobs(0, 8).size() > 0);
    QVERIFY(space.knobs(0, 256 * 8 * 16 + 8).empty());
    for (const Knob& k : space.knobs(0, 4096))
        QVERIFY(k.dp <= 256);
    const CostModel cost(m, cluster, cat);
    SearchOptions o;
    o.baselines = false;
    const SearchResult r = runSearch(cost, o);
    QVERIFY(!r.timed_out);
    QVERIFY(!r.plans.empty());
    QVERIFY(r.plans.front().prediction.feasible);
}


void SearchEngineTest::interleavingKeepsTheFastestMegatronForm()
{
    // Mixtral 8x7B for Megatron-LM on 4 x 8 H800 (GBS 256, MBS 1). Plain 1F1B the best plan is
    // PP 8, 4.826 s; tried at VPP 2 to 8 (docs/search.md section 10) the best is the same at
    // VPP 4, 4.547 s, and the third is the third plain plan (5.075 s) at VPP 4, 4.897 s: the
    // pass tries the fastest 8 plain plans, not only the best K. Every plan returned is costed as
    // given (its prediction is the cost model's estimate of it), Megatron-LM runs it, and an
    // interleaved one is faster than its plain form, whose time it keeps: the time of the
    // plain plan with the same stages in the plain search's list.
    const ModelSpec& m = *findModelPreset("Mixtral-8x7B");
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster c = clusterFromShorthand("H800:4x8", cat);
    const CostModel cost(m, c, cat);
    SearchOptions opt = megatronPlans(1);
    const SearchResult plain = runSearch(cost, opt);
    QCOMPARE(plain.plans.size(), std::size_t(8));
    QCOMPARE(plain.max_vpp, 1);
    for (const RankedPlan& rp : plain.plans) {
        QCOMPARE(rp.plan.vpp, 1);
        QCOMPARE(rp.plain_time_s, 0.0);
    }
    QCOMPARE(plain.plans.front().plan.pp(), 8);
    opt.top_k = 3;
    opt.max_vpp = 8;
    const SearchResult r = runSearch(cost, opt);
    QCOMPARE(r.max_vpp, 8);
    QVERIFY(r.interleave_cut == InterleaveCut::No);
    QVERIFY(r.interleave_tried >= 8);   // the 3 plans asked for and the 8 of the pass's own search, some the same
    QCOMPARE(r.plans.size(), std::size_t(3));
    QCOMPARE(r.plans.front().plan.pp(), 8);
    QCOMPARE(r.plans.front().plan.vpp, 4);
    QCOMPARE(r.plans.front().plan.name, std::string("HS-DP #1"));
    QCOMPARE(r.plans[2].plan.pp(), 8);
    QCOMPARE(r.plans[2].plan.vpp, 4);
    QCOMPARE(r.plans[2].plain_time_s, plain.plans[2].prediction.iteration_time_s);
    QVERIFY(r.plans[2].prediction.iteration_time_s < plain.plans[2].prediction.iteration_time_s);
    QVERIFY(r.plans.front().prediction.iteration_time_s < plain.plans.front().prediction.iteration_time_s);
    for (std::size_t i = 0; i < r.plans.size(); ++i) {
        const RankedPlan& rp = r.plans[i];
        if (i > 0)
            QVERIFY(rp.prediction.iteration_time_s >= r.plans[i - 1].prediction.iteration_time_s);
        QVERIFY(isDeployable(rp.plan, m, c, cat, Target::Megatron));
        QCOMPARE(rp.prediction.iteration_time_s, cost.estimate(rp.plan).iteration_time_s);
        if (rp.plan.vpp == 1) {
            QCOMPARE(rp.plain_time_s, 0.0);
            continue;
        }
        QVERIFY(rp.plan.vpp <= 8 && rp.plan.target == Target::Megatron);
        QCOMPARE(rp.prediction.num_microbatches % rp.plan.pp(), 0);
        QVERIFY(rp.prediction.iteration_time_s < rp.plain_time_s);
        // Its plain form: the plan of the plain list on the same devices with the same
        // layers and knobs.
        const auto same = std::find_if(plain.plans.begin(), plain.plans.end(), [&](const RankedPlan& p) {
            if (p.plan.pp() != rp.plan.pp())
                return false;
            for (int k = 0; k < p.plan.pp(); ++k) {
                const StagePlan& a = p.plan.stages[static_cast<std::size_t>(k)];
                const StagePlan& b = rp.plan.stages[static_cast<std::size_t>(k)];
                if (a.num_layers != b.num_layers || a.tp != b.tp || a.dp != b.dp || a.ep != b.ep
                    || a.devices.front().node != b.devices.front().node || a.micro_batch_size != b.micro_batch_size)
                    return false;
            }
            return true;
        });
        QVERIFY(same != plain.plans.end());
        QCOMPARE(rp.plain_time_s, same->prediction.iteration_time_s);
    }
    // The same plan tried directly: a bound of 1 leaves it, and so does a plan whose
    // micro-batches are not a multiple of PP (the interleaved schedule runs PP a group).
    const RankedPlan& best = plain.plans.front();
    QCOMPARE(fastestInterleaving(cost, best, 1).plan.vpp, 1);
    RankedPlan odd = best;
    odd.plan.global_batch_size = 252;   // 126 micro-batches of 2 sequences at PP 8
    odd.prediction = cost.estimate(odd.plan);
    QVERIFY(odd.prediction.feasible);
    QCOMPARE(odd.prediction.num_microbatches, 126);
    QCOMPARE(fastestInterleaving(cost, odd, 8).plan.vpp, 1);
    // FlagScale runs no virtual pipeline: the bound is not used.
    opt.target = Target::FlagScale;
    const SearchResult flagscale = runSearch(cost, opt);
    QVERIFY(!flagscale.plans.empty());
    QCOMPARE(flagscale.max_vpp, 1);
    for (const RankedPlan& rp : flagscale.plans)
        QCOMPARE(rp.plan.vpp, 1);
    // Any target: at least as fast as the plain search's best for any target.
    opt.target = Target::Any;
    opt.top_k = 1;
    const SearchResult any = runSearch(cost, opt);
    opt.max_vpp = 1;
    const SearchResult anyPlain = runSearch(cost, opt);
    QVERIFY(any.plans.front().prediction.iteration_time_s <= anyPlain.plans.front().prediction.iteration_time_s);
    QCOMPARE(any.plans.front().plan.name, std::string("HS-DP"));
    // A baseline asked for as the algorithm stays plain 1F1B, as the paper's baselines are.
    opt.max_vpp = 8;
    opt.algorithm = Algorithm::Uniform;
    const SearchResult uniform = runSearch(cost, opt);
    QVERIFY(!uniform.plans.empty());
    QCOMPARE(uniform.plans.front().plan.vpp, 1);
}

void SearchEngineTest::interleavingKeepsTheOffloadPolicy()
{
    // Mixtral-L on 2 x 8 A100 and 2 x 8 H100, any target, optimizer offload "if needed": the
    // pruned search offloads, and its exact check finds a FlagScale plan with the optimizer on
    // the devices (55.948 s), which "if needed" prefers to any offloaded one. The Megatron-LM
    // plans the interleaving pass adds must keep to that: an offloaded Megatron-LM plan
    // (54.964 s, half of the optimizer in host memory) once came back as the best.
    const ModelSpec& m = *findModelPreset("Mixtral-L");
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const CostModel cost(m, clusterFromShorthand("A100:2x8,H100:2x8", cat), cat);
    SearchOptions opt;
    opt.threads = 2;
    opt.baselines = false;
    const SearchResult plain = runSearch(cost, opt);
    QVERIFY2(!plain.plans.empty(), plain.no_plan_reason.c_str());
    QCOMPARE(plain.plans.front().plan.optimizer_offload_fraction, 0.0);
    QVERIFY(!plain.offload_needed);
    opt.max_vpp = 8;
    const SearchResult r = runSearch(cost, opt);
    QVERIFY2(!r.plans.empty(), r.no_plan_reason.c_str());
    QVERIFY(!r.offload_needed);
    for (const RankedPlan& rp : r.plans)
        QCOMPARE(rp.plan.optimizer_offload_fraction, 0.0);
    QVERIFY(r.plans.front().prediction.iteration_time_s <= plain.plans.front().prediction.iteration_time_s);
}

void SearchEngineTest::interleavingTakesTheLeastRecomputeThatFits()
{
    // Interleaving keeps more activations in flight on every rank (docs/cost-model.md
    // section 5.3), so a plan may need more recompute at VPP v than plain. Mixtral-S for
    // Megatron-LM on one node of 8 H800 (GBS 256): most plans of the 8 are faster
    // interleaved, with full recompute. Each interleaved one fits, and the next lower of
    // Megatron-LM's settings for the same interleaved plan does not: the settings are none,
    // selective of the element-wise modules (moe_act and layernorm on H800), full recompute
    // of the first n layers of every chunk for n = 1, 2, 4, ... below the largest chunk, and
    // full recompute of every layer; beside them selective recompute of the whole MoE layer
    // (layernorm and moe), which is no faster where it fits (docs/search.md section 1,
    // Targets). Plans that stay plain take the least recompute alike; some of them recompute
    // the whole MoE layer.
    const ModelSpec& m = *findModelPreset("Mixtral-S");
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster c = clusterFromShorthand("H800:1x8", cat);
    const CostModel cost(m, c, cat);
    const SearchResult r = runSearch(cost, megatronPlans(4));
    QCOMPARE(r.plans.size(), std::size_t(8));
    using namespace recompute_module;
    // A stage's recompute under a setting: (kind, n, modules), n the block count or 0 for
    // every layer.
    struct Setting {
        Recompute kind;
        int n;
        unsigned modules;
    };
    auto apply = [](Plan& p, const Setting& set) {
        for (StagePlan& st : p.stages) {
            const std::vector<int> chunks = st.chunks(p.vpp);
            st.recompute = set.kind;
            st.recompute_layers = 0;
            if (set.kind == Recompute::Selective)
                st.recompute_modules = set.modules;
            if (set.kind == Recompute::Full && set.n > 0) {
                int covered = 0;
                for (const int layers : chunks)
                    covered += std::min(set.n, layers);
                st.recompute_layers = covered >= st.num_layers ? 0 : covered;
            }
        }
    };
    auto sameRecompute = [](const Plan& a, const Plan& b) {
        for (int s = 0; s < a.pp(); ++s) {
            const StagePlan& x = a.stages[static_cast<std::size_t>(s)];
            const StagePlan& y = b.stages[static_cast<std::size_t>(s)];
            if (x.recompute != y.recompute || x.recompute_layers != y.recompute_layers
                || (x.recompute == Recompute::Selective && x.recompute_modules != y.recompute_modules))
                return false;
        }
        return true;
    };
    const Setting wide{Recompute::Selective, 0, layernorm | moe};
    int recomputed = 0, interleaved = 0, plainWide = 0;
    for (const RankedPlan& rp : r.plans) {
        QVERIFY(rp.prediction.feasible);
        if (rp.plan.vpp > 1)
            ++interleaved;
        int largest = 0;
        for (const StagePlan& st : rp.plan.stages)
            for (const int layers : st.chunks(rp.plan.vpp))
                largest = std::max(largest, layers);
        std::vector<Setting> settings = {{Recompute::None, 0, 0}, {Recompute::Selective, 0, moe_act | layernorm}};
        for (int n = 1; n < largest; n *= 2)
            settings.push_back({Recompute::Full, n, 0});
        settings.push_back({Recompute::Full, 0, 0});
        auto costUnder = [&](const Setting& set) {
            Plan q = rp.plan;
            apply(q, set);
            const Prediction p = cost.estimate(q);
            return p.feasible ? p.iteration_time_s : std::numeric_limits<double>::infinity();
        };
        Plan asWide = rp.plan;
        apply(asWide, wide);
        if (sameRecompute(asWide, rp.plan)) {
            // The whole MoE layer recomputed: the element-wise modules do not fit, and no
            // full recompute setting that fits is faster.
            ++recomputed;
            plainWide += rp.plan.vpp == 1 ? 1 : 0;
            QVERIFY2(std::isinf(costUnder(settings[1])), rp.plan.name.c_str());
            for (std::size_t k = 2; k < settings.size(); ++k)
                QVERIFY2(costUnder(settings[k]) >= rp.prediction.iteration_time_s, rp.plan.name.c_str());
            continue;
        }
        // The plan's setting: the first whose stages match the plan's.
        std::size_t at = settings.size();
        for (std::size_t k = 0; k < settings.size() && at == settings.size(); ++k) {
            Plan q = rp.plan;
            apply(q, settings[k]);
            if (sameRecompute(q, rp.plan))
                at = k;
        }
        QVERIFY2(at < settings.size(), rp.plan.name.c_str());
        if (at == 0)
            continue;
        ++recomputed;
        QVERIFY2(std::isinf(costUnder(settings[at - 1])), rp.plan.name.c_str());
        QVERIFY2(costUnder(wide) >= rp.prediction.iteration_time_s, rp.plan.name.c_str());
    }
    QVERIFY(recomputed > 0);
    QVERIFY(interleaved >= 4);
    QVERIFY(plainWide > 0);
}

void SearchEngineTest::cliExitCodes()
{
    auto run = [](const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) {
        QProcess p;
        p.start(HAPMOE_CLI_PATH, args);
        p.waitForFinished(120000);
        if (out)
            *out = p.readAllStandardOutput();
        if (err)
            *err = p.readAllStandardError();
        return p.exitCode();
    };
    QByteArray out, err;
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H800:1x8,910B:1x8", "--json"}, &out), 0);
    QVERIFY(out.contains("\"format\": \"hapmoe.plan\"") || out.contains("\"format\":\"hapmoe.plan\""));
    QVERIFY(out.contains("\"search\""));
    QVERIFY(out.contains("\"alternatives\""));
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H800:1x8,910B:1x8"}, &out), 0);
    QVERIFY(out.contains("uniform baseline"));
    // Mixtral-L (about 122 B parameters, paper appendix A) cannot fit 8 devices of 64 GB.
    QCOMPARE(run({"plan", "--model", "mixtral-l", "--cluster", "910B:1x8"}, nullptr, &err), 1);
    QVERIFY(err.contains("no feasible plan"));
    QVERIFY(err.contains("GiB"));
    QVERIFY(err.contains("optimizer offloaded to the host"));
    // The same model on 16-1 fits once its optimizer states move to host memory.
    QCOMPARE(run({"plan", "--model", "mixtral-l", "--cluster", "16-1"}, &out), 0);
    QVERIFY(out.contains("in host memory"));
    QCOMPARE(run({"plan", "--model", "mixtral-l", "--cluster", "16-1", "--optimizer-offload", "never"}, nullptr, &err), 1);
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "16-1", "--optimizer-offload", "sometimes"}, nullptr, &err), 2);
    QVERIFY(err.contains("--optimizer-offload"));
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H800:1x8", "--target", "tpu"}, nullptr, &err), 2);
    QVERIFY(err.contains("--target"));
    QCOMPARE(run({"plan", "--model", "no-such-model", "--cluster", "H800:1x8"}), 2);
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H800:1x8", "--top", "0"}), 2);
    QCOMPARE(run({"plan", "--cluster", "H800:1x8"}), 2);
    // --mbs with several sizes (microBatchSizesAreSearchedEach): the header and the document
    // name them; a size that does not divide the global batch (the LLaMA-2 7B preset: 256) or is not a
    // number is bad input.
    QCOMPARE(run({"plan", "--model", "llama2-7b", "--cluster", "A100:2x8", "--mbs", "4,1,2,2"}, &out), 0);
    QVERIFY2(out.contains("search hs-dp over micro-batch sizes 1, 2, 4 in "), out.constData());
    QCOMPARE(run({"plan", "--model", "llama2-7b", "--cluster", "A100:2x8", "--mbs", "auto", "--json"}, &out), 0);
    {
        const auto doc = nlohmann::json::parse(out.toStdString());
        QCOMPARE(doc["search"]["micro_batch_sizes"].get<std::vector<int>>(), (std::vector<int>{1, 2, 4, 8}));
        QCOMPARE(doc["plan"]["stages"][0]["micro_batch_size"].get<int>(), 2);
    }
    QCOMPARE(run({"plan", "--model", "llama2-7b", "--cluster", "A100:2x8", "--mbs", "1,3"}, nullptr, &err), 2);
    QVERIFY2(err.contains("--mbs: the global batch 256 is not a multiple of the micro-batch size 3"), err.constData());
    QCOMPARE(run({"plan", "--model", "llama2-7b", "--cluster", "A100:2x8", "--mbs", "1,x"}, nullptr, &err), 2);
    QVERIFY2(err.contains("got \"x\" in \"1,x\""), err.constData());
    // The exact check (exactCheckFindsWhatThePruningsHide's case): the table says what it
    // replaced, the document records it; --exact-check 0 turns it off; a negative time is bad
    // input.
    const QStringList hidden = {"plan", "--model", "mixtral-s", "--cluster", "H20:3x2,H800:2x1", "--gbs", "8", "--exact-check", "1000000000"};
    QCOMPARE(run(hidden, &out), 0);
    QVERIFY2(out.contains("found a faster plan than the pruned search's 5.964 s; the plans below are the exact best"), out.constData());
    QCOMPARE(run(hidden + QStringList{"--json"}, &out), 0);
    const nlohmann::json doc = nlohmann::json::parse(out.toStdString());
    QCOMPARE(doc["search"]["exact_check"]["finished"].get<bool>(), true);
    QCOMPARE(doc["search"]["exact_check"]["status"].get<std::string>(), std::string("finished"));
    QCOMPARE(doc["search"]["exact_check"]["budget"].get<long long>(), 1000000000LL);
    QVERIFY(std::abs(doc["search"]["exact_check"]["pruned_best_s"].get<double>() - 5.964) < 5e-4);
    QVERIFY(std::abs(doc["prediction"]["iteration_time_s"].get<double>() - 3.013) < 5e-4);
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H20:3x2,H800:2x1", "--gbs", "8", "--exact-check", "0"}, &out), 0);
    QVERIFY(!out.contains("exact check"));
    // A budget of 1 is less than any pruned search does: the check is not tried, and the
    // table and the document say why.
    const QStringList tiny = {"plan", "--model", "mixtral-s", "--cluster", "H20:3x2,H800:2x1", "--gbs", "8", "--exact-check", "1"};
    QCOMPARE(run(tiny, &out), 0);
    QVERIFY2(out.contains("The exact check was not tried (the pruned search alone did more than its 1 units of work (partial plans extended))"), out.constData());
    QCOMPARE(run(tiny + QStringList{"--json"}, &out), 0);
    QCOMPARE(nlohmann::json::parse(out.toStdString())["search"]["exact_check"]["status"].get<std::string>(),
             std::string("not-tried-work"));
    QCOMPARE(run({"plan", "--model", "mixtral-s", "--cluster", "H800:1x8", "--exact-check", "-1"}, nullptr, &err), 2);
    QVERIFY2(err.contains("--exact-check: expected an integer from 0 to"), err.constData());
}

namespace {
// Puts every key in one of 4 chains that start at the last slots of any power-of-two array
// (the map masks the hash): the probes must walk past other keys, wrap round the end of the
// slot array, and find the keys again after each growth.
struct CollidingHash {
    std::size_t operator()(int k) const noexcept { return ~std::size_t(0) - static_cast<std::size_t>(k & 3); }
};
}

void SearchEngineTest::flatMapKeepsEveryKeyThroughCollisionsAndGrowth()
{
    hapmoe::FlatMap<int, int, CollidingHash> map;
    QVERIFY(map.empty());
    QVERIFY(map.find(7) == nullptr);   // an empty map allocates nothing and finds nothing
    for (int k = 0; k < 1000; ++k) {
        const auto [value, added] = map.emplace(k, k * 10);
        QVERIFY(added);
        QCOMPARE(*value, k * 10);
    }
    QCOMPARE(map.size(), std::size_t(1000));
    // A second emplace of a key finds it and leaves its value.
    const auto [again, addedAgain] = map.emplace(123, -1);
    QVERIFY(!addedAgain);
    QCOMPARE(*again, 1230);
    map[124] += 5;   // operator[] of a present key
    QCOMPARE(*map.find(124), 1245);
    QCOMPARE(map[5000], 0);   // operator[] of an absent key adds a value-initialised one
    QCOMPARE(map.size(), std::size_t(1001));
    for (int k = 0; k < 1000; ++k) {
        const int* v = map.find(k);
        QVERIFY2(v, qPrintable(QString("key %1 lost").arg(k)));
        QCOMPARE(*v, k == 124 ? 1245 : k * 10);
    }
    QVERIFY(map.find(-4) == nullptr);   // same chain as 0 (-4 & 3 == 0), absent
    map.clear();
    QVERIFY(map.empty());
    QVERIFY(map.find(0) == nullptr);
    QVERIFY(map.emplace(0, 1).second);   // usable again after clear
    QCOMPARE(*map.find(0), 1);
}

QTEST_GUILESS_MAIN(SearchEngineTest)
#include "SearchEngineTest.moc"
