// The session file's schema as an ordered list of migrations: migration i (1-based) takes a file
// from user_version i-1 to i. A new column or table is a new migration appended at the end; the
// ones already shipped never change.
#pragma once

#include <vector>

namespace fusebox {

// "FBX1": marks a SQLite file as a Fusebox session (PRAGMA application_id).
constexpr int kSessionApplicationId = 0x46425831;

const std::vector<const char*>& sessionMigrations();

}  // namespace fusebox
