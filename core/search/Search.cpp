#include "search/Search.h"

#include "plan/Deployability.h"
#include "util/InputError.h"
#include "util/Strings.h"
#include "search/Exhaustive.h"
#include "search/HsDp.h"
#include "search/Interleaving.h"
#include "search/SearchRun.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <utility>

namespace hapmoe {

const char* toString(Algorithm a)
{
    switch (a) {
    case Algorithm::Exhaustive: return "exhaustive";
    case Algorithm::Uniform: return "uniform";
    case Algorithm::MetisStyle: return "metis-style";
    case Algorithm::HsDp: break;
    }
    return "hs-dp";
}

const char* toString(OptimizerOffload o)
{
    switch (o) {
    case OptimizerOffload::Never: return "never";
    case OptimizerOffload::Always: return "always";
    case OptimizerOffload::Fastest: return "fastest";
    case OptimizerOffload::IfNeeded: break;
    }
    return "if-needed";
}

const char* toString(ExactCheck c)
{
    switch (c) {
    case ExactCheck::Finished: return "finished";
    case ExactCheck::WorkBudget: return "work-budget";
    case ExactCheck::TimeLimit: return "time-limit";
    case ExactCheck::Cancelled: return "cancelled";
    case ExactCheck::NotTriedWork: return "not-tried-work";
    case ExactCheck::NotTriedTime: return "not-tried-time";
    case ExactCheck::Off: break;
    }
    return "off";
}

const char* toString(InterleaveCut c)
{
    switch (c) {
    case InterleaveCut::TimeLimit: return "time-limit";
    case InterleaveCut::Cancelled: return "cancelled";
    case InterleaveCut::No: break;
    }
    return "no";
}

bool RunControl::stopAfter(long long work10)
{
    if (pass_work_limit > 0 && pass_work.fetch_add(work10, std::memory_order_relaxed) + work10 > pass_work_limit)
        return true;
    return stop();
}

bool RunControl::stop()
{
    if (cancel && cancel->load(std::memory_order_relaxed))
        return true;
    if (has_pass_deadline && std::chrono::steady_clock::now() > pass_deadline)
        return true;
    if (has_deadline && std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return true;
    }
    return false;
}

std::string alternativeKey(const Plan& plan)
{
    std::string key = std::to_string(plan.global_batch_size) + "/" + std::to_string(plan.optimizer_offload_fraction);
    for (const StagePlan& st : plan.stages) {
        key += "|" + st.device_type;
        for (int v : {st.first_layer, st.num_layers, st.tp, st.cp, st.dp, st.ep, st.etp, st.edp, st.micro_batch_size})
            key += "," + std::to_string(v);
        for (const DeviceSlot& d : st.devices)
            key += ";" + std::to_string(d.node) + ":" + std::to_string(d.first_local) + "+" + std::to_string(d.count);
    }
    return key;
}

void Incumbent::offer(double objective, const std::string& key)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    keepDistinct(m_best, std::make_pair(objective, key), m_keep, [](const auto& x) { return x.first; },
                 [](const auto& x) -> const std::string& { return x.second; });
    if (m_best.size() >= m_keep)
        m_bound.store(m_best.back().first, std::memory_order_relaxed);
}

void RunControl::offerBest(double t)
{
    double cur = best.load();
    while ((cur <= 0 || t < cur) && !best.compare_exchange_weak(cur, t)) {
    }
}

void RunControl::addWork(double work)
{
    std::lock_guard<std::mutex> lock(progress_mutex);
    work_total += work;
}

void RunControl::report(bool force, bool finished)
{
    if (!progress)
        return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_report < std::chrono::milliseconds(50))
        return;
    last_report = now;
    SearchProgress p;
    p.states = states.load();
    p.pruned.load_balance = pruned_load.load();
    p.pruned.memory = pruned_memory.load();
    p.pruned.communication = pruned_comm.load();
    p.best_time_s = best.load();
    // Later passes (another node order, offload shares, the baselines) add their jobs as they
    // start, so done / total can drop: the fraction reported never goes back, and stays below 1
    // until the search returns.
    double done = work_done.load();
    for (int i = 0; i < running_slots; ++i)
        done += running[i].load(std::memory_order_relaxed);
    const double raw = work_total > 0 ? std::min(1.0, done / work_total) : 1.0;
    last_fraction = finished ? 1.0 : std::max(last_fraction, std::min(raw, 0.99));
    p.fraction = last_fraction;
    progress(p);
}

namespace {

// Whether a plan Megatron-LM runs comes before a best plan only FlagScale runs: within the
// share SearchOptions::prefer_megatron_within of its time (0: never).
bool preferredOver(const RankedPlan& a, const RankedPlan& best, double within)
{
    return within > 0 && best.plan.target == Target::FlagScale && a.plan.target == Target::Megatron
        && a.prediction.iteration_time_s <= best.prediction.iteration_time_s * (1.0 + within);
}

// Whether plan a ranks before plan b: a Megatron-LM plan preferredOver b, else the faster.
bool ranksBefore(const RankedPlan& a, const RankedPlan& b, double within)
{
    if (preferredOver(a, b, within))
        return true;
    return !preferredOver(b, a, within) && a.prediction.iteration_time_s < b.prediction.iteration_time_s;
}

// Plans fastest first, with the first a plan preferredOver the fastest moved to the front.
void preferMegatron(std::vector<RankedPlan>& plans, double within)
{
    if (plans.empty() || within <= 0)
        return;
    const auto it = std::find_if(plans.begin(), plans.end(), [&](const RankedPlan& rp) { return preferredOver(rp, plans.front(), within); });
    if (it != plans.end())
        std::rotate(plans.begin(), it, it + 1);
}

// A job: run configurations tried in order. Megatron-LM has one recompute setting for the
// whole pipeline, so its jobs walk the settings from none upwards and stop at the first
// setting under which no stage was refused for memory: a higher setting then only slows
// the same pipelines down (the wide selective setting aside, which full recompute of a few
// layers may beat: StageEvaluator.h).
struct Job {
    std::vector<RunConfig> runs;
    bool stop_when_all_fit = false;
};

// Jobs whose results are merged to one plan (the baselines, the homogeneous pass): the
// one-dominator rule finds that plan exactly, and the K-fold rule of exact alternatives
// would only cost time (docs/search.md section 5).
void keepOnePlanExact(std::vector<Job>& jobs)
{
    for (Job& j : jobs)
        for (RunConfig& c : j.runs)
            c.exact_alternatives = false;
}

bool sameStage(const StagePlan& a, const StagePlan& b, bool ignoreRecompute = false)
{
    const bool recomputeDiffers = a.recompute != b.recompute || a.recompute_layers != b.recompute_layers
        || (a.recompute == Recompute::Selective && a.recompute_modules != b.recompute_modules);
    if (a.device_type != b.device_type || a.first_layer != b.first_layer || a.num_layers != b.num_layers || a.tp != b.tp
        || a.cp != b.cp || a.dp != b.dp || a.ep != b.ep || a.etp != b.etp || a.edp != b.edp
        || (recomputeDiffers && !ignoreRecompute) || a.micro_batch_size != b.micro_batch_size
        || a.devices.size() != b.devices.size())
        return false;
    for (std::size_t i = 0; i < a.devices.size(); ++i)
        if (a.devices[i].node != b.devices[i].node || a.devices[i].first_local != b.devices[i].first_local
            || a.devices[i].count != b.devices[i].count)
            return false;
    return true;
}

// The same plan; with ignoreRecompute, the same pipeline with other recompute settings (the
// least recompute that fits is the faster one, so such a slower copy is no alternative).
bool samePlan(const Plan& a, const Plan& b, bool ignoreRecompute = false)
{
    if (a.stages.size() != b.stages.size() || a.global_batch_size != b.global_batch_size
        || a.optimizer_offload_fraction != b.optimizer_offload_fraction)
        return false;
    for (std::size_t i = 0; i < a.stages.size(); ++i)
        if (!sameStage(a.stages[i], b.stages[i], ignoreRecompute))
            return false;
    return true;
}

class Searcher {
public:
    // spaceCluster: the cost model's cluster, or the same nodes listed in another order, in
    // which the search space numbers the devices of a type (docs/search.md section 1).
    Searcher(const CostModel& cost, const SearchOptions& options, RunControl& control, const Cluster& spaceCluster)
        : m_cost(cost), m_options(options), m_control(control),
          // Every mesh's DP divides the micro-batch step DP_0 x MBS_0, which divides the global batch.
          m_space(cost.model(), spaceCluster, cost.catalog(),
                  options.global_batch_size.value_or(cost.model().training.global_batch_size))
    {
        const ModelSpec& model = cost.model();
        m_gbs = options.global_batch_size.value_or(model.training.global_batch_size);
        m_mbs0 = options.micro_batch_size.value_or(model.training.micro_batch_size);
        m_threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        computeSpeeds();
    }

    const SearchSpace& space() const { return m_space; }
    void setOffloadFraction(double f) { m_offload = f; }
    // A plan already found elsewhere (another offload share): runs that keep one plan only
    // look for faster ones.
    void setKnownBest(double iterationTime) { m_knownBest = iterationTime; }
    double knownBest() const { return m_knownBest; }
    // Plans already found by another pass (iteration time, alternativeKey): each phase's
    // incumbent starts with them, so that runs keeping K plans look only for plans that beat
    // the K-th of them (the exact check with Top K > 1).
    void setKnownPlans(std::vector<std::pair<double, std::string>> plans) { m_knownPlans = std::move(plans); }
    // The plans each run keeps (0: SearchOptions::top_k): the exact check's one-plan pass.
    void setKeep(int keep) { m_keep = keep; }
    int gbs() const { return m_gbs; }
    int mbs0() const { return m_mbs0; }

    RunConfig base(bool heuristics) const
    {
        RunConfig c;
        c.mbs0 = m_mbs0;
        c.load_balance = heuristics;
        c.comm_prune = heuristics;
        c.one_size_per_type = heuristics;
        c.delta = m_options.delta;
        c.eta = m_options.eta;
        c.max_pp = m_options.max_pp;
        c.keep = m_keep > 0 ? m_keep : std::max(1, m_options.top_k);
        c.exact_alternatives = !heuristics;
        return c;
    }

    std::vector<unsigned> typeSubsets(bool heuristics) const
    {
        const unsigned all = (1u << m_space.numTypes()) - 1;
        if (!heuristics)
            return {all};
        std::vector<unsigned> out;
        for (unsigned s = 1; s <= all; ++s)
            out.push_back(s);
        return out;
    }

    // Sequences per micro-batch step, B = DP_0 * MBS_0, that divide the global batch.
    std::vector<int> batches() const
    {
        std::set<int> dps;
        for (int h = 0; h < m_space.numTypes(); ++h)
            for (int d : m_space.sizes(h))
                for (const Knob& k : m_space.knobs(h, d))
                    dps.insert(k.dp);
        std::vector<int> out;
        for (int dp : dps) {
            const long long b = static_cast<long long>(dp) * m_mbs0;
            if (b > 0 && b <= m_gbs && m_gbs % b == 0)
                out.push_back(static_cast<int>(b));
        }
        return out;
    }

    // Whether a type in `mask` has nodes of different sizes.
    bool unevenNodes(unsigned mask) const
    {
        for (int h = 0; h < m_space.numTypes(); ++h)
            if ((mask & (1u << h)) && m_space.types()[static_cast<std::size_t>(h)].size_devices.size() > 1)
                return true;
        return false;
    }

    // The TP sizes of the knobs of the types in `mask`, smallest first.
    std::vector<int> tpSizes(unsigned mask) const
    {
        std::set<int> sizes;
        for (int h = 0; h < m_space.numTypes(); ++h)
            if (mask & (1u << h))
                for (int d : m_space.sizes(h))
                    for (const Knob& k : m_space.knobs(h, d))
                        sizes.insert(k.tp);
        return {sizes.begin(), sizes.end()};
    }

    // Which of Megatron-LM's selective settings apply (recomputeLevels): the element-wise
    // modules where they save memory (not core_attn alone under fused attention), the whole
    // blocks where the model has them.
    std::pair<bool, bool> selectiveSettings() const
    {
        return {selectiveRecomputeSavesMemory(m_cost, selectiveRecomputeModules(m_cost, m_space)),
                wideSelectiveRecomputeModules(m_cost) != 0};
    }

    // The jobs of the main search (and of the Metis-style baseline with EP/ETP fixed).
    std::vector<Job> searchJobs(const std::vector<Target>& targets, bool heuristics, int fixedEp, int fixedEtp) const
    {
        std::vector<Job> jobs;
        const int N = m_space.model().num_layers;
        const auto [light, wide] = selectiveSettings();
        for (Target t : targets) {
            std::vector<unsigned> masks = typeSubsets(heuristics);
            if (t == Target::Megatron && !heuristics) {
                // One job set per collective library (Megatron-LM cannot mix them).
                masks.clear();
                for (int h = 0; h < m_space.numTypes(); ++h) {
                    unsigned mask = 0;
                    for (int g = 0; g < m_space.numTypes(); ++g)
                        if (!m_space.mixesLibraries((1u << h) | (1u << g)))
                            mask |= 1u << g;
                    if (std::find(masks.begin(), masks.end(), mask) == masks.end())
                        masks.push_back(mask);
                }
            }
            for (unsigned mask : masks) {
                if (t == Target::FlagScale) {
                    for (int b : batches()) {
                        RunConfig c = base(heuristics);
                        c.target = t;
                        c.batch = b;
                        c.microbatches = m_gbs / b;
                        c.type_mask = mask;
                        c.require_all_types = heuristics;
                        c.fixed_ep = fixedEp;
                        c.fixed_etp = fixedEtp;
                        if (!m_cost.options().overlap.tp_comm) {
                            jobs.push_back({{c}, false});
                            continue;
                        }
                        // --tp-comm-overlap holds for pipelines of one TP size only: one run
                        // per TP size with the overlap, and one run of any sizes without it
                        // (its one-size plans are costed without the overlap they would get,
                        // so they never undercut the runs that cost them right).
                        for (int tp : tpSizes(mask)) {
                            RunConfig one = c;
                            one.only_tp = tp;
                            jobs.push_back({{one}, false});
                        }
                        c.tp_comm_overlap = false;
                        jobs.push_back({{c}, false});
                    }
                }
                // FlagScale's stages take selective recompute only all together, which its
                // per-stage runs above do not try: a job per knob tuple tries it, unless
                // Megatron-LM's jobs (below) do, whose plans of CP 1 FlagScale also runs; they
                // leave out the types that mix collective libraries.
                const bool selectiveHelps = light || wide;
                const bool withMegatron = std::find(targets.begin(), targets.end(), Target::Megatron) != targets.end();
                if (t == Target::FlagScale && ((withMegatron && !m_space.mixesLibraries(mask)) || !selectiveHelps))
                    continue;
                if (t == Target::Megatron && m_space.mixesLibraries(mask))
                    continue;
                // One (d, knob tuple) for every stage.
                std::set<std::tuple<int, int, int, int, int, int>> tuples;
                for (int h = 0; h < m_space.numTypes(); ++h) {
                    if (!(mask & (1u << h)))
                        continue;
                    for (int d : m_space.sizes(h))
                        for (const Knob& k : m_space.knobs(h, d)) {
                            if (fixedEp > 0 && (k.ep != fixedEp || k.etp != fixedEtp))
                                continue;
                            tuples.insert({d, k.tp, k.cp, k.dp, k.ep, k.etp});
                        }
                }
                for (const auto& [d, tp, cp, dp, ep, etp] : tuples) {
                    // With both targets, a Megatron-LM plan with CP 1 has a FlagScale
                    // twin (the same stages, each with its least recompute) that is
                    // never slower, so only CP > 1 needs Megatron-LM's own jobs; but
                    // FlagScale's stages take selective recompute only all together,
                    // which its per-stage runs do not try, so with CP 1 the selective
                    // setting still runs here where it saves memory. FlagScale alone
                    // runs that setting (its CP is 1).
                    const bool twin = t == Target::Megatron && cp == 1
                        && std::find(targets.begin(), targets.end(), Target::FlagScale) != targets.end();
                    if ((twin && !selectiveHelps) || (t == Target::FlagScale && cp != 1))
                        continue;
                    const bool selectiveOnly = twin || t == Target::FlagScale;
                    const long long b = static_cast<long long>(dp) * m_mbs0;
                    if (b > m_gbs || m_gbs % b != 0)
                        continue;
                    Job job;
                    job.stop_when_all_fit = true;
                    for (int level : recomputeLevels(N, light, wide)) {
                        if (selectiveOnly && level != 1 && level != kSelectiveWide)
                            continue;
                        RunConfig c = base(heuristics);
                        // Megatron-LM runs one process count on every node, so where a
                        // type's nodes differ in size its plans leave nodes idle, which the
                        // load-balance pruning (layers spread over every device of the
                        // run's types) removes: such jobs, one knob tuple each, run without it.
                        if (t == Target::Megatron && unevenNodes(mask))
                            c.load_balance = false;
                        // With either target and SearchOptions::prefer_megatron_within, a plan
                        // Megatron-LM runs that close to the best comes first (merge): its runs
                        // keep what they find up to that far above the other jobs' best.
                        if (t == Target::Megatron && m_options.target == Target::Any && m_options.prefer_megatron_within > 0)
                            c.incumbent_slack = 1.0 + m_options.prefer_megatron_within;
                        c.target = t;
                        c.batch = static_cast<int>(b);
                        c.microbatches = m_gbs / static_cast<int>(b);
                        c.type_mask = mask;
                        c.require_all_types = heuristics;
                        c.fixed_d = d;
                        c.fixed_knob = {tp, cp, dp, ep, etp, d / (ep * etp)};
                        c.fixed_level = level;
                        job.runs.push_back(c);
                    }
                    jobs.push_back(std::move(job));
                }
            }
        }
        return jobs;
    }

    // Uniform baseline: every device, PP stages of W / PP devices, N / PP layers each, one
    // knob tuple and one recompute setting (the paper's "non-uniform PP/DP disabled").
    std::vector<Job> uniformJobs() const
    {
        std::vector<Job> jobs;
        const int N = m_space.model().num_layers;
        const int W = m_space.totalDevices();
        const unsigned all = (1u << m_space.numTypes()) - 1;
        const auto [light, wide] = selectiveSettings();
        for (int pp = 1; pp <= N && pp <= W; ++pp) {
            if (N % pp != 0 || W % pp != 0)
                continue;
            if (m_options.max_pp > 0 && pp > m_options.max_pp)
                continue;
            const int d = W / pp;
            std::set<std::tuple<int, int, int, int, int>> tuples;
            for (int h = 0; h < m_space.numTypes(); ++h)
                for (const Knob& k : m_space.knobs(h, d))
                    tuples.insert({k.tp, k.cp, k.dp, k.ep, k.etp});
            for (const auto& [tp, cp, dp, ep, etp] : tuples) {
                const long long b = static_cast<long long>(dp) * m_mbs0;
                if (b > m_gbs || m_gbs % b != 0)
                    continue;
                Job job;
                job.stop_when_all_fit = true;
                for (int level : recomputeLevels(N / pp, light, wide)) {
                    RunConfig c = base(false);
                    c.exact_alternatives = false;   // the baseline keeps one plan
                    c.target = Target::Megatron;
                    c.ignore_target_rules = true;
                    c.batch = static_cast<int>(b);
                    c.microbatches = m_gbs / static_cast<int>(b);
                    c.type_mask = all;
                    c.require_all_types = true;
                    c.all_devices = true;
                    c.even_pp = pp;
                    c.fixed_d = d;
                    c.fixed_knob = {tp, cp, dp, ep, etp, d / (ep * etp)};
                    c.fixed_level = level;
                    c.keep = 1;
                    job.runs.push_back(c);
                }
                jobs.push_back(std::move(job));
            }
        }
        return jobs;
    }

    // A job's share of the work, for the progress bar only. Measured on Mixtral-L over
    // mixed-1088 (4 device types, 7627 jobs, 3.3 s on 2 cores): a FlagScale job, whose
    // stages may each take another type, takes about 6 times longer for each type it may
    // combine (0.9, 3.9, 27 and 208 ms per job for 1 to 4 types), and a Megatron-LM job,
    // one type per pipeline, about a fiftieth of a FlagScale job over as many types (10 and
    // 100 us for 1 and 2 types). This is the weight of one run: a job's further runs
    // (recompute settings, when a stage did not fit) join the total as they start.
    double jobWork(const Job& job) const
    {
        if (job.runs.empty())
            return 0;
        const RunConfig& c = job.runs.front();
        const unsigned all = m_space.numTypes() >= 32 ? ~0u : (1u << m_space.numTypes()) - 1;
        const int types = std::max(1, std::popcount(c.type_mask & all));
        // Metis-style jobs fix EP and ETP on every stage, so their stages have a tenth of the
        // options or fewer: 535 jobs of weight 3616 took 0.22 s where the search's 5925 jobs
        // of weight 3832 took 3.1 s (Mixtral-L; Mixtral-8x22B: 0.52 s and 5.1 s).
        const double fixedExperts = c.fixed_ep > 0 ? 0.1 : 1.0;
        return (c.target == Target::FlagScale ? 1.0 : 0.02) * std::pow(6.0, types - 1) * fixedExperts;
    }

    double jobsWork(const std::vector<Job>& jobs) const
    {
        double sum = 0;
        for (const Job& j : jobs)
            sum += jobWork(j);
        return sum;
    }

    // Runs jobs over the threads; results are indexed by job, so the merge is the same
    // whatever the timing.
    // reserved: the work counted for this phase before it started (RunControl::work_total);
    // the phase takes its work from it first and gives back what it did not need.
    std::vector<RunResult> runJobs(const std::vector<Job>& jobs, bool exhaustive, double* reserved = nullptr)
    {
        std::vector<RunResult> results(jobs.size());
        std::atomic<std::size_t> nextJob{0};
        Incumbent incumbent(jobs.empty() ? 1 : static_cast<std::size_t>(std::max(1, jobs.front().runs.front().keep)));
        if (!jobs.empty() && jobs.front().runs.front().keep == 1 && m_knownBest < std::numeric_limits<double>::infinity())
            incumbent.offer(m_knownBest, "known best");
        for (const auto& [time, key] : m_knownPlans)
            incumbent.offer(time, key);
        m_control.incumbent = exhaustive ? nullptr : &incumbent;
        std::vector<double> work(jobs.size());
        double phase = 0;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            work[i] = jobWork(jobs[i]);
            phase += work[i];
        }
        double counted = 0;
        if (reserved) {
            counted = std::min(*reserved, phase);
            *reserved -= counted;
        }
        m_control.work_total += phase - counted;
        // Execution order (results stay indexed by job, so the answer does not depend on
        // it): the jobs keep their order, except that the micro-batch layouts of one type
        // subset run from the largest step down. Those jobs have few micro-batches and are
        // cheap, and the plans they find tighten the shared incumbent for the others.
        std::vector<std::size_t> runOrder(jobs.size());
        std::vector<std::size_t> group(jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            runOrder[i] = i;
            const RunConfig& a = jobs[i].runs.front();
            const bool same = i > 0 && jobs[i - 1].runs.front().type_mask == a.type_mask
                && jobs[i - 1].runs.front().target == a.target && a.target == Target::FlagScale;
            group[i] = same ? group[i - 1] : i;
        }
        std::stable_sort(runOrder.begin(), runOrder.end(), [&](std::size_t a, std::size_t b) {
            if (group[a] != group[b])
                return group[a] < group[b];
            return jobs[a].runs.front().batch > jobs[b].runs.front().batch;
        });
        const int n = std::max(1, std::min<int>(m_threads, static_cast<int>(jobs.size())));
        if (m_control.running_slots < n) {
            // Before any worker of this phase starts: no report reads the slots now.
            m_control.running = std::make_unique<std::atomic<double>[]>(static_cast<std::size_t>(n));
            m_control.running_slots = n;
        }
        auto worker = [&](int w) {
            StageEvaluator eval(m_cost, m_space, m_offload);
            HsDp dp(m_space, eval, m_speed);
            Exhaustive ex(m_cost, m_space, eval);
            std::atomic<double>& running = m_control.running[static_cast<std::size_t>(w)];
            for (;;) {
                const std::size_t slot = nextJob.fetch_add(1);
                if (slot >= jobs.size())
                    break;
                const std::size_t i = runOrder[slot];
                const JobProgress jobProgress{&running, work[i]};
                RunResult& out = results[i];
                for (std::size_t ri = 0; ri < jobs[i].runs.size(); ++ri) {
                    const RunConfig& cfg = jobs[i].runs[ri];
                    if (m_control.stop()) {
                        out.complete = false;
                        break;
                    }
                    if (ri > 0) {
                        // A further recompute setting: its work joins the total as it starts.
                        // The total first: a report in between must not see the run
                        // done against the old total (the fraction never goes back).
                        m_control.addWork(work[i]);
                        running.store(0);
                        m_control.work_done.fetch_add(work[i]);
                    }
                    RunResult r = exhaustive ? ex.run(cfg, m_control) : dp.run(cfg, m_control, jobProgress);
                    for (auto& p : r.plans)
                        out.plans.push_back(std::move(p));
                    if (out.type_shortfall.size() < r.type_shortfall.size())
                        out.type_shortfall.resize(r.type_shortfall.size());
                    for (std::size_t t = 0; t < r.type_shortfall.size(); ++t)
                        if (r.type_shortfall[t].closerThan(out.type_shortfall[t]))
                            out.type_shortfall[t] = r.type_shortfall[t];
                    out.memory_pruned += r.memory_pruned;
                    if (!r.complete) {
                        out.complete = false;
                        break;
                    }
                    if (jobs[i].stop_when_all_fit && r.memory_pruned == 0) {
                        // Every stage fitted: higher settings only slow the same pipelines.
                        // Full-k settings exclude stages of k layers or fewer, which full
                        // recompute of all layers (the last setting) admits again. The wide
                        // selective setting is not ordered against full-k ones (StageEvaluator.h):
                        // those that follow it still run.
                        if (cfg.fixed_level == kSelectiveWide)
                            continue;
                        if (!isFullOfKLevel(cfg.fixed_level))
                            break;
                        ri = jobs[i].runs.size() - 2;   // go on with the last setting
                    }
                }
                std::stable_sort(out.plans.begin(), out.plans.end(),
                                 [](const RunPlan& a, const RunPlan& b) { return a.objective < b.objective; });
                // A job the cancel or the time limit stopped counts what it did, not its whole
                // work: the jobs left in the queue would otherwise jump the progress forward.
                const double credited = out.complete ? work[i] : running.load();
                running.store(0);
                m_control.work_done.fetch_add(credited);
                m_control.report();
            }
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < n; ++t)
            pool.emplace_back(worker, t);
        worker(0);
        for (auto& t : pool)
            t.join();
        m_control.incumbent = nullptr;
        if (reserved) {
            m_control.work_total -= *reserved;   // no worker reports now
            *reserved = 0;
        }
        return results;
    }

    struct Merged {
        std::vector<RankedPlan> plans;
        std::map<std::string, Shortfall> type_shortfall;   // by device type name
        // The stage closest to fitting of all types (gib < 0: none missed).
        Shortfall closest() const
        {
            Shortfall c;
            for (const auto& [type, t] : type_shortfall)
                if (t.closerThan(c))
                    c = t;
            return c;
        }
        std::string deploy_problem;
        int candidates = 0;
        bool cut = false;   // the time limit or a cancel ended the list before `want`
    };

    // A plan the merge keeps, on the target it runs under: its idle devices named and why, and
    // its prediction.
    RankedPlan ranked(Plan plan, Target target) const
    {
        plan.target = target;
        // What the search knows: no plan it found that uses them is faster. Why not can be
        // speed (a slow stage lengthens the 1F1B bottleneck), the group sizes a node's
        // devices allow (a group divides the node: 4 of 5 devices form none), or memory (a
        // stage holds at least one layer).
        fillUnused(plan, m_space, std::string(UnusedDevices::kLeftIdle)
                                      + ": the search found no faster plan that uses them (a slower stage lengthens the "
                                        "1F1B bottleneck, a stage's devices on a node must divide the node's count, and "
                                        "a stage must hold at least one layer in memory)");
        if (plan.target == Target::Megatron && !plan.stages.empty()) {
            // Devices of another collective library cannot join a Megatron-LM job, and the
            // launcher starts as many processes on every node (Candidates::closes): a node of
            // another device count cannot join the nodes the plan runs on.
            const DeviceType* used = m_cost.catalog().find(plan.stages.front().device_type);
            std::set<int> usedNodes;
            for (const StagePlan& st : plan.stages)
                for (const DeviceSlot& d : st.devices)
                    usedNodes.insert(d.node);
            const Node* first = usedNodes.empty() ? nullptr : m_cost.cluster().node(*usedNodes.begin());
            for (UnusedDevices& u : plan.unused) {
                const Node* node = m_cost.cluster().node(u.node);
                const DeviceType* t = node ? m_cost.catalog().find(node->device_type) : nullptr;
                if (used && t && t->collective_library != used->collective_library)
                    u.reason = "not usable by Megatron-LM: " + t->collective_library + " devices cannot join a "
                        + used->collective_library + " job (one collective library)";
                else if (first && node && u.leftIdle() && !usedNodes.count(u.node) && node->count != first->count)
                    u.reason = "not usable by Megatron-LM's launcher: it starts as many processes on every node, "
                        + std::to_string(first->count) + " on the plan's nodes, and this node has " + std::to_string(node->count)
                        + " devices (FlagScale's launcher starts each node's own count)";
            }
        }
        RankedPlan rp;
        rp.prediction = m_cost.estimate(plan);
        rp.plan = std::move(plan);
        return rp;
    }

    // Best distinct plans over all jobs that the target can run, each with its prediction.
    Merged merge(std::vector<RunResult>& results, Target target, std::size_t want, const std::string& name,
                 bool checkDeploy = true)
    {
        Merged out;
        struct Ref {
            double objective;
            std::size_t job, rank;
        };
        std::vector<Ref> refs;
        for (std::size_t j = 0; j < results.size(); ++j) {
            for (std::size_t r = 0; r < results[j].plans.size(); ++r)
                refs.push_back({results[j].plans[r].objective, j, r});
            for (const Shortfall& t : results[j].type_shortfall)
                if (t.gib >= 0 && t.closerThan(out.type_shortfall[t.type]))
                    out.type_shortfall[t.type] = t;
        }
        std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
            if (a.objective != b.objective)
                return a.objective < b.objective;
            if (a.job != b.job)
                return a.job < b.job;
            return a.rank < b.rank;
        });
        out.candidates = static_cast<int>(refs.size());
        const ModelSpec& model = m_cost.model();
        // Each alternative is costed again, checked and given its idle devices: on a large
        // cluster a thousand of them take long. Under a time limit the list gets a budget of its
        // own (a tenth of the limit, at least a second) from here, so that a search that used
        // its time still returns its best plans so far, and a large list does not run past it.
        const auto mergeStart = std::chrono::steady_clock::now();
        const double budget = m_control.has_deadline ? std::max(1.0, 0.1 * m_options.time_limit_s) : 0.0;
        for (const Ref& ref : refs) {
            if (out.plans.size() >= want)
                break;
            if (!out.plans.empty() && budget > 0
                && std::chrono::duration<double>(std::chrono::steady_clock::now() - mergeStart).count() > budget) {
                out.cut = true;
                break;
            }
            Plan plan = results[ref.job].plans[ref.rank].plan;
            // Plans come fastest first: one that only adds recompute to a kept plan is slower and
            // no alternative (docs/search.md section 1).
            if (std::any_of(out.plans.begin(), out.plans.end(), [&](const RankedPlan& rp) { return samePlan(rp.plan, plan, true); }))
                continue;
            if (checkDeploy) {
                const auto problems = deploymentProblems(plan, model, m_cost.cluster(), m_cost.catalog(), target);
                if (!problems.empty()) {
                    if (out.deploy_problem.empty())
                        for (const DeploymentProblem& pr : problems)
                            out.deploy_problem += (out.deploy_problem.empty() ? "" : "; ") + pr.message + " [" + pr.rule + "]";
                    continue;
                }
            }
            const Target runsOn = target == Target::Any ? bestTarget(plan, model, m_cost.cluster(), m_cost.catalog()) : target;
            RankedPlan rp = ranked(std::move(plan), runsOn);
            out.plans.push_back(std::move(rp));
        }
        std::stable_sort(out.plans.begin(), out.plans.end(), [](const RankedPlan& a, const RankedPlan& b) {
            return a.prediction.iteration_time_s < b.prediction.iteration_time_s;
        });
        // With either target and SearchOptions::prefer_megatron_within, a best plan only
        // FlagScale runs gives way to a plan Megatron-LM runs that close to its time (docs/search.md
        // section 1), looked for further down the ranked list when the kept ones have none.
        const double within = m_options.prefer_megatron_within;
        if (target == Target::Any && within > 0 && !out.plans.empty() && out.plans.front().plan.target == Target::FlagScale) {
            const RankedPlan best = out.plans.front();   // a copy: the list may grow below
            const bool kept = std::any_of(out.plans.begin(), out.plans.end(), [&](const RankedPlan& rp) { return preferredOver(rp, best, within); });
            for (std::size_t i = 0; !kept && checkDeploy && i < refs.size() && refs[i].objective <= best.prediction.iteration_time_s * (1.0 + within); ++i) {
                Plan plan = results[refs[i].job].plans[refs[i].rank].plan;
                if (std::any_of(out.plans.begin(), out.plans.end(), [&](const RankedPlan& rp) { return samePlan(rp.plan, plan, true); })
                    || !deploymentProblems(plan, model, m_cost.cluster(), m_cost.catalog(), Target::Megatron).empty())
                    continue;
                RankedPlan rp = ranked(std::move(plan), Target::Megatron);
                if (!preferredOver(rp, best, within))
                    continue;
                out.plans.push_back(std::move(rp));
                if (out.plans.size() > want)
                    out.plans.erase(out.plans.end() - 2);   // the slowest kept gives way
                break;
            }
            preferMegatron(out.plans, within);
        }
        // Numbered in the order shown, after the sort: two plans whose objectives tie may
        // come out of the estimate a rounding apart, and #1 is the first row either way.
        for (std::size_t i = 0; i < out.plans.size(); ++i)
            out.plans[i].plan.name = name + (want > 1 ? " #" + std::to_string(i + 1) : std::string());
        return out;
    }

    // The device types, strongest (devices times speed) first.
    std::vector<int> typesByStrength() const
    {
        std::vector<int> order(static_cast<std::size_t>(m_space.numTypes()));
        for (int h = 0; h < m_space.numTypes(); ++h)
            order[static_cast<std::size_t>(h)] = h;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return m_space.types()[static_cast<std::size_t>(a)].total * m_speed.layers_per_s[static_cast<std::size_t>(a)]
                > m_space.types()[static_cast<std::size_t>(b)].total * m_speed.layers_per_s[static_cast<std::size_t>(b)];
        });
        return order;
    }

    // EP and ETP of the best plan on the strongest device type alone (Metis-style baseline:
    // MoE knobs from homogeneous profiling). reserved: the work counted in advance for the
    // first type's pass (runJobs).
    std::pair<int, int> homogeneousExpertKnobs(const std::vector<Target>& targets, double* reserved = nullptr)
    {
        // A plan on one type is no rival of the known (heterogeneous) plans: bounded by them,
        // this pass would find nothing and fall back to EP = ETP = 1.
        const double knownBest = std::exchange(m_knownBest, std::numeric_limits<double>::infinity());
        auto knownPlans = std::exchange(m_knownPlans, {});
        std::pair<int, int> knobs{1, 1};
        for (int h : typesByStrength()) {
            std::vector<Job> jobs;
            for (Job& j : searchJobs(targets, !m_options.exact, 0, 0)) {
                if (j.runs.front().type_mask != (1u << h))
                    continue;
                jobs.push_back(std::move(j));
            }
            if (m_options.exact)
                for (Job& j : searchJobs(targets, false, 0, 0)) {
                    for (RunConfig& c : j.runs)
                        c.type_mask = 1u << h;
                    jobs.push_back(std::move(j));
                }
            keepOnePlanExact(jobs);
            auto results = runJobs(jobs, false, reserved);
            reserved = nullptr;   // further types join the total as they start
            Merged m = merge(results, Target::Any, 1, "homogeneous");
            if (!m.plans.empty()) {
                knobs = {m.plans.front().plan.stages.front().ep, m.plans.front().plan.stages.front().etp};
                break;
            }
        }
        m_knownBest = knownBest;
        m_knownPlans = std::move(knownPlans);
        return knobs;
    }

private:
    void computeSpeeds()
    {
        // P_h: layers per second of one device of type h (tp = 1), from the cost model, so
        // that a profile's measured tables count (paper section 3.4, pruning 1). And what the
        // embedding (a first stage) and the output layer with its loss (a last stage) add to
        // that layer's forward and backward, in layers of the type: the load-balance window
        // counts them (docs/search.md section 4).
        const ModelSpec& model = m_cost.model();
        int layer = 0;
        for (int l = 0; l < model.num_layers; ++l)
            if (model.isMoeLayer(l) || !model.isMoe()) {
                layer = l;
                break;
            }
        for (const TypeInfo& t : m_space.types()) {
            StagePlan st;
            st.device_type = t.name;
            st.devices = {{t.node_ids.front(), 0, 1}};
            st.first_layer = layer;
            st.num_layers = 1;
            st.micro_batch_size = m_mbs0;
            auto time = [&](int stageIndex) {
                StageContext ctx;
                ctx.stage_index = stageIndex;
                ctx.num_stages = 3;
                ctx.num_microbatches = 1;
                ctx.notes = false;
                const StageEstimate e = m_cost.estimateStage(st, ctx);
                return e.t_fwd + e.t_bwd;
            };
            const double c = time(1);
            m_speed.layers_per_s.push_back(c > 0 ? 1.0 / c : 1.0);
            m_speed.first_extra.push_back(c > 0 ? std::max(0.0, time(0) / c - 1.0) : 0.0);
            m_speed.last_extra.push_back(c > 0 ? std::max(0.0, time(2) / c - 1.0) : 0.0);
        }
    }

    const CostModel& m_cost;
    const SearchOptions& m_options;
    RunControl& m_control;
    SearchSpace m_space;
    TypeSpeeds m_speed;
    int m_gbs = 1;
    int m_mbs0 = 1;
    int m_threads = 1;
    double m_offload = 0.0;   // Plan::optimizer_offload_fraction of the runs that follow
    double m_knownBest = std::numeric_limits<double>::infinity();
    std::vector<std::pair<double, std::string>> m_knownPlans;
    int m_keep = 0;
};

// The node orders the search numbers devices in (docs/search.md section 1). With nodes of
// one size per type, the cluster's order. Otherwise the groups of a type are whole slices of
// nodes taken in order and the idle devices are the last ones, so the order decides which
// plans exist: the search runs in two canonical orders, each type's nodes by size from the
// largest and from the smallest (stable, in the positions the type's nodes hold), so that
// the answer does not depend on how the cluster lists them.
std::vector<Cluster> nodeOrders(const Cluster& cluster)
{
    std::map<std::string, std::vector<std::size_t>> positions;
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i)
        positions[cluster.nodes[i].device_type].push_back(i);
    const bool unequal = std::any_of(positions.begin(), positions.end(), [&](const auto& kv) {
        return std::any_of(kv.second.begin(), kv.second.end(),
                           [&](std::size_t i) { return cluster.nodes[i].count != cluster.nodes[kv.second.front()].count; });
    });
    if (!unequal)
        return {cluster};
    std::vector<Cluster> out;
    for (const bool largestFirst : {true, false}) {
        Cluster c = cluster;
        for (const auto& [type, pos] : positions) {
            std::vector<Node> nodes;
            for (std::size_t i : pos)
                nodes.push_back(cluster.nodes[i]);
            std::stable_sort(nodes.begin(), nodes.end(), [&](const Node& a, const Node& b) {
                return largestFirst ? a.count > b.count : a.count < b.count;
            });
            for (std::size_t k = 0; k < pos.size(); ++k)
                c.nodes[pos[k]] = nodes[k];
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::string gib(double v)
{
    char buf[64];
    if (v > 0 && v < 0.005)   // short by a few MiB: not "0.00 GiB"
        std::snprintf(buf, sizeof buf, "%.1f MiB", v * 1024.0);
    else
        std::snprintf(buf, sizeof buf, v < 0.1 ? "%.2f GiB" : "%.1f GiB", v);
    return buf;
}

// Bytes as GiB, or TiB from 1024 GiB on.
std::string memoryText(double bytes)
{
    const double g = bytes / (1024.0 * 1024.0 * 1024.0);
    if (g < 1024)
        return gib(g);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f TiB", g / 1024);
    return buf;
}

std::string parametersText(double n)
{
    char buf[64];
    if (n >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2f trillion", n / 1e12);
    else if (n >= 1e9)
        std::snprintf(buf, sizeof buf, "%.1f billion", n / 1e9);
    else
        std::snprintf(buf, sizeof buf, "%.1f million", n / 1e6);
    return buf;
}

} // namespace

// Shares of the optimizer states in host memory that "if needed" tries, smallest first.
constexpr double kOffloadFractions[] = {0.25, 0.5, 1.0};

namespace {
SearchResult runSearchAt(const CostModel& cost, const SearchOptions& options, const std::atomic<bool>* cancel,
                         const ProgressCallback& progress);

// The `want` fastest distinct plans of a list (of two copies of a plan, the faster: less
// recompute), a plan Megatron-LM runs within `within` of the best first (preferMegatron), numbered "#1", "#2", ... when more than one is asked for (one asked for: its
// name without a number, which a longer list it was taken from had given it).
std::vector<RankedPlan> fastestDistinct(std::vector<RankedPlan> plans, std::size_t want, double within)
{
    std::stable_sort(plans.begin(), plans.end(), [](const RankedPlan& a, const RankedPlan& b) {
        return a.prediction.iteration_time_s < b.prediction.iteration_time_s;
    });
    preferMegatron(plans, within);
    std::vector<RankedPlan> kept;
    for (RankedPlan& rp : plans)
        if (kept.size() < want
            && std::none_of(kept.begin(), kept.end(), [&](const RankedPlan& k) { return samePlan(k.plan, rp.plan, true); }))
            kept.push_back(std::move(rp));
    for (std::size_t i = 0; i < kept.size(); ++i) {
        std::string& name = kept[i].plan.name;
        name = name.substr(0, name.rfind(" #")) + (want > 1 ? " #" + std::to_string(i + 1) : std::string());
    }
    return kept;
}

// Why a search stopped by a cancel or its time limit returns no plan.
std::string stoppedBeforeAPlan(bool cancelled)
{
    return cancelled ? "the search was cancelled before it found a plan" : "the time limit ran out before a plan was found";
}
}

std::vector<int> microBatchCandidates(int globalBatchSize, int own)
{
    std::vector<int> out;
    for (const int mbs : {1, 2, 4, 8, own})
        if (mbs > 0 && globalBatchSize > 0 && globalBatchSize % mbs == 0 && std::find(out.begin(), out.end(), mbs) == out.end())
            out.push_back(mbs);
    std::sort(out.begin(), out.end());
    return out;
}

namespace {
// The progress of one part of a search that runs several (micro-batch sizes, the interleaving
// pass's own search): the counts of the parts before it added, the best of all so far, and
// its fraction mapped to [from, from + span). A part that is not the last never reports 1.
ProgressCallback partProgress(const ProgressCallback& progress, const SearchProgress& before, double from, double span, bool last)
{
    if (!progress)
        return {};
    return [&progress, before, from, span, last](const SearchProgress& p) {
        SearchProgress all = p;
        all.states += before.states;
        all.pruned += before.pruned;
        if (before.best_time_s > 0 && (all.best_time_s <= 0 || before.best_time_s < all.best_time_s))
            all.best_time_s = before.best_time_s;
        all.fraction = std::min(from + span * p.fraction, last ? 1.0 : std::nextafter(1.0, 0.0));
        progress(all);
    };
}

// Plain plans the search keeps for the interleaving pass at least (runSearch).
constexpr int kInterleaveCandidates = 8;

// The search at one or several micro-batch sizes, plain 1F1B.
SearchResult runPasses(const CostModel& cost, const SearchOptions& options, const std::atomic<bool>* cancel,
                       const ProgressCallback& progress)
{
    if (options.micro_batch_sizes.size() <= 1) {
        SearchOptions one = options;
        if (!options.micro_batch_sizes.empty())
            one.micro_batch_size = options.micro_batch_sizes.front();
        one.micro_batch_sizes.clear();
        return runSearchAt(cost, one, cancel, progress);
    }
    // One pass per micro-batch size, in the order given, each with what is left of the time
    // limit; the progress bar runs over all of them. The merged result: the K fastest distinct
    // plans over the passes (a plan holds its micro-batch size, so plans of two passes are
    // never the same plan), each baseline the fastest of its kind, the counters summed.
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t passes = options.micro_batch_sizes.size();
    const bool limited = options.time_limit_s > 0 && options.time_limit_s <= 1e7;
    SearchResult merged;
    merged.algorithm = options.algorithm;
    merged.target = options.target;
    merged.searched_target = options.target;
    merged.optimizer_offload = options.optimizer_offload;
    std::vector<SearchResult> results;
    SearchProgress before;   // of the passes done
    for (std::size_t i = 0; i < passes; ++i) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (cancel && cancel->load()) {
            merged.cancelled = true;   // between two passes: the last pass's result does not say so
            break;
        }
        if (limited && elapsed >= options.time_limit_s) {
            merged.timed_out = true;
            break;
        }
        merged.micro_batch_sizes.push_back(options.micro_batch_sizes[i]);
        SearchOptions one = options;
        one.micro_batch_size = options.micro_batch_sizes[i];
        one.micro_batch_sizes.clear();
        if (limited)
            one.time_limit_s = options.time_limit_s - elapsed;
        // 1 only when the last pass ran to its end.
        results.push_back(runSearchAt(cost, one, cancel,
                                      partProgress(progress, before, static_cast<double>(i) / static_cast<double>(passes),
                                                   1.0 / static_cast<double>(passes), i + 1 == passes)));
        const SearchResult& r = results.back();
        before.states += r.states;
        before.pruned += r.pruned;
        if (!r.plans.empty() && (before.best_time_s <= 0 || r.plans.front().prediction.iteration_time_s < before.best_time_s))
            before.best_time_s = r.plans.front().prediction.iteration_time_s;
        if (r.cancelled || r.timed_out)
            break;
    }
    if (results.empty()) {
        merged.cancelled = cancel && cancel->load();
        merged.no_plan_reason = stoppedBeforeAPlan(merged.cancelled);
        merged.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return merged;
    }
    auto faster = [](const std::optional<RankedPlan>& a, const std::optional<RankedPlan>& b) {
        return a && (!b || a->prediction.iteration_time_s < b->prediction.iteration_time_s);
    };
    // The pass whose best plan is the fastest speaks for the search (its offload, its exact
    // check's replacement, its target); with no plan anywhere, the first pass (the smallest
    // micro-batch, given in ascending order: the least memory) says why.
    std::size_t lead = 0;
    std::vector<RankedPlan> all;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const SearchResult& r = results[i];
        all.insert(all.end(), r.plans.begin(), r.plans.end());
        if (!r.plans.empty()
            && (results[lead].plans.empty()
                || r.plans.front().prediction.iteration_time_s < results[lead].plans.front().prediction.iteration_time_s))
            lead = i;
        if (faster(r.uniform_baseline, merged.uniform_baseline))
            merged.uniform_baseline = r.uniform_baseline;
        if (faster(r.metis_baseline, merged.metis_baseline))
            merged.metis_baseline = r.metis_baseline;
        merged.states += r.states;
        merged.pruned += r.pruned;
        merged.main_time_s += r.main_time_s;
        merged.timed_out = merged.timed_out || r.timed_out;
        merged.cancelled = merged.cancelled || r.cancelled;
        merged.exact_fallback = merged.exact_fallback || r.exact_fallback;
        merged.exact_check_s += r.exact_check_s;
        merged.exact_check_work += r.exact_check_work;
        merged.exact_check_budget = std::max(merged.exact_check_budget, r.exact_check_budget);
        // The check is finished only where it finished in every pass that ran one; else what
        // stopped the first that did not.
        if (r.exact_check != ExactCheck::Off && (merged.exact_check == ExactCheck::Off || merged.exact_check == ExactCheck::Finished))
            merged.exact_check = r.exact_check;
    }
    merged.plans = fastestDistinct(std::move(all), static_cast<std::size_t>(std::max(1, options.top_k)), options.prefer_megatron_within);
    const SearchResult& first = results.front();
    const SearchResult& best = results[lead];
    merged.current = first.current;
    merged.current_error = first.current_error;
    merged.current_note = first.current_note;
    merged.devices_left_out = first.devices_left_out;
    merged.offload_needed = best.offload_needed;
    merged.pruned_best_s = best.pruned_best_s;
    if (!merged.plans.empty())
        merged.target = merged.plans.front().plan.target;
    else
        merged.no_plan_reason = merged.cancelled || merged.timed_out ? stoppedBeforeAPlan(merged.cancelled) : first.no_plan_reason;
    merged.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return merged;
}
} // namespace

SearchResult runSearch(const CostModel& cost, const SearchOptions& options, const std::atomic<bool>* cancel,
                       const ProgressCallback& progress)
{
    const auto t0 = std::chrono::steady_clock::now();
    const int maxVpp = std::clamp(options.max_vpp, 1, kMaxVpp);
    // FlagScale runs no virtual pipeline (DESIGN section 3), and the baselines stay plain
    // 1F1B, as the paper's are, also when a baseline is the algorithm asked for.
    const bool baseline = options.algorithm == Algorithm::Uniform || options.algorithm == Algorithm::MetisStyle;
    if (maxVpp < 2 || options.target == Target::FlagScale || baseline)
        return runPasses(cost, options, cancel, progress);
    // Megatron-LM's interleaved schedule for the plans found (docs/search.md section 10).
    // The search asked for runs first, as without the pass, and its plans are tried first.
    // The fastest plain plan is not always the fastest interleaved one (fewer stages, each
    // with more micro-batches, gain less from interleaving), so a search of its own for
    // target megatron then finds the kInterleaveCandidates fastest plans Megatron-LM can run
    // (no baselines, no exact check; Megatron-LM's jobs are the search's cheap ones,
    // docs/search.md section 5) within what is left of the time limit, and they are tried
    // too. The current configuration stays as it is. A cancel or the time limit in the pass
    // leaves the plans not yet tried plain (interleave_cut); the search asked for has run.
    const std::size_t want = static_cast<std::size_t>(std::max(1, options.top_k));
    const bool limited = options.time_limit_s > 0 && options.time_limit_s <= 1e7;
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    // Progress: the search asked for up to 90 %, the pass's own search the rest.
    SearchResult result = runPasses(cost, options, cancel, partProgress(progress, {}, 0.0, 0.9, false));
    result.max_vpp = maxVpp;
    if (result.plans.empty())
        return result;
    InterleaveCut stopped = InterleaveCut::No;
    const auto stop = [&] {
        if (stopped == InterleaveCut::No && cancel && cancel->load())
            stopped = InterleaveCut::Cancelled;
        if (stopped == InterleaveCut::No && limited && elapsed() >= options.time_limit_s)
            stopped = InterleaveCut::TimeLimit;
        return stopped != InterleaveCut::No;
    };
    std::vector<RankedPlan> candidates = std::move(result.plans);
    const auto tryEach = [&](std::size_t from) {
        for (std::size_t i = from; i < candidates.size() && !stop(); ++i) {
            candidates[i] = fastestInterleaving(cost, candidates[i], maxVpp, stop);
            if (stopped == InterleaveCut::No)
                ++result.interleave_tried;
        }
    };
    tryEach(0);
    // A search for target megatron that kept as many plans has found the candidates already.
    const bool more = !(options.target == Target::Megatron && options.top_k >= kInterleaveCandidates);
    if (more && !result.cancelled && !result.timed_out && !stop()) {
        SearchOptions megatron = options;
        megatron.target = Target::Megatron;
        megatron.top_k = std::max(options.top_k, kInterleaveCandidates);
        megatron.baselines = false;
        megatron.current.reset();
        megatron.exact_check_work = 0;
        // On the devices where the first search kept the optimizer there ("if needed"), and
        // under "fastest", whose shares' pruned passes without the exact check would bring
        // offloaded plans only: the first search's plans are the offloaded candidates.
        if ((options.optimizer_offload == OptimizerOffload::IfNeeded && !result.offload_needed)
            || options.optimizer_offload == OptimizerOffload::Fastest)
            megatron.optimizer_offload = OptimizerOffload::Never;
        if (limited)   // what is left, at least a millisecond (0 would mean no limit)
            megatron.time_limit_s = std::max(1e-3, options.time_limit_s - elapsed());
        SearchProgress before;
        before.states = result.states;
        before.pruned = result.pruned;
        before.best_time_s = candidates.front().prediction.iteration_time_s;
        const SearchResult found = runPasses(cost, megatron, cancel, partProgress(progress, before, 0.9, 0.1, false));
        result.states += found.states;
        result.pruned += found.pruned;
        if (found.cancelled)
            stopped = InterleaveCut::Cancelled;
        else if (found.timed_out)
            stopped = InterleaveCut::TimeLimit;
        const std::size_t first = candidates.size();
        candidates.insert(candidates.end(), found.plans.begin(), found.plans.end());
        tryEach(first);
    }
    // "If needed": a plan with the optimizer on the devices wins over an offloaded one, as in
    // the search (docs/search.md section 1).
    if (options.optimizer_offload == OptimizerOffload::IfNeeded
        && std::any_of(candidates.begin(), candidates.end(), [](const RankedPlan& rp) { return rp.plan.optimizer_offload_fraction == 0; })) {
        std::erase_if(candidates, [](const RankedPlan& rp) { return rp.plan.optimizer_offload_fraction > 0; });
        result.offload_needed = false;
    }
    result.interleave_cut = stopped;
    result.plans = fastestDistinct(std::move(candidates), want, options.prefer_megatron_within);
    result.list_cut = result.list_cut && result.plans.size() < want;
    if (options.target == Target::Any)
        result.target = result.plans.front().plan.target;
    result.time_s = elapsed();
    return result;
}

namespace {
SearchResult runSearchAt(const CostModel& cost, const SearchOptions& options, const std::atomic<bool>* cancel,
                         const ProgressCallback& progress)
{
    const auto t0 = std::chrono::steady_clock::now();
    SearchResult result;
    result.optimizer_offload = options.optimizer_offload;
    result.algorithm = options.algorithm;
    result.target = options.target;
    result.searched_target = options.target;

    RunControl control;
    control.cancel = cancel;
    control.progress = progress;
    control.work_total = 0;
    // A limit beyond 1e7 s (four months) means none; it would overflow the clock's nanoseconds.
    if (options.time_limit_s > 0 && options.time_limit_s <= 1e7) {
        control.has_deadline = true;
        control.deadline = t0 + std::chrono::microseconds(static_cast<long long>(options.time_limit_s * 1e6));
    }

    // Device types a requirement of the model rules out are left out of the search (node ids
    // stay those of the cluster the plans are costed on): the flex dispatcher runs only where
    // DeepEP does, FP8 training only on FP8 tensor cores.
    Cluster usable = cost.cluster();
    std::vector<std::string> leftOut;
    std::map<std::string, std::string> unusedWhy;   // device type -> the reason its idle nodes give
    auto leaveOut = [&](bool applies, const std::string& need, const DeviceRule& unavailable) {
        if (!applies)
            return;
        std::map<std::string, std::string> why;   // device type -> why it cannot run the model
        std::erase_if(usable.nodes, [&](const Node& n) {
            std::string w = unavailable(cost.catalog(), n.device_type);
            if (w.empty())
                return false;
            why[n.device_type] = std::move(w);
            return true;
        });
        std::string list;
        for (const auto& [type, w] : why) {
            list += (list.empty() ? "" : "; ") + type + ": " + w;
            unusedWhy[type] = "left out: " + need + " (" + w + ")";
        }
        if (!list.empty())
            leftOut.push_back(need + ", so the search leaves out " + list);
    };
    const bool flex = cost.model().usesFlexDispatcher();
    leaveOut(flex, "the flex dispatcher needs DeepEP", deepEpUnavailable);
    const Fp8Recipe recipe = cost.model().training.fp8_recipe;
    leaveOut(cost.model().training.fp8(),
             recipe == Fp8Recipe::Delayed ? std::string("FP8 training needs FP8 tensor cores")
                                          : std::string("FP8 training with the ") + toString(recipe) + " recipe needs its FP8 GEMMs",
             [recipe](const DeviceCatalog& c, const std::string& type) { return fp8Unavailable(c, type, recipe); });
    for (const std::string& l : leftOut)
        result.devices_left_out += (result.devices_left_out.empty() ? "" : "; and ") + l;
    // A search without a plan says what it left out, since the devices left out may be what
    // was missing, and what would bring them back when only the dispatcher keeps them out.
    const std::string dispatcherHint = flex && leftOut.size() == 1 && !cost.model().training.fp8()
        ? "; the alltoall or allgather dispatcher runs on every device"
        : "";
    if (usable.nodes.empty()) {
        result.no_plan_reason = result.devices_left_out + "; no device of the cluster is left" + dispatcherHint;
        return result;
    }
    // Every plan holds each parameter at least once with its weight and gradient, and the
    // optimizer state of the share not offloaded (CostModel::minimumModelStateBytes). When the
    // devices cannot hold even that, nothing fits: the answer comes at once and gives the
    // whole model's figure (the closest stage's shortfall would understate it). When only the
    // offloaded form can fit, "if needed" skips the passes with the optimizer on the devices.
    double deviceBytes = 0;
    long long deviceCount = 0;
    for (const Node& n : usable.nodes) {
        deviceBytes += n.count * cost.deviceCapacityBytes(n.device_type);
        deviceCount += n.count;
    }
    const bool offloadAllowed = options.optimizer_offload != OptimizerOffload::Never;
    const double needOnDevice = cost.minimumModelStateBytes(0.0), needOffloaded = cost.minimumModelStateBytes(1.0);
    const bool onDeviceCanFit = needOnDevice <= deviceBytes;
    if (deviceCount > 0 && (offloadAllowed ? needOffloaded : needOnDevice) > deviceBytes) {
        // The MTP depths' parameters are held too, but left out of the count a model is known
        // by (DeepSeek-V3's 671B): named beside it, so that the bytes add up.
        const ParameterCount count = countParameters(cost.model());
        const std::string params = parametersText(count.total) + " parameters"
            + (count.mtp > 0 ? " (and the " + parametersText(count.mtp) + " of its MTP layers)" : std::string());
        const std::string held = "the cluster's " + std::to_string(deviceCount) + " devices hold " + memoryText(deviceBytes)
            + (result.devices_left_out.empty() ? "" : " (those the search may use: " + result.devices_left_out + dispatcherHint + ")");
        if (offloadAllowed)
            result.no_plan_reason = "no plan fits in device memory: the model's " + params + " need at least "
                + memoryText(needOffloaded) + " on the devices for their weights and gradients even with the optimizer "
                  "offloaded to the host (6 bytes each), and " + held;
        else
            result.no_plan_reason = "no plan fits in device memory: the model's " + params + " need at least "
                + memoryText(needOnDevice) + " for their weights, gradients and optimizer states (18 bytes each; "
                + memoryText(needOffloaded) + " with the optimizer offloaded to the host), and " + held;
        result.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return result;
    }
    // The first order's searcher runs the baselines and merges; the others only add plans.
    const std::vector<Cluster> orders = nodeOrders(usable);
    std::vector<std::unique_ptr<Searcher>> searchers;
    for (const Cluster& c : orders)
        searchers.push_back(std::make_unique<Searcher>(cost, options, control, c));
    Searcher& s = *searchers.front();
    auto setOffloadFraction = [&](double f) {
        for (auto& x : searchers)
            x->setOffloadFraction(f);
    };
    auto setKnownBest = [&](double t) {
        for (auto& x : searchers)
            x->setKnownBest(t);
    };
    auto setKnownPlans = [&](const std::vector<RankedPlan>& plans) {
        std::vector<std::pair<double, std::string>> known;
        for (const RankedPlan& rp : plans)
            known.emplace_back(rp.prediction.iteration_time_s, alternativeKey(rp.plan));
        for (auto& x : searchers)
            x->setKnownPlans(known);
    };
    const std::size_t want = static_cast<std::size_t>(std::max(1, options.top_k));
    if (s.space().numTypes() == 0) {
        result.no_plan_reason = "the cluster has no devices";
        return result;
    }
    if (s.space().numTypes() > 16) {
        result.no_plan_reason = "more than 16 device types";
        return result;
    }
    if (s.batches().empty()) {
        result.no_plan_reason = "no data-parallel size times micro-batch " + std::to_string(s.mbs0())
            + " divides the global batch " + std::to_string(s.gbs()) + " (GBS % (MBS*DP) == 0)";
        return result;
    }

    std::vector<Target> targets;
    if (options.target == Target::Megatron || options.target == Target::Any)
        targets.push_back(Target::Megatron);
    if (options.target == Target::FlagScale || options.target == Target::Any)
        targets.push_back(Target::FlagScale);
    bool heuristics = !options.exact && options.algorithm != Algorithm::Exhaustive;

    std::optional<Searcher::Merged> main, uniform, metis;
    // Progress: the baselines' work counts from the search's start (docs/search.md section 5),
    // so that the bar does not reach 99 % with the baselines still to run.
    double uniformReserve = 0, homogeneousReserve = 0, metisReserve = 0;
    bool reserved = false;
    auto runUniform = [&]() {
        auto jobs = s.uniformJobs();
        auto res = s.runJobs(jobs, false, &uniformReserve);
        // A baseline must be runnable too, by either launcher; the uniform plan asked for
        // (--algorithm uniform) by the target asked for.
        return s.merge(res, options.algorithm == Algorithm::Uniform ? options.target : Target::Any, 1, "uniform baseline");
    };
    auto runMetis = [&]() {
        const auto [ep, etp] = s.homogeneousExpertKnobs(targets, &homogeneousReserve);
        auto jobs = s.searchJobs(targets, heuristics, ep, etp);
        if (options.algorithm != Algorithm::MetisStyle)   // the baseline keeps one plan
            keepOnePlanExact(jobs);
        auto res = s.runJobs(jobs, false, &metisReserve);
        return s.merge(res, options.target, options.algorithm == Algorithm::MetisStyle ? want : 1, "Metis-style baseline");
    };
    // The search itself, then the baselines it is compared with.
    auto runMain = [&]() {
        main.reset();
        switch (options.algorithm) {
        case Algorithm::HsDp:
        case Algorithm::Exhaustive: {
            const bool exhaustive = options.algorithm == Algorithm::Exhaustive;
            const char* name = exhaustive ? "exhaustive" : "HS-DP";
            auto jobs = s.searchJobs(targets, heuristics, 0, 0);
            if (!reserved && options.baselines) {
                // The Metis-style baseline first searches the strongest type alone (its
                // jobs among these), then runs these jobs with EP and ETP fixed, which weigh
                // a tenth (jobWork).
                reserved = true;
                uniformReserve = s.jobsWork(s.uniformJobs());
                const int strongest = s.typesByStrength().front();
                for (const Job& j : jobs)
                    if (j.runs.front().type_mask == (1u << strongest))
                        homogeneousReserve += s.jobWork(j);
                metisReserve = 0.1 * s.jobsWork(jobs);
                control.work_total += uniformReserve + homogeneousReserve + metisReserve;
            }
            auto res = s.runJobs(jobs, exhaustive);
            // Another node order adds the plans only it can express. When one plan is asked
            // for, it looks only for plans faster than the first order's best.
            const double bound = s.knownBest();
            for (std::size_t k = 1; k < searchers.size() && !control.stop(); ++k) {
                if (want == 1) {
                    const Searcher::Merged sofar = s.merge(res, options.target, 1, name);
                    if (!sofar.plans.empty())
                        searchers[k]->setKnownBest(std::min(bound, sofar.plans.front().prediction.iteration_time_s));
                }
                auto more = searchers[k]->runJobs(searchers[k]->searchJobs(targets, heuristics, 0, 0), exhaustive);
                searchers[k]->setKnownBest(bound);
                for (auto& r : more)
                    res.push_back(std::move(r));
            }
            main = s.merge(res, options.target, want, name);
            break;
        }
        case Algorithm::Uniform: main = runUniform(); break;
        case Algorithm::MetisStyle: main = runMetis(); break;
        }
    };
    auto runBaselines = [&]() {
        uniform.reset();
        metis.reset();
        if (!options.baselines || control.stop())
            return;
        if (options.algorithm != Algorithm::Uniform)
            uniform = runUniform();
        if (options.algorithm != Algorithm::MetisStyle && !control.stop())
            metis = runMetis();
    };
    // Of two results of the same kind, the one whose best plan is faster; of two without a
    // plan the later one (a larger offload share: its shortfall is the one to report).
    auto keepFaster = [&options](std::optional<Searcher::Merged>& best, std::optional<Searcher::Merged>& now) {
        if (!now)
            return;
        const bool better = !now->plans.empty()
            && (!best || best->plans.empty() || ranksBefore(now->plans.front(), best->plans.front(), options.prefer_megatron_within));
        if (better || !best || (best->plans.empty() && now->plans.empty()))
            best = std::move(now);
    };
    // The load-balance and communication prunings (paper section 3.4) assume a balanced plan
    // exists; when only unbalanced plans fit they can discard every feasible plan. A pass
    // that finds nothing with them runs again without them (as --exact) before the search
    // concludes that nothing fits (or offloads the optimizer to make something fit).
    bool exactRan = false;
    auto prunedLeftNothing = [&]() {
        return heuristics && options.algorithm == Algorithm::HsDp && main->plans.empty() && !control.stop();
    };
    auto runExact = [&]() {
        heuristics = false;
        runMain();
        heuristics = true;
        exactRan = true;
        if (!main->plans.empty())
            result.exact_fallback = true;
    };
    auto runMainComplete = [&]() {
        runMain();
        if (prunedLeftNothing())
            runExact();
    };

    // The K fastest distinct plans of two lists (of two copies of a plan, the faster: less
    // recompute), numbered as the merge numbers them.
    auto mergeFastest = [&](std::vector<RankedPlan>& plans, const std::vector<RankedPlan>& other) {
        plans.insert(plans.end(), other.begin(), other.end());
        plans = fastestDistinct(std::move(plans), want, options.prefer_megatron_within);
    };
    // A pass's result (`main`) joins the best of the passes before it: with `merge`, the K
    // fastest plans of both (their shortfall and problems are the pass's); else the pass
    // with the faster best plan.
    auto joinPass = [&](std::optional<Searcher::Merged>& best, bool merge) {
        if (merge && best && !best->plans.empty() && !main->plans.empty()) {
            mergeFastest(main->plans, best->plans);
            best = std::move(main);
        } else {
            keepFaster(best, main);
        }
    };
    // Passes over offload shares (fastest: the devices and each share; if needed, once nothing
    // fits on the devices: each share). One plan asked for: each pass looks only for plans
    // faster than the best so far, and the fastest wins. K plans: the K fastest distinct plans
    // over all passes (of any share), each pass looking only for plans faster than the K-th
    // so far. A search stopped before any pass ran leaves `main` as it was. Returns whether a
    // pass on the devices found a plan.
    const bool fastest = options.optimizer_offload == OptimizerOffload::Fastest;
    const std::vector<double> offloadShares(std::begin(kOffloadFractions), std::end(kOffloadFractions));
    std::vector<double> everyShare = offloadShares;
    if (onDeviceCanFit)
        everyShare.insert(everyShare.begin(), 0.0);
    auto sharePasses = [&](double bound, const std::vector<double>& shares) {
        std::optional<Searcher::Merged> bestMain;
        bool onDevice = false;
        for (const double fraction : shares) {
            if (control.stop())
                break;
            setOffloadFraction(fraction);
            const bool some = bestMain && !bestMain->plans.empty();
            setKnownBest(some ? std::min(bound, bestMain->plans.front().prediction.iteration_time_s) : bound);
            if (want > 1)
                setKnownPlans(some ? bestMain->plans : std::vector<RankedPlan>{});
            runMain();
            onDevice = onDevice || (fraction == 0.0 && !main->plans.empty());
            joinPass(bestMain, want > 1);
        }
        setKnownPlans({});
        if (bestMain)
            main = std::move(bestMain);
        else if (!main)
            main.emplace();   // stopped before any pass ran
        return onDevice;
    };
    // The search with the offload policy: nothing fits (if needed): search again with a
    // quarter, half and all of the optimizer states in host memory. A smaller share costs less
    // host time (docs/cost-model.md section 7.3) but frees less device memory, which may cost
    // recompute or a worse split, so the fastest plan over the shares wins, and with K plans
    // the alternatives are the K fastest over the shares (sharePasses). `bound` is a time no
    // returned plan may exceed (a known plan's).
    auto searchMain = [&](double bound) {
        result.offload_needed = false;
        setOffloadFraction(options.optimizer_offload == OptimizerOffload::Always ? 1.0 : 0.0);
        setKnownBest(bound);
        if (fastest) {
            result.offload_needed = !sharePasses(bound, everyShare);
            if (prunedLeftNothing()) {   // as runExact, over every share
                heuristics = false;
                exactRan = true;
                result.offload_needed = !sharePasses(bound, everyShare);
                heuristics = true;
                if (!main->plans.empty())
                    result.exact_fallback = true;
            }
            setKnownBest(std::numeric_limits<double>::infinity());
            return;
        }
        if (options.optimizer_offload != OptimizerOffload::IfNeeded) {
            runMainComplete();
            setKnownBest(std::numeric_limits<double>::infinity());
            return;
        }
        if (onDeviceCanFit)
            runMain();
        if (!onDeviceCanFit || (main->plans.empty() && main->closest().gib >= 0 && !control.stop())) {
            // Short of memory with the prunings: try the offload shares (with the prunings).
            result.offload_needed = true;
            auto offloadPasses = [&]() { sharePasses(bound, offloadShares); };
            offloadPasses();
            // Nothing with any share either: the prunings may have hidden every plan. Search
            // without them, first with the optimizer on the devices (a plan found there needs
            // no offload), then with the shares.
            if (prunedLeftNothing()) {
                heuristics = false;
                exactRan = true;
                if (onDeviceCanFit) {
                    setOffloadFraction(0.0);
                    setKnownBest(bound);
                    runMain();
                }
                if (onDeviceCanFit && !main->plans.empty())
                    result.offload_needed = false;
                else
                    offloadPasses();
                heuristics = true;
                if (!main->plans.empty())
                    result.exact_fallback = true;
            }
        } else if (prunedLeftNothing()) {
            runExact();   // nothing short of memory: the prunings left nothing
        }
        setKnownBest(std::numeric_limits<double>::infinity());
    };

    // An exhaustive search under a time limit may use all of it: its baselines, a fraction of
    // its work, run first (at the policy's first share), so that the comparison is there
    // even when the search is cut. Their plans do not bound the search.
    std::optional<Searcher::Merged> earlyUniform, earlyMetis;
    const bool baselinesFirst = options.algorithm == Algorithm::Exhaustive && control.has_deadline && options.baselines;
    if (baselinesFirst) {
        reserved = true;   // their work counts as it runs
        setOffloadFraction(options.optimizer_offload == OptimizerOffload::Always ? 1.0 : 0.0);
        runBaselines();
        result.baselines_cut = control.timed_out.load() || (cancel && cancel->load());
        earlyUniform = std::move(uniform);
        earlyMetis = std::move(metis);
    }
    searchMain(std::numeric_limits<double>::infinity());
    // The exact check (SearchOptions::exact_check_work): the search again without the
    // prunings, with the same offload policy, for at most the given work (partial plans the
    // expanded states extend, and a tenth for each stage option refused for memory: counted,
    // not timed, so that the answer does not depend on the machine or its load). When it
    // finishes, its plans are the exact best, as with `exact`; when it does not, the pruned
    // search's plans stand (docs/search.md section 7). It is not tried when the pruned search alone did more work
    // than that: without the prunings it does more and would not finish (mixed-1088), nor
    // when a time limit leaves less than twice the pruned search's time (it then stops
    // early enough to leave the baselines that time).
    //  - The pruned search found plans on the devices (or the policy fixes the share): the
    //    check looks, at that share, only for plans faster than its best (one plan), or
    //    faster than its K-th (K plans: the pruned plans start the check's incumbent, and
    //    the K fastest of both lists are kept).
    //  - Fastest: on the devices and each share, each only for plans faster than the best
    //    (K-th) so far.
    //  - It found plans only with offload ("if needed"): the prunings may have hidden plans
    //    on the devices, so the check looks there first, and a plan found there wins, as
    //    the policy says, even when slower; else it tries the shares again, each only for
    //    plans faster than the best (K-th) so far.
    const auto prunedEnd = std::chrono::steady_clock::now();
    const double prunedTime = std::chrono::duration<double>(prunedEnd - t0).count();
    const long long prunedWork10 = 10 * control.extended.load() + control.pruned_memory.load();
    const auto reserve = std::chrono::microseconds(static_cast<long long>(prunedTime * 1e6));
    const bool checkFits = !control.has_deadline || control.deadline - prunedEnd > 2 * reserve;
    const long long checkWork10 = 10 * std::clamp(options.exact_check_work, 0LL, (1LL << 58) / 10);
    const bool checkWanted = heuristics && !exactRan && options.algorithm == Algorithm::HsDp && checkWork10 > 0 && main
        && !main->plans.empty() && !control.stop();
    if (checkWanted) {
        result.exact_check_budget = checkWork10 / 10;
        result.exact_check = checkWork10 <= prunedWork10 ? ExactCheck::NotTriedWork
            : !checkFits                                 ? ExactCheck::NotTriedTime
                                                         : ExactCheck::Finished;   // so far
    }
    if (checkWanted && result.exact_check == ExactCheck::Finished) {
        const auto start = std::chrono::steady_clock::now();
        const RankedPlan prunedFront = main->plans.front();
        const double prunedBest = prunedFront.prediction.iteration_time_s;
        const double prunedShare = main->plans.front().plan.optimizer_offload_fraction;
        const bool prunedOffload = result.offload_needed;
        std::optional<Searcher::Merged> pruned = std::move(main);
        const double inf = std::numeric_limits<double>::infinity();
        long long checkWork = 0;
        // One pass of the check keeping k plans per run, from the plans known so far
        // (`startPlans`, the fastest first), within its own work budget and the check's
        // deadline. `onDeviceFirst`: where the pruned search offloaded ("if needed"), look on
        // the devices first (a pass before it that found nothing there settles it).
        struct Pass {
            std::optional<Searcher::Merged> main;
            bool onDevice = false;   // found plans on the devices where the pruned search offloaded
            bool ranOut = false;     // past its work or the deadline, or cancelled
        };
        auto checkPass = [&](std::size_t k, const std::vector<RankedPlan>& startPlans, bool onDeviceFirst) {
            Pass out;
            control.pass_work = 0;
            control.pass_work_limit = checkWork10;
            if (control.has_deadline) {
                control.pass_deadline = control.deadline - reserve;
                control.has_pass_deadline = true;
            }
            for (auto& x : searchers)
                x->setKeep(static_cast<int>(k));
            heuristics = false;
            if (onDeviceFirst && prunedOffload && onDeviceCanFit && !fastest) {
                setOffloadFraction(0.0);
                setKnownBest(inf);
                runMain();
                out.onDevice = !main->plans.empty();
            }
            if (!out.onDevice) {
                // K plans, at one share or over the shares: the K fastest so far of the
                // known plans and the check's start each pass's incumbent, and are its answer.
                const bool seeded = k > 1;
                std::vector<RankedPlan> known = startPlans;
                const double startBest = startPlans.front().prediction.iteration_time_s;
                std::optional<Searcher::Merged> best;
                for (const double fraction : fastest ? everyShare : prunedOffload ? offloadShares : std::vector<double>{prunedShare}) {
                    if (control.stopAfter(0))
                        break;
                    setOffloadFraction(fraction);
                    setKnownBest(seeded ? inf
                                        : best && !best->plans.empty() ? std::min(startBest, best->plans.front().prediction.iteration_time_s)
                                                                       : startBest);
                    if (seeded)
                        setKnownPlans(known);
                    runMain();
                    if (seeded && !main->plans.empty()) {
                        known.insert(known.end(), main->plans.begin(), main->plans.end());
                        known = fastestDistinct(std::move(known), k, options.prefer_megatron_within);
                    }
                    joinPass(best, seeded);
                }
                main = std::move(best);
                if (seeded && main && !main->plans.empty())
                    main->plans = std::move(known);   // the K fastest of both lists
            }
            heuristics = true;
            setKnownBest(inf);
            setKnownPlans({});
            for (auto& x : searchers)
                x->setKeep(0);
            // Past its work or its deadline (both stay past once passed), or cancelled.
            out.ranOut = control.stopAfter(0) || !main;
            checkWork += control.pass_work.load() / 10;
            control.has_pass_deadline = false;
            control.pass_work_limit = 0;
            out.main = std::move(main);
            return out;
        };
        // With K plans the check first looks for the best plan alone (bounded by the pruned
        // best, so short), then for the K best from there: where the second pass stops, plan
        // #1 is still the exact best (docs/search.md section 7).
        std::optional<Pass> first;
        std::vector<RankedPlan> startPlans = pruned->plans;
        if (want > 1) {
            first = checkPass(1, pruned->plans, true);
            // A finished pass for one plan knows its best alone: the other plans it kept are
            // the best of jobs that the shared incumbent did not happen to prune, which
            // differ from run to run with the order the threads finish (section 5).
            if (!first->ranOut && first->main && first->main->plans.size() > 1)
                first->main->plans.erase(first->main->plans.begin() + 1, first->main->plans.end());
            if (!first->ranOut && !first->onDevice && first->main && !first->main->plans.empty()) {
                startPlans.insert(startPlans.end(), first->main->plans.begin(), first->main->plans.end());
                startPlans = fastestDistinct(std::move(startPlans), want, options.prefer_megatron_within);
            }
        }
        Pass pass = first && first->ranOut ? std::move(*first) : checkPass(want, startPlans, !first || first->onDevice);
        result.exact_check_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        result.exact_check_work = checkWork;
        // The plans a finished pass leaves: its own when it found some on the devices, or
        // faster ones, or when they are the K fastest of its and the pruned list (`merged`);
        // else the pruned search's.
        auto conclude = [&](Pass& p, bool merged) {
            main = std::move(p.main);
            // Faster, or a Megatron-LM plan that comes before the pruned best (preferredOver).
            const bool faster = !main->plans.empty() && ranksBefore(main->plans.front(), prunedFront, options.prefer_megatron_within);
            if (main->plans.empty() || (!p.onDevice && !faster && !merged)) {
                main = std::move(pruned);   // nothing faster than the pruned search's best
            } else if (p.onDevice || faster) {
                result.pruned_best_s = prunedBest;
                if (p.onDevice)
                    result.offload_needed = false;
            }
        };
        if (pass.ranOut) {
            result.exact_check = cancel && cancel->load()                          ? ExactCheck::Cancelled
                : control.pass_work.load() > checkWork10 || !control.has_deadline ? ExactCheck::WorkBudget
                                                                                  : ExactCheck::TimeLimit;
            if (first && !first->ranOut) {
                // The best plan is known: it leads the pruned search's alternatives (or, found
                // on the devices where they offload, stands alone).
                result.exact_check_best = true;
                if (!first->onDevice)
                    first->main->plans = startPlans;
                conclude(*first, !first->onDevice);
            } else {
                main = std::move(pruned);
            }
        } else {
            conclude(pass, want > 1 && !pass.onDevice);
        }
        setOffloadFraction(result.offload_needed || fastest ? main->plans.front().plan.optimizer_offload_fraction
                                                 : options.optimizer_offload == OptimizerOffload::Always ? 1.0 : 0.0);
    }
    result.main_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Each baseline is the fastest over the shares the search tried.
    if (result.offload_needed || fastest) {
        std::optional<Searcher::Merged> bestUniform, bestMetis;
        for (const double fraction : fastest ? everyShare : offloadShares) {
            if (control.stop())
                break;
            setOffloadFraction(fraction);
            runBaselines();
            keepFaster(bestUniform, uniform);
            keepFaster(bestMetis, metis);
        }
        uniform = std::move(bestUniform);
        metis = std::move(bestMetis);
    } else {
        runBaselines();
    }
    if (!baselinesFirst)
        result.baselines_cut = options.baselines && (control.timed_out.load() || (cancel && cancel->load()));
    keepFaster(uniform, earlyUniform);
    keepFaster(metis, earlyMetis);

    result.plans = main->plans;
    result.list_cut = main->cut;
    if (uniform && !uniform->plans.empty())
        result.uniform_baseline = uniform->plans.front();
    if (metis && !metis->plans.empty() && options.algorithm != Algorithm::MetisStyle)
        result.metis_baseline = metis->plans.front();
    if (options.algorithm == Algorithm::Uniform && !result.plans.empty())
        result.uniform_baseline = result.plans.front();
    if (options.algorithm == Algorithm::MetisStyle && !result.plans.empty())
        result.metis_baseline = result.plans.front();
    // The nodes left out (for DeepEP, for FP8) are idle in every plan, as the nodes a plan
    // leaves idle.
    if (!unusedWhy.empty()) {
        auto addLeftOut = [&](RankedPlan& rp) {
            for (const Node& n : cost.cluster().nodes)
                if (const auto w = unusedWhy.find(n.device_type); w != unusedWhy.end() && n.count > 0)
                    rp.plan.unused.push_back({n.id, n.count, w->second});
        };
        for (RankedPlan& rp : result.plans)
            addLeftOut(rp);
        for (std::optional<RankedPlan>* b : {&result.uniform_baseline, &result.metis_baseline})
            if (*b)
                addLeftOut(**b);
    }
    if (options.current) {
        RankedPlan cur;
        cur.plan = *options.current;
        if (cur.plan.name.empty())
            cur.plan.name = "current";
        std::vector<std::string> notes;
        // Compared alike: the current configuration runs the search's global batch (a --gbs,
        // or a model edited since the script was read) when its DP x micro-batch divides it.
        // The interleaved schedule also needs the micro-batches a multiple of PP.
        const int gbs = options.global_batch_size.value_or(cost.model().training.global_batch_size);
        const int step = cur.plan.stages.empty() ? 0 : cur.plan.stages.front().dp * cur.plan.stages.front().micro_batch_size;
        if (gbs != cur.plan.global_batch_size && step > 0) {
            const std::string own = std::to_string(cur.plan.global_batch_size);
            const bool divides = gbs % step == 0 && (cur.plan.vpp <= 1 || (gbs / step) % cur.plan.pp() == 0);
            if (divides) {
                notes.push_back("the current configuration is costed at the plans' global batch, " + std::to_string(gbs)
                                + " sequences (it was set up for " + own + ")");
                cur.plan.global_batch_size = gbs;
            } else {
                notes.push_back("the current configuration runs its global batch of " + own + " sequences, the plans "
                                + std::to_string(gbs) + " (it cannot run theirs: "
                                + (gbs % step != 0 ? "no multiple of its DP x micro-batch, " + std::to_string(step)
                                                   : std::to_string(gbs / step) + " micro-batches, no multiple of its PP "
                                                         + std::to_string(cur.plan.pp()) + " as its interleaved schedule needs")
                                + "): compared by time per sequence");
            }
        }
        try {
            cur.prediction = cost.estimate(cur.plan);
            // A Megatron-LM script's stages that Megatron-LM cannot launch on this cluster
            // (two collective libraries, say) run under FlagScale, as `hapmoe estimate` says;
            // where neither can, it is costed all the same, and said.
            const LauncherChoice choice = chooseLauncher(cur.plan, cost.model(), cost.cluster(), cost.catalog());
            cur.plan.target = choice.target;
            if (const std::string why = choice.unlaunchable(); !why.empty())
                notes.push_back("the current configuration on this cluster: " + why);
            result.current = std::move(cur);
        } catch (const InputError& e) {
            result.current_error = (e.where().empty() ? std::string() : e.where() + ": ") + e.detail();
        }
        result.current_note = join(notes, "; ");
    }
    if (!result.plans.empty())
        result.target = result.plans.front().plan.target;

    result.states = control.states.load();
    result.pruned.load_balance = control.pruned_load.load();
    result.pruned.memory = control.pruned_memory.load();
    result.pruned.communication = control.pruned_comm.load();
    result.timed_out = control.timed_out.load();
    result.cancelled = cancel && cancel->load();
    if (result.plans.empty()) {
        std::string reason;
        if (result.cancelled || result.timed_out)
            reason = stoppedBeforeAPlan(result.cancelled);
        else if (!main->deploy_problem.empty())
            reason = "no plan passes the " + std::string(toString(options.target)) + " rules: " + main->deploy_problem;
        else if (const Shortfall closest = main->closest(); closest.gib >= 0) {
            const bool offloaded = options.optimizer_offload != OptimizerOffload::Never;
            const bool hostChecked = offloaded
                && std::any_of(cost.cluster().nodes.begin(), cost.cluster().nodes.end(),
                               [](const Node& n) { return n.host_memory_gib > 0; });
            reason = std::string("no plan fits in ") + (hostChecked ? "device and host memory" : "device memory")
                + ": the closest stage (" + closest.where + ") is short by " + gib(closest.gib)
                + " even with full recompute" + (offloaded ? std::string(" and the optimizer offloaded to the host") : std::string());
            // The closest of each other device type: a type a few MiB short may not be what
            // keeps a plan out (another type's nodes short of host memory, say).
            std::string others;
            for (const auto& [type, t] : main->type_shortfall)
                if (t.gib >= 0 && t.where != closest.where)
                    others += (others.empty() ? "" : ", ") + ("(" + t.where + ") by " + gib(t.gib));
            if (!others.empty())
                reason += "; the closest of each other device type is short " + others;
            // The whole model's optimizer on the host against the host memory the nodes give,
            // per device type: a pipeline needs all its layers' states somewhere, which no
            // stage's shortfall shows.
            if (hostChecked) {
                std::map<std::string, double> hostOf;
                for (const Node& n : usable.nodes)
                    hostOf[cost.catalog().canonicalName(n.device_type)] += n.host_memory_gib * 1024.0 * 1024.0 * 1024.0;
                std::string held;
                for (const auto& [type, bytes] : hostOf)
                    held += (held.empty() ? "" : ", ") + memoryText(bytes) + " on the " + type + " nodes";
                reason += "; the optimizer states of the whole model take " + memoryText(needOnDevice - needOffloaded)
                    + " in host memory when all offloaded, and the cluster gives " + held;
            }
        }
        else
            reason = "no plan satisfies the structure rules of the target (group sizes, TP/EP divisibility, "
                     "micro-batch layout)";
        if (!result.devices_left_out.empty() && !result.cancelled && !result.timed_out)
            reason += "; " + result.devices_left_out + dispatcherHint;
        result.no_plan_reason = reason;
    }
    // 1 only for a search that ran to its end: a cancelled or timed-out one reports its last
    // counts at the fraction it had reached. The best is the returned plan's: the passes'
    // least can be a plan the policy did not keep (an offloaded one, where the exact check
    // found plans on the devices) or a baseline's.
    if (!result.plans.empty())
        control.best.store(result.plans.front().prediction.iteration_time_s);
    control.report(true, !(result.cancelled || result.timed_out));
    result.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}
} // namespace

double secondsPerSequence(const RankedPlan& plan)
{
    return plan.prediction.iteration_time_s / std::max(1, plan.plan.global_batch_size);
}

std::string currentConfigurationNote(const SearchResult& result)
{
    if (result.plans.empty() || !result.current || !result.current->prediction.feasible)
        return {};
    const double current = secondsPerSequence(*result.current), best = secondsPerSequence(result.plans.front());
    const bool ownBatch = result.current->plan.global_batch_size != result.plans.front().plan.global_batch_size;
    const std::string perSequence = ownBatch ? " per sequence, at its own global batch of "
            + std::to_string(result.current->plan.global_batch_size) : std::string();
    if (std::abs(current - best) <= 1e-9 * best)
        return "the best plan found takes the time the current configuration takes" + perSequence;
    if (current > best)
        return {};
    std::string note = "the current configuration is faster than every plan found" + perSequence + ": keep it";
    const int vpp = result.current->plan.vpp;
    if (vpp > result.max_vpp)
        note += " (its interleaved schedule, VPP " + std::to_string(vpp) + ", is "
            + (result.max_vpp > 1 ? "deeper than the search tried, VPP " + std::to_string(result.max_vpp) : std::string("one the search did not try"))
            + ": set the maximum VPP to " + std::to_string(vpp) + " to try it)";
    return note;
}

} // namespace hapmoe
