// The two partitioners side by side on this session's joint graph: a one-line verdict (saved
// bytes of each, how many ops min-cut recomputes), then for each what it saves for the backward
// (largest first) and which forward ops it recomputes there. The config's own partitioner is
// marked. Shown from the partition stage's record; sessions from before it say so.
#pragma once

#include <QWidget>
#include <utility>
#include <vector>

class QLabel;
class QPlainTextEdit;

namespace fusebox {

class PartitionView : public QWidget {
  Q_OBJECT
public:
  explicit PartitionView(QWidget* parent = nullptr);
  // `sides`: title ("default", "mincut") -> text; `chosen`: the config's partitioner.
  void setPartitions(const QString& verdict, const std::vector<std::pair<QString, QString>>& sides, const QString& chosen);
  void clear(const QString& status);
  QString verdict() const;
  QString sideText(int i) const;
  QString sideTitle(int i) const;

private:
  QLabel* verdict_;
  QLabel* titles_[2];
  QPlainTextEdit* sides_[2];
};

}  // namespace fusebox
