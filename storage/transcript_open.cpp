#include "storage/transcript_open.hpp"

namespace sessionrt::storage {

result<opened_transcript> open_or_create_transcript(fs& f, clock& c, const std::string& path,
                                                    const header_fields& header, const transcript_options& opt,
                                                    const open_check& check) {
  opened_transcript out;
  auto form = transcript_form_of(f, path);
  if (!form.ok()) return form.error();
  if (*form == transcript_form::cold || *form == transcript_form::both) {
    auto restored = restore_transcript(f, path);
    if (!restored.ok()) return restored.error();
    out.restored = restored->done;
  }
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
  auto keep = [&](repair_report rep) {
    if (rep.changed()) out.repair = std::move(rep);
  };
  const bool known_clean = check.verified && exists.ok() && check.verified->take(path, *exists);
  if (known_clean) {
    // As this runtime left it: whole lines it wrote itself after the check of its last open.
  } else if (check.scan_for_damage) {
    auto scan = scan_transcript_for_damage(f, path, check.repair);
    if (!scan.ok()) return scan.error();
    out.checked_bytes = scan->bytes_read;
    if (scan->lines > 0 && !scan->header_ok) {
      auto rec = recover_corrupt_transcript(f, c, path, make_header(header), check.repair);
      if (!rec.ok()) return rec.error().with_context("recovering the header of " + path);
      keep(std::move(*rec));
    } else if (scan->needs_repair()) {
      auto rep = repair_transcript_file(f, c, path, check.repair);
      if (!rep.ok()) return rep.error().with_context("repairing " + path + " (" + scan->first_reason + ")");
      keep(std::move(*rep));
    }
  } else {
    auto tail = check_transcript_tail(f, path);
    if (!tail.ok()) return tail.error();
    if (!tail->clean()) {
      auto rep = repair_transcript_file(f, c, path, check.repair);
      if (!rep.ok()) return rep.error().with_context("repairing the torn tail of " + path);
      keep(std::move(*rep));
    }
  }
  auto opened = transcript_file::open(f, c, path, opt);
  if (!opened.ok()) return opened.error();
  out.file = std::move(*opened);
  return out;
}

}  // namespace sessionrt::storage
