// core_harness: one session_core's world for a test: a temp dir with its sessions/ folder, a
// manual clock at `t0`, durability none, reset day boundaries in UTC, and turns answered by
// `Model` (a model_runner the test writes) through sync_turn_io. deps() are the core's.
#pragma once
#include <cstdint>

#include <catch2/catch.hpp>

#include "actors/session/session_core.hpp"
#include "storage/durable_file.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

template <class Model>
struct core_harness {
  temp_dir dir;
  manual_clock clk;
  storage::fake_process_probe probe;
  actors::runtime_settings settings;
  Model model;
  sync_turn_io io{&model};

  explicit core_harness(std::int64_t t0) : clk(t0) {
    settings.storage.durability = storage::durability::none;
    settings.session.reset.timezone = "UTC";
    REQUIRE(storage::ensure_dir(storage::posix_fs(), dir.file("sessions"), 0700).ok());
  }
  actors::session_core_deps deps() {
    actors::session_core_deps d;
    d.files = &storage::posix_fs();
    d.time = &clk;
    d.probe = &probe;
    d.settings = &settings;
    d.sessions_dir = dir.file("sessions");
    d.agent_id = "main";
    return d;
  }
};

}  // namespace sessionrt::testing
