#include "ChartExport.h"

#include <QFileInfo>
#include <QSvgGenerator>
#include <qcustomplot.h>

namespace hapmoe::ui {

QString chartFileFilter()
{
    return QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

QString saveChart(QCustomPlot* plot, const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    const int w = plot->width();
    const int h = plot->height();
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        ok = plot->savePng(path, w, h, 2.0);   // twice the screen resolution reads well in documents
    } else if (suffix == QLatin1String("pdf")) {
        ok = plot->savePdf(path, w, h);
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(QSize(w, h));
        svg.setViewBox(QRect(0, 0, w, h));
        svg.setTitle(plot->windowTitle());
        QCPPainter painter;
        if (painter.begin(&svg)) {
            plot->toPainter(&painter, w, h);
            ok = painter.end();
        }
    } else {
        return QStringLiteral("unknown chart format \"%1\" (expected .png, .svg or .pdf)").arg(suffix);
    }
    return ok ? QString() : QStringLiteral("could not write %1").arg(path);
}

} // namespace hapmoe::ui
