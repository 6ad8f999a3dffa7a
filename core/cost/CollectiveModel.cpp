#include "cost/CollectiveModel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace hapmoe {

namespace {

constexpr double MiB = 1024.0 * 1024.0;
constexpr double GiB = 1024.0 * MiB;

// (bytes, busbw / line rate). Azure ND A100 v4, nccl-tests all_reduce_perf, NCCL 2.18.5:
// 36.22, 109.22, 174.18, 228.10, 231.58 GB/s over NVLink3 300 GB/s.
constexpr std::array<std::pair<double, double>, 5> kIntra{{
    {1 * MiB, 36.22 / 300}, {16 * MiB, 109.22 / 300}, {128 * MiB, 174.18 / 300},
    {1 * GiB, 228.10 / 300}, {8 * GiB, 231.58 / 300}}};

// Azure ND H100 v5, nccl-tests all_reduce_perf, NCCL 2.18.5 (NVLS): 43.70, 234.45, 400.61,
// 466.35, 478.87 GB/s over NVLink4 450 GB/s (device-specs.md section 5.1).
constexpr std::array<std::pair<double, double>, 5> kIntraNvlink4{{
    {1 * MiB, 43.70 / 450}, {16 * MiB, 234.45 / 450}, {128 * MiB, 400.61 / 450},
    {1 * GiB, 466.35 / 450}, {8 * GiB, 478.87 / 450}}};
// NCCL maintainer (nccl-tests #212): about 370 GB/s effective for non-all-reduce operations.
constexpr double kNvlink4RingCap = 370.0 / 450.0;

// ml-engineering network/README.md, 4 nodes x 8 B200, 8x50 GB/s EFA v4 per node, all-reduce
// busbw 5.37, 64.43, 197.94, 361.99, 377.34, 381.80 GB/s over the node's 400 GB/s of NICs.
constexpr std::array<std::pair<double, double>, 6> kInter{{
    {1 * MiB, 5.37 / 400}, {16 * MiB, 64.43 / 400}, {128 * MiB, 197.94 / 400},
    {1 * GiB, 361.99 / 400}, {4 * GiB, 377.34 / 400}, {16 * GiB, 381.80 / 400}}};

// One send-recv between two nodes is one message on one NIC pair, not a ring of 2(n-1)
// latency-bound steps: the all-reduce curve above would charge a 1 MiB send 0.45 ms. It is
// costed as latency + bytes / (NIC rate x efficiency): "CX-7 NICs at NDR rate (400Gbps)
// should achieve up to 48-49GB/s per NIC" (NCCL maintainer, nccl-tests #267) of the 50 GB/s
// line rate, and the 20 us InfiniBand latency of Calculon's A100 system (systems/a100_80g.json).
constexpr double kNicSendRecvEfficiency = 48.5 / 50.0;
constexpr double kNicSendRecvLatency = 20e-6;
// The same holds for a send inside a node: one copy over the pair's links, 10 us (Calculon's
// NVLink latency) + bytes at the link's usable fraction: 370 of 450 GB/s on NVLink4 (the
// NCCL maintainer's figure for non-all-reduce operations, nccl-tests #212), about 75 % of an
// xGMI link (ROCm blog, device-specs.md), else the top of the 8-GPU curve (0.772).
constexpr double kIntraSendRecvLatency = 10e-6;
constexpr double kMeshLinkUsable = 0.75;

template <std::size_t N>
double efficiency(const std::array<std::pair<double, double>, N>& curve, double bytes)
{
    if (bytes <= curve[0].first)   // latency bound: constant time, efficiency proportional to size
        return curve[0].second * std::max(bytes, 1.0) / curve[0].first;
    if (bytes >= curve[N - 1].first)
        return curve[N - 1].second;
    std::size_t hi = 1;
    while (curve[hi].first < bytes)
        ++hi;
    const auto& a = curve[hi - 1];
    const auto& b = curve[hi];
    const double t = std::log(bytes / a.first) / std::log(b.first / a.first);
    return a.second * std::exp(t * std::log(b.second / a.second));
}

} // namespace

double intraNodeEfficiency(double bytes) { return efficiency(kIntra, bytes); }
double interNodeEfficiency(double bytes) { return efficiency(kInter, bytes); }
double intraNodeEfficiencyNvlink4(double bytes, bool allReduce)
{
    const double e = efficiency(kIntraNvlink4, bytes);
    return allReduce ? e : std::min(e, kNvlink4RingCap);
}

double collectiveTime(Collective primitive, double bytes, int n, const GroupLink& g)
{
    if (bytes <= 0)
        return 0;
    if (primitive != Collective::SendRecv && n <= 1)
        return 0;
    const double nn = n;
    // Bytes each rank puts on the wire, in units of the buffer size (ring algorithms).
    double wire = 0;
    switch (primitive) {
    case Collective::AllReduce: wire = 2.0 * (nn - 1) / nn; break;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: wire = (nn - 1) / nn; break;
    case Collective::SendRecv: wire = 1.0; break;
    }

    if (g.link == LinkClass::CrossType && g.bridge_bw > 0) {
        // A bridge between vendors (gloo over TCP or a cross-vendor library): each rank's
        // traffic crosses its own connection, no faster than the bridge figure or its NIC,
        // plus a latency per step.
        const double steps = primitive == Collective::SendRecv ? 1.0 : 2.0 * (nn - 1);
        const double bw = g.nic_bw > 0 ? std::min(g.bridge_bw, g.nic_bw) : g.bridge_bw;
        return wire * bytes / bw + steps * g.bridge_latency;
    }

    // The curves are indexed by the bytes each device (or NIC) moves, converted to the buffer
    // size of the measured all-reduce that moves as much: fixed costs are amortised over the
    // traffic, not over the buffer. 8-GPU all-reduce: 2 * 7/8 of the buffer per GPU;
    // 32-GPU all-reduce over 8 NICs per node: 2 * 31/32 / 8 of the buffer per NIC.
    const double perRank = wire * bytes;
    const double intraBus = g.intra_bw
        * (g.nvlink4 ? intraNodeEfficiencyNvlink4(perRank / (2.0 * 7.0 / 8.0), primitive == Collective::AllReduce)
                     : intraNodeEfficiency(perRank / (2.0 * 7.0 / 8.0)));
    if (g.link == LinkClass::IntraNode) {
        if (primitive == Collective::SendRecv) {
            const double usable = g.nvlink4 ? kNvlink4RingCap : g.full_mesh ? kMeshLinkUsable : kIntra.back().second;
            return kIntraSendRecvLatency + bytes / (g.intra_bw * usable);
        }
        if (primitive == Collective::AllReduce && g.nvlink4) {
            // NVLink SHARP reduces in the switch: each GPU sends its buffer once and receives
            // the sum once, whatever the group's size, so the measured 8-GPU all-reduce (whose
            // busbw counts the ring's 2 x 7/8 of the buffer) gives the time of a buffer of that
            // size for any group. A ring moves 2(n-1)/n of it at the ring cap. NCCL's tuner runs
            // the faster: NVLS for 8 ranks (the measurement), the ring for 2, whose 1 x buffer
            // per GPU an NVLS pass cannot beat (docs/cost-model.md section 4.1).
            const double nvls = 2.0 * 7.0 / 8.0 * bytes / (g.intra_bw * efficiency(kIntraNvlink4, bytes));
            const double ring = wire * bytes / (g.intra_bw * intraNodeEfficiencyNvlink4(perRank / (2.0 * 7.0 / 8.0), false));
            return std::min(nvls, ring);
        }
        return wire * bytes / intraBus;
    }

    // Inter-node (same vendor, possibly different device types).
    const int r = std::clamp(g.ranks_per_node, 1, n);
    auto nicEff = [](double nicBytes) { return interNodeEfficiency(nicBytes / (2.0 * 31.0 / 32.0 / 8.0)); };
    if (primitive == Collective::SendRecv)
        return kNicSendRecvLatency + bytes / (g.nic_bw * kNicSendRecvEfficiency);
    if (primitive == Collective::AllToAll) {
        // The part for peers on other nodes crosses the NICs; the local part goes over the
        // intra-node link in parallel (all-to-all cannot aggregate NICs: nccl-tests #267).
        const double remote = bytes * (nn - r) / nn;
        const double local = bytes * (r - 1) / nn;
        // One NIC's worth, "48-49GB/s per NIC" for all-to-all (nccl-tests #267), after the
        // latency of one message: not the ring curve's 2(n-1) latency-bound steps.
        const double tRemote = remote > 0 ? kNicSendRecvLatency + remote / (g.nic_bw * kNicSendRecvEfficiency) : 0.0;
        const double tLocal = r > 1 ? local / intraBus : 0.0;
        return std::max(tRemote, tLocal);
    }
    // Rings cross each node boundary once per ring; the r ranks of a node drive r NICs, each
    // NIC carrying 1/r of a rank's ring traffic (as the measured all-reduce's 8 NICs per node
    // carry 1/8 each): the curve is indexed by that.
    const double nicBus = r * g.nic_bw * nicEff(perRank / r);
    const double bus = r > 1 ? std::min(nicBus, intraBus) : nicBus;
    return wire * bytes / bus;
}

double flexDispatchTime(double tokenBytes, int topk, int ep, const GroupLink& g)
{
    if (tokenBytes <= 0 || ep <= 1)
        return 0;
    constexpr double kIntraEff = 153.0 / 200.0;
    constexpr double kInterEff = 43.0 / 50.0;
    const double k = std::max(1, topk);
    const double local = tokenBytes * k * (ep - 1.0) / ep;
    if (g.link == LinkClass::IntraNode)
        return local / (g.intra_bw * kIntraEff);
    if (g.link == LinkClass::CrossType && g.bridge_bw > 0)
        return tokenBytes * k * (ep - 1.0) / ep / g.bridge_bw + g.bridge_latency;
    // Destination nodes of a token whose k experts are spread uniformly over the EP group's
    // nodes: N (1 - (1 - 1/N)^k), of which (N - 1)/N are remote.
    const double nodes = std::max(2.0, static_cast<double>(ep) / std::clamp(g.ranks_per_node, 1, ep));
    const double distinct = nodes * (1.0 - std::pow(1.0 - 1.0 / nodes, k));
    const double remote = tokenBytes * distinct * (nodes - 1.0) / nodes;
    // After one RDMA message's latency, as for the other transfers between nodes.
    const double tRemote = kNicSendRecvLatency + remote / (g.nic_bw * kInterEff);
    const double tForward = tokenBytes * k * (g.ranks_per_node - 1.0) / ep / (g.intra_bw * kIntraEff);
    return std::max(tRemote, tForward);
}

} // namespace hapmoe
