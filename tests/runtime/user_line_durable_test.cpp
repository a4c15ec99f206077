// The user's line is kept before the model call starts (issue 34): with durability batch its
// commit log record goes out as the call starts, with sync it is fdatasync'd first, so a power
// loss while the model runs (storage/power_loss_fs on a memory fs) finds it after the restart;
// a call that failed or was stopped leaves it stored too, and the next turn's context holds
// every such line as pi builds it from the file (user after user: pi drops an errored
// assistant message from the request; sessionrt stores none). message.appended is published
// only once its line is in the file: its subscriber reads the transcript and finds the entry,
// and a line whose write failed gets no event.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/write_lock.hpp"
#include "tests/runtime/power_cut.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";

std::string last_user_text(const model_request& r) {
  for (auto it = r.messages.rbegin(); it != r.messages.rend(); ++it)
    if (it->is_object() && json::get_string(it->as_object(), "role") == std::optional<std::string_view>("user"))
      return message_text(it->as_object().if_contains("content"));
  return {};
}

// A model that answers at once (the simulated model), fails a message containing "fail", and
// holds one containing "hold" until the test lets it go. It keeps each turn request's messages
// as "role: text".
class held_runner final : public async_model_runner {
 public:
  explicit held_runner(sessionrt::clock& c) : model_(c) {}
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    const std::string text = last_user_text(*request);
    if (request->purpose == "turn") {
      std::vector<std::string> seen;
      for (const auto& m : request->messages) {
        const auto& o = m.as_object();
        seen.push_back(std::string(json::get_string(o, "role").value_or("")) + ": " +
                       message_text(o.if_contains("content")));
      }
      std::lock_guard<std::mutex> g(mu_);
      requests_.push_back(std::move(seen));
    }
    if (text.find("fail") != std::string::npos) {
      done->complete(result<boost::json::object>(errc::io_error, "the provider answered 500"));
    } else if (text.find("hold") != std::string::npos) {
      std::lock_guard<std::mutex> g(mu_);
      held_.emplace_back(std::move(request), std::move(done));
    } else {
      done->complete(model_.run(*request));
    }
  }
  std::size_t held() {
    std::lock_guard<std::mutex> g(mu_);
    return held_.size();
  }
  void answer_held() {
    std::vector<std::pair<std::shared_ptr<const model_request>, std::shared_ptr<model_completion>>> all;
    {
      std::lock_guard<std::mutex> g(mu_);
      all.swap(held_);
    }
    for (auto& [req, done] : all) done->complete(model_.run(*req));
  }
  std::vector<std::string> last_request() {
    std::lock_guard<std::mutex> g(mu_);
    return requests_.empty() ? std::vector<std::string>() : requests_.back();
  }

 private:
  runtime::simulated_model model_;
  std::mutex mu_;
  std::vector<std::pair<std::shared_ptr<const model_request>, std::shared_ptr<model_completion>>> held_;
  std::vector<std::vector<std::string>> requests_;
};

// Fails writes to transcripts (*.jsonl) while armed.
class transcript_faults final : public storage::forwarding_fs {
 public:
  explicit transcript_faults(storage::fs& inner) : storage::forwarding_fs(inner) {}
  std::atomic<int> fail_writes{0};
  result<int> open(const std::string& p, int flags, mode_t mode) override {
    auto fd = forwarding_fs::open(p, flags, mode);
    if (fd.ok()) {
      std::lock_guard<std::mutex> g(mu_);
      if (p.size() > 6 && p.compare(p.size() - 6, 6, ".jsonl") == 0) transcripts_.insert(*fd);
      else transcripts_.erase(*fd);
    }
    return fd;
  }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    if (fail_writes > 0 && is_transcript(fd)) {
      --fail_writes;
      return storage::errno_status(ENOSPC, "write", "");
    }
    return forwarding_fs::write(fd, d, n);
  }

 private:
  bool is_transcript(int fd) {
    std::lock_guard<std::mutex> g(mu_);
    return transcripts_.count(fd) > 0;
  }
  std::mutex mu_;
  std::set<int> transcripts_;
};

struct harness {
  manual_clock clk{1'796'000'000'000};
  storage::memory_fs mem{clk};
  storage::power_loss_fs power{mem, 11, /*forward_syncs=*/false};
  transcript_faults faults{power};
  std::shared_ptr<held_runner> runner = std::make_shared<held_runner>(clk);
  storage::durability mode = storage::durability::batch;
  std::unique_ptr<runtime::runtime> rt;
  std::mutex mu;
  // Per message.appended, as its subscriber saw it: "role found|missing" (its entry in the file).
  std::vector<std::string> appended;

  status start() {
    runtime::runtime_options o;
    o.settings.state_dir = kState;
    o.settings.session.reset.timezone = "UTC";
    o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    o.settings.storage.durability = mode;
    o.async_runner = runner;
    o.time = &clk;
    o.virtual_time = true;
    o.files = &faults;
    o.files_block = false;
    o.subscriptions.push_back({{{"message.appended"}, {}}, [this](const lifecycle_event& e) { saw_appended(e); }});
    auto started = runtime::runtime::start(o);
    if (!started.ok()) return started.error();
    rt = std::move(*started);
    return {};
  }
  ~harness() {
    if (rt) (void)rt->stop();
  }
  void saw_appended(const lifecycle_event& e) {
    const std::string id(json::get_string(e.data, "entryId").value_or(""));
    auto text = storage::read_file(mem, kSessions + "/" + e.session_id + ".jsonl", 1 << 24);
    const bool found = text.ok() && !id.empty() && text->find("\"id\":\"" + id + "\"") != std::string::npos;
    std::lock_guard<std::mutex> g(mu);
    appended.push_back(std::string(json::get_string(e.data, "role").value_or("")) + (found ? " found" : " missing"));
  }
  std::vector<std::string> appended_now() {
    rt->settle();
    std::lock_guard<std::mutex> g(mu);
    return appended;
  }
  turn_outcome turn(const std::string& peer, const std::string& text) { return rt->send(testing::dm(peer, text)).get(); }
  // The process dies with the power while the call is held (see commit_log_runtime_test.cpp).
  void power_cut() {
    testing::power_cut(power, mem, rt, kSessions);
  }
  // The user messages in every transcript, as the file holds them.
  std::multiset<std::string> user_texts() {
    std::multiset<std::string> out;
    const std::vector<std::string> names = *mem.list_dir(kSessions);
    for (const auto& name : names) {
      if (name.size() < 6 || name.compare(name.size() - 6, 6, ".jsonl") != 0) continue;
      const std::string text = *storage::read_file(mem, kSessions + "/" + name, 1 << 24);
      for (const auto& line : testing::split_lines(text)) {
        auto o = json::parse_object(line);
        if (!o.ok() || json::get_string(*o, "type") != std::optional<std::string_view>("message")) continue;
        const auto& m = o->at("message").as_object();
        if (json::get_string(m, "role") == std::optional<std::string_view>("user"))
          out.insert(message_text(m.if_contains("content")));
      }
    }
    return out;
  }
};

bool ready(std::future<turn_outcome>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

}  // namespace

TEST_CASE("user line durable: a power loss during the model call keeps the line (batch), as failed and stopped calls do") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p0", "said before").st.ok());
  // A failed call and a stopped one: the line stays, no reply is stored.
  auto failed = h.turn("p0", "fail said broken");
  CHECK_FALSE(failed.st.ok());
  auto stopped = h.rt->send(testing::dm("p0", "hold said stopped"));
  h.rt->settle();
  REQUIRE(h.runner->held() == 1);
  auto stop = h.turn("p0", "/stop");
  CHECK(stop.command_output == "Stopped the running turn.");
  REQUIRE(stopped.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(stopped.get().st.code() == errc::cancelled);
  h.runner->answer_held();  // too late: the turn ended; the answer is ignored
  // The call that is in flight when the power goes.
  auto waiting = h.rt->send(testing::dm("p0", "hold said waiting"));
  h.rt->settle();
  REQUIRE(h.runner->held() == 1);
  CHECK_FALSE(ready(waiting));
  // Another session's acknowledged turn: its record was synced after the held line's (the log
  // answers in arrival order), so the held line's record is durable whatever the timing.
  REQUIRE(h.turn("p1", "said other").st.ok());
  h.power_cut();
  REQUIRE(h.start().ok());
  const auto texts = h.user_texts();
  CHECK(texts.count("hold said waiting") == 1);  // today's failure: only in the page cache
  CHECK(texts.count("fail said broken") == 1);
  CHECK(texts.count("hold said stopped") == 1);
  CHECK(texts.count("said before") == 1);
  // The next turn's context is the file's, as pi builds it: every kept line, user after user.
  auto next = h.turn("p0", "said next");
  INFO(next.st.to_string());
  REQUIRE(next.st.ok());
  // (A provider whose turns must alternate gets consecutive user messages merged by the
  // hygiene pipeline, so the request is read as one text, in order.)
  std::string request;
  for (const auto& m : h.runner->last_request()) request += m + "\n";
  INFO(request);
  std::size_t at = 0;
  for (const char* text : {"said before", "assistant: ", "fail said broken", "hold said stopped", "hold said waiting",
                           "said next"}) {
    const std::size_t found = request.find(text, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found;
  }
  CHECK(request.find("assistant: ", request.find("fail said broken")) == std::string::npos);  // no reply kept
}

TEST_CASE("user line durable: with durability sync the line is fdatasync'd before the model call") {
  harness h;
  h.mode = storage::durability::sync;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p0", "said before").st.ok());
  auto waiting = h.rt->send(testing::dm("p0", "hold said waiting"));
  h.rt->settle();
  REQUIRE(h.runner->held() == 1);
  h.power_cut();  // no other turn: nothing else syncs the file
  REQUIRE(h.start().ok());
  const auto texts = h.user_texts();
  CHECK(texts.count("said before") == 1);
  CHECK(texts.count("hold said waiting") == 1);
}

TEST_CASE("user line durable: message.appended is published once its line is in the file, never for a failed write") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p0", "said one").st.ok());
  auto held = h.rt->send(testing::dm("p0", "hold said two"));
  h.rt->settle();
  REQUIRE(h.runner->held() == 1);
  // Before the model answered: the user's line was announced, and its subscriber found it.
  CHECK(h.appended_now() == std::vector<std::string>{"user found", "assistant found", "user found"});
  h.runner->answer_held();
  REQUIRE(held.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  REQUIRE(held.get().st.ok());
  // The user's line cannot be written: the turn fails and nothing announces the line.
  h.faults.fail_writes = 1;
  auto refused = h.turn("p0", "said refused");
  CHECK_FALSE(refused.st.ok());
  CHECK_THAT(refused.st.message(), Catch::Contains("storing the user's message"));
  CHECK(h.user_texts().count("said refused") == 0);
  CHECK(h.appended_now() ==
        std::vector<std::string>{"user found", "assistant found", "user found", "assistant found"});
  // The session goes on.
  REQUIRE(h.turn("p0", "said three").st.ok());
  CHECK(h.appended_now().size() == 6);
}
