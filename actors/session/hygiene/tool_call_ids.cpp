#include "actors/session/hygiene/tool_call_ids.hpp"

#include <openssl/evp.h>

#include <cctype>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "actors/session/hygiene/replay_message.hpp"

namespace sessionrt::actors::hygiene {
namespace {

constexpr std::size_t kStrictMaxLength = 40;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string alnum_only(std::string_view id) {
  std::string out;
  out.reserve(id.size());
  for (char c : id)
    if (is_alnum(c)) out.push_back(c);
  return out;
}

// /^functions\.[A-Za-z0-9_-]+:\d+$/
bool is_kimi_id(std::string_view id) {
  constexpr std::string_view prefix = "functions.";
  if (id.substr(0, prefix.size()) != prefix) return false;
  id.remove_prefix(prefix.size());
  const auto colon = id.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == id.size()) return false;
  for (char c : id.substr(0, colon))
    if (!is_alnum(c) && c != '_' && c != '-') return false;
  for (char c : id.substr(colon + 1))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool matches_prefixed(std::string_view id, std::string_view prefix, bool allow_dash) {
  if (id.size() <= prefix.size() || id.substr(0, prefix.size()) != prefix) return false;
  for (char c : id.substr(prefix.size()))
    if (!is_alnum(c) && c != '_' && !(allow_dash && c == '-')) return false;
  return true;
}

class id_allocator {
 public:
  id_allocator(const transcript_policy& p) : policy_(p) {}

  // A fresh id for the occurrence `occurrence` (0 = first) of raw id `raw`, seeded `seed`.
  std::string allocate(std::string_view raw, std::size_t occurrence, const std::string& seed) {
    if (occurrence == 0 && policy_.preserve_native_anthropic_ids && matches_prefixed(raw, "toolu_", false) &&
        take(std::string(raw)))
      return std::string(raw);
    if (policy_.openai_duplicate_id_style && matches_prefixed(raw, "call_", true)) {
      if (occurrence == 0 && take(std::string(raw))) return std::string(raw);
      for (std::size_t attempt = 0;; ++attempt) {
        std::string c = "call_" + sha256_hex(std::string(raw) + ":" + std::to_string(occurrence) + ":" +
                                             std::to_string(attempt)).substr(0, 24);
        if (take(c)) return c;
      }
    }
    return unique(seed);
  }

 private:
  bool take(const std::string& id) { return used_.insert(id).second; }

  std::string unique(const std::string& id) {
    if (policy_.id_mode == tool_call_id_mode::strict9) {
      std::string c = sanitize_tool_call_id(id, tool_call_id_mode::strict9);
      if (take(c)) return c;
      for (int i = 0; i < 1000; ++i) {
        c = sha256_hex(id + ":" + std::to_string(i)).substr(0, 9);
        if (take(c)) return c;
      }
      for (;;) {
        c = sha256_hex(id + ":t" + std::to_string(counter_++)).substr(0, 9);
        if (take(c)) return c;
      }
    }
    std::string base = sanitize_tool_call_id(id, tool_call_id_mode::strict).substr(0, kStrictMaxLength);
    if (take(base)) return base;
    const std::string suffix = sha256_hex(id).substr(0, 8);
    std::string stem = base.substr(0, kStrictMaxLength - suffix.size()) + suffix;
    if (take(stem)) return stem;
    auto with = [&](const std::string& tail) { return stem.substr(0, kStrictMaxLength - tail.size()) + tail; };
    for (int i = 2; i <= 999; ++i) {
      std::string c = with("x" + std::to_string(i));
      if (take(c)) return c;
    }
    for (;;) {
      std::string c = with("t" + std::to_string(counter_++));
      if (take(c)) return c;
    }
  }

  const transcript_policy& policy_;
  std::unordered_set<std::string> used_;
  std::uint64_t counter_ = 0;
};

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int k = 0; k < len; ++k) {
    out[2 * k] = hex[digest[k] >> 4];
    out[2 * k + 1] = hex[digest[k] & 15];
  }
  return out;
}

std::string sanitize_tool_call_id(std::optional<std::string_view> id, tool_call_id_mode mode) {
  if (mode == tool_call_id_mode::strict9) {
    if (!id) return "defaultid";
    std::string a = alnum_only(*id);
    if (a.size() >= 9) return a.substr(0, 9);
    return sha256_hex(a.empty() ? std::string("sanitized") : a).substr(0, 9);
  }
  if (!id) return "defaulttoolid";
  if (is_kimi_id(*id)) return std::string(*id);
  std::string a = alnum_only(*id);
  return a.empty() ? std::string("sanitizedtoolid") : a;
}

bool is_valid_tool_call_id(std::string_view id, tool_call_id_mode mode) {
  if (id.empty()) return false;
  for (char c : id)
    if (!is_alnum(c)) return false;
  return mode == tool_call_id_mode::strict9 ? id.size() == 9 : id.size() <= kStrictMaxLength;
}

void rewrite_tool_call_ids(boost::json::array& messages, const transcript_policy& policy, hygiene_report& report) {
  id_allocator ids(policy);
  std::unordered_map<std::string, std::size_t> occurrences, orphan_results;
  std::unordered_map<std::string, std::deque<std::string>> pending;
  std::unordered_map<std::string, std::string> last_mapping;
  for (auto& mv : messages) {
    const auto role = role_of(mv);
    if (role == "assistant") {
      auto* content = content_array(mv);
      if (!content) continue;
      for (auto& b : *content) {
        auto raw_view = tool_call_id(b);
        if (!raw_view) continue;
        const std::string raw(*raw_view);
        const std::size_t occ = occurrences[raw]++;
        std::string fresh = ids.allocate(raw, occ, occ == 0 ? raw : raw + ":" + std::to_string(occ));
        pending[raw].push_back(fresh);
        last_mapping[raw] = fresh;
        if (fresh != raw) {
          b.get_object()["id"] = fresh;
          ++report.tool_call_ids_rewritten;
        }
      }
    } else if (role == "toolResult") {
      auto raw = tool_result_id(mv);
      if (!raw) continue;
      std::string mapped;
      if (auto p = pending.find(*raw); p != pending.end() && !p->second.empty()) {
        mapped = std::move(p->second.front());
        p->second.pop_front();
      } else if (auto l = last_mapping.find(*raw); l != last_mapping.end()) {
        mapped = l->second;
      } else {
        const std::size_t n = orphan_results[*raw]++;
        mapped = ids.allocate(*raw, 1, *raw + ":tool_result:" + std::to_string(n));
        last_mapping[*raw] = mapped;
      }
      bool changed = false;
      for (auto key : kToolResultIdFields) {
        auto* v = mv.get_object().if_contains(key);
        if (v && v->is_string() && v->get_string() != mapped) changed = true;
      }
      if (changed) {
        set_tool_result_id(mv.get_object(), mapped);
        ++report.tool_call_ids_rewritten;
      }
    }
  }
}

}  // namespace sessionrt::actors::hygiene
