#!/usr/bin/env bash
# Benchmark (not a test): the guard hooks (`novel hook pre-tool-use|post-tool-use`) through the
# plugin wrapper `scripts/novel`, fed the hook's stdin JSON the way Claude Code runs them, on a
# synthetic project of 500 chapters. Target: ≤ 5 ms each (they run on every Write/Edit).
#
#   cargo build --release && crates/novel-store/benches/guard-hooks.sh [RUNS]
#
# NOVEL_BENCH_BIN=/path/to/novel times another build through the same wrapper (NOVEL_BIN), to
# compare before and after a change. The SessionStart hook (`context session-start`, once per
# session) is timed too.
# Needs hyperfine (`cargo install hyperfine@1.20.0 --locked`). Each case is first checked to give the expected
# answer (deny / block / silence), then timed with `hyperfine -N` (no shell: wrapper + binary).
# The last case adds the `sh -c` Claude Code itself wraps a hook command in.
#
# NOVEL_BENCH_VALGRIND=1 counts instructions instead (valgrind's callgrind, the binary alone, no
# hyperfine needed): a figure that does not move with the machine's load, to compare two builds
# (NOVEL_BENCH_BIN) case by case.
set -euo pipefail

ROOT=$(cd -P -- "$(dirname -- "$0")/../../.." && pwd)
NOVEL="$ROOT/scripts/novel"
RUNS=${1:-300}

VALGRIND=${NOVEL_BENCH_VALGRIND:-}
[ -n "$VALGRIND" ] || command -v hyperfine >/dev/null 2>&1 || {
  echo "需要 hyperfine 1.16 或更新：cargo install hyperfine@1.20.0 --locked（hyperfine 2 要求更新的 Rust；Debian 自带的 1.15 缺 --input）" >&2
  exit 2
}
BIN=${NOVEL_BENCH_BIN:-$ROOT/target/release/novel}
[ -x "$BIN" ] || {
  echo "先编译：cargo build --release（或用 NOVEL_BENCH_BIN 指定程序）" >&2
  exit 2
}
export NOVEL_BIN=$BIN
case $ROOT in
  *[[:space:]]*)
    echo "仓库路径含空白，hyperfine -N 无法切分命令：请换一个路径" >&2
    exit 2
    ;;
esac

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BOOK="$WORK/book"
"$BIN" context synth "$BOOK" --chapters 500 >/dev/null

# The next chapter's staging files, as the agents would write them.
version=$(sed -n 's/.*"state_version": *\([0-9][0-9]*\).*/\1/p' "$BOOK/state/current-state.json" | head -n 1)
character=$(cd "$BOOK/characters/active" && ls -- *.json | head -n 1)
slug=${character%.json}
cat >"$BOOK/staging/state/chapter-501-delta.json" <<EOF
{"chapter": 501, "base_state_version": $version, "storyline_id": "main_arc",
 "ops": [{"op": "set", "path": "characters.$slug.location", "value": "青云镇"}]}
EOF
cat >"$BOOK/staging/state/chapter-502-delta.json" <<EOF
{"chapter": 502, "base_state_version": $version, "storyline_id": "main_arc",
 "ops": [{"op": "set", "path": "characters.林风.location", "value": "青云镇"}]}
EOF
printf '# 第501章 回声\n\n初稿。\n' >"$BOOK/staging/chapters/chapter-501.md"
sed 's/"chapter": 1,/"chapter": 501,/' "$ROOT/tests/schemas/valid/evaluation/minimal.json" \
  >"$BOOK/staging/evaluations/chapter-501-eval.json"

# input NAME EVENT TOOL FILE
input() {
  printf '{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"%s","tool_name":"%s","tool_input":{"file_path":"%s","content":"x"}}\n' \
    "$BOOK" "$2" "$3" "$4" >"$WORK/$1.json"
}
input pre-owned PreToolUse Write "$BOOK/state/current-state.json"
input pre-staging PreToolUse Write "$BOOK/staging/chapters/chapter-501.md"
input pre-outside PreToolUse Edit "$WORK/notes.md"
input post-delta PostToolUse Write "$BOOK/staging/state/chapter-501-delta.json"
input post-bad-delta PostToolUse Write "$BOOK/staging/state/chapter-502-delta.json"
input post-eval PostToolUse Write "$BOOK/staging/evaluations/chapter-501-eval.json"
input post-character PostToolUse Edit "$BOOK/characters/active/$character"
input post-chapter PostToolUse Write "$BOOK/staging/chapters/chapter-501.md"

# A Bash call (the guard reads its command line): the binary's own call, and a redirect into the state.
bash_input() {
  printf '{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s","description":"x"}}\n' \
    "$BOOK" "$2" >"$WORK/$1.json"
}
bash_input pre-bash-novel 'novel --project \"$BOOK\" chapter stage drafted --token abc --tokens 1200 --json'
bash_input pre-bash-owned 'echo x > state/current-state.json'
# Bash-only syntax, a directory holding owned files, a line that does not parse, a long line.
bash_input pre-bash-bashisms 'diff <(ls chapters) <(ls summaries) |& tee /tmp/d.txt; x=${1,,}; a=(1 2); cat <<< ${a[@]}'
bash_input pre-bash-tree 'rm -rf chapters'
bash_input pre-bash-unparsable "echo 'x > state/current-state.json"
long=$(for i in $(seq 1 60); do printf 'grep -c x chapters/chapter-%03d.md && ' "$i"; done)
bash_input pre-bash-long "${long}true"

printf '{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}\n' \
  "$BOOK" >"$WORK/session-start.json"

# One row of the report: LABEL, then median, mean, min and max in ms from hyperfine's JSON.
REPORT="$WORK/report.md"
: >"$REPORT"
row() {
  local label=$1 json=$2 v
  printf '| %s |' "$label" >>"$REPORT"
  for key in median mean min max; do
    v=$(tr -d ' \n' <"$json" | sed -n "s/.*\"$key\":\([0-9.e-]*\).*/\1/p" | head -n 1)
    awk -v s="$v" 'BEGIN { printf " %.2f |", s * 1000 }' >>"$REPORT"
  done
  echo >>"$REPORT"
}

# case NAME COMMAND EXPECT(deny|block|silent|context) LABEL
bench() {
  local name=$1 sub=$2 expect=$3 label=$4 out ir
  out=$("$NOVEL" $sub <"$WORK/$name.json")
  local as_expected=yes
  case $expect in
    deny) [[ $out == *'"permissionDecision":"deny"'* ]] ;;
    block) [[ $out == *'"decision":"block"'* ]] ;;
    silent) [ -z "$out" ] ;;
    context) [[ $out == *'【novel 小说项目】'* ]] ;;
  esac || as_expected=no
  if [ -n "$VALGRIND" ]; then
    # Another build may answer otherwise (that is what is being compared): said, not fatal.
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" $sub <"$WORK/$name.json" 2>&1 >/dev/null |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    printf '| %s | %s | %s |\n' "$label" "$ir" "$as_expected" >>"$REPORT"
    return
  fi
  [ "$as_expected" = yes ] || {
    echo "$label：应为 $expect，实际输出：$out" >&2
    exit 1
  }
  hyperfine -N --style basic --warmup 20 --runs "$RUNS" --input "$WORK/$name.json" \
    --export-json "$WORK/$name.json.out" -n "$label" "$NOVEL $sub" >/dev/null
  row "$label" "$WORK/$name.json.out"
}

bench pre-owned "hook pre-tool-use" deny "pre: state/current-state.json (deny)"
bench pre-staging "hook pre-tool-use" silent "pre: staging chapter (allow)"
bench pre-outside "hook pre-tool-use" silent "pre: outside any project"
bench pre-bash-novel "hook pre-tool-use" silent "pre: Bash, a novel command (allow)"
bench pre-bash-owned "hook pre-tool-use" deny "pre: Bash, > state/current-state.json (deny)"
bench pre-bash-bashisms "hook pre-tool-use" silent "pre: Bash, bash-only syntax (<(…), pipe-and, \${x,,}, <<<; allow)"
bench pre-bash-tree "hook pre-tool-use" deny "pre: Bash, rm -rf chapters (500 owned files; deny)"
bench pre-bash-unparsable "hook pre-tool-use" deny "pre: Bash, unparsable line naming the state (deny)"
bench pre-bash-long "hook pre-tool-use" silent "pre: Bash, 60 commands joined by && (allow)"
bench post-delta "hook post-tool-use" silent "post: valid delta (schema + ops check)"
bench post-bad-delta "hook post-tool-use" block "post: delta with a rejected op (block)"
bench post-eval "hook post-tool-use" silent "post: valid evaluation"
bench post-character "hook post-tool-use" silent "post: valid character"
bench post-chapter "hook post-tool-use" silent "post: chapter draft (not schema'd)"
bench session-start "context session-start" context "SessionStart (once per session)"

if [ -n "$VALGRIND" ]; then
  echo "Guard hooks, instructions executed (valgrind callgrind; $BIN), synthetic project of 500 chapters:"
  echo
  echo "| Case | Instructions | Expected answer |"
  echo "|:---|---:|:---|"
  cat "$REPORT"
  exit 0
fi

# As Claude Code runs it: `sh -c '"${CLAUDE_PLUGIN_ROOT}/scripts/novel" hook …'`.
hyperfine -N --style basic --warmup 20 --runs "$RUNS" --input "$WORK/post-delta.json" \
  --export-json "$WORK/sh.json.out" -n "post: valid delta, through sh -c" \
  "sh -c '\"$NOVEL\" hook post-tool-use'" >/dev/null
row "post: valid delta, through sh -c" "$WORK/sh.json.out"

echo "Guard hooks through scripts/novel ($BIN, $(wc -c <"$BIN") bytes), synthetic project of 500 chapters, $RUNS runs each:"
echo
echo "| Case | Median [ms] | Mean [ms] | Min [ms] | Max [ms] |"
echo "|:---|---:|---:|---:|---:|"
cat "$REPORT"
