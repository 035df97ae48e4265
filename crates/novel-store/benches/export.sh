#!/usr/bin/env bash
# Benchmark (not a test): `novel export` of a generated book (`novel context synth`,
# crates/novel-store/src/synth.rs) of 1,000 chapters × 3,000 字 ≈ 3 million 字. Target (issue 17):
# the EPUB in ≤ 2 s; the txt (and md) for comparison.
#
#   cargo build --release
#   crates/novel-store/benches/export.sh                  # 1000 chapters of 3000 字
#   crates/novel-store/benches/export.sh 500 2500         # chapters, 字 per chapter
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/export.sh
#
# Each run writes its file into the book's export/ (replacing the previous run's). Prints
# hyperfine's table, the book's 字数 and the size of each export. Needs hyperfine
# (`cargo install hyperfine@1.20.0 --locked`).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
chapters="${1:-1000}"
per_chapter="${2:-3000}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
book="$work/book"
"$bin" context synth "$book" --chapters "$chapters" --chapter-chars "$per_chapter" >/dev/null
"$bin" --project "$book" --json export --format txt -o "$work/probe.txt" |
  sed -n 's/.*"count":\([0-9]*\),"chars":\([0-9]*\).*/合成书：\1 章，\2 字/p' >&2

"$hf" --warmup 1 --min-runs 10 -N --export-json "$work/result.json" \
  -n "export epub" "$bin --project $book export --format epub -o $work/book.epub" \
  -n "export txt" "$bin --project $book export --format txt -o $work/book.txt" \
  -n "export md" "$bin --project $book export --format md -o $work/book.md"

for f in book.epub book.txt book.md; do
  echo "$f：$(wc -c <"$work/$f") 字节" >&2
done
python3 - "$work/result.json" <<'PY' 2>/dev/null || true
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(f'{x["command"]}: wall {x["mean"]*1000:.0f} ms ± {x["stddev"]*1000:.0f}, '
          f'cpu {(x["user"] + x["system"])*1000:.0f} ms, max {x["max"]*1000:.0f} ms')
PY
