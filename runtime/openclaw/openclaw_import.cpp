#include "runtime/openclaw/openclaw_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <optional>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/session_entry.hpp"
#include "runtime/openclaw/agent_db_reader.hpp"
#include "runtime/openclaw/openclaw_schema.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::openclaw {

bool import_report::ok() const {
  if (!errors.empty()) return false;
  for (const auto& a : agents)
    if (!a.error.ok() || a.failed > 0) return false;
  return true;
}

result<std::string> transcript_bytes(const std::vector<std::string>& events, const std::string& session_id,
                                     std::int64_t header_ms) {
  std::string out;
  std::size_t reserve = 0;
  for (const auto& e : events) reserve += e.size() + 1;
  out.reserve(reserve + 160);
  const json::parse_limits limits{16u << 20, 256};
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto v = json::parse(events[i], limits);
    if (!v.ok()) return v.error().with_context(fmt::format("event {} is not valid JSON", i));
    if (!v->is_object()) return status(errc::corrupt, fmt::format("event {} is not a JSON object", i));
    const auto& o = v->get_object();
    if (i == 0) {
      if (json::get_string(o, "type") == "session") {
        auto id = json::get_string(o, "id");
        if (id != session_id)
          return status(errc::corrupt, fmt::format("the transcript header names session {}, the session row {}",
                                                   id ? std::string(*id) : std::string("(none)"), session_id));
      } else {
        boost::json::object h{{"type", "session"}, {"version", 3}, {"id", session_id},
                              {"timestamp", format_iso_ms(header_ms)}, {"cwd", ""}};
        json::append_compact(out, h);
        out += '\n';
      }
    }
    json::append_compact(out, o);
    out += '\n';
  }
  if (events.empty()) {
    boost::json::object h{{"type", "session"}, {"version", 3}, {"id", session_id}, {"timestamp", format_iso_ms(header_ms)},
                          {"cwd", ""}};
    json::append_compact(out, h);
    out += '\n';
  }
  return out;
}

namespace {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t count_lines(std::string_view s) { return static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '\n')); }

struct pending_row {
  std::string key;
  session_entry entry;
};

class agent_importer {
 public:
  agent_importer(storage::fs& files, clock& time, storage::process_probe& probe, const import_options& opt,
                 agent_import_report& rep, std::vector<session_import_error>& errors)
      : fs_(files), clock_(time), probe_(probe), opt_(opt), rep_(rep), errors_(errors) {}

  void run(const std::string& from_dir, const std::string& out_dir) {
    const auto t0 = steady_ms();
    rep_.db_path = agent_db_path(from_dir, rep_.agent_id);
    auto reader = agent_db_reader::open(rep_.db_path, agent_sessions_dir(from_dir, rep_.agent_id));
    if (!reader.ok()) return fail_agent(reader.error());
    auto nodes = (*reader)->list_sessions();
    if (!nodes.ok()) return fail_agent(nodes.error());
    rep_.sessions = nodes->size();

    auto dir = storage::agent_sessions_dir(out_dir, rep_.agent_id);
    if (!dir.ok()) return fail_agent(dir.error());
    sessions_dir_ = *dir;
    rep_.store_path = storage::path_join(sessions_dir_, storage::store_file_name);
    if (auto st = storage::ensure_dir(fs_, sessions_dir_); !st.ok()) return fail_agent(st);
    storage::write_lock_options lo;
    lo.reentrant = false;
    auto taken = storage::try_acquire_write_lock(fs_, clock_, probe_, rep_.store_path, lo);
    if (!taken.ok()) return fail_agent(taken.error());
    if (auto* busy = std::get_if<storage::lock_busy>(&*taken))
      return fail_agent(status(errc::locked, fmt::format("{} is owned by another process ({}); nothing imported for agent {}: "
                                                         "stop it first",
                                                         rep_.store_path, busy->holder.owner(), rep_.agent_id)));
    storage::write_lock lock = std::move(std::get<storage::write_lock>(*taken));
    storage::store_file_options so;
    so.durable = opt_.durable;
    file_.emplace(fs_, clock_, rep_.store_path, so);
    auto loaded = file_->load();
    if (!loaded.ok()) return fail_agent(loaded.error());

    std::size_t done = 0;
    for (const auto& node : *nodes) {
      auto st = import_session(**reader, node);
      if (!st.ok()) {
        ++rep_.failed;
        errors_.push_back({rep_.agent_id, node.key, node.session_id, st});
      }
      ++done;
      if (pending_.size() >= std::max<std::size_t>(1, opt_.rows_batch)) {
        if (auto s = flush_rows(); !s.ok()) return fail_agent(s);
      }
      if (opt_.progress) opt_.progress(rep_.agent_id, done, nodes->size());
    }
    if (auto s = flush_rows(); !s.ok()) return fail_agent(s);
    (void)lock.release();
    rep_.elapsed_ms = steady_ms() - t0;
  }

 private:
  void fail_agent(status st) { rep_.error = std::move(st); }

  status flush_rows() {
    if (pending_.empty()) return {};
    for (auto& r : pending_) file_->store().upsert(r.key, std::move(r.entry));
    pending_.clear();
    auto st = file_->save();
    if (!st.ok()) return st.with_context(fmt::format("saving {} (the transcripts written so far are complete; run the "
                                                     "import again to add their rows)",
                                                     rep_.store_path));
    for (auto& c : committed_) {
      rep_.entries += c.first;
      rep_.bytes += c.second;
    }
    committed_.clear();
    return {};
  }

  status import_session(agent_db_reader& reader, const session_node& node) {
    if (!is_transcript_id(node.session_id))
      return status(errc::unsafe_path, fmt::format("session id '{}' cannot name a transcript file", node.session_id));
    auto entry_obj = json::parse_object(node.entry_json);
    if (!entry_obj.ok()) return entry_obj.error().with_context("its session_nodes.entry_json");
    session_entry entry(std::move(*entry_obj));

    auto events = reader.read_transcript(node.session_id);
    if (!events.ok()) return events.error();
    rep_.bytes_read += events->bytes;
    const std::int64_t header_ms = entry.session_started_at().value_or(entry.updated_at().value_or(node.updated_at));
    auto bytes = transcript_bytes(events->lines, node.session_id, header_ms);
    if (!bytes.ok()) return bytes.error().with_context(fmt::format("session {}", node.session_id));
    auto path = storage::transcript_path(sessions_dir_, node.session_id);
    if (!path.ok()) return path.error();

    const session_entry* existing = file_->store().find(node.key);
    if (existing && existing->session_id() != node.session_id)
      return status(errc::already_exists,
                    fmt::format("{} already has a row for this key naming session {}; left as it is",
                                rep_.store_path, existing->session_id() ? std::string(*existing->session_id()) : "(none)"));
    // What is on disk already (an earlier run, or an earlier batch of this one).
    bool write = true;
    bool grew = false;
    auto on_disk = storage::read_file(fs_, *path, std::size_t(4) << 30);
    if (on_disk.ok()) {
      if (*on_disk == *bytes) {
        write = false;
      } else if (on_disk->size() < bytes->size() && !on_disk->empty() && on_disk->back() == '\n' &&
                 std::string_view(*bytes).substr(0, on_disk->size()) == *on_disk) {
        grew = true;
      } else {
        return status(errc::already_exists,
                      fmt::format("{} exists and differs from the OpenClaw transcript (entries were added to it after an "
                                  "earlier import?); left as it is",
                                  *path));
      }
    } else if (on_disk.error().code() != errc::not_found) {
      return on_disk.error();
    }
    if (write) {
      storage::replace_options ro;
      ro.durable = opt_.durable;
      ro.mode = 0600;
      if (auto st = storage::replace_file_atomic(fs_, *path, *bytes, ro); !st.ok()) return st;
    }
    const bool row_current = existing && existing->session_file() == std::optional<std::string_view>(*path);
    if (!write && row_current) {
      ++rep_.skipped;
      rep_.entries += count_lines(*bytes);
      rep_.bytes += bytes->size();
      return {};
    }
    (grew ? rep_.updated : rep_.imported) += 1;
    entry.set_session_id(node.session_id);
    entry.set_session_file(*path);
    pending_.push_back({node.key, std::move(entry)});
    committed_.emplace_back(count_lines(*bytes), bytes->size());
    return {};
  }

  storage::fs& fs_;
  clock& clock_;
  storage::process_probe& probe_;
  const import_options& opt_;
  agent_import_report& rep_;
  std::vector<session_import_error>& errors_;
  std::string sessions_dir_;
  std::optional<storage::session_store_file> file_;
  std::vector<pending_row> pending_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> committed_;
};

}  // namespace

result<import_report> import_openclaw(storage::fs& files, clock& time, storage::process_probe& probe,
                                      const import_options& options) {
  std::vector<std::string> agents;
  const std::string agents_dir = storage::path_join(options.from_dir, "agents");
  if (!options.agent.empty()) {
    if (auto st = storage::check_agent_id(options.agent); !st.ok()) return st;
    agents.push_back(options.agent);
  } else {
    auto names = files.list_dir(agents_dir);
    if (!names.ok())
      return status(errc::not_found, fmt::format("{}: no agents/ directory (is {} an OpenClaw state dir, OPENCLAW_STATE_DIR?)",
                                                 agents_dir, options.from_dir));
    std::sort(names->begin(), names->end());
    for (const auto& n : *names)
      if (storage::check_agent_id(n).ok() && files.stat(agent_db_path(options.from_dir, n)).ok()) agents.push_back(n);
  }
  if (agents.empty() || (!options.agent.empty() && !files.stat(agent_db_path(options.from_dir, options.agent)).ok()))
    return status(errc::not_found,
                  fmt::format("{}: no OpenClaw agent database (agents/<id>/agent/{}){}; OpenClaw 2026.8+ keeps sessions "
                              "there (a JSON-era sessions.json is read by sessionrt as it is)",
                              options.from_dir, openclaw_agent_db_name,
                              options.agent.empty() ? "" : fmt::format(" for agent {}", options.agent)));
  auto out_dir = files.realpath(options.state_dir);
  std::string state_dir = options.state_dir;
  if (!out_dir.ok()) {
    if (auto st = storage::ensure_dir(files, options.state_dir); !st.ok()) return st;
    out_dir = files.realpath(options.state_dir);
  }
  if (out_dir.ok()) state_dir = *out_dir;
  import_report rep;
  for (const auto& a : agents) {
    agent_import_report ar;
    ar.agent_id = a;
    agent_importer(files, time, probe, options, ar, rep.errors).run(options.from_dir, state_dir);
    rep.agents.push_back(std::move(ar));
  }
  return rep;
}

}  // namespace sessionrt::openclaw
