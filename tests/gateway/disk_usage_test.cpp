// disk_usage: /metrics' disk figure through storage::fs (a memory_fs here, the real one for links).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "gateway/disk_usage.hpp"
#include "messages/clock.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using sessionrt::gateway::bytes_under;

TEST_CASE("disk_usage: the regular files at any depth, read through the fs it is given") {
  manual_clock time(0);
  storage::memory_fs files(time);
  REQUIRE(storage::ensure_dir(files, "/state/agents/main/sessions/deep/er").ok());
  REQUIRE(storage::replace_file_atomic(files, "/state/agents/main/sessions/a.jsonl", std::string(100, 'a')).ok());
  REQUIRE(storage::replace_file_atomic(files, "/state/agents/main/sessions/deep/er/b.jsonl", std::string(23, 'b')).ok());
  REQUIRE(storage::replace_file_atomic(files, "/state/gateway.token", "tok\n").ok());  // outside agents/
  CHECK(bytes_under(files, "/state/agents") == 123);
  CHECK(bytes_under(files, "/state/nowhere") == 0);
}

TEST_CASE("disk_usage: a link to a file counts its target, a link to a directory is not followed") {
  sessionrt::testing::temp_dir dir;
  auto& files = storage::posix_fs();
  REQUIRE(storage::ensure_dir(files, dir.file("agents/main")).ok());
  REQUIRE(storage::ensure_dir(files, dir.file("elsewhere")).ok());
  REQUIRE(storage::replace_file_atomic(files, dir.file("agents/main/a.jsonl"), std::string(10, 'a')).ok());
  REQUIRE(storage::replace_file_atomic(files, dir.file("elsewhere/big"), std::string(1000, 'b')).ok());
  REQUIRE(::symlink(dir.file("elsewhere/big").c_str(), dir.file("agents/main/link").c_str()) == 0);
  REQUIRE(::symlink(dir.file("elsewhere").c_str(), dir.file("agents/main/dirlink").c_str()) == 0);
  CHECK(bytes_under(files, dir.file("agents")) == 1010);
}
