#pragma once
// Megatron-LM's interleaved 1F1B schedule for the plans a search found (docs/search.md
// section 10). Internal to core/search.

#include "search/Search.h"

#include <functional>

namespace hapmoe {

// The fastest form of a plain-1F1B plan with 1 to maxVpp virtual stages per pipeline rank.
// Each VPP v from 2 to min(maxVpp, the largest stage's layers) spreads every stage's layers
// over v chunks as Megatron-LM does (chunkLayers: as evenly as possible) and takes the least
// of Megatron-LM's one recompute setting for all stages (recomputeLevels, block recompute
// counted per chunk) under which every stage fits. A form Megatron-LM cannot run
// (deploymentProblems for target megatron: a plan with PP 1, micro-batches not a multiple
// of PP, stages of unlike knobs) is not tried. Returns `plain` when no interleaved form is
// faster; else the fastest, with target megatron and plain_time_s the plain plan's time.
// `stop` is asked before every estimate; true ends the walk with the fastest form so far.
RankedPlan fastestInterleaving(const CostModel& cost, const RankedPlan& plain, int maxVpp,
                               const std::function<bool()>& stop = {});

} // namespace hapmoe
