// Typed reads and order-preserving writes on boost::json objects, with JavaScript semantics:
// - a number is any JSON number; as_int() accepts integral doubles (JS has one number type);
// - set() keeps an existing key's position and appends a new key (as `obj.k = v` does);
// - erase() keeps the order of the other keys (as `delete obj.k` does).
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sessionrt::json {

const boost::json::value* find(const boost::json::object& o, std::string_view key);
std::optional<std::string_view> get_string(const boost::json::object& o, std::string_view key);
std::optional<double> get_number(const boost::json::object& o, std::string_view key);
// Integral numbers only (an integral double counts); nullopt for 1.5, NaN, strings, absence.
std::optional<std::int64_t> get_int(const boost::json::object& o, std::string_view key);
std::optional<bool> get_bool(const boost::json::object& o, std::string_view key);
const boost::json::object* get_object(const boost::json::object& o, std::string_view key);
const boost::json::array* get_array(const boost::json::object& o, std::string_view key);

std::optional<double> as_number(const boost::json::value& v);
std::optional<std::int64_t> as_int(const boost::json::value& v);

void set(boost::json::object& o, std::string_view key, boost::json::value v);
void erase(boost::json::object& o, std::string_view key);

}  // namespace sessionrt::json
