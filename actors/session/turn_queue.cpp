#include "actors/session/turn_queue.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "messages/utf8.hpp"

namespace sessionrt::actors {
namespace {

constexpr std::size_t kOverflowLineBytes = 160;

std::string overflow_line(const chat_event& ev) {
  std::string text = ev.text;
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (text.size() > kOverflowLineBytes) {
    text = std::string(utf8_prefix(text, kOverflowLineBytes)) + "…";
  }
  return "- " + text;
}

}  // namespace

queue_settings effective_queue(const queue_settings& config, const session_entry* row) {
  queue_settings q = config;
  if (!row) return q;
  if (auto m = row->queue_mode())
    if (auto parsed = parse_queue_mode(*m)) q.mode = *parsed;
  if (auto cap = row->queue_cap(); cap && *cap >= 1) q.cap = static_cast<std::size_t>(*cap);
  if (auto d = row->queue_drop())
    if (auto parsed = parse_queue_drop(*d)) q.drop = *parsed;
  if (auto ms = row->queue_debounce_ms(); ms && *ms >= 0) q.debounce_ms = *ms;
  return q;
}

std::vector<queued_chat> turn_queue::push(queued_chat c, const queue_settings& q) {
  std::vector<queued_chat> dropped;
  last_arrival_ms_ = c.arrived_ms;
  if (chats_ >= q.cap) {
    if (q.drop == queue_drop::new_first) {
      dropped.push_back(std::move(c));
      return dropped;
    }
    while (chats_ >= q.cap) {
      auto it = std::find_if(items_.begin(), items_.end(),
                             [](const auto& item) { return std::holds_alternative<queued_chat>(item); });
      if (it == items_.end()) break;
      auto& old = std::get<queued_chat>(*it);
      if (q.drop == queue_drop::summarize) overflow_.push_back(overflow_line(*old.ev));
      dropped.push_back(std::move(old));
      items_.erase(it);
      --chats_;
    }
  }
  items_.emplace_back(std::move(c));
  ++chats_;
  return dropped;
}

void turn_queue::push_front(queued_chat c) {
  items_.emplace_front(std::move(c));
  ++chats_;
}

void turn_queue::push(system_event ev, outcome_fn sink) { items_.emplace_back(queued_system{std::move(ev), std::move(sink)}); }

std::optional<queued_work> turn_queue::pop(const queue_settings& q) {
  if (items_.empty()) return std::nullopt;
  queued_work w;
  if (auto* sys = std::get_if<queued_system>(&items_.front())) {
    w.system = std::move(sys->ev);
    w.system_sink = std::move(sys->sink);
    items_.pop_front();
    return w;
  }
  w.chat = std::move(std::get<queued_chat>(items_.front()));
  items_.pop_front();
  --chats_;
  if (q.mode == queue_mode::collect) {
    // Rich content (images) does not merge into a text: a message with content ends the batch.
    while (!items_.empty() && std::holds_alternative<queued_chat>(items_.front()) && w.chat->ev->content.empty() &&
           std::get<queued_chat>(items_.front()).ev->content.empty()) {
      auto next = std::move(std::get<queued_chat>(items_.front()));
      items_.pop_front();
      --chats_;
      w.chat->ev->text += "\n\n" + next.ev->text;
      w.extra_sinks.push_back(std::move(next.sink));
    }
  }
  if (!overflow_.empty()) {
    std::string note = fmt::format("[Queue overflow] {} earlier message(s) were dropped while you were busy:",
                                   overflow_.size());
    for (const auto& line : overflow_) note += "\n" + line;
    auto& rc = w.chat->ev->runtime_context;
    rc = rc.empty() ? note : note + "\n" + rc;
    overflow_.clear();
  }
  return w;
}

std::vector<queued_chat> turn_queue::take_chats() {
  std::vector<queued_chat> out;
  for (auto it = items_.begin(); it != items_.end();) {
    if (std::holds_alternative<queued_chat>(*it)) {
      out.push_back(std::move(std::get<queued_chat>(*it)));
      it = items_.erase(it);
    } else {
      ++it;
    }
  }
  chats_ = 0;
  overflow_.clear();
  return out;
}

}  // namespace sessionrt::actors
