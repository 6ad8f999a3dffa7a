#include "ChartExport.h"

#include "io/Documents.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QSvgGenerator>
#include <QTemporaryDir>
#include <qcustomplot.h>

#include <exception>

namespace hapmoe::ui {

namespace {

// The chart drawn into memory in the format the suffix names; empty when drawing failed.
QByteArray renderChart(QCustomPlot* plot, const QString& suffix)
{
    const int w = plot->width();
    const int h = plot->height();
    QByteArray bytes;
    if (suffix == QLatin1String("png")) {
        // Twice the screen resolution reads well in documents; 96 dpi as QCustomPlot::savePng.
        QImage image = plot->toPixmap(w, h, 2.0).toImage();
        image.setDotsPerMeterX(qRound(96 / 0.0254));
        image.setDotsPerMeterY(qRound(96 / 0.0254));
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG"))
            bytes.clear();
    } else if (suffix == QLatin1String("svg")) {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(QSize(w, h));
        svg.setViewBox(QRect(0, 0, w, h));
        svg.setTitle(plot->windowTitle());
        QCPPainter painter;
        if (!painter.begin(&svg))
            return {};
        plot->toPainter(&painter, w, h);
        if (!painter.end())
            bytes.clear();
    } else if (suffix == QLatin1String("pdf")) {
        // QCustomPlot writes PDF to a file name only: a private folder, then read back.
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("chart.pdf"));
        QFile file(pdf);
        if (dir.isValid() && plot->savePdf(pdf, w, h) && file.open(QIODevice::ReadOnly))
            bytes = file.readAll();
    }
    return bytes;
}

} // namespace

QString chartFileFilter()
{
    return QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

QString saveChart(QCustomPlot* plot, const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg") && suffix != QLatin1String("pdf"))
        return QStringLiteral("unknown chart format \"%1\" (expected .png, .svg or .pdf)").arg(suffix);
    const QByteArray bytes = renderChart(plot, suffix);
    if (bytes.isEmpty())
        return QStringLiteral("cannot save %1: the chart could not be drawn as %2").arg(path, suffix.toUpper());
    // Written as every other file: all of it or, on failure, the file as it was.
    try {
        saveFileAtomically(path.toStdString(), std::string_view(bytes.constData(), std::size_t(bytes.size())));
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

} // namespace hapmoe::ui
