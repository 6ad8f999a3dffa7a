#include "ElidedStatusBar.h"

#include <QPainter>
#include <QStyle>
#include <QStyleOption>

#include <algorithm>

namespace hapmoe::ui {

ElidedStatusBar::ElidedStatusBar(QWidget* parent) : QStatusBar(parent)
{
    connect(this, &QStatusBar::messageChanged, this, [this](const QString& message) { setToolTip(message); });
}

QRect ElidedStatusBar::messageRect() const
{
    // From the left edge to the first permanent widget shown (the message hides the others).
    int right = width();
    for (QWidget* w : findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        if (w->isVisible() && w->objectName() != QLatin1String("qt_statusbar_sizegrip") && w->x() > 0)
            right = std::min(right, w->x());
    }
    return QRect(6, 0, std::max(0, right - 12), height());
}

QString ElidedStatusBar::shownMessage() const
{
    return fontMetrics().elidedText(currentMessage(), Qt::ElideRight, messageRect().width());
}

void ElidedStatusBar::paintEvent(QPaintEvent* event)
{
    if (currentMessage().isEmpty()) {
        QStatusBar::paintEvent(event);
        return;
    }
    // As QStatusBar draws a message, with the text elided to its room.
    QPainter p(this);
    QStyleOption opt;
    opt.initFrom(this);
    style()->drawPrimitive(QStyle::PE_PanelStatusBar, &opt, &p, this);
    p.setPen(palette().windowText().color());
    p.drawText(messageRect(), Qt::AlignLeading | Qt::AlignVCenter | Qt::TextSingleLine, shownMessage());
}

} // namespace hapmoe::ui
