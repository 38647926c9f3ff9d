// Drives the inspector window on the offscreen platform through step -> run all -> linked
// selection -> run & profile -> compare -> export, checking what the widgets show, and saves a
// screenshot of each view (FUSEBOX_SCREENSHOTS, default ./screenshots) for a person to look at.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTextStream>
#include <QTimer>
#include <QtTest>

#include "app/gui/main_window.h"
#include "views/code_view.h"
#include "views/compare_view.h"
#include "views/graph_view.h"
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
    shot(w.get(), "00_first_run");  // what `fusebox` with no arguments shows: the demo model and the hint
    w->setModel("mlp");
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 1, 20000);
    QCOMPARE(w->stagesDone().at(0), QString("trace"));
    QVERIFY(w->pane(0)->view()->nodeCount() > 5);
    QCOMPARE(w->pane(1)->view()->nodeCount(), 0);
    shot(w.get(), "01_after_trace");

    w->runAllStages();
    QTRY_VERIFY2_WITH_TIMEOUT(w->stagesDone().size() == 7, qPrintable("stages: " + w->stagesDone().join(",") + "; error: " + w->lastError()), 30000);
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
    QTRY_VERIFY2_WITH_TIMEOUT(w->stagesDone().size() == 7, qPrintable("stages: " + w->stagesDone().join(",") + "; error: " + w->lastError()), 30000);
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

  // A session recorded by one window is shown again by another from the file alone: the same
  // graphs in every pane, the same generated code, the toolbar set to the session's config; Step
  // afterwards compiles it again as a new live session.
  void storedSessionShowsWhatWasRecorded() {
    QString file = dir_ + "/stored.fbs";
    int64_t recorded = 0;
    std::vector<int> nodes;
    QString cppText;
    {
      auto w = std::make_unique<MainWindow>(file);
      w->setShowDialogs(false);
      w->setModel("lenet");
      w->setFusion(false);
      w->runAllStages();
      QTRY_VERIFY2_WITH_TIMEOUT(w->stagesDone().size() == 7 && !w->busy(), qPrintable(w->lastError()), 30000);
      recorded = w->session();
      for (int i = 0; i < 4; ++i) nodes.push_back(w->pane(i)->view()->nodeCount());
      cppText = w->codeView()->editor("C++ backward")->toPlainText();
    }
    auto w = std::make_unique<MainWindow>(dir_ + "/other.fbs");
    w->setShowDialogs(false);
    w->resize(1600, 1000);
    w->show();
    w->openStoredSession(file, recorded);
    QTRY_VERIFY2_WITH_TIMEOUT(w->stagesDone().size() == 7 && !w->busy(), qPrintable(w->lastError()), 30000);
    QVERIFY(w->viewingStored());
    QCOMPARE(w->session(), recorded);
    for (int i = 0; i < 4; ++i) QCOMPARE(w->pane(i)->view()->nodeCount(), nodes[static_cast<size_t>(i)]);
    QVERIFY(w->codeView()->editor("C++ backward"));
    QCOMPARE(w->codeView()->editor("C++ backward")->toPlainText(), cppText);
    bool showsModel = false;  // the toolbar's model box names the session's model
    for (QComboBox* c : w->findChildren<QComboBox*>()) showsModel = showsModel || c->currentText() == "lenet";
    QVERIFY(showsModel);
    shot(w.get(), "05_stored_session");

    // A session that is not in the file: an error naming it, nothing shown.
    w->openStoredSession(file, recorded + 1000);
    QTRY_VERIFY_WITH_TIMEOUT(!w->busy(), 10000);
    QVERIFY2(w->lastError().contains(QString::number(recorded + 1000)) || w->lastError().contains("no session"), qPrintable(w->lastError()));
    QVERIFY(!w->viewingStored());

    // Step leaves the stored view and starts a live session of the same model and config.
    w->openStoredSession(file, recorded);
    QTRY_VERIFY_WITH_TIMEOUT(w->stagesDone().size() == 7 && !w->busy(), 30000);
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 1, 20000);
    QVERIFY(!w->viewingStored());
  }

  // A 3,000-node joint graph: laid out on the worker thread while the UI thread keeps ticking,
  // then panned. The figures are printed (bench/RESULTS.md quotes them), not asserted.
  void largeJointGraphLaysOutOffTheUiThread() {
    QString path = dir_ + "/deep.fbx";
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      QTextStream out(&f);
      out << "model deep(x: f32[B, 64]) dims(B = 8) {\n  h0 = x\n";
      for (int i = 1; i <= 60; ++i)
        out << "  scope block" << i << " {\n    param w: f32[64, 64] = randn(seed=" << i << ", std=0.05)\n"
            << "    param b: f32[64] = zeros\n    param g: f32[64] = ones\n    param beta: f32[64] = zeros\n"
            << "    h" << i << " = h" << i - 1 << " + gelu(layer_norm(linear(h" << i - 1 << ", w, b), [64], g, beta))\n  }\n";
      out << "  return sum(h60 * h60)\n}\n";
    }
    auto w = window();
    w->setModel(path);
    QElapsedTimer clock;
    qint64 lastTick = 0, maxGap = 0;
    QTimer ticker;
    clock.start();
    QObject::connect(&ticker, &QTimer::timeout, [&] {
      maxGap = std::max(maxGap, clock.elapsed() - lastTick);
      lastTick = clock.elapsed();
    });
    ticker.start(10);
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 1, 60000);
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 2, 120000);
    qint64 stepMs = clock.elapsed();
    ticker.stop();
    GraphView* joint = w->pane(1)->view();
    QVERIFY2(joint->nodeCount() > 3000, qPrintable(QString::number(joint->nodeCount())));
    QElapsedTimer pan;
    pan.start();
    const int frames = 30;
    for (int i = 0; i < frames; ++i) {
      joint->horizontalScrollBar()->setValue(joint->horizontalScrollBar()->maximum() * i / frames);
      joint->verticalScrollBar()->setValue(joint->verticalScrollBar()->maximum() * i / frames);
      joint->viewport()->repaint();
    }
    qInfo("large joint graph: %d nodes; trace + joint stages with layout %lld ms; longest UI-thread stall %lld ms; "
          "pan %.1f ms per frame",
          joint->nodeCount(), stepMs, maxGap, pan.elapsed() / double(frames));
    shot(w.get(), "06_large_joint_graph");
  }

  // An ONNX model opened like a .fbx one: imported as the traced graph, then every stage.
  void onnxModelRunsEveryStage() {
    const QString path = "/usr/share/libonnx-testdata/data/pytorch-operator/test_operator_params/model.onnx";
    if (!QFileInfo::exists(path)) QSKIP("libonnx-testdata is not installed");
    auto w = window();
    w->setModel(path);
    w->runAllStages();
    QTRY_VERIFY2_WITH_TIMEOUT(w->stagesDone().size() == 7, qPrintable("stages: " + w->stagesDone().join(",") + "; error: " + w->lastError()), 30000);
    QTRY_VERIFY(!w->busy());
    QVERIFY2(w->lastError().isEmpty(), qPrintable(w->lastError()));
    for (int i = 0; i < 4; ++i) QVERIFY2(w->pane(i)->view()->nodeCount() > 0, qPrintable(QString("pane %1 empty").arg(i)));
    shot(w.get(), "07_onnx_model");
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
    // fixed model: the next Step starts over and works
    w->setModel("mlp");
    w->stepStage();
    QTRY_COMPARE_WITH_TIMEOUT(w->stagesDone().size(), 1, 20000);
  }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
