#pragma once
// Clusters drawn by hand for tests: nodes of one device type and switches, to be linked by
// the test (header only; core types, no Qt).

#include "hardware/Cluster.h"

#include <initializer_list>
#include <string>

namespace hapmoe::test {

// `nodes` nodes of `perNode` devices of a type, ids firstId, firstId + 1, ... and hosts "n<id>".
inline Cluster nodesOf(const char* type, int nodes, int perNode = 8, int firstId = 0)
{
    Cluster c;
    for (int i = 0; i < nodes; ++i) {
        Node n;
        n.id = firstId + i;
        n.host = "n" + std::to_string(firstId + i);
        n.device_type = type;
        n.count = perNode;
        c.nodes.push_back(n);
    }
    return c;
}

// Switches with the given ids, named "sw<id>".
inline void addSwitches(Cluster& c, std::initializer_list<int> ids)
{
    for (int id : ids) {
        Switch s;
        s.id = id;
        s.name = "sw" + std::to_string(id);
        c.switches.push_back(s);
    }
}

} // namespace hapmoe::test
