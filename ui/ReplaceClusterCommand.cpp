#include "ReplaceClusterCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ReplaceClusterCommand::ReplaceClusterCommand(ProjectDocument* document, Cluster before, Cluster after,
                                             const QString& text)
    : QUndoCommand(text), m_document(document), m_before(std::move(before)), m_after(std::move(after))
{
}

void ReplaceClusterCommand::redo() { m_document->applyCluster(m_after); }
void ReplaceClusterCommand::undo() { m_document->applyCluster(m_before); }

} // namespace hapmoe::ui
