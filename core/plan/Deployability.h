#pragma once
// Whether a plan can run on a deployment target (DESIGN section 3 and
// ../shared/reference/megatron-and-flagscale.md sections 2, 9 and 11). Used by the search
// to keep only deployable plans and by the launcher export to refuse a plan with the rule
// it breaks.

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"

#include <string>
#include <vector>

namespace hapmoe {

struct DeploymentProblem {
    std::string rule;      // short id, e.g. "megatron.uniform-knobs", "world-size", "experts-divisible-by-ep"
    std::string message;   // human sentence naming the stage and values
};

// Empty when the plan runs on the target. Target::Any checks the rules common to both
// (knob products, divisibility, batch) and that at least one of Megatron / FlagScale accepts it.
std::vector<DeploymentProblem> deploymentProblems(const Plan& plan, const ModelSpec& model,
                                                  const Cluster& cluster, const DeviceCatalog& catalog,
                                                  Target target);

inline bool isDeployable(const Plan& plan, const ModelSpec& model, const Cluster& cluster,
                         const DeviceCatalog& catalog, Target target)
{
    return deploymentProblems(plan, model, cluster, catalog, target).empty();
}

// The best target the plan (or cluster) allows: Megatron when its rules hold, else FlagScale.
Target bestTarget(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog);

} // namespace hapmoe
