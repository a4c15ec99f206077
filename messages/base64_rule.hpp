// base64_rule: OpenClaw's canonicalizeBase64 acceptance rule (media-core), shared by the
// transcript repair (corrupted images on disk) and the hygiene pipeline (images sent to a
// model): bytes <= 0x20 are skipped; the rest is the standard alphabet followed by at most two
// '='; a padded payload has a length that is a multiple of 4, an unpadded one may end in 2 or 3
// sextets (never 1); empty is invalid; non-ASCII is invalid.
#pragma once
#include <cstddef>
#include <string_view>

namespace sessionrt {

bool is_base64_alphabet_char(unsigned char c);
// `chars` (when given) gets how many non-whitespace characters the payload has.
bool is_valid_base64(std::string_view data, std::size_t* chars = nullptr);

}  // namespace sessionrt
