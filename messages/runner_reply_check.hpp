// runner_reply_check: what a model runner hands back must be a message the transcript keeps as
// it is. The loader drops a message entry without a role and the context builder skips blocks
// it cannot read, so a reply that fails here would be written and then silently lost on the
// next open; the runtime fails the turn with this error instead (nothing of the reply stored).
// Rules, beyond "a JSON object" (the type guarantees it):
//   role      a string: "assistant" for a final reply; "assistant" or "toolResult" for a tool
//             loop's round (model_request::on_message)
//   content   a string, or an array whose every element is an object with a string `type`;
//             text -> string `text`, thinking -> string `thinking`, toolCall -> string `id` and
//             `name`, object `arguments`, image -> string `data` and `mimeType`. Other block
//             types pass (a runner may know newer ones; the loader keeps them).
//   toolResult rounds: a string `toolCallId`.
// The error (errc::invalid_argument) says which rule failed and where ("content[2]").
#pragma once
#include <boost/json/object.hpp>

#include "messages/status.hpp"

namespace sessionrt {

enum class runner_message_kind { final_reply, loop_round };

status check_runner_message(const boost::json::object& message, runner_message_kind kind);

}  // namespace sessionrt
