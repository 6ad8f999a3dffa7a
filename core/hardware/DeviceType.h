#pragma once
// One accelerator type of the device catalog. Figures are per device; sources are kept
// per field (see resources/devices.json and ../shared/reference/device-specs.md).

#include <map>
#include <string>
#include <vector>

namespace hapmoe {

struct DeviceType {
    std::string name;                  // canonical name, e.g. "H800"
    std::vector<std::string> aliases;  // e.g. "H800-SXM", "NVIDIA H800"
    std::string vendor;                // "NVIDIA", "AMD", "Huawei", "Intel"
    double bf16_tflops = 0;            // dense BF16 peak, TFLOP/s
    double fp8_tflops = 0;             // dense FP8 peak, TFLOP/s; 0 = no FP8 tensor cores
    double memory_gib = 0;             // device memory as the vendor states it (GB used as GiB)
    double hbm_gbps = 0;               // memory bandwidth, GB/s
    // The fraction of hbm_gbps a streaming kernel reaches (a measured STREAM copy over the
    // nominal figure); 0 = none published, and the cost model takes its default (0.8).
    double hbm_efficiency = 0;
    std::string intra_link_kind;       // "NVLink4", "xGMI", "HCCS", "PCIe4", "RoCE"
    double intra_node_gbps = 0;        // per-device unidirectional intra-node bandwidth, GB/s
    double inter_node_gbps = 0;        // per-device inter-node (NIC) bandwidth, GB/s
    std::string collective_library;    // "NCCL", "RCCL", "HCCL", "HCCL-Gaudi"
    double compute_capability = 0;     // CUDA compute capability (0 when not CUDA)
    double default_efficiency = 0.5;   // achievable fraction of bf16 peak for large GEMMs
    int default_devices_per_node = 8;
    std::map<std::string, std::string> sources;  // field name -> source of the figure
    std::string notes;

    // The collective library its ranks speak, or its vendor when the catalog names none: ranks
    // of two libraries share no communicator (one Megatron-LM job, the cross-vendor bridge).
    bool hasFp8() const { return fp8_tflops > 0; }

    const std::string& library() const { return collective_library.empty() ? vendor : collective_library; }
};

} // namespace hapmoe
