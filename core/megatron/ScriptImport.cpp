#include "megatron/ScriptImport.h"

#include "io/Documents.h"
#include "megatron/BashReader.h"
#include "megatron/FlagList.h"
#include "megatron/MoeLayerPattern.h"
#include "megatron/PipelineLayout.h"
#include "megatron/ShellQuote.h"
#include "plan/Deployability.h"
#include "util/Strings.h"

#include <cmath>
#include <algorithm>
#include <limits>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

// Flag meanings and defaults: ../shared/reference/megatron-and-flagscale.md sections 2, 3,
// 4, 5 and 7 (Megatron-LM megatron/training/arguments.py validate_args and the dataclass
// defaults of TransformerConfig / ModelParallelConfig); FlagScale's heterogeneous flags and
// rules: section 9 and flagscale-hetero-flags.txt (flagscale/train/arguments.py
// pre_validate_args / post_validate_args, flagscale/train/hetero/parallel_context.py). torchrun options: PyTorch
// torch/distributed/run.py (both the underscore and the hyphen spellings are accepted).

namespace hapmoe {

namespace {

// Processes of one launch, at most: one device each, so the most devices a cluster may have
// (io/Documents.h), far above any cluster (the largest published runs use tens of thousands
// of GPUs), and small enough for every count derived from it to be an int.
constexpr long long kMaxWorldSize = kMaxDevices;

// Whether text reads as YAML rather than bash: its first lines that are not blank or comments
// are "key:" mappings or "- " list items, and none is a command.
bool looksLikeYaml(std::string_view text)
{
    int keys = 0, lines = 0;
    std::size_t at = 0;
    while (at < text.size() && lines < 5) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty() || line.front() == '#' || line == "---")
            continue;
        ++lines;
        if (line.starts_with("- ")) {   // an item of a list
            ++keys;
            continue;
        }
        std::size_t i = 0;
        while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '-' || line[i] == '.'))
            ++i;
        if (i > 0 && i < line.size() && line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' '))
            ++keys;
    }
    return lines > 0 && keys == lines;
}

std::string baseName(const std::string& path)
{
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Megatron-LM's multimodal entries (examples/multimodal/train.py, examples/mimo,
// pretrain_vlm.py): a vision encoder before the language model.
bool multimodalEntry(const std::string& entryScript)
{
    const std::string entry = lower(entryScript);
    return entry.find("multimodal") != std::string::npos || entry.find("mimo") != std::string::npos
        || baseName(entry) == "pretrain_vlm.py";
}

std::optional<long long> toInt(const std::string& s)
{
    if (s.empty())
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return std::nullopt;
    return v;
}

// A number as Python's float() reads a flag's value; strtod's hexadecimal forms ("0x1p-3"),
// which float() refuses, are refused too.
std::optional<double> toReal(const std::string& s)
{
    if (s.empty() || s.find_first_of("xX") != std::string::npos)
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (*end != '\0' || errno == ERANGE)
        return std::nullopt;
    return v;
}

// torchrun (torch.distributed.run) options that take a value; the rest are switches.
const std::set<std::string>& torchrunValueOptions()
{
    static const std::set<std::string> opts = {
        "--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--node-rank", "--master_addr",
        "--master-addr", "--master_port", "--master-port", "--rdzv_id", "--rdzv-id", "--rdzv_backend",
        "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_conf", "--rdzv-conf", "--max_restarts",
        "--max-restarts", "--monitor_interval", "--monitor-interval", "--start_method", "--start-method", "--role",
        "--log_dir", "--log-dir", "--redirects", "-r", "--tee", "-t", "--local_addr", "--local-addr",
        "--logs_specs", "--logs-specs", "--local-ranks-filter", "--local_ranks_filter", "--event-log-handler",
        "--numa-binding", "--signals-to-handle"};
    return opts;
}

std::string canonicalTorchrun(std::string name)
{
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
}

// The flags the importer turns into model, training and parallel fields. The exporter
// writes them again from the plan, so they are not carried over verbatim.
const std::set<std::string>& mappedFlags()
{
    static const std::set<std::string> flags = {
        "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--group-query-attention",
        "--num-query-groups", "--kv-channels", "--seq-length", "--encoder-seq-length", "--max-position-embeddings", "--swiglu",
        "--disable-bias-linear", "--add-bias-linear", "--untie-embeddings-and-output-weights", "--normalization",
        "--attention-dropout", "--hidden-dropout",
        "--num-experts", "--moe-ffn-hidden-size", "--moe-router-topk", "--moe-layer-freq",
        "--moe-shared-expert-intermediate-size", "--moe-token-dispatcher-type", "--bf16", "--fp16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather",
        "--accumulate-allreduce-grads-in-fp32", "--grad-reduce-in-bf16", "--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl",
        "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
        "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--num-layers-per-virtual-pipeline-stage",
        "--num-virtual-stages-per-pipeline-rank", "--pipeline-model-parallel-layout",
        "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
        "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
        "--recompute-granularity", "--recompute-method", "--recompute-num-layers", "--recompute-activations",
        "--sequence-parallel", "--use-distributed-optimizer", "--micro-batch-size", "--global-batch-size",
        "--model-parallel-size", "--checkpoint-activations", "--batch-size"};
    return flags;
}

// The flag that gives the sequence length: --seq-length, or --encoder-seq-length, its other
// name in Megatron-LM, when only that is given.
// Whether the text names the variable as a whole word (SLURM_NTASKS, not in
// SLURM_NTASKS_PER_NODE).
bool namesVariable(std::string_view text, std::string_view name)
{
    const auto wordChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
        const std::size_t end = at + name.size();
        if ((at == 0 || !wordChar(text[at - 1])) && (end == text.size() || !wordChar(text[end])))
            return true;
    }
    return false;
}

std::string seqLengthFlag(const std::set<std::string>& given)
{
    return given.count("--encoder-seq-length") && !given.count("--seq-length") ? "--encoder-seq-length" : "--seq-length";
}

class Importer {
public:
    Importer(std::string_view text, const std::string& file, const ScriptInputs& inputs) : m_text(text), m_reader(file)
    {
        m_out.file = file;
        m_out.inputs = inputs;
        if (!inputs.arguments.empty())
            m_reader.setArguments(inputs.arguments);
        // A batch script runs with what sbatch sets from its #SBATCH directives
        // (SLURM_NNODES, ...) in its environment, unless the environment given says otherwise.
        std::map<std::string, std::string> environment = inputs.environment;
        std::vector<std::string> jobVariables;   // SLURM_NNODES=2 (--nodes=2): those the script reads
        const auto [directives, directiveLine] = BashReader::batchDirectives(text);
        for (const BashReader::JobVariable& v : BashReader::batchJobEnvironment(directives)) {
            if (environment.count(v.name))
                continue;
            environment[v.name] = v.value;
            if (namesVariable(text, v.name))   // a script that reads it
                jobVariables.push_back(v.name + "=" + v.value + " (" + v.option + ")");
        }
        if (!jobVariables.empty())
            warn("line " + std::to_string(directiveLine)
                 + ": taken from the #SBATCH directives, as sbatch sets them in the job's environment: "
                 + join(jobVariables, ", "));
        m_reader.setEnvironment(environment);
        // The environment of the launch command is all the import reads of it (run()).
        m_reader.setEnvironmentKept([](const ShellCommand& c) { return launchOf(c).has_value(); });
    }

    ImportedScript run()
    {
        m_out.crlf_line_ends = m_text.find("\r\n") != std::string_view::npos;
        m_reader.read(m_text);
        const ShellCommand* launch = findLaunch();
        if (!launch) {
            // A launch command inside a function nothing calls is not run by bash either.
            std::string uncalled;
            for (const BashReader::UncalledFunction& f : m_reader.uncalledFunctions()) {
                uncalled += (uncalled.empty() ? "" : ", ") + f.name + " (line " + std::to_string(f.line);
                if (f.unset_line == 0)
                    uncalled += ", never called)";
                else if (f.called_after_unset == 0)
                    uncalled += ", removed by unset at line " + std::to_string(f.unset_line) + " and never called)";
                else
                    uncalled += ", removed by unset at line " + std::to_string(f.unset_line) + "; the call at line "
                        + std::to_string(f.called_after_unset) + " finds no such command)";
            }
            // Text run through eval, or another file sourced, may hold the launch command.
            std::string notFollowed;
            auto atLines = [](const std::vector<int>& at) {   // "(line 6)", "(lines 6, 9, 12, ...)"
                std::string s = at.size() > 1 ? "(lines " : "(line ";
                for (std::size_t k = 0; k < at.size() && k < 3; ++k)
                    s += (k ? ", " : "") + std::to_string(at[k]);
                return s + (at.size() > 3 ? ", ...)" : ")");
            };
            if (!m_reader.evalLines().empty())
                notFollowed += "; the script runs eval nested too deep to follow " + atLines(m_reader.evalLines())
                    + ", so a launch command built as text there is not read";
            // A launcher this import does not read (DeepSpeed's, which Megatron-DeepSpeed's
            // scripts use): named, so that the error says what the script runs instead.
            for (const ShellCommand& c : m_reader.commands()) {
                if (c.words.empty() || baseName(c.words.front()) != "deepspeed")
                    continue;
                notFollowed += "; line " + std::to_string(c.line)
                    + " runs DeepSpeed's launcher (deepspeed), which this import does not read";
                break;
            }
            // A shell run on a command string (srun ... sh -c "$CMD"), or a batch job's script
            // on sbatch's standard input: read as commands, and held none. A batch script file
            // is not read.
            for (const ShellCommand& c : m_reader.commands()) {
                if (const auto string = BashReader::commandStringAt(c.words))
                    notFollowed += "; line " + std::to_string(c.line) + " runs " + string->name
                        + " -c on a command string, which was read as commands and holds none of these either";
                if (!c.words.empty() && baseName(c.words.front()) == "sbatch")
                    notFollowed += "; line " + std::to_string(c.line)
                        + " submits a batch job (sbatch): a script on its standard input is read, a script file is not "
                          "(import the batch script itself)";
            }
            if (!m_reader.sourceLines().empty())
                notFollowed += "; it sources another file " + atLines(m_reader.sourceLines()) + ", which is not followed";
            // Another script run as a program (bash ./run.sh, sh train.sh, ./train.sh): not followed.
            // Also under a launcher of processes (mpirun ... bash entry.sh ARGS, srun ... bash x.sh).
            for (const ShellCommand& c : m_reader.commands()) {
                if (c.words.empty())
                    continue;
                const std::string first = baseName(c.words.front());
                const bool wrapper = first == "mpirun" || first == "mpiexec" || first == "srun";
                std::size_t at = 0;
                if (wrapper) {
                    at = 1;
                    while (at < c.words.size() && baseName(c.words[at]) != "bash" && baseName(c.words[at]) != "sh"
                           && !c.words[at].ends_with(".sh"))
                        ++at;
                    if (at == c.words.size())
                        continue;
                }
                const std::string word = baseName(c.words[at]);
                const bool shell = word == "bash" || word == "sh";
                const std::string script = shell && c.words.size() > at + 1 && c.words[at + 1].rfind('-', 0) != 0 ? c.words[at + 1]
                                           : !shell && c.words[at].size() > 3 && c.words[at].ends_with(".sh") ? c.words[at]
                                                                                                              : std::string();
                if (!script.empty()) {
                    const bool args = c.words.size() > at + (shell ? 2 : 1);
                    notFollowed += "; line " + std::to_string(c.line) + " runs another script (" + script
                        + (wrapper ? " under " + first : std::string()) + "), which is not followed (import that script itself"
                        + (args ? ", with --script-args for the words it is given" : "") + ")";
                    break;
                }
            }
            // A YAML configuration (FlagScale's, Megatron-MoE-ModelZoo's) read as bash holds no
            // command: say what to import instead.
            const bool yamlName = m_out.file.ends_with(".yaml") || m_out.file.ends_with(".yml");
            if (yamlName || looksLikeYaml(m_text))   // the rest read YAML keys as commands
                notFollowed = "; the file looks like a YAML configuration, which this import does not read: import the launch "
                               "script made from it (FlagScale's runner writes host_<rank>_<host>_run.sh under its log "
                               "directory's scripts/, and its dryrun action writes them without training; "
                               "Megatron-MoE-ModelZoo's runner prints its command with DRY_RUN=1; docs/megatron.md)";
            // An exit bash runs before any launch command: what follows it is never run.
            const int exitLine = m_reader.exitLine();
            const int syntaxLine = m_reader.syntaxErrorLine();
            throw InputError(m_out.file, "",
                             "no launch command found: expected torchrun, python -m torch.distributed.run or "
                             "python <entry>.py with Megatron-LM flags"
                                 + (exitLine == 0 ? std::string()
                                                  : "; the script exits at line " + std::to_string(exitLine)
                                                        + ", and bash runs nothing after it")
                                 + (syntaxLine == 0 ? std::string()
                                                    : "; the script has a syntax error at line " + std::to_string(syntaxLine)
                                                          + " (" + m_reader.syntaxErrorText()
                                                          + "), where bash stops reading it, and the reading past it found none")
                                 + (uncalled.empty() ? std::string()
                                                     : "; the script defines functions whose commands bash does not run: "
                                                           + uncalled)
                                 + notFollowed);
        }
        m_out.command_line = launch->line;
        // cd and source before the launch command (in the order run; the launch is itself one
        // of the commands).
        for (const ShellCommand& c : m_reader.commands()) {
            if (&c == launch)
                break;
            if (!c.words.empty() && (c.words.front() == "cd" || c.words.front() == "source" || c.words.front() == "."))
                m_out.setup_commands.push_back({c.line, c.words});
        }
        // A command after the launch command that starts with a flag: bash ran the launch
        // command without it, since a line continuation above it is broken (a comment line
        // inside the command, a blank after the backslash).
        for (const ShellCommand& c : m_reader.commands())
            if (c.line > launch->line && !c.words.empty() && c.words.front().rfind("--", 0) == 0) {
                warn("line " + std::to_string(c.line) + ": a command of its own starts with " + c.words.front()
                     + ": bash runs the launch command (line " + std::to_string(launch->line)
                     + ") without it and the flags after it; a line continuation above it is broken (a comment line, or a blank "
                       "after the backslash)");
                break;
            }
        // What the script had exported when the launch command ran.
        m_out.environment = launch->exported;
        m_out.environment_raw = launch->exported_raw;
        // NAME=value before the launch command (or after env): its environment, as an export
        // is; a prefix on any other command is that command's alone (bash manual 3.7.4).
        auto addLaunchVariable = [&](const std::string& entry, const std::string* raw) {
            const std::string name = entry.substr(0, entry.find('='));
            std::erase_if(m_out.environment, [&](const std::string& e) { return e.substr(0, e.find('=')) == name; });
            m_out.environment.push_back(entry);
            m_out.environment_raw.erase(name);
            if (raw)
                m_out.environment_raw[name] = *raw;
        };
        for (const std::string& e : launch->environment) {
            const auto raw = launch->environment_raw.find(e.substr(0, e.find('=')));
            addLaunchVariable(e, raw == launch->environment_raw.end() ? nullptr : &raw->second);
        }
        for (const std::string& e : m_launchEnvironment)
            addLaunchVariable(e, nullptr);
        if (auto it = m_reader.arrays().find("NODE_HOSTS"); it != m_reader.arrays().end())
            m_out.node_hosts = it->second;
        if (auto it = m_reader.arrays().find("NODE_TYPES"); it != m_reader.arrays().end())
            m_out.node_types = it->second;
        if (auto it = m_reader.arrays().find("NODE_DEVICES"); it != m_reader.arrays().end())
            readNodeDevices(it->second);
        parseLauncher(*launch);
        parseFlags();
        buildModel();
        buildParallel();
        // Without padding Megatron-LM's vocab-parallel embedding and output layer split the
        // vocabulary itself over TP (tensor_parallel/utils.py divide asserts divisibility).
        const std::string noPad = has("--no-pad-vocab-size") ? "--no-pad-vocab-size" : "--disable-pad-vocab-size";
        if (has(noPad) && !has("--padded-vocab-size") && m_out.parallel.tp > 1 && m_out.model.vocab_size % m_out.parallel.tp != 0)
            warn(at(noPad) + noPad + ": the vocabulary " + std::to_string(m_out.model.vocab_size)
                 + " is not padded, and Megatron-LM's vocab-parallel layers need it divisible by TP " + std::to_string(m_out.parallel.tp)
                 + "; the model is costed padded to a multiple of TP");
        checkChoices();
        // The reader's findings (assignments) and the launch command's own come first.
        std::vector<std::string> all = m_reader.warningsUntil(*launch);
        // An array indexed by the node rank cannot be expanded from the text; where the
        // importer reads it per node (nodeRankArray), bash's own index is no finding.
        std::erase_if(all, [&](const std::string& w) {
            return std::any_of(m_nodeRankIndexes.begin(), m_nodeRankIndexes.end(), [&](const std::string& index) {
                return w.find("array index " + index + " is not a number; kept as text") != std::string::npos;
            });
        });
        all.insert(all.end(), launch->warnings.begin(), launch->warnings.end());
        all.insert(all.end(), m_out.warnings.begin(), m_out.warnings.end());
        m_out.warnings = std::move(all);
        return std::move(m_out);
    }

private:
    static bool isPython(const std::string& w)
    {
        const std::string b = baseName(w);
        return b == "python" || b == "python3" || (b.rfind("python3.", 0) == 0);
    }

    // How one command would launch the entry script, if it does.
    struct Launch {
        const ShellCommand* command = nullptr;
        std::size_t start = 0;             // the launcher word (torchrun, torch.distributed.run) or the entry
        std::string launcher;
        bool direct_python = false;
        std::string wrapper;               // srun, numactl, mpirun
        std::vector<std::string> wrapper_args;
        std::vector<std::string> environment;   // env NAME=value ... before it
        int rank = 0;                      // higher is likelier the training launch
    };

    static std::optional<Launch> launchOf(const ShellCommand& c)
    {
        Launch l;
        l.command = &c;
        std::size_t i = 0;
        // Wrappers that run the real command: srun, exec, nohup, env, numactl, time, uv run,
        // nsys profile.
        while (i < c.words.size()) {
            const std::string b = baseName(c.words[i]);
            if (b == "exec" || b == "nohup" || b == "env" || b == "time") {
                ++i;
                while (i < c.words.size() && c.words[i].find('=') != std::string::npos && c.words[i][0] != '-') {
                    if (b == "env")
                        l.environment.push_back(c.words[i]);
                    ++i;
                }
                continue;
            }
            // `uv run [options] python ...` (a project's environment) and `nsys profile
            // [options] torchrun ...` (a profile of the run): the command after their options.
            if ((b == "uv" && i + 1 < c.words.size() && c.words[i + 1] == "run")
                || (b == "nsys" && i + 1 < c.words.size() && c.words[i + 1] == "profile")) {
                i += 2;
                while (i < c.words.size() && !isPython(c.words[i]) && baseName(c.words[i]) != "torchrun")
                    ++i;
                continue;
            }
            if (b == "srun" || b == "numactl" || b == "mpirun" || b == "mpiexec") {
                l.wrapper = b;
                l.wrapper_args.clear();
                ++i;
                while (i < c.words.size() && !isPython(c.words[i]) && baseName(c.words[i]) != "torchrun") {
                    l.wrapper_args.push_back(c.words[i]);
                    ++i;
                }
                continue;
            }
            break;
        }
        if (i >= c.words.size())
            return std::nullopt;
        const std::string b = baseName(c.words[i]);
        if (b == "torchrun") {
            l.start = i;
            l.launcher = "torchrun";
        } else if (isPython(b)) {
            std::size_t j = i + 1;
            while (j < c.words.size() && c.words[j].size() > 1 && c.words[j][0] == '-' && c.words[j] != "-m") ++j;
            if (j + 1 < c.words.size() && c.words[j] == "-m"
                && (c.words[j + 1] == "torch.distributed.run" || c.words[j + 1] == "torch.distributed.launch")) {
                l.start = j + 1;
                l.launcher = "python -m " + c.words[j + 1];
            } else if (j < c.words.size() && c.words[j].size() > 3 && c.words[j].compare(c.words[j].size() - 3, 3, ".py") == 0) {
                l.start = j;
                l.launcher = "python";
                l.direct_python = true;
            } else {
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
        // A command that carries Megatron-LM's model flags outranks one that does not, and a
        // distributed launcher outranks a bare "python X.py" (a preprocessing or conversion
        // step earlier in the script).
        const bool modelFlags = std::any_of(c.words.begin() + static_cast<std::ptrdiff_t>(l.start), c.words.end(), [](const std::string& w) {
            return w == "--num-layers" || w.rfind("--num-layers=", 0) == 0 || w == "--hidden-size" || w.rfind("--hidden-size=", 0) == 0;
        });
        l.rank = (modelFlags ? 2 : 0) + (l.direct_python ? 0 : 1);
        return l;
    }

    const ShellCommand* findLaunch()
    {
        std::optional<Launch> best;
        std::optional<Launch> first;
        int runs = 0;   // of the launch command's line (a loop over configurations)
        for (const ShellCommand& c : m_reader.commands()) {
            std::optional<Launch> l = launchOf(c);
            if (!l)
                continue;
            if (!first)
                first = l;
            if (best && l->rank == best->rank && c.line == best->command->line)
                ++runs;
            if (!best || l->rank > best->rank) {
                best = std::move(l);
                runs = 1;
            }
        }
        if (!best)
            return nullptr;
        if (runs > 1)
            warn("line " + std::to_string(best->command->line) + ": the launch command runs " + std::to_string(runs)
                 + " times (a loop over configurations); the first run is read");
        m_launchStart = best->start;
        m_out.launcher = best->launcher;
        m_directPython = best->direct_python;
        m_wrapper = best->wrapper;
        m_wrapperArgs = best->wrapper_args;
        m_launchEnvironment = best->environment;
        if (first->command != best->command)
            warn("line " + std::to_string(first->command->line) + ": " + first->launcher
                 + (first->direct_python ? " " + first->command->words[first->start] : std::string())
                 + " is not read as the launch command: the " + best->launcher + " command of line "
                 + std::to_string(best->command->line) + " is"
                 + (best->rank >= 2 ? " (it gives the model's flags)" : " (a distributed launcher)"));
        return best->command;
    }

    void warn(const std::string& message) { m_out.warnings.push_back(message); }
    std::string at() const { return "line " + std::to_string(m_out.command_line) + ": "; }
    // The line a flag is written on when the script writes it once, else the launch command's.
    std::string at(const std::string& flag) const
    {
        const auto& lines = m_reader.flagLines();
        if (auto it = lines.find(flag); it != lines.end() && it->second.size() == 1)
            return "line " + std::to_string(it->second.front()) + ": ";
        return at();
    }
    // Every line a flag is written on ("lines 12, 40: "), for a flag given more than once.
    std::string atEvery(const std::string& flag) const
    {
        const auto& lines = m_reader.flagLines();
        auto it = lines.find(flag);
        if (it == lines.end() || it->second.size() < 2)
            return at(flag);
        std::string out = "lines ";
        for (std::size_t k = 0; k < it->second.size(); ++k)
            out += (k ? ", " : "") + std::to_string(it->second[k]);
        return out + ": ";
    }

    int launcherInt(const std::string& option, const std::string& value, int fallback)
    {
        std::string v = value;
        if (canonicalTorchrun(option) == "--nnodes" && v.find(':') != std::string::npos) {
            const auto lo = toInt(v.substr(0, v.find(':')));
            const auto hi = toInt(v.substr(v.find(':') + 1));
            if (lo && hi && *lo > *hi)
                m_out.invalid_values.push_back({"--nnodes", value, "MIN:MAX with MIN <= MAX",
                                                "--nnodes " + value + " has its minimum above its maximum, which torchrun refuses"});
            warn(at(option) + "elastic --nnodes " + v + ": the maximum is used");
            v = v.substr(v.find(':') + 1);
        }
        if (auto n = toInt(v); n && *n >= 1 && *n <= 1000000) {
            // torchrun takes it, but no cluster holds it (io/Documents.h): said with the flag
            // rather than by the cluster it would make.
            const std::string name = canonicalTorchrun(option);
            if (name == "--nnodes" && *n > kMaxNodes)
                m_out.invalid_values.push_back({"--nnodes", value, "", "--nnodes " + value + " is more nodes than the "
                                                                        + std::to_string(kMaxNodes) + " a cluster may have"});
            if (name == "--nproc-per-node" && *n > kMaxDevicesPerNode)
                m_out.invalid_values.push_back({"--nproc_per_node", value, "",
                                                "--nproc_per_node " + value + " is more processes than the "
                                                    + std::to_string(kMaxDevicesPerNode) + " devices a node may have"});
            return static_cast<int>(*n);
        }
        // A node count the script gives as it stands (0, -1, "abc") is one torchrun refuses
        // (torch.distributed.run asserts 0 < min_nodes <= max_nodes); a variable the reading
        // could not expand, or another launcher's option, only gets the assumption.
        if (canonicalTorchrun(option) == "--nnodes" && v.find('$') == std::string::npos && !v.empty()) {
            const auto n = toInt(v);
            m_out.invalid_values.push_back({"--nnodes", value, "an integer from 1 to 1000000",
                                            n && *n > 1000000 ? "--nnodes " + value + " is more nodes than the 1000000 a plan may have"
                                                              : "--nnodes " + value + " is no node count, which torchrun refuses"});
        }
        // So is a process count it cannot start (torch.distributed.run: an integer, or gpu,
        // cpu, xpu or auto, read before this; 0 starts no worker): refused, not assumed.
        if (canonicalTorchrun(option) == "--nproc-per-node" && v.find('$') == std::string::npos && !v.empty()) {
            const auto n = toInt(v);
            m_out.invalid_values.push_back(
                {"--nproc_per_node", value, "an integer from 1 to " + std::to_string(kMaxDevicesPerNode) + ", gpu, cpu, xpu or auto",
                 !n ? "--nproc_per_node " + value + " is no process count, which torchrun refuses (it takes an integer, gpu, cpu, "
                                                     "xpu or auto)"
                 : *n > kMaxDevicesPerNode
                     ? "--nproc_per_node " + value + " is more processes than the " + std::to_string(kMaxDevicesPerNode)
                           + " devices a node may have"
                     : "--nproc_per_node " + value + " starts no worker process"});
        }
        const bool nodes = canonicalTorchrun(option) == "--nnodes" && v.find('$') != std::string::npos;
        warn(at(option) + option + " " + value + ": expected an integer from 1 to 1000000; " + std::to_string(fallback)
             + " is assumed" + (nodes ? " (placed on a cluster given with --cluster, the script runs on its leading nodes of one type, as many as its parallelism divides)" : ""));
        return fallback;
    }

    // mpirun / mpiexec starting the entry script (one process per rank): the processes in all
    // (-np, -n, --np, -c) and per node (Open MPI's -npernode, -N and --map-by ppr:M:node; MPICH's
    // and Intel MPI's -ppn, -perhost).
    void readMpirun()
    {
        std::optional<std::pair<std::string, std::string>> total, perNode;
        for (std::size_t k = 0; k < m_wrapperArgs.size(); ++k) {
            std::string a = m_wrapperArgs[k];
            std::string v;
            if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
                v = a.substr(eq + 1);
                a = a.substr(0, eq);
            } else if (k + 1 < m_wrapperArgs.size()) {
                v = m_wrapperArgs[k + 1];
            }
            if (a == "-np" || a == "-n" || a == "--np" || a == "--n" || a == "-c") {
                total = std::make_pair(a, v);
            } else if (a == "-npernode" || a == "--npernode" || a == "-N" || a == "-ppn" || a == "-perhost") {
                perNode = std::make_pair(a, v);
            } else if (a == "--map-by" && v.rfind("ppr:", 0) == 0 && v.size() > 9 && v.ends_with(":node")) {
                perNode = std::make_pair(a, v.substr(4, v.size() - 9));
            }
        }
        const std::string name = m_wrapper;
        if (!total && !perNode) {
            warn(at() + name + " gives no process count (-np): one process is assumed");
            return;
        }
        const int all = total ? launcherInt(total->first, total->second, 1) : 0;
        const int per = perNode ? launcherInt(perNode->first, perNode->second, 1) : all;
        if (!perNode)
            warn(at() + name + " " + total->first + " " + total->second + " without a count per node (-npernode, -ppn): all "
                 + std::to_string(all) + " processes on one node are assumed");
        m_out.nproc_per_node = per;
        m_out.nnodes = total ? std::max(1, (all + per - 1) / per) : 1;
        if (total && all % per != 0)
            warn(at() + name + " " + total->first + " " + total->second + " is not a multiple of " + std::to_string(per)
                 + " processes per node; " + std::to_string(m_out.nnodes) + " nodes of " + std::to_string(per) + " are assumed");
    }

    // srun's options before "python X.py": each task is one process. -N/--nodes gives the
    // nodes, --ntasks-per-node the processes of each, -n/--ntasks the processes in all
    // (spread evenly: --ntasks / --nodes per node). Values come as "-N 2", "-N2",
    // "--nodes 2" or "--nodes=2" (Slurm's srun(1)). Those srun does not give come from the
    // job's allocation, the script's #SBATCH directives, as srun inherits them inside a job.
    void readSrun(const ShellCommand& launch)
    {
        std::optional<std::pair<std::string, std::string>> nodes, perNode, total;
        // A command of a batch script sbatch reads from standard input (sbatch <<EOF) has that
        // script's directives and sbatch's options; any other the script's own.
        const auto [directives, directiveLine] = launch.batch_job
            ? std::make_pair(launch.batch_options, launch.line)
            : BashReader::batchDirectives(m_text);
        std::vector<std::string> args = directives;
        args.insert(args.end(), m_wrapperArgs.begin(), m_wrapperArgs.end());
        std::map<std::string, std::string> fromDirectives;   // slot -> "--nodes=128", while a directive's value stands
        for (std::size_t k = 0; k < args.size(); ++k) {
            const bool directive = k < directives.size();
            const auto option = BashReader::slurmOptionAt(args, k, directive ? directives.size() : args.size(),
                                                          {"-N", "--nodes", "-n", "--ntasks", "--ntasks-per-node"});
            if (!option)
                continue;
            const std::string& a = option->name;
            const std::string slotName = (a == "-N" || a == "--nodes") ? "nodes" : (a == "--ntasks-per-node" ? "per-node" : "total");
            auto& slot = slotName == "nodes" ? nodes : (slotName == "per-node" ? perNode : total);
            slot = std::make_pair(a, option->value);
            if (directive)
                fromDirectives[slotName] = option->written;
            else
                fromDirectives.erase(slotName);
        }
        if (total)
            fromDirectives.erase("per-node");   // --ntasks wins (below)
        if (!fromDirectives.empty()) {
            std::vector<std::string> used;
            for (const auto& [slot, text] : fromDirectives)
                used.push_back(text);
            warn("line " + std::to_string(directiveLine) + ": srun takes " + join(used, ", ")
                 + (!launch.batch_job ? " from the script's #SBATCH directives (the job's allocation)"
                                                 : " from the batch job's options (sbatch's, and its script's #SBATCH directives)"));
        }
        if (nodes) {
            // A range "2-4" (minimum-maximum): the maximum, as torchrun's elastic MIN:MAX.
            std::string v = nodes->second;
            if (const auto dash = v.find('-'); dash != std::string::npos && dash > 0) {
                warn(at() + "srun " + nodes->first + " " + v + ": a range of node counts; the maximum is used");
                v = v.substr(dash + 1);
            }
            m_out.nnodes = launcherInt(nodes->first, v, 1);
        }
        // With both, --ntasks wins and --ntasks-per-node is a maximum (srun(1)).
        if (total) {
            const int tasks = launcherInt(total->first, total->second, 1);
            if (tasks % m_out.nnodes == 0) {
                m_out.nproc_per_node = tasks / m_out.nnodes;
            } else {
                m_out.nproc_per_node = (tasks + m_out.nnodes - 1) / m_out.nnodes;
                warn(at() + "srun " + total->first + " " + total->second + " over " + std::to_string(m_out.nnodes)
                     + " nodes is not the same number of processes on every node; " + std::to_string(m_out.nproc_per_node)
                     + " per node is assumed (give --ntasks-per-node)");
            }
        } else if (perNode) {
            m_out.nproc_per_node = launcherInt(perNode->first, perNode->second, 1);
        }
    }

    void parseLauncher(const ShellCommand& cmd)
    {
        const auto& w = cmd.words;
        std::size_t i = m_launchStart + 1;
        m_out.nnodes = 1;
        m_out.nproc_per_node = 1;
        if (m_directPython) {
            i = m_launchStart;
            if (m_wrapper == "srun") {
                readSrun(cmd);
            } else if (m_wrapper == "mpirun" || m_wrapper == "mpiexec") {
                readMpirun();
            } else {
                warn(at() + "the entry script is started without torchrun: one process is assumed");
            }
        } else {
            bool nprocAll = false;
            while (i < w.size()) {
                std::string a = w[i];
                // An unquoted variable the script does not set ($DISTRIBUTED_ARGS) is split by
                // bash into no word at all: the entry script follows.
                if (ShellQuote::isReference(a) && i + 1 < w.size()) {
                    warn(at() + "torchrun " + a + ": a variable the script does not set, so no option of the launcher; "
                                "give it with --script-env if it holds --nproc_per_node or --nnodes");
                    ++i;
                    continue;
                }
                if (a.empty() || a[0] != '-')
                    break;
                std::string value;
                bool hasValue = false;
                if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
                    value = a.substr(eq + 1);
                    a = a.substr(0, eq);
                    hasValue = true;
                }
                if (!hasValue && torchrunValueOptions().count(a) && i + 1 < w.size()) {
                    value = w[++i];
                    hasValue = true;
                }
                ++i;
                const std::string name = canonicalTorchrun(a);
                if (name == "--nproc-per-node") {
                    if (value == "gpu" || value == "auto" || value == "cpu" || value == "xpu") {
                        nprocAll = true;
                        warn(at(a) + a + " " + value + ": every device of a node is used");
                    } else if (value.rfind("$(", 0) == 0 || value.rfind("`", 0) == 0) {
                        // The idiom $(nvidia-smi -L | wc -l): a command counts the node's
                        // devices, which the reader does not run; the cluster's count stands in.
                        nprocAll = true;
                        warn(at(a) + a + " " + value + ": the output of a command that is not run; every device of a node "
                             "is assumed, as with --nproc_per_node gpu");
                    } else if (const std::vector<std::string>* perNode = nodeRankArray(value)) {
                        readNodeProcesses(a, value, *perNode);
                    } else {
                        m_out.nproc_per_node = launcherInt(a, value, 1);
                    }
                } else if (name == "--nnodes") {
                    m_out.nnodes = launcherInt(a, value, 1);
                    m_out.nnodes_unknown = value.find('$') != std::string::npos;
                } else if (name == "--master-addr") {
                    m_out.master_addr = value;
                } else if (name == "--master-port") {
                    m_out.master_port = value;
                } else if (name == "--rdzv-endpoint") {
                    const std::size_t colon = value.rfind(':');
                    m_out.master_addr = value.substr(0, colon);
                    if (colon != std::string::npos) m_out.master_port = value.substr(colon + 1);
                } else if (name == "--node-rank" || name == "--standalone" || name == "--rdzv-id" || name == "--rdzv-backend"
                           || name == "--log-dir" || name == "--redirects" || name == "--tee" || name == "-r" || name == "-t") {
                    // launch mechanics; the exporter writes its own
                } else if (name == "-m" || name == "--module" || name == "--no-python" || name == "--no_python") {
                    warn(at(a) + "torchrun " + a + " changes how the entry is started; it is not carried over");
                }
            }
            if (nprocAll)
                m_out.nproc_per_node = 0;
        }
        if (i >= w.size())
            throw InputError(m_out.file, "line " + std::to_string(cmd.line), "the launch command names no entry script");
        m_out.entry_script = w[i];
        m_args.assign(w.begin() + static_cast<std::ptrdiff_t>(i) + 1, w.end());
        m_argReads.clear();
        if (cmd.word_reads.size() == w.size())
            m_argReads.assign(cmd.word_reads.begin() + static_cast<std::ptrdiff_t>(i) + 1, cmd.word_reads.end());
        m_argReads.resize(m_args.size());
        for (const std::string& read : cmd.vanished_environment_reads)
            if (!isSwitchMark(read))
                m_out.vanished_environment_reads.push_back(read);
        m_out.environment_defaults = m_reader.environmentDefaults();
        // Words a variable of the environment would have switched on, where this command's
        // words (or the variables and arrays they read) took the switch: not in the command
        // that is read. Only Megatron-LM's and FlagScale's flags: the launcher writes its own
        // options (torchrun's --master_addr, mpirun's -x NAME).
        const auto& switches = m_reader.environmentSwitches();
        for (const std::string& read : cmd.value_reads) {
            const auto sw = isSwitchMark(read) ? switches.find(read.substr(1)) : switches.end();
            if (sw == switches.end())
                continue;
            const std::string& name = sw->first;
            std::vector<std::string> flagWords, forms;
            for (const std::string& words : sw->second) {
                if (!holdsTargetFlag(words))
                    continue;
                flagWords.push_back(words);
                forms.push_back("${" + name + ":+" + words + "}");
            }
            if (flagWords.empty())
                continue;
            m_out.environment_switches[name] = flagWords;
            warn(at() + name + " is not set when the script is read, so " + join(forms, " and ")
                 + " adds nothing to the launch command; give " + name
                 + " a value in the script's environment to read the command with it");
        }
        // Words a branch would have given the launch command, skipped by a test on what the
        // text does not give (BashReader::skippedByTest).
        const auto& skipped = m_reader.skippedByTest();
        for (const std::string& read : cmd.value_reads) {
            if (!read.starts_with(BashReader::kSkippedMark))
                continue;
            const std::size_t index = std::strtoul(read.c_str() + BashReader::kSkippedMark.size(), nullptr, 10);
            // Words with a flag of the target, or a number a variable of the command would have
            // had (`if [ "$USE_TP4" = 1 ]; then TP=4; fi`: a size the command reads).
            const bool number = index < skipped.size() && !skipped[index].append && isNumberWord(skipped[index].words);
            if (index >= skipped.size() || !(number || holdsTargetFlag(skipped[index].words)))
                continue;
            const BashReader::SkippedByTest& s = skipped[index];
            m_out.skipped_by_test.push_back({s.line, s.name, s.words, s.reads});
            std::vector<std::string> names;
            bool arguments = false;
            for (const std::string& r : s.reads) {
                if (r[0] == '$')
                    arguments = true;
                else
                    names.push_back(r);
            }
            // Whether another value turns the test is the test's: the script's own variables
            // may decide it too, so the advice is to give what the run gives.
            std::string give;
            if (!names.empty())
                give = join(names, ", ") + " in the script's environment";
            if (arguments)
                give += std::string(give.empty() ? "" : ", or ") + "the script's arguments";
            warn("line " + std::to_string(s.line) + ": as the script is read, a test that depends on " + s.described
                 + ", skips the branch that " + (s.append ? "adds " + s.words + " to " + s.name : "sets " + s.name + " to " + s.words)
                 + ", so the launch command (line " + std::to_string(m_out.command_line) + ") "
                 + (number ? "reads " + s.name + " without that value" : std::string("lacks those words")) + ". Where the run gives "
                 + give + ", give the same here to read the command as it runs");
        }
        // In 64 bits: each count is at most 1,000,000, their product is not an int.
        long long world = m_out.nproc_per_node > 0 ? static_cast<long long>(m_out.nnodes) * m_out.nproc_per_node : 0;
        if (!m_out.node_processes.empty()) {
            world = 0;
            for (std::size_t r = 0; r < m_out.node_processes.size() && static_cast<int>(r) < m_out.nnodes; ++r)
                world += m_out.node_processes[r];
        }
        if (world > kMaxWorldSize) {
            m_out.invalid_values.push_back({"--nnodes", std::to_string(m_out.nnodes),
                                            "at most " + std::to_string(kMaxWorldSize) + " processes in all",
                                            "the launch starts " + std::to_string(world) + " processes (--nnodes x "
                                                "--nproc_per_node); expected at most "
                                                + std::to_string(kMaxWorldSize) + ", the most devices a cluster may have"});
            world = 0;
        }
        m_out.world_size = static_cast<int>(world);
        // An array shorter than the nodes leaves the last node ranks an empty --nproc_per_node,
        // which torchrun refuses there: the script cannot run, with a cluster or without.
        if (!m_out.node_processes.empty() && !m_out.nnodes_unknown
            && static_cast<int>(m_out.node_processes.size()) < m_out.nnodes)
            m_out.invalid_values.push_back(
                {"--nproc_per_node", std::to_string(m_out.node_processes.size()) + " values",
                 "one process count for each of the " + std::to_string(m_out.nnodes) + " node ranks",
                 "--nproc_per_node takes " + std::to_string(m_out.node_processes.size())
                     + " values from an array indexed by the node rank, for --nnodes " + std::to_string(m_out.nnodes)
                     + ": node rank " + std::to_string(m_out.node_processes.size())
                     + " has none, and torchrun refuses an empty --nproc_per_node"});
    }

    // A value the script takes per node, "${NAME[${NODE_RANK}]}" (or $NODE_RANK, or another
    // node-rank variable), as the exported FlagScale launcher writes NODE_SLOTS and NODE_TYPES:
    // the array's elements, one per node rank, or null for any other value.
    const std::vector<std::string>* nodeRankArray(const std::string& value) const
    {
        static const std::regex form(R"(^\$\{([A-Za-z_][A-Za-z0-9_]*)\[\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\]\}$)");
        std::smatch m;
        if (!std::regex_match(value, m, form))
            return nullptr;
        const std::string index = m[2];
        if (index != "NODE_RANK" && index != "SLURM_NODEID" && index != "GROUP_RANK"
            && !(index.size() > 9 && index.compare(index.size() - 9, 9, "NODE_RANK") == 0))
            return nullptr;
        const auto it = m_reader.arrays().find(m[1]);
        if (it == m_reader.arrays().end() || it->second.empty())
            return nullptr;
        m_nodeRankIndexes.insert("[" + value.substr(value.find('[') + 1, value.rfind(']') - value.find('[') - 1) + "]");
        return &it->second;
    }

    void readNodeProcesses(const std::string& option, const std::string& value, const std::vector<std::string>& perNode)
    {
        std::vector<int> counts;
        for (std::size_t i = 0; i < perNode.size(); ++i) {
            const std::string& e = perNode[i];
            const auto n = toInt(e);
            if (!n || *n < 1 || *n > kMaxDevicesPerNode) {
                // A count written in the array (0, 99999999999) is one torchrun refuses on that
                // node, as a plain --nproc_per_node 0 is; one the reading could not expand only
                // gets the assumption.
                if (!e.empty() && e.find_first_of("$`") == std::string::npos) {
                    const std::string element = "node rank " + std::to_string(i) + "'s " + option + " " + e;
                    m_out.invalid_values.push_back(
                        {option, value, "an integer from 1 to " + std::to_string(kMaxDevicesPerNode) + " for every node rank",
                         !n ? element + " is no process count, which torchrun refuses"
                         : *n > kMaxDevicesPerNode
                             ? element + " is more processes than the " + std::to_string(kMaxDevicesPerNode) + " devices a node may have"
                             : element + " starts no worker process"});
                }
                warn(at(option) + option + " " + value + ": element \"" + e + "\" is not an integer from 1 to "
                     + std::to_string(kMaxDevicesPerNode) + "; 1 is assumed");
                m_out.nproc_per_node = 1;
                return;
            }
            counts.push_back(static_cast<int>(*n));
        }
        m_out.node_processes = counts;
        m_out.nproc_per_node = counts.front();
    }

    static bool looksLikeFlag(const std::string& t)
    {
        if (t.size() < 2 || t[0] != '-')
            return false;
        // "-1", "-0.5", "-.5" are values
        return !(std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.');
    }

    void parseFlags()
    {
        const FlagList& megatron = FlagList::megatron();
        const FlagList& flagscale = FlagList::flagscale();
        auto readsOf = [&](std::size_t from, std::size_t to, ScriptFlag& flag) {
            // In the order first read, each once (a string of thousands of words can share
            // thousands of reads); a word's own reads, then those of the eval text it came from.
            NameList reads, exact;
            for (std::size_t k = from; k < to && k < m_argReads.size(); ++k) {
                const WordReads& r = m_argReads[k];
                for (const std::string& name : WordReads::of(r.names))
                    if (!name.empty() && !isSwitchMark(name)) {
                        reads.add(name);
                        if (r.exact)
                            exact.add(name);
                    }
                for (const std::string& name : WordReads::of(r.text_names))
                    if (!name.empty() && !isSwitchMark(name))
                        reads.add(name);
            }
            flag.environment_reads = reads.names();
            flag.exact_environment_reads = exact.names();
        };
        for (std::size_t i = 0; i < m_args.size();) {
            const std::string& t = m_args[i];
            ScriptFlag flag;
            const std::size_t start = i;
            if (!looksLikeFlag(t) && isOutsideReference(t)) {
                // Bash splits it into the arguments the environment gives, none or several.
                flag.name = t;
                readsOf(start, start + 1, flag);
                m_out.other_flags.push_back(flag);
                ++i;
                continue;
            }
            if (!looksLikeFlag(t)) {
                warn(at() + "value \"" + t + "\" without a flag before it; kept");
                flag.name = t;
                readsOf(start, start + 1, flag);
                m_out.other_flags.push_back(flag);
                ++i;
                continue;
            }
            flag.name = t;
            ++i;
            bool attached = false;
            if (auto eq = t.find('='); eq != std::string::npos && t.rfind("--", 0) == 0) {
                flag.name = t.substr(0, eq);
                flag.values.push_back(t.substr(eq + 1));
                attached = true;
            }
            // Megatron-LM's argparse takes as many values as the flag's nargs (FlagList), and a
            // "--flag=value" exactly one; a word after them is no value of the flag: bash's
            // words from a variable the script does not set (EXTRA_ARGS, kept as ${EXTRA_ARGS})
            // stand on their own once the flag has a value, anything else is an argument
            // Megatron-LM refuses.
            const std::optional<FlagList::ValueCount> count = megatron.valueCount(flag.name);
            while (i < m_args.size() && !looksLikeFlag(m_args[i])) {
                const int have = static_cast<int>(flag.values.size());
                if ((count && attached) || (count && count->max >= 0 && have >= count->max))
                    break;
                if (isOutsideReference(m_args[i]) && have >= std::max(1, count ? count->min : 1))
                    break;
                flag.values.push_back(m_args[i++]);
            }
            if (count)
                checkValueCount(flag, *count, attached, i);
            for (const std::string& v : flag.values)
                if (ShellQuote::isQuoted(v))
                    warn(at(flag.name) + flag.name + " gets " + v
                         + " with the quote characters included (a \"flag value\" array element split by bash); kept as bash passes it");
            if (!megatron.contains(flag.name) && !flagscale.contains(flag.name))
                warn(at(flag.name) + "unknown flag " + flag.name
                     + " (not an option of Megatron-LM d98e8a64 or FlagScale); kept verbatim");
            if (m_flags.count(flag.name) && mappedFlags().count(flag.name))
                warn(atEvery(flag.name) + flag.name + " is given more than once; the last value is used");
            readsOf(start, i, flag);
            dropLiteralReads(flag, attached);
            m_flags[flag.name] = flag.values;
            m_out.given_flags.insert(flag.name);
            if (!mappedFlags().count(flag.name))
                m_out.other_flags.push_back(std::move(flag));
        }
    }

    // A flag with its values written as they are read in the words the script ran
    // ("--data-path /data/mix/train" in OTHER="... ${CKPT:-/data/mix} ..."), whose words read
    // variables only as words bash split from one value: its values are the text's, not those
    // variables'. Not the words of a branch the reading skipped, nor comments (ranText).
    void dropLiteralReads(ScriptFlag& flag, bool attached)
    {
        if (flag.values.empty() || flag.environment_reads.size() == flag.exact_environment_reads.size())
            return;
        static const std::string before = " =(`", after = " ;)`|&";
        if (m_flatText.empty()) {
            // Line continuations joined, each run of blanks one space, no quote characters
            // ("--data-path" "/data/mix/train"); then where each "--flag" word starts. Built
            // once: it starts with a blank.
            const std::string& ran = m_reader.ranText();
            m_flatText.reserve(ran.size() + 1);
            m_flatText.push_back(' ');
            for (std::size_t k = 0; k < ran.size(); ++k) {
                const char c = ran[k];
                if (c == '"' || c == '\'')
                    continue;
                const bool continuation = c == '\\' && k + 1 < ran.size() && ran[k + 1] == '\n';
                const bool blank = continuation || c == ' ' || c == '\t' || c == '\r' || c == '\n';
                if (continuation)
                    ++k;
                if (!blank)
                    m_flatText.push_back(c);
                else if (m_flatText.back() != ' ')
                    m_flatText.push_back(' ');
            }
            for (std::size_t at = m_flatText.find("--"); at != std::string::npos; at = m_flatText.find("--", at + 2))
                if (before.find(m_flatText[at - 1]) != std::string::npos)
                    m_flagAt[flagKey(m_flatText, at)].push_back(at);
        }
        std::string written = flag.name;
        for (std::size_t k = 0; k < flag.values.size(); ++k)
            written += (k == 0 && attached ? "=" : " ") + flag.values[k];
        // As whole words: "--save /ckpt" is not in "--save /ckpt2". Once per text (a flag
        // given thousands of times).
        const auto known = m_writtenRan.find(written);
        bool ran = known != m_writtenRan.end() && known->second;
        if (known == m_writtenRan.end()) {
            if (const auto at = m_flagAt.find(flagKey(written, 0)); at != m_flagAt.end())
                for (const std::size_t start : at->second) {
                    const std::size_t end = start + written.size();
                    if (m_flatText.compare(start, written.size(), written) == 0
                        && (end == m_flatText.size() || after.find(m_flatText[end]) != std::string::npos)) {
                        ran = true;
                        break;
                    }
                }
            m_writtenRan.emplace(written, ran);
        }
        if (ran)
            flag.environment_reads = flag.exact_environment_reads;
    }

    // The "--flag" word starting at `at` with its first value's first word, "--flag value" or
    // "--flag=value": the places a flag is written are looked up by it, so that one flag given
    // thousands of times with different values is not compared at each of its places. The
    // same rule for the text and for the words looked for: where these hold the key's end
    // (or its 128th byte), the text holds it there too. At most 128 bytes: a long word of
    // "=--" would otherwise give a key to its end at each.
    static std::string flagKey(const std::string& text, std::size_t at)
    {
        constexpr std::size_t kMaxKey = 128;
        const std::size_t stop = std::min(text.size(), at + kMaxKey);
        std::size_t end = at;
        while (end < stop && std::string_view(" =;)`|&").find(text[end]) == std::string_view::npos)
            ++end;
        if (end < stop && (text[end] == ' ' || text[end] == '=')) {
            ++end;
            while (end < stop && std::string_view(" ;)`|&").find(text[end]) == std::string_view::npos)
                ++end;
        }
        return text.substr(at, end - at);
    }

    // "+NAME" marks a switch that gave nothing (ShellCommand::value_reads), not a read.
    static bool isSwitchMark(const std::string& read) { return !read.empty() && read.front() == '+'; }

    // A value that is one number as written (4, "8", 1e-4): what a size or a rate is set to.
    static bool isNumberWord(const std::string& words)
    {
        std::string w = words;
        w.erase(std::remove_if(w.begin(), w.end(), [](char c) { return c == '"' || c == '\''; }), w.end());
        if (w.empty() || w.find_first_not_of("0123456789.eE+-") != std::string::npos)
            return false;
        return std::isdigit(static_cast<unsigned char>(w.front())) != 0;
    }

    // Whether the words a switch gives hold a flag of Megatron-LM or FlagScale
    // ("--fp8-format hybrid", "\"--use-legacy-models\"").
    static bool holdsTargetFlag(const std::string& words)
    {
        std::istringstream in(words);
        for (std::string w; in >> w;) {
            w.erase(std::remove_if(w.begin(), w.end(), [](char c) { return c == '"' || c == '\''; }), w.end());
            const std::string name = w.substr(0, w.find('='));
            if (name.rfind("--", 0) == 0 && (FlagList::megatron().contains(name) || FlagList::flagscale().contains(name)))
                return true;
        }
        return false;
    }

    // A whole word that is a variable the script does not set, kept as ${NAME} by the reader.
    static bool isOutsideReference(const std::string& word) { return ShellQuote::isReference(word); }

    // A FlagScale script: heterogeneous meshes, or FlagScale's own entry script
    // (flagscale/train/train_gpt.py).
    bool runsFlagScale() const
    {
        if (m_out.parallel.hetero() || lower(m_out.entry_script).find("flagscale") != std::string::npos)
            return true;
        // Or a flag only FlagScale's fork has (--multiple-of, --hidden-dim-multiplier, ...):
        // its older scripts start pretrain_gpt.py from the fork's own folder.
        const FlagList& megatron = FlagList::megatron();
        const FlagList& flagscale = FlagList::flagscale();
        return std::any_of(m_flags.begin(), m_flags.end(),
                           [&](const auto& f) { return flagscale.contains(f.first) && !megatron.contains(f.first); });
    }

    // Argparse's choices (FlagList): a value outside them stops Megatron-LM before it starts.
    // FlagScale runs an older Megatron-LM with choices of its own (--distributed-backend
    // flagcx, its *FS tokenizers), so its scripts are held to them only for the flags read
    // into the model.
    void checkChoices()
    {
        const FlagList& megatron = FlagList::megatron();
        for (const auto& [name, values] : m_flags) {
            const std::vector<std::string>* choices = megatron.choices(name);
            // FlagScale's fork adds tokenizers (QwenTokenizer, AquilaTokenizer, ...): a
            // FlagScale script's tokenizer only decides the vocabulary (buildModel).
            if (!choices || (runsFlagScale() && (!mappedFlags().count(name) || name == "--tokenizer-type")))
                continue;
            for (const std::string& raw : values) {
                const std::string v = ShellQuote::unquoted(raw);
                if (v.find("${") != std::string::npos || std::find(choices->begin(), choices->end(), v) != choices->end())
                    continue;
                m_out.invalid_values.push_back({name, v, "", at(name) + "expected one of " + join(*choices, ", ") + ", got \"" + v
                                                + "\" (Megatron-LM's choices, which are case-sensitive)"});
            }
        }
    }

    // Argparse's rule for the values of a flag: too few ("expected one argument") or a word
    // left over ("unrecognized arguments") stops Megatron-LM before it starts, and so stops
    // the import. `next` is the word after the values taken.
    void checkValueCount(const ScriptFlag& flag, const FlagList::ValueCount& count, bool attached, std::size_t next)
    {
        auto takes = [&] {
            if (count.max == 0)
                return std::string("no value (a switch)");
            if (count.max < 0)
                return std::string(count.min == 0 ? "any number of values" : "one value or more");
            return count.max == 1 ? std::string("one value") : std::to_string(count.max) + " values";
        };
        const std::string where = at(flag.name);
        if (attached && count.max == 0) {
            m_out.invalid_values.push_back({flag.name, flag.values.front(), "", where + "takes " + takes() + ", got \""
                                            + flag.name + "=" + flag.values.front()
                                            + "\": Megatron-LM refuses it (argparse: ignored explicit argument)"});
            return;
        }
        if (static_cast<int>(flag.values.size()) < count.min) {
            m_out.invalid_values.push_back({flag.name, "", "", where + "takes " + takes() + ", got "
                                            + (flag.values.empty() ? std::string("none") : std::to_string(flag.values.size()))
                                            + ": Megatron-LM refuses it (argparse: expected " + takes() + ")"});
            return;
        }
        std::vector<std::string> extra;
        for (std::size_t k = next; k < m_args.size() && !looksLikeFlag(m_args[k]) && !isOutsideReference(m_args[k]); ++k)
            extra.push_back(m_args[k]);
        if (extra.empty())
            return;
        m_out.invalid_values.push_back({flag.name, "", "", where + "takes " + takes() + ", and \"" + join(extra, " ")
                                        + "\" follows " + (flag.values.empty() ? std::string("it") : "\"" + join(flag.values, " ") + "\"")
                                        + ": Megatron-LM refuses the extra argument" + (extra.size() > 1 ? "s" : "")
                                        + " (argparse: unrecognized arguments)"});
    }

    bool has(const std::string& name) const { return m_flags.count(name) > 0; }

    std::optional<std::string> str(const std::string& name)
    {
        auto it = m_flags.find(name);
        if (it == m_flags.end())
            return std::nullopt;
        if (it->second.empty()) {
            warn(at(name) + name + " has no value; ignored");
            return std::nullopt;
        }
        return it->second.front();
    }

    int intFlag(const std::string& name, int fallback, int min = 1)
    {
        constexpr int kMax = 100000000;
        const bool given = has(name);
        const auto v = str(name);
        if (!v) {
            if (given)
                m_out.invalid_values.push_back({name, "", "an integer from " + std::to_string(min) + " to " + std::to_string(kMax), ""});
            return fallback;
        }
        const auto n = toInt(*v);
        if (!n || *n < min || *n > kMax) {
            rejectValue(name, *v, "an integer from " + std::to_string(min) + " to " + std::to_string(kMax), std::to_string(fallback));
            return fallback;
        }
        return static_cast<int>(*n);
    }

    // A number from min to max (Megatron-LM's float flags, such as the dropouts).
    double realFlag(const std::string& name, double fallback, double min, double max)
    {
        const std::string expected = "a number from " + numberForMessage(min) + " to " + numberForMessage(max);
        const bool given = has(name);
        const auto v = str(name);
        if (!v) {
            if (given)
                m_out.invalid_values.push_back({name, "", expected, ""});
            return fallback;
        }
        const auto x = toReal(ShellQuote::unquoted(*v));
        if (!x || !(*x >= min && *x <= max)) {
            rejectValue(name, *v, expected, numberForMessage(fallback));
            return fallback;
        }
        return *x;
    }

    // A value a mapped flag cannot take: warned, and listed so that a caller that needs the
    // model whole (hapmoe import, the GUI) can refuse it.
    void rejectValue(const std::string& name, const std::string& v, const std::string& expected, const std::string& fallback)
    {
        warn(at(name) + name + " " + v + ": expected " + expected + "; " + fallback + " is used");
        // A variable left unset (an argument or an environment variable not given): say
        // where its value would come from.
        const std::string unset = v.find("${") != std::string::npos
            ? " (a variable the script does not set when read as given: pass the script's arguments with --script-args "
              "or its environment with --script-env)"
            : std::string();
        m_out.invalid_values.push_back({name, v, expected, at(name) + "expected " + expected + ", got \"" + v + "\"" + unset});
    }

    void buildModel()
    {
        ModelSpec& m = m_out.model;
        m.name = withoutControls(baseName(m_out.file));   // a file name may hold what no name may
        if (const std::size_t dot = m.name.rfind('.'); dot != std::string::npos && dot > 0)
            m.name.resize(dot);
        m.source = "imported from " + withoutControls(m_out.file);
        if (const std::string inputs = describeScriptInputs(m_out.inputs); !inputs.empty())
            m.source += " " + inputs;
        m.source += " (hapmoe import)";
        m.num_layers = intFlag("--num-layers", 0);
        m.hidden_size = intFlag("--hidden-size", 0);
        m.num_attention_heads = intFlag("--num-attention-heads", 0);
        // --use-checkpoint-args: Megatron-LM's load_args_from_checkpoint takes the model's
        // arguments from the checkpoint in --load before checking them, which import does not read.
        if (has("--use-checkpoint-args")) {
            std::string missing;
            for (const char* required : {"--num-layers", "--hidden-size", "--num-attention-heads"})
                if (!has(required))
                    missing += (missing.empty() ? "" : ", ") + std::string(required);
            const std::string load = str("--load").value_or("");
            const std::string from = "the checkpoint" + (load.empty() ? std::string() : " in --load " + quotedValue(load));
            if (!missing.empty())
                broken("--use-checkpoint-args", "the script takes the model's arguments from " + from
                                                    + ", which import does not read, and gives no " + missing
                                                    + ": add the model's flags to the script (the checkpoint's values)");
            else
                warn(at("--use-checkpoint-args") + "--use-checkpoint-args: at run time the arguments saved in " + from
                     + " replace the script's; the model is read from the script's flags");
        }
        for (const char* required : {"--num-layers", "--hidden-size", "--num-attention-heads"})
            if (!has(required))
                warn(at() + "the launch command has no " + std::string(required) + " (Megatron-LM requires it)");
        // A gated MLP: SwiGLU, or Megatron-LM's --quick-geglu (argument_utils.py sets
        // gated_linear_unit for it), which the model costs alike (three matrices).
        m.swiglu = has("--swiglu") || has("--quick-geglu");
        if (has("--quick-geglu") && !has("--swiglu"))
            warn(at("--quick-geglu") + "--quick-geglu is a gated MLP (Megatron-LM sets gated_linear_unit): costed as SwiGLU's "
                 "three matrices");
        // Megatron's default FFN: 4h, or with SwiGLU int(8h/3/64)*64 (validate_args).
        int defaultFfn = has("--swiglu") ? (8 * m.hidden_size / 3 / 64) * 64 : 4 * m.hidden_size;
        // FlagScale's fork: with --swiglu and --multiple-of, int(8h/3), times
        // --hidden-dim-multiplier when given, rounded up to a multiple of --multiple-of (its
        // arguments.py, as flagscale/runner/auto_tuner restates it). Megatron-LM has neither flag.
        if (has("--swiglu") && has("--multiple-of") && !has("--ffn-hidden-size")) {
            const int multipleOf = intFlag("--multiple-of", 1);
            double hidden = std::floor(4.0 * m.hidden_size * 2.0 / 3.0);
            if (has("--hidden-dim-multiplier")) {
                const std::optional<double> factor = toReal(ShellQuote::unquoted(str("--hidden-dim-multiplier").value_or("")));
                if (factor && *factor > 0 && *factor < 1000)
                    hidden = std::floor(hidden * *factor);
                else
                    m_out.invalid_values.push_back({"--hidden-dim-multiplier", str("--hidden-dim-multiplier").value_or(""),
                                                    "a number greater than 0 (FlagScale asserts it)", ""});
            }
            const double ffn = multipleOf * std::ceil(hidden / multipleOf);
            if (ffn > 0 && ffn <= 1e8)
                defaultFfn = static_cast<int>(ffn);
        } else if (has("--hidden-dim-multiplier") && !has("--ffn-hidden-size")) {
            warn(at("--hidden-dim-multiplier") + "--hidden-dim-multiplier acts only with --swiglu and --multiple-of (FlagScale); "
                 "the FFN size is " + std::to_string(defaultFfn));
        }
        m.ffn_hidden_size = intFlag("--ffn-hidden-size", defaultFfn);
        // --num-query-groups only takes effect with --group-query-attention.
        if (has("--group-query-attention"))
            m.num_query_groups = intFlag("--num-query-groups", 1);
        else if (has("--num-query-groups"))
            warn(at("--num-query-groups") + "--num-query-groups without --group-query-attention is ignored by Megatron-LM (multi-head attention)");
        m.kv_channels = intFlag("--kv-channels", 0);
        // --encoder-seq-length is the same length for GPT: validate_args sets encoder_seq_length
        // from --seq-length, or seq_length from --encoder-seq-length when only it is given, and
        // asserts encoder_seq_length is None when --seq-length is (so the two together stop it).
        const std::string seqFlag = seqLengthFlag(m_out.given_flags);
        m.seq_length = intFlag(seqFlag, 0);
        if (!has(seqFlag))
            warn(at() + "no --seq-length (nor --encoder-seq-length); the sequence length is unknown");
        if (has("--seq-length") && has("--encoder-seq-length")) {
            const std::string seq = join(valuesOf("--seq-length")), encoder = join(valuesOf("--encoder-seq-length"));
            const std::string rule = "Megatron-LM stops on the two together (validate_args asserts encoder_seq_length is None when "
                                     "--seq-length is given)";
            broken("--encoder-seq-length", seq == encoder ? "given with --seq-length (both " + seq + "): " + rule + "; give one of them"
                                                          : encoder + " disagrees with --seq-length " + seq + ", and " + rule
                                                                + "; the model takes --seq-length's " + seq);
        }
        // Megatron-LM's multimodal entries run the language model at --decoder-seq-length (image
        // and text tokens); their --seq-length is the vision encoder's (examples/multimodal).
        {
            if (multimodalEntry(m_out.entry_script) && has("--decoder-seq-length")) {
                m_out.multimodal_encoder_seq_length = m.seq_length;
                m.seq_length = intFlag("--decoder-seq-length", m.seq_length);
                warn(at("--decoder-seq-length") + "the language model is costed at --decoder-seq-length " + std::to_string(m.seq_length)
                     + ", the sequence it runs in " + m_out.entry_script + " (" + seqFlag + " is the vision encoder's there)");
            }
            if (has("--freeze-LM"))
                warn(at("--freeze-LM") + "--freeze-LM is not modelled: the language model is costed as trained, with its "
                     "gradients and optimizer states, so time and memory are over-stated");
        }
        m.max_position_embeddings = intFlag("--max-position-embeddings", m.seq_length);
        // Megatron-LM's validate_args requires it (reference section 2, "Required").
        if (!has("--max-position-embeddings"))
            warn(at() + "the launch command has no --max-position-embeddings (Megatron-LM requires it); " + seqFlag + " "
                 + std::to_string(m.seq_length) + " is assumed");
        m.add_bias_linear = !has("--disable-bias-linear");
        m.untie_embeddings_and_output_weights = has("--untie-embeddings-and-output-weights");
        m.normalization = str("--normalization").value_or("LayerNorm");
        m.qk_layernorm = has("--qk-layernorm");
        m.attention_dropout = realFlag("--attention-dropout", m.attention_dropout, 0.0, 1.0);
        m.hidden_dropout = realFlag("--hidden-dropout", m.hidden_dropout, 0.0, 1.0);
        // DeepSeek's multi-latent attention: low-rank query and key/value projections, a rotary
        // part per head (defaults of arguments.py _add_mla_args; --q-lora-rank None is 0).
        m.multi_latent_attention = has("--multi-latent-attention");
        if (m.multi_latent_attention) {
            m.q_lora_rank = intFlag("--q-lora-rank", 0, 0);
            m.kv_lora_rank = intFlag("--kv-lora-rank", m.kv_lora_rank);
            m.qk_head_dim = intFlag("--qk-head-dim", m.qk_head_dim);
            m.qk_pos_emb_head_dim = intFlag("--qk-pos-emb-head-dim", m.qk_pos_emb_head_dim, 0);
            m.v_head_dim = intFlag("--v-head-dim", m.v_head_dim);
            if (has("--num-query-groups") && has("--group-query-attention"))
                warn(at("--num-query-groups") + "--num-query-groups does not apply to multi-latent attention (every head has "
                     "its own key and value from the latent)");
        }
        // Entry scripts of other model families: costed as a GPT decoder of the same flags.
        {
            const std::string entry = lower(m_out.entry_script);
            const std::string base = baseName(entry);
            const bool other = base == "pretrain_bert.py" || base == "pretrain_t5.py" || base == "pretrain_retro.py"
                || base == "pretrain_ict.py" || base == "pretrain_vision_classify.py" || base == "pretrain_vision_dino.py"
                || base == "pretrain_vision_inpaint.py" || multimodalEntry(entry);
            if (other)
                warn(at() + m_out.entry_script + " does not train a GPT decoder alone: the model is costed as a GPT decoder of "
                     "these flags (an encoder, a vision tower, frozen parts or other sequence lengths are not modelled)");
        }
        // Multi-token prediction: depths after the last decoder layer on the last stage
        // (docs/cost-model.md section 3.9); Megatron-LM's None is 0.
        m.mtp_num_layers = intFlag("--mtp-num-layers", 0, 0);
        // Vocabulary: Megatron reads it from the tokenizer; --vocab-size states it, and
        // --padded-vocab-size states the size the layers are built for, which Megatron-LM does
        // not pad further (TokenizerConfig.padded_vocab_size; build_tokenizer.py
        // _set_padded_vocab_size pads only when it is not given).
        const bool paddedGiven = has("--padded-vocab-size");
        if (paddedGiven) {
            m.vocab_size = intFlag("--padded-vocab-size", 0);
        } else if (has("--vocab-size")) {
            m.vocab_size = intFlag("--vocab-size", 0);
            // Megatron-LM d98e8a64's NullTokenizer has exactly the size it is given, its
            // end-of-document token the last id (megatron/core/tokenizers/text/libraries/
            // null_tokenizer.py). That file of FlagScale's Megatron-LM 8479eb35 adds the token
            // to it (vocab_size returns _vocab_size_without_eod + 1).
            const bool flagscale = runsFlagScale() || has("--enable-hetero") || has("--hetero-process-meshes");
            if (str("--tokenizer-type").value_or("") == "NullTokenizer" && m.vocab_size > 0 && flagscale)
                m.vocab_size += 1;
        } else if (str("--tokenizer-type").value_or("") == "GPT2BPETokenizer"
                   || (!has("--tokenizer-type") && has("--merge-file"))) {
            m.vocab_size = 50257;   // GPT-2 BPE vocabulary (Radford et al., 2019)
        } else {
            m.vocab_size = 32000;
            // Which tokenizer, so that the user knows what size to give (Pai-Megatron-Patch
            // names its own with --patch-tokenizer-type and adds --extra-vocab-size).
            std::string tokenizer;
            for (const char* flag : {"--tokenizer-type", "--patch-tokenizer-type", "--tokenizer-model"})
                if (const auto v = str(flag); v && tokenizer.empty())
                    tokenizer = std::string(" (") + flag + " " + ShellQuote::unquoted(*v)
                        + (has("--extra-vocab-size") ? ", --extra-vocab-size " + join(valuesOf("--extra-vocab-size")) : std::string())
                        + ")";
            warn(at() + "the vocabulary size comes from the tokenizer" + tokenizer
                 + ", whose files the import does not open; 32000 is assumed: set vocab_size in the project's model (the "
                   "studio's Model tab)");
        }
        // Megatron-LM pads the vocabulary to a multiple of this times TP (default 128); not a
        // given --padded-vocab-size, nor with --no-pad-vocab-size (--disable-pad-vocab-size).
        // A multiple of 1 stands for that: the model still rounds up to a multiple of TP,
        // which Megatron-LM's vocab-parallel layers need.
        m.make_vocab_size_divisible_by = intFlag("--make-vocab-size-divisible-by", m.make_vocab_size_divisible_by);
        if (paddedGiven || has("--no-pad-vocab-size") || has("--disable-pad-vocab-size"))
            m.make_vocab_size_divisible_by = 1;
        m.num_experts = intFlag("--num-experts", 0, 0);
        if (m.num_experts > 0) {
            m.moe_ffn_hidden_size = intFlag("--moe-ffn-hidden-size", 0);
            m.moe_router_topk = intFlag("--moe-router-topk", 2);
            m.capRouterImbalance();   // the default imbalance, capped at E / k (as a model file reads it)
            // Megatron-Core's TransformerConfig: "Please use --moe-router-pre-softmax when topk
            // is 1" (softmax scores, no Sinkhorn balancing).
            if (m.moe_router_topk == 1 && !has("--moe-router-pre-softmax") && str("--moe-router-score-function").value_or("softmax") == "softmax"
                && str("--moe-router-load-balancing-type").value_or("aux_loss") != "sinkhorn")
                m_out.invalid_values.push_back({"--moe-router-topk", "1", "",
                                                at("--moe-router-topk") + "top-1 routing with softmax scores needs --moe-router-pre-softmax "
                                                "(Megatron-LM raises \"Please use --moe-router-pre-softmax when topk is 1\")"});
            m.moe_shared_expert_intermediate_size = intFlag("--moe-shared-expert-intermediate-size", 0, 0);
            // The router's recipe (ModelSpec: not costed apart, written back by an export).
            // The flag's values are toString(RouterScore)'s; another is read as the default.
            const std::string score = str("--moe-router-score-function").value_or("softmax");
            m.moe_router_score_function = RouterScore::Softmax;
            for (RouterScore r : {RouterScore::Sigmoid, RouterScore::SqrtSoftplus})
                if (score == toString(r))
                    m.moe_router_score_function = r;
            m.moe_router_enable_expert_bias = has("--moe-router-enable-expert-bias");
            m.moe_router_num_groups = intFlag("--moe-router-num-groups", 0);
            m.moe_router_group_topk = intFlag("--moe-router-group-topk", 0);
            m.moe_router_topk_scaling_factor = has("--moe-router-topk-scaling-factor")
                ? realFlag("--moe-router-topk-scaling-factor", 0.0, 0.0, 1e6)
                : 0.0;
            const std::string dispatcher = str("--moe-token-dispatcher-type").value_or("allgather");
            if (dispatcher == "alltoall") m.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
            else if (dispatcher == "flex") m.moe_token_dispatcher_type = TokenDispatcher::Flex;
            else if (dispatcher == "allgather") m.moe_token_dispatcher_type = TokenDispatcher::AllGather;
            else   // Megatron-LM's argparse refuses other choices
                m_out.invalid_values.push_back({"--moe-token-dispatcher-type", dispatcher, "allgather, alltoall or flex", ""});
            if (auto freq = str("--moe-layer-freq")) {
                if (auto n = toInt(*freq); n && *n >= 1) {
                    m.moe_layer_freq = static_cast<int>(*n);
                } else if (const std::string v = ShellQuote::unquoted(*freq);
                           v.find("${") == std::string::npos && v.find_first_not_of(",0123456789[]()+*") != std::string::npos) {
                    // Megatron-LM takes a list expression of these characters only (reference
                    // section 7: no spaces).
                    m_out.invalid_values.push_back({"--moe-layer-freq", *freq, "", at("--moe-layer-freq") + "the list expression \"" + v
                                                    + "\" may hold only the characters ,0-9[]()+* (no spaces): Megatron-LM refuses it"});
                } else {
                    std::vector<std::uint8_t> pattern;
                    if (MoeLayerPattern::parse(*freq, pattern) && static_cast<int>(pattern.size()) == m.num_layers) {
                        m.moe_layer_pattern = pattern;
                    } else if (m.num_layers <= 0 && !pattern.empty()) {
                        // No --num-layers to hold the list against: that flag is what is
                        // missing, and the error names it (not this list).
                    } else {
                        // Megatron-LM asserts the list's length: the script would not start.
                        const std::string expected = "an integer >= 1 or a 0/1 list of --num-layers = "
                                                     + std::to_string(m.num_layers) + " entries";
                        warn(at("--moe-layer-freq") + "--moe-layer-freq " + *freq + ": expected " + expected);
                        m_out.invalid_values.push_back({"--moe-layer-freq", *freq, expected, ""});
                    }
                }
            }
        }
        m.training.precision = has("--fp16") ? Precision::FP16 : Precision::BF16;
        // --fp8-format e4m3|hybrid: the linear layers' GEMMs in FP8 (docs/cost-model.md section 3.7).
        if (auto fp8 = str("--fp8-format")) {
            const std::string v = ShellQuote::unquoted(*fp8);
            if (v == "hybrid")
                m.training.fp8_format = Fp8Format::Hybrid;
            else if (v == "e4m3")
                m.training.fp8_format = Fp8Format::E4M3;
            else if (v.find("${") == std::string::npos)   // Megatron-LM's argparse refuses other choices
                m_out.invalid_values.push_back({"--fp8-format", *fp8, "e4m3 or hybrid", ""});
            else
                warn(at("--fp8-format") + "--fp8-format " + *fp8 + ": the format comes from a variable the script does not set; "
                     "read as no FP8 (give the variable with --script-env to cost the run in FP8)");
        }
        // --fp8-recipe: how Transformer Engine scales the FP8 tensors (section 3.7); argparse
        // checks its choices. A custom quantizer factory is code the planner cannot read.
        if (auto recipe = str("--fp8-recipe")) {
            const std::string v = ShellQuote::unquoted(*recipe);
            const std::optional<Fp8Recipe> known = parseFp8Recipe(v);
            if (!known && v != "custom" && v.find("${") == std::string::npos) {
                // not one of argparse's choices: the flag list's choice check reports it
            } else if (!m.training.fp8())
                warn(at("--fp8-recipe") + "--fp8-recipe without --fp8-format: nothing runs in FP8; not read");
            else if (known)
                m.training.fp8_recipe = *known;
            else if (v == "custom")
                warn(at("--fp8-recipe") + "--fp8-recipe custom: the quantizer factory's casts are not modelled; costed as delayed scaling, "
                     "which an exported script writes");
            else
                warn(at("--fp8-recipe") + "--fp8-recipe " + *recipe + ": the recipe comes from a variable the script does not set; "
                     "read as delayed (give the variable with --script-env to cost another)");
        }
        // The cross-entropy's kernels (docs/cost-model.md section 3.6): --cross-entropy-fusion-impl
        // chooses among the fused ones (argparse checks its choices, native or te).
        m.training.cross_entropy_loss_fusion = has("--cross-entropy-loss-fusion");
        if (auto impl = str("--cross-entropy-fusion-impl")) {
            const std::string v = ShellQuote::unquoted(*impl);
            if (!m.training.cross_entropy_loss_fusion)
                warn(at("--cross-entropy-fusion-impl") + "--cross-entropy-fusion-impl without --cross-entropy-loss-fusion: "
                     "Megatron-LM runs the unfused cross-entropy; not read");
            else if (v == "te")
                m.training.cross_entropy_fusion_impl = CrossEntropyFusionImpl::TE;
            else if (v.find("${") != std::string::npos)
                warn(at("--cross-entropy-fusion-impl") + "--cross-entropy-fusion-impl " + *impl
                     + ": the implementation comes from a variable the script does not set; read as native (give the "
                       "variable with --script-env to cost Transformer Engine's)");
        }
        // --fp8-param-gather: FP8 weights in place of the bf16 ones (section 5.1); without
        // --fp8-format there are none.
        m.training.fp8_param_gather = m.training.fp8() && has("--fp8-param-gather");
        if (has("--fp8-param-gather") && !has("--fp8-format"))
            warn(at("--fp8-param-gather") + "--fp8-param-gather without --fp8-format: there are no FP8 weights to gather; not read");
        // Gradient precision (docs/cost-model.md section 5.1): Megatron-LM's arguments.py keeps
        // fp32 gradients for bf16 unless --grad-reduce-in-bf16, and half ones for fp16 unless
        // --accumulate-allreduce-grads-in-fp32. Only a flag that departs from the default is kept.
        if (has("--accumulate-allreduce-grads-in-fp32"))
            m.training.accumulate_allreduce_grads_in_fp32 = true;
        else if (has("--grad-reduce-in-bf16") && !has("--fp16"))
            m.training.accumulate_allreduce_grads_in_fp32 = false;
        if (has("--fp16") && has("--bf16"))   // Megatron-LM's validate_args: the two exclude each other
            m_out.invalid_values.push_back({"--bf16", "", "", at("--bf16") + "--bf16 and --fp16 are both given; Megatron-LM refuses "
                                            "the pair (one precision for the whole model)"});
        if (!has("--fp16") && !has("--bf16"))
            warn(at() + "neither --bf16 nor --fp16: Megatron-LM trains in fp32; the estimate assumes bf16");
    }

    // NODE_DEVICES: one comma-separated list of local device indices per node rank. A list
    // that is not one (a variable, a range) leaves the processes on the first devices.
    void readNodeDevices(const std::vector<std::string>& lists)
    {
        std::vector<std::vector<int>> out;
        for (const std::string& list : lists) {
            std::vector<int> devices;
            std::size_t start = 0;
            while (start <= list.size()) {
                const std::size_t comma = std::min(list.find(',', start), list.size());
                const std::string item = list.substr(start, comma - start);
                const bool digits = !item.empty() && item.size() <= 6
                    && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
                if (!digits) {
                    warn(at() + "NODE_DEVICES: \"" + list + "\" is not a list of device indices; each node's first devices are assumed");
                    return;
                }
                devices.push_back(std::stoi(item));
                start = comma + 1;
            }
            out.push_back(std::move(devices));
        }
        m_out.node_devices = std::move(out);
    }

    // The overlap switches the cost model reads (CostOptions), and the performance flags it
    // does not model, each named so that a prediction is read for what it is.
    void readOverlapSwitches(ParallelConfig& p)
    {
        p.overlap_grad_reduce = has("--overlap-grad-reduce");
        p.overlap_param_gather = has("--overlap-param-gather");
        if (p.overlap_param_gather && (!p.overlap_grad_reduce || !p.distributed_optimizer)) {
            std::string missing;
            if (!p.overlap_grad_reduce)
                missing = "--overlap-grad-reduce";
            if (!p.distributed_optimizer)
                missing += std::string(missing.empty() ? "" : " and ") + "--use-distributed-optimizer";
            warn(at("--overlap-param-gather") + "--overlap-param-gather needs " + missing + " (Megatron-LM asserts it); it is not counted");
            p.overlap_param_gather = false;
        }
        p.tp_comm_overlap = has("--tp-comm-overlap");
        p.overlap_p2p = !has("--no-overlap-p2p-communication");
        if (p.tp_comm_overlap && !p.sequence_parallel) {
            warn(at("--tp-comm-overlap") + "--tp-comm-overlap needs --sequence-parallel (Megatron-LM asserts it); it is not counted");
            p.tp_comm_overlap = false;
        }
        if (has("--overlap-moe-expert-parallel-comm"))
            warn(at("--overlap-moe-expert-parallel-comm") + "--overlap-moe-expert-parallel-comm (combined 1F1B) is not modelled: expert dispatch and "
                        "combine are costed as exposed, so the estimate is an upper bound for the MoE layers");
        if (has("--fp4-format"))
            warn(at("--fp4-format") + "--fp4-format is not modelled: GEMMs are costed at the "
                 + (has("--fp8-format") ? std::string("FP8") : has("--fp16") ? "FP16" : "BF16")
                 + " rate, and activations at their half-precision size");

        if (const std::string fsdp = has("--use-megatron-fsdp") ? "--use-megatron-fsdp" : "--use-torch-fsdp2"; has(fsdp))
            warn(at(fsdp) + fsdp + " is not modelled: memory is costed with the distributed optimizer's sharding of the optimizer states "
                   "only, an upper bound, and an export writes the plan for the distributed optimizer");
        // FlagScale's older heterogeneous flags (its Aquila 70B A800 + A100 example): the
        // device type and layers of each stage are not read from them.
        if (const std::string old = has("--hetero-pipeline-stages") ? "--hetero-pipeline-stages" : "--hetero-mode"; has(old))
            warn(at(old) + old + " is FlagScale's older heterogeneous format, not read here: the pipeline is read as "
                 "uniform on one device type (write the stages with --hetero-process-meshes and --hetero-pipeline-layer-split, "
                 "or plan the model on the cluster with hapmoe plan)");
        // Sliding-window attention (gpt-oss: --window-size 127,0 on every other layer) attends
        // to fewer keys than the sequence.
        if (has("--window-size"))
            warn(at("--window-size") + "--window-size (sliding-window attention) is not modelled: attention is costed over the "
                 "whole sequence, an upper bound on its time and activations");
        if (has("--use-dualpipev"))
            warn(at("--use-dualpipev") + "--use-dualpipev is not modelled: the schedule is costed as 1F1B");
        if (has("--rampup-batch-size"))
            warn(at("--rampup-batch-size") + "--rampup-batch-size is not modelled: an iteration is costed at the full global batch, "
                 "which the ramp reaches at its end");
        // A batch schedule excludes a fixed global batch and a ramp (Megatron-LM's
        // microbatches calculator raises "Cannot specify both ...").
        if (has("--step-batch-size-schedule")) {
            for (const char* other : {"--global-batch-size", "--rampup-batch-size"})
                if (has(other))
                    broken("--step-batch-size-schedule", std::string("given with ") + other + ": Megatron-LM raises \"Cannot specify "
                                                         "both --step-batch-size-schedule and " + other + "\"");
            warn(at("--step-batch-size-schedule") + "--step-batch-size-schedule is not modelled: an iteration is costed at one "
                 "global batch (give the model's global batch size)");
        }
        // Flags that change time or memory in ways the model does not follow: each is said once,
        // with what is costed instead (docs/megatron.md section 1, the flag table).
        static const std::pair<const char*, const char*> kNotModelled[] = {
            {"--num-distributed-optimizer-instances", "the distributed optimizer is costed as one instance sharding over "
                                                      "the whole data-parallel group"},
            {"--moe-expert-capacity-factor", "the experts' tokens follow the router imbalance, not a capacity (no token "
                                             "dropping or padding)"},
            {"--cpu-offloading-num-layers", "activations are costed on the device"},
            {"--fine-grained-activation-offloading", "activations are costed on the device"},
            {"--first-last-layers-bf16", "every layer's GEMMs are costed in FP8"},
            {"--heterogeneous-layers-config-path", "every layer is costed with the shape the flags give"},
            {"--experimental-attention-variant", "every layer is costed as softmax attention"},
        };
        for (const auto& [flag, instead] : kNotModelled)
            if (has(flag) && (std::string_view(flag) != "--moe-expert-capacity-factor" || m_out.model.isMoe()))
                warn(at(flag) + flag + " is not modelled: " + instead);
        // The precision-aware optimizer's state types (fp32 by default, which the model costs).
        if (has("--use-precision-aware-optimizer"))
            for (const char* flag : {"--main-params-dtype", "--main-grads-dtype", "--exp-avg-dtype", "--exp-avg-sq-dtype"})
                if (const auto v = str(flag); v && ShellQuote::unquoted(*v) != "fp32")
                    warn(at(flag) + std::string(flag) + " " + *v + " is not modelled: the optimizer's master weights, main "
                                                                    "gradients and Adam moments are costed in fp32");
        if (const auto optimizer = str("--optimizer"); optimizer && ShellQuote::unquoted(*optimizer) != "adam"
                                                       && optimizer->find("${") == std::string::npos)
            warn(at("--optimizer") + "--optimizer " + *optimizer + " is not modelled: its states and step are costed as Adam's");
        if (const auto cpComm = str("--cp-comm-type"); cpComm && ShellQuote::unquoted(*cpComm) != "p2p"
                                                       && cpComm->find("${") == std::string::npos
                                                       && p.cp > 1)
            warn(at("--cp-comm-type") + "--cp-comm-type " + *cpComm + " is not modelled: context parallelism is costed as the "
                 "p2p ring exchange of K and V");
        const std::string graphs = str("--cuda-graph-impl").value_or("none");
        if (graphs != "none" || has("--enable-cuda-graph") || has("--external-cuda-graph"))
            warn(at() + "CUDA graphs are not modelled (the cost model has no host launch overhead to remove)");
        // Without clipping Megatron-LM computes no gradient norm, so its stages step without
        // the all-reduce that waits for every stage's sync (docs/cost-model.md sections 8, 12).
        if (const auto clip = str("--clip-grad"); clip && toReal(*clip) == 0.0)
            warn(at("--clip-grad") + "--clip-grad 0 is not modelled: the iteration is costed with the gradient-norm "
                 "all-reduce that Megatron-LM leaves out without clipping, an upper bound of its end");
    }

    // Megatron-Core's MoELayer.forward raises in training when TP > 1 without sequence
    // parallelism, so the run needs it: the configuration is costed (and exported) with it.
    void requireSequenceParallel(ParallelConfig& p, bool tpAboveOne, const std::string& flag, const std::string& what)
    {
        if (!m_out.model.isMoe() || p.sequence_parallel || !tpAboveOne)
            return;
        warn(at(flag) + "an MoE model with " + what + " needs --sequence-parallel (Megatron-Core's MoE layer refuses to train "
             "without it); the configuration is costed with it");
        p.sequence_parallel = true;
    }

    void buildParallel()
    {
        ParallelConfig& p = m_out.parallel;
        if (has("--model-parallel-size"))
            warn(at("--model-parallel-size") + "--model-parallel-size is deprecated (Megatron-LM asserts it is unset); "
                        "--tensor-model-parallel-size is used");
        // Two more flags validate_args refuses (arguments.py, "Deprecated arguments"): read as
        // their replacements would not be, so said.
        if (has("--batch-size"))
            warn(at("--batch-size") + "--batch-size is no longer valid (Megatron-LM asserts it is unset: use "
                                      "--micro-batch-size); not read");
        if (has("--checkpoint-activations"))
            warn(at("--checkpoint-activations") + "--checkpoint-activations is no longer valid (Megatron-LM exits: use "
                                                  "--recompute-activations, or --recompute-granularity full with a method); "
                                                  "not read, so no recompute unless the script gives those");
        p.tp = intFlag("--tensor-model-parallel-size", 1);
        p.pp = intFlag("--pipeline-model-parallel-size", 1);
        p.cp = intFlag("--context-parallel-size", 1);
        // --cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes (reference
        // section 2); with CP 1 the comm type is never used.
        if (p.cp > 1 && !has("--hierarchical-context-parallel-sizes"))
            for (const std::string& v : m_flags.count("--cp-comm-type") ? m_flags.at("--cp-comm-type") : std::vector<std::string>{})
                if (ShellQuote::unquoted(v) == "a2a+p2p") {
                    m_out.invalid_values.push_back({"--cp-comm-type", "a2a+p2p", "", at("--cp-comm-type")
                                                    + "a2a+p2p needs --hierarchical-context-parallel-sizes, whose product is CP "
                                                    + std::to_string(p.cp) + "; Megatron-LM refuses it without"});
                    break;
                }
        p.ep = intFlag("--expert-model-parallel-size", 1);
        p.etp = intFlag("--expert-tensor-parallel-size", 0, 0);
        // Megatron-LM's validate_args: EP > 1 needs --num-experts, and the experts split evenly
        // over the EP ranks (reference section 3, "Expert-count check"). FlagScale's meshes
        // give EP per mesh (checked when the plan is built).
        if (p.ep > 1 && !has("--hetero-process-meshes")) {
            const int experts = m_out.model.num_experts;
            if (experts == 0)
                broken("--expert-model-parallel-size", "EP " + std::to_string(p.ep) + " without --num-experts: expert parallelism "
                                                       "needs an MoE model (Megatron-LM asserts num_experts is set when EP > 1)");
            else if (experts % p.ep != 0)
                broken("--expert-model-parallel-size", "EP " + std::to_string(p.ep) + " does not divide the " + std::to_string(experts)
                                                       + " experts of --num-experts (Megatron-LM asserts num_experts % EP == 0)");
        }
        // Megatron-Core asserts ETP == 1 for MoE layers with a linear bias (reference section
        // 3, "Bias in MoE"); ETP defaults to TP. FlagScale's meshes are checked per mesh
        // against the same rule when the plan is built (deploymentProblems).
        if (const int etp = p.etp > 0 ? p.etp : p.tp;
            m_out.model.isMoe() && m_out.model.add_bias_linear && etp > 1 && !has("--hetero-process-meshes")) {
            broken(p.etp > 0 ? "--expert-tensor-parallel-size" : "--tensor-model-parallel-size",
                   "ETP " + std::to_string(etp) + (p.etp > 0 ? "" : " (ETP defaults to TP)")
                       + " with the linear bias on: Megatron-Core asserts ETP == 1 for MoE layers with bias "
                         "(add --disable-bias-linear, or --expert-tensor-parallel-size 1)");
        }
        p.sequence_parallel = has("--sequence-parallel");
        requireSequenceParallel(p, p.tp > 1, "--tensor-model-parallel-size", "TP > 1");
        // Megatron-FSDP other than its version 2 turns the distributed optimizer on
        // (validate_args at d98e8a64: "Megatron-FSDP v1 is only compatible with
        // --use-distributed-optimizer").
        p.distributed_optimizer = has("--use-distributed-optimizer")
            || (has("--use-megatron-fsdp") && str("--megatron-fsdp-version").value_or("1") != "2");
        readOverlapSwitches(p);
        if (has("--optimizer-cpu-offload")) {
            // Megatron-LM's --optimizer-offload-fraction defaults to 1.0 (arguments.py).
            p.optimizer_offload_fraction = 1.0;
            if (auto v = str("--optimizer-offload-fraction")) {
                const auto f = toReal(*v);
                if (f && *f >= 0 && *f <= 1)
                    p.optimizer_offload_fraction = *f;
                else
                    warn(at("--optimizer-offload-fraction") + "--optimizer-offload-fraction " + *v + " is not a fraction in [0, 1]; 1.0 is used");
            }
            // It runs through the precision-aware optimizer, which only the distributed
            // optimizer supports (megatron/core/optimizer/__init__.py raises; validate_args
            // asserts --use-precision-aware-optimizer with it).
            if (!p.distributed_optimizer)
                broken("--optimizer-cpu-offload", "needs --use-distributed-optimizer (Megatron-Core raises \"--use-precision-aware-"
                                                  "optimizer only supported with distributed optimizer\")");
        }
        p.micro_batch_size = intFlag("--micro-batch-size", 1);
        if (!has("--micro-batch-size"))
            warn(at() + "the launch command has no --micro-batch-size (Megatron-LM requires it); 1 is assumed");
        p.global_batch_size = intFlag("--global-batch-size", 0);   // 0 = not given: the default
        const int layers = m_out.model.num_layers;
        if (auto layout = str("--pipeline-model-parallel-layout")) {
            // validate_args allows one of the layout and the two VPP flags; TransformerConfig
            // raises for a layout with the first/last stage or account-for flags.
            for (const char* other : {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
                                      "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
                                      "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"})
                if (has(other))
                    broken(other, std::string("cannot be combined with --pipeline-model-parallel-layout, which gives the split "
                                              "itself (Megatron-LM refuses both together)"));
            p.layout = *layout;
            std::vector<int> split;
            std::vector<std::vector<int>> chunks;
            int vpp = 1, mtp = 0, mtpRank = -1;
            std::string error;
            if (PipelineLayout::parse(*layout, p.pp, split, vpp, mtp, error, &chunks, &mtpRank)) {
                p.layer_split = split;
                p.vpp = vpp;
                if (vpp > 1)
                    p.layer_chunks = chunks;
                int total = 0;
                for (int n : split) total += n;
                if (total != layers)
                    broken("--pipeline-model-parallel-layout", "the layout holds " + std::to_string(total) + " decoder layers, --num-layers is "
                                                                   + std::to_string(layers) + " (Megatron-LM's validate_layer_layout asserts they match)");
                // validate_layer_layout: the layout's `m` count equals --mtp-num-layers (none without it).
                if (mtp != std::max(0, m_out.model.mtp_num_layers))
                    broken("--pipeline-model-parallel-layout", "the layout places " + std::to_string(mtp) + " MTP layer(s), --mtp-num-layers is "
                                                                   + std::to_string(std::max(0, m_out.model.mtp_num_layers))
                                                                   + " (Megatron-LM's validate_layer_layout asserts they match)");
                // Megatron-LM runs MTP layers on another rank than the loss's ("standalone");
                // the cost model puts them with the output layer on the last stage.
                if (mtpRank >= 0 && mtpRank != p.pp - 1)
                    warn(at("--pipeline-model-parallel-layout") + "the layout puts the MTP layers on pipeline rank " + std::to_string(mtpRank)
                         + ", before the last (Megatron-LM's standalone MTP); they are costed on the last stage with the output layer");
                checkRankLayers("--pipeline-model-parallel-layout", split);
            } else {
                broken("--pipeline-model-parallel-layout", *layout + ": " + error + " (Megatron-LM's layout parser refuses it)");
            }
        }
        // validate_args counts the embedding and the loss as one layer each with the
        // account-for flags: VPP = (num_layers [+1] [+1]) / PP / this value (reference section 2).
        const bool accountE = has("--account-for-embedding-in-pipeline-split");
        const bool accountL = has("--account-for-loss-in-pipeline-split");
        const bool firstLast = has("--decoder-first-pipeline-num-layers") || has("--decoder-last-pipeline-num-layers");
        const int counted = layers + (accountE ? 1 : 0) + (accountL ? 1 : 0);
        // FlagScale's heterogeneous mode (reference section 9): every rank runs its mesh's sizes;
        // it refuses a virtual pipeline and splits by its own flag (buildHetero says so), so
        // Megatron-LM's split rules below are for Megatron-LM scripts.
        const bool hetero = has("--enable-hetero") || has("--hetero-process-meshes");
        if (!has("--pipeline-model-parallel-layout") && !hetero) {
            if (has("--num-layers-per-virtual-pipeline-stage")) {
                const int per = intFlag("--num-layers-per-virtual-pipeline-stage", 0);
                if (firstLast)
                    broken("--num-layers-per-virtual-pipeline-stage", "cannot be combined with --decoder-first/last-pipeline-num-layers "
                                                                      "(give --num-virtual-stages-per-pipeline-rank instead, as Megatron-LM's validate_args requires; docs/megatron.md)");
                else if (per > 0 && p.pp > 0 && counted % (p.pp * per) == 0)
                    p.vpp = counted / (p.pp * per);
                else
                    broken("--num-layers-per-virtual-pipeline-stage",
                           std::to_string(per) + " does not divide the " + std::to_string(counted) + " layers"
                               + (accountE && accountL ? " (the embedding and loss counted as layers)"
                                  : accountE         ? " (the embedding counted as a layer)"
                                  : accountL         ? " (the loss counted as a layer)"
                                                     : std::string())
                               + " of PP "
                               + std::to_string(p.pp) + " ranks evenly (Megatron-LM asserts it)");
            } else if (has("--num-virtual-stages-per-pipeline-rank")) {
                p.vpp = intFlag("--num-virtual-stages-per-pipeline-rank", 1);
            }
        }
        if (p.vpp > kMaxVpp) {
            const std::string flag = has("--pipeline-model-parallel-layout")        ? "--pipeline-model-parallel-layout"
                                     : has("--num-layers-per-virtual-pipeline-stage") ? "--num-layers-per-virtual-pipeline-stage"
                                                                                      : "--num-virtual-stages-per-pipeline-rank";
            broken(flag, std::to_string(p.vpp) + " virtual stages per pipeline rank: a plan holds at most " + std::to_string(kMaxVpp));
            p.vpp = 1;
            p.layer_chunks.clear();
        }
        const int vpp = std::max(1, p.vpp);
        if (has("--pipeline-model-parallel-layout") || hetero) {
            // the layout gave the split (FlagScale: --hetero-pipeline-layer-split)
        } else if (firstLast) {
            // First and last rank as given, the rest spread evenly over the middle ranks; with
            // VPP each count a multiple of VPP (reference section 4b).
            const int first = intFlag("--decoder-first-pipeline-num-layers", 0);
            const int last = intFlag("--decoder-last-pipeline-num-layers", 0);
            const int middle = p.pp - (has("--decoder-first-pipeline-num-layers") ? 1 : 0) - (has("--decoder-last-pipeline-num-layers") ? 1 : 0);
            const int rest = layers - first - last;
            const std::string flags = has("--decoder-first-pipeline-num-layers") ? "--decoder-first-pipeline-num-layers"
                                                                                  : "--decoder-last-pipeline-num-layers";
            if (accountE || accountL)
                broken(flags, "cannot be combined with the account-for flags (Megatron-LM's validate_args refuses it; docs/megatron.md)");
            else if (p.pp < 2 || middle < 0)
                broken(flags, "needs PP 2 or more, and PP is " + std::to_string(p.pp));
            else if (middle > 0 && rest == 0)
                broken(flags, "the first and last ranks hold all " + std::to_string(layers) + " layers and the "
                                  + std::to_string(middle) + " middle rank" + (middle == 1 ? "" : "s")
                                  + " none; Megatron-LM runs that, the planner does not model it (a pipeline rank holds at "
                                    "least one decoder layer)");
            else if (!((middle > 0 && rest > 0 && rest % middle == 0) || (middle == 0 && rest == 0)))
                broken(flags, "the " + std::to_string(rest) + " layers left after the first and last ranks do not split evenly over the "
                                  + std::to_string(middle) + " middle rank" + (middle == 1 ? "" : "s")
                                  + " (Megatron-LM asserts it)");
            else if (vpp > 1 && (first % vpp != 0 || last % vpp != 0 || (middle > 0 && (rest / middle) % vpp != 0)))
                broken(flags, "with VPP " + std::to_string(vpp) + " the first, last and middle ranks' layers (" + std::to_string(first)
                                  + ", " + std::to_string(last) + ", " + std::to_string(middle > 0 ? rest / middle : 0)
                                  + ") must each be a multiple of VPP (Megatron-LM asserts it)");
            else
                for (int r = 0; r < p.pp; ++r) {
                    if (r == 0 && has("--decoder-first-pipeline-num-layers")) p.layer_split.push_back(first);
                    else if (r == p.pp - 1 && has("--decoder-last-pipeline-num-layers")) p.layer_split.push_back(last);
                    else p.layer_split.push_back(rest / middle);
                }
        } else if (accountE || accountL) {
            // The embedding (loss) counts as one layer: the first (last) rank gets one fewer.
            const std::string flag = accountE ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split";
            if (p.pp < 1 || counted % p.pp != 0 || (counted / p.pp) % vpp != 0) {
                broken(flag, std::to_string(counted) + " layers, with the " + (accountE && accountL ? "embedding and loss" : accountE ? "embedding" : "loss")
                                 + " counted, do not split evenly over PP "
                                 + std::to_string(p.pp) + (vpp > 1 ? " ranks of VPP " + std::to_string(vpp) + " chunks" : " ranks")
                                 + " (Megatron-LM asserts they do)");
            } else {
                p.layer_split.assign(static_cast<std::size_t>(p.pp), counted / p.pp);
                if (accountE) --p.layer_split.front();
                if (accountL) --p.layer_split.back();
                // With VPP every chunk holds counted / (PP VPP) layers, the embedding (loss)
                // taking one place in the first chunk of the first rank (the last chunk of the
                // last rank): get_num_layers_to_build.
                if (vpp > 1) {
                    const int perChunk = counted / (p.pp * vpp);
                    p.layer_chunks.assign(static_cast<std::size_t>(p.pp), std::vector<int>(static_cast<std::size_t>(vpp), perChunk));
                    if (accountE) --p.layer_chunks.front().front();
                    if (accountL) --p.layer_chunks.back().back();
                }
                checkRankLayers(flag, p.layer_split);
            }
        }
        // Recompute (reference section 5).
        std::string granularity = str("--recompute-granularity").value_or(has("--recompute-activations") ? "selective" : "");
        // The deprecated --moe-layer-recompute is selective recompute with the MoE layer added to
        // its modules, and refused with full (TransformerConfig.__post_init__ at d98e8a64).
        const bool moeLayerRecompute = has("--moe-layer-recompute");
        if (moeLayerRecompute) {
            if (granularity == "full")
                broken("--moe-layer-recompute", "must not be given with --recompute-granularity full (Megatron-LM's "
                                                "TransformerConfig raises \"Do not set --moe-layer-recompute with full recompute "
                                                "granularity\"); remove one of them");
            else
                granularity = "selective";
        }
        if (granularity == "full") {
            p.recompute = Recompute::Full;
            p.recompute_method = str("--recompute-method").value_or("");
            const int n = intFlag("--recompute-num-layers", 1);
            m_recomputeNumLayers = n;
            if (has("--recompute-num-layers"))
                p.recompute_num_layers = n;
            // uniform: every layer recomputed (in chunks of n); block: the first n of each model
            // chunk (of each rank without VPP); planFromScript counts them per rank.
            p.recompute_layers = p.recompute_method == "block" ? n : 0;
            // TransformerConfig.__post_init__ raises for both (reference section 5).
            if (p.recompute_method.empty())
                broken("--recompute-granularity", "full needs --recompute-method uniform or block (Megatron-LM's "
                                                  "TransformerConfig raises without it)");
            else if (p.recompute_method != "uniform" && p.recompute_method != "block")
                broken("--recompute-method", "expected uniform or block, got " + p.recompute_method);
            else if (!has("--recompute-num-layers"))
                broken("--recompute-granularity", "full needs --recompute-num-layers (layers per recomputed chunk with "
                                                  "uniform, per pipeline rank with block; Megatron-LM's TransformerConfig "
                                                  "raises without it; a script written for Megatron-LM before September "
                                                  "2023, whose default was 1, means --recompute-num-layers 1)");
        } else if (granularity == "selective") {
            p.recompute = Recompute::Selective;
            // Megatron-Core's modules (TransformerConfig): the list given, else core attention
            // alone; --moe-layer-recompute adds the MoE layer. What TransformerConfig.__post_init__
            // refuses is refused here (unknown names, MLA's, the gated delta net's and mHC's
            // modules without their switches, and the pairs it cannot run together); the
            // modules of attention variants the cost model does not know are costed as kept.
            std::vector<std::string> others;
            if (has("--recompute-modules")) {
                p.recompute_modules = 0;
                for (const std::string& v : valuesOf("--recompute-modules")) {
                    const std::string name = ShellQuote::unquoted(v);
                    if (const unsigned bit = recomputeModuleBit(name)) {
                        p.recompute_modules |= bit;
                        continue;
                    }
                    // The variants' modules and the switch each needs (TransformerConfig).
                    // Megatron-LM d98e8a64's other modules, and the switch each needs ("" none).
                    static const std::pair<const char*, const char*> kVariants[] = {
                        {"gdn_norm_out", "--experimental-attention-variant gdn"},
                        {"gdp_in_proj", ""}, {"gdp_qkv", ""}, {"mhc", "--enable-mhc-connections"},
                    };
                    const auto variant = std::find_if(std::begin(kVariants), std::end(kVariants),
                                                      [&](const auto& k) { return name == k.first; });
                    const std::string attentionVariant = str("--experimental-attention-variant").value_or("");
                    const bool switched = variant != std::end(kVariants)
                        && (name == "gdn_norm_out" ? attentionVariant == "gdn" || attentionVariant == "gdn2"
                                                   : *variant->second == '\0' || has(variant->second));
                    if (variant == std::end(kVariants)) {
                        std::string known = recomputeModulesString(recompute_module::all, ", ");
                        for (const auto& [module, needs] : kVariants)
                            known += std::string(", ") + module;
                        broken("--recompute-modules", "\"" + name + "\" is not a module of Megatron-LM (TransformerConfig asserts "
                                   "one of " + known + (name.find(',') != std::string::npos ? "; separate them with spaces" : "") + ")");
                    } else if (!switched) {
                        broken("--recompute-modules", name + " needs " + variant->second + (name == "gdn_norm_out" ? " or gdn2" : "")
                                   + " (Megatron-LM's TransformerConfig raises without it)");
                    } else {
                        others.push_back(name);
                    }
                }
            }
            if (moeLayerRecompute)
                p.recompute_modules |= recompute_module::moe;
            if ((p.recompute_modules & recompute_module::mlp) && std::find(others.begin(), others.end(), "mhc") != others.end())
                broken("--recompute-modules", "mhc and mlp cannot be recomputed together (Megatron-LM's TransformerConfig raises: "
                                              "\"They use different checkpoint mechanisms that may conflict\")");
            if ((p.recompute_modules & recompute_module::shared_experts) && has("--moe-shared-expert-intermediate-size")
                && has("--moe-shared-expert-overlap"))
                broken("--recompute-modules", "shared_experts with --moe-shared-expert-overlap (Megatron-LM's TransformerConfig "
                                              "raises \"shared_experts recompute cannot work with --moe-shared-expert-overlap\")");
            // Megatron-LM d98e8a64 asserts it with the EP all-to-all overlap; FlagScale's
            // Megatron-LM 8479eb35 does not.
            if ((p.recompute_modules & recompute_module::moe) && has("--overlap-moe-expert-parallel-comm") && !runsFlagScale()) {
                const bool listed = !moeLayerRecompute;
                broken(listed ? "--recompute-modules" : "--moe-layer-recompute",
                       std::string(listed ? "moe" : "--moe-layer-recompute")
                           + " with --overlap-moe-expert-parallel-comm (Megatron-LM's TransformerConfig asserts \"disable moe "
                             "in recompute_modules when enabling overlap_moe_expert_parallel_comm\")");
            }
            // Two more of d98e8a64's refusals with the whole MoE layer recomputed: Transformer
            // Engine's CUDA graphs of the moe_router scope, and fine-grained offloading of
            // activations inside the layer.
            if ((p.recompute_modules & recompute_module::moe) && !runsFlagScale()) {
                const auto listHas = [&](const char* flag, std::initializer_list<const char*> names) {
                    if (!has(flag))
                        return std::string();
                    for (const std::string& v : valuesOf(flag)) {
                        const std::string name = ShellQuote::unquoted(v);
                        for (const char* n : names)
                            if (name == n)
                                return name;
                    }
                    return std::string();
                };
                // --cuda-graph-modules, or its deprecated alias --cuda-graph-scope (arguments.py).
                const bool teGraphs = str("--cuda-graph-impl").value_or("none") == "transformer_engine" || has("--external-cuda-graph");
                for (const char* graphFlag : {"--cuda-graph-modules", "--cuda-graph-scope"})
                    if (teGraphs && !listHas(graphFlag, {"moe_router"}).empty()) {
                        broken(graphFlag, "moe_router with the whole MoE layer recomputed (moe) under Transformer Engine's CUDA "
                                          "graphs (Megatron-LM's TransformerConfig asserts \"moe recompute is not supported "
                                          "with moe_router CUDA graph\")");
                        break;
                    }
                if (const std::string inside = listHas("--offload-modules", {"moe_act", "expert_fc1", "fused_group_mlp"});
                    !inside.empty() && has("--fine-grained-activation-offloading"))
                    broken("--offload-modules", inside + " offloaded inside the MoE layer that is recomputed whole (moe) "
                                                "(Megatron-LM's TransformerConfig asserts \"Cannot offload ... while recomputing "
                                                "the entire MoE layer\")");
            }
            if ((p.recompute_modules & recompute_module::mla_up_proj) && !has("--multi-latent-attention"))
                broken("--recompute-modules", "mla_up_proj needs --multi-latent-attention (Megatron-LM's TransformerConfig raises "
                                              "without it)");
            if ((p.recompute_modules & recompute_module::moe_act) && !has("--moe-grouped-gemm"))
                broken("--recompute-modules", "moe_act needs --moe-grouped-gemm (Megatron-LM's TransformerConfig raises \"moe_act in "
                                              "recompute_modules is only supported with moe_grouped_gemm\")");
            // TransformerConfig refuses both under FP8 with delayed scaling, the default recipe.
            const unsigned delayedRefuses = p.recompute_modules & (recompute_module::moe_act | recompute_module::layernorm);
            if (delayedRefuses && has("--fp8-format") && str("--fp8-recipe").value_or("delayed") == "delayed")
                broken("--recompute-modules", recomputeModulesString(delayedRefuses, " and ") + " under FP8 with delayed scaling "
                           "(Megatron-LM's TransformerConfig raises \"Delayed scaling does not support moe_act and layernorm "
                           "recompute for fp8\"; use --fp8-recipe tensorwise or leave them out)");
            if (!others.empty())
                warn(at("--recompute-modules") + "--recompute-modules " + join(others, " ")
                     + ": not modelled (the model knows " + recomputeModulesString(recompute_module::all, ", ")
                     + "), so the activations these modules would drop are counted as kept and their recompute time "
                       "is left out");
            for (const char* flag : {"--recompute-method", "--recompute-num-layers"})
                if (has(flag))
                    broken(flag, "must not be given with --recompute-granularity selective (Megatron-LM's TransformerConfig "
                                 "raises); remove it or use --recompute-granularity full");
        } else if (!granularity.empty()) {
            warn(at("--recompute-granularity") + "--recompute-granularity " + granularity + " is not full or selective; no recompute assumed");
        }
        buildHetero(p);
        if (m_out.world_size > 0 && !hetero) {
            const long long model = static_cast<long long>(p.tp) * p.pp * p.cp;   // each up to 1e8
            // (Not said of a world whose node count is unknown: a cluster gives it.)
            if (m_out.world_size % model != 0 && !m_out.nnodes_unknown)
                warn(at() + "world size " + std::to_string(m_out.world_size) + " is not divisible by TP*PP*CP = "
                     + std::to_string(model) + "; Megatron-LM would refuse it");
            else if (p.global_batch_size == 0)
                p.global_batch_size = static_cast<int>(std::min<long long>(
                    static_cast<long long>(p.micro_batch_size) * (m_out.world_size / model), std::numeric_limits<int>::max()));
        }
        // Every TP rank holds whole attention heads (TransformerConfig.__post_init__ asserts
        // num_attention_heads % tensor_model_parallel_size == 0).
        if (!hetero && p.tp > 1 && m_out.model.num_attention_heads > 0 && m_out.model.num_attention_heads % p.tp != 0)
            broken("--tensor-model-parallel-size", "TP " + std::to_string(p.tp) + " does not divide the "
                                                       + std::to_string(m_out.model.num_attention_heads)
                                                       + " attention heads (Megatron-LM asserts num_attention_heads % TP == 0)");
        m_out.model.training.micro_batch_size = p.micro_batch_size;
        if (p.global_batch_size > 0)
            m_out.model.training.global_batch_size = p.global_batch_size;
        m_out.model.training.use_distributed_optimizer = p.distributed_optimizer;
    }

    // ---- FlagScale heterogeneous mode (reference section 9, flagscale-hetero-flags.txt) ----

    std::vector<std::string> valuesOf(const std::string& name) const
    {
        std::vector<std::string> out;
        if (auto it = m_flags.find(name); it != m_flags.end())
            for (const std::string& v : it->second)
                out.push_back(ShellQuote::unquoted(v));
        return out;
    }

    // A Megatron-LM or FlagScale rule the script breaks: it would stop before training, so
    // the script is refused (validateScriptModel) with the flag and this message.
    // A pipeline rank of the script's split with no decoder layer: Megatron-LM builds such a
    // rank (the embedding or the loss alone), a plan cannot hold it (a stage has at least one
    // layer). Empty model chunks of a rank that holds layers are kept (StagePlan::chunk_layers).
    void checkRankLayers(const std::string& flag, const std::vector<int>& split)
    {
        for (std::size_t r = 0; r < split.size(); ++r)
            if (split[r] < 1) {
                broken(flag, "pipeline rank " + std::to_string(r) + " holds 0 decoder layers; Megatron-LM runs that, the "
                                 "planner does not model it (a pipeline rank holds at least one decoder layer)");
                return;
            }
    }

    void broken(const std::string& flag, const std::string& detail)
    {
        m_out.invalid_values.push_back({flag, join(valuesOf(flag)), "", detail});
        warn(at(flag) + flag + ": " + detail);
    }

    // The values of a flag as integers >= min (FlagScale's nargs='*' int), or nothing.
    std::optional<std::vector<int>> intValues(const std::string& name, int min)
    {
        constexpr int kMax = 100000000;
        const std::vector<std::string> values = valuesOf(name);
        std::vector<int> out;
        for (const std::string& v : values) {
            const auto n = toInt(v);
            if (!n || *n < min || *n > kMax) {
                broken(name, "expected integers from " + std::to_string(min) + " to " + std::to_string(kMax) + ", got \""
                                 + join(values) + "\"");
                return std::nullopt;
            }
            out.push_back(static_cast<int>(*n));
        }
        return out;
    }

    void buildHetero(ParallelConfig& p)
    {
        static const std::vector<std::string> stageLists = {"--recompute-granularity-per-stage-micro-batch",
                                                            "--recompute-method-per-stage-micro-batch",
                                                            "--recompute-num-layers-per-stage-micro-batch"};
        const std::string meshFlag = "--hetero-process-meshes";
        if (!has(meshFlag)) {
            if (has("--enable-hetero")) {
                broken("--enable-hetero", "needs --hetero-process-meshes (TP CP EP DP PP per mesh): FlagScale's heterogeneous "
                                          "mode builds one process mesh per entry (pre_validate_args asserts it is given)");
                return;
            }
            // FlagScale parses the per-stage lists only in heterogeneous mode (post_validate_args).
            for (const std::string& f : stageLists)
                if (has(f))
                    warn(at(f) + f + " is read by FlagScale only with --hetero-process-meshes; ignored");
            return;
        }
        if (!has("--enable-hetero"))
            warn(at(meshFlag) + "--hetero-process-meshes without --enable-hetero: FlagScale gives every rank its mesh's sizes "
                                "(pre_validate_args) but does not build its heterogeneous process groups; the meshes are read "
                                "as with --enable-hetero");
        const std::optional<std::vector<int>> flat = intValues(meshFlag, 1);
        if (!flat)
            return;
        if (flat->empty() || flat->size() % 5 != 0) {
            broken(meshFlag, "expected five integers per mesh (TP CP EP DP PP), got " + std::to_string(flat->size()) + ": \""
                                 + join(valuesOf(meshFlag)) + "\"");
            return;
        }
        std::vector<ProcessMesh> meshes(flat->size() / 5);
        const int count = static_cast<int>(meshes.size());
        int sumPP = 0;
        for (std::size_t i = 0; i < meshes.size(); ++i) {
            ProcessMesh& mesh = meshes[i];
            mesh.tp = (*flat)[5 * i];
            mesh.cp = (*flat)[5 * i + 1];
            mesh.ep = (*flat)[5 * i + 2];
            mesh.dp = (*flat)[5 * i + 3];
            mesh.pp = (*flat)[5 * i + 4];
            mesh.first_stage = sumPP;
            sumPP += mesh.pp;
            if (1LL * mesh.tp * mesh.cp * mesh.dp * mesh.pp > 100000000 || sumPP > 100000000) {
                broken(meshFlag, "mesh " + std::to_string(i) + " holds TP*CP*DP*PP = " + std::to_string(1LL * mesh.tp * mesh.cp * mesh.dp * mesh.pp)
                                     + " ranks; expected at most 100000000");
                return;
            }
        }
        // One label per mesh, in mesh order (pre_validate_args asserts the count).
        const std::vector<std::string> labels = valuesOf("--hetero-device-types");
        if (labels.empty()) {
            broken("--hetero-device-types", "missing: FlagScale's heterogeneous mode needs one device-type label per mesh ("
                                                + std::to_string(count) + (count == 1 ? " mesh)" : " meshes)"));
            return;
        }
        if (static_cast<int>(labels.size()) != count) {
            broken("--hetero-device-types", "expected one label per mesh (" + std::to_string(count) + (count == 1 ? " mesh" : " meshes")
                                                + " in --hetero-process-meshes), got " + std::to_string(labels.size()) + ": \""
                                                + join(labels) + "\"");
            return;
        }
        for (std::size_t i = 0; i < meshes.size(); ++i)
            meshes[i].device_type = labels[i];
        // ETP per mesh; without the list --expert-tensor-parallel-size, else the mesh's TP.
        const std::string etpFlag = "--expert-tensor-parallel-size-per-process-mesh";
        if (has(etpFlag)) {
            const std::optional<std::vector<int>> etps = intValues(etpFlag, 1);
            if (!etps)
                return;
            if (static_cast<int>(etps->size()) != count) {
                broken(etpFlag, "expected one value per mesh (" + std::to_string(count) + (count == 1 ? " mesh" : " meshes")
                                    + " in --hetero-process-meshes), got " + std::to_string(etps->size()) + ": \""
                                    + join(valuesOf(etpFlag)) + "\"");
                return;
            }
            for (std::size_t i = 0; i < meshes.size(); ++i)
                meshes[i].etp = (*etps)[i];
        } else {
            for (ProcessMesh& mesh : meshes)
                mesh.etp = p.etp > 0 ? p.etp : mesh.tp;
        }
        bool ok = true;
        auto fail = [&](const std::string& flag, const std::string& detail) {
            broken(flag, detail);
            ok = false;
        };
        for (std::size_t i = 0; i < meshes.size(); ++i)
            if (meshes[i].cp != 1) {
                fail(meshFlag, "expected CP 1 in every mesh (FlagScale's ParallelContext asserts context_parallel_size == 1), mesh "
                                   + std::to_string(i) + " has CP " + std::to_string(meshes[i].cp));
                break;
            }
        if (sumPP != p.pp) {
            std::string pps;
            for (std::size_t i = 0; i < meshes.size(); ++i)
                pps += (i ? " + " : "") + std::to_string(meshes[i].pp);
            fail("--pipeline-model-parallel-size",
                 "expected " + std::to_string(sumPP) + ", the sum of the meshes' PP in --hetero-process-meshes (" + pps
                     + "; FlagScale's pre_validate_args asserts it), got "
                     + (has("--pipeline-model-parallel-size") ? std::to_string(p.pp) : "1 (not given: Megatron-LM's default)"));
        }
        // The global DP is mesh 0's; mesh i runs MBS_i = DP0 * MBS / DP_i, which must divide.
        if (1LL * meshes.front().dp * p.micro_batch_size > 100000000) {
            broken("--micro-batch-size", "DP0 x --micro-batch-size = " + std::to_string(1LL * meshes.front().dp * p.micro_batch_size)
                                             + " sequences per step of mesh 0; expected at most 100000000");
            return;
        }
        const int samples = meshes.front().dp * p.micro_batch_size;
        for (std::size_t i = 0; i < meshes.size(); ++i) {
            if (samples % meshes[i].dp != 0) {
                fail(meshFlag, "mesh " + std::to_string(i) + " has DP " + std::to_string(meshes[i].dp)
                                   + ", which does not divide DP0 x --micro-batch-size = " + std::to_string(meshes.front().dp) + " x "
                                   + std::to_string(p.micro_batch_size) + " = " + std::to_string(samples)
                                   + ": FlagScale runs it with micro-batch size DP0 x MBS / DP = " + std::to_string(samples) + "/"
                                   + std::to_string(meshes[i].dp) + ", which must be an integer");
                break;
            }
            meshes[i].micro_batch_size = samples / meshes[i].dp;
        }
        // Megatron's folding inside each mesh: ETP*EP*PP divides TP*CP*DP*PP.
        for (std::size_t i = 0; i < meshes.size(); ++i) {
            const ProcessMesh& m = meshes[i];
            if ((1LL * m.tp * m.cp * m.dp) % (1LL * m.etp * m.ep) != 0) {
                fail(has(etpFlag) ? etpFlag : meshFlag,
                     "mesh " + std::to_string(i) + ": TP*CP*DP*PP = " + std::to_string(m.numDevices())
                         + " is not divisible by ETP*EP*PP = " + std::to_string(1LL * m.etp * m.ep * m.pp)
                         + " (expert-parallel folding inside the mesh; ETP " + std::to_string(m.etp) + ")");
                break;
            }
        }
        for (const char* vppFlag : {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank"})
            if (has(vppFlag))
                fail(vppFlag, "expected no virtual pipeline with --hetero-process-meshes (FlagScale's heterogeneous mode "
                              "does not support it: pre_validate_args)");
        if (has("--standalone-embedding-stage"))
            fail("--standalone-embedding-stage", "expected off with --hetero-process-meshes (FlagScale's pre_validate_args: "
                                                 "standalone not supported with process_meshes set)");
        if (auto v = str("--num-distributed-optimizer-instances"); v && *v != "1")
            fail("--num-distributed-optimizer-instances", "expected 1 with --hetero-process-meshes (FlagScale's ParallelContext "
                                                          "asserts num_distributed_optimizer_instances == 1), got " + *v);
        for (const char* f : {"--pipeline-model-parallel-layout", "--decoder-first-pipeline-num-layers",
                              "--decoder-last-pipeline-num-layers", "--account-for-embedding-in-pipeline-split",
                              "--account-for-loss-in-pipeline-split"})
            if (has(f))
                warn(at(f) + f + " is not used with FlagScale's heterogeneous meshes: every stage builds its layers of "
                                 "--hetero-pipeline-layer-split");
        // Layers per global stage: the list (exactly PP counts summing to --num-layers), else
        // FlagScale's default num_layers // PP each.
        const int layers = m_out.model.num_layers;
        std::vector<int> split;
        const std::string splitFlag = "--hetero-pipeline-layer-split";
        if (has(splitFlag)) {
            const std::optional<std::vector<int>> given = intValues(splitFlag, 1);
            if (!given)
                return;
            long long sum = 0;
            for (int n : *given)
                sum += n;
            if (static_cast<int>(given->size()) != sumPP || (layers > 0 && sum != layers)) {
                fail(splitFlag, "expected " + std::to_string(sumPP) + " layer counts (one per pipeline stage, the sum of the meshes' PP) "
                                    "that sum to --num-layers " + std::to_string(layers) + ", got " + std::to_string(given->size())
                                    + " counts summing to " + std::to_string(sum) + ": \"" + join(valuesOf(splitFlag)) + "\"");
            }
            split = *given;
        } else if (layers > 0 && sumPP > 0) {
            if (layers % sumPP != 0)
                fail("--num-layers", std::to_string(layers) + " layers do not split evenly over the " + std::to_string(sumPP)
                                         + " pipeline stages of the meshes (FlagScale builds num_layers // PP per stage without "
                                           "--hetero-pipeline-layer-split); give --hetero-pipeline-layer-split");
            split.assign(static_cast<std::size_t>(sumPP), layers / sumPP);
        } else {
            split.assign(static_cast<std::size_t>(sumPP), 0);   // no --num-layers: validateScriptModel names it
        }
        // The local device type: one label of the list (pre_validate_args asserts it). The runner
        // sets it per node from the hostfile; a launcher can take it per node from an array.
        const std::string currentFlag = "--hetero-current-device-type";
        if (auto current = str(currentFlag)) {
            const std::string value = ShellQuote::unquoted(*current);
            auto known = [&](const std::string& label) { return std::find(labels.begin(), labels.end(), label) != labels.end(); };
            if (const std::vector<std::string>* perNode = nodeRankArray(value)) {
                for (std::size_t r = 0; r < perNode->size(); ++r)
                    if (!known((*perNode)[r])) {
                        fail(currentFlag, "expected one of --hetero-device-types (" + join(labels) + ") on every node, node rank "
                                              + std::to_string(r) + " gets \"" + (*perNode)[r] + "\" from " + value);
                        break;
                    }
                m_out.node_device_types = *perNode;
            } else if (value.find('$') == std::string::npos && !known(value)) {
                fail(currentFlag, "expected one of --hetero-device-types (" + join(labels) + "), got \"" + value + "\"");
            } else if (value.find('$') == std::string::npos) {
                m_out.current_device_type = value;
            }
        }
        // Tied embeddings or MTP: the first and last mesh hold the shared embedding
        // (pre_validate_args, flagscale-hetero-flags.txt).
        const bool tied = !has("--untie-embeddings-and-output-weights");
        const auto mtp = toInt(str("--mtp-num-layers").value_or("0"));
        if (ok && (tied || (mtp && *mtp > 0))) {
            const ProcessMesh& a = meshes.front();
            const ProcessMesh& b = meshes.back();
            const std::string why = tied ? "tied embeddings (no --untie-embeddings-and-output-weights)" : "MTP layers (--mtp-num-layers)";
            if (a.tp != b.tp) {
                fail(meshFlag, why + " need the first and last mesh to have the same TP (FlagScale's pre_validate_args asserts it), got TP "
                                   + std::to_string(a.tp) + " and " + std::to_string(b.tp));
            } else if (a.dp != b.dp && p.distributed_optimizer) {
                if (a.dp % b.dp != 0 && b.dp % a.dp != 0)
                    fail(meshFlag, why + " with --use-distributed-optimizer need the DP of the first and last mesh to divide one "
                                         "another (FlagScale's pre_validate_args asserts it), got DP "
                                         + std::to_string(a.dp) + " and " + std::to_string(b.dp));
                else if (!has("--use-partial-reduce-for-shared-embedding"))
                    fail("--use-partial-reduce-for-shared-embedding",
                         "missing: " + why + " with --use-distributed-optimizer and different DP on the first and last mesh ("
                             + std::to_string(a.dp) + " and " + std::to_string(b.dp) + ") need it (FlagScale's pre_validate_args asserts it)");
            }
        }
        if (!ok)
            return;
        // Megatron-LM's default global batch is MBS x DP, the DP being mesh 0's here.
        if (p.global_batch_size == 0)
            p.global_batch_size = samples;
        if (p.global_batch_size % samples != 0) {
            broken("--global-batch-size", "expected a multiple of --micro-batch-size x the DP of mesh 0 = " + std::to_string(samples)
                                              + " (every mesh runs GBS / (MBS x DP0) micro-batches), got " + std::to_string(p.global_batch_size));
            return;
        }
        if (!readStageRecompute(p, split, p.global_batch_size / samples))
            return;
        requireSequenceParallel(p, std::any_of(meshes.begin(), meshes.end(), [](const ProcessMesh& mesh) { return mesh.tp > 1; }),
                                "--hetero-process-meshes", "a mesh of TP > 1");
        p.meshes = std::move(meshes);
        p.layer_split = std::move(split);
        p.layer_chunks.clear();
        p.layout.clear();
        p.vpp = 1;
        p.hetero_cpu_communication = has("--hetero-use-cpu-communication");
    }

    // One of FlagScale's per-stage lists (post_validate_args): each value is [n_stages, n0, v0,
    // n1, v1, ...] (a Python list or tuple literal) for the next n_stages stages, v_k for n_k
    // consecutive micro-batches, sum n_k = the micro-batches of an iteration, and the n_stages
    // of all values summing to PP. Gives, per stage, its runs (n_k, v_k) with n_k > 0; false
    // after an error.
    using Runs = std::vector<std::pair<long long, int>>;
    bool stageRuns(const std::string& flag, int pp, int microbatches, bool binary, std::vector<Runs>& table)
    {
        const std::string form = "[n_stages, n0, flag0, n1, flag1, ...]";
        const auto trim = [](const std::string& t) {
            const std::size_t b = t.find_first_not_of(" \t");
            const std::size_t e = t.find_last_not_of(" \t");
            return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
        };
        long long stages = 0;
        for (const std::string& value : valuesOf(flag)) {
            std::string text = trim(value);
            if (text.size() >= 2 && ((text.front() == '[' && text.back() == ']') || (text.front() == '(' && text.back() == ')')))
                text = text.substr(1, text.size() - 2);
            std::vector<long long> items;
            bool parsed = true;
            for (std::size_t begin = 0;;) {
                const std::size_t comma = text.find(',', begin);
                const std::string item = trim(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
                if (item.empty()) {
                    // a trailing comma is Python's; an empty item elsewhere is not
                    parsed = comma == std::string::npos && !items.empty();
                    break;
                }
                const auto n = toInt(item);
                if (!n || *n < 0 || *n > 100000000) {
                    parsed = false;
                    break;
                }
                items.push_back(*n);
                if (comma == std::string::npos)
                    break;
                begin = comma + 1;
            }
            if (!parsed || items.size() < 3 || items.size() % 2 == 0) {
                broken(flag, "expected lists " + form + " of integers >= 0, one value per run of stages, got \"" + value + "\"");
                return false;
            }
            Runs runs;
            long long sum = 0;
            for (std::size_t k = 1; k + 1 < items.size(); k += 2) {
                if (binary && items[k + 1] > 1) {
                    broken(flag, "expected flags 0 or 1 in " + form + ", got \"" + value + "\"");
                    return false;
                }
                sum += items[k];
                if (items[k] > 0)
                    runs.push_back({items[k], static_cast<int>(items[k + 1])});
            }
            if (sum != microbatches) {
                broken(flag, "expected the micro-batch counts n0, n1, ... of \"" + value + "\" to sum to the "
                                 + std::to_string(microbatches) + " micro-batches of an iteration (GBS / (MBS x DP0)), got "
                                 + std::to_string(sum));
                return false;
            }
            stages += items[0];
            if (stages <= pp)
                table.insert(table.end(), static_cast<std::size_t>(items[0]), runs);
        }
        if (stages != pp) {
            broken(flag, "expected lists " + form + " whose n_stages sum to the " + std::to_string(pp)
                             + " pipeline stages, got " + std::to_string(stages));
            return false;
        }
        return true;
    }

    // The per-stage recompute of FlagScale's lists, one setting per stage (TransformerBlock:
    // a micro-batch of stage s recomputes fully unless its granularity flag is 0 or its layer
    // count is 0; method 1 = block (its first n layers), 0 = uniform (every layer)).
    bool readStageRecompute(ParallelConfig& p, const std::vector<int>& split, int microbatches)
    {
        const std::string granFlag = "--recompute-granularity-per-stage-micro-batch";
        const std::string methodFlag = "--recompute-method-per-stage-micro-batch";
        const std::string numFlag = "--recompute-num-layers-per-stage-micro-batch";
        if (!has(granFlag) && !has(methodFlag) && !has(numFlag))
            return true;
        const int pp = static_cast<int>(split.size());
        if (has(granFlag) && (p.recompute != Recompute::Full || !has("--recompute-method"))) {
            broken(granFlag, "needs --recompute-granularity full and --recompute-method (FlagScale's post_validate_args asserts both)");
            return false;
        }
        if (p.recompute != Recompute::Full) {
            for (const std::string& f : {methodFlag, numFlag})
                if (has(f))
                    warn(at(f) + f + " has no effect without --recompute-granularity full; ignored");
            return true;
        }
        std::vector<Runs> gran, method, num;
        if ((has(granFlag) && !stageRuns(granFlag, pp, microbatches, true, gran))
            || (has(methodFlag) && !stageRuns(methodFlag, pp, microbatches, true, method))
            || (has(numFlag) && !stageRuns(numFlag, pp, microbatches, false, num)))
            return false;
        const std::string listFlag = has(granFlag) ? granFlag : has(numFlag) ? numFlag : methodFlag;
        // The value of a list at micro-batch k of a stage (runs in order).
        const auto valueAt = [](const Runs& runs, long long k) {
            for (const auto& [count, value] : runs) {
                if (k < count)
                    return value;
                k -= count;
            }
            return 0;
        };
        std::vector<StageRecompute> stages(static_cast<std::size_t>(pp));
        for (int s = 0; s < pp; ++s) {
            const std::size_t si = static_cast<std::size_t>(s);
            // Micro-batches where any list changes value: the settings are constant in between.
            std::set<long long> starts{0};
            for (const std::vector<Runs>* list : {&gran, &method, &num})
                if (!list->empty()) {
                    long long at = 0;
                    for (const auto& run : (*list)[si])
                        starts.insert(at += run.first);
                }
            long long on = 0;
            std::vector<std::pair<int, long long>> counts;   // layers recomputed (0 = all) -> micro-batches
            for (auto it = starts.begin(); it != starts.end() && *it < microbatches; ++it) {
                const long long k = *it;
                const long long length = (std::next(it) == starts.end() ? microbatches : std::min<long long>(*std::next(it), microbatches)) - k;
                const int n = num.empty() ? m_recomputeNumLayers : valueAt(num[si], k);
                if ((!gran.empty() && valueAt(gran[si], k) == 0) || (!num.empty() && n == 0))
                    continue;
                on += length;
                const bool block = method.empty() ? p.recompute_method == "block" : valueAt(method[si], k) == 1;
                // Block n recomputes the first n layers of the stage, all of them when n reaches
                // its layer count (transformer_block.py _checkpointed_forward).
                const int recomputed = block && n < split[si] ? n : 0;
                auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == recomputed; });
                if (c == counts.end())
                    counts.push_back({recomputed, length});
                else
                    c->second += length;
            }
            StageRecompute& r = stages[si];
            r.full = 2 * on >= microbatches;
            if (on > 0 && on < microbatches)
                warn(at(listFlag) + "stage " + std::to_string(s) + " recomputes " + std::to_string(on) + " of its "
                     + std::to_string(microbatches) + " micro-batches; a plan has one setting per stage: "
                     + (r.full ? std::string("full recompute") : std::string("no recompute")) + " is assumed for all of them, "
                     + (2 * on == microbatches ? "half of them recomputing (the memory-safe choice)" : "as for the majority"));
            if (!r.full || counts.empty())
                continue;
            auto most = counts.begin();
            for (auto it = counts.begin(); it != counts.end(); ++it)
                if (it->second > most->second)
                    most = it;
            r.layers = most->first;
            if (counts.size() > 1)
                warn(at(listFlag) + "stage " + std::to_string(s) + " recomputes different layer counts over its micro-batches; "
                     + (r.layers == 0 ? std::string("all its layers") : std::to_string(r.layers) + " layers")
                     + ", the most frequent, is assumed for all of them");
        }
        p.stage_recompute = std::move(stages);
        return true;
    }

    std::string m_text;
    std::string m_flatText;   // dropLiteralReads: the words the script ran, flattened, and
                              // where each "--flag" word starts in them
    std::unordered_map<std::string, std::vector<std::size_t>> m_flagAt;
    std::unordered_map<std::string, bool> m_writtenRan;   // "--flag values" -> found in them
    BashReader m_reader;
    ImportedScript m_out;
    std::size_t m_launchStart = 0;
    bool m_directPython = false;
    std::string m_wrapper;
    std::vector<std::string> m_wrapperArgs;
    std::vector<std::string> m_launchEnvironment;   // env NAME=value before the launcher
    std::vector<std::string> m_args;
    std::vector<WordReads> m_argReads;   // per word of m_args: ShellCommand::word_reads
    std::map<std::string, std::vector<std::string>> m_flags;
    mutable std::set<std::string> m_nodeRankIndexes;   // "[${NODE_RANK}]" of the arrays read per node
    int m_recomputeNumLayers = 1;                      // --recompute-num-layers as given
};

} // namespace

ImportedScript importMegatronScript(std::string_view text, const std::string& fileName, const ScriptInputs& inputs)
{
    // A launch script is text: a NUL byte says it is something else (a binary, an archive).
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw InputError(fileName, "", "not a text file (a NUL byte at byte " + std::to_string(nul + 1)
                                           + "): expected a bash launch script");
    return Importer(text, fileName, inputs).run();
}

ImportedScript importMegatronScriptFile(const std::string& path, const ScriptInputs& inputs)
{
    return importMegatronScript(readTextFile(path), path, inputs);
}

namespace {

// The flag that sets a field of the model (a path of validateModel without "model.").
std::string flagOfModelField(const std::string& field)
{
    static const std::map<std::string, std::string> flags = {
        {"num_layers", "--num-layers"},
        {"hidden_size", "--hidden-size"},
        {"ffn_hidden_size", "--ffn-hidden-size"},
        {"num_attention_heads", "--num-attention-heads"},
        {"num_query_groups", "--num-query-groups"},
        {"kv_channels", "--kv-channels"},
        {"q_lora_rank", "--q-lora-rank"},
        {"kv_lora_rank", "--kv-lora-rank"},
        {"qk_head_dim", "--qk-head-dim"},
        {"qk_pos_emb_head_dim", "--qk-pos-emb-head-dim"},
        {"v_head_dim", "--v-head-dim"},
        {"vocab_size", "--vocab-size"},
        {"make_vocab_size_divisible_by", "--make-vocab-size-divisible-by"},
        {"seq_length", "--seq-length"},
        {"max_position_embeddings", "--max-position-embeddings"},
        {"num_experts", "--num-experts"},
        {"moe_ffn_hidden_size", "--moe-ffn-hidden-size"},
        {"moe_router_topk", "--moe-router-topk"},
        {"moe_layer_freq", "--moe-layer-freq"},
        {"moe_shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size"},
        {"moe_router_enable_expert_bias", "--moe-router-enable-expert-bias"},
        {"moe_router_num_groups", "--moe-router-num-groups"},
        {"moe_router_group_topk", "--moe-router-group-topk"},
        {"training.micro_batch_size", "--micro-batch-size"},
        {"training.global_batch_size", "--global-batch-size"}};
    auto it = flags.find(field);
    return it == flags.end() ? std::string() : it->second;
}

// The flag behind a field of a plan stage or of the plan (the last part of a path of
// validatePlanDocument), when one flag sets it.
std::string flagOfPlanField(const std::string& path)
{
    static const std::map<std::string, std::string> flags = {
        {"tp", "--tensor-model-parallel-size"},
        {"cp", "--context-parallel-size"},
        {"ep", "--expert-model-parallel-size"},
        {"etp", "--expert-tensor-parallel-size"},
        {"recompute_layers", "--recompute-num-layers"},
        {"micro_batch_size", "--micro-batch-size"},
        {"global_batch_size", "--global-batch-size"},
        {"vpp", "--global-batch-size"},   // plan.vpp: the micro-batches of an interleaved schedule
        {"optimizer_offload_fraction", "--optimizer-offload-fraction"}};
    const std::size_t dot = path.rfind('.');
    auto it = flags.find(dot == std::string::npos ? path : path.substr(dot + 1));
    return it == flags.end() ? std::string() : it->second;
}

// Layers the block method recomputes on pipeline rank r with `layers` decoder layers, as a
// plan stores it (0 = all): Megatron-LM recomputes the first --recompute-num-layers layers of
// each model chunk (megatron/core/recompute.py runs over one chunk's TransformerBlock), so
// with VPP a rank recomputes up to that many in each of its chunks.
int recomputedLayersOfRank(const ParallelConfig& p, int r, int layers)
{
    if (p.recompute_layers <= 0)
        return p.recompute_layers;
    if (p.vpp <= 1)   // one chunk: the first n layers, all of them when n reaches the rank's
        return p.recompute_layers >= layers ? 0 : p.recompute_layers;
    std::vector<int> chunks = chunkLayers(layers, p.vpp);
    if (r < static_cast<int>(p.layer_chunks.size()))
        chunks = p.layer_chunks[static_cast<std::size_t>(r)];
    return blockRecomputeLayersOfStage(chunks, p.recompute_layers);
}

} // namespace

namespace {

// A script written for another fork of Megatron-LM names its model and parallelism with flags
// of its own, which Megatron-LM d98e8a64 does not have: read as unknown flags, its experts or
// its ZeRO stage would be lost without a word. The first such flag, with what it is.
struct ForeignFlag {
    const char* flag;
    const char* fork;
    const char* instead;   // what Megatron-LM spells it, or why it has no counterpart
};

constexpr ForeignFlag kForeignFlags[] = {
    {"--deepspeed", "Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed)",
     "DeepSpeed's engine and ZeRO stages take the place of Megatron-LM's distributed optimizer and pipeline schedule, "
     "which the cost model follows"},
    {"--zero-stage", "Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed)",
     "DeepSpeed's ZeRO stages take the place of Megatron-LM's distributed optimizer, which the cost model follows"},
    {"--num-key-value-heads", "Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed)",
     "Megatron-LM gives it as --group-query-attention --num-query-groups N"},
    {"--moe-num-experts", "MegaBlocks (databricks/megablocks)", "Megatron-LM gives it as --num-experts N"},
    {"--moe-top-k", "MegaBlocks (databricks/megablocks)", "Megatron-LM gives it as --moe-router-topk K"},
    {"--moe-expert-model-parallelism", "MegaBlocks (databricks/megablocks)",
     "Megatron-LM gives it as --expert-model-parallel-size N"},
};

// Megatron-LM's required flags as forks with underscores spell them (epfLLM's Megatron-LLM).
constexpr std::pair<const char*, const char*> kUnderscoreFlags[] = {
    {"--num_layers", "--num-layers"},
    {"--hidden_size", "--hidden-size"},
    {"--num_attention_heads", "--num-attention-heads"},
    {"--seq_length", "--seq-length"},
};

} // namespace

void validateScriptModel(const ImportedScript& script)
{
    const std::string& file = script.file;
    // "the script (line 12: torchrun pretrain_gpt.py)", as the messages below name it.
    const std::string launch = "(line " + std::to_string(script.command_line) + ": " + script.launcher + " " + script.entry_script + ")";
    for (const ForeignFlag& f : kForeignFlags)
        if (script.given_flags.count(f.flag))
            throw InputError(file, f.flag,
                             std::string("is a flag of ") + f.fork + ", not of Megatron-LM or FlagScale: the script " + launch
                                 + " is written for that fork, and " + f.instead
                                 + ". Write the launch in Megatron-LM's flags to plan it");
    for (const auto& [underscored, flag] : kUnderscoreFlags)
        if (script.given_flags.count(underscored) && !script.given_flags.count(flag))
            throw InputError(file, underscored,
                             std::string("is spelt with underscores, as forks such as epfLLM's Megatron-LLM spell Megatron-LM's ")
                                 + flag + ": the script " + launch + " is written for such a fork, whose flags Megatron-LM "
                                 "d98e8a64 does not take. Write the launch in Megatron-LM's flags to plan it");
    // A hybrid Mamba model (pretrain_mamba.py, pretrain_hybrid.py) gives its layers as a pattern
    // of Mamba, attention, MLP and MoE layers; the cost model has Transformer layers only.
    for (const ScriptFlag& f : script.other_flags)
        if ((f.name == "--hybrid-layer-pattern" || f.name == "--hybrid-override-pattern") && !f.values.empty()
            && f.values.front().find('M') != std::string::npos)   // M: a Mamba layer (Megatron-Core's symbols)
            throw InputError(file, f.name,
                             "a hybrid Mamba model (" + script.entry_script + "): its layers include Mamba layers, and the "
                             "cost model covers Transformer layers (attention with a dense or MoE FFN) only, so the script "
                             "cannot be planned");
    // An encoder-decoder entry gives its layers per side (--encoder-num-layers,
    // --decoder-num-layers), which a decoder-only model cannot take.
    if (baseName(lower(script.entry_script)) == "pretrain_t5.py" && !script.given_flags.count("--num-layers"))
        throw InputError(file, script.given_flags.count("--encoder-num-layers") ? "--encoder-num-layers" : "--num-layers",
                         "the script " + launch + " trains T5, an encoder-decoder model; the cost model covers decoder-only "
                                                  "Transformers (GPT-style, dense or MoE), so it cannot be planned");
    // Variables of the environment the launch command reads, unset here, that gave no word at
    // all: where a script keeps its model flags in one (SRUN.sh's $MEGATRON_PARAMS), they
    // are why a flag is missing.
    std::string unset;
    for (const std::string& name : script.vanished_environment_reads)
        unset += (unset.empty() ? "" : ", ") + name;
    const std::string unsetHint = unset.empty() ? std::string()
        : "; it reads " + unset + " from the environment, unset here"
              + " (give " + (script.vanished_environment_reads.size() == 1 ? std::string("it") : std::string("them"))
              + " with --script-env NAME=VALUE if the flags are there)";
    // A flag Megatron-LM requires that the script lacks comes before a value read against it (a
    // --moe-layer-freq list, an embedding-counted split, both held against no --num-layers),
    // unless --use-checkpoint-args is why it lacks them (its own message says so).
    const bool fromCheckpoint = std::any_of(script.invalid_values.begin(), script.invalid_values.end(),
                                            [](const InvalidFlagValue& v) { return v.flag == "--use-checkpoint-args"; });
    for (const std::string& required : {std::string("--num-layers"), std::string("--hidden-size"),
                                        std::string("--num-attention-heads"), seqLengthFlag(script.given_flags)})
        if (!script.given_flags.count(required) && !fromCheckpoint)
            throw InputError(file, required,
                             "missing: Megatron-LM needs it (a positive integer) and the launch command read " + launch
                                 + " does not give it" + unsetHint
                                 + std::string(script.crlf_line_ends
                                                   ? " (the script has Windows CRLF line ends: bash takes a '\\' before \"\\r\\n\" "
                                                     "as escaping the '\\r', so the next line is a command of its own; "
                                                     "convert the file with dos2unix)"
                                                   : ""));
    if (!script.invalid_values.empty()) {
        const InvalidFlagValue& bad = script.invalid_values.front();
        if (!bad.detail.empty())
            throw InputError(file, bad.flag, bad.detail);
        throw InputError(file, bad.flag, bad.value.empty() ? "has no value; expected " + bad.expected
                                                           : "expected " + bad.expected + ", got " + quotedValue(bad.value));
    }
    try {
        validateModel(script.model, file);
    } catch (const InputError& e) {
        const std::string field = e.where().rfind("model.", 0) == 0 ? e.where().substr(6) : e.where();
        const std::string flag = field == "seq_length" ? seqLengthFlag(script.given_flags) : flagOfModelField(field);
        if (flag.empty())
            throw;
        std::string detail = e.detail();
        if (!script.given_flags.count(flag))
            detail += " (the script does not give " + flag + ", so this is the value assumed for it)";
        throw InputError(file, flag, detail);
    }
}

namespace {

// One process the script starts: its node, node rank and local rank.
struct RankSlot {
    const Node* node = nullptr;
    int node_rank = 0;
    int local = 0;
};

// Adds a process to a stage, extending the stage's last run of devices when it continues it.
void appendRank(StagePlan& st, const RankSlot& r)
{
    if (!st.devices.empty()) {
        DeviceSlot& last = st.devices.back();
        if (last.node == r.node->id && last.first_local + last.count == r.local) {
            ++last.count;
            return;
        }
    }
    st.devices.push_back({r.node->id, r.local, 1});
}

// The flag behind a field of a stage of a FlagScale heterogeneous plan.
std::string flagOfHeteroField(const ImportedScript& script, const std::string& path)
{
    const std::size_t dot = path.rfind('.');
    const std::string field = dot == std::string::npos ? path : path.substr(dot + 1);
    if (field == "tp" || field == "cp" || field == "dp" || field == "ep" || field == "edp")
        return "--hetero-process-meshes";
    if (field == "etp")
        return script.given_flags.count("--expert-tensor-parallel-size-per-process-mesh") ? "--expert-tensor-parallel-size-per-process-mesh"
                                                                                         : "--expert-tensor-parallel-size";
    if (field == "num_layers" || field == "first_layer")
        return "--hetero-pipeline-layer-split";
    if (field == "recompute_layers")
        return script.parallel.stage_recompute.empty() ? "--recompute-num-layers" : "--recompute-num-layers-per-stage-micro-batch";
    return flagOfPlanField(path);
}

// The flag to name for a FlagScale rule a heterogeneous script's plan breaks.
std::string flagOfRule(const std::string& rule)
{
    static const std::map<std::string, std::string> flags = {
        {"moe.flex-needs-tp-ep", "--moe-token-dispatcher-type"},
        {"moe.flex-needs-deepep-device", "--moe-token-dispatcher-type"},
        {"flagscale.selective-recompute", "--recompute-granularity"},
        {"batch.divisible", "--global-batch-size"},
        {"model.hidden-divisible-by-heads", "--num-attention-heads"},
        {"layers.cover", "--hetero-pipeline-layer-split"}};
    auto it = flags.find(rule);
    return it == flags.end() ? std::string("--hetero-process-meshes") : it->second;
}

// FlagScale's placement of the meshes (reference section 9): RankMapper sorts the processes
// by the position of their --hetero-current-device-type in --hetero-device-types, then by
// global rank; mesh i takes the next TP*CP*DP*PP of these logical ranks, and inside a mesh
// Megatron's tp-cp-ep-dp-pp order gives its pipeline stage j the j-th TP*CP*DP of them.
void placeMeshes(Plan& plan, const ImportedScript& script, const Cluster& cluster, const DeviceCatalog& catalog,
                 const std::vector<const Node*>& nodes, const std::vector<RankSlot>& ranks)
{
    const ParallelConfig& p = script.parallel;
    const std::string& file = script.file;
    const std::string clusterName = cluster.name.empty() ? std::string("the cluster") : "cluster " + cluster.name;
    std::vector<std::string> labels;
    for (const ProcessMesh& mesh : p.meshes)
        labels.push_back(mesh.device_type);
    std::vector<std::string> clusterTypes;
    for (const Node& n : cluster.nodes) {
        const std::string t = catalog.canonicalName(n.device_type);
        if (std::find(clusterTypes.begin(), clusterTypes.end(), t) == clusterTypes.end())
            clusterTypes.push_back(t);
    }
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (std::none_of(cluster.nodes.begin(), cluster.nodes.end(),
                         [&](const Node& n) { return catalog.sameType(labels[i], n.device_type); }))
            throw InputError(file, "--hetero-device-types",
                             "label " + labels[i] + " (mesh " + std::to_string(i) + ") matches no node of " + clusterName
                                 + " (its device types: " + join(clusterTypes, ", ") + ")");
    // The position of each started node's type in the list.
    const int nnodes = script.nnodes;
    std::vector<int> position(static_cast<std::size_t>(nnodes), -1);
    for (int r = 0; r < nnodes; ++r) {
        const Node* node = nodes[static_cast<std::size_t>(r)];
        const std::string type = catalog.get(node->device_type, "node " + node->host).name;
        int& pos = position[static_cast<std::size_t>(r)];
        if (!script.node_device_types.empty()) {
            if (r >= static_cast<int>(script.node_device_types.size()))
                throw InputError(file, "--hetero-current-device-type",
                                 "the script takes " + std::to_string(script.node_device_types.size())
                                     + " device types from an array indexed by the node rank, for --nnodes " + std::to_string(nnodes));
            const std::string& label = script.node_device_types[static_cast<std::size_t>(r)];
            if (!catalog.sameType(label, type))
                throw InputError(file, "--hetero-current-device-type",
                                 "node rank " + std::to_string(r) + " runs as " + label + ", but " + clusterName + " has "
                                     + type + " devices on " + node->host + " (the node order is "
                                     + (script.node_hosts.empty() ? "the cluster's" : "NODE_HOSTS") + ")");
            pos = static_cast<int>(std::find(labels.begin(), labels.end(), label) - labels.begin());
        } else {
            for (std::size_t i = 0; i < labels.size() && pos < 0; ++i)
                if (catalog.sameType(labels[i], type))
                    pos = static_cast<int>(i);
            if (pos < 0)
                throw InputError(file, "--hetero-device-types",
                                 "node rank " + std::to_string(r) + " (" + node->host + ", " + type + ") matches no label of "
                                     + "--hetero-device-types (" + join(labels) + "): FlagScale needs every process's "
                                     + "--hetero-current-device-type among them");
        }
    }
    checkMeshWorld(script, static_cast<long long>(ranks.size()));
    std::vector<RankSlot> logical = ranks;
    std::stable_sort(logical.begin(), logical.end(), [&](const RankSlot& a, const RankSlot& b) {
        return position[static_cast<std::size_t>(a.node_rank)] < position[static_cast<std::size_t>(b.node_rank)];
    });
    // What each label gets and needs, for a mesh that would take another type's processes.
    auto perLabel = [&]() {
        std::vector<std::string> seen;
        std::string started, needed;
        for (std::size_t i = 0; i < labels.size(); ++i) {
            if (std::find(seen.begin(), seen.end(), labels[i]) != seen.end())
                continue;
            seen.push_back(labels[i]);
            long long have = 0, need = 0;
            for (const RankSlot& r : ranks)
                if (labels[static_cast<std::size_t>(position[static_cast<std::size_t>(r.node_rank)])] == labels[i])
                    ++have;
            for (const ProcessMesh& mesh : p.meshes)
                if (mesh.device_type == labels[i])
                    need += mesh.numDevices();
            started += (started.empty() ? "" : ", ") + labels[i] + " " + std::to_string(have);
            needed += (needed.empty() ? "" : ", ") + labels[i] + " " + std::to_string(need);
        }
        return "processes per label " + started + "; the meshes of each label hold " + needed;
    };
    std::size_t next = 0;
    int layer = 0;
    for (std::size_t i = 0; i < p.meshes.size(); ++i) {
        const ProcessMesh& mesh = p.meshes[i];
        const int stageSize = mesh.tp * mesh.cp * mesh.dp;
        for (int j = 0; j < mesh.pp; ++j) {
            const int s = mesh.first_stage + j;
            StagePlan st;
            for (int k = 0; k < stageSize; ++k, ++next) {
                const RankSlot& r = logical[next];
                if (!catalog.sameType(mesh.device_type, r.node->device_type))
                    throw InputError(file, "--hetero-process-meshes",
                                     "mesh " + std::to_string(i) + " (" + mesh.device_type + ") would take logical rank "
                                         + std::to_string(next) + ", a process of " + r.node->host + " ("
                                         + catalog.canonicalName(r.node->device_type)
                                         + "): FlagScale gives the meshes consecutive ranks in the order of --hetero-device-types ("
                                         + perLabel() + ")");
                appendRank(st, r);
            }
            st.device_type = catalog.get(logical[next - 1].node->device_type, "node " + logical[next - 1].node->host).name;
            st.first_layer = layer;
            st.num_layers = p.layer_split[static_cast<std::size_t>(s)];
            layer += st.num_layers;
            st.tp = mesh.tp;
            st.cp = mesh.cp;
            st.dp = mesh.dp;
            st.ep = mesh.ep;
            // A dense model has no experts to split: ETP 1, as the search's plans have it (the
            // flag's value, or its default TP, only had to divide the mesh).
            st.etp = script.model.isMoe() ? mesh.etp : 1;
            st.edp = stageSize / (mesh.ep * st.etp);
            if (!p.stage_recompute.empty()) {
                const StageRecompute& rc = p.stage_recompute[static_cast<std::size_t>(s)];
                st.recompute = rc.full ? Recompute::Full : Recompute::None;
                st.recompute_layers = rc.full ? rc.layers : 0;
            } else {
                st.recompute = p.recompute;
                st.recompute_modules = p.recompute_modules;
                // Block n recomputes the first n layers of the stage, every layer when n reaches
                // the stage's count (transformer_block.py _checkpointed_forward).
                st.recompute_layers = p.recompute == Recompute::Full && p.recompute_layers < st.num_layers ? p.recompute_layers : 0;
            }
            st.micro_batch_size = mesh.micro_batch_size;
            plan.stages.push_back(std::move(st));
        }
    }
    plan.vpp = 1;
    plan.sequence_parallel = p.sequence_parallel && std::any_of(p.meshes.begin(), p.meshes.end(), [](const ProcessMesh& m) { return m.tp > 1; });
    plan.target = Target::FlagScale;
}

// Megatron-LM's placement: stage s owns global ranks [s*W/PP, (s+1)*W/PP).
void placeUniform(Plan& plan, const ImportedScript& script, const DeviceCatalog& catalog, const std::vector<RankSlot>& ranks)
{
    const ParallelConfig& p = script.parallel;
    const ModelSpec& m = script.model;
    const std::string& file = script.file;
    const int world = static_cast<int>(ranks.size());
    const long long modelSize = 1LL * p.tp * p.pp * p.cp;
    if (world < 1 || modelSize < 1 || world % modelSize != 0)
        throw InputError(file,
                         responsibleFlags({{"--tensor-model-parallel-size", p.tp}, {"--pipeline-model-parallel-size", p.pp},
                                      {"--context-parallel-size", p.cp}}),
                         "world size " + std::to_string(world) + " is not divisible by TP*PP*CP = " + std::to_string(modelSize));
    const int dp = static_cast<int>(world / modelSize);
    const int etp = p.etp > 0 ? p.etp : p.tp;
    const int perStage = world / p.pp;
    if (perStage % (1LL * p.ep * etp) != 0)
        throw InputError(file,
                         // Without --expert-tensor-parallel-size, ETP is TP (Megatron-LM's default).
                         responsibleFlags({{"--expert-model-parallel-size", p.ep},
                                      {p.etp > 0 ? "--expert-tensor-parallel-size" : "--tensor-model-parallel-size", etp}}),
                         "world size " + std::to_string(world) + " is not divisible by ETP*EP*PP = "
                             + std::to_string(1LL * etp * p.ep * p.pp));
    std::vector<int> split = p.layer_split;
    if (split.empty()) {
        if (m.num_layers % p.pp != 0)
            throw InputError(file, "--num-layers",
                             std::to_string(m.num_layers) + " layers do not split evenly over PP " + std::to_string(p.pp));
        split.assign(static_cast<std::size_t>(p.pp), m.num_layers / p.pp);
    }
    if (static_cast<int>(split.size()) != p.pp)
        throw InputError(file, "--pipeline-model-parallel-layout", "the layer split does not have PP entries");

    plan.vpp = p.vpp;
    plan.global_batch_size = p.global_batch_size > 0 ? p.global_batch_size : p.micro_batch_size * dp;
    plan.sequence_parallel = p.sequence_parallel && p.tp > 1;
    plan.target = Target::Megatron;
    int layer = 0;
    // Stage s owns global ranks [s*W/PP, (s+1)*W/PP); rank = the processes of the nodes
    // before it + local rank.
    for (int s = 0; s < p.pp; ++s) {
        StagePlan st;
        for (int r = s * perStage; r < (s + 1) * perStage; ++r) {
            const RankSlot& slot = ranks[static_cast<std::size_t>(r)];
            const DeviceType& type = catalog.get(slot.node->device_type, "node " + slot.node->host);
            if (st.device_type.empty())
                st.device_type = type.name;
            else if (st.device_type != type.name)
                throw InputError(file, "node order",
                                 "pipeline stage " + std::to_string(s) + " spans " + st.device_type + " and " + type.name
                                     + " devices in this node order; a stage runs on one device type");
            appendRank(st, slot);
        }
        st.first_layer = layer;
        st.num_layers = split[static_cast<std::size_t>(s)];
        layer += st.num_layers;
        st.tp = p.tp;
        st.cp = p.cp;
        st.dp = dp;
        st.ep = p.ep;
        st.etp = m.isMoe() ? etp : 1;   // a dense model: no experts to split (the search's plans)
        st.edp = perStage / (p.ep * st.etp);
        st.recompute = p.recompute;
        st.recompute_modules = p.recompute_modules;
        st.recompute_layers = p.recompute == Recompute::Full ? recomputedLayersOfRank(p, s, st.num_layers) : 0;
        st.micro_batch_size = p.micro_batch_size;
        // A layout's chunks, where they are not the even spread the plan would assume.
        if (p.vpp > 1 && static_cast<std::size_t>(s) < p.layer_chunks.size()
            && p.layer_chunks[static_cast<std::size_t>(s)] != chunkLayers(st.num_layers, p.vpp))
            st.chunk_layers = p.layer_chunks[static_cast<std::size_t>(s)];
        plan.stages.push_back(std::move(st));
    }
}

} // namespace

void checkMeshWorld(const ImportedScript& script, long long processes)
{
    long long meshWorld = 0;
    for (const ProcessMesh& mesh : script.parallel.meshes)
        meshWorld += mesh.numDevices();
    if (meshWorld != processes)
        throw InputError(script.file, "--hetero-process-meshes",
                         "the meshes hold " + std::to_string(meshWorld) + " ranks (the sum of TP*CP*DP*PP), the script starts "
                             + std::to_string(processes) + " processes; FlagScale stops with \"World size mismatch\"");
}

Plan planFromScript(const ImportedScript& script, const Cluster& cluster, const DeviceCatalog& catalog)
{
    // A node count the reading could not know (a hostfile's lines, a scheduler's variable):
    // the script runs on the cluster's leading nodes of its first node's type that start its
    // processes, as many as give a world TP*PP*CP divides (the script's one device type and
    // uniform world); else on the one node assumed.
    if (script.nnodes_unknown && !script.parallel.hetero() && script.node_hosts.empty() && script.node_processes.empty()
        && !cluster.nodes.empty()) {
        const Node& first = cluster.nodes.front();
        const int perNode = script.nproc_per_node > 0 ? script.nproc_per_node : first.count;
        int n = 0;
        while (n < static_cast<int>(cluster.nodes.size()) && cluster.nodes[static_cast<std::size_t>(n)].device_type == first.device_type
               && cluster.nodes[static_cast<std::size_t>(n)].count >= perNode
               && (script.nproc_per_node > 0 || cluster.nodes[static_cast<std::size_t>(n)].count == first.count))
            ++n;
        const long long model = static_cast<long long>(std::max(1, script.parallel.tp)) * std::max(1, script.parallel.pp)
            * std::max(1, script.parallel.cp);
        while (n > 1 && (static_cast<long long>(n) * perNode) % model != 0)
            --n;
        if (n > script.nnodes) {
            ImportedScript all = script;
            all.nnodes = n;
            all.nnodes_unknown = false;
            all.world_size = n * perNode;
            return planFromScript(all, cluster, catalog);
        }
    }
    const ParallelConfig& p = script.parallel;
    const ModelSpec& m = script.model;
    const std::string& file = script.file;
    validateScriptModel(script);
    // Nodes in node-rank order: NODE_HOSTS when the script names them, else the cluster's order.
    std::vector<const Node*> nodes;
    if (!script.node_hosts.empty()) {
        for (const std::string& host : script.node_hosts) {
            auto it = std::find_if(cluster.nodes.begin(), cluster.nodes.end(), [&](const Node& n) { return n.host == host; });
            if (it == cluster.nodes.end()) {
                std::string hosts;
                for (std::size_t i = 0; i < cluster.nodes.size() && i < 4; ++i)
                    hosts += (i ? ", " : "") + cluster.nodes[i].host;
                if (cluster.nodes.size() > 4)
                    hosts += ", ...";
                throw InputError(file, "NODE_HOSTS",
                                 "host " + host + " is not a node of the cluster" + (cluster.name.empty() ? "" : " " + cluster.name)
                                     + " (its hosts: " + hosts + "); give the cluster the script was written for (--cluster), "
                                       "whose hosts have these names");
            }
            nodes.push_back(&*it);
        }
        for (const Node& n : cluster.nodes)
            if (std::find(nodes.begin(), nodes.end(), &n) == nodes.end())
                nodes.push_back(&n);
    } else {
        for (const Node& n : cluster.nodes)
            nodes.push_back(&n);
    }
    if (static_cast<int>(nodes.size()) < script.nnodes)
        throw InputError(file, "--nnodes", "the script runs on " + std::to_string(script.nnodes) + " nodes, cluster "
                                               + cluster.name + " has " + std::to_string(nodes.size()));
    // Processes of each node rank: one count for every node, or the script's array of them.
    const bool perNode = !script.node_processes.empty();
    std::vector<int> procs;
    if (perNode) {
        if (static_cast<int>(script.node_processes.size()) < script.nnodes)
            throw InputError(file, "--nproc_per_node",
                             "the script takes " + std::to_string(script.node_processes.size())
                                 + " process counts from an array indexed by the node rank, for --nnodes " + std::to_string(script.nnodes));
        procs.assign(script.node_processes.begin(), script.node_processes.begin() + script.nnodes);
    } else {
        const int nproc = script.nproc_per_node > 0 ? script.nproc_per_node : (nodes.empty() ? 0 : nodes.front()->count);
        procs.assign(static_cast<std::size_t>(script.nnodes), nproc);
    }
    if (!script.node_devices.empty() && static_cast<int>(script.node_devices.size()) < script.nnodes)
        throw InputError(file, "NODE_DEVICES", "lists the devices of " + std::to_string(script.node_devices.size())
                                                   + " node ranks, the script starts " + std::to_string(script.nnodes) + " nodes");
    std::vector<RankSlot> ranks;
    for (int r = 0; r < script.nnodes; ++r) {
        const Node* node = nodes[static_cast<std::size_t>(r)];
        const int n = procs[static_cast<std::size_t>(r)];
        if (node->count < n)
            throw InputError(file, "--nproc_per_node",
                             "node " + node->host + " has " + std::to_string(node->count) + " devices, the script starts "
                                 + std::to_string(n) + (perNode ? " processes on node rank " + std::to_string(r) : " processes per node"));
        // The devices the launcher makes visible (NODE_DEVICES), else the node's first n.
        std::vector<int> locals;
        if (r < static_cast<int>(script.node_devices.size())) {
            locals = script.node_devices[static_cast<std::size_t>(r)];
            const std::string where = "NODE_DEVICES[" + std::to_string(r) + "]";
            if (static_cast<int>(locals.size()) != n)
                throw InputError(file, where, "lists " + std::to_string(locals.size()) + " devices of node " + node->host
                                                  + ", the script starts " + std::to_string(n) + " processes there");
            for (int l : locals)
                if (l >= node->count || std::count(locals.begin(), locals.end(), l) > 1)
                    throw InputError(file, where, "device " + std::to_string(l) + " of node " + node->host + " is "
                                                      + (l >= node->count ? "not one of its " + std::to_string(node->count) + " devices"
                                                                          : "listed twice"));
        } else {
            for (int l = 0; l < n; ++l)
                locals.push_back(l);
        }
        for (int l : locals)
            ranks.push_back({node, r, l});
    }

    Plan plan;
    plan.name = "current (" + baseName(file) + ")";
    plan.global_batch_size = p.global_batch_size;
    plan.distributed_optimizer = p.distributed_optimizer;
    plan.optimizer_offload_fraction = p.optimizer_offload_fraction;
    if (p.hetero())
        placeMeshes(plan, script, cluster, catalog, nodes, ranks);
    else
        placeUniform(plan, script, catalog, ranks);
    for (std::size_t r = 0; r < nodes.size(); ++r) {
        const Node* node = nodes[r];
        if (static_cast<int>(r) >= script.nnodes) {
            plan.unused.push_back({node->id, node->count, "not started by the script (--nnodes " + std::to_string(script.nnodes) + ")"});
        } else if (const int n = procs[r]; node->count > n) {
            plan.unused.push_back({node->id, node->count - n, "the script starts " + std::to_string(n)
                                                                  + (perNode ? " processes on this node" : " processes per node")});
        }
    }
    // The rules of a plan document (batch, layers, recompute, devices), with the script's
    // flag named where one flag sets the field. The cluster is the caller's, checked apart
    // so that its problems are not put on the script.
    validateCluster(cluster, catalog, "");
    const std::string on = "the script's configuration on " + (cluster.name.empty() ? std::string("the cluster") : cluster.name);
    try {
        validatePlanDocument(PlanDocument{m, cluster, plan, std::nullopt, std::nullopt, {}}, catalog, file);
    } catch (const InputError& e) {
        const std::string flag = p.hetero() ? flagOfHeteroField(script, e.where()) : flagOfPlanField(e.where());
        throw InputError(file, flag.empty() ? e.where() : flag + " (" + e.where() + ")", on + ": " + e.detail());
    }
    // A FlagScale script's plan must be one FlagScale runs (the rules an export checks).
    if (p.hetero())
        if (const std::vector<DeploymentProblem> problems = deploymentProblems(plan, m, cluster, catalog, Target::FlagScale);
            !problems.empty())
            throw InputError(file, flagOfRule(problems.front().rule),
                             on + " breaks FlagScale's rule " + problems.front().rule + ": " + problems.front().message);
    return plan;
}

CostOptions scriptCostOptions(const ImportedScript& script, CostOptions base)
{
    const ParallelConfig& p = script.parallel;
    base.overlap.grad_reduce = p.overlap_grad_reduce;
    base.overlap.param_gather = p.overlap_param_gather;
    base.overlap.tp_comm = p.tp_comm_overlap;
    base.overlap.p2p = p.overlap_p2p;
    return base;
}

CostOptions exportCostOptions(const ImportedScript& script, CostOptions base)
{
    base.overlap.grad_reduce = true;
    base.overlap.param_gather = true;   // the cost model hides it only with the distributed optimizer
    base.overlap.tp_comm = script.parallel.tp_comm_overlap;
    base.overlap.p2p = script.parallel.overlap_p2p;
    return base;
}

std::string scriptOverlapNote(const ImportedScript& script)
{
    const ParallelConfig& p = script.parallel;
    if (p.overlap_grad_reduce && (!p.distributed_optimizer || p.overlap_param_gather))
        return {};
    return std::string("without ") + (p.overlap_grad_reduce ? "--overlap-param-gather" : "--overlap-grad-reduce")
        + " the script does not overlap its data-parallel traffic; the search compares every plan, the current one "
          "included, with it overlapped, as exported scripts run";
}

ScriptConfiguration loadScriptConfiguration(const std::string& path, const Cluster& cluster, const DeviceCatalog& catalog,
                                            const ScriptInputs& inputs)
{
    ScriptConfiguration c;
    c.script = importMegatronScriptFile(path, inputs);
    c.model = c.script.model;
    c.plan = planFromScript(c.script, cluster, catalog);
    c.model.training.global_batch_size = c.plan.global_batch_size;
    c.model.training.micro_batch_size = c.script.parallel.micro_batch_size;
    return c;
}

} // namespace hapmoe
