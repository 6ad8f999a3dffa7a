#pragma once
// A bundle of cluster elements that one edit adds or removes together (a dropped node and
// its link, a paste, a deletion with the links that hang on it).

#include "hardware/Cluster.h"

#include <vector>

namespace hapmoe::ui {

struct ClusterItems {
    std::vector<Node> nodes;
    std::vector<Switch> switches;
    std::vector<Link> links;

    bool empty() const { return nodes.empty() && switches.empty() && links.empty(); }
};

} // namespace hapmoe::ui
