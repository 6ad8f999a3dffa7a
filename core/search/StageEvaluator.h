#pragma once
// Stage costs for the search, through CostModel::estimateStage, cached. A stage is
// described by what the cost model reads (docs/search.md section 3): its device type and
// group, its knobs and micro-batch size, its layer count and how many of them are MoE
// layers, whether it holds the embedding (first) or the output layer (last), how many
// micro-batches it keeps in flight (min(PP - i, M)), the recompute choice, and the next
// stage (the p2p send). Internal to core/search; one instance per worker thread.

#include "cost/CostModel.h"
#include "search/SearchSpace.h"
#include "util/FlatMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hapmoe {

// Where a stage is in the type's device positions, plus its knobs.
struct StageShape {
    int type = 0;
    int start = 0;
    int d = 0;
    int knob = 0;      // index into SearchSpace::knobs(type, d)
    int mbs = 1;
};

struct StageQuery {
    StageShape shape;
    int first_layer = 0;
    int num_layers = 1;
    int from_end = 0;           // stages after this one (0 = last stage)
    int microbatches = 1;
    const StageShape* next = nullptr;
    // Recompute: -1 = the least that fits; else a fixed level (see recomputeLevels).
    int fixed_level = -1;
    bool ignore_memory = false;   // with a fixed level: the time even when it does not fit
    // The least that fits without selective recompute: FlagScale's per-stage lists switch only
    // full recompute, selective is one setting for every stage (RunConfig::perStageSelective).
    bool no_selective = false;
    // What selective recompute repeats in this run (selectiveRecomputeModules of its types);
    // 0: the evaluator's, for every type of the cluster.
    unsigned selective_modules = 0;
    // Costed as a stage between two others whatever its layers: no embedding on layer 0, no
    // output layer on the last (HS-DP's floors probe one layer of each kind this way).
    bool middle = false;

    // The stage holds the embedding (layer 0) or the output layer (the model's last layer).
    bool holdsEmbedding() const { return !middle && first_layer == 0; }
    bool holdsOutput(int modelLayers) const { return !middle && first_layer + num_layers == modelLayers; }
};

struct StageCost {
    bool fits = false;
    double c = 0;           // t_fwd + t_bwd
    double bwd = 0;         // t_bwd: what the stage adds to the drain of the stages after it
    double sync = 0;        // before the gradient-norm barrier: StageEstimate::beforeBarrier
    double step = 0;        // after it: optimizer step + parameter all-gather (afterBarrier)
    double compute = 0;
    double hetero_comm = 0; // cross-type p2p + EP dispatch that spans nodes
    double shortfall_gib = 0;  // when !fits: by how much the least memory-hungry choice misses
    bool short_on_host = false;  // when !fits: its host memory share misses more than the device
    int level = 0;
};

// Recompute levels: 0 none, 1 selective of the element-wise modules, k + 1 full recompute
// of k layers (k >= 1), kFullAll full recompute of every layer of the stage, and
// kSelectiveWide selective recompute of whole MLP and MoE blocks (wideSelectiveRecomputeModules).
// Full-k levels rise in time with k; kSelectiveWide is slower than 1 but may be faster or
// slower than any full-k level, so a walk for the least that fits tries it beside them.
inline constexpr int kFullAll = 1 << 20;
inline constexpr int kSelectiveWide = kFullAll + 1;
// Whether `level` is full recompute of k layers with k = level - 1 (not kFullAll).
inline bool isFullOfKLevel(int level) { return level >= 2 && level < kFullAll; }
Recompute recomputeOfLevel(int level);
int recomputeLayersOfLevel(int level, int numLayers);   // StagePlan::recompute_layers
// Megatron-LM's one recompute setting for all stages, as levels: none, selective of the
// element-wise modules when `light` (it saves memory: selectiveRecomputeSavesMemory; without
// that it fits only where none does, and is slower), the wide selective set when `wide`, full
// recompute of k layers per stage (per model chunk when interleaved) for k = 1, 2, 4, ...
// below `layers` (--recompute-method block --recompute-num-layers k), and full recompute of
// every layer (docs/search.md section 1, Targets).
std::vector<int> recomputeLevels(int layers, bool light = true, bool wide = false);
// The modules of the search's selective recompute (level 1) on this model and the cluster's
// types in typeMask (SearchSpace type indices), or on the named catalog types, and whether
// they save any memory (core attention alone saves none with fused attention).
unsigned selectiveRecomputeModules(const CostModel& cost, const SearchSpace& space, unsigned typeMask = ~0u);
unsigned selectiveRecomputeModulesOfTypes(const CostModel& cost, const std::vector<std::string>& typeNames);
bool selectiveRecomputeSavesMemory(const CostModel& cost, unsigned modules);
// The modules of kSelectiveWide on this model: the MoE layers whole (`moe`, with the pre-MLP
// norm), the dense MLPs (`mlp`), and the attention core where it is unfused; 0 when the model
// has nothing such a set would add to level 1's.
unsigned wideSelectiveRecomputeModules(const CostModel& cost);

class StageEvaluator {
public:
    // offloadFraction: Plan::optimizer_offload_fraction of the plans this run builds.
    StageEvaluator(const CostModel& cost, const SearchSpace& space, double offloadFraction = 0.0);

    StageCost evaluate(const StageQuery& q);
    // modules: selective recompute's (level 1), 0 for selectiveModules(); kSelectiveWide
    // takes wideModules().
    StagePlan makeStage(const StageShape& s, int firstLayer, int numLayers, int level, unsigned modules = 0) const;

    // Tied embeddings: CostModel::tiedEmbeddingSync between a first and a last stage, which
    // reads their device types, nodes, the first stage's TP and both stages' DP; cached.
    double tiedSync(const StageShape& first, const StageShape& last);

    // Whether the run's stages get the cost model's --tp-comm-overlap (RunConfig).
    void setTpCommOverlap(bool on) { m_tpOverlap = on; }
    // The target the run's plans are for (RunConfig::target; StageContext::target).
    void setTarget(Target target) { m_target = target; }

    // What the plans' selective recompute repeats (level 1): see the constructor.
    unsigned selectiveModules() const { return m_selectiveModules; }
    // The same for a run on the types of typeMask (RunConfig::type_mask): grouped GEMM, and
    // with it moe_act, where every one of them runs it.
    unsigned selectiveModulesFor(unsigned typeMask) const { return selectiveRecomputeModules(m_cost, m_space, typeMask); }
    // What kSelectiveWide repeats (0: the level does not apply to this model).
    unsigned wideModules() const { return m_wideModules; }

    long long calls() const { return m_calls; }
    double offloadFraction() const { return m_offload; }
    // Whether the plans this run builds use the distributed optimizer: the model's setting,
    // and always under offload, which Megatron-Core runs only in it.
    bool distributedOptimizer() const;

private:
    // Packed cache key (fields in docs/search.md section 3).
    struct Key {
        std::uint64_t a = 0, b = 0, c = 0;
        bool operator==(const Key& o) const { return a == o.a && b == o.b && c == o.c; }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept;
    };
    // Everything known about one stage shape (type, group, knobs, layers, M): the least
    // fitting recompute level per number of micro-batches in flight, and the costs per
    // (level, next stage). Time does not depend on the micro-batches in flight, only the
    // memory does (CostModel.cpp), so one record serves every pipeline position.
    struct CostEntry {
        int level;
        std::uint64_t next;
        StageCost cost;
    };
    struct ShapeRecord {
        std::vector<int> level;          // per in-flight count; -3 unknown, -2 none fits
        std::vector<double> shortfall;   // per in-flight count, when none fits (GiB)
        std::vector<char> onHost;        // per in-flight count: the shortfall is of host memory
        std::vector<CostEntry> costs;
    };
    StageEstimate estimate(const StageQuery& q, int level, const StagePlan* nextPlan, int inflight);
    Key baseKey(const StageQuery& q) const;

    const CostModel& m_cost;
    const SearchSpace& m_space;
    double m_offload = 0.0;
    unsigned m_selectiveModules = recompute_module::defaults;
    unsigned m_wideModules = 0;
    std::vector<int> m_moePrefix;   // MoE layers among [0, l)
    FlatMap<Key, ShapeRecord, KeyHash> m_records;
    FlatMap<Key, double, KeyHash> m_tied;
    long long m_calls = 0;
    StagePlan m_scratch;          // the stage of the current evaluate() (estimate())
    bool m_scratchValid = false;
    bool m_tpOverlap = true;
    Target m_target = Target::Any;
};

} // namespace hapmoe
