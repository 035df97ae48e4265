#!/usr/bin/env bash
# Benchmark (not a test): `novel check craft --all` over a book of 1,000 chapters of about
# 3,000 字 (about 3 million 字; generated, imported with `novel import`), every chapter read with
# the chapters before it (take-up, hook variety, image field). Target: ≤ 2 s. Also prints the
# same for `novel lint --all` for comparison.
#
#   cargo build --release
#   crates/novel-store/benches/craft.sh          # 1000 chapters
#   crates/novel-store/benches/craft.sh 300      # another size
#   NOVEL_BIN=/path/to/novel crates/novel-store/benches/craft.sh
#
# Needs hyperfine (`cargo install hyperfine@1.20.0 --locked`). The check exits 1 when a chapter
# fails (the generated chapters are plain and some do): hyperfine is told to ignore it.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" # repo, bin, hf
chapters="${1:-1000}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 20 sentences of a city story, 180 a chapter (5 a paragraph), rotated by chapter; every
# chapter opens on a line of dialogue and ends on a question, as a serial's would.
awk -v n="$chapters" 'BEGIN {
  split("陈默推开出租屋的门，楼道里的灯又坏了。|房东的消息还停在屏幕上，房租要涨五百。|早餐摊的老板认得他，多给了一个蛋。|地铁里挤满了和他一样赶早班的人。|经理的办公室门关着，里面传出争吵声。|他把辞职信写了三遍，又删了三遍。|江边的风很冷，吹得人睁不开眼睛。|手机亮了一下，是一个陌生的号码。|律师说外公给他留了一把铜钥匙。|老城区的巷子弯弯曲曲，像一张旧地图。|木门上的漆剥落了，露出下面的青苔。|钥匙转动的声音在空屋里回响了很久。|桌上摆着一本发黄的账簿，字迹工整。|账簿最后一页写着一个日期：七月十五。|窗外下起了雨，雨点打在铁皮屋顶上。|他想起小时候外公带他去码头看船。|那时候的江城还没有这么多高楼。|楼下有人喊他的名字，声音很熟悉。|他下楼时，巷口已经一个人也没有了。|只有地上一串湿脚印，一直通向江边。", s, "|")
  print "江城旧事"
  print ""
  for (c = 1; c <= n; c++) {
    printf "第%d章 钥匙%d\n", c, c
    print "　　“钥匙呢？”"
    line = "　　"
    for (k = 0; k < 180; k++) {
      line = line s[(c + k) % 20 + 1]
      if (k % 5 == 4) { print line; line = "　　" }
    }
    print "　　那串脚印，到底是谁的？"
  }
}' >"$work/book.txt"

"$bin" import "$work/book.txt" --into "$work/book" --json >/dev/null
total=$("$bin" --project "$work/book" count --all --json | sed -n 's/.*"total":\([0-9]*\).*/\1/p' | head -1)
echo "书：$chapters 章，共 ${total:-?} 字"

"$hf" --warmup 1 --runs 5 -i \
  --command-name "check craft --all（$chapters 章）" "$bin --project $work/book check craft --all --json >/dev/null" \
  --command-name "lint --all（$chapters 章）" "$bin --project $work/book lint --all --json >/dev/null"
