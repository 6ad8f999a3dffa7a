#pragma once

#include <QMainWindow>

namespace hapmoe::ui {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
};

} // namespace hapmoe::ui
