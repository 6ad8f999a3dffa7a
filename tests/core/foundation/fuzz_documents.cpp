// libFuzzer target for the document readers: any input must either parse or raise
// InputError; anything else (a crash, another exception, a sanitizer report) is a bug. A plan
// document that passes validation must estimate to finite, non-negative figures.
// Build: CXX=clang++ cmake -DHAPMOE_FUZZ=ON -DHAPMOE_BUILD_GUI=OFF
//        -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address ...; run with the files of
// resources/ and tests/data/foundation as the seed corpus.

#include "cost/CostModel.h"
#include "hardware/ClusterTopology.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hapmoe;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto& catalog = DeviceCatalog::builtin();
    try {
        const std::string format = detectFormat(text, "fuzz");
        Warnings w;
        if (format == kModelFormat) {
            const ModelSpec m = readModel(text, "fuzz", &w);
            validateModel(m, "fuzz");
            (void)readModel(writeModel(m), "again");
        } else if (format == kClusterFormat) {
            const Cluster c = readCluster(text, "fuzz", &w);
            const ClusterTopology t(c, catalog);
            (void)t.problems();
            (void)t.typeOrder();
            validateCluster(c, catalog, "fuzz");
            (void)readCluster(writeCluster(c), "again");
        } else if (format == kProfileFormat) {
            (void)readProfile(writeProfile(readProfile(text, "fuzz", &w)), "again");
        } else if (format == kPlanFormat) {
            const PlanDocument d = readPlan(text, "fuzz", &w);
            (void)readPlan(writePlan(d), "again");
            validatePlanDocument(d, catalog, "fuzz");
            // A valid plan document is estimated: every number must be finite and not negative.
            const CostModel cm(d.model, d.cluster, catalog);
            const Prediction p = cm.estimate(d.plan);
            if (!std::isfinite(p.iteration_time_s) || p.iteration_time_s < 0 || !std::isfinite(p.peak_memory_gib)
                || p.peak_memory_gib < 0)
                std::abort();
        } else if (format == kProjectFormat) {
            (void)readProject(writeProject(readProject(text, "fuzz", &w)), "again");
        } else if (format == kDevicesFormat) {
            DeviceCatalog c = DeviceCatalog::fromJson(text, "fuzz", &w);
            c.merge(catalog);
        }
    } catch (const InputError&) {
    }
    return 0;
}
