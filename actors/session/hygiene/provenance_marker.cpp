#include "actors/session/hygiene/provenance_marker.hpp"

#include "actors/session/hygiene/replay_message.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors::hygiene {
namespace {

std::string_view first_string(const boost::json::object& o, std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    auto v = json::get_string(o, k);
    if (v && !v->empty()) return *v;
  }
  return {};
}

std::string annotated(std::string_view prefix, std::string_view text) {
  if (text.substr(0, kInterSessionHeader.size()) == kInterSessionHeader) return std::string(text);
  std::string out(prefix);
  out += '\n';
  out += text;
  return out;
}

}  // namespace

std::string inter_session_prefix(const boost::json::object& provenance) {
  std::string line(kInterSessionHeader);
  auto add = [&](std::string_view name, std::string_view value) {
    if (value.empty()) return;
    line += ' ';
    line += name;
    line += '=';
    line += value;
  };
  add("sourceSession", first_string(provenance, {"sourceSessionKey", "sourceSession"}));
  add("sourceChannel", first_string(provenance, {"sourceChannel"}));
  add("sourceTool", first_string(provenance, {"sourceTool"}));
  line += " isUser=false\n";
  line += kInterSessionNotice;
  return line;
}

std::size_t annotate_inter_session_messages(boost::json::array& messages) {
  std::size_t n = 0;
  for (auto& mv : messages) {
    if (!is_role(mv, "user")) continue;
    auto& m = mv.get_object();
    const auto* prov = json::get_object(m, "provenance");
    if (!prov || string_field(*prov, "kind") != "inter_session") continue;
    const std::string prefix = inter_session_prefix(*prov);
    auto* content = m.if_contains("content");
    bool done = false;
    if (content && content->is_string()) {
      std::string next = annotated(prefix, content->get_string());
      done = next != std::string_view(content->get_string());
      *content = next;
      if (done) ++n;
      continue;
    }
    if (content && content->is_array()) {
      for (auto& b : content->get_array()) {
        if (block_type(b) != "text") continue;
        auto* t = b.get_object().if_contains("text");
        if (!t || !t->is_string()) continue;
        std::string next = annotated(prefix, t->get_string());
        if (next != std::string_view(t->get_string())) {
          *t = next;
          ++n;
        }
        done = true;
        break;
      }
      if (!done) {
        content->get_array().insert(content->get_array().begin(),
                                    boost::json::value(text_block(annotated(prefix, kInterSessionEmptyText))));
        ++n;
      }
      continue;
    }
    json::set(m, "content", single_text(annotated(prefix, kInterSessionEmptyText)));
    ++n;
  }
  return n;
}

}  // namespace sessionrt::actors::hygiene
