// log_format: the commit log's bytes, described once (LevelDB's log format is the model:
// db/log_format.h and doc/log_format.md). Writer (log_writer.hpp), reader (log_reader.hpp) and
// the record codec (log_record.hpp) follow this file and nothing else.
//
// Physical layout. A log file is a sequence of 32 KiB blocks. A logical record is stored as
// one or more physical records (fragments), none crossing a block boundary:
//     checksum: u32  masked CRC-32C (crc32c.hpp) of the type byte, the log number and the payload
//     length:   u16  payload bytes of this fragment
//     type:     u8   kFull | kFirst | kMiddle | kLast (the recyclable types, 5..8)
//     log:      u32  the low 32 bits of the file's log number (its name, log_files.hpp)
//     payload:  length bytes
// (integers little-endian; kHeaderSize = 11 bytes). A record that fits in what is left of the
// block is kFull; else it is cut into kFirst, kMiddle..., kLast. When fewer than kHeaderSize
// bytes are left in a block they are zeros (the trailer) and the next record starts in the next
// block. An empty logical record is one kFull fragment of length 0. A header of zeros is never
// written.
// Preallocated and recycled files (format version 3, RocksDB's recyclable log format). The
// writer allocates its file ahead in fixed chunks (reading as zeros), and a log dropped by a
// checkpoint is renamed and written again from byte 0 instead of removed (log_files.hpp), so
// an fdatasync commits no size change. What lies past the last record written is zeros or the
// bytes of the file's previous use — whole fragments with good checksums among them. A reader
// knows the log number from the file's name, so a fragment whose log field differs, whose type
// is not a recyclable one, or a header of zeros ends the log there, cleanly between records (a
// torn tail inside one): those bytes were never this log's. A fragment of this log with a bad
// checksum is the torn end of a write (or damage), as before.
// Versions 1 and 2 wrote the legacy fragments: types 1..4, no log field (a 7-byte header,
// kLegacyHeaderSize), the checksum over the type byte and the payload, files grown by appends
// (a header of zeros marked a torn, zero-filled tail). A reader tells the two apart by the type
// of a file's first fragment and still replays them.
//
// Logical records. Byte 0 of a logical record is its kind; the fields follow, integers
// little-endian, fixed width:
//   kLogHeader (1): u32 format version | u64 log number | i64 created (ms since the epoch) |
//                   u16 n | n bytes: the state dir's identity (a uuid, log_files.hpp)
//     Every log file starts with exactly one. A reader refuses a file whose version is newer
//     than kFormatVersion or whose identity is not its state dir's.
//   kTranscriptAppend (2): u8 flags | u64 inode | u64 offset | u16 n | n bytes: the file's path
//                   (relative to the state dir, or absolute when outside it) | the rest: the bytes
//     "These bytes are at this offset of the file with this inode": what a session wrote to a
//     transcript (through the page cache) since its previous record. Flags: kNewFile (the
//     record starts at 0 and the file was created by the writer), kUserLine (reserved: the
//     user's line written before the model call; replayed like any other append).
//   kRowChange (3): u8 origin | u64 order | u16 n | n bytes: the sessions.json's path (relative
//                   to the state dir, or absolute) | u32 n | n bytes: the session key | the rest:
//                   the row's text as sessions.json holds it (session_store::append_row_text:
//                   "\n  " + the quoted key + ": " + the row at level 1), or nothing for a removal
//     One change of one row of one store (durability batch). Origin kFromSession (0): a turn's
//     row, sent by its session with the turn's bytes; `order` is its number in the log's row
//     sequence, which the log actor counts up over the logs of a run (from the first log's
//     number << 32) and hands to the store with the row. Origin kFromStore (1): a change the
//     store made itself (maintenance's archive and erase, an admin put); `order` is the number of
//     the last session row the store had taken when it made it.
//   kStoreWritten (4): u64 order | u16 n | n bytes: the sessions.json's path
//     That sessions.json was written durably holding every change of it that comes before this
//     record in the store's order (below), `order` being the last session row the store had
//     taken. Sent by the store after each write; a checkpoint drops a log only when a later
//     kStoreWritten covers every row change of it.
// The store's order: a store takes session rows in their sequence and makes its own changes
// between them, so the changes of one store sort by (order, origin) — kFromSession first —
// keeping log order among equals (the store's own records reach the log in the order it made
// them). Start-up replay (row_replay.hpp) applies to each sessions.json the changes after its
// last kStoreWritten in that order: per key the last change, a key new to the file appended in
// the order of its first change.
// Version 1 had no row records (a version-1 log replays as before); version 3 changed only the
// fragments (above).
// A new kind, or a new field in a kind, is a new format version.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sessionrt::storage::commit_log {

inline constexpr std::size_t kBlockSize = 32768;
inline constexpr std::size_t kHeaderSize = 4 + 2 + 1 + 4;  // a recyclable fragment's (version 3)
inline constexpr std::size_t kLegacyHeaderSize = 4 + 2 + 1;  // versions 1 and 2

enum physical_type : std::uint8_t {
  kZeroType = 0,  // never written (a zero-filled tail)
  // Legacy fragments (versions 1, 2).
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
  // Recyclable fragments (version 3): kFullType + kRecyclableOffset, ...
  kRecyclableFullType = 5,
  kRecyclableFirstType = 6,
  kRecyclableMiddleType = 7,
  kRecyclableLastType = 8,
};
inline constexpr int kMaxPhysicalType = kLastType;
inline constexpr std::uint8_t kRecyclableOffset = kRecyclableFullType - kFullType;
inline constexpr int kMaxRecyclableType = kRecyclableLastType;

inline constexpr std::uint32_t kFormatVersion = 3;

enum class record_kind : std::uint8_t {
  log_header = 1,
  transcript_append = 2,
  row_change = 3,
  store_written = 4,
};

// kRowChange origins.
inline constexpr std::uint8_t kFromSession = 0;
inline constexpr std::uint8_t kFromStore = 1;

// kTranscriptAppend flags.
inline constexpr std::uint8_t kNewFile = 1;
inline constexpr std::uint8_t kUserLine = 2;  // reserved

}  // namespace sessionrt::storage::commit_log
