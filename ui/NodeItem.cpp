#include "NodeItem.h"

#include "Theme.h"

#include <QApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace hapmoe::ui {

NodeItem::NodeItem(const Node& node, const DeviceCatalog& catalog) : EndpointItem(node.id), m_catalog(&catalog) { setNode(node); }

QRectF NodeItem::bodyRect() { return QRectF(-95, -38, 190, 76); }

QRectF NodeItem::boundingRect() const { return bodyRect().adjusted(-12, -12, 12, 12); }

void NodeItem::setNode(const Node& node)
{
    prepareGeometryChange();
    m_node = node;
    const QString typeName = QString::fromStdString(node.device_type);
    const DeviceType* type = m_catalog->find(node.device_type);
    m_known = type != nullptr;
    m_color = m_known ? deviceColor(typeName) : QColor(0x8a, 0x90, 0x98);
    m_subtitle = QStringLiteral("%1 \u00d7 %2").arg(node.count).arg(typeName);
    if (type) {
        const double pflops = node.count * type->bf16_tflops / 1000.0;
        m_figures = QStringLiteral("%1 PFLOP/s \u00b7 %2 GiB")
                        .arg(pflops, 0, 'f', pflops < 10 ? 2 : 1)
                        .arg(node.count * type->memory_gib, 0, 'f', 0);
    } else {
        m_figures = QObject::tr("unknown device type");
    }
    setPos(node.x, node.y);
    refreshToolTip();
    update();
}

QString NodeItem::baseToolTip() const
{
    QString tip = QStringLiteral("%1: %2").arg(QString::fromStdString(m_node.host), m_subtitle);
    if (const DeviceType* type = m_catalog->find(m_node.device_type))
        tip += QObject::tr("\n%1 TFLOP/s BF16, %2 GiB, %3 %4 GB/s per device")
                   .arg(type->bf16_tflops)
                   .arg(type->memory_gib)
                   .arg(QString::fromStdString(type->intra_link_kind))
                   .arg(type->intra_node_gbps);
    return tip;
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const QPalette pal = QApplication::palette();
    const QRectF body = bodyRect();
    painter->setRenderHint(QPainter::Antialiasing);
    paintHighlight(painter);

    const bool selected = option->state & QStyle::State_Selected;
    painter->setPen(QPen(selected ? pal.color(QPalette::Highlight) : m_color.darker(115), selected ? 3 : 1.5,
                         m_known ? Qt::SolidLine : Qt::DashLine));
    painter->setBrush(pal.color(QPalette::Base));
    painter->drawRoundedRect(body, cornerRadius(), cornerRadius());

    // Colour band on the left: the device type at a glance.
    QPainterPath band;
    band.addRoundedRect(QRectF(body.left(), body.top(), 46, body.height()), cornerRadius(), cornerRadius());
    QPainterPath clip;
    clip.addRect(QRectF(body.left(), body.top(), 40, body.height()));
    painter->setPen(Qt::NoPen);
    painter->setBrush(m_color);
    painter->drawPath(band.intersected(clip));
    const QIcon icon = deviceIcon(QString::fromStdString(m_node.device_type));
    QPixmap chip(28, 28);
    chip.fill(Qt::transparent);
    {
        QPainter p(&chip);
        p.setRenderHint(QPainter::Antialiasing);
        p.setBrush(QColor(255, 255, 255, 230));
        p.setPen(Qt::NoPen);
        p.drawRoundedRect(QRectF(0, 0, 28, 28), 6, 6);
        icon.paint(&p, QRect(3, 3, 22, 22));
    }
    painter->drawPixmap(QPointF(body.left() + 6, body.center().y() - 14), chip);

    const QRectF text = body.adjusted(48, 6, -8, -6);
    QFont f = QApplication::font();
    f.setPointSizeF(10);
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(pal.color(QPalette::Text));
    const double line = text.height() / 3.0;
    painter->drawText(QRectF(text.left(), text.top(), text.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetrics(f).elidedText(QString::fromStdString(m_node.host), Qt::ElideRight,
                                                 int(text.width())));
    f.setBold(false);
    f.setPointSizeF(9.5);
    painter->setFont(f);
    painter->drawText(QRectF(text.left(), text.top() + line, text.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetrics(f).elidedText(m_subtitle, Qt::ElideRight, int(text.width())));
    f.setPointSizeF(8.5);
    painter->setFont(f);
    painter->setPen(m_known ? pal.color(QPalette::PlaceholderText) : QColor(0xd3, 0x2f, 0x2f));
    painter->drawText(QRectF(text.left(), text.top() + 2 * line, text.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetrics(f).elidedText(m_figures, Qt::ElideRight, int(text.width())));
    paintBadge(painter, body);
}

} // namespace hapmoe::ui
