#include "plan/Plan.h"

#include <algorithm>

namespace hapmoe {

const char* toString(Recompute r)
{
    switch (r) {
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    case Recompute::None: break;
    }
    return "none";
}

const char* toString(Target t)
{
    switch (t) {
    case Target::Megatron: return "megatron";
    case Target::FlagScale: return "flagscale";
    case Target::Any: break;
    }
    return "any";
}

int Plan::numDevices() const
{
    int n = 0;
    for (const auto& s : stages)
        n += s.numDevices();
    return n;
}

bool Plan::oneTpSize() const
{
    return std::all_of(stages.begin(), stages.end(), [&](const StagePlan& st) { return st.tp == stages.front().tp; });
}

int Plan::numMicrobatches() const
{
    if (stages.empty())
        return 0;
    const int perStep = stages.front().dp * stages.front().micro_batch_size;
    return perStep > 0 ? global_batch_size / perStep : 0;
}

} // namespace hapmoe
