#pragma once
// The QObject document of one project: owns the core Project (plain value types) and the
// QUndoStack. Every edit goes through a method here that pushes an undo command; the
// commands call the apply*() functions, which change the project and emit the signals
// the views listen to. "Modified" comes from the stack's clean state.

#include "ClusterItems.h"

#include "io/Documents.h"

#include <QHash>
#include <QObject>
#include <QPointF>
#include <QSet>
#include <QString>

#include <optional>

class QUndoStack;

namespace hapmoe::ui {

class ProjectDocument : public QObject {
    Q_OBJECT
public:
    explicit ProjectDocument(QObject* parent = nullptr);
    ~ProjectDocument() override;

    const Project& project() const { return m_project; }
    const Cluster& cluster() const { return m_project.cluster; }
    const ModelSpec& model() const { return m_project.model; }
    const SearchSettings& searchSettings() const { return m_project.search; }
    // The measured profile the searches and the explorer's estimates use; none: analytic defaults.
    const std::optional<Profile>& profile() const { return m_project.profile; }
    // The built-in device catalog with the project's own types over it (Project::devices):
    // what the canvas, the searches and the estimates read. The same object for the
    // document's life; its contents change with the project's types.
    const DeviceCatalog& catalog() const { return m_catalog; }
    QUndoStack* undoStack() const { return m_undoStack; }

    // File state. fileName() is empty for a project never saved.
    QString fileName() const { return m_fileName; }
    QString displayName() const;
    bool isModified() const;

    // Replaces the whole project (new, open, recovery); clears the undo stack.
    // markModified: the project differs from fileName's content (a recovered autosave).
    void resetProject(const Project& project, const QString& fileName, bool markModified = false);
    // Reads a project file. Throws InputError naming the file and the field.
    void load(const QString& fileName);
    // Writes atomically and marks the stack clean. Throws std::runtime_error.
    void save(const QString& fileName);
    std::string serialize() const;

    // ---- Edits (each pushes one undo command) ----
    // Adds a node of `count` devices of `deviceType` at `pos`; when linkTo names a node or
    // switch, the link to it is part of the same undo step. Returns the new node id.
    int addNode(const QString& deviceType, int count, QPointF pos, int linkTo = -1);
    int addSwitch(QPointF pos);
    // Links two items with the default bandwidth and latency for the pair. Returns false
    // when they are the same item or already linked.
    bool connectItems(int a, int b);
    // Removes the items and every link touching a removed node or switch, plus the links
    // given explicitly (as (a, b) pairs).
    void removeItems(const QSet<int>& ids, const QList<QPair<int, int>>& links);
    // New canvas positions, one undo step. Nudges (arrow keys) of the same items in a row
    // merge into one step; a drag is a step of its own, even right after another.
    enum class MoveKind { Drag, Nudge };
    void moveItems(const QHash<int, QPointF>& positions, MoveKind kind = MoveKind::Drag);
    // Copies of items with fresh ids, shifted by offset; returns the new ids.
    QList<int> pasteItems(const ClusterItems& items, QPointF offset);
    void setNode(const Node& node);
    void setSwitch(const Switch& sw);
    void setLink(const Link& link);
    // The bridge between collective libraries (Cluster::cross_vendor); it changes predictions,
    // so plans searched before it are outdated.
    void setBridge(const CrossVendorBridge& bridge);
    void setCluster(const Cluster& cluster, const QString& text);
    void setModel(const ModelSpec& model, const QString& text, const QString& field = {});
    // The model read from a launch script, the script's path and what it was read with (its
    // arguments and environment) in one undo step.
    void setModelFromScript(const ModelSpec& model, const QString& scriptPath, const ScriptInputs& inputs = {});
    void setSearchSettings(const SearchSettings& settings);
    // The project's own device types, and the cluster with its nodes' types renamed along
    // (the device type editor), in one undo step. Plans searched on other figures of a type
    // the cluster uses are outdated. Throws InputError (nothing changed) when an alias names
    // another type.
    void setDevices(const std::vector<DeviceType>& devices, const Cluster& cluster, const QString& text);
    // Loads a profile (one undo step): the project keeps its tables, `file` says where they came
    // from. Plans searched with another profile (or none) are outdated, as after a model edit.
    void setProfile(const Profile& profile, const QString& file);
    void clearProfile();
    // Reads a hapmoe.profile file and checks it as `hapmoe estimate` does; `warnings` gets the
    // unknown keys, the entries for device types the catalog does not know and what looks
    // implausible for `model` (cost/ProfileCheck.h). Throws InputError naming the file, the
    // field and what was expected.
    static Profile readProfileFile(const QString& fileName, const ModelSpec& model, const DeviceCatalog& catalog,
                                   Warnings* warnings);
    // A project's profile checked as a profile file is (validateProfile); its unused entries,
    // and what looks implausible for the project's model, go to `warnings`. Throws InputError naming the file and "profile....".
    static void checkProjectProfile(const Project& project, const DeviceCatalog& catalog, const std::string& fileName,
                                    Warnings* warnings = nullptr);
    // Plans kept with the project (the latest search result) and the model, cluster and profile
    // the search ran on; not an undoable edit, but it makes the project modified. `cancelled`
    // and `timedOut` say that the search stopped early and its plans are the best so far.
    void setSavedPlans(const std::vector<SavedPlan>& plans, const ModelSpec& model, const Cluster& cluster,
                       const std::optional<Profile>& profile, const DeviceCatalog& catalog, bool cancelled = false,
                       bool timedOut = false);
    // Whether the saved plans describe the model, cluster, profile and device types as they are now (canvas
    // positions and names aside). The file keeps the plans only while they do: a plan of
    // another cluster could name nodes that no longer exist, and its times would be wrong.
    bool savedPlansCurrent() const;
    // Removes the plans that do not fit the project's model and cluster (validatePlanDocument,
    // as `hapmoe validate` checks a project); returns one line per plan removed, naming the
    // file, the plan's JSON path and the reason.
    static Warnings dropUnfitPlans(Project& project, const DeviceCatalog& catalog, const std::string& fileName);

    // Default link figures between two items: the catalog's inter-node bandwidth of the
    // node side (per device, times the node's devices), 5 us latency.
    Link defaultLink(int a, int b) const;
    // The link between a and b (either order), or null.
    const Link* findLink(int a, int b) const;
    ClusterItems itemsFor(const QSet<int>& ids) const;   // the items and the links among them

    // ---- Called by the undo commands only ----
    void applyInsert(const ClusterItems& items);
    void applyErase(const ClusterItems& items);
    void applyPositions(const QHash<int, QPointF>& positions);
    void applyNode(const Node& node);
    void applySwitch(const Switch& sw);
    void applyLink(const Link& link);
    void applyBridge(const CrossVendorBridge& bridge);
    void applyCluster(const Cluster& cluster);
    void applyModel(const ModelSpec& model, const std::string& scriptPath, const ScriptInputs& inputs);
    void applySearchSettings(const SearchSettings& settings);
    void applyProfile(const std::optional<Profile>& profile, const std::string& file);
    void applyDevices(const std::vector<DeviceType>& devices, const Cluster& cluster);

signals:
    void nodeAdded(int id);
    void nodeRemoved(int id);
    void nodeChanged(int id);
    void switchAdded(int id);
    void switchRemoved(int id);
    void switchChanged(int id);
    void linkAdded(int a, int b);
    void linkRemoved(int a, int b);
    void linkChanged(int a, int b);
    void clusterReset();
    // The cluster's name changed with an edit (a preset's, "32-3 (edited)"; followPresetName).
    void clusterNameChanged();
    // After any change of the cluster (for problems, totals and badges).
    void clusterChanged();
    void modelChanged();
    void searchSettingsChanged();
    void profileChanged();
    // The project's device types changed (catalog() holds the new figures).
    void devicesChanged();
    void savedPlansChanged();
    void projectReset();
    void fileNameChanged(const QString& fileName);
    void modifiedChanged(bool modified);

private:
    void followPresetName();
    void setFileName(const QString& fileName);
    Node* mutableNode(int id);
    Switch* mutableSwitch(int id);
    Link* mutableLink(int a, int b);
    int nextId(int reserved = 0) const;

    Project m_project;
    DeviceCatalog m_catalog;
    QUndoStack* m_undoStack;
    QString m_fileName;
    bool m_extraModified = false;   // changes outside the stack (saved plans, recovery)
    std::string m_plansBasis;       // basisOf() the model, cluster and profile the saved plans are for
};

} // namespace hapmoe::ui
