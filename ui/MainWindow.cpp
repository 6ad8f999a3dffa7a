#include "MainWindow.h"

#include <QLabel>

namespace hapmoe::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("HAPMoE Studio"));
    setCentralWidget(new QLabel(QStringLiteral("HAPMoE Studio"), this));
    resize(1400, 900);
}

} // namespace hapmoe::ui
