// image_sanitizer: image blocks ({type:"image", data:<base64>, mimeType}) made fit to send
// [R§8.2 step 3, SPEC §5]:
// - data that is not valid base64 (OpenClaw's canonical rule: standard alphabet, bytes <= 0x20
//   skipped, at most two '=', never one dangling sextet), missing, or not a string, and images
//   whose format stb knows (PNG, JPEG, GIF, BMP, ...) but which do not decode, become the text
//   block "[image omitted: corrupted base64 payload]" (the reference's text for both);
// - an image whose longer side exceeds image_max_dimension_px is decoded, downscaled to it
//   (aspect kept, each side at least 1 px) and re-encoded: PNG stays PNG, JPEG stays JPEG
//   (quality jpeg_quality), anything else becomes PNG; mimeType follows what was written;
// - an image within the limit is only probed — its header from a decoded prefix, and for PNG
//   / JPEG the end marker (IEND / EOI) from a decoded tail, so a truncated payload is caught —
//   not decoded or re-encoded, so a sanitized context costs little the next turn;
// - formats stb cannot read (WebP, HEIC, ...) pass unchanged when their base64 is valid;
// - images over image_max_pixels are not decoded; they become the placeholder.
// No I/O. Downscaled results are kept in a small process-wide LRU cache (64 entries, 64 MiB,
// keyed by the payload's hash and size and the limit), since the context is sanitized again
// every turn; thread-safe (a mutex around the cache; stb keeps no shared state we change).
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/session/hygiene/hygiene_report.hpp"

namespace sessionrt::actors::hygiene {

inline constexpr std::string_view kCorruptedImageText = "[image omitted: corrupted base64 payload]";

// OpenSSL-backed base64 with the acceptance rule above; nullopt when invalid.
std::optional<std::vector<unsigned char>> decode_base64(std::string_view data);
std::string encode_base64(const unsigned char* bytes, std::size_t n);

// Sanitizes every image block of every message's content array.
void sanitize_images(boost::json::array& messages, const hygiene_options& options, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
