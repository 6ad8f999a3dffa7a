#include "ChangeLinkCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeLinkCommand::ChangeLinkCommand(ProjectDocument* document, Link before, Link after)
    : QUndoCommand(QObject::tr("Change link")), m_document(document), m_before(std::move(before)),
      m_after(std::move(after))
{
}

void ChangeLinkCommand::redo() { m_document->applyLink(m_after); }
void ChangeLinkCommand::undo() { m_document->applyLink(m_before); }

} // namespace hapmoe::ui
