// libFuzzer target for the Megatron-LM readers: any input must either be read or raise
// InputError; anything else (a crash, another exception, a sanitizer report) is a bug.
// The importer must never run anything the script says.
// Build: CXX=clang++ cmake -DHAPMOE_FUZZ=ON -DHAPMOE_BUILD_GUI=OFF
//        -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address ...; run with
// tests/data/megatron as the seed corpus.

#include "megatron/LogCalibration.h"
#include "megatron/PipelineLayout.h"
#include "megatron/ScriptImport.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hapmoe;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)importMegatronScript(text, "fuzz.sh");
    } catch (const InputError&) {
    }
    try {
        (void)parseMegatronLog(text, "fuzz.log");
    } catch (const InputError&) {
    }
    std::vector<int> split;
    int vpp = 0, mtp = 0;
    std::string error;
    (void)PipelineLayout::parse(std::string(text.substr(0, 4096)), 1 + static_cast<int>(size % 16), split, vpp, mtp, error);
    return 0;
}
