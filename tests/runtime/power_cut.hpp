// power_cut: a runtime on a power_loss_fs dies with the power. Its writes stop (kill), it is
// stopped and dropped, its write locks go with the process, the bytes it never synced are lost,
// and the lock files left in `sessions_dir` are removed, as after a reboot (their owner is gone).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/runtime.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::testing {

inline void power_cut(storage::power_loss_fs& power, storage::memory_fs& mem, std::unique_ptr<runtime::runtime>& rt,
                      const std::string& sessions_dir) {
  power.kill();
  (void)rt->stop();
  rt.reset();
  storage::release_all_held_locks();
  REQUIRE(power.power_loss().ok());
  const std::vector<std::string> names = *mem.list_dir(sessions_dir);
  for (const auto& name : names)
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) (void)mem.unlink(sessions_dir + "/" + name);
}

}  // namespace sessionrt::testing
