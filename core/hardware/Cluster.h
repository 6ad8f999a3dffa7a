#pragma once
// A cluster as the user draws it: nodes of one device type each, switches, and links
// between them with bandwidth and latency. Plain value type; the graph algorithms are in
// ClusterTopology (Boost.Graph stays inside core/ sources).
//
// Units: link bandwidth in GB/s (1e9 bytes/s, one direction), latency in microseconds,
// NIC speed in Gb/s (as NICs are sold).

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

class DeviceCatalog;

enum class LinkClass { IntraNode, InterNode, CrossType };
const char* toString(LinkClass c);

struct Node {
    int id = 0;                  // unique among nodes and switches
    std::string host;            // host name (validated before it reaches a launcher)
    std::string device_type;     // catalog name or alias
    int count = 8;               // devices in this node
    int nics = 0;                // 0 means one NIC per device
    double nic_gbit = 0;         // per NIC, Gb/s; 0 means the catalog's inter-node figure
    // Host side, used by optimizer CPU offload (docs/cost-model.md section 7.3):
    double host_memory_gib = 0;        // host memory the training may use on this node; 0 = unknown, not checked
    double host_link_gbytes_per_s = 0; // device-host link per device and direction; 0 = the cost model's default
    double x = 0, y = 0;         // canvas position (GUI only)
};

struct Switch {
    int id = 0;
    std::string name;
    double x = 0, y = 0;
};

struct Link {
    int a = 0, b = 0;            // node or switch ids
    double bandwidth_gbytes_per_s = 0;
    double latency_us = 0;
};

// How traffic crosses between vendors whose collective libraries cannot talk to each
// other (NCCL <-> HCCL, ...). FlagScale's --hetero-use-cpu-communication uses gloo over TCP.
struct CrossVendorBridge {
    std::string method = "gloo-tcp";
    // Per connection: every rank pair across the boundary has its own (gloo opens one TCP
    // connection per peer), each limited by this figure and by its NIC. 2.5 GB/s = 20 Gb/s,
    // a single TCP stream; an assumption to replace with a measurement.
    double bandwidth_gbytes_per_s = 2.5;
    double latency_us = 100;
};

struct Cluster {
    std::string name;
    std::string description;
    std::string source;
    std::vector<Node> nodes;
    std::vector<Switch> switches;
    std::vector<Link> links;
    CrossVendorBridge cross_vendor;

    int totalDevices() const;
    const Node* node(int id) const;
    const Switch* switchById(int id) const;
    int nextFreeId() const;
};

// Leaf switches and their uplinks (docs/cost-model.md section 6). A switch's down links go to
// nodes, its up links to other switches. When the up links carry less than the down links
// (an oversubscribed leaf) and every node below the switch sends off it at once, as the
// data-parallel and expert-parallel groups of a job do, a node keeps min(1, up / down) of its
// link to that switch. A node's share is that figure averaged over its switch links by their
// bandwidth. A switch without up links leaves its nodes their whole links (traffic that would
// need to leave it has no route, a topology problem of its own).
struct SwitchUplinks {
    std::map<int, std::vector<int>> leaves;   // node id -> the switch ids it links to directly, sorted
    std::map<int, double> cross_share;        // node id -> share in (0, 1); a node not listed keeps 1
    std::map<int, double> down, up;           // switch id -> GB/s of its links to nodes, to switches

    bool oversubscribed() const { return !cross_share.empty(); }
    double share(int nodeId) const;
    // A switch's links down over its links up when the down links carry more and it has up
    // links (2 for "2:1"), else 0.
    double oversubscription(int switchId) const;
    // Whether the nodes all link directly to one switch, so that traffic among them need not
    // leave it (true for fewer than two nodes).
    bool shareLeaf(const std::vector<int>& nodeIds) const;
};
// What one device of the node can send off the node, GB/s: the node's NICs (nics x nic_gbit / 8,
// one NIC per device unless nics says otherwise) shared by its devices when it gives nic_gbit,
// else typePerDeviceGBps (the catalog's inter-node figure).
double nicGBpsPerDevice(const Node& n, double typePerDeviceGBps);

// The rule for Node::host, shared by the readers and the launcher export (a host name reaches
// shell scripts, hostfiles and --master_addr): labels of 1-63 letters, digits, '-' and '_',
// not starting or ending with '-', joined by '.', 253 characters at most (RFC 1123 names,
// with the '_' that /etc/hosts and cloud host names use; dotted IPv4 addresses are such
// names). Returns "" for a valid name, else what is wrong ("has an empty label").
std::string hostNameProblem(std::string_view host);
// Text of a value for an error message: at most 60 characters, then "... (N characters)".
std::string shortenedForMessage(std::string_view value);

// Drawing: blocks of nodes (one per leaf switch) side by side, each in rows of at most
// `columns` nodes. Returns the column count (2 to maxColumns, at most the largest block, so
// 1 for blocks of one node)
// whose drawing, `top` plus the rows of the largest block high and the blocks with `gap`
// between them wide, is nearest 4:3 on a log scale: a large cluster fills a window instead
// of a strip it opens at a tenth of its size. Used by the shorthand clusters and by the
// Studio's layout of files without positions.
int layoutColumns(const std::vector<int>& blockSizes, double column, double row, double top, double gap, int maxColumns = 8);

// With a catalog, a node's link to a switch counts at most what the node's NICs can send
// (nics x nic_gbit, or devices x the type's inter-node figure): a link faster than the NICs
// behind it cannot load the switch more. Without one, links count as given.
SwitchUplinks switchUplinks(const Cluster& cluster, const DeviceCatalog* catalog = nullptr);

} // namespace hapmoe
