#include "hardware/ClusterTopology.h"

#include "util/InputError.h"
#include "util/Strings.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

namespace hapmoe {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                    boost::property<boost::edge_weight_t, double>>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Hosts do not forward traffic: only switches (and the source itself) may be passed
// through on a path.
struct TransitFilter {
    const std::vector<bool>* isNode = nullptr;
    Vertex source = 0;
    bool operator()(Vertex v) const { return !(*isNode)[v] || v == source; }
};

// A node as the canvas shows it (its host), with the id a file's links refer to.
std::string nodeName(const Node& n)
{
    return "node \"" + n.host + "\" (id " + std::to_string(n.id) + ")";
}

// "a", "a and b", "a, b, c and d"; past `most` names, "a, b, c, d and 7 more" (never "1 more":
// the name takes no more room).
std::string listNames(const std::vector<std::string>& names, std::size_t most)
{
    const std::size_t shown = names.size() <= most ? names.size() : most - 1;
    std::string out;
    for (std::size_t i = 0; i < shown; ++i) {
        if (i > 0)
            out += (i + 1 == names.size()) ? " and " : ", ";
        out += names[i];
    }
    if (shown < names.size())
        out += " and " + std::to_string(names.size() - shown) + " more";
    return out;
}

// "node a", "nodes a and b", ... by host (listNames).
std::string nodeList(const Cluster& cluster, const std::vector<int>& ids, std::size_t most = 5)
{
    std::vector<std::string> hosts;
    for (int id : ids) {
        const Node* n = cluster.node(id);
        hosts.push_back(n ? n->host : "id " + std::to_string(id));
    }
    return (ids.size() == 1 ? "node " : "nodes ") + listNames(hosts, most);
}

} // namespace

struct ClusterTopology::Impl {
    Graph graph;
    std::map<int, Vertex> vertexOf;    // node or switch id -> vertex
    std::vector<int> idOf;             // vertex -> id
    std::vector<bool> isNode;          // vertex -> is a node (not a switch)
    std::vector<TopologyProblem> linkProblems;
    std::vector<int> linkCount;        // vertex -> valid links

    mutable std::mutex mutex;
    mutable std::map<Vertex, std::vector<double>> widestFrom;   // source node -> per vertex

    // Widest (max-min) bandwidth from node vertex s to every node vertex.
    const std::vector<double>& widest(Vertex s) const
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = widestFrom.find(s); it != widestFrom.end())
            return it->second;
        const std::size_t n = boost::num_vertices(graph);
        std::vector<double> dist(n, 0.0);
        const TransitFilter filter{&isNode, s};
        boost::filtered_graph<Graph, boost::keep_all, TransitFilter> fg(graph, boost::keep_all(), filter);
        const double inf = std::numeric_limits<double>::infinity();
        // Dijkstra in the (max, min) semiring: a path is as wide as its narrowest link and
        // the widest path wins.
        boost::dijkstra_shortest_paths(
            fg, s,
            boost::weight_map(boost::get(boost::edge_weight, graph))
                .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, graph)))
                .distance_compare(std::greater<double>())
                .distance_combine([](double a, double b) { return std::min(a, b); })
                .distance_inf(0.0)
                .distance_zero(inf));
        // A target node is reached over one of its own links from a switch (or the source).
        std::vector<double> result(n, 0.0);
        const auto weight = boost::get(boost::edge_weight, graph);
        for (Vertex t = 0; t < n; ++t) {
            if (!isNode[t] || t == s)
                continue;
            double best = 0;
            for (auto [e, end] = boost::out_edges(t, graph); e != end; ++e) {
                const Vertex u = boost::target(*e, graph);
                const double w = weight[*e];
                if (u == s)
                    best = std::max(best, w);
                else if (!isNode[u])
                    best = std::max(best, std::min(dist[u], w));
            }
            result[t] = best;
        }
        return widestFrom.emplace(s, std::move(result)).first->second;
    }

    // Nodes that share a link graph component but have no route through switches alone:
    // hosts do not forward (as widest() assumes), so two nodes talk only over a direct link
    // or over one connected fabric of switches. Each node gets the set of "fabrics" it
    // touches (a connected group of switches, or a direct node-node link); two nodes can talk
    // iff their sets meet. Nodes are grouped by set, so a cluster on one fabric costs one pass.
    std::vector<TopologyProblem> unroutedPairs(const Cluster& cluster) const
    {
        const std::size_t n = boost::num_vertices(graph);
        std::vector<std::size_t> parent(n);
        std::iota(parent.begin(), parent.end(), std::size_t{0});
        std::function<std::size_t(std::size_t)> root = [&](std::size_t v) {
            while (parent[v] != v)
                v = parent[v] = parent[parent[v]];
            return v;
        };
        for (auto [e, end] = boost::edges(graph); e != end; ++e) {
            const Vertex a = boost::source(*e, graph), b = boost::target(*e, graph);
            if (!isNode[a] && !isNode[b])
                parent[root(a)] = root(b);
        }
        std::map<Vertex, std::set<long long>> fabrics;   // node vertex -> fabric ids
        long long direct = static_cast<long long>(n);    // ids of direct node-node links
        for (auto [e, end] = boost::edges(graph); e != end; ++e) {
            const Vertex a = boost::source(*e, graph), b = boost::target(*e, graph);
            if (isNode[a] && isNode[b]) {
                fabrics[a].insert(direct);
                fabrics[b].insert(direct++);
            } else if (isNode[a]) {
                fabrics[a].insert(static_cast<long long>(root(b)));
            } else if (isNode[b]) {
                fabrics[b].insert(static_cast<long long>(root(a)));
            }
        }
        std::vector<int> component(n, 0);
        if (n > 0)
            boost::connected_components(graph, component.data());
        std::map<std::set<long long>, std::vector<int>> groups;   // fabric set -> node ids
        for (const auto& [v, set] : fabrics)
            groups[set].push_back(idOf[v]);
        std::vector<TopologyProblem> out;
        for (auto a = groups.begin(); a != groups.end() && out.size() < 8; ++a)
            for (auto b = std::next(a); b != groups.end() && out.size() < 8; ++b) {
                // Nodes in different components are islands, reported on their own.
                if (component[vertexOf.at(a->second.front())] != component[vertexOf.at(b->second.front())])
                    continue;
                const bool meet = std::any_of(a->first.begin(), a->first.end(), [&](long long f) { return b->first.count(f) > 0; });
                if (meet)
                    continue;
                std::vector<int> ids = a->second;
                ids.insert(ids.end(), b->second.begin(), b->second.end());
                out.push_back({TopologyProblem::Kind::NoRoute, ids,
                               nodeList(cluster, a->second) + " cannot reach " + nodeList(cluster, b->second)
                                   + ": no route through switches or a direct link (a host does not forward traffic)"});
            }
        return out;
    }
};

ClusterTopology::ClusterTopology(const Cluster& cluster, const DeviceCatalog& catalog)
    : m_cluster(cluster)
    , m_catalog(catalog)
    , d(std::make_unique<Impl>())
{
    auto addVertex = [&](int id, bool node) {
        if (d->vertexOf.count(id))
            return;   // duplicate ids are reported by validateCluster; the first one wins here
        const Vertex v = boost::add_vertex(d->graph);
        d->vertexOf[id] = v;
        d->idOf.push_back(id);
        d->isNode.push_back(node);
    };
    for (const auto& n : cluster.nodes)
        addVertex(n.id, true);
    for (const auto& s : cluster.switches)
        addVertex(s.id, false);
    d->linkCount.assign(boost::num_vertices(d->graph), 0);
    for (std::size_t i = 0; i < cluster.links.size(); ++i) {
        const Link& l = cluster.links[i];
        const std::string at = "link " + std::to_string(i) + " (" + std::to_string(l.a) + "-" + std::to_string(l.b) + ")";
        const auto ia = d->vertexOf.find(l.a);
        const auto ib = d->vertexOf.find(l.b);
        if (ia == d->vertexOf.end() || ib == d->vertexOf.end()) {
            const int missing = ia == d->vertexOf.end() ? l.a : l.b;
            d->linkProblems.push_back({TopologyProblem::Kind::BadLink, {l.a, l.b},
                                       at + " refers to id " + std::to_string(missing) + ", which is neither a node nor a switch"});
            continue;
        }
        if (l.a == l.b) {
            d->linkProblems.push_back({TopologyProblem::Kind::BadLink, {l.a}, at + " joins id " + std::to_string(l.a) + " to itself"});
            continue;
        }
        if (!(l.bandwidth_gbytes_per_s > 0) || !(l.latency_us >= 0)) {
            d->linkProblems.push_back({TopologyProblem::Kind::BadLink, {l.a, l.b},
                                       at + " needs a positive bandwidth and a non-negative latency"});
            continue;
        }
        boost::add_edge(ia->second, ib->second, l.bandwidth_gbytes_per_s, d->graph);
        ++d->linkCount[ia->second];
        ++d->linkCount[ib->second];
    }
}

ClusterTopology::~ClusterTopology() = default;

double ClusterTopology::widestPath(int nodeA, int nodeB) const
{
    const auto ia = d->vertexOf.find(nodeA);
    const auto ib = d->vertexOf.find(nodeB);
    if (ia == d->vertexOf.end() || ib == d->vertexOf.end() || !d->isNode[ia->second] || !d->isNode[ib->second])
        return 0;
    if (nodeA == nodeB) {
        const Node* n = m_cluster.node(nodeA);
        const DeviceType* t = n ? m_catalog.find(n->device_type) : nullptr;
        return t ? t->intra_node_gbps : 0;
    }
    return d->widest(ia->second)[ib->second];
}

double ClusterTopology::bottleneck(const std::vector<int>& groupA, const std::vector<int>& groupB) const
{
    if (groupA.empty() || groupB.empty())
        return 0;
    double worst = std::numeric_limits<double>::infinity();
    for (int a : groupA)
        for (int b : groupB)
            worst = std::min(worst, widestPath(a, b));
    return worst;
}

std::vector<std::vector<int>> ClusterTopology::components() const
{
    const std::size_t n = boost::num_vertices(d->graph);
    std::vector<int> comp(n, 0);
    if (n > 0)
        boost::connected_components(d->graph, comp.data());
    // Components in the order of their first node; switches alone do not form one.
    std::map<int, std::size_t> index;
    std::vector<std::vector<int>> out;
    for (Vertex v = 0; v < n; ++v) {
        if (!d->isNode[v])
            continue;
        auto [it, inserted] = index.emplace(comp[v], out.size());
        if (inserted)
            out.emplace_back();
        out[it->second].push_back(d->idOf[v]);
    }
    return out;
}

std::vector<TopologyProblem> ClusterTopology::problems() const
{
    std::vector<TopologyProblem> out;
    if (m_cluster.totalDevices() <= 0)
        out.push_back({TopologyProblem::Kind::NoDevices, {}, "the cluster has no devices"});
    for (const auto& n : m_cluster.nodes) {
        if (!m_catalog.find(n.device_type))
            out.push_back({TopologyProblem::Kind::UnknownDevice, {n.id},
                           nodeName(n) + " has the unknown device type \"" + n.device_type + "\""});
    }
    // A host name on two nodes (host names ignore case, RFC 4343): a launcher's hostfile could
    // not tell them apart, so the readers refuse such a file (Documents.cpp); an editor may
    // pass through it while renaming.
    std::map<std::string, std::vector<int>> byHost;
    for (const auto& n : m_cluster.nodes)
        byHost[lower(n.host)].push_back(n.id);
    for (const auto& n : m_cluster.nodes) {
        const auto it = byHost.find(lower(n.host));
        if (it == byHost.end() || it->second.size() < 2)
            continue;
        bool sameSpelling = true;
        std::vector<std::string> named;   // each node as spelt, with its id
        for (int id : it->second) {
            const Node* other = m_cluster.node(id);
            sameSpelling = sameSpelling && other && other->host == n.host;
            named.push_back(other ? "\"" + other->host + "\" (id " + std::to_string(id) + ")" : "id " + std::to_string(id));
        }
        out.push_back({TopologyProblem::Kind::DuplicateHost, it->second,
                       "host \"" + n.host + "\" names " + std::to_string(it->second.size()) + " nodes, " + listNames(named, 5)
                           + (sameSpelling ? "" : " (host names ignore case)") + "; a launcher's hostfile needs a name per node"});
        byHost.erase(it);   // one problem per name, at its first node
    }
    out.insert(out.end(), d->linkProblems.begin(), d->linkProblems.end());
    std::set<int> unlinked;
    if (m_cluster.nodes.size() > 1) {
        for (const auto& n : m_cluster.nodes) {
            const auto it = d->vertexOf.find(n.id);
            if (it != d->vertexOf.end() && d->linkCount[it->second] == 0) {
                unlinked.insert(n.id);
                out.push_back({TopologyProblem::Kind::Unlinked, {n.id},
                               nodeName(n) + " has no link to any switch or node"});
            }
        }
    }
    const auto comps = components();
    if (comps.size() > 1) {
        // The largest component is the cluster; every other one is an island (a lone
        // unlinked node is already reported above).
        std::size_t main = 0;
        for (std::size_t i = 1; i < comps.size(); ++i)
            if (comps[i].size() > comps[main].size())
                main = i;
        for (std::size_t i = 0; i < comps.size(); ++i) {
            if (i == main || (comps[i].size() == 1 && unlinked.count(comps[i].front())))
                continue;
            out.push_back({TopologyProblem::Kind::Island, comps[i],
                           nodeList(m_cluster, comps[i], 8) + (comps[i].size() == 1 ? " is an island" : " form an island")
                               + ": no path to the " + (comps[main].size() == 1 ? std::string("node") : std::to_string(comps[main].size()) + " nodes")
                               + " of the largest connected part"});
        }
    }
    const std::vector<TopologyProblem> routes = d->unroutedPairs(m_cluster);
    out.insert(out.end(), routes.begin(), routes.end());
    return out;
}

LinkClass ClusterTopology::classify(const std::vector<int>& nodeIds) const
{
    std::set<int> distinct(nodeIds.begin(), nodeIds.end());
    if (distinct.size() <= 1)
        return LinkClass::IntraNode;
    std::set<std::string> types;
    for (int id : distinct) {
        const Node* n = m_cluster.node(id);
        if (!n)
            continue;
        const DeviceType* t = m_catalog.find(n->device_type);
        types.insert(t ? t->name : n->device_type);
    }
    return types.size() <= 1 ? LinkClass::InterNode : LinkClass::CrossType;
}

std::vector<std::pair<std::string, std::vector<int>>> ClusterTopology::nodesByType() const
{
    std::vector<std::pair<std::string, std::vector<int>>> out;
    for (const auto& n : m_cluster.nodes) {
        const DeviceType* t = m_catalog.find(n.device_type);
        const std::string name = t ? t->name : n.device_type;
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == name; });
        if (it == out.end())
            out.push_back({name, {n.id}});
        else
            it->second.push_back(n.id);
    }
    return out;
}

std::vector<std::string> ClusterTopology::typeOrder() const
{
    const auto groups = nodesByType();
    const std::size_t k = groups.size();
    std::vector<std::string> names;
    for (const auto& g : groups)
        names.push_back(g.first);
    if (k <= 2)
        return names;
    std::vector<std::vector<double>> bw(k, std::vector<double>(k, 0));
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = i + 1; j < k; ++j)
            bw[i][j] = bw[j][i] = bottleneck(groups[i].second, groups[j].second);
    // Score of an order: its narrowest boundary first, then the sum of boundaries.
    auto score = [&](const std::vector<std::size_t>& order) {
        double minimum = std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t i = 0; i + 1 < order.size(); ++i) {
            minimum = std::min(minimum, bw[order[i]][order[i + 1]]);
            sum += bw[order[i]][order[i + 1]];
        }
        return std::make_pair(minimum, sum);
    };
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), 0);
    std::vector<std::size_t> best = order;
    if (k <= 8) {
        auto bestScore = score(order);
        while (std::next_permutation(order.begin(), order.end())) {
            const auto s = score(order);
            if (s > bestScore) {
                bestScore = s;
                best = order;
            }
        }
    } else {
        // Greedy chain from the first type: always continue over the widest boundary.
        std::vector<bool> used(k, false);
        best.clear();
        best.push_back(0);
        used[0] = true;
        while (best.size() < k) {
            std::size_t next = k;
            for (std::size_t j = 0; j < k; ++j)
                if (!used[j] && (next == k || bw[best.back()][j] > bw[best.back()][next]))
                    next = j;
            used[next] = true;
            best.push_back(next);
        }
    }
    std::vector<std::string> out;
    for (std::size_t i : best)
        out.push_back(names[i]);
    return out;
}

void requireConnected(const Cluster& cluster, const DeviceCatalog& catalog, const std::string& source,
                      const std::vector<int>& nodeIds)
{
    if (cluster.nodes.size() <= 1)
        return;
    const ClusterTopology topology(cluster, catalog);
    const std::string fix = "; a plan cannot run across nodes that do not reach each other: link them (to a switch or to "
                            "each other) or remove them";
    if (!nodeIds.empty()) {
        const std::set<int> used(nodeIds.begin(), nodeIds.end());
        if (used.size() <= 1)
            return;
        std::map<int, std::size_t> componentOf;
        const auto comps = topology.components();
        for (std::size_t c = 0; c < comps.size(); ++c)
            for (int id : comps[c])
                componentOf[id] = c;
        // The first used node's part; every used node outside it is named.
        const int anchor = *used.begin();
        std::string hosts;
        for (int id : used)
            if (componentOf[id] != componentOf[anchor]) {
                const Node* n = cluster.node(id);
                hosts += (hosts.empty() ? "" : ", ") + (n ? n->host : std::to_string(id));
            }
        if (!hosts.empty()) {
            const Node* n = cluster.node(anchor);
            throw InputError(source, "links", "the plan uses nodes with no path between them (" + hosts + " cannot reach "
                                                  + (n ? n->host : std::to_string(anchor)) + ")" + fix);
        }
        return;
    }
    for (const TopologyProblem& p : topology.problems())
        if (p.kind == TopologyProblem::Kind::Unlinked || p.kind == TopologyProblem::Kind::Island
            || p.kind == TopologyProblem::Kind::NoRoute)
            throw InputError(source, "links", p.message + fix);
}

} // namespace hapmoe
