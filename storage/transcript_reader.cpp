#include "storage/transcript_reader.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/line_skim.hpp"

namespace sessionrt::storage {
namespace {

constexpr std::size_t kHeaderReadBytes = 64u << 10;

index_record record_from(const line_skeleton& sk, std::uint64_t off, std::size_t len) {
  index_record r;
  r.offset = off;
  r.length = static_cast<std::uint32_t>(len);
  r.type = sk.type;
  r.assistant = sk.type == entry_type::message && sk.role == "assistant";
  r.side = sk.side;
  r.id = std::string(sk.id);
  r.has_parent = sk.parent_id.has_value();
  if (sk.parent_id) r.parent_id = std::string(*sk.parent_id);
  r.has_target = sk.target_id.has_value();
  if (sk.target_id) r.target_id = std::string(*sk.target_id);
  return r;
}

bool blank(std::string_view line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

}  // namespace

result<std::unique_ptr<transcript_reader>> transcript_reader::open(fs& f, const std::string& path,
                                                                   const reader_limits& limits, int fd_flags) {
  // A transcript kept compressed is read from a decompressed copy in memory; a writer must
  // restore it first (transcript_open.hpp).
  std::unique_ptr<fs> view;
  std::string view_path;
  if (fd_flags == 0) {
    bool cold = is_cold_path(path);
    if (!cold) {
      auto hot = f.lstat(path);
      cold = !hot.ok() && hot.error().code() == errc::not_found;
    }
    if (cold) {
      view_path = "/cold/" + path_basename(path);
      auto opened = open_cold_view(f, path, view_path, limits.max_cold_bytes);
      if (!opened.ok()) {
        if (opened.error().code() == errc::not_found) return status(errc::not_found, path + ": no such file");
        return opened.error();
      }
      view = std::move(*opened);
    }
  }
  fs& from = view ? *view : f;
  std::unique_ptr<transcript_reader> r(new transcript_reader(from, path, limits));
  r->view_ = std::move(view);
  auto fd = from.open(r->view_ ? view_path : path, fd_flags ? fd_flags : O_RDONLY);
  if (!fd.ok()) return fd.error();
  r->fd_ = std::make_shared<const shared_fd>(from, *fd);
  SRT_RETURN_IF_ERROR(r->read_header());
  if (r->version_ < kTranscriptVersion) SRT_RETURN_IF_ERROR(r->load_legacy());
  return r;
}

transcript_reader::~transcript_reader() = default;  // the fd closes with its last holder

status transcript_reader::read_header() {
  auto info = fs_.fstat(fd());
  if (!info.ok()) return info.error().with_context(path_);
  const std::uint64_t size = info->size;
  auto head = pread_all(fs_, fd(), static_cast<std::size_t>(std::min<std::uint64_t>(size, kHeaderReadBytes)), 0);
  if (!head.ok()) return head.error().with_context(path_);
  stats_.bytes_read += head->size();
  auto nl = head->find('\n');
  if (nl == std::string::npos)
    return status(errc::corrupt, fmt::format("{}: no complete header line (first line is {} over {} bytes or unterminated)",
                                             path_, size == 0 ? "empty," : "", kHeaderReadBytes));
  auto parsed = json::parse_object(std::string_view(*head).substr(0, nl));
  if (!parsed.ok()) return parsed.error().with_context(path_ + ": header line");
  auto type = json::get_string(*parsed, "type");
  auto id = json::get_string(*parsed, "id");
  if (!type || *type != "session" || !id)
    return status(errc::corrupt, path_ + ": line 1 is not a session header ({\"type\":\"session\",\"id\":...})");
  version_ = static_cast<int>(json::get_int(*parsed, "version").value_or(1));
  header_ = std::move(*parsed);
  data_start_ = nl + 1;
  // The data ends after the last '\n'; anything after it is a torn append.
  std::uint64_t end = size;
  if (size > data_start_) {
    std::uint64_t probe = size;
    const std::size_t step = 64u << 10;
    while (probe > data_start_) {
      std::uint64_t from = probe > data_start_ + step ? probe - step : data_start_;
      auto block = pread_all(fs_, fd(), static_cast<std::size_t>(probe - from), from);
      if (!block.ok()) return block.error().with_context(path_);
      stats_.bytes_read += block->size();
      const void* last = block->empty() ? nullptr : memrchr(block->data(), '\n', block->size());
      if (last) {
        end = from + static_cast<std::uint64_t>(static_cast<const char*>(last) - block->data()) + 1;
        break;
      }
      probe = from;
      end = data_start_;
    }
  }
  stats_.torn_tail_bytes = size - end;
  if (limits_.end_at < end) end = std::max(limits_.end_at, data_start_);
  data_end_ = end;
  covered_begin_ = end;
  return {};
}

void transcript_reader::index_line_front(std::string_view line, std::uint64_t off) {
  if (blank(line)) return;
  line_skeleton sk;
  boost::json::object scratch;
  if (!skim_line(line, sk, scratch)) {
    ++stats_.malformed_lines;
    return;
  }
  if (!scratch.empty()) ++stats_.lines_parsed;
  if (sk.type == entry_type::session) return;  // a stray header is not an entry
  index_.push_front(record_from(sk, off, line.size()));
  ++stats_.lines_indexed;
}

result<bool> transcript_reader::extend_backward() {
  if (covered_begin_ <= data_start_) return false;
  std::size_t want = limits_.block_bytes;
  for (;;) {
    const std::uint64_t from = covered_begin_ > data_start_ + want ? covered_begin_ - want : data_start_;
    const std::size_t n = static_cast<std::size_t>(covered_begin_ - from);
    auto block = pread_all(fs_, fd(), n, from);
    if (!block.ok()) return block.error().with_context(path_);
    if (block->size() != n)
      return status(errc::io_error, fmt::format("{}: file shrank while reading (expected {} bytes at {})", path_, n, from));
    stats_.bytes_read += n;
    // Lines end at '\n'; block ends right after one (or at data_end). Walk lines backward.
    const char* base = block->data();
    std::size_t end = n;
    if (end > 0 && base[end - 1] == '\n') --end;
    std::size_t consumed_from = n;  // lowest offset within the block fully indexed
    for (;;) {
      const void* nl = end == 0 ? nullptr : memrchr(base, '\n', end);
      if (!nl) {
        if (from == data_start_) {  // the first line of the data region
          index_line_front(std::string_view(base, end), from);
          consumed_from = 0;
        }
        break;
      }
      const std::size_t start = static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1;
      index_line_front(std::string_view(base + start, end - start), from + start);
      consumed_from = start;
      end = start - 1;
    }
    if (consumed_from < n) {
      covered_begin_ = from + consumed_from;
      return true;
    }
    // Not even one complete line in the block: the line is longer than the block.
    if (want >= limits_.max_line_bytes)
      return status(errc::limit_exceeded, fmt::format("{}: a line before byte {} is longer than the limit of {} bytes",
                                                      path_, covered_begin_, limits_.max_line_bytes));
    want = std::min(want * 2, limits_.max_line_bytes + 1);
  }
}

status transcript_reader::index_all() {
  for (;;) {
    auto more = extend_backward();
    if (!more.ok()) return more.error();
    if (!*more) return {};
  }
}

result<std::optional<transcript_reader::position>> transcript_reader::locate(std::string_view id) {
  for (;;) {
    if (auto p = index_.find(id)) return std::optional<position>(*p);
    auto more = extend_backward();
    if (!more.ok()) return more.error();
    if (!*more) return std::optional<position>();
  }
}

result<std::optional<transcript_reader::position>> transcript_reader::last_entry() {
  if (index_.empty()) {
    for (;;) {
      auto more = extend_backward();
      if (!more.ok()) return more.error();
      if (!index_.empty()) break;
      if (!*more) return std::optional<position>();
    }
  }
  return std::optional<position>(index_.end_position() - 1);
}

result<std::optional<transcript_reader::position>> transcript_reader::active_leaf() {
  position p = index_.end_position() - 1;
  for (;;) {
    if (p < index_.first_position()) {
      auto more = extend_backward();
      if (!more.ok()) return more.error();
      if (!*more) return std::optional<position>();
      continue;
    }
    const index_record& r = index_.at(p);
    if (r.type == entry_type::leaf) {
      if (!r.has_target) return std::optional<position>();
      const std::string target = r.target_id;
      return locate(target);
    }
    if (!r.side) return std::optional<position>(p);
    --p;
  }
}

result<std::shared_ptr<const boost::json::object>> transcript_reader::entry(position p) {
  auto v = entries({p});
  if (!v.ok()) return v.error();
  return std::move((*v)[0]);
}

result<std::vector<std::shared_ptr<const boost::json::object>>> transcript_reader::entries(
    const std::vector<position>& ps) {
  std::vector<std::shared_ptr<const boost::json::object>> out(ps.size());
  // One read spanning every line that is not cached, when that span is not much larger than
  // the lines themselves (they are usually adjacent: a context is a recent stretch of file).
  std::uint64_t lo = UINT64_MAX, hi = 0, wanted = 0;
  for (position p : ps) {
    const index_record& r = index_.at(p);
    if (r.parsed) continue;
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.offset + r.length);
    wanted += r.length;
  }
  std::string span;
  const bool one_read = hi > lo && (hi - lo) <= std::max<std::uint64_t>(wanted * 4, 1u << 20);
  if (one_read) {
    auto data = pread_all(fs_, fd(), static_cast<std::size_t>(hi - lo), lo);
    if (!data.ok()) return data.error().with_context(path_);
    stats_.bytes_read += data->size();
    span = std::move(*data);
  }
  for (std::size_t i = 0; i < ps.size(); ++i) {
    index_record& r = index_.at(ps[i]);
    if (r.parsed) {
      out[i] = r.parsed;
      continue;
    }
    std::string line;
    if (one_read) {
      if (r.offset + r.length - lo > span.size())
        return status(errc::io_error, fmt::format("{}: file shrank while reading", path_));
      line.assign(span, static_cast<std::size_t>(r.offset - lo), r.length);
    } else {
      auto data = pread_all(fs_, fd(), r.length, r.offset);
      if (!data.ok()) return data.error().with_context(path_);
      stats_.bytes_read += data->size();
      line = std::move(*data);
    }
    ++stats_.lines_parsed;
    auto parsed = json::parse_object(line, json::parse_limits{limits_.max_line_bytes, 64});
    // Not const, and held by `out` alone: build_context moves messages out of such lines.
    if (parsed.ok()) out[i] = std::make_shared<boost::json::object>(std::move(*parsed));
  }
  return out;
}

result<std::vector<boost::json::object>> transcript_reader::tail(std::size_t max_entries, std::size_t max_bytes) {
  std::vector<boost::json::object> out;
  if (max_entries == 0 || data_end_ <= data_start_) return out;
  const std::uint64_t span = std::min<std::uint64_t>(max_bytes, data_end_ - data_start_);
  const std::uint64_t from = data_end_ - span;
  auto data = pread_all(fs_, fd(), static_cast<std::size_t>(span), from);
  if (!data.ok()) return data.error().with_context(path_);
  stats_.bytes_read += data->size();
  std::string_view text(*data);
  // Unless the read started at the first data line, its first line may be cut: skip it.
  std::size_t start = 0;
  if (from > data_start_) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) return out;
    start = nl + 1;
  }
  std::vector<std::string_view> lines;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!blank(line)) lines.push_back(line);
    start = nl + 1;
  }
  const std::size_t first = lines.size() > max_entries ? lines.size() - max_entries : 0;
  for (std::size_t i = first; i < lines.size(); ++i) {
    auto parsed = json::parse_object(lines[i], json::parse_limits{limits_.max_line_bytes, 64});
    if (parsed.ok())
      out.push_back(std::move(*parsed));
    else
      ++stats_.malformed_lines;
  }
  return out;
}

// Reads the whole file, migrates v1 -> v2 -> v3 in memory [R§3.2] and indexes the result.
status transcript_reader::load_legacy() {
  if (data_end_ > limits_.max_legacy_bytes)
    return status(errc::limit_exceeded, fmt::format("{}: version {} transcript of {} bytes is over the limit of {} bytes "
                                                    "for files that must be migrated in memory",
                                                    path_, version_, data_end_, limits_.max_legacy_bytes));
  auto data = pread_all(fs_, fd(), static_cast<std::size_t>(data_end_ - data_start_), data_start_);
  if (!data.ok()) return data.error().with_context(path_);
  stats_.bytes_read += data->size();
  struct line_at {
    std::uint64_t off;
    std::size_t len;
    boost::json::object obj;
  };
  std::vector<line_at> lines;
  std::size_t pos = 0;
  while (pos < data->size()) {
    std::size_t nl = data->find('\n', pos);
    if (nl == std::string::npos) nl = data->size();
    std::string_view line(data->data() + pos, nl - pos);
    if (!blank(line)) {
      auto parsed = json::parse_object(line);
      if (parsed.ok())
        lines.push_back({data_start_ + pos, line.size(), std::move(*parsed)});
      else
        ++stats_.malformed_lines;
    }
    pos = nl + 1;
  }
  if (version_ < 2) {  // v1 -> v2: linear chain of fresh ids; firstKeptEntryIndex -> id
    std::vector<std::string> ids;  // ids[i] = id of entries array element i (0 = header)
    ids.emplace_back();
    std::string prev;
    for (auto& l : lines) {
      std::string id = new_entry_id();
      while (std::find(ids.begin(), ids.end(), id) != ids.end()) id = new_entry_id();
      json::set(l.obj, "id", boost::json::string(id));
      if (prev.empty())
        json::set(l.obj, "parentId", nullptr);
      else
        json::set(l.obj, "parentId", boost::json::string(prev));
      prev = id;
      ids.push_back(id);
    }
    for (auto& l : lines) {
      if (type_of(l.obj) != entry_type::compaction) continue;
      auto idx = json::get_int(l.obj, "firstKeptEntryIndex");
      if (!idx) continue;
      if (*idx >= 1 && static_cast<std::size_t>(*idx) < ids.size())
        json::set(l.obj, "firstKeptEntryId", boost::json::string(ids[static_cast<std::size_t>(*idx)]));
      json::erase(l.obj, "firstKeptEntryIndex");
    }
  }
  for (auto& l : lines) {  // v2 -> v3: hookMessage role -> custom
    if (type_of(l.obj) != entry_type::message) continue;
    auto* m = l.obj.if_contains("message");
    if (m && m->is_object()) {
      auto role = json::get_string(m->get_object(), "role");
      if (role && *role == "hookMessage") json::set(m->get_object(), "role", "custom");
    }
  }
  json::set(header_, "version", kTranscriptVersion);
  for (auto& l : lines) {
    auto obj = std::make_shared<const boost::json::object>(std::move(l.obj));
    line_skeleton sk = skeleton_of(*obj);
    if (sk.type == entry_type::session) continue;
    index_record r = record_from(sk, l.off, l.len);
    r.parsed = std::move(obj);
    index_.push_back(std::move(r));
    ++stats_.lines_indexed;
  }
  covered_begin_ = data_start_;
  return {};
}

}  // namespace sessionrt::storage
