// Each lifecycle event's data keys, as subscribers (the gateway, the simulator, hosts) read
// them: a renamed or dropped key fails here.
#include "messages/lifecycle_payloads.hpp"

#include <catch2/catch.hpp>

#include "messages/json_writer.hpp"

using namespace sessionrt;
using namespace sessionrt::payloads;

namespace {
template <class P>
std::string data_of(const P& p) {
  return json::to_compact(p.data());
}
}  // namespace

TEST_CASE("make_event fills the type, the subject and the time from its payload") {
  auto e = make_event({"agent:main:main", "main", "s-1"}, 1234, turn_failed{"boom"});
  CHECK(e.type == "turn.failed");
  CHECK(e.session_key == "agent:main:main");
  CHECK(e.agent_id == "main");
  CHECK(e.session_id == "s-1");
  CHECK(e.at_ms == 1234);
  CHECK(json::to_compact(e.data) == R"({"error":"boom"})");
}

TEST_CASE("session event payloads carry their documented keys") {
  CHECK(data_of(session_created{}) == "{}");
  CHECK(data_of(session_created{"agent:main:main", 2, "branch"}) ==
        R"({"spawnedBy":"agent:main:main","spawnDepth":2,"fork":"branch"})");
  CHECK(data_of(session_reset{"daily", "a", "b"}) == R"({"reason":"daily","oldSessionId":"a","newSessionId":"b"})");
  CHECK(data_of(session_expired{"idle", "2026-12-01T04:00:00.000Z"}) ==
        R"({"reason":"idle","staleAt":"2026-12-01T04:00:00.000Z"})");
  CHECK(data_of(session_passivated{"lru", ""}) == R"({"why":"lru"})");
  CHECK(data_of(session_passivated{"stop", "EIO"}) == R"({"why":"stop","closeError":"EIO"})");
  CHECK(data_of(session_docked{"discord", "u1", "default", "alice", "telegram"}) ==
        R"({"channel":"discord","to":"u1","accountId":"default","group":"alice","from":"telegram"})");
  CHECK(data_of(message_appended{"e1", "user"}) == R"({"entryId":"e1","role":"user"})");
}

TEST_CASE("turn event payloads carry their documented keys") {
  CHECK(data_of(turn_completed{120, 35}) == R"({"totalTokens":120,"latencyMs":35})");
  CHECK(data_of(turn_completed{1, 2, delivery_route{"discord", "u7", "", ""}}) ==
        R"({"totalTokens":1,"latencyMs":2,"delivery":{"channel":"discord","to":"u7"}})");
  CHECK(data_of(turn_completed{1, 2, delivery_route{"slack", "c1", "bot", "t1"}}) ==
        R"({"totalTokens":1,"latencyMs":2,"delivery":{"channel":"slack","to":"c1","accountId":"bot","threadId":"t1"}})");
  CHECK(data_of(turn_queued{"collect", 3}) == R"({"mode":"collect","depth":3})");
  CHECK(data_of(turn_cancelled{"interrupt"}) == R"({"reason":"interrupt"})");
  CHECK(data_of(reply_suppressed{}) == "{}");
  CHECK(data_of(overflow_recovered{2}) == R"({"compactions":2})");
  CHECK(data_of(reply_delta{"he", 1, 0, false, false, false}) == R"({"text":"he","attempt":1,"index":0})");
  CHECK(data_of(reply_delta{"", 2, 5, true, true, false}) ==
        R"({"text":"","attempt":2,"index":5,"done":true,"silent":true,"discarded":false})");
  CHECK(data_of(context_sanitized{"turn", boost::json::object{{"blankText", 1}}}) ==
        R"({"purpose":"turn","counts":{"blankText":1}})");
  CHECK(data_of(context_pressure{0.75, 300, 400, 1000}) ==
        R"({"fraction":0.75,"contextTokens":300,"compactionThreshold":400,"contextWindow":1000})");
}

TEST_CASE("compaction and memory flush payloads carry their documented keys") {
  CHECK(data_of(compaction_started{"threshold"}) == R"({"reason":"threshold"})");
  CHECK(data_of(compaction_failed{"overflow", "no summary", true}) ==
        R"({"reason":"overflow","error":"no summary","cancelled":true})");
  compaction_completed c{"manual", "builtin", 900, 100, "e7", 3};
  CHECK(data_of(c) ==
        R"({"reason":"manual","provider":"builtin","tokensBefore":900,"tokensAfter":100,"firstKeptEntryId":"e7","compactionCount":3})");
  c.warning = "fell back";
  c.successor_session_id = "s2";
  c.checkpoint = "/x/s1.jsonl";
  CHECK(data_of(c).find(R"("warning":"fell back","successorSessionId":"s2","checkpoint":"/x/s1.jsonl"})") !=
        std::string::npos);
  CHECK(data_of(memory_flush_started{{"threshold", 5000, 4000}}) ==
        R"({"reason":"threshold","tokenCount":5000,"threshold":4000})");
  CHECK(memory_flush_skipped::type == "memory_flush.skipped");
  CHECK(data_of(memory_flush_completed{true, "memory/2026-12-01.md"}) ==
        R"({"silent":true,"memoryFile":"memory/2026-12-01.md"})");
  CHECK(data_of(memory_flush_failed{"timeout", 2}) == R"({"error":"timeout","failures":2})");
}

TEST_CASE("store, lock, cron and sub-agent payloads carry their documented keys") {
  CHECK(data_of(store_flushed{"/s/sessions.json", 4}) == R"({"path":"/s/sessions.json","rows":4})");
  CHECK(data_of(store_quarantined{"/s/q", "bad json", 3, 1}) ==
        R"({"path":"/s/q","cause":"bad json","rowsFromHeaders":3,"unrecoverableKeys":1})");
  CHECK(data_of(transcript_repaired{"/s/a.jsonl", "1 line dropped", 1, 12}) ==
        R"({"path":"/s/a.jsonl","summary":"1 line dropped","droppedLines":1,"tornTailBytes":12,"keptAt":null})");
  CHECK(data_of(transcript_repaired{"/s/a.jsonl", "1 line dropped", 1, 0, "/s/a.jsonl.dropped-x.jsonl"}) ==
        R"({"path":"/s/a.jsonl","summary":"1 line dropped","droppedLines":1,"tornTailBytes":0,"keptAt":"/s/a.jsonl.dropped-x.jsonl"})");
  CHECK(data_of(lock_contended{"/s/a.lock", std::nullopt, false, std::nullopt, "no pid"}) ==
        R"({"lockPath":"/s/a.lock","pid":null,"alive":false,"ageMs":null,"reasons":"no pid"})");
  CHECK(data_of(lock_contended{"/s/a.lock", 42, true, 10, ""}) ==
        R"({"lockPath":"/s/a.lock","pid":42,"alive":true,"ageMs":10,"reasons":""})");
  CHECK(data_of(cron_completed{"j", "s", std::nullopt, "done", false}) ==
        R"({"jobId":"j","sessionId":"s","reply":"done","suppressed":false})");
  CHECK(data_of(cron_completed{"j", "s", "EIO", "ignored", false}) ==
        R"({"jobId":"j","sessionId":"s","error":"EIO","suppressed":false})");
  CHECK(data_of(subagent_completed{"agent:a:subagent:1", "s9", 1, "", std::nullopt, "ok", false}) ==
        R"({"childSessionKey":"agent:a:subagent:1","childSessionId":"s9","spawnDepth":1,"reply":"ok","suppressed":false})");
  CHECK(data_of(maintenance_report{boost::json::object{{"mode", "warn"}}}) == R"({"mode":"warn"})");
}
