#include "MainWindow.h"

#include <QApplication>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("HAPMoE Studio"));
    QApplication::setApplicationVersion(QStringLiteral(HAPMOE_VERSION));
    hapmoe::ui::MainWindow w;
    w.show();
    return app.exec();
}
