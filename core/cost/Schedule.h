#pragma once
// The event-driven pipeline simulator (plain and interleaved 1F1B) and the closed form of
// the paper's eq. 4 and 5 (appendix B). The simulator gives the start and end of every
// forward and backward block on every stage; it feeds the GUI timeline and the
// Chrome/Perfetto trace, and checks the closed form.

#include <string>
#include <vector>

namespace hapmoe {

struct ScheduleBlock {
    int stage = 0;          // pipeline rank
    int microbatch = 0;
    int chunk = 0;          // virtual stage index on this rank (0 for plain 1F1B)
    bool forward = true;
    double start = 0;
    double end = 0;
};

struct ScheduleInput {
    std::vector<double> t_fwd;   // per pipeline rank, per micro-batch, per chunk
    std::vector<double> t_bwd;
    std::vector<double> p2p;     // send time from rank i to rank i+1 (size PP-1, may be empty)
    int microbatches = 1;
    int vpp = 1;
};

struct Schedule {
    std::vector<ScheduleBlock> blocks;
    double makespan = 0;                 // end of the last backward
    std::vector<double> busy;            // per rank
    int bottleneck_stage = 0;
};

// Throws std::invalid_argument when t_fwd/t_bwd sizes differ, or when vpp > 1 and the number
// of micro-batches is not a multiple of the pipeline size (Megatron's interleaved schedule
// with the default micro-batch group of PP requires it).
Schedule simulatePipeline(const ScheduleInput& in);

// Closed form (paper eq. 4-5): T_edge + T_middle for plain 1F1B, without p2p.
double closedFormPipelineTime(const std::vector<double>& t_fwd, const std::vector<double>& t_bwd, int microbatches);

// Writes the schedule as Chrome/Perfetto trace-event JSON ("traceEvents", "X" events,
// one thread per stage, microseconds).
std::string toChromeTrace(const Schedule& schedule, const std::vector<std::string>& stageNames);

} // namespace hapmoe
