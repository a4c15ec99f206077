#include "gateway/session_notify.hpp"

#include <chrono>

#include "gateway/chat_runs.hpp"
#include "gateway/session_rows.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

void notify_session_changed(gateway_core& core, const runtime::session_row& row, const std::string& reason) {
  const auto d = defaults_of(*core.rt, core.default_provider, core.default_model);
  core.sink->broadcast(frame_sink::audience::sessions_subscribers, "sessions.changed",
                       bj::object{{"sessionKey", row.key},
                                  {"agentId", row.agent_id},
                                  {"reason", reason},
                                  {"ts", core.now_ms()},
                                  {"session", session_row_json(row, d, core.runs->open_runs(row.key))}});
}

void notify_session_changed(gateway_core& core, const std::string& key, const std::string& agent_id,
                            const std::string& reason) {
  if (core.rt->stopped()) return;
  auto row = core.rt->session(key, agent_id);
  if (!row.ok() || !row->has_value()) return;
  notify_session_changed(core, runtime::session_row{agent_id, key, std::move(**row)}, reason);
}

}  // namespace sessionrt::gateway
