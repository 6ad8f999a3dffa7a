#pragma once
// One function per subcommand; each returns the process exit code (CliArgs.h ExitCode)
// and may throw UsageError or InputError (main prints them and exits with 2).

#include <string>
#include <vector>

namespace hapmoe::cli {

using Args = std::vector<std::string>;   // the arguments after the subcommand name

int cmdPresets(const Args& args);
int cmdValidate(const Args& args);
int cmdEstimate(const Args& args);
int cmdPlan(const Args& args);
int cmdImport(const Args& args);
int cmdExport(const Args& args);
int cmdCalibrate(const Args& args);

} // namespace hapmoe::cli
