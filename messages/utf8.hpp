// UTF-8 checks for text that is about to be written: invalid UTF-8 is never written raw
// (SPEC §9). Also the JavaScript length of a string (UTF-16 code units), which the token
// estimator and limits that mirror JS code count in.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace sessionrt {

bool is_valid_utf8(std::string_view s) noexcept;
// Copy of `s` with every invalid sequence replaced by U+FFFD; *replaced counts them.
std::string to_valid_utf8(std::string_view s, std::size_t* replaced = nullptr);
// String.prototype.length of the text (a 4-byte sequence counts 2). `s` should be valid.
std::size_t utf16_length(std::string_view s) noexcept;

}  // namespace sessionrt
