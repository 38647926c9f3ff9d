#include "views/code_view.h"

#include "views/code_editor.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QTextBlock>
#include <QToolButton>
#include <QTimer>
#include <algorithm>

namespace fusebox {

namespace {

// Keywords, comments, numbers and strings for C++/CUDA; %values and types for LLVM IR;
// directives and registers for PTX; mnemonics stay plain in assembly.
class CodeHighlighter : public QSyntaxHighlighter {
public:
  CodeHighlighter(QTextDocument* doc, const QString& language) : QSyntaxHighlighter(doc) {
    auto fmt = [](const char* color, bool bold = false) {
      QTextCharFormat f;
      f.setForeground(QColor(color));
      if (bold) f.setFontWeight(QFont::Bold);
      return f;
    };
    if (language == "cpp" || language == "cuda") {
      rules_.push_back({QRegularExpression(
                            "\\b(const|for|if|else|return|void|float|double|int|bool|long|unsigned|static|inline|extern|struct|template|"
                            "class|auto|__global__|__device__|__restrict__|__restrict|__shared__|__forceinline__|__launch_bounds__|"
                            "fb_i64|fb_u64|float4|typedef|while|continue|break)\\b"),
                        fmt("#1f4e99", true)});
      rules_.push_back({QRegularExpression("\\b[0-9][0-9.eE+-]*[fLU]?\\b"), fmt("#9c5d00")});
      rules_.push_back({QRegularExpression("\"[^\"]*\""), fmt("#2e7d32")});
      rules_.push_back({QRegularExpression("^\\s*#.*"), fmt("#7b1fa2")});
      rules_.push_back({QRegularExpression("//.*"), fmt("#6a737d")});
    } else if (language == "llvm_ir") {
      rules_.push_back({QRegularExpression("%[A-Za-z0-9_.]+"), fmt("#1f4e99")});
      rules_.push_back({QRegularExpression("\\b(define|declare|ret|br|phi|load|store|getelementptr|call|fadd|fmul|fsub|fdiv|icmp|fcmp|"
                                           "select|shufflevector|insertelement|extractelement)\\b"),
                        fmt("#7b1fa2", true)});
      rules_.push_back({QRegularExpression("\\b(float|double|i1|i8|i32|i64|ptr|void|<[0-9]+ x [a-z0-9]+>)"), fmt("#9c5d00")});
      rules_.push_back({QRegularExpression(";.*"), fmt("#6a737d")});
    } else if (language == "ptx") {
      rules_.push_back({QRegularExpression("^\\s*\\.[a-z_]+|\\.(entry|param|reg|global|shared|f32|f64|u32|u64|s32|s64|b32|b64|pred)\\b"),
                        fmt("#7b1fa2", true)});
      rules_.push_back({QRegularExpression("%[a-z]+[0-9]*"), fmt("#1f4e99")});
      rules_.push_back({QRegularExpression("//.*"), fmt("#6a737d")});
    } else {  // assembly
      rules_.push_back({QRegularExpression("%[a-z0-9]+"), fmt("#1f4e99")});
      rules_.push_back({QRegularExpression("#.*"), fmt("#6a737d")});
    }
  }

  // Off while a long text is set (highlighting all of it at once stalls the window for hundreds
  // of ms on a 12-layer model's code); then the blocks are highlighted a slice per event.
  void setActive(bool on) { active_ = on; }
  void highlightInSlices(QTextBlock from) {
    const int kSlice = 400;
    int n = 0;
    for (; from.isValid() && n < kSlice; from = from.next(), ++n) rehighlightBlock(from);
    if (from.isValid()) QTimer::singleShot(0, this, [this, from] { highlightInSlices(from); });
  }

protected:
  void highlightBlock(const QString& text) override {
    if (!active_ || text.size() > 2000) return;  // long lines (data, base64) stay plain
    for (const auto& [re, f] : rules_)
      for (auto it = re.globalMatch(text); it.hasNext();) {
        auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), f);
      }
  }

private:
  std::vector<std::pair<QRegularExpression, QTextCharFormat>> rules_;
  bool active_ = true;
};

}  // namespace

CodeView::CodeView(QWidget* parent) : QTabWidget(parent), find_(new QLineEdit), found_(new QLabel) {
  setDocumentMode(true);
  // Find, in the tab bar's corner: Ctrl+F, Enter / F3 next, Shift+Enter / Shift+F3 previous.
  find_->setPlaceholderText("find in code (Ctrl+F)");
  find_->setClearButtonEnabled(true);
  find_->setMinimumWidth(220);
  found_->setMinimumWidth(found_->fontMetrics().horizontalAdvance("9999 of 9999") + 6);
  auto* prev = new QToolButton;
  prev->setText("◀");
  prev->setToolTip("Previous match (Shift+Enter, Shift+F3)");
  auto* next = new QToolButton;
  next->setText("▶");
  next->setToolTip("Next match (Enter, F3)");
  auto* corner = new QWidget;
  auto* row = new QHBoxLayout(corner);
  row->setContentsMargins(0, 0, 4, 0);
  row->setSpacing(2);
  row->addWidget(find_);
  row->addWidget(found_);
  row->addWidget(prev);
  row->addWidget(next);
  setCornerWidget(corner, Qt::TopRightCorner);
  auto* focus = new QShortcut(QKeySequence::Find, this, [this] {
    find_->setFocus();
    find_->selectAll();
  });
  focus->setContext(Qt::WidgetWithChildrenShortcut);
  new QShortcut(QKeySequence::FindNext, this, [this] { findNext(true); }, Qt::WidgetWithChildrenShortcut);
  new QShortcut(QKeySequence::FindPrevious, this, [this] { findNext(false); }, Qt::WidgetWithChildrenShortcut);
  connect(find_, &QLineEdit::textChanged, this, [this] { findNext(true, true); });
  connect(find_, &QLineEdit::returnPressed, this, [this] { findNext(!(QGuiApplication::keyboardModifiers() & Qt::ShiftModifier)); });
  connect(prev, &QToolButton::clicked, this, [this] { findNext(false); });
  connect(next, &QToolButton::clicked, this, [this] { findNext(true); });
  connect(this, &QTabWidget::currentChanged, this, [this] { countMatches(); });
}

QString CodeView::findStatus() const { return found_->text(); }

QPlainTextEdit* CodeView::currentEditor() const { return qobject_cast<QPlainTextEdit*>(currentWidget()); }

int CodeView::countMatches() {
  QPlainTextEdit* e = currentEditor();
  QString text = find_->text();
  if (!e || text.isEmpty()) {
    found_->clear();
    return 0;
  }
  int n = static_cast<int>(e->toPlainText().count(text, Qt::CaseInsensitive));
  int at = 0;  // which match the cursor is on
  if (e->textCursor().hasSelection()) {
    QString before = e->toPlainText().left(e->textCursor().selectionStart());
    at = static_cast<int>(before.count(text, Qt::CaseInsensitive)) + 1;
  }
  found_->setText(n == 0 ? QString("0 found") : at ? QString("%1 of %2").arg(at).arg(n) : QString("%1 found").arg(n));
  return n;
}

bool CodeView::findNext(bool forward, bool fromStart) {
  QPlainTextEdit* e = currentEditor();
  QString text = find_->text();
  if (!e || text.isEmpty()) return countMatches(), false;
  flushAll();
  e->blockSignals(true);  // moving the cursor is not a click on a kernel
  if (fromStart) {
    QTextCursor c = e->textCursor();
    c.setPosition(c.selectionStart());
    e->setTextCursor(c);
  }
  QTextDocument::FindFlags flags;
  if (!forward) flags |= QTextDocument::FindBackward;
  bool ok = e->find(text, flags);
  if (!ok) {  // wrap around
    QTextCursor c = e->textCursor();
    c.movePosition(forward ? QTextCursor::Start : QTextCursor::End);
    e->setTextCursor(c);
    ok = e->find(text, flags);
  }
  e->blockSignals(false);
  e->centerCursor();
  countMatches();
  return ok;
}

void CodeView::clearAll() {
  for (auto& [t, tab] : tabs_) tab.edit->deleteLater();
  tabs_.clear();
  clear();
}

QPlainTextEdit* CodeView::editor(const QString& title) {
  auto it = tabs_.find(title);
  if (it == tabs_.end()) return nullptr;
  apply(it->second);
  return it->second.edit;
}

void CodeView::setCode(const QString& title, const QString& language, const QString& text, const std::vector<KernelSpan>& kernels) {
  Tab& tab = tabs_[title];
  if (!tab.edit) {
    tab.edit = new CodeEditor;
    tab.edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    tab.highlighter = new CodeHighlighter(tab.edit->document(), language);
    addTab(tab.edit, title);
    QPlainTextEdit* edit = tab.edit;
    connect(edit, &QPlainTextEdit::cursorPositionChanged, this, [this, edit, title] {
      int line = edit->textCursor().blockNumber() + 1;
      for (const KernelSpan& k : tabs_[title].kernels)
        if (line >= k.firstLine && line <= k.lastLine) {
          emit kernelClicked(k.name, k.origins);
          return;
        }
    });
  }
  tab.kernels = kernels;
  // A 12-layer model's four tabs take ~150 ms to set at once: one tab per event keeps the window
  // responsive (editor() and the highlighting calls set a pending text at once when asked).
  tab.pending = text;
  tab.hasPending = true;
  if (!flushScheduled_) {
    flushScheduled_ = true;
    QTimer::singleShot(0, this, &CodeView::flushOne);
  }
}

void CodeView::apply(Tab& tab) {
  if (!tab.hasPending) return;
  tab.hasPending = false;
  auto* highlighter = static_cast<CodeHighlighter*>(tab.highlighter);
  highlighter->setActive(false);
  tab.edit->blockSignals(true);
  tab.edit->setPlainText(tab.pending);
  tab.edit->blockSignals(false);
  if (auto* code = qobject_cast<CodeEditor*>(tab.edit)) code->updateGutter();
  tab.pending.clear();
  highlighter->setActive(true);
  highlighter->highlightInSlices(tab.edit->document()->firstBlock());
}

void CodeView::flushOne() {
  flushScheduled_ = false;
  Tab* next = nullptr;
  for (auto& [title, tab] : tabs_)
    if (tab.hasPending && (!next || tab.edit == currentWidget())) next = &tab;
  if (!next) return;
  apply(*next);
  for (auto& [title, tab] : tabs_)
    if (tab.hasPending) {
      flushScheduled_ = true;
      QTimer::singleShot(0, this, &CodeView::flushOne);
      break;
    }
}

void CodeView::flushAll() {
  for (auto& [title, tab] : tabs_) apply(tab);
}

int CodeView::highlightOrigins(const std::set<int64_t>& traced) {
  flushAll();
  int currentLines = 0;
  QPlainTextEdit* withHits = nullptr;
  for (auto& [title, tab] : tabs_) {
    QList<QTextEdit::ExtraSelection> marks;
    int firstHit = 0;
    for (const KernelSpan& k : tab.kernels) {
      bool hit = std::any_of(k.origins.begin(), k.origins.end(), [&](int64_t o) { return traced.count(o) > 0; });
      if (!hit) continue;
      if (!firstHit) firstHit = k.firstLine;
      for (int line = k.firstLine; line <= k.lastLine; ++line) {
        QTextEdit::ExtraSelection sel;
        sel.format.setBackground(QColor("#fff2b3"));
        sel.format.setProperty(QTextFormat::FullWidthSelection, true);
        sel.cursor = QTextCursor(tab.edit->document()->findBlockByNumber(line - 1));
        marks.push_back(sel);
      }
    }
    tab.edit->setExtraSelections(marks);
    if (firstHit) {
      QTextCursor c(tab.edit->document()->findBlockByNumber(firstHit - 1));
      tab.edit->blockSignals(true);
      tab.edit->setTextCursor(c);
      tab.edit->blockSignals(false);
      tab.edit->centerCursor();
    }
    if (tab.edit == currentWidget()) currentLines = static_cast<int>(marks.size());
    if (!marks.isEmpty() && !withHits) withHits = tab.edit;
  }
  // the code of what was selected, not a tab that has none of it
  if (currentLines == 0 && withHits) {
    setCurrentWidget(withHits);
    for (const auto& [title, tab] : tabs_)
      if (tab.edit == withHits) currentLines = static_cast<int>(tab.edit->extraSelections().size());
  }
  return currentLines;
}

std::vector<int64_t> CodeView::originsOfKernel(const QString& graph, const QString& name) const {
  for (const auto& [title, tab] : tabs_)
    if (title.endsWith(" " + graph))
      for (const KernelSpan& k : tab.kernels)
        if (k.name == name) return k.origins;
  return {};
}

QStringList CodeView::kernelsComputing(const std::set<int64_t>& traced) const {
  QStringList names;
  for (const auto& [title, tab] : tabs_)
    for (const KernelSpan& k : tab.kernels)
      if (!names.contains(k.name) && std::any_of(k.origins.begin(), k.origins.end(), [&](int64_t o) { return traced.count(o) > 0; }))
        names << k.name;
  return names;
}

}  // namespace fusebox
