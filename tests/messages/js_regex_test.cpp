// js_regex: JavaScript regexes run by PCRE2. Every row of the table was run through
// `new RegExp(source, flags).exec(subject)` under Node 20 (V8), the engine OpenClaw and pi-ai
// run on; offsets converted from UTF-16 indices to UTF-8 byte offsets. The translator was also
// checked against V8 on ~160000 generated patterns and subjects (classes, escapes, anchors,
// lookaround, flags); the only differences left are the documented ones of js_regex.hpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "messages/js_regex.hpp"

using namespace sessionrt;
using namespace std::string_view_literals;

namespace {

struct regex_row {
  const char* source;
  const char* flags;
  std::string_view subject;
  bool matched;
  std::size_t begin;
  std::size_t end;
  const char* group1;  // nullptr: no group 1, or it did not participate
};

const regex_row kNodeRows[] = {
    {"(?<=\\$)\\d+", "", "cost $42"sv, true, 6, 8, nullptr},
    {"(?<!no_)reply", "i", "no_reply Reply"sv, true, 9, 14, nullptr},
    {"(?<=^|\\s)NO_REPLY", "", "x NO_REPLY"sv, true, 2, 10, nullptr},
    {"^\\p{P}+", "u", "\xc2\xabhi\xc2\xbb"sv, true, 0, 2, nullptr},
    {"\\p{P}+$", "u", "hi?!\xe2\x80\xa6"sv, true, 2, 7, nullptr},
    {"[\\p{L}\\p{N}]", "u", "  \xd9\xa3"sv, true, 2, 4, nullptr},
    {"\\p{Lu}", "u", "abc\xc3\x89"sv, true, 3, 5, nullptr},
    {"\\p{Letter}+", "u", "--\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e--"sv, true, 2, 11, nullptr},
    {"\\p{Script=Greek}+", "u", "abc \xce\xb1\xce\xb2\xce\xb3"sv, true, 4, 10, nullptr},
    {"\\P{L}+", "u", "ab12cd"sv, true, 2, 4, nullptr},
    {"\xc3\xa9", "iu", "\xc3\x89"sv, true, 0, 2, nullptr},
    {"\xc3\xa9", "i", "\xc3\x89"sv, true, 0, 2, nullptr},
    {"s", "iu", "\xc5\xbf"sv, true, 0, 2, nullptr},
    {"s", "i", "\xc5\xbf"sv, false, 0, 0, nullptr},
    {"k", "iu", "\xe2\x84\xaa"sv, true, 0, 3, nullptr},
    {"k", "i", "\xe2\x84\xaa"sv, false, 0, 0, nullptr},
    {"\\w", "iu", "\xc5\xbf"sv, true, 0, 2, nullptr},
    {"\\w", "i", "\xc5\xbf"sv, false, 0, 0, nullptr},
    {"[a-z]", "i", "\xe2\x84\xaa"sv, false, 0, 0, nullptr},
    {"[a-z]", "iu", "\xe2\x84\xaa"sv, true, 0, 3, nullptr},
    {"[^s]", "i", "\xc5\xbf"sv, true, 0, 2, nullptr},
    {"[^s]", "iu", "\xc5\xbf"sv, false, 0, 0, nullptr},
    {"[\\W]", "iu", "\xc5\xbf"sv, false, 0, 0, nullptr},
    {"[\\W]", "i", "\xc5\xbf"sv, true, 0, 2, nullptr},
    {"\xc5\xbf", "i", "s"sv, false, 0, 0, nullptr},
    {"STRASSE", "i", "strasse"sv, true, 0, 7, nullptr},
    {"\xce\xa3+", "iu", "\xcf\x83\xcf\x82"sv, true, 0, 4, nullptr},
    {"^\\s+$", "", "\xc2\xa0\xef\xbb\xbf\xe3\x80\x80\xe2\x80\xa8\x09"sv, true, 0, 12, nullptr},
    {"\\s", "", "\xc2\x85"sv, false, 0, 0, nullptr},
    {"\\S", "", "\xc2\x85"sv, true, 0, 2, nullptr},
    {"\\s", "", "\xe1\xa0\x8e"sv, false, 0, 0, nullptr},
    {"^.$", "", "\xe2\x80\xa8"sv, false, 0, 0, nullptr},
    {"^.$", "s", "\xe2\x80\xa8"sv, true, 0, 3, nullptr},
    {"^.$", "", "\x0d"sv, false, 0, 0, nullptr},
    {"^.$", "u", "\xf0\x9f\x98\x80"sv, true, 0, 4, nullptr},
    {"a$", "", "a\x0a"sv, false, 0, 0, nullptr},
    {"a$", "m", "a\x0a" "b"sv, true, 0, 1, nullptr},
    {"^b", "m", "a\x0d\x0a" "b"sv, true, 3, 4, nullptr},
    {"^b", "m", "a\xe2\x80\xa8" "b"sv, true, 4, 5, nullptr},
    {"^$", "m", "a\x0d\x0a"sv, true, 2, 2, nullptr},
    {"^b", "", "a\x0a" "b"sv, false, 0, 0, nullptr},
    {"\\v", "", "\x0a"sv, false, 0, 0, nullptr},
    {"\\v", "", "\x0b"sv, true, 0, 1, nullptr},
    {"a[]", "", "a"sv, false, 0, 0, nullptr},
    {"a[^]b", "", "a\x0a" "b"sv, true, 0, 3, nullptr},
    {"^[[:alpha:]]$", "", ":]"sv, true, 0, 2, nullptr},
    {"^[[:alpha:]]$", "", "b"sv, false, 0, 0, nullptr},
    {"\\d+", "u", "\xd9\xa3" "45"sv, true, 2, 4, nullptr},
    {"\\bcaf\xc3\xa9\\b", "", "caf\xc3\xa9!"sv, false, 0, 0, nullptr},
    {"\\bcaf\xc3\xa9", "", "caf\xc3\xa9!"sv, true, 0, 5, nullptr},
    {"(?<y>\\d{4})-(?<m>\\d\\d)", "", "on 2024-05-01"sv, true, 3, 10, "2024"},
    {"(a)?b\\1", "", "xb"sv, true, 1, 2, nullptr},
    {"(\\w)\\1", "", "hello"sv, true, 2, 4, "l"},
    {"\\u0041\\x42", "", "xABx"sv, true, 1, 3, nullptr},
    {"\\u{1F600}", "u", "a\xf0\x9f\x98\x80"sv, true, 1, 5, nullptr},
    {"\\uD83D\\uDE00", "u", "a\xf0\x9f\x98\x80"sv, true, 1, 5, nullptr},
    {"\\101", "", "zA"sv, true, 1, 2, nullptr},
    {"\\cJ", "", "a\x0a" "b"sv, true, 1, 2, nullptr},
    {"^[\\d-x]+$", "", "1-x"sv, true, 0, 3, nullptr},
    {"^[\\S\\s]+$", "", "a \x0a"sv, true, 0, 3, nullptr},
    {"[^\\S\\n]+", "", "a \x09\x0a" "b"sv, true, 1, 3, nullptr},
    {"(?:^|\\s+|\\*+)NO_REPLY(?:\\s+NO_REPLY)*\\s*$", "i", "Done **no_reply  "sv, true, 5, 17, nullptr},
    {"think(?:ing)?", "i", "<THINKING>"sv, true, 1, 9, nullptr},
    {"a{2}", "", "aaa"sv, true, 0, 2, nullptr},
    {"u{2}", "", "xuu"sv, true, 1, 3, nullptr},
    {"\\/\\.\\-", "", "a/.-b"sv, true, 1, 4, nullptr},
    {"[\\u00e9-\\u00ea]+", "", "x\xc3\xa9\xc3\xaay"sv, true, 1, 5, nullptr},
    {"x*", "", "abc"sv, true, 0, 0, nullptr},
    {"\\0", "", "a\x00"sv, true, 1, 2, nullptr},
    {"^[^\\s]{1,2}$", "u", "ab"sv, true, 0, 2, nullptr},
    {"a{,2}", "", "a{,2}"sv, true, 0, 5, nullptr},
    {"a{2,}}", "", "xaaa}"sv, true, 1, 5, nullptr},
    {"{x}", "", "{x}"sv, true, 0, 3, nullptr},
    {"(?=s)x?s", "", "s"sv, true, 0, 1, nullptr},
    {"\\b(?=s)\\w?s", "i", "S"sv, true, 0, 1, nullptr},
    {"[\\u017f]", "i", "s"sv, false, 0, 0, nullptr},
    {"[\\u017f]", "iu", "s"sv, true, 0, 1, nullptr},
    {"[A-Z]", "i", "s"sv, true, 0, 1, nullptr},
    {"[a-z]+", "i", "K\xe2\x84\xaak"sv, true, 0, 1, nullptr},
    {"[^a-r]", "i", "\xc5\xbf"sv, true, 0, 2, nullptr},
    {"[\\s*.]NO_REPLY", "i", "x*no_reply"sv, true, 1, 10, nullptr},
    {"[\\0-\\x1f]", "", "a\x07"sv, true, 1, 2, nullptr},
    {"\\8", "", "8"sv, true, 0, 1, nullptr},
    {"x\\02", "", "x\x02"sv, true, 0, 2, nullptr},
};

js_regex re(std::string_view source, std::string_view flags = {}) {
  auto compiled = js_regex::compile(source, flags);
  INFO(compiled.to_status().to_string());
  REQUIRE(compiled.ok());
  return std::move(*compiled);
}

}  // namespace

TEST_CASE("js_regex: exec results agree with V8 (Node 20) on the reference rows") {
  for (const auto& row : kNodeRows) {
    const js_regex r = re(row.source, row.flags);
    INFO("/" << row.source << "/" << row.flags << " on \"" << row.subject << "\" (PCRE2: " << r.pcre2_pattern()
              << ")");
    const auto m = r.find(row.subject);
    CHECK(r.search(row.subject) == row.matched);
    REQUIRE(m.has_value() == row.matched);
    if (!m) continue;
    CHECK(m->whole.begin == row.begin);
    CHECK(m->whole.end == row.end);
    const auto g1 = m->group(row.subject, 1);
    if (row.group1 == nullptr) {
      CHECK_FALSE(g1.has_value());
    } else {
      REQUIRE(g1.has_value());
      CHECK(*g1 == row.group1);
    }
  }
}

TEST_CASE("js_regex: lookbehind, the P property and Unicode case folding") {
  CHECK(re(R"((?<=\$)\d+)").find("cost $42")->whole.in("cost $42") == "42");
  CHECK_FALSE(re(R"((?<!no_)reply)").search("no_reply"));
  CHECK(re(R"((?<![\p{L}\p{N}])x)", "u").search("1 x"));
  CHECK_FALSE(re(R"((?<![\p{L}\p{N}])x)", "u").search("\xd9\xa3x"));  // ARABIC-INDIC DIGIT THREE is \p{N}
  // \p{P} covers Unicode punctuation (quotes, dashes, CJK brackets), not symbols.
  const js_regex punct = re(R"(^\p{P}+$)", "u");
  for (const char* p : {"\xc2\xab\xc2\xbb", "\xe2\x80\x94", "\xe3\x80\x8c\xe3\x80\x8d", "\xc2\xbf?", "\xe2\x80\xa6", "_"})
    CHECK(punct.search(p));
  for (const char* s : {"$", "+", "\xf0\x9f\x98\x80", "a"}) CHECK_FALSE(punct.search(s));
  // Without u, \p is a literal p.
  CHECK(re(R"(\p{P})").search("p{P}"));
  // i with u: Unicode simple case folding; without u only V8's non-Unicode canonicalization.
  CHECK(re("\xc3\xa9t\xc3\xa9", "iu").search("\xc3\x89T\xc3\x89"));
  CHECK(re("stra\xc3\x9f" "e", "iu").search("STRA\xe1\xba\x9e" "E"));  // ß ~ ẞ (U+1E9E)
  CHECK(re("NO_REPLY", "iu").search("no_reply"));
  CHECK(re("\xce\xbf\xce\xb4\xcf\x8c\xcf\x82", "iu").search("\xce\x9f\xce\x94\xce\x8c\xce\xa3"));  // οδός ~ ΟΔΌΣ
}

TEST_CASE("js_regex: anchors, dot and the whitespace class are JavaScript's, not PCRE2's defaults") {
  CHECK_FALSE(re("a$").search("a\n"));              // PCRE2's $ would match before a final \n
  CHECK(re("^b$", "m").search("a\rb\r\nc"));
  CHECK(re("^b$", "m").search("a\xe2\x80\xa9" "b"));  // U+2029 ends a line
  CHECK_FALSE(re("^b$", "m").search("a\xc2\x85" "b"));  // U+0085 does not
  CHECK_FALSE(re("a.b").search("a\rb"));
  CHECK(re("a.b", "s").search("a\rb"));
  CHECK(re(R"(^\s*$)").search(" \t\xc2\xa0\xe2\x80\x87\xef\xbb\xbf\xe3\x80\x80\n"));
  CHECK_FALSE(re(R"(\s)").search("\xc2\x85\xe1\xa0\x8e\xe2\x80\x8b"));  // NEL, MVS, ZWSP are not \s
  CHECK(re(R"(^\S+$)").search("\xc2\x85\xe1\xa0\x8e"));
  CHECK(re(R"([\s*.]x)").search("a*x"));
  CHECK(re(R"([\s*.]x)").search("a\xe2\x80\xa8x"));
  CHECK_FALSE(re(R"(^\d$)", "u").search("\xd9\xa3"));  // \d is ASCII even with u
  CHECK_FALSE(re(R"(\w)", "u").search("\xc3\xa9"));
  CHECK(re(R"(\bno\b)", "i").search("say NO!"));
  CHECK_FALSE(re(R"(\bno\b)", "i").search("nope"));
}

TEST_CASE("js_regex: capture groups, named groups and offsets") {
  const js_regex r = re(R"((?:(\d+)|(x))-(?<tail>[a-z]+)?)");
  const std::string_view text = "id 42-";
  const auto m = r.find(text);
  REQUIRE(m);
  CHECK(r.group_count() == 3);
  CHECK(m->whole.in(text) == "42-");
  CHECK(m->group(text, 1) == "42");
  CHECK_FALSE(m->group(text, 2));
  CHECK_FALSE(m->group(text, 3));
  CHECK_FALSE(m->group(text, 4));
  // from: the search starts there, lookbehind sees what is before.
  CHECK(re("(?<=a)b").search("ab", 1));
  CHECK(re("b").find("abab", 2)->whole.begin == 3);
  CHECK_FALSE(re("b").search("ab", 3));
  CHECK(re("^").search("ab", 2) == false);  // ^ is the input start, not the search start
  CHECK(re("$").find("ab", 2)->whole.begin == 2);
  CHECK(re("\xc3\xa9").find("\xc3\xa9\xc3\xa9", 1)->whole.begin == 2);  // inside a character: the next one
}

TEST_CASE("js_regex: invalid UTF-8 subjects match as U+FFFD, offsets stay on the original bytes") {
  const std::string text = "a\xff" "b\xe2\x82" "c";
  const auto b = re("b").find(text);
  REQUIRE(b);
  CHECK(b->whole.begin == 2);
  CHECK(b->whole.end == 3);
  const auto c = re("c").find(text);
  REQUIRE(c);
  CHECK(c->whole.begin == 5);
  const auto run = re(R"([^a]+)").find(text);
  REQUIRE(run);
  CHECK(run->whole.begin == 1);
  CHECK(run->whole.end == text.size());
  CHECK(re("\xef\xbf\xbd").find(text)->whole.end == 2);  // the bad byte is one U+FFFD
  CHECK(re(R"(^\S+$)").search(text));
  CHECK(re("c", "").find(text, 4)->whole.begin == 5);
}

TEST_CASE("js_regex: a bad pattern is an invalid_argument error that says why") {
  for (const auto& [source, flags, needle] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"a(", "", "missing closing parenthesis"},
           {"[a-", "", "missing ]"},
           {"a\\", "", "\\ at end"},
           {"(?<=a+)b", "", "lookbehind"},  // V8 allows unbounded lookbehind, PCRE2 10.42 does not
           {"(?i:a)", "", "unsupported group"},
           {"a", "g", "unsupported flag"},
           {"a", "ii", "twice"},
           {"\\p{Nope}", "u", "unknown property"},
           {"\\p{Foo=Bar}", "u", "unknown Unicode property"},
           {"\\uD800", "u", "surrogate"},
           {"\\2(a)", "u", "backreference"},
       }) {
    INFO(source << " /" << flags);
    const auto compiled = js_regex::compile(source, flags);
    REQUIRE_FALSE(compiled.ok());
    CHECK(compiled.error().code() == errc::invalid_argument);
    CHECK_THAT(compiled.error().message(), Catch::Contains("js regex /") && Catch::Contains(needle));
  }
}

TEST_CASE("js_regex: one compiled regex is shared by concurrent threads") {
  const js_regex r = re(R"((\d+) tokens > (\d+) maximum)", "i");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 2000; ++k) {
        const std::string text = "prompt is too long: " + std::to_string(t * 100000 + k) + " tokens > 200000 maximum";
        const auto m = r.find(text);
        if (!m || m->group(text, 1) != std::to_string(t * 100000 + k)) ++failures;
        if (r.search("nothing here")) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}

TEST_CASE("js_regex: large subjects") {
  std::string big(4 * 1024 * 1024, 'a');
  big += " prompt is too long";
  CHECK(re("prompt is too long", "i").search(big));
  CHECK_FALSE(re(R"(\d{3,}\s+tokens)", "i").search(big));
  std::string punct(200000, '!');
  punct += "x";
  CHECK_FALSE(re(R"((?<!\p{P})\p{P}+$)", "u").search(punct));
}
