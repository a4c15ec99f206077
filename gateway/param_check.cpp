#include "gateway/param_check.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

// The AJV message for a value that does not fit, or "" when it fits.
std::string mismatch(const bj::value& v, ptype t) {
  switch (t) {
    case ptype::string: return v.is_string() ? "" : "must be string";
    case ptype::nonempty_string:
      if (!v.is_string()) return "must be string";
      return v.get_string().empty() ? "must NOT have fewer than 1 characters" : "";
    case ptype::nullable_string:
      if (v.is_null()) return "";
      if (!v.is_string()) return "must be string,null";
      return v.get_string().empty() ? "must NOT have fewer than 1 characters" : "";
    case ptype::integer:
    case ptype::positive_integer: {
      bool whole = v.is_int64() || v.is_uint64() || (v.is_double() && v.get_double() == static_cast<double>(
                                                                               static_cast<std::int64_t>(v.get_double())));
      if (!whole) return "must be integer";
      const double d = v.is_int64() ? static_cast<double>(v.get_int64())
                       : v.is_uint64() ? static_cast<double>(v.get_uint64()) : v.get_double();
      if (t == ptype::positive_integer && d < 1) return "must be >= 1";
      if (d < 0) return "must be >= 0";
      return "";
    }
    case ptype::boolean: return v.is_bool() ? "" : "must be boolean";
    case ptype::object: return v.is_object() ? "" : "must be object";
    case ptype::array: return v.is_array() ? "" : "must be array";
    case ptype::any: return "";
  }
  return "";
}

// UTF-8 lead bytes: what AJV counts for maxLength (it counts code points, not UTF-16 units).
std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::optional<frame_error> check_params(std::string_view method, const bj::object& params,
                                        std::initializer_list<param_spec> specs, bool closed) {
  std::string problems;
  auto add = [&](const std::string& p) {
    if (!problems.empty()) problems += "; ";
    problems += p;
  };
  for (const auto& s : specs) {
    const auto* v = params.if_contains(s.name);
    if (!v) {
      if (s.required) add("must have required property '" + std::string(s.name) + "'");
      continue;
    }
    if (auto m = mismatch(*v, s.type); !m.empty()) {
      add("at /" + std::string(s.name) + ": " + m);
      continue;
    }
    if (s.max_length && v->is_string() && code_points(v->get_string()) > s.max_length)
      add("at /" + std::string(s.name) + ": must NOT have more than " + std::to_string(s.max_length) + " characters");
  }
  if (closed)
    for (const auto& kv : params) {
      bool known = false;
      for (const auto& s : specs) known = known || s.name == kv.key();
      if (!known) add("at root: unexpected property '" + std::string(kv.key()) + "'");
    }
  if (problems.empty()) return std::nullopt;
  return params_error(method, problems);
}

frame_error params_error(std::string_view method, const std::string& problem) {
  frame_error e;
  e.message = "invalid " + std::string(method) + " params: " + problem;
  e.why = fault::bad_params;
  return e;
}

}  // namespace sessionrt::gateway
