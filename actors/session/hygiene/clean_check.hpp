// clean_check: whether a context is plainly clean — so plain that no rule of the hygiene
// pipeline would change it, for any provider — letting the turn skip the copy and the
// pipeline (SPEC §5; most chat-only sessions). Conservative: "false" only means "run the
// pipeline". Plainly clean is:
//   - only user and assistant messages, alternating, starting with a user turn;
//   - a user message has role, content and timestamp only; its content a non-blank string or
//     text blocks ({type, text} only) that are not blank;
//   - an assistant message has only text blocks ({type, text}), none blank, a stopReason of
//     "stop", usage with some non-zero count, a provider other than "openclaw", and a text
//     that is not a NO_REPLY payload (is_silent_reply_payload_text).
// tests/actors/session/hygiene/clean_check_test.cpp checks the promise against the pipeline
// on random contexts for every provider family.
#pragma once
#include <boost/json/array.hpp>

namespace sessionrt::actors::hygiene {

bool plainly_clean(const boost::json::array& messages);

// The same, knowing that messages[0, clean_upto) were found plainly clean before (the context
// only grew since): checks the rest. Returns the new clean prefix length — messages.size()
// when all of it is plainly clean.
std::size_t plainly_clean_upto(const boost::json::array& messages, std::size_t clean_upto);

}  // namespace sessionrt::actors::hygiene
