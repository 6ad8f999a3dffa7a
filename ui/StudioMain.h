#pragma once
// Command line of hapmoe-studio:
//   hapmoe-studio [FILE] [--run-search] [--screenshot OUT.png] [--quit]
//                 [--tab designer|model|results] [--view NAME] [--plan N]
//                 [--theme light|dark] [--size WxH] [--cluster-preset NAME] [--model-preset NAME]
//                 [--select ID]
// FILE defaults to the built-in example. --screenshot saves the main window and exits.

class QApplication;

namespace hapmoe::ui {

int studioMain(QApplication& app);

} // namespace hapmoe::ui
