#include "actors/session/row_text_memo.hpp"

#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::actors {
namespace {

// Whether `a` and `b` print the same text: the same kinds, keys in the same order, equal
// scalars. Stricter than boost::json's equality (which finds each key by search, and takes an
// object's members in any order), and cheaper: a member is compared with the member at its
// place. Equal numbers of one kind print alike (0 and -0 both as 0); NaN never equals.
bool same_text(const boost::json::value& a, const boost::json::value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case boost::json::kind::null: return true;
    case boost::json::kind::bool_: return a.get_bool() == b.get_bool();
    case boost::json::kind::int64: return a.get_int64() == b.get_int64();
    case boost::json::kind::uint64: return a.get_uint64() == b.get_uint64();
    case boost::json::kind::double_: return a.get_double() == b.get_double();
    case boost::json::kind::string: return a.get_string() == b.get_string();
    case boost::json::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same_text(x[i], y[i])) return false;
      return true;
    }
    case boost::json::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
        if (i->key() != j->key() || !same_text(i->value(), j->value())) return false;
      return true;
    }
  }
  return false;
}

}  // namespace

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
    if (m.text.empty() || m.key != std::string_view(kv.key()) || !same_text(m.value, kv.value())) {
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
