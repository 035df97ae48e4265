#!/usr/bin/env bash
# Benchmark (not a test): `novel chapter commit` on generated projects (`novel context synth`,
# crates/novel-store/src/synth.rs) of different lengths. The commit appends one line to
# `state/changelog.jsonl` and never rewrites it, reads the foreshadowing file only for a delta
# with a `foreshadow` op, parses the state only where the delta reaches (the other entries are
# written back as the text they were read with, `novel_store::state_text`), and journals the
# files' contents as they are (no JSON escaping), so its time must not grow with the book's
# length: the figures for chapter 30, 500 and 1,000 should be within 10 % of each other. What
# still grows is reading, digesting and writing the state's bytes: its size is printed per book.
#
# Printed: per size, wall clock and CPU time pooled over NOVEL_BENCH_ROUNDS rounds (default 4,
# each timing every size 12 times, so a busy spell of the machine weighs on all sizes alike),
# and, when valgrind is installed, the instructions of one commit (callgrind: counted, the same
# on a busy machine as on an idle one; NOVEL_BENCH_NO_COUNT=1 skips it).
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
# puts a working copy of it back before every run (`--prepare`, not timed; see below) and
# times the commit process alone.
# Needs hyperfine (`cargo install hyperfine@1.20.0 --locked`) and python3.
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

# Between runs each book's working copy is put back the way rsync would (`restore.py`): what
# the commit created is deleted, what it changed or removed is copied back. The copy is never
# made afresh: on an ext4 without a journal, files created right after thousands were created
# or deleted wait on the kernel's inode allocator (`recently_deleted`, `find_inode_bit`), which
# timed the file system's bookkeeping of the 7,000-file copy instead of the commit (creating
# the commit's 10 files took 1.2 ms longer at chapter 1,000, all of it system time). The copy
# is synced before the run for the same reason: its write-back competed with the commit's
# fsyncs (medians 32 → 68 ms from one run to the next).
cat >"$work/restore.py" <<'PY'
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
def sig(p):
    st = os.lstat(p)
    return (st.st_size, st.st_mtime_ns)
for root, dirs, files in os.walk(dst, topdown=True):
    rel = os.path.relpath(root, dst)
    for d in list(dirs):
        if not os.path.isdir(os.path.join(src, rel, d)):
            shutil.rmtree(os.path.join(root, d))
            dirs.remove(d)
    for f in files:
        if not os.path.exists(os.path.join(src, rel, f)):
            os.remove(os.path.join(root, f))
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    os.makedirs(os.path.join(dst, rel), exist_ok=True)
    for f in files:
        a, b = os.path.join(root, f), os.path.join(dst, rel, f)
        if not os.path.exists(b) or sig(a) != sig(b):
            shutil.copy2(a, b)
PY
cat >"$work/prepare.sh" <<EOF
#!/usr/bin/env bash
if [[ -e "$work/run-\$1" ]]; then
  python3 "$work/restore.py" "$work/book-\$1" "$work/run-\$1"
else
  cp -a "$work/book-\$1" "$work/run-\$1"
fi
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
    "$bin --project $work/run-$size chapter commit $size --token $token"
  )
done

# Rounds: every size is timed in each round, so a machine that is busier for a while (other
# builds, write-back) weighs on every size alike instead of on whichever ran then.
rounds="${NOVEL_BENCH_ROUNDS:-4}"
for round in $(seq 1 "$rounds"); do
  "$hf" --warmup 2 --runs 12 -N --style none --export-json "$work/result-$round.json" "${commands[@]}" >/dev/null
done
# One line per size over all rounds' runs: wall-clock mean ± σ and CPU time (user + system;
# fsync waits make the wall clock noisy on a busy machine), in ms, each relative to the first
# size.
python3 - "$work" "$rounds" <<'PY' || true
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for i in range(1, rounds + 1):
    for x in json.load(open(f"{work}/result-{i}.json"))["results"]:
        r = runs.setdefault(x["command"], {"wall": [], "cpu": []})
        r["wall"] += x["times"]
        r["cpu"] += [u + s for u, s in zip(x["user"] if isinstance(x["user"], list) else [x["user"]] * len(x["times"]),
                                              x["system"] if isinstance(x["system"], list) else [x["system"]] * len(x["times"]))]
base = None
for name, r in runs.items():
    wall, cpu = statistics.mean(r["wall"]), statistics.mean(r["cpu"])
    base = base or (wall, cpu)
    print(f'{name}: wall {wall*1000:.2f} ms ± {statistics.stdev(r["wall"])*1000:.2f} ({wall/base[0]*100-100:+.1f} %), '
          f'cpu {cpu*1000:.2f} ms ({cpu/base[1]*100-100:+.1f} %), median {statistics.median(r["wall"])*1000:.2f} ms, '
          f'{len(r["wall"])} runs')
PY

# Instructions (valgrind's callgrind, when installed): one commit per size on a fresh copy,
# counted, not timed — the same figure on a busy machine as on an idle one.
if command -v valgrind >/dev/null 2>&1 && [[ -z "${NOVEL_BENCH_NO_COUNT:-}" ]]; then
  first=""
  for size in "${sizes[@]}"; do
    bash "$work/prepare.sh" "$size"
    token=$(sed -n 's/.*"token": *"\([^"]*\)".*/\1/p' "$work/run-$size/.novel.lock/info.json" | head -n 1)
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --project "$work/run-$size" \
      chapter commit "$size" --token "$token" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    first=${first:-$n}
    python3 -c "print(f'commit chapter $size: {$n:,} instructions ({$n/$first*100-100:+.1f} %)')"
  done
fi
