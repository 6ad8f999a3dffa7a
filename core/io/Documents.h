#pragma once
// The JSON file formats (DESIGN section 8). Each document carries "format" and "version";
// readers migrate older versions through one chain (io/Migrations.cpp), warn about
// unknown keys, refuse newer versions, and throw InputError naming the file, the JSON
// path and what was expected. Writers produce canonical documents; saveFileAtomically
// writes a temporary file in the same folder and renames it.

#include "cost/Prediction.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "megatron/ScriptInputs.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"
#include "profile/Profile.h"
#include "search/Search.h"
#include "util/InputError.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hapmoe {

inline constexpr const char* kModelFormat = "hapmoe.model";
inline constexpr const char* kClusterFormat = "hapmoe.cluster";
inline constexpr const char* kProfileFormat = "hapmoe.profile";
inline constexpr const char* kPlanFormat = "hapmoe.plan";
inline constexpr const char* kProjectFormat = "hapmoe.project";
inline constexpr const char* kDevicesFormat = "hapmoe.devices";

// Search settings saved in a project (what the GUI's search panel holds).
struct SearchSettings {
    Target target = Target::Any;
    Algorithm algorithm = Algorithm::HsDp;
    int top_k = 5;
    double delta = 0.2;
    double eta = 2.0;
    double time_limit_s = 600;   // as hapmoe plan's --time-limit
    bool exact = false;
    OptimizerOffload optimizer_offload = OptimizerOffload::IfNeeded;
    double memory_headroom = 0;   // fraction of every device's memory a plan leaves free (CostOptions)
    // Search the micro-batch sizes 1, 2, 4 and 8 that divide the global batch
    // (microBatchCandidates), not only the model's.
    bool search_micro_batch = false;
    // Megatron-LM's interleaved 1F1B tried on the plans found, up to this many virtual
    // stages per pipeline rank (SearchOptions::max_vpp); 1 = plain 1F1B only.
    int max_vpp = 1;
};

// A plan document: self-contained, so that export and calibrate need nothing else.
struct PlanDocument {
    ModelSpec model;
    Cluster cluster;
    Plan plan;
    std::optional<Prediction> prediction;
    std::optional<SearchResult> search;   // written as the "search" object (algorithm, time_s,
                                          // states, pruned, alternatives)
    // The device types of the cluster that the plan was costed with and the built-in catalog
    // lacks or has with other figures (a --devices file's), as "devices" in the hapmoe.devices
    // layout: whoever reads the plan costs it on the same devices (catalogWith).
    std::vector<DeviceType> devices;
};

// The catalog entries of the cluster's device types that the built-in catalog does not hold as
// they are in `catalog` (new types, or replaced figures): what a plan document carries.
std::vector<DeviceType> typesBeyondBuiltin(const Cluster& cluster, const DeviceCatalog& catalog);
// The device types a plan or project document carries ("devices"; none when absent). Throws
// InputError naming the file and "devices[i].field" as readPlan and readProject do.
std::vector<DeviceType> readDocumentDevices(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
// The built-in catalog with `types` added, or replacing the built-in types they name: what a
// plan or project that carries types is costed on. Throws InputError(fileName,
// "devices[i].name" or "devices[i].aliases", ...) when a name or an alias names another type
// (DeviceCatalog::merge).
DeviceCatalog catalogWith(const std::vector<DeviceType>& types, const std::string& fileName = {});
// The document with every stage's and node's device type in the catalog's spelling: a plan
// written by hand may name one by an alias ("h800"), which outputs (--json, a launcher's
// type= labels and --hetero-device-types) must spell as the catalog does. Names the catalog
// does not know are kept as written.
PlanDocument withCatalogNames(PlanDocument doc, const DeviceCatalog& catalog);

struct SavedPlan {
    // Where the plan comes from: a search's ranked plans, the configuration the user runs
    // today (the imported script's, `hapmoe import -o`), or the search's uniform and
    // Metis-style baselines.
    enum class Source { Search, Current, Uniform, MetisStyle };
    Plan plan;
    std::optional<Prediction> prediction;
    Source source = Source::Search;
    double plain_time_s = 0;   // RankedPlan::plain_time_s: the plan's time under plain 1F1B when the search interleaved it
};

struct Project {
    std::string name;
    ModelSpec model;
    Cluster cluster;
    SearchSettings search;
    std::vector<SavedPlan> plans;
    // The search plans are the best so far of a search that a cancel or its time limit
    // stopped (SearchResult::cancelled, timed_out); a finished search's plans have neither.
    bool plans_cancelled = false;
    bool plans_timed_out = false;
    std::string current_script;   // path of an imported Megatron script, if any
    // What the script is read with (its arguments and environment); empty without a script.
    ScriptInputs current_script_inputs;
    // Measured tables the project's searches and estimates use (the "profile" object, a
    // hapmoe.profile's fields); none: the analytic defaults. profile_file is the file it was
    // loaded from, shown to the user and never read again (the project holds the tables).
    std::optional<Profile> profile;
    std::string profile_file;
    // Device types of the project's own, in the hapmoe.devices layout ("devices"): new types, or
    // built-in types with other figures. The project's cluster, searches and estimates use the
    // built-in catalog with these over it (catalogWith); the studio's device type editor
    // changes them.
    std::vector<DeviceType> devices;
};

// Reads the top-level "format" key of a JSON document from its head: text after the format
// (and, for documentVersion, the version) is left to the document's reader. Throws InputError
// when the format is absent or not a string, or the JSON is malformed before it is found.
std::string detectFormat(std::string_view text, const std::string& fileName);

// The format of a document, the version the file gives (as the readers take it: "version": 1.0
// is 1; 0 when it gives none they take, which they then refuse) and the version this program
// reads it as after the migrations (io/Migrations.h), for "hapmoe.model v1, migrated to v2".
struct DocumentVersion {
    std::string format;
    int version = 0;
    int current = 0;
};
DocumentVersion documentVersion(std::string_view text, const std::string& fileName);   // throws as detectFormat

ModelSpec readModel(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
Cluster readCluster(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
Profile readProfile(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
PlanDocument readPlan(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
// The model and the cluster of a plan document, also of one that holds no plan (what
// `hapmoe plan` writes when nothing is feasible; no_plan_reason then says why): what a search
// on a larger cluster or a smaller model starts from.
struct PlanContext {
    ModelSpec model;
    Cluster cluster;
    std::vector<DeviceType> devices;      // PlanDocument::devices
    std::optional<SearchResult> search;   // without a plan: the search that found none (its settings and reason)
    bool has_plan = false;
    std::string no_plan_reason;
};
PlanContext readPlanContext(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
Project readProject(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);

// readModel then validateModel, readCluster then validateCluster: a check's error on a migrated
// file names the key as the file has it ("model.global_batch_size" of a version-1 model, not
// "model.training.global_batch_size"), as the readers' own errors do.
ModelSpec readValidModel(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);
Cluster readValidCluster(std::string_view text, const std::string& fileName, const DeviceCatalog& catalog,
                         Warnings* warnings = nullptr);

std::string writeModel(const ModelSpec& model);
std::string writeCluster(const Cluster& cluster);
std::string writeProfile(const Profile& profile);
std::string writePlan(const PlanDocument& doc);
// A hapmoe.plan document for a search that found no feasible plan: "plan" is null and
// "search" says why (no_plan_reason, no alternatives, the baselines it costed). readPlan
// refuses it with that reason.
std::string writeNoPlan(const ModelSpec& model, const Cluster& cluster, const SearchResult& search,
                        const std::vector<DeviceType>& devices = {});
std::string writeProject(const Project& project);

// Semantic checks beyond types (heads divisible by query groups, top-k <= experts, a
// cluster with devices, known device types, ...). Throws InputError for the first problem.
void validateModel(const ModelSpec& model, const std::string& fileName);
// The most layers a model may have: the search's work grows with the square of the count.
constexpr int kMaxLayers = 1024;
// The largest make_vocab_size_divisible_by: Megatron-LM's default is 128; a multiple beyond
// this would pad any vocabulary to a size no run uses.
constexpr int kMaxVocabMultiple = 65536;
// The most devices one node may hold (as the studio's node editor allows) and the most nodes
// a cluster may have, for files and the command line's shorthand alike: far beyond any machine,
// and small enough that device counts and ranks stay within an int.
constexpr int kMaxDevicesPerNode = 4096;
constexpr int kMaxNodes = 100000;
// And the most devices in all: 2^20, beyond any machine, where an estimate still takes a
// fraction of a second (81.9 million devices took 39 s and 3.8 GB).
constexpr int kMaxDevices = 1 << 20;
void validateCluster(const Cluster& cluster, const DeviceCatalog& catalog, const std::string& fileName);
// One entry per table point also when two entries name one device type by different catalog
// names or aliases ("H800", "H800-SXM"): the cost model matches them as one. Then the bounds
// of checkProfileLimits (docs/profiling.md, "Bounds"). Throws InputError.
void validateProfile(const Profile& profile, const DeviceCatalog& catalog, const std::string& fileName);
// What a valid profile holds that is likely a mistake, one warning each:
// - an entry whose device type the catalog does not know: no estimate uses it
//   ("FILE: profile.compute[2].device_type: unknown device type ...");
// - a point of a series (compute: device type, TP, CP; collectives: primitive, link, group
//   size, device type) whose time is below that of the series' previous point, which has less
//   work (fewer tokens, fewer bytes): interpolated, a larger layer or message would cost less;
// - a collective's `bytes` that is not a whole number;
// - a profile that holds nothing the cost model uses (no table, calibration, efficiency or rho).
Warnings profileWarnings(const Profile& profile, const DeviceCatalog& catalog, const std::string& fileName);
// A plan document's plan against its own model and cluster: stages cover the layers in
// order, slots exist on nodes of the stage's device type and do not overlap,
// tp*cp*dp == ep*etp*edp == devices of the stage, Megatron's divisibility rules (heads,
// query groups, experts, sequence over 2 CP, layers over VPP), one micro-batch count for
// all stages, recompute_layers within the stage, unused devices on real nodes. Also
// validates model and cluster.
void validatePlanDocument(const PlanDocument& doc, const DeviceCatalog& catalog, const std::string& fileName);
// The search's plans a plan document keeps for comparison (search.alternatives, the
// baselines) that validatePlanDocument refuses on the document's model and cluster: each is
// taken out of doc.search, with a warning naming the file and its path in the document
// ("search.alternatives[1].plan.stages[1]: ..."). They are not a reason to refuse the document.
Warnings dropInvalidSearchPlans(PlanDocument& doc, const DeviceCatalog& catalog, const std::string& fileName);
// A saved plan of a project (plans[index]) checked against the project's model and cluster
// as validatePlanDocument checks a plan document; the InputError names the file and the path
// inside the project ("plans[2].plan.stages[1].devices[0].node"), or the project's own
// "model..." or "cluster..." path when they are what is wrong.
void validateProjectPlan(const Project& project, std::size_t index, const DeviceCatalog& catalog, const std::string& fileName);

std::string readTextFile(const std::string& path);           // throws InputError
// The largest file readTextFile reads.
constexpr std::size_t kMaxDocumentBytes = std::size_t(256) << 20;
// Throws the InputError reading `text` back would give (too large, too many JSON values, too
// deeply nested), for a writer that should not write what it cannot read.
void checkReadsBack(const std::string& text, const std::string& file);
void saveFileAtomically(const std::string& path, std::string_view content);  // throws std::runtime_error
// Removes the temporary files of saves still being written (at most 8 at once are tracked).
// Async-signal-safe: a program's SIGINT / SIGTERM handler calls it, so that a save cut short
// leaves neither the target changed nor a ".NAME.tmp-XXXXXX" beside it.
void removeUnfinishedSaves() noexcept;
// Saves every file or none: each save is atomic, and when a later one fails the earlier ones
// are undone (a new file removed, a replaced one restored); rethrows the failure.
void saveFilesAllOrNothing(const std::vector<std::pair<std::string, std::string>>& files);

} // namespace hapmoe
