#include "gateway/message_identity.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

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

}  // namespace sessionrt::gateway
