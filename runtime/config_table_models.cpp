// config_table_models: the key tables of models.* and agents.* (providers and their models, the
// agents' model choices and system prompts, the legacy catalog) and the checks that need the
// whole file (finish_models). OpenClaw's custom-providers shape
// (../shared/reference/provider-apis.md "OpenClaw's model config").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>

#include "runtime/config_table_load.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::runtime::config_tables {
namespace {

// ---- models.providers, agents.*.model, agents.*.systemPrompt ------------------------------------

// The APIs this build has runners for, and the other names OpenClaw accepts (loaded, warned about).
constexpr std::string_view runnable_apis[] = {"openai-completions", "openai-responses", "anthropic-messages",
                                              "google-generative-ai"};
constexpr std::string_view other_openclaw_apis[] = {"azure-openai-responses", "google-vertex",
                                                    "bedrock-converse-stream", "mistral-conversations",
                                                    "ollama", "github-copilot"};
// Providers a ref may name without a models.providers entry: the runners know their public
// endpoints (OpenClaw's models.mode "merge" keeps its built-in catalog; "replace" drops it).
constexpr std::string_view builtin_provider_ids[] = {"anthropic", "google", "openai"};

bool listed_in(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(std::span<const std::string> texts, std::string_view separator) {
  std::string out;
  for (const auto& text : texts) {
    if (!out.empty()) out += separator;
    out += text;
  }
  return out;
}

// What a value is, never what it says: for keys that may hold secrets.
std::string describe_kind(const bj::value& value) {
  switch (value.kind()) {
    case bj::kind::string:
      return "a string";
    case bj::kind::bool_:
      return "a boolean";
    case bj::kind::null:
      return "null";
    case bj::kind::object:
      return "an object";
    case bj::kind::array:
      return "an array";
    default:
      return "a number";
  }
}

bool is_env_name(std::string_view name) {
  auto start = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && start(name[0]) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

// "${NAME}" and nothing else.
bool is_env_reference(std::string_view text) {
  return text.size() > 3 && text.substr(0, 2) == "${" && text.back() == '}' &&
         is_env_name(text.substr(2, text.size() - 3));
}

struct resolved_secret {
  std::string value;
  std::string source;  // "${NAME}" when the whole text is one reference, else "literal"
};

constexpr std::string_view secret_note =
    "a string in which each ${NAME} (NAME = [A-Z_][A-Z0-9_]*) is that environment variable's value ($${ = a "
    "literal ${); an unset or empty variable is an error naming it and the key (`config key "
    "models.providers.openai.apiKey: environment variable OPENAI_API_KEY is not set`); errors, warnings and "
    "`config show` never show the value";

// A string where each ${NAME} (NAME = [A-Z_][A-Z0-9_]*) is replaced by that environment
// variable and $${ is a literal ${, as OpenClaw substitutes config strings. An unset or empty
// variable is an error naming it; neither errors nor warnings ever show the value.
result<resolved_secret> read_secret(const bj::value& value, const std::string& path, const load_state& state) {
  if (!value.is_string())
    return config_key_error(path, "expected a string (a literal, or \"${VAR}\" for an environment variable), got " +
                                      describe_kind(value));
  std::string_view text = value.get_string();
  resolved_secret out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "$${") == 0) {
      out.value += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") == 0) {
      std::size_t end = text.find('}', i + 2);
      std::string_view name = end == std::string_view::npos ? std::string_view() : text.substr(i + 2, end - i - 2);
      if (is_env_name(name)) {
        std::optional<std::string> found = state.env ? state.env(name) : std::nullopt;
        if (!found) return config_key_error(path, fmt::format("environment variable {} is not set", name));
        if (found->empty()) return config_key_error(path, fmt::format("environment variable {} is empty", name));
        out.value += *found;
        i = end + 1;
        continue;
      }
    }
    out.value += text[i++];
  }
  out.source = is_env_reference(text) ? std::string(text) : "literal";
  return out;
}

// A secret as `config show` prints it: its "${VAR}", never its value.
bj::value secret_json(std::string_view source) {
  if (is_env_reference(source)) return bj::value(source);
  return "<redacted>";
}

// Header names whose values are credentials: never printed.
bool is_secret_header(std::string_view name) {
  std::string lower = ascii_lower_trimmed(name);
  for (std::string_view word : {"auth", "token", "key", "secret", "cookie", "password", "credential"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

std::string api_note() {
  std::string runnable, other;
  for (auto a : runnable_apis) runnable += (runnable.empty() ? "" : " / ") + std::string(a);
  for (auto a : other_openclaw_apis) other += (other.empty() ? "" : ", ") + std::string(a);
  return runnable + "; OpenClaw's " + other + " load with a warning (no runner in this build); anything else is an error";
}

status read_api(const bj::value& value, const std::string& path, std::string& target, load_state& state) {
  auto name = read_string(value, path);
  if (!name.ok()) return std::move(name).take_error();
  if (!listed_in(runnable_apis, *name)) {
    if (!listed_in(other_openclaw_apis, *name))
      return config_key_error(path,
                              "expected one of \"openai-completions\", \"openai-responses\", \"anthropic-messages\", "
                              "\"google-generative-ai\", got " +
                                  describe_json_value(value));
    state.warnings.push_back(
        fmt::format("config key {}: this build has no runner for api \"{}\" (it runs openai-completions, "
                    "openai-responses, anthropic-messages and google-generative-ai); calls to it will fail",
                    path, *name));
  }
  target = std::move(*name);
  return {};
}

// The `api` key of a provider or of one of its models ("" = unset: not shown).
template <class T>
row_of<T> api_row(std::string T::*field, std::string meaning) {
  return keys<T>::field("api", field, text{}, std::move(meaning))
      .read_with([field](const bj::value& v, const std::string& p, T& t, load_state& st) {
        return read_api(v, p, t.*field, st);
      })
      .omit_if_empty()
      .typed("api", api_note());
}

const table<actors::model_cost>& model_cost_table() {
  using k = keys<actors::model_cost>;
  using T = actors::model_cost;
  static const table<T> t{"", "", {
      k::field("input", &T::input, number{0}, "per million input tokens"),
      k::field("output", &T::output, number{0}, "per million output tokens"),
      k::field("cacheRead", &T::cache_read, number{0}, "per million tokens read from the cache"),
      k::field("cacheWrite", &T::cache_write, number{0}, "per million tokens written to the cache"),
  }};
  return t;
}

// OpenClaw documents many more compat keys: the others are unknown-key warnings, not errors.
const table<actors::model_compat>& model_compat_table() {
  using k = keys<actors::model_compat>;
  using T = actors::model_compat;
  static const table<T> t{"", "", {
      k::field("supportsUsageInStreaming", &T::supports_usage_in_streaming, boolean{},
               "unset: detected from the base URL"),
      k::field("maxTokensField", &T::max_tokens_field,
               one_of<std::string>{{"max_tokens", "max_completion_tokens"}, nullptr,
                                   [](const std::string& s) { return s; }},
               "the request field of the output limit (\"\" = detected from the base URL)")
          .omit_if_empty(),
      k::field("supportsDeveloperRole", &T::supports_developer_role, boolean{}, "unset: detected from the base URL"),
  }};
  return t;
}

status read_model_input(const bj::value& value, const std::string& path, std::vector<std::string>& target) {
  auto kinds = read_string_list(value, path);
  if (!kinds.ok()) return std::move(kinds).take_error();
  for (std::size_t i = 0; i < kinds->size(); ++i)
    if ((*kinds)[i] != "text" && (*kinds)[i] != "image")
      return config_key_error(item_key_path(path, i), "expected \"text\" or \"image\", got " +
                                                          describe_json_value(value.get_array()[i]));
  target = std::move(*kinds);
  return {};
}

const table<actors::provider_model>& provider_model_table() {
  using k = keys<actors::provider_model>;
  using T = actors::provider_model;
  static const table<T> t{"", "", {
      k::field("id", &T::id, text{true}, "the id the API knows, once per provider (ignoring case)")
          .required("the id the API knows, e.g. \"gpt-4o\""),
      k::field("name", &T::name, text{}, "display name (\"\" = id)").omit_if_empty(),
      api_row(&T::api, "this model's api (unset: the provider's)"),
      k::field("contextWindow", &T::context_window, whole{1}, "the model's window, tokens"),
      k::field("contextTokens", &T::context_tokens, whole{1}, "caps the effective window"),
      k::field("maxTokens", &T::max_tokens, whole{0}, "0 = unknown: no max field is sent"),
      k::field("reasoning", &T::reasoning, boolean{}, "a reasoning model"),
      k::field("input", &T::input, strings{}, "each \"text\" or \"image\"")
          .read_with([](const bj::value& v, const std::string& p, T& t, load_state&) {
            return read_model_input(v, p, t.input);
          }),
      k::nested("cost", &T::cost, model_cost_table(), "in the provider's currency"),
      k::nested("compat", &T::compat, model_compat_table(), "provider quirks (other compat keys: unknown-key warnings)"),
  }};
  return t;
}

// models[]: each id once per provider (compared case-insensitively, as refs are).
status read_provider_models(const bj::value& value, const std::string& path, std::vector<actors::provider_model>& models,
                            load_state& state) {
  models.clear();
  std::map<std::string, std::string> path_of_id;
  return read_items(value, path, models, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::provider_model model;
    SRT_RETURN_IF_ERROR(config_table::read_keys(item, item_path, provider_model_table(), model, state));
    SRT_RETURN_IF_ERROR(config_table::check_required(provider_model_table(), model, item_path));
    std::string id_path = child_key_path(item_path, "id");
    if (auto seen = path_of_id.find(ascii_lower_trimmed(model.id)); seen != path_of_id.end())
      return config_key_error(id_path, fmt::format("model \"{}\" is already listed at {}", model.id, seen->second));
    path_of_id.emplace(ascii_lower_trimmed(model.id), id_path);
    list.push_back(std::move(model));
    return status{};
  });
}

status read_headers(const bj::value& value, const std::string& path,
                    std::vector<std::pair<std::string, std::string>>& headers, load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of header name -> value, got " + describe_kind(value));
  headers.clear();
  std::map<std::string, std::string> path_of_name;
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    std::string name = ascii_lower_trimmed(member.key());
    if (name.empty()) return config_key_error(member_path, "a header name must not be empty");
    if (auto seen = path_of_name.find(name); seen != path_of_name.end())
      return config_key_error(member_path, "names the same header as " + seen->second +
                                               " (header names are compared ignoring case)");
    path_of_name.emplace(name, member_path);
    if (member.value().is_null()) continue;
    auto secret = read_secret(member.value(), member_path, state);
    if (!secret.ok()) return std::move(secret).take_error();
    headers.emplace_back(std::string(member.key()), std::move(secret->value));
  }
  return {};
}

const table<actors::provider_config>& provider_table() {
  using k = keys<actors::provider_config>;
  using T = actors::provider_config;
  static const table<T> t{"", "", {
      k::field("baseUrl", &T::base_url, text{},
               "\"\" = the API's public endpoint (a provider other than anthropic / google / openai: warning)"),
      k::custom(
           "apiKey", "secret", "shown as its \"${VAR}\", else \"<redacted>\"",
           [](const bj::value& v, const std::string& p, T& t, load_state& st) -> status {
             auto secret = read_secret(v, p, st);
             if (!secret.ok()) return std::move(secret).take_error();
             t.api_key = std::move(secret->value);
             t.api_key_source = std::move(secret->source);
             return {};
           },
           [](const T& p) -> std::optional<bj::value> {
             if (p.api_key.empty() && p.api_key_source.empty()) return std::nullopt;
             return secret_json(p.api_key_source);
           })
          .noted(std::string(secret_note)),
      api_row(&T::api, "unset with a baseUrl: \"openai-completions\""),
      k::custom(
           "headers", "{name: secret}",
           "extra request headers, file order; names once ignoring case; credential-like ones (auth, token, key, "
           "secret, cookie, password, credential) shown as \"<redacted>\"",
           [](const bj::value& v, const std::string& p, T& t, load_state& st) {
             return read_headers(v, p, t.headers, st);
           },
           [](const T& p) -> std::optional<bj::value> {
             bj::object headers;
             for (const auto& [name, value] : p.headers) headers[name] = is_secret_header(name) ? secret_json("") : bj::value(value);
             return bj::value(std::move(headers));
           }),
      k::field("timeoutSeconds", &T::timeout_seconds, whole{0}, "0 = the runner's default"),
      k::custom(
           "models", "array", "the provider's models",
           [](const bj::value& v, const std::string& p, T& t, load_state& st) {
             return read_provider_models(v, p, t.models, st);
           },
           [](const T& p) -> std::optional<bj::value> {
             bj::array models;
             for (const auto& m : p.models) models.emplace_back(config_table::write_object(provider_model_table(), m));
             return bj::value(std::move(models));
           })
          .documents(provider_model_table()),
  }};
  return t;
}

// models.providers: any provider id (one word without "/", since refs are "provider/model"),
// each once ignoring case; kept in file order.
status read_providers(const bj::value& value, const std::string& path, std::vector<actors::provider_config>& providers,
                      load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of provider id -> provider, got " + describe_json_value(value));
  providers.clear();
  std::map<std::string, std::string> path_of_id;
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    std::string_view key = member.key();
    std::string id = ascii_lower_trimmed(key);
    if (key.empty() || key.find_first_of("/ \t\n\r\f\v") != std::string_view::npos)
      return config_key_error(member_path,
                              "a provider id must be one word without \"/\" (model refs are \"provider/model\")");
    if (auto seen = path_of_id.find(id); seen != path_of_id.end())
      return config_key_error(member_path, "names the same provider as " + seen->second +
                                               " (provider ids are compared ignoring case)");
    path_of_id.emplace(id, member_path);
    if (member.value().is_null()) continue;
    actors::provider_config provider;
    provider.id = std::string(member.key());
    SRT_RETURN_IF_ERROR(config_table::read_keys(member.value(), member_path, provider_table(), provider, state));
    if (provider.api.empty() && !provider.base_url.empty()) provider.api = "openai-completions";
    if (provider.base_url.empty() && !listed_in(builtin_provider_ids, id))
      state.warnings.push_back(fmt::format(
          "config key {}: no baseUrl, and \"{}\" is not a provider whose endpoint this build knows (anthropic, "
          "google, openai); calls to it will fail",
          member_path, provider.id));
    providers.push_back(std::move(provider));
  }
  return {};
}

const table<actors::model_choice>& model_choice_table() {
  using k = keys<actors::model_choice>;
  using T = actors::model_choice;
  static const table<T> t{
      "model choice",
      "A model choice is a ref (the primary), or this object. A ref is \"provider/model\" (split at the first "
      "\"/\") or an alias. Its provider must be a key of models.providers, a built-in provider (anthropic, google, "
      "openai; not with models.mode \"replace\") or the provider of model.provider / models.catalog[] (else an "
      "error listing the known ones); a model not listed under a configured provider is a warning.",
      {
          k::field("primary", &T::primary, text{true}, "the model tried first").omit_if_empty(),
          k::field("fallbacks", &T::fallbacks, strings{}, "tried in order when the primary fails"),
      }};
  return t;
}

// "provider/model" (the primary), or {primary, fallbacks}; every ref is checked after the walk.
status read_model_choice(const bj::value& value, const std::string& path, actors::model_choice& target,
                         load_state& state) {
  actors::model_choice choice;
  if (value.is_string()) {
    SRT_RETURN_IF_ERROR(assign(choice.primary, read_non_empty_string(value, path)));
    state.model_refs.push_back({path, choice.primary});
  } else if (value.is_object()) {
    SRT_RETURN_IF_ERROR(config_table::read_keys(value, path, model_choice_table(), choice, state));
    if (!choice.primary.empty()) state.model_refs.push_back({child_key_path(path, "primary"), choice.primary});
    for (std::size_t i = 0; i < choice.fallbacks.size(); ++i)
      state.model_refs.push_back({item_key_path(child_key_path(path, "fallbacks"), i), choice.fallbacks[i]});
  } else {
    return config_key_error(path, "expected \"provider/model\" or {\"primary\": ..., \"fallbacks\": [...]}, got " +
                                      describe_json_value(value));
  }
  target = std::move(choice);
  return {};
}

// agents.defaults.model / agents.list[].model: shown while it names a model.
template <class T, class Get>
row_of<T> model_choice_row(Get get, std::string meaning, bool defaults) {
  return keys<T>::nested("model", get, model_choice_table(), std::move(meaning))
      .read_with([get, defaults](const bj::value& v, const std::string& p, T& t, load_state& st) {
        if (defaults) st.defaults_model_set = true;
        return read_model_choice(v, p, std::invoke(get, t), st);
      })
      .write_with([get](const T& t) -> std::optional<bj::value> {
        const actors::model_choice& choice = std::invoke(get, t);
        if (choice.empty()) return std::nullopt;
        return bj::value(config_table::write_object(model_choice_table(), choice));
      });
}

const table<std::string>& model_entry_table() {
  static const table<std::string> t{"", "", {
      keys<std::string>::field("alias", self(), text{},
                               "a one-word name of that model (`/new <alias>`, refs), unique with the catalog's "
                               "aliases; a ref naming no model of models.providers: warning"),
  }};
  return t;
}

// agents.defaults.models: "provider/model" -> {alias}; the aliases are given to their models
// once models.providers is read.
status read_model_entries(const bj::value& value, const std::string& path, load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of \"provider/model\" -> {\"alias\": ...}, got " +
                                      describe_json_value(value));
  for (const auto& member : value.get_object()) {
    if (member.value().is_null()) continue;
    std::string member_path = child_key_path(path, member.key());
    std::string alias;
    SRT_RETURN_IF_ERROR(config_table::read_keys(member.value(), member_path, model_entry_table(), alias, state));
    if (!ascii_trimmed(alias).empty())
      state.aliases.push_back({child_key_path(member_path, "alias"), std::string(member.key()), ascii_trimmed(alias)});
  }
  return {};
}

struct prompt_file {
  std::string file;
};

const table<prompt_file>& prompt_file_table() {
  static const table<prompt_file> t{
      "prompt",
      "A prompt is its text (a string), or this object: the file is read at load (at most 1 MiB), relative to "
      "the config file's directory (\"~/\" = $HOME); a file that cannot be read is an error naming the key and "
      "the path.",
      {
          keys<prompt_file>::field("file", &prompt_file::file, text{true}, "the file holding the prompt")
              .required("a path, relative to the config file's directory"),
      }};
  return t;
}

// A system prompt: the text, or {file: "path"} read now (relative to the config file's
// directory; "~/" is $HOME). A file that cannot be read is an error naming the key and path.
status read_system_prompt(const bj::value& value, const std::string& path, std::string& target, load_state& state) {
  if (value.is_string()) {
    target = std::string(value.get_string());
    return {};
  }
  if (!value.is_object())
    return config_key_error(path, "expected a string or {\"file\": \"path\"}, got " + describe_json_value(value));
  prompt_file source;
  SRT_RETURN_IF_ERROR(config_table::read_keys(value, path, prompt_file_table(), source, state));
  SRT_RETURN_IF_ERROR(config_table::check_required(prompt_file_table(), source, path));
  const std::string file_path = child_key_path(path, "file");
  std::string resolved = source.file;
  if (resolved.starts_with("~/")) {
    std::optional<std::string> home = state.env ? state.env("HOME") : std::nullopt;
    if (!home || home->empty())
      return config_key_error(file_path, fmt::format("cannot read \"{}\": HOME is not set", source.file));
    resolved = storage::path_join(*home, resolved.substr(2));
  } else if (!resolved.starts_with("/")) {
    resolved = storage::path_join(state.base_dir, resolved);
  }
  auto text = storage::read_file(state.files, resolved, max_system_prompt_file_bytes);
  if (!text.ok())
    return config_key_error(file_path, fmt::format("cannot read \"{}\": {}", source.file, text.error().message()));
  target = std::move(*text);
  return {};
}

// The configured model a "provider/model" ref names (both compared ignoring case), or null.
actors::provider_model* find_configured_model(std::vector<actors::provider_config>& providers, std::string_view ref,
                                              actors::provider_config** provider_out = nullptr) {
  auto slash = ref.find('/');
  if (slash == std::string_view::npos) return nullptr;
  std::string provider_id = ascii_lower_trimmed(ref.substr(0, slash));
  std::string model_id = ascii_lower_trimmed(ref.substr(slash + 1));
  for (auto& provider : providers) {
    if (ascii_lower_trimmed(provider.id) != provider_id) continue;
    if (provider_out) *provider_out = &provider;
    for (auto& model : provider.models)
      if (ascii_lower_trimmed(model.id) == model_id) return &model;
  }
  return nullptr;
}

}  // namespace

status finish_models(runtime_settings& s, load_state& state) {
  auto& models = s.models;
  if (!state.defaults_model_set && !s.model.provider.empty() && !s.model.model.empty())
    models.defaults.primary = s.model.provider + "/" + s.model.model;

  std::map<std::string, std::string> path_of_alias;  // lowercased alias -> where it is set
  for (std::size_t i = 0; i < s.models_catalog.size(); ++i)
    for (std::size_t j = 0; j < s.models_catalog[i].aliases.size(); ++j)
      path_of_alias.emplace(ascii_lower_trimmed(s.models_catalog[i].aliases[j]),
                            item_key_path(child_key_path(item_key_path("models.catalog", i), "aliases"), j));
  for (const auto& pending : state.aliases) {
    std::string alias = ascii_lower_trimmed(pending.alias);
    if (alias.find_first_of(" \t\n\r\f\v") != std::string::npos)
      return config_key_error(pending.path, "an alias must be one word (it is matched as the first word after /new)");
    actors::provider_model* model = find_configured_model(models.providers, pending.ref);
    if (!model) {
      state.warnings.push_back(fmt::format("config key {}: \"{}\" names no model of models.providers; the alias "
                                           "\"{}\" is not used",
                                           pending.path, pending.ref, pending.alias));
      continue;
    }
    if (auto seen = path_of_alias.find(alias); seen != path_of_alias.end())
      return config_key_error(pending.path, fmt::format("\"{}\" is already used at {}", alias, seen->second));
    path_of_alias.emplace(alias, pending.path);
    model->aliases.push_back(pending.alias);
  }

  std::vector<std::string> known;  // provider ids a ref may name, lowercased
  for (const auto& provider : models.providers) known.push_back(ascii_lower_trimmed(provider.id));
  if (!state.replace_mode)
    for (std::string_view id : builtin_provider_ids) known.emplace_back(id);
  if (!s.model.provider.empty()) known.push_back(ascii_lower_trimmed(s.model.provider));
  for (const auto& entry : s.models_catalog) known.push_back(ascii_lower_trimmed(entry.provider));
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());

  for (const auto& [path, ref] : state.model_refs) {
    std::string text = ascii_trimmed(ref);
    if (path_of_alias.count(ascii_lower_trimmed(text))) continue;
    auto slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
      return config_key_error(path, fmt::format("\"{}\" is neither \"provider/model\" nor an alias of "
                                                "agents.defaults.models",
                                                ref));
    std::string provider_id = ascii_lower_trimmed(text.substr(0, slash));
    if (!std::binary_search(known.begin(), known.end(), provider_id))
      return config_key_error(path, fmt::format("unknown provider \"{}\" in \"{}\"; known providers: {}",
                                                text.substr(0, slash), ref, joined(known, ", ")));
    actors::provider_config* provider = nullptr;
    if (!find_configured_model(models.providers, text, &provider) && provider)
      state.warnings.push_back(fmt::format("config key {}: model \"{}\" is not listed in {}.models; it is used with "
                                           "the default limits",
                                           path, text.substr(slash + 1),
                                           child_key_path("models.providers", provider->id)));
  }
  return {};
}

namespace {

// ---- agents [R§1.2] ------------------------------------------------------------------------------

// One agents.list[] entry: the routing entry, and the agent's model and system prompt.
struct agent_item {
  actors::agent_entry entry;
  actors::model_choice model;
  std::optional<std::string> system_prompt;
};

const table<agent_item>& agent_table() {
  using k = keys<agent_item>;
  using A = actors::agent_entry;
  static const table<agent_item> t{"", "", {
      k::field("id", config_table::at(&agent_item::entry, &A::id), text{true},
               "agent id, listed once (after normalization)")
          .required("a non-empty string"),
      k::field("default", config_table::at(&agent_item::entry, &A::is_default), boolean{}, "the default agent"),
      model_choice_row<agent_item>(&agent_item::model, "this agent's model (over agents.defaults.model), kept under its normalized id",
                       false),
      k::field("systemPrompt", &agent_item::system_prompt, text{}, "this agent's system prompt (over the defaults')")
          .read_with([](const bj::value& v, const std::string& p, agent_item& t, load_state& st) -> status {
            std::string text;
            SRT_RETURN_IF_ERROR(read_system_prompt(v, p, text, st));
            t.system_prompt = std::move(text);
            return {};
          })
          .typed("prompt", "")
          .documents(prompt_file_table(), ""),
  }};
  return t;
}

// agents.list: each agent once (after normalization); its model and system prompt are kept by
// normalized id.
status read_agent_list(const bj::value& value, const std::string& path, runtime_settings& settings,
                       load_state& state) {
  settings.routing.agents.clear();
  settings.models.by_agent.clear();
  settings.prompts.by_agent.clear();
  std::map<std::string, std::string> path_of_agent;
  return read_items(value, path, settings.routing.agents,
                    [&](const bj::value& item, const std::string& item_path, auto& list) {
                      agent_item agent;
                      SRT_RETURN_IF_ERROR(config_table::read_keys(item, item_path, agent_table(), agent, state));
                      SRT_RETURN_IF_ERROR(config_table::check_required(agent_table(), agent, item_path));
                      std::string normalized = actors::normalize_agent_id(agent.entry.id);
                      if (auto seen = path_of_agent.find(normalized); seen != path_of_agent.end())
                        return config_key_error(
                            child_key_path(item_path, "id"),
                            fmt::format("agent \"{}\" is already listed at {}", normalized, seen->second));
                      path_of_agent.emplace(normalized, item_path);
                      if (!agent.model.empty()) settings.models.by_agent[normalized] = std::move(agent.model);
                      if (agent.system_prompt) settings.prompts.by_agent[normalized] = std::move(*agent.system_prompt);
                      list.push_back(std::move(agent.entry));
                      return status{};
                    });
}

bj::array agents_json(const runtime_settings& s) {
  bj::array agents;
  for (const auto& entry : s.routing.agents) {
    agent_item agent{entry, {}, std::nullopt};
    const std::string normalized = actors::normalize_agent_id(entry.id);
    if (auto model = s.models.by_agent.find(normalized); model != s.models.by_agent.end()) agent.model = model->second;
    if (auto prompt = s.prompts.by_agent.find(normalized); prompt != s.prompts.by_agent.end())
      agent.system_prompt = prompt->second;
    agents.emplace_back(config_table::write_object(agent_table(), agent));
  }
  return agents;
}

const table<runtime_settings>& heartbeat_table() {
  static const table<runtime_settings> t{"", "", {
      keys<runtime_settings>::field("isolatedSession", &runtime_settings::heartbeat_isolated_session, boolean{},
                                    "heartbeats run in `<key>:heartbeat` [R§1.1]"),
  }};
  return t;
}

const table<runtime_settings>& agent_defaults_table() {
  using k = keys<runtime_settings>;
  static const table<runtime_settings> t{"", "", {
      k::custom(
          "compaction", "object",
          "OpenClaw's place for the `compaction` keys; if both are given (warning) `compaction` wins key by key",
          [](const bj::value& v, const std::string&, runtime_settings&, load_state& st) {
            st.compaction_alias = &v;
            return status{};
          },
          nullptr),
      k::nested("heartbeat", self(), heartbeat_table()),
      model_choice_row<runtime_settings>([](auto& s) -> auto& { return s.models.defaults; },
                                         "the primary model and its fallbacks; unset: \"<model.provider>/<model.model>\" "
                                         "when both are set",
                                         true),
      k::custom(
           "models", "{ref: object}", "per model ref (\"provider/model\")",
           [](const bj::value& v, const std::string& p, runtime_settings&, load_state& st) {
             return read_model_entries(v, p, st);
           },
           [](const runtime_settings& s) -> std::optional<bj::value> {
             bj::object aliases;
             for (const auto& provider : s.models.providers)
               for (const auto& model : provider.models)
                 if (!model.aliases.empty())
                   aliases[provider.id + "/" + model.id] = bj::object{{"alias", model.aliases.front()}};
             return bj::value(std::move(aliases));
           })
          .omit_if_empty()
          .documents(model_entry_table(), ".<ref>"),
      k::field("maxToolIterations", [](auto& s) -> auto& { return s.models.max_tool_iterations; }, whole{1, 10000},
               "model calls in one turn (the tool loop)"),
      k::field("systemPrompt", [](auto& s) -> auto& { return s.prompts.defaults; }, text{},
               "the system prompt of every agent")
          .read_with([](const bj::value& v, const std::string& p, runtime_settings& t, load_state& st) {
            return read_system_prompt(v, p, t.prompts.defaults, st);
          })
          .omit_if_empty()
          .typed("prompt", "")
          .documents(prompt_file_table(), ""),
  }};
  return t;
}

}  // namespace

const table<runtime_settings>& agents_table() {
  using k = keys<runtime_settings>;
  static const table<runtime_settings> t{"", "", {
      k::custom(
           "list", "array", "[] = the single agent \"main\"",
           [](const bj::value& v, const std::string& p, runtime_settings& t, load_state& st) {
             return read_agent_list(v, p, t, st);
           },
           [](const runtime_settings& s) -> std::optional<bj::value> { return bj::value(agents_json(s)); })
          .documents(agent_table()),
      k::field("maxSpawnDepth", [](auto& s) -> auto& { return s.subagents.max_spawn_depth; }, whole{1, 5},
               "deepest sub-agent (1 = sub-agents are leaves)"),
      k::nested("defaults", self(), agent_defaults_table()),
  }};
  return t;
}

namespace {

// ---- models.catalog [R§4.4] ----------------------------------------------------------------------

const table<actors::catalog_model>& catalog_model_table() {
  using k = keys<actors::catalog_model>;
  using T = actors::catalog_model;
  static const table<T> t{"", "", {
      k::field("provider", &T::provider, text{true}, "each provider / id once").required("the provider id, e.g. \"openai\""),
      k::field("id", &T::id, text{true}, "the model id").required("the model id, e.g. \"gpt-4o\""),
      k::field("aliases", &T::aliases, strings{}, "one-word names, unique over the catalog"),
      k::field("contextWindow", &T::context_window, whole{1}, "the model's window (informative)"),
  }};
  return t;
}

// Each model once (provider/id compared case-insensitively), each alias naming one model.
status read_models_catalog(const bj::value& value, const std::string& path, actors::model_catalog_settings& catalog,
                           load_state& state) {
  catalog.clear();
  std::map<std::string, std::string> path_of_name;
  return read_items(value, path, catalog, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::catalog_model model;
    SRT_RETURN_IF_ERROR(config_table::read_keys(item, item_path, catalog_model_table(), model, state));
    SRT_RETURN_IF_ERROR(config_table::check_required(catalog_model_table(), model, item_path));
    std::vector<std::pair<std::string, std::string>> names{
        {ascii_lower_trimmed(model.provider + "/" + model.id), child_key_path(item_path, "id")}};
    for (std::size_t i = 0; i < model.aliases.size(); ++i) {
      std::string alias = ascii_lower_trimmed(model.aliases[i]);
      if (alias.empty() || alias.find_first_of(" \t\n") != std::string::npos)
        return config_key_error(item_key_path(child_key_path(item_path, "aliases"), i),
                                "an alias must be one word (it is matched as the first word after /new)");
      names.emplace_back(alias, item_key_path(child_key_path(item_path, "aliases"), i));
    }
    for (const auto& [name, name_path] : names) {
      if (auto seen = path_of_name.find(name); seen != path_of_name.end())
        return config_key_error(name_path, fmt::format("\"{}\" is already used at {}", name, seen->second));
      path_of_name.emplace(name, name_path);
    }
    list.push_back(std::move(model));
    return status{};
  });
}

const table<actors::models_settings>& models_retry_table() {
  using k = keys<actors::models_settings>;
  using T = actors::models_settings;
  static const table<T> t{"", "", {
      k::field("maxDelayMs", &T::retry_max_delay_ms, millis{0}, "a longer server-asked wait: the next fallback"),
      k::field("maxAttempts", &T::retry_max_attempts, whole{1, 100}, "tries of one model before its fallback"),
  }};
  return t;
}

}  // namespace

const table<runtime_settings>& models_table() {
  using k = keys<runtime_settings>;
  static const one_of<std::string> mode{{"merge", "replace"}, nullptr, [](const std::string& s) { return s; }};
  static const table<runtime_settings> t{"", "", {
      k::custom("mode", mode.type(), "replace leaves the built-in providers out of the known ones (not stored)",
                [](const bj::value& v, const std::string& p, runtime_settings&, load_state& st) -> status {
                  std::string name;
                  SRT_RETURN_IF_ERROR(mode.read(v, p, name));
                  st.replace_mode = name == "replace";
                  return {};
                },
                nullptr)
          .default_doc("`\"merge\"`"),
      k::custom(
           "providers", "{id: object}",
           "the providers, file order; an id is one word without \"/\", once ignoring case",
           [](const bj::value& v, const std::string& p, runtime_settings& t, load_state& st) {
             return read_providers(v, p, t.models.providers, st);
           },
           [](const runtime_settings& s) -> std::optional<bj::value> {
             bj::object providers;
             for (const auto& provider : s.models.providers)
               providers[provider.id] = config_table::write_object(provider_table(), provider);
             return bj::value(std::move(providers));
           })
          .documents(provider_table(), ".<id>"),
      k::nested("retry", &runtime_settings::models, models_retry_table()),
      k::custom(
           "catalog", "array", "what `/new <model>` may pick [R§4.4]",
           [](const bj::value& v, const std::string& p, runtime_settings& t, load_state& st) {
             return read_models_catalog(v, p, t.models_catalog, st);
           },
           [](const runtime_settings& s) -> std::optional<bj::value> {
             bj::array catalog;
             for (const auto& m : s.models_catalog)
               catalog.emplace_back(config_table::write_object(catalog_model_table(), m));
             return bj::value(std::move(catalog));
           })
          .deprecated("list the models under models.providers.<id>.models[] and name them with "
                      "agents.defaults.models.<ref>.alias")
          .omit_if_empty()
          .documents(catalog_model_table()),
  }};
  return t;
}

}  // namespace sessionrt::runtime::config_tables
