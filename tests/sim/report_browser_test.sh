#!/usr/bin/env bash
# The report page in a real browser (issue #16): renders the sample report, opens it in headless
# Chromium from Debian and asserts that
#   - the DOM after load has one chart <svg> per chart, each with a drawn series path (d="..."),
#   - a screenshot is a non-blank PNG in which the series colors cover visible areas,
#   - the page logs nothing to the console (no script errors, no blocked resource).
# The console check is first proven able to fail: a control page that logs an error must be caught.
# Exit 77 (CTest SKIP_RETURN_CODE) only when no Chromium is installed.
# Usage: report_browser_test.sh REPORT_PAGE_TOOL
set -euo pipefail
tool=$1
browser=""
for candidate in chromium-headless-shell chromium; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium installed (apt-get install chromium-headless-shell)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_browser() {  # run_browser LOGFILE ARGS... : one headless run with its own profile, console to LOGFILE
  local log=$1; shift
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-extensions --disable-background-networking --user-data-dir="$work/profile-$RANDOM" \
    --enable-logging=stderr --v=0 "$@" 2>"$log"
}
console_lines() { grep -E ':CONSOLE[:(]' "$1" || true; }

# 1. The console check can fail.
printf '<!DOCTYPE html><html><body><p>control</p><script>console.error("control-error-marker")</script></body></html>\n' \
  >"$work/control.html"
run_browser "$work/control.log" --dump-dom "file://$work/control.html" >/dev/null
if ! console_lines "$work/control.log" | grep -q control-error-marker; then
  echo "FAIL: the console check did not see the control page's console.error; browser log:" >&2
  cat "$work/control.log" >&2
  exit 1
fi

# 2. The sample report page.
charts=$("$tool" sample "$work/report.html" "$work/report.json")
run_browser "$work/dom.log" --dump-dom "file://$work/report.html" >"$work/dom.html"
"$tool" check-dom "$work/dom.html" "$charts"
errors=$(console_lines "$work/dom.log")
if [ -n "$errors" ]; then
  echo "FAIL: the report page logged to the console:" >&2
  echo "$errors" >&2
  exit 1
fi

# 3. What it looks like.
run_browser "$work/shot.log" --window-size=1100,2600 --screenshot="$work/shot.png" "file://$work/report.html" >/dev/null
[ -s "$work/shot.png" ] || { echo "FAIL: no screenshot written; browser log:" >&2; cat "$work/shot.log" >&2; exit 1; }
"$tool" check-png "$work/shot.png"
errors=$(console_lines "$work/shot.log")
[ -z "$errors" ] || { echo "FAIL: console output while rendering the screenshot:" >&2; echo "$errors" >&2; exit 1; }
if [ -n "${SESSIONRT_KEEP_SCREENSHOT:-}" ]; then cp "$work/shot.png" "$SESSIONRT_KEEP_SCREENSHOT"; fi
echo "report page: $charts charts rendered in $(basename "$browser"), screenshot checked, no console output"
