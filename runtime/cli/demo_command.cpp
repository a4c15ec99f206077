// `sessionrt demo`: writes a few sessions into a fresh state dir and prints them — the
// README's first command. Storage-level for now: rows and transcripts are written through the
// storage layer directly (a direct chat with a compaction, a group, a cron run).
#include <stdlib.h>

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "runtime/cli/cli.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_file.hpp"

namespace sessionrt::runtime {
namespace {

boost::json::object reply(const std::string& text, std::int64_t ts) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.api = "sim";
  a.provider = "sessionrt";
  a.model = "sim-1";
  a.usage.input = 40 + static_cast<std::int64_t>(text.size() / 4);
  a.usage.output = static_cast<std::int64_t>(text.size() / 4);
  a.timestamp_ms = ts;
  return assistant_message(std::move(a));
}

struct demo_session {
  std::string key, chat_type;
  std::vector<std::pair<std::string, std::string>> turns;
  bool compact = false;
};

status write_session(storage::session_store& store, const std::string& dir, const demo_session& d, clock& clk) {
  const std::string id = new_session_id();
  auto path = storage::transcript_path(dir, id);
  if (!path.ok()) return path.error();
  header_fields h;
  h.id = id;
  h.timestamp_ms = clk.now_ms();
  h.cwd = dir;
  h.session_key = d.key;
  auto t = storage::transcript_file::create(storage::posix_fs(), clk, *path, h);
  if (!t.ok()) return t.error();
  auto& tf = **t;
  std::string keep;
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < d.turns.size(); ++i) {
    auto u = tf.append_message(user_message(d.turns[i].first, clk.now_ms()));
    if (!u.ok()) return u.error();
    if (i + 1 == d.turns.size()) keep = *u;
    if (auto r = tf.append_message(reply(d.turns[i].second, clk.now_ms())); !r.ok()) return r.error();
    tokens += 40 + static_cast<std::int64_t>(d.turns[i].second.size() / 2);
  }
  if (d.compact)
    if (auto c = tf.append_compaction("## Goal\nShow sessionrt's files.\n## Progress\n- earlier turns summarized", keep, tokens);
        !c.ok())
      return c.error();
  SRT_RETURN_IF_ERROR(tf.sync());
  session_entry e;
  e.set_session_id(id);
  e.set_updated_at(clk.now_ms());
  e.set_session_started_at(h.timestamp_ms);
  e.set_last_interaction_at(clk.now_ms());
  e.set_chat_type(d.chat_type);
  e.set_session_file(*path);
  e.set_compaction_count(d.compact ? 1 : 0);
  e.set_total_tokens(tokens);
  e.set_total_tokens_fresh(true);
  store.upsert(d.key, std::move(e));
  return {};
}

void demo_command(std::string state, cli_state& st) {
  auto& clk = storage::real_clock();
  if (state.empty()) {
    char tmpl[] = "/tmp/sessionrt-demo-XXXXXX";
    if (!mkdtemp(tmpl)) {
      std::cerr << "sessionrt: cannot create a temporary state dir\n";
      st.exit_code = 2;
      return;
    }
    state = tmpl;
  }
  auto dir = storage::agent_sessions_dir(state, "main");
  auto store_path = storage::store_path(state, "main");
  if (!dir.ok() || !store_path.ok()) {
    std::cerr << "sessionrt: " << (dir.ok() ? store_path.error() : dir.error()).message() << "\n";
    st.exit_code = 2;
    return;
  }
  if (status s = storage::ensure_dir(storage::posix_fs(), *dir); !s.ok()) {
    std::cerr << "sessionrt: " << s.message() << "\n";
    st.exit_code = 2;
    return;
  }
  storage::session_store_file store(storage::posix_fs(), clk, *store_path);
  if (auto loaded = store.load(); !loaded.ok()) {
    std::cerr << "sessionrt: " << loaded.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  const std::vector<demo_session> sessions = {
      {"agent:main:main",
       "direct",
       {{"Hi! What does sessionrt keep for me?", "A row in sessions.json and one JSONL transcript per session."},
        {"Can pi read them?", "Yes: the files are the ones OpenClaw and pi use."},
        {"Summarize what we said.", "Sessions are stored as OpenClaw stores them; compaction keeps context small."}},
       true},
      {"agent:main:telegram:group:-100123", "group", {{"Team: release at 5?", "Noted: release at 17:00."}}, false},
      {"agent:main:cron:nightly-report", "direct", {{"Nightly report, please.", "All 3 sessions healthy."}}, false},
  };
  for (const auto& d : sessions)
    if (status s = write_session(store.store(), *dir, d, clk); !s.ok()) {
      std::cerr << "sessionrt: " << s.message() << "\n";
      st.exit_code = 2;
      return;
    }
  if (status s = store.save(); !s.ok()) {
    std::cerr << "sessionrt: " << s.message() << "\n";
    st.exit_code = 2;
    return;
  }
  std::cout << fmt::format("state dir  {}\nstore      {}\n\n{:<36} {:<8} {:<36} {:>8}\n", state, *store_path, "key",
                           "type", "sessionId", "context");
  for (const auto& row : store.store()) {
    std::string path(row.entry.session_file().value_or(""));
    auto rd = storage::transcript_reader::open(storage::posix_fs(), path);
    std::size_t msgs = 0;
    if (rd.ok())
      if (auto ctx = storage::build_context(**rd); ctx.ok()) msgs = ctx->messages.size();
    std::cout << fmt::format("{:<36} {:<8} {:<36} {:>5} msg\n", row.key, row.entry.chat_type().value_or("?"),
                             row.entry.session_id().value_or("?"), msgs);
  }
  const auto* main = store.store().find("agent:main:main");
  std::cout << fmt::format("\nthe main session's model context (after its compaction):\n");
  if (main) {
    auto rd = storage::transcript_reader::open(storage::posix_fs(), std::string(main->session_file().value_or("")));
    if (rd.ok())
      if (auto ctx = storage::build_context(**rd); ctx.ok())
        for (const auto& m : ctx->messages) {
          const auto& o = m.as_object();
          std::string text;
          if (auto s = json::get_string(o, "summary")) text = *s;
          else if (auto c = json::get_string(o, "content")) text = *c;
          else if (const auto* a = json::get_array(o, "content"); a && !a->empty() && a->at(0).is_object())
            text = std::string(json::get_string(a->at(0).as_object(), "text").value_or(""));
          for (char& ch : text)
            if (ch == '\n') ch = ' ';
          std::cout << fmt::format("  {:<18} {}\n", json::get_string(o, "role").value_or("?"), text);
        }
  }
  std::cout << fmt::format("\ninspect them with:\n  build/sessionrt store check {}\n  build/sessionrt transcript context {}\n",
                           *store_path, main ? std::string(main->session_file().value_or("")) : std::string());
}

}  // namespace

void add_demo_command(CLI::App& app, cli_state& st) {
  auto state = std::make_shared<std::string>();
  auto* d = app.add_subcommand("demo", "Write a few sessions into a fresh state dir and print them");
  d->add_option("--state", *state, "State dir to use (default: a new directory under /tmp)");
  d->callback([state, &st] { demo_command(*state, st); });
}

}  // namespace sessionrt::runtime
