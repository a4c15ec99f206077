// JSON text exactly as JavaScript's JSON.stringify writes it.
// - compact form (JSONL lines) and the 2-space pretty form of JSON.stringify(v, null, 2);
// - object keys in the value's insertion order (boost::json::object keeps it);
// - numbers as Number.prototype.toString prints them: integers without ".0", shortest
//   round-trip doubles, "1e+21" exponents, -0 as 0, NaN/Infinity as null; integers beyond
//   2^53 are printed as the double JavaScript would hold;
// - strings escaped as JSON.stringify escapes them (\uXXXX lowercase for other controls).
// Input strings must be valid UTF-8 (json_reader guarantees it for parsed text).
#pragma once
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace sessionrt::json {

void append_compact(std::string& out, const boost::json::value& v);
void append_compact(std::string& out, const boost::json::object& o);
void append_compact(std::string& out, const boost::json::array& a);
std::string to_compact(const boost::json::value& v);
// (The object and array overloads write the container itself: passing one where a value is
// expected would deep-copy it into a temporary value first.)
std::string to_compact(const boost::json::object& o);
std::string to_compact(const boost::json::array& a);

// `level` is the indentation level the value starts at (its closing bracket is indented
// 2*level spaces); nested members get 2*(level+1).
void append_pretty(std::string& out, const boost::json::value& v, int level = 0);
void append_pretty(std::string& out, const boost::json::object& o, int level = 0);
std::string to_pretty(const boost::json::value& v);
std::string to_pretty(const boost::json::object& o);

void append_number(std::string& out, double d);
void append_number(std::string& out, std::int64_t i);
void append_string(std::string& out, std::string_view s);  // with the quotes

// Whether `a` and `b` print the same text: the same kinds, keys in the same order, equal
// scalars. Stricter than boost::json's equality (which finds each key by search, and takes an
// object's members in any order), and cheaper: a member is compared with the member at its
// place. Equal numbers of one kind print alike (0 and -0 both as 0); NaN never equals.
bool same_text(const boost::json::value& a, const boost::json::value& b);

}  // namespace sessionrt::json
