#include "SwitchItem.h"

#include "Theme.h"

#include <QApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace hapmoe::ui {

SwitchItem::SwitchItem(const Switch& sw) : EndpointItem(sw.id) { setSwitch(sw); }

QRectF SwitchItem::bodyRect() { return QRectF(-95, -20, 190, 40); }
QRectF SwitchItem::boundingRect() const { return bodyRect().adjusted(-12, -12, 12, 12); }

void SwitchItem::setSwitch(const Switch& sw)
{
    m_switch = sw;
    setPos(sw.x, sw.y);
    refreshToolTip();
    update();
}

QString SwitchItem::baseToolTip() const
{
    return QObject::tr("Switch %1").arg(QString::fromStdString(m_switch.name));
}

void SwitchItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const QPalette pal = QApplication::palette();
    const QRectF body = bodyRect();
    painter->setRenderHint(QPainter::Antialiasing);
    paintHighlight(painter, body, 20);
    const bool selected = option->state & QStyle::State_Selected;
    const QColor fill = isDark(pal) ? QColor(0x4a, 0x55, 0x63) : QColor(0xdd, 0xe3, 0xea);
    painter->setPen(QPen(selected ? pal.color(QPalette::Highlight) : QColor(0x6b, 0x77, 0x85), selected ? 3 : 1.5));
    painter->setBrush(fill);
    painter->drawRoundedRect(body, 20, 20);
    studioIcon(QStringLiteral("switch")).paint(painter, QRect(int(body.left()) + 10, int(body.top()) + 8, 24, 24));
    QFont f = QApplication::font();
    f.setPointSizeF(9.5);
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(pal.color(QPalette::Text));
    const QRectF text = body.adjusted(38, 0, -10, 0);
    painter->drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetrics(f).elidedText(QString::fromStdString(m_switch.name), Qt::ElideRight,
                                                 int(text.width())));
    paintBadge(painter, body);
}

} // namespace hapmoe::ui
