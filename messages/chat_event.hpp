// What a host sends into the runtime: chat events (a user wrote something on a channel) and
// system events (heartbeat, cron, exec notices), and what comes back for a chat event.
// Plain values; the routing rules turn a chat_event into a sessionKey [R§1.2].
#pragma once
#include <boost/json/array.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt {

struct chat_event {
  std::string channel;         // "telegram", "discord", ...
  std::string account_id;      // the bot account on that channel ("" = default)
  std::string peer_kind = "direct";  // direct | group | channel | room | ...
  std::string peer_id;         // the person (direct) or the chat / room id
  std::string sender_id;       // who wrote, in a group; "" = peer_id
  std::string thread_id;       // a thread inside the chat, if any
  std::string parent_peer_kind, parent_peer_id;  // thread parent (for bindings)
  std::string guild_id, team_id;
  std::vector<std::string> member_role_ids;
  std::string agent_id;        // force an agent ("" = routing decides)
  std::string session_key;     // an explicit sessionKey ("" = routing decides)
  std::string text;            // the message as the user sent it (what is stored)
  boost::json::array content;  // optional rich content (text/image blocks); replaces `text` when not empty
  std::string runtime_context; // per-turn context for the model only; never stored as the user's turn
  // Extra fields stored on the user's message as they are (the gateway's OpenClaw identity:
  // idempotencyKey "<runId>:user" and __openclaw {runId}); pi and the model wires ignore them.
  boost::json::object message_fields;
  std::string to;              // reply route on the channel (delivery target)
  std::string display_name;    // sender's display name
  std::string subject;         // group subject
  std::int64_t timestamp_ms = 0;  // 0 = now
  bool sender_authorized = true;  // may use /new and /reset
  // The host's id for this message's run ("" = none): the turn's reply.delta and turn.* events
  // carry it as data.runId and its turn_outcome echoes it, so a host joins them to the run.
  std::string run_id;
};

// A chat event from the relay on (actors/router): handed from actor to actor and through the
// session's queue by this pointer, so its twenty fields are moved once, not at every hop. One
// holder at a time (each passes it on and keeps no copy), so the session's queue may change
// it (a collect merge, the overflow note).
using chat_event_ptr = std::shared_ptr<chat_event>;

enum class system_event_kind { heartbeat, cron, exec };

struct system_event {
  system_event_kind kind = system_event_kind::heartbeat;
  std::string session_key;  // the session it concerns; for cron: "" and job_id set
  std::string agent_id;     // "" = the default agent
  std::string job_id;       // cron job (isolated run: a new session each time)
  std::string job_name;
  std::string text;         // the notice / prompt
  std::int64_t timestamp_ms = 0;
};

// Where a session's replies go: its row's deliveryContext (channel, to, accountId, threadId)
// as the last inbound message or a /dock-<channel> set it; empty fields when unknown.
struct delivery_route {
  std::string channel, to, account_id, thread_id;
};

// The result of one chat event, once its entries are durable per storage.durability.
struct turn_outcome {
  status st;                        // ok, or what failed (the turn was not acknowledged)
  std::string session_key;
  std::string session_id;
  std::optional<std::string> reply;  // text to deliver; nullopt when suppressed or a command
  bool suppressed = false;           // the model answered NO_REPLY: nothing to deliver
  std::string command;               // "/new", "/status", ... when the runtime handled a command
  std::string command_output;        // what the command printed (for /status, /context list)
  bool new_session = false;          // this event started a new sessionId
  std::string reset_reason;          // new | reset | daily | idle, when new_session
  std::vector<std::string> notices;  // for the user from the runtime (e.g. a memory flush gave up)
  delivery_route delivery;           // where the host sends the reply (the session's route after the turn)
  std::string run_id;                // chat_event::run_id, once its turn ran
  // The turn published its turn.completed / turn.failed / turn.cancelled event, which follows
  // its reply.delta events on the bus (not for a command, nor a message refused before its turn).
  bool turn_event = false;
};

}  // namespace sessionrt
