#include "storage/zstd_codec.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

namespace sessionrt::storage {
namespace {

constexpr std::size_t kBlock = 1u << 20;

using cctx_ptr = std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)>;
using dctx_ptr = std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)>;

status zstd_error(const char* what, std::size_t code) {
  return status(errc::corrupt, fmt::format("{}: {}", what, ZSTD_getErrorName(code)));
}

// Feeds the stream read from `in` to the decoder and hands each decoded block to `sink`
// (which may refuse it). Stops at the end of the input (a stream that ends inside a frame is
// torn), or once `stop_after` bytes were decoded (the rest is not looked at).
result<zstd_counts> decode_fd(fs& f, int in, std::uint64_t max_bytes,
                              const std::function<status(const char*, std::size_t, std::uint64_t)>& sink,
                              std::uint64_t stop_after = UINT64_MAX) {
  dctx_ptr ds(ZSTD_createDStream(), &ZSTD_freeDStream);
  if (!ds) return status(errc::internal, "zstd: out of memory");
  ZSTD_initDStream(ds.get());
  zstd_counts n;
  std::string out(ZSTD_DStreamOutSize(), '\0');
  std::size_t last = 0;
  bool any = false;
  for (;;) {
    auto block = pread_all(f, in, kBlock, n.compressed_bytes);
    if (!block.ok()) return block.error();
    if (block->empty()) break;
    any = true;
    n.compressed_bytes += block->size();
    ZSTD_inBuffer ib{block->data(), block->size(), 0};
    // Until this block is taken and the decoder holds nothing more back for it.
    while (ib.pos < ib.size || last > 0) {
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      last = ZSTD_decompressStream(ds.get(), &ob, &ib);
      if (ZSTD_isError(last)) return zstd_error("torn or corrupt zstd stream", last);
      if (ob.pos > 0) {
        if (n.raw_bytes + ob.pos > max_bytes)
          return status(errc::limit_exceeded, fmt::format("zstd stream inflates past the limit of {} bytes", max_bytes));
        SRT_RETURN_IF_ERROR(sink(out.data(), ob.pos, n.raw_bytes));
        n.raw_bytes += ob.pos;
        if (n.raw_bytes >= stop_after) return n;
      }
      if (ob.pos < ob.size && ib.pos == ib.size) break;  // wants more input
    }
    if (block->size() < kBlock) break;
  }
  if (!any) return status(errc::corrupt, "empty zstd stream");
  if (last != 0) return status(errc::corrupt, "torn zstd stream: it ends inside a frame");
  return n;
}

}  // namespace

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
  dctx_ptr ds(ZSTD_createDStream(), &ZSTD_freeDStream);
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
    if (ZSTD_isError(last)) return zstd_error("torn or corrupt zstd stream", last);
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

result<zstd_counts> compress_fd(fs& f, int in, std::uint64_t size, int out, int level) {
  cctx_ptr cc(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!cc) return status(errc::internal, "zstd: out of memory");
  ZSTD_CCtx_setParameter(cc.get(), ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cc.get(), ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cc.get(), ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setPledgedSrcSize(cc.get(), size);
  zstd_counts n;
  std::string buf(ZSTD_CStreamOutSize(), '\0');
  for (;;) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, size - n.raw_bytes));
    auto block = pread_all(f, in, want, n.raw_bytes);
    if (!block.ok()) return block.error();
    if (block->size() < want)
      return status(errc::corrupt, fmt::format("the file shrank to {} bytes while it was compressed", n.raw_bytes + block->size()));
    n.raw_bytes += block->size();
    const bool last = n.raw_bytes == size;
    ZSTD_inBuffer ib{block->data(), block->size(), 0};
    std::size_t left = 0;
    do {
      ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
      left = ZSTD_compressStream2(cc.get(), &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) return zstd_error("zstd compression failed", left);
      SRT_RETURN_IF_ERROR(write_all(f, out, buf.data(), ob.pos));
      n.compressed_bytes += ob.pos;
    } while (last ? left != 0 : ib.pos < ib.size);
    if (last) break;
  }
  return n;
}

result<zstd_counts> decompress_fd(fs& f, int in, int out, std::uint64_t max_bytes) {
  return decompress_fd(f, in, f, out, max_bytes);
}

result<zstd_counts> decompress_fd(fs& in_fs, int in, fs& out_fs, int out, std::uint64_t max_bytes) {
  return decode_fd(in_fs, in, max_bytes, [&](const char* data, std::size_t len, std::uint64_t) {
    return write_all(out_fs, out, data, len);
  });
}

result<std::string> decompress_fd_prefix(fs& f, int in, std::size_t n) {
  std::string out;
  auto done = decode_fd(
      f, in, UINT64_MAX,
      [&](const char* data, std::size_t len, std::uint64_t) {
        out.append(data, std::min(len, n - out.size()));
        return status{};
      },
      n);
  if (!done.ok()) return done.error();
  return out;
}

result<zstd_counts> verify_fd(fs& f, int zst, int raw, std::uint64_t raw_size) {
  auto n = decode_fd(f, zst, raw_size, [&](const char* data, std::size_t len, std::uint64_t at) -> status {
    auto theirs = pread_all(f, raw, len, at);
    if (!theirs.ok()) return theirs.error();
    if (theirs->size() != len || std::memcmp(theirs->data(), data, len) != 0)
      return status(errc::corrupt, fmt::format("the compressed copy differs from the original after byte {}", at));
    return {};
  });
  if (!n.ok()) return n.error();
  if (n->raw_bytes != raw_size)
    return status(errc::corrupt, fmt::format("the compressed copy holds {} bytes, the original {}", n->raw_bytes, raw_size));
  return n;
}

}  // namespace sessionrt::storage
