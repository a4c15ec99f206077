// sqlite_db: a small RAII layer over the SQLite C API for the OpenClaw import/export (CAF-free).
// - open_read_only(path): never writes to the database or its directory. When neither
//   "<path>-wal" nor "<path>-journal" exists (no connection has the database open in WAL mode,
//   nothing uncheckpointed, no write in progress), it opens "file:<path>?mode=ro&immutable=1":
//   no locks, no -wal/-shm created. Otherwise (a live or crashed OpenClaw) it opens
//   "file:<path>?mode=ro" so the WAL is read under SQLite's locking, with a busy timeout; SQLite
//   then uses the existing -shm.
// - open_create(path): a new database file (fails if one exists), for the exporter.
// - Every error names the database file and the SQLite message; SQLITE_BUSY / SQLITE_LOCKED
//   come back as errc::locked ("database is locked: ... another process (a running OpenClaw?)
//   is writing it; try again when it is idle"); SQLITE_CORRUPT/NOTADB as errc::corrupt.
// - statement: prepare once, bind (1-based), step() -> true for a row, false when done; column
//   accessors (0-based) copy nothing for text/blob views valid until the next step/reset.
// Not thread-safe: one owner.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace sessionrt::openclaw {

class sqlite_db;

// Registers on `h` the SQL functions OpenClaw's schema uses that this SQLite may lack
// (octet_length before 3.43). Every connection sqlite_db opens has them.
void add_compat_functions(sqlite3* h);

class statement {
 public:
  statement() = default;
  statement(statement&& o) noexcept;
  statement& operator=(statement&& o) noexcept;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();

  status bind_text(int i, std::string_view v);
  status bind_int(int i, std::int64_t v);
  status bind_blob(int i, std::string_view bytes);
  status bind_null(int i);
  status bind_opt_text(int i, const std::optional<std::string>& v) { return v ? bind_text(i, *v) : bind_null(i); }
  status bind_opt_int(int i, std::optional<std::int64_t> v) { return v ? bind_int(i, *v) : bind_null(i); }
  // true: a row is ready; false: done.
  result<bool> step();
  // step() that must finish without a row (INSERT/UPDATE).
  status run();
  status reset();

  bool is_null(int col) const;
  std::int64_t column_int(int col) const;
  std::string_view column_text(int col) const;
  std::string_view column_blob(int col) const;
  std::optional<std::string> column_opt_text(int col) const;
  std::optional<std::int64_t> column_opt_int(int col) const;

 private:
  friend class sqlite_db;

// Registers on `h` the SQL functions OpenClaw's schema uses that this SQLite may lack
// (octet_length before 3.43). Every connection sqlite_db opens has them.
void add_compat_functions(sqlite3* h);
  statement(sqlite_db* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  sqlite_db* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
};

class sqlite_db {
 public:
  static result<std::unique_ptr<sqlite_db>> open_read_only(const std::string& path, int busy_timeout_ms = 5000);
  static result<std::unique_ptr<sqlite_db>> open_create(const std::string& path);
  ~sqlite_db();
  sqlite_db(const sqlite_db&) = delete;
  sqlite_db& operator=(const sqlite_db&) = delete;

  const std::string& path() const { return path_; }
  status exec(const char* sql);
  result<statement> prepare(std::string_view sql);
  // The status for SQLite result code `rc` of `what`, naming the file (see the contract above).
  status error(int rc, std::string_view what) const;
  // PRAGMA user_version.
  result<std::int64_t> user_version();
  result<bool> has_table(std::string_view name);

 private:
  sqlite_db(sqlite3* h, std::string path) : h_(h), path_(std::move(path)) {}
  sqlite3* h_ = nullptr;
  std::string path_;
};

}  // namespace sessionrt::openclaw
