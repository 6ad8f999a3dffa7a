#pragma once
// Changes the search settings; consecutive changes merge into one step.

#include "io/Documents.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeSearchSettingsCommand : public QUndoCommand {
public:
    ChangeSearchSettingsCommand(ProjectDocument* document, SearchSettings after);
    void redo() override;
    void undo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

private:
    ProjectDocument* m_document;
    SearchSettings m_before, m_after;
};

} // namespace hapmoe::ui
