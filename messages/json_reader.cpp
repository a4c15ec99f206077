#include "messages/json_reader.hpp"

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <charconv>
#include <fmt/format.h>

namespace sessionrt::json {
namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

unsigned hex4(std::string_view s) {
  unsigned v = 0;
  for (char c : s.substr(0, 4)) v = v * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  return v;
}

// Rewrites "\uD8xx" escapes that are not part of a high+low surrogate pair as "\ufffd".
// Returns false when there was nothing to rewrite.
bool replace_lone_surrogates(std::string_view in, std::string& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 1 < in.size()) {
      if (in[i + 1] != 'u' || i + 6 > in.size() || !is_hex(in[i + 2]) || !is_hex(in[i + 3]) || !is_hex(in[i + 4]) ||
          !is_hex(in[i + 5])) {
        out += in[i];
        out += in[i + 1];
        ++i;
        continue;
      }
      unsigned cu = hex4(in.substr(i + 2));
      bool lone = false;
      if (cu >= 0xD800 && cu <= 0xDBFF) {
        bool paired = i + 12 <= in.size() && in[i + 6] == '\\' && in[i + 7] == 'u' && is_hex(in[i + 8]) &&
                      is_hex(in[i + 9]) && is_hex(in[i + 10]) && is_hex(in[i + 11]);
        unsigned lo = paired ? hex4(in.substr(i + 8)) : 0;
        if (paired && lo >= 0xDC00 && lo <= 0xDFFF) {
          out.append(in.substr(i, 12));
          i += 11;
          continue;
        }
        lone = true;
      } else if (cu >= 0xDC00 && cu <= 0xDFFF) {
        lone = true;
      }
      if (lone) {
        out += "\\ufffd";
        changed = true;
      } else {
        out.append(in.substr(i, 6));
      }
      i += 5;
      continue;
    }
    out += in[i];
  }
  return changed;
}

// Builds values exactly as boost::json::parser does, except for doubles: Boost 1.81 computes
// them with a fast algorithm that can be one unit in the last place off (0.9936527282127801
// would come back as 0.99365272821278), which would change numbers on a load/save round trip.
// Here each double is re-read from its source characters with std::from_chars, which rounds
// correctly, as JavaScript's JSON.parse does.
class precise_handler {
 public:
  static constexpr std::size_t max_array_size = -1;
  static constexpr std::size_t max_object_size = -1;
  static constexpr std::size_t max_string_size = -1;
  static constexpr std::size_t max_key_size = -1;
  using ec_t = boost::system::error_code;
  using sv = boost::json::string_view;

  explicit precise_handler(boost::json::storage_ptr sp) { st.reset(std::move(sp)); }
  boost::json::value release() { return st.release(); }

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t n, ec_t&) { st.push_array(n); return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t n, ec_t&) { st.push_object(n); return true; }
  bool on_string_part(sv s, std::size_t, ec_t&) { st.push_chars(s); return true; }
  bool on_string(sv s, std::size_t, ec_t&) { st.push_string(s); return true; }
  bool on_key_part(sv s, std::size_t, ec_t&) { st.push_chars(s); return true; }
  bool on_key(sv s, std::size_t, ec_t&) { st.push_key(s); return true; }
  bool on_number_part(sv s, ec_t&) { number_.append(s.data(), s.size()); return true; }
  bool on_int64(std::int64_t i, sv, ec_t&) { number_.clear(); st.push_int64(i); return true; }
  bool on_uint64(std::uint64_t u, sv, ec_t&) { number_.clear(); st.push_uint64(u); return true; }
  bool on_double(double d, sv s, ec_t&) {
    number_.append(s.data(), s.size());
    double exact = 0;
    auto r = std::from_chars(number_.data(), number_.data() + number_.size(), exact);
    // Out of range (1e400, 1e-400): keep Boost's infinity / zero, as JavaScript does.
    st.push_double(r.ec == std::errc() ? exact : d);
    number_.clear();
    return true;
  }
  bool on_bool(bool b, ec_t&) { st.push_bool(b); return true; }
  bool on_null(ec_t&) { st.push_null(); return true; }
  bool on_comment_part(sv, ec_t&) { return true; }
  bool on_comment(sv, ec_t&) { return true; }

 private:
  boost::json::value_stack st;
  std::string number_;
};

result<boost::json::value> parse_once(std::string_view text, const parse_limits& limits, boost::json::storage_ptr sp,
                                      boost::system::error_code& ec) {
  boost::json::parse_options opt;
  opt.max_depth = limits.max_depth;
  boost::json::basic_parser<precise_handler> p(opt, std::move(sp));
  std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  if (!ec && n < text.size()) {
    return result<boost::json::value>(errc::corrupt,
                                      fmt::format("invalid JSON at byte {}: unexpected data after the value", n));
  }
  if (ec) {
    if (ec == boost::json::error::too_deep)
      return result<boost::json::value>(errc::limit_exceeded,
                                        fmt::format("JSON nested deeper than the limit of {} levels", limits.max_depth));
    return result<boost::json::value>(errc::corrupt, fmt::format("invalid JSON at byte {}: {}", n, ec.message()));
  }
  return p.handler().release();
}

}  // namespace

result<boost::json::value> parse(std::string_view text, const parse_limits& limits, boost::json::storage_ptr sp) {
  if (text.size() > limits.max_bytes)
    return result<boost::json::value>(
        errc::limit_exceeded, fmt::format("JSON text of {} bytes exceeds the limit of {} bytes", text.size(), limits.max_bytes));
  boost::system::error_code ec;
  auto r = parse_once(text, limits, sp, ec);
  if (r.ok() || r.error().code() != errc::corrupt) return r;
  if (text.find("\\u") == std::string_view::npos && text.find("\\U") == std::string_view::npos) return r;
  std::string fixed;
  if (!replace_lone_surrogates(text, fixed)) return r;
  auto r2 = parse_once(fixed, limits, sp, ec);
  return r2.ok() ? r2 : r;
}

result<boost::json::object> parse_object(std::string_view text, const parse_limits& limits, boost::json::storage_ptr sp) {
  auto r = parse(text, limits, std::move(sp));
  if (!r.ok()) return std::move(r).take_error();
  if (!r->is_object())
    return result<boost::json::object>(errc::corrupt, fmt::format("expected a JSON object, found {}",
                                                                  boost::json::to_string(r->kind()).data()));
  return std::move(r->get_object());
}

}  // namespace sessionrt::json
