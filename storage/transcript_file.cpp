#include "storage/transcript_file.hpp"

#include "storage/transcript_damage_scan.hpp"

#include <fcntl.h>

#include <fmt/format.h>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage {

const char* durability_name(durability d) {
  switch (d) {
    case durability::none: return "none";
    case durability::batch: return "batch";
    case durability::sync: return "sync";
  }
  return "batch";
}

std::optional<durability> parse_durability(std::string_view s) {
  if (s == "none") return durability::none;
  if (s == "batch") return durability::batch;
  if (s == "sync") return durability::sync;
  return std::nullopt;
}

result<std::unique_ptr<transcript_file>> transcript_file::create(fs& f, clock& c, const std::string& path,
                                                                 const header_fields& header,
                                                                 const transcript_options& opt) {
  std::string line = json::to_compact(make_header(header));
  line += '\n';
  replace_options ro;
  // sync: durable before create() returns. batch: the caller's group commit syncs the file and
  // its directory (the commit log does, actors/commit_log). none: never.
  ro.durable = opt.mode == durability::sync;
  SRT_RETURN_IF_ERROR(create_file_exclusive(f, path, line, ro));
  auto t = open(f, c, path, opt);
  if (t.ok() && opt.mode == durability::batch) {
    (*t)->dir_unsynced_ = true;
    (*t)->keep_written(0, line);
  }
  return t;
}

namespace {
// Rewrites a v1/v2 transcript as v3 (what pi does on open), atomically.
status migrate_in_place(fs& f, transcript_reader& rd, bool durable) {
  SRT_RETURN_IF_ERROR(rd.index_all());
  std::string text = json::to_compact(rd.header());
  text += '\n';
  auto& idx = rd.index();
  for (auto p = idx.first_position(); p < idx.end_position(); ++p) {
    json::append_compact(text, *idx.at(p).parsed);
    text += '\n';
  }
  auto info = f.fstat(rd.fd());
  replace_options ro;
  ro.durable = durable;
  ro.mode = info.ok() ? (info->mode & 07777) : 0600;
  ro.temp_prefix = path_basename(rd.path()) + ".migrate";
  return replace_file_atomic(f, rd.path(), text, ro);
}
}  // namespace

result<std::unique_ptr<transcript_file>> transcript_file::open(fs& f, clock& c, const std::string& path,
                                                               const transcript_options& opt) {
  std::unique_ptr<transcript_file> t(new transcript_file(f, c, opt));
  auto rd = transcript_reader::open(f, path, opt.limits, O_RDWR | O_APPEND);
  if (!rd.ok()) return rd.error();
  if ((*rd)->stats().torn_tail_bytes > 0)
    return status(errc::corrupt, fmt::format("{} ends with a torn line of {} bytes (a crash mid-append); repair it before "
                                             "appending",
                                             path, (*rd)->stats().torn_tail_bytes));
  if ((*rd)->migrated()) {
    SRT_RETURN_IF_ERROR(migrate_in_place(f, **rd, opt.mode != durability::none).with_context("migrating to version 3"));
    rd = transcript_reader::open(f, path, opt.limits, O_RDWR | O_APPEND);
    if (!rd.ok()) return rd.error();
  }
  t->reader_ = std::move(*rd);
  auto leaf = t->reader_->active_leaf();
  if (!leaf.ok()) return leaf.error();
  if (*leaf) t->leaf_ = t->reader_->index().at(**leaf).id;
  return t;
}

transcript_file::~transcript_file() {
  if (!reader_) return;
  if (opt_.mode == durability::none)
    (void)flush();
  else
    (void)sync();
}

std::string transcript_file::session_id() const {
  return std::string(json::get_string(reader_->header(), "id").value_or(""));
}

std::optional<std::string_view> transcript_file::parent() const {
  if (!leaf_) return std::nullopt;
  return std::string_view(*leaf_);
}

status transcript_file::ensure_full_index() {
  if (fully_indexed_for_write_) return {};
  const bool was_full = reader_->fully_indexed();
  SRT_RETURN_IF_ERROR(reader_->index_all());
  if (!was_full) ++stats_.full_index_scans;
  fully_indexed_for_write_ = true;
  return {};
}

std::string transcript_file::unique_id() {
  for (int i = 0; i < 100; ++i) {
    std::string id = new_entry_id();
    if (!reader_->index().find(id)) return id;
  }
  return new_uuid_v4();  // as pi's generateId after 100 collisions
}

status transcript_file::set_leaf(std::optional<std::string> id) {
  if (!id) {
    leaf_.reset();
    return {};
  }
  auto p = reader_->locate(*id);
  if (!p.ok()) return p.error();
  if (!*p) return status(errc::not_found, fmt::format("{}: no entry with id {}", path(), *id));
  leaf_ = std::move(id);
  return {};
}

result<std::string> transcript_file::push(std::size_t start, const std::string& id, entry_type type, bool assistant,
                                          bool passes_scan) {
  std::string_view line(pending_.data() + start, pending_.size() - start);
  if (!is_valid_utf8(line)) {
    passes_scan = false;  // the values judged are not the text written
    std::size_t replaced = 0;
    std::string fixed = to_valid_utf8(line, &replaced);
    stats_.invalid_utf8_replaced += replaced;
    pending_.resize(start);
    pending_ += fixed;
    line = std::string_view(pending_.data() + start, pending_.size() - start);
  }
  if (line.size() > opt_.max_line_bytes) {
    const std::size_t size = line.size();
    pending_.resize(start);
    return status(errc::limit_exceeded, fmt::format("{} entry of {} bytes exceeds the limit of {} bytes "
                                                    "(storage.maxLineBytes)",
                                                    entry_type_name(type), size, opt_.max_line_bytes));
  }
  if (!passes_scan || line.size() > json::parse_limits{}.max_bytes) own_lines_pass_scan_ = false;
  if (pending_entries_ == 0) leaf_before_pending_ = leaf_;
  if (oldest_unsynced_ms_ == 0) oldest_unsynced_ms_ = clock_.now_ms();
  index_record r;
  r.offset = reader_->data_end() + start;
  r.length = static_cast<std::uint32_t>(line.size());
  r.type = type;
  r.assistant = assistant;
  r.id = id;
  r.has_parent = leaf_.has_value();
  if (leaf_) r.parent_id = *leaf_;
  pending_ += '\n';
  reader_->index().push_back(std::move(r));
  ++pending_entries_;
  ++appended_seq_;
  ++stats_.appends;
  leaf_ = id;
  return id;
}

result<std::string> transcript_file::push_entry(boost::json::object entry) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id(json::get_string(entry, "id").value_or(""));
  const entry_type type = type_of(entry);
  const bool assistant = type == entry_type::message && role_of(entry) == std::optional<std::string_view>("assistant");
  const std::size_t start = pending_.size();
  json::append_compact(pending_, entry);
  return push(start, id, type, assistant, entry_line_passes_scan(entry));
}

result<std::string> transcript_file::append_message(const boost::json::object& message) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  const std::size_t start = pending_.size();
  std::string& line = pending_;
  line += R"({"type":"message","id":)";
  json::append_string(line, id);
  line += R"(,"parentId":)";
  if (leaf_)
    json::append_string(line, *leaf_);
  else
    line += "null";
  line += R"(,"timestamp":")";
  append_iso_ms(line, clock_.now_ms());
  line += R"(","message":)";
  json::append_compact(line, message);
  line += '}';
  auto role = json::get_string(message, "role");
  return push(start, id, entry_type::message, role && *role == "assistant", message_line_passes_scan(message));
}

result<std::string> transcript_file::append_compaction(std::string_view summary, std::string_view first_kept_entry_id,
                                                       std::int64_t tokens_before,
                                                       std::optional<boost::json::object> details) {
  SRT_RETURN_IF_ERROR(flush());
  std::optional<transcript_reader::position> at;
  if (leaf_) {
    auto p = reader_->locate(*leaf_);
    if (!p.ok()) return p.error();
    at = *p;
  }
  auto state = state_at(*reader_, at);
  if (!state.ok()) return state.error();
  boost::json::object d = details ? std::move(*details) : boost::json::object{{"readFiles", boost::json::array()},
                                                                             {"modifiedFiles", boost::json::array()}};
  d[kCompactionStateKey] = state->to_json();
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_compaction_entry(id, parent(), clock_.now_ms(), summary, first_kept_entry_id, tokens_before,
                                          boost::json::value(std::move(d))));
}

result<std::string> transcript_file::append_branch_summary(std::optional<std::string> from_id, std::string_view summary,
                                                           std::optional<boost::json::value> details) {
  SRT_RETURN_IF_ERROR(set_leaf(from_id));
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_branch_summary_entry(id, parent(), clock_.now_ms(), summary, std::move(details)));
}

result<std::string> transcript_file::append_model_change(std::string_view provider, std::string_view model_id) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_model_change_entry(id, parent(), clock_.now_ms(), provider, model_id));
}

result<std::string> transcript_file::append_thinking_level(std::string_view level) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_thinking_level_entry(id, parent(), clock_.now_ms(), level));
}

result<std::string> transcript_file::append_custom(std::string_view custom_type, std::optional<boost::json::value> data) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_custom_entry(id, parent(), clock_.now_ms(), custom_type, std::move(data)));
}

result<std::string> transcript_file::append_custom_message(std::string_view custom_type, boost::json::value content,
                                                           bool display, std::optional<boost::json::value> details) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(
      make_custom_message_entry(id, parent(), clock_.now_ms(), custom_type, std::move(content), display, std::move(details)));
}

result<std::string> transcript_file::append_label(std::string_view target_id, std::optional<std::string_view> label) {
  auto target = reader_->locate(target_id);
  if (!target.ok()) return target.error();
  if (!*target) return status(errc::not_found, fmt::format("{}: label target {} not found", path(), target_id));
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_label_entry(id, parent(), clock_.now_ms(), target_id, label));
}

result<std::string> transcript_file::append_session_info(std::string_view name) {
  SRT_RETURN_IF_ERROR(ensure_full_index());
  const std::string id = unique_id();
  return push_entry(make_session_info_entry(id, parent(), clock_.now_ms(), name));
}

void transcript_file::release_buffer() {
  if (pending_.empty()) std::string().swap(pending_);
}

status transcript_file::flush() {
  if (pending_.empty()) return {};
  const std::uint64_t end = reader_->data_end();
  status st = write_all(fs_, reader_->fd(), pending_.data(), pending_.size());
  if (!st.ok()) {
    // Roll back: no partial line stays in the file, no unwritten entry stays indexed.
    (void)fs_.ftruncate(reader_->fd(), end);
    for (std::size_t i = 0; i < pending_entries_; ++i) reader_->index().pop_back();
    appended_seq_ -= pending_entries_;
    leaf_ = leaf_before_pending_;
    pending_.clear();
    pending_entries_ = 0;
    if (written_seq_ == durable_seq_) oldest_unsynced_ms_ = 0;
    return st.with_context(fmt::format("appending to {}", path()));
  }
  ++stats_.writes;
  stats_.bytes_written += pending_.size();
  unsynced_bytes_ += pending_.size();
  reader_->note_appended(end + pending_.size());
  if (opt_.mode == durability::batch) keep_written(end, pending_);
  pending_.clear();
  pending_entries_ = 0;
  written_seq_ = appended_seq_;
  if (opt_.mode == durability::none) durable_seq_ = written_seq_;
  return {};
}

// Takes `bytes` (left empty or as they were) when they continue what is kept, else starts
// again from them.
void transcript_file::keep_written(std::uint64_t at, std::string& bytes) {
  if (written_.empty() || written_start_ + written_.size() != at) {
    written_.clear();
    written_start_ = at;
  }
  if (written_.size() + bytes.size() > kMaxWrittenBytes) {
    std::string().swap(written_);
    written_start_ = at + bytes.size();  // nothing before this is kept
    return;
  }
  if (written_.empty())
    written_.swap(bytes);  // the buffer itself: no copy
  else
    written_ += bytes;
}

std::optional<std::string> transcript_file::take_written(std::uint64_t from) {
  std::string kept;
  kept.swap(written_);
  const std::uint64_t end = reader_->data_end();
  if (from < written_start_ || written_start_ + kept.size() != end || from > end) return std::nullopt;
  if (from == written_start_) return kept;
  return kept.substr(static_cast<std::size_t>(from - written_start_));
}

std::optional<file_info> transcript_file::clean_stamp() {
  if (!pending_.empty() || !own_lines_pass_scan_) return std::nullopt;
  auto info = fs_.fstat(reader_->fd());
  if (!info.ok() || info->size != reader_->data_end()) return std::nullopt;
  return *info;
}

status transcript_file::sync() {
  SRT_RETURN_IF_ERROR(flush());
  // A file created in batch mode has an unsynced header too: its data first, then its name.
  if (dir_unsynced_ || durable_seq_ != written_seq_ || unsynced_bytes_ != 0) {
    SRT_RETURN_IF_ERROR(fs_.fdatasync(reader_->fd()).with_context(fmt::format("syncing {}", path())));
    ++stats_.syncs;
    durable_seq_ = written_seq_;
    unsynced_bytes_ = 0;
    oldest_unsynced_ms_ = 0;
  }
  if (dir_unsynced_) {
    SRT_RETURN_IF_ERROR(fsync_dir(fs_, path_dirname(path())));
    dir_unsynced_ = false;
  }
  return {};
}

void transcript_file::note_synced(std::uint64_t seq, bool dir_synced) {
  if (dir_synced) dir_unsynced_ = false;
  if (seq <= durable_seq_) return;
  durable_seq_ = std::min(seq, written_seq_);
  if (durable_seq_ == written_seq_) {
    unsynced_bytes_ = 0;
    oldest_unsynced_ms_ = pending_.empty() ? 0 : oldest_unsynced_ms_;
  }
}

status transcript_file::commit() {
  switch (opt_.mode) {
    case durability::none: return flush();
    case durability::sync: return sync();
    case durability::batch:
      if (pending_.size() >= opt_.batch_max_bytes) return flush();
      return {};
  }
  return {};
}

bool transcript_file::sync_due() const {
  if (opt_.mode != durability::batch) return false;
  if (appended_seq_ == durable_seq_) return false;
  if (unsynced_bytes_ + pending_.size() >= opt_.batch_max_bytes) return true;
  return clock_.now_ms() - oldest_unsynced_ms_ >= opt_.batch_window_ms;
}

result<session_context> transcript_file::context(const leaf_selector& leaf) {
  SRT_RETURN_IF_ERROR(flush());
  if (leaf.which == leaf_selector::kind::active)
    return build_context(*reader_, leaf_ ? leaf_selector::of(*leaf_) : leaf_selector::nothing());
  return build_context(*reader_, leaf);
}

}  // namespace sessionrt::storage
