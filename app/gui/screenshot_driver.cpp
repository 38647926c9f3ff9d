#include "app/gui/screenshot_driver.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "app/gui/main_window.h"
#include "views/graph_pane.h"

namespace fusebox {

namespace {

bool settled(const MainWindow& w) {
  if (w.busy()) return false;
  for (int i = 0; i < 4; ++i)
    if (w.pane(i)->layoutPending()) return false;
  return true;
}

void fail(const std::string& why) {
  std::fprintf(stderr, "fusebox gui --screenshot: %s\n", why.c_str());
  QApplication::exit(1);
}

}  // namespace

void driveScreenshot(MainWindow& w, const GuiOptions& o) {
  struct State {
    int phase = 0;  // 0: stages running, 1: focus and scopes asked, 2: written
    QElapsedTimer clock;
  };
  auto state = std::make_shared<State>();
  state->clock.start();
  w.setShowDialogs(false);
  if (o.runAll) QTimer::singleShot(0, &w, [&w] { w.runAllStages(); });
  auto* tick = new QTimer(&w);
  tick->setInterval(100);
  QObject::connect(tick, &QTimer::timeout, &w, [&w, o, state, tick] {
    if (state->clock.elapsed() > 600000) return tick->stop(), fail("still not drawn after 10 minutes");
    if (!w.lastError().isEmpty()) return tick->stop(), fail(w.lastError().toStdString());
    if (!settled(w) || (o.runAll && w.stagesDone().isEmpty())) return;
    if (state->phase == 0) {
      state->phase = 1;
      if (o.focusPane >= 0) w.focusPane(o.focusPane);
      for (const std::string& scope : o.expand)
        if (!w.openScope(scope)) return tick->stop(), fail("no scope '" + scope + "' in any pane");
      return;  // wait for the re-layouts
    }
    tick->stop();
    QApplication::processEvents();
    if (!w.grab().save(QString::fromStdString(o.screenshot))) return fail("cannot write " + o.screenshot);
    std::printf("wrote %s (%dx%d)\n", o.screenshot.c_str(), w.width(), w.height());
    QApplication::exit(0);
  });
  tick->start();
}

}  // namespace fusebox
