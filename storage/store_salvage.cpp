#include "storage/store_salvage.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_header.hpp"

namespace sessionrt::storage {
namespace {

// ---------------------------------------------------------------------------------------------
// Recovery after a corrupt file [SPEC §1.1, Decision (corruption)].

// Keys (and their sessionId) read from the lines of a pretty-printed store, however damaged:
// a line `  "key": ...` starts a row, a line `    "sessionId": "..."` inside it names its id.
struct salvaged_key {
  std::string key;
  std::string session_id;
};

// The JSON string token that starts at line[0] ('"'), decoded; nullopt when malformed.
std::optional<std::string> leading_json_string(std::string_view line, std::size_t& token_end) {
  if (line.empty() || line[0] != '"') return std::nullopt;
  std::size_t i = 1;
  while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
  if (i >= line.size()) return std::nullopt;
  token_end = i + 1;
  json::parse_limits l;
  l.max_depth = 1;
  auto v = json::parse(line.substr(0, token_end), l);
  if (!v.ok() || !v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

std::vector<salvaged_key> salvage_keys(std::string_view text) {
  std::vector<salvaged_key> keys;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    std::size_t end = 0;
    if (line.size() > 3 && line.substr(0, 3) == "  \"") {
      auto key = leading_json_string(line.substr(2), end);
      if (key && line.substr(2 + end).substr(0, 2) == ": ") keys.push_back({std::move(*key), {}});
    } else if (!keys.empty() && keys.back().session_id.empty() && line.substr(0, 17) == "    \"sessionId\": ") {
      auto id = leading_json_string(line.substr(17), end);
      if (id) keys.back().session_id = std::move(*id);
    }
  }
  return keys;
}

// "<name>.<pid>.<uuid>.tmp" or "<name>.<uuid>.tmp" (OpenClaw's and our temp names).
bool is_temp_name(std::string_view name, std::string_view base) {
  const artifact_name a = classify(name);
  return (a.kind == artifact_kind::store_temp || a.kind == artifact_kind::temp) && a.base == base;
}

struct transcript_candidate {
  std::string session_id;
  std::string path;  // absolute
  std::string name;
  std::optional<std::int64_t> started_ms;  // header timestamp
  std::int64_t mtime_ms = 0;
  std::string key;
  std::string key_source;
  std::int64_t age_key() const { return started_ms.value_or(mtime_ms); }
};


class store_rebuilder {
 public:
  store_rebuilder(fs& f, const std::string& path, const store_file_options& options, store_quarantine& report,
                  std::vector<store_change>& changes)
      : fs_(f), dir_(path_dirname(path)), base_(path_basename(path)), options_(options),
        report_(report), changes_(changes) {}

  session_store rebuild(std::string_view corrupt_text) {
    auto names = fs_.list_dir(dir_);
    if (!names.ok()) {
      note("", "found no temp files or transcripts", names.error().message());
      names = std::vector<std::string>{};
    }
    std::sort(names->begin(), names->end());
    session_store store = rows_from_newest_temp(*names);
    rows_from_headers(*names, corrupt_text, store);
    list_unrecoverable(corrupt_text, store);
    return store;
  }

 private:
  void note(std::string subject, std::string what, std::string why) {
    report_.notes.push_back(store_change{std::move(subject), std::move(what), std::move(why)});
  }

  session_store rows_from_newest_temp(const std::vector<std::string>& names) {
    std::vector<std::pair<std::int64_t, std::string>> temps;  // (mtime, path)
    for (const std::string& name : names) {
      if (!is_temp_name(name, base_)) continue;
      std::string p = path_join(dir_, name);
      auto info = fs_.lstat(p);
      if (info.ok() && info->is_regular()) temps.emplace_back(info->mtime_ns, std::move(p));
    }
    std::sort(temps.begin(), temps.end(), std::greater<>());
    for (const auto& [mtime, p] : temps) {
      auto text = read_file(fs_, p, options_.max_bytes);
      auto parsed = text.ok() ? load_from_text(*text, options_.parse_limits()) : result<parsed_store>(text.error());
      if (!parsed.ok()) {
        note(p, "did not use this temp file", parsed.error().message());
        continue;
      }
      report_.temp_base_path = p;
      for (auto& c : parsed->changes) changes_.push_back(std::move(c));
      for (const auto& r : parsed->store) report_.keys_from_temp.emplace_back(r.key);
      return std::move(parsed->store);
    }
    return {};
  }

  // Where transcripts live: absolute directory and the agent id of ".../agents/<id>/sessions".
  void resolve_dir() {
    auto real = fs_.realpath(dir_);
    abs_dir_ = real.ok() ? *real : dir_;
    agent_id_ = "main";
    if (path_basename(abs_dir_) == "sessions") {
      std::string agent_dir = path_dirname(abs_dir_);
      std::string agent = path_basename(agent_dir);
      if (path_basename(path_dirname(agent_dir)) == "agents" && is_safe_session_id(agent)) agent_id_ = agent;
    }
  }

  std::optional<transcript_candidate> read_candidate(const std::string& name) {
    const std::string p = path_join(dir_, name);
    auto header = read_transcript_header(fs_, p);
    if (!header.ok()) {
      note(p, "skipped this transcript", header.error().message());
      return std::nullopt;
    }
    transcript_candidate c;
    c.session_id = header->session_id;
    c.name = name;
    c.path = path_join(abs_dir_, name);
    c.mtime_ms = header->mtime_ms;
    c.started_ms = header->started_ms;
    if (header->session_key) {
      c.key = *header->session_key;
      c.key_source = "header sessionKey";
    }
    return c;
  }

  std::string fallback_key(const transcript_candidate& c) const {
    return fmt::format("agent:{}:recovered:{}", agent_id_, c.session_id);
  }

  void rows_from_headers(const std::vector<std::string>& names, std::string_view corrupt_text, session_store& store) {
    resolve_dir();
    std::unordered_set<std::string> referenced;
    for (const auto& r : store)
      if (auto id = r.entry.session_id()) referenced.emplace(*id);

    // Keys the corrupt file gave each session id (used when only one key names the id).
    std::unordered_map<std::string, std::string> key_of_id;
    std::unordered_set<std::string> ambiguous;
    for (auto& s : salvage_keys(corrupt_text)) {
      if (s.session_id.empty()) continue;
      auto [it, inserted] = key_of_id.emplace(s.session_id, s.key);
      if (!inserted && it->second != s.key) ambiguous.insert(s.session_id);
    }

    std::map<std::string, transcript_candidate> by_id;  // one transcript per session id
    for (const std::string& name : names) {
      if (name.size() <= 6 || name.substr(name.size() - 6) != ".jsonl") continue;
      auto c = read_candidate(name);
      if (!c || referenced.count(c->session_id)) continue;
      auto [it, inserted] = by_id.emplace(c->session_id, *c);
      if (!inserted) {
        bool newer = c->mtime_ms > it->second.mtime_ms;
        const transcript_candidate& loser = newer ? it->second : *c;
        note(loser.path, "did not index this transcript",
             fmt::format("another transcript ({}) has the same session id {}", newer ? c->name : it->second.name,
                         c->session_id));
        if (newer) it->second = std::move(*c);
      }
    }

    std::vector<transcript_candidate> rows;
    for (auto& [id, c] : by_id) {
      if (c.key.empty() && key_of_id.count(id) && !ambiguous.count(id) && is_plausible_header_key(key_of_id[id])) {
        c.key = key_of_id[id];
        c.key_source = "corrupt file text";
      }
      rows.push_back(std::move(c));
    }
    // Older sessions first, so the rebuilt file lists rows in about the order they were made.
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.age_key() != b.age_key() ? a.age_key() < b.age_key() : a.path < b.path;
    });
    settle_key_claims(rows, store);

    for (auto& c : rows) {
      if (c.key.empty()) {
        c.key = fallback_key(c);
        c.key_source = "fallback";
      }
      if (store.contains(c.key)) {
        note(c.path, "did not index this transcript", fmt::format("its key {} is already taken", c.key));
        continue;
      }
      session_entry e;
      e.set_session_id(c.session_id);
      e.set_updated_at(c.mtime_ms);
      if (c.started_ms) e.set_session_started_at(*c.started_ms);
      e.set_session_file(c.path);
      store.upsert(c.key, std::move(e));
      report_.rows_from_headers.push_back(recovered_row{c.key, c.session_id, c.path, c.key_source});
    }
  }

  // Several transcripts may claim one key (a session and its predecessors), or the temp rows
  // may already hold it: the newest header wins a free key, the others fall back.
  void settle_key_claims(std::vector<transcript_candidate>& rows, const session_store& store) {
    std::map<std::string, std::size_t> winner;  // key -> index in rows
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].key.empty()) continue;
      if (store.contains(rows[i].key)) {
        note(rows[i].path, "indexed this transcript under a fallback key",
             fmt::format("its key {} is held by a row from the temp file", rows[i].key));
        rows[i].key.clear();
        continue;
      }
      auto [it, inserted] = winner.emplace(rows[i].key, i);
      if (inserted) continue;
      // rows are sorted oldest first, so i is the newer claim.
      transcript_candidate& older = rows[it->second];
      note(older.path, "indexed this transcript under a fallback key",
           fmt::format("the newer transcript {} also claims key {}", rows[i].name, older.key));
      older.key.clear();
      it->second = i;
    }
  }

  void list_unrecoverable(std::string_view corrupt_text, const session_store& store) {
    auto keys = salvage_keys(corrupt_text);
    if (keys.empty()) {
      if (!corrupt_text.empty())
        note("", "could not list the keys of the corrupt file",
             "its text is not laid out as JSON.stringify(store, null, 2) writes it; compare it with the rebuilt store "
             "by hand");
      return;
    }
    std::set<std::string> seen;
    for (auto& k : keys)
      if (!store.contains(k.key) && seen.insert(k.key).second) report_.unrecoverable_keys.push_back(std::move(k.key));
  }

  fs& fs_;
  std::string dir_;
  std::string base_;
  const store_file_options& options_;
  store_quarantine& report_;
  std::vector<store_change>& changes_;
  std::string abs_dir_;
  std::string agent_id_;
};

}  // namespace

session_store rebuild_store(fs& f, const std::string& path, const store_file_options& options,
                            std::string_view corrupt_text, store_quarantine& report,
                            std::vector<store_change>& changes) {
  return store_rebuilder(f, path, options, report, changes).rebuild(corrupt_text);
}

}  // namespace sessionrt::storage
