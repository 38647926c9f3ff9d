// Generated code in tabs (C++, LLVM IR, asm, CUDA, PTX, SASS) with syntax highlighting. Each
// source tab knows which lines each kernel spans and what it computes, so a selection elsewhere
// highlights the kernel's lines, and clicking inside a kernel reports its traced origins. Each
// compiled listing knows the source line of each of its lines: putting the cursor on a line marks
// the lines compiled from the same source line in every tab of that source (Compiler Explorer's
// linking), and its kernel is the source's.
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
  // Adds or replaces the compiled listing "title" (e.g. "asm forward") of source tab
  // `sourceTitle`, `sourceLines[i]` the source line of its line i + 1 (0: none).
  void setListing(const QString& title, const QString& language, const QString& sourceTitle, const QString& text,
                  std::vector<int> sourceLines);
  void clearAll();
  // The linked lines now marked: "C++ forward line 45: 3 lines in LLVM IR forward, 5 in asm
  // forward"; empty when the cursor's line links to nothing.
  QString linkStatus() const { return linkStatus_; }
  int linkedLines(const QString& title) const;  // lines marked in tab `title`
  // Highlights the kernels computing any of `traced` in every tab; returns the highlighted lines
  // of the current tab.
  int highlightOrigins(const std::set<int64_t>& traced);
  QPlainTextEdit* editor(const QString& title);  // its text set, if still pending
  QPlainTextEdit* sourceBeside(const QString& title);  // a listing's copy of its source, on its left
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
  void linked(const QString& status);  // linkStatus() changed

private:
  struct Tab {
    QWidget* page = nullptr;         // in the tab bar: the editor, or for a listing the source beside it
    QPlainTextEdit* edit = nullptr;
    QPlainTextEdit* mirror = nullptr;  // a listing's copy of its source tab's text
    QObject* highlighter = nullptr;  // the tab's CodeHighlighter (code_view.cpp)
    QString pending;                 // text not yet in the editor
    bool hasPending = false;
    std::vector<KernelSpan> kernels;  // a source's
    QString sourceTitle;              // a listing's source tab
    std::vector<int> sourceLines;     // a listing's, per line
    QString language;
    QObject* mirrorHighlighter = nullptr;
    std::vector<int> kernelLines, linkLines;  // marked (1-based): the selection's kernels, one source line's code
    int mirrorLine = 0;                       // marked in the source beside a listing
  };
  void showSourceBeside(Tab& listing);
  Tab& tabFor(const QString& title, const QString& language, bool listing = false);  // made on first use
  // The source tab and line that `line` (1-based) of tab `title` was compiled from, if any.
  std::pair<QString, int> sourceOf(const QString& title, int line) const;
  const KernelSpan* kernelAt(const QString& sourceTitle, int sourceLine) const;
  void onCursorMoved(const QString& title);
  // A line clicked in tab `from` (or in the source beside it): its counterparts marked, its kernel selected.
  void linkAndSelect(const QString& sourceTitle, int sourceLine, const QString& from, bool fromBeside);
  void link(const QString& sourceTitle, int sourceLine, const QString& from, bool fromBeside = false);
  void showMarks(Tab& tab);
  QPlainTextEdit* currentEditor() const;
  void apply(Tab& tab);
  void flushOne();
  void flushAll();
  std::map<QString, Tab> tabs_;
  bool flushScheduled_ = false;
  QLineEdit* find_;
  QLabel* found_;
  QString linkStatus_;
};

}  // namespace fusebox
