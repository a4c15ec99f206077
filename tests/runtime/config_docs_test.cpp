// docs/config.md is `sessionrt config keys` (config_keys_markdown), written from the same key
// tables that read the file and write `config show`: the page cannot drift from the loader.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "messages/json_writer.hpp"
#include "runtime/config.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;
namespace bj = boost::json;

namespace {

env_lookup no_environment() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

struct doc_row {
  std::string key, default_value;
};

// The rows of the first table of the page (the keys), cells unescaped enough for these checks.
std::vector<doc_row> key_rows(const std::string& page) {
  std::vector<doc_row> rows;
  bool in_keys = false;
  for (const auto& line : testing::split_lines(page)) {
    if (line == "## Keys") in_keys = true;
    if (!in_keys) continue;
    if (line.starts_with("## ") && line != "## Keys") break;
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cell += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(cell.substr(1, cell.size() - 2));  // the padding spaces
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    REQUIRE(cells.size() == 4);
    rows.push_back({cells[0].substr(1, cells[0].size() - 2), cells[2]});
  }
  return rows;
}

// {"a": {"b": {"c": value}}} for "a.b.c".
bj::object nested_object(const std::string& dotted, bj::value value) {
  std::vector<std::string> parts;
  std::stringstream in(dotted);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  bj::value out = std::move(value);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out = bj::object{{*it, std::move(out)}};
  return out.as_object();
}

const bj::value* value_at(const bj::object& root, const std::string& dotted) {
  const bj::value* at = nullptr;
  const bj::object* object = &root;
  std::stringstream in(dotted);
  for (std::string part; std::getline(in, part, '.');) {
    if (!object) return nullptr;
    at = object->if_contains(part);
    if (!at) return nullptr;
    object = at->if_object();
  }
  return at;
}

}  // namespace

TEST_CASE("config docs: docs/config.md is what `sessionrt config keys` prints", "[config]") {
  const std::string page = testing::read_text(std::string(SESSIONRT_SOURCE_DIR) + "/docs/config.md");
  INFO("regenerate it: build/sessionrt config keys > docs/config.md");
  CHECK(page == config_keys_markdown());
}

TEST_CASE("config docs: every key the page lists reads without an unknown-key warning", "[config]") {
  auto rows = key_rows(config_keys_markdown());
  REQUIRE(rows.size() > 150);
  std::size_t checked = 0;
  for (const auto& row : rows) {
    if (row.key.find('[') != std::string::npos || row.key.find('<') != std::string::npos) continue;
    const std::string text = json::to_compact(nested_object(row.key, nullptr));
    INFO(text);
    auto loaded = load_config_text(text, no_environment());
    REQUIRE(loaded.ok());
    CHECK(loaded->warnings.empty());
    ++checked;
  }
  CHECK(checked > 120);
}

TEST_CASE("config docs: a documented default is what `config show` prints for an empty file", "[config]") {
  auto loaded = load_config_text("{}", no_environment());
  REQUIRE(loaded.ok());
  const bj::object shown = settings_to_json(loaded->settings);
  std::size_t compared = 0;
  for (const auto& row : key_rows(config_keys_markdown())) {
    if (!row.default_value.starts_with("`") || row.key.find('[') != std::string::npos ||
        row.key.find('<') != std::string::npos)
      continue;
    const bj::value* value = value_at(shown, row.key);
    if (!value) continue;  // a key `config show` leaves out at its default (model.contextWindow, ...)
    INFO(row.key);
    CHECK(json::to_compact(*value) == row.default_value.substr(1, row.default_value.size() - 2));
    ++compared;
  }
  CHECK(compared > 70);
  // One derived default, in words, and one unset optional key.
  const std::string page = config_keys_markdown();
  CHECK(page.find("| `session.maintenance.highWaterBytes` | bytes >= 1 | 80% of maxDiskBytes |") != std::string::npos);
  CHECK(page.find("| `session.maintenance.maxDiskBytes` | bytes >= 1 | unset |") != std::string::npos);
}
