#pragma once
// Changes the project's own device types, and the cluster whose nodes follow a renamed type,
// in one undo step (the device type editor).

#include "hardware/Cluster.h"
#include "hardware/DeviceType.h"

#include <QUndoCommand>

#include <vector>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeDevicesCommand : public QUndoCommand {
public:
    ChangeDevicesCommand(ProjectDocument* document, std::vector<DeviceType> devicesBefore, Cluster clusterBefore,
                         std::vector<DeviceType> devicesAfter, Cluster clusterAfter, const QString& text);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    std::vector<DeviceType> m_devicesBefore;
    Cluster m_clusterBefore;
    std::vector<DeviceType> m_devicesAfter;
    Cluster m_clusterAfter;
};

} // namespace hapmoe::ui
