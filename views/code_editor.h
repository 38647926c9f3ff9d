// A read-only code editor with line numbers in a gutter (the generated code's comments and the
// kernel spans speak in line numbers, as compiler errors do).
#pragma once

#include <QPlainTextEdit>

namespace fusebox {

class CodeEditor : public QPlainTextEdit {
  Q_OBJECT
public:
  explicit CodeEditor(QWidget* parent = nullptr);
  int gutterWidth() const;
  void paintGutter(QPaintEvent* e);
  void updateGutter();  // after the text or the font changed (signals may have been blocked)

protected:
  void resizeEvent(QResizeEvent* e) override;
  void changeEvent(QEvent* e) override;

private:
  QWidget* gutter_;
};

}  // namespace fusebox
