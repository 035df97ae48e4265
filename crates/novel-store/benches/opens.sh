#!/usr/bin/env bash
# Benchmark (not a test): how often the hot read paths open the book's files, and what the hook
# paths and `status` cost in instructions, on a generated book of 300 chapters (`novel context
# synth`, crates/novel-store/src/synth.rs). Targets (issue 44): the writer's packet for chapter
# 301 opens each project file at most once (the read commands read the book once:
# `novel_store::io::ReadOnce`); `status` opens fewer than 330 files; the instruction counts of
# the hook paths and of `status` are not above the previous build's.
#
# Printed:
#   1. per command, the successful opens of files and directories inside the book (strace), how
#      many distinct paths that is, and every path opened more than once with its count;
#   2. when valgrind is installed, the instructions (callgrind's "Collected") of
#      `hook pre-tool-use` (a Write into the staging area), `context subagent-start --part 1`
#      (the writer's SubagentStart hook, chapter 301 in flight), `context session-start` and
#      `status` — beside those of NOVEL_BENCH_BEFORE, another build, when it is given.
#
#   cargo build --release
#   crates/novel-store/benches/opens.sh
#   NOVEL_BENCH_BEFORE=/path/to/old/novel crates/novel-store/benches/opens.sh   # before/after
#   NOVEL_BENCH_NO_COUNT=1 crates/novel-store/benches/opens.sh                  # no valgrind
#
# Needs strace (and valgrind for the instruction counts).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../../.." && pwd)"
bin="${NOVEL_BIN:-$repo/target/release/novel}"
before="${NOVEL_BENCH_BEFORE:-}"
[[ -x "$bin" ]] || {
  echo "找不到 $bin：先运行 cargo build --release，或用 NOVEL_BIN 指定" >&2
  exit 2
}
command -v strace >/dev/null || {
  echo "需要 strace（apt-get install strace）" >&2
  exit 2
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
book="$work/book"
"$bin" context synth "$book" --chapters 300 >/dev/null
# A second copy with chapter 301 in flight, for the SubagentStart hook.
cp -a "$book" "$work/inflight"
"$bin" --project "$work/inflight" chapter begin 301 >/dev/null

printf '{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s","content":"x"}}\n' \
  "$book" "$book/staging/chapters/chapter-301.md" >"$work/pre.json"
printf '{"session_id":"bench","cwd":"%s","agent_id":"a1","agent_type":"novel:chapter-writer","hook_event_name":"SubagentStart"}\n' \
  "$work/inflight" >"$work/subagent.json"
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}\n' \
  "$book" >"$work/session.json"

# opens PROGRAM LABEL DIR STDIN ARGS…: successful opens under DIR, run in DIR.
opens() {
  local program=$1 label=$2 dir=$3 stdin=$4
  shift 4
  (cd "$dir" && strace -f -qq -e trace=openat,open -o "$work/trace" "$program" "$@" \
    <"$stdin" >/dev/null 2>&1) || true
  grep -v -- '= -1' "$work/trace" | grep -o "\"$dir/[^\"]*\"" | tr -d '"' |
    sed "s#^$dir/##" | sort | uniq -c | sort -rn >"$work/counts" || true # none opened
  local total distinct
  total=$(awk '{t += $1} END {print t + 0}' "$work/counts")
  distinct=$(wc -l <"$work/counts")
  printf '%6d 次打开 %4d 个路径  %s' "$total" "$distinct" "$label"
  if awk '$1 > 1 {found = 1} END {exit !found}' "$work/counts"; then
    printf '；重复：%s\n' "$(awk '$1 > 1 {printf "%s×%d ", $2, $1}' "$work/counts")"
  else
    printf '；无重复\n'
  fi
}

# instructions PROGRAM DIR STDIN ARGS…: callgrind's total for one run in DIR.
instructions() {
  local program=$1 dir=$2 stdin=$3
  shift 3
  (cd "$dir" && valgrind --tool=callgrind --callgrind-out-file=/dev/null "$program" "$@" \
    <"$stdin" 2>&1 >/dev/null) | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

: >"$work/none.json"
cases=(
  "写手资料包 context chapter-writer --chapter 301|$book|none|--project $book context chapter-writer --chapter 301"
  "status|$book|none|--project $book status"
  "context budget --chapter 301|$book|none|--project $book context budget --chapter 301"
  "hook pre-tool-use（写入 staging）|$book|pre|hook pre-tool-use"
  "context subagent-start --part 1（写手）|$work/inflight|subagent|context subagent-start --part 1"
  "context session-start|$book|session|context session-start"
)

for program in ${before:+"$before"} "$bin"; do
  echo "打开的书中文件与目录（strace，300 章的书）：$program"
  for c in "${cases[@]}"; do
    IFS='|' read -r label dir stdin args <<<"$c"
    # shellcheck disable=SC2086 # args are words
    opens "$program" "$label" "$dir" "$work/$stdin.json" $args
  done
  echo
done

if [[ -n "${NOVEL_BENCH_NO_COUNT:-}" ]] || ! command -v valgrind >/dev/null; then
  exit 0
fi
echo "执行的指令数（valgrind callgrind）："
printf '| %s |%s %s |\n' "命令" "${before:+ 之前 |}" "现在"
for c in "${cases[@]:1}"; do
  IFS='|' read -r label dir stdin args <<<"$c"
  [[ $label == "context budget"* ]] && continue
  now=$(instructions "$bin" "$dir" "$work/$stdin.json" $args)
  if [[ -n "$before" ]]; then
    old=$(instructions "$before" "$dir" "$work/$stdin.json" $args)
    printf '| %s | %s | %s |\n' "$label" "$old" "$now"
  else
    printf '| %s | %s |\n' "$label" "$now"
  fi
done
