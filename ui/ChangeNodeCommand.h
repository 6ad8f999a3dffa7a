#pragma once
// Changes the properties of one node (from the property editor).

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeNodeCommand : public QUndoCommand {
public:
    ChangeNodeCommand(ProjectDocument* document, Node before, Node after);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    Node m_before;
    Node m_after;
};

} // namespace hapmoe::ui
