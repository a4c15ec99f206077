// Writes transcripts with sessionrt's writer for the pi compatibility test (pi_compat.mjs):
// one file per scenario in the directory given as argv[1].
#include <stdlib.h>

#include <filesystem>
#include <iostream>

#include "messages/transcript_entry.hpp"
#include "storage/system_clock.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

boost::json::object assistant(boost::json::array content, const std::string& stop = "stop") {
  assistant_fields a;
  a.content = std::move(content);
  a.model = "claude-sonnet-4-5";
  a.usage.input = 1200;
  a.usage.output = 90;
  a.usage.cost_input = 0.0036;
  a.usage.cost_output = 0.00135;
  a.stop_reason = stop;
  a.timestamp_ms = 1789041615000;
  return assistant_message(std::move(a));
}
boost::json::array text(const std::string& t) { return boost::json::array{text_block(t)}; }

std::unique_ptr<transcript_file> make(const std::string& dir, const std::string& name) {
  header_fields h;
  h.id = name;
  h.timestamp_ms = real_clock().now_ms();
  h.cwd = "/home/compat/project";
  h.session_key = "agent:main:compat:" + name;
  transcript_options o;
  o.mode = durability::none;
  auto t = transcript_file::create(posix_fs(), real_clock(), dir + "/" + name + ".jsonl", h, o);
  if (!t.ok()) {
    std::cerr << t.error().message() << "\n";
    std::exit(2);
  }
  return std::move(*t);
}

#define OK(expr)                                                             \
  do {                                                                       \
    auto r_ = (expr);                                                        \
    if (!r_.ok()) {                                                          \
      std::cerr << #expr << ": " << r_.to_status().message() << "\n";        \
      std::exit(2);                                                          \
    }                                                                        \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: compat_writer DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  {
    auto t = make(dir, "sr_basic");
    OK(t->append_model_change("anthropic", "claude-sonnet-4-5"));
    OK(t->append_thinking_level("medium"));
    OK(t->append_message(user_message("Hi! What does the session store persist?", 1789041601000)));
    OK(t->append_message(assistant(text("Session rows: ids, timestamps, tokens."))));
    OK(t->append_message(user_message("And transcripts?", 1789041602000)));
    OK(t->append_message(assistant(text("One JSONL line per entry."))));
  }
  {
    auto t = make(dir, "sr_toolcall");
    OK(t->append_message(user_message("List src/", 1)));
    boost::json::object thinking{{"type", "thinking"}, {"thinking", "Use ls."}, {"thinkingSignature", "sig-1"}};
    boost::json::object call{{"type", "toolCall"}, {"id", "toolu_01"}, {"name", "bash"},
                             {"arguments", boost::json::object{{"command", "ls src/"}, {"timeout", 30.5}}}};
    OK(t->append_message(assistant(boost::json::array{thinking, text_block("Listing."), call}, "toolUse")));
    OK(t->append_message(tool_result_message("toolu_01", "bash", text("main.cpp\nsession.cpp"), false, 3)));
    OK(t->append_message(assistant(text("Two files."))));
  }
  {
    auto t = make(dir, "sr_compaction");
    std::string keep;
    for (int i = 0; i < 6; ++i) {
      auto u = t->append_message(user_message("step " + std::to_string(i), 10 + i));
      OK(u);
      if (i == 4) keep = *u;
      OK(t->append_message(assistant(text("done " + std::to_string(i)))));
    }
    OK(t->append_compaction("## Goal\nPort it.\n## Progress\n- steps 0-3", keep, 48213));
    OK(t->append_message(user_message("after the compaction", 99)));
    OK(t->append_message(assistant(text("continuing"))));
    OK(t->append_compaction("second summary", keep, 50000));
    OK(t->append_message(user_message("after the second", 100)));
  }
  {
    auto t = make(dir, "sr_branch");
    OK(t->append_session_info("vector: branching"));
    auto u1 = t->append_message(user_message("Pick a format.", 1));
    OK(u1);
    auto a1 = t->append_message(assistant(text("JSONL or SQLite.")));
    OK(a1);
    OK(t->append_message(user_message("SQLite.", 2)));
    OK(t->append_message(assistant(text("Using SQLite."))));
    OK(t->append_label(*u1, "decision-point"));
    OK(t->append_branch_summary(*a1, "Abandoned SQLite path."));
    OK(t->append_message(user_message("Actually JSONL.", 3)));
    OK(t->append_message(assistant(text("Using JSONL."))));
  }
  {
    auto t = make(dir, "sr_unicode");
    OK(t->append_message(user_message("emoji 😀 CJK 上下文 quotes \" \\ newline\n tab\t ctrl \x01 sep \xe2\x80\xa8 end", 1)));
    OK(t->append_message(assistant(text("réponse — ok ✓"))));
    boost::json::object nums{{"type", "toolCall"}, {"id", "c"}, {"name", "calc"},
                             {"arguments", boost::json::object{{"a", 0.1}, {"b", 1e21}, {"c", 1e-7}, {"d", -0.0},
                                                               {"e", 123456789012}, {"f", 5e-324}}}};
    OK(t->append_message(assistant(boost::json::array{nums}, "toolUse")));
  }
  {
    auto t = make(dir, "sr_custom");
    OK(t->append_message(user_message("hello", 1)));
    OK(t->append_custom("model-snapshot", boost::json::value(boost::json::object{{"provider", "openai"}})));
    OK(t->append_custom_message("openclaw.note", boost::json::value("hidden note"), false,
                                boost::json::value(boost::json::object{{"source", "demo"}})));
    OK(t->append_custom_message("openclaw.blocks", boost::json::value(text("block note")), true));
    boost::json::object img{{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}};
    OK(t->append_message(user_message(boost::json::array{text_block("look"), img}, 2)));
    OK(t->append_message(assistant(text("seen"))));
  }
  {
    auto t = make(dir, "sr_long");
    std::string keep;
    const std::string body(300, 'w');
    for (int i = 0; i < 1000; ++i) {
      auto u = t->append_message(user_message(body + std::to_string(i), i));
      OK(u);
      if (i == 990) keep = *u;
      OK(t->append_message(assistant(text(body))));
    }
    OK(t->append_compaction("long summary", keep, 180000));
    OK(t->append_message(user_message("tail", 1)));
  }
  // Transcripts the runtime compacted itself (small window), and a successor transcript.
  int copied = 0;
  for (bool successor : {false, true}) {
    char tmpl[] = "/tmp/sessionrt-compat-XXXXXX";
    const std::string state = mkdtemp(tmpl);
    runtime::simulated_model_options mo;
    mo.context_window = 3000;
    runtime::runtime_options o;
    o.settings.state_dir = state;
    o.settings.session.reset.timezone = "UTC";
    o.settings.model.context_window = 3000;
    o.settings.compaction.reserve_tokens = 600;
    o.settings.compaction.reserve_tokens_floor = 500;
    o.settings.compaction.keep_recent_tokens = 400;
    o.settings.compaction.truncate_after_compaction = successor;
    o.settings.memory_flush.soft_threshold_tokens = 500;
    o.runner = std::make_shared<runtime::simulated_model>(real_clock(), mo);
    auto rt = runtime::runtime::start(o);
    if (!rt.ok()) {
      std::cerr << rt.error().message() << "\n";
      return 2;
    }
    for (int i = 0; i < 25; ++i) {
      chat_event ev;
      ev.channel = "telegram";
      ev.peer_id = "1";
      ev.text = "Turn " + std::to_string(i) + ": " + std::string(300, static_cast<char>('a' + i % 26));
      if (!(*rt)->send(ev).get().st.ok()) return 2;
    }
    if (!(*rt)->stop().ok()) return 2;
    const std::string sessions = state + "/agents/main/sessions";
    auto names = posix_fs().list_dir(sessions);
    if (!names.ok()) return 2;
    for (const auto& name : *names) {
      if (name.size() < 7 || name.substr(name.size() - 6) != ".jsonl") continue;
      auto text = read_file(posix_fs(), sessions + "/" + name, 1u << 30);
      if (!text.ok() || !replace_file_atomic(posix_fs(), dir + "/rt" + (successor ? "succ_" : "_") + name, *text).ok())
        return 2;
      ++copied;
    }
    std::error_code ec;
    std::filesystem::remove_all(state, ec);  // the copies are in `dir`; the runtime's state dir goes
  }
  // A sub-agent forked from a compacted parent (actors/session/fork_planner.hpp): the parent's
  // and the child's transcripts as rtfork_parent.jsonl / rtfork_child.jsonl, and rtfork.leaf
  // with the parent's leaf id and its file name; pi_compat.mjs checks that pi builds the
  // child's context at that leaf equal to the parent's.
  {
    char tmpl[] = "/tmp/sessionrt-compat-XXXXXX";
    const std::string state = mkdtemp(tmpl);
    runtime::runtime_options o;
    o.settings.state_dir = state;
    o.settings.session.reset.timezone = "UTC";
    o.settings.compaction.keep_recent_tokens = 10;  // so that /compact has something to summarize
    o.runner = std::make_shared<runtime::simulated_model>(real_clock());
    auto rt = runtime::runtime::start(o);
    if (!rt.ok()) return 2;
    for (const char* text : {"Port the session store.", "Keep it byte-compatible.", "/compact keep decisions",
                             "Now the write lock."}) {
      chat_event ev;
      ev.channel = "telegram";
      ev.peer_id = "1";
      ev.text = text;
      if (!(*rt)->send(ev).get().st.ok()) return 2;
    }
    auto parent = (*rt)->session("agent:main:main");
    if (!parent.ok() || !*parent) return 2;
    const std::string parent_path(parent->value().session_file().value_or(""));
    auto parent_text = read_file(posix_fs(), parent_path, 1u << 30);
    if (!parent_text.ok()) return 2;
    const std::string last_line = parent_text->substr(parent_text->rfind('\n', parent_text->size() - 2) + 1);
    auto last = boost::json::parse(last_line);
    const std::string leaf(last.as_object().at("id").as_string());
    actors::subagent_spec spec;
    spec.task = "Write the lock section.";
    spec.fork = true;
    auto child = (*rt)->spawn_subagent("agent:main:main", spec).get();
    if (!child.st.ok()) {
      std::cerr << "fork: " << child.st.message() << "\n";
      return 2;
    }
    auto child_row = (*rt)->session(child.session_key);
    if (!child_row.ok() || !*child_row) return 2;
    auto child_text = read_file(posix_fs(), std::string(child_row->value().session_file().value_or("")), 1u << 30);
    if (!(*rt)->stop().ok() || !child_text.ok()) return 2;
    if (!replace_file_atomic(posix_fs(), dir + "/rtfork_parent.jsonl", *parent_text).ok() ||
        !replace_file_atomic(posix_fs(), dir + "/rtfork_child.jsonl", *child_text).ok() ||
        !replace_file_atomic(posix_fs(), dir + "/rtfork.leaf", leaf + "\n" + path_basename(parent_path) + "\n").ok())
      return 2;
    copied += 2;
    std::error_code ec;
    std::filesystem::remove_all(state, ec);
  }
  std::cout << "wrote 7 transcripts and copied " << copied << " runtime-written ones to " << dir << "\n";
  return 0;
}
