#!/usr/bin/env bash
# Benchmark (not a test) of the orchestration commands on the generated 500-chapter project
# (`novel context synth`, crates/novel-store/src/synth.rs): `novel status`, `novel next` and
# `novel check continuity` over the last written volume and over the next (default) one, each
# a whole process as a skill runs it. The target is ≤ 30 ms each.
#
#   cargo build --release
#   crates/novel-store/benches/orchestration.sh            # uses target/release/novel
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/orchestration.sh
#
# Needs hyperfine (`cargo install hyperfine@1.20.0 --locked`). Prints hyperfine's table; with `--export DIR`
# also writes DIR/orchestration.json and DIR/orchestration.md.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
export_dir=""
if [[ "${1:-}" == "--export" ]]; then
  export_dir="${2:?--export needs a directory}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" context synth "$work/book" --chapters 500 >/dev/null
cd "$work/book"

# Chapters 451–500 are volume 10 (written); 501–550 volume 11 (planned, the default scope).
args=(--warmup 5 --min-runs 30 -N --ignore-failure)
if [[ -n "$export_dir" ]]; then
  mkdir -p "$export_dir"
  args+=(--export-json "$export_dir/orchestration.json" --export-markdown "$export_dir/orchestration.md")
fi
"$hf" "${args[@]}" \
  -n "status" "$bin --json status" \
  -n "next" "$bin --json next" \
  -n "check continuity --volume 10" "$bin --json check continuity --volume 10" \
  -n "check continuity (volume 11)" "$bin --json check continuity"
