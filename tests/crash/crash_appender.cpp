// Child process of the crash test: appends messages to a transcript with durability=sync and
// prints the id of each entry once it is acknowledged (written and fdatasync'd), until killed.
//   crash_appender FILE [durability]
// FILE is created if missing; an existing file with a torn tail is repaired first, as a
// session actor does when it opens a transcript after a crash.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "messages/transcript_entry.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_open.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crash_appender FILE [none|batch|sync]\n");
    return 2;
  }
  transcript_options opt;
  opt.mode = argc > 2 ? parse_durability(argv[2]).value_or(durability::sync) : durability::sync;
  header_fields h;
  h.id = "crash";
  h.timestamp_ms = real_clock().now_ms();
  h.cwd = "/crash";
  auto t = open_or_create_transcript(posix_fs(), real_clock(), argv[1], h, opt);
  if (!t.ok()) {
    std::fprintf(stderr, "crash_appender: %s\n", t.error().message().c_str());
    return 2;
  }
  auto& tf = *t->file;
  const std::string body(700, 'c');  // lines of ~850 bytes: kills often land mid-write
  for (long i = 0;; ++i) {
    auto id = tf.append_message(user_message(body + std::to_string(i), i));
    if (!id.ok()) return 3;
    status st = opt.mode == durability::batch ? tf.sync() : tf.commit();
    if (!st.ok()) {
      std::fprintf(stderr, "crash_appender: %s\n", st.message().c_str());
      return 3;
    }
    std::printf("%s\n", id->c_str());
    std::fflush(stdout);
  }
}
