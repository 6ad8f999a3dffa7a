#include "profile/ProfileTables.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace hapmoe {

bool sameDeviceName(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

namespace {

// Power law through two points, evaluated at x (all positive).
double powerLaw(double x0, double y0, double x1, double y1, double x)
{
    if (y0 <= 0 || y1 <= 0 || x0 <= 0 || x1 <= 0 || x0 == x1)
        return y0 + (y1 - y0) * (x - x0) / (x1 != x0 ? (x1 - x0) : 1.0);
    const double slope = std::log(y1 / y0) / std::log(x1 / x0);
    return y0 * std::exp(slope * std::log(x / x0));
}

template <class Get>
double interpolateSeries(std::size_t n, double x, Get&& at)
{
    // at(i) -> pair(x_i, y_i), x sorted ascending, n >= 1.
    const auto first = at(0);
    if (n == 1 || x <= first.first) {
        if (n == 1 && x > first.first && first.first > 0)
            return first.second * x / first.first;   // proportional beyond the only point
        return first.second;                          // latency floor below the first point
    }
    const auto last = at(n - 1);
    if (x >= last.first)
        return last.first > 0 ? last.second * x / last.first : last.second;
    std::size_t hi = 1;
    while (hi < n && at(hi).first < x)
        ++hi;
    const auto p0 = at(hi - 1);
    const auto p1 = at(hi);
    return powerLaw(p0.first, p0.second, p1.first, p1.second, x);
}

} // namespace

double ProfileTables::interpolateLogLog(const std::vector<std::pair<double, double>>& points, double x)
{
    if (points.empty())
        return 0;
    return interpolateSeries(points.size(), x, [&](std::size_t i) { return points[i]; });
}

ProfileTables::ProfileTables(const Profile& profile)
{
    for (const auto& e : profile.compute) {
        auto it = std::find_if(m_compute.begin(), m_compute.end(), [&](const ComputeSeries& s) {
            return s.tp == e.tp && s.cp == e.cp && sameDeviceName(s.device, e.device_type);
        });
        if (it == m_compute.end()) {
            m_compute.push_back({e.device_type, e.tp, e.cp, {}});
            it = m_compute.end() - 1;
        }
        it->points.push_back({static_cast<double>(e.tokens),
                              LayerTimes{e.dense_layer_fwd_s, e.dense_layer_bwd_s, e.ffn_fwd_s, e.ffn_bwd_s}});
    }
    for (auto& s : m_compute)
        std::sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    for (const auto& e : profile.collectives) {
        auto it = std::find_if(m_collectives.begin(), m_collectives.end(), [&](const CollectiveSeries& s) {
            return s.primitive == e.primitive && s.link == e.link && s.group == e.group_size
                && sameDeviceName(s.device, e.device_type);
        });
        if (it == m_collectives.end()) {
            m_collectives.push_back({e.primitive, e.link, e.group_size, e.device_type, {}});
            it = m_collectives.end() - 1;
        }
        it->points.push_back({e.bytes, e.time_s});
    }
    for (auto& s : m_collectives)
        std::sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    m_memory = profile.memory;
    for (const auto& [name, eff] : profile.device_efficiency)
        m_efficiency.push_back({name, eff});
}

std::optional<LayerTimes> ProfileTables::compute(std::string_view deviceType, int tp, int cp, double tokens) const
{
    for (const auto& s : m_compute) {
        if (s.tp != tp || s.cp != cp || !sameDeviceName(s.device, deviceType) || s.points.empty())
            continue;
        const auto n = s.points.size();
        auto field = [&](double LayerTimes::*m) {
            return interpolateSeries(n, tokens, [&](std::size_t i) {
                return std::pair<double, double>(s.points[i].first, s.points[i].second.*m);
            });
        };
        return LayerTimes{field(&LayerTimes::dense_fwd), field(&LayerTimes::dense_bwd),
                          field(&LayerTimes::ffn_fwd), field(&LayerTimes::ffn_bwd)};
    }
    return std::nullopt;
}

std::optional<double> ProfileTables::collective(Collective primitive, LinkClass link, int groupSize, double bytes,
                                                std::string_view deviceType) const
{
    const CollectiveSeries* generic = nullptr;
    for (const auto& s : m_collectives) {
        if (s.primitive != primitive || s.link != link || s.group != groupSize || s.points.empty())
            continue;
        if (!s.device.empty() && sameDeviceName(s.device, deviceType))
            return interpolateLogLog(s.points, bytes);
        if (s.device.empty() && !generic)
            generic = &s;
    }
    if (generic)
        return interpolateLogLog(generic->points, bytes);
    return std::nullopt;
}

const MemoryCalibration* ProfileTables::memory(std::string_view deviceType) const
{
    for (const auto& m : m_memory)
        if (sameDeviceName(m.device_type, deviceType))
            return &m;
    return nullptr;
}

std::optional<double> ProfileTables::efficiency(std::string_view deviceType) const
{
    for (const auto& [name, eff] : m_efficiency)
        if (sameDeviceName(name, deviceType))
            return eff;
    return std::nullopt;
}

} // namespace hapmoe
