#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdImport(const Args&)
{
    std::cerr << "hapmoe import: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
