// json5_reader: JSON5 1.0.0 (https://spec.json5.org) into a boost::json value, for the config
// files OpenClaw's users write (comments, trailing commas, unquoted keys, single quotes) and its
// docs print. Every JSON text is a JSON5 text with the same value. No C++ JSON5 library is
// packaged by Debian, so this is ours; it is checked against the JSON5 project's own test suite
// (tests/messages/json5_reader_test.cpp, vectors in ../shared/vectors/json5-tests).
//
// What it accepts, beyond JSON: // and /* */ comments; ES5 white space (the Unicode Zs category,
// U+FEFF, U+00A0, \v, \f) and line terminators (\r, U+2028, U+2029); one trailing comma in an
// object or array; keys that are ES5 IdentifierNames (Unicode letters, $, _, \uXXXX escapes);
// strings in single quotes, with \x, \v, \0, escaped line terminators (line continuations) and
// escapes of any other character; numbers with a leading '+', a leading or trailing decimal
// point, hexadecimal (0x), Infinity and NaN (as doubles). Integers in int64 range stay int64.
// Duplicate keys: the last one wins, as JSON.parse does.
// What it refuses, with the 1-based line and column (code points) of the first bad character:
// anything else, including octal-looking numbers (010), unescaped line feeds in strings, lone
// surrogate halves and invalid UTF-8; `max_depth` bounds nesting.
#pragma once
#include <boost/json/value.hpp>
#include <cstddef>
#include <string_view>

#include "messages/status.hpp"

namespace sessionrt::json5 {

struct parse_options {
  std::size_t max_depth = 128;
};

// errc::invalid_argument "line L, column C: <what>" (callers add the file name).
result<boost::json::value> parse(std::string_view text, const parse_options& options = {});

}  // namespace sessionrt::json5
