// Drives the inspector window on the offscreen platform through step -> run all -> linked
// selection -> run & profile -> compare -> export, checking what the widgets show, and saves a
// screenshot of each view (FUSEBOX_SCREENSHOTS, default ./screenshots) for a person to look at.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QtTest>

#include "app/gui/main_window.h"
#include "views/code_view.h"
#include "views/compare_view.h"
#include "views/graph_pane.h"
#include "views/profile_view.h"

using namespace fusebox;

class MainWindowTest : public QObject {
  Q_OBJECT

  QString dir_, shots_;

  void shot(QWidget* w, const QString& name) {
    QDir().mkpath(shots_);
    QVERIFY(w->grab().save(shots_ + "/" + name + ".png"));
  }

  std::unique_ptr<MainWindow> window() {
    auto w = std::make_unique<MainWindow>(dir_ + "/gui.fbs");
    w->setShowDialogs(false);
    w->setRunner(FUSEBOX_BINARY);
    w->resize(1600, 1000);
    w->show();
    return w;
  }

private slots:
  void initTestCase() {
    dir_ = QDir::tempPath() + "/fusebox_gui_test_" + QString::number(QCoreApplication::applicationPid());
    QDir(dir_).removeRecursively();
    QDir().mkpath(dir_);
    shots_ = qEnvironmentVariable("FUSEBOX_SCREENSHOTS", QDir::currentPath() + "/screenshots");
  }
  void cleanupTestCase() { QDir(dir_).removeRecursively(); }

  void stepRunSelectProfileCompareExport() {
    auto w = window();
    w->setModel("mlp");
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 1, 20000);
    QCOMPARE(w->stagesDone().at(0), QString("trace"));
    QVERIFY(w->pane(0)->view()->nodeCount() > 5);
    QCOMPARE(w->pane(1)->view()->nodeCount(), 0);
    shot(w.get(), "01_after_trace");

    w->runAllStages();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 7, 30000);
    QTRY_VERIFY(!w->busy());
    for (int i = 0; i < 4; ++i) QVERIFY2(w->pane(i)->view()->nodeCount() > 0, qPrintable(QString("pane %1 empty").arg(i)));
    QCOMPARE(w->pane(1)->choice()->count(), 3);  // joint, forward, backward
    QPlainTextEdit* cpp = w->codeView()->editor("C++ forward");
    QVERIFY(cpp);
    QVERIFY(cpp->toPlainText().contains("fusebox_main"));
    QVERIFY(w->codeView()->editor("CUDA backward"));

    // Linked selection: a traced linear lights up its prims, its fused kernels and its code.
    QString pick;
    for (int id = 0; id < 50 && pick.isEmpty(); ++id)
      if (!w->pane(0)->view()->originsOf("n" + std::to_string(id)).empty()) pick = QString("n%1").arg(id);
    QVERIFY(!pick.isEmpty());
    w->selectNode(0, pick);
    QVERIFY(w->pane(0)->view()->highlightedCount() >= 1);
    QVERIFY(w->pane(2)->view()->highlightedCount() >= 1);
    QVERIFY(w->pane(3)->view()->highlightedCount() >= 1);
    QVERIFY(!cpp->extraSelections().isEmpty() || !w->codeView()->editor("C++ backward")->extraSelections().isEmpty());
    shot(w.get(), "02_all_stages_linked_selection");

    int64_t fused = w->session();
    w->startProfileRun(5);
    QTRY_VERIFY_WITH_TIMEOUT(!w->running(), 120000);
    QVERIFY2(w->lastError().isEmpty(), qPrintable(w->lastError()));
    QVERIFY(w->profileView()->barCount() > 0);
    QVERIFY(w->codeView()->editor("LLVM IR forward"));
    shot(w.get(), "03_profile");

    // A second config of the same model, then the fusion comparison of the two sessions.
    w->setFusion(false);
    w->runAllStages();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 7, 30000);
    QTRY_VERIFY(!w->busy());
    QVERIFY(w->session() != fused);
    w->compareWith(fused);
    QVERIFY(w->compareView()->regroupedRows() > 0);
    QVERIFY(w->compareView()->decisionRows() > 0);
    shot(w.get(), "04_compare");

    w->exportReport(dir_ + "/report.html");
    w->exportReport(dir_ + "/report.pdf");
    QVERIFY2(w->lastError().isEmpty(), qPrintable(w->lastError()));
    QVERIFY(QFileInfo(dir_ + "/report.html").size() > 10000);
    QVERIFY(QFileInfo(dir_ + "/report.pdf").size() > 10000);
  }

  // A model with a shape error: the trace stage fails with the file:line:col message (a dialog
  // in normal use), nothing crashes, and the window stays usable.
  void badModelShowsTheError() {
    auto w = window();
    w->setModel(FUSEBOX_BAD_MODELS "/shape_mismatch.fbx");
    w->stepStage();
    QTRY_VERIFY_WITH_TIMEOUT(!w->lastError().isEmpty(), 20000);
    QVERIFY2(w->lastError().contains("shape_mismatch.fbx:5:7"), qPrintable(w->lastError()));
    QVERIFY(!w->busy());
    shot(w.get(), "05_error");
  }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
