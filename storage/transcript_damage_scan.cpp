#include "storage/transcript_damage_scan.hpp"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <fmt/format.h>

#include "messages/base64_rule.hpp"
#include "messages/js_text.hpp"
#include "messages/json_reader.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage {

result<tail_state> check_transcript_tail(fs& f, const std::string& path, std::size_t window) {
  auto fd = f.open(path, O_RDONLY);
  if (!fd.ok()) return fd.error().with_context("checking transcript tail");
  auto info = f.fstat(*fd);
  if (!info.ok()) {
    (void)f.close(*fd);
    return info.error().with_context("checking transcript tail of " + path);
  }
  tail_state st;
  st.size = info->size;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(st.size, window));
  auto data = pread_all(f, *fd, n, st.size - n);
  (void)f.close(*fd);
  if (!data.ok()) return data.error().with_context("checking transcript tail of " + path);
  st.checked_bytes = data->size();
  st.ends_with_newline = !data->empty() && data->back() == '\n';
  st.has_nul = data->find('\0') != std::string::npos;
  return st;
}

// --- the damage scan ---

namespace {

// A media type the image rule reads as an image ("image/...", any case, trimmed).
bool is_image_mime(std::string_view v) {
  v = js_trim(v);
  if (v.size() < 6) return false;
  for (std::size_t k = 0; k < 6; ++k)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(v[k]))) != "image/"[k]) return false;
  return true;
}

// The per-line rules on a message's fields, read by both judges of a line: the SAX scan of its
// text (scan_handler) and the writer's judgement of the values it serializes
// (message_line_passes_scan). `value`: at least the string's first 64 bytes; `blank`:
// JavaScript's trim leaves nothing of the whole string.
// A string member of the message other than role: why the line is suspect, or null;
// `whole_file` is set for the values the whole-file rules look at.
const char* message_string_rule(std::string_view key, std::string_view value, bool blank, bool& whole_file) {
  if (key == "content" && blank) return "blank string content";
  if (key == "stopReason" && value == "error") return "an error turn";
  if ((key == "api" && value == "openai-chatgpt-responses") || (key == "provider" && js_trim(value) == "openclaw"))
    whole_file = true;
  return nullptr;
}

// A content block (an object in the message's content array), from its string members.
struct block_facts {
  bool image = false, image_mime = false, data_string = false;
  // Why the block is suspect, or null.
  const char* note(std::string_view key, std::string_view value, bool blank) {
    if (key == "type" && value == "image") image = true;
    if (key == "text" && blank) return "a blank text block";
    if (key == "data") data_string = true;
    if ((key == "mimeType" || key == "mediaType" || key == "media_type") && is_image_mime(value)) image_mime = true;
    return nullptr;
  }
  // The base64 rule applies: its data must pass is_valid_base64.
  bool base64_ruled() const { return image && image_mime && data_string; }
};
constexpr const char* kCorruptImage = "a corrupted base64 image";

// SAX handler for one line: validates the JSON (the parser does) and records the few field
// values the per-line rules look at. Depth 1 is the entry, 2 the message, 3 its content
// array, 4 a content block.
class scan_handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  struct facts {
    bool top_is_object = false;
    bool is_message = false, is_session = false, has_id = false;
    bool message_is_object = false, role_blank = true;
    bool suspect = false, whole_file = false;
    const char* why = nullptr;
  } f;

  void reset() {
    f = facts{};
    depth_ = 0;
    key_.clear();
    value_.clear();
    value_blank_ = true;
  }

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    if (depth_ == 0) f.top_is_object = true;
    if (depth_ == 1 && key1_ == "message") f.message_is_object = true;
    push(true);
    if (in_block()) block_begin();
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    if (in_block()) block_end();
    pop();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) {
    push(false);
    return true;
  }
  bool on_array_end(std::size_t n, boost::system::error_code&) {
    if (n == 0 && depth_ == 3 && in_message_content()) mark("an empty content array");
    pop();
    return true;
  }
  bool on_key_part(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    return true;
  }
  bool on_key(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    if (depth_ == 1) key1_ = key_;
    if (depth_ == 2) key2_ = key_;
    current_key_ = key_;
    key_.clear();
    return true;
  }
  bool on_string_part(std::string_view s, std::size_t, boost::system::error_code&) {
    take(s);
    return true;
  }
  bool on_string(std::string_view s, std::size_t, boost::system::error_code&) {
    take(s);
    string_done();
    value_.clear();
    value_blank_ = true;
    return true;
  }
  bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_double(double, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_bool(bool, boost::system::error_code&) { return scalar(); }
  bool on_null(boost::system::error_code&) { return scalar(); }
  bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_comment(std::string_view, boost::system::error_code&) { return true; }

 private:
  static constexpr std::size_t kKeep = 64;  // value bytes kept once visible (the values compared are short)

  void push(bool object) {
    if (depth_ < kinds_.size()) kinds_[depth_] = object;
    ++depth_;
  }
  void pop() {
    if (depth_ > 0) --depth_;
  }
  bool in_message_content() const { return key1_ == "message" && key2_ == "content"; }
  void mark(const char* why) {
    if (!f.suspect) f.why = why;
    f.suspect = true;
  }
  bool scalar() {
    // A non-string role / content / text: the rules may treat it as absent.
    if (depth_ == 2 && key1_ == "message" && (current_key_ == "role")) mark("a role that is not a string");
    return true;
  }
  void take(std::string_view s) {
    if (in_block() && current_key_ == "data") base64_part(s);
    if (value_blank_)
      for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' &&
            static_cast<unsigned char>(c) < 0x80) {
          value_blank_ = false;
          break;
        }
    // A value with no visible ASCII character yet is kept whole (JavaScript's trim decides on
    // it, Unicode spaces included: CJK text is not blank); any other only as far as the short
    // values compared need.
    if (value_blank_) value_.append(s);
    else if (value_.size() < kKeep) value_.append(s.substr(0, kKeep - value_.size()));
  }
  bool blank_value() const { return value_blank_ && is_js_blank(value_); }
  void string_done() {
    if (depth_ == 1) {
      if (current_key_ == "type") {
        f.is_message = value_ == "message";
        f.is_session = value_ == "session";
      }
      if (current_key_ == "id" && !value_.empty()) f.has_id = true;
      return;
    }
    if (depth_ == 2 && key1_ == "message" && kinds_[1]) {
      if (current_key_ == "role") f.role_blank = blank_value();
      else if (const char* why = message_string_rule(current_key_, value_, blank_value(), f.whole_file)) mark(why);
      return;
    }
    if (in_block())
      if (const char* why = block_.note(current_key_, value_, blank_value())) mark(why);
  }
  bool in_block() const { return depth_ == 4 && in_message_content() && !kinds_[2] && kinds_[3]; }
  // OpenClaw's base64 acceptance rule, over the parts of a string (is_valid_base64).
  void base64_part(std::string_view s) {
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c > 0x7F) b64_bad_ = true;
      if (c <= 0x20 || b64_bad_) continue;
      ++b64_len_;
      if (c == '=') {
        if (++b64_pad_ > 2) b64_bad_ = true;
        continue;
      }
      if (b64_pad_ > 0 || !is_base64_alphabet_char(c)) b64_bad_ = true;
    }
  }
  bool base64_ok() const {
    if (b64_bad_ || b64_len_ == 0) return false;
    const std::size_t rem = b64_len_ % 4;
    return rem == 0 || (b64_pad_ == 0 && rem != 1);
  }
  void block_begin() {
    block_ = {};
    b64_bad_ = false;
    b64_len_ = b64_pad_ = 0;
  }
  void block_end() {
    if (block_.base64_ruled() && !base64_ok()) mark(kCorruptImage);
  }
  block_facts block_;
  bool b64_bad_ = false;
  std::size_t b64_len_ = 0, b64_pad_ = 0;

  std::size_t depth_ = 0;
  std::array<bool, 8> kinds_{};  // object (true) or array per depth (first 8 levels)
  std::string key_, key1_, key2_, current_key_;
  std::string value_;
  bool value_blank_ = true;  // no visible ASCII character so far
};

class line_scanner {
 public:
  explicit line_scanner(const json::parse_limits& limits) : limits_(limits), parser_(make_options(limits)) {}

  void line(std::string_view line, bool has_newline, std::size_t line_no, damage_scan& out) {
    if (is_js_blank(line)) {
      if (!has_newline && !line.empty()) out.torn_tail = true;
      return;
    }
    ++out.lines;
    if (!has_newline) out.torn_tail = true;
    auto suspect = [&](const std::string& why) {
      if (out.suspect_lines++ == 0) out.first_reason = fmt::format("line {}: {}", line_no, why);
    };
    if (line.size() > limits_.max_bytes) {
      suspect("longer than the line limit");
      return;
    }
    parser_.reset();
    parser_.handler().reset();
    boost::system::error_code ec;
    const std::size_t used = parser_.write_some(false, line.data(), line.size(), ec);
    // Trailing whitespace after the value is fine; anything else is not.
    if (!ec && used != line.size() && !is_js_blank(line.substr(used))) ec = boost::json::error::extra_data;
    const auto& f = parser_.handler().f;
    if (ec || !f.top_is_object) {
      if (out.lines == 1) return;  // header_ok stays false
      if (ec) suspect("not JSON (" + ec.message() + ")");
      return;  // a non-object JSON value is kept as it is
    }
    if (out.lines == 1) {
      out.header_ok = f.is_session && f.has_id;
      return;
    }
    if (f.whole_file) out.whole_file_rules = true;
    if (f.is_message && (!f.message_is_object || f.role_blank)) return suspect("a message without a role");
    if (f.is_message && f.suspect) return suspect(f.why ? f.why : "a rule applies");
  }

 private:
  static boost::json::parse_options make_options(const json::parse_limits& l) {
    boost::json::parse_options o;
    o.max_depth = l.max_depth;
    return o;
  }
  json::parse_limits limits_;
  boost::json::basic_parser<scan_handler> parser_;
};

// --- the same rules on values (message_line_passes_scan) ---

// Whether v nests no deeper than `room` more levels of objects and arrays (a scalar needs none).
bool nests_within(const boost::json::value& v, std::size_t room);
bool nests_within(const boost::json::object& o, std::size_t room) {
  if (room == 0) return false;
  for (const auto& kv : o)
    if (!nests_within(kv.value(), room - 1)) return false;
  return true;
}
bool nests_within(const boost::json::value& v, std::size_t room) {
  if (const auto* o = v.if_object()) return nests_within(*o, room);
  if (const auto* a = v.if_array()) {
    if (room == 0) return false;
    for (const auto& e : *a)
      if (!nests_within(e, room - 1)) return false;
  }
  return true;
}

// One level short of the parser's limit: the boundary is not worth a rule of its own.
constexpr std::size_t kNestingRoom = json::parse_limits{}.max_depth - 1;

bool block_passes(const boost::json::object& block) {
  block_facts facts;
  const boost::json::string* data = nullptr;
  for (const auto& kv : block) {
    const auto* str = kv.value().if_string();
    if (!str) continue;
    if (facts.note(kv.key(), *str, is_js_blank(*str))) return false;
    if (kv.key() == "data") data = str;
  }
  return !(facts.base64_ruled() && !is_valid_base64(*data));
}

}  // namespace

bool message_line_passes_scan(const boost::json::object& message) {
  if (!nests_within(message, kNestingRoom - 1)) return false;  // the entry around it is a level
  bool role_ok = false;
  for (const auto& kv : message) {
    const std::string_view key = kv.key();
    const boost::json::value& v = kv.value();
    if (key == "role") {
      const auto* role = v.if_string();
      role_ok = role && !is_js_blank(*role);
    } else if (const auto* str = v.if_string()) {
      bool whole_file = false;
      if (message_string_rule(key, *str, is_js_blank(*str), whole_file) || whole_file) return false;
    } else if (const auto* content = v.if_array(); content && key == "content") {
      if (content->empty()) return false;
      for (const auto& b : *content)
        if (const auto* block = b.if_object(); block && !block_passes(*block)) return false;
    }
  }
  return role_ok;
}

bool entry_line_passes_scan(const boost::json::object& entry) {
  const auto* type = entry.if_contains("type");
  if (type && type->is_string() && type->get_string() == "message") return false;
  return !entry.contains("message") && nests_within(entry, kNestingRoom);
}

damage_scan scan_transcript_text(std::string_view text, const json::parse_limits& line_limits) {
  damage_scan out;
  out.bytes_read = text.size();
  line_scanner sc(line_limits);
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool has_newline = nl != std::string_view::npos;
    std::string_view line = text.substr(pos, (has_newline ? nl : text.size()) - pos);
    pos = has_newline ? nl + 1 : text.size();
    if (has_newline && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    sc.line(line, has_newline, ++line_no, out);
  }
  return out;
}

result<damage_scan> scan_transcript_for_damage(fs& f, const std::string& path, const repair_options& options,
                                               std::size_t block_bytes) {
  auto fd = f.open(path, O_RDONLY);
  if (!fd.ok()) return fd.error().with_context("checking transcript");
  damage_scan out;
  line_scanner sc(options.line_limits);
  std::string carry;
  std::uint64_t offset = 0;
  std::size_t line_no = 0;
  status st;
  for (;;) {
    auto block = pread_all(f, *fd, block_bytes, offset);
    if (!block.ok()) {
      st = block.error().with_context("checking transcript " + path);
      break;
    }
    if (block->empty()) break;
    offset += block->size();
    out.bytes_read += block->size();
    if (out.bytes_read > options.max_file_bytes) {
      st = status(errc::limit_exceeded, fmt::format("checking transcript {}: larger than the limit of {} bytes", path,
                                                    options.max_file_bytes));
      break;
    }
    std::string_view data(*block);
    std::size_t pos = 0;
    for (;;) {
      const std::size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) break;
      std::string_view line = data.substr(pos, nl - pos);
      if (!carry.empty()) {
        carry.append(line);
        line = carry;
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      sc.line(line, true, ++line_no, out);
      carry.clear();
      pos = nl + 1;
    }
    carry.append(data.substr(pos));
    if (block->size() < block_bytes) break;
  }
  (void)f.close(*fd);
  if (!st.ok()) return st;
  if (!carry.empty()) sc.line(carry, false, ++line_no, out);
  return out;
}

}  // namespace sessionrt::storage
