// The event-driven pipeline simulator (docs/cost-model.md section 9). Each rank runs its
// blocks in the order Megatron-LM's schedules give it (megatron/core/pipeline_parallel/
// schedules.py: forward_backward_pipelining_without_interleaving and
// forward_backward_pipelining_with_interleaving); a block starts when its rank is free and
// its input has arrived (the producing block's end plus the p2p time).

#include "cost/Schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace hapmoe {

namespace {

struct Op {
    int mb = 0;
    int chunk = 0;
    bool forward = true;
};

// (micro-batch, chunk) of the k-th forward (or backward) block of a rank under the
// interleaved schedule: groups of PP micro-batches go through chunk 0, then chunk 1, ...
// (backward through the chunks in reverse).
std::vector<Op> blockSequence(int M, int P, int V, bool forward)
{
    std::vector<Op> seq;
    seq.reserve(static_cast<std::size_t>(M) * V);
    for (int g = 0; g < M; g += P) {
        const int gs = std::min(P, M - g);
        for (int c = 0; c < V; ++c)
            for (int j = 0; j < gs; ++j)
                seq.push_back({g + j, forward ? c : V - 1 - c, forward});
    }
    return seq;
}

std::vector<Op> rankOrder(int r, int M, int P, int V)
{
    std::vector<Op> order;
    const int total = M * V;
    order.reserve(static_cast<std::size_t>(total) * 2);
    int warmup = 0;
    if (V == 1)
        warmup = std::min(P - r - 1, M);
    else if (M == P)   // schedules.py: all forwards first, then all backwards
        warmup = total;
    else
        warmup = std::min((P - r - 1) * 2 + (V - 1) * P, total);
    const auto fwd = blockSequence(M, P, V, true);
    const auto bwd = blockSequence(M, P, V, false);
    for (int k = 0; k < warmup; ++k)
        order.push_back(fwd[static_cast<std::size_t>(k)]);
    const int steady = total - warmup;
    for (int k = 0; k < steady; ++k) {
        order.push_back(fwd[static_cast<std::size_t>(warmup + k)]);
        order.push_back(bwd[static_cast<std::size_t>(k)]);
    }
    for (int k = steady; k < total; ++k)
        order.push_back(bwd[static_cast<std::size_t>(k)]);
    return order;
}

// A block's time: its chunk's own when the input gives the rank's chunks, else the rank's.
double blockTime(const ScheduleInput& in, int r, int chunk, bool forward)
{
    const auto& chunks = forward ? in.chunk_fwd : in.chunk_bwd;
    const std::size_t rank = static_cast<std::size_t>(r);
    if (rank < chunks.size() && static_cast<std::size_t>(chunk) < chunks[rank].size())
        return chunks[rank][static_cast<std::size_t>(chunk)];
    return forward ? in.t_fwd[rank] : in.t_bwd[rank];
}

} // namespace

Schedule simulatePipeline(const ScheduleInput& in)
{
    const int P = static_cast<int>(in.t_fwd.size());
    if (P == 0 || in.t_bwd.size() != in.t_fwd.size())
        throw std::invalid_argument("simulatePipeline: t_fwd and t_bwd need one entry per rank");
    for (const auto* chunks : {&in.chunk_fwd, &in.chunk_bwd})
        for (const std::vector<double>& rank : *chunks)
            if (!rank.empty() && rank.size() != static_cast<std::size_t>(std::max(1, in.vpp)))
                throw std::invalid_argument("simulatePipeline: chunk times need one entry per virtual stage");
    const int M = std::max(1, in.microbatches);
    const int V = std::max(1, in.vpp);
    if (V > 1 && M % P != 0)
        throw std::invalid_argument("simulatePipeline: the interleaved schedule needs the number of micro-batches ("
                                    + std::to_string(M) + ") to be a multiple of the pipeline size (" + std::to_string(P)
                                    + "), as Megatron-LM requires");
    auto p2pAfter = [&](int r) {   // from rank r to rank r+1 (or the last rank to rank 0)
        return r >= 0 && r < static_cast<int>(in.p2p.size()) ? in.p2p[static_cast<std::size_t>(r)] : 0.0;
    };

    // end times per (rank, chunk, micro-batch), -1 = not yet run
    const std::size_t n = static_cast<std::size_t>(P) * V * M;
    std::vector<double> fEnd(n, -1.0), bEnd(n, -1.0);
    auto idx = [&](int r, int c, int mb) {
        return (static_cast<std::size_t>(r) * V + static_cast<std::size_t>(c)) * M + static_cast<std::size_t>(mb);
    };

    std::vector<std::vector<Op>> orders;
    orders.reserve(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r)
        orders.push_back(rankOrder(r, M, P, V));
    std::vector<std::size_t> next(static_cast<std::size_t>(P), 0);
    std::vector<double> free(static_cast<std::size_t>(P), 0.0);

    Schedule out;
    if (in.keep_blocks)
        out.blocks.reserve(n * 2);
    out.busy.assign(static_cast<std::size_t>(P), 0.0);
    out.rank_end.assign(static_cast<std::size_t>(P), 0.0);
    out.chunk_bwd_end.assign(static_cast<std::size_t>(P), std::vector<double>(static_cast<std::size_t>(V), 0.0));
    out.chunk_fwd_start.assign(static_cast<std::size_t>(P), std::vector<double>(static_cast<std::size_t>(V), -1.0));
    std::size_t done = 0;
    const std::size_t all = n * 2;
    while (done < all) {
        bool progress = false;
        for (int r = 0; r < P; ++r) {
            auto& ord = orders[static_cast<std::size_t>(r)];
            auto& k = next[static_cast<std::size_t>(r)];
            while (k < ord.size()) {
                const Op op = ord[k];
                double ready = 0;
                bool ok = true;
                if (op.forward) {
                    if (r > 0) {
                        const double e = fEnd[idx(r - 1, op.chunk, op.mb)];
                        ok = e >= 0;
                        ready = e + p2pAfter(r - 1);
                    } else if (op.chunk > 0) {
                        const double e = fEnd[idx(P - 1, op.chunk - 1, op.mb)];
                        ok = e >= 0;
                        ready = e + p2pAfter(P - 1);
                    }
                } else {
                    if (r < P - 1) {
                        const double e = bEnd[idx(r + 1, op.chunk, op.mb)];
                        ok = e >= 0;
                        ready = e + p2pAfter(r);
                    } else if (op.chunk < V - 1) {
                        const double e = bEnd[idx(0, op.chunk + 1, op.mb)];
                        ok = e >= 0;
                        ready = e + p2pAfter(P - 1);
                    } else {
                        const double e = fEnd[idx(r, op.chunk, op.mb)];
                        ok = e >= 0;
                        ready = e;
                    }
                }
                if (!ok)
                    break;
                const double dur = blockTime(in, r, op.chunk, op.forward);
                const double start = std::max(free[static_cast<std::size_t>(r)], ready);
                const double end = start + dur;
                free[static_cast<std::size_t>(r)] = end;
                (op.forward ? fEnd : bEnd)[idx(r, op.chunk, op.mb)] = end;
                if (in.keep_blocks)
                    out.blocks.push_back({r, op.mb, op.chunk, op.forward, start, end});
                out.rank_end[static_cast<std::size_t>(r)] = end;
                if (!op.forward) {
                    double& chunkEnd = out.chunk_bwd_end[static_cast<std::size_t>(r)][static_cast<std::size_t>(op.chunk)];
                    chunkEnd = std::max(chunkEnd, end);
                } else if (double& first = out.chunk_fwd_start[static_cast<std::size_t>(r)][static_cast<std::size_t>(op.chunk)]; first < 0) {
                    first = start;
                }
                out.busy[static_cast<std::size_t>(r)] += dur;
                out.makespan = std::max(out.makespan, end);
                ++k;
                ++done;
                progress = true;
            }
        }
        if (!progress)
            throw std::logic_error("simulatePipeline: the schedule deadlocked");
    }
    out.bottleneck_stage = static_cast<int>(std::max_element(out.busy.begin(), out.busy.end()) - out.busy.begin());
    return out;
}

ScheduleInput scheduleInput(const std::vector<StageEstimate>& stages, int microbatches, int vpp)
{
    ScheduleInput in;
    in.microbatches = microbatches;
    in.vpp = std::max(1, vpp);
    for (const StageEstimate& st : stages) {
        in.t_fwd.push_back(st.t_fwd / in.vpp);
        in.t_bwd.push_back(st.t_bwd / in.vpp);
        const bool own = st.chunk_fwd.size() == static_cast<std::size_t>(in.vpp) && st.chunk_bwd.size() == st.chunk_fwd.size();
        in.chunk_fwd.push_back(own ? st.chunk_fwd : std::vector<double>());
        in.chunk_bwd.push_back(own ? st.chunk_bwd : std::vector<double>());
    }
    return in;
}

namespace {
// With interleaving every chunk of a rank is a module of its own with its own buffers
// (docs/cost-model.md section 7). With --overlap-grad-reduce a chunk's reduce-scatter starts
// bucket by bucket during its last backward and runs on while the rank waits for other
// chunks' gradients in the cool-down: the reduce-scatters queue on one stream in the order
// the chunks finish, each starting no earlier than its chunk's backward window before its end,
// its last bucket not before that end; what is left after the rank's last block is exposed.
// With --overlap-param-gather the all-gathers, issued in chunk order as the iteration starts,
// need only end by the chunk's first forward (its compute hiding the buckets after its
// first): the exposed part is the most any chunk waits. Each replaces the whole-rank estimate
// (the collective less one micro-batch's pass) that estimateStage made without the schedule.
void overlapChunkSyncs(StageEstimate& st, const std::vector<double>& chunkEnd, double rankEnd, const std::vector<double>& chunkStart)
{
    const std::size_t v = chunkEnd.size();
    const bool chunkReduce = v >= 2 && st.chunk_reduce.size() == v && st.chunk_reduce_last.size() == v && st.chunk_reduce_window.size() == v;
    const bool chunkGather = v >= 2 && st.chunk_gather.size() == v && st.chunk_gather_last.size() == v
        && st.chunk_gather_window.size() == v && chunkStart.size() == v;
    if (!chunkReduce && !chunkGather)
        return;   // a document's stages: their dp_sync is already this
    // The tied embeddings' all-reduce (in dp_sync once CostModel::estimate adds it) stays.
    double reduce = st.beforeBarrier(), gather = st.param_gather;
    if (chunkReduce) {
        std::vector<std::size_t> order(v);
        for (std::size_t c = 0; c < v; ++c)
            order[c] = c;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return chunkEnd[a] < chunkEnd[b]; });
        double stream = -std::numeric_limits<double>::infinity();
        for (const std::size_t c : order) {
            if (st.chunk_reduce[c] <= 0)
                continue;
            const double start = std::max(stream, chunkEnd[c] - st.chunk_reduce_window[c]);
            stream = std::max(start + st.chunk_reduce[c], chunkEnd[c] + st.chunk_reduce_last[c]);
        }
        reduce = std::isfinite(stream) ? std::max(0.0, stream - rankEnd) : 0.0;
    }
    if (chunkGather) {
        const double first = *std::min_element(chunkStart.begin(), chunkStart.end());
        double issued = 0, wait = 0;
        for (std::size_t c = 0; c < v; ++c) {
            if (st.chunk_gather[c] <= 0)
                continue;
            const double gap = chunkStart[c] - first;
            // Its first-needed bucket before its first forward; the rest behind that forward.
            wait = std::max({wait, issued + st.chunk_gather_last[c] - gap, issued + st.chunk_gather[c] - gap - st.chunk_gather_window[c]});
            issued += st.chunk_gather[c];
        }
        gather = wait;
    }
    st.dp_sync = reduce + gather + st.embedding_sync;
    st.param_gather = gather;
}
} // namespace

double simulateInterleaved(std::vector<StageEstimate>& stages, int microbatches, int vpp, long long maxBlocks)
{
    const long long P = static_cast<long long>(stages.size());
    if (vpp <= 1 || P < 1 || microbatches < 1 || microbatches % P != 0)
        return -1;
    // A document written before chunk times were kept: its iteration time is the closed
    // form's, whose drains setDrains gives.
    if (std::none_of(stages.begin(), stages.end(), [](const StageEstimate& st) { return !st.chunk_fwd.empty(); }))
        return -1;
    for (const StageEstimate& st : stages) {
        const bool own = st.chunk_fwd.size() == static_cast<std::size_t>(vpp) && st.chunk_bwd.size() == st.chunk_fwd.size();
        if (!own && (!st.chunk_fwd.empty() || !st.chunk_bwd.empty()))
            return -1;
    }
    ScheduleInput in = scheduleInput(stages, microbatches, vpp);
    in.keep_blocks = false;
    // Blocks per micro-batch, in double: a hand-edited document's counts could overflow.
    const double perMicrobatch = 2.0 * vpp * static_cast<double>(P);
    auto run = [&](long long m) {
        in.microbatches = static_cast<int>(m);
        return simulatePipeline(in);
    };
    auto setDrainsFrom = [&](const Schedule& sched) {
        for (std::size_t i = 0; i < stages.size(); ++i) {
            stages[i].drain = sched.makespan - sched.rank_end[i];
            overlapChunkSyncs(stages[i], sched.chunk_bwd_end[i], sched.rank_end[i], sched.chunk_fwd_start[i]);
        }
    };
    if (perMicrobatch * microbatches <= static_cast<double>(maxBlocks)) {
        const Schedule sched = run(microbatches);
        setDrainsFrom(sched);
        return sched.makespan;
    }
    // Too long to simulate whole: after its warm-up the schedule repeats every group of PP
    // micro-batches, so its end grows by the same time per group. Two shorter schedules, of
    // m1 and m2 = 2 m1 micro-batches (multiples of PP, together within maxBlocks), give that
    // rate; the longer one's cool-down gives the drains.
    const long long groups = static_cast<long long>(static_cast<double>(maxBlocks) / 3.0 / perMicrobatch) / P;
    if (groups < 2)
        return -1;
    const long long m1 = groups * P, m2 = 2 * m1;
    const double t1 = run(m1).makespan;
    const Schedule longer = run(m2);
    setDrainsFrom(longer);
    return longer.makespan + static_cast<double>(microbatches - m2) * (longer.makespan - t1) / static_cast<double>(m2 - m1);
}

double interleavedClosedForm(const std::vector<StageEstimate>& stages, int microbatches, int vpp)
{
    const double v = std::max(1, vpp);
    double sum = 0, mx = 0;
    for (const StageEstimate& st : stages) {
        sum += st.t_fwd + st.t_bwd;
        mx = std::max(mx, st.t_fwd + st.t_bwd);
    }
    return sum / v + (static_cast<double>(std::max(1, microbatches)) * v - 1.0) * mx / v;
}

double closedFormPipelineTime(const std::vector<double>& t_fwd, const std::vector<double>& t_bwd, int microbatches)
{
    double sum = 0, mx = 0;
    const std::size_t n = std::min(t_fwd.size(), t_bwd.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double c = t_fwd[i] + t_bwd[i];
        sum += c;
        mx = std::max(mx, c);
    }
    return sum + (std::max(1, microbatches) - 1.0) * mx;
}

namespace {
// The wait for the gradient-norm barrier from the end of stage 0's last backward (barrierWait
// in Prediction.h: the latest sync end, or the end stages' later sync end plus their
// all-reduce) and the longest step after it.
struct TailMaxima {
    double wait = 0, step = 0;
};
TailMaxima tailMaxima(const std::vector<StageTail>& tails)
{
    TailMaxima m;
    double longest = 0, ends = 0, allReduce = 0;
    for (const StageTail& t : tails) {
        longest = std::max(longest, t.sync - t.drain);
        if (t.embedding > 0) {
            ends = std::max(ends, t.sync - t.drain);
            allReduce = std::max(allReduce, t.embedding);
        }
        m.step = std::max(m.step, t.optimizer + t.gather);
    }
    m.wait = barrierWaitTime(longest, ends, allReduce);
    return m;
}
} // namespace

double drainedPipelineEnd(const std::vector<StageTail>& tails, double iterationTime)
{
    const TailMaxima m = tailMaxima(tails);
    return iterationTime - m.wait - m.step;
}

std::vector<TailSpan> placeTails(const Schedule& schedule, const std::vector<StageTail>& tails, double iterationTime)
{
    const std::size_t n = tails.size();
    std::vector<double> laneEnd(n, 0.0);
    for (const auto& b : schedule.blocks)
        if (b.stage >= 0 && static_cast<std::size_t>(b.stage) < n)
            laneEnd[static_cast<std::size_t>(b.stage)] = std::max(laneEnd[static_cast<std::size_t>(b.stage)], b.end);
    const double pipelineEnd = drainedPipelineEnd(tails, iterationTime);
    std::vector<TailSpan> out(n);
    double syncsDone = 0;   // the later of the end stages' syncs: the all-reduce starts there
    for (std::size_t i = 0; i < n; ++i) {
        TailSpan& s = out[i];
        s.wait_start = laneEnd[i];
        s.sync_start = std::max(pipelineEnd - tails[i].drain, laneEnd[i]);
        s.sync_end = s.sync_start + tails[i].sync;
        if (tails[i].embedding > 0)
            syncsDone = std::max(syncsDone, s.sync_end);
    }
    // The gradient-norm all-reduce: no stage steps before every stage has synced.
    double barrier = iterationTime - tailMaxima(tails).step;
    for (std::size_t i = 0; i < n; ++i) {
        TailSpan& s = out[i];
        s.embedding_start = s.embedding_end = s.sync_end;
        if (tails[i].embedding > 0) {
            s.embedding_start = syncsDone;
            s.embedding_end = syncsDone + tails[i].embedding;
        }
        barrier = std::max(barrier, s.embedding_end);
    }
    for (std::size_t i = 0; i < n; ++i) {
        TailSpan& s = out[i];
        s.optimizer_start = barrier;
        s.optimizer_end = barrier + tails[i].optimizer;
        s.gather_start = s.optimizer_end;
        s.gather_end = s.gather_start + tails[i].gather;
    }
    return out;
}

std::string toChromeTrace(const Schedule& schedule, const std::vector<std::string>& stageNames,
                          const std::vector<StageTail>& tails, double iterationTime)
{
    // Written event by event: a tree of a million blocks' events took 2.7 GB; one event at a
    // time keeps the text alone (about 200 bytes per block).
    std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    bool first = true;
    auto emit = [&](const nlohmann::json& event) {
        if (!first)
            out += ",\n";
        first = false;
        out += event.dump();
    };
    int ranks = 0;
    for (const auto& b : schedule.blocks)
        ranks = std::max(ranks, b.stage + 1);
    emit({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "pipeline"}}}});
    for (int r = 0; r < ranks; ++r) {
        std::string name = "stage " + std::to_string(r);
        if (r < static_cast<int>(stageNames.size()) && !stageNames[static_cast<std::size_t>(r)].empty())
            name += " (" + stageNames[static_cast<std::size_t>(r)] + ")";
        emit({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", r}, {"args", {{"name", name}}}});
        emit({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", r}, {"args", {{"sort_index", r}}}});
    }
    for (const auto& b : schedule.blocks) {
        std::string name = (b.forward ? "F" : "B") + std::to_string(b.microbatch);
        if (b.chunk > 0)
            name += "." + std::to_string(b.chunk);
        emit({{"name", name},
                          {"cat", b.forward ? "forward" : "backward"},
                          {"ph", "X"},
                          {"pid", 0},
                          {"tid", b.stage},
                          {"ts", b.start * 1e6},
                          {"dur", (b.end - b.start) * 1e6},
                          {"args", {{"microbatch", b.microbatch}, {"chunk", b.chunk}}}});
    }
    const std::vector<TailSpan> spans = placeTails(schedule, tails, iterationTime);
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const TailSpan& s = spans[i];
        // Spans within rounding of their end (the closed form's end of a lane less its drain
        // against the simulator's end of the same lane) are not waits.
        auto add = [&](const char* name, const char* cat, double start, double end) {
            if (end - start > 1e-12 * std::max(1.0, std::fabs(end)))
                emit({{"name", name}, {"cat", cat}, {"ph", "X"}, {"pid", 0}, {"tid", static_cast<int>(i)},
                                  {"ts", start * 1e6}, {"dur", (end - start) * 1e6}});
        };
        const auto waits = s.waits();
        add("wait for the closed form's last backward", "wait", waits[0].first, waits[0].second);
        add("data-parallel sync", "dp-sync", s.sync_start, s.sync_end);
        add("wait for the other end's sync", "wait", waits[1].first, waits[1].second);
        add("tied-embedding all-reduce", "embedding-sync", s.embedding_start, s.embedding_end);
        add("wait for the gradient-norm all-reduce", "wait", waits[2].first, waits[2].second);
        add("optimizer step", "optimizer", s.optimizer_start, s.optimizer_end);
        add("parameter all-gather", "dp-sync", s.gather_start, s.gather_end);
    }
    out += "\n]}\n";
    return out;
}

} // namespace hapmoe
