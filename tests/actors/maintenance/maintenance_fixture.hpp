// A sessions dir built on disk for the maintenance tests (planner, applier, CLI): rows, their
// transcripts and archives, each with a chosen age, and a checksum of the whole dir.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

inline constexpr std::int64_t fixture_now = 1'800'000'000'000;  // 2027-01-15
inline constexpr std::int64_t day = 24LL * 3600 * 1000;

class sessions_fixture {
 public:
  sessions_fixture() {
    dir_ = tmp_.path() + "/agents/main/sessions";
    std::filesystem::create_directories(dir_);
  }
  const std::string& dir() const { return dir_; }
  std::string state_dir() const { return tmp_.path(); }
  std::string store_path() const { return dir_ + "/sessions.json"; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // A row updated `age_ms` ago (nullopt: no updatedAt); `extra` fields are added to it.
  void row(const std::string& key, const std::string& session_id, std::optional<std::int64_t> age_ms,
           boost::json::object extra = {}) {
    boost::json::object o;
    o["sessionId"] = session_id;
    if (age_ms) o["updatedAt"] = fixture_now - *age_ms;
    for (auto& kv : extra) o[kv.key()] = kv.value();
    store_.upsert(key, session_entry(std::move(o)));
  }
  // <id>.jsonl with a header and one message, padded to at least `bytes`, mtime `age_ms` ago.
  void transcript(const std::string& id, std::size_t bytes, std::int64_t age_ms, bool with_message = true) {
    std::string text = R"({"type":"session","version":3,"id":")" + id + R"(","timestamp":"2027-01-01T00:00:00.000Z","cwd":"/w"})" "\n";
    if (with_message)
      text += R"({"type":"message","id":"a1","parentId":null,"timestamp":"2027-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}})" "\n";
    if (text.size() < bytes)
      text += R"({"type":"custom","customType":"pad","data":")" + std::string(bytes - text.size(), 'x') + "\"}\n";
    write_text(path(id + ".jsonl"), text);
    age(id + ".jsonl", age_ms);
  }
  // Any file of `bytes` (sparse), mtime `age_ms` ago.
  void file(const std::string& name, std::uint64_t bytes, std::int64_t age_ms) {
    int fd = ::open(path(name).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw std::runtime_error("cannot make " + name);
    ::close(fd);
    age(name, age_ms);
  }
  void age(const std::string& name, std::int64_t age_ms) {
    const std::int64_t ms = fixture_now - age_ms;
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec = ms / 1000;
    times[0].tv_nsec = times[1].tv_nsec = (ms % 1000) * 1000000;
    if (::utimensat(AT_FDCWD, path(name).c_str(), times, 0) != 0) throw std::runtime_error("cannot touch " + name);
  }
  void save() { write_text(store_path(), storage::serialize_store(store_, true)); }

  storage::session_store& store() { return store_; }
  std::vector<actors::dir_file> listing() const {
    auto l = actors::scan_sessions_dir(storage::posix_fs(), dir_);
    if (!l.ok()) throw std::runtime_error(l.error().message());
    return *l;
  }
  // The rows as the saved file holds them.
  std::vector<actors::maintenance_row> rows() const {
    auto parsed = storage::load_from_text(read_text(store_path()));
    if (!parsed.ok()) throw std::runtime_error(parsed.error().message());
    return actors::maintenance_rows(parsed->store, dir_);
  }
  std::vector<std::string> keys_on_disk() const {
    std::vector<std::string> keys;
    for (const auto& r : rows()) keys.emplace_back(r.key());
    return keys;
  }

  actors::maintenance_plan plan(const actors::maintenance_settings& settings, const std::string& active = {},
                                bool forced = false) {
    rows_ = rows();
    files_ = listing();
    actors::planner_input in;
    in.rows = &rows_;
    in.files = &files_;
    in.settings = settings;
    in.now_ms = fixture_now;
    in.active_key = active;
    in.forced = forced;
    return actors::plan_maintenance(in);
  }

  // Names, sizes, modes, mtimes and bytes of every file in the state dir.
  std::string checksum() const {
    std::vector<std::string> lines;
    for (auto& e : std::filesystem::recursive_directory_iterator(tmp_.path())) {
      struct stat st {};
      ::lstat(e.path().c_str(), &st);
      std::string line = e.path().string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mode) + " " +
                         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
      if (S_ISREG(st.st_mode)) line += " " + std::to_string(std::hash<std::string>{}(read_text(e.path().string())));
      lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    std::string all;
    for (auto& l : lines) all += l + "\n";
    return all;
  }

 private:
  temp_dir tmp_;
  std::string dir_;
  storage::session_store store_;
  std::vector<actors::maintenance_row> rows_;
  std::vector<actors::dir_file> files_;
};

inline bool has_name_starting(const std::vector<std::string>& names, const std::string& prefix) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

}  // namespace sessionrt::testing
