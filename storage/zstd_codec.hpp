// zstd_codec: the one zstd encoder and decoder of sessionrt (libzstd), for OpenClaw's agent
// databases (runtime/openclaw) and for transcripts kept compressed (cold_transcript.hpp).
// In memory:
// - decompress_exact: one frame whose decompressed size is known (OpenClaw's event_zstd with its
//   event_utf8_bytes); errc::corrupt for a torn frame or a size that differs.
// - decompress_stream: a zstd stream (one or more frames, content size possibly absent) up to
//   `max_bytes` (errc::limit_exceeded past it, errc::corrupt for a torn stream).
// - compress: one frame with its content size.
// Between descriptors, through storage::fs (nothing is held whole in memory; blocks of 1 MiB):
// - compress_fd: [0, size) of `in` (pread) into `out` (written at its offset): one frame with
//   the content size and a checksum, so a torn or bit-flipped file is refused by the decoder.
// - decompress_fd: a stream from `in` into `out`, refused past `max_bytes` or when torn.
// - decompress_fd_prefix: the first `n` bytes of the stream in `in` (fewer when it is shorter;
//   what follows them is not read, nor checked).
// - verify_fd: decompresses `zst` and compares it with [0, size) of `raw` without writing:
//   errc::corrupt naming the first offset that differs.
// The fds are the caller's (opened, closed and synced by it). Errors name no path: the caller
// adds it as context.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

result<std::string> decompress_exact(std::string_view frame, std::size_t expected_bytes);
result<std::string> decompress_stream(std::string_view data, std::size_t max_bytes);
std::string compress(std::string_view data, int level = 1);

struct zstd_counts {
  std::uint64_t raw_bytes = 0;         // decompressed
  std::uint64_t compressed_bytes = 0;  // on the zstd side
};

result<zstd_counts> compress_fd(fs& f, int in, std::uint64_t size, int out, int level = 3);
result<zstd_counts> decompress_fd(fs& f, int in, int out, std::uint64_t max_bytes);
// The same with `out` in another fs (an in-memory copy of a file on disk).
result<zstd_counts> decompress_fd(fs& in_fs, int in, fs& out_fs, int out, std::uint64_t max_bytes);
result<std::string> decompress_fd_prefix(fs& f, int in, std::size_t n);
result<zstd_counts> verify_fd(fs& f, int zst, int raw, std::uint64_t raw_size);

}  // namespace sessionrt::storage
