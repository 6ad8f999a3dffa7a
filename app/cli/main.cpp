// hapmoe: command-line front end of the planner. Exit codes: 0 success, 1 no feasible
// plan, 2 bad input or usage.

#include "CliArgs.h"
#include "util/Strings.h"
#include "Commands.h"
#include "io/Documents.h"
#include "util/InputError.h"

#include <csignal>
#include <poll.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage = R"(hapmoe - heterogeneity-aware parallelism planner for Mixture-of-Experts training

Usage: hapmoe <command> [options]

Commands:
  presets [devices|models|clusters]   list the built-in device types, models and clusters
  validate FILE...                    check a hapmoe.model/cluster/devices/profile/plan/project file
  estimate --model M --cluster C ...  predict iteration time and memory of one plan
  plan --model M --cluster C ...      search the fastest feasible plan (HS-DP)
  import SCRIPT [-o project.hapmoe]   read a Megatron-LM or FlagScale launch script
  export PLAN.json --format megatron|flagscale [--script ORIG.sh] [-o launch.sh]
  calibrate --log train.log --plan PLAN.json [-o profile.json]

M is a model preset name (see "hapmoe presets models") or a hapmoe.model file.
C is a cluster preset name, a hapmoe.cluster file, or a shorthand such as
"H800:2x8,910B:2x8" (device type : nodes x devices per node).

Run "hapmoe <command> --help" for the options of a command.
Exit codes: 0 success, 1 no feasible plan, 2 bad input or usage.
)";

// Whether standard output is a pipe whose reader has gone (`hapmoe plan | head -1`).
bool readerGone()
{
    pollfd out{STDOUT_FILENO, 0, 0};
    return ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR) != 0;
}

// The command's exit code, or 2 when its standard output could not be written (a full disk
// behind "> plan.json", a pipe closed by its reader): a document cut short must not look like
// a success. SIGPIPE is ignored (main), so a closed pipe ends no command before its -o file
// is written.
int outputWritten(const std::string& cmd, int code)
{
    std::cout.flush();
    const bool failed = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout);
    if (!failed)
        return code;
    std::cerr << "hapmoe " << cmd << ": error: "
              << (readerGone() ? "standard output was closed before the end (the pipe's reader stopped reading)"
                               : "cannot write to standard output")
              << "; what was printed is incomplete\n";
    return hapmoe::cli::BadInput;
}

int run(const std::vector<std::string>& args)
{
    using namespace hapmoe::cli;
    if (args.empty()) {
        std::cerr << kUsage;
        return BadInput;
    }
    const std::string cmd = args.front();
    // Words after these that they do not take are a mistake the user should see.
    auto extra = [&](std::size_t taken) {
        if (args.size() <= taken)
            return false;
        std::cerr << "hapmoe " << cmd << ": error: unexpected argument \"" << args[taken] << "\"\n";
        return true;
    };
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        // "hapmoe help plan" is "hapmoe plan --help".
        if (extra(cmd == "help" ? 2 : 1))
            return BadInput;
        if (cmd == "help" && args.size() == 2 && args[1] != "help")
            return run({args[1], "--help"});
        std::cout << kUsage;
        return Success;
    }
    if (cmd == "--version" || cmd == "-V") {
        if (extra(1))
            return BadInput;
        std::cout << "hapmoe " << HAPMOE_VERSION << "\n";
        return Success;
    }
    const Args rest(args.begin() + 1, args.end());
    try {
        if (cmd == "presets") return outputWritten(cmd, cmdPresets(rest));
        if (cmd == "validate") return outputWritten(cmd, cmdValidate(rest));
        if (cmd == "estimate") return outputWritten(cmd, cmdEstimate(rest));
        if (cmd == "plan") return outputWritten(cmd, cmdPlan(rest));
        if (cmd == "import") return outputWritten(cmd, cmdImport(rest));
        if (cmd == "export") return outputWritten(cmd, cmdExport(rest));
        if (cmd == "calibrate") return outputWritten(cmd, cmdCalibrate(rest));
        std::cerr << "hapmoe: unknown command \"" << cmd << "\"\n\n" << kUsage;
        return BadInput;
    } catch (const UsageError& e) {
        std::cerr << "hapmoe " << cmd << ": error: " << hapmoe::printableText(e.what()) << "\n";
        // The command's help where the error is about the command line's shape, else where
        // to find it (an option's value is wrong: the error says what was expected).
        if (!e.usage().empty())
            std::cerr << "\n" << e.usage();
        else if (std::string_view(e.what()).find("--help") == std::string_view::npos)
            std::cerr << "(\"hapmoe " << cmd << " --help\" lists the options)\n";
        return BadInput;
    } catch (const hapmoe::InputError& e) {
        std::cerr << "hapmoe " << cmd << ": error: " << hapmoe::printableText(e.what()) << "\n";
        // Every command takes --devices: say where a type of one's own comes from.
        if (e.detail().find("unknown device type") != std::string::npos)
            std::cerr << "  (a device type of your own goes in a hapmoe.devices file given with --devices FILE;\n"
                         "   the \"devices\" object of \"hapmoe presets devices --json\" is the built-in catalog in that layout)\n";
        return BadInput;
    } catch (const std::bad_alloc&) {
        std::cerr << "hapmoe " << cmd << ": error: out of memory\n";
        return BadInput;
    } catch (const std::exception& e) {
        std::cerr << "hapmoe " << cmd << ": error: " << hapmoe::printableText(e.what()) << "\n";
        return BadInput;
    }
}

} // namespace

// Interrupted (Ctrl-C, kill, the terminal closed, any signal whose default is to end the
// program) while a file is being saved: its temporary file is removed, the target is as it
// was, and the signal then ends the program as it would. A closed pipe is no such end: SIGPIPE
// is ignored, the write fails and outputWritten says so.
extern "C" void onTerminatingSignal(int signal)
{
    hapmoe::removeUnfinishedSaves();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

int main(int argc, char** argv)
{
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ})
        std::signal(signal, onTerminatingSignal);
    std::signal(SIGPIPE, SIG_IGN);
    return run(std::vector<std::string>(argv + 1, argv + argc));
}
