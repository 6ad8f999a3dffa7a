// Search benchmark (not run by ctest): the paper's twelve clusters of Table 1 with
// Mixtral-S and Mixtral-L (appendix A), and the 1,088-device four-type preset with a
// 96-layer MoE model. Prints search time, states, prunings, and the predicted iteration
// time of HS-DP, the uniform baseline and the Metis-style baseline with their ratios.
// --no-check: the pruned search without its exact check (SearchOptions::exact_check_work);
// --max-vpp N: Megatron-LM's interleaved 1F1B tried on the plans found (docs/search.md
// section 10); the PP column then reads "8v3" for PP 8 at VPP 3.
//
// Usage: hapmoe_search_bench [--exact] [--no-check] [--verbose] [--no-baselines] [--no-large] [--threads N]
//                            [--only CLUSTER] [--top K] [--max-vpp N]

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Presets.h"
#include "search/Search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace hapmoe;

namespace {

struct Row {
    std::string cluster, model;
    double time_s = 0, main_s = 0;
    long long states = 0;
    PruneCounters pruned;
    double hsdp = 0, uniform = 0, metis = 0;
    int pp = 0;
    int vpp = 1;
    double offload = 0;     // share of the optimizer in host memory (nothing fit without it)
    int check_state = 0;    // the exact check: 0 not run, 1 out of time, 2 finished
    double check = 0;       // finished: the best's relative change against the pruned search's
};

std::string stagesSummary(const Plan& p)
{
    std::string s;
    for (const StagePlan& st : p.stages) {
        if (!s.empty())
            s += " | ";
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s x%d L%d t%d c%d d%d e%d et%d%s", st.device_type.c_str(), st.numDevices(),
                      st.num_layers, st.tp, st.cp, st.dp, st.ep, st.etp,
                      st.recompute == Recompute::None ? "" : (st.recompute == Recompute::Selective ? " sel" : " full"));
        s += buf;
    }
    return s;
}

Row runCase(const std::string& clusterName, const ModelSpec& model, const SearchOptions& opt, bool verbose)
{
    const DeviceCatalog& cat = DeviceCatalog::builtin();
    const Cluster cluster = resolveCluster(clusterName, cat);
    CostModel cost(model, cluster, cat);
    const SearchResult r = runSearch(cost, opt);
    Row row;
    row.cluster = clusterName;
    row.model = model.name;
    row.time_s = r.time_s;
    row.main_s = r.main_time_s;
    row.states = r.states;
    row.pruned = r.pruned;
    if (r.exactChecked())
        row.check = r.pruned_best_s > 0 ? r.plans.front().prediction.iteration_time_s / r.pruned_best_s - 1 : 0;
    row.check_state = r.exactChecked() ? 2 : r.exact_check_s > 0 ? 1 : 0;
    row.offload = r.plans.empty() ? 0.0 : r.plans.front().plan.optimizer_offload_fraction;
    if (!r.plans.empty()) {
        row.hsdp = r.plans.front().prediction.iteration_time_s;
        row.pp = r.plans.front().plan.pp();
        row.vpp = r.plans.front().plan.vpp;
        if (verbose)
            std::printf("    HS-DP  [%s] %s\n", toString(r.plans.front().plan.target), stagesSummary(r.plans.front().plan).c_str());
    } else if (verbose) {
        std::printf("    no plan: %s\n", r.no_plan_reason.c_str());
    }
    if (r.uniform_baseline) {
        row.uniform = r.uniform_baseline->prediction.iteration_time_s;
        if (verbose)
            std::printf("    uniform %s\n", stagesSummary(r.uniform_baseline->plan).c_str());
    }
    if (r.metis_baseline) {
        row.metis = r.metis_baseline->prediction.iteration_time_s;
        if (verbose)
            std::printf("    metis  %s\n", stagesSummary(r.metis_baseline->plan).c_str());
    }
    return row;
}

void printRow(const Row& r)
{
    auto ratio = [](double a, double b) { return (a > 0 && b > 0) ? a / b : 0.0; };
    auto num = [](double v) {
        char buf[32];
        if (v > 0)
            std::snprintf(buf, sizeof buf, "%8.2f", v);
        else
            std::snprintf(buf, sizeof buf, "%8s", "-");
        return std::string(buf);
    };
    auto rat = [](double v) {
        char buf[32];
        if (v > 0)
            std::snprintf(buf, sizeof buf, "%5.2fx", v);
        else
            std::snprintf(buf, sizeof buf, "%6s", "-");
        return std::string(buf);
    };
    // The exact check: "=" it found nothing faster, the change of the best plan's time in
    // percent when it replaced that plan (slower only where it found a plan with the optimizer
    // on the devices, which the pruned search had not), "out" it ran out of time, "-" it did
    // not run.
    char check[16];
    if (r.check_state == 2 && r.check != 0)
        std::snprintf(check, sizeof check, "%+.2f%%", 100 * r.check);
    else
        std::snprintf(check, sizeof check, "%s", r.check_state == 2 ? "=" : r.check_state == 1 ? "out" : "-");
    std::printf("| %-10s | %-9s | %6.3f | %6.3f | %7lld | %10lld | %8lld | %7lld | %2s | %-4s | %-7s | %s | %s | %s | %s | %s |\n",
                r.cluster.c_str(), r.model.c_str(), r.main_s, r.time_s, r.states, r.pruned.load_balance, r.pruned.memory,
                r.pruned.communication, r.pp > 0 ? (std::to_string(r.pp) + (r.vpp > 1 ? "v" + std::to_string(r.vpp) : std::string())).c_str() : "-",
                r.offload > 0 ? (std::to_string(static_cast<int>(r.offload * 100 + 0.5)) + "%").c_str() : "-", check,
                num(r.hsdp).c_str(), num(r.uniform).c_str(), num(r.metis).c_str(), rat(ratio(r.uniform, r.hsdp)).c_str(),
                rat(ratio(r.metis, r.hsdp)).c_str());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv)
{
    bool exact = false, noCheck = false, verbose = false, skipLarge = false, noBaselines = false;
    int threads = 0, top = 1, maxVpp = 1;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--exact"))
            exact = true;
        else if (!std::strcmp(argv[i], "--no-check"))
            noCheck = true;
        else if (!std::strcmp(argv[i], "--verbose"))
            verbose = true;
        else if (!std::strcmp(argv[i], "--no-baselines"))
            noBaselines = true;
        else if (!std::strcmp(argv[i], "--no-large"))
            skipLarge = true;
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!std::strcmp(argv[i], "--top") && i + 1 < argc)
            top = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--max-vpp") && i + 1 < argc)
            maxVpp = std::max(1, std::atoi(argv[++i]));
    }
    SearchOptions opt;
    opt.exact = exact;
    if (noCheck)
        opt.exact_check_work = 0;   // the pruned search alone
    opt.threads = threads;
    opt.baselines = !noBaselines;
    opt.top_k = top;   // the search's distinct plans; the table shows the best
    opt.max_vpp = maxVpp;
    const char* clusters[] = {"16-1-h", "16-2-h", "16-3-h", "16-1", "16-2", "16-3",
                              "24-1",   "24-2",   "24-3",   "32-1", "32-2", "32-3"};
    const ModelSpec small = resolveModel("mixtral-s");
    const ModelSpec large = resolveModel("mixtral-l");
    std::printf("| cluster    | model     | HS-DP s | total s | states  | pruned LB  | pr. mem  | pr.comm | PP | opt. | check   | HS-DP    | uniform  | Metis    | unif/HS | Metis/HS |\n");
    std::printf("|------------|-----------|--------|--------|---------|------------|----------|---------|----|------|---------|----------|----------|----------|--------|--------|\n");
    double geoU[2] = {0, 0}, geoM[2] = {0, 0};
    int count[2] = {0, 0};
    for (const char* c : clusters) {
        if (!only.empty() && only != c)
            continue;
        int mi = 0;
        for (const ModelSpec* m : {&small, &large}) {
            const Row r = runCase(c, *m, opt, verbose);
            printRow(r);
            if (r.hsdp > 0 && r.uniform > 0 && r.metis > 0) {
                geoU[mi] += std::log(r.uniform / r.hsdp);
                geoM[mi] += std::log(r.metis / r.hsdp);
                ++count[mi];
            }
            ++mi;
        }
    }
    for (int mi = 0; mi < 2; ++mi)
        if (count[mi] > 0)
            std::printf("geometric mean over %d clusters, %s: uniform/HS-DP %.2fx, Metis-style/HS-DP %.2fx\n", count[mi],
                        mi == 0 ? "Mixtral-S" : "Mixtral-L", std::exp(geoU[mi] / count[mi]), std::exp(geoM[mi] / count[mi]));
    if (!skipLarge && (only.empty() || only == "mixed-1088")) {
        // Mixtral-L's layer shape at twice the depth: a 96-layer MoE model.
        ModelSpec deep = large;
        deep.name = "MoE-96L";
        deep.num_layers = 96;
        deep.training.global_batch_size = 2048;
        const Row r = runCase("mixed-1088", deep, opt, verbose);
        printRow(r);
    }
    return 0;
}
