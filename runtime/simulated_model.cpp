#include "runtime/simulated_model.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <vector>

#include "actors/session/overflow_detector.hpp"
#include "actors/session/silent_reply.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "messages/utf8.hpp"
#include "runtime/simulated_summary.hpp"
#include "runtime/simulated_text.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {

namespace {

using sim_text::capped;
using sim_text::contains;
using sim_text::first_nonempty_line;
using sim_text::tokens_of_text;

constexpr std::size_t kMaxQuoteWords = 8;

std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = 14695981039346656037ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The low 32 bits of `h` as 8 lowercase hex digits ("%08x"), appended.
void append_hex8(std::string& out, std::uint64_t h) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buf[8];
  for (int i = 7; i >= 0; --i, h >>= 4) buf[i] = kDigits[h & 15];
  out.append(buf, 8);
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

// UTF-16 length of a valid UTF-8 text (utf16_length's rule), at compile time.
constexpr std::size_t utf16_units(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80) ++n;  // a code point starts
    if (c >= 0xF0) ++n;           // ... that needs a surrogate pair
  }
  return n;
}
// The sentences' UTF-16 lengths, counted once (the reply adds them up every call).
constexpr std::array<std::size_t, kSentences.size()> kSentenceUnits = [] {
  std::array<std::size_t, kSentences.size()> units{};
  for (std::size_t i = 0; i < kSentences.size(); ++i) units[i] = utf16_units(kSentences[i]);
  return units;
}();

constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }

// The first words of the first non-empty line, capped; "…" marks what was left out.
// Words are split on ' ' and '\t' only, by a plain scan (find_first_of with a set calls
// memchr once per byte).
std::string quote_of(std::string_view user_text) {
  auto line = first_nonempty_line(user_text);
  if (line.empty()) return "(no user message)";
  std::string quote;
  std::size_t words = 0, i = 0;
  const std::size_t n = line.size();
  while (words < kMaxQuoteWords) {
    while (i < n && is_blank(line[i])) ++i;
    if (i == n) break;
    std::size_t end = i;
    while (end < n && !is_blank(line[end])) ++end;
    if (!quote.empty()) quote += ' ';
    quote.append(line.substr(i, end - i));
    ++words;
    i = end;
  }
  while (i < n && is_blank(line[i])) ++i;
  const bool left_out = i < n;
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

}  // namespace

// ---------- free functions ----------

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
  const auto target = static_cast<std::size_t>(std::max<std::int64_t>(reply_tokens, 0)) * 4;
  // '<opener>: "<quote>" (ref <hex8>).', then sentences until the UTF-16 length reaches target.
  const std::string quote = quote_of(user_text);
  const std::string_view opener = kOpeners[h % kOpeners.size()];
  std::string text;
  text.reserve(opener.size() + quote.size() + 20 + std::min<std::size_t>(target, 1 << 16) + 100);
  text.append(opener);
  text.append(": \"", 3);
  text.append(quote);
  text.append("\" (ref ", 7);
  append_hex8(text, h >> 32);
  text.append(").", 2);
  std::size_t length = utf16_length(text);
  for (std::size_t i = (h >> 8) % kSentences.size(); length < target; i = (i + 1) % kSentences.size()) {
    text += ' ';
    text += kSentences[i];
    length += 1 + kSentenceUnits[i];
  }
  return text;
}

// ---------- simulated_model ----------

namespace {
// `text` mixed into `h` 8 bytes at a time (the fingerprint's string step; fnv1a64 stays the
// reply's hash, whose values pick the reply's words).
std::uint64_t mix_text(std::string_view text, std::uint64_t h) {
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    h = (h ^ w) * 1099511628211ULL;
    h ^= h >> 31;
  }
  return fnv1a64(text.substr(i), h);
}

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
    case boost::json::kind::string: mix(v.get_string().size()); h = mix_text(v.get_string(), h); break;
    case boost::json::kind::array:
      mix(v.get_array().size());
      for (const auto& e : v.get_array()) h = fingerprint(e, h);
      break;
    case boost::json::kind::object:
      mix(v.get_object().size());
      for (const auto& kv : v.get_object()) {
        mix(kv.key().size());
        h = mix_text(kv.key(), h);
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

}  // namespace sessionrt::runtime
