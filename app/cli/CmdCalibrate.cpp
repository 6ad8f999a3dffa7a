#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdCalibrate(const Args&)
{
    std::cerr << "hapmoe calibrate: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
