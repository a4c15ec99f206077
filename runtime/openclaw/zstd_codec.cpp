#include "runtime/openclaw/zstd_codec.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <zstd.h>

#include <memory>

namespace sessionrt::openclaw {

result<std::string> decompress_exact(std::string_view frame, std::size_t expected_bytes) {
  if (frame.empty()) return status(errc::corrupt, "empty zstd payload");
  // One byte of slack tells "larger than recorded" apart from "exactly the recorded size".
  std::string scratch(expected_bytes + 1, '\0');
  const std::size_t n = ZSTD_decompress(scratch.data(), scratch.size(), frame.data(), frame.size());
  if (ZSTD_isError(n))
    return status(errc::corrupt, fmt::format("torn or corrupt zstd payload ({} bytes): {}", frame.size(), ZSTD_getErrorName(n)));
  if (n != expected_bytes)
    return status(errc::corrupt, fmt::format("zstd payload inflates to {} bytes, its row records {}", n, expected_bytes));
  scratch.resize(n);
  return scratch;
}

result<std::string> decompress_stream(std::string_view data, std::size_t max_bytes) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> ds(ZSTD_createDStream(), &ZSTD_freeDStream);
  if (!ds) return status(errc::internal, "zstd: out of memory");
  ZSTD_initDStream(ds.get());
  std::string out;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::size_t last = 1;
  const std::size_t chunk = ZSTD_DStreamOutSize();
  // Until the input is taken and the decoder holds nothing more back.
  while (in.pos < in.size || last != 0) {
    const std::size_t before = out.size();
    out.resize(before + chunk);
    ZSTD_outBuffer ob{out.data() + before, chunk, 0};
    last = ZSTD_decompressStream(ds.get(), &ob, &in);
    out.resize(before + ob.pos);
    if (ZSTD_isError(last)) return status(errc::corrupt, fmt::format("torn or corrupt zstd stream: {}", ZSTD_getErrorName(last)));
    if (out.size() > max_bytes)
      return status(errc::limit_exceeded, fmt::format("zstd stream inflates past the limit of {} bytes", max_bytes));
    if (ob.pos == 0 && in.pos == in.size) break;  // no progress left to make
  }
  if (last != 0) return status(errc::corrupt, "torn zstd stream: it ends inside a frame");
  return out;
}

std::string compress(std::string_view data, int level) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace sessionrt::openclaw
