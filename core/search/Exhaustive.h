#pragma once
// The oracle: enumerates every pipeline of the same space as HS-DP (Candidates), gives
// each stage the least recompute that fits by trying the levels one by one, and scores
// every complete plan with CostModel::estimate. Exponential; for small cases and tests.
// Internal to core/search.

#include "search/Candidates.h"

namespace hapmoe {

class Exhaustive {
public:
    Exhaustive(const CostModel& cost, const SearchSpace& space, StageEvaluator& evaluator);
    RunResult run(const RunConfig& config, RunControl& control);

private:
    const CostModel& m_cost;
    const SearchSpace& m_space;
    StageEvaluator& m_eval;
};

} // namespace hapmoe
