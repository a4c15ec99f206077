#include "actors/session/session_mailbox.hpp"

namespace sessionrt::actors {

namespace {

class actor_mailbox final : public call_mailbox {
 public:
  explicit actor_mailbox(caf::actor_addr addr) : addr_(std::move(addr)) {}
  void granted(std::uint64_t id) const override { send(granted_atom::value, id); }
  void model_done(std::uint64_t id, model_answer a) const override {
    model_reply r;
    if (a.ok())
      r.message = std::move(*a);
    else
      r.st = a.error();
    send(model_done_atom::value, id, std::move(r));
  }
  void text(std::uint64_t id, std::string piece) const override { send(model_text_atom::value, id, std::move(piece)); }
  void note(std::uint64_t id, std::string kind, std::string json) const override {
    send(model_note_atom::value, id, std::move(kind), std::move(json));
  }
  void summary_done(std::uint64_t id, result<std::string> a) const override {
    summary_reply r;
    if (a.ok())
      r.text = std::move(*a);
    else
      r.st = a.error();
    send(summary_done_atom::value, id, std::move(r));
  }
  void timed_out(std::uint64_t id) const override { send(timeout_atom::value, id); }

 private:
  template <class... Ts>
  void send(Ts&&... xs) const {
    if (auto a = caf::actor_cast<session_actor_type>(addr_)) caf::anon_send(a, std::forward<Ts>(xs)...);
  }
  caf::actor_addr addr_;
};

}  // namespace

std::shared_ptr<const call_mailbox> session_mailbox(caf::actor_addr session) {
  return std::make_shared<actor_mailbox>(std::move(session));
}

}  // namespace sessionrt::actors
