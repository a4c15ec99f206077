// Fuzzes the JSON5 reader (messages/json5_reader): it never crashes or reads out of bounds on
// any input; every text the strict JSON reader accepts it accepts with the same value; and what
// it accepts survives a round trip (written as JSON, read back by both readers, equal). Inputs
// holding NaN or Infinity, which JSON cannot write, skip the round trip. Any violation aborts.
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "messages/json5_reader.hpp"
#include "messages/json_reader.hpp"

using namespace sessionrt;

namespace {

bool finite_everywhere(const boost::json::value& v) {
  if (v.is_double()) return std::isfinite(v.get_double());
  if (v.is_array()) {
    for (const auto& e : v.get_array())
      if (!finite_everywhere(e)) return false;
  }
  if (v.is_object()) {
    for (const auto& kv : v.get_object())
      if (!finite_everywhere(kv.value())) return false;
  }
  return true;
}

// Numbers compared by value (JSON5 may read 1.0 where JSON reads 1), everything else exactly.
bool same(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    if (a.get_array().size() != b.get_array().size()) return false;
    for (std::size_t i = 0; i < a.get_array().size(); ++i)
      if (!same(a.get_array()[i], b.get_array()[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.get_object().size() != b.get_object().size()) return false;
    for (const auto& kv : a.get_object()) {
      const auto* other = b.get_object().if_contains(kv.key());
      if (!other || !same(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json5::parse_options o;
  o.max_depth = 64;
  auto v = json5::parse(text, o);
  json::parse_limits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 64;
  if (auto strict = json::parse(text, limits); strict.ok()) {
    if (!v.ok() || !same(*strict, *v)) std::abort();  // JSON is JSON5
  }
  if (!v.ok() || !finite_everywhere(*v)) return 0;
  const std::string written = boost::json::serialize(*v);
  auto back = json5::parse(written, o);
  auto back_strict = json::parse(written, limits);
  if (!back.ok() || !back_strict.ok() || !same(*back, *v) || !same(*back_strict, *v)) std::abort();
  return 0;
}
