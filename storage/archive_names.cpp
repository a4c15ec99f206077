#include "storage/archive_names.hpp"

#include <fmt/format.h>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "storage/group_sync.hpp"

namespace sessionrt::storage {
namespace {

constexpr std::string_view kStore = "sessions.json";
constexpr std::string_view kJsonl = ".jsonl";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

// 8-4-4-4-12 hex digits, either case (crypto.randomUUID() writes lowercase).
bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!is_hex(s[i])) {
      return false;
    }
  }
  return true;
}

std::optional<std::int64_t> parse_digits(std::string_view s) {
  if (!all_digits(s) || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// What encodeURIComponent can produce: its unreserved set plus %XX escapes.
bool is_uri_component_encoded(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c)) continue;
    switch (c) {
      case '-': case '_': case '.': case '!': case '~': case '*': case '\'': case '(': case ')': continue;
      case '%':
        if (i + 2 < s.size() && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
          i += 2;
          continue;
        }
        return false;
      default: return false;
    }
  }
  return true;
}

// "<base><marker><archive ts>" with the marker's last occurrence.
bool match_timestamped(std::string_view name, std::string_view marker, artifact_name& out) {
  auto pos = name.rfind(marker);
  if (pos == std::string_view::npos || pos == 0) return false;
  auto ts = parse_archive_ts(name.substr(pos + marker.size()));
  if (!ts) return false;
  out.base = std::string(name.substr(0, pos));
  out.timestamp_ms = *ts;
  return true;
}

// "<prefix>.<pid>.<uuid>.tmp" or "<prefix>.<uuid>.tmp".
bool match_temp(std::string_view name, std::string_view& prefix, std::string& pid, std::string& uuid) {
  if (!ends_with(name, ".tmp")) return false;
  std::string_view stem = name.substr(0, name.size() - 4);
  if (stem.size() < 38) return false;
  std::string_view id = stem.substr(stem.size() - 36);
  if (!is_uuid(id) || stem[stem.size() - 37] != '.') return false;
  std::string_view rest = stem.substr(0, stem.size() - 37);
  auto dot = rest.rfind('.');
  if (dot != std::string_view::npos && dot > 0 && all_digits(rest.substr(dot + 1))) {
    pid = std::string(rest.substr(dot + 1));
    rest = rest.substr(0, dot);
  } else {
    pid.clear();
  }
  if (rest.empty()) return false;
  prefix = rest;
  uuid = std::string(id);
  return true;
}

artifact_name classify_store(std::string_view name) {
  artifact_name out;
  std::string_view rest = name.substr(kStore.size() + 1);  // after "sessions.json."
  if (starts_with(rest, "corrupt-")) {
    if (auto ts = parse_archive_ts(rest.substr(8))) {
      out.kind = artifact_kind::store_quarantine;
      out.base = std::string(kStore);
      out.timestamp_ms = *ts;
    }
    return out;
  }
  if (starts_with(rest, "bak.") && all_digits(rest.substr(4))) {
    out.kind = artifact_kind::store_legacy_backup;
    out.base = std::string(kStore);
    out.detail = std::string(rest.substr(4));
    return out;
  }
  std::string_view prefix;
  std::string pid, uuid;
  if (match_temp(name, prefix, pid, uuid) && prefix == kStore) {
    out.kind = artifact_kind::store_temp;
    out.base = std::string(kStore);
    out.detail = uuid;
    return out;
  }
  return out;
}

artifact_name classify_jsonl(std::string_view name) {
  artifact_name out;
  std::string_view stem = name.substr(0, name.size() - kJsonl.size());
  if (stem.empty()) return out;
  if (auto pos = stem.rfind(".checkpoint."); pos != std::string_view::npos && pos > 0) {
    std::string_view sid = stem.substr(0, pos), uuid = stem.substr(pos + 12);
    if (is_uuid(uuid) && is_transcript_id(sid)) {
      out.kind = artifact_kind::checkpoint_transcript;
      out.session_id = std::string(sid);
      out.base = out.session_id + std::string(kJsonl);
      out.detail = std::string(uuid);
    }
    return out;
  }
  if (stem.size() > 25 && stem[24] == '_') {
    if (auto ts = parse_dashed_iso_ts(stem.substr(0, 24)); ts && is_transcript_id(stem.substr(25))) {
      out.kind = artifact_kind::successor_transcript;
      out.base = std::string(name);
      out.session_id = std::string(stem.substr(25));
      out.timestamp_ms = *ts;
      return out;
    }
  }
  if (auto pos = stem.find("-topic-"); pos != std::string_view::npos) {
    std::string_view sid = stem.substr(0, pos), topic = stem.substr(pos + 7);
    if (is_transcript_id(sid) && is_uri_component_encoded(topic)) {
      out.kind = artifact_kind::topic_transcript;
      out.base = std::string(name);
      out.session_id = std::string(sid);
      out.detail = std::string(topic);
      return out;
    }
  }
  if (is_transcript_id(stem)) {
    out.kind = artifact_kind::primary_transcript;
    out.base = std::string(name);
    out.session_id = std::string(stem);
  }
  return out;
}

}  // namespace

const char* artifact_kind_name(artifact_kind kind) noexcept {
  switch (kind) {
    case artifact_kind::unknown: return "unknown";
    case artifact_kind::store: return "store";
    case artifact_kind::store_quarantine: return "store_quarantine";
    case artifact_kind::store_legacy_backup: return "store_legacy_backup";
    case artifact_kind::store_temp: return "store_temp";
    case artifact_kind::temp: return "temp";
    case artifact_kind::primary_transcript: return "primary_transcript";
    case artifact_kind::topic_transcript: return "topic_transcript";
    case artifact_kind::successor_transcript: return "successor_transcript";
    case artifact_kind::checkpoint_transcript: return "checkpoint_transcript";
    case artifact_kind::cold_transcript: return "cold_transcript";
    case artifact_kind::trajectory: return "trajectory";
    case artifact_kind::trajectory_pointer: return "trajectory_pointer";
    case artifact_kind::reset_archive: return "reset_archive";
    case artifact_kind::deleted_archive: return "deleted_archive";
    case artifact_kind::legacy_bak_archive: return "legacy_bak_archive";
    case artifact_kind::repair_backup: return "repair_backup";
    case artifact_kind::corrupt_backup: return "corrupt_backup";
    case artifact_kind::dropped_lines: return "dropped_lines";
    case artifact_kind::write_lock: return "write_lock";
  }
  return "unknown";
}

artifact_name classify(std::string_view name) {
  artifact_name out;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    return out;

  if (name == kStore) {
    out.kind = artifact_kind::store;
    out.base = std::string(name);
    return out;
  }
  if (starts_with(name, "sessions.json.")) {
    out = classify_store(name);
    if (out.kind != artifact_kind::unknown) return out;
    // sessions.json.bak.<ts> and friends fall through to the generic archive forms.
  }

  if (ends_with(name, ".jsonl.lock")) {
    out.kind = artifact_kind::write_lock;
    out.base = std::string(name.substr(0, name.size() - 5));
    return out;
  }

  // Timestamped archives: the text after the LAST marker must be an archive timestamp.
  if (match_timestamped(name, ".reset.", out)) {
    out.kind = artifact_kind::reset_archive;
    out.reason = "reset";
    return out;
  }
  if (match_timestamped(name, ".deleted.", out)) {
    out.kind = artifact_kind::deleted_archive;
    out.reason = "deleted";
    return out;
  }
  if (match_timestamped(name, ".bak.", out)) {
    out.kind = artifact_kind::legacy_bak_archive;
    out.reason = "bak";
    return out;
  }
  out = {};

  // Repair backup: <file>.bak-<pid>-<ms>.
  if (auto pos = name.rfind(".bak-"); pos != std::string_view::npos && pos > 0) {
    std::string_view rest = name.substr(pos + 5);
    auto dash = rest.find('-');
    if (dash != std::string_view::npos && all_digits(rest.substr(0, dash))) {
      if (auto ms = parse_digits(rest.substr(dash + 1))) {
        out.kind = artifact_kind::repair_backup;
        out.base = std::string(name.substr(0, pos));
        out.detail = std::string(rest.substr(0, dash));
        out.timestamp_ms = *ms;
        return out;
      }
    }
  }

  // Lines a repair removed: <file>.dropped-<dashed ISO>.jsonl.
  if (ends_with(name, kJsonl)) {
    if (auto pos = name.rfind(".dropped-"); pos != std::string_view::npos && pos > 0) {
      std::string_view rest = name.substr(pos + 9, name.size() - kJsonl.size() - (pos + 9));
      if (auto ts = parse_dashed_iso_ts(rest)) {
        out.kind = artifact_kind::dropped_lines;
        out.base = std::string(name.substr(0, pos));
        out.timestamp_ms = *ts;
        return out;
      }
    }
  }

  // Corrupt backup: <file>.corrupt-<dashed ISO>-<8hex>.jsonl.
  if (ends_with(name, kJsonl)) {
    if (auto pos = name.rfind(".corrupt-"); pos != std::string_view::npos && pos > 0) {
      std::string_view rest = name.substr(pos + 9, name.size() - kJsonl.size() - (pos + 9));
      if (rest.size() == 33 && rest[24] == '-') {
        std::string_view hex = rest.substr(25);
        bool hex_ok = true;
        for (char c : hex) hex_ok = hex_ok && (is_digit(c) || (c >= 'a' && c <= 'f'));
        auto ts = parse_dashed_iso_ts(rest.substr(0, 24));
        if (ts && hex_ok) {
          out.kind = artifact_kind::corrupt_backup;
          out.base = std::string(name.substr(0, pos));
          out.timestamp_ms = *ts;
          out.detail = std::string(hex);
          return out;
        }
      }
    }
  }

  {
    std::string_view prefix;
    std::string pid, uuid;
    if (match_temp(name, prefix, pid, uuid)) {
      out.kind = artifact_kind::temp;
      out.base = std::string(prefix);
      out.detail = uuid;
      return out;
    }
  }

  if (ends_with(name, ".trajectory.jsonl")) {
    std::string_view sid = name.substr(0, name.size() - 17);
    if (is_transcript_id(sid)) {
      out.kind = artifact_kind::trajectory;
      out.session_id = std::string(sid);
      out.base = out.session_id + std::string(kJsonl);
    }
    return out;
  }
  if (ends_with(name, ".trajectory-path.json")) {
    std::string_view sid = name.substr(0, name.size() - 21);
    if (is_transcript_id(sid)) {
      out.kind = artifact_kind::trajectory_pointer;
      out.session_id = std::string(sid);
      out.base = out.session_id + std::string(kJsonl);
    }
    return out;
  }
  if (ends_with(name, kJsonl)) return classify_jsonl(name);
  // A transcript kept compressed: "<transcript>.jsonl.zst", named as the transcript it holds.
  if (ends_with(name, ".jsonl.zst")) {
    out = classify_jsonl(name.substr(0, name.size() - 4));
    if (!is_transcript_kind(out.kind)) return {};
    out.kind = artifact_kind::cold_transcript;
    return out;
  }
  return out;
}

bool is_transcript_kind(artifact_kind kind) noexcept {
  return kind == artifact_kind::primary_transcript || kind == artifact_kind::topic_transcript ||
         kind == artifact_kind::successor_transcript || kind == artifact_kind::checkpoint_transcript;
}

bool holds_transcript(artifact_kind kind) noexcept {
  return is_transcript_kind(kind) || kind == artifact_kind::cold_transcript;
}

bool is_archive_kind(artifact_kind kind) noexcept {
  return kind == artifact_kind::reset_archive || kind == artifact_kind::deleted_archive ||
         kind == artifact_kind::legacy_bak_archive || kind == artifact_kind::store_legacy_backup ||
         kind == artifact_kind::dropped_lines;
}

bool is_stale_store_temp(const artifact_name& name, std::int64_t mtime_ms, std::int64_t now_ms) noexcept {
  return is_stale_store_temp(name.kind, mtime_ms, now_ms);
}

bool is_stale_store_temp(artifact_kind kind, std::int64_t mtime_ms, std::int64_t now_ms) noexcept {
  return kind == artifact_kind::store_temp && now_ms - mtime_ms > store_temp_stale_ms;
}

std::string format_dashed_iso_ts(std::int64_t epoch_ms) {
  std::string s = format_iso_ms(epoch_ms);
  for (char& c : s)
    if (c == ':' || c == '.') c = '-';
  return s;
}

std::optional<std::int64_t> parse_dashed_iso_ts(std::string_view text) {
  // ^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$
  if (text.size() != 24 || text[10] != 'T' || text[23] != 'Z') return std::nullopt;
  for (std::size_t i : {4u, 7u, 13u, 16u, 19u})
    if (text[i] != '-') return std::nullopt;
  for (std::size_t i = 0; i < 23; ++i) {
    if (i == 4 || i == 7 || i == 10 || i == 13 || i == 16 || i == 19) continue;
    if (!is_digit(text[i])) return std::nullopt;
  }
  std::string iso(text);
  iso[13] = ':';
  iso[16] = ':';
  iso[19] = '.';
  return parse_iso_ms(iso);
}

const char* archive_reason_name(archive_reason reason) noexcept {
  return reason == archive_reason::reset ? "reset" : "deleted";
}

std::string archive_name(std::string_view file, archive_reason reason, std::int64_t now_ms) {
  return fmt::format("{}.{}.{}", file, archive_reason_name(reason), format_archive_ts(now_ms));
}

std::string legacy_bak_archive_name(std::string_view file, std::int64_t now_ms) {
  return fmt::format("{}.bak.{}", file, format_archive_ts(now_ms));
}

std::string repair_backup_name(std::string_view file, std::int64_t pid, std::int64_t now_ms) {
  return fmt::format("{}.bak-{}-{}", file, pid, now_ms);
}

std::string corrupt_backup_name(std::string_view file, std::int64_t now_ms, std::string_view hex8) {
  return fmt::format("{}.corrupt-{}-{}.jsonl", file, format_dashed_iso_ts(now_ms), hex8);
}

std::string dropped_lines_name(std::string_view file, std::int64_t now_ms) {
  return fmt::format("{}.dropped-{}.jsonl", file, format_dashed_iso_ts(now_ms));
}

std::string store_quarantine_name(std::string_view store_file, std::int64_t now_ms) {
  return fmt::format("{}.corrupt-{}", store_file, format_archive_ts(now_ms));
}

std::string store_legacy_backup_name(std::string_view store_file, unsigned n) {
  return fmt::format("{}.bak.{}", store_file, n);
}

std::string store_temp_name(std::string_view store_file, std::optional<std::int64_t> pid, std::string_view uuid) {
  if (pid) return fmt::format("{}.{}.{}.tmp", store_file, *pid, uuid);
  return fmt::format("{}.{}.tmp", store_file, uuid);
}

std::string checkpoint_transcript_name(std::string_view session_id, std::string_view uuid) {
  return fmt::format("{}.checkpoint.{}.jsonl", session_id, uuid);
}

std::string trajectory_name(std::string_view session_id) { return fmt::format("{}.trajectory.jsonl", session_id); }
std::string trajectory_pointer_name(std::string_view session_id) {
  return fmt::format("{}.trajectory-path.json", session_id);
}
std::string write_lock_name(std::string_view file) { return fmt::format("{}.lock", file); }

namespace {

// Renames `path` to its archive name (the first free millisecond from now).
result<std::string> archive_one(fs& files, clock& time, const std::string& path, archive_reason reason) {
  std::int64_t ts = time.now_ms();
  // rename(2) replaces its target silently; an older archive with the same millisecond must
  // survive, so the timestamp moves on until the name is free.
  for (int tries = 0; tries < 1000; ++tries, ++ts) {
    std::string target = archive_name(path, reason, ts);
    auto existing = files.lstat(target);
    if (existing.ok()) continue;
    if (existing.error().code() != errc::not_found) return existing.error().with_context("archiving " + path);
    SRT_RETURN_IF_ERROR(files.rename(path, target).with_context("archiving " + path));
    return target;
  }
  return status(errc::already_exists,
                fmt::format("archiving {}: every archive name for 1000 ms from {} is taken", path, time.now_ms()));
}

}  // namespace

result<std::string> archive_transcript(fs& files, clock& time, const std::string& given, archive_reason reason) {
  std::string path = given;
  const std::string cold = given + ".zst";
  auto source = files.lstat(path);
  bool leftover_cold = false;
  if (!source.ok() && source.error().code() == errc::not_found && !ends_with(given, ".zst")) {
    // Kept compressed: the .zst is the transcript, archived as it is.
    if (auto found = files.lstat(cold); found.ok()) {
      path = cold;
      source = std::move(found);
    }
  } else if (source.ok() && !ends_with(given, ".zst")) {
    leftover_cold = files.lstat(cold).ok();
  }
  if (!source.ok()) return source.error().with_context(fmt::format("archiving {} ({})", given, archive_reason_name(reason)));
  // Durable before its name changes: a commit log replay finds a transcript by its name only.
  SRT_RETURN_IF_ERROR(sync_file(files, path).with_context(fmt::format("archiving {}", given)));
  auto archived = archive_one(files, time, path, reason);
  if (archived.ok() && leftover_cold) {
    status gone = files.unlink(cold);
    if (!gone.ok() && gone.code() != errc::not_found) return gone.with_context("removing the leftover copy " + cold);
  }
  return archived;
}

}  // namespace sessionrt::storage
