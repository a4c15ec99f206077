#include "sim/workload.hpp"

#include <date/tz.h>
#include <malloc.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/session/hygiene/image_sanitizer.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

using namespace sessionrt;
using namespace sessionrt::sim;

namespace {

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
constexpr std::int64_t kStartMs = 1'773'964'800'000;  // 2026-03-20T00:00:00Z, a week before Berlin's DST change

workload_spec spec_of(std::string_view json) {
  auto v = json::parse(json);
  REQUIRE(v.ok());
  auto s = parse_workload(v->as_object());
  if (!s) FAIL(s.error().message());
  return *s;
}

const date::time_zone* berlin() { return date::locate_zone("Europe/Berlin"); }

int local_hour(std::int64_t at_ms, const date::time_zone* zone) {
  using namespace std::chrono;
  auto local = zone->to_local(date::sys_time<milliseconds>(milliseconds(at_ms)));
  auto in_day = local - date::floor<date::days>(local);
  return static_cast<int>(duration_cast<hours>(in_day).count());
}

// Everything an event carries, as one line, to compare runs byte for byte.
std::string fingerprint(const generated_event& e) {
  std::string s = std::to_string(e.at_ms) + "|";
  if (e.what == generated_event::kind::system)
    return s + "sys|" + std::to_string(static_cast<int>(e.sys.kind)) + "|" + e.sys.session_key + "|" + e.sys.job_id +
           "|" + e.sys.text;
  const chat_event& c = e.chat;
  return s + c.channel + "|" + c.peer_kind + "|" + c.peer_id + "|" + c.sender_id + "|" + c.thread_id + "|" + c.text +
         "|" + json::to_compact(c.content);
}

std::vector<std::string> first_events(const workload_spec& spec, std::uint64_t seed, std::size_t n) {
  workload_generator gen(spec, seed, kStartMs, berlin(), spec.days);
  std::vector<std::string> out;
  while (out.size() < n) {
    auto e = gen.next();
    if (!e) break;
    out.push_back(fingerprint(*e));
  }
  return out;
}

constexpr std::string_view kRich = R"({
  "users": 300, "days": 3, "messagesPerUserPerDay": 6, "newPerUserPerDay": 0.3,
  "channels": {"telegram": 2, "discord": 1, "slack": 1},
  "groups": {"count": 12, "share": 0.5, "threadShare": 0.3, "threadsPerGroup": 4, "silentShare": 0.2},
  "toolCallShare": 0.1, "imageShare": 0.05, "imageSidePx": 16,
  "heartbeat": {"every": "30m"}, "cron": {"jobs": 2, "every": "6h"}
})";

}  // namespace

TEST_CASE("workload: two generators with one seed give the same events, another seed others") {
  workload_spec spec = spec_of(kRich);
  auto a = first_events(spec, 42, 3000);
  auto b = first_events(spec, 42, 3000);
  REQUIRE(a.size() == 3000);
  CHECK(a == b);
  auto c = first_events(spec, 43, 3000);
  REQUIRE(c.size() == 3000);
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == c[i] ? 1 : 0;
  CHECK(same < 100);  // only the periodic heartbeats / cron runs may coincide
}

TEST_CASE("workload: events are in time order inside the span, stamped with their time") {
  workload_spec spec = spec_of(kRich);
  workload_generator gen(spec, 7, kStartMs, berlin(), spec.days);
  std::int64_t last = kStartMs, chats = 0, systems = 0;
  while (auto e = gen.next()) {
    CHECK(e->at_ms >= last);
    last = e->at_ms;
    REQUIRE(e->at_ms < kStartMs + 3 * kDayMs);
    if (e->what == generated_event::kind::chat) {
      ++chats;
      REQUIRE(e->chat.timestamp_ms == e->at_ms);
      REQUIRE(!e->chat.text.empty());
    } else {
      ++systems;
      REQUIRE(e->sys.timestamp_ms == e->at_ms);
    }
  }
  CHECK(chats > 3000);
  CHECK(systems == 3 * 48 + 3 * 4 * 2);  // a heartbeat every 30 min, 2 jobs every 6 h
}

TEST_CASE("workload: more messages at the peak hour than at 4 am, in the scenario's zone") {
  workload_spec spec = spec_of(R"({"users": 200, "days": 20, "messagesPerUserPerDay": 10})");
  workload_generator gen(spec, 1, kStartMs, berlin(), spec.days);
  std::map<int, std::int64_t> by_hour;
  while (auto e = gen.next()) ++by_hour[local_hour(e->at_ms, berlin())];
  // Default weights: 12 at noon, 1 at 4:00; expected 40,000 messages over the 20 days.
  INFO("noon " << by_hour[12] << ", 4 am " << by_hour[4]);
  CHECK(by_hour[12] > 6 * by_hour[4]);
  CHECK(by_hour[4] > 0);
  CHECK(by_hour[20] > by_hour[2] * 6);
}

TEST_CASE("workload: the hour shape follows the zone's local time across a DST change") {
  std::string weights = "[";
  for (int h = 0; h < 24; ++h) weights += std::string(h ? "," : "") + (h == 13 ? "1" : "0");
  workload_spec spec = spec_of(R"({"users": 50, "days": 14, "activitySigma": 0, "hourWeights": )" + weights + "]}");
  workload_generator gen(spec, 3, kStartMs, berlin(), spec.days);
  std::set<int> utc_hours;
  std::int64_t n = 0;
  while (auto e = gen.next()) {
    ++n;
    REQUIRE(local_hour(e->at_ms, berlin()) == 13);
    utc_hours.insert(static_cast<int>((e->at_ms % kDayMs) / kHourMs));
  }
  CHECK(n > 50 * 14 * 10 * 9 / 10);
  // 13:00 is 12:00 UTC before 2026-03-29 (CET) and 11:00 UTC after it (CEST).
  CHECK(utc_hours == std::set<int>{11, 12});
}

TEST_CASE("workload: rates, shares and sizes come out as the spec asks") {
  workload_spec spec = spec_of(R"({
    "users": 2000, "days": 5, "messagesPerUserPerDay": 8, "newPerUserPerDay": 0.5,
    "channels": {"telegram": 4, "discord": 3, "whatsapp": 2, "slack": 1},
    "groups": {"count": 40, "share": 0.3, "messageShare": 0.5, "threadShare": 0.4, "threadsPerGroup": 3},
    "messageBytes": {"median": 80, "sigma": 0.8, "max": 2000},
    "toolCallShare": 0.1, "imageShare": 0.05, "imageSidePx": 8,
    "heartbeat": {"every": "30m"}, "cron": {"jobs": 3, "every": "6h"}
  })");
  workload_generator gen(spec, 11, kStartMs, berlin(), spec.days);
  std::int64_t messages = 0, news = 0, group = 0, thread = 0, tools = 0, images = 0, heartbeats = 0, crons = 0;
  std::map<std::string, std::set<std::int64_t>> users_on;
  std::vector<std::size_t> sizes;
  while (auto e = gen.next()) {
    if (e->what == generated_event::kind::system) {
      (e->sys.kind == system_event_kind::heartbeat ? heartbeats : crons) += 1;
      continue;
    }
    if (e->is_new_command) {
      ++news;
      CHECK(e->chat.text == "/new");
      continue;
    }
    ++messages;
    if (!e->in_group) users_on[e->chat.channel].insert(e->user);
    group += e->in_group;
    thread += e->in_thread;
    tools += e->has_tool_call;
    if (e->has_tool_call) CHECK(e->chat.text.rfind("[sim:tool ", 0) == 0);
    if (e->has_image) {
      ++images;
      REQUIRE(e->chat.content.size() == 2);
      const auto& img = e->chat.content[1].as_object();
      CHECK(img.at("type").as_string() == "image");
      CHECK(img.at("mimeType").as_string() == "image/png");
      auto bytes = actors::hygiene::decode_base64(img.at("data").as_string());
      REQUIRE(bytes);
      REQUIRE(bytes->size() > 8);
      CHECK(std::string(bytes->begin(), bytes->begin() + 4) == "\x89PNG");
      CHECK(e->chat.content[0].as_object().at("text").as_string() == e->chat.text);
    }
    if (!e->has_tool_call) sizes.push_back(e->chat.text.size());
  }
  double expected = 2000.0 * 5 * 8;
  CHECK(static_cast<double>(messages) == Approx(expected).epsilon(0.05));
  CHECK(static_cast<double>(news) == Approx(2000.0 * 5 * 0.5).epsilon(0.10));
  CHECK(static_cast<double>(group) / messages == Approx(0.15).margin(0.03));
  CHECK(static_cast<double>(thread) / group == Approx(0.4).margin(0.04));
  CHECK(static_cast<double>(tools) / messages == Approx(0.1).margin(0.01));
  CHECK(static_cast<double>(images) / messages == Approx(0.05).margin(0.008));
  CHECK(heartbeats == 5 * 48);
  CHECK(crons == 5 * 4 * 3);
  std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
  CHECK(static_cast<double>(sizes[sizes.size() / 2]) == Approx(80).epsilon(0.1));
  CHECK(*std::max_element(sizes.begin(), sizes.end()) <= 2000);
  std::size_t dm_users = 0;
  for (const auto& [ch, us] : users_on) dm_users += us.size();
  CHECK(static_cast<double>(users_on["telegram"].size()) / dm_users == Approx(0.4).margin(0.04));
  CHECK(static_cast<double>(users_on["slack"].size()) / dm_users == Approx(0.1).margin(0.03));
}

TEST_CASE("workload: group and thread events carry the group's ids and the sender") {
  workload_spec spec = spec_of(
      R"({"users": 100, "channels": ["telegram"], "groups": {"count": 3, "share": 1, "messageShare": 1, "threadShare": 0.5, "silentShare": 0.5}})");
  workload_generator gen(spec, 5, kStartMs, berlin(), 1);
  std::int64_t threads = 0, silent = 0, n = 0;
  while (auto e = gen.next()) {
    if (e->what != generated_event::kind::chat || e->is_new_command) continue;
    ++n;
    REQUIRE(e->in_group);
    CHECK(e->chat.peer_kind == "group");
    CHECK(e->chat.peer_id.rfind("-100", 0) == 0);
    CHECK(!e->chat.sender_id.empty());
    CHECK(e->chat.sender_id != e->chat.peer_id);
    if (e->in_thread) {
      ++threads;
      CHECK(!e->chat.thread_id.empty());
      CHECK(e->chat.parent_peer_id == e->chat.peer_id);
    }
    if (e->silent) {
      ++silent;
      CHECK(e->chat.text.find("[sim:silent]") != std::string::npos);
    }
  }
  REQUIRE(n > 500);
  CHECK(static_cast<double>(threads) / n == Approx(0.5).margin(0.06));
  CHECK(static_cast<double>(silent) / n == Approx(0.5).margin(0.06));
}

TEST_CASE("workload: bad specs are refused naming the key path and the reason") {
  struct bad {
    const char* json;
    const char* message;
  };
  const bad cases[] = {
      {R"({"users": -3})", "workload.users: must be a whole number from 1 to 10000000, got -3"},
      {R"({"users": 2.5})", "workload.users: must be a whole number from 1 to 10000000, got 2.5"},
      {R"({"usres": 10})", "workload.usres: unknown key (known keys: users, days,"},
      {R"({"days": "many"})", "workload.days: must be a whole number from 1 to 3660, got \"many\""},
      {R"({"channels": {"Tele gram": 1}})", "workload.channels[\"Tele gram\"]: must name a channel"},
      {R"({"channels": []})", "workload.channels: must name at least one channel"},
      {R"({"channels": ["telegram", 4]})", "workload.channels[1]: must be a channel name, got 4"},
      {R"({"groups": {"share": 1.5, "count": 2}})", "workload.groups.share: must be a share from 0 to 1, got 1.5"},
      {R"({"groups": {"share": 0.5}})", "workload.groups.count: must be at least 1 when share is above 0, got 0"},
      {R"({"groups": {"count": 2, "thread": 1}})", "workload.groups.thread: unknown key"},
      {R"({"hourWeights": [1, 2, 3]})", "workload.hourWeights: must be an array of 24 weights"},
      {R"({"hourWeights": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,-1]})",
       "workload.hourWeights[23]: must be a number from 0 to"},
      {R"({"messageBytes": {"median": 500, "max": 100}})", "workload.messageBytes.max: must be at least the median (500), got 100"},
      {R"({"heartbeat": {"every": "soon"}})", "workload.heartbeat.every: must be a duration"},
      {R"({"heartbeat": 30})", "workload.heartbeat: must be an object, got 30"},
      {R"({"cron": {"jobs": 2}})", "workload.cron.every: must be at least 1s when jobs is above 0, got 0"},
      {R"({"messagesPerUserPerDay": 1e9})", "workload.messagesPerUserPerDay: must be a number from 0 to 1000"},
      {R"({"imageShare": "often"})", "workload.imageShare: must be a share from 0 to 1, got \"often\""},
  };
  for (const auto& c : cases) {
    auto v = json::parse(c.json);
    REQUIRE(v.ok());
    auto s = parse_workload(v->as_object());
    INFO(c.json);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == errc::invalid_argument);
    CHECK_THAT(s.error().message(), Catch::StartsWith(c.message));
  }
  // The caller's path prefixes every key.
  auto v = json::parse(R"({"users": 0})");
  REQUIRE(v.ok());
  auto s = parse_workload(v->as_object(), "scenario.workload");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message(), Catch::StartsWith("scenario.workload.users: "));
}

TEST_CASE("workload: the month of 10,000 users is enumerated in bounded memory") {
  workload_spec spec = spec_of(R"({"users": 10000, "days": 30, "messagesPerUserPerDay": 10,
    "groups": {"count": 300, "share": 0.2, "threadShare": 0.2}, "heartbeat": {"every": "30m"}})");
  auto heap = [] {
    struct mallinfo2 m = mallinfo2();
    return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
  };
  std::int64_t before = heap(), peak = before, events = 0, bytes = 0;
  {
    workload_generator gen(spec, 2026, kStartMs, berlin(), spec.days);
    while (auto e = gen.next()) {
      ++events;
      bytes += static_cast<std::int64_t>(e->chat.text.size());
      if (events % 50'000 == 0) peak = std::max(peak, heap());
    }
  }
  // About 3 million events (10 per user-day plus the heartbeats) holding ~250 MB of text: the
  // generator must hold far less than that at any time.
  INFO("events " << events << ", text bytes " << bytes << ", peak heap growth " << (peak - before));
  CHECK(static_cast<double>(events) == Approx(10000.0 * 30 * 10).epsilon(0.05));
  CHECK(peak - before < 16 * 1024 * 1024);
  CHECK(bytes > 100 * 1024 * 1024);
}
