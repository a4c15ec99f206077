// wire_common: what every wire format shares, ported from pi-ai 0.73.1 so that each format
// sends and reads what pi-ai would:
//   - transform_messages: pi-ai providers/transform-messages.js (cross-model replay: images a
//     model cannot see become a placeholder, another model's thinking becomes text, tool-call
//     ids are normalized, errored / aborted turns are dropped, orphaned tool calls get a
//     synthetic error result);
//   - parse_streaming_json / parse_json_with_repair: pi-ai utils/json-parse.js (with the
//     partial-json 0.1.7 parser for a cut-off text);
//   - small JavaScript-semantics helpers (truthiness, trim, UTF-16 slicing, header merging).
// Pure functions; no I/O.
#pragma once
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers::wire {

// ---- JSON text ----

// JSON.parse, and when that fails, JSON.parse of repair_json(text) (raw control characters in
// strings escaped, invalid backslash escapes doubled).
result<boost::json::value> parse_json_with_repair(std::string_view text);
std::string repair_json(std::string_view text);
// pi-ai parseStreamingJson: {} for blank text, else the whole parse, else the longest prefix
// partial-json makes of it (an unterminated string / object / array is closed where it was
// cut), else {}. NaN and ±Infinity (partial-json accepts them) become null, as JSON.stringify
// writes them.
boost::json::value parse_streaming_json(std::string_view text);

// ---- JavaScript semantics ----

std::string_view str(const boost::json::object& o, std::string_view key);  // "" unless a string
bool truthy(const boost::json::value* v);                                   // JS Boolean(v)
// s.slice(0, units) counted in UTF-16 code units; a surrogate pair straddling the cut is dropped
// whole (JavaScript would keep half of it, which no API accepts).
std::string utf16_prefix(std::string_view s, std::size_t units);
// s.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, max_units): each UTF-16 unit outside the set
// becomes one '_' (so a character beyond the BMP becomes two).
std::string sanitize_id(std::string_view s, std::size_t max_units);
// Text cut to at most max_bytes without splitting a UTF-8 character.
std::string cut_utf8(std::string_view s, std::size_t max_bytes);

// ---- Requests ----

// Sets a header, replacing one of the same name (case-insensitive, as fetch Headers do).
void set_header(http_headers& headers, std::string_view name, std::string_view value);
// The provider's configured headers, applied last so they override the defaults (pi-ai merges
// model.headers over its own defaults).
void apply_provider_headers(http_headers& headers, const actors::provider_config& provider);
// The max tokens pi-ai's streamSimple sends: the call's, else min(model maxTokens, 32000),
// else 0 (none).
std::int64_t requested_max_tokens(const provider_call& call);
bool model_accepts_images(const actors::provider_model& model);

// ---- Context ----

// Whether an assistant message came from the model being called (pi-ai isSameModel: same
// provider, api and model id); its thinking signatures and tool ids are then replayed as is.
bool same_model(const boost::json::object& assistant, const provider_call& call);

// Maps another model's tool-call id to one this API accepts; return the id unchanged to keep it.
using id_normalizer = std::function<std::string(std::string_view id)>;

// pi-ai transformMessages over call.messages. Entries that are not objects are skipped; roles
// other than user / assistant / toolResult pass through unchanged (pi-coding-agent's
// convertToLlm turns custom / bashExecution / branchSummary / compactionSummary into user
// messages before pi-ai sees them; each format then skips what is still left, as pi-ai does).
std::vector<boost::json::object> transform_messages(const provider_call& call, const id_normalizer& normalize);

// A message's content as an array (nullptr when it is a string or missing).
const boost::json::array* content_array(const boost::json::object& message);

// ---- Responses ----

// The builder's usage set from already-normalized counts.
void set_usage(assistant_builder& out, std::int64_t input, std::int64_t output, std::int64_t cache_read,
               std::int64_t cache_write);
// A JSON number member as an integer (JS `x || 0` for token counts: absent, null, non-numbers
// and NaN are 0; fractions truncate).
std::int64_t count(const boost::json::object& o, std::string_view key);

}  // namespace sessionrt::providers::wire
