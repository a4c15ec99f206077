#include "storage/session_store_file.hpp"

#include <fmt/format.h>
#include <functional>
#include <unordered_set>
#include <utility>

#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/store_salvage.hpp"

namespace sessionrt::storage {
namespace {

std::size_t fingerprint_hash(std::string_view bytes) { return std::hash<std::string_view>{}(bytes); }

// The same file, unchanged as far as one stat tells: an edit in place changes the size or the
// mtime, an editor's save by rename changes the inode.
bool same_file(const file_info& a, const file_info& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns;
}

struct identified_text {
  std::string text;
  file_info info;
};

// The file's bytes and the identity they were read from (read again when it changed meanwhile).
result<identified_text> read_identified(fs& f, const std::string& path, std::size_t max_bytes) {
  for (int attempt = 0;; ++attempt) {
    auto before = f.stat(path);
    if (!before.ok()) return before.error();
    auto text = read_file(f, path, max_bytes);
    if (!text.ok()) return text.error();
    auto after = f.stat(path);
    if (!after.ok()) return after.error();
    if (same_file(*before, *after) || attempt == 2) return identified_text{std::move(*text), *after};
  }
}

status left_untouched(const std::string& path, const status& limit) {
  const bool names_path = limit.message().find(path) != std::string::npos;
  return status(limit.code(), fmt::format("{}{}; the file was left as it is, not set aside as corrupt: "
                                          "it may be valid, only over the limit; raise the limit to load it",
                                          names_path ? "" : "loading " + path + ": ", limit.message()));
}

}  // namespace

std::string serialize_store(const session_store& store, bool trailing_newline) {
  std::string out = store.to_pretty();
  if (trailing_newline) out += '\n';
  return out;
}

session_store merge_store_edit(const session_store& ours, session_store theirs,
                               const std::unordered_set<std::string>& unsaved, store_merge_report& report) {
  for (const auto& r : theirs) {
    if (unsaved.count(std::string(r.key))) continue;
    auto mine = ours.lookup(r.key);
    if (!mine.ok()) {
      report.changed.emplace_back(r.key);  // our copy cannot be read back: the file's is taken
    } else if (!*mine) {
      report.added.emplace_back(r.key);
    } else if ((*mine)->json() != r.entry.json()) {
      report.changed.emplace_back(r.key);
    }
  }
  for (std::string_view key : ours.keys())
    if (!unsaved.count(std::string(key)) && !theirs.contains(key)) report.removed.emplace_back(key);
  // Our changes since the last save, in our order: changed rows keep the file's place.
  for (std::string_view key : ours.keys()) {
    if (!unsaved.count(std::string(key))) continue;
    const session_entry* mine = ours.find(key);  // unsaved rows are in memory, never spilled
    report.kept_ours.emplace_back(key);
    theirs.upsert(key, mine ? *mine : session_entry());
  }
  for (const auto& key : unsaved)
    if (!ours.contains(key) && theirs.erase(key)) report.kept_ours.push_back(key);
  return theirs;
}

session_store_file::session_store_file(fs& f, clock& c, std::string path, store_file_options options)
    : fs_(f), clock_(c), path_(std::move(path)), options_(options) {}

result<store_load_report> session_store_file::load() {
  store_load_report report;
  report.path = path_;
  auto text = read_file(fs_, path_, options_.max_bytes);
  if (!text.ok()) {
    if (text.error().code() == errc::not_found) {
      store_.clear();
      backing_ = {};
      trailing_newline_ = true;
      saved_version_.reset();
      loaded_fingerprint_.reset();
      on_disk_.reset();
      unusable_.reset();
      unsaved_.clear();
      report.file_existed = false;
      report.trailing_newline = true;
      return report;
    }
    if (text.error().code() == errc::limit_exceeded) return left_untouched(path_, text.error());
    return text.error().with_context("loading session store");
  }
  report.file_existed = true;
  auto parsed = load_from_text(*text, options_.parse_limits());
  if (!parsed.ok()) {
    if (parsed.error().code() == errc::limit_exceeded) return left_untouched(path_, parsed.error());
    return quarantine_and_rebuild(std::move(*text), parsed.error());
  }
  store_ = std::move(parsed->store);
  backing_ = {};
  trailing_newline_ = parsed->trailing_newline;
  saved_version_.reset();
  loaded_fingerprint_.reset();
  if (parsed->changes.empty()) loaded_fingerprint_.emplace(text->size(), fingerprint_hash(*text));
  // What was read (an edit between the read and this stat would be taken for it: a window of
  // one syscall, at start-up).
  auto info = fs_.stat(path_);
  on_disk_ = info.ok() ? std::optional<file_info>(*info) : std::nullopt;
  unusable_.reset();
  unsaved_.clear();
  report.trailing_newline = trailing_newline_;
  report.entry_count = store_.size();
  report.changes = std::move(parsed->changes);
  return report;
}

result<store_load_report> session_store_file::quarantine_and_rebuild(std::string corrupt_text, const status& cause) {
  store_load_report report;
  report.path = path_;
  report.file_existed = true;
  store_quarantine q;
  q.cause = cause.message();

  const std::string stem = store_quarantine_name(path_, clock_.now_ms());
  q.quarantined_path = stem;
  for (int n = 1; fs_.lstat(q.quarantined_path).ok(); ++n) q.quarantined_path = fmt::format("{}-{}", stem, n);
  if (status st = fs_.rename(path_, q.quarantined_path); !st.ok())
    return status(st.code(), fmt::format("{} is corrupt ({}) and could not be set aside: {}; it was left in place and "
                                         "nothing was written",
                                         path_, cause.message(), st.message()));

  session_store rebuilt = rebuild_store(fs_, path_, options_, corrupt_text, q, report.changes);
  std::string bytes = serialize_store(rebuilt, true);
  if (status st = write(bytes, /*durable=*/true); !st.ok()) {
    status back = fs_.rename(q.quarantined_path, path_);
    return status(st.code(),
                  fmt::format("{} is corrupt ({}) and saving the rebuilt store failed: {}; {}", path_, cause.message(),
                              st.message(),
                              back.ok() ? "the corrupt file was put back in place"
                                        : "the corrupt file is at " + q.quarantined_path + " (" + back.message() + ")"));
  }
  store_ = std::move(rebuilt);
  backing_ = {};
  trailing_newline_ = true;
  saved_version_ = store_.text_version();
  loaded_fingerprint_.reset();
  if (auto info = fs_.stat(path_); info.ok()) on_disk_ = *info;
  unusable_.reset();
  unsaved_.clear();
  report.trailing_newline = true;
  report.entry_count = store_.size();
  report.quarantine = std::move(q);
  return report;
}

status session_store_file::write(const std::function<status(const piece_writer&)>& produce, bool durable,
                                 int* keep_fd) {
  SRT_RETURN_IF_ERROR(ensure_dir(fs_, path_dirname(path_), 0700).with_context("saving " + path_));
  replace_options o;
  o.durable = durable;
  o.mode = 0600;
  o.temp_prefix = path_basename(path_);
  o.keep_fd = keep_fd;
  return replace_file_atomic(fs_, path_, produce, o);
}

status session_store_file::write(const std::string& bytes, bool durable, int* keep_fd) {
  return write([&](const piece_writer& w) { return w(bytes); }, durable, keep_fd);
}

status session_store_file::write_streamed(bool durable, int* keep_fd) {
  // The rows' texts go to the file a piece's worth at a time, gathered where they are (one
  // copy, into the file); only rows read back from the old file pass through a small buffer
  // kept between saves. A large store's text is never whole in memory.
  return write(
      [&](const piece_writer& w) -> status {
        status st = store_.write_pretty(write_buffer_, kSavePieceBytes, trailing_newline_ ? "\n" : "", w);
        write_buffer_.clear();
        return st;
      },
      durable, keep_fd);
}

status session_store_file::save() {
  const std::uint64_t version = store_.text_version();
  if (saved_version_ == version) return {};
  if (unusable_) {
    // An edit that does not parse stays as the other program left it, and so does whatever
    // replaced it since: reload_if_changed() must look at that first (a save in between would
    // write over an edit still being written). Only a file removed meanwhile is written again.
    auto now = fs_.stat(path_);
    if (now.ok() || now.error().code() != errc::not_found) return unusable_->why;
  }
  int fd = -1;
  if (loaded_fingerprint_) {
    // The first save after a load that changed nothing: the bytes read may be these (other
    // writers format differently), which takes the whole text.
    std::string bytes;
    SRT_RETURN_IF_ERROR(store_.append_pretty(bytes).with_context("saving " + path_));
    if (trailing_newline_) bytes += '\n';
    const bool same = *loaded_fingerprint_ == std::make_pair(bytes.size(), fingerprint_hash(bytes));
    loaded_fingerprint_.reset();
    if (same) {
      saved_version_ = version;
      unsaved_.clear();
      return {};
    }
    SRT_RETURN_IF_ERROR(write(bytes, options_.durable, &fd));
  } else {
    SRT_RETURN_IF_ERROR(write_streamed(options_.durable, &fd));
  }
  saved_version_ = version;
  unsaved_.clear();
  unusable_.reset();
  // The file just written holds the rows; shed_rows() may keep only their place in it.
  auto backing = store_backing::adopt(fs_, fd, path_);
  if (backing.ok()) {
    on_disk_ = (*backing)->info();
    backing_ = {std::move(*backing), version};
  } else {
    auto info = fs_.stat(path_);
    on_disk_ = info.ok() ? std::optional<file_info>(*info) : std::nullopt;
  }
  return {};
}

result<std::optional<store_merge_report>> session_store_file::reload_if_changed() {
  auto now = fs_.stat(path_);
  if (!now.ok()) {
    if (now.error().code() == errc::not_found) return std::optional<store_merge_report>();
    return now.error().with_context("checking " + path_);
  }
  if (on_disk_ && same_file(*now, *on_disk_)) return std::optional<store_merge_report>();
  store_merge_report report;
  report.path = path_;
  if (unusable_ && same_file(*now, unusable_->file)) {
    // Unchanged since the last check found it unusable: not a write in progress. Said once.
    if (unusable_->reported) return std::optional<store_merge_report>();
    unusable_->reported = true;
    report.refused = unusable_->why;
    return std::optional<store_merge_report>(std::move(report));
  }
  auto text = read_identified(fs_, path_, options_.max_bytes);
  if (!text.ok()) {
    if (text.error().code() == errc::not_found) return std::optional<store_merge_report>();
    if (text.error().code() != errc::limit_exceeded) return text.error().with_context("reloading " + path_);
  }
  auto parsed = text.ok() ? load_from_text(text->text, options_.parse_limits()) : result<parsed_store>(text.error());
  if (!parsed.ok()) {
    // Not taken, and not written over (save() refuses). It may be an editor's save in progress
    // (truncate, then write): it is reported only if the next check finds it unchanged.
    unusable_ = unusable_edit{text.ok() ? text->info : *now,
                              status(parsed.error().code(),
                                     fmt::format("{} was changed by another program and cannot be used ({}); it is left "
                                                 "as it is and not written over: the runtime keeps its rows and changes "
                                                 "in memory and writes them once the file is fixed or removed",
                                                 path_, parsed.error().message())),
                              false};
    return std::optional<store_merge_report>();
  }
  session_store merged = merge_store_edit(store_, std::move(parsed->store), unsaved_, report);
  report.changes = std::move(parsed->changes);
  store_ = std::move(merged);
  backing_ = {};
  trailing_newline_ = parsed->trailing_newline;
  saved_version_.reset();
  loaded_fingerprint_.reset();
  if (report.changes.empty() && unsaved_.empty())
    loaded_fingerprint_.emplace(text->text.size(), fingerprint_hash(text->text));
  on_disk_ = text->info;
  unusable_.reset();
  return std::optional<store_merge_report>(std::move(report));
}

std::size_t session_store_file::shed_rows() {
  if (backing_.first && backing_.first->size() >= options_.spill_min_bytes)
    if (std::size_t spilled = store_.spill_clean_rows(backing_.first, backing_.second); spilled > 0) return spilled;
  return store_.release_clean_rows();
}

result<store_check_report> check_store_file(fs& f, const std::string& path, const store_file_options& options) {
  store_check_report report;
  report.path = path;
  auto text = read_file(f, path, options.max_bytes);
  if (!text.ok()) {
    if (text.error().code() != errc::limit_exceeded) return text.error().with_context("checking session store");
    report.parse_status = text.error();
    return report;
  }
  report.trailing_newline = !text->empty() && text->back() == '\n';
  auto parsed = load_from_text(*text, options.parse_limits());
  if (!parsed.ok()) {
    report.parse_status = parsed.error();
    return report;
  }
  report.entry_count = parsed->store.size();
  report.problems = std::move(parsed->changes);
  report.canonical = serialize_store(parsed->store, parsed->trailing_newline) == *text;
  return report;
}

result<store_load_report> rewrite_store_file(fs& f, clock& c, const std::string& path,
                                             const store_file_options& options) {
  session_store_file file(f, c, path, options);
  auto report = file.load();
  if (!report.ok()) return report;
  SRT_RETURN_IF_ERROR(file.save());
  return report;
}

}  // namespace sessionrt::storage
