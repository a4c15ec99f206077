// A test helper: builds an OpenClaw 2026.9 agent database with the sqlite3 C API (OpenClaw's
// schema from runtime/openclaw/openclaw_schema.hpp), holding sessions whose transcripts are
// stored as event_json rows, event_zstd rows, a cold archive file, or an archive plus later rows.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/openclaw/openclaw_schema.hpp"
#include "runtime/openclaw/sqlite_db.hpp"
#include "runtime/openclaw/zstd_codec.hpp"

namespace sessionrt::testing {

class oc_test_db {
 public:
  enum class layout { json_rows, zstd_rows, cold_file, cold_then_rows, cold_blob };

  oc_test_db(const std::string& state_dir, const std::string& agent, int user_version = openclaw::openclaw_agent_schema_version)
      : state_(state_dir), agent_(agent) {
    path_ = openclaw::agent_db_path(state_dir, agent);
    sessions_dir_ = openclaw::agent_sessions_dir(state_dir, agent);
    sh("mkdir -p '" + state_dir + "/agents/" + agent + "/agent' '" + sessions_dir_ + "/cold'");
    if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open " + path_);
    openclaw::add_compat_functions(db_);
    exec("PRAGMA synchronous = OFF");  // a test database: no fsync per insert
    exec(openclaw::openclaw_agent_schema_sql());
    exec(openclaw::openclaw_agent_seed_sql());
    exec("PRAGMA user_version = " + std::to_string(user_version));
    exec("INSERT INTO schema_meta VALUES ('primary','agent'," + std::to_string(user_version) + ",'" + agent +
         "','2026.9.6',1,1)");
  }
  ~oc_test_db() { close(); }
  void close() {
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
  }
  const std::string& path() const { return path_; }
  const std::string& sessions_dir() const { return sessions_dir_; }

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error("sql: " + m + " in " + sql.substr(0, 80));
    }
  }

  // Adds the session row, its window and its transcript `lines` stored as `how`. Returns the
  // cold archive path when one was written.
  std::string add_session(const std::string& key, const std::string& session_id, const std::string& entry_json,
                          const std::vector<std::string>& lines, layout how, std::size_t cold_events = 0) {
    bind_run("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?,?,?,1)",
             {key, session_id, entry_json});
    bind_run("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?,?,1,1)", {session_id, key});
    std::size_t first_row = 0;
    std::string archive_path;
    if (how == layout::cold_file || how == layout::cold_then_rows || how == layout::cold_blob) {
      const std::size_t n = how == layout::cold_then_rows ? cold_events : lines.size();
      std::string text = R"({"kind":"header","version":1,"sessionId":")" + session_id + R"(","generation":"g1"})" "\n";
      std::uint64_t raw = 0;
      for (std::size_t i = 0; i < n; ++i) {
        text += R"({"kind":"event","row":{"seq":)" + std::to_string(i) + R"(,"event_json":)" + quote(lines[i]) +
                R"(,"created_at":1}})" "\n";
        raw += lines[i].size();
      }
      text += R"({"kind":"index","row":{"indexed_seq":0,"leaf_event_id":null,"needs_rebuild":0,"active_event_count":0,"active_message_count":0,"updated_at":1}})" "\n";
      const std::string z = openclaw::compress(text, 3);
      const std::string sha = openclaw::sha256_hex(z);
      const std::string name = sha + ".jsonl.zst";
      const bool blob = how == layout::cold_blob;
      if (!blob) {
        archive_path = openclaw::cold_archive_path(sessions_dir_, name);
        write_file(archive_path, z);
      }
      sqlite3_stmt* s = prep(
          "INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, event_count, "
          "raw_bytes, archive_bytes, last_seq, archived_at, storage, archive_blob) VALUES (?,?,?,?,?,?,?,?,1,?,?)");
      text_at(s, 1, session_id);
      text_at(s, 2, "g1");
      text_at(s, 3, name);
      text_at(s, 4, sha);
      sqlite3_bind_int64(s, 5, static_cast<sqlite3_int64>(n));
      sqlite3_bind_int64(s, 6, static_cast<sqlite3_int64>(raw + n - 1));
      sqlite3_bind_int64(s, 7, static_cast<sqlite3_int64>(z.size()));
      sqlite3_bind_int64(s, 8, static_cast<sqlite3_int64>(n - 1));
      text_at(s, 9, blob ? "sqlite" : "file");
      if (blob)
        sqlite3_bind_blob(s, 10, z.data(), static_cast<int>(z.size()), SQLITE_TRANSIENT);
      else
        sqlite3_bind_null(s, 10);
      step_done(s);
      first_row = n;
    }
    if (how == layout::cold_file || how == layout::cold_blob) return archive_path;
    for (std::size_t i = first_row; i < lines.size(); ++i) {
      if (how == layout::zstd_rows && i > 0) {
        add_zstd_row(session_id, static_cast<std::int64_t>(i), lines[i], openclaw::compress(lines[i], 1));
      } else {
        sqlite3_stmt* s = prep("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?,?,?,1)");
        text_at(s, 1, session_id);
        sqlite3_bind_int64(s, 2, static_cast<sqlite3_int64>(i));
        text_at(s, 3, lines[i]);
        step_done(s);
      }
    }
    return archive_path;
  }

  void add_zstd_row(const std::string& session_id, std::int64_t seq, const std::string& line, const std::string& blob) {
    sqlite3_stmt* s = prep(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) "
        "VALUES (?,?,NULL,1,?,?,?)");
    text_at(s, 1, session_id);
    sqlite3_bind_int64(s, 2, seq);
    sqlite3_bind_blob(s, 3, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 4, static_cast<sqlite3_int64>(line.size()));
    text_at(s, 5,
            R"({"version":1,"report":{"kind":"ignored"},"navigation":{},"reset":{},"model":{},"modelBytes":0,)"
            R"("modelWithoutCheckpointBytes":0,"withoutCustomDataBytes":0})");
    step_done(s);
  }

  static void write_file(const std::string& path, const std::string& data) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("write " + path);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }

 private:
  static void sh(const std::string& cmd) {
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error(cmd);
  }
  static std::string quote(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o + "\"";
  }
  sqlite3_stmt* prep(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_));
    return s;
  }
  static void text_at(sqlite3_stmt* s, int i, const std::string& v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void step_done(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("step: ") + sqlite3_errmsg(db_));
  }
  void bind_run(const char* sql, const std::vector<std::string>& texts) {
    sqlite3_stmt* s = prep(sql);
    for (std::size_t i = 0; i < texts.size(); ++i) text_at(s, static_cast<int>(i + 1), texts[i]);
    step_done(s);
  }

  std::string state_, agent_, path_, sessions_dir_;
  sqlite3* db_ = nullptr;
};

}  // namespace sessionrt::testing
