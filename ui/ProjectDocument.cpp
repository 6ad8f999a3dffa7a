#include "ProjectDocument.h"

#include "AddItemsCommand.h"
#include "ChangeBridgeCommand.h"
#include "ChangeDevicesCommand.h"
#include "ChangeLinkCommand.h"
#include "ChangeModelCommand.h"
#include "ChangeProfileCommand.h"
#include "ChangeNodeCommand.h"
#include "ChangeSearchSettingsCommand.h"
#include "ChangeSwitchCommand.h"
#include "MoveItemsCommand.h"
#include "RemoveItemsCommand.h"
#include "ReplaceClusterCommand.h"

#include "cost/ProfileCheck.h"
#include "hardware/DeviceCatalog.h"
#include "io/Presets.h"

#include <QFileInfo>
#include <QUndoStack>

#include <algorithm>
#include <set>

namespace hapmoe::ui {

namespace {

std::pair<int, int> key(int a, int b) { return {std::min(a, b), std::max(a, b)}; }

bool sameLink(const Link& l, int a, int b) { return key(l.a, l.b) == key(a, b); }

// What an edit appends to a preset's name (followPresetName).
constexpr std::string_view kEdited = " (edited)";

// The cluster without the drawing: canvas positions, and the name, description and source.
Cluster withoutDrawing(Cluster cluster)
{
    cluster.name.clear();
    cluster.description.clear();
    cluster.source.clear();
    for (auto& n : cluster.nodes)
        n.x = n.y = 0;
    for (auto& s : cluster.switches)
        s.x = s.y = 0;
    return cluster;
}

// What a plan depends on: the model and the cluster without canvas positions and names, the
// profile, and the figures of the cluster's device types. A
// plan names its nodes by id; a host name goes into an exported launcher (NODE_HOSTS), which
// is written with the names as they are when it is exported.
std::string basisOf(ModelSpec model, Cluster cluster, const std::optional<Profile>& profile, const DeviceCatalog& catalog)
{
    // The figures of the project's own types the cluster uses: a type it does not use, and a
    // type's notes, sources and aliases (the nodes' names for it are in the cluster), change no
    // plan.
    const auto figures = [](DeviceType t) {
        t.notes.clear();
        t.sources.clear();
        t.aliases.clear();
        return DeviceCatalog({t}).toJson();
    };
    std::string types;
    for (const DeviceType& t : typesBeyondBuiltin(cluster, catalog))
        if (const DeviceType* b = DeviceCatalog::builtin().find(t.name); !b || figures(*b) != figures(t))
            types += figures(t);
    model.name.clear();
    model.description.clear();
    model.source.clear();
    cluster = withoutDrawing(std::move(cluster));
    for (auto& n : cluster.nodes)
        n.host.clear();
    for (auto& s : cluster.switches)
        s.name.clear();
    // The profile's tables change every time; its name and source do not.
    std::string tables;
    if (profile) {
        Profile p = *profile;
        p.name.clear();
        p.source.clear();
        tables = writeProfile(p);
    }
    return writeModel(model) + writeCluster(cluster) + tables + types;
}

// As `hapmoe estimate --profile` checks a profile: refused when invalid or beyond what a
// device or network gives, warned about entries no estimate uses and about what looks
// implausible for the model it costs (cost/ProfileCheck.h).
void checkProfile(const Profile& profile, const ModelSpec& model, const DeviceCatalog& catalog, const std::string& fileName,
                  Warnings* warnings)
{
    validateProfile(profile, catalog, fileName);
    if (!warnings)
        return;
    for (auto& w : profileWarnings(profile, catalog, fileName))
        warnings->push_back(std::move(w));
    for (auto& w : profilePlausibilityWarnings(profile, model, catalog, fileName))
        warnings->push_back(std::move(w));
}

} // namespace

ProjectDocument::ProjectDocument(QObject* parent)
    : QObject(parent), m_catalog(DeviceCatalog::builtin()), m_undoStack(new QUndoStack(this))
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this, [this] { emit modifiedChanged(isModified()); });
    connect(this, &ProjectDocument::clusterChanged, this, &ProjectDocument::followPresetName);
}

void ProjectDocument::followPresetName()
{
    // A preset's name stays only while the cluster is that preset: an edit makes it "32-3
    // (edited)" (in launchers' headers and the presets list, which then shows none), an undo
    // back to the preset gives the name back.
    std::string& name = m_project.cluster.name;
    const bool edited = name.size() > kEdited.size() && name.ends_with(kEdited);
    const std::string base = edited ? name.substr(0, name.size() - kEdited.size()) : name;
    const Cluster* preset = base.empty() ? nullptr : findClusterPreset(base);
    if (!preset)
        return;
    // As written to a file, the drawing aside (host and switch names count: they reach the
    // launchers).
    const bool same = writeCluster(withoutDrawing(*preset)) == writeCluster(withoutDrawing(m_project.cluster));
    if (same == !edited)
        return;
    name = same ? base : base + std::string(kEdited);
    emit clusterNameChanged();
}

ProjectDocument::~ProjectDocument() = default;

QString ProjectDocument::displayName() const
{
    if (!m_fileName.isEmpty())
        return QFileInfo(m_fileName).fileName();
    if (!m_project.name.empty())
        return QString::fromStdString(m_project.name);
    return tr("Untitled");
}

bool ProjectDocument::isModified() const { return m_extraModified || !m_undoStack->isClean(); }

void ProjectDocument::resetProject(const Project& project, const QString& fileName, bool markModified)
{
    const bool wasModified = isModified();
    // The file's types were checked by readProject; a project built in code brings none or
    // checked ones. Nothing changes when they are refused.
    DeviceCatalog catalog = catalogWith(project.devices);
    m_project = project;
    m_catalog = std::move(catalog);
    m_plansBasis = basisOf(project.model, project.cluster, project.profile, m_catalog);
    m_undoStack->clear();
    m_extraModified = markModified;
    setFileName(fileName);
    emit projectReset();
    emit clusterReset();
    emit clusterChanged();
    emit modelChanged();
    emit searchSettingsChanged();
    emit profileChanged();
    emit devicesChanged();
    emit savedPlansChanged();
    if (wasModified != isModified())
        emit modifiedChanged(isModified());
}

void ProjectDocument::load(const QString& fileName)
{
    const std::string path = fileName.toStdString();
    const std::string text = readTextFile(path);
    Warnings warnings;
    Project project = readProject(text, path, &warnings);
    checkProjectProfile(project, catalogWith(project.devices, path), path, &warnings);
    resetProject(project, fileName);
}

void ProjectDocument::save(const QString& fileName)
{
    saveFileAtomically(fileName.toStdString(), serialize());
    setFileName(fileName);
    const bool wasModified = isModified();
    m_extraModified = false;
    m_undoStack->setClean();
    if (wasModified)
        emit modifiedChanged(false);
}

std::string ProjectDocument::serialize() const
{
    if (m_project.plans.empty() || savedPlansCurrent())
        return writeProject(m_project);
    Project p = m_project;
    p.plans.clear();
    p.plans_cancelled = p.plans_timed_out = false;
    return writeProject(p);
}

bool ProjectDocument::savedPlansCurrent() const
{
    return m_plansBasis == basisOf(m_project.model, m_project.cluster, m_project.profile, m_catalog);
}

Profile ProjectDocument::readProfileFile(const QString& fileName, const ModelSpec& model, const DeviceCatalog& catalog,
                                         Warnings* warnings)
{
    const std::string path = fileName.toStdString();
    Profile profile = readProfile(readTextFile(path), path, warnings);
    checkProfile(profile, model, catalog, path, warnings);
    return profile;
}

void ProjectDocument::checkProjectProfile(const Project& project, const DeviceCatalog& catalog, const std::string& fileName,
                                          Warnings* warnings)
{
    if (project.profile)
        checkProfile(*project.profile, project.model, catalog, fileName, warnings);
}

Warnings ProjectDocument::dropUnfitPlans(Project& project, const DeviceCatalog& catalog, const std::string& fileName)
{
    Warnings dropped;
    std::vector<SavedPlan> kept;
    for (size_t i = 0; i < project.plans.size(); ++i) {
        try {
            validateProjectPlan(project, i, catalog, fileName);
            kept.push_back(project.plans[i]);
        } catch (const InputError& e) {
            // A fault of the project's own model or cluster (validateProjectPlan leaves their
            // paths as they are) is mended there before any search can run.
            const bool planOwn = e.where().rfind("plans[", 0) == 0;
            if (!planOwn) {
                // Every saved plan would say the same: one message, and none of them kept.
                dropped.push_back(fileName + ": " + e.where() + ": " + e.detail()
                                  + "; the saved plans are not shown (mend it, see Problems, and run the search again)");
                kept.clear();
                break;
            }
            dropped.push_back(fileName + ": " + e.where() + ": " + e.detail() + "; the plan is not shown (run the search again)");
        } catch (const std::exception& e) {
            dropped.push_back(fileName + ": plans[" + std::to_string(i) + "]: " + e.what()
                              + "; the plan is not shown (run the search again)");
        }
    }
    project.plans = std::move(kept);
    return dropped;
}

void ProjectDocument::setFileName(const QString& fileName)
{
    if (m_fileName == fileName)
        return;
    m_fileName = fileName;
    emit fileNameChanged(fileName);
}

int ProjectDocument::nextId(int reserved) const
{
    int id = 0;
    for (const auto& n : m_project.cluster.nodes)
        id = std::max(id, n.id + 1);
    for (const auto& s : m_project.cluster.switches)
        id = std::max(id, s.id + 1);
    return std::max(id, reserved);
}

Link ProjectDocument::defaultLink(int a, int b) const
{
    // Per-node NIC capacity: nics x nic_gbit / 8, with the Node defaults (one NIC per device
    // at the catalog's inter-node figure) spelled out in hardware/Cluster.h.
    auto nodeBandwidth = [this](const Node& n) {
        const DeviceType* type = catalog().find(n.device_type);
        const double perNic = n.nic_gbit > 0 ? n.nic_gbit / 8.0 : (type ? type->inter_node_gbps : 25.0);
        const int nics = n.nics > 0 ? n.nics : n.count;
        return perNic * nics;
    };
    const Node* na = m_project.cluster.node(a);
    const Node* nb = m_project.cluster.node(b);
    double bandwidth = 400;   // switch to switch: a 8 x 400 Gb/s uplink bundle
    if (na && nb)
        bandwidth = std::min(nodeBandwidth(*na), nodeBandwidth(*nb));
    else if (na)
        bandwidth = nodeBandwidth(*na);
    else if (nb)
        bandwidth = nodeBandwidth(*nb);
    Link link;
    link.a = a;
    link.b = b;
    link.bandwidth_gbytes_per_s = bandwidth;
    link.latency_us = 5;
    return link;
}

const Link* ProjectDocument::findLink(int a, int b) const
{
    for (const auto& l : m_project.cluster.links)
        if (sameLink(l, a, b))
            return &l;
    return nullptr;
}

ClusterItems ProjectDocument::itemsFor(const QSet<int>& ids) const
{
    ClusterItems items;
    for (const auto& n : m_project.cluster.nodes)
        if (ids.contains(n.id))
            items.nodes.push_back(n);
    for (const auto& s : m_project.cluster.switches)
        if (ids.contains(s.id))
            items.switches.push_back(s);
    for (const auto& l : m_project.cluster.links)
        if (ids.contains(l.a) && ids.contains(l.b))
            items.links.push_back(l);
    return items;
}

// ---------------------------------------------------------------- edits

namespace {

// "node<id>", or the next "node<k>" no node of the cluster (nor `taken`) is called: a loaded
// file may already name another node so, and a host name must stay unique (validateCluster).
std::string freeHostName(const Cluster& cluster, int id, const std::set<std::string>& taken = {})
{
    std::set<std::string> used(taken);
    for (const Node& n : cluster.nodes)
        used.insert(n.host);
    for (int k = id;; ++k)
        if (std::string name = "node" + std::to_string(k); !used.count(name))
            return name;
}

} // namespace

int ProjectDocument::addNode(const QString& deviceType, int count, QPointF pos, int linkTo)
{
    Node node;
    node.id = nextId();
    node.device_type = deviceType.toStdString();
    node.count = std::max(1, count);
    node.host = freeHostName(m_project.cluster, node.id);
    node.x = pos.x();
    node.y = pos.y();

    ClusterItems items;
    items.nodes.push_back(node);
    if (linkTo >= 0 && (m_project.cluster.node(linkTo) || m_project.cluster.switchById(linkTo))) {
        // The default bandwidth depends on the new node, which is not in the cluster yet.
        Cluster probe = m_project.cluster;
        probe.nodes.push_back(node);
        std::swap(probe, m_project.cluster);
        Link link = defaultLink(node.id, linkTo);
        std::swap(probe, m_project.cluster);
        items.links.push_back(link);
    }
    const QString text = items.links.empty()
        ? tr("Add %1 x %2").arg(node.count).arg(deviceType)
        : tr("Add %1 x %2 and its link").arg(node.count).arg(deviceType);
    m_undoStack->push(new AddItemsCommand(this, std::move(items), text));
    return node.id;
}

int ProjectDocument::addSwitch(QPointF pos)
{
    Switch sw;
    sw.id = nextId();
    sw.name = "switch" + std::to_string(sw.id);
    sw.x = pos.x();
    sw.y = pos.y();
    ClusterItems items;
    items.switches.push_back(sw);
    m_undoStack->push(new AddItemsCommand(this, std::move(items), tr("Add switch")));
    return sw.id;
}

bool ProjectDocument::connectItems(int a, int b)
{
    const auto& c = m_project.cluster;
    if (a == b || findLink(a, b))
        return false;
    if (!(c.node(a) || c.switchById(a)) || !(c.node(b) || c.switchById(b)))
        return false;
    ClusterItems items;
    items.links.push_back(defaultLink(a, b));
    m_undoStack->push(new AddItemsCommand(this, std::move(items), tr("Connect")));
    return true;
}

void ProjectDocument::removeItems(const QSet<int>& ids, const QList<QPair<int, int>>& links)
{
    ClusterItems items;
    for (const auto& n : m_project.cluster.nodes)
        if (ids.contains(n.id))
            items.nodes.push_back(n);
    for (const auto& s : m_project.cluster.switches)
        if (ids.contains(s.id))
            items.switches.push_back(s);
    for (const auto& l : m_project.cluster.links) {
        bool explicitLink = std::any_of(links.begin(), links.end(),
                                        [&](const QPair<int, int>& p) { return sameLink(l, p.first, p.second); });
        if (explicitLink || ids.contains(l.a) || ids.contains(l.b))
            items.links.push_back(l);
    }
    if (items.empty())
        return;
    const int count = int(items.nodes.size() + items.switches.size() + items.links.size());
    m_undoStack->push(new RemoveItemsCommand(this, std::move(items), tr("Delete %n item(s)", nullptr, count)));
}

void ProjectDocument::moveItems(const QHash<int, QPointF>& positions, MoveKind kind)
{
    QHash<int, QPointF> from, to;
    for (auto it = positions.cbegin(); it != positions.cend(); ++it) {
        QPointF old;
        if (const Node* n = m_project.cluster.node(it.key()))
            old = QPointF(n->x, n->y);
        else if (const Switch* s = m_project.cluster.switchById(it.key()))
            old = QPointF(s->x, s->y);
        else
            continue;
        if (old == it.value())
            continue;
        from.insert(it.key(), old);
        to.insert(it.key(), it.value());
    }
    if (!to.isEmpty())
        m_undoStack->push(new MoveItemsCommand(this, from, to, kind == MoveKind::Nudge));
}

QList<int> ProjectDocument::pasteItems(const ClusterItems& source, QPointF offset)
{
    ClusterItems items;
    QHash<int, int> newIds;
    int next = nextId();
    QList<int> created;
    std::set<std::string> pastedHosts;
    for (Node n : source.nodes) {
        newIds.insert(n.id, next);
        n.id = next++;
        n.host = freeHostName(m_project.cluster, n.id, pastedHosts);
        pastedHosts.insert(n.host);
        n.x += offset.x();
        n.y += offset.y();
        created.append(n.id);
        items.nodes.push_back(n);
    }
    for (Switch s : source.switches) {
        newIds.insert(s.id, next);
        s.id = next++;
        s.name = "switch" + std::to_string(s.id);
        s.x += offset.x();
        s.y += offset.y();
        created.append(s.id);
        items.switches.push_back(s);
    }
    for (Link l : source.links) {
        if (!newIds.contains(l.a) || !newIds.contains(l.b))
            continue;
        l.a = newIds.value(l.a);
        l.b = newIds.value(l.b);
        items.links.push_back(l);
    }
    if (!items.empty())
        m_undoStack->push(new AddItemsCommand(this, std::move(items), tr("Paste")));
    return created;
}

void ProjectDocument::setNode(const Node& node)
{
    const Node* old = m_project.cluster.node(node.id);
    if (!old)
        return;
    m_undoStack->push(new ChangeNodeCommand(this, *old, node));
}

void ProjectDocument::setSwitch(const Switch& sw)
{
    const Switch* old = m_project.cluster.switchById(sw.id);
    if (!old)
        return;
    m_undoStack->push(new ChangeSwitchCommand(this, *old, sw));
}

void ProjectDocument::setLink(const Link& link)
{
    const Link* old = findLink(link.a, link.b);
    if (!old)
        return;
    m_undoStack->push(new ChangeLinkCommand(this, *old, link));
}

void ProjectDocument::setBridge(const CrossVendorBridge& bridge)
{
    const CrossVendorBridge& old = m_project.cluster.cross_vendor;
    if (bridge.method == old.method && bridge.bandwidth_gbytes_per_s == old.bandwidth_gbytes_per_s
        && bridge.latency_us == old.latency_us)
        return;
    m_undoStack->push(new ChangeBridgeCommand(this, old, bridge));
}

void ProjectDocument::setCluster(const Cluster& cluster, const QString& text)
{
    m_undoStack->push(new ReplaceClusterCommand(this, m_project.cluster, cluster, text));
}

void ProjectDocument::setDevices(const std::vector<DeviceType>& devices, const Cluster& cluster, const QString& text)
{
    catalogWith(devices);   // throws before anything changes
    m_undoStack->push(new ChangeDevicesCommand(this, m_project.devices, m_project.cluster, devices, cluster, text));
}

void ProjectDocument::setModel(const ModelSpec& model, const QString& text, const QString& field)
{
    // An edit keeps the script the model came from, and what it was read with.
    m_undoStack->push(new ChangeModelCommand(this, model, m_project.current_script, m_project.current_script_inputs, text, field));
}

void ProjectDocument::setModelFromScript(const ModelSpec& model, const QString& scriptPath, const ScriptInputs& inputs)
{
    m_undoStack->push(new ChangeModelCommand(this, model, scriptPath.toStdString(), inputs,
                                             tr("Import %1").arg(QFileInfo(scriptPath).fileName()), {}));
}

void ProjectDocument::setSearchSettings(const SearchSettings& settings)
{
    m_undoStack->push(new ChangeSearchSettingsCommand(this, settings));
}

void ProjectDocument::setProfile(const Profile& profile, const QString& file)
{
    m_undoStack->push(new ChangeProfileCommand(this, profile, file.toStdString()));
}

void ProjectDocument::clearProfile()
{
    if (m_project.profile)
        m_undoStack->push(new ChangeProfileCommand(this, std::nullopt, std::string()));
}

void ProjectDocument::setSavedPlans(const std::vector<SavedPlan>& plans, const ModelSpec& model, const Cluster& cluster,
                                    const std::optional<Profile>& profile, const DeviceCatalog& catalog, bool cancelled,
                                    bool timedOut)
{
    if (plans.empty() && m_project.plans.empty())
        return;
    m_project.plans = plans;
    const bool anySearched = std::any_of(plans.begin(), plans.end(),
                                         [](const SavedPlan& sp) { return sp.source == SavedPlan::Source::Search; });
    m_project.plans_cancelled = anySearched && cancelled;
    m_project.plans_timed_out = anySearched && timedOut && !cancelled;
    m_plansBasis = basisOf(model, cluster, profile, catalog);
    const bool wasModified = isModified();
    m_extraModified = true;
    emit savedPlansChanged();
    if (!wasModified)
        emit modifiedChanged(true);
}

// ---------------------------------------------------------------- apply (commands)

Node* ProjectDocument::mutableNode(int id)
{
    for (auto& n : m_project.cluster.nodes)
        if (n.id == id)
            return &n;
    return nullptr;
}

Switch* ProjectDocument::mutableSwitch(int id)
{
    for (auto& s : m_project.cluster.switches)
        if (s.id == id)
            return &s;
    return nullptr;
}

Link* ProjectDocument::mutableLink(int a, int b)
{
    for (auto& l : m_project.cluster.links)
        if (sameLink(l, a, b))
            return &l;
    return nullptr;
}

void ProjectDocument::applyInsert(const ClusterItems& items)
{
    auto& c = m_project.cluster;
    for (const auto& n : items.nodes) {
        c.nodes.push_back(n);
        emit nodeAdded(n.id);
    }
    for (const auto& s : items.switches) {
        c.switches.push_back(s);
        emit switchAdded(s.id);
    }
    for (const auto& l : items.links) {
        c.links.push_back(l);
        emit linkAdded(l.a, l.b);
    }
    emit clusterChanged();
}

void ProjectDocument::applyErase(const ClusterItems& items)
{
    auto& c = m_project.cluster;
    // Links first, so that no view ever holds a link to a removed item.
    for (const auto& l : items.links) {
        auto it = std::find_if(c.links.begin(), c.links.end(), [&](const Link& x) { return sameLink(x, l.a, l.b); });
        if (it != c.links.end()) {
            c.links.erase(it);
            emit linkRemoved(l.a, l.b);
        }
    }
    for (const auto& n : items.nodes) {
        auto it = std::find_if(c.nodes.begin(), c.nodes.end(), [&](const Node& x) { return x.id == n.id; });
        if (it != c.nodes.end()) {
            c.nodes.erase(it);
            emit nodeRemoved(n.id);
        }
    }
    for (const auto& s : items.switches) {
        auto it = std::find_if(c.switches.begin(), c.switches.end(), [&](const Switch& x) { return x.id == s.id; });
        if (it != c.switches.end()) {
            c.switches.erase(it);
            emit switchRemoved(s.id);
        }
    }
    emit clusterChanged();
}

void ProjectDocument::applyPositions(const QHash<int, QPointF>& positions)
{
    for (auto it = positions.cbegin(); it != positions.cend(); ++it) {
        if (Node* n = mutableNode(it.key())) {
            n->x = it.value().x();
            n->y = it.value().y();
            emit nodeChanged(n->id);
        } else if (Switch* s = mutableSwitch(it.key())) {
            s->x = it.value().x();
            s->y = it.value().y();
            emit switchChanged(s->id);
        }
    }
}

void ProjectDocument::applyNode(const Node& node)
{
    if (Node* n = mutableNode(node.id)) {
        *n = node;
        emit nodeChanged(node.id);
        emit clusterChanged();
    }
}

void ProjectDocument::applySwitch(const Switch& sw)
{
    if (Switch* s = mutableSwitch(sw.id)) {
        *s = sw;
        emit switchChanged(sw.id);
        emit clusterChanged();
    }
}

void ProjectDocument::applyLink(const Link& link)
{
    if (Link* l = mutableLink(link.a, link.b)) {
        *l = link;
        emit linkChanged(link.a, link.b);
        emit clusterChanged();
    }
}

void ProjectDocument::applyBridge(const CrossVendorBridge& bridge)
{
    m_project.cluster.cross_vendor = bridge;
    emit clusterChanged();
}

void ProjectDocument::applyCluster(const Cluster& cluster)
{
    m_project.cluster = cluster;
    emit clusterReset();
    emit clusterChanged();
}

void ProjectDocument::applyDevices(const std::vector<DeviceType>& devices, const Cluster& cluster)
{
    m_catalog = catalogWith(devices);
    m_project.devices = devices;
    const bool clusterChangedToo = writeCluster(cluster) != writeCluster(m_project.cluster);
    m_project.cluster = cluster;
    emit devicesChanged();
    if (clusterChangedToo)
        emit clusterReset();
    emit clusterChanged();   // its problems, totals and badges read the types' figures
}

void ProjectDocument::applyModel(const ModelSpec& model, const std::string& scriptPath, const ScriptInputs& inputs)
{
    m_project.model = model;
    m_project.current_script = scriptPath;
    m_project.current_script_inputs = scriptPath.empty() ? ScriptInputs{} : inputs;
    emit modelChanged();
}

void ProjectDocument::applySearchSettings(const SearchSettings& settings)
{
    m_project.search = settings;
    emit searchSettingsChanged();
}

void ProjectDocument::applyProfile(const std::optional<Profile>& profile, const std::string& file)
{
    m_project.profile = profile;
    m_project.profile_file = profile ? file : std::string();
    emit profileChanged();
}

} // namespace hapmoe::ui
