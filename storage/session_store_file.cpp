#include "storage/session_store_file.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_header.hpp"

namespace sessionrt::storage {
namespace {

namespace bj = boost::json;

// ---------------------------------------------------------------------------------------------
// Text helpers

// How a value looked, for a report line: compact JSON, cut at 60 bytes (on a UTF-8 boundary).
std::string describe(const bj::value& v) {
  std::string s = json::to_compact(v);
  if (s.size() <= 60) return s;
  return std::string(utf8_prefix(s, 57)) + "...";
}

const char* kind_name(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null: return "null";
    case bj::kind::bool_: return "a boolean";
    case bj::kind::int64:
    case bj::kind::uint64:
    case bj::kind::double_: return "a number";
    case bj::kind::string: return "a string";
    case bj::kind::array: return "an array";
    case bj::kind::object: return "an object";
  }
  return "a value";
}

// ---------------------------------------------------------------------------------------------
// Migrations and normalization [R§2.3], on one row. Every change is reported.

class row_normalizer {
 public:
  row_normalizer(std::string_view key, bj::object& row, std::vector<store_change>& changes)
      : key_(key), row_(row), changes_(changes) {
    // One pass over the field names, so that a typical row (none of the legacy or runtime-only
    // fields) costs a few lookups, not twenty: loading 50,000 rows is on a startup path.
    for (const auto& kv : row_) {
      const std::string_view k = kv.key();
      if (k == "provider" || k == "lastProvider" || k == "room") has_legacy_ = true;
      else if (k == "model" || k == "modelProvider") has_model_ = true;
      else if (k.substr(0, 20) == "pendingFinalDelivery" || k == "restartRecoveryDeliveryContext") has_delivery_ = true;
      else if (k == "skillsSnapshot") has_skills_ = true;
      else if (k == "sessionId") {
        const bj::value& v = kv.value();
        needs_identity_check_ |= !v.is_string() || !is_transcript_id(v.get_string());
      } else if (k == "sessionFile") {
        needs_identity_check_ |= !kv.value().is_string();
      } else if (k == "updatedAt") {
        auto n = json::as_number(kv.value());
        // Not finite (an exponent past a double's range): JSON.stringify would write null.
        needs_updated_check_ = !n || !std::isfinite(*n) || *n < 0;
      }
    }
  }

  void migrate() {
    if (!has_legacy_) return;
    rename_legacy("provider", "channel");
    rename_legacy("lastProvider", "lastChannel");
    if (const bj::value* room = json::find(row_, "room")) {
      if (!is_string("groupChannel") && room->is_string()) {
        rename_legacy("room", "groupChannel");
      } else {
        report("removed room", room->is_string() ? "groupChannel is already set (legacy field)"
                                                  : fmt::format("it is {}, not a string (legacy field)", kind_name(*room)));
        json::erase(row_, "room");
      }
    }
  }

  // False when the whole row must go (the reason is reported).
  bool normalize() {
    if (needs_identity_check_ && !normalize_identity()) return false;
    if (needs_updated_check_) {
      const bj::value& at = row_.at("updatedAt");
      report("set updatedAt to 0", fmt::format("it was {}, not a non-negative number", describe(at)));
      json::set(row_, "updatedAt", 0);
    }
    if (has_model_) normalize_model();
    if (has_delivery_) {
      normalize_pending_delivery();
      drop_delivery_context_without_target("pendingFinalDeliveryContext");
      drop_delivery_context_without_target("restartRecoveryDeliveryContext");
    }
    if (bj::value* skills = has_skills_ ? row_.if_contains("skillsSnapshot") : nullptr;
        skills && skills->is_object() && skills->get_object().contains("resolvedSkills")) {
      report("removed skillsSnapshot.resolvedSkills", "it is a runtime-only cache that is never persisted");
      json::erase(skills->get_object(), "resolvedSkills");
    }
    return true;
  }

 private:
  // sessionId / sessionFile rules; false when the row must go.
  bool normalize_identity() {
    if (const bj::value* id = json::find(row_, "sessionId")) {
      if (!id->is_string() || !is_safe_session_id(id->get_string())) {
        report("removed the entry", fmt::format("sessionId {} is not a safe session id "
                                                "(^[A-Za-z0-9][A-Za-z0-9._:@-]*$, at most 255 chars)",
                                                describe(*id)));
        return false;
      }
    }
    if (const bj::value* file = json::find(row_, "sessionFile"); file && !file->is_string()) {
      report("removed sessionFile", fmt::format("it is {}, not a string", kind_name(*file)));
      json::erase(row_, "sessionFile");
    }
    if (auto id = json::get_string(row_, "sessionId"); id && !is_transcript_id(*id)) {
      auto file = json::get_string(row_, "sessionFile");
      if (!file || js_trim(*file).empty()) {
        report("removed sessionId", fmt::format("\"{}\" is not a transcript id (^[a-z0-9][a-z0-9._-]{{0,127}}$) "
                                                "and the entry has no sessionFile",
                                                *id));
        json::erase(row_, "sessionId");
      }
    }
    return true;
  }

  void report(std::string what, std::string why) {
    changes_.push_back(store_change{std::string(key_), std::move(what), std::move(why)});
  }
  bool is_string(std::string_view field) const { return json::get_string(row_, field).has_value(); }

  // OpenClaw's applySessionStoreMigrations: `to = from; delete from` when `to` is not a string.
  void rename_legacy(std::string_view from, std::string_view to) {
    const bj::value* v = json::find(row_, from);
    if (!v || !v->is_string() || is_string(to)) return;
    report(fmt::format("renamed {} to {}", from, to), "legacy field name");
    bj::value moved = *v;
    json::set(row_, to, std::move(moved));
    json::erase(row_, from);
  }

  void normalize_model() {
    const bj::value* model = json::find(row_, "model");
    const bj::value* provider = json::find(row_, "modelProvider");
    if (!model && !provider) return;
    std::string_view trimmed_model = model && model->is_string() ? js_trim(model->get_string()) : std::string_view();
    if (trimmed_model.empty()) {
      report(provider ? "removed model and modelProvider" : "removed model",
             model ? fmt::format("model {} is not a non-empty string", describe(*model)) : "there is no model");
      json::erase(row_, "model");
      json::erase(row_, "modelProvider");
      return;
    }
    if (trimmed_model.size() != model->get_string().size()) {
      report("trimmed model", fmt::format("it had surrounding white space: {}", describe(*model)));
      json::set(row_, "model", bj::string(trimmed_model));
    }
    provider = json::find(row_, "modelProvider");
    if (!provider) return;
    std::string_view trimmed_provider = provider->is_string() ? js_trim(provider->get_string()) : std::string_view();
    if (trimmed_provider.empty()) {
      report("removed modelProvider", fmt::format("it was {}, not a non-empty string", describe(*provider)));
      json::erase(row_, "modelProvider");
    } else if (trimmed_provider.size() != provider->get_string().size()) {
      report("trimmed modelProvider", fmt::format("it had surrounding white space: {}", describe(*provider)));
      json::set(row_, "modelProvider", bj::string(trimmed_provider));
    }
  }

  void drop_unless(std::string_view field, bool (*valid)(const bj::value&), const char* expected) {
    const bj::value* v = json::find(row_, field);
    if (!v || valid(*v)) return;
    report(fmt::format("removed {}", field), fmt::format("it was {}; only {} is kept", describe(*v), expected));
    json::erase(row_, field);
  }

  void normalize_pending_delivery() {
    drop_unless("pendingFinalDelivery", [](const bj::value& v) { return v.is_bool() && v.get_bool(); },
                "the literal true");
    auto timestamp = [](const bj::value& v) {
      auto n = json::as_number(v);
      return n && *n >= 0;
    };
    drop_unless("pendingFinalDeliveryCreatedAt", timestamp, "a non-negative number");
    drop_unless("pendingFinalDeliveryLastAttemptAt", timestamp, "a non-negative number");
    drop_unless("pendingFinalDeliveryAttemptCount",
                [](const bj::value& v) {
                  auto n = json::as_int(v);
                  return n && *n >= 0;
                },
                "a non-negative integer");
    auto string_or_null = [](const bj::value& v) { return v.is_string() || v.is_null(); };
    drop_unless("pendingFinalDeliveryLastError", string_or_null, "a string or null");
    drop_unless("pendingFinalDeliveryText", string_or_null, "a string or null");
    drop_unless("pendingFinalDeliveryIntentId", string_or_null, "a string or null");
  }

  void drop_delivery_context_without_target(std::string_view field) {
    const bj::value* v = json::find(row_, field);
    if (!v) return;
    auto non_empty = [&](std::string_view name) {
      auto s = v->is_object() ? json::get_string(v->get_object(), name) : std::nullopt;
      return s && !js_trim(*s).empty();
    };
    if (non_empty("channel") && non_empty("to")) return;
    report(fmt::format("removed {}", field),
           fmt::format("a delivery context needs both channel and to; it was {}", describe(*v)));
    json::erase(row_, field);
  }

  std::string_view key_;
  bj::object& row_;
  std::vector<store_change>& changes_;
  bool has_legacy_ = false;
  bool has_model_ = false;
  bool has_delivery_ = false;
  bool has_skills_ = false;
  bool needs_identity_check_ = false;
  bool needs_updated_check_ = false;
};

std::size_t fingerprint_hash(std::string_view bytes) { return std::hash<std::string_view>{}(bytes); }

// The same file, unchanged as far as one stat tells: an edit in place changes the size or the
// mtime, an editor's save by rename changes the inode.
bool same_file(const file_info& a, const file_info& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns;
}

struct identified_text {
  std::string text;
  file_info info;
};

// The file's bytes and the identity they were read from (read again when it changed meanwhile).
result<identified_text> read_identified(fs& f, const std::string& path, std::size_t max_bytes) {
  for (int attempt = 0;; ++attempt) {
    auto before = f.stat(path);
    if (!before.ok()) return before.error();
    auto text = read_file(f, path, max_bytes);
    if (!text.ok()) return text.error();
    auto after = f.stat(path);
    if (!after.ok()) return after.error();
    if (same_file(*before, *after) || attempt == 2) return identified_text{std::move(*text), *after};
  }
}

json::parse_limits limits_of(const store_file_options& o) {
  json::parse_limits l;
  l.max_bytes = o.max_bytes;
  l.max_depth = o.max_depth;
  return l;
}

status left_untouched(const std::string& path, const status& limit) {
  const bool names_path = limit.message().find(path) != std::string::npos;
  return status(limit.code(), fmt::format("{}{}; the file was left as it is, not set aside as corrupt: "
                                          "it may be valid, only over the limit; raise the limit to load it",
                                          names_path ? "" : "loading " + path + ": ", limit.message()));
}

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
      auto parsed = text.ok() ? load_from_text(*text, limits_of(options_)) : result<parsed_store>(text.error());
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

// ---------------------------------------------------------------------------------------------

result<parsed_store> load_from_text(std::string_view text, const json::parse_limits& limits) {
  if (text.empty()) return result<parsed_store>(errc::corrupt, "the file is empty (0 bytes), not a JSON object");
  parsed_store out;
  out.trailing_newline = text.back() == '\n';
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    text.remove_prefix(3);
    out.changes.push_back({"", "removed a UTF-8 byte order mark", "JSON text does not start with one"});
  }
  auto parsed = json::parse(text, limits);
  if (!parsed.ok() && parsed.error().code() == errc::corrupt) {
    std::size_t n = 0;
    const std::string repaired = to_valid_utf8(text, &n);
    if (n > 0) {
      auto again = json::parse(repaired, limits);
      if (again.ok()) {
        parsed = std::move(again);
        out.changes.push_back({"", fmt::format("replaced {} invalid UTF-8 sequence{} with U+FFFD", n, n == 1 ? "" : "s"),
                               "the file is read as Node reads it (UTF-8 with replacement)"});
      }
    }
  }
  if (!parsed.ok()) return std::move(parsed).take_error();
  if (!parsed->is_object())
    return result<parsed_store>(errc::corrupt, fmt::format("the top level is {}, not a JSON object", kind_name(*parsed)));

  bj::object& top = parsed->get_object();
  out.store.reserve(top.size());
  for (auto& kv : top) {
    const std::string_view key = kv.key();
    if (!kv.value().is_object()) {
      out.changes.push_back({std::string(key), "removed the entry",
                             fmt::format("its value is {}, not an object", kind_name(kv.value()))});
      continue;
    }
    bj::object& row = kv.value().get_object();
    row_normalizer n(key, row, out.changes);
    n.migrate();
    if (!n.normalize()) continue;
    out.store.upsert(key, session_entry(std::move(row)));
  }
  return out;
}

std::string serialize_store(const session_store& store, bool trailing_newline) {
  std::string out = store.to_pretty();
  if (trailing_newline) out += '\n';
  return out;
}

session_store merge_store_edit(const session_store& ours, session_store theirs,
                               const std::unordered_set<std::string>& unsaved, store_merge_report& report) {
  for (const auto& r : theirs) {
    if (unsaved.count(std::string(r.key))) continue;
    auto mine = ours.lookup(r.key);
    if (!mine.ok()) {
      report.changed.emplace_back(r.key);  // our copy cannot be read back: the file's is taken
    } else if (!*mine) {
      report.added.emplace_back(r.key);
    } else if ((*mine)->json() != r.entry.json()) {
      report.changed.emplace_back(r.key);
    }
  }
  for (std::string_view key : ours.keys())
    if (!unsaved.count(std::string(key)) && !theirs.contains(key)) report.removed.emplace_back(key);
  // Our changes since the last save, in our order: changed rows keep the file's place.
  for (std::string_view key : ours.keys()) {
    if (!unsaved.count(std::string(key))) continue;
    const session_entry* mine = ours.find(key);  // unsaved rows are in memory, never spilled
    report.kept_ours.emplace_back(key);
    theirs.upsert(key, mine ? *mine : session_entry());
  }
  for (const auto& key : unsaved)
    if (!ours.contains(key) && theirs.erase(key)) report.kept_ours.push_back(key);
  return theirs;
}

session_store_file::session_store_file(fs& f, clock& c, std::string path, store_file_options options)
    : fs_(f), clock_(c), path_(std::move(path)), options_(options) {}

result<store_load_report> session_store_file::load() {
  store_load_report report;
  report.path = path_;
  auto text = read_file(fs_, path_, options_.max_bytes);
  if (!text.ok()) {
    if (text.error().code() == errc::not_found) {
      store_.clear();
      backing_ = {};
      trailing_newline_ = true;
      saved_version_.reset();
      loaded_fingerprint_.reset();
      on_disk_.reset();
      unusable_.reset();
      unsaved_.clear();
      report.file_existed = false;
      report.trailing_newline = true;
      return report;
    }
    if (text.error().code() == errc::limit_exceeded) return left_untouched(path_, text.error());
    return text.error().with_context("loading session store");
  }
  report.file_existed = true;
  auto parsed = load_from_text(*text, limits_of(options_));
  if (!parsed.ok()) {
    if (parsed.error().code() == errc::limit_exceeded) return left_untouched(path_, parsed.error());
    return quarantine_and_rebuild(std::move(*text), parsed.error());
  }
  store_ = std::move(parsed->store);
  backing_ = {};
  trailing_newline_ = parsed->trailing_newline;
  saved_version_.reset();
  loaded_fingerprint_.reset();
  if (parsed->changes.empty()) loaded_fingerprint_.emplace(text->size(), fingerprint_hash(*text));
  // What was read (an edit between the read and this stat would be taken for it: a window of
  // one syscall, at start-up).
  auto info = fs_.stat(path_);
  on_disk_ = info.ok() ? std::optional<file_info>(*info) : std::nullopt;
  unusable_.reset();
  unsaved_.clear();
  report.trailing_newline = trailing_newline_;
  report.entry_count = store_.size();
  report.changes = std::move(parsed->changes);
  return report;
}

result<store_load_report> session_store_file::quarantine_and_rebuild(std::string corrupt_text, const status& cause) {
  store_load_report report;
  report.path = path_;
  report.file_existed = true;
  store_quarantine q;
  q.cause = cause.message();

  const std::string stem = store_quarantine_name(path_, clock_.now_ms());
  q.quarantined_path = stem;
  for (int n = 1; fs_.lstat(q.quarantined_path).ok(); ++n) q.quarantined_path = fmt::format("{}-{}", stem, n);
  if (status st = fs_.rename(path_, q.quarantined_path); !st.ok())
    return status(st.code(), fmt::format("{} is corrupt ({}) and could not be set aside: {}; it was left in place and "
                                         "nothing was written",
                                         path_, cause.message(), st.message()));

  session_store rebuilt = store_rebuilder(fs_, path_, options_, q, report.changes).rebuild(corrupt_text);
  std::string bytes = serialize_store(rebuilt, true);
  if (status st = write(bytes, /*durable=*/true); !st.ok()) {
    status back = fs_.rename(q.quarantined_path, path_);
    return status(st.code(),
                  fmt::format("{} is corrupt ({}) and saving the rebuilt store failed: {}; {}", path_, cause.message(),
                              st.message(),
                              back.ok() ? "the corrupt file was put back in place"
                                        : "the corrupt file is at " + q.quarantined_path + " (" + back.message() + ")"));
  }
  store_ = std::move(rebuilt);
  backing_ = {};
  trailing_newline_ = true;
  saved_version_ = store_.text_version();
  loaded_fingerprint_.reset();
  if (auto info = fs_.stat(path_); info.ok()) on_disk_ = *info;
  unusable_.reset();
  unsaved_.clear();
  report.trailing_newline = true;
  report.entry_count = store_.size();
  report.quarantine = std::move(q);
  return report;
}

status session_store_file::write(const std::string& bytes, bool durable, int* keep_fd) {
  SRT_RETURN_IF_ERROR(ensure_dir(fs_, path_dirname(path_), 0700).with_context("saving " + path_));
  replace_options o;
  o.durable = durable;
  o.mode = 0600;
  o.temp_prefix = path_basename(path_);
  o.keep_fd = keep_fd;
  return replace_file_atomic(fs_, path_, bytes, o);
}

status session_store_file::save() {
  const std::uint64_t version = store_.text_version();
  if (saved_version_ == version) return {};
  if (unusable_) {
    // An edit that does not parse stays as the other program left it, and so does whatever
    // replaced it since: reload_if_changed() must look at that first (a save in between would
    // write over an edit still being written). Only a file removed meanwhile is written again.
    auto now = fs_.stat(path_);
    if (now.ok() || now.error().code() != errc::not_found) return unusable_->why;
  }
  std::string bytes;
  SRT_RETURN_IF_ERROR(store_.append_pretty(bytes).with_context("saving " + path_));
  if (trailing_newline_) bytes += '\n';
  if (loaded_fingerprint_) {
    const bool same = *loaded_fingerprint_ == std::make_pair(bytes.size(), fingerprint_hash(bytes));
    loaded_fingerprint_.reset();
    if (same) {
      saved_version_ = version;
      unsaved_.clear();
      return {};
    }
  }
  int fd = -1;
  SRT_RETURN_IF_ERROR(write(bytes, options_.durable, &fd));
  saved_version_ = version;
  unsaved_.clear();
  unusable_.reset();
  // The file just written holds the rows; shed_rows() may keep only their place in it.
  auto backing = store_backing::adopt(fs_, fd, path_);
  if (backing.ok()) {
    on_disk_ = (*backing)->info();
    backing_ = {std::move(*backing), version};
  } else {
    auto info = fs_.stat(path_);
    on_disk_ = info.ok() ? std::optional<file_info>(*info) : std::nullopt;
  }
  return {};
}

result<std::optional<store_merge_report>> session_store_file::reload_if_changed() {
  auto now = fs_.stat(path_);
  if (!now.ok()) {
    if (now.error().code() == errc::not_found) return std::optional<store_merge_report>();
    return now.error().with_context("checking " + path_);
  }
  if (on_disk_ && same_file(*now, *on_disk_)) return std::optional<store_merge_report>();
  store_merge_report report;
  report.path = path_;
  if (unusable_ && same_file(*now, unusable_->file)) {
    // Unchanged since the last check found it unusable: not a write in progress. Said once.
    if (unusable_->reported) return std::optional<store_merge_report>();
    unusable_->reported = true;
    report.refused = unusable_->why;
    return std::optional<store_merge_report>(std::move(report));
  }
  auto text = read_identified(fs_, path_, options_.max_bytes);
  if (!text.ok()) {
    if (text.error().code() == errc::not_found) return std::optional<store_merge_report>();
    if (text.error().code() != errc::limit_exceeded) return text.error().with_context("reloading " + path_);
  }
  auto parsed = text.ok() ? load_from_text(text->text, limits_of(options_)) : result<parsed_store>(text.error());
  if (!parsed.ok()) {
    // Not taken, and not written over (save() refuses). It may be an editor's save in progress
    // (truncate, then write): it is reported only if the next check finds it unchanged.
    unusable_ = unusable_edit{text.ok() ? text->info : *now,
                              status(parsed.error().code(),
                                     fmt::format("{} was changed by another program and cannot be used ({}); it is left "
                                                 "as it is and not written over: the runtime keeps its rows and changes "
                                                 "in memory and writes them once the file is fixed or removed",
                                                 path_, parsed.error().message())),
                              false};
    return std::optional<store_merge_report>();
  }
  session_store merged = merge_store_edit(store_, std::move(parsed->store), unsaved_, report);
  report.changes = std::move(parsed->changes);
  store_ = std::move(merged);
  backing_ = {};
  trailing_newline_ = parsed->trailing_newline;
  saved_version_.reset();
  loaded_fingerprint_.reset();
  if (report.changes.empty() && unsaved_.empty())
    loaded_fingerprint_.emplace(text->text.size(), fingerprint_hash(text->text));
  on_disk_ = text->info;
  unusable_.reset();
  return std::optional<store_merge_report>(std::move(report));
}

std::size_t session_store_file::shed_rows() {
  if (backing_.first && backing_.first->size() >= options_.spill_min_bytes)
    if (std::size_t spilled = store_.spill_clean_rows(backing_.first, backing_.second); spilled > 0) return spilled;
  return store_.release_clean_rows();
}

result<store_check_report> check_store_file(fs& f, const std::string& path, const store_file_options& options) {
  store_check_report report;
  report.path = path;
  auto text = read_file(f, path, options.max_bytes);
  if (!text.ok()) {
    if (text.error().code() != errc::limit_exceeded) return text.error().with_context("checking session store");
    report.parse_status = text.error();
    return report;
  }
  report.trailing_newline = !text->empty() && text->back() == '\n';
  auto parsed = load_from_text(*text, limits_of(options));
  if (!parsed.ok()) {
    report.parse_status = parsed.error();
    return report;
  }
  report.entry_count = parsed->store.size();
  report.problems = std::move(parsed->changes);
  report.canonical = serialize_store(parsed->store, parsed->trailing_newline) == *text;
  return report;
}

result<store_load_report> rewrite_store_file(fs& f, clock& c, const std::string& path,
                                             const store_file_options& options) {
  session_store_file file(f, c, path, options);
  auto report = file.load();
  if (!report.ok()) return report;
  SRT_RETURN_IF_ERROR(file.save());
  return report;
}

}  // namespace sessionrt::storage
