// gather_cursor: where a gathered write (fs::write_gather) stands in its pieces after a write
// that took `written` bytes, which may end inside a piece (a short writev): the first piece not
// wholly written (`next`) and how much of it was (`skip`). Empty pieces are passed over.
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

namespace sessionrt::storage {

struct gather_cursor {
  std::size_t next = 0, skip = 0;

  bool done(std::span<const std::string_view> pieces) const { return next >= pieces.size(); }
  // The rest of the piece at `next` (call only when !done).
  std::string_view rest(std::span<const std::string_view> pieces) const { return pieces[next].substr(skip); }
  // Moves past `written` bytes; false when that moved nothing (no byte and no empty piece).
  bool advance(std::span<const std::string_view> pieces, std::size_t written) {
    bool moved = written > 0;
    while (next < pieces.size() && written >= pieces[next].size() - skip) {
      written -= pieces[next].size() - skip;
      skip = 0;
      ++next;
      moved = true;
    }
    skip += written;
    return moved;
  }
};

}  // namespace sessionrt::storage
