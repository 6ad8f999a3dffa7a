#pragma once
// Command line of hapmoe-studio:
//   hapmoe-studio [FILE] [--run-search] [--screenshot OUT.png] [--quit]
//                 [--tab designer|model|results] [--view NAME] [--plan N]
//                 [--theme light|dark] [--size WxH] [--cluster-preset NAME|SHORTHAND]
//                 [--model-preset NAME] [--profile FILE] [--select ID] [--help] [--version]
// FILE defaults to the built-in example. --screenshot saves the main window (with the
// dialogs it has open, such as the export dialog of --view export) and exits. An unknown
// --view exits with 2.

#include <QList>
#include <QRect>

class QApplication;
class QCoreApplication;
class QPixmap;
class QWidget;

namespace hapmoe::ui {

int studioMain(QApplication& app);
// --help and --version print and exit without a display: main answers them with a
// QCoreApplication (studioInfoMain) before any QApplication exists.
bool asksForHelpOrVersion(int argc, char** argv);
int studioInfoMain(QCoreApplication& app);

// The window as it looks with its open (modeless) dialogs drawn over it, each centred as
// QDialog places itself over its parent and with a title strip: a screenshot of one window
// cannot show other top-level windows. `bodies` receives where each dialog's own pixels went.
QPixmap grabWithDialogs(QWidget* window, QList<QRect>* bodies = nullptr);

} // namespace hapmoe::ui
