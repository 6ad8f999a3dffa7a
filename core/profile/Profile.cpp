#include "profile/Profile.h"

namespace hapmoe {

// The names of nccl-tests' programs (all_reduce_perf, ...), used in hapmoe.profile files.
const char* toString(Collective c)
{
    switch (c) {
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::SendRecv: return "send_recv";
    case Collective::AllReduce: break;
    }
    return "all_reduce";
}

} // namespace hapmoe
