#include "ChangeModelCommand.h"

#include "ProjectDocument.h"
#include "UndoCommandIds.h"

namespace hapmoe::ui {

ChangeModelCommand::ChangeModelCommand(ProjectDocument* document, ModelSpec after, std::string scriptAfter,
                                       ScriptInputs inputsAfter, const QString& text, const QString& field)
    : QUndoCommand(text), m_document(document), m_before(document->model()), m_after(std::move(after)),
      m_scriptBefore(document->project().current_script), m_scriptAfter(std::move(scriptAfter)),
      m_inputsBefore(document->project().current_script_inputs), m_inputsAfter(std::move(inputsAfter)),
      m_field(field)
{
}

void ChangeModelCommand::redo() { m_document->applyModel(m_after, m_scriptAfter, m_inputsAfter); }
void ChangeModelCommand::undo() { m_document->applyModel(m_before, m_scriptBefore, m_inputsBefore); }
int ChangeModelCommand::id() const { return ChangeModelCommandId; }

bool ChangeModelCommand::mergeWith(const QUndoCommand* other)
{
    const auto* change = static_cast<const ChangeModelCommand*>(other);
    if (m_field.isEmpty() || change->m_field != m_field)
        return false;
    m_after = change->m_after;
    m_scriptAfter = change->m_scriptAfter;
    m_inputsAfter = change->m_inputsAfter;
    return true;
}

} // namespace hapmoe::ui
