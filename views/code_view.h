// Generated code in tabs (C++, LLVM IR, asm, CUDA, PTX) with syntax highlighting. Each tab knows
// which lines each kernel spans and what it computes, so a selection elsewhere highlights the
// kernel's lines, and clicking inside a kernel reports its traced origins.
#pragma once

#include <QTabWidget>
#include <map>
#include <set>
#include <vector>

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace fusebox {

struct KernelSpan {
  QString name;
  int firstLine = 0, lastLine = 0;  // 1-based, inclusive
  std::vector<int64_t> origins;     // traced node ids
};

class CodeView : public QTabWidget {
  Q_OBJECT
public:
  explicit CodeView(QWidget* parent = nullptr);
  // Adds or replaces the tab "title" (e.g. "C++ forward").
  void setCode(const QString& title, const QString& language, const QString& text, const std::vector<KernelSpan>& kernels = {});
  void clearAll();
  // Highlights the kernels computing any of `traced` in every tab; returns the highlighted lines
  // of the current tab.
  int highlightOrigins(const std::set<int64_t>& traced);
  QPlainTextEdit* editor(const QString& title);  // its text set, if still pending
  // Find in the current tab (the box in the tab bar's corner; Ctrl+F): the next or previous match
  // of the box's text, wrapping; the count of matches.
  QLineEdit* findBox() const { return find_; }
  bool findNext(bool forward, bool fromStart = false);
  int countMatches();
  QString findStatus() const;
  // The kernels (of every tab, each name once) that compute any of `traced`.
  QStringList kernelsComputing(const std::set<int64_t>& traced) const;
  // The traced origins of kernel `name` of graph `graph` ("forward"), from the tab titled "... graph".
  std::vector<int64_t> originsOfKernel(const QString& graph, const QString& name) const;

signals:
  void kernelClicked(const QString& kernel, const std::vector<int64_t>& origins);

private:
  struct Tab {
    QPlainTextEdit* edit = nullptr;
    QObject* highlighter = nullptr;  // the tab's CodeHighlighter (code_view.cpp)
    QString pending;                 // text not yet in the editor
    bool hasPending = false;
    std::vector<KernelSpan> kernels;
  };
  QPlainTextEdit* currentEditor() const;
  void apply(Tab& tab);
  void flushOne();
  void flushAll();
  std::map<QString, Tab> tabs_;
  bool flushScheduled_ = false;
  QLineEdit* find_;
  QLabel* found_;
};

}  // namespace fusebox
