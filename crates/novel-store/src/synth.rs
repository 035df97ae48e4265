//! A synthetic, schema-valid novel project of N chapters, for tests and benchmarks: five
//! storylines (three active, one dormant, one planned), 24 characters with L2 contracts, eight
//! world rules, volumes of 50 chapters each with an outline in the strict heading format, a
//! storyline schedule with a convergence event, a foreshadowing plan, a chapter contract for
//! every chapter, chapter texts, summaries with front matter, pipeline logs, storyline memories, and a
//! changelog built through `novel_core::ops` — so `novel validate` passes and
//! `novel state rebuild` agrees with the state on disk.
//!
//! Deterministic (no randomness, fixed timestamps). Files are written plainly, not atomically:
//! this is test data in a fresh directory.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::fs;
use std::path::{Path, PathBuf};

use novel_core::model::foreshadowing::PlannedForeshadowing;
use novel_core::model::state::ChangeSource;
use novel_core::model::{CurrentState, ForeshadowingGlobal};
use novel_core::ops::{self, Context, NameIndex};
use serde_json::{Value, json};

use crate::error::StoreError;
use crate::init::{InitOptions, init_project};
use crate::io::to_json_text;
use crate::layout;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Completed chapters.
    pub chapters: u32,
    /// Chapters per volume (the convergence event sits at offsets 24–27 when ≥ 30).
    pub per_volume: u32,
    /// Characters of body text per chapter file.
    pub chapter_chars: usize,
    /// Write an active `style-drift.json`.
    pub style_drift: bool,
    /// A book with a history, for the dashboard: an evaluation of every chapter (eight
    /// dimensions that vary), pipeline logs dated three chapters a day from 2026-01-01 whose
    /// judge stage recorded only its token total, a force-pass every 40 chapters, and the cast
    /// on stage named in each chapter's text (the protagonist most often).
    pub history: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            chapters: 30,
            per_volume: 50,
            chapter_chars: 3_000,
            style_drift: false,
            history: false,
        }
    }
}

/// What was generated.
#[derive(Debug, Clone)]
pub struct SynthReport {
    pub root: PathBuf,
    pub chapters: u32,
    /// `chapters + 1`: planned (outline block and contract) but not written.
    pub next_chapter: u32,
    /// The volume of the next chapter (the checkpoint's `current_volume`).
    pub volume: u32,
    /// Volumes that have an outline, schedule, plan and contracts.
    pub volumes: u32,
}

/// The storylines: (id, name, type, scope, status).
pub const STORYLINES: [(&str, &str, &str, &str, &str); 5] = [
    ("main_arc", "陆尘证道", "main_arc", "novel", "active"),
    (
        "jinghai_plan",
        "靖海计划",
        "conspiracy",
        "multi_volume",
        "active",
    ),
    (
        "sect_rivalry",
        "宗门之争",
        "faction_conflict",
        "multi_volume",
        "active",
    ),
    ("zhonggu_secret", "中古之秘", "mystery", "novel", "dormant"),
    (
        "lost_heir",
        "遗孤之谜",
        "character_arc",
        "single_volume",
        "planned",
    ),
];

/// A storyline's cast: (slug, display name, role).
pub type Cast = &'static [(&'static str, &'static str, &'static str)];

/// Characters by storyline.
pub const CAST: [(&str, Cast); 4] = [
    (
        "main_arc",
        &[
            ("lu-chen", "陆尘", "protagonist"),
            ("su-wan", "苏婉", "supporting"),
            ("lao-mo", "老墨", "supporting"),
            ("qin-feng", "秦风", "supporting"),
            ("bai-li", "白璃", "supporting"),
            ("han-shan", "寒山", "minor"),
            ("zhou-yi", "周易", "minor"),
            ("xiao-man", "小蛮", "minor"),
        ],
    ),
    (
        "jinghai_plan",
        &[
            ("xu-xiangqian", "许象乾", "supporting"),
            ("li-longchuan", "李龙川", "supporting"),
            ("you-shi", "佑使", "antagonist"),
            ("gui-weng", "龟翁", "minor"),
            ("hai-ying", "海鹰", "minor"),
            ("mo-yun", "墨云", "minor"),
        ],
    ),
    (
        "sect_rivalry",
        &[
            ("chen-lao", "陈老", "supporting"),
            ("ye-qing", "叶青", "antagonist"),
            ("fang-hao", "方浩", "minor"),
            ("du-gu", "独孤", "minor"),
            ("lin-yue", "林月", "supporting"),
            ("shi-kai", "石开", "minor"),
        ],
    ),
    (
        "zhonggu_secret",
        &[
            ("long-jun", "龙君", "supporting"),
            ("lie-shan", "烈山", "minor"),
            ("wu-ming", "无名", "minor"),
            ("gu-shou", "古守", "minor"),
        ],
    ),
];

const PLACES: [&str; 12] = [
    "青云镇",
    "魔都外城",
    "城北废墟",
    "东海礁岛",
    "太虚阁",
    "落霞谷",
    "寒潭",
    "佑国驿馆",
    "龙宫遗迹",
    "天机楼",
    "断崖栈道",
    "玄铁矿场",
];
const MOODS: [&str; 8] = [
    "警觉", "决意", "疑虑", "愤怒", "平静", "焦灼", "欣喜", "低落",
];
const DEEDS: [&str; 10] = [
    "查到一条旧线索",
    "与对手正面交锋",
    "在夜色中潜入禁地",
    "识破一场伪装",
    "付出代价换来情报",
    "救下一名无辜之人",
    "与旧识重逢却话不投机",
    "在拍卖会上截下关键之物",
    "被迫立下誓约",
    "发现身边人另有身份",
];

const TS: &str = "2026-01-01T00:00:00Z";

fn pick<'a>(list: &[&'a str], n: u32) -> &'a str {
    list[(n as usize) % list.len()]
}

fn contract_id(slug: &str, k: u32) -> String {
    format!("C-{}-{k:03}", slug.replace('-', "").to_uppercase())
}

fn cast_of(line: &str) -> &'static [(&'static str, &'static str, &'static str)] {
    CAST.iter()
        .find(|(l, _)| *l == line)
        .map_or(CAST[0].1, |(_, c)| c)
}

fn line_name(id: &str) -> &'static str {
    STORYLINES
        .iter()
        .find(|l| l.0 == id)
        .map_or("主线", |l| l.1)
}

/// The plan of the generated book: which volume and storyline each chapter is on.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub per_volume: u32,
}

impl Layout {
    pub fn volume_of(&self, c: u32) -> u32 {
        (c - 1) / self.per_volume + 1
    }

    pub fn volume_start(&self, v: u32) -> u32 {
        (v - 1) * self.per_volume + 1
    }

    /// The convergence event of volume `v` (offsets 24–27), when the volume is long enough.
    pub fn convergence(&self, v: u32) -> Option<[u32; 2]> {
        (self.per_volume >= 30).then(|| {
            let s = self.volume_start(v);
            [s + 24, s + 27]
        })
    }

    /// The storyline of chapter `c`.
    pub fn line_of(&self, c: u32) -> &'static str {
        let v = self.volume_of(c);
        let o = c - self.volume_start(v);
        if let Some([a, b]) = self.convergence(v)
            && (a..=b).contains(&c)
        {
            return if o.is_multiple_of(2) {
                "main_arc"
            } else {
                "jinghai_plan"
            };
        }
        if o % 5 == 3 {
            "jinghai_plan"
        } else if o % 10 == 6 {
            "sect_rivalry"
        } else {
            "main_arc"
        }
    }

    /// The characters on stage in chapter `c`: three of its line's cast (two of each involved
    /// line in a convergence chapter).
    pub fn cast_in(&self, c: u32) -> Vec<(&'static str, &'static str)> {
        let v = self.volume_of(c);
        let in_conv = self
            .convergence(v)
            .is_some_and(|[a, b]| (a..=b).contains(&c));
        let take = |line: &str, k: u32| -> Vec<(&'static str, &'static str)> {
            let cast = cast_of(line);
            (0..k)
                .map(|i| {
                    let (id, name, _) = cast[((c * 3 + i) as usize) % cast.len()];
                    (id, name)
                })
                .collect()
        };
        if in_conv {
            let mut v = take("main_arc", 2);
            v.extend(take("jinghai_plan", 2));
            v
        } else {
            take(self.line_of(c), 3)
        }
    }
}

/// One planned thread of volume `v`: (id, scope, plant chapter, range, resolved at).
fn threads(l: &Layout, v: u32) -> Vec<Thread> {
    let s = l.volume_start(v);
    let end = s + l.per_volume - 1;
    (0..6u32)
        .filter_map(|k| {
            let p = s + 1 + 7 * k;
            (p <= end).then(|| {
                let (scope, range, resolved) = match k % 3 {
                    0 => (
                        "short",
                        Some([p + 3, p + 8]),
                        // One short thread per volume is left open, so it becomes overdue.
                        (k != 3).then_some(p + 6),
                    ),
                    1 => ("medium", Some([p + 10, p + 30]), (k == 1).then_some(p + 20)),
                    _ => ("long", None, None),
                };
                (format!("v{v:02}-f{k}"), scope, p, range, resolved)
            })
        })
        .collect()
}

fn write(root: &Path, rel: &str, content: &str) -> Result<(), StoreError> {
    let path = layout::join(root, rel);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    }
    fs::write(&path, content).map_err(|e| StoreError::io(&path, e))
}

fn chapter_title(c: u32) -> String {
    format!(
        "{}{}",
        pick(&PLACES, c * 7),
        pick(&["风波", "夜话", "对峙", "余烬", "惊变", "密约"], c)
    )
}

fn summary_text(l: &Layout, c: u32) -> String {
    let line = l.line_of(c);
    let cast = l.cast_in(c);
    let names: Vec<&str> = cast.iter().map(|(_, n)| *n).collect();
    let last = names[names.len() - 1];
    // About 300 字, as the seed asks of the Summarizer.
    format!(
        "{a}在{p0}{d0}，随后{d3}。{b}对此心存{m0}，与{a}争执一番后各退一步，约定三日后在{p2}碰头。\
         途中{last}{d5}，得知{p3}一带近来有陌生修士出没，其中一人腰间挂着与旧案相同的铜牌。\
         {a}想起师门旧事，判断此事与{line_name}一线的幕后之人有关，决定暂不声张，先把线索记下。\
         夜里{b}独自去了{p4}，回来时神色{m1}，对所见之事只字不提。\
         本章末尾，{line_name}的局势出现新的变数：{last}收到一封没有署名的信，信中只写了「{p1}，三更」五个字，\
         {a}决定次日动身前往{p1}。（{line_name}，第{c}章）",
        a = names[0],
        b = names[1],
        last = last,
        p0 = pick(&PLACES, c),
        p1 = pick(&PLACES, c + 1),
        p2 = pick(&PLACES, c + 2),
        p3 = pick(&PLACES, c + 3),
        p4 = pick(&PLACES, c + 4),
        d0 = pick(&DEEDS, c),
        d3 = pick(&DEEDS, c + 3),
        d5 = pick(&DEEDS, c + 5),
        m0 = pick(&MOODS, c),
        m1 = pick(&MOODS, c + 2),
        line_name = line_name(line),
    )
}

fn body_text(c: u32, chars: usize) -> String {
    let sentences = [
        "风从山口灌进来，吹得檐下的铜铃乱响。",
        "「你真要去？」她问，声音压得很低。",
        "他没有回答，只把剑往背上紧了紧。",
        "街角的茶摊早收了，只剩一盏灯还亮着。",
        "老人咳了两声，从怀里摸出一块旧铁牌。",
        "「三更之前回来，过了时辰，城门就关了。」",
        "远处传来马蹄声，由远及近，又渐渐远去。",
        "他数了数袋中的灵石，比预想的少了一块。",
    ];
    let mut out = String::new();
    let mut i = c as usize;
    while out.chars().count() < chars {
        out.push_str(sentences[i % sentences.len()]);
        if i.is_multiple_of(3) {
            out.push_str("\n\n");
        }
        i += 1;
    }
    out
}

/// Writes the project into `dir` (which must not already hold a project).
pub fn synth_project(dir: &Path, opts: &SynthOptions) -> Result<SynthReport, StoreError> {
    let n = opts.chapters;
    let l = Layout {
        per_volume: opts.per_volume.max(10),
    };
    let report = init_project(
        dir,
        &InitOptions {
            title: Some("合成测试小说".into()),
            genre: Some("玄幻".into()),
            style: None,
        },
    )?;
    let root = report.root;
    let next = n + 1;
    let volumes = l.volume_of(next);
    write(&root, layout::BRIEF, BRIEF_TEXT)?;
    write_world_rules(&root)?;
    write_storylines(&root)?;
    write_storyline_memories(&root, n)?;
    let mut memories = write_characters(&root)?;
    write_style(&root, n, opts.style_drift)?;
    let plan = write_volumes(&root, &l, volumes)?;
    let deltas = chapter_deltas(&l, n);
    let (log, state, global) = replay_deltas(&root, &plan, &deltas, &mut memories)?;
    write(&root, layout::CHANGELOG, &log)?;
    write_character_memories(&root, &memories)?;
    write(&root, layout::CURRENT_STATE, &to_json_text(&state))?;
    write(&root, layout::FORESHADOWING_GLOBAL, &to_json_text(&global))?;
    write_chapters(&root, &l, n, opts.chapter_chars, opts.history)?;
    write_checkpoint(&root, n, volumes)?;
    Ok(SynthReport {
        root,
        chapters: n,
        next_chapter: next,
        volume: volumes,
        volumes,
    })
}

/// The creative brief (创作纲领).
const BRIEF_TEXT: &str = "# 创作纲领\n\n- **书名**：合成测试小说\n- **题材**：玄幻\n\n## 一句话卖点\n\n被逐出师门的少年陆尘，靠一本残缺的阵图在东海与宗门的夹缝里证道。\n\n## 主角与核心冲突\n\n陆尘重诺、多疑，擅长以小博大。他要查清师门旧案，却发现旧案牵出东海诸国的海权之争；越接近真相，身边可信的人越少。\n\n## 力量体系\n\n炼气、筑基、金丹、元婴四境，每次突破需要天地灵气与心境同时到位；阵图可以借势，但每用一次都要付出寿元。\n\n## 主要故事线\n\n主线：陆尘证道。暗线：靖海计划。点缀：宗门之争。休眠：中古之秘，后期揭开。\n\n## 基调与文风\n\n冷峻克制，偏短句，动作推进；少写心理独白，多用对话和细节表现人物；每章至少一处反直觉的细节。\n\n## 禁区\n\n不写后宫，不写无代价的逆袭，不用现代网络用语。\n";

/// Each character's memory records (`004`), by slug.
type Memories = std::collections::BTreeMap<String, Vec<novel_core::model::MemoryEntry>>;

/// World rules (L1): eight, the first five hard.
fn write_world_rules(root: &Path) -> Result<(), StoreError> {
    let rules: Vec<Value> = (1..=8u32)
        .map(|k| {
            json!({
                "id": format!("W-{k:03}"),
                "category": pick(&["magic_system", "geography", "society", "history"], k),
                "rule": format!("第{k}条规则：{}", pick(&[
                    "修炼者突破金丹期需要天地灵气浓度不低于三级",
                    "东海诸岛之间只能乘船往来，飞遁会引来海兽",
                    "宗门弟子不得在城内私斗，违者逐出山门",
                    "龙宫遗迹每百年开启一次，开启时海潮倒流",
                    "灵石是唯一的通用货币，凡俗金银不被修士接受",
                    "佑国与景国之间有盟约，边境不得驻军",
                    "死者的魂灯熄灭后不可复燃",
                    "天机楼的消息只卖一次，不得转售",
                ], k - 1)),
                "constraint_type": if k <= 5 { "hard" } else { "soft" },
                "exceptions": if k == 1 { json!(["服用破境丹时浓度要求降为二级"]) } else { json!([]) },
                "introduced_chapter": 1
            })
        })
        .collect();
    write(
        root,
        layout::WORLD_RULES,
        &to_json_text(&json!({ "rules": rules })),
    )?;
    Ok(())
}

/// The storylines and their one relationship.
fn write_storylines(root: &Path) -> Result<(), StoreError> {
    let storylines: Vec<Value> = STORYLINES
        .iter()
        .map(|(id, name, kind, scope, status)| {
            let pov: Vec<&str> = cast_of(id).iter().take(2).map(|(_, n, _)| *n).collect();
            json!({
                "id": id, "name": name, "type": kind, "scope": scope,
                "pov_characters": if *id == "zhonggu_secret" { vec![] } else { pov },
                "affiliated_factions": [],
                "timeline": if *id == "zhonggu_secret" { "past" } else { "present" },
                "status": status,
                "introduced_volume": 1,
                "description": format!("{name}：合成测试用的故事线")
            })
        })
        .collect();
    write(
        root,
        layout::STORYLINES,
        &to_json_text(&json!({
            "storylines": storylines,
            "relationships": [{
                "from": "main_arc", "to": "jinghai_plan", "type": "entangled",
                "bridges": {"shared_characters": ["陆尘", "许象乾"], "shared_foreshadowing": [], "shared_events": []},
                "convergence_condition": "陆尘卷入海域事件时自然交汇",
                "narrative_function": "主线角色因副线事件承受命运反噬"
            }],
            "storyline_types": novel_core::model::storyline::DEFAULT_STORYLINE_TYPES,
        })),
    )?;
    Ok(())
}

/// The memories of every storyline not merely planned, as of chapter `n`: the first sentence
/// is the line's one-sentence state; later lines are facts.
fn write_storyline_memories(root: &Path, n: u32) -> Result<(), StoreError> {
    for (id, name, _, _, status) in STORYLINES {
        if status == "planned" {
            continue;
        }
        let cast = cast_of(id);
        let mut m = format!(
            "# {name} · 故事线记忆\n\n{}此刻正在{}等待时机。\n",
            cast[0].1,
            pick(&PLACES, n + id.len() as u32)
        );
        // About 450 字: the seed caps a memory at 500.
        for k in 0..10u32 {
            m.push_str(&format!(
                "- 记忆事实〔{id}·{k}〕：{}曾在{}{}，此事只有{}知道，至今未向旁人提起。\n",
                cast[(k as usize) % cast.len()].1,
                pick(&PLACES, k + id.len() as u32),
                pick(&DEEDS, k),
                cast[(k as usize + 1) % cast.len()].1,
            ));
        }
        m.push_str(&format!("- 截至第 {n} 章。\n"));
        write(root, &layout::storyline_memory(id)?, &m)?;
    }
    Ok(())
}

/// Characters (L2) and their relationships; returns each character's memory, opened with its
/// profile record.
fn write_characters(root: &Path) -> Result<Memories, StoreError> {
    let mut relationships = Vec::new();
    let mut memories = Memories::new();
    for (line, cast) in CAST {
        for (i, (id, name, role)) in cast.iter().enumerate() {
            let c = json!({
                "id": id,
                "display_name": name,
                "aliases": [format!("小{}", name.chars().last().unwrap_or('某'))],
                "role": role,
                "contracts": [
                    {
                        "id": contract_id(id, 1), "type": "capability",
                        "rule": format!("{name}当前修为：筑基{}期，无法使用金丹期以上法术", pick(&["初", "中", "后"], i as u32)),
                        "valid_from_chapter": 1, "valid_until": null,
                        "update_requires": "大纲策划在大纲中标注突破事件"
                    },
                    {
                        "id": contract_id(id, 2), "type": "personality",
                        "rule": format!("{name}面对强敌时倾向智取而非硬碰，除非保护身边人"),
                        "exceptions": ["极度愤怒时可能失控（需要前文铺垫 ≥2 章）"]
                    }
                ],
                "personality": format!("{name}外冷内热，{}", pick(&["寡言", "多疑", "重诺", "好胜"], i as u32)),
                "background": format!("{name}出身{}，少年时{}。", pick(&PLACES, i as u32 + 3), pick(&DEEDS, i as u32)),
                "goal": format!("在{}一线中{}", line_name(line), pick(&["查清真相", "守住宗门", "夺回失物", "为师复仇"], i as u32)),
                "storyline": line,
            });
            write(
                root,
                &format!("characters/active/{id}.json"),
                &to_json_text(&c),
            )?;
            // `004`: every character's memory starts with its profile record.
            if let Ok(ch) = serde_json::from_value::<novel_core::model::Character>(c.clone()) {
                memories.insert(
                    id.to_string(),
                    vec![novel_core::revision::profile_entry(&ch, TS)],
                );
            }
            if i > 0 {
                relationships.push(json!({
                    "from": cast[0].0, "to": id, "type": "同伴", "intensity": 20 + i as i32 * 5,
                    "since_chapter": 1, "status": "active"
                }));
            }
        }
    }
    write(
        root,
        layout::RELATIONSHIPS,
        &to_json_text(&json!({ "relationships": relationships })),
    )?;
    Ok(memories)
}

/// The style profile, and an active style drift when asked (and `n` ≥ 5).
fn write_style(root: &Path, n: u32, style_drift: bool) -> Result<(), StoreError> {
    write(
        root,
        layout::STYLE_PROFILE,
        &to_json_text(&json!({
            "source_type": "original",
            "avg_sentence_length": 18,
            "dialogue_ratio": 0.4,
            "rhetoric_preferences": ["短句切换", "少用比喻"],
            "forbidden_words": ["莫名的", "不禁"],
            "character_speech_patterns": {"陆尘": "喜欢用反问句，口头禅「有意思」", "老墨": "文言腔，爱说「善」"},
            "writing_directives": ["偏短句，动作推进", "对话中多插一句生活化吐槽"]
        })),
    )?;
    if style_drift && n >= 5 {
        write(
            root,
            layout::STYLE_DRIFT,
            &to_json_text(&json!({
                "active": true,
                "detected_chapter": n,
                "window": [n - 4, n],
                "metrics": [{"name": "avg_sentence_length", "baseline": 18.0, "current": 24.0, "deviation": 0.333, "drifted": true}],
                "directives": ["句子偏长：多用短句，一句只写一个动作"]
            })),
        )?;
    }
    Ok(())
}

/// Volumes: schedule, foreshadowing plan, outline, contracts. The contracts follow the state
/// the deltas leave (each chapter moves its first cast member to the next place), so their
/// chain and their preconditions hold, as a planned book's would. Returns the whole plan.
fn write_volumes(
    root: &Path,
    l: &Layout,
    volumes: u32,
) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    let mut plan: Vec<PlannedForeshadowing> = Vec::new();
    let mut whereabouts: Whereabouts = std::collections::BTreeMap::new();
    for v in 1..=volumes {
        write_schedule(root, l, v)?;
        let vthreads = threads(l, v);
        plan.extend(write_volume_foreshadowing(root, l, v, &vthreads)?);
        write_outline_and_contracts(root, l, v, &vthreads, &mut whereabouts)?;
    }
    Ok(plan)
}

/// Where each character is (slug → place), as the chapters so far left them.
type Whereabouts = std::collections::BTreeMap<&'static str, &'static str>;

/// Volume `v`'s storyline schedule, with its convergence event when it has one.
fn write_schedule(root: &Path, l: &Layout, v: u32) -> Result<(), StoreError> {
    let s = l.volume_start(v);
    let end = s + l.per_volume - 1;
    let vdir = layout::volume_dir(v);
    let conv = l.convergence(v);
    let mut events = Vec::new();
    if let Some(r) = conv {
        events.push(json!({
            "chapter_range": r,
            "involved_storylines": ["main_arc", "jinghai_plan"],
            "trigger": "关键角色之死将主线与暗线强制交汇",
            "aftermath": "主线承受暗线余波"
        }));
    }
    write(
        root,
        &format!("{vdir}/storyline-schedule.json"),
        &to_json_text(&json!({
            "volume": v,
            "chapter_range": [s, end],
            "volume_theme": format!("第{v}卷·{}", pick(&["风起", "出海", "夺宝", "问道", "归来"], v)),
            "active_storylines": [
                {"storyline_id": "main_arc", "volume_role": "primary", "target_chapters": 30, "arc_goal": "陆尘在本卷突破境界"},
                {"storyline_id": "jinghai_plan", "volume_role": "secondary", "target_chapters": 10, "arc_goal": "靖海计划浮出水面"},
                {"storyline_id": "sect_rivalry", "volume_role": "seasoning", "target_chapters": 5, "arc_goal": "宗门内斗升级"}
            ],
            "interleaving_pattern": {"strategy": "primary_dominant", "primary_max_consecutive": 5},
            "convergence_events": events,
            "dormant_storylines": ["zhonggu_secret"],
            "newly_activated": []
        })),
    )?;
    Ok(())
}

/// Volume `v`'s foreshadowing plan; returns its threads.
fn write_volume_foreshadowing(
    root: &Path,
    l: &Layout,
    v: u32,
    vthreads: &[Thread],
) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    let vdir = layout::volume_dir(v);
    let planned: Vec<Value> = vthreads
        .iter()
        .map(|(id, scope, p, range, _)| {
            let mut t = json!({
                "id": id,
                "description": format!("{}留下的{}", pick(&PLACES, *p), pick(&["血书", "断剑", "玉佩", "密信", "铜镜", "骨笛"], *p)),
                "scope": scope,
                "plant_chapter": p,
                "advance_chapters": [p + 3],
                "storyline_id": l.line_of(*p),
            });
            if let Some(r) = range {
                t["target_resolve_range"] = json!(r);
            }
            t
        })
        .collect();
    let vf = json!({ "volume": v, "foreshadowing": planned });
    let planned = serde_json::from_value::<novel_core::model::VolumeForeshadowing>(vf.clone())
        .expect("synthetic plan is valid")
        .foreshadowing;
    write(
        root,
        &format!("{vdir}/foreshadowing.json"),
        &to_json_text(&vf),
    )?;
    Ok(planned)
}

/// Volume `v`'s outline (one strict-format block per chapter) and each chapter's contract;
/// moves each chapter's lead in `whereabouts`.
fn write_outline_and_contracts(
    root: &Path,
    l: &Layout,
    v: u32,
    vthreads: &[Thread],
    whereabouts: &mut Whereabouts,
) -> Result<(), StoreError> {
    let s = l.volume_start(v);
    let end = s + l.per_volume - 1;
    let vdir = layout::volume_dir(v);
    let conv = l.convergence(v);
    let mut outline = format!(
        "# 第 {v} 卷 · 合成卷\n\n本卷主题：陆尘离开青云镇，卷入东海与宗门的双重风波。他要在卷末之前突破境界，同时查清师门旧案与东海异动之间的关系；每一次进展都要付出代价，身边的人也各有盘算。\n\n本卷节奏：主线为主，暗线每五章穿插一次，宗门之争作点缀；第 {}–{} 章主线与靖海计划交汇，交汇前两条线各铺垫至少一次。卷中段安排一次失败，卷末前三章连续升级。\n\n卷末钩子：龙宫遗迹的潮水提前倒流，陆尘在潮水退去的海床上看见一座不该存在的城门。\n",
        conv.map_or(0, |r| r[0]),
        conv.map_or(0, |r| r[1])
    );
    for c in s..=end {
        outline.push_str(&outline_block(l, c, vthreads));
        write(
            root,
            &layout::chapter_contract_file(v, c),
            &to_json_text(&contract(l, c, vthreads, whereabouts)),
        )?;
        whereabouts.insert(l.cast_in(c)[0].0, pick(&PLACES, c + 1));
    }
    write(root, &format!("{vdir}/outline.md"), &outline)?;
    Ok(())
}

/// Chapter `c`'s block of the volume outline.
fn outline_block(l: &Layout, c: u32, vthreads: &[Thread]) -> String {
    let line = l.line_of(c);
    let cast = l.cast_in(c);
    format!(
        "\n## 第{c}章 {}\n- 故事线：{line}\n- POV：{}\n- 地点：{}\n- 冲突：{}与{}因{}起了冲突，双方都不肯先亮底牌，旁人被卷进来后局面更乱\n- 弧光：{}，在一次交锋后第一次承认自己看错了人\n- 伏笔：{}\n- 状态变化：{}前往{}\n### 场景提示\n开场用一个具体动作切入，不写环境铺陈；中段让冲突在对话里升级；结尾停在一个未说出口的决定上。\n",
        chapter_title(c),
        cast[0].1,
        pick(&PLACES, c),
        cast[0].1,
        cast[1].1,
        pick(&DEEDS, c),
        pick(&["由疑转信", "由怯转勇", "由冷转热"], c),
        vthreads
            .iter()
            .find(|t| t.2 == c)
            .map_or("无".to_string(), |t| format!("埋设 {}", t.0)),
        cast[0].1,
        pick(&PLACES, c + 1)
    )
}

/// Every delta of the book: the chapter-0 setup, then one per chapter `1..=n`.
fn chapter_deltas(l: &Layout, n: u32) -> Vec<Value> {
    let mut deltas = vec![initial_delta()];
    for c in 1..=n {
        deltas.push(chapter_delta(l, c));
    }
    deltas
}

/// The chapter-0 delta: the time marker and everyone at the first place.
fn initial_delta() -> Value {
    let mut initial_ops =
        vec![json!({"op": "set", "path": "world_state.time_marker", "value": "第一年春"})];
    for (_, cast) in CAST {
        for (id, _, _) in cast {
            initial_ops.push(json!({"op": "set", "path": format!("characters.{id}.location"), "value": FIRST_PLACE}));
        }
    }
    json!({"chapter": 0, "base_state_version": 0, "storyline_id": "main_arc", "ops": initial_ops})
}

/// How many chapters an event of `world_state.ongoing_events` goes on.
const EVENT_CHAPTERS: u32 = 20;

/// The event that begins in chapter `c`.
fn event(c: u32) -> String {
    format!("事件{c}：{}", pick(&DEEDS, c))
}

/// Chapter `c`'s delta: its leads move, feel, bond and carry things, the world moves on (an
/// event begins, the one of [`EVENT_CHAPTERS`] ago ends), and its threads are planted, advanced
/// or resolved.
fn chapter_delta(l: &Layout, c: u32) -> Value {
    let cast = l.cast_in(c);
    let (a, b, x) = (cast[0].0, cast[1].0, cast[cast.len() - 1].0);
    let mut ops = vec![
        json!({"op": "set", "path": format!("characters.{a}.location"), "value": pick(&PLACES, c + 1)}),
        json!({"op": "set", "path": format!("characters.{b}.emotional_state"), "value": pick(&MOODS, c)}),
        json!({"op": "inc", "path": format!("characters.{a}.relationships.{b}"), "value": 2}),
        json!({"op": "add", "path": format!("characters.{x}.inventory"), "value": format!("物品{c}")}),
        json!({"op": "set", "path": format!("items.item-{}.owner", c % 40), "value": a}),
        json!({"op": "set", "path": "world_state.time_marker", "value": format!("第{}年{}", c / 120 + 1, pick(&["春", "夏", "秋", "冬"], c / 30))}),
        json!({"op": "add", "path": "world_state.ongoing_events", "value": event(c)}),
    ];
    // An event is ongoing for a while, then over (the Summarizer removes what has ended): the
    // state holds what is current, not the whole book's history, which is the changelog's.
    if c > EVENT_CHAPTERS {
        ops.push(json!({"op": "remove", "path": "world_state.ongoing_events", "value": event(c - EVENT_CHAPTERS)}));
    }
    for v in 1..=l.volume_of(c) {
        for (id, _, p, _, resolved) in threads(l, v) {
            let status = if c == p {
                Some("planted")
            } else if c == p + 3 {
                Some("advanced")
            } else if Some(c) == resolved {
                Some("resolved")
            } else {
                None
            };
            if let Some(st) = status {
                ops.push(json!({"op": "foreshadow", "path": id, "value": st, "detail": format!("第{c}章")}));
            }
        }
    }
    // What the chapter's two leads did (the Summarizer's `character_actions`).
    let actions = json!([
        {"character": a, "scene": 1, "action": format!("第{c}章：{}", pick(&DEEDS, c))},
        {"character": b, "scene": 2, "action": format!("第{c}章：{}", pick(&DEEDS, c + 1))}
    ]);
    json!({"chapter": c, "base_state_version": c, "storyline_id": l.line_of(c), "ops": ops,
        "character_actions": actions})
}

/// Replays `deltas` through the state engine, as commits would: returns the changelog text,
/// the state and the global foreshadowing it leaves, and adds each delta's character actions
/// to `memories`.
fn replay_deltas(
    root: &Path,
    plan: &[PlannedForeshadowing],
    deltas: &[Value],
    memories: &mut Memories,
) -> Result<(String, Value, ForeshadowingGlobal), StoreError> {
    let names = NameIndex::default();
    let ctx = Context {
        names: &names,
        plan,
    };
    let mut state = CurrentState::initial_value();
    let mut global = ForeshadowingGlobal {
        foreshadowing: Vec::new(),
        extra: Default::default(),
    };
    let mut log = String::new();
    let last = deltas.len().saturating_sub(1);
    for (i, d) in deltas.iter().enumerate() {
        let mut applied =
            ops::apply_delta(&state, &global, d, ctx, true, TS).map_err(|e| StoreError::Model {
                path: root.to_path_buf(),
                what: "合成增量",
                message: e.to_string(),
            })?;
        if i == 0 {
            applied.entry.source = ChangeSource::Manual;
            applied.entry.note = Some("开书前的初始状态".into());
        }
        record_actions(memories, &applied.entry);
        if i == last {
            // As a commit leaves it: the last line names the bytes of the two files it wrote.
            applied.entry.written = Some(novel_core::model::WrittenDigests::of(
                &to_json_text(&applied.run.state),
                Some(&to_json_text(&applied.run.global)),
            ));
        }
        log.push_str(&serde_json::to_string(&applied.entry).expect("entries serialise"));
        log.push('\n');
        state = applied.run.state;
        global = applied.run.global;
    }
    Ok((log, state, global))
}

/// Adds the character actions a changelog line carries (`ops::record`) to their characters'
/// memories.
fn record_actions(memories: &mut Memories, entry: &novel_core::model::ChangelogEntry) {
    for a in crate::memory::actions_of_entry(entry) {
        if let Some(m) = memories.get_mut(&a.character) {
            m.push(novel_core::model::MemoryEntry {
                kind: novel_core::model::revision::MemoryKind::Action,
                character: a.character.clone(),
                chapter: entry.chapter,
                scene: a.scene,
                text: a.action.clone(),
                fields: Default::default(),
                recorded_at: Some(TS.to_string()),
                extra: Default::default(),
            });
        }
    }
}

/// Each character's memory file, one JSON line per record.
fn write_character_memories(root: &Path, memories: &Memories) -> Result<(), StoreError> {
    for (id, entries) in memories {
        let mut text = String::new();
        for e in entries {
            text.push_str(&serde_json::to_string(e).expect("entries serialise"));
            text.push('\n');
        }
        write(root, &layout::character_memory(id), &text)?;
    }
    Ok(())
}

/// Chapters `1..=n`: text, pipeline log and summary (and, with `history`, the evaluation).
fn write_chapters(
    root: &Path,
    l: &Layout,
    n: u32,
    chapter_chars: usize,
    history: bool,
) -> Result<(), StoreError> {
    for c in 1..=n {
        let mut body = body_text(c, chapter_chars);
        let mut log = pipeline_log(l, c, &body);
        if history {
            body = format!("{}\n\n{body}", cast_line(l, c));
            log = with_history(log, c, &body);
            write(
                root,
                &layout::evaluation_file(c),
                &to_json_text(&evaluation(c)),
            )?;
        }
        write(
            root,
            &layout::chapter_file(c),
            &format!("# 第{c}章 {}\n\n{body}\n", chapter_title(c)),
        )?;
        write(root, &layout::log_file(c), &to_json_text(&log))?;
        write(
            root,
            &layout::summary_file(c),
            &format!(
                "---\nchapter: {c}\nstoryline_id: {}\n---\n# 第{c}章摘要\n\n{}\n",
                l.line_of(c),
                summary_text(l, c)
            ),
        )?;
    }
    Ok(())
}

/// The checkpoint of a book whose chapter `n` was just committed.
fn write_checkpoint(root: &Path, n: u32, volumes: u32) -> Result<(), StoreError> {
    let checkpoint = json!({
        "last_completed_chapter": n,
        "current_volume": volumes,
        "orchestrator_state": "WRITING",
        "pipeline_stage": if n > 0 { json!("committed") } else { Value::Null },
        "inflight_chapter": null,
        "revision_count": 0,
        "pending_actions": [],
        "last_checkpoint_time": TS
    });
    write(root, layout::CHECKPOINT, &to_json_text(&checkpoint))?;
    Ok(())
}

/// The pipeline log a commit of chapter `c` would have left: four stages with their figures,
/// the gate's score, and the chapter's 字数 (the body is Han and CJK punctuation only, so its
/// platform count is its non-blank characters).
fn pipeline_log(l: &Layout, c: u32, body: &str) -> Value {
    let stage = |name: &str, model: &str, input: u64, output: u64, ms: u64, cost: f64| {
        json!({"name": name, "model": model, "input_tokens": input + u64::from(c % 13) * 100,
            "output_tokens": output, "duration_ms": ms, "at": TS, "cost_usd": cost})
    };
    let stages = vec![
        stage("drafted", "sonnet", 18_000, 4_600, 62_000, 0.12),
        stage("refined", "opus", 7_000, 4_500, 48_000, 0.41),
        stage("judged", "sonnet", 14_000, 900, 21_000, 0.06),
        stage("committed", "-", 0, 0, 300, 0.0),
    ];
    let revisions = u32::from(c.is_multiple_of(7));
    json!({
        "chapter": c,
        "storyline_id": l.line_of(c),
        "started_at": TS,
        "stages": stages,
        "gate_decision": "pass",
        "revisions": revisions,
        "force_passed": false,
        "total_duration_ms": 131_300,
        "total_cost_usd": 0.59,
        "gate_overall": 3.5 + f64::from((c * 37) % 15) / 10.0,
        "chars": body.chars().filter(|ch| !ch.is_whitespace()).count(),
    })
}

/// The opening paragraph naming chapter `c`'s cast on stage: the first of them `1 + c % 11`
/// times, the second `1 + c % 4` times, the others once.
fn cast_line(l: &Layout, c: u32) -> String {
    let mut out = String::new();
    for (k, (_, name)) in l.cast_in(c).iter().enumerate() {
        let times = match k {
            0 => 1 + c % 11,
            1 => 1 + c % 4,
            _ => 1,
        };
        for _ in 0..times {
            out.push_str(name);
            out.push_str("点了点头。");
        }
    }
    out
}

/// `2026-01-01` plus `days`.
fn date_after(days: u32) -> String {
    const MONTHS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let (mut y, mut m, mut d) = (2026u32, 0usize, days);
    loop {
        let leap = y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
        let len = MONTHS[m] + u32::from(m == 1 && leap);
        if d < len {
            return format!("{y:04}-{:02}-{:02}", m + 1, d + 1);
        }
        d -= len;
        m += 1;
        if m == 12 {
            m = 0;
            y += 1;
        }
    }
}

/// The eight scores of chapter `c`, each varying on its own rhythm between 3.0 and 4.9.
fn dimension_scores(c: u32) -> [f64; 8] {
    std::array::from_fn(|k| 3.0 + f64::from((c * (k as u32 + 3) * 7 + k as u32) % 20) / 10.0)
}

/// The evaluation QualityJudge would have written for chapter `c`.
fn evaluation(c: u32) -> Value {
    let scores = dimension_scores(c);
    let mut dims = serde_json::Map::new();
    let mut overall = 0.0;
    for (k, (name, weight)) in novel_core::model::evaluation::DIMENSIONS.iter().enumerate() {
        overall += scores[k] * weight;
        dims.insert(
            name.to_string(),
            json!({"score": scores[k], "weight": weight, "reason": "节奏稳定，冲突落地", "evidence": "他没有回答，只把剑往背上紧了紧。"}),
        );
    }
    json!({
        "chapter": c,
        "overall": (overall * 100.0).round() / 100.0,
        "recommendation": "pass",
        "contract_verification": {},
        "scores": dims,
        "violations": [],
        "risk_flags": [],
        "required_fixes": [],
        "issues": []
    })
}

/// The pipeline log of a book with a history: dated three chapters a day, the judge's usage as
/// one token total without a cost, the gate's score the evaluation's weighted mean, a
/// force-pass every 40 chapters, and the 字数 of the text with its cast line.
fn with_history(mut log: Value, c: u32, body: &str) -> Value {
    let at = format!(
        "{}T{:02}:00:00Z",
        date_after((c - 1) / 3),
        9 + (c - 1) % 3 * 4
    );
    log["started_at"] = json!(at);
    if let Some(stages) = log["stages"].as_array_mut() {
        for s in stages.iter_mut() {
            s["at"] = json!(at);
            if s["name"] == "judged" {
                *s = json!({"name": "judged", "model": "sonnet", "input_tokens": null,
                    "output_tokens": null, "tokens": 14_000 + (c % 9) * 500, "duration_ms": 21_000, "at": at});
            }
        }
    }
    let scores = dimension_scores(c);
    let overall: f64 = novel_core::model::evaluation::DIMENSIONS
        .iter()
        .zip(scores)
        .map(|((_, w), s)| w * s)
        .sum();
    log["gate_overall"] = json!((overall * 100.0).round() / 100.0);
    if c.is_multiple_of(40) {
        log["force_passed"] = json!(true);
        log["revisions"] = json!(2);
    }
    log["total_cost_usd"] = Value::Null;
    log["chars"] = json!(body.chars().filter(|ch| !ch.is_whitespace()).count());
    log
}

type Thread = (String, &'static str, u32, Option<[u32; 2]>, Option<u32>);

/// Where everyone starts (the chapter-0 delta).
const FIRST_PLACE: &str = "青云镇";

/// Chapter `c`'s contract; `whereabouts` holds each character's location before it.
fn contract(
    l: &Layout,
    c: u32,
    vthreads: &[Thread],
    whereabouts: &std::collections::BTreeMap<&str, &str>,
) -> Value {
    let line = l.line_of(c);
    let cast = l.cast_in(c);
    let states: serde_json::Map<String, Value> = cast
        .iter()
        .map(|(id, name)| {
            let at = whereabouts.get(id).copied().unwrap_or(FIRST_PLACE);
            (name.to_string(), json!({"location": at}))
        })
        .collect();
    let mut objectives = vec![json!({
        "id": format!("OBJ-{c:03}-1"), "type": "plot", "required": true,
        "description": format!("{}{}", cast[0].1, pick(&DEEDS, c + 5))
    })];
    let mut updates = serde_json::Map::new();
    for (id, _, p, _, _) in vthreads {
        if *p == c {
            objectives.push(json!({
                "id": format!("OBJ-{c:03}-2"), "type": "foreshadowing", "action": "plant",
                "target": id, "description": format!("埋下伏笔 {id}")
            }));
            updates.insert(id.clone(), json!("planted"));
        }
    }
    // The previous chapter on this line, and the concurrent one-liners of the other active lines.
    let prev = (1..c).rev().find(|p| l.line_of(*p) == line);
    let mut concurrent = serde_json::Map::new();
    for other in ["main_arc", "jinghai_plan", "sect_rivalry"] {
        if other != line
            && let Some(p) = (1..c).rev().find(|p| l.line_of(*p) == other)
        {
            concurrent.insert(
                other.to_string(),
                json!(format!(
                    "{}在{}（第{p}章）",
                    cast_of(other)[0].1,
                    pick(&PLACES, p + 1)
                )),
            );
        }
    }
    let mut ctx = json!({
        "line_arc_progress": format!("{}%", (c % 50) * 2),
        "concurrent_state": concurrent,
    });
    if let Some(p) = prev {
        ctx["last_chapter_on_this_line"] = json!(p);
        ctx["chapters_since_last"] = json!(c - p);
        ctx["last_chapter_summary"] = json!(summary_text(l, p));
    }
    let mut out = json!({
        "chapter": c,
        "storyline_id": line,
        "preconditions": {"character_states": states, "required_world_rules": ["W-001", format!("W-{:03}", c % 8 + 1)]},
        "objectives": objectives,
        "postconditions": {
            "state_changes": {cast[0].1: {"location": pick(&PLACES, c + 1)}},
            "foreshadowing_updates": updates
        },
        "acceptance_criteria": [
            format!("OBJ-{c:03}-1 在正文中明确体现"),
            "不违反 W-001".to_string(),
            format!("不违反 {}", contract_id(cast[0].0, 1)),
        ],
        "storyline_context": ctx,
    });
    let next_line = l.line_of(c + 1);
    if next_line != line {
        out["transition_hint"] = json!({
            "next_storyline": next_line,
            "bridge": format!("{}收到一封来自{}的信，自然切到{}", cast[0].1, pick(&PLACES, c), line_name(next_line))
        });
    }
    out
}
