#pragma once
// Changes the model and training spec. Consecutive edits of the same field merge, so that
// typing "4096" is one step and not four. The project's script and what it is read with
// (current_script, current_script_inputs) change with the model and come back together.

#include "megatron/ScriptInputs.h"
#include "model/ModelSpec.h"

#include <QString>
#include <QUndoCommand>

#include <string>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeModelCommand : public QUndoCommand {
public:
    ChangeModelCommand(ProjectDocument* document, ModelSpec after, std::string scriptAfter, ScriptInputs inputsAfter,
                       const QString& text, const QString& field);
    void redo() override;
    void undo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

private:
    ProjectDocument* m_document;
    ModelSpec m_before, m_after;
    std::string m_scriptBefore, m_scriptAfter;
    ScriptInputs m_inputsBefore, m_inputsAfter;
    QString m_field;   // empty: never merges
};

} // namespace hapmoe::ui
