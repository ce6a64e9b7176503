// Schema migrations: forward only, numbered from 1, version kept in
// PRAGMA user_version. Adding migration N+1 is one new function appended to
// schema_migrations() in migrations.cpp.
#pragma once

#include <vector>

namespace winnow::store {

class Database;

struct Migration {
  int version;              // the schema version after applying it
  const char* description;  // one line, for errors and docs
  void (*apply)(Database& db);
};

// Sample ids per epoch of the content-hash index (2^18; migration 4): its
// key is (id >> kContentHashEpochBits, content_hash).
inline constexpr int kContentHashEpochBits = 18;

// Every migration in order; versions are 1, 2, 3, ... without gaps.
const std::vector<Migration>& schema_migrations();

// The version a fully migrated database has.
int latest_schema_version();

// Applies the pending migrations, each in its own write transaction together
// with its user_version bump. Re-checks the version under the write lock, so
// two processes opening a fresh file at once migrate it once. Throws naming
// the file when its version is newer than latest_schema_version().
void migrate(Database& db);

}  // namespace winnow::store
