#include "app/gui/gui_main.h"

#include <QApplication>
#include <QDir>
#include <QStandardPaths>
#include <cstdio>
#include <cstdlib>

#include "app/gui/main_window.h"
#include "app/gui/screenshot_driver.h"

namespace fusebox {

int runGui(int argc, char** argv, const GuiOptions& options) {
  // A screenshot needs no screen: Qt draws offscreen unless told otherwise.
  if (!options.screenshot.empty() && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  // Without a display Qt would abort; say what to do instead.
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) {
    std::fprintf(stderr,
                 "fusebox: no display for the GUI (DISPLAY is not set). Use the CLI (fusebox --help), e.g.\n"
                 "  fusebox run mlp --train --target cpu --iters 20\n"
                 "or run the GUI under xvfb-run / with QT_QPA_PLATFORM=offscreen.\n");
    return 1;
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("fusebox");
  QApplication::setOrganizationName("fusebox");  // QSettings: ~/.config/fusebox/fusebox.conf (recent files)
  QString path = QString::fromStdString(options.sessionFile);
  if (path.isEmpty()) {
    QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dir);
    path = dir + "/sessions.fbs";
  }
  MainWindow w(path);
  if (!options.model.empty()) w.setModel(QString::fromStdString(options.model));
  if (!options.screenshot.empty()) w.resize(options.width, options.height);
  w.show();
  if (options.openStored) w.openStoredSession(path, options.sessionId);
  if (options.browse && options.screenshot.empty()) w.openSessionBrowser(path);
  if (!options.screenshot.empty()) driveScreenshot(w, options);
  else if (options.runAll) w.runAllStages();
  return app.exec();
}

}  // namespace fusebox
