#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdExport(const Args&)
{
    std::cerr << "hapmoe export: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
