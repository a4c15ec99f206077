// storage.commitLogCheckpointBytes, storage.commitLogCheckpointIntervalMs,
// storage.commitLogPreallocateBytes and storage.commitLogRecycledFiles: read from the config
// with their units, defaults when absent, and a clear error naming the key for a value
// below the minimum or of the wrong kind.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "runtime/config.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

env_lookup no_environment() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

}  // namespace

TEST_CASE("config: the commit log's checkpoint size and interval are keys with defaults", "[config]") {
  auto defaults = load_config_text("{}", no_environment());
  REQUIRE(defaults.ok());
  CHECK(defaults->settings.storage.commit_log_checkpoint_bytes == (64u << 20));
  CHECK(defaults->settings.storage.commit_log_checkpoint_interval_ms == 60000);
  CHECK(defaults->settings.storage.commit_log_preallocate_bytes == (4u << 20));
  CHECK(defaults->settings.storage.commit_log_recycled_files == 2);
  auto set = load_config_text(
      R"({"storage": {"commitLogCheckpointBytes": "16mb", "commitLogCheckpointIntervalMs": "30s"}})", no_environment());
  REQUIRE(set.ok());
  CHECK(set->settings.storage.commit_log_checkpoint_bytes == (16u << 20));
  CHECK(set->settings.storage.commit_log_checkpoint_interval_ms == 30000);
  auto numbers = load_config_text(R"({"storage": {"commitLogCheckpointBytes": 1048576, "commitLogCheckpointIntervalMs": 5000}})",
                                  no_environment());
  REQUIRE(numbers.ok());
  CHECK(numbers->settings.storage.commit_log_checkpoint_bytes == (1u << 20));
  CHECK(numbers->settings.storage.commit_log_checkpoint_interval_ms == 5000);
  auto off = load_config_text(R"({"storage": {"commitLogPreallocateBytes": 0, "commitLogRecycledFiles": 0}})",
                              no_environment());
  REQUIRE(off.ok());
  CHECK(off->settings.storage.commit_log_preallocate_bytes == 0);
  CHECK(off->settings.storage.commit_log_recycled_files == 0);
}

TEST_CASE("config: bad commit log checkpoint values are refused naming the key", "[config]") {
  struct bad {
    std::string text, key, says;
  };
  const bad cases[] = {
      {R"({"storage": {"commitLogCheckpointBytes": 1000}})", "storage.commitLogCheckpointBytes", "65536"},
      {R"({"storage": {"commitLogCheckpointBytes": "lots"}})", "storage.commitLogCheckpointBytes", "lots"},
      {R"({"storage": {"commitLogCheckpointBytes": -5}})", "storage.commitLogCheckpointBytes", "-5"},
      {R"({"storage": {"commitLogCheckpointIntervalMs": 10}})", "storage.commitLogCheckpointIntervalMs", "1000"},
      {R"({"storage": {"commitLogCheckpointIntervalMs": "soon"}})", "storage.commitLogCheckpointIntervalMs", "soon"},
      {R"({"storage": {"commitLogCheckpointIntervalMs": true}})", "storage.commitLogCheckpointIntervalMs", "true"},
      {R"({"storage": {"commitLogRecycledFiles": 65}})", "storage.commitLogRecycledFiles", "65"},
      {R"({"storage": {"commitLogPreallocateBytes": "4 parsecs"}})", "storage.commitLogPreallocateBytes", "parsecs"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto loaded = load_config_text(c.text, no_environment());
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code() == errc::invalid_argument);
    CHECK_THAT(loaded.error().message(), Catch::Contains("config key " + c.key));
    CHECK_THAT(loaded.error().message(), Catch::Contains(c.says));
  }
}
