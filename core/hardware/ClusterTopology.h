#pragma once
// Graph questions about a cluster, answered on a Boost.Graph adjacency list that lives
// only in ClusterTopology.cpp (the header exposes integer node ids, never the graph).

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"

#include <memory>
#include <string>
#include <vector>

namespace hapmoe {

struct TopologyProblem {
    enum class Kind { NoDevices, UnknownDevice, DuplicateHost, Island, Unlinked, BadLink, NoRoute };
    Kind kind;
    std::vector<int> ids;     // the nodes or switches concerned
    std::string message;
};

class ClusterTopology {
public:
    ClusterTopology(const Cluster& cluster, const DeviceCatalog& catalog);
    ~ClusterTopology();
    ClusterTopology(const ClusterTopology&) = delete;
    ClusterTopology& operator=(const ClusterTopology&) = delete;

    // Widest-path (max-min) bandwidth in GB/s between two nodes; 0 when not connected.
    // Within one node: the device type's intra-node bandwidth.
    double widestPath(int nodeA, int nodeB) const;
    // Bottleneck bandwidth between two groups of nodes: the minimum over pairs of the
    // widest path (what a collective spanning both groups is limited by).
    double bottleneck(const std::vector<int>& groupA, const std::vector<int>& groupB) const;
    // Connected components restricted to nodes (switches connect them). More than one
    // component means islands.
    std::vector<std::vector<int>> components() const;
    // Everything a user should fix: no devices, unknown device types, islands, nodes
    // without a link, links to missing ids or with non-positive bandwidth, and nodes of one
    // component that reach each other only through another host (hosts do not forward).
    std::vector<TopologyProblem> problems() const;

    // The class of traffic among the given nodes: one node -> IntraNode; same device
    // type -> InterNode; otherwise CrossType.
    LinkClass classify(const std::vector<int>& nodeIds) const;

    // Node ids grouped by device type (canonical name), in first-appearance order.
    std::vector<std::pair<std::string, std::vector<int>>> nodesByType() const;

    // A stage order of device types that keeps adjacent stages on fast links: types
    // ordered so that consecutive types have the widest bottleneck between them.
    std::vector<std::string> typeOrder() const;

    const Cluster& cluster() const { return m_cluster; }

private:
    struct Impl;
    const Cluster& m_cluster;
    const DeviceCatalog& m_catalog;
    std::unique_ptr<Impl> d;
};

// The cost model takes any two nodes to talk over their NICs; a cluster whose drawing says
// otherwise cannot run a plan across them. Throws InputError(source, "links", ...) when nodes
// cannot all reach each other: nodes without a link, islands, or nodes joined only through
// another host. With nodeIds (the nodes a plan uses), only whether those lie in one connected
// part is checked.
void requireConnected(const Cluster& cluster, const DeviceCatalog& catalog, const std::string& source,
                      const std::vector<int>& nodeIds = {});

} // namespace hapmoe
