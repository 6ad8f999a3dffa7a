#include "CliArgs.h"
#include "Commands.h"

#include <iostream>

namespace hapmoe::cli {

int cmdValidate(const Args&)
{
    std::cerr << "hapmoe validate: this command is not available in this build\n";
    return BadInput;
}

} // namespace hapmoe::cli
