#!/usr/bin/env bash
# Benchmark (not a test): `novel import` of a generated manuscript — by default 1,000 chapters of
# about 3,000 字 (about 3 million 字, one .txt, volume headings every 50 chapters, a 楔子) — into
# a fresh directory (a new project: `init`, then every chapter, log, extra and volume range
# through one journal). Targets: ≤ 2 s and ≤ 200 MB peak RSS.
#
#   cargo build --release
#   crates/novel-store/benches/import.sh              # 1000 chapters
#   crates/novel-store/benches/import.sh 300          # another size
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/import.sh
#   NOVEL_BENCH_GBK=1 crates/novel-store/benches/import.sh   # the manuscript in GBK (detection)
#
# Every run imports into a directory of its own (`into.1`, `into.2`, …) and nothing is deleted
# until the end: creating files right after thousands were deleted is what an author never does,
# and on an ext4 without a journal (`recently_deleted` in the kernel's inode allocator avoids
# inodes freed in the last 60 s, 360 s while their table block is dirty) it made the same import
# 3–4 × slower (2.7 s instead of 0.7 s; `perf` showed ext4_create scanning inode tables). The
# figure still depends on what the file system did in the minutes before: run it on a quiet one. Set NOVEL_BENCH_RM=1 to remove the target before every run instead (the old
# way, to see that effect). The peak RSS is read with /usr/bin/time -v on one more run. Needs
# hyperfine (`cargo install hyperfine@1.20.0 --locked`) and iconv for the GBK variant.
#
# Then the bad-input cases of issue 29, each run once with its wall time, peak RSS, exit code
# and error code: a 200 MB manuscript (refused by its size before it is read: E_IMPORT_SOURCE),
# 1 MiB of random bytes and 10,000 NUL bytes (E_IMPORT_ENCODING), 100,000 tiny chapters
# (E_IMPORT_NUMBER: the 100,000th is over 99,999), 99,999 tiny chapters (imported), a heading on
# every line (E_IMPORT_EMPTY). NOVEL_BENCH_LARGE=1 also imports a 60 MB manuscript (the same
# book seven times over, 7,000 chapters, just under the 64 MiB limit) to show the memory of the
# largest accepted import. After each refusal the target must not exist (nothing half-written).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
chapters="${1:-1000}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The manuscript: 20 sentences of a city story, 180 a chapter (5 a paragraph, indented with
# full-width spaces), rotated by chapter so no two chapters are the same.
gen() {
  awk -v n="$1" 'BEGIN {
  split("陈默推开出租屋的门，楼道里的灯又坏了。|房东的消息还停在屏幕上，房租要涨五百。|早餐摊的老板认得他，多给了一个蛋。|地铁里挤满了和他一样赶早班的人。|经理的办公室门关着，里面传出争吵声。|他把辞职信写了三遍，又删了三遍。|江边的风很冷，吹得人睁不开眼睛。|手机亮了一下，是一个陌生的号码。|律师说外公给他留了一把铜钥匙。|老城区的巷子弯弯曲曲，像一张旧地图。|木门上的漆剥落了，露出下面的青苔。|钥匙转动的声音在空屋里回响了很久。|桌上摆着一本发黄的账簿，字迹工整。|账簿最后一页写着一个日期：七月十五。|窗外下起了雨，雨点打在铁皮屋顶上。|他想起小时候外公带他去码头看船。|那时候的江城还没有这么多高楼。|楼下有人喊他的名字，声音很熟悉。|他下楼时，巷口已经一个人也没有了。|只有地上一串湿脚印，一直通向江边。", s, "|")
  print "江城旧事"
  print ""
  print "楔子 雨夜"
  print "　　那年七月，江城下了一个月的雨。"
  for (c = 1; c <= n; c++) {
    if (c % 50 == 1) { printf "第%d卷 第%d部\n", int(c / 50) + 1, int(c / 50) + 1 }
    printf "第%d章 钥匙%d\n", c, c
    line = "　　"
    for (k = 0; k < 180; k++) {
      line = line s[(c + k) % 20 + 1]
      if (k % 5 == 4) { print line; line = "　　" }
    }
  }
}'
}
gen "$chapters" >"$work/book.txt"
src="$work/book.txt"
if [[ -n "${NOVEL_BENCH_GBK:-}" ]]; then
  iconv -f UTF-8 -t GBK "$work/book.txt" >"$work/book-gbk.txt"
  src="$work/book-gbk.txt"
fi
chars=$("$bin" --json count "$work/book.txt" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
echo "书稿：$chapters 章，$(wc -c <"$src") 字节，约 $chars 字（含标题行）" >&2

if [[ -n "${NOVEL_BENCH_RM:-}" ]]; then
  "$hf" --warmup 1 --min-runs 5 --export-json "$work/result.json" \
    --prepare "rm -rf $work/into" \
    -n "import $chapters chapters (target removed before each run)" \
    "$bin --json import $src --into $work/into"
else
  echo 0 >"$work/n"
  "$hf" --warmup 1 --min-runs 5 --export-json "$work/result.json" \
    -n "import $chapters chapters" \
    "n=\$(( \$(cat $work/n) + 1 )); echo \$n >$work/n; $bin --json import $src --into $work/into.\$n"
fi

rm -rf "$work/into"
/usr/bin/time -v "$bin" --json import "$src" --into "$work/into" >/dev/null 2>"$work/time.txt"
rss=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time.txt")
"$bin" --project "$work/into" validate >/dev/null && valid="validate 通过" || valid="validate 未通过"
total=$("$bin" --project "$work/into" --json count --all | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
mean=$(sed -n 's/.*"mean": *\([0-9.]*\).*/\1/p' "$work/result.json" | head -n 1)
echo "import $chapters chapters: mean $(awk -v m="$mean" 'BEGIN{printf "%.3f", m}') s, peak RSS $((rss / 1024)) MB, $valid, count --all $total 字"

# One run of `novel import FILE` into a fresh directory: "<exit code> <seconds> <peak MB> <error code>".
once() {
  rm -rf "$work/once"
  local start end code
  start=$(date +%s.%N)
  set +e
  /usr/bin/time -v "$bin" --json import "$1" --into "$work/once" ${2:-} >"$work/once.json" 2>"$work/once.time"
  code=$?
  set -e
  end=$(date +%s.%N)
  local peak
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/once.time")
  local err
  err=$(sed -n 's/.*"error":{"code":"\([A-Z_]*\)".*/\1/p' "$work/once.json")
  echo "$code $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", b-a}') $((peak / 1024)) ${err:-ok}"
}

# `once` with a line for the author of the figures: what, exit, error code, seconds, peak RSS, and
# whether a refused import left anything behind.
report() {
  local c t m e left=""
  read -r c t m e < <(once "$2")
  if [[ "$c" != 0 && -e "$work/once" ]]; then left=", but $work/once was left behind (it must not be)"; fi
  echo "$1: exit $c $e in $t s, peak RSS $m MB$left"
}

: >"$work/big.txt"
while [[ $(stat -c %s "$work/big.txt") -lt $((200 << 20)) ]]; do cat "$work/book.txt" >>"$work/big.txt"; done
report "200 MB manuscript ($(stat -c %s "$work/big.txt") bytes)" "$work/big.txt"
rm -f "$work/big.txt"
head -c $((1 << 20)) /dev/urandom >"$work/random.txt"
report "1 MiB of random bytes" "$work/random.txt"
head -c 10000 /dev/zero >"$work/nul.txt"
report "10,000 NUL bytes" "$work/nul.txt"
awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "第%d章\n字。\n", i }' >"$work/many.txt"
report "100,000 tiny chapters" "$work/many.txt"
awk 'BEGIN { for (i = 1; i <= 99999; i++) printf "第%d章\n字。\n", i }' >"$work/most.txt"
report "99,999 tiny chapters" "$work/most.txt"
awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "第%d章 标题\n", i }' >"$work/heads.txt"
report "a heading on every line (5,000 lines)" "$work/heads.txt"
if [[ -n "${NOVEL_BENCH_LARGE:-}" ]]; then
  gen 7000 >"$work/large.txt"
  report "large manuscript ($(stat -c %s "$work/large.txt") bytes, 7000 chapters)" "$work/large.txt"
fi
