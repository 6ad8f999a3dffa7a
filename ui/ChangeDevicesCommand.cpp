#include "ChangeDevicesCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeDevicesCommand::ChangeDevicesCommand(ProjectDocument* document, std::vector<DeviceType> devicesBefore,
                                           Cluster clusterBefore, std::vector<DeviceType> devicesAfter, Cluster clusterAfter,
                                           const QString& text)
    : QUndoCommand(text),
      m_document(document),
      m_devicesBefore(std::move(devicesBefore)),
      m_clusterBefore(std::move(clusterBefore)),
      m_devicesAfter(std::move(devicesAfter)),
      m_clusterAfter(std::move(clusterAfter))
{
}

void ChangeDevicesCommand::redo() { m_document->applyDevices(m_devicesAfter, m_clusterAfter); }
void ChangeDevicesCommand::undo() { m_document->applyDevices(m_devicesBefore, m_clusterBefore); }

} // namespace hapmoe::ui
