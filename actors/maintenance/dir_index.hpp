// dir_index: the regular files of one sessions dir, classified once (storage::classify) and
// indexed the ways the maintenance planners look them up, so that a plan costs what it finds,
// not a walk over every file: by name, by the session id a name carries, by mtime (the disk
// budget's phase B order), by the timestamp of `.deleted.` / `.reset.` archives (retention),
// and the store temps apart (whether one counts depends on `now`). Pure: no I/O, no clock.
// Kept from pass to pass by dir_listing; built from a listing for a one-off plan.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/archive_names.hpp"

namespace sessionrt::actors {

// A regular file directly in the sessions dir.
struct dir_file {
  std::string name;
  std::uint64_t size = 0;
  std::int64_t mtime_ms = 0;
};

struct indexed_file {
  dir_file file;
  storage::artifact_name kind;  // classify(file.name)
};

class dir_index {
 public:
  using time_order = std::set<std::pair<std::int64_t, std::string>>;

  static dir_index of(const std::vector<dir_file>& files);

  // Enters a file, replacing the one of that name.
  void put(dir_file file);
  void erase(const std::string& name);
  void clear();

  const indexed_file* find(std::string_view name) const;
  std::size_t size() const { return by_name_.size(); }
  // Every file's size added up.
  std::uint64_t bytes() const { return bytes_; }
  const std::map<std::string, indexed_file, std::less<>>& by_name() const { return by_name_; }
  // The names that carry `session_id` (transcripts, sidecars), in name order; null for none.
  const std::set<std::string>* session_files(const std::string& session_id) const;
  // (mtime, name) of every file.
  const time_order& by_mtime() const { return by_mtime_; }
  // (timestamp, name) of the `.deleted.<ts>` / `.reset.<ts>` archives.
  const time_order& deleted_archives() const { return deleted_by_ts_; }
  const time_order& reset_archives() const { return reset_by_ts_; }
  const std::set<std::string>& store_temps() const { return temps_; }
  std::vector<dir_file> files() const;  // in name order

 private:
  void unindex(const indexed_file& f);
  time_order* archive_order(storage::artifact_kind kind);

  std::map<std::string, indexed_file, std::less<>> by_name_;
  std::unordered_map<std::string, std::set<std::string>> by_session_;
  time_order by_mtime_, deleted_by_ts_, reset_by_ts_;
  std::set<std::string> temps_;
  std::uint64_t bytes_ = 0;
};

}  // namespace sessionrt::actors
