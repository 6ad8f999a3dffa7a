#include "hardware/Cluster.h"

#include <algorithm>

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

} // namespace hapmoe
