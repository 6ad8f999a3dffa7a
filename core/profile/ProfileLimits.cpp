#include "profile/ProfileLimits.h"

#include "util/InputError.h"
#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <tuple>

namespace hapmoe {

namespace {

std::string number(double v)
{
    std::ostringstream os;
    os.precision(6);
    os << v;
    return os.str();
}

void requireIn(double v, double lo, double hi, const std::string& fileName, const std::string& where, const char* what)
{
    if (!(v >= lo && v <= hi))
        throw InputError(fileName, where, std::string("expected ") + what + " from " + number(lo) + " to " + number(hi) + ", got "
                                              + valueForMessage(v));
}

} // namespace

void checkProfileLimits(const Profile& profile, const std::string& fileName)
{
    using L = ProfileLimits;
    std::map<std::tuple<std::string, int, int>, std::size_t> firstOfSeries;   // (device type, tp, cp) -> first entry
    for (std::size_t i = 0; i < profile.compute.size(); ++i) {
        const ComputeEntry& e = profile.compute[i];
        const std::string at = "profile.compute[" + std::to_string(i) + "].";
        requireIn(static_cast<double>(e.tokens), 1, L::kMaxTokens, fileName, at + "tokens", "tokens per device-replica");
        requireIn(e.dense_layer_fwd_s, L::kMinTimeS, L::kMaxTimeS, fileName, at + "dense_layer_fwd_s", "seconds");
        requireIn(e.dense_layer_bwd_s, L::kMinTimeS, L::kMaxTimeS, fileName, at + "dense_layer_bwd_s", "seconds");
        // An MoE layer is costed from a series' FFN times (docs/cost-model.md section 3.4):
        // interpolated between a point that has them and one that has not, they would come
        // from a made-up zero.
        std::string device = e.device_type;
        std::transform(device.begin(), device.end(), device.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const std::size_t j = firstOfSeries.emplace(std::tuple{device, e.tp, e.cp}, i).first->second;
        const ComputeEntry& o = profile.compute[j];
        for (auto [field, here, there] : {std::tuple{"ffn_fwd_s", e.ffn_fwd_s > 0, o.ffn_fwd_s > 0},
                                          std::tuple{"ffn_bwd_s", e.ffn_bwd_s > 0, o.ffn_bwd_s > 0}})
            if (here != there)
                throw InputError(fileName, at + field,
                                 std::string(here ? "given here but not" : "not given here but") + " at compute[" + std::to_string(j)
                                     + "] of the same series (device_type, tp, cp): expected the FFN times at every point of a "
                                       "series or at none");
    }
    for (std::size_t i = 0; i < profile.collectives.size(); ++i) {
        const CollectiveEntry& e = profile.collectives[i];
        const std::string at = "profile.collectives[" + std::to_string(i) + "].";
        requireIn(e.bytes, 1, L::kMaxBytes, fileName, at + "bytes", "bytes per rank");
        requireIn(e.time_s, L::kMinTimeS, L::kMaxTimeS, fileName, at + "time_s", "seconds");
    }
    for (const auto& [type, e] : profile.device_efficiency)
        requireIn(e, L::kMinEfficiency, 1, fileName, "profile.device_efficiency." + type, "a fraction of peak");
}

} // namespace hapmoe
