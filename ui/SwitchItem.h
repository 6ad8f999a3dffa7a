#pragma once
// A network switch on the cluster canvas.

#include "EndpointItem.h"

#include "hardware/Cluster.h"

namespace hapmoe::ui {

class SwitchItem : public EndpointItem {
public:
    enum { Type = UserType + 2 };
    explicit SwitchItem(const Switch& sw);

    int type() const override { return Type; }
    void setSwitch(const Switch& sw);
    const Switch& switchData() const { return m_switch; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    static QRectF bodyRect();

protected:
    QString baseToolTip() const override;

private:
    Switch m_switch;
};

} // namespace hapmoe::ui
