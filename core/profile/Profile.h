#pragma once
// Measured lookup tables (format "hapmoe.profile") that override the analytic defaults of
// the cost model (DESIGN section 2, paper section 3.3). Without a profile every number
// comes from the device catalog and the analytic formulas, and the prediction says so.

#include "hardware/Cluster.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hapmoe {

// Forward and backward time of one micro-batch through one transformer layer on one
// device, under (TP, CP), for a given number of tokens per device-replica (mbs * seq / CP).
struct ComputeEntry {
    std::string device_type;
    int tp = 1;
    int cp = 1;
    long long tokens = 0;
    double dense_layer_fwd_s = 0;   // whole dense layer (attention + FFN), forward
    double dense_layer_bwd_s = 0;
    double ffn_fwd_s = 0;           // the dense FFN part alone (replaced by experts in MoE layers)
    double ffn_bwd_s = 0;
};

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
const char* toString(Collective c);

struct CollectiveEntry {
    Collective primitive = Collective::AllReduce;
    LinkClass link = LinkClass::IntraNode;
    int group_size = 2;
    double bytes = 0;               // message size per rank
    double time_s = 0;
    std::string device_type;        // empty: any device type
};

struct MemoryCalibration {
    std::string device_type;
    double fixed_overhead_gib = 0;  // CUDA context, allocator slack, workspace
    double activation_factor = 1;   // measured / analytic activation memory
};

struct Profile {
    std::string name;
    std::string source;             // e.g. "calibrated from train.log (hapmoe calibrate)"
    std::vector<ComputeEntry> compute;
    std::vector<CollectiveEntry> collectives;
    std::vector<MemoryCalibration> memory;
    std::map<std::string, double> device_efficiency;  // device type -> achieved fraction of peak
    std::optional<double> router_imbalance;           // calibrated rho

    bool empty() const
    {
        return compute.empty() && collectives.empty() && memory.empty() && device_efficiency.empty()
            && !router_imbalance;
    }
};

} // namespace hapmoe
