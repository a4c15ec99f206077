#include "actors/session/call_bridge.hpp"

#include <boost/json/serialize.hpp>

#include <atomic>
#include <thread>

namespace sessionrt::actors {

namespace {

// Set while runner->start() runs on the owner's thread: a runner that answers (or streams)
// before start() returns is heard here instead of through the mailbox.
struct inline_answer {
  std::thread::id thread;
  std::atomic<bool> in_start{false};
  std::optional<model_answer> answer;
  bool here() const { return in_start.load() && std::this_thread::get_id() == thread; }
};

}  // namespace

call_bridge::call_bridge(call_bridge_deps deps, std::shared_ptr<const call_mailbox> mail)
    : deps_(deps), mail_(std::move(mail)) {}

call_bridge::~call_bridge() {
  if (call_) end(call_->id);
}

void call_bridge::timeout_fired(std::uint64_t id) {
  if (call_ && call_->id == id) call_->timeout.reset();
}

call_bridge::waiting call_bridge::wait() const {
  if (!call_) return waiting::nothing;
  if (call_->summary) return waiting::pool;
  return call_->request ? waiting::gate : waiting::runner;  // the request leaves once the runner has it
}

// Releases what the call holds (gate ticket, alarm).
void call_bridge::end(std::uint64_t id) {
  if (!call_ || call_->id != id) return;
  if (call_->ticket && deps_.gate) deps_.gate->release(*call_->ticket);
  if (call_->timeout && deps_.timers) deps_.timers->cancel(*call_->timeout);
  call_.reset();
}

void call_bridge::arm_timeout() {
  if (deps_.timeout_ms <= 0 || !deps_.timers || !deps_.time) return;
  call_->timeout = deps_.timers->at(deps_.time->now_ms() + deps_.timeout_ms,
                                    [mail = mail_, id = call_->id] { mail->timed_out(id); });
}

std::optional<model_answer> call_bridge::start_model(std::uint64_t id, std::shared_ptr<model_request> request,
                                                     streams s, std::shared_ptr<cancellation> cancel) {
  call_ = std::make_unique<transport>();
  call_->id = id;
  call_->request = std::move(request);
  call_->cancel = std::move(cancel);
  // Streamed pieces and notes come from the runner's threads: they reach the turn through the
  // mailbox (notes as JSON text).
  if (s.text)
    call_->request->on_text = [mail = mail_, id](std::string_view piece) { mail->text(id, std::string(piece)); };
  if (s.message)
    call_->request->on_message = [mail = mail_, id](boost::json::object m) {
      mail->note(id, "message", boost::json::serialize(m));
    };
  if (s.fallback)
    call_->request->on_fallback = [mail = mail_, id](std::string from, std::string to, std::string why) {
      boost::json::object note{{"from", from}, {"to", to}, {"reason", why}};
      mail->note(id, "fallback", boost::json::serialize(note));
    };
  if (!deps_.gate) return hand_to_runner();
  // 0: acquire() runs, 1: it granted before returning, 2: it returned without room (a later
  // grant, from whichever thread, goes to the mailbox).
  auto phase = std::make_shared<std::atomic<int>>(0);
  const std::string provider = call_->request->provider;
  call_->ticket = deps_.gate->acquire(provider, [phase, mail = mail_, id] {
    int expected = 0;
    if (phase->compare_exchange_strong(expected, 1)) return;
    mail->granted(id);
  });
  int expected = 0;
  if (phase->compare_exchange_strong(expected, 2)) return std::nullopt;  // waits for room
  return hand_to_runner();
}

std::optional<model_answer> call_bridge::launch(std::uint64_t id) {
  if (!call_ || call_->id != id || !call_->request) return std::nullopt;
  return hand_to_runner();
}

// Hands the admitted call to the runner; its answer when the runner gave it before start()
// returned (the call is then over), else nullopt.
std::optional<model_answer> call_bridge::hand_to_runner() {
  const std::uint64_t id = call_->id;
  auto box = std::make_shared<inline_answer>();
  box->thread = std::this_thread::get_id();
  auto done = std::make_shared<model_completion>([mail = mail_, id, box](model_answer a) {
    if (box->here()) {
      box->answer = std::move(a);
      return;
    }
    mail->model_done(id, std::move(a));
  });
  // Pieces and notes made before start() returns go straight to the turn (this thread), ahead
  // of the answer. (`this` is only used then, while the bridge surely lives.)
  if (call_->request->on_text) {
    auto forward = std::move(call_->request->on_text);
    call_->request->on_text = [box, forward, this, id](std::string_view piece) {
      if (box->here() && inline_.text) return inline_.text(id, piece);
      forward(piece);
    };
  }
  if (call_->request->on_message) {
    auto forward = std::move(call_->request->on_message);
    call_->request->on_message = [box, forward, this, id](boost::json::object m) {
      if (box->here() && inline_.message) return inline_.message(id, std::move(m));
      forward(std::move(m));
    };
  }
  std::shared_ptr<const model_request> req = std::move(call_->request);
  box->in_start = true;
  deps_.runner->start(std::move(req), done, call_->cancel);
  box->in_start = false;
  if (box->answer) {
    end(id);
    return std::move(box->answer);
  }
  arm_timeout();
  return std::nullopt;
}

void call_bridge::start_summary(std::uint64_t id, std::shared_ptr<compaction_provider> provider,
                                std::shared_ptr<summarize_request> request, std::shared_ptr<cancellation> cancel) {
  call_ = std::make_unique<transport>();
  call_->id = id;
  call_->summary = true;
  call_->cancel = cancel;
  deps_.pool->post([provider = std::move(provider), request = std::move(request), cancel = std::move(cancel),
                    mail = mail_, id] { mail->summary_done(id, provider->summarize(*request, *cancel)); });
  arm_timeout();
}

}  // namespace sessionrt::actors
