// zstd_codec: the two zstd uses of an OpenClaw agent database (CAF-free). The codec itself is
// storage's (storage/zstd_codec.hpp: one encoder and decoder for the import, the export and
// cold transcripts); this header names it for runtime/openclaw and adds the archive digest.
// - transcript_events.event_zstd: one zstd frame of the event's UTF-8 JSON; event_utf8_bytes is
//   its exact decompressed size (OpenClaw refuses a payload whose size differs). decompress_exact
//   fails with errc::corrupt ("torn or corrupt zstd payload: <zstd error>" or the size mismatch).
// - cold archives (<sha256>.jsonl.zst): a zstd stream (one or more frames, the content size
//   possibly absent) of JSON lines; decompress_stream inflates it up to `max_bytes`
//   (errc::limit_exceeded past it, errc::corrupt for a torn stream).
// - compress(): one frame with its content size, for the exporter and the tests.
// - sha256_hex(): lowercase hex SHA-256 (cold archive names and their verification).
#pragma once
#include <string>
#include <string_view>

#include "storage/zstd_codec.hpp"

namespace sessionrt::openclaw {

using storage::compress;
using storage::decompress_exact;
using storage::decompress_stream;
std::string sha256_hex(std::string_view data);

}  // namespace sessionrt::openclaw
