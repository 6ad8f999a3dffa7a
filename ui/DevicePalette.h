#pragma once
// The palette of device types from the catalog: icon, name, peak TFLOP/s and memory.
// Dragging an entry publishes the type name as application/x-hapmoe-device.

#include <QListWidget>

namespace hapmoe {
class DeviceCatalog;
}

namespace hapmoe::ui {

class DevicePalette : public QListWidget {
    Q_OBJECT
public:
    explicit DevicePalette(QWidget* parent = nullptr);

    // Lists the catalog's types (the project's own among the built-in ones), keeping the
    // current entry when its type is still there.
    void setCatalog(const DeviceCatalog& catalog);

    int rowOf(const QString& deviceType) const;
    // The MIME data a drag of this row carries (what a drop handler receives).
    QMimeData* mimeDataForRow(int row) const;

protected:
    // A palette lends copies: the drag offers only CopyAction, so that a drop a platform
    // turns into a move (Shift held) never takes the entry out of the list.
    void startDrag(Qt::DropActions supportedActions) override;
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QList<QListWidgetItem*>& items) const override;
};

} // namespace hapmoe::ui
