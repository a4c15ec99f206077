#include "actors/session/memory_flush_planner.hpp"

#include <date/date.h>
#include <date/tz.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

#include "messages/ascii_text.hpp"

namespace sessionrt::actors {
namespace {

// The three safety hints and the default texts [R§7.1] (OpenClaw 2026.7.x,
// extensions/memory-core flush-plan). 2026.9.x dropped "TOOLS.md" from the read-only hint;
// the reference text keeps it, and so do we.
constexpr std::string_view target_hint =
    "Store durable memories only in memory/YYYY-MM-DD.md (create memory/ if needed).";
constexpr std::string_view read_only_hint =
    "Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, "
    "and AGENTS.md as read-only during this flush; never overwrite, replace, or edit them.";
constexpr std::string_view append_only_hint =
    "If memory/YYYY-MM-DD.md already exists, APPEND new content only and do not overwrite "
    "existing entries.";
constexpr std::array<std::string_view, 3> required_hints = {target_hint, append_only_hint,
                                                            read_only_hint};

constexpr std::string_view no_reply_hint =
    "\n\nIf no user-visible reply is needed, start with NO_REPLY.";
constexpr std::string_view date_placeholder = "YYYY-MM-DD";
constexpr std::string_view current_time_marker = "Current time:";

// ascii_trim stands in for JavaScript's trim() here: a config text plausibly holds ASCII
// whitespace only (the flush texts are ASCII).
std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t pos = 0;
  for (auto hit = text.find(from); hit != std::string_view::npos; hit = text.find(from, pos)) {
    out.append(text.substr(pos, hit - pos)).append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

const char* ordinal_suffix(unsigned day) {
  if (day >= 11 && day <= 13) return "th";
  switch (day % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
  }
}

constexpr std::array<const char*, 12> month_names = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
constexpr std::array<const char*, 7> weekday_names = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

struct civil_time {
  date::year_month_day ymd;
  date::weekday weekday;
  long hours;
  long minutes;
};

template <class Duration>
civil_time to_civil(date::local_time<Duration> t) {
  const auto day = date::floor<date::days>(t);
  const auto since_midnight = std::chrono::duration_cast<std::chrono::minutes>(t - day);
  return {date::year_month_day{day}, date::weekday{day},
          static_cast<long>(since_midnight.count() / 60),
          static_cast<long>(since_midnight.count() % 60)};
}

result<const date::time_zone*> find_zone(std::string_view name) {
  const std::string zone_name = name.empty() ? std::string("UTC") : std::string(name);
  try {
    return date::locate_zone(zone_name);
  } catch (const std::exception&) {
    return status(errc::invalid_argument,
                  "unknown time zone \"" + zone_name +
                      "\"; use an IANA zone name such as \"Europe/Berlin\" or \"UTC\"");
  }
}

result<civil_time> local_civil_time(std::int64_t now_ms, std::string_view time_zone) {
  auto zone = find_zone(time_zone);
  if (!zone.ok()) return zone.error();
  const date::sys_time<std::chrono::milliseconds> instant{std::chrono::milliseconds{now_ms}};
  return to_civil((*zone)->to_local(instant));
}

civil_time utc_civil_time(std::int64_t now_ms) {
  const date::local_time<std::chrono::milliseconds> t{std::chrono::milliseconds{now_ms}};
  return to_civil(t);
}

std::string format_date_stamp(const civil_time& t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(t.ymd.year()),
                static_cast<unsigned>(t.ymd.month()), static_cast<unsigned>(t.ymd.day()));
  return buf;
}

std::string format_clock(const civil_time& t) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld", t.hours, t.minutes);
  return buf;
}

// "Tuesday, December 1st, 2026 - 00:30" (OpenClaw formatUserTime, en-US, 24-hour clock).
std::string format_user_time(const civil_time& t) {
  const unsigned day = static_cast<unsigned>(t.ymd.day());
  return std::string(weekday_names[t.weekday.c_encoding()]) + ", " +
         month_names[static_cast<unsigned>(t.ymd.month()) - 1] + " " + std::to_string(day) +
         ordinal_suffix(day) + ", " + std::to_string(static_cast<int>(t.ymd.year())) + " - " +
         format_clock(t);
}

std::string append_current_time_block(std::string_view text, std::string_view block) {
  auto end = text.find_last_not_of(" \t\n\v\f\r");
  const std::string_view trimmed = end == std::string_view::npos ? "" : text.substr(0, end + 1);
  if (trimmed.empty()) return std::string(block);
  if (trimmed.find(current_time_marker) != std::string_view::npos) return std::string(trimmed);
  return std::string(trimmed) + "\n" + std::string(block);
}

std::string flush_text(std::string_view custom, std::string_view fallback) {
  const std::string_view chosen = ascii_trim(custom).empty() ? fallback : ascii_trim(custom);
  return ensure_no_reply_hint(ensure_safety_hints(chosen));
}

std::optional<std::int64_t> fresh_persisted_tokens(const session_entry& entry) {
  const auto total = entry.total_tokens();
  if (!total || *total <= 0 || entry.total_tokens_fresh() != true) return std::nullopt;
  return total;
}

bool already_flushed_this_cycle(const session_entry& entry) {
  const auto flushed_at_count = entry.memory_flush_compaction_count();
  return flushed_at_count && *flushed_at_count == entry.compaction_count().value_or(0);
}

flush_decision skipped(flush_decision d, flush_reason reason) {
  d.run = false;
  d.reason = reason;
  return d;
}

// max(fresh persisted, transcript prompt) + last output + prompt estimate; 0 while neither
// token source is known (OpenClaw leaves tokenCount undefined then).
std::int64_t projected_tokens(std::int64_t fresh_persisted, const flush_inputs& inputs,
                              std::int64_t prompt_estimate) {
  const std::int64_t transcript = inputs.transcript_prompt_tokens.value_or(0);
  const std::int64_t base = std::max({fresh_persisted, transcript, std::int64_t{0}});
  if (base <= 0) return 0;
  return base + std::max<std::int64_t>(0, inputs.last_output_tokens) + prompt_estimate;
}

// JS `message.length > 200 ? message.slice(0, 199) + "…" : message`, counting UTF-16 units
// and never cutting a UTF-8 sequence.
std::string truncate_flush_error(std::string_view error) {
  std::size_t units = 0;
  std::size_t cut = std::string_view::npos;
  for (std::size_t i = 0; i < error.size();) {
    const auto lead = static_cast<unsigned char>(error[i]);
    const std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    const std::size_t width = len == 4 ? 2 : 1;  // astral code points are surrogate pairs
    if (units + width > max_flush_error_chars - 1 && cut == std::string_view::npos) cut = i;
    units += width;
    i += len;
  }
  if (units <= max_flush_error_chars) return std::string(error);
  return std::string(error.substr(0, cut)) + "…";
}

}  // namespace

const std::string_view default_flush_prompt =
    "Pre-compaction memory flush. Store durable memories only in memory/YYYY-MM-DD.md (create "
    "memory/ if needed). Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, "
    "SOUL.md, TOOLS.md, and AGENTS.md as read-only during this flush; never overwrite, replace, or "
    "edit them. If memory/YYYY-MM-DD.md already exists, APPEND new content only and do not "
    "overwrite existing entries. Do NOT create timestamped variant files (e.g., "
    "YYYY-MM-DD-HHMM.md); always use the canonical YYYY-MM-DD.md filename. If nothing to store, "
    "reply with NO_REPLY.";

const std::string_view default_flush_system_prompt =
    "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable "
    "memories to disk. Store durable memories only in memory/YYYY-MM-DD.md (create memory/ if "
    "needed). Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, SOUL.md, "
    "TOOLS.md, and AGENTS.md as read-only during this flush; never overwrite, replace, or edit "
    "them. If memory/YYYY-MM-DD.md already exists, APPEND new content only and do not overwrite "
    "existing entries. You may reply, but usually NO_REPLY is correct.";

std::string ensure_safety_hints(std::string_view text) {
  std::string next(ascii_trim(text));
  for (const auto hint : required_hints) {
    if (next.find(hint) != std::string::npos) continue;
    next = next.empty() ? std::string(hint) : next + "\n\n" + std::string(hint);
  }
  return next;
}

std::string ensure_no_reply_hint(std::string_view text) {
  if (text.find("NO_REPLY") != std::string_view::npos) return std::string(text);
  return std::string(text) + std::string(no_reply_hint);
}

result<std::string> format_current_time_block(std::int64_t now_ms, std::string_view time_zone) {
  auto local = local_civil_time(now_ms, time_zone);
  if (!local.ok()) return local.error();
  const civil_time utc = utc_civil_time(now_ms);
  const std::string zone_name = time_zone.empty() ? "UTC" : std::string(time_zone);
  return "Current time: " + format_user_time(*local) + " (" + zone_name + ")\n" +
         "Reference UTC: " + format_date_stamp(utc) + " " + format_clock(utc) + " UTC";
}

result<flush_plan> build_flush_plan(const memory_flush_settings& settings, std::int64_t now_ms,
                                    std::string_view time_zone) {
  auto local = local_civil_time(now_ms, time_zone);
  if (!local.ok()) return local.error();
  auto time_block = format_current_time_block(now_ms, time_zone);
  if (!time_block.ok()) return time_block.error();

  flush_plan plan;
  plan.date_stamp = format_date_stamp(*local);
  plan.relative_path = "memory/" + plan.date_stamp + ".md";
  const std::string prompt = flush_text(settings.prompt, default_flush_prompt);
  plan.prompt = append_current_time_block(replace_all(prompt, date_placeholder, plan.date_stamp),
                                          *time_block);
  plan.system_prompt = replace_all(flush_text(settings.system_prompt, default_flush_system_prompt),
                                   date_placeholder, plan.date_stamp);
  plan.model = std::string(ascii_trim(settings.model));
  return plan;
}

std::int64_t flush_threshold(std::int64_t context_window, std::int64_t reserve_tokens_floor,
                             const memory_flush_settings& settings) {
  const std::int64_t window = context_window > 0 ? context_window : default_context_window_tokens;
  return std::max<std::int64_t>(0, window - reserve_tokens_floor - settings.soft_threshold_tokens);
}

const char* flush_reason_name(flush_reason reason) noexcept {
  switch (reason) {
    case flush_reason::threshold_crossed: return "threshold_crossed";
    case flush_reason::transcript_too_large: return "transcript_too_large";
    case flush_reason::disabled: return "disabled";
    case flush_reason::heartbeat: return "heartbeat";
    case flush_reason::read_only_workspace: return "read_only_workspace";
    case flush_reason::context_over_window: return "context_over_window";
    case flush_reason::already_flushed: return "already_flushed";
    case flush_reason::below_threshold: return "below_threshold";
  }
  return "unknown";
}

flush_decision decide_flush(const session_entry& entry, const flush_inputs& inputs,
                            const memory_flush_settings& settings) {
  flush_decision d;
  d.threshold = flush_threshold(inputs.context_window, inputs.reserve_tokens_floor, settings);
  if (!settings.enabled) return skipped(d, flush_reason::disabled);
  if (inputs.is_heartbeat) return skipped(d, flush_reason::heartbeat);

  const auto persisted = fresh_persisted_tokens(entry);
  const std::int64_t estimate = std::max<std::int64_t>(0, inputs.prompt_estimate);
  const std::int64_t read_from = d.threshold - transcript_read_margin_tokens;
  const bool near_threshold = d.threshold > 0 && persisted && *persisted + estimate >= read_from;
  d.read_transcript = !persisted || near_threshold;
  d.token_count = projected_tokens(persisted.value_or(0), inputs, estimate);

  const bool crossed = d.threshold > 0 && d.token_count > 0 && d.token_count >= d.threshold;
  const bool forced = settings.force_flush_transcript_bytes > 0 &&
                      inputs.transcript_bytes >= settings.force_flush_transcript_bytes;
  if (!crossed && !forced) return skipped(d, flush_reason::below_threshold);
  if (already_flushed_this_cycle(entry)) return skipped(d, flush_reason::already_flushed);
  d.due = true;
  if (!inputs.workspace_writable) return skipped(d, flush_reason::read_only_workspace);
  const std::int64_t window = inputs.context_window > 0 ? inputs.context_window : default_context_window_tokens;
  if (inputs.transcript_prompt_tokens && *inputs.transcript_prompt_tokens + estimate >= window)
    return skipped(d, flush_reason::context_over_window);
  d.run = true;
  d.reason = crossed ? flush_reason::threshold_crossed : flush_reason::transcript_too_large;
  return d;
}

bool adopt_transcript_prompt_tokens(session_entry& entry,
                                    std::optional<std::int64_t> transcript_prompt_tokens) {
  if (!transcript_prompt_tokens || *transcript_prompt_tokens <= 0) return false;
  const auto persisted = fresh_persisted_tokens(entry);
  if (persisted && *transcript_prompt_tokens <= *persisted) return false;
  entry.set_total_tokens(*transcript_prompt_tokens);
  entry.set_total_tokens_fresh(true);
  return true;
}

void apply_flush_success(session_entry& entry, std::int64_t now_ms,
                         std::int64_t compaction_count_before_flush) {
  entry.set_memory_flush_at(now_ms);
  entry.set_memory_flush_compaction_count(compaction_count_before_flush);
  entry.set_memory_flush_failure_count(0);
  entry.clear_memory_flush_last_failed_at();
  entry.clear_memory_flush_last_failure_error();
}

std::optional<std::string> apply_flush_failure(session_entry& entry, std::int64_t now_ms,
                                               std::string_view error) {
  const std::int64_t failures =
      std::max<std::int64_t>(0, entry.memory_flush_failure_count().value_or(0)) + 1;
  entry.set_memory_flush_failure_count(failures);
  entry.set_memory_flush_last_failed_at(now_ms);
  entry.set_memory_flush_last_failure_error(truncate_flush_error(error));
  if (failures < max_flush_failures) return std::nullopt;
  entry.set_memory_flush_at(now_ms);
  entry.set_memory_flush_compaction_count(entry.compaction_count().value_or(0));
  return std::string(flush_gave_up_notice);
}

void clear_flush_fields(session_entry& entry) {
  std::vector<std::string> keys;
  for (const auto& kv : entry.json()) {
    if (kv.key().starts_with("memoryFlush")) keys.emplace_back(kv.key());
  }
  for (const auto& key : keys) entry.erase(key);
}

}  // namespace sessionrt::actors
