#pragma once
// Plausibility of a measured profile for the model it is used with (docs/profiling.md,
// "Plausibility"): a table entry in the wrong unit, or of another model, is within the
// format's bounds but gives predictions that are off by orders of magnitude. Each warning
// names the entry and the figure it implies.

#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "profile/Profile.h"
#include "util/InputError.h"

#include <string>

namespace hapmoe {

// A compute entry whose layer, at the model's FLOPs per token (Megatron's counting), would run
// above the peak its GEMMs run at (FP8's where the model trains in FP8 on a type that has it,
// else BF16's), or below a thousandth of its BF16 peak; a collective entry slower than a ring's
// latency (2 (n - 1) + 1 steps of 50 us, ten times that over the cross-vendor bridge) plus its
// bytes at 50 MB/s. Entries of device types the catalog does not know are left to
// profileWarnings.
Warnings profilePlausibilityWarnings(const Profile& profile, const ModelSpec& model, const DeviceCatalog& catalog,
                                     const std::string& fileName);

} // namespace hapmoe
