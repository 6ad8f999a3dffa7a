#include "ChangeNodeCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeNodeCommand::ChangeNodeCommand(ProjectDocument* document, Node before, Node after)
    : QUndoCommand(QObject::tr("Change node")), m_document(document), m_before(std::move(before)),
      m_after(std::move(after))
{
}

void ChangeNodeCommand::redo() { m_document->applyNode(m_after); }
void ChangeNodeCommand::undo() { m_document->applyNode(m_before); }

} // namespace hapmoe::ui
