#include "search/Exhaustive.h"

#include <algorithm>
#include <functional>

namespace hapmoe {

Exhaustive::Exhaustive(const CostModel& cost, const SearchSpace& space, StageEvaluator& evaluator)
    : m_cost(cost), m_space(space), m_eval(evaluator)
{
}

RunResult Exhaustive::run(const RunConfig& config, RunControl& control)
{
    RunResult result;
    const int N = m_space.model().num_layers;
    const int M = config.microbatches;
    RunConfig cfg = config;
    cfg.load_balance = false;   // the oracle knows no heuristic
    cfg.comm_prune = false;
    const Candidates cand(m_space, cfg, TypeSpeeds::uniform(m_space.numTypes()));
    const unsigned modules = m_eval.selectiveModulesFor(config.type_mask);   // selective recompute's
    m_eval.setTarget(config.target);
    const std::size_t keep = static_cast<std::size_t>(std::max(1, config.keep));

    // Stages from the last one backwards; stack[i] is the stage i places from the end.
    std::vector<StagePlan> stack;
    long long visited = 0, memPruned = 0;
    bool stopped = false;

    auto leastLevel = [&](const Choice& c, const Partial& p, double* shortfall, bool* onHost) {
        StagePlan next;
        if (p.k > 0)
            next = stack.back();
        StageContext ctx;
        ctx.stage_index = (p.j - c.n == 0) ? 0 : 1;
        ctx.num_stages = ctx.stage_index + p.k + 1;
        ctx.num_microbatches = M;
        ctx.distributed_optimizer = m_eval.distributedOptimizer();
        ctx.optimizer_offload_fraction = m_eval.offloadFraction();
        ctx.target = config.target;
        ctx.next = p.k > 0 ? &next : nullptr;
        std::vector<int> levels;
        if (config.fixed_level >= 0) {
            levels.push_back(config.fixed_level);
        } else {
            levels = {0};
            if (config.perStageSelective())
                levels.push_back(1);
            for (int k = 1; k < c.n; ++k)
                levels.push_back(k + 1);
            levels.push_back(kFullAll);
        }
        for (int lv : levels) {
            const StagePlan st = m_eval.makeStage(c.shape, p.j - c.n, c.n, lv, modules);
            const StageEstimate e = m_cost.estimateStage(st, ctx);
            if (e.memory.fits())
                return lv;
            *shortfall = e.memory.shortfall() / (1024.0 * 1024.0 * 1024.0);
            *onHost = e.memory.shortOnHost();
        }
        return -2;
    };

    std::function<void(const Partial&)> dfs = [&](const Partial& p) {
        if (stopped)
            return;
        ++visited;
        if ((visited & 255) == 0) {
            control.states += 256;
            control.pruned_memory += memPruned;
            memPruned = 0;
            if (control.stop()) {
                stopped = true;
                return;
            }
            control.report();
        }
        long long dummy = 0;
        cand.forEach(
            p,
            [&](const Choice& c) {
                if (stopped)
                    return;
                double shortfall = 0;
                bool onHost = false;
                const int lv = leastLevel(c, p, &shortfall, &onHost);
                if (lv == -2) {
                    ++memPruned;
                    ++result.memory_pruned;
                    noteShortfall(result, m_space, c, shortfall, onHost);
                    return;
                }
                stack.push_back(m_eval.makeStage(c.shape, p.j - c.n, c.n, lv, modules));
                if (c.n == p.j) {
                    if (cand.acceptFirst(p, c)) {
                        RunPlan rp;
                        Plan& plan = rp.plan;
                        plan.target = config.target;
                        plan.global_batch_size = config.batch * M;
                        plan.distributed_optimizer = m_eval.distributedOptimizer();
                        plan.optimizer_offload_fraction = m_eval.offloadFraction();
                        plan.stages.assign(stack.rbegin(), stack.rend());
                        const Prediction pred = m_cost.estimate(plan);
                        // One copy of each alternative (alternativeKey): the same stages with
                        // more recompute would take a place of the next plan.
                        rp.objective = pred.iteration_time_s;
                        if (pred.feasible
                            && (result.plans.size() < keep || pred.iteration_time_s < result.plans.back().objective)
                            && cand.runnable(plan)
                            && keepDistinct(result.plans, std::move(rp), keep, [](const RunPlan& x) { return x.objective; },
                                            [](const RunPlan& x) { return alternativeKey(x.plan); }))
                            control.offerBest(result.plans.front().objective);
                    }
                } else {
                    dfs(cand.after(p, c));
                }
                stack.pop_back();
            },
            dummy);
    };
    Partial root;
    root.j = N;
    dfs(root);
    control.states += visited & 255;
    control.pruned_memory += memPruned;
    result.complete = !stopped;
    return result;
}

} // namespace hapmoe
