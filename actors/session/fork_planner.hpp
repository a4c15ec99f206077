// fork_planner: a child session that starts from its parent's active branch (SPEC §3): a
// thread session, or a sub-agent spawned with fork. The child gets a new transcript whose
// header names the parent's transcript in `parentSession` and whose entries are the parent's
// active branch from its latest compaction's firstKeptEntryId (or the root) to the leaf, copied
// verbatim (ids kept; the first copied entry becomes a root). Its context, built by sessionrt
// or by pi's SessionManager, is then the parent's context, compaction summary included.
//
// The size policy (automatic, not a setting): a branch is copied when its context is at most
// fork_token_limit() tokens = min(100,000, (contextWindow - compaction reserve) / 2), so the
// child starts with at least half of its compaction threshold free (100,000 is OpenClaw's
// parentForkMaxTokens default). A larger branch is not copied: the child starts isolated,
// with the parent's latest compaction summary alone when the branch has one (a compaction
// entry whose firstKeptEntryId is itself), else with an empty context. Neither fails the spawn.
// The parent's file is only read (no lock: its writer appends whole lines; a torn tail is not
// read). A thread's fork leaves out a turn of the parent that is concurrent with it: one not
// finished whose lines are stamped at or after the fork's instant (fork_request::before_ms;
// the same millisecond, under virtual time the same instant). Whether such a turn's user line
// was written before the read depended only on which actor ran first, so a simulation's fork
// is the same in every run; a turn that finished in that instant is kept. A sub-agent's fork
// takes the whole file: its parent wrote what it spawned from before spawning it. The child's
// file is created exclusively and made durable before this returns.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

inline constexpr std::int64_t kForkMaxTokensCap = 100000;
std::int64_t fork_token_limit(std::int64_t context_window, std::int64_t reserve_tokens);

enum class fork_mode { branch, summary, isolated };
std::string_view fork_mode_name(fork_mode mode);  // "branch" | "summary" | "isolated"

struct fork_request {
  std::string parent_path;     // the parent's transcript ("" or missing: the child starts isolated)
  std::string child_path;      // the child's transcript; must not exist
  header_fields child_header;  // id, timestamp, cwd, session key (parent_session is set here)
  std::int64_t max_tokens = kForkMaxTokensCap;
  // Leave out the parent's unfinished turn stamped at or after this (see above); unset: none.
  std::optional<std::int64_t> before_ms;
};

struct fork_result {
  fork_mode mode = fork_mode::isolated;
  std::size_t entries = 0;         // entries copied
  std::int64_t branch_tokens = 0;  // the parent's context, estimated
};

result<fork_result> write_fork(storage::fs& files, const fork_request& request);

}  // namespace sessionrt::actors
