// provider_call_tool: ONE model call through the built-in provider_runner, the counterpart of
// tests/providers/piai_stream.mjs (which makes it through the reference client pi-ai), for
// tests/providers/compare_piai.sh.
//
//   provider_call_tool --api A --base-url U --model M --key K --context FILE.json [options]
//     FILE: {systemPrompt?, messages:[pi messages], tools?:[{name, description, parameters}]}
//     Prints the final AssistantMessage as one JSON line on stdout (exit 0); a failed call prints
//     {"error":"<message>"} (exit 1); usage errors exit 2.
//     Options as piai_stream.mjs: --provider P (default "fake"), --reasoning, --max-tokens N,
//     --context-window N (default 200000), --model-max-tokens N (default 8192), --timeout-ms N,
//     --max-retries N, --headers JSON (extra request headers), --simple off (accepted: the runner
//     always calls with the thinking level off, as pi's agent calls streamSimple then).
//     Own option: --cost JSON  {input, output, cacheRead, cacheWrite} per million tokens (default
//     all 0, as piai_stream.mjs's model).
// No tool loop: the context's tools are registered (so the request offers them) with an execute
// that is never expected to run, and the request allows one model call (max_tool_iterations =
// 1), so the runner completes with the first assistant message, tool calls and all. The model
// offers text and image input, as piai_stream.mjs's model does.
#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "actors/session/model_catalog_settings.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/model_runner.hpp"
#include "runtime/providers/provider_runner.hpp"
#include "runtime/providers/tools.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

[[noreturn]] void usage(const std::string& msg) {
  std::cerr << "provider_call_tool: " << msg << "\n(see the header comment of provider_call_tool.cpp)\n";
  std::exit(2);
}

[[noreturn]] void fail(const std::string& msg) {
  bj::object o;
  o["error"] = msg;
  std::cout << json::to_compact(o) << std::endl;
  std::exit(1);
}

std::int64_t to_int(const std::string& flag, const std::string& v) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    usage("bad number for " + flag + ": " + v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string api, base_url, model_id, key, context_file, provider_id = "fake", headers_json, cost_json;
  bool reasoning = false;
  std::int64_t max_tokens = 0, context_window = 200000, model_max_tokens = 8192, timeout_ms = 0, max_retries = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto v = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + k);
      return argv[++i];
    };
    if (k == "--api") api = v();
    else if (k == "--base-url") base_url = v();
    else if (k == "--model") model_id = v();
    else if (k == "--key") key = v();
    else if (k == "--context") context_file = v();
    else if (k == "--provider") provider_id = v();
    else if (k == "--reasoning") reasoning = true;
    else if (k == "--max-tokens") max_tokens = to_int(k, v());
    else if (k == "--context-window") context_window = to_int(k, v());
    else if (k == "--model-max-tokens") model_max_tokens = to_int(k, v());
    else if (k == "--timeout-ms") timeout_ms = to_int(k, v());
    else if (k == "--max-retries") max_retries = to_int(k, v());
    else if (k == "--headers") headers_json = v();
    else if (k == "--cost") cost_json = v();
    else if (k == "--simple") {
      if (v() != "off") usage("only --simple off is supported (the runner calls with the thinking level off)");
    } else usage("unknown argument " + k);
  }
  if (api.empty() || base_url.empty() || model_id.empty()) usage("--api, --base-url and --model are required");
  if (context_file.empty()) usage("--context is required");

  // The context file.
  std::ifstream in(context_file, std::ios::binary);
  if (!in) usage("cannot read " + context_file);
  std::stringstream text;
  text << in.rdbuf();
  auto ctx = json::parse_object(text.str());
  if (!ctx.ok()) usage(context_file + ": " + ctx.error().message());

  auto request = std::make_shared<model_request>();
  request->session_key = "provider_call_tool";
  request->session_id = "provider_call_tool";
  request->provider = provider_id;
  request->model = model_id;
  request->api = api;
  request->context_window = context_window;
  request->max_tokens = max_tokens;
  request->max_tool_iterations = 1;  // one model call: no tool loop
  request->system_prompt = std::string(json::get_string(*ctx, "systemPrompt").value_or(""));
  if (const auto* msgs = json::get_array(*ctx, "messages")) {
    for (const auto& m : *msgs) {
      if (!m.is_object()) usage(context_file + ": a message is not an object");
      bj::object msg = m.as_object();
      if (!msg.contains("timestamp")) msg["timestamp"] = 0;  // as piai_stream.mjs
      request->messages.push_back(std::move(msg));
    }
  }

  // The context's tools, offered but never run.
  std::shared_ptr<providers::tool_registry> tools;
  if (const auto* specs = json::get_array(*ctx, "tools"); specs && !specs->empty()) {
    tools = std::make_shared<providers::tool_registry>();
    for (const auto& s : *specs) {
      if (!s.is_object()) usage(context_file + ": a tool is not an object");
      providers::tool t;
      t.spec.name = std::string(json::get_string(s.as_object(), "name").value_or(""));
      t.spec.description = std::string(json::get_string(s.as_object(), "description").value_or(""));
      if (const auto* p = json::get_object(s.as_object(), "parameters")) t.spec.parameters = *p;
      t.execute = [name = t.spec.name](bj::object, std::shared_ptr<const cancellation>,
                                       std::function<void(providers::tool_result)> done) {
        std::cerr << "provider_call_tool: tool " << name << " ran, which one model call must not do\n";
        done(providers::tool_result::text("provider_call_tool: no tool runs here", true));
      };
      if (auto st = tools->add(std::move(t)); !st.ok()) usage(context_file + ": tool: " + st.message());
    }
  }

  // The provider and its model, as piai_stream.mjs's hand-made Model.
  actors::provider_model model;
  model.id = model_id;
  model.name = model_id;
  model.context_window = context_window;
  model.max_tokens = model_max_tokens;
  model.reasoning = reasoning;
  model.input = {"text", "image"};
  if (!cost_json.empty()) {
    auto c = json::parse_object(cost_json);
    if (!c.ok()) usage("--cost: " + c.error().message());
    model.cost.input = json::get_number(*c, "input").value_or(0);
    model.cost.output = json::get_number(*c, "output").value_or(0);
    model.cost.cache_read = json::get_number(*c, "cacheRead").value_or(0);
    model.cost.cache_write = json::get_number(*c, "cacheWrite").value_or(0);
  }
  actors::provider_config provider;
  provider.id = provider_id;
  provider.base_url = base_url;
  provider.api = api;
  provider.api_key = key;
  provider.api_key_source = key.empty() ? "" : "literal";
  if (timeout_ms > 0) provider.timeout_seconds = (timeout_ms + 999) / 1000;
  if (!headers_json.empty()) {
    auto h = json::parse_object(headers_json);
    if (!h.ok()) usage("--headers: " + h.error().message());
    for (const auto& [name, value] : *h)
      if (value.is_string()) provider.headers.emplace_back(std::string(name), std::string(value.as_string()));
  }
  provider.models.push_back(model);

  providers::provider_runner_options o;
  o.models.providers.push_back(provider);
  o.models.defaults.primary = provider_id + "/" + model_id;
  o.models.max_tool_iterations = 1;
  if (max_retries >= 0) o.models.retry_max_attempts = static_cast<int>(max_retries) + 1;
  o.tools = tools;
  o.time = &storage::real_clock();
  o.timers = &storage::real_alarms();
  auto runner = providers::provider_runner::create(std::move(o));
  if (!runner.ok()) fail("starting the provider runner: " + runner.error().message());

  std::promise<result<bj::object>> reply;
  auto replied = reply.get_future();
  auto done = std::make_shared<model_completion>(
      [&reply](result<bj::object> r) { reply.set_value(std::move(r)); });
  auto cancel = std::make_shared<cancellation>();
  (*runner)->start(request, done, cancel);
  if (replied.wait_for(std::chrono::minutes(5)) != std::future_status::ready) {
    cancel->cancel();
    fail("no completion within 5 minutes");
  }
  auto r = replied.get();
  if (!r.ok()) fail(r.error().message());
  std::cout << json::to_compact(*r) << std::endl;
  runner->reset();
  return 0;
}
