// crc32c: CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum of the commit
// log's records (log_format.hpp), as LevelDB's util/crc32c computes it. extend() continues a
// checksum over more bytes; value() starts one. On x86-64 CPUs with SSE4.2 the crc32
// instruction computes it; elsewhere a slicing-by-8 table does (same results). mask()/unmask()
// store a checksum so that the checksum of data holding checksums stays meaningful (LevelDB's
// rotation by 15 bits plus a constant).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sessionrt::storage::crc32c {

std::uint32_t extend(std::uint32_t crc, const char* data, std::size_t n);
inline std::uint32_t value(const char* data, std::size_t n) { return extend(0, data, n); }
// The portable table version, whatever the CPU (tests compare the two).
std::uint32_t extend_portable(std::uint32_t crc, const char* data, std::size_t n);

inline constexpr std::uint32_t kMaskDelta = 0xa282ead8u;
inline std::uint32_t mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline std::uint32_t unmask(std::uint32_t masked) {
  const std::uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace sessionrt::storage::crc32c
