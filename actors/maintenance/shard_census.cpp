#include "actors/maintenance/shard_census.hpp"

#include <boost/json.hpp>

#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::actors {
shard_reading read_shard_load(storage::fs& files, const std::string& sessions_dir) {
  shard_reading out;
  auto names = files.list_dir(sessions_dir);
  if (!names.ok()) {
    if (names.error().code() == errc::not_found)
      out.missing = true;
    else
      out.problem = names.error().to_string();
    return out;
  }
  std::int64_t bytes = 0;
  for (const auto& name : *names) {
    auto info = files.lstat(storage::path_join(sessions_dir, name));
    if (info.ok() && info->is_regular()) bytes += static_cast<std::int64_t>(info->size);
  }
  out.load.bytes = bytes;
  auto text = storage::read_file(files, storage::path_join(sessions_dir, storage::store_file_name),
                                 storage::max_store_file_bytes);
  if (!text.ok()) {
    if (text.error().code() == errc::not_found)
      out.missing = true;
    else
      out.problem = text.error().to_string();
    return out;
  }
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(*text, ec);
  if (ec || !doc.is_object()) {
    out.problem = "sessions.json does not parse as an object";
    return out;
  }
  std::int64_t rows = 0;
  for (const auto& member : doc.get_object()) {
    const auto* row = member.value().if_object();
    const auto* archived = row ? row->if_contains("archivedAt") : nullptr;
    if (!archived || archived->is_null()) ++rows;
  }
  out.load.rows = rows;
  return out;
}

}  // namespace sessionrt::actors
