#pragma once
// Changes the properties of one switch (from the property editor).

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeSwitchCommand : public QUndoCommand {
public:
    ChangeSwitchCommand(ProjectDocument* document, Switch before, Switch after);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    Switch m_before;
    Switch m_after;
};

} // namespace hapmoe::ui
