// group_commit: the rules of the commit log's group commit without an actor: jobs cover what
// was written when they started, results are taken in job order, waiters are answered in
// arrival order across logs, a failed sync fails only the waiters it could not cover, and a
// retired log is handed to a checkpoint only once its waiters are answered.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/commit_log/group_commit.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
using book_t = group_commit<int>;
std::vector<int> ids(const std::vector<book_t::answer>& as, bool ok) {
  std::vector<int> out;
  for (const auto& a : as)
    if (a.error.empty() == ok) out.push_back(a.waiter);
  return out;
}
}  // namespace

TEST_CASE("group commit: a job covers what was written before it started, results in job order") {
  book_t b;
  b.begin_log(1, 10);
  b.wrote(1, 20, nullptr, std::nullopt, false, "");
  auto j1 = b.next_sync();
  REQUIRE(j1);
  CHECK(j1->upto == 20);
  CHECK_FALSE(b.next_sync());  // nothing new since
  b.wrote(2, 30, nullptr, std::nullopt, false, "");
  auto j2 = b.next_sync();
  REQUIRE(j2);
  CHECK(j2->upto == 30);
  // The later job finishes first: nothing is answered until the earlier one has.
  CHECK(b.synced(j2->id, "").empty());
  auto got = b.synced(j1->id, "");
  CHECK(ids(got, true) == std::vector<int>{1, 2});
  CHECK(b.waiting() == 0);
}

TEST_CASE("group commit: answers keep arrival order across logs, and a failed sync fails only its log") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 10, nullptr, std::nullopt, false, "");
  auto j1 = b.next_sync();
  b.begin_log(2, 0);
  b.wrote(2, 10, nullptr, std::nullopt, false, "");
  b.failed(3, "write failed");
  auto j2 = b.next_sync();
  REQUIRE(j2);
  CHECK(j2->log == 2);
  CHECK(b.synced(j2->id, "").empty());  // waiter 1 (log 1) is still first
  auto got = b.synced(j1->id, "EIO");
  CHECK(ids(got, false) == std::vector<int>{1, 3});
  CHECK(ids(got, true) == std::vector<int>{2});
  CHECK_FALSE(b.current_failed());
  // Log 1 is retired and answered: a checkpoint takes it.
  auto cp = b.take_checkpoint();
  REQUIRE(cp);
  CHECK(cp->logs == std::vector<std::uint64_t>{1});
  CHECK_FALSE(b.take_checkpoint());
}

TEST_CASE("group commit: a retired log waits for its waiters before its checkpoint") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 5, nullptr, std::nullopt, false, "");
  b.begin_log(2, 0);
  CHECK_FALSE(b.take_checkpoint());  // waiter 1 not answered yet
  auto j = b.next_sync();
  REQUIRE(j);
  CHECK(j->log == 1);
  CHECK_FALSE(b.take_checkpoint());  // its job runs
  CHECK(ids(b.synced(j->id, ""), true) == std::vector<int>{1});
  auto cp = b.take_checkpoint();
  REQUIRE(cp);
  CHECK(cp->logs == std::vector<std::uint64_t>{1});
  // A failed checkpoint comes back with the next one.
  b.checkpoint_failed(*cp);
  b.begin_log(3, 0);
  cp = b.take_checkpoint();
  REQUIRE(cp);
  CHECK(cp->logs == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("group commit: a current log whose sync failed says so, and its later writes fail with it") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 5, nullptr, std::nullopt, false, "");
  auto j = b.next_sync();
  b.wrote(2, 9, nullptr, std::nullopt, false, "");  // written while the sync ran
  auto got = b.synced(j->id, "EIO");
  CHECK(b.current_failed());
  CHECK(ids(got, false) == std::vector<int>{1, 2});
  CHECK_FALSE(b.next_sync());  // no sync of a failed log
}

TEST_CASE("group commit: every job fsyncs the directories of the new files it covers") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 5, nullptr, std::nullopt, true, "/s");
  auto j1 = b.next_sync();
  REQUIRE(j1);
  CHECK(j1->dirs == std::vector<std::string>{"/s"});
  b.wrote(2, 9, nullptr, std::nullopt, true, "/s");  // a second new file in the same directory
  b.wrote(3, 12, nullptr, std::nullopt, true, "/s");
  auto j2 = b.next_sync();
  REQUIRE(j2);
  CHECK(j2->dirs == std::vector<std::string>{"/s"});  // once per job, not once per log
  auto cp = b.take_all();
  CHECK(cp.dirs == std::vector<std::string>{"/s"});
}

TEST_CASE("group commit: the only job running takes the waiters it covers, which hold back the later ones") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 10, nullptr, std::nullopt, false, "");
  b.wrote(2, 20, nullptr, std::nullopt, false, "");
  auto j1 = b.next_sync();
  REQUIRE(j1);
  CHECK(b.hand_off(*j1) == std::vector<int>{1, 2});
  b.wrote(3, 30, nullptr, std::nullopt, false, "");
  b.failed(4, "write failed");
  CHECK(b.ready().empty());  // 4 is answerable, but 1 and 2 come first
  auto j2 = b.next_sync();
  REQUIRE(j2);
  CHECK(b.hand_off(*j2).empty());  // j1 still runs: the book answers j2's waiters
  CHECK(b.waiting() == 4);
  CHECK(b.synced(j1->id, "").empty());  // 1 and 2 had j1's answer; 3 waits for j2
  CHECK(b.waiting() == 2);
  auto got = b.synced(j2->id, "");
  CHECK(ids(got, true) == std::vector<int>{3});
  CHECK(ids(got, false) == std::vector<int>{4});
  CHECK(b.waiting() == 0);
}

TEST_CASE("group commit: a handed job that fails answers its own waiters and the book fails the later ones of its log") {
  book_t b;
  b.begin_log(1, 0);
  b.wrote(1, 10, nullptr, std::nullopt, false, "");
  auto j1 = b.next_sync();
  REQUIRE(j1);
  CHECK(b.hand_off(*j1) == std::vector<int>{1});
  b.wrote(2, 20, nullptr, std::nullopt, false, "");
  auto got = b.synced(j1->id, "EIO");
  CHECK(got.size() == 1);
  CHECK(ids(got, false) == std::vector<int>{2});
  CHECK(got.at(0).error == "EIO");
  CHECK(b.current_failed());
  // Shutdown: a waiter handed to a job still running is left to it.
  b.begin_log(2, 0);
  b.wrote(3, 10, nullptr, std::nullopt, false, "");
  b.wrote(4, 20, nullptr, std::nullopt, false, "");
  auto j2 = b.next_sync();
  REQUIRE(j2);
  CHECK(b.hand_off(*j2) == std::vector<int>{3, 4});
  b.failed(5, "closed");
  auto left = b.take_waiters("");
  CHECK(left.size() == 1);
  CHECK(ids(left, false) == std::vector<int>{5});
}
