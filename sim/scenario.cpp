#include "sim/scenario.hpp"

#include <fmt/format.h>

#include <array>
#include <set>
#include <span>

#include "actors/session/reset_policy.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/config.hpp"
#include "runtime/config_values.hpp"

namespace sessionrt::sim {

namespace {

using boost::json::object;
using boost::json::value;

status bad(std::string_view path, std::string_view reason) {
  return status(errc::invalid_argument, fmt::format("{}: {}", path, reason));
}

std::string child(std::string_view parent, std::string_view key) { return runtime::child_key_path(parent, key); }
std::string item(std::string_view parent, std::size_t i) { return runtime::item_key_path(parent, i); }
std::string shown(const value& v) { return runtime::describe_json_value(v); }

// Every key of `o` must be in `known`.
status known_keys(const object& o, std::string_view path, std::span<const std::string_view> known) {
  for (const auto& kv : o) {
    const std::string_view k = kv.key();
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string reason = "unknown key";
    if (auto near = runtime::closest_key(k, known)) reason += fmt::format(" (did you mean {}?)", *near);
    else {
      reason += " (expected one of ";
      for (std::size_t i = 0; i < known.size(); ++i) reason += (i ? ", " : "") + std::string(known[i]);
      reason += ")";
    }
    return bad(child(path, k), reason);
  }
  return {};
}

result<const object*> as_object(const value& v, std::string_view path) {
  if (!v.is_object()) return bad(path, "expected an object, got " + shown(v));
  return &v.get_object();
}

result<std::string> as_string(const value& v, std::string_view path, bool non_empty = false) {
  if (!v.is_string() || (non_empty && v.get_string().empty()))
    return bad(path, std::string(non_empty ? "expected a non-empty string" : "expected a string") + ", got " + shown(v));
  return std::string(v.get_string());
}

result<std::int64_t> as_int(const value& v, std::string_view path, std::int64_t min = 0) {
  auto n = json::as_int(v);
  if (!n || *n < min) return bad(path, fmt::format("expected a whole number >= {}, got {}", min, shown(v)));
  return *n;
}

result<double> as_fraction(const value& v, std::string_view path) {
  if (!v.is_number() || v.to_number<double>() < 0 || v.to_number<double>() > 1)
    return bad(path, "expected a number from 0 to 1, got " + shown(v));
  return v.to_number<double>();
}

result<bool> as_bool(const value& v, std::string_view path) {
  if (!v.is_bool()) return bad(path, "expected true or false, got " + shown(v));
  return v.get_bool();
}

result<std::int64_t> as_duration(const value& v, std::string_view path) {
  std::optional<std::int64_t> ms;
  if (v.is_string()) ms = runtime::parse_duration_ms(v.get_string());
  else if (auto n = json::as_int(v); n && *n >= 0) ms = n;
  if (!ms) return bad(path, "expected a duration (whole milliseconds, or a string such as \"30s\", \"10m\", \"24h\", \"7d\"), got " + shown(v));
  return *ms;
}

result<std::vector<std::string>> as_strings(const value& v, std::string_view path) {
  if (v.is_string()) return std::vector<std::string>{std::string(v.get_string())};
  if (!v.is_array()) return bad(path, "expected a string or an array of strings, got " + shown(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.get_array().size(); ++i) {
    auto s = as_string(v.get_array()[i], item(path, i));
    if (!s) return std::move(s).take_error();
    out.push_back(std::move(*s));
  }
  return out;
}

template <std::size_t N>
result<std::string> as_choice(const value& v, std::string_view path, const std::array<std::string_view, N>& names) {
  std::string list;
  for (std::size_t i = 0; i < N; ++i) list += (i ? "|" : "") + std::string(names[i]);
  if (!v.is_string()) return bad(path, fmt::format("expected one of {}, got {}", list, shown(v)));
  for (auto n : names)
    if (v.get_string() == n) return std::string(n);
  return bad(path, fmt::format("unknown value '{}' ({})", std::string_view(v.get_string()), list));
}

#define SIM_TRY(var, expr)                             \
  auto var##_r = (expr);                               \
  if (!var##_r) return std::move(var##_r).take_error(); \
  auto var = std::move(*var##_r)

result<number_expect> as_number_expect(const value& v, std::string_view path) {
  number_expect n;
  if (auto i = json::as_int(v)) {
    n.exact = *i;
    return n;
  }
  if (!v.is_object()) return bad(path, "expected a whole number or {\"atLeast\": N, \"atMost\": N}, got " + shown(v));
  static constexpr std::array<std::string_view, 2> keys{"atLeast", "atMost"};
  SRT_RETURN_IF_ERROR(known_keys(v.get_object(), path, keys));
  if (const value* a = v.get_object().if_contains("atLeast")) {
    SIM_TRY(x, as_int(*a, child(path, "atLeast"), INT64_MIN));
    n.at_least = x;
  }
  if (const value* a = v.get_object().if_contains("atMost")) {
    SIM_TRY(x, as_int(*a, child(path, "atMost"), INT64_MIN));
    n.at_most = x;
  }
  if (!n.at_least && !n.at_most) return bad(path, "expected atLeast and/or atMost");
  return n;
}

result<std::vector<std::pair<std::string, number_expect>>> as_counts(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  std::vector<std::pair<std::string, number_expect>> out;
  for (const auto& kv : *o) {
    SIM_TRY(n, as_number_expect(kv.value(), child(path, kv.key())));
    out.emplace_back(std::string(kv.key()), n);
  }
  return out;
}

result<std::int64_t> as_time(const value& v, std::string_view path, std::int64_t start_ms) {
  if (v.is_string()) {
    const std::string_view s = v.get_string();
    if (!s.empty() && s[0] == '+') {
      if (auto d = runtime::parse_duration_ms(s.substr(1))) return start_ms + *d;
    } else if (s.size() > 10 && (s.back() == 'Z' || s[s.size() - 6] == '+' || s[s.size() - 6] == '-')) {
      if (auto t = parse_iso_ms(s)) return *t;
    }
  }
  return bad(path, "expected an ISO time with an offset (\"2026-03-29T04:30:00+02:00\") or \"+<duration>\" after the start, got " + shown(v));
}

result<chat_event> as_chat(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 14> keys{"channel", "peer", "text", "content", "kind", "sender",
                                                        "thread", "account", "agent", "sessionKey", "authorized",
                                                        "displayName", "subject", "runtimeContext"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  chat_event ev;
  const value* ch = o->if_contains("channel");
  if (!ch) return bad(child(path, "channel"), "missing (the channel the message arrives on, e.g. \"telegram\")");
  SIM_TRY(channel, as_string(*ch, child(path, "channel"), true));
  ev.channel = channel;
  const value* peer = o->if_contains("peer");
  if (!peer) return bad(child(path, "peer"), "missing (the person or chat id)");
  SIM_TRY(p, as_string(*peer, child(path, "peer"), true));
  ev.peer_id = p;
  const value* text = o->if_contains("text");
  const value* content = o->if_contains("content");
  if (!text && !content) return bad(child(path, "text"), "missing (what the user writes)");
  if (text) {
    SIM_TRY(t, as_string(*text, child(path, "text")));
    ev.text = t;
  }
  if (content) {
    if (!content->is_array()) return bad(child(path, "content"), "expected an array of content blocks, got " + shown(*content));
    ev.content = content->get_array();
  }
  auto opt_string = [&](std::string_view key, std::string& into) -> status {
    if (const value* x = o->if_contains(key)) {
      auto s = as_string(*x, child(path, key));
      if (!s) return s.error();
      into = *s;
    }
    return {};
  };
  SRT_RETURN_IF_ERROR(opt_string("kind", ev.peer_kind));
  SRT_RETURN_IF_ERROR(opt_string("sender", ev.sender_id));
  SRT_RETURN_IF_ERROR(opt_string("thread", ev.thread_id));
  SRT_RETURN_IF_ERROR(opt_string("account", ev.account_id));
  SRT_RETURN_IF_ERROR(opt_string("agent", ev.agent_id));
  SRT_RETURN_IF_ERROR(opt_string("sessionKey", ev.session_key));
  SRT_RETURN_IF_ERROR(opt_string("displayName", ev.display_name));
  SRT_RETURN_IF_ERROR(opt_string("subject", ev.subject));
  SRT_RETURN_IF_ERROR(opt_string("runtimeContext", ev.runtime_context));
  if (const value* a = o->if_contains("authorized")) {
    SIM_TRY(b, as_bool(*a, child(path, "authorized")));
    ev.sender_authorized = b;
  }
  return ev;
}

result<system_event> as_system(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 6> keys{"kind", "sessionKey", "agent", "jobId", "jobName", "text"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  system_event ev;
  const value* k = o->if_contains("kind");
  if (!k) return bad(child(path, "kind"), "missing (heartbeat|cron|exec)");
  static constexpr std::array<std::string_view, 3> kinds{"heartbeat", "cron", "exec"};
  SIM_TRY(kind, as_choice(*k, child(path, "kind"), kinds));
  ev.kind = kind == "heartbeat" ? system_event_kind::heartbeat : kind == "cron" ? system_event_kind::cron : system_event_kind::exec;
  for (auto [key, into] : {std::pair<std::string_view, std::string*>{"sessionKey", &ev.session_key},
                           {"agent", &ev.agent_id}, {"jobId", &ev.job_id}, {"jobName", &ev.job_name}, {"text", &ev.text}}) {
    if (const value* x = o->if_contains(key)) {
      SIM_TRY(s, as_string(*x, child(path, key)));
      *into = s;
    }
  }
  if (ev.kind == system_event_kind::cron && ev.job_id.empty()) return bad(child(path, "jobId"), "missing (a cron event runs a job)");
  return ev;
}

result<file_expect> as_files(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 3> keys{"exist", "absent", "count"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  file_expect f;
  if (const value* x = o->if_contains("exist")) {
    SIM_TRY(s, as_strings(*x, child(path, "exist")));
    f.exist = s;
  }
  if (const value* x = o->if_contains("absent")) {
    SIM_TRY(s, as_strings(*x, child(path, "absent")));
    f.absent = s;
  }
  if (const value* x = o->if_contains("count")) {
    SIM_TRY(c, as_counts(*x, child(path, "count")));
    f.count = c;
  }
  for (const auto& g : f.exist)
    if (g.find("..") != std::string::npos || (!g.empty() && g[0] == '/')) return bad(path, "paths are relative to the state dir, got '" + g + "'");
  return f;
}

result<transcript_expect> as_transcript(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 4> keys{"key", "contains", "excludes", "messages"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  transcript_expect t;
  if (const value* x = o->if_contains("key")) {
    SIM_TRY(s, as_string(*x, child(path, "key"), true));
    t.key = s;
  }
  if (const value* x = o->if_contains("contains")) {
    SIM_TRY(s, as_strings(*x, child(path, "contains")));
    t.contains = s;
  }
  if (const value* x = o->if_contains("excludes")) {
    SIM_TRY(s, as_strings(*x, child(path, "excludes")));
    t.excludes = s;
  }
  if (const value* x = o->if_contains("messages")) {
    SIM_TRY(n, as_number_expect(*x, child(path, "messages")));
    t.messages = n;
  }
  return t;
}

result<row_expect> as_row(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 3> keys{"key", "absent", "fields"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  row_expect r;
  if (const value* x = o->if_contains("key")) {
    SIM_TRY(s, as_string(*x, child(path, "key"), true));
    r.key = s;
  }
  if (const value* x = o->if_contains("absent")) {
    SIM_TRY(b, as_bool(*x, child(path, "absent")));
    r.absent = b;
  }
  if (const value* x = o->if_contains("fields")) {
    SIM_TRY(f, as_object(*x, child(path, "fields")));
    for (const auto& kv : *f) {
      if (!kv.value().is_object()) continue;
      const std::string p = child(child(path, "fields"), kv.key());
      static constexpr std::array<std::string_view, 3> ops{"atLeast", "atMost", "exists"};
      SRT_RETURN_IF_ERROR(known_keys(kv.value().get_object(), p, ops));
      for (const auto& op : kv.value().get_object()) {
        if (op.key() == "exists") {
          SIM_TRY(b, as_bool(op.value(), child(p, "exists")));
          (void)b;
        } else {
          SIM_TRY(n, as_int(op.value(), child(p, op.key()), INT64_MIN));
          (void)n;
        }
      }
    }
    r.fields = *f;
  }
  return r;
}

template <class T, class F>
result<std::vector<T>> one_or_many(const value& v, std::string_view path, F&& each) {
  std::vector<T> out;
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.get_array().size(); ++i) {
      auto x = each(v.get_array()[i], item(path, i));
      if (!x) return std::move(x).take_error();
      out.push_back(std::move(*x));
    }
  } else {
    auto x = each(v, path);
    if (!x) return std::move(x).take_error();
    out.push_back(std::move(*x));
  }
  return out;
}

result<step_expect> as_expect(const value& v, std::string_view path, const std::set<std::string>& earlier) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 16> keys{
      "ok", "key", "sessionId", "resetReason", "suppressed", "replyContains", "outputContains", "errorContains",
      "events", "eventsExclude", "eventCounts", "transcript", "row", "files", "newSession", "note"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  step_expect e;
  if (const value* x = o->if_contains("ok")) {
    SIM_TRY(b, as_bool(*x, child(path, "ok")));
    e.ok = b;
  }
  if (const value* x = o->if_contains("key")) {
    SIM_TRY(s, as_string(*x, child(path, "key"), true));
    e.key = s;
  }
  if (const value* x = o->if_contains("sessionId")) {
    const std::string p = child(path, "sessionId");
    SIM_TRY(so, as_object(*x, p));
    static constexpr std::array<std::string_view, 2> rel{"same", "changed"};
    SRT_RETURN_IF_ERROR(known_keys(*so, p, rel));
    if (so->size() != 1) return bad(p, "expected exactly one of {\"same\": \"<step id>\"} or {\"changed\": \"<step id>\"}");
    const auto& kv = *so->begin();
    SIM_TRY(ref, as_string(kv.value(), child(p, kv.key()), true));
    if (!earlier.count(ref)) return bad(child(p, kv.key()), "'" + ref + "' is not the id of an earlier step");
    (kv.key() == "same" ? e.same_session_as : e.changed_session_from) = ref;
  }
  if (const value* x = o->if_contains("resetReason")) {
    static constexpr std::array<std::string_view, 5> reasons{"daily", "idle", "new", "reset", "none"};
    SIM_TRY(s, as_choice(*x, child(path, "resetReason"), reasons));
    e.reset_reason = s;
  }
  if (const value* x = o->if_contains("newSession")) {
    SIM_TRY(b, as_bool(*x, child(path, "newSession")));
    if (!b) e.reset_reason = "none";
    else if (!e.reset_reason) return bad(child(path, "newSession"), "true needs a resetReason beside it (daily|idle|new|reset)");
  }
  if (const value* x = o->if_contains("suppressed")) {
    SIM_TRY(b, as_bool(*x, child(path, "suppressed")));
    e.suppressed = b;
  }
  for (auto [key, into] : {std::pair<std::string_view, std::optional<std::string>*>{"replyContains", &e.reply_contains},
                           {"outputContains", &e.output_contains}, {"errorContains", &e.error_contains}}) {
    if (const value* x = o->if_contains(key)) {
      SIM_TRY(s, as_string(*x, child(path, key), true));
      *into = s;
    }
  }
  if (const value* x = o->if_contains("events")) {
    SIM_TRY(s, as_strings(*x, child(path, "events")));
    e.events_include = s;
  }
  if (const value* x = o->if_contains("eventsExclude")) {
    SIM_TRY(s, as_strings(*x, child(path, "eventsExclude")));
    e.events_exclude = s;
  }
  if (const value* x = o->if_contains("eventCounts")) {
    SIM_TRY(c, as_counts(*x, child(path, "eventCounts")));
    e.events_count = c;
  }
  if (const value* x = o->if_contains("transcript")) {
    SIM_TRY(t, one_or_many<transcript_expect>(*x, child(path, "transcript"), as_transcript));
    e.transcripts = t;
  }
  if (const value* x = o->if_contains("row")) {
    SIM_TRY(r, one_or_many<row_expect>(*x, child(path, "row"), as_row));
    e.rows = r;
  }
  if (const value* x = o->if_contains("files")) {
    SIM_TRY(f, as_files(*x, child(path, "files")));
    e.files = f;
  }
  return e;
}

result<model_spec> as_model(const value& v, std::string_view path) {
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 6> keys{"contextWindow", "replyTokens", "latency", "failureRate",
                                                       "overflowRate", "silentMarker"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  model_spec m;
  if (const value* x = o->if_contains("contextWindow")) {
    SIM_TRY(n, as_int(*x, child(path, "contextWindow"), 1));
    m.options.context_window = n;
  }
  if (const value* x = o->if_contains("replyTokens")) {
    SIM_TRY(n, as_int(*x, child(path, "replyTokens"), 1));
    m.options.reply_tokens = n;
  }
  if (const value* x = o->if_contains("silentMarker")) {
    SIM_TRY(s, as_string(*x, child(path, "silentMarker"), true));
    m.options.silent_marker = s;
  }
  if (const value* x = o->if_contains("failureRate")) {
    SIM_TRY(f, as_fraction(*x, child(path, "failureRate")));
    m.failure_rate = f;
  }
  if (const value* x = o->if_contains("overflowRate")) {
    SIM_TRY(f, as_fraction(*x, child(path, "overflowRate")));
    m.overflow_rate = f;
  }
  if (const value* x = o->if_contains("latency")) {
    const std::string p = child(path, "latency");
    SIM_TRY(lo, as_object(*x, p));
    static constexpr std::array<std::string_view, 6> lkeys{"kind", "ms", "minMs", "maxMs", "medianMs", "sigma"};
    SRT_RETURN_IF_ERROR(known_keys(*lo, p, lkeys));
    auto& l = m.options.latency;
    static constexpr std::array<std::string_view, 3> kinds{"fixed", "uniform", "lognormal"};
    const value* k = lo->if_contains("kind");
    if (!k) return bad(child(p, "kind"), "missing (fixed|uniform|lognormal)");
    SIM_TRY(kind, as_choice(*k, child(p, "kind"), kinds));
    l.kind = kind == "fixed" ? runtime::simulated_latency::shape::fixed
             : kind == "uniform" ? runtime::simulated_latency::shape::uniform
                                 : runtime::simulated_latency::shape::lognormal;
    auto need = [&](std::string_view key, std::int64_t& into) -> status {
      const value* y = lo->if_contains(key);
      if (!y) return bad(child(p, key), "missing (needed by a " + kind + " latency)");
      auto d = as_duration(*y, child(p, key));
      if (!d) return d.error();
      into = *d;
      return {};
    };
    if (kind == "fixed") SRT_RETURN_IF_ERROR(need("ms", l.ms));
    if (kind == "uniform") {
      SRT_RETURN_IF_ERROR(need("minMs", l.min_ms));
      SRT_RETURN_IF_ERROR(need("maxMs", l.max_ms));
      if (l.max_ms < l.min_ms) return bad(child(p, "maxMs"), fmt::format("must be >= minMs ({}), got {}", l.min_ms, l.max_ms));
    }
    if (kind == "lognormal") {
      SRT_RETURN_IF_ERROR(need("medianMs", l.ms));
      if (lo->contains("maxMs")) SRT_RETURN_IF_ERROR(need("maxMs", l.max_ms));
      if (const value* s = lo->if_contains("sigma")) {
        if (!s->is_number() || s->to_number<double>() < 0 || s->to_number<double>() > 5)
          return bad(child(p, "sigma"), "expected a number from 0 to 5, got " + shown(*s));
        l.sigma = s->to_number<double>();
      }
    }
  }
  return m;
}

result<step> as_step(const value& v, std::size_t index, std::int64_t start_ms, std::int64_t prev_ms,
                     std::set<std::string>& ids) {
  const std::string path = item("steps", index);
  SIM_TRY(o, as_object(v, path));
  static constexpr std::array<std::string_view, 12> keys{"id", "at", "after", "send", "command", "system",
                                                        "advance", "fault", "crash", "maintain", "expect", "note"};
  SRT_RETURN_IF_ERROR(known_keys(*o, path, keys));
  step s;
  s.index = index;
  const value* id = o->if_contains("id");
  if (!id) return bad(child(path, "id"), "missing (each step has an id that reports and other steps name)");
  SIM_TRY(idv, as_string(*id, child(path, "id"), true));
  if (ids.count(idv)) return bad(child(path, "id"), "'" + idv + "' is already the id of an earlier step");
  s.id = idv;
  s.at_ms = prev_ms;
  if (o->contains("at") && o->contains("after")) return bad(path, "give \"at\" or \"after\", not both");
  if (const value* x = o->if_contains("at")) {
    SIM_TRY(t, as_time(*x, child(path, "at"), start_ms));
    s.at_ms = t;
  }
  if (const value* x = o->if_contains("after")) {
    SIM_TRY(d, as_duration(*x, child(path, "after")));
    s.at_ms = prev_ms + d;
  }
  if (s.at_ms < prev_ms)
    return bad(child(path, "at"), fmt::format("{} is before the previous step ({}); steps run in time order",
                                              format_iso_ms(s.at_ms), format_iso_ms(prev_ms)));
  int actions = 0;
  for (auto k : {"send", "command", "system", "advance", "fault", "crash", "maintain"}) actions += o->contains(k);
  if (actions != 1) return bad(path, "expected exactly one action: send, command, system, advance, fault, crash or maintain");
  if (const value* x = o->if_contains("send")) {
    SIM_TRY(ev, as_chat(*x, child(path, "send")));
    s.kind = step_kind::send;
    s.chat = ev;
  } else if (const value* x = o->if_contains("command")) {
    SIM_TRY(ev, as_chat(*x, child(path, "command")));
    if (ev.text.empty() || ev.text[0] != '/') return bad(child(child(path, "command"), "text"), "a command starts with '/', got \"" + ev.text + "\"");
    s.kind = step_kind::send;
    s.chat = ev;
  } else if (const value* x = o->if_contains("system")) {
    SIM_TRY(ev, as_system(*x, child(path, "system")));
    s.kind = step_kind::system;
    s.sys = ev;
  } else if (const value* x = o->if_contains("advance")) {
    SIM_TRY(d, as_duration(*x, child(path, "advance")));
    s.kind = step_kind::advance;
    s.advance_ms = d;
  } else if (const value* x = o->if_contains("fault")) {
    const std::string p = child(path, "fault");
    SIM_TRY(fo, as_object(*x, p));
    static constexpr std::array<std::string_view, 3> fkeys{"kind", "for", "target"};
    SRT_RETURN_IF_ERROR(known_keys(*fo, p, fkeys));
    static constexpr std::array<std::string_view, 3> kinds{"enospc", "eio", "short_write"};
    const value* k = fo->if_contains("kind");
    if (!k) return bad(child(p, "kind"), "missing (enospc|eio|short_write)");
    SIM_TRY(kind, as_choice(*k, child(p, "kind"), kinds));
    s.fault.kind = kind == "enospc" ? fault_kind::enospc : kind == "eio" ? fault_kind::eio : fault_kind::short_write;
    const value* f = fo->if_contains("for");
    if (!f) return bad(child(p, "for"), "missing (how long storage fails, e.g. \"10m\")");
    SIM_TRY(d, as_duration(*f, child(p, "for")));
    if (d <= 0) return bad(child(p, "for"), "must be longer than 0");
    s.fault.duration_ms = d;
    if (const value* t = fo->if_contains("target")) {
      static constexpr std::array<std::string_view, 3> targets{"any", "store", "transcript"};
      SIM_TRY(tv, as_choice(*t, child(p, "target"), targets));
      s.fault.target = tv == "any" ? fault_target::any : tv == "store" ? fault_target::store : fault_target::transcript;
    }
    s.kind = step_kind::fault;
  } else if (const value* x = o->if_contains("crash")) {
    const std::string p = child(path, "crash");
    SIM_TRY(co, as_object(*x, p));
    static constexpr std::array<std::string_view, 2> ckeys{"onEvent", "within"};
    SRT_RETURN_IF_ERROR(known_keys(*co, p, ckeys));
    if (const value* e = co->if_contains("onEvent")) {
      SIM_TRY(ev, as_string(*e, child(p, "onEvent"), true));
      s.crash.on_event = ev;
    }
    if (const value* w = co->if_contains("within")) {
      SIM_TRY(d, as_duration(*w, child(p, "within")));
      s.crash.within_ms = d;
    }
    s.kind = step_kind::crash;
  } else {
    s.kind = step_kind::maintain;
  }
  if (const value* x = o->if_contains("expect")) {
    SIM_TRY(e, as_expect(*x, child(path, "expect"), ids));
    s.expect = e;
    const bool turn = s.kind == step_kind::send;
    if (!turn && (e.ok || e.key || e.same_session_as || e.changed_session_from || e.reset_reason || e.suppressed ||
                  e.reply_contains || e.output_contains || e.error_contains))
      return bad(child(path, "expect"), "ok, key, sessionId, resetReason, suppressed and reply/output/error checks need a send or command step");
    if (!turn) {
      for (const auto& t : e.transcripts)
        if (t.key.empty()) return bad(child(child(path, "expect"), "transcript"), "needs a key on a step that sends nothing");
      for (const auto& r : e.rows)
        if (r.key.empty()) return bad(child(child(path, "expect"), "row"), "needs a key on a step that sends nothing");
    }
  }
  ids.insert(s.id);
  return s;
}

}  // namespace

bool number_expect::holds(std::int64_t v) const {
  if (exact && v != *exact) return false;
  if (at_least && v < *at_least) return false;
  if (at_most && v > *at_most) return false;
  return true;
}

std::string number_expect::describe() const {
  if (exact) return std::to_string(*exact);
  if (at_least && at_most) return fmt::format("{}..{}", *at_least, *at_most);
  if (at_least) return fmt::format(">= {}", *at_least);
  return fmt::format("<= {}", at_most.value_or(0));
}

bool step_expect::any() const {
  return ok || key || same_session_as || changed_session_from || reset_reason || suppressed || reply_contains ||
         output_contains || error_contains || !events_include.empty() || !events_exclude.empty() ||
         !events_count.empty() || !transcripts.empty() || !rows.empty() || files;
}

std::string step::label() const { return fmt::format("steps[{}] ({})", index, id); }

result<scenario> parse_scenario(std::string_view text) {
  auto parsed = json::parse_object(text, json::parse_limits{8u << 20, 64});
  if (!parsed) return parsed.error().with_context("scenario");
  const object& o = *parsed;
  static constexpr std::array<std::string_view, 12> keys{"name", "description", "start", "timeZone", "seed",
                                                        "config", "model", "steps", "workload", "until",
                                                        "expectSummary", "resolution"};
  SRT_RETURN_IF_ERROR(known_keys(o, "", keys));
  scenario sc;
  const value* name = o.if_contains("name");
  if (!name) return bad("name", "missing (the scenario's name, shown in the report)");
  SIM_TRY(n, as_string(*name, "name", true));
  sc.name = n;
  if (const value* x = o.if_contains("description")) {
    SIM_TRY(d, as_string(*x, "description"));
    sc.description = d;
  }
  const value* tz = o.if_contains("timeZone");
  if (!tz) return bad("timeZone", "missing (the IANA zone the scenario lives in, e.g. \"Europe/Berlin\")");
  SIM_TRY(zone, as_string(*tz, "timeZone", true));
  if (auto z = actors::resolve_reset_zone(zone); !z) return bad("timeZone", z.error().message());
  sc.time_zone = zone;
  const value* start = o.if_contains("start");
  if (!start) return bad("start", "missing (an ISO time with an offset, e.g. \"2026-03-27T09:00:00+01:00\")");
  SIM_TRY(t0, as_time(*start, "start", 0));
  if (start->is_string() && start->get_string().starts_with("+")) return bad("start", "must be an absolute ISO time");
  sc.start_ms = t0;
  if (const value* x = o.if_contains("seed")) {
    SIM_TRY(seed, as_int(*x, "seed", 0));
    sc.seed = static_cast<std::uint64_t>(seed);
  }
  if (const value* x = o.if_contains("resolution")) {
    SIM_TRY(r, as_duration(*x, "resolution"));
    if (r > 60000) return bad("resolution", fmt::format("at most 1 minute (60000 ms), got {}", r));
    sc.resolution_ms = r;
  }
  object config;
  if (const value* x = o.if_contains("config")) {
    SIM_TRY(c, as_object(*x, "config"));
    config = *c;
  }
  {
    // The scenario's zone is the runtime's unless the config names one; the state dir is the run's.
    object session;
    if (const value* s = config.if_contains("session"); s && s->is_object()) session = s->get_object();
    if (!session.contains("timezone")) session["timezone"] = sc.time_zone;
    config["session"] = std::move(session);
    if (config.contains("stateDir")) return bad("config.stateDir", "is set by the simulation (a fresh directory per run)");
    auto loaded = runtime::load_config_text(json::to_compact(value(config)), [](std::string_view) { return std::nullopt; });
    if (!loaded) return loaded.error().with_context("config");
    sc.settings = loaded->settings;
    sc.config_warnings = loaded->warnings;
  }
  if (const value* x = o.if_contains("model")) {
    SIM_TRY(m, as_model(*x, "model"));
    sc.model = m;
  }
  if (const value* x = o.if_contains("workload")) {
    SIM_TRY(w, as_object(*x, "workload"));
    sc.workload = *w;
  }
  std::int64_t prev = sc.start_ms;
  if (const value* x = o.if_contains("steps")) {
    if (!x->is_array()) return bad("steps", "expected an array of steps, got " + shown(*x));
    std::set<std::string> ids;
    for (std::size_t i = 0; i < x->get_array().size(); ++i) {
      SIM_TRY(s, as_step(x->get_array()[i], i, sc.start_ms, prev, ids));
      prev = s.kind == step_kind::advance ? s.at_ms + s.advance_ms : s.at_ms;
      if (s.kind == step_kind::fault) prev = s.at_ms;
      sc.steps.push_back(std::move(s));
    }
  }
  if (!sc.workload && sc.steps.empty()) return bad("steps", "a scenario needs steps, a workload, or both");
  sc.end_ms = prev;
  if (const value* x = o.if_contains("until")) {
    SIM_TRY(u, as_time(*x, "until", sc.start_ms));
    if (u < prev) return bad("until", fmt::format("{} is before the last step ({})", format_iso_ms(u), format_iso_ms(prev)));
    sc.end_ms = u;
  }
  if (const value* x = o.if_contains("expectSummary")) {
    SIM_TRY(c, as_counts(*x, "expectSummary"));
    sc.expect_summary = c;
  }
  return sc;
}

}  // namespace sessionrt::sim
