// etcd_base64: etcd's JSON gateway carries keys and values as standard base64 (with padding),
// as proto3's JSON mapping writes `bytes`. decode refuses anything else (the gateway never
// sends it), so a broken answer is an error, not a silently shortened key.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt::cluster {

std::string base64_encode(std::string_view bytes);
// nullopt unless `text` is padded standard base64 (length a multiple of 4, '=' only at the end).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace sessionrt::cluster
