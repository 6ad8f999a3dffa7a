#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdPlan(const Args&)
{
    std::cerr << "hapmoe plan: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
