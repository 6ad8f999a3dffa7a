#pragma once
// Analytic time of a collective on a group of ranks (docs/cost-model.md section 4): the
// algorithm's bytes on the wire over the link's bus bandwidth, where the bus bandwidth is the
// line rate times an efficiency that grows with the message size. The efficiency curves are
// published nccl-tests measurements (../shared/reference/device-specs.md section 5):
//  - intra-node: all-reduce busbw of 8x A100-SXM4-80GB, NCCL 2.18.5 (Azure ND A100 v4), over
//    the 300 GB/s NVLink3 line rate;
//  - inter-node: all-reduce busbw of 4 nodes x 8 B200 over 8x50 GB/s EFA (ml-engineering,
//    network/README.md), over the node's NIC line rate.
// Below the smallest measured size the time stays at the smallest size's time (latency bound).

#include "hardware/Cluster.h"
#include "profile/Profile.h"

namespace hapmoe {

// How a group of ranks is connected.
struct GroupLink {
    LinkClass link = LinkClass::IntraNode;
    double intra_bw = 0;       // bytes/s per device, intra-node line rate (one direction)
    double nic_bw = 0;         // bytes/s per device, inter-node line rate
    int ranks_per_node = 1;    // ranks of the group in one node (inter-node groups)
    bool nvlink4 = false;      // NVLink4/NVSwitch3 node (H100 class): the H100 busbw curve
    bool full_mesh = false;    // a link per peer (xGMI, HCCS): intra_bw is the group's share
    double bridge_bw = 0;      // bytes/s of a cross-vendor bridge (CrossType between vendors)
    double bridge_latency = 0; // seconds
};

double intraNodeEfficiency(double bytes);
// NVLink4 (8x H100, NCCL 2.18.5 with NVLink SHARP, Azure ND H100 v5): all-reduce busbw over
// 450 GB/s; other primitives (ring) are capped at 370 of 450 GB/s (NVIDIA/nccl-tests #212).
double intraNodeEfficiencyNvlink4(double bytes, bool allReduce);
double interNodeEfficiency(double bytes);

// bytes: all-reduce / reduce-scatter input, all-gather output (whole buffer), all-to-all send
// buffer per rank, send-recv message.
double collectiveTime(Collective primitive, double bytes, int groupSize, const GroupLink& g);

// Dispatch (or combine) of the flex dispatcher with DeepEP kernels (deepseek-ai/DeepEP,
// DeepSeek-V3 report section 3.2.2): a token crosses the network once per destination node and
// is forwarded inside the node over NVLink. tokenBytes = tokens of the rank x hidden x bytes.
// Bandwidths are DeepEP's measured ones: 153 GB/s of H800's 200 GB/s NVLink intranode (0.77)
// and 43 GB/s of a 50 GB/s CX7 NIC internode (0.86, the lowest of EP 16/32/64).
double flexDispatchTime(double tokenBytes, int topk, int ep, const GroupLink& g);

} // namespace hapmoe
