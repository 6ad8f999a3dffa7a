#pragma once
// Changes the properties of one link (from the property editor).

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeLinkCommand : public QUndoCommand {
public:
    ChangeLinkCommand(ProjectDocument* document, Link before, Link after);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    Link m_before;
    Link m_after;
};

} // namespace hapmoe::ui
