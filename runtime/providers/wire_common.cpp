// wire_common: see the header. The ports keep pi-ai's control flow where it decides a result
// (partial-json's parser is followed step by step, including its quirks on malformed text), so
// a cut-off tool call's arguments come out as pi-ai would store them.
#include "runtime/providers/wire_common.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <utility>

#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::providers::wire {

namespace bj = boost::json;

// ---------------------------------------------------------------------------------------------
// JSON text

std::string repair_json(std::string_view json) {
  static constexpr std::string_view kValidEscapes = "\"\\/bfnrtu";
  std::string out;
  out.reserve(json.size() + 8);
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (!in_string) {
      out.push_back(c);
      if (c == '"') in_string = true;
      continue;
    }
    if (c == '"') {
      out.push_back(c);
      in_string = false;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= json.size()) {
        out += "\\\\";
        continue;
      }
      const char next = json[i + 1];
      if (next == 'u') {
        std::string_view digits = json.substr(i + 2, 4);  // i + 2 <= size here
        if (digits.size() == 4 && std::all_of(digits.begin(), digits.end(), [](char d) {
              return (d >= '0' && d <= '9') || (d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F');
            })) {
          out += "\\u";
          out += digits;
          i += 5;
          continue;
        }
      }
      if (kValidEscapes.find(next) != std::string_view::npos) {
        out.push_back('\\');
        out.push_back(next);
        i += 1;
        continue;
      }
      out += "\\\\";
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20) {
      switch (c) {
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 15]);
        }
      }
      continue;
    }
    out.push_back(c);
  }
  return out;
}

result<bj::value> parse_json_with_repair(std::string_view text) {
  auto first = json::parse(text);
  if (first) return first;
  std::string repaired = repair_json(text);
  if (repaired != text) return json::parse(repaired);
  return first;
}

namespace {

// partial-json 0.1.7 `parse(text, Allow.ALL)`. Its two exceptions (PartialJSON, MalformedJSON)
// and the SyntaxError JSON.parse throws all unwind the same way, so one type stands for them;
// they never leave this file.
struct partial_failure {};

class partial_parser {
 public:
  explicit partial_parser(std::string_view s) : s_(s) {}
  bj::value parse_any() {
    if (++depth_ > kMaxDepth) throw partial_failure{};
    struct leave {
      int& d;
      ~leave() { --d; }
    } guard{depth_};
    skip_blank();
    if (i_ >= s_.size()) throw partial_failure{};
    const char c = s_[i_];
    if (c == '"') return parse_str();
    if (c == '{') return parse_obj();
    if (c == '[') return parse_arr();
    if (literal("null")) return nullptr;
    if (literal("true")) return true;
    if (literal("false")) return false;
    if (literal("Infinity")) return nullptr;  // JSON.stringify(Infinity) is null
    if (s_.substr(i_, 9) == "-Infinity" ||
        (s_.size() - i_ > 1 && s_.size() - i_ < 9 && std::string_view("-Infinity").substr(0, s_.size() - i_) == s_.substr(i_))) {
      i_ += 9;
      return nullptr;
    }
    if (literal("NaN")) return nullptr;
    return parse_num();
  }

 private:
  static constexpr int kMaxDepth = 64;

  // The literal here, or (at the very end of the text) a prefix of it; consumes its length.
  bool literal(std::string_view word) {
    const std::size_t rest = s_.size() - i_;
    if (s_.substr(i_, word.size()) == word || (rest < word.size() && word.substr(0, rest) == s_.substr(i_))) {
      i_ += word.size();
      return true;
    }
    return false;
  }

  static bj::value json_parse(std::string_view text) {
    auto v = json::parse(text);
    if (!v) throw partial_failure{};
    return std::move(v).value();
  }

  // JavaScript String.prototype.substring: negative bounds clamp to 0, swapped bounds swap.
  std::string_view js_substring(std::ptrdiff_t a, std::ptrdiff_t b) const {
    const auto n = static_cast<std::ptrdiff_t>(s_.size());
    a = std::clamp<std::ptrdiff_t>(a, 0, n);
    b = std::clamp<std::ptrdiff_t>(b, 0, n);
    if (a > b) std::swap(a, b);
    return s_.substr(static_cast<std::size_t>(a), static_cast<std::size_t>(b - a));
  }

  std::ptrdiff_t last_index_of(char c) const {
    const auto p = s_.rfind(c);
    return p == std::string_view::npos ? -1 : static_cast<std::ptrdiff_t>(p);
  }

  bj::value parse_str() {
    const std::size_t start = i_;
    bool escape = false;
    ++i_;
    while (i_ < s_.size() && (s_[i_] != '"' || (escape && s_[i_ - 1] == '\\'))) {
      escape = s_[i_] == '\\' ? !escape : false;
      ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '"') {
      ++i_;
      return json_parse(js_substring(static_cast<std::ptrdiff_t>(start), static_cast<std::ptrdiff_t>(i_) - (escape ? 1 : 0)));
    }
    std::string text(js_substring(static_cast<std::ptrdiff_t>(start), static_cast<std::ptrdiff_t>(i_) - (escape ? 1 : 0)));
    text.push_back('"');
    if (auto v = json::parse(text)) return std::move(v).value();
    // An escape cut in the middle ("\u00"): drop it.
    std::string shorter(js_substring(static_cast<std::ptrdiff_t>(start), last_index_of('\\')));
    shorter.push_back('"');
    return json_parse(shorter);
  }

  bj::value parse_obj() {
    ++i_;
    skip_blank();
    bj::object obj;
    try {
      while (at() != '}') {
        skip_blank();
        if (i_ >= s_.size()) return obj;
        bj::value key = parse_str();
        skip_blank();
        ++i_;  // the colon
        try {
          bj::value value = parse_any();
          std::string k = key.is_string() ? std::string(key.get_string()) : std::string();
          json::set(obj, k, std::move(value));
        } catch (const partial_failure&) {
          return obj;
        }
        skip_blank();
        if (at() == ',') ++i_;
      }
    } catch (const partial_failure&) {
      return obj;
    }
    ++i_;
    return obj;
  }

  bj::value parse_arr() {
    ++i_;
    bj::array arr;
    try {
      while (at() != ']') {
        arr.push_back(parse_any());
        skip_blank();
        if (at() == ',') ++i_;
      }
    } catch (const partial_failure&) {
      return arr;
    }
    ++i_;
    return arr;
  }

  bj::value parse_num() {
    if (i_ == 0) {
      if (s_ == "-") throw partial_failure{};
      if (auto v = json::parse(s_)) return std::move(v).value();
      return json_parse(js_substring(0, last_index_of('e')));
    }
    const std::size_t start = i_;
    if (at() == '-') ++i_;
    while (i_ < s_.size() && std::string_view(",]}").find(s_[i_]) == std::string_view::npos) ++i_;
    std::string_view text = s_.substr(start, i_ - start);
    if (auto v = json::parse(text)) return std::move(v).value();
    if (text == "-") throw partial_failure{};
    return json_parse(js_substring(static_cast<std::ptrdiff_t>(start), last_index_of('e')));
  }

  char at() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_blank() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

std::optional<bj::value> partial_parse(std::string_view text) {
  std::string_view trimmed = js_trim(text);
  if (trimmed.empty()) return std::nullopt;
  try {
    partial_parser p(trimmed);
    return p.parse_any();
  } catch (const partial_failure&) {
    return std::nullopt;
  }
}

}  // namespace

bj::value parse_streaming_json(std::string_view text) {
  if (is_js_blank(text)) return bj::object();
  if (auto whole = parse_json_with_repair(text)) return std::move(whole).value();
  auto partial = partial_parse(text);
  if (!partial) partial = partial_parse(repair_json(text));
  if (!partial || partial->is_null()) return bj::object();  // `result ?? {}`
  return std::move(*partial);
}

// ---------------------------------------------------------------------------------------------
// JavaScript semantics

std::string_view str(const bj::object& o, std::string_view key) { return json::get_string(o, key).value_or(""); }

bool truthy(const bj::value* v) {
  if (v == nullptr || v->is_null()) return false;
  if (const auto* b = v->if_bool()) return *b;
  if (const auto* s = v->if_string()) return !s->empty();
  if (v->is_number()) {
    const double d = v->to_number<double>();
    return d != 0 && !std::isnan(d);
  }
  return true;
}


std::string utf16_prefix(std::string_view s, std::size_t units) {
  std::size_t used = 0, i = 0;
  while (i < s.size()) {
    const code_point cp = decode_utf8_at(s, i);
    const std::size_t len = cp.length == 0 ? 1 : cp.length;
    const std::size_t w = cp.length == 4 ? 2 : 1;
    if (used + w > units) break;
    used += w;
    i += len;
  }
  return std::string(s.substr(0, i));
}

std::string sanitize_id(std::string_view s, std::size_t max_units) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < max_units) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const code_point cp = decode_utf8_at(s, i);
    out += cp.length == 4 ? "__" : "_";
    i += cp.length == 0 ? 1 : cp.length;
  }
  if (out.size() > max_units) out.resize(max_units);
  return out;
}

std::string cut_utf8(std::string_view s, std::size_t max_bytes) {
  return std::string(utf8_prefix(s, max_bytes));
}

// ---------------------------------------------------------------------------------------------
// Requests

void set_header(http_headers& headers, std::string_view name, std::string_view value) {
  auto same = [&](const std::pair<std::string, std::string>& h) {
    return h.first.size() == name.size() && std::equal(h.first.begin(), h.first.end(), name.begin(), [](char a, char b) {
             auto lower = [](char x) { return x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x; };
             return lower(a) == lower(b);
           });
  };
  auto it = std::find_if(headers.begin(), headers.end(), same);
  if (it != headers.end()) {
    it->second.assign(value);
    return;
  }
  headers.emplace_back(std::string(name), std::string(value));
}

void apply_provider_headers(http_headers& headers, const actors::provider_config& provider) {
  for (const auto& [name, value] : provider.headers) set_header(headers, name, value);
}

std::int64_t requested_max_tokens(const provider_call& call) {
  if (call.max_tokens > 0) return call.max_tokens;
  if (call.model->max_tokens > 0) return std::min<std::int64_t>(call.model->max_tokens, 32000);
  return 0;
}

bool model_accepts_images(const actors::provider_model& model) {
  return std::find(model.input.begin(), model.input.end(), "image") != model.input.end();
}

// ---------------------------------------------------------------------------------------------
// Context

bool same_model(const bj::object& assistant, const provider_call& call) {
  return str(assistant, "provider") == call.provider->id && str(assistant, "api") == call.api &&
         str(assistant, "model") == call.model->id;
}

const bj::array* content_array(const bj::object& message) { return json::get_array(message, "content"); }

namespace {

constexpr std::string_view kUserImagePlaceholder = "(image omitted: model does not support images)";
constexpr std::string_view kToolImagePlaceholder = "(tool image omitted: model does not support images)";

// pi-ai replaceImagesWithPlaceholder: a run of images becomes one placeholder text block.
bj::array replace_images(const bj::array& content, std::string_view placeholder) {
  bj::array out;
  bool previous_was_placeholder = false;
  for (const auto& v : content) {
    const auto* block = v.if_object();
    if (block && str(*block, "type") == "image") {
      if (!previous_was_placeholder) out.push_back(bj::object{{"type", "text"}, {"text", placeholder}});
      previous_was_placeholder = true;
      continue;
    }
    out.push_back(v);
    previous_was_placeholder = block && json::get_string(*block, "text") == placeholder;
  }
  return out;
}

bj::object synthetic_tool_result(const bj::object& tool_call) {
  bj::object r;
  r["role"] = "toolResult";
  r["toolCallId"] = str(tool_call, "id");
  r["toolName"] = str(tool_call, "name");
  r["content"] = bj::array{bj::object{{"type", "text"}, {"text", "No result provided"}}};
  r["isError"] = true;
  r["timestamp"] = 0;  // pi-ai puts Date.now() here; no request body reads it
  return r;
}

}  // namespace

std::vector<bj::object> transform_messages(const provider_call& call, const id_normalizer& normalize) {
  const bool images = model_accepts_images(*call.model);
  std::unordered_map<std::string, std::string> id_map;  // another model's id -> the normalized one

  std::vector<bj::object> transformed;
  transformed.reserve(call.messages->size());
  for (const auto& v : *call.messages) {
    const auto* in = v.if_object();
    if (!in) continue;
    bj::object msg = *in;
    // A copy: assigning to any member of msg may rehash it and move an inline short string.
    const std::string role(str(msg, "role"));
    if (!images && (role == "user" || role == "toolResult")) {
      if (const auto* content = content_array(msg))
        msg["content"] = replace_images(*content, role == "user" ? kUserImagePlaceholder : kToolImagePlaceholder);
    }
    if (role == "toolResult") {
      auto it = id_map.find(std::string(str(msg, "toolCallId")));
      if (it != id_map.end()) msg["toolCallId"] = it->second;
    } else if (role == "assistant") {
      const bool same = same_model(msg, call);
      bj::array content;
      if (const auto* blocks = content_array(msg)) {
        for (const auto& bv : *blocks) {
          const auto* block = bv.if_object();
          if (!block) {
            content.push_back(bv);
            continue;
          }
          const std::string_view type = str(*block, "type");
          if (type == "thinking") {
            // Redacted and signed thinking only mean something to the model that wrote them.
            if (truthy(json::find(*block, "redacted"))) {
              if (same) content.push_back(bv);
              continue;
            }
            if (same && truthy(json::find(*block, "thinkingSignature"))) {
              content.push_back(bv);
              continue;
            }
            const std::string_view thinking = str(*block, "thinking");
            if (is_js_blank(thinking)) continue;
            if (same) content.push_back(bv);
            else content.push_back(bj::object{{"type", "text"}, {"text", thinking}});
          } else if (type == "text") {
            if (same) content.push_back(bv);
            else content.push_back(bj::object{{"type", "text"}, {"text", str(*block, "text")}});
          } else if (type == "toolCall") {
            bj::object tc = *block;
            if (!same) {
              json::erase(tc, "thoughtSignature");
              if (normalize) {
                const std::string id(str(*block, "id"));
                std::string normalized = normalize(id);
                if (normalized != id) {
                  id_map[id] = normalized;
                  tc["id"] = std::move(normalized);
                }
              }
            }
            content.push_back(std::move(tc));
          } else {
            content.push_back(bv);
          }
        }
      }
      msg["content"] = std::move(content);
    }
    transformed.push_back(std::move(msg));
  }

  // Second pass: every tool call gets a result before the conversation moves on.
  std::vector<bj::object> out;
  out.reserve(transformed.size());
  std::vector<bj::object> pending;  // tool calls of the last assistant message
  std::vector<std::string> answered;
  auto flush = [&] {
    for (const auto& tc : pending) {
      if (std::find(answered.begin(), answered.end(), str(tc, "id")) == answered.end())
        out.push_back(synthetic_tool_result(tc));
    }
    pending.clear();
    answered.clear();
  };
  for (auto& msg : transformed) {
    const std::string role(str(msg, "role"));
    if (role == "assistant") {
      flush();
      const std::string_view stop = str(msg, "stopReason");
      if (stop == "error" || stop == "aborted") continue;  // incomplete turns are not replayed
      if (const auto* content = content_array(msg)) {
        for (const auto& bv : *content) {
          const auto* b = bv.if_object();
          if (b && str(*b, "type") == "toolCall") pending.push_back(*b);
        }
      }
      out.push_back(std::move(msg));
    } else if (role == "toolResult") {
      answered.emplace_back(str(msg, "toolCallId"));
      out.push_back(std::move(msg));
    } else {
      if (role == "user") flush();
      out.push_back(std::move(msg));
    }
  }
  flush();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Responses

void set_usage(assistant_builder& out, std::int64_t input, std::int64_t output, std::int64_t cache_read,
               std::int64_t cache_write) {
  auto& u = out.usage();
  u.input = input;
  u.output = output;
  u.cache_read = cache_read;
  u.cache_write = cache_write;
}

std::int64_t count(const bj::object& o, std::string_view key) {
  const auto* v = json::find(o, key);
  if (!v) return 0;
  const auto n = json::as_number(*v);
  if (!n || std::isnan(*n) || !std::isfinite(*n)) return 0;
  return static_cast<std::int64_t>(*n);
}

}  // namespace sessionrt::providers::wire
