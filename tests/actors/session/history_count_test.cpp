// The context's length kept in the session's row (actors/session/history_count.hpp): the session
// writes {id, offset, total} of its leaf with the row once the context is long, and a history
// page seeded with it (as runtime::history seeds it, the first page after a start included)
// stops at the leaf's count instead of walking the transcript back to its root.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "actors/session/history_count.hpp"
#include "actors/session/session_core.hpp"
#include "storage/context_builder.hpp"
#include "storage/context_page.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/actors/session/core_harness.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
constexpr const char* kId = "0a1b2c3d-0000-4000-8000-00000000c0de";
const std::string kKey = "agent:main:main";

class echo_model final : public model_runner {
 public:
  result<boost::json::object> run(const model_request& req) override {
    assistant_fields a;
    a.content.push_back(text_block("ok " + std::to_string(req.messages.size())));
    a.model = "echo";
    a.timestamp_ms = kT0;
    return assistant_message(std::move(a));
  }
};

struct harness : testing::core_harness<echo_model> {
  harness() : testing::core_harness<echo_model>(kT0) {}
  std::string transcript() const { return dir.file(std::string("sessions/") + kId + ".jsonl"); }
  // A transcript of `entries` user/assistant messages, never compacted, and its row.
  session_entry long_session(int entries) {
    std::string text = fmt::format(R"({{"type":"session","version":3,"id":"{}","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"}})"
                                   "\n",
                                   kId);
    for (int i = 0; i < entries; ++i) {
      const bool user = i % 2 == 0;
      const std::string parent = i ? fmt::format("\"{:08x}\"", i) : "null";
      const std::string content =
          user ? fmt::format("\"question {}\"", i) : fmt::format(R"([{{"type":"text","text":"answer {}"}}])", i);
      text += fmt::format(R"({{"type":"message","id":"{:08x}","parentId":{},"timestamp":"2026-11-30T01:00:00.000Z",)"
                          R"("message":{{"role":"{}","content":{},"timestamp":{}}}}})"
                          "\n",
                          i + 1, parent, user ? "user" : "assistant", content, kT0 - 100000 + i);
    }
    REQUIRE(storage::replace_file_atomic(storage::posix_fs(), transcript(), text).ok());
    session_entry row;
    row.set_session_id(kId);
    row.set_updated_at(kT0 - 1000);
    row.set_session_started_at(kT0 - 1000);
    return row;
  }
};

}  // namespace

TEST_CASE("history count: the session keeps its context's length in its row, and a page seeded with it walks only the page") {
  harness h;
  session_core core(kKey, h.long_session(600), h.deps());
  core.set_io(&h.io);
  core_effects fx;
  REQUIRE(testing::drive(core.chat(testing::dm("1", "one more"), testing::direct_route(), fx)).st.ok());
  REQUIRE(fx.store_put);
  REQUIRE(core.entry());
  auto count = history_count_of(*core.entry());
  REQUIRE(count);
  // What the store is sent carries it too.
  CHECK(fx.store_text.find(std::string(kHistoryCountField)) != std::string::npos);

  // The count is the leaf's, as the file says: a page built without it agrees.
  auto plain_reader = storage::transcript_reader::open(storage::posix_fs(), h.transcript());
  REQUIRE(plain_reader.ok());
  auto plain = storage::read_context_page(**plain_reader, {20, 0});
  REQUIRE(plain.ok());
  CHECK(plain->total == 602);  // 600 + the turn's question and answer
  CHECK(count->total == 602);
  REQUIRE(plain->leaf_id);
  CHECK(count->id == *plain->leaf_id);
  auto leaf = (*plain_reader)->locate(count->id);
  REQUIRE(leaf.ok());
  REQUIRE(*leaf);
  CHECK(count->offset == (*plain_reader)->index().at(**leaf).offset);
  CHECK(plain->entries_walked == 602);  // without it: back to the root

  // A process that has read no page of this file: the row's count is all it knows.
  auto reader = storage::transcript_reader::open(storage::posix_fs(), h.transcript());
  REQUIRE(reader.ok());
  auto counts = std::make_shared<storage::context_counts::file>();
  remember_history_count(*counts, *core.entry());
  auto page = storage::read_context_page(**reader, {20, 0}, counts);
  REQUIRE(page.ok());
  CHECK(page->counted_from_memo);
  CHECK(page->total == 602);
  CHECK(page->entries_walked == 20);
  REQUIRE(page->items.size() == plain->items.size());
  for (std::size_t i = 0; i < page->items.size(); ++i) {
    CHECK(page->items[i].seq == plain->items[i].seq);
    CHECK(page->items[i].message == plain->items[i].message);
  }

  // The next turn counts on from there; the row follows the leaf.
  core_effects fx2;
  REQUIRE(testing::drive(core.chat(testing::dm("1", "and another"), testing::direct_route(), fx2)).st.ok());
  auto next = history_count_of(*core.entry());
  REQUIRE(next);
  CHECK(next->total == 604);
  CHECK(next->id != count->id);
  CHECK(next->offset > count->offset);
}

TEST_CASE("history count: a short context keeps no count, and a count that is not of the file is not trusted") {
  harness h;
  session_core core(kKey, std::nullopt, h.deps());
  core.set_io(&h.io);
  core_effects fx;
  REQUIRE(testing::drive(core.chat(testing::dm("1", "hello"), testing::direct_route(), fx)).st.ok());
  REQUIRE(core.entry());
  CHECK_FALSE(core.entry()->json().contains(kHistoryCountField));

  // A row whose count names an entry at another offset (another file, a rewritten one).
  harness h2;
  session_entry row = h2.long_session(400);
  set_history_count(row, {"00000190", 12345, 999});
  auto reader = storage::transcript_reader::open(storage::posix_fs(), h2.transcript());
  REQUIRE(reader.ok());
  auto counts = std::make_shared<storage::context_counts::file>();
  remember_history_count(*counts, row);
  auto page = storage::read_context_page(**reader, {20, 0}, counts);
  REQUIRE(page.ok());
  CHECK_FALSE(page->counted_from_memo);
  CHECK(page->total == 400);
  CHECK(history_count_of(row)->total == 999);
  set_history_count(row, {"00000190", 12345, kMinCountedItems - 1});
  CHECK_FALSE(history_count_of(row));
}
