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
#include <QSplitter>
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
    } else if (language == "sass") {
      rules_.push_back({QRegularExpression("\\b(U?R[0-9]+|U?P[0-9T]|RZ|URZ|SR_[A-Z_.]+)\\b"), fmt("#1f4e99")});
      rules_.push_back({QRegularExpression("/\\*[0-9a-f]+\\*/"), fmt("#9c5d00")});
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

QPlainTextEdit* CodeView::currentEditor() const {
  for (const auto& [title, tab] : tabs_)
    if (tab.page == currentWidget()) return tab.edit;
  return nullptr;
}

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
  for (auto& [t, tab] : tabs_) tab.page->deleteLater();
  tabs_.clear();
  clear();
  linkStatus_.clear();
}

QPlainTextEdit* CodeView::editor(const QString& title) {
  auto it = tabs_.find(title);
  if (it == tabs_.end()) return nullptr;
  apply(it->second);
  return it->second.edit;
}

QPlainTextEdit* CodeView::sourceBeside(const QString& title) {
  auto it = tabs_.find(title);
  return it == tabs_.end() ? nullptr : it->second.mirror;
}

CodeView::Tab& CodeView::tabFor(const QString& title, const QString& language, bool listing) {
  Tab& tab = tabs_[title];
  if (!tab.edit) {
    tab.language = language;
    tab.edit = new CodeEditor;
    tab.edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    tab.highlighter = new CodeHighlighter(tab.edit->document(), language);
    tab.page = tab.edit;
    if (listing) {  // its source on the left, as Compiler Explorer shows it
      auto* split = new QSplitter(Qt::Horizontal);
      tab.mirror = new CodeEditor;
      tab.mirror->setFont(tab.edit->font());
      tab.mirror->setToolTip("The source this listing was compiled from: click a line to mark what it compiled to");
      split->addWidget(tab.mirror);
      split->addWidget(tab.edit);
      split->setStretchFactor(0, 1);
      split->setStretchFactor(1, 1);
      tab.page = split;
      connect(tab.mirror, &QPlainTextEdit::cursorPositionChanged, this, [this, title] {
        const Tab& t = tabs_[title];
        linkAndSelect(t.sourceTitle, t.mirror->textCursor().blockNumber() + 1, title, true);
      });
    }
    addTab(tab.page, title);
    connect(tab.edit, &QPlainTextEdit::cursorPositionChanged, this, [this, title] { onCursorMoved(title); });
  }
  return tab;
}

void CodeView::setCode(const QString& title, const QString& language, const QString& text, const std::vector<KernelSpan>& kernels) {
  Tab& tab = tabFor(title, language);
  tab.kernels = kernels;
  // A 12-layer model's four tabs take ~150 ms to set at once: one tab per event keeps the window
  // responsive (editor() and the highlighting calls set a pending text at once when asked).
  tab.pending = text;
  tab.hasPending = true;
  if (!flushScheduled_) {
    flushScheduled_ = true;
    QTimer::singleShot(0, this, &CodeView::flushOne);
  }
  for (auto& [t, listing] : tabs_)
    if (listing.sourceTitle == title) showSourceBeside(listing);
}

void CodeView::setListing(const QString& title, const QString& language, const QString& sourceTitle, const QString& text,
                          std::vector<int> sourceLines) {
  tabFor(title, language, true);
  setCode(title, language, text);
  Tab& tab = tabs_[title];
  tab.sourceTitle = sourceTitle;
  tab.sourceLines = std::move(sourceLines);
  showSourceBeside(tab);
}

// A copy of the source's text (an editor of its own: two views of one document scroll as one).
void CodeView::showSourceBeside(Tab& listing) {
  auto source = tabs_.find(listing.sourceTitle);
  bool shown = source != tabs_.end() && !source->second.mirror;
  listing.mirror->setVisible(shown);
  if (!shown) return;
  const Tab& s = source->second;
  if (!listing.mirrorHighlighter) listing.mirrorHighlighter = new CodeHighlighter(listing.mirror->document(), s.language);
  listing.mirror->blockSignals(true);
  listing.mirror->setPlainText(s.hasPending ? s.pending : s.edit->toPlainText());
  listing.mirror->blockSignals(false);
  if (auto* code = qobject_cast<CodeEditor*>(listing.mirror)) code->updateGutter();
}

std::pair<QString, int> CodeView::sourceOf(const QString& title, int line) const {
  auto it = tabs_.find(title);
  if (it == tabs_.end()) return {};
  const Tab& tab = it->second;
  if (tab.sourceTitle.isEmpty()) return {title, line};
  if (line < 1 || line > static_cast<int>(tab.sourceLines.size())) return {tab.sourceTitle, 0};
  return {tab.sourceTitle, tab.sourceLines[static_cast<size_t>(line - 1)]};
}

const KernelSpan* CodeView::kernelAt(const QString& sourceTitle, int sourceLine) const {
  auto it = tabs_.find(sourceTitle);
  if (it == tabs_.end()) return nullptr;
  for (const KernelSpan& k : it->second.kernels)
    if (sourceLine >= k.firstLine && sourceLine <= k.lastLine) return &k;
  return nullptr;
}

void CodeView::onCursorMoved(const QString& title) {
  auto [source, line] = sourceOf(title, tabs_[title].edit->textCursor().blockNumber() + 1);
  linkAndSelect(source, line, title, false);
}

void CodeView::linkAndSelect(const QString& sourceTitle, int sourceLine, const QString& from, bool fromBeside) {
  link(sourceTitle, sourceLine, from, fromBeside);
  if (const KernelSpan* k = kernelAt(sourceTitle, sourceLine)) emit kernelClicked(k->name, k->origins);
}

namespace {

void moveTo(QPlainTextEdit* e, int line) {
  e->blockSignals(true);  // not a click
  e->setTextCursor(QTextCursor(e->document()->findBlockByNumber(line - 1)));
  e->blockSignals(false);
  e->centerCursor();
}

}  // namespace

// Marks, in the source tab and its listings, every line compiled from `sourceLine`, and brings
// the first one into view in the editors not being read (the editor clicked keeps its cursor:
// tab `from`'s listing, or the source beside it when `fromBeside`).
void CodeView::link(const QString& sourceTitle, int sourceLine, const QString& from, bool fromBeside) {
  const size_t kMaxMarks = 4000;  // a prelude helper inlined everywhere
  bool listed = std::any_of(tabs_.begin(), tabs_.end(), [&](const auto& t) { return t.second.sourceTitle == sourceTitle && !sourceTitle.isEmpty(); });
  if (!listed) sourceLine = 0;  // nothing compiled from this source is shown: nothing to link
  QStringList counts;
  for (auto& [title, tab] : tabs_) {
    bool isSource = title == sourceTitle, isListing = !tab.sourceTitle.isEmpty() && tab.sourceTitle == sourceTitle;
    tab.linkLines.clear();
    tab.mirrorLine = 0;
    if (sourceLine > 0 && (isSource || isListing)) {
      apply(tab);
      if (isSource) tab.linkLines.push_back(sourceLine);
      for (size_t i = 0; i < tab.sourceLines.size() && tab.linkLines.size() < kMaxMarks; ++i)
        if (tab.sourceLines[i] == sourceLine) tab.linkLines.push_back(static_cast<int>(i) + 1);
      if (isListing) {
        counts << QString("%1 in %2").arg(tab.linkLines.size()).arg(title);
        tab.mirrorLine = sourceLine;
        if (tab.mirror && !(fromBeside && title == from)) moveTo(tab.mirror, sourceLine);
      }
      if (!tab.linkLines.empty() && (title != from || fromBeside)) moveTo(tab.edit, tab.linkLines.front());
    }
    showMarks(tab);
  }
  QString status = sourceLine > 0 && !counts.isEmpty() ? QString("%1 line %2: %3").arg(sourceTitle).arg(sourceLine).arg(counts.join(", ")) : QString();
  if (status != linkStatus_) {
    linkStatus_ = status;
    emit linked(status);
  }
}

namespace {

QList<QTextEdit::ExtraSelection> marksOn(QPlainTextEdit* e, const std::vector<int>& lines, const char* color) {
  QList<QTextEdit::ExtraSelection> out;
  for (int line : lines) {
    QTextBlock b = e->document()->findBlockByNumber(line - 1);
    if (!b.isValid()) continue;
    QTextEdit::ExtraSelection sel;
    sel.format.setBackground(QColor(color));
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    sel.cursor = QTextCursor(b);
    out.push_back(sel);
  }
  return out;
}

const char* const kKernelColor = "#fff2b3";  // the selection's kernels
const char* const kLinkColor = "#cfe3ff";    // the lines of one source line

}  // namespace

void CodeView::showMarks(Tab& tab) {
  tab.edit->setExtraSelections(marksOn(tab.edit, tab.kernelLines, kKernelColor) + marksOn(tab.edit, tab.linkLines, kLinkColor));
  if (!tab.mirror) return;
  auto source = tabs_.find(tab.sourceTitle);  // the source's kernel marks, as its own tab has them
  std::vector<int> kernel = source != tabs_.end() ? source->second.kernelLines : std::vector<int>{};
  std::vector<int> link = tab.mirrorLine ? std::vector<int>{tab.mirrorLine} : std::vector<int>{};
  tab.mirror->setExtraSelections(marksOn(tab.mirror, kernel, kKernelColor) + marksOn(tab.mirror, link, kLinkColor));
}

int CodeView::linkedLines(const QString& title) const {
  auto it = tabs_.find(title);
  return it == tabs_.end() ? 0 : static_cast<int>(it->second.linkLines.size());
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
    if (tab.hasPending && (!next || tab.page == currentWidget())) next = &tab;
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
  auto hit = [&](const KernelSpan& k) { return std::any_of(k.origins.begin(), k.origins.end(), [&](int64_t o) { return traced.count(o) > 0; }); };
  for (auto& [title, tab] : tabs_) {
    tab.kernelLines.clear();
    tab.linkLines.clear();
    tab.mirrorLine = 0;
    if (tab.sourceTitle.isEmpty()) {
      for (const KernelSpan& k : tab.kernels)
        if (hit(k))
          for (int line = k.firstLine; line <= k.lastLine; ++line) tab.kernelLines.push_back(line);
    } else {  // a listing: the lines compiled from those kernels' lines
      auto source = tabs_.find(tab.sourceTitle);
      std::vector<std::pair<int, int>> spans;
      if (source != tabs_.end())
        for (const KernelSpan& k : source->second.kernels)
          if (hit(k)) spans.push_back({k.firstLine, k.lastLine});
      for (size_t i = 0; i < tab.sourceLines.size() && !spans.empty(); ++i)
        if (std::any_of(spans.begin(), spans.end(), [&](const auto& s) { return tab.sourceLines[i] >= s.first && tab.sourceLines[i] <= s.second; }))
          tab.kernelLines.push_back(static_cast<int>(i) + 1);
    }
  }
  int currentLines = 0;
  QWidget* withHits = nullptr;
  for (auto& [title, tab] : tabs_) {
    showMarks(tab);
    if (!tab.kernelLines.empty()) {
      moveTo(tab.edit, tab.kernelLines.front());
      if (tab.mirror) {
        auto source = tabs_.find(tab.sourceTitle);
        if (source != tabs_.end() && !source->second.kernelLines.empty()) moveTo(tab.mirror, source->second.kernelLines.front());
      }
    }
    if (tab.page == currentWidget()) currentLines = static_cast<int>(tab.kernelLines.size());
    if (!tab.kernelLines.empty() && !withHits) withHits = tab.page;
  }
  if (!linkStatus_.isEmpty()) {
    linkStatus_.clear();
    emit linked(linkStatus_);
  }
  // the code of what was selected, not a tab that has none of it
  if (currentLines == 0 && withHits) {
    setCurrentWidget(withHits);
    for (const auto& [title, tab] : tabs_)
      if (tab.page == withHits) currentLines = static_cast<int>(tab.kernelLines.size());
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
