#include "actors/session/row_text_memo.hpp"

#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::actors {

bool row_text_memo::append(std::string& out, std::string_view key, const boost::json::object& row) {
  const std::size_t start = out.size();
  out.reserve(start + last_size_);  // one allocation, not a doubling series
  out += "\n  ";
  json::append_string(out, key);
  out += ": ";
  bool valid = is_valid_utf8(std::string_view(out).substr(start));
  made_last_ = 0;
  if (row.empty()) {
    members_.clear();
    out += "{}";
    last_size_ = out.size() - start;
    return valid;
  }
  if (members_.size() > row.size()) members_.resize(row.size());
  out += '{';
  std::size_t i = 0;
  for (const auto& kv : row) {
    if (i == members_.size()) members_.emplace_back();
    member& m = members_[i];
    // Same key, a value that prints the same: the same text.
    if (m.text.empty() || m.key != std::string_view(kv.key()) || !json::same_text(m.value, kv.value())) {
      m.key.assign(kv.key().data(), kv.key().size());
      m.value = kv.value();
      m.text.assign("\n    ", 5);  // the member's line at level 2 (append_pretty's break)
      json::append_string(m.text, kv.key());
      m.text.append(": ", 2);
      json::append_pretty(m.text, kv.value(), 2);
      m.valid = is_valid_utf8(m.text);
      ++made_last_;
    }
    if (i > 0) out += ',';
    out += m.text;
    valid = valid && m.valid;
    ++i;
  }
  out += "\n  }";
  last_size_ = out.size() - start;
  return valid;
}

}  // namespace sessionrt::actors
