#include "storage/context_builder.hpp"

#include <unordered_set>

#include "messages/context_message.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::storage {
namespace {

using position = transcript_reader::position;

void copy_if(boost::json::object& out, const boost::json::object& in, std::string_view from, std::string_view to) {
  if (const auto* v = in.if_contains(from)) out[to] = *v;
}

boost::json::value model_of(const boost::json::object& e) {
  boost::json::object m;
  if (type_of(e) == entry_type::model_change) {
    copy_if(m, e, "provider", "provider");
    copy_if(m, e, "modelId", "modelId");
  } else if (const auto* msg = message_of(e)) {
    copy_if(m, *msg, "provider", "provider");
    copy_if(m, *msg, "model", "modelId");
  }
  return m;
}

// What one walk from a leaf toward the root found.
struct walk_result {
  std::vector<position> path;  // leaf first; ends at the root or where the walk stopped
  std::optional<position> model_at, thinking_at, compaction_at;
  std::shared_ptr<const boost::json::object> compaction;
  std::optional<std::size_t> first_kept_index;  // index into `path`
  std::optional<path_state> hinted;              // from the compaction's details.sessionrt
  bool cycle = false;
};

// `need_kept`: whether the entries from firstKeptEntryId to the compaction are needed (the
// context build) or only the thinking level / model (state_at).
result<walk_result> walk(transcript_reader& rd, position leaf, bool need_kept) {
  walk_result w;
  auto& idx = rd.index();
  std::optional<position> cur = leaf;
  std::string first_kept_id;
  std::size_t steps = 0;
  while (cur) {
    if (++steps > idx.size() + 1) {  // every step visits a distinct record unless there is a cycle
      w.cycle = true;
      truncate_at_repeat(w.path);
      break;
    }
    const index_record& rec = idx.at(*cur);  // deque growth at either end keeps references valid
    if (rec.type != entry_type::leaf) {     // OpenClaw leaf controls are not on the path
      w.path.push_back(*cur);
      if (!w.model_at && (rec.type == entry_type::model_change || rec.assistant)) w.model_at = *cur;
      if (!w.thinking_at && rec.type == entry_type::thinking_level_change) w.thinking_at = *cur;
      if (w.compaction_at && !w.first_kept_index && rec.id == first_kept_id) w.first_kept_index = w.path.size() - 1;
      if (!w.compaction_at && rec.type == entry_type::compaction) {
        w.compaction_at = *cur;
        auto c = rd.entry(*cur);
        if (!c.ok()) return c.error();
        w.compaction = *c;
        if (w.compaction) {
          first_kept_id = std::string(json::get_string(*w.compaction, "firstKeptEntryId").value_or(""));
          if (const auto* d = json::get_object(*w.compaction, "details"))
            if (const auto* s = json::get_object(*d, kCompactionStateKey)) {
              path_state ps;
              if (const auto* t = s->if_contains("thinkingLevel")) ps.thinking_level = *t;
              if (const auto* m = s->if_contains("model")) ps.model = *m;
              w.hinted = std::move(ps);
            }
        }
      }
      const bool settled = w.compaction_at && w.hinted;  // state before the compaction is known
      if (settled && (!need_kept || w.first_kept_index)) break;
    }
    if (!rec.has_parent) break;
    auto p = rd.locate(rec.parent_id);
    if (!p.ok()) return p.error();
    cur = *p;
  }
  return w;
}

result<std::optional<position>> resolve_leaf(transcript_reader& rd, const leaf_selector& sel) {
  switch (sel.which) {
    case leaf_selector::kind::none: return std::optional<position>();
    case leaf_selector::kind::id: {
      auto p = rd.locate(sel.id);
      if (!p.ok()) return p.error();
      if (*p) return *p;
      return rd.last_entry();  // pi: an unknown leafId falls back to the last entry
    }
    case leaf_selector::kind::active: break;
  }
  return rd.active_leaf();
}

// Fills thinking level and model: from the walk's own entries when found, else from the
// compaction note; `entries` holds the parsed lines for model_at / thinking_at.
void settle_state(const walk_result& w, const std::shared_ptr<const boost::json::object>& model_entry,
                  const std::shared_ptr<const boost::json::object>& thinking_entry, path_state& out) {
  out.thinking_level = boost::json::value("off");
  if (thinking_entry) {
    const auto* t = thinking_entry->if_contains("thinkingLevel");
    out.thinking_level = t ? std::optional<boost::json::value>(*t) : std::nullopt;
  } else if (w.hinted) {
    out.thinking_level = w.hinted->thinking_level;
  }
  if (model_entry)
    out.model = model_of(*model_entry);
  else if (w.hinted)
    out.model = w.hinted->model;
}

}  // namespace

boost::json::object session_context::to_json() const {
  boost::json::object o;
  o["messages"] = messages;
  if (thinking_level) o["thinkingLevel"] = *thinking_level;
  o["model"] = model;
  return o;
}

boost::json::object path_state::to_json() const {
  boost::json::object o;
  if (thinking_level) o["thinkingLevel"] = *thinking_level;
  o["model"] = model;
  return o;
}

result<path_state> state_at(transcript_reader& rd, std::optional<position> leaf) {
  path_state st;
  st.thinking_level = boost::json::value("off");
  if (!leaf) return st;
  auto w = walk(rd, *leaf, false);
  if (!w.ok()) return w.error();
  std::vector<position> want;
  if (w->model_at) want.push_back(*w->model_at);
  if (w->thinking_at) want.push_back(*w->thinking_at);
  auto got = rd.entries(want);
  if (!got.ok()) return got.error();
  std::size_t i = 0;
  auto model_entry = w->model_at ? (*got)[i++] : nullptr;
  auto thinking_entry = w->thinking_at ? (*got)[i++] : nullptr;
  settle_state(*w, model_entry, thinking_entry, st);
  return st;
}

result<std::vector<std::shared_ptr<const boost::json::object>>> path_entries(transcript_reader& rd,
                                                                             std::optional<position> leaf) {
  std::vector<std::shared_ptr<const boost::json::object>> out;
  if (!leaf) return out;
  auto w = walk(rd, *leaf, true);
  if (!w.ok()) return w.error();
  // With a compaction on the path, start at its firstKeptEntryId (the walk stopped there or
  // went to the root when the note was missing; cut it down to the boundary either way).
  std::size_t top = w->path.size();
  if (w->compaction_at && w->first_kept_index) top = *w->first_kept_index + 1;
  std::vector<position> ps(w->path.rend() - static_cast<std::ptrdiff_t>(top), w->path.rend());
  auto got = rd.entries(ps);
  if (!got.ok()) return got.error();
  for (auto& e : *got)
    if (e) out.push_back(std::move(e));
  return out;
}

result<session_context> build_context(transcript_reader& rd, const leaf_selector& sel, std::size_t last_messages) {
  session_context ctx;
  ctx.thinking_level = boost::json::value("off");
  auto leaf = resolve_leaf(rd, sel);
  if (!leaf.ok()) return leaf.error();
  if (!*leaf) return ctx;
  ctx.leaf_id = rd.index().at(**leaf).id;

  auto w = walk(rd, **leaf, true);
  if (!w.ok()) return w.error();
  ctx.path_entries_walked = w->path.size();
  ctx.cycle_detected = w->cycle;

  // Path in root -> leaf order, restricted to what enters the context.
  std::vector<position> emit;
  auto enters = [&](position p) {
    auto t = rd.index().at(p).type;
    return t == entry_type::message || t == entry_type::custom_message || t == entry_type::branch_summary;
  };
  const auto& path = w->path;  // leaf first
  if (w->compaction_at) {
    std::size_t ci = 0;
    while (path[ci] != *w->compaction_at) ++ci;
    if (w->first_kept_index)
      for (std::size_t i = *w->first_kept_index + 1; i-- > ci + 1;)
        if (enters(path[i])) emit.push_back(path[i]);
    for (std::size_t i = ci; i-- > 0;)
      if (enters(path[i])) emit.push_back(path[i]);
  } else {
    for (std::size_t i = path.size(); i-- > 0;)
      if (enters(path[i])) emit.push_back(path[i]);
  }

  // A page: the summary (the context's first message) only when the whole context fits.
  const bool summary = w->compaction != nullptr;
  ctx.total_messages = emit.size() + (summary ? 1 : 0);
  bool with_summary = summary;
  if (last_messages && ctx.total_messages > last_messages) {
    with_summary = false;
    emit.erase(emit.begin(), emit.end() - static_cast<std::ptrdiff_t>(last_messages));
  }

  std::vector<position> want = emit;
  if (w->model_at) want.push_back(*w->model_at);
  if (w->thinking_at) want.push_back(*w->thinking_at);
  auto got = rd.entries(want);
  if (!got.ok()) return got.error();
  std::size_t extra = emit.size();
  auto model_entry = w->model_at ? (*got)[extra++] : nullptr;
  auto thinking_entry = w->thinking_at ? (*got)[extra++] : nullptr;
  path_state st;
  settle_state(*w, model_entry, thinking_entry, st);
  ctx.thinking_level = std::move(st.thinking_level);
  ctx.model = std::move(st.model);

  if (with_summary) ctx.messages.emplace_back(compaction_summary_context_message(*w->compaction));
  for (std::size_t i = 0; i < emit.size(); ++i) {
    const auto& e = (*got)[i];
    if (!e) {
      ++ctx.unreadable_entries;
      continue;
    }
    switch (type_of(*e)) {
      case entry_type::message:
        if (const auto* msg = message_of(*e)) {
          // A line the reader parsed just now is owned by `got` alone (transcript_reader::entries
          // makes it non-const and caches it nowhere): its message is moved, not copied.
          if (e.use_count() == 1)
            ctx.messages.emplace_back(std::move(const_cast<boost::json::value&>(e->at("message"))));
          else
            ctx.messages.emplace_back(*msg);
        } else {
          ++ctx.unreadable_entries;
        }
        break;
      case entry_type::custom_message: ctx.messages.emplace_back(custom_context_message(*e)); break;
      case entry_type::branch_summary: {
        auto summary = json::get_string(*e, "summary");
        const auto* sv = e->if_contains("summary");
        // pi: `entry.summary` must be truthy (a non-empty string, or any other truthy value)
        bool truthy = sv && !sv->is_null() && !(summary && summary->empty()) && !(sv->is_bool() && !sv->get_bool()) &&
                      !(json::as_number(*sv) && *json::as_number(*sv) == 0);
        if (truthy) ctx.messages.emplace_back(branch_summary_context_message(*e));
        break;
      }
      default: break;
    }
  }
  return ctx;
}

void truncate_at_repeat(std::vector<transcript_reader::position>& path) {
  std::unordered_set<transcript_reader::position> seen;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (!seen.insert(path[i]).second) {
      path.resize(i);
      return;
    }
}

}  // namespace sessionrt::storage
