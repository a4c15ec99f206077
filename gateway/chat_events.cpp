#include "gateway/chat_events.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

bj::object base(const std::string& run_id, const std::string& key, const std::string& agent, std::int64_t seq,
                const char* state) {
  return {{"runId", run_id}, {"sessionKey", key}, {"agentId", agent}, {"seq", seq}, {"state", state}};
}

bj::object assistant_message(const std::string& text, std::int64_t ts) {
  return {{"role", "assistant"}, {"content", bj::array{bj::object{{"type", "text"}, {"text", text}}}}, {"timestamp", ts}};
}

}  // namespace

bj::object delta_event(const chat_runs::delta& d, std::int64_t ts) {
  auto o = base(d.run_id, d.session_key, d.agent_id, d.seq, "delta");
  o["deltaText"] = d.piece;
  o["message"] = assistant_message(d.text, ts);
  return o;
}

closing_event run_closing_event(const chat_runs::finished& run, const turn_outcome& out, std::int64_t ts) {
  closing_event c;
  if (out.st.ok()) {
    c.state = "final";
    c.payload = base(run.run_id, run.session_key, run.agent_id, run.seq, "final");
    c.payload["stopReason"] = "stop";
    std::string text = out.reply ? *out.reply : !out.command_output.empty() ? out.command_output : std::string();
    if (!out.suppressed && (out.reply || !out.command_output.empty())) c.payload["message"] = assistant_message(text, ts);
    return c;
  }
  if (out.st.code() == errc::cancelled) {
    c.state = "aborted";
    c.payload = base(run.run_id, run.session_key, run.agent_id, run.seq, "aborted");
    c.payload["stopReason"] = "aborted";
    if (!run.streamed.empty()) c.payload["message"] = assistant_message(run.streamed, ts);
    return c;
  }
  c.state = "error";
  c.payload = base(run.run_id, run.session_key, run.agent_id, run.seq, "error");
  c.payload["errorMessage"] = out.st.message();
  const char* kind = out.st.code() == errc::timeout                                    ? "timeout"
                     : out.st.message().find("context overflow") != std::string::npos ? "context_length"
                                                                                        : "unknown";
  c.payload["errorKind"] = kind;
  return c;
}

bj::value history_message(const bj::value& m) { return m; }

}  // namespace sessionrt::gateway
