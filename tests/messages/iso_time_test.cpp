#include <catch2/catch.hpp>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"

using namespace sessionrt;

TEST_CASE("ISO timestamps round-trip as Date.prototype.toISOString writes them") {
  // node: new Date(1796002475418).toISOString()
  CHECK(format_iso_ms(1796002475418) == "2026-11-30T01:34:35.418Z");
  CHECK(format_iso_ms(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_iso_ms(-1) == "1969-12-31T23:59:59.999Z");
  CHECK(format_iso_ms(951782400000) == "2000-02-29T00:00:00.000Z");
  CHECK(*parse_iso_ms("2026-11-30T01:34:35.418Z") == 1796002475418);
  CHECK(*parse_iso_ms("2026-11-30T02:34:35.418+01:00") == 1796002475418);
  CHECK(*parse_iso_ms("2026-11-30T01:34:35Z") == 1796002475000);
  CHECK(*parse_iso_ms("2026-11-30") == 1795996800000);
  CHECK_FALSE(parse_iso_ms("2026-13-01T00:00:00Z"));
  CHECK_FALSE(parse_iso_ms("2026-02-30T00:00:00Z"));
  CHECK_FALSE(parse_iso_ms("yesterday"));
  CHECK_FALSE(parse_iso_ms("2026-11-30T01:34:35.418Zjunk"));
}

TEST_CASE("archive timestamps replace ':' with '-' and are recognized back") {
  CHECK(format_archive_ts(1796002475418) == "2026-11-30T01-34-35.418Z");
  CHECK(*parse_archive_ts("2026-11-30T01-34-35.418Z") == 1796002475418);
  CHECK(*parse_archive_ts("2026-11-30T01-34-35Z") == 1796002475000);
  CHECK_FALSE(parse_archive_ts("2026-11-30T01:34:35.418Z"));
  CHECK_FALSE(parse_archive_ts("2026-11-30"));
}

TEST_CASE("ids have the shapes of the file formats") {
  auto e = new_entry_id();
  CHECK(e.size() == 8);
  CHECK(e.find_first_not_of("0123456789abcdef") == std::string::npos);
  auto s = new_session_id();
  CHECK(s.size() == 36);
  CHECK(s[14] == '4');
  CHECK(is_safe_session_id(s));
  CHECK(is_transcript_id(s));
  CHECK_FALSE(is_transcript_id("../etc/passwd"));
  CHECK_FALSE(is_transcript_id("a/b"));
  CHECK_FALSE(is_safe_session_id(""));
  CHECK_FALSE(is_safe_session_id(".hidden"));
  CHECK(is_safe_session_id("agent:main@x"));
  CHECK_FALSE(is_transcript_id("agent:main"));
}
