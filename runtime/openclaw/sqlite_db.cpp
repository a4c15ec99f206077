#include "runtime/openclaw/sqlite_db.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

namespace sessionrt::openclaw {

statement::statement(statement&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
statement& statement::operator=(statement&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}
statement::~statement() {
  if (s_) sqlite3_finalize(s_);
}

status statement::bind_text(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? status() : db_->error(rc, "binding a value");
}
status statement::bind_int(int i, std::int64_t v) {
  int rc = sqlite3_bind_int64(s_, i, v);
  return rc == SQLITE_OK ? status() : db_->error(rc, "binding a value");
}
status statement::bind_blob(int i, std::string_view bytes) {
  int rc = sqlite3_bind_blob64(s_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? status() : db_->error(rc, "binding a value");
}
status statement::bind_null(int i) {
  int rc = sqlite3_bind_null(s_, i);
  return rc == SQLITE_OK ? status() : db_->error(rc, "binding a value");
}
result<bool> statement::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->error(rc, fmt::format("running \"{:.60}\"", sqlite3_sql(s_)));
}
status statement::run() {
  auto r = step();
  if (!r.ok()) return r.error();
  sqlite3_reset(s_);
  return {};
}
status statement::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
  return {};
}
bool statement::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
std::int64_t statement::column_int(int col) const { return sqlite3_column_int64(s_, col); }
std::string_view statement::column_text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  int n = sqlite3_column_bytes(s_, col);
  return p ? std::string_view(p, static_cast<std::size_t>(n)) : std::string_view();
}
std::string_view statement::column_blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, col));
  int n = sqlite3_column_bytes(s_, col);
  return p ? std::string_view(p, static_cast<std::size_t>(n)) : std::string_view();
}
std::optional<std::string> statement::column_opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return std::string(column_text(col));
}
std::optional<std::int64_t> statement::column_opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_int(col);
}

namespace {

// RFC 3986 percent-encoding of the characters a URI filename may not hold raw.
std::string uri_path(const std::string& path) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f)
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

// octet_length(X) (SQLite 3.43+; OpenClaw's schema uses it in CHECK constraints, and Debian 12
// ships 3.40): the bytes of X as a blob, or of its UTF-8 text; NULL for NULL.
void octet_length_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  switch (sqlite3_value_type(argv[0])) {
    case SQLITE_NULL:
      sqlite3_result_null(ctx);
      return;
    case SQLITE_BLOB:
      sqlite3_result_int64(ctx, sqlite3_value_bytes(argv[0]));
      return;
    default:
      sqlite3_value_text(argv[0]);
      sqlite3_result_int64(ctx, sqlite3_value_bytes(argv[0]));
  }
}

}  // namespace

void add_compat_functions(sqlite3* h) {
  if (sqlite3_libversion_number() < 3043000)
    sqlite3_create_function_v2(h, "octet_length", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                               &octet_length_fn, nullptr, nullptr, nullptr);
}

result<std::unique_ptr<sqlite_db>> sqlite_db::open_read_only(const std::string& path, int busy_timeout_ms) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return status(errc::not_found, fmt::format("{}: no such database file", path));
  // A -wal (WAL mode) or -journal (rollback mode) beside it: someone has it open or crashed
  // mid-write; read it with locking. Neither: nobody does, read it as immutable.
  struct stat side {};
  const bool in_use = ::stat((path + "-wal").c_str(), &side) == 0 || ::stat((path + "-journal").c_str(), &side) == 0;
  const std::string uri = uri_path(path) + (in_use ? "?mode=ro" : "?mode=ro&immutable=1");
  sqlite3* h = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite_db> db(new sqlite_db(h, path));
  if (rc != SQLITE_OK) return db->error(rc, "opening it read-only");
  sqlite3_busy_timeout(h, busy_timeout_ms);
  add_compat_functions(h);
  // Opening is lazy: read the schema now so a file that is not a database fails here.
  auto probe = db->user_version();
  if (!probe.ok()) return probe.error();
  return db;
}

result<std::unique_ptr<sqlite_db>> sqlite_db::open_create(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return status(errc::already_exists, fmt::format("{}: already exists", path));
  sqlite3* h = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite_db> db(new sqlite_db(h, path));
  if (rc != SQLITE_OK) return db->error(rc, "creating it");
  add_compat_functions(h);
  return db;
}

sqlite_db::~sqlite_db() {
  if (h_) sqlite3_close_v2(h_);
}

status sqlite_db::error(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  const char* msg = h_ ? sqlite3_errmsg(h_) : sqlite3_errstr(rc);
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    return status(errc::locked, fmt::format("{}: database is locked while {} ({}): another process (a running OpenClaw?) "
                                            "is writing it; try again when it is idle, or stop it",
                                            path_, what, msg));
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    return status(errc::corrupt, fmt::format("{}: {} failed: {}", path_, what, msg));
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY)
    return status(errc::io_error, fmt::format("{}: {} failed: {}", path_, what, msg));
  if (primary == SQLITE_FULL) return status(errc::no_space, fmt::format("{}: {} failed: {}", path_, what, msg));
  return status(errc::io_error, fmt::format("{}: {} failed: {}", path_, what, msg));
}

status sqlite_db::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(h_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return {};
  std::string what = fmt::format("running \"{:.60}\"", sql);
  sqlite3_free(err);
  return error(rc, what);
}

result<statement> sqlite_db::prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(h_, sql.data(), static_cast<int>(sql.size()), &s, nullptr);
  if (rc != SQLITE_OK) return error(rc, fmt::format("preparing \"{:.60}\"", sql));
  return statement(this, s);
}

result<std::int64_t> sqlite_db::user_version() {
  auto st = prepare("PRAGMA user_version");
  if (!st.ok()) return st.error();
  auto row = st->step();
  if (!row.ok()) return row.error();
  return *row ? st->column_int(0) : 0;
}

result<bool> sqlite_db::has_table(std::string_view name) {
  auto st = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!st.ok()) return st.error();
  SRT_RETURN_IF_ERROR(st->bind_text(1, name));
  return st->step();
}

}  // namespace sessionrt::openclaw
