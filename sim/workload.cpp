#include "sim/workload.hpp"

#include <date/tz.h>
#include <fmt/format.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include "actors/session/hygiene/image_sanitizer.hpp"
#include "messages/json_access.hpp"
#include "runtime/config_values.hpp"

namespace sessionrt::sim {
namespace {

using runtime::child_key_path;
using runtime::describe_json_value;

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
constexpr double kMaxActivity = 20;  // a lognormal tail beyond this would only be one noisy user

// ---- reading the spec ----------------------------------------------------------------------

status key_error(const std::string& path, const std::string& reason, const boost::json::value& got) {
  return status(errc::invalid_argument, fmt::format("{}: {}, got {}", path, reason, describe_json_value(got)));
}

result<std::int64_t> read_int(const boost::json::value& v, const std::string& path, std::int64_t min, std::int64_t max) {
  auto i = json::as_int(v);
  if (!i || *i < min || *i > max)
    return key_error(path, fmt::format("must be a whole number from {} to {}", min, max), v);
  return *i;
}

result<double> read_number(const boost::json::value& v, const std::string& path, double min, double max) {
  auto d = json::as_number(v);
  if (!d || !std::isfinite(*d) || *d < min || *d > max)
    return key_error(path, fmt::format("must be a number from {} to {}", min, max), v);
  return *d;
}

result<double> read_share(const boost::json::value& v, const std::string& path) {
  auto d = json::as_number(v);
  if (!d || !std::isfinite(*d) || *d < 0 || *d > 1) return key_error(path, "must be a share from 0 to 1", v);
  return *d;
}

result<std::string> read_text(const boost::json::value& v, const std::string& path, bool allow_empty) {
  if (!v.is_string() || (!allow_empty && v.get_string().empty()))
    return key_error(path, allow_empty ? "must be a string" : "must be a non-empty string", v);
  return std::string(v.get_string());
}

// A whole number of milliseconds, or "30s" / "10m" / "6h" / "1d" as the config file takes it.
result<std::int64_t> read_duration(const boost::json::value& v, const std::string& path) {
  std::optional<std::int64_t> ms;
  if (v.is_string()) ms = runtime::parse_duration_ms(v.get_string());
  else ms = json::as_int(v);
  if (!ms || *ms < 0 || *ms > 3660 * kDayMs)
    return key_error(path, "must be a duration (milliseconds, or a string such as \"30m\", \"6h\", \"1d\")", v);
  return *ms;
}

result<const boost::json::object*> read_object(const boost::json::value& v, const std::string& path) {
  if (!v.is_object()) return key_error(path, "must be an object", v);
  return &v.get_object();
}

// Runs `read` for each key of `o`; a key `read` does not know is an error listing `known`.
template <class Reader>
status for_each_key(const boost::json::object& o, const std::string& path, std::string_view known, Reader read) {
  for (const auto& kv : o) {
    std::string key_path = child_key_path(path, kv.key());
    result<bool> handled = read(std::string_view(kv.key()), kv.value(), key_path);
    if (!handled) return handled.error();
    if (!*handled)
      return status(errc::invalid_argument, fmt::format("{}: unknown key (known keys: {})", key_path, known));
  }
  return status::success();
}

// Assigns the reader's value to `out`; the result says the key was handled.
template <class T, class U>
result<bool> assign(T& out, result<U> r) {
  if (!r) return r.error();
  out = std::move(*r);
  return true;
}

bool is_channel_name(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; });
}

result<std::vector<workload_channel>> read_channels(const boost::json::value& v, const std::string& path) {
  std::vector<workload_channel> out;
  auto add = [&](std::string_view name, double weight, const boost::json::value& shown, const std::string& at) -> status {
    if (!is_channel_name(name))
      return key_error(at, "must name a channel in lowercase letters, digits, '-' or '_' (e.g. \"telegram\")", shown);
    for (const auto& c : out)
      if (c.name == name) return key_error(at, "names a channel twice", shown);
    out.push_back({std::string(name), weight});
    return status::success();
  };
  if (v.is_array()) {
    const auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string at = runtime::item_key_path(path, i);
      if (!a[i].is_string()) return key_error(at, "must be a channel name", a[i]);
      SRT_RETURN_IF_ERROR(add(a[i].get_string(), 1, a[i], at));
    }
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      std::string at = child_key_path(path, kv.key());
      auto w = read_number(kv.value(), at, 0, 1e9);
      if (!w) return w.error();
      SRT_RETURN_IF_ERROR(add(kv.key(), *w, boost::json::value(kv.key()), at));
    }
  } else {
    return key_error(path, "must be a list of channel names or an object of channel weights", v);
  }
  double total = 0;
  for (const auto& c : out) total += c.weight;
  if (out.empty() || total <= 0) return key_error(path, "must name at least one channel with a weight above 0", v);
  return out;
}

result<std::vector<double>> read_hour_weights(const boost::json::value& v, const std::string& path) {
  if (!v.is_array() || v.get_array().size() != 24)
    return key_error(path, "must be an array of 24 weights, one per local hour 0..23", v);
  std::vector<double> out;
  for (std::size_t i = 0; i < 24; ++i) {
    auto w = read_number(v.get_array()[i], runtime::item_key_path(path, i), 0, 1e9);
    if (!w) return w.error();
    out.push_back(*w);
  }
  if (std::accumulate(out.begin(), out.end(), 0.0) <= 0) return key_error(path, "must have a weight above 0", v);
  return out;
}

status read_groups(const boost::json::value& v, const std::string& path, workload_spec::groups_spec& g) {
  auto o = read_object(v, path);
  if (!o) return o.error();
  SRT_RETURN_IF_ERROR(for_each_key(
      **o, path, "count, share, messageShare, threadShare, threadsPerGroup, silentShare",
      [&](std::string_view k, const boost::json::value& x, const std::string& p) -> result<bool> {
        if (k == "count") return assign(g.count, read_int(x, p, 0, 10'000'000));
        if (k == "share") return assign(g.share, read_share(x, p));
        if (k == "messageShare") return assign(g.message_share, read_share(x, p));
        if (k == "threadShare") return assign(g.thread_share, read_share(x, p));
        if (k == "threadsPerGroup") return assign(g.threads_per_group, read_int(x, p, 1, 1'000'000));
        if (k == "silentShare") return assign(g.silent_share, read_share(x, p));
        return false;
      }));
  if (g.share > 0 && g.count == 0)
    return key_error(child_key_path(path, "count"), "must be at least 1 when share is above 0",
                     boost::json::value(g.count));
  return status::success();
}

status read_sizes(const boost::json::value& v, const std::string& path, workload_spec::size_spec& s) {
  auto o = read_object(v, path);
  if (!o) return o.error();
  SRT_RETURN_IF_ERROR(for_each_key(**o, path, "median, sigma, max",
                                   [&](std::string_view k, const boost::json::value& x, const std::string& p) -> result<bool> {
                                     if (k == "median") return assign(s.median_bytes, read_int(x, p, 1, 1'000'000));
                                     if (k == "sigma") return assign(s.sigma, read_number(x, p, 0, 4));
                                     if (k == "max") return assign(s.max_bytes, read_int(x, p, 1, 1'000'000));
                                     return false;
                                   }));
  if (s.max_bytes < s.median_bytes)
    return key_error(child_key_path(path, "max"), fmt::format("must be at least the median ({})", s.median_bytes),
                     boost::json::value(s.max_bytes));
  return status::success();
}

status read_heartbeat(const boost::json::value& v, const std::string& path, workload_spec::heartbeat_spec& h) {
  auto o = read_object(v, path);
  if (!o) return o.error();
  return for_each_key(**o, path, "every, sessionKey, text",
                      [&](std::string_view k, const boost::json::value& x, const std::string& p) -> result<bool> {
                        if (k == "every") return assign(h.every_ms, read_duration(x, p));
                        if (k == "sessionKey") return assign(h.session_key, read_text(x, p, true));
                        if (k == "text") return assign(h.text, read_text(x, p, false));
                        return false;
                      });
}

status read_cron(const boost::json::value& v, const std::string& path, workload_spec::cron_spec& c) {
  auto o = read_object(v, path);
  if (!o) return o.error();
  SRT_RETURN_IF_ERROR(for_each_key(**o, path, "jobs, every, text",
                                   [&](std::string_view k, const boost::json::value& x, const std::string& p) -> result<bool> {
                                     if (k == "jobs") return assign(c.jobs, read_int(x, p, 0, 10'000));
                                     if (k == "every") return assign(c.every_ms, read_duration(x, p));
                                     if (k == "text") return assign(c.text, read_text(x, p, false));
                                     return false;
                                   }));
  if (c.jobs > 0 && c.every_ms < 1000)
    return key_error(child_key_path(path, "every"), "must be at least 1s when jobs is above 0",
                     boost::json::value(c.every_ms));
  return status::success();
}

// ---- random transforms (ours: std::*_distribution output differs between libraries) -------

double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)

// Knuth's product method, in pieces of at most 30 so exp(-lambda) never underflows.
template <class Uniform>
std::int64_t poisson(double lambda, Uniform&& u) {
  std::int64_t n = 0;
  while (lambda > 0) {
    double piece = std::min(lambda, 30.0);
    lambda -= piece;
    double limit = std::exp(-piece), p = u();
    while (p > limit) {
      ++n;
      p *= u();
    }
  }
  return n;
}

// Box-Muller, one value per call (the second is dropped so each call uses exactly two draws).
template <class Uniform>
double standard_normal(Uniform&& u) {
  double a = 1.0 - u(), b = u();
  return std::sqrt(-2.0 * std::log(a)) * std::cos(2.0 * 3.14159265358979323846 * b);
}

std::size_t pick_weighted(const std::vector<workload_channel>& channels, double total, double r) {
  double x = r * total;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    if (x < channels[i].weight) return i;
    x -= channels[i].weight;
  }
  return channels.size() - 1;
}

// ---- ids as each channel writes them (so routed keys look like real ones) -------------------

std::string user_peer_id(std::string_view channel, std::int64_t u) {
  if (channel == "telegram") return std::to_string(100'000'000 + u);
  if (channel == "discord") return std::to_string(310'000'000'000'000'000LL + u * 7919);
  if (channel == "whatsapp") return fmt::format("+49151{:07d}", u % 10'000'000);
  if (channel == "slack") return fmt::format("U{:08X}", 0x10000000 + u);
  return fmt::format("{}-user-{}", channel, u);
}

std::string group_peer_id(std::string_view channel, std::int64_t g) {
  if (channel == "telegram") return std::to_string(-1'001'000'000'000LL - g);
  if (channel == "discord") return std::to_string(320'000'000'000'000'000LL + g * 104729);
  if (channel == "whatsapp") return fmt::format("120363{:012d}@g.us", g);
  if (channel == "slack") return fmt::format("C{:08X}", 0x20000000 + g);
  return fmt::format("{}-group-{}", channel, g);
}

std::string thread_id(std::string_view channel, std::int64_t g, std::int64_t t) {
  if (channel == "discord") return std::to_string(330'000'000'000'000'000LL + g * 1000 + t);
  if (channel == "slack") return fmt::format("1700000000.{:06d}", (g * 97 + t) % 1'000'000);
  return std::to_string(t + 1);  // a Telegram forum topic id
}

constexpr std::string_view kWords[64] = {
    "the",     "deploy",  "log",     "can",     "you",      "check",   "why",     "build",   "failed",  "again",
    "please",  "summary", "meeting", "notes",   "tomorrow", "at",      "ten",     "budget",  "draft",   "email",
    "for",     "client",  "review",  "this",    "pull",     "request", "and",     "the",     "tests",   "are",
    "green",   "now",     "what",    "about",   "weekend",  "plans",   "remind",  "me",      "to",      "buy",
    "milk",    "table",   "numbers", "look",    "off",      "fix",     "invoice", "travel",  "train",   "ticket",
    "server",  "disk",    "almost",  "full",    "restart",  "backup",  "photo",   "recipe",  "dinner",  "idea",
    "quick",   "question", "thanks", "later"};

std::string image_png_base64(int side, int variant) {
  std::vector<unsigned char> px(static_cast<std::size_t>(side) * side * 3);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      unsigned char* p = &px[(static_cast<std::size_t>(y) * side + x) * 3];
      p[0] = static_cast<unsigned char>((x * 255) / std::max(1, side - 1));
      p[1] = static_cast<unsigned char>((y * 255) / std::max(1, side - 1));
      p[2] = static_cast<unsigned char>(variant * 60);
    }
  std::string bytes;
  stbi_write_png_to_func(
      [](void* ctx, void* data, int n) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), n); },
      &bytes, side, side, 3, px.data(), side * 3);
  return actors::hygiene::encode_base64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace

result<workload_spec> parse_workload(const boost::json::object& o, const std::string& path) {
  workload_spec s;
  SRT_RETURN_IF_ERROR(for_each_key(
      o, path,
      "users, days, channels, groups, messagesPerUserPerDay, newPerUserPerDay, activitySigma, hourWeights, "
      "messageBytes, toolCallShare, imageShare, imageSidePx, heartbeat, cron",
      [&](std::string_view k, const boost::json::value& x, const std::string& p) -> result<bool> {
        if (k == "users") return assign(s.users, read_int(x, p, 1, 10'000'000));
        if (k == "days") return assign(s.days, read_int(x, p, 1, 3660));
        if (k == "channels") return assign(s.channels, read_channels(x, p));
        if (k == "groups") {
          SRT_RETURN_IF_ERROR(read_groups(x, p, s.groups));
          return true;
        }
        if (k == "messagesPerUserPerDay") return assign(s.messages_per_user_per_day, read_number(x, p, 0, 1000));
        if (k == "newPerUserPerDay") return assign(s.new_per_user_per_day, read_number(x, p, 0, 100));
        if (k == "activitySigma") return assign(s.activity_sigma, read_number(x, p, 0, 3));
        if (k == "hourWeights") return assign(s.hour_weights, read_hour_weights(x, p));
        if (k == "messageBytes") {
          SRT_RETURN_IF_ERROR(read_sizes(x, p, s.message_size));
          return true;
        }
        if (k == "toolCallShare") return assign(s.tool_call_share, read_share(x, p));
        if (k == "imageShare") return assign(s.image_share, read_share(x, p));
        if (k == "imageSidePx") return assign(s.image_side_px, read_int(x, p, 1, 4096));
        if (k == "heartbeat") {
          SRT_RETURN_IF_ERROR(read_heartbeat(x, p, s.heartbeat));
          return true;
        }
        if (k == "cron") {
          SRT_RETURN_IF_ERROR(read_cron(x, p, s.cron));
          return true;
        }
        return false;
      }));
  return s;
}

// ---- the generator ----------------------------------------------------------------------------

workload_generator::workload_generator(const workload_spec& spec, std::uint64_t seed, std::int64_t start_ms,
                                       const date::time_zone* zone, std::int64_t days)
    : spec_(spec), rng_(seed), start_ms_(start_ms), end_ms_(start_ms + std::max<std::int64_t>(days, 0) * kDayMs),
      zone_(zone), batch_start_ms_(start_ms) {
  auto u = [this] { return uniform(); };
  double channel_total = 0;
  for (const auto& c : spec_.channels) channel_total += c.weight;
  double weight_sum = std::accumulate(spec_.hour_weights.begin(), spec_.hour_weights.end(), 0.0);
  max_hour_weight_ = *std::max_element(spec_.hour_weights.begin(), spec_.hour_weights.end());
  double per_day = spec_.messages_per_user_per_day + spec_.new_per_user_per_day;
  new_fraction_ = per_day > 0 ? spec_.new_per_user_per_day / per_day : 0;

  // Groups first, so each member joins a group on its own channel.
  std::vector<std::vector<std::int32_t>> groups_on(spec_.channels.size());
  for (std::int64_t g = 0; g < spec_.groups.count; ++g) {
    auto c = static_cast<std::uint32_t>(pick_weighted(spec_.channels, channel_total, u()));
    group_channel_.push_back(c);
    groups_on[c].push_back(static_cast<std::int32_t>(g));
  }
  double sigma = spec_.activity_sigma;
  users_.reserve(static_cast<std::size_t>(spec_.users));
  for (std::int64_t i = 0; i < spec_.users; ++i) {
    double activity = std::min(kMaxActivity, std::exp(sigma * standard_normal(u) - sigma * sigma / 2));
    auto c = static_cast<std::uint32_t>(pick_weighted(spec_.channels, channel_total, u()));
    double join = u(), which = u();
    std::int32_t group = -1;
    if (join < spec_.groups.share && !groups_on[c].empty())
      group = groups_on[c][static_cast<std::size_t>(which * static_cast<double>(groups_on[c].size()))];
    users_.push_back({per_day * activity * max_hour_weight_ / weight_sum, c, group});
  }
  if (spec_.image_share > 0)
    for (int v = 0; v < 4; ++v) images_.push_back(image_png_base64(static_cast<int>(spec_.image_side_px), v));
  // Periodic sources start half a period in, so a span of N periods holds exactly N runs.
  if (spec_.heartbeat.every_ms > 0) next_heartbeat_ms_ = start_ms_ + spec_.heartbeat.every_ms / 2;
  for (std::int64_t j = 0; j < spec_.cron.jobs; ++j)
    next_cron_ms_.push_back(start_ms_ + spec_.cron.every_ms * (2 * j + 1) / (2 * spec_.cron.jobs));
  cron_runs_.assign(next_cron_ms_.size(), 0);
}

double workload_generator::uniform() { return unit(rng_()); }

double workload_generator::local_hour_weight(std::int64_t at_ms) {
  if (zone_ != nullptr && (at_ms < zone_begin_ms_ || at_ms >= zone_end_ms_)) {
    using namespace std::chrono;
    date::sys_info info = zone_->get_info(date::sys_time<milliseconds>(milliseconds(at_ms)));
    // sys_info spans may reach the year +-32767: clamp before scaling to ms.
    constexpr std::int64_t kLimitS = std::int64_t{1} << 40;
    zone_begin_ms_ = std::clamp<std::int64_t>(info.begin.time_since_epoch().count(), -kLimitS, kLimitS) * 1000;
    zone_end_ms_ = std::clamp<std::int64_t>(info.end.time_since_epoch().count(), -kLimitS, kLimitS) * 1000;
    zone_offset_ms_ = duration_cast<milliseconds>(info.offset).count();
  }
  std::int64_t local = at_ms + zone_offset_ms_;
  std::int64_t in_day = ((local % kDayMs) + kDayMs) % kDayMs;
  return spec_.hour_weights[static_cast<std::size_t>(in_day / kHourMs)];
}

void workload_generator::fill_batch() {
  batch_.clear();
  batch_pos_ = 0;
  std::int64_t b0 = batch_start_ms_, b1 = std::min(b0 + kHourMs, end_ms_);
  batch_start_ms_ = b1;
  auto span = static_cast<double>(b1 - b0);
  auto u = [this] { return uniform(); };
  for (std::size_t i = 0; i < users_.size(); ++i) {
    std::int64_t n = poisson(users_[i].rate_per_hour_max * span / static_cast<double>(kHourMs), u);
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t at = b0 + static_cast<std::int64_t>(u() * span);
      if (u() * max_hour_weight_ < local_hour_weight(at))
        batch_.push_back({at, order_++, static_cast<std::int64_t>(i)});
    }
  }
  if (spec_.heartbeat.every_ms > 0)
    for (; next_heartbeat_ms_ < b1; next_heartbeat_ms_ += spec_.heartbeat.every_ms)
      batch_.push_back({next_heartbeat_ms_, order_++, -1});
  for (std::size_t j = 0; j < next_cron_ms_.size(); ++j)
    for (; next_cron_ms_[j] < b1; next_cron_ms_[j] += spec_.cron.every_ms)
      batch_.push_back({next_cron_ms_[j], order_++, -2 - static_cast<std::int64_t>(j)});
  std::sort(batch_.begin(), batch_.end(),
            [](const pending& a, const pending& b) { return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.order < b.order; });
}

std::optional<generated_event> workload_generator::next() {
  while (batch_pos_ == batch_.size()) {
    if (batch_start_ms_ >= end_ms_) return std::nullopt;
    fill_batch();
  }
  const pending& p = batch_[batch_pos_++];
  return p.source >= 0 ? make_chat(p) : make_system(p);
}

std::string workload_generator::message_text(std::int64_t bytes) {
  std::string out;
  out.reserve(static_cast<std::size_t>(bytes) + 16);
  while (static_cast<std::int64_t>(out.size()) < bytes) {
    std::uint64_t bits = rng_();
    for (int w = 0; w < 10 && static_cast<std::int64_t>(out.size()) < bytes; ++w, bits >>= 6) {
      if (!out.empty()) out += ' ';
      out += kWords[bits & 63];
    }
  }
  out.resize(static_cast<std::size_t>(bytes));
  if (out.back() == ' ') out.back() = '.';  // a trailing blank would be trimmed by the runtime
  return out;
}

generated_event workload_generator::make_chat(const pending& p) {
  const user_traits& user = users_[static_cast<std::size_t>(p.source)];
  const auto& groups = spec_.groups;
  // Every decision draws, taken or not, so changing one share leaves the other draws in place.
  double d_new = uniform(), d_group = uniform(), d_thread = uniform(), d_thread_pick = uniform();
  double d_silent = uniform(), d_tool = uniform(), d_image = uniform(), d_image_pick = uniform();
  double d_size = standard_normal([this] { return uniform(); });

  generated_event e;
  e.at_ms = p.at_ms;
  e.what = generated_event::kind::chat;
  e.user = p.source;
  e.is_new_command = d_new < new_fraction_;
  e.in_group = user.group >= 0 && d_group < groups.message_share;
  e.in_thread = e.in_group && d_thread < groups.thread_share;
  e.silent = e.in_group && !e.is_new_command && d_silent < groups.silent_share;
  e.has_tool_call = !e.is_new_command && d_tool < spec_.tool_call_share;
  e.has_image = !e.is_new_command && d_image < spec_.image_share && !images_.empty();

  chat_event& c = e.chat;
  std::uint32_t channel_index = e.in_group ? group_channel_[static_cast<std::size_t>(user.group)] : user.channel;
  const std::string& channel = spec_.channels[channel_index].name;
  c.channel = channel;
  c.timestamp_ms = p.at_ms;
  std::string me = user_peer_id(channel, p.source);
  c.display_name = fmt::format("User {}", p.source);
  if (e.in_group) {
    bool is_channel = channel == "discord" || channel == "slack";
    c.peer_kind = is_channel ? "channel" : "group";
    c.peer_id = group_peer_id(channel, user.group);
    c.sender_id = me;
    c.subject = fmt::format("Group {}", user.group);
    if (channel == "discord") c.guild_id = "900000000000000001";
    if (channel == "slack") c.team_id = "T00000001";
    if (e.in_thread) {
      auto t = static_cast<std::int64_t>(d_thread_pick * static_cast<double>(groups.threads_per_group));
      c.thread_id = thread_id(channel, user.group, t);
      c.parent_peer_kind = c.peer_kind;
      c.parent_peer_id = c.peer_id;
    }
    c.to = c.peer_id;
  } else {
    c.peer_kind = "direct";
    c.peer_id = me;
    c.to = me;
  }

  if (e.is_new_command) {
    c.text = "/new";
    return e;
  }
  const auto& size = spec_.message_size;
  double drawn = static_cast<double>(size.median_bytes) * std::exp(size.sigma * d_size);
  auto bytes = static_cast<std::int64_t>(std::clamp(drawn, 1.0, static_cast<double>(size.max_bytes)));
  std::string text = message_text(bytes);
  if (e.has_tool_call) text = "[sim:tool bash] ls -la ~/projects\n" + text;
  if (e.silent) text += " [sim:silent]";
  if (e.has_image) {
    const std::string& data = images_[static_cast<std::size_t>(d_image_pick * static_cast<double>(images_.size()))];
    c.content.push_back(boost::json::object{{"type", "text"}, {"text", text}});
    c.content.push_back(boost::json::object{{"type", "image"}, {"data", data}, {"mimeType", "image/png"}});
  }
  c.text = std::move(text);
  return e;
}

generated_event workload_generator::make_system(const pending& p) {
  generated_event e;
  e.at_ms = p.at_ms;
  e.what = generated_event::kind::system;
  system_event& s = e.sys;
  s.timestamp_ms = p.at_ms;
  if (p.source == -1) {
    s.kind = system_event_kind::heartbeat;
    s.session_key = spec_.heartbeat.session_key;
    s.text = spec_.heartbeat.text;
    return e;
  }
  auto j = static_cast<std::size_t>(-2 - p.source);
  s.kind = system_event_kind::cron;
  s.job_id = fmt::format("job-{}", j + 1);
  s.job_name = fmt::format("Workload job {}", j + 1);
  s.text = fmt::format("{} (run {})", spec_.cron.text, ++cron_runs_[j]);
  return e;
}

}  // namespace sessionrt::sim
