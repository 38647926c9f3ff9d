// A PDF report of a session (QPdfWriter): the stage graphs drawn from Graphviz's SVG, then the
// HTML report's tables and code as text pages.
#pragma once

#include <QString>

#include "sessions/session_store.h"

namespace fusebox {

// Throws Error when the file cannot be written.
void writePdfReport(const SessionStore& store, int64_t session, const QString& path);

}  // namespace fusebox
