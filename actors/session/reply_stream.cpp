#include "actors/session/reply_stream.hpp"

namespace sessionrt::actors {

reply_stream::reply_stream(std::function<void(lifecycle_event)> publish, const clock& time,
                           payloads::event_subject session, int attempt)
    : publish_(std::move(publish)), time_(time), session_(std::move(session)), attempt_(attempt) {}

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
  publish_(payloads::make_event(session_, time_.now_ms(),
                                payloads::reply_delta{std::move(text), attempt_, index_++, done, silent, discarded}));
}

}  // namespace sessionrt::actors
