#include "tests/cluster/turn_history.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "cluster/shard_id.hpp"
#include "cluster/shard_layout.hpp"
#include "tests/cluster/cluster_processes.hpp"

namespace sessionrt::testing {
namespace {

namespace bj = boost::json;
namespace fs = std::filesystem;

std::string string_at(const bj::object& o, const char* name) {
  const auto* v = o.if_contains(name);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string text_of(const bj::object& message) {
  const auto* content = message.if_contains("content");
  if (!content) return "";
  if (content->is_string()) return std::string(content->as_string());
  std::string out;
  if (content->is_array())
    for (const auto& part : content->as_array())
      if (const auto* p = part.if_object()) out += string_at(*p, "text");
  return out;
}

// "k07 #0012" -> (k07, 12) when the tag is one of the load's.
bool parse_turn_text(const std::string& text, const std::set<std::string>& tags, std::string& tag, int& seq) {
  const auto hash = text.find(" #");
  if (hash == std::string::npos || text.size() != hash + 6) return false;
  tag = text.substr(0, hash);
  if (!tags.count(tag)) return false;
  seq = 0;
  for (std::size_t i = hash + 2; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    seq = seq * 10 + (text[i] - '0');
  }
  return true;
}

struct tagged_line {
  std::string tag;
  user_line line;
};

// The user lines of the load in one transcript, in file order; every line must parse.
std::vector<tagged_line> read_transcript(const std::string& path, const std::set<std::string>& tags,
                                         history_read& out) {
  std::vector<tagged_line> users;
  std::map<std::string, std::size_t> user_by_id;  // line id -> index in users
  std::vector<std::pair<std::string, std::string>> replies;  // parentId, text
  std::istringstream in(read_all(path));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty()) continue;
    ++out.lines;
    bj::error_code ec;
    bj::value v = bj::parse(line, ec);
    if (ec || !v.is_object()) {
      out.unreadable.push_back(path + ":" + std::to_string(n) + ": " + line.substr(0, 120));
      continue;
    }
    const auto& o = v.as_object();
    const auto* m = o.if_contains("message");
    if (string_at(o, "type") != "message" || !m || !m->is_object()) continue;
    const auto& msg = m->as_object();
    const std::string role = string_at(msg, "role"), text = text_of(msg);
    if (role == "assistant") {
      replies.emplace_back(string_at(o, "parentId"), text);
      continue;
    }
    tagged_line t;
    if (role != "user" || !parse_turn_text(text, tags, t.tag, t.line.seq)) continue;
    if (const auto* oc = msg.if_contains("__openclaw"); oc && oc->is_object())
      t.line.run_id = string_at(oc->as_object(), "runId");
    user_by_id[string_at(o, "id")] = users.size();
    users.push_back(std::move(t));
  }
  for (const auto& [parent, text] : replies)
    if (auto it = user_by_id.find(parent); it != user_by_id.end()) {
      auto& u = users[it->second];
      if (text.find(turn_text(u.tag, u.line.seq)) != std::string::npos) u.line.answered = true;
    }
  return users;
}

}  // namespace

history_read read_history(const std::string& cluster_dir, const std::string& agent,
                          const std::vector<std::string>& keys) {
  history_read out;
  std::set<std::string> tags;
  std::map<std::string, std::string> key_of_tag;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    tags.insert(key_tag(i));
    key_of_tag[key_tag(i)] = keys[i];
  }
  // Each key's transcript, as its shard's store names it.
  std::map<std::string, std::string> transcript_key;  // path -> session key
  for (const auto& key : keys) {
    key_transcript& kt = out.keys[key];
    auto dir = cluster::shard_sessions_dir(cluster_dir, cluster::shard_of(key));
    if (!dir) continue;
    bj::error_code ec;
    bj::value store = bj::parse(read_all(*dir + "/sessions.json"), ec);
    if (ec || !store.is_object()) continue;  // reported by the scan below
    const auto* row = store.as_object().if_contains(key);
    if (!row || !row->is_object()) continue;
    kt.row = true;
    const std::string file = string_at(row->as_object(), "sessionFile");
    kt.path = file.empty() ? *dir + "/" + string_at(row->as_object(), "sessionId") + ".jsonl"
                           : (file[0] == '/' ? file : *dir + "/" + file);
    transcript_key[fs::path(kt.path).lexically_normal().string()] = key;
  }
  // Every store and transcript under shards/: each must load.
  std::error_code ec;
  const std::string root = cluster::shards_root(cluster_dir) + "/" + agent;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string path = it->path().lexically_normal().string();
    if (it->path().filename() == "sessions.json") {
      ++out.stores;
      bj::error_code pe;
      bj::value v = bj::parse(read_all(path), pe);
      if (pe || !v.is_object()) out.unreadable.push_back(path + ": " + (pe ? pe.message() : "not an object"));
      continue;
    }
    if (it->path().extension() != ".jsonl") continue;
    ++out.transcripts;
    const auto owner = transcript_key.find(path);
    for (auto& t : read_transcript(path, tags, out)) {
      const std::string& key = key_of_tag.at(t.tag);
      if (owner != transcript_key.end() && owner->second == key) out.keys[key].lines.push_back(std::move(t.line));
      else out.orphans[key].push_back(std::move(t.line));
    }
  }
  return out;
}

history_check check_history(const history_read& read, const std::vector<load_turn>& turns) {
  history_check c;
  auto problem = [&](std::string s) {
    if (c.problems.size() < 12) c.problems.push_back(std::move(s));
  };
  std::map<std::string, std::map<int, turn_presence>> present;  // key -> seq -> presence
  for (const auto& [key, kt] : read.keys) {
    if (!kt.row) ++c.keys_without_row;
    int last = 0;
    for (const auto& l : kt.lines) {
      auto& p = present[key][l.seq];
      ++p.copies;
      p.answered = p.answered || l.answered;
      if (l.seq < last) {
        ++c.order_breaks;
        problem(key + ": #" + std::to_string(l.seq) + " after #" + std::to_string(last) + " in " + kt.path);
      }
      last = std::max(last, l.seq);
    }
  }
  for (const auto& [key, lines] : read.orphans) c.orphan_lines += static_cast<int>(lines.size());
  for (const auto& t : turns) {
    turn_presence p;
    if (auto k = present.find(t.key); k != present.end())
      if (auto s = k->second.find(t.seq); s != k->second.end()) p = s->second;
    c.by_run[t.run_id] = p;
    if (p.copies > 1) {
      c.duplicates += p.copies - 1;
      if (t.sends <= 1) c.duplicates_unretried += p.copies - 1;
      problem(t.key + ": \"" + t.text + "\" " + std::to_string(p.copies) + " times (" + to_string(t.end) + ", " +
              std::to_string(t.sends) + " sends)");
    }
    if (t.end == turn_end::acknowledged) {
      ++c.acknowledged;
      if (t.reply.find(t.text) == std::string::npos) {
        ++c.wrong_replies;
        problem(t.key + ": \"" + t.text + "\" acknowledged with the reply \"" + t.reply.substr(0, 80) + "\"");
      }
      if (!p.answered) {
        ++c.lost;
        problem(t.key + ": acknowledged \"" + t.text + "\" " +
                (p.copies ? "without its answer" : "not in " + read.keys.at(t.key).path));
      }
    } else if (p.copies > 0) {
      ++c.unacknowledged_present;
    }
  }
  return c;
}

std::string load_figures(const std::vector<load_turn>& turns, const history_check& check,
                         const std::function<bool(const load_turn&)>& select) {
  int sent = 0, acked = 0, deduped = 0, failed = 0, unanswered = 0, lost = 0, dup = 0, waited = 0;
  std::vector<double> ms;
  for (const auto& t : turns) {
    if (!select(t)) continue;
    ++sent;
    if (t.waits > 0) ++waited;
    const auto p = check.by_run.count(t.run_id) ? check.by_run.at(t.run_id) : turn_presence{};
    dup += std::max(0, p.copies - 1);
    switch (t.end) {
      case turn_end::acknowledged:
        ++acked;
        ms.push_back(t.latency_ms());
        if (!p.answered) ++lost;
        break;
      case turn_end::deduped: ++deduped; break;
      case turn_end::failed: ++failed; break;
      case turn_end::unanswered:
      case turn_end::pending: ++unanswered; break;
    }
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5))];
  };
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "sent %d, acknowledged %d, deduped %d, failed %d, unanswered %d, lost %d, duplicated %d, waited %d, "
                "latency p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                sent, acked, deduped, failed, unanswered, lost, dup, waited, at(0.5), at(0.99), ms.empty() ? 0.0 : ms.back());
  return buf;
}

}  // namespace sessionrt::testing
