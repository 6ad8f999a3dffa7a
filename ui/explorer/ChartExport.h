#pragma once
// Saves a QCustomPlot chart as PNG, SVG or PDF, chosen by the file name's suffix.

#include <QString>

class QCustomPlot;

namespace hapmoe::ui {

// Returns an empty string on success, else the reason.
QString saveChart(QCustomPlot* plot, const QString& path);
// The filter string for a file dialog.
QString chartFileFilter();

} // namespace hapmoe::ui
