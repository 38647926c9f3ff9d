// A PDF report of a session (QPdfWriter): the stage graphs drawn from Graphviz's SVG, then the
// HTML report's tables and code as text pages.
#pragma once

#include <QString>

#include "sessions/session_store.h"

namespace fusebox {

// Throws Error when the file cannot be written.
// `includeCompiled`: also the LLVM IR, assembly and PTX listings (hundreds of pages).
void writePdfReport(const SessionStore& store, int64_t session, const QString& path, bool includeCompiled = false);

// The same from a program without a Qt application (the CLI's `report -o FILE.pdf`): makes a
// QGuiApplication for the call, on the offscreen platform when there is no display.
void writePdfReportHeadless(const SessionStore& store, int64_t session, const std::string& path, bool includeCompiled = false);

// The comparison of two sessions (report/session_compare) as text pages: traced ops computed with
// different ops, decisions that differ, kernel time changes with their noise band.
void writePdfComparison(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b, const QString& path);
void writePdfComparisonHeadless(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b, const std::string& path);

}  // namespace fusebox
