#include "storage/store_reconcile.hpp"

#include <unordered_set>

#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_header.hpp"

namespace sessionrt::storage {
namespace {

// Whether a successor's parentSession names the row's current transcript (by its path, or by
// the session id its file name carries).
bool continues_session(const std::string& parent, const session_entry& row) {
  if (auto file = row.session_file(); file && *file == parent) return true;
  const auto id = row.session_id();
  return id && !id->empty() && classify(path_basename(parent)).session_id == *id;
}

}  // namespace

result<reconcile_report> reconcile_store(fs& f, session_store& store, const std::string& sessions_dir) {
  reconcile_report rep;
  auto names = f.list_dir(sessions_dir);
  if (!names.ok()) return names.error();
  std::unordered_set<std::string> referenced;
  for (const auto& row : store)
    if (auto id = row.entry.session_id()) referenced.emplace(*id);
  for (const auto& name : *names) {
    const artifact_name a = classify(name);
    const bool transcript = a.kind == artifact_kind::primary_transcript || a.kind == artifact_kind::successor_transcript;
    if (!transcript || referenced.count(a.session_id)) continue;
    const std::string path = path_join(sessions_dir, name);
    auto header = read_transcript_header(f, path);
    ++rep.scanned;
    if (!header.ok() || !header->session_key || header->session_id != a.session_id) continue;
    const std::string& key = *header->session_key;
    const std::int64_t started = header->started_ms.value_or(header->mtime_ms);
    const session_entry* row = store.find(key);
    if (row && row->session_started_at().value_or(0) >= started) continue;  // the row is newer
    adopted_transcript adopted{key, header->session_id, row ? std::string(row->session_id().value_or("")) : "", path};
    session_entry next = row ? *row : session_entry();
    const bool continues_row = row && a.kind == artifact_kind::successor_transcript && header->parent_session &&
                               continues_session(*header->parent_session, *row);
    if (row) extend_usage_family(next, key, header->session_id);  // while `next` names the previous session
    next.set_session_id(header->session_id);
    next.set_updated_at(std::max(header->mtime_ms, next.updated_at().value_or(0)));
    if (!continues_row) next.set_session_started_at(started);
    next.set_session_file(path);
    if (continues_row)
      count_compaction(next, std::nullopt);  // what the lost compaction write would have done
    else
      start_new_session_counters(next);  // what the lost rollover write would have done
    store.upsert(key, std::move(next));
    referenced.insert(header->session_id);
    rep.adopted.push_back(std::move(adopted));
  }
  return rep;
}

}  // namespace sessionrt::storage
