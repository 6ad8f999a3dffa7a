#include "plan/PlanRelation.h"

#include <algorithm>
#include <tuple>

namespace hapmoe {

namespace {

// What a stage runs, without where: its position and devices are what a reordering changes.
auto stageWork(const StagePlan& s)
{
    return std::make_tuple(s.device_type, s.num_layers, s.tp, s.cp, s.dp, s.ep, s.etp, s.micro_batch_size,
                           static_cast<int>(s.recompute), s.recompute_layers, s.recompute_modules);
}

} // namespace

bool sameStagesReordered(const Plan& a, const Plan& b)
{
    if (a.pp() != b.pp() || a.vpp != b.vpp || a.global_batch_size != b.global_batch_size
        || a.optimizer_offload_fraction != b.optimizer_offload_fraction)
        return false;
    using Work = decltype(stageWork(std::declval<const StagePlan&>()));
    std::vector<Work> wa, wb;
    for (const StagePlan& s : a.stages)
        wa.push_back(stageWork(s));
    for (const StagePlan& s : b.stages)
        wb.push_back(stageWork(s));
    if (wa == wb)
        return false;   // the same order: not a reordering (another split or placement)
    std::sort(wa.begin(), wa.end());
    std::sort(wb.begin(), wb.end());
    return wa == wb;
}

std::vector<int> reorderedFrom(const std::vector<const Plan*>& plans)
{
    std::vector<int> from(plans.size(), -1);
    for (std::size_t i = 0; i < plans.size(); ++i)
        for (std::size_t j = 0; j < i && from[i] < 0; ++j)
            if (sameStagesReordered(*plans[j], *plans[i]))
                from[i] = static_cast<int>(j);
    return from;
}

} // namespace hapmoe
