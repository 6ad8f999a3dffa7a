#pragma once
// Reads a bash launch script as text, the way bash would expand it, without running
// anything: comments, line continuations, quoting, variables with defaults
// (${VAR:-x}, ${VAR:=x}, ${VAR:+x}), exported variables, arrays NAME=( ... ) and their
// expansion with or without quotes, integer arithmetic $(( )), field splitting on IFS, eval
// (its text read as commands where it stands), read from here-strings and here-documents.
// Command substitution, backticks and source are never executed: they are kept as literal
// text and reported. An if/elif, a `[ test ] && cmd` / `|| cmd` list and a case block (with its ;;,
// ;& and ;;& terminators) run only the branches bash would run when the test or the case
// subject can be decided from the text; otherwise every branch is read in order, with a
// warning. A function is defined where it is written and its body read where it is called,
// with the call's arguments as $1 ... "$@" and its `local` variables put back on return;
// `unset -f` removes it. A subshell ( ... ) (also as a function's body) and each command of a
// pipeline or run with & leave the script's variables and functions as they were. An `exit`
// that runs ends the reading (or only its subshell), unless it depends on the environment or
// the script's own arguments (a usage guard the real run passes): that one is read as not
// taken, with one warning listing all such exits. A `for NAME in WORDS` loop whose words the
// text gives runs its body once per word, and a while/until loop whose condition it decides
// turn by turn (break and continue followed, 20,000 turns in all), `while getopts` included;
// other loops are read as straight-line code where they are written. Patterns match what the
// text quotes literally. The script's arguments and environment, when given (setArguments,
// setEnvironment), are read as bash would get them.

#include <functional>
#include <map>
#include <memory>
#include <initializer_list>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace hapmoe {

// Names in the order first added, each once, found by hash: one value can read thousands of
// variables, and a look along the list for each would make reading it quadratic.
class NameList {
public:
    bool add(const std::string& name)
    {
        if (!m_index.insert(name).second)
            return false;
        m_names.push_back(name);
        return true;
    }
    void add(const std::vector<std::string>& names)
    {
        for (const std::string& name : names)
            add(name);
    }
    void clear()
    {
        m_names.clear();
        m_index.clear();
    }
    void swap(NameList& other) noexcept
    {
        m_names.swap(other.m_names);
        m_index.swap(other.m_index);
    }
    const std::vector<std::string>& names() const { return m_names; }
    operator const std::vector<std::string>&() const { return m_names; }
    auto begin() const { return m_names.begin(); }
    auto end() const { return m_names.end(); }

private:
    std::vector<std::string> m_names;
    std::unordered_set<std::string> m_index;
};

// What one word of an expansion read from outside the script, directly or through the
// variables and arrays set from it: the variables it does not set, and those it sets only as
// a default (DATA_HOME=${DATA_HOME:-/data/mix}). Their value as read is in the word, so it
// would differ under another environment. Names only (not the script's own arguments).
struct WordReads {
    // The variables from outside the script the word's value was computed from, in the order
    // first read; null when none. Shared by the words bash splits from one value, which can be
    // thousands of words sharing thousands of reads.
    std::shared_ptr<const std::vector<std::string>> names;
    // The reads are the word's own: true for a word written as one (or an element of
    // "${ARGS[@]}"), false for the words bash split from one value ($ARGS), which share the
    // reads of the whole value.
    bool exact = false;
    // For a word of a text eval runs: what that text was computed from, shared by all its
    // words (never the word's own).
    std::shared_ptr<const std::vector<std::string>> text_names;

    static const std::vector<std::string>& of(const std::shared_ptr<const std::vector<std::string>>& list)
    {
        static const std::vector<std::string> none;
        return list ? *list : none;
    }
};

// One simple command after expansion (assignments already applied).
struct ShellCommand {
    std::vector<std::string> words;
    int line = 0;                        // first line of the command
    std::vector<std::string> warnings;   // findings while expanding this command's words
    // NAME=value words written before the command (CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun ...):
    // bash puts them in this command's environment only (manual 3.7.4), so they are not
    // shell variables after it. "NAME=value" in order, and each value as written.
    std::vector<std::string> environment;
    std::map<std::string, std::string> environment_raw;
    // The variables exported when it ran (for the commands BashReader::setEnvironmentKept
    // names), "NAME=value" in the order first exported, and the text of each one's last plain
    // assignment as written, before expansion ("${NCCL_IB_QPS_PER_CONNECTION:-4}"): a later
    // export is not in its environment.
    std::vector<std::string> exported;
    std::map<std::string, std::string> exported_raw;
    std::vector<WordReads> word_reads;   // per word
    // What all its words read (and the text eval ran them from), in the order first read. A
    // name that switched words on and gave none, being unset (${USE_FP8:+--fp8-format hybrid}),
    // is there as "+USE_FP8", also where a variable or array the words read was set with it.
    std::vector<std::string> value_reads;
    // The names read by the words that expanded to no word at all (an empty $EXTRA_ARGS).
    std::vector<std::string> vanished_environment_reads;
    // For a command of a batch script read from sbatch's standard input (sbatch [OPTIONS]
    // <<EOF): that script's #SBATCH directives, then sbatch's options, which replace them.
    std::vector<std::string> batch_options;
    bool batch_job = false;   // read from a batch script on sbatch's standard input
};

class BashReader {
public:
    explicit BashReader(std::string fileName);

    // What the script is run with, before read(): `bash SCRIPT ARG...` gives $1 ... "$@" and
    // $#, and the variables of its environment are set (not exported by the script, so not in
    // exportedVariables()). Without them the script's own arguments are not known, and a name
    // the script does not set comes from an environment the text does not give.
    void setArguments(std::vector<std::string> arguments);
    void setEnvironment(const std::map<std::string, std::string>& environment);
    // The commands that keep the environment they ran with (ShellCommand::exported): every
    // command unless this is set. A script can run thousands of commands in its loops; the
    // importer wants it only for those it may take as the launch command.
    void setEnvironmentKept(std::function<bool(const ShellCommand&)> wanted) { m_environmentKept = std::move(wanted); }

    // Reads the whole script. Throws InputError for text bash itself would reject
    // (an unterminated quote or array), naming the line.
    void read(std::string_view text);

    const std::vector<ShellCommand>& commands() const { return m_commands; }
    const std::map<std::string, std::vector<std::string>>& arrays() const { return m_arrays; }
    const std::map<std::string, std::string>& variables() const { return m_vars; }
    // For each variable the script read while it was unset, the texts its defaults gave
    // (${DATA_HOME:-/data/mix} -> "/data/mix"), in the order first given.
    const std::map<std::string, std::vector<std::string>>& environmentDefaults() const { return m_envDefaults; }
    // For each variable the script read unset that switches words on when it is set, the words
    // as written (${USE_FP8:+--fp8-format hybrid} -> "--fp8-format hybrid"), in the order first read.
    const std::map<std::string, std::vector<std::string>>& environmentSwitches() const { return m_envSwitches; }
    // An assignment the reading skipped because a test on what the text does not give (the
    // environment, the script's arguments) went the other way: `if [ -n "$WANDB_API_KEY" ];
    // then LOGGING_ARGS+=(--wandb-project ...); fi`, or `[ "$FP8" = 1 ] && ARGS+=(...)`.
    // A variable or array it would have changed carries the mark "+?N" (N its index here) in
    // what its later reads read (ShellCommand::value_reads), so that the launch command knows
    // which of them would have given it words.
    struct SkippedByTest {
        int line = 0;                     // of the if / elif, or of the && / || list
        std::string name;                 // the variable or array assigned
        std::string words;                // the value as written (an array's elements, space-joined)
        bool append = false;              // NAME+=...
        std::vector<std::string> reads;   // what the test read: names, and "$1" ... of the arguments
        std::string described;            // those reads as the warnings name them
    };
    const std::vector<SkippedByTest>& skippedByTest() const { return m_skippedByTest; }
    static constexpr std::string_view kSkippedMark = "+?";
    // "NAME=value" for every exported variable, in the order first exported.
    std::vector<std::string> exportedVariables() const;
    // Where each "--flag" is written: the lines (1-based, in order, once per line) of the words
    // and array elements that hold it as written, quoted or not; comments and here-documents
    // do not count, and a flag put together by an expansion ("--${NAME}") is not found.
    const std::map<std::string, std::vector<int>>& flagLines() const { return m_flagLines; }
    const std::vector<std::string>& warnings() const { return m_warnings; }
    // The words as written of the assignments and commands the reading ran, outside the
    // texts eval runs, each command or assignment on a line of its own: not the branches it
    // skipped, nor comments. At most 8 MiB (then no more is added).
    const std::string& ranText() const { return m_ranText; }
    // The findings made before `command` (one of commands()) ran and while its words were
    // expanded: what the reading finds after it cannot change it.
    std::vector<std::string> warningsUntil(const ShellCommand& command) const;
    // Functions the script defines but never calls, as far as the text is read ("usage", or a
    // launch command wrapped in a function nothing runs), with the line of each definition.
    struct UncalledFunction {
        std::string name;
        int line = 0;                 // where it is defined
        int unset_line = 0;           // where `unset` removed it (0: never)
        int called_after_unset = 0;   // a call after that (bash: command not found)
    };
    std::vector<UncalledFunction> uncalledFunctions() const;
    // The lines of `eval` and of `source` / `.` commands the reading met and did not follow:
    // a launch command built there as text is not read (the "no launch command" error says so).
    const std::vector<int>& evalLines() const { return m_evalLines; }
    const std::vector<int>& sourceLines() const { return m_sourceLines; }
    // The line of the `exit` that ended the reading, as bash stops there; 0 when the script was
    // read to its end (an `exit` inside a subshell leaves only the subshell).
    int exitLine() const { return m_exitLine; }
    // The line of the syntax error at which bash stops reading the script, 0 when none.
    int syntaxErrorLine() const { return m_syntaxErrorLine; }
    const std::string& syntaxErrorText() const { return m_syntaxError; }   // what it is ("unexpected fi")

    // The words of a batch script's #SBATCH directives: the lines that start with "#SBATCH"
    // before the first line that is neither blank nor a comment, where sbatch stops reading
    // them (sbatch(1): options "preceded with #SBATCH before any executable commands"), and
    // the line of the first (0: none).
    static std::pair<std::vector<std::string>, int> batchDirectives(std::string_view script);
    // The variables sbatch sets in a batch job's environment from its options (the
    // directives, then sbatch's own, the later winning), per sbatch(1) "OUTPUT ENVIRONMENT
    // VARIABLES": SLURM_JOB_NUM_NODES and SLURM_NNODES from -N/--nodes (a range MIN-MAX: its
    // maximum), SLURM_NTASKS and SLURM_NPROCS from -n/--ntasks, SLURM_NTASKS_PER_NODE from
    // --ntasks-per-node, SLURM_GPUS_PER_NODE from a plain count of --gpus-per-node. Each
    // with the option as written, for the import's note.
    struct JobVariable {
        std::string name, value, option;
    };
    static std::vector<JobVariable> batchJobEnvironment(const std::vector<std::string>& options);
    // A Slurm option at words[k] among `names` ("-N 2", "-N2", "--nodes 2", "--nodes=2";
    // srun(1), sbatch(1)): its name, its value (empty when none is left before `end`), and
    // the option as written ("--nodes=2", "-N 2"); k moves past a separate value. Nothing for
    // another word. -N and -n are the short options that take their value attached.
    struct SlurmOption {
        std::string name, value, written;
    };
    static std::optional<SlurmOption> slurmOptionAt(const std::vector<std::string>& words, std::size_t& k, std::size_t end,
                                                    std::initializer_list<std::string_view> names);
    // `sh -c STRING` in a command's words (bash, dash, zsh; -c among the shell's options):
    // the index of the shell and of the string, and the shell's name.
    struct CommandString {
        std::size_t shell = 0;
        std::size_t text = 0;
        std::string name;
    };
    static std::optional<CommandString> commandStringAt(const std::vector<std::string>& words);

    // Expands one raw word (as written in a script) in the reader's current state.
    std::vector<std::string> expandWord(const std::string& raw, int line);
    // The characters field splitting and read split on: IFS, or blank, tab and newline when unset.
    std::string ifs() const;

private:
    struct RawWord {
        std::string text;                // source text, quotes included
        bool array_assign = false;       // NAME=( ... ) or NAME+=( ... )
        std::vector<std::string> elements;
    };
    struct RawCommand {
        std::vector<RawWord> words;
        int line = 0;
        std::string separator;           // what ended it: "\n", ";", "&&", "||", "|", "&", and the
                                         // ends of a case branch ";;", ";&", ";;&"
        // What the command reads on its standard input where the text gives it: a here-string
        // (<<< WORD, the word as written) or a here-document (its lines; expanded unless the
        // delimiter is quoted). other_input: < FILE, <& N or <> FILE, input the text does not give.
        struct HereInput {
            std::string text;
            bool here_string = false;
            bool expand = true;
        };
        std::optional<HereInput> input;
        bool other_input = false;
        // Not a command of the script: X=<PATH> read as filled in, X (the one word) is
        // forgotten after its line, as if the script never set it (execute).
        bool forget = false;
    };
    enum class Truth { False, True, Unknown };
    // Three-valued not, and, or of bash's statuses (lists and the tests inside [[ ]] / [ ]).
    static Truth truthNot(Truth t) { return t == Truth::Unknown ? t : t == Truth::True ? Truth::False : Truth::True; }
    static Truth truthAnd(Truth a, Truth b)
    {
        return a == Truth::False || b == Truth::False ? Truth::False
            : a == Truth::True && b == Truth::True    ? Truth::True
                                                      : Truth::Unknown;
    }
    static Truth truthOr(Truth a, Truth b) { return truthNot(truthAnd(truthNot(a), truthNot(b))); }
    // An if/elif/else block whose condition was (or could not be) evaluated, a case block,
    // or a { ... } group (run or skipped as a whole after && / ||).
    struct Branch {
        enum class Kind { If, Case, Group, Loop };   // Loop: a while/until/for/select body, not known to run
        Kind kind = Kind::If;
        bool known = false;   // the condition could be evaluated
        bool taken = false;   // a branch of this block has run
        bool active = true;   // commands of the current branch are read
        // case only: the next command is a pattern list; the subject; whether the commands
        // around the block are read; the line; variables set while the subject is unknown.
        bool expect_pattern = false;
        Truth match = Truth::False;   // of the pattern list read so far ("small|" ...)
        // The branch before ended with ";&" while it ran: this one runs without its patterns
        // being tested (manual 3.2.5.2).
        bool fall_through = false;
        // Loop only: no body read yet (the next "do" or "{" opens it); a body that is a { }
        // group (for x in a; { ...; }, for ((...)) { ...; }), which its "}" closes with the loop.
        bool awaiting_body = false;
        bool brace_body = false;
        std::string subject;
        bool outer_active = true;
        int line = 0;
        std::vector<std::string> assigned;
        // What the condition, the case subject or patterns, or the test before && / || read
        // from outside the script (envReads()): whether this branch runs is bash's guess only.
        std::vector<std::string> env;
        // If/elif only: the exit statuses of commands in the condition the text does not give
        // (statusRead()), for the commands under `then` and under `else`; in_else after `else`.
        std::vector<std::string> then_status, else_status;
        bool in_else = false;
    };
    // A variable as it stood before a prefix assignment or `local` changed it.
    // Per element of an array: shared, so that saving the reader's state copies no elements
    // (changed in place only while no saved state shares it).
    using ElementReads = std::shared_ptr<std::vector<WordReads>>;
    struct SavedVariable {
        std::string name;
        std::optional<std::string> var, raw;
        std::optional<std::vector<std::string>> array;
        bool opaque = false;
        // What its value was computed from (m_envDerived, m_valueDerived, m_elementReads).
        std::optional<std::vector<std::string>> env_derived, value_derived;
        ElementReads element_reads;
    };
    // A function the script defines: its body from the command that opens "{" (or "(") to the
    // one that closes it, shared so that a redefinition while it runs leaves the running copy.
    // No body once `unset -f` removed it: the entry stays so that it is still known as defined
    // and whether it was called.
    struct Function {
        std::shared_ptr<const std::vector<RawCommand>> body;
        int line = 0;
        bool called = false;
        int unset_line = 0;            // `unset -f` removed it (its body) at this line
        int called_after_unset = 0;    // the first call after that: bash finds no such command
        bool named = false;            // noteFunctionNamed()
    };
    // One call being read.
    // Where getopts is: the letter inside the argument (1: the first after "-") and the
    // OPTIND it last left.
    struct GetoptsPlace {
        std::size_t letter = 1;
        long long index = 1;
    };
    GetoptsPlace m_getopts;
    struct SwitchAt {
        std::string mark;     // "+NAME"
        std::size_t at = 0;   // the argument index
    };
    struct Frame {
        std::string function;
        std::vector<std::string> args;       // $1 ... as the call passes them
        std::vector<WordReads> arg_reads;   // what each read from the environment, when known (else empty)
        // The call passes the script's own arguments ("$@"), which the text does not give:
        // past the known ones its positional parameters stay unknown, as the script's are.
        bool unknown_args = false;
        std::vector<SavedVariable> locals;   // the variables `local` hides, put back on return
        std::vector<std::string> warnings;   // findings while expanding the call's words
        int call_line = 0;                   // the line of the call
        std::size_t subshells = 0;           // m_subshells when the call began
        // A `return` the text cannot decide ran before: the rest of the body runs only when it
        // did not return, so an exit there is undecided, and a guard on what the return's test
        // read with the sense reversed (statusRead()).
        bool after_undecided_return = false;
        std::vector<std::string> after_return_env;
        // `local OPTIND` in it: getopts' place in the caller's arguments, put back on return.
        std::optional<GetoptsPlace> getopts;
        // The "+NAME" marks of the call's words (ShellCommand::value_reads): a switch of the
        // environment that gave the call nothing, with the index of the argument its words
        // would have started at. "$@" and "$*" pass them on; a shift past that index drops one
        // (its words would have gone with the arguments shifted off).
        std::vector<SwitchAt> switches;
    };
    // A subshell being read: a ( ... ), a function whose body is one, a command of a pipeline
    // or one run with & (manual 3.2.3, 3.2.4.3, 3.7.3). Bash runs it in a child process, so what
    // it changes is put back when it ends: each variable and function as it stood before the
    // subshell first changed it, the exported names, the call's arguments and locals.
    struct Subshell {
        // m_branches where it begins: whether an `exit` inside runs depends only on the blocks
        // opened after it, since the exit ends no more than the subshell.
        std::size_t branches = 0;
        std::vector<SavedVariable> variables;
        std::set<std::string> saved;   // the names in `variables`
        std::map<std::string, std::optional<Function>> functions;   // nullopt: not defined before
        std::vector<std::string> exported;   // m_exportOrder
        std::size_t frames = 0;
        std::vector<std::string> args;   // of the call under way (m_frames.back()), if any
        std::vector<WordReads> arg_reads;
        std::vector<SwitchAt> switches;
        std::size_t locals = 0;
        bool undecided_call = false;   // m_undecidedCall outside it
        std::map<std::string, std::vector<std::string>> env_derived;   // m_envDerived before it
        std::map<std::string, std::vector<std::string>> value_derived; // m_valueDerived before it
        std::map<std::string, ElementReads> element_reads;   // m_elementReads before it
        std::set<std::string> unset_by_script;                         // m_unsetByScript before it
        GetoptsPlace getopts;                                           // getopts' place before it
        bool all_export = false;                                        // set -a before it
        bool extglob = false;                                           // shopt -s extglob before it
    };
    // noteFlagLines: record where each --flag is written (flagLines()); not for the text eval
    // puts together, whose flags stand where the script writes them. A text run as commands
    // (`nested`: parseText's what, at `outerLine`) has its findings said at the line of the
    // command that runs it, with their line in the text.
    std::vector<RawCommand> tokenize(std::string_view text, bool noteFlagLines = true, const std::string* nested = nullptr,
                                     int outerLine = 0);
    // eval ARG...: its arguments joined and read as commands where it stands.
    void evalText(const RawCommand& cmd, std::size_t w, std::size_t firstAssign);
    // A text run as commands where `line` stands (eval's, a shell's command string): parsed
    // within the limits below, or a warning naming `what` and false.
    bool parseText(const std::string& text, int line, const std::string& what, std::vector<RawCommand>& commands);
    void runText(std::span<const RawCommand> commands, int line, const std::string& what, std::vector<std::string> textReads);
    // What ran the shell whose command string is being read (srun and its options): the
    // words put before each command read from it, with their reads.
    struct Wrapper {
        std::vector<std::string> words;
        std::vector<WordReads> reads;
    };
    std::vector<Wrapper> m_wrappedBy;
    void exportTemporarily(const RawCommand& cmd, std::size_t from, std::size_t to);
    std::vector<std::vector<std::string>> m_batchOptions;   // of the batch scripts being read (ShellCommand::batch_options)
    // What bash's parser would refuse in a text before running any of it (a reserved word out
    // of place, a compound command not closed), or "" when the text is whole. line: where it
    // is (the opening word of a command not closed); runs: how many of the commands before it
    // bash runs, as it reads a script a line at a time (a compound command spanning lines as one).
    // linesOf: what the lines named in the message are of ("bash -c's text"), or the script's.
    static std::string syntaxError(std::span<const RawCommand> commands, int* line = nullptr, std::size_t* runs = nullptr,
                                   std::string_view linesOf = {});
    std::size_t m_evalCommands = 0;   // commands of eval texts read so far (kMaxEvalCommands)
    std::size_t m_evalBytes = 0;      // and their bytes (kMaxEvalBytes)
    static int braceDepthChange(const RawCommand& cmd);
    // The command that closes the ( ... ) commands[open] opens, or commands.size() if none.
    static std::size_t subshellEnd(std::span<const RawCommand> commands, std::size_t open);
    // The command that closes the { ... } group begun at commands[open], whose words from its
    // "{" are `first`, or commands.size() if none.
    static std::size_t groupEnd(const RawCommand& first, std::span<const RawCommand> commands, std::size_t open);
    // Reads commands in order (the script, a function body when it is called, a subshell).
    void run(std::span<const RawCommand> commands);
    // The index of the command whose `done` closes the loop opened by commands[k] (npos when
    // none does).
    // Only a `done` alone on its command counts (not `done | tee log`, `done < list`).
    static std::size_t loopEnd(std::span<const RawCommand> commands, std::size_t k);
    // The command that starts with that `done`, whatever follows it (npos when none does).
    static std::size_t loopClose(std::span<const RawCommand> commands, std::size_t k);
    // The loop opened at word w of commands[k] when it is a command of a pipeline or runs with
    // &: read as a subshell, k moved to its `done`; false for any other loop.
    bool loopInOwnProcess(std::span<const RawCommand> commands, std::size_t& k, std::size_t w, const std::string& before);
    // NAME=value as a plain shell variable (a loop's name, what read sets): no array, no
    // assignment text, no dependence or kept substitution carried over from before.
    void setScalar(const std::string& name, const std::string& value);
    // `for NAME in WORDS` at commands[k] (its `for` at word w) whose words the text gives: its
    // body read once per word with NAME set, as bash runs it, and k moved to the `done`.
    // False, with nothing read, for any other loop (read once where it is written).
    bool iterateFor(std::span<const RawCommand> commands, std::size_t& k, std::size_t w);
    // while/until at commands[k] whose condition the text decides at every turn (not on the
    // environment or unknown arguments): the body as often as bash runs it (at most 256 turns).
    bool iterateWhile(std::span<const RawCommand> commands, std::size_t& k, std::size_t w, bool until);
    // The loops being iterated (m_branches where each began), and a `break N` / `continue N`
    // under way: run() stops, and the loop N out takes it (nextTurn()).
    std::vector<std::size_t> m_iterating;
    int m_breakLevels = 0;
    bool m_returning = false;   // a decided `return` ends the call's reading, loops included
    int m_loopTurns = 0;        // turns of all loops read so far (kMaxLoopTurns)
    static constexpr int kMaxLoopTurns = 20000;
    int m_continueLevels = 0;
    bool nextTurn();
    bool loopTurnLeft(int line);
    static std::vector<std::string> braceExpand(const std::string& word);
    // A command the reading skips because of what the text does not give (env: those reads):
    // the variables it would set depend on that (m_envDerived), so an exit on them is a guard.
    void skippedAssignments(const RawCommand& cmd, std::size_t w, const std::vector<std::string>& env, int testLine);
    // The assignments of an arithmetic command ((( i++ )), let "N = N * 2"), made as bash makes
    // them; false at the first item it cannot evaluate.
    bool assignArithmetic(const std::string& expr, int line, long long& last);
    // The status of the let / (( )) / getopts execute() just evaluated (run() reads it).
    std::optional<Truth> m_arithmeticStatus;
    // read / readarray / mapfile at word w: the names they set hold values kept as ${NAME}
    // (input the text does not give), with a warning.
    void readInput(const RawCommand& cmd, std::size_t w);
    // read with input the text gives (a here-string or here-document of its own, or the
    // loop's it runs in): one line split into its names, as the builtin does; Unknown (and
    // nothing set) when the input is not known.
    Truth readLine(const RawCommand& cmd, std::size_t first);
    // The command's name after its leading assignments (IFS= read ...), from `first`.
    static std::size_t commandWord(const RawCommand& cmd, std::size_t first);
    // The text of a here-string (with the newline bash adds) or here-document, expanded.
    // nullopt when it holds a value the text does not give (a command substitution, the
    // environment's variable): the input is then not known.
    // keepUnknown: a command substitution stays as its text (the text is still given).
    std::optional<std::string> hereText(const RawCommand::HereInput& input, int line, bool keepUnknown = false);
    // printf -v NAME FORMAT [ARG ...]: NAME set to the formatted text (false: a format this
    // reading does not evaluate, NAME kept as text).
    bool printfAssign(const RawCommand& cmd, std::size_t w);
    void setArrayValues(const std::string& name, std::vector<std::string> values);
    // getopts OPTSTRING NAME [ARG ...] at word w, one call as bash's builtin makes it (manual
    // 4.1): the next option of the arguments given (or of the call's or script's own) sets
    // NAME, OPTARG and OPTIND, and the status says whether there was one. With the script's
    // own arguments not given, it fails at once as when bash runs the script bare, noted as a
    // read of "$@"; Unknown, with nothing set, where a function's arguments are partly unknown.
    Truth getoptsStep(const RawCommand& cmd, std::size_t w);
    // getopts in a loop read once: NAME and OPTARG hold values the text does not give.
    void getoptsUnknown(const RawCommand& cmd, std::size_t w);
    // Bash keeps the place inside a cluster of options (-tp) between calls (m_getopts); it
    // starts again when the script sets OPTIND to another value than the last call left.
    // NAME unset as `unset NAME` would (also one the environment gave).
    void unsetScalar(const std::string& name);
    // NAME holds a value the text does not give, kept as "${NAME}" (returned), opaque.
    std::string keepUnknown(const std::string& name);
    // NAME in the environment of the commands after it (export, set -a), once.
    void exportName(const std::string& name);
    // The definition NAME() { ... } or `function NAME { ... }` (or with a ( ... ) body) at
    // commands[k], whose body opens at word `brace` of commands[open]: defined when `defines`
    // (bash runs the definition), and k moved to the command that closes the body.
    void defineFunction(const std::string& name, std::span<const RawCommand> commands, std::size_t& k, std::size_t open,
                        std::size_t brace, bool defines);
    // Reads commands in a subshell of their own: what they change is put back after them, and an
    // `exit` among them ends only them.
    void runSubshell(std::span<const RawCommand> commands);
    void enterSubshell();
    void leaveSubshell();
    // Where an exit at `line` leaves what it ends: the line of the outermost call under way
    // (in that script or subshell), or `line` itself.
    int exitSite(int line) const;
    // Before a variable or a function changes: noted in the innermost subshell, once.
    void touchVariable(const std::string& name);
    void touchFunction(const std::string& name);
    void callFunction(const std::string& name, std::vector<std::string> args, bool unknownArgs,
                      std::vector<std::string> warnings, int line, std::vector<WordReads> argReads = {},
                      std::vector<SwitchAt> switches = {});
    void execute(const RawCommand& cmd, std::size_t firstWord);
    SavedVariable saveVariable(const std::string& name) const;
    void restoreVariable(const SavedVariable& saved);
    // The assignments cmd.words[from, to) before a command (IFS=, read ...), applied in order
    // for the time it runs; restoreVariables() puts the variables back.
    std::vector<SavedVariable> applyTemporarily(const RawCommand& cmd, std::size_t from, std::size_t to);
    void restoreVariables(const std::vector<SavedVariable>& saved);
    void putVariable(const SavedVariable& saved);   // restoreVariable, not noted in a subshell
    // `local NAME` (and declare / typeset in a function): hides the variable for the call;
    // false when it is already local to it.
    bool makeLocal(const std::string& name);
    bool active() const;
    // Evaluates an if/elif condition: test commands ([ ], [[ ]], test) and arithmetic
    // commands (( )) joined by && and ||, each perhaps after "!". Another command's status is
    // not known: its text goes to m_envReads as a status read (statusRead()).
    Truth evalCondition(const std::vector<const RawCommand*>& parts, std::size_t firstWord);
    // An arithmetic command "(( EXPR ))" that only tests (no assignment): its status, EXPR
    // nonzero, evaluated when its names are known.
    Truth arithmeticStatus(const std::string& word, int line);
    // A command whose exit status the text does not tell (cd "$DIR", mkdir -p, source env.sh),
    // among the environment reads: "!F`cd "$DIR"`" where what depends on it runs only if the
    // command fails (cd "$DIR" || exit 1): an exit there is a guard the real run passes, read as
    // not taken and listed with the guards on the environment. "!S" where it runs only if the
    // command succeeds, "!U" where the text cannot say which: such an exit is undecided.
    static std::string statusRead(const RawCommand& cmd, std::size_t firstWord, char sense);
    // The command as written from firstWord, in backquotes; its first three words where it is
    // longer (a launch command).
    static std::string commandText(const RawCommand& cmd, std::size_t firstWord);
    // What the blocks open from m_branches[from] depend on from outside the script: their
    // conditions' reads, and the statuses of the side (then or else) being read.
    std::vector<std::string> branchesEnv(std::size_t from) const;
    static std::string reversedStatus(const std::string& read);   // F <-> S, others unchanged
    // Takes the "!S" and "!U" reads out of env; true when there were any.
    static bool dropUndecidedStatus(std::vector<std::string>& env);
    // What the last evalCondition found for the commands under then and under else.
    std::vector<std::string> m_conditionThen, m_conditionElse;
    Truth evalTest(const std::vector<std::string>& words);
    bool applyAssignment(const RawWord& word, int line, bool exported);
    // The exit status of a command for the && / || after it, as far as the text tells:
    // a test ([ ], [[ ]], test) or an arithmetic test (( )) evaluated, an assignment (0),
    // true/false/:; else Unknown.
    Truth statusOf(const RawCommand& cmd, std::size_t firstWord);
    // One pattern list of a case block ("small|tiny)"): whether its branch runs.
    void casePattern(Branch& b, const RawCommand& cmd, std::size_t firstWord);
    void noteFlags(std::string_view raw, int line);
    void warn(int line, const std::string& message);
    void warnOnce(const std::string& key, int line, const std::string& message);

    // Word expansion (see BashReader.cpp).
    struct Piece {
        std::string text;
        bool splittable = false;   // from an unquoted expansion: subject to word splitting
        bool field_break = false;  // starts a new field ("${ARR[@]}" elements)
        // The text of a command substitution not executed, or a variable holding one: one
        // field whatever its blanks and "|" (bash would split the command's output, which
        // the text is not).
        bool opaque = false;
        bool element = false;      // an element of "${A[@]}" or "$@": a word even when empty
        bool quoted = false;       // quoted or escaped in the text: a pattern matches it literally
        // The next element of an unquoted $* / ${A[*]} / $@ / ${A[@]}. Where words are split,
        // bash joins the elements with IFS's first character and splits the whole (a blank
        // when IFS is unset; with IFS empty each element is a word of its own, an empty one
        // none): split_separator. Where they are not, `separator` joins them: IFS's first
        // character for the * forms, a blank for the @ forms.
        bool soft_break = false;
        std::string separator = {};
        std::string split_separator = {};
    };
    void expandInto(const std::string& raw, std::size_t begin, std::size_t end, bool quoted,
                    std::vector<Piece>& pieces, bool& forceField, int line, int depth);
    std::size_t expandDollar(const std::string& raw, std::size_t i, std::size_t end, bool quoted,
                             std::vector<Piece>& pieces, int line, int depth);
    void expandParameter(const std::string& body, bool quoted, std::vector<Piece>& pieces, int line, int depth);
    // A list's elements as pieces: "${A[@]}" one word each, "${A[*]}" joined by IFS, unquoted
    // joined by blanks and split.
    void emitListPieces(std::vector<Piece>& pieces, const std::vector<std::string>& list, bool quoted, bool atForm, int line);
    std::string expandToString(const std::string& raw, int line, int depth);
    // A word as a pattern for fnmatch (case, [[ == ]], ${V#P}): expanded, with what the text
    // quotes or escapes matched literally and the rest, expansions included, as pattern
    // characters (manual 3.5.8.1).
    std::string expandPattern(const std::string& raw, int line, int depth);
    // The two above: the pieces joined, fields apart by a blank, quoted text escaped as a pattern.
    std::string expandJoined(const std::string& raw, int line, int depth, bool pattern);
    bool lookup(const std::string& name, std::string& value) const;
    bool evalArithmetic(const std::string& expr, long long& value, int line, int depth);
    // Counts the bytes variable expansions insert; a script whose expansions pass a bound far
    // above any launch script's (a value doubled again and again) is refused, not read.
    void chargeExpansion(std::size_t bytes, int line);
    void checkArgumentCount(const std::string& what, std::size_t count, int line) const;
    void checkValueSize(const std::string& name, std::size_t bytes, std::size_t elements, int line) const;

    std::string m_file;
    std::size_t m_expandedBytes = 0;
    std::map<std::string, std::string> m_vars;
    // The text of each variable's last plain assignment as written, before expansion
    // ("${NCCL_IB_QPS_PER_CONNECTION:-4}"), so that a launcher can keep the default form
    // (ShellCommand::exported_raw).
    std::map<std::string, std::string> m_rawValues;
    std::map<std::string, std::vector<int>> m_flagLines;   // flagLines()
    std::map<std::string, std::vector<std::string>> m_arrays;
    std::vector<std::string> m_exportOrder;
    std::vector<ShellCommand> m_commands;
    std::vector<std::string> m_warnings;
    std::vector<std::string> m_warnedKeys;
    // References a flag's placeholder became (--data-path <PATH> -> DATA_PATH), whose warning
    // says they are unset: not said again where they are read.
    std::set<std::string> m_placeholderNames;
    std::vector<Branch> m_branches;
    std::map<std::string, Function> m_functions;
    std::vector<Frame> m_frames;
    // Commands read in function bodies, all told: past a bound far above any launch script's
    // (a recursion that doubles at each level), calls are no longer followed.
    std::size_t m_calledCommands = 0;
    std::vector<Subshell> m_subshells;   // the subshells being read, innermost last
    // Set by an `exit` that runs, until the subshell it ends (or the whole reading) is left.
    std::vector<int> m_evalLines, m_sourceLines;
    std::string m_script;   // the text read(), where a nested text's finding is looked up
    // The line of the script's one occurrence of the word `word` followed by blanks (or line
    // continuations) and `next`, or 0 (none, or several).
    int uniqueLineInScript(std::string_view word, std::string_view next) const;
    int m_evalDepth = 0;   // evals nested in evals
    // The standard input of the loops being iterated (`while read ...; do ...; done <<< "$X"`),
    // innermost last: the text still to read, or nullopt for input the text does not give
    // (a file, a pipe).
    struct InputText {
        std::string data;
        std::size_t pos = 0;
    };
    std::vector<std::optional<InputText>> m_inputs;
    // Every command substitution kept as text (keepOpaque): one word wherever a value holds it.
    std::vector<std::string> m_keptTexts;
    // A function named where bash runs it though the reading does not follow it there (an if
    // or while condition, a trap): not listed as never called.
    void noteFunctionNamed(const std::string& name);
    bool m_exiting = false;
    int m_exitLine = 0;   // exitLine()
    int m_syntaxErrorLine = 0;   // syntaxErrorLine()
    std::string m_syntaxError;   // syntaxErrorText()
    // Set while a function called after a && / || whose status the text cannot decide is read
    // (cmd || die "msg"): an `exit` in it is undecided, as in an inline { ...; exit 1; }.
    bool m_undecidedCall = false;
    // What expansions read from outside the script since the last take (noteEnvRead): a
    // variable it never set, so its environment's ("DATA_PATH"), or the script's own arguments
    // ("$1", "$#", "$@") where they are not known, or the exit status of a command it does not
    // run (statusRead(): "!`cd "$DIR"`"). An `exit` whose running depends on one is a guard
    // the real run (with its environment and arguments, where its commands succeed) passes:
    // read as not taken.
    NameList m_envReads;
    // Variables the script set from such values (NODE_RANK="${1:-${NODE_RANK:-}}"), with them.
    std::map<std::string, std::vector<std::string>> m_envDerived;
    // The environment's variables a value was computed from, and nothing else: m_envDerived
    // also holds what decided the branch an assignment is in, which a guard depends on but
    // the value does not hold. m_valueReads collects them while an expansion reads.
    std::map<std::string, std::vector<std::string>> m_valueDerived;
    NameList m_valueReads;
    // While eval runs a text: what the text was computed from (evalText).
    std::vector<std::string> m_evalReads;
    void noteValueRead(const std::string& name);
    // Whether the variable's value came from the environment's variable of the same name
    // (USE_FP8=${USE_FP8:-}).
    bool derivesFromItself(const std::string& name) const;
    // Per element of an array set as ( ... ) and appended to so, what that element's value was
    // computed from (m_valueDerived holds the union): a launch command's "${ARGS[@]}" words
    // each take their own. Dropped when the array is changed any other way.
    std::map<std::string, ElementReads> m_elementReads;
    // The reads of each field `raw` expanded to (given as `fields`; `reads` are those of the
    // whole expansion): an element's own for "${NAME[@]}" of an array m_elementReads knows,
    // else the whole expansion's, which are a field's own only when it is the one field.
    std::vector<WordReads> fieldReads(const std::string& raw, const std::vector<std::string>& fields,
                                       const std::vector<std::string>& reads) const;
    std::set<std::string> m_unsetByScript;   // `unset NAME`: empty in any environment
    std::set<std::string> m_integerVars;     // declare -i NAME: assignments are arithmetic (manual 4.2)
    std::vector<std::string> m_conditionEnv;   // what the last evalCondition read from outside
    std::vector<std::string> m_callEnv;        // what the running of the call under way depends on
    // The exits read as not taken for that reason: line, and "exit 1 depends on ...".
    struct EnvExit {
        int line = 0;
        std::string text;
        std::size_t command = 0;   // the number of commands read before it
    };
    std::vector<EnvExit> m_envExits;
    // One finding for the exits read as not taken among the first `commands` commands (all:
    // npos), inserted among `warnings` before the first finding of a later line; its text.
    std::string addEnvExitFinding(std::vector<std::string>& warnings, std::size_t commands) const;
    std::string m_envExitFinding;   // the one read() added
    // Each finding's first appearance: the number of commands read before it.
    std::map<std::string, std::size_t> m_warningAt;
    std::function<bool(const ShellCommand&)> m_environmentKept;   // setEnvironmentKept
    bool m_allExport = false;   // set -a: every assignment exports its name (manual 4.3.1)
    int m_warningsHeld = 0;   // m_warnings is a list held apart (a command's own, a test's)
    void noteEnvRead(const std::string& what);
    // A read of the variable NAME ($NAME or a bare name in arithmetic): from outside the
    // script when it is not set, or through what it was set from (m_envDerived).
    void noteNameRead(const std::string& name, bool isSet);
    static void addEnv(std::vector<std::string>& to, const std::vector<std::string>& from);
    static void addEnv(NameList& to, const std::vector<std::string>& from) { to.add(from); }
    std::string describeEnv(const std::vector<std::string>& reads) const;
    // Set when an expansion used the script's own arguments ($@, $*), which are not known.
    bool m_scriptArgs = false;
    // The script's own arguments, when setArguments() gave them: $1 ... outside any call.
    bool m_argumentsGiven = false;
    Frame m_scriptFrame;
    // The frame whose arguments $1 ... "$@" $# name: the innermost call's, else the script's
    // when they are given; nullptr when they are the script's and not known.
    const Frame* positionalFrame() const;
    Frame* positionalFrame();
    bool m_unsetAsEmpty = false;         // conditions see unset variables as empty
    // The names a condition read as empty because the text does not give them: the script's
    // own arguments ("$1") when they are not given, and names neither the script nor the
    // given environment sets.
    std::vector<std::string> m_emptyReads;
    // The texts kept for values the text does not give ("${ARG1}", "${SLURM_NNODES}") and what
    // each stands for ("$1", "SLURM_NNODES"): in a condition they read as empty, as $1 does.
    std::map<std::string, std::string> m_keptRefs;
    std::map<std::string, std::vector<std::string>> m_envDefaults;   // environmentDefaults()
    std::map<std::string, std::vector<std::string>> m_envSwitches;   // environmentSwitches()
    std::vector<SkippedByTest> m_skippedByTest;                        // skippedByTest()
    // Whether a value read is the mark of an assignment that a test of an if still open
    // skipped (skippedByTest).
    bool skippedInOpenBlock(const std::string& read) const;
    std::string m_ranText;                                          // ranText()
    void noteRan(std::span<const RawWord> words);
    void noteEnvDefault(const std::string& name, const std::string& text);
    void noteEnvSwitch(const std::string& name, const std::string& words);
    // While a condition is read again with what read as empty marked (noteEmptyComparison).
    bool m_emptySentinel = false;
    static constexpr char kEmptySentinel = '\x1f';
    static constexpr char kGroupMark = '\x1e';   // "(" / ")" of a [[ ]] test's own text
    // Whether w[k] (a [[ ]] test's words, brackets included) is a grouping paren "(" or ")".
    static bool isGroup(const std::vector<std::string>& w, std::size_t k, char paren);
    // The arguments of [ ] or test, four or more, as bash's test parses them.
    Truth evalSingleTest(const std::vector<std::string>& args);
    bool m_extglob = false;   // shopt -s extglob: extended patterns outside [[ ]] too
    // Characters handed to the glob matcher by ${X#P}, ${X%P} and ${X/P/R} over the whole
    // script: each tries the pattern at every start and end, so a few lines on long values
    // could take minutes. Past kMaxPatternWork a pattern expansion keeps its value, with a warning.
    // `body` names the expansion in the warning ("${body}").
    bool patternWorkLeft(std::size_t characters, int line, const std::string& body);
    std::uint64_t m_patternWork = 0;
    // Why the last arithmetic evaluation failed (ShellArithmetic::error), for its warning.
    std::string m_arithmeticError;
    bool m_patternWorkWarned = false;
    bool isLocal(const std::string& name) const;   // a `local` of the call being read
    // $?: the status of the last command read, when the text gives it, and that command.
    Truth m_lastStatus = Truth::True;
    std::string m_lastStatusText;
    bool m_lastStatusNegated = false;              // `! cmd`: $? is cmd's status reversed
    void setLastStatus(Truth status, std::string text, bool negated)
    {
        m_lastStatus = status;
        m_lastStatusText = std::move(text);
        m_lastStatusNegated = negated;
    }
    bool m_statusParameterRead = false;            // $? was read while m_lastStatus is unknown
    std::optional<std::string> m_forcedStatus;     // the value $? takes while a condition tries both
    // A test decided only by comparing such a name, read as empty, with a value: a warning
    // saying so (the script picks a configuration by its arguments or environment). Not for
    // -z / -n, nor for a comparison with an option such as "--help" (a usage check).
    void noteEmptyComparison(const RawCommand& cmd, std::size_t firstWord, const std::vector<std::string>& words,
                             Truth result);
    // Set when an expansion keeps text it cannot know (an unset variable, $@, a command
    // substitution): a case subject expanded so is not decided.
    bool m_unknownExpansion = false;
    // Variables whose whole value is one command substitution kept as text (Piece::opaque);
    // a value that only contains one ("--master_addr $(hostname) --master_port 6000") splits
    // as usual. Whether the expansion under way has kept one, and the last one's text.
    std::set<std::string> m_opaqueVars;
    bool m_keptSubstitution = false;
    std::string m_keptText;
    void keepOpaque(std::vector<Piece>& pieces, const std::string& text);
    // "command substitution ... is not executed", unless eval reads again a text already kept.
    void warnSubstitution(const std::string& text, int line);
    // Marks or clears `name` as opaque after it was set to `value` by an expansion that began
    // with m_keptSubstitution false.
    void noteOpaque(const std::string& name, const std::string& value);
};

} // namespace hapmoe
