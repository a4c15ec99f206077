#include "runtime/providers/provider_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>

#include "runtime/providers/retry_policy.hpp"
#include "runtime/providers/sse_parser.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers {
namespace bj = boost::json;

namespace {


// One model the call may use, resolved against models.providers.
struct candidate {
  std::string provider_id, model_id;
  const actors::provider_config* provider = nullptr;  // null: unknown provider
  actors::provider_model model;                       // a copy: a model the provider does not list is made up
  std::string api;
};

constexpr std::size_t kMaxErrorBody = 64 * 1024;

}  // namespace

struct provider_runner::impl {
  provider_runner_options opt;
  std::shared_ptr<http_loop> loop;
  std::mutex rng_mu;
  std::mt19937_64 rng;
  std::optional<retry_policy> retries_of_a_model;
  std::atomic<std::uint64_t> calls{0}, http_requests{0}, retries{0}, fallbacks{0}, tool_calls{0}, failures{0};

  double jitter() {
    std::lock_guard lk(rng_mu);
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  }

  candidate resolve(const std::string& provider, const std::string& model, std::int64_t window) const {
    candidate c;
    c.provider_id = provider;
    c.model_id = model;
    const actors::provider_config* p = actors::find_provider(opt.models.providers, provider);
    if (!p) return c;
    c.provider = p;
    c.provider_id = p->id;
    const actors::provider_model* listed = actors::find_model(*p, model);
    if (listed) {
      c.model = *listed;
    } else {
      c.model.id = model;
      if (window > 0) c.model.context_window = window;
    }
    c.model_id = c.model.id;
    c.api = actors::api_of(*p, listed);
    return c;
  }
};

namespace {

// One call: its candidates, the round it is in, and whatever of it is in flight (an HTTP
// transfer, a retry wait or tools). Callbacks come from the loop thread, the alarms' thread
// and tools' threads; `mu` orders them.
struct call_ctx : std::enable_shared_from_this<call_ctx> {
  std::weak_ptr<provider_runner::impl> owner;
  std::shared_ptr<const model_request> req;
  std::shared_ptr<model_completion> done;
  std::shared_ptr<const cancellation> cancel;
  std::vector<candidate> candidates;
  std::size_t current = 0;
  int attempt = 0;       // tries of the current candidate in this round
  int model_calls = 0;   // model calls made (tool-loop rounds)
  int max_calls = 20;
  // The context sent: the request's messages until a tool round adds to them (then a copy).
  std::optional<bj::array> messages;
  bj::array added;       // what this call appended (rounds, steering), for the precheck

  std::mutex mu;
  bool finished = false;
  std::optional<http_loop::call_id> http;
  std::optional<alarms::id> wait;

  const bj::array& context() const { return messages ? *messages : req->messages; }

  // Completes once; later completions (a transfer's on_done after a cancel) are dropped here,
  // so the runtime counts no duplicate.
  void finish(result<bj::object> r) {
    {
      std::lock_guard lk(mu);
      if (finished) return;
      finished = true;
    }
    if (auto o = owner.lock(); o && !r.ok() && r.error().code() != errc::cancelled) ++o->failures;
    done->complete(std::move(r));
  }
  bool is_finished() {
    std::lock_guard lk(mu);
    return finished;
  }

  void send();
  void on_failure(status st, long http_status, const http_response_head* head, bool streamed);
  void next_candidate(const std::string& reason);
  void on_message(bj::object message);
  void run_tools(bj::object message);
  void after_tools(bj::object assistant, std::vector<tool_result> results);
};

// Reads one streamed response: SSE into the wire format's decoder into the builder; a
// non-2xx body is kept (bounded) for the provider's error text.
class stream_handler final : public http_handler {
 public:
  stream_handler(std::shared_ptr<call_ctx> ctx, const wire_format* format, provider_call call,
                 std::function<void(std::string_view)> on_text)
      : ctx_(std::move(ctx)),
        format_(format),
        call_(std::move(call)),
        builder_(call_.api, call_.provider->id, call_.model->id, call_.model->cost, std::move(on_text)),
        decoder_(format->decoder(call_, builder_)) {}

  void on_head(const http_response_head& head) override {
    head_ = head;
    ok_ = head.status >= 200 && head.status < 300;
  }
  void on_body(std::string_view bytes) override {
    streamed_ = streamed_ || !bytes.empty();
    if (!ok_) {
      if (body_.size() < kMaxErrorBody) body_.append(bytes.substr(0, kMaxErrorBody - body_.size()));
      return;
    }
    parser_.feed(bytes, [this](sse_event&& e) { decoder_->on_event(e); });
  }
  void on_done(status st) override {
    auto ctx = std::move(ctx_);
    {
      std::lock_guard lk(ctx->mu);
      ctx->http.reset();
    }
    if (ctx->cancel->cancelled()) return ctx->finish(status(errc::cancelled, "the model call was cancelled"));
    if (!st.ok()) return ctx->on_failure(st, 0, nullptr, ok_ && streamed_);
    if (!ok_) {
      const std::string text = format_->error_text(head_.status, body_);
      return ctx->on_failure(status(errc::io_error, text), head_.status, &head_, false);
    }
    parser_.finish([this](sse_event&& e) { decoder_->on_event(e); });
    auto o = ctx->owner.lock();
    const std::int64_t now = o ? o->opt.time->now_ms() : 0;
    if (builder_.failed()) {
      // An overloaded_error event before any output is Anthropic's streaming form of 529:
      // nothing reached the user yet, so it is retried like the status.
      const bool overloaded = builder_.blocks() == 0 && builder_.error_message().find("verloaded") != std::string::npos;
      if (overloaded) return ctx->on_failure(status(errc::io_error, builder_.error_message()), 529, nullptr, false);
      return ctx->finish(status(errc::io_error, builder_.error_message()));
    }
    if (!decoder_->ended())
      return ctx->finish(status(errc::io_error, fmt::format("the stream from {} ended before its end event",
                                                            actors::model_label(call_.provider->id, call_.model->id))));
    ctx->on_message(builder_.finish(now));
  }

 private:
  std::shared_ptr<call_ctx> ctx_;
  const wire_format* format_;
  provider_call call_;
  assistant_builder builder_;
  std::unique_ptr<stream_decoder> decoder_;
  sse_parser parser_;
  http_response_head head_;
  std::string body_;
  bool ok_ = false, streamed_ = false;
};

void call_ctx::send() {
  auto o = owner.lock();
  if (!o) return finish(status(errc::cancelled, "the model runner stopped"));
  if (cancel->cancelled()) return finish(status(errc::cancelled, "the model call was cancelled"));
  const candidate& c = candidates[current];
  if (!c.provider)
    return next_candidate(fmt::format("provider {} is not configured (models.providers)", c.provider_id));
  const wire_format* format = find_wire_format(c.api);
  if (!format)
    return next_candidate(fmt::format("provider {} speaks {}, which has no runner here (known: {})", c.provider_id,
                                      c.api, known_wire_formats()));
  provider_call pc;
  pc.provider = c.provider;
  pc.model = &c.model;
  pc.api = c.api;
  pc.system_prompt = req->system_prompt;
  pc.messages = &context();
  pc.tools = o->opt.tools && !o->opt.tools->empty() ? &o->opt.tools->specs() : nullptr;
  pc.max_tokens = req->max_tokens > 0 && req->max_tokens < c.model.max_tokens ? req->max_tokens : c.model.max_tokens;
  if (pc.max_tokens == 0) pc.max_tokens = req->max_tokens;
  auto built = format->build(pc);
  if (!built.ok()) return finish(built.error().with_context("building the request for " + actors::model_label(c.provider_id, c.model_id)));
  http_request hr = std::move(*built);
  const std::int64_t timeout =
      c.provider->timeout_seconds > 0 ? c.provider->timeout_seconds * 1000 : o->opt.default_timeout_ms;
  hr.first_byte_timeout_ms = timeout;
  hr.idle_timeout_ms = timeout;
  std::function<void(std::string_view)> on_text;
  if (req->on_text) on_text = [r = req](std::string_view piece) { r->on_text(piece); };
  auto handler = std::make_shared<stream_handler>(shared_from_this(), format, pc, std::move(on_text));
  ++o->http_requests;
  ++model_calls;
  std::lock_guard lk(mu);
  if (finished) return;
  http = o->loop->start_call(std::move(hr), std::move(handler));
}

void call_ctx::on_failure(status st, long http_status, const http_response_head* head, bool streamed) {
  auto o = owner.lock();
  if (!o) return finish(status(errc::cancelled, "the model runner stopped"));
  const candidate& c = candidates[current];
  const std::string who = actors::model_label(c.provider_id, c.model_id);
  // What the runtime handles itself: an overflow (compact and retry), a failure midway.
  if (o->opt.is_overflow_error && o->opt.is_overflow_error(st.message())) return finish(st);
  if (streamed) return finish(st.with_context(who + " failed mid-stream"));
  const std::int64_t now = o->opt.time->now_ms();
  const call_failure failure =
      head ? call_failure::response(*head)
           : http_status ? call_failure{http_status, nullptr, errc::ok, false} : call_failure::transport(st.code(), false);
  const retry_decision d = o->retries_of_a_model->decide(attempt, failure, now);
  if (d.retry()) {
    ++o->retries;
    ++attempt;
    std::lock_guard lk(mu);
    if (finished) return;
    wait = o->opt.timers->at(now + d.delay_ms, [self = shared_from_this()] {
      {
        std::lock_guard lk2(self->mu);
        self->wait.reset();
      }
      self->send();
    });
    return;
  }
  // A 400 that is no overflow is the request's fault: another model would refuse it too.
  if (http_status == 400) return finish(st.with_context(who));
  next_candidate(fmt::format("{}: {}{}", who, st.message(), d.reason.empty() ? "" : " (" + d.reason + ")"));
}

void call_ctx::next_candidate(const std::string& reason) {
  auto o = owner.lock();
  if (current + 1 >= candidates.size()) return finish(status(errc::io_error, reason));
  const std::string from = actors::model_label(candidates[current].provider_id, candidates[current].model_id);
  ++current;
  attempt = 0;
  const std::string to = actors::model_label(candidates[current].provider_id, candidates[current].model_id);
  if (o) ++o->fallbacks;
  if (req->on_fallback) req->on_fallback(from, to, reason);
  // A turn's fallback is logged from its model.fallback event (runtime/logging.hpp); a memory
  // flush's or a summary's has no event, so it is said here.
  else spdlog::warn("model: {} call: {} failed, falling back to {}: {}", req->purpose, from, to, reason);
  send();
}

void call_ctx::on_message(bj::object message) {
  auto o = owner.lock();
  const bool wants_tools = o && o->opt.tools && !o->opt.tools->empty();
  const auto* stop = message.if_contains("stopReason");
  const bool tool_use = stop && stop->is_string() && stop->as_string() == "toolUse";
  if (!tool_use || !wants_tools || model_calls >= max_calls) return finish(std::move(message));
  run_tools(std::move(message));
}

void call_ctx::run_tools(bj::object assistant) {
  auto o = owner.lock();
  if (!o) return finish(status(errc::cancelled, "the model runner stopped"));
  std::vector<const bj::object*> calls;
  if (const auto* content = assistant.if_contains("content"); content && content->is_array())
    for (const auto& b : content->as_array())
      if (b.is_object() && b.as_object().contains("type") && b.as_object().at("type") == "toolCall")
        calls.push_back(&b.as_object());
  if (calls.empty()) return finish(std::move(assistant));
  struct gather {
    std::mutex mu;
    std::vector<std::optional<tool_result>> results;
    std::size_t left;
  };
  auto g = std::make_shared<gather>();
  g->results.resize(calls.size());
  g->left = calls.size();
  auto shared_assistant = std::make_shared<bj::object>(std::move(assistant));
  auto self = shared_from_this();
  // The last result to arrive carries the round on (from whichever thread it came).
  auto deliver = [g, self, shared_assistant](std::size_t i, tool_result r) {
    std::vector<tool_result> all;
    {
      std::lock_guard lk(g->mu);
      if (g->results[i]) return;  // a tool that answered twice
      g->results[i] = std::move(r);
      if (--g->left != 0) return;
      for (auto& x : g->results) all.push_back(std::move(*x));
    }
    self->after_tools(std::move(*shared_assistant), std::move(all));
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const bj::object& call = *calls[i];
    const std::string name = call.contains("name") && call.at("name").is_string() ? std::string(call.at("name").as_string()) : "";
    bj::object args = call.contains("arguments") && call.at("arguments").is_object() ? call.at("arguments").as_object()
                                                                                      : bj::object();
    ++o->tool_calls;
    const tool* t = o->opt.tools->find(name);
    if (!t) {
      deliver(i, tool_result::text("Tool " + name + " not found", true));
      continue;
    }
    t->execute(std::move(args), cancel, [deliver, i](tool_result r) { deliver(i, std::move(r)); });
  }
}

void call_ctx::after_tools(bj::object assistant, std::vector<tool_result> results) {
  auto o = owner.lock();
  if (!o) return finish(status(errc::cancelled, "the model runner stopped"));
  if (cancel->cancelled()) return finish(status(errc::cancelled, "the model call was cancelled"));
  const std::int64_t now = o->opt.time->now_ms();
  std::vector<bj::object> round;
  round.push_back(assistant);
  std::size_t i = 0;
  for (const auto& b : assistant.at("content").as_array()) {
    if (!b.is_object() || b.as_object().at("type") != "toolCall") continue;
    const auto& call = b.as_object();
    tool_result& r = results[i++];
    bj::object m;
    m["role"] = "toolResult";
    m["toolCallId"] = call.contains("id") ? call.at("id") : bj::value("");
    m["toolName"] = call.contains("name") ? call.at("name") : bj::value("");
    m["content"] = std::move(r.content);
    m["isError"] = r.is_error;
    m["timestamp"] = now;
    round.push_back(std::move(m));
  }
  // The round is whole: the runtime stores it before the next call starts.
  if (req->on_message)
    for (const auto& m : round) req->on_message(m);
  if (!messages) messages = req->messages;
  for (auto& m : round) {
    added.push_back(m);
    messages->push_back(std::move(m));
  }
  if (req->steering)
    for (auto& text : req->steering->take()) {
      bj::object user{{"role", "user"}, {"content", text}, {"timestamp", now}};
      added.push_back(user);
      messages->push_back(std::move(user));
    }
  if (req->precheck) {
    const precheck_answer a = req->precheck->check(added);
    if (a.what == precheck_answer::verdict::compact)
      return finish(status(errc::limit_exceeded,
                           fmt::format("context overflow: ~{} tokens after tool results, over the threshold of {}",
                                       a.context_tokens, a.threshold)));
    if (a.what == precheck_answer::verdict::truncate_tool_results) {
      // In the request only: the transcript keeps each result whole.
      const std::size_t first_added = messages->size() - added.size();
      for (std::size_t k = first_added; k < messages->size(); ++k) {
        auto& m = (*messages)[k].as_object();
        if (m.at("role") != "toolResult") continue;
        for (auto& block : m["content"].as_array()) {
          auto& bo = block.as_object();
          if (bo.contains("text") && bo.at("text").is_string() && bo.at("text").as_string().size() > a.max_tool_result_chars) {
            std::string t(bo.at("text").as_string().subview().substr(0, a.max_tool_result_chars));
            bo["text"] = t + "\n[truncated]";
          }
        }
      }
    }
  }
  attempt = 0;
  send();
}

}  // namespace

result<std::shared_ptr<provider_runner>> provider_runner::create(provider_runner_options options) {
  if (!options.time || !options.timers)
    return status(errc::invalid_argument, "provider_runner needs a clock and alarms (options.time, options.timers)");
  auto p = std::make_shared<impl>();
  p->opt = std::move(options);
  p->rng.seed(p->opt.jitter_seed ? p->opt.jitter_seed : std::random_device{}());
  retry_settings rs;
  rs.max_attempts = std::max(1, p->opt.models.retry_max_attempts);
  rs.max_delay_ms = p->opt.models.retry_max_delay_ms;
  p->retries_of_a_model.emplace(rs, [raw = p.get()] { return raw->jitter(); });
  if (p->opt.loop) {
    p->loop = p->opt.loop;
  } else {
    auto loop = http_loop::start();
    if (!loop.ok()) return loop.error();
    p->loop = std::shared_ptr<http_loop>(std::move(*loop));
  }
  return std::shared_ptr<provider_runner>(new provider_runner(std::move(p)));
}

provider_runner::provider_runner(std::shared_ptr<impl> p) : impl_(std::move(p)) {}

provider_runner::~provider_runner() {
  // In-flight calls hold only a weak reference to impl_: the loop's destructor (if this runner
  // owned the last reference) cancels them, and each completes with errc::cancelled.
  auto loop = std::move(impl_->loop);
  impl_.reset();
  loop.reset();
}

void provider_runner::start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                            std::shared_ptr<const cancellation> cancel) {
  ++impl_->calls;
  auto ctx = std::make_shared<call_ctx>();
  ctx->owner = impl_;
  ctx->req = request;
  ctx->done = std::move(done);
  ctx->cancel = std::move(cancel);
  ctx->max_calls = request->max_tool_iterations > 0 ? request->max_tool_iterations
                                                    : std::max(1, impl_->opt.models.max_tool_iterations);
  std::string provider = request->provider, model = request->model;
  if (provider.empty() || model.empty()) {
    // The runner's default: the configured primary.
    if (!impl_->opt.models.defaults.primary.empty()) {
      const auto& ref = impl_->opt.models.defaults.primary;
      const auto slash = ref.find('/');
      if (provider.empty()) provider = slash == std::string::npos ? "" : ref.substr(0, slash);
      if (model.empty()) model = slash == std::string::npos ? ref : ref.substr(slash + 1);
    }
  }
  ctx->candidates.push_back(impl_->resolve(provider, model, request->context_window));
  for (const auto& f : request->fallbacks) {
    const auto slash = f.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    ctx->candidates.push_back(impl_->resolve(f.substr(0, slash), f.substr(slash + 1), 0));
  }
  // A weak reference: the cancellation outlives nothing of the call.
  ctx->cancel->on_cancel([weak = std::weak_ptr<call_ctx>(ctx)] {
    auto c = weak.lock();
    if (!c) return;
    std::optional<http_loop::call_id> http;
    std::optional<alarms::id> wait;
    {
      std::lock_guard lk(c->mu);
      http = c->http;
      wait = c->wait;
      c->wait.reset();
    }
    auto o = c->owner.lock();
    if (http && o) o->loop->cancel(*http);  // its on_done completes the call
    if (wait && o) o->opt.timers->cancel(*wait);
    if (!http) c->finish(status(errc::cancelled, "the model call was cancelled"));
  });
  ctx->send();
}

provider_runner::counters provider_runner::stats() const {
  counters c;
  c.calls = impl_->calls;
  c.http_requests = impl_->http_requests;
  c.retries = impl_->retries;
  c.fallbacks = impl_->fallbacks;
  c.tool_calls = impl_->tool_calls;
  c.failures = impl_->failures;
  return c;
}

http_loop& provider_runner::loop() { return *impl_->loop; }

}  // namespace sessionrt::providers
