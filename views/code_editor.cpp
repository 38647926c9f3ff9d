#include "views/code_editor.h"

#include <QPainter>
#include <QTextBlock>

namespace fusebox {

namespace {

class Gutter : public QWidget {
public:
  explicit Gutter(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
  QSize sizeHint() const override { return {editor_->gutterWidth(), 0}; }

protected:
  void paintEvent(QPaintEvent* e) override { editor_->paintGutter(e); }

private:
  CodeEditor* editor_;
};

}  // namespace

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), gutter_(new Gutter(this)) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& r, int dy) {
    if (dy) gutter_->scroll(0, dy);
    else gutter_->update(0, r.y(), gutter_->width(), r.height());
  });
  setViewportMargins(gutterWidth(), 0, 0, 0);
}

int CodeEditor::gutterWidth() const {
  int digits = QString::number(std::max(1, blockCount())).size();
  return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void CodeEditor::updateGutter() {
  setViewportMargins(gutterWidth(), 0, 0, 0);  // the text starts right of the numbers
  QRect cr = contentsRect();
  gutter_->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
  gutter_->update();
}

void CodeEditor::resizeEvent(QResizeEvent* e) {
  QPlainTextEdit::resizeEvent(e);
  updateGutter();
}

void CodeEditor::changeEvent(QEvent* e) {
  QPlainTextEdit::changeEvent(e);
  if (e->type() == QEvent::FontChange) updateGutter();
}

void CodeEditor::paintGutter(QPaintEvent* e) {
  QPainter p(gutter_);
  p.fillRect(e->rect(), QColor("#f3f3f3"));
  p.setPen(QColor("#9a9a9a"));
  p.setFont(font());
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  for (; block.isValid() && top <= e->rect().bottom(); block = block.next()) {
    int height = qRound(blockBoundingRect(block).height());
    if (block.isVisible() && top + height >= e->rect().top())
      p.drawText(0, top, gutter_->width() - 5, fontMetrics().height(), Qt::AlignRight, QString::number(block.blockNumber() + 1));
    top += height;
  }
}

}  // namespace fusebox
