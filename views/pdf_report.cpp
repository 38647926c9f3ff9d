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

void writePdfReportHeadless(const SessionStore& store, int64_t session, const std::string& path, bool includeCompiled) {
  if (QGuiApplication::instance()) return writePdfReport(store, session, QString::fromStdString(path));
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  int argc = 1;
  char name[] = "fusebox";
  char* argv[] = {name, nullptr};
  QGuiApplication app(argc, argv);
  writePdfReport(store, session, QString::fromStdString(path), includeCompiled);
}

void writePdfReport(const SessionStore& store, int64_t session, const QString& path, bool includeCompiled) {
  QPdfWriter pdf(path);
  pdf.setPageSize(QPageSize(QPageSize::A4));
  pdf.setPageOrientation(QPageLayout::Landscape);
  pdf.setResolution(96);
  pdf.setTitle("Fusebox report");
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
  // Tables and code as text (QTextDocument does not draw inline SVG, so the graphs are dropped).
  // QTextDocument interprets HTML: everything from the session in it was escaped by htmlReport.
  ReportOptions textOnly;
  textOnly.graphs = false;
  textOnly.compiledCode = includeCompiled;
  textOnly.ownTargetOnly = !includeCompiled;
  QString html = QString::fromStdString(htmlReport(store, session, textOnly));
  html.replace("<pre>", "<pre style='white-space: pre-wrap; font-size: 7pt'>");  // long code lines wrap, not cut at the margin
  html.replace(QRegularExpression("<svg.*?</svg>", QRegularExpression::DotMatchesEverythingOption), "");  // the profile charts
  QTextDocument doc;
  doc.setHtml(html);
  doc.setPageSize(page.size());
  if (!first) pdf.newPage();
  for (int p = 0; p < doc.pageCount(); ++p) {
    if (p) pdf.newPage();
    painter.save();
    painter.translate(0, -p * page.height());
    doc.drawContents(&painter, QRectF(0, p * page.height(), page.width(), page.height()));
    painter.restore();
  }
  painter.end();
}

}  // namespace fusebox
