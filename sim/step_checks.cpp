#include "sim/step_checks.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <boost/json.hpp>
#include <sstream>

#include "actors/router/session_key.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::sim {

namespace {

// A directory's names, none when it cannot be listed (not there yet).
std::vector<std::string> names_in(storage::fs& files, const std::string& dir) {
  auto names = files.list_dir(dir);
  return names.ok() ? std::move(*names) : std::vector<std::string>{};
}

}  // namespace

bool type_matches(const std::string& pattern, const std::string& type) {
  if (!pattern.empty() && pattern.back() == '.') return type.starts_with(pattern);
  return type == pattern;
}

std::string agent_of(const std::string& key) {
  auto parsed = actors::parse_agent_session_key(key);
  return parsed ? parsed->agent_id : "main";
}

std::string transcript_rel(const std::string& agent, const std::string& session_id) {
  return "agents/" + agent + "/sessions/" + session_id + ".jsonl";
}

std::vector<std::pair<std::string, std::string>> transcript_messages(storage::fs& files, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  auto text = storage::read_file(files, path, std::size_t(1) << 30);
  if (!text.ok()) return out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    auto v = json::parse(line);
    if (!v || !v->is_object()) continue;
    const auto& o = v->get_object();
    if (json::get_string(o, "type") != std::optional<std::string_view>("message")) continue;
    const auto* m = json::get_object(o, "message");
    if (!m) continue;
    out.emplace_back(std::string(json::get_string(*m, "role").value_or("")), message_text(m->if_contains("content")));
  }
  return out;
}

void step_checks::begin_step() {
  std::lock_guard<std::mutex> g(mu_);
  recording_ = true;
  step_events_.clear();
}

void step_checks::record(const lifecycle_event& e) {
  std::lock_guard<std::mutex> g(mu_);
  if (recording_) step_events_.push_back(e);
}

void step_checks::end_step() {
  std::lock_guard<std::mutex> g(mu_);
  recording_ = false;
  step_events_.clear();
}

void step_checks::expect_named(const std::string& step, bool ok, std::string what, std::string detail) {
  figs_->add_expectation({step, ok, std::move(what), ok ? std::string() : std::move(detail)});
}

void step_checks::expect(const step& s, bool ok, std::string what, std::string detail) {
  expect_named(s.id, ok, std::move(what), std::move(detail));
}

result<std::string> step_checks::transcript_of(const std::string& key) {
  auto row = rt_->session(key);
  if (!row) return row.error();
  if (!row->has_value()) return status(errc::not_found, "no row for " + key);
  const std::string id(row->value().session_id().value_or(""));
  return state_dir_ + "/" + transcript_rel(agent_of(key), id);
}

std::vector<std::string> step_checks::files_matching(const std::string& glob) const {
  std::vector<std::string> out;
  std::vector<std::string> dirs{""};  // relative to the state dir
  while (!dirs.empty()) {
    const std::string rel = std::move(dirs.back());
    dirs.pop_back();
    for (const auto& name : names_in(base_, rel.empty() ? state_dir_ : state_dir_ + "/" + rel)) {
      const std::string path = rel.empty() ? name : rel + "/" + name;
      if (::fnmatch(glob.c_str(), path.c_str(), FNM_PATHNAME) == 0) out.push_back(path);
      if (auto info = base_.lstat(state_dir_ + "/" + path); info.ok() && info->is_dir()) dirs.push_back(path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void step_checks::check_common(const step& s, const std::string& step_key) {
  const auto& e = s.expect;
  std::vector<lifecycle_event> events;
  {
    std::lock_guard<std::mutex> g(mu_);
    events = step_events_;
  }
  auto seen = [&](const std::string& pattern) {
    return std::count_if(events.begin(), events.end(), [&](const lifecycle_event& ev) { return type_matches(pattern, ev.type); });
  };
  auto seen_list = [&] {
    std::string all;
    for (const auto& ev : events) all += (all.empty() ? "" : ", ") + ev.type;
    return all.empty() ? std::string("none") : all;
  };
  for (const auto& p : e.events_include)
    expect(s, seen(p) > 0, "event " + p, "not published during the step (seen: " + seen_list() + ")");
  for (const auto& p : e.events_exclude)
    expect(s, seen(p) == 0, "no event " + p, fmt::format("published {} time(s) during the step", seen(p)));
  for (const auto& [p, n] : e.events_count)
    expect(s, n.holds(seen(p)), fmt::format("{} {} event(s)", n.describe(), p), fmt::format("saw {}", seen(p)));
  for (const auto& t : e.transcripts) {
    const std::string key = t.key.empty() ? step_key : t.key;
    auto path = transcript_of(key);
    if (!path) {
      expect(s, false, "transcript of " + key, path.error().message());
      continue;
    }
    const auto msgs = transcript_messages(base_, *path);
    auto has = [&](const std::string& text) {
      return std::any_of(msgs.begin(), msgs.end(), [&](const auto& m) { return m.second.find(text) != std::string::npos; });
    };
    for (const auto& c : t.contains) expect(s, has(c), "transcript of " + key + " contains \"" + c + "\"", "not in any of its " + std::to_string(msgs.size()) + " messages");
    for (const auto& c : t.excludes) expect(s, !has(c), "transcript of " + key + " lacks \"" + c + "\"", "found in a message");
    if (t.messages)
      expect(s, t.messages->holds(static_cast<std::int64_t>(msgs.size())),
             fmt::format("transcript of {} has {} messages", key, t.messages->describe()), fmt::format("it has {}", msgs.size()));
  }
  for (const auto& r : e.rows) {
    const std::string key = r.key.empty() ? step_key : r.key;
    auto row = rt_->session(key);
    if (!row) {
      expect(s, false, "row " + key, row.error().message());
      continue;
    }
    if (r.absent) {
      expect(s, !row->has_value(), "no row " + key, "the row exists");
      continue;
    }
    if (!row->has_value()) {
      expect(s, false, "row " + key, "no row in the store");
      continue;
    }
    const auto& obj = row->value().json();
    for (const auto& kv : r.fields) {
      const std::string field(kv.key());
      const boost::json::value* got = obj.if_contains(kv.key());
      const std::string shown = got ? boost::json::serialize(*got) : std::string("absent");
      if (kv.value().is_object()) {
        const auto& ops = kv.value().get_object();
        if (const auto* ex = ops.if_contains("exists"))
          expect(s, (got != nullptr) == ex->get_bool(), fmt::format("row {} field {} {}", key, field, ex->get_bool() ? "exists" : "absent"), "it is " + shown);
        const std::int64_t n = got ? json::as_int(*got).value_or(INT64_MIN) : INT64_MIN;
        const bool has_n = got && json::as_int(*got).has_value();
        if (const auto* lo = ops.if_contains("atLeast"))
          expect(s, has_n && n >= json::as_int(*lo).value_or(0), fmt::format("row {} field {} >= {}", key, field, json::as_int(*lo).value_or(0)), "it is " + shown);
        if (const auto* hi = ops.if_contains("atMost"))
          expect(s, has_n && n <= json::as_int(*hi).value_or(0), fmt::format("row {} field {} <= {}", key, field, json::as_int(*hi).value_or(0)), "it is " + shown);
      } else {
        expect(s, got && *got == kv.value(), fmt::format("row {} field {} = {}", key, field, boost::json::serialize(kv.value())), "it is " + shown);
      }
    }
  }
  if (e.files) {
    for (const auto& g : e.files->exist)
      expect(s, !files_matching(g).empty(), "a file matches " + g, "none does");
    for (const auto& g : e.files->absent) {
      auto m = files_matching(g);
      expect(s, m.empty(), "no file matches " + g, m.empty() ? "" : "found " + m.front());
    }
    for (const auto& [g, n] : e.files->count) {
      auto m = files_matching(g);
      expect(s, n.holds(static_cast<std::int64_t>(m.size())), fmt::format("{} file(s) match {}", n.describe(), g), fmt::format("{} do", m.size()));
    }
  }
}

void step_checks::check_turn(const step& s, const turn_outcome& out) {
  const auto& e = s.expect;
  if (e.ok) expect(s, out.st.ok() == *e.ok, *e.ok ? "turn acknowledged" : "turn fails", out.st.ok() ? "it succeeded" : "it failed: " + out.st.message());
  if (e.error_contains) expect(s, !out.st.ok() && out.st.message().find(*e.error_contains) != std::string::npos, "error contains \"" + *e.error_contains + "\"", out.st.ok() ? "the turn succeeded" : "error: " + out.st.message());
  if (e.key) expect(s, out.session_key == *e.key, "key " + *e.key, "key is " + out.session_key);
  if (e.same_session_as) {
    const std::string& other = session_of_step_[*e.same_session_as];
    expect(s, out.session_id == other, "same session as " + *e.same_session_as, fmt::format("session {} vs {}", out.session_id, other));
  }
  if (e.changed_session_from) {
    const std::string& other = session_of_step_[*e.changed_session_from];
    expect(s, !out.session_id.empty() && out.session_id != other, "new session since " + *e.changed_session_from, "still session " + out.session_id);
  }
  if (e.reset_reason) {
    const std::string got = out.new_session && !out.reset_reason.empty() ? out.reset_reason : "none";
    expect(s, got == *e.reset_reason, "reset reason " + *e.reset_reason, "reset reason is " + got);
  }
  if (e.suppressed) expect(s, out.suppressed == *e.suppressed, *e.suppressed ? "reply suppressed" : "reply delivered", out.suppressed ? "it was suppressed" : "it was delivered");
  if (e.reply_contains)
    expect(s, out.reply && out.reply->find(*e.reply_contains) != std::string::npos, "reply contains \"" + *e.reply_contains + "\"",
           out.reply ? "reply: " + out.reply->substr(0, 120) : "no reply");
  if (e.output_contains)
    expect(s, out.command_output.find(*e.output_contains) != std::string::npos, "output contains \"" + *e.output_contains + "\"",
           "output: " + out.command_output.substr(0, 160));
  session_of_step_[s.id] = out.session_id;
  check_common(s, out.session_key);
}

}  // namespace sessionrt::sim
