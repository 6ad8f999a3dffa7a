#include "CollectiveLibraries.h"

#include "hardware/DeviceCatalog.h"

namespace hapmoe::ui {

QString collectiveLibrary(const DeviceType& type)
{
    return QString::fromStdString(type.library());
}

QStringList collectiveLibraries(const Cluster& cluster, const DeviceCatalog& catalog)
{
    QStringList libraries;
    for (const Node& n : cluster.nodes)
        if (const DeviceType* t = catalog.find(n.device_type); t && !libraries.contains(collectiveLibrary(*t)))
            libraries.append(collectiveLibrary(*t));
    return libraries;
}

bool crossesBridge(const Cluster& cluster, const DeviceCatalog& catalog, int a, int b)
{
    const Node* na = cluster.node(a);
    const Node* nb = cluster.node(b);
    const DeviceType* ta = na ? catalog.find(na->device_type) : nullptr;
    const DeviceType* tb = nb ? catalog.find(nb->device_type) : nullptr;
    return ta && tb && collectiveLibrary(*ta) != collectiveLibrary(*tb);
}

} // namespace hapmoe::ui
