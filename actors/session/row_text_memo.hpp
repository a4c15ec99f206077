// row_text_memo: a session's row as sessions.json holds it (session_store::append_row_text:
// `\n  "<key>": ` and the row pretty-printed at level 1), made from the text each member had in
// the last row it made when that member's value did not change. A turn changes a handful of
// the row's fields (updatedAt, the token counts, ...); the others (the delivery context, the
// origin, the model, the file) are copied as the text they were after an equality check of
// their values, instead of being escaped and formatted again. The bytes are those of a full
// serialization: a member is reused only when its key and value equal the kept ones (the
// same kinds, keys in the same order), which print the same (json_writer.hpp). CAF-free; one
// owner.
// It keeps a copy of the last row's values and texts (about twice the row's size): the session
// drops it with its other caches when it idles (session_core::trim).
#pragma once
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sessionrt::actors {

class row_text_memo {
 public:
  // Appends the row's text under `key` to `out`; returns whether what it appended is valid
  // UTF-8 (the store parses the text back, so an invalid one must go as the object).
  bool append(std::string& out, std::string_view key, const boost::json::object& row);
  // Members whose text was made again by the last append() (a test's view of the reuse).
  std::size_t made_last() const { return made_last_; }

 private:
  struct member {
    std::string key;
    boost::json::value value;
    std::string text;  // ",\n    \"key\": value" without the comma: the break, key and value
    bool valid = true;
  };
  std::vector<member> members_;  // in the row's order
  std::size_t made_last_ = 0;
  std::size_t last_size_ = 0;  // the last text's length
};

}  // namespace sessionrt::actors
