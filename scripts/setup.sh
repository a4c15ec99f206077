#!/usr/bin/env bash
# Installs the Debian packages sessionrt builds with. Idempotent: prints nothing and installs
# nothing when every package is already present. Needs root (or sudo) only when something is missing.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libcaf-dev                  # actors (CAF 0.17 core + io)
  libboost-json1.81-dev       # JSON (order-preserving objects)
  libboost1.81-dev            # Boost.Uuid headers
  libspdlog-dev libfmt-dev    # logging
  catch2                      # tests (Catch2 v2)
  libuv1-dev                  # gateway socket + signals; the provider HTTP loop
  libcurl4-openssl-dev        # HTTP client for provider APIs (multi-socket on libuv)
  libpcre2-dev                # regexes that must match JavaScript's (overflow patterns, NO_REPLY)
  libwslay-dev libhttp-parser-dev  # gateway WebSocket framing + HTTP parsing
  libcli11-dev                # command line
  libsqlite3-dev libzstd-dev  # OpenClaw 2026.8+ agent databases (sessionrt import/export openclaw)
  libhowardhinnant-date-dev   # time zones for the daily boundary
  libssl-dev                  # SHA-256, base64
  libicu-dev                  # toLowerCase as JavaScript does it (ICU case mapping)
  libstb-dev                  # image decode / resize / encode
  libbenchmark-dev            # micro-benchmarks
  libjemalloc-dev             # the sessionrt CLI's allocator
  clang-14 libclang-rt-14-dev # libFuzzer + sanitizers
  chromium-headless-shell     # the simulation report page's browser test
  tzdata nodejs npm           # time zone database; Node for the compatibility tests
  tmux                        # drives OpenClaw's TUI in tests/compat/openclaw_tui.sh
  curl                        # the provider tests read the fake provider's counters
  systemd                     # systemd-analyze verify checks the unit `sessionrt gateway install` writes
  etcd-server                 # cluster membership, leases, shard table (etcd 3.4; the cluster tests start one)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from outside Debian (a preinstalled Node): accept a working `node`/`npm`.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[setup] installing: ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
