#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdEstimate(const Args&)
{
    std::cerr << "hapmoe estimate: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
