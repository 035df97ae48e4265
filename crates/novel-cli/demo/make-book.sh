#!/usr/bin/env bash
# Rebuilds the demo book (crates/novel-cli/demo/book) by running the real pipeline, each agent's
# output written by hand. Usage: crates/novel-cli/demo/make-book.sh OUT_DIR
# then review and copy OUT_DIR over demo/book. NOVEL may point at another binary.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
N=${NOVEL:-$HERE/../../../target/debug/novel}
DEMO_SRC=${DEMO_SRC:-$HERE/source}
export NOVEL_NOW=1795325400
P=$(realpath -m "$1")
rm -rf "$P"
"$N" init "$P" --title 雾港夜行 --genre 都市玄幻 --style lengjun-xuanyi >/dev/null
cd "$P"
python3 - <<'PY'
import json
b=open('brief.md').read()
b=b.replace('## 一句话卖点','## 一句话卖点\n能听见旧物最后一任主人说话的当铺学徒，替死人讨债。',1)
b=b.replace('**题材预设**：都市','**题材预设**：悬疑',1)
open('brief.md','w').write(b)
json.dump({"rules":[
 {"id":"W-001","category":"magic_system","rule":"沈砚每天最多听物三次，第四次必昏厥","constraint_type":"hard","exceptions":[],"introduced_chapter":1},
 {"id":"W-002","category":"social","rule":"雾港的债按旧例父债子还，账簿为凭","constraint_type":"soft","exceptions":["债主亲口免除"],"introduced_chapter":3}]},
 open('world/rules.json','w'),ensure_ascii=False,indent=2)
chars=[("shen-yan","沈砚",["阿砚"],"protagonist"),("zhou-zhanggui","周掌柜",[],"supporting"),("lin-wanzhou","林晚舟",["林少爷"],"antagonist")]
for slug,name,al,role in chars:
    json.dump({"id":slug,"display_name":name,"aliases":al,"role":role,"contracts":[]},open(f'characters/active/{slug}.json','w'),ensure_ascii=False,indent=2)
blocks=[(1,"旧怀表","雾港当铺","周掌柜逼沈砚收下来路不明的怀表","从躲事到接事","怀表主人之死 埋设","沈砚得到怀表"),
        (2,"三号仓","雾港码头","驼背老头拦路","第一次替死人开口","林家欠债 埋设","沈砚到码头三号仓"),
        (3,"雨夜","雾港码头","林晚舟截住沈砚","立誓替死人讨债","林家欠债 推进","沈砚得到账簿"),
        (4,"林府","林府","沈砚上门讨债","与林晚舟正面交锋","怀表主人之死 推进","无"),
        (5,"七月十五","雾港码头","还债之期","第一次赢","林家欠债 回收","无")]
out=["# 第 1 卷 · 雾港\n","当铺学徒沈砚听见死人的旧物说话，替死人讨回一笔旧债。\n"]
for n,t,loc,conf,arc,fs,st in blocks:
    out.append(f"## 第{n}章 {t}\n- 故事线：main_arc\n- POV：沈砚\n- 地点：{loc}\n- 冲突：{conf}\n- 弧光：{arc}\n- 伏笔：{fs}\n- 状态变化：{st}\n")
open('volumes/vol-01/outline.md','w').write("\n".join(out))
json.dump({"volume":1,"chapter_range":[1,30],"active_storylines":[{"storyline_id":"main_arc","volume_role":"primary"}],"convergence_events":[]},open('volumes/vol-01/storyline-schedule.json','w'),ensure_ascii=False,indent=2)
json.dump({"volume":1,"foreshadowing":[
 {"id":"watch_owner_death","description":"怀表主人是怎么死的","scope":"medium","status":"planned","planted_chapter":1,"target_resolve_range":[8,12]},
 {"id":"lin_family_debt","description":"林家欠下的三千两","scope":"short","status":"planned","planted_chapter":2,"target_resolve_range":[4,6]}]},
 open('volumes/vol-01/foreshadowing.json','w'),ensure_ascii=False,indent=2)
PY
for s in brief world characters storylines outline; do "$N" quickstart done $s >/dev/null; done
ops() { # chapter, base, storyline ops json
  printf '{"chapter": %s, "base_state_version": %s, "storyline_id": "main_arc", "ops": %s}' "$1" "$2" "$3"; }
sum=("" "周掌柜逼沈砚收下一只怀表，沈砚听出表的主人昨晚刚死，表里的人留下一句话：码头三号仓，别让老林看见。门外有人冒雨守着。"
        "沈砚循着怀表的话来到码头三号仓，驼背老头放他进仓，最里头的箱子写着一个林字。沈砚第二次听物。"
        "表里的人数到七，沈砚在第七只箱底找到林家欠债三千两的账簿。林家少爷林晚舟截住他，沈砚不让，揣走账簿。")
mem=("" "沈砚收下死人的怀表，门外有人盯上了他。" "沈砚在三号仓找到写着林字的箱子，今天已听物两次。" "沈砚拿到林家三千两的欠债账簿，与林晚舟结下梁子。")
deltas=("" '[{"op":"set","path":"characters.shen-yan.location","value":"雾港当铺"},{"op":"add","path":"characters.shen-yan.inventory","value":"旧怀表"},{"op":"foreshadow","path":"watch_owner_death","value":"planted","detail":"表里的人在咳嗽"}]'
           '[{"op":"set","path":"characters.shen-yan.location","value":"雾港码头三号仓"},{"op":"inc","path":"characters.shen-yan.listen_count","value":2},{"op":"foreshadow","path":"lin_family_debt","value":"planted","detail":"箱子上的林字"}]'
           '[{"op":"add","path":"characters.shen-yan.inventory","value":"林家账簿"},{"op":"set","path":"characters.lin-wanzhou.location","value":"雾港码头三号仓"},{"op":"foreshadow","path":"lin_family_debt","value":"advanced","detail":"账簿：三千两，七月十五前还清"}]')
scores=("" 4.2 3.8 4.0)
for n in 1 2 3; do
  tok=$("$N" --json chapter begin $n | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["token"])')
  f=$(printf '%03d' $n)
  cp "$DEMO_SRC/ch$n.md" staging/chapters/chapter-$f.md
  printf -- '---\nchapter: %s\nstoryline_id: main_arc\n---\n%s\n' $n "${sum[$n]}" > staging/summaries/chapter-$f-summary.md
  v=$(python3 -c 'import json; print(json.load(open("state/current-state.json"))["state_version"])')
  ops $n $v "${deltas[$n]}" > staging/state/chapter-$f-delta.json
  mkdir -p staging/storylines/main_arc; echo "${mem[$n]}" > staging/storylines/main_arc/memory.md
  "$N" chapter stage drafted --token $tok --model sonnet --duration-ms 52000 --input-tokens 18000 --output-tokens 4200 >/dev/null
  "$N" chapter stage refined --token $tok --model opus --duration-ms 31000 --input-tokens 6000 --output-tokens 3900 >/dev/null
  "$N" check leak --chapter $n >/dev/null || true
  for e in eval eval-secondary; do
    python3 - "$n" "${scores[$n]}" "staging/evaluations/chapter-$f-$e.json" <<'PY'
import json,sys
n,s,path=int(sys.argv[1]),float(sys.argv[2]),sys.argv[3]
d=lambda w: {"score":s,"weight":w,"reason":"冲突落地，结尾有钩子","evidence":"门外，有人在雨里站了很久。"}
if "secondary" in path:
    s=round(s-0.1,2)
json.dump({"chapter":n,"overall":s,"recommendation":"pass","contract_verification":{"W-001":"pass"},
 "scores":{k:d(w) for k,w in [("plot_logic",.18),("character",.18),("immersion",.15),("foreshadowing",.10),("pacing",.08),("style_naturalness",.15),("emotional_impact",.08),("storyline_coherence",.08)]},
 "violations":[],"risk_flags":[],"required_fixes":[],"issues":[]},open(path,'w'),ensure_ascii=False,indent=2)
PY
  done
  [ $n = 1 ] || rm staging/evaluations/chapter-$f-eval-secondary.json
  "$N" chapter stage judged --token $tok --model sonnet --duration-ms 24000 >/dev/null
  d=$("$N" --json chapter gate $n --token $tok | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["decision"])')
  if [ "$d" = polish ]; then
    sed -i 's/沈砚数着仓门往前走/沈砚一间一间数着仓门往前走/' staging/chapters/chapter-$f.md
    "$N" chapter stage polished --token $tok --model opus >/dev/null
  fi
  "$N" chapter commit $n --token $tok >/dev/null
done
for s in trial-1 trial-2 trial-3; do "$N" quickstart done $s >/dev/null 2>&1 || true; done
rm -rf staging/storylines/main_arc
"$N" validate
"$N" state rebuild >/dev/null && echo rebuild-ok
