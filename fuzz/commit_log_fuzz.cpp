// Fuzzes the commit log's reader and record decoder (storage/commit_log): on any file content the
// reader never crashes or reads out of bounds, stops at an offset inside the file with a reason,
// returns records in file order ending at or before that offset, and every record it returns
// either decodes or is refused by decode() with an error; a decoded record encodes back to the
// same payload (a header of a newer format aside: decode returns its version only). The input is also decoded as one record's payload directly (the checksums would
// otherwise keep almost every random input away from the decoder). Any violation aborts.
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <variant>

#include "messages/clock.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/memory_fs.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

// A payload decode() accepts encodes back to the same bytes.
void check_round_trip(std::string_view payload) {
  auto decoded = commit_log::decode(payload);
  if (!decoded.ok()) return;  // refused with a reason: fine
  // A header of a newer format is returned with its version only, for the caller to refuse.
  if (auto* h = std::get_if<commit_log::log_header>(&*decoded); h && h->format_version > commit_log::kFormatVersion) return;
  std::string again;
  std::visit([&](const auto& r) { commit_log::encode(again, r); }, *decoded);
  if (again != payload) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_round_trip(std::string_view(reinterpret_cast<const char*>(data), size));
  manual_clock clk(0);
  memory_fs files(clk);
  const std::string path = "/log";
  auto fd = files.open(path, O_CREAT | O_RDWR, 0600);
  if (!fd.ok()) std::abort();
  if (!write_all(files, *fd, reinterpret_cast<const char*>(data), size).ok()) std::abort();
  commit_log::log_reader reader(files, *fd, path);
  std::string record;
  std::uint64_t offset = 0, last = 0;
  bool first = true;
  while (reader.next(record, &offset)) {
    if (!first && offset <= last) std::abort();  // records come in file order
    first = false;
    last = offset;
    if (offset >= size) std::abort();
    check_round_trip(record);
  }
  const auto& stop = reader.stop();
  if (stop.offset > size || stop.at > size) std::abort();
  if (!first && stop.offset <= last) std::abort();
  (void)files.close(*fd);
  return 0;
}
