#!/usr/bin/env bash
# Benchmark (not a test): `novel chapter commit` on generated projects (`novel context synth`,
# crates/novel-store/src/synth.rs) of different lengths. The commit appends one line to
# `state/changelog.jsonl` and never rewrites it, and reads the foreshadowing file only for a
# delta with a `foreshadow` op, so its time must not grow with the book's length: the figures
# for chapter 30, 500 and 1,000 should be within 10 % of each other. What still grows is the
# state file (read, checked against the delta, rewritten): its size is printed per book.
#
#   cargo build --release
#   crates/novel-store/benches/commit.sh                 # chapters 30 500 1000
#   crates/novel-store/benches/commit.sh 30 500          # only these
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/commit.sh
#   NOVEL_BENCH_KEEP=1 crates/novel-store/benches/commit.sh 1000   # keeps the generated books
#   NOVEL_BENCH_FORESHADOW=1 crates/novel-store/benches/commit.sh  # the delta also plants a 伏笔
#
# Each book gets its next chapter ready to commit the way the agents and skills leave it
# (begin, staged text, summary, delta, memory, two judges, stages, gate = pass); hyperfine then
# copies it afresh before every run (`--prepare`, not timed; the used copy moved aside, see
# below) and times the commit process alone.
# Needs hyperfine (`cargo install hyperfine`). Prints hyperfine's table and a summary line.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
sizes=("$@")
if [[ ${#sizes[@]} -eq 0 ]]; then
  sizes=(30 500 1000)
fi

work="$(mktemp -d)"
if [[ -n "${NOVEL_BENCH_KEEP:-}" ]]; then
  echo "保留生成的项目：$work" >&2 # to look into a figure (strace, perf)
else
  trap 'rm -rf "$work"' EXIT
fi
field() { # FILE KEY: the first integer value of "KEY" in a JSON file
  sed -n "s/.*\"$2\": *\([0-9][0-9]*\).*/\1/p" "$1" | head -n 1
}

# ready BOOK: stages chapter last+1 up to a passed gate; prints the lock token.
ready() {
  local book=$1 n f version token
  n=$(($(field "$book/.checkpoint.json" last_completed_chapter) + 1))
  f=$(printf '%03d' "$n")
  token=$("$bin" --project "$book" --json chapter begin "$n" |
    sed -n 's/.*"token": *"\([^"]*\)".*/\1/p' | head -n 1)
  version=$(field "$book/state/current-state.json" state_version)
  printf '# 第%s章 回声\n\n%s\n' "$n" "$(printf '陆沉推开门，雨声跟着进来。%.0s' $(seq 1 200))" \
    >"$book/staging/chapters/chapter-$f.md"
  printf -- '---\nchapter: %s\nstoryline_id: main_arc\n---\n陆沉冒雨回到青云镇。\n' "$n" \
    >"$book/staging/summaries/chapter-$f-summary.md"
  # NOVEL_BENCH_FORESHADOW=1: the delta also plants a thread, so the commit reads, merges and
  # rewrites foreshadowing/global.json (and reads the volume plans to seed the thread) — what a
  # chapter that moves a 伏笔 costs; without it the delta moves none and that file is not read.
  local foreshadow=""
  if [[ -n "${NOVEL_BENCH_FORESHADOW:-}" ]]; then
    foreshadow=',
         {"op": "foreshadow", "path": "bench-thread", "value": "planted", "detail": "雨夜的来客"}'
  fi
  cat >"$book/staging/state/chapter-$f-delta.json" <<EOF
{"chapter": $n, "base_state_version": $version, "storyline_id": "main_arc",
 "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"},
         {"op": "set", "path": "world_state.time_marker", "value": "第$n章之后"}$foreshadow]}
EOF
  mkdir -p "$book/staging/storylines/main_arc"
  echo "陆沉冒雨回到青云镇。" >"$book/staging/storylines/main_arc/memory.md"
  "$bin" --project "$book" chapter stage drafted --token "$token" >/dev/null
  "$bin" --project "$book" chapter stage refined --token "$token" >/dev/null
  for judge in eval:4.5 eval-b:4.4; do # a second judge: first/last chapters of a volume are key
    score=${judge#*:}
    judge=${judge%:*}
    sed -e "s/\"chapter\": 1,/\"chapter\": $n,/" -e "s/\"score\": 4/\"score\": $score/" \
      -e "s/\"overall\": 4.0/\"overall\": $score/" \
      "$repo/tests/schemas/valid/evaluation/minimal.json" \
      >"$book/staging/evaluations/chapter-$f-$judge.json"
  done
  "$bin" --project "$book" chapter stage judged --token "$token" >/dev/null
  gate=$("$bin" --project "$book" --json chapter gate "$n" --token "$token" || true)
  grep -q '"decision": *"pass"' <<<"$gate" || {
    echo "第 $n 章的门控没有通过，无法计时提交：$gate" >&2
    exit 1
  }
  echo "$token"
}

# The used copy is moved aside, not deleted, until the end: on an ext4 without a journal, files
# created right after thousands were deleted wait on the kernel's inode allocator
# (`recently_deleted`), which timed the file system's cleanup instead of the commit (every size
# ~45–50 ms, nearly all of it system time). The copy is synced before the run for the same reason:
# its write-back competed with the commit's fsyncs (medians 32 → 68 ms from one run to the next).
mkdir -p "$work/used"
cat >"$work/prepare.sh" <<EOF
#!/usr/bin/env bash
if [[ -e "$work/run" ]]; then mv "$work/run" "\$(mktemp -d "$work/used/run.XXXXXX")/"; fi
cp -a "$work/book-\$1" "$work/run"
sync # the copy's dirty pages written now, not during the timed commit's fsyncs
EOF
commands=()
for size in "${sizes[@]}"; do
  # `synth N` writes N chapters; the commit timed is that of chapter N (N-1 written before).
  "$bin" context synth "$work/book-$size" --chapters $((size - 1)) >/dev/null
  token=$(ready "$work/book-$size")
  lines=$(wc -l <"$work/book-$size/state/changelog.jsonl")
  bytes=$(wc -c <"$work/book-$size/state/changelog.jsonl")
  state=$(wc -c <"$work/book-$size/state/current-state.json")
  echo "第 $size 章：变更日志 $lines 行，$bytes 字节；状态文件 $state 字节" >&2
  commands+=(
    --prepare "bash $work/prepare.sh $size"
    -n "commit chapter $size"
    "$bin --project $work/run chapter commit $size --token $token"
  )
done

"$hf" --warmup 3 --min-runs 30 -N --export-json "$work/result.json" "${commands[@]}"
# One line per size: wall-clock mean ± σ and CPU time (user + system; fsync waits make the
# wall clock noisy on a busy machine), in ms, each relative to the first size.
python3 - "$work/result.json" <<'PY' 2>/dev/null || true
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["mean"]
cpu = lambda x: x["user"] + x["system"]
for x in r:
    print(f'{x["command"]}: wall {x["mean"]*1000:.2f} ms ± {x["stddev"]*1000:.2f} ({x["mean"]/base*100-100:+.1f} %), '
          f'cpu {cpu(x)*1000:.2f} ms ({cpu(x)/cpu(r[0])*100-100:+.1f} %), median {x["median"]*1000:.2f} ms')
PY
