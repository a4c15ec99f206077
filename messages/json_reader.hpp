// Bounded JSON parsing for every input from outside (files, requests, config).
// - refuses text over max_bytes and nesting over max_depth with an error naming the limit;
// - refuses invalid UTF-8 (errc::corrupt), never passes it on;
// - accepts what JavaScript's JSON.parse accepts that Boost.JSON would not: a lone UTF-16
//   surrogate escape ("\ud800") is read as U+FFFD instead of failing the whole text;
// - duplicate keys: the last value wins at the first key's position (as JSON.parse).
#pragma once
#include <boost/json/value.hpp>
#include <cstddef>
#include <string_view>

#include "messages/status.hpp"

namespace sessionrt::json {

struct parse_limits {
  std::size_t max_bytes = 64u << 20;  // 64 MiB
  std::size_t max_depth = 64;
};

result<boost::json::value> parse(std::string_view text, const parse_limits& limits = {},
                                 boost::json::storage_ptr sp = {});

// parse() that also requires the top-level value to be an object.
result<boost::json::object> parse_object(std::string_view text, const parse_limits& limits = {},
                                         boost::json::storage_ptr sp = {});

}  // namespace sessionrt::json
