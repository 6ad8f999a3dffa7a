#include "DevicePalette.h"

#include <QDrag>

#include "ClusterView.h"
#include "Theme.h"

#include "hardware/DeviceCatalog.h"

#include <QMimeData>

namespace hapmoe::ui {

namespace {
constexpr int kTypeRole = Qt::UserRole + 1;
}

DevicePalette::DevicePalette(QWidget* parent) : QListWidget(parent)
{
    setDragEnabled(true);
    setDragDropMode(QAbstractItemView::DragOnly);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setIconSize(QSize(32, 32));
    setUniformItemSizes(true);
    setSpacing(1);
    setAlternatingRowColors(true);
    setCatalog(DeviceCatalog::builtin());
}

void DevicePalette::setCatalog(const DeviceCatalog& catalog)
{
    const QString current = currentItem() ? currentItem()->data(kTypeRole).toString() : QString();
    clear();
    for (const DeviceType& type : catalog.types()) {
        const QString name = QString::fromStdString(type.name);
        auto* item = new QListWidgetItem(deviceIcon(name),
                                         QStringLiteral("%1\n%2 TFLOP/s \u00b7 %3 GiB")
                                             .arg(name)
                                             .arg(type.bf16_tflops, 0, 'f', 0)
                                             .arg(type.memory_gib, 0, 'f', 0),
                                         this);
        item->setData(kTypeRole, name);
        const DeviceType* builtin = DeviceCatalog::builtin().find(type.name);
        const bool own = !builtin || DeviceCatalog({*builtin}).toJson() != DeviceCatalog({type}).toJson();
        item->setToolTip((own ? tr("This project's figures (Cluster > Device Types).\n") : QString())
                         + tr("%1 %2\nBF16 dense peak %3 TFLOP/s (%9), %4 GiB at %5 GB/s\n%6 intra-node %7 GB/s per device, "
                            "%8\nDrag onto the canvas to add a node (Shift: ask for the device count).")
                             .arg(QString::fromStdString(type.vendor), name)
                             .arg(type.bf16_tflops)
                             .arg(type.memory_gib)
                             .arg(type.hbm_gbps)
                             .arg(QString::fromStdString(type.intra_link_kind))
                             .arg(type.intra_node_gbps)
                             .arg(QString::fromStdString(type.collective_library))
                             .arg(type.hasFp8() ? tr("FP8 %1 TFLOP/s").arg(type.fp8_tflops) : tr("no FP8")));
    }
    if (const int row = rowOf(current); row >= 0)
        setCurrentRow(row);
}

int DevicePalette::rowOf(const QString& deviceType) const
{
    for (int r = 0; r < count(); ++r)
        if (item(r)->data(kTypeRole).toString().compare(deviceType, Qt::CaseInsensitive) == 0)
            return r;
    return -1;
}

QStringList DevicePalette::mimeTypes() const { return {QString::fromLatin1(ClusterView::kDeviceMimeType)}; }

QMimeData* DevicePalette::mimeData(const QList<QListWidgetItem*>& items) const
{
    if (items.isEmpty())
        return nullptr;
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(ClusterView::kDeviceMimeType), items.first()->data(kTypeRole).toString().toUtf8());
    mime->setText(items.first()->data(kTypeRole).toString());
    return mime;
}

QMimeData* DevicePalette::mimeDataForRow(int row) const
{
    QListWidgetItem* it = item(row);
    return it ? mimeData({it}) : nullptr;
}

void DevicePalette::startDrag(Qt::DropActions)
{
    QListWidgetItem* item = currentItem();
    if (!item)
        return;
    auto* drag = new QDrag(this);
    drag->setMimeData(mimeData({item}));
    drag->setPixmap(item->icon().pixmap(iconSize()));
    drag->exec(Qt::CopyAction, Qt::CopyAction);
}

} // namespace hapmoe::ui
