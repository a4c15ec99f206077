#include "runtime/logging.hpp"

#include <fmt/format.h>
#include <spdlog/formatter.h>
#include <spdlog/sinks/ansicolor_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <vector>

#include "messages/ascii_text.hpp"
#include "messages/json_access.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::runtime {
namespace bj = boost::json;

namespace {

std::optional<spdlog::level::level_enum> spdlog_level(std::string_view canonical) {
  if (canonical == "trace") return spdlog::level::trace;
  if (canonical == "debug") return spdlog::level::debug;
  if (canonical == "info") return spdlog::level::info;
  if (canonical == "warn") return spdlog::level::warn;
  if (canonical == "error") return spdlog::level::err;
  if (canonical == "fatal") return spdlog::level::critical;
  if (canonical == "off") return spdlog::level::off;
  return std::nullopt;
}

std::string_view level_name(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace: return "trace";
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warn";
    case spdlog::level::err: return "error";
    case spdlog::level::critical: return "fatal";
    default: return "off";
  }
}

// sd-daemon(3)'s SD_DEBUG .. SD_CRIT.
int syslog_priority(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace:
    case spdlog::level::debug: return 7;
    case spdlog::level::info: return 6;
    case spdlog::level::warn: return 4;
    case spdlog::level::err: return 3;
    default: return 2;
  }
}

// "2025-06-01T12:00:00.123Z"
void append_utc_time(std::string& out, std::int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long millis = static_cast<long>(ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  out += fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

// A JSON string literal of `s`: quotes, backslashes and control characters escaped, invalid
// UTF-8 replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view s) {
  std::string valid;
  if (!is_valid_utf8(s)) {
    valid = to_valid_utf8(s);
    s = valid;
  }
  out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// The message's leading "component: " (a word of letters, digits, '_', '.', '-' up to 32
// characters), or "" when it has none.
std::string_view leading_component(std::string_view msg) {
  std::size_t i = 0;
  while (i < msg.size() && i < 32) {
    const auto c = static_cast<unsigned char>(msg[i]);
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '-')) break;
    ++i;
  }
  if (i == 0 || i + 1 >= msg.size() || msg[i] != ':' || msg[i + 1] != ' ') return {};
  if (!std::isalpha(static_cast<unsigned char>(msg[0]))) return {};
  return msg.substr(0, i);
}

struct line_style {
  bool json = false;
  bool journal = false;  // "<N>" prefix, no timestamp
  bool color = false;    // mark the level for the colour sink
};

// Text: "<time> <level> <message>"; journal: "<N><level> <message>"; json: one object.
class line_formatter final : public spdlog::formatter {
 public:
  explicit line_formatter(line_style s) : style_(s) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::int64_t ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count();
    const std::string_view text(msg.payload.data(), msg.payload.size());
    std::string line;
    if (style_.journal) line += fmt::format("<{}>", syslog_priority(msg.level));
    if (style_.json) {
      line += format_json_log_line(level_name(msg.level), ms, std::string_view(msg.logger_name.data(), msg.logger_name.size()), text);
    } else {
      if (!style_.journal) {
        append_utc_time(line, ms);
        line += ' ';
      }
      const std::string_view level = level_name(msg.level);
      if (style_.color) {
        msg.color_range_start = line.size();
        msg.color_range_end = line.size() + level.size();
      }
      line += level;
      line.append(level.size() < 5 ? 5 - level.size() : 0, ' ');
      line += ' ';
      line += text;
    }
    line += '\n';
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<line_formatter>(style_); }

 private:
  line_style style_;
};

std::optional<std::string> env_value(const storage::env_lookup& env, std::string_view name) {
  if (env) return env(name);
  if (const char* v = std::getenv(std::string(name).c_str())) return std::string(v);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_log_level(std::string_view text) {
  const std::string l = ascii_lower(text);
  if (l == "trace" || l == "debug" || l == "info" || l == "warn" || l == "error" || l == "off" || l == "fatal")
    return l;
  if (l == "warning") return std::string("warn");
  if (l == "silent") return std::string("off");
  return std::nullopt;
}

std::optional<std::string> parse_log_format(std::string_view text) {
  const std::string l = ascii_lower(text);
  if (l == "text" || l == "json") return l;
  return std::nullopt;
}

console_style detect_console_style(int fd, const storage::env_lookup& env) {
  if (auto js = env_value(env, "JOURNAL_STREAM"); js && !js->empty()) {
    // "<device>:<inode>" in decimal (systemd.exec(5)).
    unsigned long long dev = 0, ino = 0;
    char tail = 0;
    struct stat st {};
    if (std::sscanf(js->c_str(), "%llu:%llu%c", &dev, &ino, &tail) == 2 && ::fstat(fd, &st) == 0 &&
        static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino)
      return console_style::journal;
  }
  return ::isatty(fd) == 1 ? console_style::color : console_style::plain;
}

std::string format_json_log_line(std::string_view level, std::int64_t at_ms, std::string_view logger,
                                 std::string_view message) {
  std::string line = "{\"ts\":\"";
  append_utc_time(line, at_ms);
  line += "\",\"level\":";
  append_json_string(line, level);
  line += ",\"logger\":";
  append_json_string(line, logger);
  std::string_view component = leading_component(message);
  std::string_view body = message;
  if (!component.empty()) body = message.substr(component.size() + 2);
  else component = logger;
  line += ",\"component\":";
  append_json_string(line, component);
  line += ",\"msg\":";
  append_json_string(line, body);
  line += '}';
  return line;
}

status configure_logging(const actors::logging_settings& s, const logging_target& target) {
  auto level_text = parse_log_level(s.level);
  if (!level_text)
    return status(errc::invalid_argument,
                  fmt::format("log level \"{}\" is not one of {}", s.level, log_level_names));
  auto format = parse_log_format(s.format);
  if (!format)
    return status(errc::invalid_argument,
                  fmt::format("log format \"{}\" is not one of {}", s.format, log_format_names));
  if (s.max_file_bytes < 1024)
    return status(errc::invalid_argument,
                  fmt::format("logging.maxFileBytes {} is below the smallest, 1024", s.max_file_bytes));
  if (s.max_files < 1 || s.max_files > 1000)
    return status(errc::invalid_argument, fmt::format("logging.maxFiles {} is not from 1 to 1000", s.max_files));
  const bool json = *format == "json";

  std::vector<spdlog::sink_ptr> sinks;
  // The console.
  console_style style = target.style ? *target.style
                        : target.console ? console_style::plain
                                         : detect_console_style(STDERR_FILENO, target.env);
  line_style cs{json, style == console_style::journal, style == console_style::color && !json};
  if (target.console) {
    sinks.push_back(std::make_shared<spdlog::sinks::ostream_sink_mt>(*target.console, true));
  } else if (cs.color) {
    sinks.push_back(std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>(spdlog::color_mode::always));
  } else {
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  sinks.back()->set_formatter(std::make_unique<line_formatter>(cs));
  // The file.
  if (!s.file.empty()) {
    std::error_code ec;
    const std::filesystem::path path(s.file);
    if (path.has_parent_path() && !std::filesystem::exists(path.parent_path(), ec)) {
      std::filesystem::create_directories(path.parent_path(), ec);
      if (ec)
        return status(errc::io_error, fmt::format("cannot make the log file's directory {}: {}",
                                                  path.parent_path().string(), ec.message()));
    }
    if (std::filesystem::is_directory(path, ec))
      return status(errc::io_error, fmt::format("log file {} is a directory", s.file));
    // spdlog reports a file it cannot open by an exception; so does the first rotation.
    if (::access(s.file.c_str(), F_OK) == 0 && ::access(s.file.c_str(), W_OK) != 0)
      return status(errc::io_error, fmt::format("cannot write the log file {}: {}", s.file, std::strerror(EACCES)));
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(s.file, s.max_file_bytes, s.max_files));
    } catch (const std::exception& e) {
      return status(errc::io_error, fmt::format("cannot open the log file {} for appending: {}", s.file, e.what()));
    }
    sinks.back()->set_formatter(std::make_unique<line_formatter>(line_style{json, false, false}));
  }
  auto logger = std::make_shared<spdlog::logger>(target.logger_name, sinks.begin(), sinks.end());
  logger->set_level(*spdlog_level(*level_text));
  // Every line reaches the file at once: a daemon's last lines before a crash are the ones wanted.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return {};
}

// ---- lifecycle events -----------------------------------------------------------------------------

event_filter log_event_filter() {
  event_filter f;
  f.types = {std::string(event_types::turn_failed),          std::string(event_types::turn_completed),
             std::string(event_types::transcript_repaired),  std::string(event_types::compaction_completed),
             std::string(event_types::compaction_failed),    std::string(event_types::model_fallback),
             std::string(event_types::maintenance_report),   std::string(event_types::memory_flush_failed),
             std::string(event_types::lock_contended),       std::string(event_types::cron_completed),
             std::string(event_types::subagent_completed)};
  return f;
}

namespace {

std::string str(const bj::object& o, std::string_view key) {
  return std::string(json::get_string(o, key).value_or(""));
}
std::int64_t num(const bj::object& o, std::string_view key) { return json::get_int(o, key).value_or(0); }

// "agent:main:main (9b2c...)" — the key and, when known, the session id.
std::string who(const lifecycle_event& e) {
  std::string s = e.session_key.empty() ? std::string("-") : e.session_key;
  if (!e.session_id.empty()) s += " (" + e.session_id + ")";
  return s;
}

void log_maintenance(const bj::object& d) {
  const std::int64_t planned = num(d, "plannedActions");
  const bool applied = json::get_bool(d, "applied").value_or(false);
  const std::string mode = str(d, "mode"), trigger = str(d, "trigger");
  const bj::array* stores = d.contains("stores") && d.at("stores").is_array() ? &d.at("stores").as_array() : nullptr;
  if (stores)
    for (const auto& sv : *stores) {
      if (!sv.is_object()) continue;
      const bj::object& so = sv.as_object();
      const std::string agent = str(so, "agentId"), plan = str(so, "plan");
      if (auto err = json::get_string(so, "error")) spdlog::error("maintenance: agent {} ({}): {}", agent, plan, *err);
      // The reaper applies in warn mode too; its store then carries rowsRemoved.
      const bool store_applied = so.contains("rowsRemoved");
      if (!so.contains("actions") || !so.at("actions").is_array()) continue;
      for (const auto& av : so.at("actions").as_array()) {
        if (!av.is_object()) continue;
        const bj::object& a = av.as_object();
        std::string what = str(a, "kind");
        std::string subject = a.contains("key") ? str(a, "key") : str(a, "file");
        if (a.contains("target")) subject += " -> " + str(a, "target");
        const std::int64_t bytes = num(a, "bytes");
        if (store_applied)
          spdlog::info("maintenance: agent {}: {} {} ({}, {} bytes)", agent, what, subject, str(a, "step"), bytes);
        else
          spdlog::debug("maintenance: agent {}: would {} {} ({}, {} bytes)", agent, what, subject, str(a, "step"),
                        bytes);
      }
    }
  if (planned == 0) return;
  if (applied)
    spdlog::info("maintenance: {} pass ({}): {} action(s): {} row(s) removed, {} file(s) archived, {} deleted, {} "
                 "skipped",
                 mode, trigger, planned, num(d, "rowsRemoved"), num(d, "filesArchived"), num(d, "filesDeleted"),
                 num(d, "skipped"));
  else
    spdlog::info("maintenance: {} pass ({}): {} action(s) would apply with session.maintenance.mode \"enforce\"", mode,
                 trigger, planned);
}

}  // namespace

void log_event(const lifecycle_event& e) {
  const bj::object& d = e.data;
  const std::string_view t = e.type;
  if (t == event_types::turn_failed) {
    spdlog::warn("turn: failed in session {}: {}", who(e), str(d, "error"));
  } else if (t == event_types::turn_completed) {
    spdlog::debug("turn: completed in session {}: {} tokens, {} ms", who(e), num(d, "totalTokens"), num(d, "latencyMs"));
  } else if (t == event_types::transcript_repaired) {
    spdlog::warn("transcript: repaired {} of session {}: {}", str(d, "path"), who(e), str(d, "summary"));
  } else if (t == event_types::compaction_completed) {
    std::string extra;
    if (auto w = json::get_string(d, "warning"); w && !w->empty()) extra += fmt::format("; {}", *w);
    if (auto s = json::get_string(d, "successorSessionId"); s && !s->empty())
      extra += fmt::format("; continued in session file {} (old file kept at {})", *s, str(d, "checkpoint"));
    spdlog::info("compaction: session {} compacted ({}, by {}): {} -> {} tokens, compaction #{}{}", who(e),
                 str(d, "reason"), str(d, "provider").empty() ? "built-in" : str(d, "provider"), num(d, "tokensBefore"),
                 num(d, "tokensAfter"), num(d, "compactionCount"), extra);
  } else if (t == event_types::compaction_failed) {
    if (json::get_bool(d, "cancelled").value_or(false))
      spdlog::info("compaction: session {} ({}) cancelled: {}", who(e), str(d, "reason"), str(d, "error"));
    else
      spdlog::warn("compaction: session {} failed ({}): {}", who(e), str(d, "reason"), str(d, "error"));
  } else if (t == event_types::model_fallback) {
    spdlog::warn("model: session {}: {} failed, falling back to {}: {}", who(e), str(d, "from"), str(d, "to"),
                 str(d, "reason"));
  } else if (t == event_types::maintenance_report) {
    log_maintenance(d);
  } else if (t == event_types::memory_flush_failed) {
    spdlog::warn("memory_flush: session {} failed (failure {} of this cycle): {}", who(e), num(d, "failures"),
                 str(d, "error"));
  } else if (t == event_types::lock_contended) {
    const auto pid = json::get_int(d, "pid");
    spdlog::info("lock: {} is held{} ({}); session {}", str(d, "lockPath"),
                 pid ? fmt::format(" by pid {}", *pid) : std::string(), str(d, "reasons"), who(e));
  } else if (t == event_types::cron_completed) {
    if (auto err = json::get_string(d, "error"))
      spdlog::warn("cron: job {} failed in session {}: {}", str(d, "jobId"), who(e), *err);
    else
      spdlog::debug("cron: job {} ran in session {}", str(d, "jobId"), who(e));
  } else if (t == event_types::subagent_completed) {
    if (auto err = json::get_string(d, "error"))
      spdlog::warn("subagent: {} of session {} failed: {}", str(d, "childSessionKey"), who(e), *err);
    else
      spdlog::debug("subagent: {} of session {} finished its task", str(d, "childSessionKey"), who(e));
  }
}

}  // namespace sessionrt::runtime
