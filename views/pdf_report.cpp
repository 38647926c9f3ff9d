#include "views/pdf_report.h"

#include <QGuiApplication>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QAbstractTextDocumentLayout>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>
#include <QTextTable>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/pipeline/stage_table.h"
#include "report/graph_fold.h"
#include "report/graph_layout.h"
#include "report/html_report.h"
#include "report/stage_view.h"

namespace fusebox {

namespace {

// Runs `write` inside a Qt application (on the offscreen platform when there is no display) when
// the program has none: the CLI's `report -o FILE.pdf`.
template <class Write>
void withGuiApplication(Write write) {
  if (QGuiApplication::instance()) return write();
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  int argc = 1;
  char name[] = "fusebox";
  char* argv[] = {name, nullptr};
  QGuiApplication app(argc, argv);
  write();
}

// Where a page may end, in document coordinates: `rows` after a line of text or after a table row
// (never inside one, so a row's cells stay together); `lines` after any line, for a row taller
// than a page.
struct TableSpan {
  double top = 0, headerBottom = 0, bottom = 0;  // the table, and its first (header) row's end
};
struct PageBreaks {
  std::vector<double> rows, lines;
  std::vector<TableSpan> tables;  // outermost tables, in document order
};

PageBreaks pageBreaks(QTextDocument& doc) {
  PageBreaks out;
  std::map<std::pair<QTextTable*, int>, double> rowBottom;
  QAbstractTextDocumentLayout* layout = doc.documentLayout();
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    QRectF r = layout->blockBoundingRect(b);
    QTextTable* table = QTextCursor(b).currentTable();
    // the outermost table: a row of a table inside a cell is not a row of the page
    for (QTextFrame* f = table ? table->parentFrame() : nullptr; f; f = f->parentFrame())
      if (auto* outer = qobject_cast<QTextTable*>(f)) table = outer;
    QTextLayout* lines = b.layout();
    for (int i = 0; lines && i < lines->lineCount(); ++i) {
      QTextLine l = lines->lineAt(i);
      out.lines.push_back(r.top() + l.y() + l.height());
      if (!table) out.rows.push_back(out.lines.back());
    }
    if (table) {
      double& bottom = rowBottom[{table, table->cellAt(b.position()).row()}];
      bottom = std::max(bottom, r.bottom());
    }
  }
  for (const auto& [row, bottom] : rowBottom) {
    out.rows.push_back(bottom);
    if (row.second != 0) continue;
    QRectF frame = layout->frameBoundingRect(row.first);
    out.tables.push_back({frame.top(), bottom, frame.bottom()});
  }
  std::sort(out.tables.begin(), out.tables.end(), [](const TableSpan& a, const TableSpan& b) { return a.top < b.top; });
  std::sort(out.rows.begin(), out.rows.end());
  std::sort(out.lines.begin(), out.lines.end());
  return out;
}

// The last break in `breaks` after `top` + a quarter page and within the page; 0 when none.
double lastBreak(const std::vector<double>& breaks, double top, double pageHeight) {
  auto next = std::upper_bound(breaks.begin(), breaks.end(), top + pageHeight);
  if (next == breaks.begin()) return 0;
  double at = *std::prev(next);
  return at > top + pageHeight / 4 ? at : 0;
}

// HTML as text pages (QTextDocument does not draw inline SVG: charts are named instead). The HTML
// comes from report/html_report, which escaped everything taken from the session. Laid out as one
// long page and cut at line and row ends (QTextDocument's own pages cut table rows in half).
void drawHtmlPages(QPdfWriter& pdf, QPainter& painter, const QRectF& page, QString html, bool newPageFirst) {
  html.replace("<pre>", "<pre style='white-space: pre-wrap; font-size: 7pt'>");  // long code lines wrap, not cut at the margin
  html.replace(QRegularExpression("<svg.*?</svg>", QRegularExpression::DotMatchesEverythingOption),
               "<p class=meta>(a chart: in the HTML report and the GUI's Profile tab)</p>");
  QTextDocument doc;
  doc.setHtml(html);
  doc.setPageSize(QSizeF(page.width(), 1e9));  // one page: this function cuts it
  PageBreaks breaks = pageBreaks(doc);
  const double height = breaks.lines.empty() ? doc.documentLayout()->documentSize().height() : breaks.lines.back();  // past it: margin only
  bool first = true;
  for (double top = 0; top < height - 1;) {
    // A page that starts inside a table repeats the table's header row above the rest of it.
    const TableSpan* table = nullptr;
    for (const TableSpan& t : breaks.tables)
      if (t.headerBottom < top + 1 && top < t.bottom - 1) table = &t;
    double header = table ? table->headerBottom - table->top : 0;
    if (header > page.height() / 4) header = 0, table = nullptr;
    double room = page.height() - header;
    double bottom = lastBreak(breaks.rows, top, room);
    if (!bottom) bottom = lastBreak(breaks.lines, top, room);  // a row taller than a page
    if (!bottom) bottom = top + room;
    if (!first || newPageFirst) pdf.newPage();
    first = false;
    // Clipped half a pixel inside the cut: the row above it would otherwise be drawn (invisible
    // but still text in the PDF, found twice by search and copy).
    auto draw = [&](double from, double to, double at) {
      painter.save();
      painter.translate(0, at - from);
      doc.drawContents(&painter, QRectF(0, from + 0.5, page.width(), to - from - 0.5));
      painter.restore();
    };
    if (table) draw(table->top, table->headerBottom, 0);
    draw(top, bottom, header);
    top = bottom;
  }
}

void setUpPdf(QPdfWriter& pdf, const QString& title) {
  pdf.setPageSize(QPageSize(QPageSize::A4));
  pdf.setPageOrientation(QPageLayout::Landscape);
  pdf.setResolution(96);
  pdf.setTitle(title);
}

}  // namespace

void writePdfReportHeadless(const SessionStore& store, int64_t session, const std::string& path, bool includeCompiled) {
  withGuiApplication([&] { writePdfReport(store, session, QString::fromStdString(path), includeCompiled); });
}

void writePdfComparison(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b, const QString& path) {
  QPdfWriter pdf(path);
  setUpPdf(pdf, "Fusebox comparison");
  QPainter painter;
  if (!painter.begin(&pdf)) throw Error("cannot write " + path.toStdString());
  ReportOptions textOnly;
  textOnly.graphs = false;
  drawHtmlPages(pdf, painter, QRectF(0, 0, pdf.width(), pdf.height()), QString::fromStdString(htmlComparisonReport(storeA, a, storeB, b, textOnly)), false);
  painter.end();
}

void writePdfComparisonHeadless(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b, const std::string& path) {
  withGuiApplication([&] { writePdfComparison(storeA, a, storeB, b, QString::fromStdString(path)); });
}

namespace {

// A graph drawn smaller than this (Graphviz points to page pixels) no longer reads on paper; one
// that would be is drawn at kTileScale (less only when wider than the page) across pages, the
// page cut between them like a poster's.
constexpr double kLegibleScale = 0.5;
constexpr double kTileScale = 0.75;
constexpr int kMaxTilesWhole = 3;      // more, and a graph with module scopes is folded instead
constexpr int kMaxTiles = 4;           // per drawing; more would shrink it below kTileScale
constexpr size_t kMaxScopePages = 12;  // per graph; the overview names the rest
constexpr double kHeader = 70;         // title and note

struct DrawnGraph {
  std::shared_ptr<QSvgRenderer> svg;  // parsed once: measured for the tiling, then drawn
  std::string notDrawn;               // or why there is none
};

DrawnGraph layOut(const std::string& dot) {
  // The dot is bounded and rebuilt before layout (report/graph_layout.h); one that cannot be drawn
  // is named on its page instead of failing the whole report.
  try {
    LayoutLimits limits;
    limits.maxNodes = std::min(limits.maxNodes, ReportOptions{}.maxDrawnNodes);
    return {std::make_shared<QSvgRenderer>(QByteArray::fromStdString(renderSvg(dot, limits))), ""};
  } catch (const LayoutError& e) {
    return {nullptr, std::string("graph not drawn: ") + e.what()};
  }
}

struct Tiling {
  double scale = 1;
  int pages = 1;
  bool legible = true;  // at kLegibleScale or more (a graph wider than the page may not be)
};

Tiling tilingFor(const QSizeF& size, const QRectF& area) {
  if (size.isEmpty()) return {};
  double fit = std::min({area.width() / size.width(), area.height() / size.height(), 1.5});
  if (fit >= kLegibleScale) return {fit, 1, true};
  double s = std::min(kTileScale, area.width() / size.width());
  int pages = static_cast<int>(std::ceil(size.height() * s / area.height()));
  if (pages > kMaxTiles) {
    pages = kMaxTiles;
    s = area.height() * kMaxTiles / size.height();
  }
  return {s, std::max(pages, 1), s >= kLegibleScale};
}

Tiling tilingFor(const DrawnGraph& g, const QRectF& area) { return g.svg ? tilingFor(g.svg->defaultSize(), area) : Tiling{}; }

// `g` on new pages, each under the title (plain text: session names cannot add markup) and the
// note, cut across as many pages as its tiling says.
void drawGraphPages(QPdfWriter& pdf, QPainter& painter, const QRectF& page, const QString& title, const QString& note, const DrawnGraph& g) {
  const QRectF area(0, kHeader, page.width(), page.height() - kHeader);
  Tiling t = tilingFor(g, area);
  for (int i = 0; i < t.pages; ++i) {
    pdf.newPage();
    painter.setFont(QFont("Helvetica", 12, QFont::Bold));
    painter.drawText(QRectF(0, 0, page.width(), 24), t.pages > 1 ? QString("%1 (part %2 of %3)").arg(title).arg(i + 1).arg(t.pages) : title);
    painter.setFont(QFont("Helvetica", 9));
    painter.drawText(QRectF(0, 30, page.width(), kHeader - 32), Qt::TextWordWrap, g.svg ? note : QString::fromStdString(g.notDrawn));
    if (!g.svg) return;
    // The drawing keeps the viewBox's exact aspect: defaultSize() is rounded to whole pixels, and a
    // scale that differs by 0.02% between x and y makes Qt's PDF engine turn every stroke into a
    // filled outline (node labels stay glyph outlines either way: Qt SVG draws text as paths).
    QSizeF size = g.svg->defaultSize(), box = g.svg->viewBoxF().size();
    double w = size.width() * t.scale, h = box.width() > 0 ? w * box.height() / box.width() : size.height() * t.scale;
    painter.save();
    painter.setClipRect(area);
    g.svg->render(&painter, QRectF(area.x(), area.y() - i * area.height(), w, h));
    painter.restore();
  }
}

// A stage graph's pages: itself when it reads on a few pages; else, folded by module scope as the
// GUI opens it, an overview, then each of the overview's boxes opened on pages of its own.
void drawGraph(QPdfWriter& pdf, QPainter& painter, const QRectF& page, const QString& title, const GraphViewData& g) {
  const QRectF area(0, kHeader, page.width(), page.height() - kHeader);
  DrawnGraph whole = layOut(g.dot);
  Tiling t = tilingFor(whole, area);
  if ((t.legible && t.pages <= kMaxTilesWhole) || g.scopes.empty()) return drawGraphPages(pdf, painter, page, title, "", whole);
  ScopeFolding folding(parseDot(g.dot), g.scopes, g.kernelClusters);
  std::set<std::string> overview = folding.initialExpansion();
  std::vector<std::string> boxes;  // the scopes the overview draws as boxes
  for (const std::string& scope : folding.scopes()) {
    std::vector<std::string> inside = folding.members(scope);
    if (!inside.empty() && folding.boxScope(folding.visibleItem(inside.front(), overview)) == scope) boxes.push_back(scope);
  }
  QString note = QString("Overview: %1 nodes, each module scope folded into one box; the pages after it open %2.")
                     .arg(static_cast<int>(folding.graph().nodes.size()))
                     .arg(boxes.size() > kMaxScopePages ? QString("the first %1 boxes (%2 more stay folded)").arg(kMaxScopePages).arg(boxes.size() - kMaxScopePages)
                                                        : QString("each box"));
  drawGraphPages(pdf, painter, page, title + " — overview", note, layOut(folding.foldedDot(overview)));
  for (size_t i = 0; i < boxes.size() && i < kMaxScopePages; ++i) {
    std::set<std::string> open = overview;
    for (const std::string& scope : folding.scopes())
      if (inScope(scope, boxes[i])) open.insert(scope);
    drawGraphPages(pdf, painter, page, title + " — scope " + QString::fromStdString(boxes[i]),
                   QString::fromStdString(folding.describeScope(boxes[i])), layOut(folding.foldedDot(open)));
  }
}

}  // namespace

// A summary first, then every stage's graphs, then the decisions, kernels and code.
void writePdfReport(const SessionStore& store, int64_t session, const QString& path, bool includeCompiled) {
  QPdfWriter pdf(path);
  setUpPdf(pdf, "Fusebox report");
  QPainter painter;
  if (!painter.begin(&pdf)) throw Error("cannot write " + path.toStdString());
  const QRectF page(0, 0, pdf.width(), pdf.height());
  SessionInfo info = store.session(session);
  ReportOptions text;
  text.graphs = false;
  text.compiledCode = includeCompiled;
  text.ownTargetOnly = !includeCompiled;
  text.preludeOut = !includeCompiled;
  text.part = ReportOptions::Part::Summary;
  drawHtmlPages(pdf, painter, page, QString::fromStdString(htmlReport(store, session, text)), false);
  for (const StageDescriptor& d : stageTable())
    for (const GraphViewData& g : stageView(d.stage, store.stageRecord(session, d.name)).graphs)
      drawGraph(pdf, painter, page, QString::fromStdString(info.model + " — " + d.name + ": " + g.name), g);
  text.part = ReportOptions::Part::Details;
  drawHtmlPages(pdf, painter, page, QString::fromStdString(htmlReport(store, session, text)), true);
  painter.end();
}

}  // namespace fusebox
