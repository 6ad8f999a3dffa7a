#pragma once
// Replaces the whole cluster (loading a preset).

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ReplaceClusterCommand : public QUndoCommand {
public:
    ReplaceClusterCommand(ProjectDocument* document, Cluster before, Cluster after, const QString& text);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    Cluster m_before;
    Cluster m_after;
};

} // namespace hapmoe::ui
