#include "actors/session/hygiene/image_sanitizer.hpp"

#include "messages/base64_rule.hpp"

#include <openssl/evp.h>
#include <stb_image.h>
#include <stb_image_resize.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "actors/session/hygiene/replay_message.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors::hygiene {
namespace {

constexpr std::size_t kProbeChars = 64 * 1024;  // base64 chars decoded to read an image header


// The first `max_chars` (a multiple of 4) base64 characters of a valid payload, without
// whitespace; the whole payload padded to a multiple of 4 when it is shorter.
std::string canonical_prefix(std::string_view data, std::size_t max_chars = std::string::npos) {
  std::string out;
  out.reserve(std::min(data.size(), max_chars) + 3);
  for (char ch : data) {
    if (static_cast<unsigned char>(ch) <= 0x20) continue;
    if (out.size() >= max_chars) return out;
    out.push_back(ch);
  }
  if (out.size() % 4 != 0) out.append(4 - out.size() % 4, '=');
  return out;
}

std::vector<unsigned char> decode_canonical(const std::string& b64) {
  std::vector<unsigned char> out(b64.size() / 4 * 3 + 3);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  if (n < 0) return {};
  std::size_t len = static_cast<std::size_t>(n);
  std::size_t pad = 0;
  for (std::size_t k = b64.size(); k-- > 0 && b64[k] == '=';) ++pad;
  len = len >= pad ? len - pad : 0;
  out.resize(len);
  return out;
}

// The last few decoded bytes of a valid payload of `chars` non-whitespace characters.
std::vector<unsigned char> decode_tail(std::string_view data, std::size_t chars) {
  const std::size_t groups = (chars + 3) / 4;
  const std::size_t start = groups > 8 ? (groups - 8) * 4 : 0;  // the last 8 groups (up to 24 bytes)
  std::string tail;
  for (std::size_t k = data.size(); k-- > 0 && tail.size() < chars - start;)
    if (static_cast<unsigned char>(data[k]) > 0x20) tail.push_back(data[k]);
  std::reverse(tail.begin(), tail.end());
  if (tail.size() % 4 != 0) tail.append(4 - tail.size() % 4, '=');
  return decode_canonical(tail);
}

enum class image_format { png, jpeg, other_stb, unknown };

// A PNG ends with its IEND chunk, a JPEG with the EOI marker (a little trailing padding is
// tolerated): what a truncated payload lacks, found without decoding the image.
bool looks_complete(image_format fmt, const std::vector<unsigned char>& tail) {
  auto find = [&](std::initializer_list<unsigned char> marker) {
    return std::search(tail.begin(), tail.end(), marker.begin(), marker.end()) != tail.end();
  };
  if (fmt == image_format::png) return find({'I', 'E', 'N', 'D'});
  if (fmt == image_format::jpeg) return find({0xFF, 0xD9});
  return true;
}

image_format sniff(const unsigned char* p, std::size_t n) {
  if (n >= 8 && p[0] == 0x89 && p[1] == 'P' && p[2] == 'N' && p[3] == 'G') return image_format::png;
  if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) return image_format::jpeg;
  if (n >= 4 && ((p[0] == 'G' && p[1] == 'I' && p[2] == 'F') || (p[0] == 'B' && p[1] == 'M') ||
                 (p[0] == '8' && p[1] == 'B' && p[2] == 'P' && p[3] == 'S')))
    return image_format::other_stb;
  return image_format::unknown;
}

const char* mime_key(const boost::json::object& b) {
  for (const char* k : {"mimeType", "mediaType", "media_type"})
    if (b.contains(k)) return k;
  return "mimeType";
}

void write_to_string(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

struct stbi_deleter {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

enum class outcome { kept, downscaled, replaced };

// Downscaled images by (hash, size, limit, quality) of their payload: the context is
// sanitized again every turn, and decoding + resizing + re-encoding a large image costs
// hundreds of milliseconds. Bounded (entries and bytes), least recently used out; shared by
// every session (a mutex; the work is done outside it).
class downscale_cache {
 public:
  struct key {
    std::size_t hash = 0, size = 0;
    int limit = 0, quality = 0;
    bool operator==(const key&) const = default;
  };
  struct value {
    std::string data;
    std::string mime;
    bool replaced = false;
  };

  std::optional<value> find(const key& k) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = index_.find(k);
    if (it == index_.end()) return std::nullopt;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  void put(const key& k, value v) {
    std::lock_guard<std::mutex> g(mu_);
    if (index_.count(k)) return;
    bytes_ += v.data.size();
    lru_.emplace_front(k, std::move(v));
    index_[k] = lru_.begin();
    while (!lru_.empty() && (lru_.size() > kMaxEntries || bytes_ > kMaxBytes)) {
      bytes_ -= lru_.back().second.data.size();
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

 private:
  static constexpr std::size_t kMaxEntries = 64, kMaxBytes = 64u << 20;
  struct key_hash {
    std::size_t operator()(const key& k) const { return k.hash ^ (k.size * 0x9E3779B97F4A7C15ull) ^ (std::size_t(k.limit) << 20); }
  };
  std::mutex mu_;
  std::list<std::pair<key, value>> lru_;
  std::unordered_map<key, std::list<std::pair<key, value>>::iterator, key_hash> index_;
  std::size_t bytes_ = 0;
};

downscale_cache& cache() {
  static downscale_cache c;
  return c;
}

outcome sanitize_block(boost::json::object& b, const hygiene_options& opt) {
  const auto* data = b.if_contains("data");
  if (!data || !data->is_string()) return outcome::replaced;
  const std::string_view text = data->get_string();
  std::size_t chars = 0;
  if (!is_valid_base64(text, &chars)) return outcome::replaced;
  // Decode only a prefix for the header; the whole payload only when it must be decoded.
  bool probed_all = text.size() <= kProbeChars;
  std::vector<unsigned char> bytes = decode_canonical(canonical_prefix(text, probed_all ? std::string::npos : kProbeChars));
  auto decode_all = [&] {
    if (!probed_all) bytes = decode_canonical(canonical_prefix(text));
    probed_all = true;
  };
  int w = 0, h = 0, comp = 0;
  const image_format fmt = sniff(bytes.data(), bytes.size());
  bool info = stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &comp) != 0;
  if (!info && !probed_all) {
    decode_all();
    info = stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &comp) != 0;
  }
  if (!info) return fmt == image_format::unknown ? outcome::kept : outcome::replaced;
  if (w <= 0 || h <= 0) return outcome::replaced;
  if (!looks_complete(fmt, decode_tail(text, chars))) return outcome::replaced;
  const int limit = std::max(1, opt.image_max_dimension_px);
  if (std::max(w, h) <= limit) return outcome::kept;
  if (static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > opt.image_max_pixels) return outcome::replaced;
  const downscale_cache::key key{std::hash<std::string_view>()(text), text.size(), limit, opt.jpeg_quality};
  if (auto hit = cache().find(key)) {
    if (hit->replaced) return outcome::replaced;
    json::set(b, "data", boost::json::string(hit->data));
    json::set(b, mime_key(b), boost::json::string(hit->mime));
    return outcome::downscaled;
  }
  auto remember_failure = [&] {
    cache().put(key, downscale_cache::value{{}, {}, true});
    return outcome::replaced;
  };
  decode_all();

  int dw = 0, dh = 0, channels = 0;
  std::unique_ptr<unsigned char, stbi_deleter> pixels(
      stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &dw, &dh, &channels, 0));
  if (!pixels || dw <= 0 || dh <= 0 || channels <= 0) return remember_failure();
  const double scale = static_cast<double>(limit) / static_cast<double>(std::max(dw, dh));
  const int nw = std::clamp(static_cast<int>(std::lround(dw * scale)), 1, limit);
  const int nh = std::clamp(static_cast<int>(std::lround(dh * scale)), 1, limit);
  std::vector<unsigned char> resized(static_cast<std::size_t>(nw) * static_cast<std::size_t>(nh) * channels);
  if (!stbir_resize_uint8(pixels.get(), dw, dh, 0, resized.data(), nw, nh, 0, channels)) return remember_failure();
  pixels.reset();

  std::string encoded;
  const char* mime = "image/png";
  int ok = 0;
  if (fmt == image_format::jpeg) {
    mime = "image/jpeg";
    ok = stbi_write_jpg_to_func(write_to_string, &encoded, nw, nh, channels, resized.data(),
                                std::clamp(opt.jpeg_quality, 1, 100));
  } else {
    ok = stbi_write_png_to_func(write_to_string, &encoded, nw, nh, channels, resized.data(), nw * channels);
  }
  if (!ok || encoded.empty()) return remember_failure();
  downscale_cache::value v{encode_base64(reinterpret_cast<const unsigned char*>(encoded.data()), encoded.size()), mime, false};
  json::set(b, "data", boost::json::string(v.data));
  json::set(b, mime_key(b), boost::json::string(v.mime));
  cache().put(key, std::move(v));
  return outcome::downscaled;
}

}  // namespace

std::optional<std::vector<unsigned char>> decode_base64(std::string_view data) {
  if (!is_valid_base64(data)) return std::nullopt;
  return decode_canonical(canonical_prefix(data));
}

std::string encode_base64(const unsigned char* bytes, std::size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(std::max(len, 0)));
  return out;
}

void sanitize_images(boost::json::array& messages, const hygiene_options& options, hygiene_report& report) {
  for (auto& mv : messages) {
    auto* content = content_array(mv);
    if (!content) continue;
    for (auto& block : *content) {
      if (block_type(block) != "image") continue;
      switch (sanitize_block(block.get_object(), options)) {
        case outcome::kept: break;
        case outcome::downscaled: ++report.images_downscaled; break;
        case outcome::replaced:
          block = text_block(kCorruptedImageText);
          ++report.images_replaced;
          break;
      }
    }
  }
}

}  // namespace sessionrt::actors::hygiene
