#include "messages/ids.hpp"

#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid.hpp>
#include <boost/uuid/uuid_io.hpp>

namespace sessionrt {
namespace {
// Seeded once per thread from the OS; the "pure" generator would make a syscall per id.
boost::uuids::random_generator_mt19937& generator() {
  thread_local boost::uuids::random_generator_mt19937 gen;
  return gen;
}
bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
}  // namespace

std::string new_uuid_v4() { return boost::uuids::to_string(generator()()); }
std::string new_session_id() { return new_uuid_v4(); }

std::string session_ids::next(std::string_view session_key, std::int64_t now_ms, std::string_view previous_id,
                              std::string_view purpose) const {
  if (!seed_) return new_session_id();
  boost::uuids::uuid ns{};
  for (int i = 0; i < 8; ++i) ns.data[i] = static_cast<std::uint8_t>(*seed_ >> (8 * i));
  std::string name;
  name.reserve(session_key.size() + previous_id.size() + purpose.size() + 24);
  name.append(session_key).append("\n").append(std::to_string(now_ms)).append("\n");
  name.append(previous_id).append("\n").append(purpose);
  boost::uuids::uuid u = boost::uuids::name_generator_sha1(ns)(name);
  u.data[6] = static_cast<std::uint8_t>((u.data[6] & 0x0F) | 0x40);  // version 4's nibble, as OpenClaw's ids
  u.data[8] = static_cast<std::uint8_t>((u.data[8] & 0x3F) | 0x80);  // RFC 4122 variant
  return boost::uuids::to_string(u);
}

std::string new_entry_id() {
  static constexpr char hex[] = "0123456789abcdef";
  const boost::uuids::uuid u = generator()();
  std::string s(8, '0');
  for (int i = 0; i < 4; ++i) {
    s[2 * i] = hex[u.data[i] >> 4];
    s[2 * i + 1] = hex[u.data[i] & 15];
  }
  return s;
}

bool is_safe_session_id(std::string_view id) {
  if (id.empty() || id.size() > 255 || !alnum(id[0])) return false;
  for (char c : id)
    if (!alnum(c) && c != '.' && c != '_' && c != ':' && c != '@' && c != '-') return false;
  return true;
}

bool is_transcript_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || !alnum(id[0])) return false;
  for (char c : id)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

}  // namespace sessionrt
