// Fuzzes repair_transcript_text with arbitrary bytes. Aborts when a promise breaks:
// - an unchanged result is the input itself; a changed one ends in '\n' and has no blank line;
// - every line of a changed output parses as JSON (with the limits the repair uses);
// - repairing the output again changes nothing (idempotent);
// - a first line that is a valid session header stays the first line;
// - the open's damage scan has no false negatives: a text with lines whose repair changes it
//   is one the scan sends to the repair (needs_repair, or no valid header);
// - a message a writer would judge clean (message_line_passes_scan) is one the scan passes
//   once serialized as the writer does.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/transcript_damage_scan.hpp"
#include "storage/transcript_repair.hpp"

using namespace sessionrt;

namespace {

constexpr std::int64_t kNow = 1767225600123;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "transcript_repair_fuzz: %s\n", what);
  std::abort();
}

// The line at `pos` (split on \r?\n like the repair); advances pos past its terminator.
std::string_view next_line(std::string_view text, std::size_t& pos) {
  const std::size_t nl = text.find('\n', pos);
  std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
  if (nl != std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool is_header_line(std::string_view line, const json::parse_limits& limits) {
  auto v = json::parse_object(line, limits);
  if (!v.ok()) return false;
  auto id = id_of(*v);
  return type_of(*v) == entry_type::session && id && !id->empty();
}

// Each line that is a message entry: the writer's verdict on its message against the scan's.
void check_writer_verdicts(std::string_view text, const json::parse_limits& limits) {
  static const std::string header =
      R"({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})"
      "\n";
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto v = json::parse_object(next_line(text, pos), limits);
    if (!v.ok() || type_of(*v) != entry_type::message) continue;
    const auto* m = v->if_contains("message");
    if (!m || !m->is_object() || !storage::message_line_passes_scan(m->get_object())) continue;
    std::string file = header + R"({"type":"message","id":"a","parentId":null,"timestamp":"t","message":)";
    json::append_compact(file, m->get_object());
    file += "}\n";
    if (storage::scan_transcript_text(file, limits).needs_repair())
      fail("a message the writer judges clean is one the scan does not pass");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  storage::repair_options opt;
  opt.new_uuid = [] { return std::string("00000000-0000-4000-8000-000000000000"); };

  const auto first = storage::repair_transcript_text(text, kNow, opt);
  const auto& rep = first.report;
  const std::string& out = first.cleaned_text;

  if (!rep.changed() && out != text) fail("unchanged report but different text");
  if (rep.changed()) {
    if (out.empty() || out.back() != '\n') fail("changed output does not end in a newline");
    std::size_t pos = 0;
    while (pos < out.size()) {
      if (next_line(out, pos).empty()) fail("changed output has an empty line");
    }
  }
  if (rep.changed()) {  // unchanged output is the input, whose non-blank lines all parsed
    std::size_t pos = 0;
    while (pos < out.size()) {
      if (!json::parse(next_line(out, pos), opt.line_limits).ok()) fail("an output line does not parse");
    }
  }

  const auto scan = storage::scan_transcript_text(text, opt.line_limits);
  if (rep.changed() && scan.lines > 0 && !scan.needs_repair() && scan.header_ok)
    fail("the repair changes a text the damage scan passes");
  check_writer_verdicts(text, opt.line_limits);

  const auto second = storage::repair_transcript_text(out, kNow, opt);
  if (second.report.changed() || second.cleaned_text != out) fail("repair is not idempotent");

  std::size_t pos = 0;
  auto first_line = next_line(text, pos);
  if (!first_line.empty() && first_line.back() == '\r') first_line.remove_suffix(1);  // a last line keeps it
  if (is_header_line(first_line, opt.line_limits)) {
    if (rep.abandoned()) fail("abandoned a file that starts with a valid header");
    std::size_t out_pos = 0;
    auto out_first = next_line(out, out_pos);
    if (!out_first.empty() && out_first.back() == '\r') out_first.remove_suffix(1);
    if (out_first != first_line) fail("the header line did not stay first");
  }
  return 0;
}
