#include "storage/transcript_check.hpp"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::storage {
namespace {

struct line_info {
  std::size_t line;
  std::string id;
  std::optional<std::string> parent;
  entry_type type;
  std::string first_kept;
};

}  // namespace

result<transcript_check_report> check_transcript(fs& f, const std::string& path, std::size_t max_bytes) {
  auto text = read_transcript_bytes(f, path, max_bytes);  // either form (cold_transcript.hpp)
  if (!text.ok()) return text.error();
  transcript_check_report rep;
  rep.path = path;
  rep.bytes = text->size();
  auto problem = [&](std::size_t line, std::string what) { rep.problems.push_back({line, std::move(what)}); };

  std::vector<line_info> entries;
  std::size_t pos = 0, line_no = 0;
  bool header_seen = false;
  while (pos < text->size()) {
    std::size_t nl = text->find('\n', pos);
    const bool torn = nl == std::string::npos;
    if (torn) nl = text->size();
    std::string_view line(text->data() + pos, nl - pos);
    ++line_no;
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto parsed = json::parse_object(line);
    if (!parsed.ok()) {
      if (torn)
        problem(line_no, fmt::format("torn final line ({} bytes without a newline): a crash mid-append", line.size()));
      else
        problem(line_no, "malformed line: " + parsed.error().message());
      continue;
    }
    if (torn) problem(line_no, "final line has no newline");
    if (line_no == 1) {
      auto type = json::get_string(*parsed, "type");
      auto id = json::get_string(*parsed, "id");
      if (!type || *type != "session" || !id) {
        problem(1, "line 1 is not a session header");
      } else {
        header_seen = true;
        rep.session_id = std::string(*id);
        rep.version = static_cast<int>(json::get_int(*parsed, "version").value_or(1));
        if (rep.version < 3) problem(1, fmt::format("version {} file: readers migrate it in memory", rep.version));
      }
      continue;
    }
    ++rep.lines;
    line_info li{line_no, std::string(id_of(*parsed).value_or("")), std::nullopt, type_of(*parsed), {}};
    if (auto p = parent_id_of(*parsed)) li.parent = std::string(*p);
    if (li.type == entry_type::session) {
      problem(line_no, "a second session header");
      continue;
    }
    if (li.type == entry_type::message && (!message_of(*parsed) || role_of(*parsed).value_or("").empty()))
      problem(line_no, "message entry without a message role");
    if (li.type == entry_type::compaction)
      li.first_kept = std::string(json::get_string(*parsed, "firstKeptEntryId").value_or(""));
    if (li.id.empty() && rep.version >= 2) problem(line_no, "entry without an id");
    entries.push_back(std::move(li));
  }
  if (line_no == 0) problem(0, "empty file");
  else if (!header_seen && rep.problems.empty()) problem(1, "line 1 is not a session header");
  rep.entries = entries.size();
  if (rep.version < 2) return rep;  // v1 has no ids to check

  std::unordered_map<std::string, std::size_t> by_id;  // id -> index of the latest entry
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto [it, fresh] = by_id.try_emplace(entries[i].id, i);
    if (!fresh) {
      problem(entries[i].line, fmt::format("duplicate id {} (also on line {}); the later entry wins",
                                           entries[i].id, entries[it->second].line));
      it->second = i;
    }
  }
  for (const auto& e : entries)
    if (e.parent && !by_id.count(*e.parent)) problem(e.line, fmt::format("parentId {} points to no entry", *e.parent));
  // Cycles and compaction ancestry: walk each compaction's ancestors; every entry's walk is
  // bounded by the entry count.
  for (const auto& e : entries) {
    if (e.type != entry_type::compaction && &e != &entries.back()) continue;
    std::unordered_set<std::string> seen;
    bool found_kept = e.type != entry_type::compaction || e.first_kept.empty();
    const line_info* cur = &e;
    while (cur && cur->parent) {
      if (!seen.insert(cur->id).second) {
        problem(e.line, fmt::format("parent cycle through {}", cur->id));
        break;
      }
      auto it = by_id.find(*cur->parent);
      if (it == by_id.end()) break;
      cur = &entries[it->second];
      if (cur->id == e.first_kept) found_kept = true;
    }
    if (!found_kept)
      problem(e.line, fmt::format("compaction keeps from {}, which is not one of its ancestors", e.first_kept));
  }
  // The active leaf as a reader resolves it (last entry; OpenClaw leaf controls honoured).
  if (auto rd = transcript_reader::open(f, path); rd.ok())
    if (auto leaf = (*rd)->active_leaf(); leaf.ok() && *leaf) rep.leaf_id = (*rd)->index().at(**leaf).id;
  return rep;
}

}  // namespace sessionrt::storage
