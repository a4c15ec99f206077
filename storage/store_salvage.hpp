// store_salvage: the rows of a sessions.json that could not be used, rebuilt from what lies
// beside it [SPEC §1.1, Decision (corruption)]: the newest stale temp file that parses, then the
// headers of the *.jsonl transcripts in the directory, keyed as the corrupt text named them
// where it still can be read. Split from session_store_file because it runs once in a store's
// life, on a file already set aside, and reads a whole directory by rules of its own.
// The caller has renamed the corrupt file away (nothing here writes); `report` gets where each
// row came from, the keys that were lost and why each temp file or transcript was skipped;
// `changes` gets the normalization of the temp file's rows. Never fails: a directory that
// cannot be listed gives an empty store and a note.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "storage/fs.hpp"
#include "storage/session_store.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::storage {

session_store rebuild_store(fs& f, const std::string& path, const store_file_options& options,
                            std::string_view corrupt_text, store_quarantine& report,
                            std::vector<store_change>& changes);

}  // namespace sessionrt::storage
