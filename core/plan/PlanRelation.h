#pragma once
// How two plans of a search's alternatives relate, for telling the user what sets them apart.

#include "plan/Plan.h"

#include <vector>

namespace hapmoe {

// Whether b holds a's stages in another pipeline order: the same global batch, VPP and offload
// share, and the same stages (device type, layers, TP, CP, DP, EP, ETP, micro-batch size and
// recompute) counted as a multiset, in a different order. Such alternatives run the same work
// per stage; only the links between neighbouring stages and the placement differ, so their
// times differ little (a DP 2 and a TP 2 stage of one type swapped, say).
bool sameStagesReordered(const Plan& a, const Plan& b);

// For each plan of `plans` (best first), the index of the first earlier plan whose stages it
// holds in another order (sameStagesReordered), or -1.
std::vector<int> reorderedFrom(const std::vector<const Plan*>& plans);

} // namespace hapmoe
