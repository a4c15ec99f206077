// `sessionrt sessions archive KEY...` offline: OpenClaw 2026.9's archive in place (the row stays
// with archivedAt and archiveReason "manual", the transcript untouched), not a removal.
#include <catch2/catch.hpp>

#include "messages/json_access.hpp"
#include "tests/runtime/cli_test_support.hpp"

namespace sessionrt::testing {

TEST_CASE("cli sessions archive: rows archived in place offline, the main key refused, a second archive a no-op",
          "[cli]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 1000);
  fx.row("agent:main:telegram:direct:1", "d1", 2000, {{"pinnedAt", 5}});
  fx.transcript("m1", 300, 1000);
  fx.transcript("d1", 300, 2000);
  fx.save();
  const auto before = fx.checksum();
  auto dry = run_cli_args({"sessions", "archive", "agent:main:telegram:direct:1", "--dry-run", "--state-dir", fx.state_dir()});
  CHECK(dry.code == 0);
  CHECK(dry.out == "[dry-run] archive session agent:main:telegram:direct:1\n");
  CHECK(fx.checksum() == before);

  auto done = run_cli_args({"sessions", "archive", "agent:main:telegram:direct:1", "--state-dir", fx.state_dir()});
  INFO(done.err);
  CHECK(done.code == 0);
  CHECK(done.out == "Archived session agent:main:telegram:direct:1.\n");
  auto parsed = storage::load_from_text(read_text(fx.store_path()));
  REQUIRE(parsed.ok());
  const auto* row = parsed->store.find("agent:main:telegram:direct:1");
  REQUIRE(row);
  CHECK(row->json().contains("archivedAt"));
  CHECK(json::get_string(row->json(), "archiveReason") == std::optional<std::string_view>("manual"));
  CHECK_FALSE(row->json().contains("pinnedAt"));
  CHECK(exists(fx.path("d1.jsonl")));  // the transcript stays where it was
  CHECK_FALSE(has_name_starting(list_names(fx.dir()), "d1.jsonl.deleted."));

  auto again = run_cli_args({"sessions", "archive", "agent:main:telegram:direct:1", "--state-dir", fx.state_dir()});
  CHECK(again.code == 0);
  CHECK(again.out == "Session agent:main:telegram:direct:1 is already archived.\n");

  auto main = run_cli_args({"sessions", "archive", "main", "--state-dir", fx.state_dir()});
  CHECK(main.code == 1);
  CHECK(main.err.find("archive agent:main:main: Cannot archive an agent's main session.") != std::string::npos);
  auto reparsed = storage::load_from_text(read_text(fx.store_path()));
  REQUIRE(reparsed.ok());
  CHECK_FALSE(reparsed->store.find("agent:main:main")->json().contains("archivedAt"));
}

}  // namespace sessionrt::testing
