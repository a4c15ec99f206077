#include "gateway/message_identity.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

std::string run_of_user_message(const bj::object& m) {
  if (const auto* k = m.if_contains("idempotencyKey"); k && k->is_string()) {
    const std::string_view key = k->get_string();
    if (key.size() > 5 && key.substr(key.size() - 5) == ":user") return std::string(key.substr(0, key.size() - 5));
  }
  if (const auto* meta = m.if_contains("__openclaw"); meta && meta->is_object())
    if (const auto* r = meta->get_object().if_contains("runId"); r && r->is_string()) return std::string(r->get_string());
  return {};
}

void attach_identities(bj::array& messages, const std::vector<std::string>& ids, const std::vector<std::int64_t>& seqs,
                       std::string& run) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object()) continue;
    auto& m = messages[i].get_object();
    const auto* role = m.if_contains("role");
    if (role && role->is_string() && role->get_string() == "user") run = run_of_user_message(m);
    bj::object meta;
    if (const auto* old = m.if_contains("__openclaw"); old && old->is_object()) meta = old->get_object();
    if (i < ids.size()) meta["id"] = ids[i];
    if (i < seqs.size()) meta["seq"] = seqs[i];
    if (!run.empty()) meta["runId"] = run;
    m["__openclaw"] = std::move(meta);
  }
}

bj::object user_message_fields(const std::string& run_id) {
  return {{"idempotencyKey", run_id + ":user"}, {"__openclaw", bj::object{{"runId", run_id}}}};
}

}  // namespace sessionrt::gateway
