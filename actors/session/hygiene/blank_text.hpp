// blank_text: blank text removal [R§8.2 step 3, SPEC §5]: text blocks whose text is blank (or
// not a string) are removed from every message's content array. A message emptied by this
// keeps an empty array; the later rules decide its fate (an assistant left empty is dropped
// by tool_call_inputs, a user turn left empty was already dropped by replay_normalizer).
// sessionrt applies it for every policy (OpenClaw only in "full" mode): no provider needs an
// empty text block and several reject one.
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"

namespace sessionrt::actors::hygiene {

void drop_blank_text_blocks(boost::json::array& messages, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
