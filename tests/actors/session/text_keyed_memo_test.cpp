// text_keyed_memo (actors/session/text_keyed_memo.hpp): the kept value comes back while the
// input texts stay the same, and any changed text (an empty one included) makes it again.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/session/text_keyed_memo.hpp"

using namespace sessionrt::actors;

TEST_CASE("text keyed memo: made once for the same texts, again when any text changes") {
  text_keyed_memo<boost::json::object, 3> memo;
  int made = 0;
  auto make_from = [&made](std::string a, std::string b, std::string c) {
    return [&made, a, b, c] {
      ++made;
      return boost::json::object{{"a", a}, {"b", b}, {"c", c}};
    };
  };
  std::string channel = "telegram", peer = "42", to;
  const auto& first = memo.get({channel, peer, to}, make_from(channel, peer, to));
  CHECK(first.at("a") == "telegram");
  CHECK(made == 1);
  // Other strings with the same texts: the kept value, not made again.
  std::string channel2 = std::string("tele") + "gram";
  CHECK(&memo.get({channel2, peer, to}, make_from(channel2, peer, to)) == &first);
  CHECK(made == 1);
  // Each input counts, the last one and an empty one too.
  CHECK(memo.get({channel, peer, "x"}, make_from(channel, peer, "x")).at("c") == "x");
  CHECK(made == 2);
  CHECK(memo.get({channel, peer, to}, make_from(channel, peer, to)).at("c") == "");
  CHECK(made == 3);
  CHECK(memo.get({channel, "", to}, make_from(channel, "", to)).at("b") == "");
  CHECK(made == 4);
  CHECK(memo.get({"", "", to}, make_from("", "", to)).at("a") == "");
  CHECK(made == 5);
  // A text that only moved between inputs is a change.
  CHECK(memo.get({"", to, ""}, make_from("", to, "")).at("a") == "");
  CHECK(made == 5);  // ("", "", "") both times: the same texts
  CHECK(memo.get({"ab", "", ""}, make_from("ab", "", "")).at("a") == "ab");
  CHECK(memo.get({"a", "b", ""}, make_from("a", "b", "")).at("b") == "b");
  CHECK(made == 7);
  CHECK(memo.made() == 7);
  memo.clear();
  memo.get({"a", "b", ""}, make_from("a", "b", ""));
  CHECK(made == 8);
}
