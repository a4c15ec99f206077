// simulated_text: the text measures the simulated model (simulated_model.hpp) and its summarizer
// (simulated_summary.hpp) share, so that a reply, a quote and a summary are counted and cut by
// one rule: a token is ceil(UTF-16 length / 4) [R§10], and a cut never splits a code point.
// Pure functions; views returned point into the argument. sim_text holds the helpers only
// those two files use; truncate_to_tokens is public (tests and callers of the model use it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sessionrt::runtime {

// `text`, cut so that ceil(UTF-16 length / 4) <= max_tokens; at the last line break inside
// the budget when there is one, else at a code point. max_tokens <= 0 means no limit.
std::string truncate_to_tokens(std::string_view text, std::int64_t max_tokens);

namespace sim_text {

// ceil(UTF-16 length / 4).
std::int64_t tokens_of_text(std::string_view text);
// `text`, or its first max_units UTF-16 units (at a code point) + "…".
std::string capped(std::string_view text, std::size_t max_units);
// Whether `needle` is non-empty and occurs in `text`.
bool contains(std::string_view text, std::string_view needle);
// The lines of `text` split on '\n' (a final '\n' gives no empty last line).
std::vector<std::string_view> lines_of(std::string_view text);
// The first line with something left after js_trim, trimmed; empty when none.
std::string_view first_nonempty_line(std::string_view text);

}  // namespace sim_text

}  // namespace sessionrt::runtime
