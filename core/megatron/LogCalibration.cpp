#include "megatron/LogCalibration.h"

#include "cost/CostModel.h"
#include "profile/ProfileLimits.h"
#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

// Line formats: ../shared/reference/megatron-log-format.md (Megatron-LM
// megatron/training/training.py training_log and report_memory; memory in MB = 2^20 bytes).

namespace hapmoe {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// strtod for the decimal numbers Megatron-LM prints (1834.2, 1.2e+03): what strtod reads
// beyond them, hexadecimal (0x1p13), "inf" and "nan", is not a number here (end = start).
double decimalNumber(const char* start, char** end)
{
    const char* p = start;
    while (*p == ' ' || *p == '\t')
        ++p;
    if (*p == '+' || *p == '-')
        ++p;
    const bool digit = std::isdigit(static_cast<unsigned char>(*p)) || (*p == '.' && std::isdigit(static_cast<unsigned char>(p[1])));
    if (!digit || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))) {
        *end = const_cast<char*>(start);
        return 0;
    }
    return std::strtod(start, end);
}

// The number that follows `key` on the line (after optional spaces), or nullopt.
std::optional<double> numberAfter(const std::string& line, const std::string& key, std::size_t from = 0)
{
    const std::size_t k = line.find(key, from);
    if (k == std::string::npos)
        return std::nullopt;
    const char* start = line.c_str() + k + key.size();
    char* end = nullptr;
    const double v = decimalNumber(start, &end);
    if (end == start || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::string trim(const std::string& s)
{
    const std::size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos)
        return {};
    const std::size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

// The text of the field that follows `key`, up to the next '|' (or the end), trimmed.
std::string fieldText(const std::string& line, std::size_t keyEnd)
{
    const std::size_t bar = line.find('|', keyEnd);
    return trim(line.substr(keyEnd, bar == std::string::npos ? std::string::npos : bar - keyEnd));
}

// The whole text as a finite number, or nullopt.
std::optional<double> finiteNumber(const std::string& text)
{
    if (text.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = decimalNumber(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
        return std::nullopt;
    return v;
}

// A count as logged: 256, 1300, 1e+300.
std::string countText(double v)
{
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

// 0.001, 2034.5: three decimals below 10, one above; 1.234e+12 from a billion up, so that a
// broken line's 1e308 reads as such and not as 309 digits.
std::string fixedText(double v)
{
    std::ostringstream os;
    if (std::fabs(v) >= 1e9) {
        os.precision(4);
        os << v;
        return os.str();
    }
    os.setf(std::ios::fixed);
    os.precision(v < 10 ? 3 : 1);
    os << v;
    return os.str();
}

// An iteration of a day or more is not a training run the cost model describes.
constexpr double kMaxIterationMs = 86'400'000.0;

// Reads the sizes of validate_args' "using world size: ..." line and of the arguments dump.
// A size that is a number but no whole number from 1 (a log edited by hand, or garbled) is
// refused with its line: the check of the run against the plan would otherwise be skipped
// without a word. Text that is no number is another line's format (Megatron-LM v1 and
// DeepSpeed print "using world size: 32 and model-parallel size: 1") and is passed over.
void readParallelSizes(const std::string& line, int lineNo, MegatronLog::ParallelSizes& sizes, const std::string& fileName)
{
    using Sizes = MegatronLog::ParallelSizes;
    auto set = [&](int Sizes::*field, int Sizes::*at, const std::string& name, const std::string& text) {
        const auto v = finiteNumber(text);
        if (!v)
            return;
        if (*v < 1 || *v > 1e9 || *v != std::floor(*v))
            throw InputError(fileName, "line " + std::to_string(lineNo),
                             name + ": expected a whole number from 1 to 1000000000, got \"" + text + "\"");
        if (sizes.*field == 0) {
            sizes.*field = static_cast<int>(*v);
            sizes.*at = lineNo;
        }
    };
    if (const std::size_t at = line.find("using world size:"); at != std::string::npos) {
        // Comma-separated "name: value" pairs; the names are matched whole, so that
        // "encoder-tensor-model-parallel size" is not read as the tensor-parallel size.
        std::istringstream parts(line.substr(at + 6));
        std::string part;
        while (std::getline(parts, part, ',')) {
            const std::size_t colon = part.find(':');
            if (colon == std::string::npos)
                continue;
            const std::string name = trim(part.substr(0, colon));
            const std::string v = trim(part.substr(colon + 1));
            if (name == "world size") set(&Sizes::world, &Sizes::world_line, name, v);
            else if (name == "data-parallel size") set(&Sizes::dp, &Sizes::dp_line, name, v);
            else if (name == "context-parallel size") set(&Sizes::cp, &Sizes::cp_line, name, v);
            else if (name == "tensor-model-parallel size") set(&Sizes::tp, &Sizes::tp_line, name, v);
            else if (name == "pipeline-model-parallel size") set(&Sizes::pp, &Sizes::pp_line, name, v);
        }
        return;
    }
    // "  world_size ...................................... 32" (print_args)
    std::istringstream words(line);
    std::string name, dots, value, extra;
    if (!(words >> name >> dots >> value) || (words >> extra) || dots.size() < 3
        || dots.find_first_not_of('.') != std::string::npos)
        return;
    if (name == "world_size") set(&Sizes::world, &Sizes::world_line, name, value);
    else if (name == "data_parallel_size") set(&Sizes::dp, &Sizes::dp_line, name, value);
    else if (name == "context_parallel_size") set(&Sizes::cp, &Sizes::cp_line, name, value);
    else if (name == "tensor_model_parallel_size") set(&Sizes::tp, &Sizes::tp_line, name, value);
    else if (name == "pipeline_model_parallel_size") set(&Sizes::pp, &Sizes::pp_line, name, value);
    else if (name == "expert_model_parallel_size") set(&Sizes::ep, &Sizes::ep_line, name, value);
}

// "  overlap_grad_reduce ............................. True" (print_args).
void readSwitches(const std::string& line, int lineNo, MegatronLog::Switches& sw)
{
    std::istringstream words(line);
    std::string name, dots, value, extra;
    if (!(words >> name >> dots >> value) || (words >> extra) || dots.size() < 3
        || dots.find_first_not_of('.') != std::string::npos)
        return;
    if (name == "fp8") {
        if (!sw.fp8) {
            sw.fp8 = value;
            sw.fp8_line = lineNo;
        }
        return;
    }
    if (value != "True" && value != "False")
        return;
    std::optional<bool>* field = name == "overlap_grad_reduce"    ? &sw.grad_reduce
                                 : name == "overlap_param_gather" ? &sw.param_gather
                                 : name == "tp_comm_overlap"      ? &sw.tp_comm
                                 : name == "overlap_p2p_comm"     ? &sw.p2p
                                                                  : nullptr;
    if (!field || field->has_value())
        return;
    *field = value == "True";
    if (sw.line == 0)
        sw.line = lineNo;
}

} // namespace

namespace {

// A memory report: "[Rank 0] (after 2 iterations) memory (MB) | allocated: ... | max reserved: ...".
void readMemoryReport(const std::string& line, int lineNo, const std::string& fileName, MegatronLog& log)
{
    const std::string where = "line " + std::to_string(lineNo);
    MegatronLog::MemoryReport m;
    m.line = lineNo;
    // A rank is a whole number; one beyond a billion, or not whole, is refused here with what
    // the line says (a negative rank, or one beyond the plan's, is calibrateFromLog's error).
    if (const std::size_t at = line.find("[Rank"); at != std::string::npos) {
        // The rank is what stands between "[Rank" and "]": Megatron-LM writes it in decimal.
        const std::size_t close = line.find(']', at);
        const std::string text = trim(line.substr(at + 5, close == std::string::npos ? std::string::npos : close - at - 5));
        const auto r = finiteNumber(text);
        if (!r || text.find_first_not_of("-0123456789") != std::string::npos || std::fabs(*r) > 1e9)
            throw InputError(fileName, where, "memory report: expected a rank (a whole number from 0) after \"[Rank\", got "
                                                  + quotedValue(text));
        m.rank = static_cast<int>(*r);
    }
    const std::size_t fields = line.find("memory (MB)");
    // A field that is there must hold a number of MB >= 0.
    auto mb = [&](const std::string& key, const std::string& name) {
        const std::size_t at = line.find(key, fields);
        if (at == std::string::npos)
            return 0.0;
        const std::string text = fieldText(line, at + key.size());
        const auto v = finiteNumber(text);
        if (!v || *v < 0)
            throw InputError(fileName, where, name + " (MB): expected a number >= 0, got \"" + text + "\"");
        return *v;
    };
    // Megatron-LM's report_memory writes all four fields; a report without one was cut (a log
    // copied or rotated mid-line), and the fit would quietly go without that rank.
    for (const char* key : {"| allocated:", "max allocated:", "| reserved:", "max reserved:"})
        if (line.find(key, fields) == std::string::npos)
            throw InputError(fileName, where, "memory report of rank " + std::to_string(m.rank)
                                                  + ": expected Megatron-LM's four fields (allocated, max allocated, reserved, "
                                                    "max reserved), \"" + std::string(key + (key[0] == '|' ? 2 : 0))
                                                  + "\" is missing (is the line cut short?)");
    m.allocated_mb = mb("| allocated:", "allocated");
    m.max_allocated_mb = mb("max allocated:", "max allocated");
    m.reserved_mb = mb("| reserved:", "reserved");
    m.max_reserved_mb = mb("max reserved:", "max reserved");
    if (m.max_reserved_mb > 0 || m.max_allocated_mb > 0)
        log.memory.push_back(m);
}

// Megatron-LM's iteration line opens with "iteration <n>/<total> |" (training_log); that
// opening without the elapsed time is a line cut short, not another kind of line.
bool opensIterationLine(const std::string& line)
{
    for (std::size_t at = line.find("iteration"); at != std::string::npos; at = line.find("iteration", at + 1)) {
        std::size_t i = at + 9;
        auto spaces = [&] {
            while (i < line.size() && line[i] == ' ')
                ++i;
        };
        auto digits = [&] {
            const std::size_t from = i;
            while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])))
                ++i;
            return i > from;
        };
        spaces();
        if (!digits())
            continue;
        spaces();
        if (i >= line.size() || line[i] != '/')
            continue;
        ++i;
        spaces();
        if (digits())
            return true;
    }
    return false;
}

// Lines that Megatron-LM prints once per start, before the first iteration: one of them after
// an iteration line means the log goes on with another run (a restart appended to it).
bool startsRun(const std::string& line)
{
    return line.find("using world size:") != std::string::npos
        || line.find("------------------------ arguments ------------------------") != std::string::npos
        || line.find("[before the start of training step]") != std::string::npos;
}

} // namespace

MegatronLog parseMegatronLog(std::string_view text, const std::string& fileName)
{
    std::vector<std::string> warnings;
    // A log cut while it was written ends in part of a line, which may hold part of a number
    // ("(ms): 1023" of "10235.3"): it is left out.
    if (!text.empty() && text.back() != '\n') {
        const std::size_t end = text.rfind('\n');
        const std::string_view kept = end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
        const auto cut = std::count(kept.begin(), kept.end(), '\n') + 1;
        warnings.push_back("line " + std::to_string(cut) + " has no end of line (was the log cut while it was written?): it is left out");
        text = kept;
    }
    std::vector<MegatronLog> runs(1);
    // The log's lines, numbered; where ranks printing at once put a memory report and an
    // iteration line on one line (either first), each is read as a line of its own, with the
    // line's number (several reports on one line are split further below).
    std::vector<std::pair<int, std::string>> lines;
    {
        std::istringstream in{std::string(text)};
        std::string raw;
        int number = 0;
        while (std::getline(in, raw)) {
            ++number;
            const std::size_t rank = raw.find("[Rank");
            const std::size_t elapsed = raw.find("elapsed time per iteration");
            if (rank == std::string::npos || elapsed == std::string::npos || raw.find("memory (MB)") == std::string::npos) {
                lines.emplace_back(number, std::move(raw));
                continue;
            }
            // The iteration line opens at "iteration <n>/", with its timestamp ("[2026-...]")
            // when one stands right before it.
            auto opensAt = [&](std::size_t at) { return opensIterationLine(raw.substr(at, elapsed - at)); };
            std::size_t opens = raw.rfind("iteration", elapsed);
            while (opens != std::string::npos && opens > 0 && !opensAt(opens))
                opens = raw.rfind("iteration", opens - 1);
            if (opens == std::string::npos || !opensAt(opens)) {
                lines.emplace_back(number, std::move(raw));
                continue;
            }
            std::size_t start = opens;
            while (start > 0 && raw[start - 1] == ' ')
                --start;
            if (start > 0 && raw[start - 1] == ']') {
                const std::size_t open = raw.rfind('[', start - 1);
                if (open != std::string::npos && raw.compare(open, 5, "[Rank") != 0)
                    start = open;
            }
            if (rank < start) {   // the report first, the iteration line after it
                lines.emplace_back(number, raw.substr(0, start));
                lines.emplace_back(number, raw.substr(start));
            } else {              // the iteration line, then the report
                lines.emplace_back(number, raw.substr(0, rank));
                lines.emplace_back(number, raw.substr(rank));
            }
        }
    }
    for (const auto& numbered : lines) {
        const int lineNo = numbered.first;
        const std::string& line = numbered.second;
        const std::string where = "line " + std::to_string(lineNo);
        auto newRun = [&] {
            runs.emplace_back();
            runs.back().first_line = lineNo;
        };
        if (!runs.back().intervals.empty() && startsRun(line))
            newRun();
        MegatronLog& log = runs.back();
        readParallelSizes(line, lineNo, log.sizes, fileName);
        readSwitches(line, lineNo, log.switches);
        // Megatron-LM's theoretical memory report (rank 0): the model's size as the run built it.
        if (auto b = numberAfter(line, "Total number of parameters in billions:"); b && *b > 0) {
            log.total_parameters_billions = *b;
            log.total_parameters_line = lineNo;
        }
        // Iteration line: "iteration       20/    1000 | ... | elapsed time per iteration (ms): 1834.2 | ..."
        static const std::string kElapsed = "elapsed time per iteration (ms):";
        if (const std::size_t k = line.find(kElapsed); k != std::string::npos) {
            const std::string text = fieldText(line, k + kElapsed.size());
            const auto ms = finiteNumber(text);
            if (!ms || *ms <= 0 || *ms > kMaxIterationMs)
                throw InputError(fileName, where,
                                 "elapsed time per iteration (ms): expected a positive number of milliseconds, at most "
                                     + std::to_string(static_cast<long long>(kMaxIterationMs)) + " (one day), got \"" + text
                                     + "\"");
            MegatronLog::Interval iv;
            iv.elapsed_ms = *ms;
            iv.line = lineNo;
            // An iteration number outside any run's range is not one (and would not convert).
            if (auto it = numberAfter(line, "iteration"); it && *it >= 0 && *it <= 1e15)
                iv.iteration = static_cast<long long>(*it);
            static const std::string kThroughput = "throughput per GPU (TFLOP/s/GPU):";
            iv.tflops_per_gpu = numberAfter(line, kThroughput);
            // Checked against the plan's FLOPs (calibrateFromLog): a figure that is not a
            // number would leave that check out unsaid.
            if (const std::size_t t = line.find(kThroughput); t != std::string::npos && !iv.tflops_per_gpu)
                throw InputError(fileName, where, "throughput per GPU (TFLOP/s/GPU): expected a number, got \""
                                                      + fieldText(line, t + kThroughput.size()) + "\"");
            iv.global_batch_size = numberAfter(line, "global batch size:");
            // Counting from a lower iteration again: a run resumed from an earlier checkpoint.
            if (!log.intervals.empty() && iv.iteration < log.intervals.back().iteration)
                newRun();
            runs.back().intervals.push_back(iv);
            continue;
        }
        if (opensIterationLine(line))
            throw InputError(fileName, where, "an iteration line without \"elapsed time per iteration (ms)\": expected "
                                              "Megatron-LM's training log line (is the line cut short?)");
        // Memory reports; ranks printing at once interleave theirs on one line
        // ("... max reserved: 13236.0[Rank 6] (after 1 iterations) memory (MB) | ..."): each
        // "[Rank" starts one.
        if (line.find("memory (MB)") != std::string::npos && line.find("[Rank") != std::string::npos) {
            for (std::size_t at = line.find("[Rank"); at != std::string::npos;) {
                const std::size_t next = line.find("[Rank", at + 1);
                const std::string report = line.substr(at, next == std::string::npos ? std::string::npos : next - at);
                if (report.find("memory (MB)") != std::string::npos)
                    readMemoryReport(report, lineNo, fileName, log);
                at = next;
            }
            continue;
        }
        // Timers: "    forward-backward ......: (1799.56, 1799.91)"
        if (const std::size_t dots = line.find("..."); dots != std::string::npos) {
            const std::size_t colon = line.find(':', dots);
            const std::size_t open = line.find('(', colon == std::string::npos ? dots : colon);
            if (colon != std::string::npos && open != std::string::npos) {
                const std::string name = trim(line.substr(0, dots));
                const char* p = line.c_str() + open + 1;
                char* end = nullptr;
                const double lo = decimalNumber(p, &end);
                if (end != p && *end == ',') {
                    char* end2 = nullptr;
                    const double hi = decimalNumber(end + 1, &end2);
                    // (min, max) over the ranks in ms: anything else is not a timer line.
                    if (end2 != end + 1 && !name.empty() && std::isfinite(lo) && std::isfinite(hi) && lo >= 0 && lo <= hi)
                        log.timers[name] = {lo, hi};
                }
            }
            continue;
        }
        // Per-layer router statistics: "... layer 3 ... tokens per expert: 1021 998 1040 ..."
        const std::string l = lower(line);
        if (const std::size_t tpe = l.find("tokens per expert"); tpe != std::string::npos) {
            const std::size_t lay = l.find("layer");
            const std::size_t colon = l.find(':', tpe);
            if (lay == std::string::npos || colon == std::string::npos)
                continue;
            const auto layer = numberAfter(l, "layer", lay);
            std::vector<double> counts;
            std::string rest = l.substr(colon + 1);
            for (char& c : rest)
                if (c == ',' || c == '[' || c == ']') c = ' ';
            std::istringstream nums(rest);
            std::string word;
            while (nums >> word) {
                const auto v = finiteNumber(word);
                if (!v)
                    break;   // the counts end at the first word that is not a number
                if (*v < 0 || *v != std::floor(*v))
                    throw InputError(fileName, where, "tokens per expert: expected whole token counts >= 0, got \"" + word + "\"");
                counts.push_back(*v);
            }
            // A layer index no model has is refused, not passed over: the imbalance would
            // then come from the other layers alone.
            if (layer && !counts.empty() && (*layer < 0 || *layer > 1e6 || *layer != std::floor(*layer)))
                throw InputError(fileName, where, "tokens per expert: expected a layer index (a whole number from 0), got "
                                                      + numberForMessage(*layer));
            if (layer && !counts.empty()) {
                log.router_tokens[static_cast<int>(*layer)] = counts;
                log.router_lines[static_cast<int>(*layer)] = lineNo;
            }
        }
    }
    // Within a run every iteration line states its global batch size, or none does (an older
    // format): a line without it among lines with it was cut after its elapsed time, and would
    // escape the batch-size check.
    for (const MegatronLog& run : runs) {
        const auto stated = std::find_if(run.intervals.begin(), run.intervals.end(),
                                         [](const MegatronLog::Interval& iv) { return iv.global_batch_size.has_value(); });
        if (stated == run.intervals.end())
            continue;
        for (const MegatronLog::Interval& iv : run.intervals)
            if (!iv.global_batch_size)
                throw InputError(fileName, "line " + std::to_string(iv.line),
                                 "iteration line without \"global batch size\", which the run's other iteration lines "
                                 "state (line " + std::to_string(stated->line) + "): is the line cut short?");
    }
    // The last complete run: one with an interval after its first, which includes start-up.
    std::vector<std::size_t> withIntervals;
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (!runs[i].intervals.empty())
            withIntervals.push_back(i);
    if (withIntervals.empty())
        throw InputError(fileName, "", "no \"elapsed time per iteration (ms)\" line: not a Megatron-LM training log");
    std::size_t chosen = withIntervals.back();
    for (auto it = withIntervals.rbegin(); it != withIntervals.rend(); ++it)
        if (runs[*it].intervals.size() > 1) {
            chosen = *it;
            break;
        }
    // Read before the chosen run is moved out of the list.
    const int trailingStart = runs.size() > 1 && runs.back().intervals.empty() ? runs.back().first_line : 0;
    MegatronLog log = std::move(runs[chosen]);
    log.runs = static_cast<int>(withIntervals.size());
    if (log.runs > 1) {
        std::string starts;
        for (std::size_t i : withIntervals)
            starts += (starts.empty() ? "" : ", ") + std::to_string(runs[i].first_line);
        warnings.push_back("the log holds " + std::to_string(log.runs) + " runs, starting at lines " + starts
                           + " (a start-up line after an iteration, or an iteration number going backwards, starts a run); "
                             "the last complete one, from line " + std::to_string(log.first_line) + ", is used");
    }
    // A start-up after the last iteration with none after it: a restart that has logged no
    // iteration yet, or another run's start appended. Its sizes are not checked against the
    // plan, so say that the run before it is what is read.
    if (trailingStart > 0)
        warnings.push_back("the log ends with a run that starts at line " + std::to_string(trailingStart)
                           + " and logs no iteration (a restart, or another run's start appended?): it is left out, and "
                             "the run from line " + std::to_string(log.first_line) + " is used");
    log.warnings = std::move(warnings);
    return log;
}

namespace {

std::string lineText(int line)
{
    return "line " + std::to_string(line);
}

// The intervals that measure the plan's iteration: those of the plan's global batch, after
// the batch-size ramp-up (intervals of a smaller batch before the first of the plan's) and
// after the first interval, which includes start-up work (reference log format). Throws
// where the run logs another batch than the plan's anywhere else.
std::vector<MegatronLog::Interval> steadyIntervals(const MegatronLog& log, const Plan& plan, const std::string& logFile,
                                                   CalibrationResult& r)
{
    const double gbs = plan.global_batch_size;
    auto other = [&](const MegatronLog::Interval& iv) {
        return InputError(logFile, lineText(iv.line),
                          "the run has global batch size " + countText(*iv.global_batch_size) + ", the plan \"" + plan.name
                              + "\" has global batch size " + std::to_string(plan.global_batch_size)
                              + ": expected the log of a run of this plan");
    };
    std::size_t first = 0;   // the first interval of the plan's batch
    while (first < log.intervals.size() && log.intervals[first].global_batch_size
           && *log.intervals[first].global_batch_size < gbs)
        ++first;
    if (first == log.intervals.size())
        throw other(log.intervals.back());   // the ramp-up never reached the plan's batch
    for (std::size_t i = first; i < log.intervals.size(); ++i)
        if (log.intervals[i].global_batch_size && *log.intervals[i].global_batch_size != gbs)
            throw other(log.intervals[i]);
    r.intervals_ramp_up = static_cast<int>(first);
    if (first > 0)
        r.notes.push_back(std::to_string(first) + " intervals before line " + std::to_string(log.intervals[first].line)
                          + " ran a smaller global batch (ramp-up): skipped");
    const std::size_t from = std::max<std::size_t>(first, log.intervals.size() > 1 ? 1 : 0);
    if (log.intervals.size() == 1)
        r.warnings.push_back(logFile + ": only one logging interval: it includes start-up work (the first iterations build "
                             "kernels, allocate and warm the caches), so the fitted speed is too slow; log more iterations "
                             "(--log-interval below --train-iters) and calibrate again");
    return {log.intervals.begin() + static_cast<std::ptrdiff_t>(from), log.intervals.end()};
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

double roundedPercentOff(double predicted, double measured, int digits)
{
    const double scale = std::pow(10.0, digits);
    return std::round(100.0 * scale * (predicted - measured) / measured) / scale + 0.0;
}

CalibrationResult calibrateFromLog(const MegatronLog& log, const PlanDocument& doc, const DeviceCatalog& catalog,
                                   const std::string& logFile, const Profile* base)
{
    CalibrationResult r;
    const Plan& plan = doc.plan;
    if (plan.stages.empty())
        throw InputError(logFile, "plan", "the plan has no stage");
    r.profile = base ? *base : Profile{};
    r.profile.name = "calibrated from " + logFile;
    r.profile.source = "hapmoe calibrate: Megatron-LM log " + logFile + " with plan \"" + plan.name + "\"";

    if (log.intervals.empty())
        throw InputError(logFile, "", "no \"elapsed time per iteration (ms)\" line: not a Megatron-LM training log");

    // The sizes the run states must be the plan's: a log of another run calibrates nothing.
    const MegatronLog::ParallelSizes& sizes = log.sizes;
    auto mismatch = [&](const std::string& what, int logged, int line, int planned) {
        throw InputError(logFile, lineText(line), "the run has " + what + " " + std::to_string(logged) + ", the plan \"" + plan.name
                                                      + "\" has " + what + " " + std::to_string(planned)
                                                      + ": expected the log of a run of this plan");
    };
    if (sizes.world > 0 && sizes.world != plan.numDevices())
        mismatch("world size", sizes.world, sizes.world_line, plan.numDevices());
    if (sizes.pp > 0 && sizes.pp != plan.pp())
        mismatch("pipeline-model-parallel size", sizes.pp, sizes.pp_line, plan.pp());
    // TP, CP, DP and EP are one number per run only when every stage has the same.
    auto same = [&](int StagePlan::*field) {
        for (const StagePlan& st : plan.stages)
            if (st.*field != plan.stages.front().*field)
                return 0;
        return plan.stages.front().*field;
    };
    for (auto [logged, line, field, what] :
         {std::tuple{sizes.tp, sizes.tp_line, &StagePlan::tp, "tensor-model-parallel size"},
          std::tuple{sizes.cp, sizes.cp_line, &StagePlan::cp, "context-parallel size"},
          std::tuple{sizes.dp, sizes.dp_line, &StagePlan::dp, "data-parallel size"},
          std::tuple{sizes.ep, sizes.ep_line, &StagePlan::ep, "expert-model-parallel size"}})
        if (const int planned = same(field); logged > 0 && planned > 0 && logged != planned)
            mismatch(what, logged, line, planned);

    // Another global batch is another run (the efficiency fitted to it would be off by the
    // ratio), except during a ramp-up. The median of the intervals: one slowed by a
    // checkpoint save or an evaluation does not move it.
    const std::vector<MegatronLog::Interval> used = steadyIntervals(log, plan, logFile, r);
    std::vector<double> times;
    for (const auto& iv : used)
        times.push_back(iv.elapsed_ms);
    r.intervals_used = static_cast<int>(used.size());
    r.measured_iteration_s = median(times) / 1000.0;

    // Megatron-LM's own count of the model it built, against the plan's model (a warning: the
    // counts may differ by the padded vocabulary and such, not by a factor).
    if (log.total_parameters_billions) {
        const double planned = countParameters(doc.model).total / 1e9;
        const double logged = *log.total_parameters_billions;
        if (planned > 0 && std::abs(logged / planned - 1) > 0.1)
            r.warnings.push_back(lineText(log.total_parameters_line) + ": the run reports " + fixedText(logged)
                                 + " billion parameters, the plan's model \"" + doc.model.name + "\" has " + fixedText(planned)
                                 + " billion: is the log of this plan's model?");
    }
    // The forward-backward timer is part of an iteration: one longer than every iteration used
    // (not only their median: the timers are the last interval's, which may be a straggler) is
    // from another run, or another part of this one.
    const double longestMs = *std::max_element(times.begin(), times.end());
    if (const auto fb = log.timers.find("forward-backward"); fb != log.timers.end() && fb->second.second > 1.05 * longestMs)
        r.warnings.push_back("the forward-backward timer (up to " + fixedText(fb->second.second)
                             + " ms over the ranks) is longer than any iteration used (at most " + fixedText(longestMs)
                             + " ms): are the timers and the iterations of the same run?");

    // Costed as "hapmoe estimate --plan" costs the plan (CmdEstimate fromPlanFile): with the
    // switches and headroom of its prediction, or the cost model's defaults; the profile then
    // reproduces the logged time there. The run's own overlap switches, where its arguments
    // dump gives them, cannot be carried by the profile: those that differ are a warning,
    // since the fitted efficiency then also absorbs the traffic they hide or expose.
    CostOptions options;
    if (doc.prediction) {
        options.overlap = doc.prediction->overlap;
        options.memory_headroom = doc.prediction->memory_headroom;
    }
    {
        const MegatronLog::Switches& sw = log.switches;
        std::vector<std::string> differ;
        auto compare = [&](const std::optional<bool>& logged, bool planned, const char* flag) {
            if (logged && *logged != planned)
                differ.push_back(std::string(*logged ? "with " : "without ") + flag);
        };
        compare(sw.grad_reduce, options.overlap.grad_reduce, "--overlap-grad-reduce");
        compare(sw.param_gather, options.overlap.param_gather, "--overlap-param-gather");
        compare(sw.tp_comm, options.overlap.tp_comm, "--tp-comm-overlap");
        // Megatron-LM prints overlap_p2p_comm False for plain 1F1B, where the cost model ignores it.
        if (plan.vpp > 1)
            compare(sw.p2p, options.overlap.p2p, "p2p overlap");
        if (!differ.empty()) {
            std::string list;
            for (const std::string& d : differ)
                list += (list.empty() ? "" : ", ") + d;
            r.warnings.push_back(logFile + ": line " + std::to_string(sw.line) + ": the run's arguments say it ran " + list + ", unlike "
                                 + (doc.prediction ? "the plan's prediction (\"overlap\")" : "the cost model's defaults")
                                 + ", which hapmoe estimate uses for this plan: the fit follows the plan's switches, so the "
                                   "efficiency also absorbs the communication they change; give the plan the run's switches "
                                   "for an efficiency of the devices alone");
        }
    }

    // FP8 GEMMs (docs/cost-model.md section 3.7): a run in another precision than the plan's
    // model would have its GEMM rate fitted into the device efficiency.
    if (const auto& logged = log.switches.fp8) {
        const bool loggedFp8 = *logged != "None";
        if (loggedFp8 != doc.model.training.fp8())
            r.warnings.push_back(logFile + ": line " + std::to_string(log.switches.fp8_line) + ": the run's arguments say it ran "
                                 + (loggedFp8 ? "with --fp8-format " + *logged : std::string("without FP8")) + ", unlike the plan's model ("
                                 + (doc.model.training.fp8() ? std::string("training.fp8_format ") + toString(doc.model.training.fp8_format)
                                                             : std::string("no FP8")) + "): the fitted efficiency then absorbs what FP8 "
                                   "changes; set the model's training.fp8_format to the run's");
    }

    const CostModel before(doc.model, doc.cluster, catalog, base, options);
    const Prediction predictedBefore = before.estimate(plan);
    r.predicted_before_s = predictedBefore.iteration_time_s;

    // No iteration is shorter than the model's FLOPs over the plan's devices at their peak
    // (MFU 1): MFU = FLOPs / (T x sum of peaks), so that time is the prediction's MFU x T.
    const double fastestS = predictedBefore.mfu * predictedBefore.iteration_time_s;
    if (fastestS > 0 && std::isfinite(fastestS))
        for (const auto& iv : used)
            if (iv.elapsed_ms / 1000.0 < fastestS)
                throw InputError(logFile, lineText(iv.line),
                                 "elapsed time per iteration " + fixedText(iv.elapsed_ms) + " ms is shorter than the "
                                     + fixedText(fastestS * 1000) + " ms the plan's " + std::to_string(plan.numDevices())
                                     + " devices need for the model's FLOPs at their peak: expected at least "
                                     + fixedText(fastestS * 1000) + " ms (is the log from this plan's run?)");

    // Megatron-LM logs (with --log-throughput) num_floating_point_operations(args, batch) /
    // (elapsed x world size x 1e12). Counted for the plan's model at the logged time, a figure
    // more than 2x off (beyond any difference of counting between Megatron-LM versions, at most
    // the causal half of the attention core) is another model's.
    const double flops = modelFlopsPerIteration(doc.model, plan.global_batch_size, plan.stages.empty() ? 1 : plan.stages.back().tp);
    for (const auto& iv : used) {
        if (!iv.tflops_per_gpu)
            continue;
        const double expected = flops / (iv.elapsed_ms / 1000.0 * plan.numDevices()) / 1e12;
        if (!(*iv.tflops_per_gpu <= 2 * expected && *iv.tflops_per_gpu >= expected / 2))
            throw InputError(logFile, lineText(iv.line),
                             "throughput per GPU " + fixedText(*iv.tflops_per_gpu) + " TFLOP/s is more than 2x off the "
                                 + fixedText(expected) + " TFLOP/s the plan's model \"" + doc.model.name
                                 + "\" gives at this iteration time (Megatron-LM's num_floating_point_operations for global "
                                   "batch "
                                 + std::to_string(plan.global_batch_size) + " on " + std::to_string(plan.numDevices())
                                 + " GPUs): expected the log of a run of this plan's model");
    }

    // Router imbalance rho = max_i |T_i| / mean_j |T_j| per layer (paper section 3.2),
    // averaged over the layers: every MoE layer's slowest expert adds to the critical path.
    if (!log.router_tokens.empty()) {
        // Counts a router of this model cannot give are refused at their line: one count per
        // expert, and no expert above the layer's tokens (a top-k router sends each token to
        // k different experts, so the counts sum to k x tokens and each is at most the sum / k).
        const ModelSpec& m = doc.model;
        for (const auto& [layer, counts] : log.router_tokens) {
            const auto at = log.router_lines.find(layer);
            const std::string where = at == log.router_lines.end() ? std::string() : lineText(at->second);
            if (!m.isMoe())
                throw InputError(logFile, where, "tokens per expert: the plan's model \"" + m.name + "\" is dense: expected the log of a run of this plan");
            // The index counts from 0 or from 1, as the printing code chose: above the layer
            // count it is no layer of the model.
            if (layer > m.num_layers)
                throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer) + ": the plan's model \""
                                                     + m.name + "\" has " + std::to_string(m.num_layers)
                                                     + " layers; expected the log of a run of this plan");
            if (counts.size() != static_cast<std::size_t>(m.num_experts))
                throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer) + ": expected "
                                                     + std::to_string(m.num_experts) + " counts, one per expert of \"" + m.name + "\", got "
                                                     + std::to_string(counts.size()));
            double sum = 0;
            for (double c : counts)
                sum += c / m.moe_router_topk;
            // Every MoE layer of a training step routes its tokens: a layer with none is no
            // layer of a run (its rho would be undefined and the model's default would stand
            // in, unannounced).
            if (!(sum > 0))
                throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer)
                                                     + ": every count is 0; expected the counts of a layer that routed the step's tokens");
            for (std::size_t e = 0; e < counts.size(); ++e)
                if (counts[e] > sum * (1 + 1e-9))
                    throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer) + ": expert " + std::to_string(e)
                                                         + " has " + countText(counts[e]) + " tokens, more than the " + countText(sum)
                                                         + " tokens of the layer (the counts over top-" + std::to_string(m.moe_router_topk)
                                                         + "); expected counts of a top-" + std::to_string(m.moe_router_topk) + " router");
        }
        double rhoSum = 0;
        int layers = 0;
        for (const auto& [layer, counts] : log.router_tokens) {
            // The mean as a sum of c / n: never above the largest count, so it stays finite
            // where the plain sum of counts near the largest double would not.
            double mean = 0, peak = 0;
            for (double c : counts) {
                mean += c / static_cast<double>(counts.size());
                peak = std::max(peak, c);
            }
            if (mean <= 0)
                continue;
            rhoSum += std::max(1.0, peak / mean);
            ++layers;
        }
        if (layers > 0) {
            r.rho = rhoSum / layers;
            r.profile.router_imbalance = r.rho;
            r.notes.push_back("rho " + fixedText(*r.rho) + " from token counts of " + std::to_string(layers)
                              + " MoE layers");
        }
    }

    // The base profile's entries name device types as the catalog does or by an alias ("h800"):
    // each of the plan's types is matched through the catalog, and its entries replaced as one.
    auto isType = [&](const std::string& name, const std::string& type) { return catalog.sameType(name, type); };

    // Device speed: one scale s over the plan's device types (one iteration time cannot tell
    // them apart): the efficiency s x the catalog default, and the base profile's compute
    // table times of those types / s, since a table measured on other devices or software is
    // off by the same factor for every layer. Found by bisection on log s so that the
    // predicted iteration time equals the measured one; T(s) decreases with s.
    std::vector<std::pair<std::string, double>> types;
    for (const StagePlan& st : plan.stages) {
        const DeviceType& t = catalog.get(st.device_type, "plan stage device type");
        if (std::none_of(types.begin(), types.end(), [&](const auto& p) { return p.first == t.name; }))
            types.push_back({t.name, t.default_efficiency > 0 ? t.default_efficiency : 0.5});
    }
    auto ofPlanType = [&](const std::string& name) {
        return std::any_of(types.begin(), types.end(), [&](const auto& p) { return isType(name, p.first); });
    };
    bool tables = false;
    for (const ComputeEntry& e : r.profile.compute)
        tables = tables || ofPlanType(e.device_type);
    double maxDefault = 0;
    for (const auto& [name, e] : types)
        maxDefault = std::max(maxDefault, e);
    const Profile start = r.profile;
    for (const auto& [name, e] : types) {
        double before = e * kLargeGemmOverMamf;
        for (const auto& [profiled, value] : start.device_efficiency)
            if (isType(profiled, name)) {
                before = value;
                r.efficiency_before_from_base.insert(name);
            }
        r.efficiency_before[name] = before;
    }
    auto scaled = [&](double s) {
        Profile p = start;
        for (auto it = p.device_efficiency.begin(); it != p.device_efficiency.end();)
            it = ofPlanType(it->first) ? p.device_efficiency.erase(it) : std::next(it);
        // No device above its peak: with tables the efficiency stops at 1 and the tables go on.
        for (const auto& [name, e] : types)
            p.device_efficiency[name] = std::min(1.0, s * e);
        for (ComputeEntry& c : p.compute)
            if (ofPlanType(c.device_type))
                for (double* t : {&c.dense_layer_fwd_s, &c.dense_layer_bwd_s, &c.ffn_fwd_s, &c.ffn_bwd_s})
                    *t /= s;
        return p;
    };
    auto predict = [&](double s) {
        const Profile p = scaled(s);
        const CostModel cm(doc.model, doc.cluster, catalog, &p, options);
        return cm.estimate(plan).iteration_time_s;
    };
    const double hi = tables ? 1000.0 : 1.0 / maxDefault;
    // 1/500 of each type's catalog efficiency (docs/profiling.md), and never below the least
    // efficiency a profile may hold (ProfileLimits::kMinEfficiency, 0.001 of peak), which the
    // written profile must keep.
    double minDefault = 1;
    for (const auto& [name, e] : types)
        minDefault = std::min(minDefault, e);
    const bool atLeastEfficiency = ProfileLimits::kMinEfficiency / minDefault > 1.0 / 500.0;
    const double lo = atLeastEfficiency ? ProfileLimits::kMinEfficiency / minDefault : 1.0 / 500.0;
    const double target = r.measured_iteration_s;
    double s = 1;
    const double tHi = predict(hi);
    const double tLo = predict(lo);
    if (!(target > tHi)) {
        s = hi;
        r.fit_failure = "the run is faster than the model allows at peak efficiency"
                        + std::string(tables ? " and with the compute tables 1000x faster" : "")
                        + ": communication or memory-bound terms are over-predicted for this cluster";
    } else if (!(target < tLo)) {
        s = lo;
        r.fit_failure = atLeastEfficiency ? "the run is slower than the model allows at 0.001 of peak, the least efficiency a "
                                            "profile may hold"
                                          : "the run is slower than the model allows at 1/500 of the default efficiency";
    } else {
        double a = std::log(lo), b = std::log(hi);
        for (int it = 0; it < 100; ++it) {
            const double mid = 0.5 * (a + b);
            const double t = predict(std::exp(mid));
            if (std::abs(t - target) <= 1e-6 * target) {
                a = b = mid;
                break;
            }
            if (t > target)
                a = mid;   // too slow: raise the efficiency
            else
                b = mid;
        }
        s = std::exp(0.5 * (a + b));
    }
    r.efficiency_scale = s;
    r.table_scale = tables ? 1.0 / s : 1.0;
    r.profile = scaled(s);
    if (tables)
        r.notes.push_back("the compute table times of the plan's device types are scaled by " + fixedText(1.0 / s)
                          + " with the efficiency");
    // Without tables the efficiency is s x the catalog's measured maximum achievable GEMM rate
    // (MAMF): above it, GEMMs would run faster than they were measured to, so the model must
    // be over-counting another term of this run.
    // With tables the efficiency still sets the analytic parts (experts, embedding, output layer).
    // At the peak with tables the warning further down says more.
    if (s > 1.02 && r.fit_failure.empty())   // above x1.02: a little over is fitting noise
        for (const auto& [name, e] : types)
            if (!(tables && s * e > 1))
                r.warnings.push_back("the fitted efficiency of " + name + ", " + fixedText(std::min(1.0, s * e)) + ", is " + fixedText(s)
                                     + " x the catalog's measured maximum achievable GEMM rate (" + fixedText(e)
                                     + " of peak): GEMMs do not run that fast, so the model over-counts another term of this run "
                                       "(communication, the pipeline bubble, exposed data-parallel sync) or the log is of a faster "
                                       "configuration than the plan; check the plan against the run's arguments");
    // Far below it: the run is slowed by something the plan does not have, which the fit
    // then charges to every GEMM of every plan the profile costs.
    constexpr double kSlowScale = 0.3;
    if (s < kSlowScale && r.fit_failure.empty())
        for (const auto& [name, e] : types)
            r.warnings.push_back("the fitted efficiency of " + name + ", " + fixedText(s * e) + ", is " + fixedText(s)
                                 + " x the catalog's measured maximum achievable GEMM rate: a run this slow has something the "
                                   "plan does not (more recompute, offload, a slower network, a debug or profiling build, "
                                   "another job on the devices), which the profile would charge to every plan's GEMMs; check "
                                   "the run's arguments against the plan");
    for (const auto& [name, e] : types)
        if (tables && s * e > 1)
            r.warnings.push_back("the device efficiency of " + name + " stops at its peak (1.000) and the compute tables carry the "
                                 "rest of the fit (their times x" + fixedText(1.0 / s)
                                 + "): were the base profile's tables measured on these devices?");

    // Memory: max reserved per stage against the prediction; the difference becomes the
    // fixed overhead of the device type, the largest its stages need, so that no stage is
    // predicted below what it measured (a plan called feasible on the calibrated profile
    // does not run out where the run did not).
    {
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile, options);
        const Prediction p = cm.estimate(plan);
        r.predicted_after_s = p.iteration_time_s;
        std::vector<double> measured(plan.stages.size(), 0.0);
        std::vector<int> rankStart;
        int rank = 0;
        for (const StagePlan& st : plan.stages) {
            rankStart.push_back(rank);
            rank += st.numDevices();
        }
        for (const auto& m : log.memory) {
            const std::string at = lineText(m.line);
            if (m.rank < 0 || m.rank >= rank)
                throw InputError(logFile, at, "memory report of rank " + std::to_string(m.rank) + ": expected a rank of the plan, 0 to "
                                                  + std::to_string(rank - 1) + " (is the log from this plan's run?)");
            std::size_t s2 = 0;
            while (s2 + 1 < rankStart.size() && rankStart[s2 + 1] <= m.rank) ++s2;
            const bool reserved = m.max_reserved_mb > 0;
            const double mb = reserved ? m.max_reserved_mb : m.max_allocated_mb;
            // A device holds at most its memory; more is a broken line, not a measurement.
            const double capacity = s2 < predictedBefore.stages.size() ? predictedBefore.stages[s2].memory.capacity : 0;
            if (capacity > 0 && mb * 1024.0 * 1024.0 > capacity)
                throw InputError(logFile, at, std::string(reserved ? "max reserved" : "max allocated") + " (MB): expected at most "
                                                  + fixedText(capacity / (1024.0 * 1024.0)) + ", the memory of a device of pipeline stage "
                                                  + std::to_string(s2) + " (" + plan.stages[s2].device_type + "), got "
                                                  + fixedText(mb));
            // Less than half of the weights, gradients and optimizer states the model counts is
            // a figure in another unit (GB written as MB), or the log of another model.
            if (s2 < predictedBefore.stages.size()) {
                const MemoryBreakdown& mem = predictedBefore.stages[s2].memory;
                const double states = mem.weights + mem.gradients + mem.optimizer;
                if (mb * 1024.0 * 1024.0 < 0.5 * states)
                    throw InputError(logFile, at, std::string(reserved ? "max reserved" : "max allocated") + " (MB): expected at least "
                                                      + fixedText(0.5 * states / (1024.0 * 1024.0)) + ", half the weights, gradients "
                                                      "and optimizer states of pipeline stage " + std::to_string(s2) + " ("
                                                      + fixedText(states / kGiB) + " GiB), got " + fixedText(mb)
                                                      + " (MB, as Megatron-LM writes it: a figure in GB written as MB, or the log of "
                                                        "another model?)");
            }
            measured[s2] = std::max(measured[s2], mb * 1024.0 * 1024.0);
        }
        // Per type: the overhead each of its stages would need to be predicted as measured. The
        // largest is the fit (clamped at 0 only then), and the spread says how far above its
        // measurement each other stage is predicted.
        struct Fit {
            double most = -std::numeric_limits<double>::infinity();
            double least = std::numeric_limits<double>::infinity();
            int mostStage = 0;
            // The largest overhead under which every reported stage of the type still fits its
            // device: the run fit there, so the profile must not call its plan infeasible.
            double room = std::numeric_limits<double>::infinity();
            int roomStage = 0;
        };
        std::map<std::string, Fit> diff;
        for (std::size_t i = 0; i < plan.stages.size() && i < p.stages.size(); ++i) {
            if (measured[i] <= 0)
                continue;
            const MemoryBreakdown& mem = p.stages[i].memory;
            const std::string type = catalog.get(plan.stages[i].device_type).name;
            const double overhead = mem.overhead + measured[i] - mem.total();
            Fit& f = diff[type];
            if (overhead > f.most) {
                f.most = overhead;
                f.mostStage = static_cast<int>(i);
            }
            f.least = std::min(f.least, overhead);
            // The overhead at which this stage would fill its device.
            const double room = mem.capacity - (mem.total() - mem.overhead);
            if (mem.capacity > 0 && room < f.room) {
                f.room = room;
                f.roomStage = static_cast<int>(i);
            }
            // "Before" is the model as it stood before this calibration (with the router
            // imbalance the log fits above, the MoE buffers already differ from it).
            const double before = i < predictedBefore.stages.size() ? predictedBefore.stages[i].memory.total() : mem.total();
            r.memory.push_back({static_cast<int>(i), type, measured[i] / kGiB, before / kGiB, 0, mem.capacity / kGiB});
        }
        for (const auto& [type, f] : diff) {
            MemoryCalibration mc;
            mc.device_type = type;
            mc.fixed_overhead_gib = std::max(0.0, f.most) / kGiB;
            if (f.most > f.room && f.room >= 0) {
                // The stage that needs the most would put another above its device: the overhead
                // stops where that one is full, and the first is predicted below its measurement.
                mc.fixed_overhead_gib = f.room / kGiB;
                r.notes.push_back("the " + type + " fixed overhead is capped at " + fixedText(f.room / kGiB) + " GiB, where stage "
                                  + std::to_string(f.roomStage) + " fills its device, so that the plan that ran stays feasible; "
                                  + "stage " + std::to_string(f.mostStage) + " would need " + fixedText(f.most / kGiB)
                                  + " GiB to be predicted as measured and is predicted " + fixedText((f.most - f.room) / kGiB)
                                  + " GiB below its measurement (the model's activations differ from the run's there)");
            } else if (f.most < 0)
                r.warnings.push_back("the model counts more memory on every " + type + " stage than the log reports, by at least "
                                     + fixedText(-f.most / kGiB) + " GiB beyond the runtime overhead: the fixed overhead "
                                       "is set to 0, and their predictions stay above the measurements");
            else if (f.most - f.least > 0.5 * kGiB)
                r.notes.push_back("the " + type + " fixed overhead is what stage " + std::to_string(f.mostStage)
                                  + " needs to be predicted as measured; the other " + type + " stages are then predicted up to "
                                  + fixedText((f.most - f.least) / kGiB)
                                  + " GiB above their measurements (the model's activations differ from the run's there)");
            mc.activation_factor = 1.0;
            // The base's activation factor is kept (calibrate fits the fixed overhead only).
            for (const MemoryCalibration& old : r.profile.memory)
                if (isType(old.device_type, type) && old.activation_factor > 0)
                    mc.activation_factor = old.activation_factor;
            r.profile.memory.erase(std::remove_if(r.profile.memory.begin(), r.profile.memory.end(),
                                                  [&](const MemoryCalibration& m) { return isType(m.device_type, type); }),
                                   r.profile.memory.end());
            r.profile.memory.push_back(mc);
        }
    }
    if (!r.memory.empty()) {
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile, options);
        const Prediction p = cm.estimate(plan);
        r.predicted_after_s = p.iteration_time_s;
        for (StageMemoryCheck& m : r.memory)
            m.predicted_after_gib = p.stages[static_cast<std::size_t>(m.stage)].memory.total() / kGiB;
        // The run fit on every stage it reports; a stage the one overhead per type puts above its
        // device makes the plan that ran infeasible to the search.
        for (const StageMemoryCheck& m : r.memory)
            if (m.capacity_gib > 0 && m.predicted_after_gib > m.capacity_gib)
                r.warnings.push_back("stage " + std::to_string(m.stage) + " (" + m.device_type + ") is predicted at "
                                     + fixedText(m.predicted_after_gib) + " GiB after calibration, above its "
                                     + fixedText(m.capacity_gib) + " GiB, though the run fit in it (" + fixedText(m.measured_gib)
                                     + " GiB logged): the " + m.device_type + " overhead fitted to another stage over-counts "
                                     "this one, so the search would refuse this plan; its devices' reports in the log are "
                                     "worth a look");
        // Stages without a report take their type's overhead, fitted on the others.
        std::string unreported;
        for (std::size_t i = 0; i < plan.stages.size(); ++i)
            if (std::none_of(r.memory.begin(), r.memory.end(), [&](const StageMemoryCheck& m) { return m.stage == static_cast<int>(i); }))
                unreported += (unreported.empty() ? "" : ", ") + std::to_string(i);
        if (!unreported.empty())
            r.notes.push_back("no memory report in the log for stage(s) " + unreported
                              + ": they take the overhead fitted on their device type's reported stages, not measured on them");
    } else {
        r.notes.push_back("no memory report in the log: memory is not calibrated");
    }
    r.time_matched = std::abs(r.predicted_after_s - r.measured_iteration_s) <= 1e-3 * r.measured_iteration_s;
    if (!r.time_matched && r.fit_failure.empty())
        r.fit_failure = "no scale of the device efficiency" + std::string(tables ? " and the compute tables" : "")
                        + " reproduces the logged time: the prediction after calibration is " + fixedText(r.predicted_after_s * 1000)
                        + " ms";
    // The profile must be one the other commands read (router counts beyond a double's range
    // give a rho below 1, for example): refused like the log figures that lead to it. A failed
    // fit writes none, and says why instead.
    if (r.fit_failure.empty()) {
        try {
            validateProfile(readProfile(writeProfile(r.profile), logFile), catalog, logFile);
        } catch (const InputError& e) {
            throw InputError(logFile, "", "the calibrated profile would not be valid (" + e.where() + ": " + e.detail()
                                              + "); check the log's figures");
        }
    }
    return r;
}

} // namespace hapmoe
