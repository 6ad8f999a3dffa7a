#pragma once
// Which collective library a node's devices speak. Ranks of different libraries (NCCL and
// RCCL, HCCL) cannot join one communicator: their traffic crosses the cluster's cross-vendor
// bridge (Cluster::cross_vendor, docs/cost-model.md sections 2 and 4.1), whatever links
// join them.

#include "hardware/Cluster.h"

#include <QString>
#include <QStringList>

namespace hapmoe {
class DeviceCatalog;
struct DeviceType;
}

namespace hapmoe::ui {

// The type's collective library, or its vendor when the catalog gives none (as the search
// and the launcher export name it).
QString collectiveLibrary(const DeviceType& type);
// The libraries of the cluster's nodes of known types, each once, in the order of their
// first node.
QStringList collectiveLibraries(const Cluster& cluster, const DeviceCatalog& catalog);
// Whether a and b are nodes of known types whose libraries differ.
bool crossesBridge(const Cluster& cluster, const DeviceCatalog& catalog, int a, int b);

} // namespace hapmoe::ui
