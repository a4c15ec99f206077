// `sessionrt transcript context|check FILE`: read one transcript, never modify it.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "app/cli/command_line.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "messages/utf8.hpp"
#include "storage/context_builder.hpp"
#include "storage/transcript_check.hpp"

namespace sessionrt::runtime {
namespace {

// One line of readable text for a context message.
std::string preview(const boost::json::object& m) {
  std::string text;
  auto add = [&](std::string_view s) {
    if (!text.empty()) text += " ";
    text += s;
  };
  if (auto s = json::get_string(m, "summary")) add(*s);
  if (const auto* c = m.if_contains("content")) {
    if (c->is_string()) add(c->get_string());
    if (c->is_array())
      for (const auto& b : c->get_array()) {
        if (!b.is_object()) continue;
        const auto& bo = b.get_object();
        auto type = json::get_string(bo, "type").value_or("");
        if (auto t = json::get_string(bo, "text")) add(*t);
        else if (auto t = json::get_string(bo, "thinking")) add(fmt::format("(thinking) {}", *t));
        else if (type == "toolCall") add(fmt::format("(tool call {})", json::get_string(bo, "name").value_or("?")));
        else if (type == "image") add("(image)");
      }
  }
  for (char& ch : text)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  if (text.size() > 100) {
    text = std::string(utf8_prefix(text, 97)) + "...";
  }
  return text;
}

void context_command(const std::string& file, const std::string& leaf, bool as_json, bool whole, cli_state& st) {
  auto rd = storage::transcript_reader::open(storage::posix_fs(), file);
  if (!rd.ok()) {
    std::cerr << "sessionrt: " << rd.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  auto sel = leaf.empty() ? storage::leaf_selector::active() : storage::leaf_selector::of(leaf);
  auto ctx = storage::build_context(**rd, sel);
  if (!ctx.ok()) {
    std::cerr << "sessionrt: " << ctx.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  if (whole) {
    std::cout << json::to_pretty(ctx->to_json()) << "\n";
  } else if (as_json) {
    std::cout << json::to_pretty(ctx->messages) << "\n";
  } else {
    std::string model = "none";
    if (ctx->model.is_object())
      model = fmt::format("{}/{}", json::get_string(ctx->model.get_object(), "provider").value_or("?"),
                          json::get_string(ctx->model.get_object(), "modelId").value_or("?"));
    std::string thinking = ctx->thinking_level && ctx->thinking_level->is_string()
                               ? std::string(ctx->thinking_level->get_string())
                               : "(unset)";
    std::cout << fmt::format("{}\nleaf {}  thinking {}  model {}  {} message(s)\n", file, ctx->leaf_id.value_or("(none)"),
                             thinking, model, ctx->messages.size());
    int i = 0;
    for (const auto& m : ctx->messages) {
      const auto& o = m.get_object();
      std::cout << fmt::format("{:>4}. {:<18} {}\n", ++i, json::get_string(o, "role").value_or("?"), preview(o));
    }
  }
  const auto& stats = (*rd)->stats();
  if (stats.malformed_lines > 0 || stats.torn_tail_bytes > 0 || ctx->unreadable_entries > 0 || ctx->cycle_detected)
    std::cerr << fmt::format("sessionrt: warning: {} malformed line(s) skipped, {} torn tail byte(s), {} unreadable "
                             "context entr(ies){}; run `sessionrt transcript check {}`\n",
                             stats.malformed_lines, stats.torn_tail_bytes, ctx->unreadable_entries,
                             ctx->cycle_detected ? ", a parent cycle" : "", file);
}

void check_command(const std::string& file, bool as_json, cli_state& st) {
  auto rep = storage::check_transcript(storage::posix_fs(), file);
  if (!rep.ok()) {
    std::cerr << "sessionrt: " << rep.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  if (as_json) {
    boost::json::object o;
    o["path"] = rep->path;
    o["sessionId"] = rep->session_id;
    o["version"] = rep->version;
    o["bytes"] = rep->bytes;
    o["entries"] = rep->entries;
    o["leafId"] = rep->leaf_id.empty() ? boost::json::value(nullptr) : boost::json::value(rep->leaf_id);
    boost::json::array probs;
    for (const auto& p : rep->problems) probs.push_back({{"line", p.line}, {"problem", p.what}});
    o["problems"] = std::move(probs);
    o["ok"] = rep->ok();
    std::cout << json::to_pretty(o) << "\n";
  } else {
    std::cout << fmt::format("{}\nheader   session {} (version {})\nentries  {} in {} bytes\nleaf     {}\n", rep->path,
                             rep->session_id.empty() ? "(none)" : rep->session_id, rep->version, rep->entries, rep->bytes,
                             rep->leaf_id.empty() ? "(none)" : rep->leaf_id);
    if (rep->ok()) {
      std::cout << "problems none\n";
    } else {
      std::cout << fmt::format("problems {}\n", rep->problems.size());
      for (const auto& p : rep->problems)
        std::cout << (p.line ? fmt::format("  line {}: {}\n", p.line, p.what) : fmt::format("  {}\n", p.what));
    }
  }
  st.exit_code = rep->ok() ? 0 : 1;
}

void tail_command(const std::string& file, std::size_t n, std::size_t bytes, bool as_json, cli_state& st) {
  auto rd = storage::transcript_reader::open(storage::posix_fs(), file);
  if (!rd.ok()) {
    std::cerr << "sessionrt: " << rd.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  auto entries = (*rd)->tail(n, bytes);
  if (!entries.ok()) {
    std::cerr << "sessionrt: " << entries.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  for (const auto& e : *entries) {
    if (as_json) {
      std::cout << json::to_compact(e) << "\n";
      continue;
    }
    std::string what(json::get_string(e, "type").value_or("?"));
    std::string text;
    if (const auto* m = message_of(e)) {
      what = std::string(json::get_string(*m, "role").value_or("?"));
      text = preview(*m);
    } else {
      text = preview(e);  // a compaction or branch summary: its summary, on one line
    }
    std::cout << fmt::format("{} {} {:<16} {}\n", json::get_string(e, "timestamp").value_or("-"),
                             json::get_string(e, "id").value_or("-"), what, text);
  }
}

}  // namespace

void add_transcript_commands(CLI::App& app, cli_state& st) {
  auto* t = app.add_subcommand("transcript", std::string("Read one <sessionId>.jsonl transcript (never modifies it). ") +
                                                 reads_no_settings);
  t->require_subcommand(1);

  struct context_opts {
    std::string file, leaf;
    bool json = false, whole = false;
  };
  auto co = std::make_shared<context_opts>();
  auto* ctx = t->add_subcommand("context", "Print the model context the transcript builds (as pi's buildSessionContext)");
  ctx->add_option("FILE", co->file, "Transcript file")->required()->check(CLI::ExistingFile);
  ctx->add_option("--leaf", co->leaf, "Build from this entry id instead of the active leaf");
  ctx->add_flag("--json", co->json, "Print the messages as a JSON array, shaped like buildSessionContext().messages");
  ctx->add_flag("--context-json", co->whole, "Print {messages, thinkingLevel, model} as JSON");
  ctx->callback([co, &st] { context_command(co->file, co->leaf, co->json, co->whole, st); });

  struct check_opts {
    std::string file;
    bool json = false;
  };
  auto ko = std::make_shared<check_opts>();
  auto* chk = t->add_subcommand("check", "Report the header, entry count, leaf and problems; exit 1 if any problem");
  chk->add_option("FILE", ko->file, "Transcript file")->required()->check(CLI::ExistingFile);
  chk->add_flag("--json", ko->json, "Print the report as JSON");
  chk->callback([ko, &st] { check_command(ko->file, ko->json, st); });

  struct tail_opts {
    std::string file;
    std::size_t n = 20, bytes = 1u << 20;
    bool json = false;
  };
  auto to = std::make_shared<tail_opts>();
  auto* tl = t->add_subcommand("tail", "Print the last entries, reading at most --bytes from the end of the file");
  tl->add_option("FILE", to->file, "Transcript file")->required()->check(CLI::ExistingFile);
  tl->add_option("-n,--entries", to->n, "How many entries (default 20)");
  tl->add_option("--bytes", to->bytes, "Read at most this many bytes from the end (default 1 MiB)");
  tl->add_flag("--json", to->json, "Print the entries as JSON lines");
  tl->callback([to, &st] { tail_command(to->file, to->n, to->bytes, to->json, st); });
}

}  // namespace sessionrt::runtime
