//! What the scripted agents of the end-to-end tests write, at the size real ones write it (the
//! cost meter bills outputs, and a packet carries the text the agent before wrote): a chapter of
//! about 3,000 字, a summary, a state delta and a storyline memory of a real chapter, a
//! refiner's pass of about 5 % edits, a full evaluation.
//!
//! The chapter's filler is made up here from a few dozen sentence patterns (nothing copied from
//! any book); every chapter `n` gets its own, the same on every call.
#![cfg(unix)]

use serde_json::{Value, json};

const PEOPLE: [&str; 8] = [
    "陆尘",
    "老周",
    "打更的老汉",
    "卖伞的婆子",
    "庙祝",
    "戴斗笠的汉子",
    "巡夜的差役",
    "隔壁铁匠",
];
const PLACES: [&str; 8] = [
    "城北破庙",
    "巷口",
    "河埠头",
    "当铺后门",
    "钟楼底下",
    "旧码头",
    "米行屋檐下",
    "南门瓮城",
];
const THINGS: [&str; 8] = [
    "油灯",
    "铜钱",
    "斗笠",
    "灯笼",
    "油纸伞",
    "短刀",
    "木匣",
    "火折子",
];
const WEATHER: [&str; 5] = ["雨", "风", "雾", "夜色", "更鼓声"];

/// Sentence patterns: `P`/`Q` a person, `L`/`M` a place, `T` a thing, `W` the weather.
const PATTERNS: [&str; 24] = [
    "P在L站了一会儿，把T换到另一只手上。",
    "W压着L的瓦檐，P缩着脖子往前走。",
    "P没有说话，只把T往怀里又塞了塞。",
    "从L到M要走两刻钟，P今夜走得比往常慢。",
    "P想起三年前那个冬天，L也是这样冷，手指冻得拿不住T。",
    "“T的事，你听谁说的？”P压低了声音。",
    "P摇了摇头：“不是我，你去问Q。”",
    "L的石板缝里积着水，一脚踩下去，凉气顺着鞋底往上钻。",
    "Q在M等了半个时辰，T早就凉透了。",
    "P数了数身上的铜板，够买两个烧饼，不够住店。",
    "W里传来两声狗叫，隔了一会儿，又没了动静。",
    "“天亮之前得出城。”P把T系紧，“南门那边有人接应。”",
    "Q咳了一声，像是要说什么，到底没说出口。",
    "P蹲下身，用指头在泥地上画了一条线，又抹掉了。",
    "L那边亮着一盏灯，灯下有人影晃了一下。",
    "P记得Q说过，M的墙根底下埋着东西，只是谁也没去挖过。",
    "“你饿不饿？”Q从袖子里摸出半块干粮，掰了一半递过去。",
    "P接过来，咬了一口，干得直噎嗓子。",
    "W渐渐小了，檐角滴下的水一声慢过一声。",
    "P把T搁在门槛上，回头看了一眼L，没人跟来。",
    "Q的袖口磨得起了毛，手背上一道旧疤，是早年在M落下的。",
    "“明早卯时，M见。”P说完这句，转身就走。",
    "P靠着墙坐下，把腿伸直，才觉出脚底磨出了泡。",
    "L的门板被风吹得一开一合，吱呀声在空巷里传出老远。",
];

/// Sentences a model writes and a refiner takes out, each with the refiner's rewording: eight
/// of them in every chapter (about 5 % of its narration when all are reworded).
pub(crate) const AI_SENTENCES: [(&str, &str); 8] = [
    (
        "他的眼中闪过一丝难以察觉的寒芒，仿佛看穿了一切。",
        "他眯了眯眼，没接话。",
    ),
    (
        "空气仿佛在这一刻凝固了，所有人都屏住了呼吸。",
        "屋里一下子没了声音。",
    ),
    ("陆尘的嘴角勾起一抹意味深长的弧度。", "陆尘笑了一下。"),
    (
        "一股莫名的寒意从他的心底缓缓升起，蔓延至四肢百骸。",
        "他后背一阵发凉。",
    ),
    (
        "老周的声音不大，却清晰地传进了每个人的耳中。",
        "老周说得不响，巷子里的人都听见了。",
    ),
    (
        "夜色如墨，浓得化不开，仿佛要吞噬世间的一切。",
        "夜黑得看不见巷子的尽头。",
    ),
    ("他深吸一口气，努力让自己平静下来。", "他把气喘匀了。"),
    (
        "这一刻，他终于明白了什么叫做命运的无常。",
        "他这才知道，事情不会照他想的走。",
    ),
];

/// A small deterministic generator (an LCG), seeded by the chapter.
struct Rng(u64);

impl Rng {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// A sentence of a pattern not among the `recent` ones (no sentence frame twice in a row of
/// eight: `novel lint` counts a repeated frame).
fn sentence(r: &mut Rng, recent: &mut Vec<usize>) -> String {
    let mut at = r.pick(PATTERNS.len());
    while recent.contains(&at) {
        at = (at + 1) % PATTERNS.len();
    }
    recent.push(at);
    if recent.len() > 8 {
        recent.remove(0);
    }
    let p = r.pick(PEOPLE.len());
    let q = (p + 1 + r.pick(PEOPLE.len() - 1)) % PEOPLE.len();
    let l = r.pick(PLACES.len());
    let m = (l + 1 + r.pick(PLACES.len() - 1)) % PLACES.len();
    PATTERNS[at]
        .replace('P', PEOPLE[p])
        .replace('Q', PEOPLE[q])
        .replace('L', PLACES[l])
        .replace('M', PLACES[m])
        .replace('T', THINGS[r.pick(THINGS.len())])
        .replace('W', WEATHER[r.pick(WEATHER.len())])
}

/// About `chars` 字 of chapter `n`'s filler paragraphs (3–5 sentences each), with the eight
/// [`AI_SENTENCES`] spread through them; every paragraph ends with a blank line.
pub(crate) fn filler(n: u32, chars: usize) -> String {
    let mut r = Rng(u64::from(n) * 7_919 + 17);
    let mut out = String::new();
    let mut count = 0;
    let mut ai = 0;
    let mut recent = Vec::new();
    while count < chars {
        let mut para = String::new();
        for _ in 0..3 + r.pick(3) {
            para.push_str(&sentence(&mut r, &mut recent));
        }
        if ai < AI_SENTENCES.len() && r.pick(3) > 0 {
            para.push_str(AI_SENTENCES[ai].0);
            ai += 1;
        }
        count += para.chars().count();
        out.push_str(&para);
        out.push_str("\n\n");
    }
    for (s, _) in &AI_SENTENCES[ai..] {
        out.push_str(s);
        out.push_str("\n\n");
    }
    out
}

/// Chapter `n`'s summary, with its front matter (about 350 字).
pub(crate) fn summary(n: u32) -> String {
    format!(
        "---\nchapter: {n}\nstoryline_id: main_arc\n---\n\n第{n}章：雨夜里陆尘在城北破庙拆开密信，信上只有一行字，笔迹像是三年前失踪的师父。\
他循着信里的暗记摸到巷口，发觉卖馄饨的老周没出摊、巷口的灯笼也没点，整条巷子比平日静得多。\
老周后来在当铺后门露面，只说这几天城里来了生人，劝他天亮前出城，别的一句不肯多讲。\
陆尘在钟楼底下撞见一个戴斗笠的汉子，那人手里的木匣与密信上画的记号一样，两人没有交手，对方先走了。\
巡夜的差役盘问了陆尘几句，没查出什么，放他过去；打更的老汉却说昨夜也见过那个斗笠。\
陆尘把半张地图藏进靴筒，决定明早卯时去南门瓮城找接应的人。\
章末，门外的雨声里多了一串踩水的脚步，有人一路跟着他，停在破庙门口没有进来。\
本章埋下：斗笠汉子的木匣、师父的笔迹、南门的接应人。\n"
    )
}

/// The storyline's memory after chapter `n` (about 300 字; the first line is where things
/// stand).
pub(crate) fn memory(n: u32) -> String {
    format!(
        "# 主线记忆\n\n截至第{n}章：陆尘拿着师父笔迹的密信，藏着半张地图，准备天亮前经南门瓮城出城，有人一路跟着他。\n\
- 密信只有一行字，笔迹像三年前失踪的师父；信里的暗记指向城北的几处旧地方。\n\
- 老周知道城里来了生人，劝陆尘出城，却不肯说来人是谁，像是怕被牵连。\n\
- 戴斗笠的汉子手里有一只木匣，匣上的记号与密信上画的一样；两人照过面，没交手。\n\
- 打更的老汉说昨夜也见过那顶斗笠，在钟楼底下站了一宿。\n\
- 南门瓮城有人接应，约在卯时；接应的是谁、可不可信，陆尘还不知道。\n\
- 巡夜的差役盘问过陆尘，记下了他的样子，之后进出城门要多留神。\n"
    )
}

/// Chapter `n`'s state delta (chapter 2 of the fixture moves 陆尘 to 城北破庙 with half a map;
/// another chapter to 第n章的地点 with 物品n), with the character actions of a real chapter;
/// `who` is the character's id (a display name there makes a bad delta). The base state version
/// is left as `{{base}}` for the fake to fill from the packet.
pub(crate) fn delta(n: u32, who: &str) -> String {
    let (place, item) = if n == 2 {
        ("城北破庙".to_string(), "半张地图".to_string())
    } else {
        (format!("第{n}章的地点"), format!("物品{n}"))
    };
    let ops = json!([
        {"op": "set", "path": format!("characters.{who}.location"), "value": place},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": item},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": format!("第{n}章的密信（只有一行字，像师父的笔迹）")},
        {"op": "set", "path": "characters.lu-chen.injury", "value": "脚底磨出了泡，走得慢"},
        {"op": "set", "path": "characters.lu-chen.plan", "value": "天亮前经南门瓮城出城，卯时见接应的人"}
    ]);
    let actions = json!([
        {"character": "lu-chen", "scene": 1, "action": "雨夜在城北破庙拆开密信，认出像是师父的笔迹"},
        {"character": "lu-chen", "scene": 2, "action": "在钟楼底下与戴斗笠的汉子照面，没有交手，记下了木匣上的记号"},
        {"character": "lu-chen", "scene": 3, "action": "应付过巡夜差役的盘问，把半张地图藏进靴筒，决定卯时去南门"}
    ]);
    serde_json::to_string_pretty(&json!({"chapter": n, "base_state_version": "{{base}}",
        "storyline_id": "main_arc", "ops": ops, "character_actions": actions}))
    .unwrap()
    .replace("\"{{base}}\"", "{{base}}")
}

/// One scoring dimension: `score`, the weight, a reason of a real judge's length, evidence
/// copied from the text.
fn dimension(score: f64, weight: f64, reason: &str, evidence: &str) -> Value {
    json!({"score": score, "weight": weight, "reason": reason, "evidence": evidence})
}

/// Clauses of the paragraph every draft, revision and rewrite has (the e2e books' second
/// paragraph): the evaluations' evidence, each dimension its own (a quote shorter than a
/// clause, or one line standing for three dimensions, is refused: `E_EVAL_FRAGMENT`,
/// `E_EVAL_REUSED`).
pub(crate) const EVIDENCE: [&str; 8] = [
    "城北这条巷子他走了三年",
    "哪块石板松、哪家的狗夜里叫",
    "今夜巷口那盏灯笼没点",
    "他闭着眼都数得出来",
    "整条巷子只剩雨打瓦檐的声音",
    "城北这条巷子他走了三年……他闭着眼都数得出来",
    "卖馄饨的老周也没出摊",
    "哪块石板松、哪家的狗夜里叫……整条巷子只剩雨打瓦檐的声音",
];

/// A full evaluation of chapter `n` at `score` on every dimension (so the weighted total is
/// `score`): the check rows, eight dimensions with reasons and clause quotes ([`EVIDENCE`]),
/// issues and strengths; the recommendation quality-judge.md derives from the default gate
/// (`E_EVAL_VERDICT`), and a fix whose target quotes the text whenever it is not a pass. After
/// a round the gate sent back, `fresh` is a sentence this round wrote (the previous round's text
/// did not have it): the evidence that its one fix (F1) was partly done (`E_EVAL_FIX_REVIEW`,
/// `E_EVAL_STALE`).
pub(crate) fn evaluation(n: u32, score: f64, judge: &str, fresh: Option<&str>) -> String {
    let recommendation = novel_core::gate::band(score, &Default::default());
    let letter = "信上只有一行字";
    let fixes = if score < 3.5 {
        json!([{"target": "第 2 段「城北这条巷子他走了三年」起", "instruction": "开头就让跟踪的人露一次脚步声，密信的内容保留；跟踪者只给声音，不给样貌，留到下一章再露脸"}])
    } else {
        json!([])
    };
    let reasons: [(&str, f64, &str); 8] = [
        (
            "plot_logic",
            0.18,
            "密信引出追查、跟踪者逼近，因果清楚；老周劝他出城的动机只交代了一半，读者会想他为什么怕",
        ),
        (
            "character",
            0.18,
            "陆尘对巷子的熟悉写得像一个在这里讨了三年生活的人，选择天亮前出城合他谨慎的性子",
        ),
        (
            "immersion",
            0.15,
            "雨夜、灯笼没点、馄饨摊没出，几个缺席的细节把不对劲写出来了，没有设定倾倒",
        ),
        (
            "foreshadowing",
            0.10,
            "密信的笔迹、斗笠汉子的木匣都只露一角，没有提前揭底，日后回收有抓手",
        ),
        (
            "pacing",
            0.08,
            "开头接住上一章的密信，中段几次照面略有重复，章末脚步声收得干净",
        ),
        (
            "style_naturalness",
            0.15,
            "黑名单 2.4 次/千字（lint 通过）；结构句式都在上限内；平均句长与指纹相差不到一成",
        ),
        (
            "emotional_impact",
            0.08,
            "紧张感靠具体的声音和缺席的人撑起来，没有替人物喊情绪",
        ),
        (
            "storyline_coherence",
            0.08,
            "只有主线在场，与上一章的密信一线接得上，没有越界的外线人物",
        ),
    ];
    let mut scores = json!({});
    for (i, (name, weight, reason)) in reasons.iter().enumerate() {
        scores[*name] = dimension(score, *weight, reason, &format!("「{}」", EVIDENCE[i]));
    }
    let mut e = json!({"chapter": n, "judge": judge, "overall": score,
        "recommendation": recommendation,
        // The row of the fixtures' one required objective (`E_EVAL_OBJECTIVE`).
        "contract_verification": {
            "l1_checks": [],
            "l2_checks": [],
            "l3_checks": [
                {"id": format!("OBJ-{n:03}-1"), "status": "pass", "confidence": "high", "detail": format!("「{letter}」：密信拆开，追查的线索落在正文里")}],
            "ls_checks": [
                {"id": "LS-001", "status": "pass", "confidence": "high", "detail": "只有主线在场，与其他线没有时间冲突"},
                {"id": "LS-005", "status": "pass", "confidence": "high", "detail": "check leak：leak_risk none"}],
            "has_violations": false},
        "scores": scores,
        "violations": [], "risk_flags": [], "required_fixes": fixes,
        "issues": ["跟踪的人出场太晚，中段几次照面写法相近，可以并掉一次", "老周劝陆尘出城的理由只说了一半"],
        "strengths": ["缺席的细节（灯笼没点、馄饨摊没出）写出了不对劲"]});
    if let Some(fresh) = fresh {
        e["fix_review"] = json!([{"fix": "F1", "status": "partly", "evidence": fresh}]);
    }
    serde_json::to_string_pretty(&e).unwrap()
}

/// WorldBuilder's narrative of the core setting (`world/rules.md`, about 1,100 字).
pub(crate) fn world_doc() -> String {
    "# 核心设定\n\n## 城与夜\n\
灯城分南北两半，中间隔着一条漕河。南城是商户和官署，北城是旧城，二十年前一场大火烧掉了半条街，至今没人重修，\
只剩断墙、塌了顶的庙和一片片长满蒿草的空地。城里的规矩是入夜闭坊，北城废墟入夜禁行，巡夜人见人即拿，\
只有持巡夜令的人能在夜里走动。守夜亭设在北城与南城交界的桥头，守夜人管点灯、报更，也管看住废墟那一头。\n\n\
## 灯下显字（金手指）\n\
陆尘在废墟里捡到的密信，白天是空白的黄纸，只有凑到灯下才显出字来。每封信每夜只能读一次，读第二次，\
字迹就从纸边开始烧，烧完只剩一层灰。信上的字会说到过去的事，也会说到还没发生的事，但从不说全：\
每一封都只给一句，下一句要等下一夜、下一盏灯。用的灯不同，显出的字也不同：守夜亭的官灯显得清楚，\
寻常油灯只显一半，所以陆尘想多读，就得冒险去拿官灯。\n\n\
## 代价\n\
读信的人会在当夜做一个与信上内容有关的梦，梦里的伤醒来会留在身上。陆尘读第一封信那夜梦见火，\
醒来左手背多了一片烫红。他不知道读得越多会怎样，只知道守夜人里流传一句话：灯下的字，看多了人就不回来了。\n\n\
## 势力\n\
- 巡夜司：管北城夜禁，头目周衍，手下二十来个巡夜人，名义上归府衙，实际上听城里一位贵人的。\n\
- 灯油行：卖灯油、修灯罩，消息最灵，老墨在行里待了四十年，什么灯都认得。\n\
- 旧案：二十年前的大火烧死了十七口人，陆尘的父亲是当夜的守夜人，火后失踪，官府判他失职潜逃。\n\n\
## 边界\n\
不写神仙鬼怪现身，灯下显字是全书唯一的奇事；其余都按人间的规矩来：人会饿、会冷、会被抓，\
巡夜人抓人要有由头，贵人办事要借人手。\n"
        .to_string()
}

/// The parts of a real character profile beyond the fixture's few fields (about 400 字).
pub(crate) fn character_detail(name: &str) -> Value {
    json!({
        "appearance": format!("{name}个子不高，瘦，手指关节粗，常年在夜里走动，脸色比同龄人白；衣服洗得发白，袖口总是磨破。"),
        "background": format!("{name}在灯城北面的旧街长大，二十年前那场大火之后跟着守夜亭的老人过活，认得北城每一条巷子。\
    他识字不多，记性极好，听过一遍的话能原样复述；他怕火，见到明火会下意识往后退半步，这个毛病自己不肯承认。\
    他欠灯油行三个月的账，每月初一去还一点，从不赖。"),
        "arc": format!("从只想守着自己那盏灯过日子，到不得不站出来查清大火的真相；第一卷末{name}第一次主动去找人，而不是等事情找上门。"),
        "habits": ["说话前先看一眼对方的手", "紧张时摩挲袖口的破洞", "夜里不背对着灯坐"],
        "knowledge_limits": format!("{name}不知道密信是谁放在废墟里的，也不知道巡夜司背后是谁；他只见过周衍两次。")
    })
}

/// A volume outline's conflict and arc lines for chapter `n`, at a real planner's length.
pub(crate) fn outline_lines(n: u32) -> String {
    format!(
        "- 冲突：陆尘夜探废墟，巡夜人逼近，他得在被抓前读完第{n}封密信；信上只有一句，说的是二十年前那场火里的一个细节，\
他读完才发现这个细节和自己记得的不一样，巡夜人的灯笼已经照到了断墙后面\n\
- 弧光：陆尘从躲事变成查事；这一章他第一次为了读信主动冒险，付出的代价是梦里的伤留在了身上\n\
- 爽点：蓄压——巡夜人把话说满，认定他偷了官灯；兑现留到下一章\n"
    )
}

/// A real chapter contract's further parts (about 250 字): two more objectives (not required),
/// preconditions, postconditions and the hand-over to the next chapter.
pub(crate) fn contract_detail(n: u32) -> Value {
    json!({
        "objectives": [
            {"id": format!("OBJ-{n:03}-2"), "type": "character", "required": false,
                "description": "陆尘第一次为了读信主动冒险，梦里的伤留在身上，位置与信里说的细节有关"},
            {"id": format!("OBJ-{n:03}-3"), "type": "plot", "required": false,
                "description": "巡夜人把话说满，认定陆尘偷了官灯；这一章只蓄压，不兑现"}
        ],
        "preconditions": {"required_world_rules": ["W-002"]},
        "opening": format!("开场接上一章：陆尘手里攥着第{}封密信的灰，巡夜司已经注意到北城废墟里有人夜里点灯。", n.saturating_sub(1)),
        "postconditions": {"state_changes": {"陆尘": format!("读完第{n}封密信，信纸烧成灰；梦里的伤留在身上")}},
        "handover": format!("第{n}章结尾停在巡夜人的灯笼照过来的那一刻，下一章从陆尘翻墙逃走写起，不复述读信的过程。")
    })
}

/// A volume review's body (`volumes/vol-NN/review.md`, about 700 字).
pub(crate) fn review_doc() -> String {
    "# 第 1 卷回顾 · 灯下\n\n## 一句话\n陆尘读完八封密信，知道了写信的人就在城里，也知道了父亲不是潜逃。\n\n\
## 数据\n第 1–8 章；强制通过 0 章；平均分 4.1；修订 1 章（第 5 章），作者改写 1 章（第 7 章）。\n\n\
## 立住了的\n- 第 3 章灯下读信的那场戏：信上一句话、巡夜人的脚步、烧起来的纸边，三样东西压在一起，节奏最好。\n\
- 陆尘怕火的毛病从第 1 章埋到第 6 章才第一次被人看破，读者评论里有人专门提到。\n\
- 老墨第一次登场只卖了一盏灯罩，什么都没说，后面三章每次露面多说一句，铺得稳。\n\n\
## 塌了或松了的\n- 第 7 章开头太慢（已按作者意见改过）：下卷开头直接进戏，不要先写天气。\n\
- 巡夜司的威胁连着四章都是「灯笼照过来」，读者会腻；下卷要让周衍真的抓一次人。\n\
- 苏婉在第 4 章之后就没出场，青梅的线断了三章，下卷第一章要交代她去了哪。\n\n\
## 没收的线（带入下卷）\n- 写信的人是谁：本卷只确定他在城里、认得陆尘的父亲。\n- 梦里的伤越积越多，陆尘左手已经握不紧刀。\n\n\
## 下卷铺垫建议\n- 卷首让写信的人露一次面（main_arc，陆尘），只露背影和一盏官灯。\n\
- 周衍在第 2 章抓走老墨，逼陆尘拿密信去换人。\n- 苏婉回城，带来父亲当年的一件旧物。\n\n## 作者批注\n"
        .to_string()
}
