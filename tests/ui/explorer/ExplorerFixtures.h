#pragma once
// Inputs for the explorer's tests and benchmark: the paper's Mixtral-S (appendix A), the
// paper's clusters 16-1 (H800 1x8 + 910B 1x8) and 32-3 (910B 2x8 + MI300X 2x8) of Table 1,
// and hand-made heterogeneous plans on them, costed by the real cost model.

#include "cost/CostModel.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "io/Presets.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"
#include "search/Search.h"

#include <string>
#include <vector>

namespace hapmoe::test {

// Mixtral-S: 24 layers, hidden 4096, FFN 14336, 32 heads with 8 query groups, 8 experts
// top-2 with the all-gather dispatcher, sequence 4096, micro-batch 1, global batch 256,
// BF16 with the distributed optimizer (paper appendix A); vocabulary 32000 as Mixtral.
inline ModelSpec mixtralS()
{
    // The built-in preset (resources/models/mixtral-s.json): paper appendix A.
    const ModelSpec* preset = findModelPreset("Mixtral-S");
    return preset ? *preset : ModelSpec{};
}

// Nodes of 8 devices under one leaf switch per device type and a spine, as the presets.
inline Cluster paperCluster(const std::string& name, const std::vector<std::pair<std::string, int>>& nodesPerType)
{
    Cluster c;
    c.name = name;
    int id = 0;
    std::vector<std::pair<int, std::vector<int>>> leaves;
    for (const auto& [type, count] : nodesPerType) {
        std::vector<int> ids;
        for (int k = 0; k < count; ++k) {
            Node n;
            n.id = id++;
            n.host = type + "-" + std::to_string(k);
            n.device_type = type;
            n.count = 8;
            c.nodes.push_back(n);
            ids.push_back(n.id);
        }
        leaves.push_back({0, ids});
    }
    Switch spine;
    spine.id = id++;
    spine.name = "spine";
    c.switches.push_back(spine);
    for (auto& [leafId, ids] : leaves) {
        Switch leaf;
        leaf.id = id++;
        leaf.name = "leaf-" + std::to_string(leaf.id);
        c.switches.push_back(leaf);
        c.links.push_back({leaf.id, spine.id, 400.0, 5.0});
        for (int n : ids)
            c.links.push_back({n, leaf.id, 400.0, 5.0});
    }
    return c;
}

inline Cluster cluster16_1() { return paperCluster("16-1", {{"H800", 1}, {"910B-376T", 1}}); }
inline Cluster cluster32_3() { return paperCluster("32-3", {{"910B-376T", 2}, {"MI300X", 2}}); }

inline StagePlan stage(const std::string& type, int node, int first, int count, int firstLayer, int layers,
                       int tp, int dp, int ep, int etp, int edp, int mbs,
                       Recompute rc = Recompute::None, int rcLayers = 0)
{
    StagePlan s;
    s.device_type = type;
    s.devices = {DeviceSlot{node, first, count}};
    s.first_layer = firstLayer;
    s.num_layers = layers;
    s.tp = tp;
    s.dp = dp;
    s.ep = ep;
    s.etp = etp;
    s.edp = edp;
    s.micro_batch_size = mbs;
    s.recompute = rc;
    s.recompute_layers = rcLayers;
    return s;
}

// Heterogeneous FlagScale plan on 16-1: 14 layers on the H800 node (TP2 DP4, EP4 EDP2),
// 10 on the 910B node (TP4 DP2, EP2 ETP2 EDP2, micro-batch 4*1/2 = 2, FlagScale's rule),
// full recompute of 4 layers there (the H800 stage needs none). M = 256 / (4 * 1) = 64.
inline Plan heteroPlan16_1()
{
    Plan p;
    p.name = "hetero 14/10";
    p.global_batch_size = 256;
    p.target = Target::FlagScale;
    p.stages = {stage("H800", 0, 0, 8, 0, 14, 2, 4, 4, 1, 2, 1),
                stage("910B-376T", 1, 0, 8, 14, 10, 4, 2, 2, 2, 2, 2, Recompute::Full, 4)};
    return p;
}

// The uniform split on 16-1: 12 + 12 layers, the same knobs on both stages.
inline Plan uniformPlan16_1()
{
    Plan p;
    p.name = "uniform 12/12";
    p.global_batch_size = 256;
    p.target = Target::Megatron;
    p.stages = {stage("H800", 0, 0, 8, 0, 12, 2, 4, 4, 1, 2, 1, Recompute::Full),
                stage("910B-376T", 1, 0, 8, 12, 12, 2, 4, 4, 1, 2, 1, Recompute::Full)};
    return p;
}

// A four-stage heterogeneous plan on 32-3: the 910B nodes take fewer layers than the
// MI300X nodes (5+5 vs 7+7); the MI300X mesh runs TP4 DP2 with micro-batch 4*1/2 = 2 and
// EP8, without recompute thanks to its 192 GB.
inline Plan heteroPlan32_3()
{
    Plan p;
    p.name = "hetero 5/5/7/7";
    p.global_batch_size = 256;
    p.target = Target::FlagScale;
    p.stages = {stage("910B-376T", 0, 0, 8, 0, 5, 2, 4, 4, 1, 2, 1, Recompute::Full, 3),
                stage("910B-376T", 1, 0, 8, 5, 5, 2, 4, 4, 1, 2, 1, Recompute::Full, 2),
                stage("MI300X", 2, 0, 8, 10, 7, 4, 2, 8, 1, 1, 2),
                stage("MI300X", 3, 0, 8, 17, 7, 4, 2, 8, 1, 1, 2)};
    return p;
}

// What a Megatron-LM user would run on 32-3 today: 6 layers per stage, the same knobs on
// every stage, full recompute everywhere.
inline Plan uniformPlan32_3()
{
    Plan p;
    p.name = "current (uniform 6/6/6/6)";
    p.global_batch_size = 256;
    p.target = Target::FlagScale;
    for (int s = 0; s < 4; ++s)
        p.stages.push_back(stage(s < 2 ? "910B-376T" : "MI300X", s, 0, 8, 6 * s, 6, 2, 4, 4, 1, 2, 1, Recompute::Full));
    return p;
}

inline RankedPlan costed(const CostModel& cost, const Plan& plan)
{
    return RankedPlan{plan, cost.estimate(plan)};
}

} // namespace hapmoe::test
