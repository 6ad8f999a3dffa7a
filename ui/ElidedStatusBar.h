#pragma once
// A status bar whose temporary message ends in "…" where it would run under the permanent
// widgets (QStatusBar cuts it off mid-word); the whole message is its tooltip.

#include <QStatusBar>

namespace hapmoe::ui {

class ElidedStatusBar : public QStatusBar {
    Q_OBJECT
public:
    explicit ElidedStatusBar(QWidget* parent = nullptr);

    // The message as drawn: elided to the room left of the permanent widgets.
    QString shownMessage() const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QRect messageRect() const;
};

} // namespace hapmoe::ui
