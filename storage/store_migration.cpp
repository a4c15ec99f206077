#include "storage/store_migration.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <map>
#include <set>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::storage {
namespace {

namespace bj = boost::json;

// ---------------------------------------------------------------------------------------------
// Text helpers

// How a value looked, for a report line: compact JSON, cut at 60 bytes (on a UTF-8 boundary).
std::string describe(const bj::value& v) {
  std::string s = json::to_compact(v);
  if (s.size() <= 60) return s;
  return std::string(utf8_prefix(s, 57)) + "...";
}

const char* kind_name(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null: return "null";
    case bj::kind::bool_: return "a boolean";
    case bj::kind::int64:
    case bj::kind::uint64:
    case bj::kind::double_: return "a number";
    case bj::kind::string: return "a string";
    case bj::kind::array: return "an array";
    case bj::kind::object: return "an object";
  }
  return "a value";
}

// ---------------------------------------------------------------------------------------------
// Migrations and normalization [R§2.3], on one row. Every change is reported.

class row_normalizer {
 public:
  row_normalizer(std::string_view key, bj::object& row, std::vector<store_change>& changes)
      : key_(key), row_(row), changes_(changes) {
    // One pass over the field names, so that a typical row (none of the legacy or runtime-only
    // fields) costs a few lookups, not twenty: loading 50,000 rows is on a startup path.
    for (const auto& kv : row_) {
      const std::string_view k = kv.key();
      if (k == "provider" || k == "lastProvider" || k == "room") has_legacy_ = true;
      else if (k == "model" || k == "modelProvider") has_model_ = true;
      else if (k.substr(0, 20) == "pendingFinalDelivery" || k == "restartRecoveryDeliveryContext") has_delivery_ = true;
      else if (k == "skillsSnapshot") has_skills_ = true;
      else if (k == "sessionId") {
        const bj::value& v = kv.value();
        needs_identity_check_ |= !v.is_string() || !is_transcript_id(v.get_string());
      } else if (k == "sessionFile") {
        needs_identity_check_ |= !kv.value().is_string();
      } else if (k == "updatedAt") {
        auto n = json::as_number(kv.value());
        // Not finite (an exponent past a double's range): JSON.stringify would write null.
        needs_updated_check_ = !n || !std::isfinite(*n) || *n < 0;
      }
    }
  }

  void migrate() {
    if (!has_legacy_) return;
    rename_legacy("provider", "channel");
    rename_legacy("lastProvider", "lastChannel");
    if (const bj::value* room = json::find(row_, "room")) {
      if (!is_string("groupChannel") && room->is_string()) {
        rename_legacy("room", "groupChannel");
      } else {
        report("removed room", room->is_string() ? "groupChannel is already set (legacy field)"
                                                  : fmt::format("it is {}, not a string (legacy field)", kind_name(*room)));
        json::erase(row_, "room");
      }
    }
  }

  // False when the whole row must go (the reason is reported).
  bool normalize() {
    if (needs_identity_check_ && !normalize_identity()) return false;
    if (needs_updated_check_) {
      const bj::value& at = row_.at("updatedAt");
      report("set updatedAt to 0", fmt::format("it was {}, not a non-negative number", describe(at)));
      json::set(row_, "updatedAt", 0);
    }
    if (has_model_) normalize_model();
    if (has_delivery_) {
      normalize_pending_delivery();
      drop_delivery_context_without_target("pendingFinalDeliveryContext");
      drop_delivery_context_without_target("restartRecoveryDeliveryContext");
    }
    if (bj::value* skills = has_skills_ ? row_.if_contains("skillsSnapshot") : nullptr;
        skills && skills->is_object() && skills->get_object().contains("resolvedSkills")) {
      report("removed skillsSnapshot.resolvedSkills", "it is a runtime-only cache that is never persisted");
      json::erase(skills->get_object(), "resolvedSkills");
    }
    return true;
  }

 private:
  // sessionId / sessionFile rules; false when the row must go.
  bool normalize_identity() {
    if (const bj::value* id = json::find(row_, "sessionId")) {
      if (!id->is_string() || !is_safe_session_id(id->get_string())) {
        report("removed the entry", fmt::format("sessionId {} is not a safe session id "
                                                "(^[A-Za-z0-9][A-Za-z0-9._:@-]*$, at most 255 chars)",
                                                describe(*id)));
        return false;
      }
    }
    if (const bj::value* file = json::find(row_, "sessionFile"); file && !file->is_string()) {
      report("removed sessionFile", fmt::format("it is {}, not a string", kind_name(*file)));
      json::erase(row_, "sessionFile");
    }
    if (auto id = json::get_string(row_, "sessionId"); id && !is_transcript_id(*id)) {
      auto file = json::get_string(row_, "sessionFile");
      if (!file || js_trim(*file).empty()) {
        report("removed sessionId", fmt::format("\"{}\" is not a transcript id (^[a-z0-9][a-z0-9._-]{{0,127}}$) "
                                                "and the entry has no sessionFile",
                                                *id));
        json::erase(row_, "sessionId");
      }
    }
    return true;
  }

  void report(std::string what, std::string why) {
    changes_.push_back(store_change{std::string(key_), std::move(what), std::move(why)});
  }
  bool is_string(std::string_view field) const { return json::get_string(row_, field).has_value(); }

  // OpenClaw's applySessionStoreMigrations: `to = from; delete from` when `to` is not a string.
  void rename_legacy(std::string_view from, std::string_view to) {
    const bj::value* v = json::find(row_, from);
    if (!v || !v->is_string() || is_string(to)) return;
    report(fmt::format("renamed {} to {}", from, to), "legacy field name");
    bj::value moved = *v;
    json::set(row_, to, std::move(moved));
    json::erase(row_, from);
  }

  void normalize_model() {
    const bj::value* model = json::find(row_, "model");
    const bj::value* provider = json::find(row_, "modelProvider");
    if (!model && !provider) return;
    std::string_view trimmed_model = model && model->is_string() ? js_trim(model->get_string()) : std::string_view();
    if (trimmed_model.empty()) {
      report(provider ? "removed model and modelProvider" : "removed model",
             model ? fmt::format("model {} is not a non-empty string", describe(*model)) : "there is no model");
      json::erase(row_, "model");
      json::erase(row_, "modelProvider");
      return;
    }
    if (trimmed_model.size() != model->get_string().size()) {
      report("trimmed model", fmt::format("it had surrounding white space: {}", describe(*model)));
      json::set(row_, "model", bj::string(trimmed_model));
    }
    provider = json::find(row_, "modelProvider");
    if (!provider) return;
    std::string_view trimmed_provider = provider->is_string() ? js_trim(provider->get_string()) : std::string_view();
    if (trimmed_provider.empty()) {
      report("removed modelProvider", fmt::format("it was {}, not a non-empty string", describe(*provider)));
      json::erase(row_, "modelProvider");
    } else if (trimmed_provider.size() != provider->get_string().size()) {
      report("trimmed modelProvider", fmt::format("it had surrounding white space: {}", describe(*provider)));
      json::set(row_, "modelProvider", bj::string(trimmed_provider));
    }
  }

  void drop_unless(std::string_view field, bool (*valid)(const bj::value&), const char* expected) {
    const bj::value* v = json::find(row_, field);
    if (!v || valid(*v)) return;
    report(fmt::format("removed {}", field), fmt::format("it was {}; only {} is kept", describe(*v), expected));
    json::erase(row_, field);
  }

  void normalize_pending_delivery() {
    drop_unless("pendingFinalDelivery", [](const bj::value& v) { return v.is_bool() && v.get_bool(); },
                "the literal true");
    auto timestamp = [](const bj::value& v) {
      auto n = json::as_number(v);
      return n && *n >= 0;
    };
    drop_unless("pendingFinalDeliveryCreatedAt", timestamp, "a non-negative number");
    drop_unless("pendingFinalDeliveryLastAttemptAt", timestamp, "a non-negative number");
    drop_unless("pendingFinalDeliveryAttemptCount",
                [](const bj::value& v) {
                  auto n = json::as_int(v);
                  return n && *n >= 0;
                },
                "a non-negative integer");
    auto string_or_null = [](const bj::value& v) { return v.is_string() || v.is_null(); };
    drop_unless("pendingFinalDeliveryLastError", string_or_null, "a string or null");
    drop_unless("pendingFinalDeliveryText", string_or_null, "a string or null");
    drop_unless("pendingFinalDeliveryIntentId", string_or_null, "a string or null");
  }

  void drop_delivery_context_without_target(std::string_view field) {
    const bj::value* v = json::find(row_, field);
    if (!v) return;
    auto non_empty = [&](std::string_view name) {
      auto s = v->is_object() ? json::get_string(v->get_object(), name) : std::nullopt;
      return s && !js_trim(*s).empty();
    };
    if (non_empty("channel") && non_empty("to")) return;
    report(fmt::format("removed {}", field),
           fmt::format("a delivery context needs both channel and to; it was {}", describe(*v)));
    json::erase(row_, field);
  }

  std::string_view key_;
  bj::object& row_;
  std::vector<store_change>& changes_;
  bool has_legacy_ = false;
  bool has_model_ = false;
  bool has_delivery_ = false;
  bool has_skills_ = false;
  bool needs_identity_check_ = false;
  bool needs_updated_check_ = false;
};

}  // namespace

result<parsed_store> load_from_text(std::string_view text, const json::parse_limits& limits) {
  if (text.empty()) return result<parsed_store>(errc::corrupt, "the file is empty (0 bytes), not a JSON object");
  parsed_store out;
  out.trailing_newline = text.back() == '\n';
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    text.remove_prefix(3);
    out.changes.push_back({"", "removed a UTF-8 byte order mark", "JSON text does not start with one"});
  }
  auto parsed = json::parse(text, limits);
  if (!parsed.ok() && parsed.error().code() == errc::corrupt) {
    std::size_t n = 0;
    const std::string repaired = to_valid_utf8(text, &n);
    if (n > 0) {
      auto again = json::parse(repaired, limits);
      if (again.ok()) {
        parsed = std::move(again);
        out.changes.push_back({"", fmt::format("replaced {} invalid UTF-8 sequence{} with U+FFFD", n, n == 1 ? "" : "s"),
                               "the file is read as Node reads it (UTF-8 with replacement)"});
      }
    }
  }
  if (!parsed.ok()) return std::move(parsed).take_error();
  if (!parsed->is_object())
    return result<parsed_store>(errc::corrupt, fmt::format("the top level is {}, not a JSON object", kind_name(*parsed)));

  bj::object& top = parsed->get_object();
  out.store.reserve(top.size());
  for (auto& kv : top) {
    const std::string_view key = kv.key();
    if (!kv.value().is_object()) {
      out.changes.push_back({std::string(key), "removed the entry",
                             fmt::format("its value is {}, not an object", kind_name(kv.value()))});
      continue;
    }
    bj::object& row = kv.value().get_object();
    row_normalizer n(key, row, out.changes);
    n.migrate();
    if (!n.normalize()) continue;
    out.store.upsert(key, session_entry(std::move(row)));
  }
  return out;
}

}  // namespace sessionrt::storage
