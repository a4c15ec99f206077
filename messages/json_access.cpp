#include "messages/json_access.hpp"

#include <cmath>

namespace sessionrt::json {

const boost::json::value* find(const boost::json::object& o, std::string_view key) { return o.if_contains(key); }

std::optional<std::string_view> get_string(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_string());
}

std::optional<double> as_number(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::int64: return static_cast<double>(v.get_int64());
    case boost::json::kind::uint64: return static_cast<double>(v.get_uint64());
    case boost::json::kind::double_: return v.get_double();
    default: return std::nullopt;
  }
}

std::optional<std::int64_t> as_int(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::int64: return v.get_int64();
    case boost::json::kind::uint64:
      if (v.get_uint64() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<std::int64_t>(v.get_uint64());
    case boost::json::kind::double_: {
      double d = v.get_double();
      if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > 9.2e18) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    default: return std::nullopt;
  }
}

std::optional<double> get_number(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v ? as_number(*v) : std::nullopt;
}

std::optional<std::int64_t> get_int(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v ? as_int(*v) : std::nullopt;
}

std::optional<bool> get_bool(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_bool()) return std::nullopt;
  return v->get_bool();
}

const boost::json::object* get_object(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

const boost::json::array* get_array(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_array() ? &v->get_array() : nullptr;
}

void set(boost::json::object& o, std::string_view key, boost::json::value v) { o.insert_or_assign(key, std::move(v)); }

void erase(boost::json::object& o, std::string_view key) { o.stable_erase(key); }

}  // namespace sessionrt::json
