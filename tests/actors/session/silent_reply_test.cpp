#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/session/silent_reply.hpp"

using namespace sessionrt::actors;

namespace {

struct token_row {
  const char* text;
  bool is_text;        // is_silent_reply_text
  bool is_payload;     // is_silent_reply_payload_text
  bool starts_with;    // starts_with_silent_token
  bool is_prefix;      // is_silent_reply_prefix_text
  const char* strip;   // strip_silent_token
  const char* lead;    // strip_leading_silent_token
};

// Expected values are OpenClaw's own answers: each row was run through
// isSilentReplyText / isSilentReplyPayloadText / startsWithSilentToken /
// isSilentReplyPrefixText / stripSilentToken / stripLeadingSilentToken of the installed
// openclaw 2026.9.6 (dist/tokens-BTKQYTUd.mjs) under Node, and the rows follow [R§7.3].
const std::vector<token_row> reference_rows = {
    {"NO_REPLY", true, true, false, true, "", ""},
    {"no_reply", true, true, false, false, "", ""},
    {"No_Reply", true, true, false, false, "", ""},
    {"  NO_REPLY  \n", true, true, false, false, "", ""},
    {"NO_REPLY NO_REPLY", true, true, false, false, "", ""},
    {"NO_REPLY\nNO_REPLY", true, true, false, false, "", ""},
    {"NO_REPLY.", true, true, false, false, "NO_REPLY.", "."},
    {"«NO_REPLY»", true, true, false, false, "«NO_REPLY»", "«NO_REPLY»"},
    {"**NO_REPLY**", true, true, false, false, "**NO_REPLY**", "**NO_REPLY**"},
    {"\"NO_REPLY\"", true, true, false, false, "\"NO_REPLY\"", "\"NO_REPLY\""},
    {"(NO_REPLY)", true, true, false, false, "(NO_REPLY)", "(NO_REPLY)"},
    {"¿NO_REPLY?", true, true, false, false, "¿NO_REPLY?", "¿NO_REPLY?"},
    {"「NO_REPLY」", true, true, false, false, "「NO_REPLY」", "「NO_REPLY」"},
    {"NO_REPLY…", true, true, false, false, "NO_REPLY…", "…"},
    {"— NO_REPLY —", true, true, false, false, "— NO_REPLY —", "— NO_REPLY —"},
    {"_NO_REPLY_", true, true, false, false, "_NO_REPLY_", "_NO_REPLY_"},
    {"", false, false, false, false, "", ""},
    {"NO_REPLY please", false, false, false, false, "NO_REPLY please", "please"},
    {"NO_REPLYNO_REPLY", false, false, true, false, "NO_REPLYNO_REPLY", ""},
    {"NO", false, false, false, true, "NO", "NO"},
    {"NO_REPL", false, false, false, true, "NO_REPL", "NO_REPL"},
    {"I said NO_REPLY", false, false, false, false, "I said", "I said NO_REPLY"},
    {"$NO_REPLY$", false, false, false, false, "$NO_REPLY$", "$NO_REPLY$"},
    {"+NO_REPLY", false, false, false, false, "+NO_REPLY", "+NO_REPLY"},
    {"NO_REPLY 😀", false, false, false, false, "NO_REPLY 😀", "😀"},
    {"\"NO_REPLY\\n\"", false, true, false, false, "\"NO_REPLY\\n\"", "\"NO_REPLY\\n\""},
    {"{\"action\":\"NO_REPLY\"}", false, true, false, false, "{\"action\":\"NO_REPLY\"}", "{\"action\":\"NO_REPLY\"}"},
    {"{\"action\":\" NO_REPLY \"}", false, true, false, false, "{\"action\":\" NO_REPLY \"}", "{\"action\":\" NO_REPLY \"}"},
    {"{ \"action\" : \"NO_REPLY\" }", false, true, false, false, "{ \"action\" : \"NO_REPLY\" }", "{ \"action\" : \"NO_REPLY\" }"},
    {"{\"action\":\"NO_REPLY\",\"reason\":\"x\"}", false, false, false, false, "{\"action\":\"NO_REPLY\",\"reason\":\"x\"}", "{\"action\":\"NO_REPLY\",\"reason\":\"x\"}"},
    {"{\"action\":\"no_reply\"}", false, false, false, false, "{\"action\":\"no_reply\"}", "{\"action\":\"no_reply\"}"},
    {"{\"reply\":\"NO_REPLY\"}", false, false, false, false, "{\"reply\":\"NO_REPLY\"}", "{\"reply\":\"NO_REPLY\"}"},
    {"{\"action\":\"x\",\"action\":\"NO_REPLY\"}", false, true, false, false, "{\"action\":\"x\",\"action\":\"NO_REPLY\"}", "{\"action\":\"x\",\"action\":\"NO_REPLY\"}"},
    {"<think>The user said thanks.</think>NO_REPLY", false, true, false, false, "<think>The user said thanks.</think>NO_REPLY", "<think>The user said thanks.</think>NO_REPLY"},
    {"<thinking>\nconsider\n</thinking>\n\nNO_REPLY", false, true, false, false, "<thinking>\nconsider\n</thinking>", "<thinking>\nconsider\n</thinking>\n\nNO_REPLY"},
    {"<think>x</think> I'll stay quiet. NO_REPLY", false, true, false, false, "<think>x</think> I'll stay quiet.", "<think>x</think> I'll stay quiet. NO_REPLY"},
    {"<think>x</think> I will not reply here. NO_REPLY", false, true, false, false, "<think>x</think> I will not reply here.", "<think>x</think> I will not reply here. NO_REPLY"},
    {"<think>x</think> Here is the answer. NO_REPLY", false, false, false, false, "<think>x</think> Here is the answer.", "<think>x</think> Here is the answer. NO_REPLY"},
    {"thinking:\nNO_REPLY", false, true, false, false, "thinking:", "thinking:\nNO_REPLY"},
    {"Thinking:\nThe user is just saying bye.\nI'll stay quiet.\nNO_REPLY", false, true, false, false, "Thinking:\nThe user is just saying bye.\nI'll stay quiet.", "Thinking:\nThe user is just saying bye.\nI'll stay quiet.\nNO_REPLY"},
    {"thinking:\nYou should try restarting.\nI'll stay quiet.\nNO_REPLY", false, false, false, false, "thinking:\nYou should try restarting.\nI'll stay quiet.", "thinking:\nYou should try restarting.\nI'll stay quiet.\nNO_REPLY"},
    {"<think>\nreasoning\nNO_REPLY", false, true, false, false, "<think>\nreasoning", "<think>\nreasoning\nNO_REPLY"},
    {"<think>\nprivate reasoning notes\nNO_REPLY", false, true, false, false, "<think>\nprivate reasoning notes", "<think>\nprivate reasoning notes\nNO_REPLY"},
    {"I'll stay quiet. NO_REPLY", false, false, false, false, "I'll stay quiet.", "I'll stay quiet. NO_REPLY"},
    {"analysis\n\nNO_REPLY", false, true, false, false, "analysis", "analysis\n\nNO_REPLY"},
    {"thoughts:\nNO_REPLY", false, false, false, false, "thoughts:", "thoughts:\nNO_REPLY"},
    {"<thinking>hmm</thinking>NO_REPLY", false, true, false, false, "<thinking>hmm</thinking>NO_REPLY", "<thinking>hmm</thinking>NO_REPLY"},
    {"<thinkingx>a</thinkingx>NO_REPLY", false, false, false, false, "<thinkingx>a</thinkingx>NO_REPLY", "<thinkingx>a</thinkingx>NO_REPLY"},
    {"<think>a</thought>NO_REPLY", false, true, false, false, "<think>a</thought>NO_REPLY", "<think>a</thought>NO_REPLY"},
    {"Thinking:\nno, that's wrong.\nWe have nothing to add.\nNO_REPLY", false, true, false, false, "Thinking:\nno, that's wrong.\nWe have nothing to add.", "Thinking:\nno, that's wrong.\nWe have nothing to add.\nNO_REPLY"},
    {"Thinking:\nno,that's wrong.\nWe have nothing to add.\nNO_REPLY", false, false, false, false, "Thinking:\nno,that's wrong.\nWe have nothing to add.", "Thinking:\nno,that's wrong.\nWe have nothing to add.\nNO_REPLY"},
    {"Thinking:\nWe will stay quiet .\nNO_REPLY", false, false, false, false, "Thinking:\nWe will stay quiet .", "Thinking:\nWe will stay quiet .\nNO_REPLY"},
    {"<think>x</think>We will stay silent in this thread!! NO_REPLY", false, true, false, false, "<think>x</think>We will stay silent in this thread!!", "<think>x</think>We will stay silent in this thread!! NO_REPLY"},
    {"<think>x</think>NO_REPLY*", false, true, false, false, "<think>x</think>NO_REPLY*", "<think>x</think>NO_REPLY*"},
    {"<think>x</think>Okay.NO_REPLY", false, false, false, false, "<think>x</think>Okay.NO_REPLY", "<think>x</think>Okay.NO_REPLY"},
    {"Here you go. NO_REPLY", false, false, false, false, "Here you go.", "Here you go. NO_REPLY"},
    {"Done **NO_REPLY", false, false, false, false, "Done", "Done **NO_REPLY"},
    {"Done\nNO_REPLY NO_REPLY\n", false, false, false, false, "Done", "Done\nNO_REPLY NO_REPLY"},
    {"DoneNO_REPLY", false, false, false, false, "DoneNO_REPLY", "DoneNO_REPLY"},
    {"Done NO_REPLY.", false, false, false, false, "Done NO_REPLY.", "Done NO_REPLY."},
    {"Mention NO_REPLY in docs", false, false, false, false, "Mention NO_REPLY in docs", "Mention NO_REPLY in docs"},
    {"xNO_REPLY NO_REPLY", false, false, false, false, "xNO_REPLY", "xNO_REPLY NO_REPLY"},
    {"Done *\nNO_REPLY", false, false, false, false, "Done *", "Done *\nNO_REPLY"},
    {"Hello * NO_REPLY", false, false, false, false, "Hello *", "Hello * NO_REPLY"},
    {"NO_REPLY The user", false, false, false, false, "NO_REPLY The user", "The user"},
    {"NO_REPLYNO_REPLY hi", false, false, true, false, "NO_REPLYNO_REPLY hi", "hi"},
    {"  no_reply\nHello ", false, false, true, false, "no_reply\nHello", "Hello"},
    {"Hello", false, false, false, false, "Hello", "Hello"},
    {"NO_REPLYThe user is…", false, false, true, false, "NO_REPLYThe user is…", "The user is…"},
    {"NO_REPLY\nHello", false, false, true, false, "NO_REPLY\nHello", "Hello"},
    {"NO_REPLY NO_REPLY\n\nHi", false, false, true, false, "NO_REPLY NO_REPLY\n\nHi", "Hi"},
    {"NO_REPLY hello", false, false, false, false, "NO_REPLY hello", "hello"},
    {"NO_REPLY\n", true, true, false, false, "", ""},
    {"NO_REPLYé", false, false, true, false, "NO_REPLYé", "é"},
    {"NO_REPLY٣", false, false, true, false, "NO_REPLY٣", "٣"},
    {"NO_REPLY\r\nok", false, false, true, false, "NO_REPLY\r\nok", "ok"},
    {"NO_REPLY NO_REPLYx", false, false, true, false, "NO_REPLY NO_REPLYx", "x"},
    {"NO_", false, false, false, true, "NO_", "NO_"},
    {"NO_RE", false, false, false, true, "NO_RE", "NO_RE"},
    {"  NO_R", false, false, false, true, "NO_R", "NO_R"},
    {"N", false, false, false, false, "N", "N"},
    {"No", false, false, false, false, "No", "No"},
    {"no_", false, false, false, false, "no_", "no_"},
    {"NOT", false, false, false, false, "NOT", "NOT"},
    {"NO_REPLY!", true, true, false, false, "NO_REPLY!", "!"},
};

struct stream_result {
  std::vector<std::string> released;  // one entry per feed()
  silent_reply_verdict verdict;
  bool released_any = false;
};

stream_result run_stream(const std::vector<std::string>& chunks) {
  silent_reply_filter filter;
  stream_result r;
  for (const auto& chunk : chunks) r.released.push_back(filter.feed(chunk));
  r.released_any = filter.released_any();
  r.verdict = filter.finish();
  return r;
}

std::string joined(const stream_result& r) {
  std::string all;
  for (const auto& s : r.released) all += s;
  return all + r.verdict.text;
}

}  // namespace

TEST_CASE("token predicates and strippers agree with OpenClaw on the reference table") {
  for (const auto& row : reference_rows) {
    INFO("text: \"" << row.text << "\"");
    CHECK(is_silent_reply_text(row.text) == row.is_text);
    CHECK(is_silent_reply_payload_text(row.text) == row.is_payload);
    CHECK(starts_with_silent_token(row.text) == row.starts_with);
    CHECK(is_silent_reply_prefix_text(row.text) == row.is_prefix);
    CHECK(strip_silent_token(row.text) == row.strip);
    CHECK(strip_leading_silent_token(row.text) == row.lead);
  }
}

TEST_CASE("whole-payload NO_REPLY: exact, case, whitespace, repeats, punctuation") {
  for (const char* silent : {"NO_REPLY", "no_reply", "No_RePlY", " \t NO_REPLY \n", "NO_REPLY NO_REPLY",
                             "NO_REPLY\n\nno_reply", "NO_REPLY.", "«NO_REPLY»", "\"NO_REPLY\"",
                             "**NO_REPLY**", "...NO_REPLY!!!", "「NO_REPLY」", "“NO_REPLY”",
                             "— NO_REPLY —", "\u00a0NO_REPLY\u3000"}) {
    INFO(silent);
    CHECK(is_silent_reply_text(silent));
    CHECK(final_reply_verdict(silent).silent);
    CHECK(final_reply_verdict(silent).text.empty());
  }
  for (const char* spoken : {"", "NO", "NO_REPLY please", "please NO_REPLY now", "NO_REPLYNO_REPLY",
                             "$NO_REPLY$", "+NO_REPLY", "NO-REPLY", "NO_REPLY 🙂"}) {
    INFO(spoken);
    CHECK_FALSE(is_silent_reply_text(spoken));
  }
}

TEST_CASE("NO_REPLY payload forms: JSON string, action envelope, reasoning prefixes") {
  CHECK(is_silent_reply_payload_text("\"NO_REPLY\\n\""));  // JSON escape: text check alone fails
  CHECK_FALSE(is_silent_reply_text("\"NO_REPLY\\n\""));
  CHECK(is_silent_reply_payload_text(R"({"action":"NO_REPLY"})"));
  CHECK(is_silent_reply_payload_text(" { \"action\" : \" NO_REPLY \" } "));
  CHECK_FALSE(is_silent_reply_payload_text(R"({"action":"NO_REPLY","why":"quiet"})"));
  CHECK_FALSE(is_silent_reply_payload_text(R"({"reply":"NO_REPLY"})"));
  CHECK_FALSE(is_silent_reply_payload_text(R"({"action":"NO_REPLY")"));  // not JSON
  CHECK(is_silent_reply_payload_text("<think>They said thanks; nothing to add.</think>\nNO_REPLY"));
  CHECK(is_silent_reply_payload_text("<thinking>\nok\n</thinking>NO_REPLY"));
  CHECK(is_silent_reply_payload_text("<think>a</think><think>b</think> NO_REPLY"));
  CHECK(is_silent_reply_payload_text("thinking:\nNO_REPLY"));
  CHECK(is_silent_reply_payload_text("<think>x</think>I'll stay quiet. NO_REPLY"));
  CHECK(is_silent_reply_payload_text("<think>x</think>The bot has nothing to say NO_REPLY"));
  CHECK_FALSE(is_silent_reply_payload_text("<think>x</think>Here is the fix. NO_REPLY"));
  CHECK_FALSE(is_silent_reply_payload_text("thinking:\nYou should restart it.\nI'll stay quiet.\nNO_REPLY"));
  CHECK_FALSE(is_silent_reply_payload_text("I'll stay quiet. NO_REPLY"));  // no reasoning prefix
}

TEST_CASE("mixed text: trailing and leading tokens are stripped") {
  CHECK(strip_silent_token("Noted, thanks! NO_REPLY") == "Noted, thanks!");
  CHECK(strip_silent_token("Noted.\n\nNO_REPLY NO_REPLY  ") == "Noted.");
  CHECK(strip_silent_token("Noted **NO_REPLY") == "Noted");
  CHECK(strip_silent_token("Noted.NO_REPLY") == "Noted.NO_REPLY");  // needs ^, \s+ or \*+
  CHECK(strip_silent_token("NO_REPLY") == "");
  CHECK(strip_leading_silent_token("NO_REPLYThe user is asking") == "The user is asking");
  CHECK(strip_leading_silent_token("NO_REPLY\n\nSure, here it is.") == "Sure, here it is.");
  CHECK(starts_with_silent_token("NO_REPLYThe user is asking"));
  CHECK(starts_with_silent_token("NO_REPLY\nSure"));
  CHECK_FALSE(starts_with_silent_token("NO_REPLY please"));

  CHECK(final_reply_verdict("Noted, thanks! NO_REPLY").text == "Noted, thanks!");
  CHECK_FALSE(final_reply_verdict("Noted, thanks! NO_REPLY").silent);
  CHECK(final_reply_verdict("NO_REPLYThe user is asking").text == "The user is asking");
  CHECK(final_reply_verdict("NO_REPLY please").text == "NO_REPLY please");  // not silent
  CHECK_FALSE(final_reply_verdict("NO_REPLY please").silent);
  CHECK(final_reply_verdict("NO_REPLYNO_REPLY").silent);  // leading strip leaves nothing
  CHECK(final_reply_verdict("NO").text == "NO");          // "NO" alone is a real answer
  CHECK_FALSE(final_reply_verdict("NO").silent);
  CHECK(final_reply_verdict(R"({"action":"NO_REPLY"})").silent);
  CHECK(final_reply_verdict("  \n ").text.empty());
  CHECK_FALSE(final_reply_verdict("  \n ").silent);  // blank is not a silent reply
}

TEST_CASE("a reply without the token is delivered trimmed, whatever its shape") {
  // JavaScript's trim (Unicode spaces too), the token's look-alikes, and the silent forms'
  // shapes with something else inside: none of them is silent or loses more than its edges.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\u00a0\u2003 Sure, here it is. \u3000\n", "Sure, here it is."},
      {"NO REPLY", "NO REPLY"},
      {"NO_REPL", "NO_REPL"},
      {"N0_REPLY", "N0_REPLY"},
      {"\"NO\\u005fREPLY\"", "\"NO\\u005fREPLY\""},  // a JSON escape is not the token
      {R"({"action":"noreply"})", R"({"action":"noreply"})"},
      {"<thinking>quiet</thinking> I will stay quiet.", "<thinking>quiet</thinking> I will stay quiet."},
      {"Thinking:\nnothing to add", "Thinking:\nnothing to add"},
      {"\xef\xbc\xae\xef\xbc\xaf_REPLY", "\xef\xbc\xae\xef\xbc\xaf_REPLY"},  // fullwidth N O
      {"", ""},
  };
  for (const auto& [reply, delivered] : cases) {
    INFO(reply);
    const auto v = final_reply_verdict(reply);
    CHECK_FALSE(v.silent);
    CHECK(v.text == delivered);
  }
  CHECK(final_reply_verdict("  no_reply  ").silent);  // the token in any case still counts
  // The whole-payload checks find the token from its '_', at any position and in any case.
  CHECK_FALSE(is_silent_reply_payload_text("snake_case and __init__ and _NO_REPL_"));
  CHECK_FALSE(is_silent_reply_text("_"));
  CHECK(is_silent_reply_text("NO_REPLY"));
  CHECK(is_silent_reply_text("\tNo_Reply\n"));
  CHECK(is_silent_reply_payload_text("**NO_REPLY**"));
  CHECK(is_silent_reply_payload_text("\"NO_REPLY\""));
  CHECK(is_silent_reply_payload_text("<thinking>the user said thanks</thinking>\nNO_REPLY"));
}

TEST_CASE("streaming prefix rule: upper case, 2..8 chars, a token prefix with _ or NO") {
  for (const char* held : {"NO", "NO_", "NO_R", "NO_REPL", "NO_REPLY", "  NO_RE", "\nNO"}) {
    INFO(held);
    CHECK(is_silent_reply_prefix_text(held));
  }
  for (const char* not_held : {"", "N", "No", "no", "no_", "NOT", "NO_REPLY!", "NO_REPLY ", "NOPE"}) {
    INFO(not_held);
    CHECK_FALSE(is_silent_reply_prefix_text(not_held));
  }
}

TEST_CASE("streaming: N, O, _RE, PLY is held, then suppressed") {
  const auto r = run_stream({"N", "O", "_RE", "PLY"});
  CHECK(r.released == std::vector<std::string>{"", "", "", ""});
  CHECK_FALSE(r.released_any);
  CHECK(r.verdict.silent);
  CHECK(r.verdict.text.empty());
}

TEST_CASE("streaming: NO then ' thanks' is released as 'NO thanks'") {
  const auto r = run_stream({"NO", " thanks"});
  CHECK(r.released == std::vector<std::string>{"", "NO thanks"});
  CHECK_FALSE(r.verdict.silent);
  CHECK(r.verdict.text.empty());
}

TEST_CASE("streaming: NO alone as the whole reply is delivered at the end") {
  const auto r = run_stream({"NO"});
  CHECK(r.released == std::vector<std::string>{""});
  CHECK_FALSE(r.verdict.silent);
  CHECK(r.verdict.text == "NO");
}

TEST_CASE("streaming: ordinary text is released immediately") {
  const auto r = run_stream({"Hello", ", world", "!"});
  CHECK(r.released == std::vector<std::string>{"Hello", ", world", "!"});
  CHECK(r.released_any);
  CHECK_FALSE(r.verdict.silent);
  CHECK(r.verdict.text.empty());
}

TEST_CASE("streaming: silent forms split across chunks stay suppressed") {
  const std::vector<std::vector<std::string>> silent_streams = {
      {"NO_REPLY"},
      {"  ", "NO_", "REPLY", "\n"},
      {"**", "NO_REPLY", "**"},
      {"«NO_", "REPLY»"},
      {"NO_REPLY", " ", "NO_R", "EPLY"},
      {"no", "_reply"},
      {"\"NO_REPLY", "\""},
  };
  for (const auto& chunks : silent_streams) {
    INFO(chunks.front());
    const auto r = run_stream(chunks);
    CHECK_FALSE(r.released_any);
    CHECK(r.verdict.silent);
    CHECK(r.verdict.text.empty());
  }
}

TEST_CASE("streaming: a leading token is stripped once the reply goes on") {
  auto r = run_stream({"NO_REPLY", "The user says hi"});
  CHECK(r.released == std::vector<std::string>{"", "The user says hi"});
  r = run_stream({"NO_REPLY\n", "Sure", " thing"});
  CHECK(r.released == std::vector<std::string>{"", "Sure", " thing"});
  r = run_stream({"NO_REPLY", " please"});  // not a leading-token form: shown as written
  CHECK(r.released == std::vector<std::string>{"", "NO_REPLY please"});
  CHECK(r.verdict.text.empty());
}

TEST_CASE("streaming: a trailing token is held back and dropped") {
  auto r = run_stream({"Noted", " NO_R", "EPLY"});
  CHECK(r.released == std::vector<std::string>{"Noted", "", ""});
  CHECK(r.verdict.text.empty());
  CHECK_FALSE(r.verdict.silent);

  r = run_stream({"Noted **", "NO_REPLY"});
  CHECK(r.released == std::vector<std::string>{"Noted", ""});
  CHECK(r.verdict.text.empty());

  r = run_stream({"Use", " NO_REPLY", " when quiet."});  // a mention, not a trailing token
  CHECK(r.released == std::vector<std::string>{"Use", "", " NO_REPLY when quiet."});

  r = run_stream({"Line one\n\n", "Line two"});  // held whitespace goes out with what follows
  CHECK(r.released == std::vector<std::string>{"Line one", "\n\nLine two"});

  r = run_stream({"Noted", " NO"});  // an unfinished token at the end is text
  CHECK(r.released == std::vector<std::string>{"Noted", ""});
  CHECK(r.verdict.text == " NO");
}

TEST_CASE("streaming: forms recognized only on the whole reply are reported after release") {
  const auto r = run_stream({"<think>nothing to add</think>", "NO_REPLY"});
  CHECK(r.released_any);
  CHECK(r.verdict.silent);
  CHECK(r.verdict.text.empty());
}

TEST_CASE("streaming delivers what the final verdict delivers, however it is chunked") {
  const std::vector<std::string> replies = {
      "Hello there",          "NO_REPLY",
      "NO",                   "NO thanks",
      "Noted. NO_REPLY",      "Noted **NO_REPLY",
      "Noted *\nNO_REPLY",    "Hello * NO_REPLY",
      "NO_REPLYThe user",     "NO_REPLY\nSure thing",
      "NO_REPLY please",      "Use NO_REPLY when quiet",
      "  spaced  out  ",      "xNO_REPLY NO_REPLY",
      "«NO_REPLY» then more", "No problem, NO_REPLY NO_REPLY\n",
      "Ünïcödé ok\u00a0NO_REPLY",
  };
  for (const auto& reply : replies) {
    const auto expected = final_reply_verdict(reply);
    for (std::size_t size : {1u, 2u, 3u, 5u, 64u}) {
      std::vector<std::string> chunks;
      for (std::size_t i = 0; i < reply.size(); i += size) chunks.push_back(reply.substr(i, size));
      INFO("reply \"" << reply << "\" in chunks of " << size);
      const auto r = run_stream(chunks);
      CHECK(joined(r) == expected.text);
      if (!r.released_any) CHECK(r.verdict.silent == expected.silent);
    }
  }
}

namespace {
std::string repeated(std::string_view piece, std::size_t n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (std::size_t k = 0; k < n; ++k) out += piece;
  return out;
}
}  // namespace

TEST_CASE("long adversarial replies: OpenClaw's answers, in linear time") {
  // Expected values from openclaw 2026.9.6's tokens module under Node. The regexes that end in a
  // lookbehind in JavaScript (trailing tokens, trailing punctuation) start only where a match
  // can start, and the reasoning-block regex repeats a plain class, so none of these is slow.
  const std::string many_then_x = repeated("NO_REPLY ", 20000) + "x";
  CHECK_FALSE(is_silent_reply_text(many_then_x));
  CHECK_FALSE(is_silent_reply_payload_text(many_then_x));
  CHECK_FALSE(starts_with_silent_token(many_then_x));
  CHECK(strip_silent_token(many_then_x) == many_then_x);
  CHECK(strip_leading_silent_token(many_then_x) == "x");

  const std::string many = repeated("NO_REPLY ", 20000);
  CHECK(is_silent_reply_text(many));
  CHECK(strip_silent_token(many).empty());
  CHECK(final_reply_verdict(many).silent);

  const std::string x_then_many = "x" + repeated(" NO_REPLY", 20000);
  CHECK(strip_silent_token(x_then_many) == "x");
  CHECK(final_reply_verdict(x_then_many).text == "x");

  const std::string glued_then_many = "xNO_REPLY" + repeated("\nNO_REPLY", 20000);
  CHECK(strip_silent_token(glued_then_many) == "xNO_REPLY");

  const std::string unclosed_think = "<think>" + repeated("a ", 300000) + "NO_REPLY";
  CHECK_FALSE(is_silent_reply_payload_text(unclosed_think));
  CHECK(strip_silent_token(unclosed_think).size() == unclosed_think.size() - 9);

  const std::string spaces_x = std::string(200000, ' ') + "x";
  CHECK(strip_silent_token(spaces_x) == "x");
  CHECK_FALSE(is_silent_reply_text(spaces_x));

  const std::string bangs = std::string(200000, '!') + "NO_REPLY" + std::string(200000, '!');
  CHECK(is_silent_reply_text(bangs));
  CHECK(strip_silent_token(bangs) == bangs);
  const std::string bangs_x = std::string(200000, '!') + "x";
  CHECK_FALSE(is_silent_reply_text(bangs_x));

  const std::string stars = std::string(100000, '*') + "NO_REPLY";
  CHECK(is_silent_reply_text(stars));
  CHECK(strip_silent_token(stars).empty());
}

TEST_CASE("invalid UTF-8 in a reply is an ordinary character (U+FFFD) to the token rules") {
  CHECK_FALSE(is_silent_reply_text("NO_REPLY\xff"));
  CHECK_FALSE(is_silent_reply_text("\xffNO_REPLY"));
  CHECK(strip_silent_token("ok\xff NO_REPLY") == "ok\xff");
  CHECK(strip_silent_token("ok\xffNO_REPLY") == "ok\xffNO_REPLY");
  CHECK(strip_leading_silent_token("NO_REPLY\n\xfe hi") == "\xfe hi");
  CHECK_FALSE(starts_with_silent_token("NO_REPLY\xff"));  // U+FFFD is no letter or number
  CHECK(final_reply_verdict("\xc3 NO_REPLY").text == "\xc3");
}
