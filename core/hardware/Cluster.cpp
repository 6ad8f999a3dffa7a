#include "hardware/Cluster.h"

#include "hardware/DeviceCatalog.h"
#include "util/Strings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>

namespace hapmoe {

const char* toString(LinkClass c)
{
    switch (c) {
    case LinkClass::InterNode: return "inter_node";
    case LinkClass::CrossType: return "cross_type";
    case LinkClass::IntraNode: break;
    }
    return "intra_node";
}

int Cluster::totalDevices() const
{
    int n = 0;
    for (const auto& node : nodes)
        n += std::max(0, node.count);
    return n;
}

const Node* Cluster::node(int id) const
{
    // Presets, shorthands and the canvas number nodes from 0 in order: then the id is the
    // index (ids are unique, so a match there is the node); otherwise scan.
    if (id >= 0 && static_cast<std::size_t>(id) < nodes.size() && nodes[static_cast<std::size_t>(id)].id == id)
        return &nodes[static_cast<std::size_t>(id)];
    for (const auto& n : nodes)
        if (n.id == id)
            return &n;
    return nullptr;
}

const Switch* Cluster::switchById(int id) const
{
    for (const auto& s : switches)
        if (s.id == id)
            return &s;
    return nullptr;
}

int Cluster::nextFreeId() const
{
    int next = 0;
    for (const auto& n : nodes)
        next = std::max(next, n.id + 1);
    for (const auto& s : switches)
        next = std::max(next, s.id + 1);
    return next;
}

double nicGBpsPerDevice(const Node& n, double typePerDeviceGBps)
{
    if (!(n.nic_gbit > 0))
        return typePerDeviceGBps;
    const int devices = std::max(1, n.count);
    return n.nic_gbit / 8.0 * (n.nics > 0 ? n.nics : devices) / devices;
}

std::string hostNameProblem(std::string_view host)
{
    if (host.empty())
        return "is empty";
    if (host.size() > 253)
        return "is " + std::to_string(host.size()) + " characters long, more than 253";
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = std::min(host.find('.', start), host.size());
        const std::string_view label = host.substr(start, dot - start);
        if (label.empty())
            return "has an empty label (a '.' at an end or two in a row)";
        if (label.size() > 63)
            return "has a label of " + std::to_string(label.size()) + " characters, more than 63";
        if (label.front() == '-' || label.back() == '-')
            return "has a label that starts or ends with '-'";
        for (char c : label) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                const unsigned char u = static_cast<unsigned char>(c);
                if (u < 0x20 || u >= 0x7f)
                    return "has the byte " + byteCode(u);
                return std::string("has the character '") + c + "'";
            }
        }
        if (dot == host.size())
            return {};
        start = dot + 1;
    }
}

std::string shortenedForMessage(std::string_view value)
{
    if (value.size() <= 60)
        return std::string(value);
    return std::string(value.substr(0, 60)) + "... (" + std::to_string(value.size()) + " characters)";
}

SwitchUplinks switchUplinks(const Cluster& cluster, const DeviceCatalog* catalog)
{
    SwitchUplinks out;
    // What each node's NICs can send, GB/s (0: not known, the links count as given). A node
    // with several links to switches shares its NICs among them in proportion to the links.
    std::map<int, double> nicCapacity, linkTotal;
    if (catalog)
        for (const Node& n : cluster.nodes) {
            const DeviceType* t = catalog->find(n.device_type);
            if (const double perDevice = nicGBpsPerDevice(n, t ? t->inter_node_gbps : 0.0); perDevice > 0)
                nicCapacity[n.id] = perDevice * std::max(1, n.count);
        }
    for (const Link& l : cluster.links) {
        if (!(l.bandwidth_gbytes_per_s > 0) || l.a == l.b)
            continue;
        const bool aSwitch = cluster.switchById(l.a) != nullptr, bSwitch = cluster.switchById(l.b) != nullptr;
        if (aSwitch != bSwitch)
            linkTotal[aSwitch ? l.b : l.a] += l.bandwidth_gbytes_per_s;
    }
    auto downBandwidth = [&](int node, double link) {
        const auto cap = nicCapacity.find(node);
        if (cap == nicCapacity.end())
            return link;
        const double total = linkTotal[node];
        return total > cap->second ? link * cap->second / total : link;
    };
    std::map<int, double>& down = out.down;
    std::map<int, double>& up = out.up;
    for (const Link& l : cluster.links) {
        if (!(l.bandwidth_gbytes_per_s > 0) || l.a == l.b)
            continue;
        const bool aSwitch = cluster.switchById(l.a) != nullptr, bSwitch = cluster.switchById(l.b) != nullptr;
        if (aSwitch && bSwitch) {
            up[l.a] += l.bandwidth_gbytes_per_s;
            up[l.b] += l.bandwidth_gbytes_per_s;
        } else if (aSwitch != bSwitch) {
            const int sw = aSwitch ? l.a : l.b, node = aSwitch ? l.b : l.a;
            if (!cluster.node(node))
                continue;
            down[sw] += downBandwidth(node, l.bandwidth_gbytes_per_s);
            out.leaves[node].push_back(sw);
        }
    }
    std::map<int, std::pair<double, double>> kept;   // node -> (bandwidth kept, bandwidth)
    for (const Link& l : cluster.links) {
        if (!(l.bandwidth_gbytes_per_s > 0) || l.a == l.b)
            continue;
        const bool aSwitch = cluster.switchById(l.a) != nullptr, bSwitch = cluster.switchById(l.b) != nullptr;
        if (aSwitch == bSwitch)
            continue;
        const int sw = aSwitch ? l.a : l.b, node = aSwitch ? l.b : l.a;
        if (!cluster.node(node))
            continue;
        const double over = out.oversubscription(sw);
        kept[node].first += l.bandwidth_gbytes_per_s * (over > 0 ? 1.0 / over : 1.0);
        kept[node].second += l.bandwidth_gbytes_per_s;
    }
    for (const auto& [node, k] : kept)
        if (k.second > 0 && k.first < k.second)
            out.cross_share[node] = k.first / k.second;
    for (auto& [node, sws] : out.leaves) {
        std::sort(sws.begin(), sws.end());
        sws.erase(std::unique(sws.begin(), sws.end()), sws.end());
    }
    return out;
}

double SwitchUplinks::oversubscription(int switchId) const
{
    const auto d = down.find(switchId), u = up.find(switchId);
    if (d == down.end() || u == up.end() || !(u->second > 0) || d->second <= u->second)
        return 0.0;
    return d->second / u->second;
}

double SwitchUplinks::share(int nodeId) const
{
    const auto it = cross_share.find(nodeId);
    return it == cross_share.end() ? 1.0 : it->second;
}

bool SwitchUplinks::shareLeaf(const std::vector<int>& nodeIds) const
{
    if (nodeIds.size() < 2)
        return true;
    const auto first = leaves.find(nodeIds.front());
    if (first == leaves.end())
        return false;
    std::vector<int> common = first->second;
    for (std::size_t i = 1; i < nodeIds.size() && !common.empty(); ++i) {
        const auto it = leaves.find(nodeIds[i]);
        if (it == leaves.end())
            return false;
        std::vector<int> both;
        std::set_intersection(common.begin(), common.end(), it->second.begin(), it->second.end(), std::back_inserter(both));
        common = std::move(both);
    }
    return !common.empty();
}

int layoutColumns(const std::vector<int>& blockSizes, double column, double row, double top, double gap, int maxColumns)
{
    int longest = 0;
    for (int n : blockSizes)
        longest = std::max(longest, n);
    int columns = std::max(1, std::min(longest, maxColumns));
    double bestMismatch = std::numeric_limits<double>::infinity();
    for (int c = std::min(longest, maxColumns); c >= std::min(longest, 2) && c >= 1; --c) {
        double width = -gap;
        for (int n : blockSizes)
            width += std::min(n, c) * column + gap;
        const double height = top + ((longest + c - 1) / c) * row;
        const double mismatch = std::abs(std::log(width / height / (4.0 / 3.0)));
        if (mismatch < bestMismatch - 1e-9) {
            bestMismatch = mismatch;
            columns = c;
        }
    }
    return columns;
}

} // namespace hapmoe
