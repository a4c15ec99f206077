// Hand edits of sessions.json while a store owns it (session_store_file::reload_if_changed and
// merge_store_edit): the other program's rows are taken, the owner's unsaved changes kept, a
// malformed edit neither taken nor written over (reported when a second check finds it
// unchanged), an edit written in place taken only once complete, and the store's own durable
// save whole after a power loss however often the file was read since.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <string>

#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::read_text;
using sessionrt::testing::temp_dir;
using sessionrt::testing::write_text;

namespace {

session_entry row(const std::string& id, std::int64_t at, const std::string& label = "") {
  session_entry e;
  e.set_session_id(id);
  e.set_updated_at(at);
  if (!label.empty()) e.set_label(label);
  return e;
}

// What another program writes: the file by rename (as most editors and `jq > x; mv` do).
void replace_by_rename(const std::string& path, const std::string& text) {
  write_text(path + ".edit", text);
  REQUIRE(::rename((path + ".edit").c_str(), path.c_str()) == 0);
}

// ... or in place (truncate and write, as nano and `cat > file` do).
void rewrite_in_place(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string label_of(const session_store& s, const std::string& key) {
  const session_entry* e = s.find(key);
  return e && e->label() ? std::string(*e->label()) : std::string();
}

}  // namespace

TEST_CASE("merge_store_edit takes the file's rows and keeps the rows changed or erased since the last save") {
  session_store ours;
  ours.upsert("a", row("id-a", 1));
  ours.upsert("b", row("id-b", 2, "ours"));  // unsaved change
  ours.upsert("c", row("id-c", 3));
  ours.upsert("n", row("id-n", 4));  // unsaved, new
  // "e" was erased since the last save (unsaved, absent).
  session_store theirs;
  theirs.upsert("x", row("id-x", 9));            // added by hand
  theirs.upsert("a", row("id-a", 1, "by hand"));  // changed by hand
  theirs.upsert("b", row("id-b", 2, "theirs"));  // changed by both: ours wins
  theirs.upsert("e", row("id-e", 5));            // erased by us since the save: stays erased
  // "c" removed by hand.
  store_merge_report rep;
  session_store merged = merge_store_edit(ours, std::move(theirs), {"b", "n", "e"}, rep);
  CHECK(merged.keys() == std::vector<std::string_view>{"x", "a", "b", "n"});
  CHECK(label_of(merged, "a") == "by hand");
  CHECK(label_of(merged, "b") == "ours");
  CHECK(rep.added == std::vector<std::string>{"x"});
  CHECK(rep.changed == std::vector<std::string>{"a"});
  CHECK(rep.removed == std::vector<std::string>{"c"});
  CHECK(rep.kept_ours.size() == 3);
  CHECK(rep.edited());
}

TEST_CASE("a sessions.json replaced by hand is merged before the next save, which keeps both sides") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"));
  file.store().upsert("agent:main:a", row("id-a", 1));
  file.store().upsert("agent:main:b", row("id-b", 2));
  REQUIRE(file.save().ok());
  auto none = file.reload_if_changed();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());  // its own write is not an edit

  // The runtime changes b (not yet saved); the operator labels a and adds c.
  file.store().upsert("agent:main:b", row("id-b", 20));
  file.note_changed("agent:main:b");
  session_store hand;
  hand.upsert("agent:main:a", row("id-a", 1, "renamed by hand"));
  hand.upsert("agent:main:b", row("id-b", 2));
  hand.upsert("agent:main:c", row("id-c", 3));
  replace_by_rename(file.path(), serialize_store(hand, true));

  auto rep = file.reload_if_changed();
  REQUIRE(rep.ok());
  REQUIRE(rep->has_value());
  CHECK((*rep)->refused.ok());
  CHECK((*rep)->added == std::vector<std::string>{"agent:main:c"});
  CHECK((*rep)->changed == std::vector<std::string>{"agent:main:a"});
  CHECK((*rep)->kept_ours == std::vector<std::string>{"agent:main:b"});
  REQUIRE(file.save().ok());

  session_store_file again(posix_fs(), clk, file.path());
  REQUIRE(again.load().ok());
  CHECK(label_of(again.store(), "agent:main:a") == "renamed by hand");
  CHECK(again.store().find("agent:main:b")->updated_at() == 20);
  CHECK(again.store().contains("agent:main:c"));
}

TEST_CASE("an in-place hand edit of a file whose rows were spilled is taken, not refused as corrupt") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  store_file_options o;
  o.spill_min_bytes = 0;
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), o);
  for (int i = 0; i < 20; ++i) file.store().upsert(fmt::format("agent:main:k{}", i), row(fmt::format("id-{}", i), i));
  REQUIRE(file.save().ok());
  REQUIRE(file.shed_rows() == 20);

  // The operator deletes k3 and relabels k7, in place: the spilled rows' bytes are gone.
  session_store hand;
  for (int i = 0; i < 20; ++i)
    if (i != 3) hand.upsert(fmt::format("agent:main:k{}", i), row(fmt::format("id-{}", i), i, i == 7 ? "seven" : ""));
  rewrite_in_place(file.path(), serialize_store(hand, true));
  // The runtime changes k12 meanwhile (its row is read back first: from the edited file).
  auto rep = file.reload_if_changed();
  REQUIRE(rep.ok());
  REQUIRE(rep->has_value());
  CHECK((*rep)->removed == std::vector<std::string>{"agent:main:k3"});
  file.store().upsert("agent:main:k12", row("id-12", 1200));
  file.note_changed("agent:main:k12");
  REQUIRE(file.save().ok());

  session_store_file again(posix_fs(), clk, file.path());
  REQUIRE(again.load().ok());
  CHECK(again.store().size() == 19);
  CHECK_FALSE(again.store().contains("agent:main:k3"));
  CHECK(label_of(again.store(), "agent:main:k7") == "seven");
  CHECK(again.store().find("agent:main:k12")->updated_at() == 1200);
}

TEST_CASE("a malformed hand edit is refused once, never written over, and merged once fixed") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"));
  file.store().upsert("agent:main:a", row("id-a", 1));
  REQUIRE(file.save().ok());

  const std::string broken = "{\n  \"agent:main:a\": {\"sessionId\": \"id-a\", \"updatedAt\": 1,}\n";
  replace_by_rename(file.path(), broken);
  file.store().upsert("agent:main:b", row("id-b", 2));
  file.note_changed("agent:main:b");
  // The first check cannot tell it from an editor's save in progress: nothing said yet.
  auto first = file.reload_if_changed();
  REQUIRE(first.ok());
  CHECK_FALSE(first->has_value());
  auto rep = file.reload_if_changed();  // unchanged at the next check: reported
  REQUIRE(rep.ok());
  REQUIRE(rep->has_value());
  CHECK_FALSE((*rep)->refused.ok());
  CHECK((*rep)->refused.message().find("changed by another program") != std::string::npos);
  auto twice = file.reload_if_changed();  // reported once
  REQUIRE(twice.ok());
  CHECK_FALSE(twice->has_value());
  status saved = file.save();
  CHECK_FALSE(saved.ok());
  CHECK(read_text(file.path()) == broken);                // the operator's bytes stay
  CHECK(file.store().contains("agent:main:a"));           // and nothing of ours is lost
  CHECK(file.store().contains("agent:main:b"));

  // Fixed: merged, and the save goes through with both.
  session_store hand;
  hand.upsert("agent:main:a", row("id-a", 1, "fixed"));
  replace_by_rename(file.path(), serialize_store(hand, true));
  auto merged = file.reload_if_changed();
  REQUIRE(merged.ok());
  REQUIRE(merged->has_value());
  CHECK((*merged)->refused.ok());
  REQUIRE(file.save().ok());
  session_store_file again(posix_fs(), clk, file.path());
  REQUIRE(again.load().ok());
  CHECK(label_of(again.store(), "agent:main:a") == "fixed");
  CHECK(again.store().contains("agent:main:b"));
}

// An editor that saves in place (truncate, then write) may be caught half-way by a check: the
// empty file and the cut one are neither taken (no row of the runtime's is removed for a row the
// editor has not written yet) nor reported, and the store does not write over them (its rename
// would swallow the rest of the editor's writes). The whole text is merged at the next check.
TEST_CASE("a hand edit written in place is taken only once complete, never half-written, nor written over") {
  manual_clock clk(1789041600000);
  storage::memory_fs mem(clk);
  REQUIRE(mem.mkdir("/s", 0700).ok());
  session_store_file file(mem, clk, "/s/sessions.json");
  for (int i = 0; i < 6; ++i) file.store().upsert(fmt::format("agent:main:k{}", i), row(fmt::format("id-{}", i), i));
  REQUIRE(file.save().ok());

  // The runtime changes k5 (unsaved); the operator labels k1 and adds k9.
  file.store().upsert("agent:main:k5", row("id-5", 500));
  file.note_changed("agent:main:k5");
  session_store hand;
  for (int i = 0; i < 6; ++i) hand.upsert(fmt::format("agent:main:k{}", i), row(fmt::format("id-{}", i), i, i == 1 ? "one" : ""));
  hand.upsert("agent:main:k9", row("id-9", 9));
  const std::string text = serialize_store(hand, true);

  auto editor = mem.open(file.path(), O_WRONLY | O_TRUNC);
  REQUIRE(editor.ok());
  auto looks_untouched = [&](const std::string& on_disk) {
    auto seen = file.reload_if_changed();
    REQUIRE(seen.ok());
    CHECK_FALSE(seen->has_value());  // nothing taken, nothing reported
    CHECK(file.store().size() == 6);
    CHECK(label_of(file.store(), "agent:main:k1").empty());
    CHECK(file.store().find("agent:main:k5")->updated_at() == 500);
    CHECK_FALSE(file.save().ok());  // not written over...
    CHECK(*read_file(mem, file.path(), 1 << 20) == on_disk);  // ...the editor's bytes stay
  };
  clk.advance(10);
  looks_untouched("");  // truncated, nothing written yet
  const std::size_t half = text.size() / 2;
  REQUIRE(write_all(mem, *editor, text.data(), half).ok());
  clk.advance(10);
  looks_untouched(text.substr(0, half));
  REQUIRE(write_all(mem, *editor, text.data() + half, text.size() - half).ok());
  REQUIRE(mem.close(*editor).ok());

  auto rep = file.reload_if_changed();
  REQUIRE(rep.ok());
  REQUIRE(rep->has_value());
  CHECK((*rep)->refused.ok());
  CHECK((*rep)->added == std::vector<std::string>{"agent:main:k9"});
  CHECK((*rep)->changed == std::vector<std::string>{"agent:main:k1"});
  CHECK((*rep)->kept_ours == std::vector<std::string>{"agent:main:k5"});
  REQUIRE(file.save().ok());
  session_store_file again(mem, clk, file.path());
  REQUIRE(again.load().ok());
  CHECK(again.store().size() == 7);
  CHECK(label_of(again.store(), "agent:main:k1") == "one");
  CHECK(again.store().find("agent:main:k5")->updated_at() == 500);
}

// The store's save is durable (temp file fsync'd, renamed, directory fsync'd): a power loss
// keeps it whole, also after the file was opened again by its name (a hand-edit check reading
// an edit, a CLI listing the sessions). power_loss_fs once lost a file's synced length when it
// was renamed, so the next open took the whole file as unsynced and a crash cut it.
TEST_CASE("the store's durable save survives a power loss whole after it was read again by name") {
  manual_clock clk(1789041600000);
  storage::memory_fs mem(clk);
  REQUIRE(mem.mkdir("/s", 0700).ok());
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    (void)mem.unlink("/s/sessions.json");
    storage::power_loss_fs power(mem, seed, /*forward_syncs=*/false);
    session_store_file file(power, clk, "/s/sessions.json");
    for (int i = 0; i < 20; ++i) file.store().upsert(fmt::format("agent:main:k{}", i), row(fmt::format("id-{}", i), i));
    REQUIRE(file.save().ok());
    file.store().upsert("agent:main:k3", row("id-3", 300));
    REQUIRE(file.save().ok());  // replaces the first save's file
    auto read_back = read_file(power, file.path(), 1 << 20);
    REQUIRE(read_back.ok());
    CHECK(power.unsynced_bytes() == 0);
    power.kill();
    auto lost = power.power_loss();
    REQUIRE(lost.ok());
    CHECK(lost->files_torn == 0);
    CHECK(*read_file(mem, file.path(), 1 << 20) == *read_back);
    session_store_file after(mem, clk, file.path());
    auto loaded = after.load();
    REQUIRE(loaded.ok());
    CHECK_FALSE(loaded->quarantine.has_value());
    CHECK(after.store().find("agent:main:k3")->updated_at() == 300);
  }
}
