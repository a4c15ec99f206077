#include "messages/ids.hpp"

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
