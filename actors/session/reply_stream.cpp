#include "actors/session/reply_stream.hpp"

namespace sessionrt::actors {

reply_stream::reply_stream(std::function<void(lifecycle_event)> publish, const clock& time, lifecycle_event base,
                           int attempt)
    : publish_(std::move(publish)), time_(time), base_(std::move(base)), attempt_(attempt) {
  base_.type = std::string(event_types::reply_delta);
  base_.data.clear();
}

void reply_stream::on_text(std::string_view piece) {
  streamed_ = true;
  std::string shown = filter_.feed(piece);
  if (!shown.empty()) emit(std::move(shown), false, false, false);
}

void reply_stream::end(bool kept) {
  if (!streamed_) return;
  silent_reply_verdict verdict = filter_.finish();
  if (!kept) {
    emit("", true, false, true);
    return;
  }
  emit(verdict.silent ? std::string() : std::move(verdict.text), true, verdict.silent, false);
}

void reply_stream::emit(std::string text, bool done, bool silent, bool discarded) {
  lifecycle_event e = base_;
  e.at_ms = time_.now_ms();
  e.data["text"] = std::move(text);
  e.data["attempt"] = attempt_;
  e.data["index"] = index_++;
  if (done) {
    e.data["done"] = true;
    e.data["silent"] = silent;
    e.data["discarded"] = discarded;
  }
  publish_(std::move(e));
}

}  // namespace sessionrt::actors
