#include "actors/session/fork_planner.hpp"

#include <algorithm>

#include "actors/session/token_estimate.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::actors {

std::int64_t fork_token_limit(std::int64_t context_window, std::int64_t reserve_tokens) {
  return std::max<std::int64_t>(0, std::min(kForkMaxTokensCap, (context_window - reserve_tokens) / 2));
}

std::string_view fork_mode_name(fork_mode mode) {
  switch (mode) {
    case fork_mode::branch: return "branch";
    case fork_mode::summary: return "summary";
    case fork_mode::isolated: return "isolated";
  }
  return "isolated";
}

namespace {

// The child's lines after the header, and how it starts.
struct fork_body {
  std::string lines;
  fork_result result;
};

// Where the parent's file ends for a thread's fork at `at_ms`: before the lines of a turn the
// parent has not finished and that wrote in this very millisecond (under virtual time, this
// instant). Such a turn is concurrent with the fork: whether its user line was written before
// the read depended only on which actor a scheduler ran first. Of the trailing lines stamped
// at or after `at_ms`, those up to the last assistant message that ends a turn (a stopReason
// other than toolUse) are kept: a turn finished in the same instant came before the fork.
// Lines without a readable timestamp count as earlier.
result<std::uint64_t> end_before(storage::transcript_reader& reader, std::int64_t at_ms) {
  std::uint64_t end = reader.data_end();
  auto last = reader.last_entry();
  if (!last.ok()) return last.error();
  if (!*last) return end;
  auto& index = reader.index();
  for (storage::transcript_reader::position p = **last;; --p) {
    while (p < index.first_position()) {
      auto more = reader.extend_backward();
      if (!more.ok()) return more.error();
      if (!*more) return end;
    }
    auto line = reader.entry(p);
    if (!line.ok()) return line.error();
    if (!*line) continue;
    const auto ts = json::get_string(**line, "timestamp");
    const auto ms = ts ? parse_iso_ms(*ts) : std::nullopt;
    if (!ms || *ms < at_ms) return end;
    if (index.at(p).assistant)
      if (const auto* message = message_of(**line); message && ends_turn(*message)) return end;
    end = index.at(p).offset;
  }
}

result<fork_body> copy_branch(storage::fs& files, const std::string& parent_path, std::int64_t max_tokens,
                              std::optional<std::int64_t> before_ms) {
  fork_body body;
  auto reader = storage::transcript_reader::open(files, parent_path);
  if (!reader.ok()) return reader.error().with_context("reading the parent transcript to fork it");
  auto end = before_ms ? end_before(**reader, *before_ms) : result<std::uint64_t>((*reader)->data_end());
  if (!end.ok()) return end.error().with_context("reading the parent transcript to fork it");
  if (*end < (*reader)->data_end()) {
    storage::reader_limits limits;
    limits.end_at = *end;
    reader = storage::transcript_reader::open(files, parent_path, limits);
    if (!reader.ok()) return reader.error().with_context("reading the parent transcript to fork it");
  }
  auto leaf = (*reader)->active_leaf();
  if (!leaf.ok()) return leaf.error().with_context("reading the parent transcript to fork it");
  if (!*leaf) return body;  // an empty parent: nothing to start from
  auto ctx = storage::build_context(**reader);
  if (!ctx.ok()) return ctx.error().with_context("building the parent's context to fork it");
  body.result.branch_tokens = estimate_context_tokens(ctx->messages).tokens;
  auto entries = storage::path_entries(**reader, *leaf);
  if (!entries.ok()) return entries.error().with_context("reading the parent's active branch to fork it");
  auto emit = [&](boost::json::object entry) {
    body.lines += json::to_compact(entry);
    body.lines += '\n';
    ++body.result.entries;
  };
  if (body.result.branch_tokens <= max_tokens) {
    body.result.mode = fork_mode::branch;
    bool first = true;
    for (const auto& e : *entries) {
      boost::json::object copy = *e;
      if (first) json::set(copy, "parentId", nullptr);  // its parent stays behind in the parent's file
      first = false;
      emit(std::move(copy));
    }
    return body;
  }
  // Too large: the latest compaction's summary alone, if the branch has one.
  for (auto it = entries->rbegin(); it != entries->rend(); ++it) {
    if (json::get_string(**it, "type") != std::optional<std::string_view>("compaction")) continue;
    boost::json::object summary = **it;
    json::set(summary, "parentId", nullptr);
    const std::string id(json::get_string(summary, "id").value_or(""));
    json::set(summary, "firstKeptEntryId", boost::json::string(id));
    body.result.mode = fork_mode::summary;
    emit(std::move(summary));
    break;
  }
  return body;
}

}  // namespace

result<fork_result> write_fork(storage::fs& files, const fork_request& request) {
  header_fields header = request.child_header;
  fork_body body;
  const bool parent_exists = !request.parent_path.empty() && files.lstat(request.parent_path).ok();
  if (parent_exists) {
    auto copied = copy_branch(files, request.parent_path, request.max_tokens, request.before_ms);
    if (!copied.ok()) return copied.error();
    body = std::move(*copied);
    header.parent_session = request.parent_path;
  }
  std::string data = json::to_compact(make_header(header));
  data += '\n';
  data += body.lines;
  storage::replace_options opt;
  opt.durable = true;
  SRT_RETURN_IF_ERROR(storage::create_file_exclusive(files, request.child_path, data, opt));
  return body.result;
}

}  // namespace sessionrt::actors
