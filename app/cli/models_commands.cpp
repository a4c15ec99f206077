// `sessionrt models list|status [--config FILE] [--json] [--probe]`, as OpenClaw's `openclaw
// models` verbs: the configured catalog (every model of models.providers with its window, API
// and aliases, and which is the default and which the fallbacks), and whether the default's
// key resolved; --probe sends each of the default and its fallbacks one tiny request and prints
// its latency and usage (or the provider's error).
#include <fmt/format.h>

#include <chrono>
#include <future>
#include <memory>
#include <ostream>

#include "actors/session/session_model.hpp"
#include "app/cli/command_line.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "runtime/config.hpp"
#include "runtime/model_setup.hpp"

namespace sessionrt::runtime {
namespace {
namespace bj = boost::json;

struct models_args {
  offline_options o;
  bool json = false;
  bool probe = false;
};

std::string tags_of(const actors::session_model& d, const std::string& ref) {
  std::string tags;
  if (actors::model_label(d.provider, d.model) == ref) tags = "default";
  for (std::size_t i = 0; i < d.fallbacks.size(); ++i)
    if (d.fallbacks[i] == ref) tags += fmt::format("{}fallback#{}", tags.empty() ? "" : ",", i + 1);
  return tags;
}

void list_command(const models_args& a, cli_state& st) {
  auto ctx = open_offline(st.io, a.o, false);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const auto& s = ctx->settings;
  const actors::session_model d = actors::default_model(s);
  bj::array rows;
  for (const auto& p : s.models.providers)
    for (const auto& m : p.models) {
      const std::string ref = actors::model_label(p.id, m.id);
      bj::array aliases, input;
      for (const auto& x : m.aliases) aliases.emplace_back(x);
      for (const auto& x : m.input) input.emplace_back(x);
      rows.push_back(bj::object{{"ref", ref},
                                {"name", m.name.empty() ? m.id : m.name},
                                {"api", actors::api_of(p, &m)},
                                {"contextWindow", m.effective_window()},
                                {"maxTokens", m.max_tokens},
                                {"reasoning", m.reasoning},
                                {"input", std::move(input)},
                                {"aliases", std::move(aliases)},
                                {"tags", tags_of(d, ref)}});
    }
  if (a.json) {
    *st.io.out << json::to_pretty(bj::object{{"models", rows}}) << "\n";
    st.exit_code = 0;
    return;
  }
  if (rows.empty()) {
    *st.io.out << "no models configured (models.providers.<id>.models[]); the simulated model answers\n";
    st.exit_code = 0;
    return;
  }
  *st.io.out << fmt::format("{:<36} {:<22} {:>9} {:>8}  {:<10} {}\n", "Model", "API", "Window", "MaxTok", "Input",
                            "Tags / aliases");
  for (const auto& v : rows) {
    const auto& r = v.as_object();
    std::string input, extra(r.at("tags").as_string());
    for (const auto& x : r.at("input").as_array()) input += (input.empty() ? "" : "+") + std::string(x.as_string());
    for (const auto& x : r.at("aliases").as_array())
      extra += (extra.empty() ? "alias:" : " alias:") + std::string(x.as_string());
    *st.io.out << fmt::format("{:<36} {:<22} {:>9} {:>8}  {:<10} {}\n", std::string(r.at("ref").as_string()),
                              std::string(r.at("api").as_string()), r.at("contextWindow").as_int64(),
                              r.at("maxTokens").as_int64(), input, extra);
  }
  *st.io.out << fmt::format("{} model(s)\n", rows.size());
  st.exit_code = 0;
}

// One tiny request to provider/model, waited for (this is a command, not an actor).
bj::object probe(providers::provider_runner& runner, const actors::runtime_settings& s, const std::string& provider,
                 const std::string& model) {
  auto req = std::make_shared<model_request>();
  req->session_key = "probe";
  req->purpose = "probe";
  req->provider = provider;
  req->model = model;
  req->max_tokens = 16;
  req->max_tool_iterations = 1;
  req->messages.push_back(bj::object{{"role", "user"}, {"content", "Reply with the single word OK."}});
  auto promise = std::make_shared<std::promise<result<bj::object>>>();
  auto future = promise->get_future();
  auto done = std::make_shared<model_completion>([promise](result<bj::object> r) { promise->set_value(std::move(r)); });
  auto cancel = std::make_shared<cancellation>();
  const auto started = std::chrono::steady_clock::now();
  runner.start(req, done, cancel);
  const actors::provider_config* p = actors::find_provider(s.models.providers, provider);
  const auto limit = std::chrono::seconds(p && p->timeout_seconds > 0 ? p->timeout_seconds + 5 : 65);
  bj::object out{{"ref", actors::model_label(provider, model)}};
  if (future.wait_for(limit) != std::future_status::ready) {
    cancel->cancel();
    future.wait();
  }
  auto r = future.get();
  out["latencyMs"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (!r.ok()) {
    out["ok"] = false;
    out["error"] = r.error().message();
    return out;
  }
  out["ok"] = true;
  if (auto* u = r->if_contains("usage")) out["usage"] = *u;
  if (auto* m = r->if_contains("model")) out["answeredBy"] = *m;
  return out;
}

void status_command(const models_args& a, cli_state& st) {
  auto ctx = open_offline(st.io, a.o, false);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const auto& s = ctx->settings;
  const actors::session_model d = actors::default_model(s);
  bj::object out;
  out["default"] = d.model.empty() ? bj::value(nullptr) : bj::value(actors::model_label(d.provider, d.model));
  bj::array lines;
  std::vector<std::pair<std::string, std::string>> refs;
  if (!d.model.empty()) refs.emplace_back(d.provider, d.model);
  for (const auto& f : d.fallbacks) {
    const auto slash = f.find('/');
    refs.emplace_back(f.substr(0, slash), slash == std::string::npos ? "" : f.substr(slash + 1));
  }
  for (const auto& [p, m] : refs) lines.emplace_back(describe_model(s, p, m));
  out["models"] = lines;
  int failures = 0;
  if (a.probe && !refs.empty()) {
    auto setup = runner_for_config(s);
    if (!setup.ok()) return fail(st, setup.error());
    bj::array probes;
    if (setup->runner)
      for (const auto& [p, m] : refs) {
        auto one = probe(*setup->runner, s, p, m);
        if (!one.at("ok").as_bool()) ++failures;
        probes.push_back(std::move(one));
      }
    out["probes"] = std::move(probes);
  }
  if (a.json) {
    *st.io.out << json::to_pretty(out) << "\n";
  } else {
    if (d.model.empty())
      *st.io.out << "no default model (agents.defaults.model.primary): the simulated model answers\n";
    for (const auto& l : lines) *st.io.out << std::string(l.as_string()) << "\n";
    if (const auto* probes = out.if_contains("probes"))
      for (const auto& v : probes->as_array()) {
        const auto& p = v.as_object();
        if (p.at("ok").as_bool()) {
          const auto& u = p.at("usage").as_object();
          double cost = 0;
          if (const auto* c = u.if_contains("cost"); c && c->is_object() && c->as_object().contains("total"))
            cost = c->as_object().at("total").to_number<double>();
          *st.io.out << fmt::format("probe {}: ok in {} ms, usage input {} output {} (cost {:.6f})\n",
                                    std::string(p.at("ref").as_string()), p.at("latencyMs").as_int64(),
                                    u.contains("input") ? u.at("input").to_number<std::int64_t>() : 0,
                                    u.contains("output") ? u.at("output").to_number<std::int64_t>() : 0, cost);
        } else {
          *st.io.out << fmt::format("probe {}: FAILED in {} ms: {}\n", std::string(p.at("ref").as_string()),
                                    p.at("latencyMs").as_int64(), std::string(p.at("error").as_string()));
        }
      }
  }
  st.exit_code = failures ? 1 : 0;
}

}  // namespace

void add_models_commands(CLI::App& app, cli_state& st) {
  auto* c = app.add_subcommand("models", "The configured models (models.providers, agents.defaults.model)");
  c->require_subcommand(1);
  auto la = std::make_shared<models_args>();
  auto* list = c->add_subcommand("list", "Every configured model: API, window, max tokens, input, aliases; which is "
                                         "the default and which the fallbacks");
  add_offline_options(list, la->o, false);
  list->add_flag("--json", la->json, "Print {models:[...]} as JSON");
  list->callback([la, &st] { list_command(*la, st); });
  auto sa = std::make_shared<models_args>();
  auto* status = c->add_subcommand("status", "The default model and its fallbacks: endpoint, API, where each key came "
                                             "from; exit 1 when a probe failed");
  add_offline_options(status, sa->o, false);
  status->add_flag("--json", sa->json, "Print as JSON");
  status->add_flag("--probe", sa->probe,
                   "Send each of the default and its fallbacks one tiny request (costs a few tokens) and print latency "
                   "and usage");
  status->callback([sa, &st] { status_command(*sa, st); });
}

}  // namespace sessionrt::runtime
