#include "StudioMain.h"

#include <QApplication>

int main(int argc, char** argv)
{
    QCoreApplication::setOrganizationName(QStringLiteral("HAPMoE"));
    QCoreApplication::setApplicationName(QStringLiteral("HAPMoE Studio"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HAPMOE_VERSION));
    // Without a display a QApplication aborts; help and version need none.
    if (hapmoe::ui::asksForHelpOrVersion(argc, argv)) {
        QCoreApplication app(argc, argv);
        return hapmoe::ui::studioInfoMain(app);
    }
    QApplication app(argc, argv);
    QApplication::setDesktopFileName(QStringLiteral("io.github.hapmoe.Studio"));
    return hapmoe::ui::studioMain(app);
}
