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
    // Links down to nodes over links up to switches when above 1 (SwitchUplinks), else 0:
    // drawn as "2:1" on the switch.
    void setOversubscription(double ratio);
    double oversubscription() const { return m_oversubscription; }
    QString oversubscriptionText() const;

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    static QRectF bodyRect();
    QRectF body() const override { return bodyRect(); }
    double cornerRadius() const override { return 20; }   // a pill: half its height

protected:
    QString baseToolTip() const override;

private:
    Switch m_switch;
    double m_oversubscription = 0;
};

} // namespace hapmoe::ui
