// disk_usage: the bytes of the regular files under a directory, read through storage::fs (so a
// test measures a memory_fs, and every syscall of the gateway's /metrics goes where storage's
// do). A symbolic link to a file counts its target's size; a link to a directory is not
// followed (a link to / cannot make a scrape walk the disk). A missing directory, or an entry
// that vanished or cannot be read meanwhile, counts 0: the figure is a sample, not an audit.
#pragma once
#include <cstdint>
#include <string>

#include "storage/fs.hpp"

namespace sessionrt::gateway {

std::int64_t bytes_under(storage::fs& files, const std::string& dir);

}  // namespace sessionrt::gateway
