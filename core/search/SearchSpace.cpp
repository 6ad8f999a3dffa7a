#include "search/SearchSpace.h"

#include "util/Strings.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace hapmoe {

const std::vector<Knob> SearchSpace::s_none;

namespace {

// Ascending; O(sqrt n), as clusters of tens of thousands of devices have as many group sizes.
std::vector<int> divisorsOf(int n)
{
    std::vector<int> low, high;
    for (int i = 1; static_cast<long long>(i) * i <= n; ++i)
        if (n % i == 0) {
            low.push_back(i);
            if (i != n / i)
                high.push_back(n / i);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

} // namespace

SearchSpace::SearchSpace(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog, int maxDp)
    : m_model(model), m_cluster(cluster), m_catalog(catalog), m_maxDp(std::max(1, maxDp))
{
    std::unordered_map<int, const Node*> byId;   // Cluster::node is a linear scan
    for (const Node& node : cluster.nodes) {
        byId.emplace(node.id, &node);
        if (node.count <= 0)
            continue;
        const DeviceType* dt = catalog.find(node.device_type);
        const std::string name = dt ? dt->name : node.device_type;
        auto it = std::find_if(m_types.begin(), m_types.end(), [&](const TypeInfo& t) { return lower(t.name) == lower(name); });
        if (it == m_types.end()) {
            TypeInfo t;
            t.name = name;
            t.library = dt ? dt->library() : name;
            t.memory_gib = dt ? dt->memory_gib : 0;
            m_types.push_back(t);
            it = m_types.end() - 1;
        }
        it->node_ids.push_back(node.id);
        it->node_counts.push_back(node.count);
        it->node_start.push_back(it->total);
        it->total += node.count;
    }
    m_sizes.resize(m_types.size());
    m_knobs.resize(m_types.size());
    // The drawn links of a node bound its NIC rate in the cost model (docs/cost-model.md
    // section 6), so nodes whose links add up differently are not interchangeable.
    std::map<int, double> linkSum;
    for (const Link& l : cluster.links)
        if (l.bandwidth_gbytes_per_s > 0 && l.a != l.b) {
            linkSum[l.a] += l.bandwidth_gbytes_per_s;
            linkSum[l.b] += l.bandwidth_gbytes_per_s;
        }
    // Behind an oversubscribed leaf switch a group's cost depends on whether its nodes share a
    // switch (docs/cost-model.md section 6): the nodes of a type are alike only when they all do.
    const SwitchUplinks uplinks = switchUplinks(cluster, &catalog);
    for (std::size_t t = 0; t < m_types.size(); ++t) {
        TypeInfo& ti = m_types[t];
        std::map<int, int> bySize;
        for (int c : ti.node_counts)
            bySize[c] += c;
        ti.size_devices.assign(bySize.begin(), bySize.end());
        ti.regular = !uplinks.oversubscribed() || uplinks.shareLeaf(ti.node_ids);
        const Node* first = byId.at(ti.node_ids.front());
        for (int id : ti.node_ids) {
            const Node* n = byId.at(id);
            if (!n || !first || n->count != first->count || n->nics != first->nics || n->nic_gbit != first->nic_gbit
                || n->host_memory_gib != first->host_memory_gib || n->host_link_gbytes_per_s != first->host_link_gbytes_per_s
                || linkSum[n->id] != linkSum[first->id])
                ti.regular = false;
        }
        // Group sizes, each with the distinct values pieceGcd takes over its positions: a
        // slice of a node (d divides the node) has d, whole consecutive nodes the gcd of their
        // sizes. With equal nodes the multiples of one node (linear in the node count),
        // otherwise every run's sum.
        std::map<int, std::set<int>> gcds;
        for (int c : ti.node_counts)
            for (int d : divisorsOf(c))
                gcds[d].insert(d);
        if (ti.size_devices.size() == 1) {
            for (std::size_t k = 2; k <= ti.node_counts.size(); ++k)
                gcds[static_cast<int>(k) * ti.node_counts.front()].insert(ti.node_counts.front());
        } else {
            for (std::size_t a = 0; a < ti.node_counts.size(); ++a) {
                int sum = ti.node_counts[a], g = ti.node_counts[a];
                for (std::size_t b = a + 1; b < ti.node_counts.size(); ++b) {
                    sum += ti.node_counts[b];
                    g = std::gcd(g, ti.node_counts[b]);
                    gcds[sum].insert(g);
                }
            }
        }
        for (const auto& [d, values] : gcds) {
            m_sizes[t].push_back(d);
            buildKnobs(static_cast<int>(t), d, values);
        }
    }
}

int SearchSpace::totalDevices() const
{
    int n = 0;
    for (const TypeInfo& t : m_types)
        n += t.total;
    return n;
}

bool SearchSpace::validGroup(int type, int start, int d) const
{
    const TypeInfo& t = m_types[static_cast<std::size_t>(type)];
    if (d <= 0 || start < 0 || start + d > t.total)
        return false;
    // Node holding position `start`.
    const auto it = std::upper_bound(t.node_start.begin(), t.node_start.end(), start);
    std::size_t node = static_cast<std::size_t>(it - t.node_start.begin()) - 1;
    const int local = start - t.node_start[node];
    if (local + d <= t.node_counts[node])
        return t.node_counts[node] % d == 0 && local % d == 0;
    if (local != 0)
        return false;
    int left = d;
    while (left > 0 && node < t.node_counts.size()) {
        left -= t.node_counts[node];
        ++node;
    }
    return left == 0;
}

int SearchSpace::pieceGcd(int type, int start, int d) const
{
    const TypeInfo& t = m_types[static_cast<std::size_t>(type)];
    std::size_t node = static_cast<std::size_t>(nodeIndex(type, start));
    if (start - t.node_start[node] + d <= t.node_counts[node])
        return d;
    int g = 0;
    for (int left = d; left > 0 && node < t.node_counts.size(); ++node) {
        g = std::gcd(g, t.node_counts[node]);
        left -= t.node_counts[node];
    }
    return g;
}

void SearchSpace::buildKnobs(int type, int d, const std::set<int>& gcds)
{
    // TP and ETP stay inside a node: at each position a group may take, they divide the
    // devices it has on every node (pieceGcd); gcds holds the distinct values.
    SizeKnobs entry;
    entry.d = d;
    entry.vary = gcds.size() > 1;
    auto fitsSomewhere = [&](int tp, int etp) {
        return std::any_of(gcds.begin(), gcds.end(), [&](int g) { return g % tp == 0 && g % etp == 0; });
    };
    const int heads = m_model.num_attention_heads;
    const int groups = m_model.queryGroups();
    const int nodeBound = gcds.empty() ? 1 : *gcds.rbegin();
    // With TP within a node and CP at most 16, a group this large has more replicas than any
    // plan can use (clusters of many thousands of nodes have as many group sizes).
    if (gcds.empty() || d / (static_cast<long long>(nodeBound) * 16) > m_maxDp) {
        m_knobs[static_cast<std::size_t>(type)].push_back(std::move(entry));
        return;
    }
    std::vector<Knob>& out = entry.knobs;
    for (int tp : divisorsOf(d)) {
        if (!fitsSomewhere(tp, 1))
            continue;
        if (heads > 0 && heads % tp != 0)
            continue;
        if (groups > 0 && groups % tp != 0 && tp % groups != 0)
            continue;
        // Megatron-Core's parallel linear layers split the dense FFN evenly over TP.
        if (m_model.ffn_hidden_size > 0 && m_model.numMoeLayers() < m_model.num_layers && m_model.ffn_hidden_size % tp != 0)
            continue;
        for (int cp : divisorsOf(d / tp)) {
            if (cp > 1 && (m_model.seq_length % (2 * cp) != 0 || cp > 16))
                continue;
            // Sequence parallelism (on wherever TP > 1 in the search's plans) scatters each CP
            // rank's tokens over TP.
            if (tp > 1 && m_model.seq_length % (cp * tp) != 0)
                continue;
            const int dp = d / (tp * cp);
            if (dp > m_maxDp)
                continue;
            if (!m_model.isMoe()) {
                out.push_back({tp, cp, dp, 1, 1, d});
                continue;
            }
            for (int ep : divisorsOf(d)) {
                if (m_model.num_experts % ep != 0)
                    continue;
                for (int etp : divisorsOf(d / ep)) {
                    if (!fitsSomewhere(tp, etp) || m_model.expertFfn() % etp != 0)
                        continue;
                    if (etp > 1 && m_model.add_bias_linear)   // Megatron asserts ETP == 1 with bias
                        continue;
                    out.push_back({tp, cp, dp, ep, etp, d / (ep * etp)});
                }
            }
        }
    }
    m_knobs[static_cast<std::size_t>(type)].push_back(std::move(entry));
}

const SearchSpace::SizeKnobs* SearchSpace::sizeKnobs(int type, int d) const
{
    // Built in ascending size order (the sizes come from a std::set).
    const auto& bySize = m_knobs[static_cast<std::size_t>(type)];
    const auto it = std::lower_bound(bySize.begin(), bySize.end(), d, [](const SizeKnobs& entry, int size) { return entry.d < size; });
    return it != bySize.end() && it->d == d ? &*it : nullptr;
}

const std::vector<Knob>& SearchSpace::knobs(int type, int d) const
{
    const SizeKnobs* s = sizeKnobs(type, d);
    return s ? s->knobs : s_none;
}

bool SearchSpace::knobsVary(int type, int d) const
{
    const SizeKnobs* s = sizeKnobs(type, d);
    return s && s->vary;
}

std::vector<DeviceSlot> SearchSpace::slots(int type, int start, int d) const
{
    const TypeInfo& t = m_types[static_cast<std::size_t>(type)];
    std::vector<DeviceSlot> out;
    int pos = start;
    int left = d;
    for (std::size_t n = 0; n < t.node_counts.size() && left > 0; ++n) {
        const int a = t.node_start[n], b = a + t.node_counts[n];
        if (pos >= b)
            continue;
        const int take = std::min(left, b - pos);
        out.push_back({t.node_ids[n], pos - a, take});
        pos += take;
        left -= take;
    }
    return out;
}

int SearchSpace::nodeIndex(int type, int position) const
{
    const TypeInfo& t = m_types[static_cast<std::size_t>(type)];
    const auto it = std::upper_bound(t.node_start.begin(), t.node_start.end(), position);
    return static_cast<int>(it - t.node_start.begin()) - 1;
}

int SearchSpace::canonicalStart(int type, int start) const
{
    const TypeInfo& t = m_types[static_cast<std::size_t>(type)];
    if (!t.regular)
        return start;
    return start % t.node_counts.front();
}

bool SearchSpace::shareNode(int type, int startA, int dA, int typeB, int startB, int dB) const
{
    if (type != typeB || spansNodes(type, startA, dA) || spansNodes(typeB, startB, dB))
        return false;
    return nodeIndex(type, startA) == nodeIndex(typeB, startB);
}

bool SearchSpace::mixesLibraries(unsigned mask) const
{
    std::string lib;
    for (std::size_t t = 0; t < m_types.size(); ++t) {
        if (!(mask & (1u << t)))
            continue;
        if (lib.empty())
            lib = lower(m_types[t].library);
        else if (lower(m_types[t].library) != lib)
            return true;
    }
    return false;
}

} // namespace hapmoe
