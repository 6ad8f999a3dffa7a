#pragma once
// Changes the cluster's cross-vendor bridge (from the property editor's cluster page).

#include "hardware/Cluster.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeBridgeCommand : public QUndoCommand {
public:
    ChangeBridgeCommand(ProjectDocument* document, CrossVendorBridge before, CrossVendorBridge after);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    CrossVendorBridge m_before;
    CrossVendorBridge m_after;
};

} // namespace hapmoe::ui
