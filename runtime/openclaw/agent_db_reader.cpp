#include "runtime/openclaw/agent_db_reader.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/openclaw/openclaw_schema.hpp"
#include "runtime/openclaw/zstd_codec.hpp"
#include "storage/durable_file.hpp"
#include "storage/fs.hpp"

namespace sessionrt::openclaw {
namespace {

constexpr std::size_t max_event_bytes = 4u << 20;       // OpenClaw's bound on one event
constexpr std::size_t max_archive_bytes = 1u << 30;     // inflated cold archive
constexpr std::size_t max_archive_file_bytes = 1u << 30;

// Ends a read transaction however the scope is left.
class read_tx {
 public:
  explicit read_tx(sqlite_db& db) : db_(db) {}
  status begin() {
    auto st = db_.exec("BEGIN");
    open_ = st.ok();
    return st;
  }
  ~read_tx() {
    if (open_) (void)db_.exec("COMMIT");
  }

 private:
  sqlite_db& db_;
  bool open_ = false;
};

}  // namespace

result<std::unique_ptr<agent_db_reader>> agent_db_reader::open(const std::string& db_path, std::string sessions_dir) {
  auto db = sqlite_db::open_read_only(db_path);
  if (!db.ok()) return db.error();
  auto version = (*db)->user_version();
  if (!version.ok()) return version.error();
  if (*version != openclaw_agent_schema_version) {
    const char* hint = *version < openclaw_agent_schema_version
                           ? "an older OpenClaw made it: run `openclaw doctor --fix` with OpenClaw 2026.9 first"
                           : "a newer OpenClaw made it, with a layout this sessionrt does not know";
    if (*version == 0)
      return status(errc::unsupported,
                    fmt::format("{}: not an OpenClaw agent database (PRAGMA user_version 0, no schema)", db_path));
    return status(errc::unsupported, fmt::format("{}: unknown schema version {} (this importer reads version {}; {})",
                                                 db_path, *version, openclaw_agent_schema_version, hint));
  }
  for (const char* table : {"session_nodes", "session_windows", "transcript_events", "session_transcript_cold_archives"}) {
    auto has = (*db)->has_table(table);
    if (!has.ok()) return has.error();
    if (!*has)
      return status(errc::corrupt, fmt::format("{}: schema version {} but no table {}", db_path, *version, table));
  }
  auto meta = (*db)->prepare("SELECT role, schema_version FROM schema_meta WHERE meta_key = 'primary'");
  if (meta.ok()) {
    auto row = meta->step();
    if (!row.ok()) return row.error();
    if (*row && meta->column_text(0) != "agent")
      return status(errc::unsupported,
                    fmt::format("{}: schema_meta role is '{}', not an agent database", db_path, meta->column_text(0)));
    if (*row && meta->column_int(1) != *version)
      return status(errc::unsupported, fmt::format("{}: schema markers disagree (user_version {}, schema_meta {})", db_path,
                                                   *version, meta->column_int(1)));
  }
  return std::unique_ptr<agent_db_reader>(new agent_db_reader(std::move(*db), std::move(sessions_dir)));
}

result<std::vector<session_node>> agent_db_reader::list_sessions() {
  read_tx tx(*db_);
  SRT_RETURN_IF_ERROR(tx.begin());
  auto st = db_->prepare("SELECT session_key, current_session_id, entry_json, updated_at FROM session_nodes ORDER BY session_key");
  if (!st.ok()) return st.error();
  std::vector<session_node> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    out.push_back({std::string(st->column_text(0)), std::string(st->column_text(1)), std::string(st->column_text(2)),
                   st->column_int(3)});
  }
  return out;
}

result<transcript_events> agent_db_reader::read_transcript(const std::string& session_id) {
  read_tx tx(*db_);
  SRT_RETURN_IF_ERROR(tx.begin());
  return read_transcript_in_tx(session_id);
}

result<transcript_events> agent_db_reader::read_transcript_in_tx(const std::string& session_id) {
  transcript_events out;
  std::optional<std::int64_t> cold_last_seq;
  {
    auto cold = db_->prepare(
        "SELECT generation, archive_name, archive_sha256, event_count, archive_bytes, last_seq, storage, archive_blob "
        "FROM session_transcript_cold_archives WHERE session_id = ?");
    if (!cold.ok()) return cold.error();
    SRT_RETURN_IF_ERROR(cold->bind_text(1, session_id));
    auto row = cold->step();
    if (!row.ok()) return row.error();
    if (*row) {
      const std::string generation(cold->column_text(0));
      const std::string name(cold->column_text(1));
      const std::string sha(cold->column_text(2));
      const std::int64_t event_count = cold->column_int(3);
      const std::int64_t archive_bytes = cold->column_int(4);
      const std::int64_t last_seq = cold->column_int(5);
      const std::string storage_kind(cold->column_text(6));
      std::string bytes;
      std::string where;
      if (storage_kind == "sqlite") {
        bytes = std::string(cold->column_blob(7));
        where = fmt::format("cold archive {} (stored in the database)", name);
      } else {
        if (!is_cold_archive_name(name))
          return status(errc::corrupt, fmt::format("session {}: cold archive name '{}' is not <sha256>.jsonl.zst", session_id, name));
        where = cold_archive_path(sessions_dir_, name);
        auto data = storage::read_file(storage::posix_fs(), where, max_archive_file_bytes);
        if (!data.ok()) {
          if (data.error().code() == errc::not_found)
            return status(errc::not_found,
                          fmt::format("session {}: its cold archive {} is missing (session_transcript_cold_archives names "
                                      "it as the live archive; restore it from a backup)",
                                      session_id, where));
          return data.error().with_context(fmt::format("session {}: reading its cold archive", session_id));
        }
        bytes = std::move(*data);
        where = "cold archive " + where;
      }
      if (static_cast<std::int64_t>(bytes.size()) != archive_bytes || sha256_hex(bytes) != sha)
        return status(errc::corrupt, fmt::format("session {}: {} failed verification ({} bytes, expected {} with sha256 {})",
                                                 session_id, where, bytes.size(), archive_bytes, sha));
      auto text = decompress_stream(bytes, max_archive_bytes);
      if (!text.ok()) return text.error().with_context(fmt::format("session {}: {}", session_id, where));
      std::string_view rest = *text;
      bool header_seen = false;
      std::int64_t events = 0, seen_last = -1;
      while (!rest.empty()) {
        auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (line.empty()) continue;
        auto rec = json::parse_object(line, {max_archive_bytes, 64});
        if (!rec.ok()) return rec.error().with_context(fmt::format("session {}: {} record", session_id, where));
        auto kind = json::get_string(*rec, "kind");
        if (kind == "header") {
          if (header_seen || json::get_string(*rec, "sessionId") != session_id || json::get_string(*rec, "generation") != generation)
            return status(errc::corrupt, fmt::format("session {}: {} header does not match the session and generation {}",
                                                     session_id, where, generation));
          header_seen = true;
        } else if (kind == "event") {
          const auto* r = json::get_object(*rec, "row");
          auto ev = r ? json::get_string(*r, "event_json") : std::nullopt;
          auto seq = r ? json::get_int(*r, "seq") : std::nullopt;
          if (!ev || !seq) return status(errc::corrupt, fmt::format("session {}: {} has an event record without seq/event_json", session_id, where));
          ++events;
          seen_last = *seq;
          out.bytes += ev->size();
          out.lines.emplace_back(*ev);
        }
      }
      if (!header_seen || events != event_count || seen_last != last_seq)
        return status(errc::corrupt, fmt::format("session {}: {} does not match its row ({} events up to seq {}, the row says {} "
                                                 "up to seq {})",
                                                 session_id, where, events, seen_last, event_count, last_seq));
      out.from_cold_archive = true;
      cold_last_seq = last_seq;
    }
  }
  auto st = db_->prepare(
      "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq");
  if (!st.ok()) return st.error();
  SRT_RETURN_IF_ERROR(st->bind_text(1, session_id));
  SRT_RETURN_IF_ERROR(st->bind_int(2, cold_last_seq.value_or(INT64_MIN)));
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    const std::int64_t seq = st->column_int(0);
    if (!st->is_null(1)) {
      out.lines.emplace_back(st->column_text(1));
    } else if (!st->is_null(2) && !st->is_null(3)) {
      const std::int64_t raw = st->column_int(3);
      if (raw < 1 || static_cast<std::size_t>(raw) > max_event_bytes)
        return status(errc::corrupt, fmt::format("session {}: transcript event seq {} records {} bytes (outside 1..{})",
                                                 session_id, seq, raw, max_event_bytes));
      auto text = decompress_exact(st->column_blob(2), static_cast<std::size_t>(raw));
      if (!text.ok()) return text.error().with_context(fmt::format("session {}: transcript event seq {}", session_id, seq));
      out.lines.push_back(std::move(*text));
    } else {
      return status(errc::corrupt, fmt::format("session {}: transcript event seq {} has neither event_json nor event_zstd",
                                               session_id, seq));
    }
    out.bytes += out.lines.back().size();
  }
  return out;
}

}  // namespace sessionrt::openclaw
