// message_text: the one reading of a message's text (replies, summaries, the summary prompt).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "messages/transcript_entry.hpp"

using namespace sessionrt;

TEST_CASE("message_text: string content as is, text blocks joined, other blocks skipped") {
  const boost::json::value s = "plain";
  CHECK(message_text(&s) == "plain");
  CHECK(message_text(nullptr).empty());
  const boost::json::value blocks = boost::json::array{
      boost::json::object{{"type", "thinking"}, {"thinking", "hidden"}},
      text_block("one"),
      boost::json::object{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}},
      boost::json::object{{"type", "text"}},  // no text: counts as ""
      text_block("two"),
      boost::json::object{{"text", "untyped"}},
  };
  CHECK(message_text(&blocks) == "onetwo");
  CHECK(message_text(&blocks, "\n") == "one\n\ntwo");
  const boost::json::value number = 42;
  CHECK(message_text(&number).empty());
}
