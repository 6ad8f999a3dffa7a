#include "StudioMain.h"

#include <QApplication>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("HAPMoE"));
    QApplication::setApplicationName(QStringLiteral("HAPMoE Studio"));
    QApplication::setApplicationVersion(QStringLiteral(HAPMOE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.hapmoe.Studio"));
    return hapmoe::ui::studioMain(app);
}
