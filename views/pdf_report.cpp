#include "views/pdf_report.h"

#include <QGuiApplication>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTextDocument>

#include "report/graph_layout.h"
#include "report/html_report.h"

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

// HTML as text pages (QTextDocument does not draw inline SVG, so charts are dropped). The HTML
// comes from report/html_report, which escaped everything taken from the session.
void drawHtmlPages(QPdfWriter& pdf, QPainter& painter, const QRectF& page, QString html, bool newPageFirst) {
  html.replace("<pre>", "<pre style='white-space: pre-wrap; font-size: 7pt'>");  // long code lines wrap, not cut at the margin
  html.replace(QRegularExpression("<svg.*?</svg>", QRegularExpression::DotMatchesEverythingOption), "");
  QTextDocument doc;
  doc.setHtml(html);
  doc.setPageSize(page.size());
  if (newPageFirst) pdf.newPage();
  for (int p = 0; p < doc.pageCount(); ++p) {
    if (p) pdf.newPage();
    painter.save();
    painter.translate(0, -p * page.height());
    doc.drawContents(&painter, QRectF(0, p * page.height(), page.width(), page.height()));
    painter.restore();
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

void writePdfReport(const SessionStore& store, int64_t session, const QString& path, bool includeCompiled) {
  QPdfWriter pdf(path);
  setUpPdf(pdf, "Fusebox report");
  QPainter painter;
  if (!painter.begin(&pdf)) throw Error("cannot write " + path.toStdString());
  const QRectF page(0, 0, pdf.width(), pdf.height());
  SessionInfo info = store.session(session);
  bool first = true;
  for (const StageArtifact& a : store.artifacts(session)) {
    if (a.format != "dot") continue;
    // The stored dot is bounded and rebuilt before layout (report/graph_layout.h); one that cannot
    // be drawn is named on its page instead of failing the whole report.
    std::string svgText, notDrawn;
    try {
      LayoutLimits limits;
      limits.maxNodes = std::min(limits.maxNodes, ReportOptions{}.maxDrawnNodes);
      svgText = renderSvg(a.body, limits);
    } catch (const LayoutError& e) {
      notDrawn = std::string("graph not drawn: ") + e.what();
    }
    QSvgRenderer svg(QByteArray::fromStdString(svgText));
    if (!first) pdf.newPage();
    first = false;
    painter.setFont(QFont("Helvetica", 12, QFont::Bold));
    // drawText takes plain text: session names cannot add markup here
    painter.drawText(QRectF(0, 0, page.width(), 24), QString::fromStdString(info.model + " — " + a.stage + ": " + a.graph));
    if (!notDrawn.empty()) {
      painter.setFont(QFont("Helvetica", 10));
      painter.drawText(QRectF(0, 30, page.width(), 60), Qt::TextWordWrap, QString::fromStdString(notDrawn));
      continue;
    }
    QSizeF size = svg.defaultSize();
    QRectF area(0, 30, page.width(), page.height() - 30);
    double s = std::min(area.width() / size.width(), area.height() / size.height());
    s = std::min(s, 1.5);
    svg.render(&painter, QRectF(area.x(), area.y(), size.width() * s, size.height() * s));
  }
  // Tables and code as text pages after the graphs.
  ReportOptions textOnly;
  textOnly.graphs = false;
  textOnly.compiledCode = includeCompiled;
  textOnly.ownTargetOnly = !includeCompiled;
  drawHtmlPages(pdf, painter, page, QString::fromStdString(htmlReport(store, session, textOnly)), !first);
  painter.end();
}

}  // namespace fusebox
