#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdPresets(const Args&)
{
    std::cerr << "hapmoe presets: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
