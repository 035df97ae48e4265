#!/usr/bin/env bash
# Benchmark (not a test): `novel dashboard` of a generated book with a history (`novel context
# synth --history`, crates/novel-store/src/synth.rs: an evaluation per chapter, dated logs, the
# cast named in the text) of 2,000 chapters × 3,000 字. Target (issue 41): the page in ≤ 300 ms
# of CPU (user + system, every thread: the wall time depends on the machine's other load), the
# file ≤ 3 MB.
#
#   cargo build --release
#   crates/novel-store/benches/dashboard.sh                # 2000 chapters of 3000 字
#   crates/novel-store/benches/dashboard.sh 500 2500       # chapters, 字 per chapter
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/dashboard.sh
#
# Prints hyperfine's table, the wall and CPU time, and the file's size against the targets.
# Needs hyperfine (`cargo install hyperfine@1.20.0 --locked`).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
chapters="${1:-2000}"
per_chapter="${2:-3000}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
book="$work/book"
"$bin" context synth "$book" --chapters "$chapters" --chapter-chars "$per_chapter" --history >/dev/null
echo "合成书：$chapters 章，每章约 $per_chapter 字（含评估、日期与出场角色）" >&2

"$hf" --warmup 2 --min-runs 10 -N --export-json "$work/result.json" \
  -n "dashboard ($chapters chapters)" "$bin --project $book dashboard -o $work/dashboard.html"

bytes="$(wc -c <"$work/dashboard.html")"
python3 - "$work/result.json" "$bytes" <<'PY' || true
import json, sys
bytes_ = int(sys.argv[2])
for x in json.load(open(sys.argv[1]))["results"]:
    mean = x["mean"] * 1000
    cpu = (x["user"] + x["system"]) * 1000
    print(f'{x["command"]}: wall {mean:.0f} ms ± {x["stddev"]*1000:.0f} '
          f'(min {x["min"]*1000:.0f}, max {x["max"]*1000:.0f}), '
          f'cpu {cpu:.0f} ms (user {x["user"]*1000:.0f} + system {x["system"]*1000:.0f}) '
          f'— target ≤ 300 ms cpu: {"ok" if cpu <= 300 else "OVER"}')
try:
    with open("/proc/loadavg") as f:
        print(f'load average after measuring: {f.read().split()[0]}')
except OSError:
    pass
print(f'dashboard.html: {bytes_} bytes ({bytes_/1024/1024:.2f} MB) — target ≤ 3 MB: '
      f'{"ok" if bytes_ <= 3 * 1024 * 1024 else "OVER"}')
PY
