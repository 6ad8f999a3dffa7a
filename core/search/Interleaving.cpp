#include "search/Interleaving.h"

#include "plan/Deployability.h"
#include "search/StageEvaluator.h"

#include <algorithm>

namespace hapmoe {

namespace {

// The stage's recompute under Megatron-LM's setting `level` (recomputeLevels) with these
// chunks: block recompute of n layers covers the first n of every chunk. Selective recompute
// repeats `light` (level 1) or `wide` (kSelectiveWide).
void setRecompute(StagePlan& st, int level, const std::vector<int>& chunks, unsigned light, unsigned wide)
{
    st.recompute = recomputeOfLevel(level);
    st.recompute_layers = isFullOfKLevel(level) ? blockRecomputeLayersOfStage(chunks, level - 1) : 0;
    if (level == 1)
        st.recompute_modules = light;
    else if (level == kSelectiveWide)
        st.recompute_modules = wide;
}

} // namespace

RankedPlan fastestInterleaving(const CostModel& cost, const RankedPlan& plain, int maxVpp, const std::function<bool()>& stop)
{
    const Plan& p = plain.plan;
    RankedPlan best = plain;
    const int P = p.pp(), M = p.numMicrobatches();
    // The interleaved schedule runs PP micro-batches a group (deploymentProblems says so too;
    // checked here first, before any plan is built).
    if (maxVpp < 2 || p.vpp != 1 || P < 2 || M < P || M % P != 0 || !plain.prediction.feasible)
        return best;
    int largest = 0;
    std::vector<std::string> types;
    for (const StagePlan& st : p.stages) {
        largest = std::max(largest, st.num_layers);
        types.push_back(st.device_type);
    }
    // The search's two selective sets for these types (StageEvaluator).
    const unsigned light = selectiveRecomputeModulesOfTypes(cost, types);
    const unsigned wide = wideSelectiveRecomputeModules(cost);
    const bool lightSaves = selectiveRecomputeSavesMemory(cost, light);
    const int top = std::min({maxVpp, largest, kMaxVpp});
    for (int v = 2; v <= top; ++v) {
        Plan q = p;
        q.vpp = v;
        q.target = Target::Megatron;
        std::vector<std::vector<int>> chunks;   // per stage
        int largestChunk = 0;
        for (StagePlan& st : q.stages) {
            st.chunk_layers.clear();
            chunks.push_back(chunkLayers(st.num_layers, v));
            largestChunk = std::max(largestChunk, chunks.back().front());   // the earlier chunks are the larger
        }
        // The least recompute that fits is the fastest form of this pipeline: the levels
        // from none upwards, the first under which every stage fits; the wide selective
        // level, which is not ordered against full recompute of k layers, is tried beside it.
        for (const int level : recomputeLevels(largestChunk, lightSaves, wide != 0)) {
            if (stop && stop())
                return best;
            for (std::size_t s = 0; s < q.stages.size(); ++s)
                setRecompute(q.stages[s], level, chunks[s], light, wide);
            if (!isDeployable(q, cost.model(), cost.cluster(), cost.catalog(), Target::Megatron))
                continue;
            Prediction pred = cost.estimate(q);
            if (!pred.feasible)
                continue;
            if (pred.iteration_time_s < best.prediction.iteration_time_s)
                best = RankedPlan{q, std::move(pred), plain.prediction.iteration_time_s};
            if (level != kSelectiveWide)
                break;
        }
    }
    return best;
}

} // namespace hapmoe
