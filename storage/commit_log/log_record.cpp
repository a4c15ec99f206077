#include "storage/commit_log/log_record.hpp"

#include <fmt/format.h>

#include <cstring>

namespace sessionrt::storage::commit_log {
namespace {

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
  out.append(b, sizeof(T));
}

// Reads fields front to back; the first short read names the field.
struct cursor {
  std::string_view rest;
  const char* failed = nullptr;

  template <class T>
  T take(const char* field) {
    if (failed) return T{};
    if (rest.size() < sizeof(T)) {
      failed = field;
      return T{};
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t(static_cast<unsigned char>(rest[i])) << (8 * i);
    rest.remove_prefix(sizeof(T));
    return static_cast<T>(v);
  }
  std::string text(std::size_t n, const char* field) {
    if (failed) return {};
    if (rest.size() < n) {
      failed = field;
      return {};
    }
    std::string s(rest.substr(0, n));
    rest.remove_prefix(n);
    return s;
  }
};

status short_record(const char* kind, const char* field) {
  return status(errc::corrupt, fmt::format("commit log {} record ends inside its {}", kind, field));
}

}  // namespace

void encode(std::string& out, const log_header& h) {
  out.push_back(static_cast<char>(record_kind::log_header));
  put<std::uint32_t>(out, h.format_version);
  put<std::uint64_t>(out, h.log_number);
  put<std::int64_t>(out, h.created_ms);
  put<std::uint16_t>(out, static_cast<std::uint16_t>(h.state_id.size()));
  out += h.state_id;
}

void encode_transcript_append(std::string& out, std::uint8_t flags, std::uint64_t inode, std::uint64_t offset,
                              std::string_view path, std::string_view bytes) {
  out.reserve(out.size() + 1 + 1 + 8 + 8 + 2 + path.size() + bytes.size());
  out.push_back(static_cast<char>(record_kind::transcript_append));
  put<std::uint8_t>(out, flags);
  put<std::uint64_t>(out, inode);
  put<std::uint64_t>(out, offset);
  put<std::uint16_t>(out, static_cast<std::uint16_t>(path.size()));
  out += path;
  out += bytes;
}

void encode(std::string& out, const transcript_append& a) {
  encode_transcript_append(out, a.flags, a.inode, a.offset, a.path, a.bytes);
}

void encode_row_change(std::string& out, std::uint8_t origin, std::uint64_t order, std::string_view store,
                       std::string_view key, std::string_view text) {
  out.reserve(out.size() + 1 + 1 + 8 + 2 + store.size() + 4 + key.size() + text.size());
  out.push_back(static_cast<char>(record_kind::row_change));
  put<std::uint8_t>(out, origin);
  put<std::uint64_t>(out, order);
  put<std::uint16_t>(out, static_cast<std::uint16_t>(store.size()));
  out += store;
  put<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  out += text;
}

void encode(std::string& out, const row_change& c) { encode_row_change(out, c.origin, c.order, c.store, c.key, c.text); }

void encode(std::string& out, const store_written& w) {
  out.push_back(static_cast<char>(record_kind::store_written));
  put<std::uint64_t>(out, w.order);
  put<std::uint16_t>(out, static_cast<std::uint16_t>(w.store.size()));
  out += w.store;
}

result<log_record> decode(std::string_view payload) {
  if (payload.empty()) return status(errc::corrupt, "empty commit log record");
  const auto kind = static_cast<record_kind>(payload[0]);
  cursor c{payload.substr(1)};
  switch (kind) {
    case record_kind::log_header: {
      log_header h;
      h.format_version = c.take<std::uint32_t>("format version");
      // A newer version may lay out the rest differently: the caller refuses it by version.
      if (!c.failed && h.format_version > kFormatVersion) return log_record(h);
      h.log_number = c.take<std::uint64_t>("log number");
      h.created_ms = c.take<std::int64_t>("creation time");
      const auto n = c.take<std::uint16_t>("identity length");
      h.state_id = c.text(n, "state dir identity");
      if (c.failed) return short_record("header", c.failed);
      if (!c.rest.empty())
        return status(errc::corrupt, fmt::format("commit log header record has {} bytes too many", c.rest.size()));
      return log_record(std::move(h));
    }
    case record_kind::transcript_append: {
      transcript_append a;
      a.flags = c.take<std::uint8_t>("flags");
      a.inode = c.take<std::uint64_t>("inode");
      a.offset = c.take<std::uint64_t>("offset");
      const auto n = c.take<std::uint16_t>("path length");
      a.path = c.text(n, "path");
      if (c.failed) return short_record("transcript append", c.failed);
      if (a.path.empty()) return status(errc::corrupt, "commit log transcript append record names no file");
      a.bytes = std::string(c.rest);
      return log_record(std::move(a));
    }
    case record_kind::row_change: {
      row_change r;
      r.origin = c.take<std::uint8_t>("origin");
      r.order = c.take<std::uint64_t>("order");
      const auto n = c.take<std::uint16_t>("store path length");
      r.store = c.text(n, "store path");
      const auto k = c.take<std::uint32_t>("key length");
      r.key = c.text(k, "key");
      if (c.failed) return short_record("row change", c.failed);
      if (r.origin != kFromSession && r.origin != kFromStore)
        return status(errc::corrupt, fmt::format("commit log row change record of unknown origin {}", int(r.origin)));
      if (r.store.empty() || r.key.empty())
        return status(errc::corrupt, "commit log row change record names no store or no key");
      r.text = std::string(c.rest);
      return log_record(std::move(r));
    }
    case record_kind::store_written: {
      store_written w;
      w.order = c.take<std::uint64_t>("order");
      const auto n = c.take<std::uint16_t>("store path length");
      w.store = c.text(n, "store path");
      if (c.failed) return short_record("store written", c.failed);
      if (w.store.empty()) return status(errc::corrupt, "commit log store written record names no store");
      if (!c.rest.empty())
        return status(errc::corrupt, fmt::format("commit log store written record has {} bytes too many", c.rest.size()));
      return log_record(std::move(w));
    }
  }
  return status(errc::corrupt, fmt::format("commit log record of unknown kind {}", static_cast<int>(payload[0])));
}

}  // namespace sessionrt::storage::commit_log
