#pragma once
// Removes nodes, switches and links as one step. Undo restores the cluster as it was, so
// that the order of nodes (which decides ranks in a launcher) comes back unchanged.

#include "ClusterItems.h"

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class RemoveItemsCommand : public QUndoCommand {
public:
    RemoveItemsCommand(ProjectDocument* document, ClusterItems items, const QString& text);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    ClusterItems m_items;
    Cluster m_before;
};

} // namespace hapmoe::ui
