#include "actors/session/chat_command_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "actors/session/token_estimate.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {

namespace {

std::optional<std::int64_t> whole(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

queue_command parse_queue_command(std::string_view args) {
  queue_command q;
  std::size_t i = 0;
  while (i < args.size()) {
    while (i < args.size() && args[i] == ' ') ++i;
    std::size_t j = i;
    while (j < args.size() && args[j] != ' ') ++j;
    const std::string token = js_lowercase(args.substr(i, j - i));
    i = j;
    if (token.empty()) continue;
    const auto colon = token.find(':');
    const std::string name = token.substr(0, colon), value = colon == std::string::npos ? "" : token.substr(colon + 1);
    if (colon == std::string::npos) {
      if (auto m = parse_queue_mode(token)) {
        q.mode = m;
        continue;
      }
    } else if (name == "cap") {
      if (auto n = whole(value); n && *n >= 1) {
        q.cap = static_cast<std::size_t>(*n);
        continue;
      }
    } else if (name == "drop") {
      if (auto d = parse_queue_drop(value)) {
        q.drop = d;
        continue;
      }
    } else if (name == "debounce") {
      std::string_view v = value;
      std::int64_t scale = 1;
      if (v.size() > 2 && v.substr(v.size() - 2) == "ms") v.remove_suffix(2);
      else if (v.size() > 1 && v.back() == 's') {
        v.remove_suffix(1);
        scale = 1000;
      }
      if (auto n = whole(v)) {
        q.debounce_ms = *n * scale;
        continue;
      }
    }
    q.error = fmt::format("/queue: {:?} is not understood; use /queue followup|collect|interrupt|steer "
                          "[cap:N] [drop:old|new|summarize] [debounce:2s]", token);
    return q;
  }
  return q;
}

std::string format_queue(const queue_settings& q) {
  return fmt::format("Queue: {} (cap {}, drop {}, debounce {} ms)", queue_mode_name(q.mode), q.cap,
                     queue_drop_name(q.drop), q.debounce_ms);
}

std::string format_tokens(std::int64_t t) {
  if (t < 1000) return std::to_string(t);
  if (t < 1000000) {
    const double k = static_cast<double>(t) / 1000.0;
    return k < 100 ? fmt::format("{:.1f}k", k) : fmt::format("{:.0f}k", k);
  }
  return fmt::format("{:.1f}m", static_cast<double>(t) / 1e6);
}

std::string format_duration(std::int64_t ms) {
  if (ms < 0) ms = 0;
  const std::int64_t s = ms / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m", s / 60);
  if (s < 86400) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string format_status(const status_inputs& in) {
  const session_entry empty;
  const session_entry& e = in.entry ? *in.entry : empty;
  std::string provider(e.provider_override().value_or(e.model_provider().value_or(in.provider)));
  std::string model(e.model_override().value_or(e.model().value_or(in.model)));
  // The session's resolved model's window first: the row's contextTokens is what the last turn
  // saw, stale after /new <model> or sessions.patch {model}.
  const std::int64_t ctx = in.context_window > 0 ? in.context_window : e.context_tokens().value_or(200000);
  const std::int64_t total = e.total_tokens().value_or(0);
  const auto pct = std::min<std::int64_t>(999, std::llround(static_cast<double>(total) / static_cast<double>(ctx) * 100));
  std::string out;
  out += fmt::format("🧠 Model: {}{}{}\n", provider, provider.empty() ? "" : "/", model.empty() ? "(default)" : model);
  out += fmt::format("🧮 Tokens: {} in / {} out\n", format_tokens(e.input_tokens().value_or(0)),
                     format_tokens(e.output_tokens().value_or(0)));
  out += fmt::format("📚 Context: {}/{} ({}%) · 🧹 Compactions: {}\n", format_tokens(total), format_tokens(ctx), pct,
                     e.compaction_count().value_or(0));
  std::string session = fmt::format("🧵 Session: {}", in.session_key);
  if (auto started = e.session_started_at()) session += " • duration " + format_duration(in.now_ms - *started);
  if (auto updated = e.updated_at())
    session += " • updated " + format_duration(in.now_ms - *updated) + " ago";
  else
    session += " • no activity";
  out += session + "\n";
  std::string toggles = fmt::format("⚙️ Think: {}", e.thinking_level().value_or("off"));
  if (auto v = e.verbose_level(); v && *v != "off") toggles += " · verbose";
  if (auto r = e.reasoning_level(); r && *r != "off") toggles += fmt::format(" · Reasoning: {}", *r);
  if (auto el = e.elevated_level(); el && *el != "off") toggles += " · elevated";
  if (auto sp = e.send_policy()) toggles += fmt::format(" · Send: {}", *sp);
  out += toggles + "\n";
  out += fmt::format("🪢 Queue: {}", in.queue_mode);
  if (in.queue_depth) out += fmt::format(" (depth {})", in.queue_depth);
  return out;
}

std::string format_context_list(const boost::json::array& messages, std::int64_t context_window,
                                std::string_view system_prompt) {
  std::string out;
  std::int64_t total = 0;
  int i = 0;
  if (!system_prompt.empty()) {
    const std::int64_t tokens = estimate_text_tokens(system_prompt);
    total += tokens;
    std::string preview(system_prompt.substr(0, std::min<std::size_t>(system_prompt.size(), 120)));
    for (char& ch : preview)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (preview.size() > 60) preview = preview.substr(0, 57) + "...";
    out += fmt::format("  -. {:<18} ~{:>6} tok  {}\n", "system prompt", tokens, preview);
  }
  for (const auto& v : messages) {
    if (!v.is_object()) continue;
    const auto& m = v.get_object();
    const std::int64_t tokens = estimate_tokens(m);
    total += tokens;
    std::string preview;
    if (auto s = json::get_string(m, "summary")) preview = *s;
    else if (auto c = json::get_string(m, "content")) preview = *c;
    else if (const auto* a = json::get_array(m, "content"))
      for (const auto& b : *a)
        if (b.is_object()) {
          if (auto t = json::get_string(b.get_object(), "text")) {
            preview = *t;
            break;
          }
          if (auto name = json::get_string(b.get_object(), "name")) preview = fmt::format("(tool call {})", *name);
        }
    for (char& ch : preview)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (preview.size() > 60) preview = preview.substr(0, 57) + "...";
    out += fmt::format("{:>3}. {:<18} ~{:>6} tok  {}\n", ++i, json::get_string(m, "role").value_or("?"), tokens, preview);
  }
  out += fmt::format("{} message(s), ~{} tokens of a {} window", i, format_tokens(total), format_tokens(context_window));
  return out;
}

}  // namespace sessionrt::actors
