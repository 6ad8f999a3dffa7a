#include "ChangeSwitchCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeSwitchCommand::ChangeSwitchCommand(ProjectDocument* document, Switch before, Switch after)
    : QUndoCommand(QObject::tr("Change switch")), m_document(document), m_before(std::move(before)),
      m_after(std::move(after))
{
}

void ChangeSwitchCommand::redo() { m_document->applySwitch(m_after); }
void ChangeSwitchCommand::undo() { m_document->applySwitch(m_before); }

} // namespace hapmoe::ui
