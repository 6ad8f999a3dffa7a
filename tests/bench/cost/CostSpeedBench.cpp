// Speed of the cost model: wall time of CostModel::estimate for one plan and of one
// estimateStage call (what the search calls in its inner loop). Prints the machine's CPU.
// Target (docs/cost-model.md section 10): under 100 microseconds per plan.

#include "cost/CostModel.h"
#include "cost/UniformPlan.h"
#include "hardware/DeviceCatalog.h"
#include "io/Presets.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

using namespace hapmoe;

namespace {

std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    return "unknown CPU";
}

// Mixtral-S of the paper (appendix A) on cluster 16-1 (H800 1x8 + 910B 1x8).
ModelSpec mixtralS()
{
    // The built-in preset (resources/models/mixtral-s.json): paper appendix A.
    const ModelSpec* preset = findModelPreset("Mixtral-S");
    return preset ? *preset : ModelSpec{};
}

} // namespace

int main()
{
    const ModelSpec model = mixtralS();
    Cluster cluster;
    for (int i = 0; i < 2; ++i) {
        Node n;
        n.id = i;
        n.host = "n" + std::to_string(i);
        n.device_type = i == 0 ? "H800" : "910B";
        n.count = 8;
        cluster.nodes.push_back(n);
    }
    const DeviceCatalog& catalog = DeviceCatalog::builtin();
    UniformKnobs k;
    k.tp = 2;
    k.pp = 2;
    k.ep = 4;
    k.sequence_parallel = true;
    k.distributed_optimizer = true;
    k.recompute = Recompute::Selective;
    const Plan plan = makeUniformPlan(model, cluster, catalog, k);
    const CostModel cm(model, cluster, catalog);

    using clock = std::chrono::steady_clock;
    double sink = 0;
    const int plans = 200000;
    auto t0 = clock::now();
    for (int i = 0; i < plans; ++i)
        sink += cm.estimate(plan).iteration_time_s;
    const double perPlan = std::chrono::duration<double>(clock::now() - t0).count() / plans;

    StageContext ctx;
    ctx.stage_index = 0;
    ctx.num_stages = 2;
    ctx.num_microbatches = plan.numMicrobatches();
    ctx.next = &plan.stages[1];
    const int stages = 1000000;
    t0 = clock::now();
    for (int i = 0; i < stages; ++i)
        sink += cm.estimateStage(plan.stages[0], ctx).t_fwd;
    const double perStage = std::chrono::duration<double>(clock::now() - t0).count() / stages;

    // The same plan interleaved (VPP 2, 12 layers a rank in chunks of 6): CostModel::estimate
    // then simulates the schedule, 2 M v PP blocks (docs/cost-model.md section 8).
    Plan interleaved = plan;
    interleaved.vpp = 2;
    const int interleavedPlans = 20000;
    t0 = clock::now();
    for (int i = 0; i < interleavedPlans; ++i)
        sink += cm.estimate(interleaved).iteration_time_s;
    const double perInterleaved = std::chrono::duration<double>(clock::now() - t0).count() / interleavedPlans;

    std::printf("machine: %s\n", cpuModel().c_str());
    std::printf("plan: %s, %s, PP %d, %d layers, %d micro-batches\n", model.name.c_str(), "H800 1x8 + 910B 1x8", plan.pp(),
                model.num_layers, plan.numMicrobatches());
    std::printf("estimate():      %.2f us per plan (%d plans)\n", perPlan * 1e6, plans);
    std::printf("estimateStage(): %.3f us per stage (%d calls)\n", perStage * 1e6, stages);
    std::printf("estimate(), VPP 2 (%d blocks simulated): %.2f us per plan (%d plans)\n",
                2 * interleaved.numMicrobatches() * 2 * interleaved.pp(), perInterleaved * 1e6, interleavedPlans);
    std::printf("target < 100 us per plan: %s\n", perPlan < 100e-6 ? "met" : "NOT met");
    return sink > 0 ? 0 : 1;
}
