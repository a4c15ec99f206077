#include "runtime/openclaw/openclaw_export.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>

#include "messages/ascii_text.hpp"
#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/openclaw/openclaw_schema.hpp"
#include "runtime/openclaw/sqlite_db.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::openclaw {

bool export_report::ok() const {
  if (!errors.empty()) return false;
  for (const auto& a : agents)
    if (!a.error.ok() || a.failed > 0) return false;
  return true;
}

namespace {

std::optional<std::string> str_of(const boost::json::object& o, std::string_view key) {
  auto v = json::get_string(o, key);
  if (!v || v->empty()) return std::nullopt;
  return std::string(*v);
}
std::optional<std::int64_t> int_of(const boost::json::object& o, std::string_view key) { return json::get_int(o, key); }
std::optional<std::string> one_of(std::optional<std::string> v, std::initializer_list<std::string_view> allowed) {
  if (!v) return v;
  for (auto a : allowed)
    if (*v == a) return v;
  return std::nullopt;
}
const boost::json::object* obj_of(const boost::json::object& o, std::string_view key) { return json::get_object(o, key); }

struct statements {
  statement node, node_valid, window, watermark, event, identity;
};

result<statements> prepare_all(sqlite_db& db) {
  statements s;
  auto p = [&](statement& out, const char* sql) -> status {
    auto st = db.prepare(sql);
    if (!st.ok()) return st.error();
    out = std::move(*st);
    return {};
  };
  SRT_RETURN_IF_ERROR(p(s.node,
                        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, status, created_at, "
                        "label, display_name, category, pinned_at, archived_at, last_read_at, last_interaction_at, "
                        "last_activity_at, parent_session_key, spawned_by, fork_source_session_key, fork_source_session_id, "
                        "fork_source_entry_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  SRT_RETURN_IF_ERROR(p(s.node_valid, "UPDATE session_nodes SET entry_valid = 1 WHERE session_key = ?"));
  SRT_RETURN_IF_ERROR(p(s.window,
                        "INSERT INTO session_windows (session_id, session_key, session_scope, created_at, updated_at, "
                        "transcript_updated_at, started_at, ended_at, status, chat_type, channel, account_id, model_provider, "
                        "model, parent_session_key, spawned_by, display_name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  SRT_RETURN_IF_ERROR(p(s.watermark, "INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) VALUES (?,?,?)"));
  SRT_RETURN_IF_ERROR(p(s.event,
                        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (?,?,?,?,?)"));
  SRT_RETURN_IF_ERROR(p(s.identity,
                        "INSERT OR IGNORE INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, "
                        "created_at) VALUES (?,?,?,?,?,?)"));
  return s;
}

struct parsed_transcript {
  struct line {
    std::string_view text;
    std::optional<std::string> id, type, parent;
    std::int64_t created_at = 0;
  };
  std::vector<line> lines;
  std::uint64_t skipped = 0;
  std::int64_t first_ms = 0, last_ms = 0;
};

result<parsed_transcript> parse_transcript(const std::string& text, const std::string& session_id, std::int64_t now_ms) {
  parsed_transcript out;
  std::string_view rest = text;
  std::int64_t last = now_ms;
  bool first = true;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty()) continue;
    auto v = json::parse_object(line, {16u << 20, 256});
    if (!v.ok()) {
      ++out.skipped;
      continue;
    }
    parsed_transcript::line l;
    l.text = line;
    l.type = str_of(*v, "type");
    l.id = str_of(*v, "id");
    l.parent = str_of(*v, "parentId");
    auto ts = json::get_string(*v, "timestamp");
    auto ms = ts ? parse_iso_ms(*ts) : std::nullopt;
    if (ms) last = *ms;
    l.created_at = last;
    if (first) {
      if (l.type != "session" || l.id != session_id)
        return status(errc::corrupt, fmt::format("its first line is not the session header of {}", session_id));
      out.first_ms = l.created_at;
      first = false;
    }
    out.lines.push_back(l);
  }
  if (out.lines.empty()) return status(errc::corrupt, "the transcript is empty");
  out.last_ms = last;
  return out;
}

class agent_exporter {
 public:
  agent_exporter(storage::fs& files, clock& time, const export_options& opt, agent_export_report& rep,
                 std::vector<session_export_error>& errors)
      : fs_(files), clock_(time), opt_(opt), rep_(rep), errors_(errors) {}

  void run() {
    auto sessions_dir = storage::agent_sessions_dir(opt_.state_dir, rep_.agent_id);
    if (!sessions_dir.ok()) return fail(sessions_dir.error());
    sessions_dir_ = *sessions_dir;
    rep_.store_path = storage::path_join(sessions_dir_, storage::store_file_name);
    auto text = storage::read_file(fs_, rep_.store_path, std::size_t(1) << 30);
    if (!text.ok()) return fail(text.error());
    auto parsed = storage::load_from_text(*text);
    if (!parsed.ok()) return fail(parsed.error().with_context(rep_.store_path));

    rep_.db_path = agent_db_path(opt_.to_dir, rep_.agent_id);
    if (fs_.stat(rep_.db_path).ok())
      return fail(status(errc::already_exists, fmt::format("{} exists; export writes a new database only (export into an empty "
                                                           "OpenClaw state dir)",
                                                           rep_.db_path)));
    const std::string dir = storage::path_dirname(rep_.db_path);
    if (auto st = storage::ensure_dir(fs_, dir); !st.ok()) return fail(st);
    if (auto st = storage::ensure_dir(fs_, agent_sessions_dir(opt_.to_dir, rep_.agent_id)); !st.ok()) return fail(st);
    const std::string tmp = rep_.db_path + ".sessionrt-tmp";
    (void)fs_.unlink(tmp);  // an interrupted earlier export
    (void)fs_.unlink(tmp + "-journal");
    auto st = build(tmp, parsed->store);
    if (!st.ok()) {
      (void)fs_.unlink(tmp);
      (void)fs_.unlink(tmp + "-journal");
      return fail(st);
    }
    if (auto s = sync_file(tmp); !s.ok()) return fail(s);
    if (auto s = fs_.rename(tmp, rep_.db_path); !s.ok()) return fail(s);
    if (auto s = storage::fsync_dir(fs_, dir); !s.ok()) return fail(s);
  }

 private:
  void fail(status st) { rep_.error = std::move(st); }

  status sync_file(const std::string& path) {
    auto fd = fs_.open(path, O_RDONLY);
    if (!fd.ok()) return fd.error();
    auto st = fs_.fsync(*fd);
    (void)fs_.close(*fd);
    return st;
  }

  status build(const std::string& tmp, const storage::session_store& store) {
    auto db = sqlite_db::open_create(tmp);
    if (!db.ok()) return db.error();
    const std::int64_t now = clock_.now_ms();
    SRT_RETURN_IF_ERROR((*db)->exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON;"));
    SRT_RETURN_IF_ERROR((*db)->exec("BEGIN"));
    SRT_RETURN_IF_ERROR((*db)->exec(openclaw_agent_schema_sql()));
    SRT_RETURN_IF_ERROR((*db)->exec(openclaw_agent_seed_sql()));
    SRT_RETURN_IF_ERROR((*db)->exec(fmt::format("PRAGMA user_version = {}", openclaw_agent_schema_version).c_str()));
    {
      auto meta = (*db)->prepare(
          "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) "
          "VALUES ('primary', 'agent', ?, ?, ?, ?, ?)");
      if (!meta.ok()) return meta.error();
      SRT_RETURN_IF_ERROR(meta->bind_int(1, openclaw_agent_schema_version));
      SRT_RETURN_IF_ERROR(meta->bind_text(2, ascii_lower(rep_.agent_id)));
      SRT_RETURN_IF_ERROR(meta->bind_text(3, openclaw_schema_app_version));
      SRT_RETURN_IF_ERROR(meta->bind_int(4, now));
      SRT_RETURN_IF_ERROR(meta->bind_int(5, now));
      SRT_RETURN_IF_ERROR(meta->run());
    }
    auto stmts = prepare_all(**db);
    if (!stmts.ok()) return stmts.error();
    std::size_t done = 0;
    const std::size_t total = store.size();
    for (auto row : store) {
      SRT_RETURN_IF_ERROR((*db)->exec("SAVEPOINT s"));
      auto st = export_session(*stmts, std::string(row.key), row.entry, now);
      if (!st.ok()) {
        if (st.code() == errc::io_error || st.code() == errc::no_space || st.code() == errc::locked) return st;
        SRT_RETURN_IF_ERROR((*db)->exec("ROLLBACK TO s; RELEASE s"));
        ++rep_.failed;
        auto sid = row.entry.session_id();
        errors_.push_back({rep_.agent_id, std::string(row.key), sid ? std::string(*sid) : std::string(), st});
      } else {
        SRT_RETURN_IF_ERROR((*db)->exec("RELEASE s"));
        ++rep_.sessions;
      }
      if (opt_.progress) opt_.progress(rep_.agent_id, ++done, total);
    }
    SRT_RETURN_IF_ERROR((*db)->exec("COMMIT"));
    return {};
  }

  status export_session(statements& s, const std::string& key, const session_entry& entry, std::int64_t now) {
    const auto& o = entry.json();
    auto sid = entry.session_id();
    if (!sid || !is_transcript_id(*sid)) return status(errc::invalid_argument, "the row has no usable sessionId");
    const std::string session_id(*sid);
    std::string path;
    if (auto f = entry.session_file()) {
      auto confined = storage::confine_session_file(fs_, sessions_dir_, std::string(*f));
      if (!confined.ok()) return confined.error();
      path = *confined;
    } else {
      auto p = storage::transcript_path(sessions_dir_, session_id);
      if (!p.ok()) return p.error();
      path = *p;
    }
    // Either form: a transcript kept compressed is read from its .zst (cold_transcript.hpp).
    auto text = storage::read_transcript_bytes(fs_, path, std::size_t(4) << 30);
    if (!text.ok()) return text.error().with_context(fmt::format("session {}", session_id));
    auto tr = parse_transcript(*text, session_id, now);
    if (!tr.ok()) return tr.error().with_context(fmt::format("session {} ({})", session_id, path));

    boost::json::object node_entry = o;
    node_entry.erase("sessionFile");
    // OpenClaw accepts a row only when entry_json's sessionId / updatedAt equal the columns.
    const std::int64_t updated_at = int_of(o, "updatedAt").value_or(tr->last_ms);
    if (!int_of(o, "updatedAt")) node_entry["updatedAt"] = updated_at;
    // ... and its lineage columns equal what the entry says (parentSessionKey ?? spawnedBy).
    std::optional<std::string> parent = str_of(o, "parentSessionKey");
    if (!parent) parent = str_of(o, "spawnedBy");
    const auto* fork = obj_of(o, "forkSource");
    const auto fork_key = fork ? str_of(*fork, "sessionKey") : std::nullopt;
    const auto fork_id = fork ? str_of(*fork, "sessionId") : std::nullopt;
    const auto fork_entry = fork ? str_of(*fork, "entryId") : std::nullopt;
    const auto chat_type = one_of(str_of(o, "chatType"), {"direct", "group", "channel"});
    const auto status_v = one_of(str_of(o, "status"), {"running", "done", "failed", "killed", "timeout"});
    const auto display = str_of(o, "displayName") ? str_of(o, "displayName")
                         : str_of(o, "label")     ? str_of(o, "label")
                         : str_of(o, "subject")   ? str_of(o, "subject")
                                                  : str_of(o, "groupId");
    const auto* dctx = obj_of(o, "deliveryContext");
    const auto* origin = obj_of(o, "origin");
    std::optional<std::string> channel = str_of(o, "channel");
    if (!channel && dctx) channel = str_of(*dctx, "channel");
    if (!channel) channel = str_of(o, "lastChannel");
    if (!channel && origin) channel = str_of(*origin, "provider");
    std::optional<std::string> account = dctx ? str_of(*dctx, "accountId") : std::nullopt;
    if (!account) account = str_of(o, "lastAccountId");
    if (!account && origin) account = str_of(*origin, "accountId");
    const std::string lkey = ascii_lower(key);
    std::string scope = "conversation";
    if (chat_type == "direct" && (lkey == "main" || (lkey.size() >= 5 && lkey.substr(lkey.size() - 5) == ":main")))
      scope = "shared-main";
    else if (chat_type == "group" || chat_type == "channel")
      scope = *chat_type;

    auto& n = s.node;
    SRT_RETURN_IF_ERROR(n.bind_text(1, key));
    SRT_RETURN_IF_ERROR(n.bind_text(2, session_id));
    SRT_RETURN_IF_ERROR(n.bind_text(3, json::to_compact(node_entry)));
    SRT_RETURN_IF_ERROR(n.bind_int(4, updated_at));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(5, status_v));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(6, int_of(o, "sessionStartedAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(7, str_of(o, "label")));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(8, str_of(o, "displayName")));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(9, str_of(o, "category")));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(10, int_of(o, "pinnedAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(11, int_of(o, "archivedAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(12, int_of(o, "lastReadAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(13, int_of(o, "lastInteractionAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_int(14, int_of(o, "lastActivityAt")));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(15, parent));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(16, str_of(o, "spawnedBy")));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(17, fork_key));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(18, fork_id));
    SRT_RETURN_IF_ERROR(n.bind_opt_text(19, fork_entry));
    SRT_RETURN_IF_ERROR(n.run());
    SRT_RETURN_IF_ERROR(n.reset());
    // The insert trigger marks the row unvalidated (entry_valid 0); OpenClaw's own writer sets
    // 1 for an entry whose identity it checked, as done above.
    SRT_RETURN_IF_ERROR(s.node_valid.bind_text(1, key));
    SRT_RETURN_IF_ERROR(s.node_valid.run());
    SRT_RETURN_IF_ERROR(s.node_valid.reset());

    auto& w = s.window;
    SRT_RETURN_IF_ERROR(w.bind_text(1, session_id));
    SRT_RETURN_IF_ERROR(w.bind_text(2, key));
    SRT_RETURN_IF_ERROR(w.bind_text(3, scope));
    SRT_RETURN_IF_ERROR(w.bind_int(4, int_of(o, "sessionStartedAt").value_or(tr->first_ms)));
    SRT_RETURN_IF_ERROR(w.bind_int(5, tr->last_ms));
    SRT_RETURN_IF_ERROR(w.bind_int(6, now));
    SRT_RETURN_IF_ERROR(w.bind_opt_int(7, int_of(o, "startedAt")));
    SRT_RETURN_IF_ERROR(w.bind_opt_int(8, int_of(o, "endedAt")));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(9, status_v));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(10, chat_type));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(11, channel));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(12, account));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(13, str_of(o, "modelProvider")));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(14, str_of(o, "model")));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(15, parent));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(16, str_of(o, "spawnedBy")));
    SRT_RETURN_IF_ERROR(w.bind_opt_text(17, display));
    SRT_RETURN_IF_ERROR(w.run());
    SRT_RETURN_IF_ERROR(w.reset());

    std::string generation = new_uuid_v4();
    generation.erase(std::remove(generation.begin(), generation.end(), '-'), generation.end());
    SRT_RETURN_IF_ERROR(s.watermark.bind_text(1, session_id));
    SRT_RETURN_IF_ERROR(s.watermark.bind_text(2, generation));
    SRT_RETURN_IF_ERROR(s.watermark.bind_int(3, now));
    SRT_RETURN_IF_ERROR(s.watermark.run());
    SRT_RETURN_IF_ERROR(s.watermark.reset());

    std::int64_t seq = 0;
    for (const auto& l : tr->lines) {
      auto& e = s.event;
      SRT_RETURN_IF_ERROR(e.bind_text(1, session_id));
      SRT_RETURN_IF_ERROR(e.bind_int(2, seq));
      SRT_RETURN_IF_ERROR(e.bind_text(3, l.text));
      SRT_RETURN_IF_ERROR(e.bind_int(4, l.created_at));
      SRT_RETURN_IF_ERROR(e.bind_int(5, static_cast<std::int64_t>(l.text.size())));
      SRT_RETURN_IF_ERROR(e.run());
      SRT_RETURN_IF_ERROR(e.reset());
      if (l.id) {
        auto& i = s.identity;
        SRT_RETURN_IF_ERROR(i.bind_text(1, session_id));
        SRT_RETURN_IF_ERROR(i.bind_text(2, *l.id));
        SRT_RETURN_IF_ERROR(i.bind_int(3, seq));
        SRT_RETURN_IF_ERROR(i.bind_opt_text(4, l.type));
        SRT_RETURN_IF_ERROR(i.bind_opt_text(5, l.parent));
        SRT_RETURN_IF_ERROR(i.bind_int(6, l.created_at));
        SRT_RETURN_IF_ERROR(i.run());
        SRT_RETURN_IF_ERROR(i.reset());
      }
      ++seq;
      rep_.bytes += l.text.size();
    }
    rep_.entries += tr->lines.size();
    rep_.skipped_lines += tr->skipped;
    return {};
  }

  storage::fs& fs_;
  clock& clock_;
  const export_options& opt_;
  agent_export_report& rep_;
  std::vector<session_export_error>& errors_;
  std::string sessions_dir_;
};

}  // namespace

result<export_report> export_openclaw(storage::fs& files, clock& time, const export_options& options) {
  std::vector<std::string> agents;
  const std::string agents_dir = storage::path_join(options.state_dir, "agents");
  if (!options.agent.empty()) {
    if (auto st = storage::check_agent_id(options.agent); !st.ok()) return st;
    agents.push_back(options.agent);
  } else {
    auto names = files.list_dir(agents_dir);
    if (!names.ok()) return status(errc::not_found, fmt::format("{}: no agents/ directory (is {} a sessionrt state dir?)",
                                                                agents_dir, options.state_dir));
    std::sort(names->begin(), names->end());
    for (const auto& n : *names) {
      auto sp = storage::store_path(options.state_dir, n);
      if (sp.ok() && files.stat(*sp).ok()) agents.push_back(n);
    }
  }
  if (agents.empty())
    return status(errc::not_found, fmt::format("{}: no agents/<id>/sessions/sessions.json to export", options.state_dir));
  export_report rep;
  for (const auto& a : agents) {
    agent_export_report ar;
    ar.agent_id = a;
    agent_exporter(files, time, options, ar, rep.errors).run();
    rep.agents.push_back(std::move(ar));
  }
  return rep;
}

}  // namespace sessionrt::openclaw
