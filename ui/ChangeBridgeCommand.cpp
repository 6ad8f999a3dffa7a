#include "ChangeBridgeCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeBridgeCommand::ChangeBridgeCommand(ProjectDocument* document, CrossVendorBridge before, CrossVendorBridge after)
    : QUndoCommand(QObject::tr("Change cross-vendor bridge")), m_document(document), m_before(std::move(before)),
      m_after(std::move(after))
{
}

void ChangeBridgeCommand::redo() { m_document->applyBridge(m_after); }
void ChangeBridgeCommand::undo() { m_document->applyBridge(m_before); }

} // namespace hapmoe::ui
