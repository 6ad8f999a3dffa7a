#include "RemoveItemsCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

RemoveItemsCommand::RemoveItemsCommand(ProjectDocument* document, ClusterItems items, const QString& text)
    : QUndoCommand(text), m_document(document), m_items(std::move(items)), m_before(document->cluster())
{
}

void RemoveItemsCommand::redo() { m_document->applyErase(m_items); }
void RemoveItemsCommand::undo() { m_document->applyCluster(m_before); }

} // namespace hapmoe::ui
