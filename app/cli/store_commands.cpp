// `sessionrt store check|rewrite PATH`: one sessions.json file, offline.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "app/cli/command_line.hpp"
#include "messages/json_writer.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {
namespace {

boost::json::array changes_json(const std::vector<storage::store_change>& cs) {
  boost::json::array a;
  for (const auto& c : cs) a.push_back({{"key", c.key}, {"what", c.what}, {"why", c.why}});
  return a;
}

void print_changes(const char* title, const std::vector<storage::store_change>& cs) {
  if (cs.empty()) return;
  std::cout << fmt::format("{} ({}):\n", title, cs.size());
  for (const auto& c : cs)
    std::cout << fmt::format("  {}: {}{}\n", c.key.empty() ? "(file)" : c.key, c.what, c.why.empty() ? "" : " — " + c.why);
}

void check_command(const std::string& path, bool as_json, cli_state& st) {
  auto rep = storage::check_store_file(storage::posix_fs(), path);
  if (!rep.ok()) {
    std::cerr << "sessionrt: " << rep.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  const bool ok = rep->parse_status.ok() && rep->problems.empty();
  if (as_json) {
    boost::json::object o{{"path", rep->path},
                          {"parses", rep->parse_status.ok()},
                          {"error", rep->parse_status.ok() ? boost::json::value(nullptr)
                                                           : boost::json::value(rep->parse_status.message())},
                          {"entries", rep->entry_count},
                          {"trailingNewline", rep->trailing_newline},
                          {"canonical", rep->canonical},
                          {"problems", changes_json(rep->problems)},
                          {"ok", ok}};
    std::cout << json::to_pretty(o) << "\n";
  } else {
    std::cout << fmt::format("{}\n", rep->path);
    if (!rep->parse_status.ok()) {
      std::cout << fmt::format("unreadable: {}\n(a session runtime would set this file aside as sessions.json.corrupt-<ts> "
                               "and rebuild the store from transcript headers; run `sessionrt store rewrite` to do it now)\n",
                               rep->parse_status.message());
    } else {
      std::cout << fmt::format("entries  {}\nnewline  {}\nlayout   {}\n", rep->entry_count,
                               rep->trailing_newline ? "trailing newline" : "no trailing newline",
                               rep->canonical ? "as JSON.stringify(store, null, 2) writes it" : "a rewrite would reformat it");
      print_changes("load would change", rep->problems);
      if (rep->problems.empty()) std::cout << "problems none\n";
    }
  }
  st.exit_code = ok ? 0 : 1;
}

void rewrite_command(const std::string& path, bool as_json, cli_state& st) {
  auto rep = storage::rewrite_store_file(storage::posix_fs(), storage::real_clock(), path);
  if (!rep.ok()) {
    std::cerr << "sessionrt: " << rep.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  if (as_json) {
    boost::json::object o{{"path", rep->path}, {"entries", rep->entry_count}, {"changes", changes_json(rep->changes)}};
    if (rep->quarantine) {
      const auto& q = *rep->quarantine;
      boost::json::array rebuilt;
      for (const auto& r : q.rows_from_headers)
        rebuilt.push_back({{"key", r.key}, {"sessionId", r.session_id}, {"transcript", r.transcript_path}, {"keySource", r.key_source}});
      boost::json::array lost;
      for (const auto& k : q.unrecoverable_keys) lost.emplace_back(k);
      o["quarantine"] = {{"path", q.quarantined_path}, {"cause", q.cause}, {"rowsFromHeaders", rebuilt},
                         {"unrecoverableKeys", lost}, {"notes", changes_json(q.notes)}};
    }
    std::cout << json::to_pretty(o) << "\n";
  } else {
    std::cout << fmt::format("{}: {} entries written\n", rep->path, rep->entry_count);
    print_changes("normalized", rep->changes);
    if (rep->quarantine) {
      const auto& q = *rep->quarantine;
      std::cout << fmt::format("the file was unreadable ({}); moved to {}\n", q.cause, q.quarantined_path);
      if (!q.temp_base_path.empty())
        std::cout << fmt::format("recovered {} row(s) from {}\n", q.keys_from_temp.size(), q.temp_base_path);
      std::cout << fmt::format("rebuilt {} row(s) from transcript headers\n", q.rows_from_headers.size());
      for (const auto& r : q.rows_from_headers) std::cout << fmt::format("  {} -> {} ({})\n", r.key, r.session_id, r.key_source);
      if (!q.unrecoverable_keys.empty()) {
        std::cout << fmt::format("could not recover {} key(s):\n", q.unrecoverable_keys.size());
        for (const auto& k : q.unrecoverable_keys) std::cout << "  " << k << "\n";
      }
      print_changes("notes", q.notes);
    }
  }
  st.exit_code = 0;
}

}  // namespace

void add_store_commands(CLI::App& app, cli_state& st) {
  auto* s = app.add_subcommand("store", std::string("Check or rewrite one sessions.json file, or merge a cluster's "
                                                    "shards (offline). ") +
                                            reads_no_settings);
  s->require_subcommand(1);
  struct opts {
    std::string path;
    bool json = false;
  };
  auto co = std::make_shared<opts>();
  auto* chk = s->add_subcommand("check", "Report entries and what loading would change; never writes. Exit 1 on problems");
  chk->add_option("PATH", co->path, "sessions.json file")->required()->check(CLI::ExistingFile);
  chk->add_flag("--json", co->json, "Print the report as JSON");
  chk->callback([co, &st] { check_command(co->path, co->json, st); });
  auto ro = std::make_shared<opts>();
  auto* rw = s->add_subcommand("rewrite",
                               "Load then save: normalizes rows; an unreadable file is set aside (.corrupt-<ts>) and the "
                               "store rebuilt from transcript headers. A file the reference wrote comes out byte-identical");
  rw->add_option("PATH", ro->path, "sessions.json file")->required();
  rw->add_flag("--json", ro->json, "Print the report as JSON");
  rw->callback([ro, &st] { rewrite_command(ro->path, ro->json, st); });
}

}  // namespace sessionrt::runtime
