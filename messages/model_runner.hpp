// The model runner a host supplies (SPEC §8): given the sanitized context of a session, it
// returns one assistant message (pi-ai shape, with usage) or an error. A context-overflow
// error is an error whose message matches the overflow patterns [R§6.2]; the runtime then
// compacts and retries. The call is synchronous: a runner that waits on a network should be
// given its own threads by the host (the runtime calls it from the session's actor).
// Compaction providers (SPEC §4) summarize a span of messages; register them by id.
#pragma once
#include <atomic>
#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"

namespace sessionrt {

struct model_request {
  std::string session_key;
  std::string session_id;
  std::string purpose = "turn";  // turn | memory_flush | compaction_summary
  std::string system_prompt;
  boost::json::array messages;   // context messages, oldest first (pi's buildSessionContext shape)
  std::string provider;          // "" = the runner's default
  std::string model;
  std::int64_t context_window = 0;
  std::int64_t max_tokens = 0;   // 0 = runner default
  // Set when someone listens to the reply as it streams. A runner that streams calls it with
  // the reply's text in order, from the thread run() was called on, before run() returns; the
  // pieces joined must equal the text of the returned message. A runner may ignore it.
  std::function<void(std::string_view text)> on_text;
};

class model_runner {
 public:
  virtual ~model_runner() = default;
  // An assistant message {role:"assistant", content, api, provider, model, usage, stopReason,
  // timestamp}, or an error (errc::unsupported / io_error / limit_exceeded ...) whose message
  // is the provider's text.
  virtual result<boost::json::object> run(const model_request& request) = 0;
};

// Set by the caller to ask a running summarization to stop; providers check it.
class cancellation {
 public:
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  std::atomic<bool> cancelled_{false};
};

struct summarize_request {
  std::string session_key;
  boost::json::array messages;       // what to summarize
  std::string previous_summary;
  std::string custom_instructions;   // /compact <instructions>
  std::int64_t max_tokens = 0;
};

class compaction_provider {
 public:
  virtual ~compaction_provider() = default;
  // The summary text; an empty string or an error means "fall back to the built-in
  // summarizer"; errc::cancelled must be returned when `cancel` was set (it is propagated).
  virtual result<std::string> summarize(const summarize_request& request, const cancellation& cancel) = 0;
};

}  // namespace sessionrt
