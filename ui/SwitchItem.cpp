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

void SwitchItem::setOversubscription(double ratio)
{
    const double r = ratio > 1.0 + 1e-9 ? ratio : 0.0;
    if (r == m_oversubscription)
        return;
    m_oversubscription = r;
    refreshToolTip();
    update();
}

QString SwitchItem::oversubscriptionText() const
{
    return m_oversubscription > 0 ? QStringLiteral("%1:1").arg(m_oversubscription, 0, 'g', 3) : QString();
}

QString SwitchItem::baseToolTip() const
{
    QString tip = QObject::tr("Switch %1").arg(QString::fromStdString(m_switch.name));
    if (m_oversubscription > 0)
        tip += QLatin1Char('\n')
            + QObject::tr("Oversubscribed %1: traffic that leaves it gets %2 % of each node's link to it")
                  .arg(oversubscriptionText())
                  .arg(100.0 / m_oversubscription, 0, 'f', 0);
    return tip;
}

void SwitchItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const QPalette pal = QApplication::palette();
    const QRectF body = bodyRect();
    painter->setRenderHint(QPainter::Antialiasing);
    paintHighlight(painter);
    const bool selected = option->state & QStyle::State_Selected;
    const QColor fill = isDark(pal) ? QColor(0x4a, 0x55, 0x63) : QColor(0xdd, 0xe3, 0xea);
    painter->setPen(QPen(selected ? pal.color(QPalette::Highlight) : QColor(0x6b, 0x77, 0x85), selected ? 3 : 1.5));
    painter->setBrush(fill);
    painter->drawRoundedRect(body, cornerRadius(), cornerRadius());
    studioIcon(QStringLiteral("switch")).paint(painter, QRect(int(body.left()) + 10, int(body.top()) + 8, 24, 24));
    QFont f = QApplication::font();
    f.setPointSizeF(9.5);
    f.setBold(true);
    // The oversubscription ratio in the secondary text colour: at the right end beside the
    // name when both fit, else on a second line under the name, so that the name is not cut.
    const QString ratio = oversubscriptionText();
    const QString name = QString::fromStdString(m_switch.name);
    const QFontMetrics fm(f);
    QFont small = QApplication::font();
    small.setPointSizeF(8.5);
    const QFontMetrics smallFm(small);
    const QRectF text = body.adjusted(38, 0, -10, 0);
    const double ratioWidth = ratio.isEmpty() ? 0 : smallFm.horizontalAdvance(ratio) + 6;
    const bool twoLines = !ratio.isEmpty() && fm.horizontalAdvance(name) > text.width() - ratioWidth;
    QRectF nameRect = text.adjusted(0, 0, -ratioWidth, 0);
    if (!ratio.isEmpty()) {
        painter->setFont(small);
        painter->setPen(pal.color(QPalette::PlaceholderText));
        if (twoLines) {
            const double top = body.center().y() - (fm.height() + smallFm.height()) / 2;
            nameRect = QRectF(text.left(), top, text.width(), fm.height());
            painter->drawText(QRectF(text.left(), top + fm.height(), text.width(), smallFm.height()),
                              Qt::AlignLeft | Qt::AlignVCenter, QObject::tr("oversubscribed %1").arg(ratio));
        } else {
            painter->drawText(body.adjusted(0, 0, -12, 0), Qt::AlignRight | Qt::AlignVCenter, ratio);
        }
    }
    painter->setFont(f);
    painter->setPen(pal.color(QPalette::Text));
    painter->drawText(nameRect, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(name, Qt::ElideRight, int(nameRect.width())));
    paintBadge(painter, body);
}

} // namespace hapmoe::ui
