#include "ChangeSearchSettingsCommand.h"

#include "ProjectDocument.h"
#include "UndoCommandIds.h"

namespace hapmoe::ui {

ChangeSearchSettingsCommand::ChangeSearchSettingsCommand(ProjectDocument* document, SearchSettings after)
    : QUndoCommand(QObject::tr("Change search settings")), m_document(document),
      m_before(document->searchSettings()), m_after(after)
{
}

void ChangeSearchSettingsCommand::redo() { m_document->applySearchSettings(m_after); }
void ChangeSearchSettingsCommand::undo() { m_document->applySearchSettings(m_before); }
int ChangeSearchSettingsCommand::id() const { return ChangeSearchSettingsCommandId; }

bool ChangeSearchSettingsCommand::mergeWith(const QUndoCommand* other)
{
    m_after = static_cast<const ChangeSearchSettingsCommand*>(other)->m_after;
    return true;
}

} // namespace hapmoe::ui
