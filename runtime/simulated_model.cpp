#include "runtime/simulated_model.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "actors/session/overflow_detector.hpp"
#include "actors/session/silent_reply.hpp"
#include "actors/session/summary_prompt.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/ascii_text.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "messages/utf8.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {

namespace {

constexpr std::size_t kMaxQuoteWords = 8;
constexpr std::size_t kMaxItemUnits = 120;  // UTF-16 units of one summary item
constexpr std::size_t kMaxDoneItems = 20;
constexpr std::size_t kMaxListItems = 8;    // goals, constraints, decisions, early progress

// ---------- text helpers ----------

std::int64_t tokens_of_text(std::string_view text) {
  return static_cast<std::int64_t>((utf16_length(text) + 3) / 4);
}

// Bytes of the longest prefix of `text` of at most `max_units` UTF-16 units, ending at a code point.
std::size_t prefix_bytes_within(std::string_view text, std::size_t max_units) {
  std::size_t units = 0, bytes = 0;
  while (bytes < text.size()) {
    auto cp = decode_utf8_at(text, bytes);
    std::size_t width = cp.length == 0 ? 1 : cp.length;
    std::size_t cp_units = cp.length == 4 ? 2 : 1;
    if (units + cp_units > max_units) break;
    units += cp_units;
    bytes += width;
  }
  return bytes;
}

// `text`, or its first max_units units + "…".
std::string capped(std::string_view text, std::size_t max_units) {
  if (utf16_length(text) <= max_units) return std::string(text);
  return std::string(text.substr(0, prefix_bytes_within(text, max_units - 1))) + "…";
}

std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = 14695981039346656037ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex8(std::uint64_t h) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(h & 0xffffffffU));
  return buf;
}

bool contains(std::string_view text, std::string_view needle) {
  return !needle.empty() && text.find(needle) != std::string_view::npos;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string_view first_nonempty_line(std::string_view text) {
  for (auto line : lines_of(text))
    if (auto t = js_trim(line); !t.empty()) return t;
  return {};
}

// The text between `open` and the last `close` after it; nullopt without `open`.
std::optional<std::string_view> tagged(std::string_view text, std::string_view open, std::string_view close,
                                       std::size_t from = 0) {
  auto start = text.find(open, from);
  if (start == std::string_view::npos) return std::nullopt;
  start += open.size();
  auto end = text.rfind(close);
  if (end == std::string_view::npos || end < start) end = text.size();
  return text.substr(start, end - start);
}

// ---------- requests ----------

std::string text_of_content(const boost::json::value* content) {
  if (content == nullptr) return {};
  if (const auto* s = content->if_string()) return std::string(s->begin(), s->end());
  std::string out;
  if (const auto* blocks = content->if_array()) {
    for (const auto& v : *blocks) {
      const auto* b = v.if_object();
      if (b == nullptr || json::get_string(*b, "type").value_or("") != "text") continue;
      if (!out.empty()) out += "\n";
      out += json::get_string(*b, "text").value_or("");
    }
  }
  return out;
}

std::string last_user_text(const boost::json::array& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    const auto* m = it->if_object();
    if (m != nullptr && json::get_string(*m, "role").value_or("") == "user")
      return text_of_content(json::find(*m, "content"));
  }
  return {};
}

bool known_purpose(std::string_view purpose) {
  return purpose == "turn" || purpose == "memory_flush" || purpose == "compaction_summary";
}

// ---------- replies ----------

constexpr std::array<std::string_view, 4> kOpeners = {"Noted", "Understood", "Got it", "Acknowledged"};
constexpr std::array<std::string_view, 8> kSentences = {
    "I have noted this and will keep it in mind for the rest of the session.",
    "Nothing here needs a tool call, so I am answering directly.",
    "Let me know if you want more detail on any part of it.",
    "This reply comes from the simulated model, so its wording is fixed for a given message.",
    "The session keeps this exchange in its transcript like any other turn.",
    "If this was meant as a task, tell me the next step and I will continue from here.",
    "I am keeping the answer short on purpose.",
    "Everything said so far remains part of the context.",
};

// The first words of the first non-empty line, capped; "…" marks what was left out.
std::string quote_of(std::string_view user_text) {
  auto line = first_nonempty_line(user_text);
  if (line.empty()) return "(no user message)";
  std::string quote;
  std::size_t words = 0, i = 0;
  while (words < kMaxQuoteWords) {
    i = line.find_first_not_of(" \t", i);
    if (i == std::string_view::npos) break;
    auto end = std::min(line.find_first_of(" \t", i), line.size());
    if (!quote.empty()) quote += ' ';
    quote.append(line.substr(i, end - i));
    ++words;
    i = end;
  }
  bool left_out = line.find_first_not_of(" \t", std::min(i, line.size())) != std::string_view::npos;
  auto out = capped(quote, 80);
  if (left_out && out.size() == quote.size()) out += "…";
  return out;
}

struct reply {
  std::string text;
  std::string stop_reason = "stop";
};

reply cut_to_max_tokens(std::string text, std::int64_t max_tokens) {
  if (max_tokens <= 0 || tokens_of_text(text) <= max_tokens) return {std::move(text), "stop"};
  return {truncate_to_tokens(text, max_tokens), "length"};
}

// ---------- summaries ----------

enum class part_kind { user, assistant, thinking, tool_calls, tool_result };

struct part {
  part_kind kind;
  std::string line;  // first non-empty line, capped
};

constexpr std::array<std::pair<std::string_view, part_kind>, 5> kPartPrefixes = {{
    {"[User]: ", part_kind::user},
    {"[Assistant]: ", part_kind::assistant},
    {"[Assistant thinking]: ", part_kind::thinking},
    {"[Assistant tool calls]: ", part_kind::tool_calls},
    {"[Tool result]: ", part_kind::tool_result},
}};

std::optional<std::pair<part_kind, std::string_view>> part_start(std::string_view line) {
  for (const auto& [prefix, kind] : kPartPrefixes)
    if (line.starts_with(prefix)) return std::pair{kind, line.substr(prefix.size())};
  return std::nullopt;
}

// The parts of a serialized conversation, each with its first non-empty line.
std::vector<part> parts_of(std::string_view conversation) {
  std::vector<part> parts;
  for (auto line : lines_of(conversation)) {
    if (auto start = part_start(line)) {
      parts.push_back({start->first, capped(js_trim(start->second), kMaxItemUnits)});
    } else if (!parts.empty() && parts.back().line.empty()) {
      parts.back().line = capped(js_trim(line), kMaxItemUnits);
    }
  }
  return parts;
}

std::vector<std::string> lines_of_kind(const std::vector<part>& parts, part_kind kind) {
  std::vector<std::string> out;
  for (const auto& p : parts)
    if (p.kind == kind) out.push_back(p.line.empty() ? "(empty message)" : p.line);
  return out;
}

std::size_t count_of_kind(const std::vector<part>& parts, part_kind kind) {
  auto of_kind = [&](const part& p) { return p.kind == kind; };
  return static_cast<std::size_t>(std::count_if(parts.begin(), parts.end(), of_kind));
}

// The trimmed non-empty lines under the heading line `heading`, up to the next heading.
std::vector<std::string_view> section_lines(std::string_view summary, std::string_view heading) {
  std::vector<std::string_view> out;
  bool inside = false;
  for (auto raw : lines_of(summary)) {
    auto line = js_trim(raw);
    if (line.starts_with("#")) {
      if (inside) break;
      inside = line == heading;
    } else if (inside && !line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

bool is_placeholder(std::string_view item) { return item == "(none)" || item.ends_with("items omitted)"); }

// Items of a previous summary's section: lines starting with `marker`, placeholders dropped.
std::vector<std::string> carried_items(std::string_view summary, std::string_view heading, std::string_view marker) {
  std::vector<std::string> out;
  for (auto line : section_lines(summary, heading)) {
    if (!line.starts_with(marker)) continue;
    auto item = js_trim(line.substr(marker.size()));
    if (!item.empty() && !is_placeholder(item)) out.emplace_back(item);
  }
  return out;
}

void append_new(std::vector<std::string>& items, const std::vector<std::string>& more) {
  for (const auto& m : more)
    if (std::find(items.begin(), items.end(), m) == items.end()) items.push_back(m);
}

// The last `cap` items; how many were dropped.
std::size_t keep_last(std::vector<std::string>& items, std::size_t cap) {
  if (items.size() <= cap) return 0;
  std::size_t dropped = items.size() - cap;
  items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(dropped));
  return dropped;
}

std::string bullet_list(const std::vector<std::string>& items, std::string_view marker) {
  if (items.empty()) return "- (none)\n";
  std::string out;
  for (const auto& item : items) out += std::string(marker) + item + "\n";
  return out;
}

bool states_constraint(std::string_view line) {
  auto lower = ascii_lower(line);
  for (std::string_view word : {"must ", "never ", "always ", "prefer", "don't ", "do not ", "only "})
    if (contains(lower, word)) return true;
  return false;
}

struct summary_parts {
  std::vector<std::string> goals, constraints, done, in_progress, decisions;
  std::size_t done_dropped = 0;
};

summary_parts collect(const summary_source& source, const std::vector<part>& parts) {
  summary_parts s;
  auto users = lines_of_kind(parts, part_kind::user);
  bool ends_with_user = !parts.empty() && parts.back().kind == part_kind::user;

  s.goals = carried_items(source.previous_summary, "## Goal", "");
  if (!users.empty()) append_new(s.goals, {users.front()});
  keep_last(s.goals, kMaxListItems);

  s.constraints = carried_items(source.previous_summary, "## Constraints & Preferences", "- ");
  for (const auto& u : users)
    if (states_constraint(u)) append_new(s.constraints, {u});
  keep_last(s.constraints, kMaxListItems);

  // Earlier work in progress counts as done once the conversation went on.
  s.done = carried_items(source.previous_summary, "### Done", "- [x] ");
  auto earlier_in_progress = carried_items(source.previous_summary, "### In Progress", "- [ ] ");
  auto& progress_target = parts.empty() ? s.in_progress : s.done;
  progress_target.insert(progress_target.end(), earlier_in_progress.begin(), earlier_in_progress.end());
  if (ends_with_user) {
    s.in_progress.push_back(users.back());
    users.pop_back();
  }
  s.done.insert(s.done.end(), users.begin(), users.end());
  s.done_dropped = keep_last(s.done, kMaxDoneItems);

  s.decisions = carried_items(source.previous_summary, "## Key Decisions", "- ");
  auto answers = lines_of_kind(parts, part_kind::assistant);
  if (!answers.empty()) append_new(s.decisions, {"**Answered**: " + answers.back()});
  keep_last(s.decisions, kMaxListItems);
  return s;
}

std::string done_section(const summary_parts& s) {
  std::string out = "### Done\n";
  if (s.done_dropped > 0) out += "- (" + std::to_string(s.done_dropped) + " earlier items omitted)\n";
  if (s.done.empty() && s.done_dropped == 0) return out + "- (none)\n";
  return out + bullet_list(s.done, "- [x] ");
}

std::string critical_context(const summary_source& source, const std::vector<part>& parts) {
  std::string out = "- Summarized " + std::to_string(count_of_kind(parts, part_kind::user)) + " user messages, " +
                    std::to_string(count_of_kind(parts, part_kind::assistant)) + " assistant replies, " +
                    std::to_string(count_of_kind(parts, part_kind::tool_calls)) + " tool call groups, " +
                    std::to_string(count_of_kind(parts, part_kind::tool_result)) + " tool results.\n";
  // OpenClaw puts the user's /compact instructions after its identifier sentence.
  constexpr std::string_view user_focus = "Additional focus:\n";
  auto focus_text = source.focus;
  if (auto at = focus_text.find(user_focus); at != std::string_view::npos)
    focus_text.remove_prefix(at + user_focus.size());
  if (auto focus = first_nonempty_line(focus_text); !focus.empty())
    out += "- Focus: " + capped(focus, kMaxItemUnits) + "\n";
  return out;
}

std::string history_summary(const summary_source& source, const std::vector<part>& parts) {
  auto s = collect(source, parts);
  std::string out = "## Goal\n";
  out += s.goals.empty() ? std::string("(none)\n") : bullet_list(s.goals, "");
  out += "\n## Constraints & Preferences\n" + bullet_list(s.constraints, "- ");
  out += "\n## Progress\n" + done_section(s);
  out += "\n### In Progress\n";
  out += s.in_progress.empty() ? std::string("- (none)\n") : bullet_list(s.in_progress, "- [ ] ");
  out += "\n### Blocked\n- (none)\n";
  out += "\n## Key Decisions\n" + bullet_list(s.decisions, "- ");
  out += "\n## Next Steps\n";
  out += s.in_progress.empty() ? std::string("1. Wait for the next user message.\n")
                               : "1. Continue with: " + s.in_progress.front() + "\n";
  out += "\n## Critical Context\n" + critical_context(source, parts);
  return out;
}

std::string turn_prefix_summary(const summary_source& source, const std::vector<part>& parts) {
  auto users = lines_of_kind(parts, part_kind::user);
  std::vector<std::string> progress;
  for (const auto& p : parts)
    if (p.kind == part_kind::assistant || p.kind == part_kind::tool_calls) progress.push_back(p.line);
  keep_last(progress, kMaxListItems);
  std::string out = "## Original Request\n" + (users.empty() ? std::string("(none)") : users.front()) + "\n";
  out += "\n## Early Progress\n" + bullet_list(progress, "- ");
  out += "\n## Context for Suffix\n" + critical_context(source, parts);
  return out;
}

status cancelled_status() { return status(errc::cancelled, "simulated compaction provider: cancelled by the caller"); }

}  // namespace

// ---------- free functions ----------

std::string truncate_to_tokens(std::string_view text, std::int64_t max_tokens) {
  if (max_tokens <= 0 || tokens_of_text(text) <= max_tokens) return std::string(text);
  auto bytes = prefix_bytes_within(text, static_cast<std::size_t>(max_tokens) * 4);
  auto head = text.substr(0, bytes);
  if (auto nl = head.rfind('\n'); nl != std::string_view::npos && nl > 0) head = head.substr(0, nl);
  return std::string(head);
}

std::string simulated_summary(const summary_source& source, std::int64_t max_tokens) {
  auto parts = parts_of(source.conversation);
  auto text = source.turn_prefix ? turn_prefix_summary(source, parts) : history_summary(source, parts);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return truncate_to_tokens(text, max_tokens);
}

summary_source summary_source_of(std::string_view user_text) {
  summary_source source;
  constexpr std::string_view close = "\n</conversation>";
  auto conversation = tagged(user_text, "<conversation>\n", close);
  source.conversation = conversation.value_or(user_text);
  std::size_t tail = conversation ? user_text.rfind(close) : user_text.size();
  if (tail == std::string_view::npos) tail = user_text.size();
  auto rest = user_text.substr(tail);
  source.previous_summary = tagged(rest, "<previous-summary>\n", "\n</previous-summary>").value_or("");
  constexpr std::string_view focus_label = "\n\nAdditional focus: ";
  if (auto at = rest.find(focus_label); at != std::string_view::npos)
    source.focus = rest.substr(at + focus_label.size());
  source.turn_prefix = contains(rest, actors::kTurnPrefixSummarizationPrompt);
  return source;
}

std::int64_t simulated_prompt_tokens(const model_request& request) {
  std::int64_t tokens = tokens_of_text(request.system_prompt);
  for (const auto& v : request.messages)
    if (const auto* m = v.if_object()) tokens += actors::estimate_tokens(*m);
  return tokens;
}

std::string simulated_overflow_text(std::int64_t prompt_tokens, std::int64_t context_window) {
  return "prompt is too long: " + std::to_string(prompt_tokens) + " tokens > " + std::to_string(context_window) +
         " maximum";
}

std::string simulated_reply_text(std::string_view user_text, std::int64_t reply_tokens) {
  auto h = fnv1a64(user_text);
  std::string text = fmt::format("{}: \"{}\" (ref {}).", kOpeners[h % kOpeners.size()], quote_of(user_text), hex8(h >> 32));
  auto target = static_cast<std::size_t>(std::max<std::int64_t>(reply_tokens, 0)) * 4;
  std::size_t length = utf16_length(text);
  for (std::size_t i = (h >> 8) % kSentences.size(); length < target; i = (i + 1) % kSentences.size()) {
    text += ' ';
    text += kSentences[i];
    length += 1 + utf16_length(kSentences[i]);
  }
  return text;
}

// ---------- simulated_model ----------

namespace {
// A hash of the value's structure and contents, in order (no text is built): equal messages
// give equal fingerprints.
std::uint64_t fingerprint(const boost::json::value& v, std::uint64_t h) {
  auto mix = [&h](std::uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
  mix(static_cast<std::uint64_t>(v.kind()) + 1);
  switch (v.kind()) {
    case boost::json::kind::null: break;
    case boost::json::kind::bool_: mix(v.get_bool() ? 1 : 0); break;
    case boost::json::kind::int64: mix(static_cast<std::uint64_t>(v.get_int64())); break;
    case boost::json::kind::uint64: mix(v.get_uint64()); break;
    case boost::json::kind::double_: {
      std::uint64_t bits;
      const double d = v.get_double();
      std::memcpy(&bits, &d, sizeof bits);
      mix(bits);
      break;
    }
    case boost::json::kind::string: mix(v.get_string().size()); h = fnv1a64(v.get_string(), h); break;
    case boost::json::kind::array:
      mix(v.get_array().size());
      for (const auto& e : v.get_array()) h = fingerprint(e, h);
      break;
    case boost::json::kind::object:
      mix(v.get_object().size());
      for (const auto& kv : v.get_object()) {
        mix(kv.key().size());
        h = fnv1a64(kv.key(), h);
        h = fingerprint(kv.value(), h);
      }
      break;
  }
  return h;
}
std::uint64_t message_fingerprint(const boost::json::value& m) { return fingerprint(m, 14695981039346656037ULL); }
}  // namespace

// A session's context grows by appends between compactions, and a compaction rewrites it from
// its first message on: when the first message and the last one counted last time are both
// unchanged, the count of that prefix is reused and only the new messages are estimated.
// Sessions whose prefix count is kept (then the cache starts afresh): enough for the sessions
// in conversation at once; a session that went quiet is counted afresh when it comes back.
constexpr std::size_t kPrefixCacheSessions = 1024;

std::int64_t simulated_model::prompt_tokens_of(const model_request& request) {
  const auto& msgs = request.messages;
  if (request.session_id.empty() || msgs.empty()) return simulated_prompt_tokens(request);
  prefix_sum cached;
  {
    std::lock_guard<std::mutex> g(prefix_mutex_);
    if (auto it = prefixes_.find(request.session_id); it != prefixes_.end()) cached = it->second;
  }
  const std::uint64_t first = message_fingerprint(msgs.front());
  const bool reuse = cached.count > 0 && cached.count <= msgs.size() && cached.first_fingerprint == first &&
                     message_fingerprint(msgs[cached.count - 1]) == cached.last_fingerprint;
  std::int64_t tokens = reuse ? cached.tokens : 0;
  for (std::size_t i = reuse ? cached.count : 0; i < msgs.size(); ++i)
    if (const auto* m = msgs[i].if_object()) tokens += actors::estimate_tokens(*m);
  {
    std::lock_guard<std::mutex> g(prefix_mutex_);
    if (prefixes_.size() >= kPrefixCacheSessions && !prefixes_.count(request.session_id))
      prefixes_.clear();  // bounded: only a speed-up
    prefixes_[request.session_id] = prefix_sum{msgs.size(), tokens, first, message_fingerprint(msgs.back())};
  }
  return tokens + tokens_of_text(request.system_prompt);
}

simulated_model::simulated_model(clock& clock, simulated_model_options options)
    : clock_(clock), options_(std::move(options)), latency_state_(options_.latency.seed), latency_(options_.latency) {}

void simulated_model::set_latency(simulated_latency latency) {
  std::lock_guard lock(latency_mutex_);
  latency_ = latency;
}

result<boost::json::object> simulated_model::run(const model_request& request) { return respond(request, request.on_text); }

std::int64_t simulated_model::draw_latency_ms() {
  simulated_latency l;
  double u1, u2;
  {
    // splitmix64: small, seedable, the same on every platform (std:: distributions are not).
    std::lock_guard lock(latency_mutex_);
    l = latency_;
    if (l.kind == simulated_latency::shape::fixed) return std::max<std::int64_t>(0, l.ms);
    auto next = [this] {
      std::uint64_t z = (latency_state_ += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;  // [0, 1)
    };
    u1 = next();
    u2 = next();
  }
  if (l.kind == simulated_latency::shape::uniform)
    return l.min_ms + static_cast<std::int64_t>(u1 * static_cast<double>(std::max<std::int64_t>(0, l.max_ms - l.min_ms) + 1));
  // Box-Muller for a standard normal, then median * e^(sigma z).
  const double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
  auto ms = static_cast<std::int64_t>(std::llround(static_cast<double>(l.ms) * std::exp(l.sigma * z)));
  if (l.max_ms > 0) ms = std::min(ms, l.max_ms);
  return std::max<std::int64_t>(0, ms);
}

void simulated_model::start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                            std::shared_ptr<const cancellation> cancel) {
  const std::int64_t latency = draw_latency_ms();
  if (latency <= 0) {
    done->complete(run(*request));
    return;
  }
  // The answer now (deterministic for the clock reading at the call's start); its pieces and
  // the answer itself at start + latency.
  auto pieces = std::make_shared<std::vector<std::string>>();
  auto answer = std::make_shared<result<boost::json::object>>(
      respond(*request, [&](std::string_view piece) { pieces->emplace_back(piece); }));
  const auto n = in_flight_.fetch_add(1) + 1;
  for (auto peak = peak_in_flight_.load(); n > peak && !peak_in_flight_.compare_exchange_weak(peak, n);) {
  }
  auto finished = std::make_shared<std::atomic<bool>>(false);
  alarms& timers = options_.timers ? *options_.timers : storage::real_alarms();
  const alarms::id alarm = timers.at(clock_.now_ms() + latency, [this, request, done, pieces, answer, finished] {
    if (finished->exchange(true)) return;
    in_flight_.fetch_sub(1);
    if (request->on_text)
      for (const auto& p : *pieces) request->on_text(p);
    done->complete(std::move(*answer));
  });
  if (cancel)
    cancel->on_cancel([this, done, finished, alarm, &timers] {
      if (finished->exchange(true)) return;
      timers.cancel(alarm);
      in_flight_.fetch_sub(1);
      cancelled_calls_.fetch_add(1);
      done->complete(result<boost::json::object>(errc::cancelled, "simulated model: the call was cancelled"));
    });
}

result<boost::json::object> simulated_model::respond(const model_request& request,
                                                     const std::function<void(std::string_view)>& on_text) {
  if (!known_purpose(request.purpose))
    return failed(status(errc::invalid_argument, "simulated model: unknown purpose '" + request.purpose +
                                                     "'; expected turn, memory_flush or compaction_summary"));
  count_purpose(request.purpose);
  if (auto forced = take_forced_failure()) {
    forced_failures_.fetch_add(1);
    return failed(std::move(*forced));
  }
  auto prompt_tokens = prompt_tokens_of(request);
  if (prompt_tokens > options_.context_window) {
    window_overflows_.fetch_add(1);
    return failed(status(errc::limit_exceeded, simulated_overflow_text(prompt_tokens, options_.context_window)));
  }
  auto a = answer(request, prompt_tokens);
  if (a.ok() && on_text && options_.stream_chunk_bytes > 0) {
    const std::string text = message_text(a->if_contains("content"));
    for (std::size_t at = 0; at < text.size(); at += options_.stream_chunk_bytes)
      on_text(std::string_view(text).substr(at, options_.stream_chunk_bytes));
  }
  return a;
}

result<boost::json::object> simulated_model::answer(const model_request& request, std::int64_t prompt_tokens) {
  auto user_text = last_user_text(request.messages);
  reply r;
  if (request.purpose == "compaction_summary") {
    r = cut_to_max_tokens(simulated_summary(summary_source_of(user_text), 0), request.max_tokens);
  } else if (request.purpose == "memory_flush" || contains(user_text, kFlushPromptMarker) ||
             contains(user_text, options_.silent_marker)) {
    r.text = std::string(actors::silent_reply_token);
  } else {
    r = cut_to_max_tokens(simulated_reply_text(user_text, options_.reply_tokens), request.max_tokens);
  }

  assistant_fields a;
  a.content.push_back(text_block(r.text));
  a.api = options_.api;
  a.provider = request.provider.empty() ? options_.provider : request.provider;
  a.model = request.model.empty() ? options_.model : request.model;
  a.usage.input = prompt_tokens;
  a.usage.output = tokens_of_text(r.text);
  a.usage.cost_input = static_cast<double>(a.usage.input) * options_.input_cost_per_token;
  a.usage.cost_output = static_cast<double>(a.usage.output) * options_.output_cost_per_token;
  a.stop_reason = r.stop_reason;
  a.timestamp_ms = clock_.now_ms();
  input_tokens_.fetch_add(a.usage.input);
  output_tokens_.fetch_add(a.usage.output);
  return assistant_message(std::move(a));
}

void simulated_model::fail_next(int count, std::string error_text, std::optional<errc> code) {
  std::lock_guard lock(failure_mutex_);
  if (count <= 0) {
    forced_ = {};
    return;
  }
  auto default_code = actors::is_context_overflow_error(error_text) ? errc::limit_exceeded : errc::io_error;
  forced_ = {count, std::move(error_text), code.value_or(default_code)};
}

std::optional<status> simulated_model::take_forced_failure() {
  std::lock_guard lock(failure_mutex_);
  if (forced_.remaining <= 0) return std::nullopt;
  --forced_.remaining;
  return status(forced_.code, forced_.text);
}

status simulated_model::failed(status error) {
  failed_calls_.fetch_add(1);
  return error;
}

void simulated_model::count_purpose(std::string_view purpose) {
  if (purpose == "turn") turn_calls_.fetch_add(1);
  else if (purpose == "memory_flush") memory_flush_calls_.fetch_add(1);
  else compaction_summary_calls_.fetch_add(1);
}

simulated_model_counters simulated_model::counters() const {
  simulated_model_counters c;
  c.turn_calls = turn_calls_.load();
  c.memory_flush_calls = memory_flush_calls_.load();
  c.compaction_summary_calls = compaction_summary_calls_.load();
  c.failed_calls = failed_calls_.load();
  c.forced_failures = forced_failures_.load();
  c.window_overflows = window_overflows_.load();
  c.input_tokens = input_tokens_.load();
  c.output_tokens = output_tokens_.load();
  c.cancelled_calls = cancelled_calls_.load();
  c.in_flight = in_flight_.load();
  c.peak_in_flight = peak_in_flight_.load();
  return c;
}

// ---------- simulated_compaction_provider ----------

result<std::string> simulated_compaction_provider::summarize(const summarize_request& request,
                                                             const cancellation& cancel) {
  calls_.fetch_add(1);
  if (cancel.cancelled()) return cancelled_status();
  {
    std::lock_guard lock(mutex_);
    if (mode_ == mode::fail) return error_;
    if (mode_ == mode::empty) return std::string();
  }
  std::vector<boost::json::object> messages;
  for (const auto& v : request.messages)
    if (const auto* m = v.if_object()) messages.push_back(*m);
  auto llm = actors::convert_to_llm(messages);
  if (stop_after("convert", cancel)) return cancelled_status();
  auto conversation = actors::serialize_conversation(llm);
  if (stop_after("serialize", cancel)) return cancelled_status();
  summary_source source{conversation, request.previous_summary, request.custom_instructions};
  auto summary = simulated_summary(source, request.max_tokens);
  if (stop_after("summarize", cancel)) return cancelled_status();
  return summary;
}

void simulated_compaction_provider::fail_with(status error) {
  std::lock_guard lock(mutex_);
  error_ = std::move(error);
  mode_ = error_.ok() ? mode::summarize : mode::fail;
}

void simulated_compaction_provider::return_empty() {
  std::lock_guard lock(mutex_);
  mode_ = mode::empty;
}

void simulated_compaction_provider::succeed() {
  std::lock_guard lock(mutex_);
  mode_ = mode::summarize;
}

void simulated_compaction_provider::observe_steps(step_observer observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

bool simulated_compaction_provider::stop_after(std::string_view step, const cancellation& cancel) {
  step_observer observer;
  {
    std::lock_guard lock(mutex_);
    observer = observer_;
  }
  if (observer) observer(step);
  return cancel.cancelled();
}

}  // namespace sessionrt::runtime
