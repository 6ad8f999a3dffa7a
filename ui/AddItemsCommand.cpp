#include "AddItemsCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

AddItemsCommand::AddItemsCommand(ProjectDocument* document, ClusterItems items, const QString& text,
                                 QUndoCommand* parent)
    : QUndoCommand(text, parent), m_document(document), m_items(std::move(items))
{
}

void AddItemsCommand::redo() { m_document->applyInsert(m_items); }
void AddItemsCommand::undo() { m_document->applyErase(m_items); }

} // namespace hapmoe::ui
