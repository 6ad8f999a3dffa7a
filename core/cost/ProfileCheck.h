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
// above the device's highest peak (FP8 where it has FP8, else BF16), or below a thousandth of
// its BF16 peak; a collective entry that moves at least 1 MiB per rank at under 50 MB/s, or
// under 1 MiB in more than 10 ms. Entries of device types the catalog does not know are left
// to profileWarnings.
Warnings profilePlausibilityWarnings(const Profile& profile, const ModelSpec& model, const DeviceCatalog& catalog,
                                     const std::string& fileName);

} // namespace hapmoe
