#include "actors/maintenance/dir_index.hpp"

namespace sessionrt::actors {

dir_index dir_index::of(const std::vector<dir_file>& files) {
  dir_index index;
  for (const auto& f : files) index.put(f);
  return index;
}

dir_index::time_order* dir_index::archive_order(storage::artifact_kind kind) {
  if (kind == storage::artifact_kind::deleted_archive) return &deleted_by_ts_;
  if (kind == storage::artifact_kind::reset_archive) return &reset_by_ts_;
  return nullptr;
}

void dir_index::unindex(const indexed_file& f) {
  const auto& name = f.file.name;
  bytes_ -= f.file.size;
  by_mtime_.erase({f.file.mtime_ms, name});
  if (!f.kind.session_id.empty()) {
    auto it = by_session_.find(f.kind.session_id);
    if (it != by_session_.end()) {
      it->second.erase(name);
      if (it->second.empty()) by_session_.erase(it);
    }
  }
  if (auto* order = archive_order(f.kind.kind); order && f.kind.timestamp_ms) order->erase({*f.kind.timestamp_ms, name});
  if (f.kind.kind == storage::artifact_kind::store_temp) temps_.erase(name);
}

void dir_index::put(dir_file file) {
  auto it = by_name_.find(file.name);
  if (it != by_name_.end()) {
    unindex(it->second);
    it->second.file = std::move(file);  // same name: same classification
  } else {
    auto kind = storage::classify(file.name);
    std::string name = file.name;
    it = by_name_.emplace(std::move(name), indexed_file{std::move(file), std::move(kind)}).first;
  }
  const auto& f = it->second;
  const auto& name = f.file.name;
  bytes_ += f.file.size;
  by_mtime_.insert({f.file.mtime_ms, name});
  if (!f.kind.session_id.empty()) by_session_[f.kind.session_id].insert(name);
  if (auto* order = archive_order(f.kind.kind); order && f.kind.timestamp_ms) order->insert({*f.kind.timestamp_ms, name});
  if (f.kind.kind == storage::artifact_kind::store_temp) temps_.insert(name);
}

void dir_index::erase(const std::string& name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  unindex(it->second);
  by_name_.erase(it);
}

void dir_index::clear() { *this = dir_index(); }

const indexed_file* dir_index::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

const std::set<std::string>* dir_index::session_files(const std::string& session_id) const {
  auto it = by_session_.find(session_id);
  return it == by_session_.end() ? nullptr : &it->second;
}

std::vector<dir_file> dir_index::files() const {
  std::vector<dir_file> out;
  out.reserve(by_name_.size());
  for (const auto& [name, f] : by_name_) out.push_back(f.file);
  return out;
}

}  // namespace sessionrt::actors
