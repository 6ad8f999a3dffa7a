#pragma once
// The space both HS-DP and the exhaustive oracle search (docs/search.md section 2):
// device types as contiguous blocks of the pipeline, node-aligned device groups taken in
// node order, the knob tuples (TP, CP, DP, EP, ETP, EDP) a group of a given size allows,
// and the rules of the deployment targets that shape the space (Megatron-LM: one knob
// tuple and one recompute setting everywhere, one collective library, the same number of
// processes on every node; FlagScale: CP = 1, a type never returns after another type).
// Internal to core/search.

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"

#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe {

struct Knob {
    int tp = 1, cp = 1, dp = 1;
    int ep = 1, etp = 1, edp = 1;
};

// One device type of the cluster: its nodes in cluster order and positions 0..total-1 of
// its devices (node by node).
struct TypeInfo {
    std::string name;              // catalog canonical name
    std::string library;           // collective library (Megatron may not mix them)
    std::vector<int> node_ids;
    std::vector<int> node_counts;
    std::vector<int> node_start;   // position of each node's first device
    int total = 0;
    // (node size, devices on nodes of that size), one entry per size, smallest first: more
    // than one when the type's nodes differ in size.
    std::vector<std::pair<int, int>> size_devices;
    double memory_gib = 0;
    // All nodes of the type alike (devices, NICs): then a group's costs depend on where it
    // starts only through the offset inside its node.
    bool regular = false;
};

class SearchSpace {
public:
    // maxDp: no plan uses more data-parallel replicas than this (a micro-batch step of DP x MBS
    // sequences divides the global batch), so groups that only allow more get no knobs.
    SearchSpace(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog,
                int maxDp = std::numeric_limits<int>::max());

    const ModelSpec& model() const { return m_model; }
    const Cluster& cluster() const { return m_cluster; }
    const DeviceCatalog& catalog() const { return m_catalog; }
    const std::vector<TypeInfo>& types() const { return m_types; }
    int numTypes() const { return static_cast<int>(m_types.size()); }
    int totalDevices() const;

    // Group sizes worth trying for a type (sub-node divisors and whole-node sums).
    const std::vector<int>& sizes(int type) const { return m_sizes[static_cast<std::size_t>(type)]; }
    // Whether devices [start, start + d) of a type form a node-aligned group: inside one
    // node at a multiple of d (d divides the node), or whole consecutive nodes.
    bool validGroup(int type, int start, int d) const;
    // The knob tuples of a group of d devices of a type: TP and ETP stay inside a node, so
    // they divide the devices the group has on each of its nodes, at one of its positions at
    // least. On a type whose nodes differ in size that depends on where the group sits
    // (8 devices as one node of 8, or as nodes of 4 and 4): knobFits says whether a tuple
    // holds at a position, and knobsVary whether it may not.
    const std::vector<Knob>& knobs(int type, int d) const;
    bool knobsVary(int type, int d) const;
    bool knobFits(int type, int start, int d, const Knob& k) const
    {
        const int g = pieceGcd(type, start, d);
        return g % k.tp == 0 && g % k.etp == 0;
    }
    // The greatest common divisor of the devices a group has on each of its nodes: d inside
    // one node, else the gcd of the sizes of the whole nodes it spans.
    int pieceGcd(int type, int start, int d) const;

    std::vector<DeviceSlot> slots(int type, int start, int d) const;

    bool mixesLibraries(unsigned mask) const;

    // The cost model reads a group's nodes only through their devices and NICs and whether
    // two groups share a node (CostModel.cpp: nicOf, group, between). On a type whose nodes
    // are alike, groups that start at the same offset inside a node cost the same: the
    // canonical start identifies them in caches.
    int canonicalStart(int type, int start) const;
    int nodeIndex(int type, int position) const;
    int nodeSize(int type, int position) const
    {
        return m_types[static_cast<std::size_t>(type)].node_counts[static_cast<std::size_t>(nodeIndex(type, position))];
    }
    bool spansNodes(int type, int start, int d) const { return nodeIndex(type, start) != nodeIndex(type, start + d - 1); }
    // Whether two groups of a type share their first node while each sits in one node.
    bool shareNode(int type, int startA, int dA, int typeB, int startB, int dB) const;

private:
    void buildKnobs(int type, int d, const std::set<int>& gcds);

    const ModelSpec& m_model;
    const Cluster& m_cluster;
    const DeviceCatalog& m_catalog;
    std::vector<TypeInfo> m_types;
    std::vector<std::vector<int>> m_sizes;
    struct SizeKnobs {
        int d = 0;
        std::vector<Knob> knobs;
        bool vary = false;   // positions of the group differ in pieceGcd (knobsVary)
    };
    std::vector<std::vector<SizeKnobs>> m_knobs;   // per type, by ascending d
    const SizeKnobs* sizeKnobs(int type, int d) const;
    int m_maxDp = std::numeric_limits<int>::max();
    static const std::vector<Knob> s_none;
};

} // namespace hapmoe
