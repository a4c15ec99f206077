#include "storage/transcript_open.hpp"

namespace sessionrt::storage {

result<opened_transcript> open_or_create_transcript(fs& f, clock& c, const std::string& path,
                                                    const header_fields& header, const transcript_options& opt) {
  opened_transcript out;
  auto exists = f.lstat(path);
  if (!exists.ok() && exists.error().code() == errc::not_found) {
    auto created = transcript_file::create(f, c, path, header, opt);
    if (created.ok()) {
      out.file = std::move(*created);
      out.created = true;
      return out;
    }
    if (created.error().code() != errc::already_exists) return created.error();
    // Someone created it between the stat and the create: open what is there.
  } else if (!exists.ok()) {
    return exists.error();
  }
  auto tail = check_transcript_tail(f, path);
  if (!tail.ok()) return tail.error();
  if (!tail->clean()) {
    auto rep = repair_transcript_file(f, c, path);
    if (!rep.ok()) return rep.error().with_context("repairing the torn tail of " + path);
    out.repair = std::move(*rep);
  }
  auto opened = transcript_file::open(f, c, path, opt);
  if (!opened.ok()) return opened.error();
  out.file = std::move(*opened);
  return out;
}

}  // namespace sessionrt::storage
