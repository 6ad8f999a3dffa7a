#pragma once
// HS-DP (paper section 3.4, algorithm 1 of appendix C) with the exact 1F1B objective.
// DP over (layers left, stages placed, types used, the type being filled and its free
// devices, the stage after): each state keeps the Pareto set of (sum c, max c, latest sync
// end, max step) of the stages placed, with tied embeddings also the last stage's sync end
// (both counted from the last backward of the earliest stage placed, and lowered by the
// backward of each stage placed before it: the drain), which is exact because T_iter = sum c
// + (M - 1) max c + max(latest sync end, max(last sync end, first sync) + the tied
// all-reduce, known when the pipeline closes) + max step only grows when any of them grows; an entry is also dropped where a smaller sum pays for another's larger maxima
// (docs/search.md section 3). With exact alternatives an entry goes only when
// as many others dominate it as plans are kept, so the K best are exact too (section 5).
// Internal to core/search.

#include "search/Candidates.h"

#include <memory>

namespace hapmoe {

class HsDp {
public:
    HsDp(const SearchSpace& space, StageEvaluator& evaluator, const TypeSpeeds& speed);
    ~HsDp();
    HsDp(const HsDp&) = delete;
    HsDp& operator=(const HsDp&) = delete;
    // progress: where the run reports the share of its layers placed (JobProgress).
    RunResult run(const RunConfig& config, RunControl& control, const JobProgress& progress = {});

private:
    const SearchSpace& m_space;
    StageEvaluator& m_eval;
    const TypeSpeeds& m_speed;
    // The states and entries of the last run, kept for the next: a worker runs many jobs,
    // and memory it has touched once costs no page faults the next time.
    struct Scratch;
    std::unique_ptr<Scratch> m_scratch;
};

// Names the devices a plan leaves idle (per node), with the reason.
void fillUnused(Plan& plan, const SearchSpace& space, const std::string& reason);

} // namespace hapmoe
