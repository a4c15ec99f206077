# Sourced by the OpenClaw compatibility tests: starts `$sessionrt gateway` on a fresh state dir
# ($work/state) and a free port with a token, and waits until it listens. Sets gw_pid, gw_port,
# gw_token, gw_log; gw_down stops it with SIGTERM and fails the test if it does not exit 0.
gw_token="compat-$RANDOM-$RANDOM"
gw_log=$work/gateway.log
gw_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$sessionrt" gateway --state-dir "$work/state" --bind 127.0.0.1 --port "$gw_port" --token "$gw_token" >"$gw_log" 2>&1 &
gw_pid=$!
for _ in $(seq 1 300); do
  grep -q "listening on" "$gw_log" 2>/dev/null && break
  kill -0 "$gw_pid" 2>/dev/null || { echo "FAILED: sessionrt gateway exited at start:" >&2; cat "$gw_log" >&2; exit 1; }
  sleep 0.1  # polling the log for readiness, bounded at 30 s
done
grep -q "listening on" "$gw_log" || { echo "FAILED: sessionrt gateway did not listen within 30 s" >&2; cat "$gw_log" >&2; exit 1; }
gw_down() {
  kill -TERM "$gw_pid" 2>/dev/null
  for _ in $(seq 1 300); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done  # bounded at 30 s
  if kill -0 "$gw_pid" 2>/dev/null; then
    echo "FAILED: sessionrt gateway did not exit within 30 s of SIGTERM" >&2
    cat "$gw_log" >&2
    kill -KILL "$gw_pid" 2>/dev/null
    wait "$gw_pid" 2>/dev/null
    return 1
  fi
  wait "$gw_pid"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAILED: sessionrt gateway exited $rc on SIGTERM" >&2; cat "$gw_log" >&2; return 1; fi
}
