//! `novel volume check` (`docs/orchestration.md` §6): is a volume's plan complete and
//! consistent before the volume opens? Every chapter of the range has an outline block with
//! the §5.3 fields and an L3 contract; the schedule has at most four active storylines and its
//! convergence events fall inside the volume; the volume's foreshadowing is planted inside it;
//! every storyline, character, world rule and foreshadowing id the plan names exists. (The
//! contract chain is [`super::continuity`]'s, run over the same range by the store.)

use std::collections::BTreeMap;

use super::{LoadedContract, VolumeSpan, pointer, runs};
use crate::context::outline::{Outline, OutlineError};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::common::ForeshadowScope;
use crate::model::{StorylineSchedule, VolumeForeshadowing};
use crate::ops::NameIndex;

pub const RANGE_UNKNOWN: &str = "range_unknown";
pub const OUTLINE_MISSING: &str = "outline_missing";
pub const OUTLINE_FORMAT: &str = "outline_format";
pub const OUTLINE_BLOCK_MISSING: &str = "outline_block_missing";
pub const OUTLINE_FIELD_MISSING: &str = "outline_field_missing";
pub const CONTRACT_MISSING: &str = "contract_missing";
pub const OUTSIDE_RANGE: &str = "outside_range";
pub const SCHEDULE_MISSING: &str = "schedule_missing";
pub const TOO_MANY_STORYLINES: &str = "too_many_storylines";
pub const CONVERGENCE_OUTSIDE: &str = "convergence_outside";
pub const FORESHADOWING_OUTSIDE: &str = "foreshadowing_outside";
pub const UNKNOWN_REFERENCE: &str = "unknown_reference";
/// A file the check needs could not be read or parsed.
pub const UNREADABLE: &str = "unreadable";
/// A contract's payoff whose setup comes after its delivery, or that lies on the wrong side of
/// its own chapter.
pub const PAYOFF_ORDER: &str = "payoff_order";
/// A payoff set up (蓄压) for a later chapter that the volume does not deliver.
pub const PAYOFF_UNDELIVERED: &str = "payoff_undelivered";
/// Chapters in a row without a delivered payoff, in a genre that needs them.
pub const PAYOFF_GAP: &str = "payoff_gap";

/// PRD §6.6: at most four storylines active at once.
pub const MAX_ACTIVE_STORYLINES: usize = 4;

/// The §5.3 fields of an outline block: (name, the labels accepted for it).
pub use crate::context::outline::FIELDS as OUTLINE_FIELDS;

/// The volume outline as the store found it.
#[derive(Debug, Clone, Copy)]
pub enum OutlineInput<'a> {
    Missing,
    Broken(&'a OutlineError),
    Parsed(&'a Outline),
}

/// Everything the check reads. `None` for a list of known ids means its file could not be
/// read (the store reports that): references of that kind are then not checked.
pub struct VolumeInputs<'a> {
    pub volume: u32,
    pub span: Option<&'a VolumeSpan>,
    pub outline_file: &'a str,
    pub outline: OutlineInput<'a>,
    pub schedule_file: &'a str,
    pub schedule: Option<&'a StorylineSchedule>,
    pub plan_file: &'a str,
    pub plan: Option<&'a VolumeForeshadowing>,
    /// The volume's contracts (others are ignored), by chapter.
    pub contracts: &'a BTreeMap<u32, LoadedContract>,
    /// Where chapter N's contract belongs (`volumes/vol-NN/chapter-contracts/chapter-NNN.json`).
    pub contract_file: &'a dyn Fn(u32) -> String,
    pub storyline_ids: Option<&'a [String]>,
    pub names: &'a NameIndex,
    pub world_rule_ids: Option<&'a [String]>,
    /// Foreshadowing ids of `foreshadowing/global.json` and every volume plan.
    pub foreshadowing_ids: Option<&'a [String]>,
    /// The project's genre (`novel.json`) and brief (its `题材预设` line): their preset
    /// ([`crate::genre::preset_for_book`]) says how long readers wait for a payoff.
    pub genre: Option<&'a str>,
    pub brief: Option<&'a str>,
}

/// Runs the volume's own rules.
pub fn check(i: &VolumeInputs<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(span) = i.span else {
        out.push(Diagnostic::new(
            RANGE_UNKNOWN,
            Severity::Error,
            i.outline_file,
            format!("不知道第 {} 卷从哪一章到哪一章：调度没有 chapter_range，大纲没有章节，也没有章节契约", i.volume),
            "让大纲策划写本卷大纲（## 第N章 标题）与 storyline-schedule.json 的 chapter_range，或在 novel.json 设 chapters_per_volume",
        ));
        return out;
    };
    outline_rules(i, span, &mut out);
    contract_rules(i, span, &mut out);
    schedule_rules(i, span, &mut out);
    plan_rules(i, span, &mut out);
    payoff_rules(i, span, &mut out);
    crate::diagnostic::sort_by_chapter(&mut out);
    out
}

fn in_range(span: &VolumeSpan, c: u32) -> bool {
    span.range[0] <= c && c <= span.range[1]
}

fn outline_rules(i: &VolumeInputs<'_>, span: &VolumeSpan, out: &mut Vec<Diagnostic>) {
    let outline = match i.outline {
        OutlineInput::Missing => {
            out.push(Diagnostic::new(
                OUTLINE_MISSING,
                Severity::Error,
                i.outline_file,
                format!("第 {} 卷还没有大纲", i.volume),
                "让大纲策划按卷规划写出本卷大纲（每章一节：## 第N章 标题）",
            ));
            return;
        }
        OutlineInput::Broken(e) => {
            let line = match e {
                OutlineError::Heading { line, .. } | OutlineError::Duplicate { line, .. } => *line,
            };
            out.push(
                Diagnostic::new(
                    OUTLINE_FORMAT,
                    Severity::Error,
                    i.outline_file,
                    e.to_string(),
                    format!(
                        "章节标题写成「{}」（二级标题、阿拉伯数字），每章只出现一次",
                        crate::context::outline::HEADING_FORMAT
                    ),
                )
                .at_line(line),
            );
            return;
        }
        OutlineInput::Parsed(o) => o,
    };
    for c in span.range[0]..=span.range[1] {
        outline_block_rules(i, span, outline, c, out);
    }
    outline_outside(i, span, outline, out);
}

/// Chapter `c`'s block: present, with its fields, on a known storyline.
fn outline_block_rules(
    i: &VolumeInputs<'_>,
    span: &VolumeSpan,
    outline: &Outline,
    c: u32,
    out: &mut Vec<Diagnostic>,
) {
    let Some(block) = outline.block(c) else {
        out.push(
            Diagnostic::new(
                OUTLINE_BLOCK_MISSING,
                Severity::Error,
                i.outline_file,
                format!(
                    "大纲里没有第 {c} 章（本卷为第 {}–{} 章）",
                    span.range[0], span.range[1]
                ),
                format!("补上「## 第{c}章 标题」一节及其字段"),
            )
            .for_chapter(c),
        );
        return;
    };
    let missing: Vec<&str> = OUTLINE_FIELDS
        .iter()
        .filter(|(name, _)| block.named(name).is_none_or(|f| f.value.trim().is_empty()))
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        // Say what was there but could not be read, with its line: the author's label may
        // be a field we do not know by that name.
        let unread: Vec<String> = block
            .unread
            .iter()
            .take(5)
            .map(|(line, text)| format!("第 {line} 行「{text}」"))
            .collect();
        let message = if unread.is_empty() {
            format!("第 {c} 章的大纲缺少字段：{}", missing.join("、"))
        } else {
            format!(
                "第 {c} 章的大纲缺少字段：{}（读不出字段名的行：{}）",
                missing.join("、"),
                unread.join("、")
            )
        };
        out.push(
            Diagnostic::new(
                OUTLINE_FIELD_MISSING,
                Severity::Error,
                i.outline_file,
                message,
                "每章写全 - 故事线：/ - POV：/ - 地点：/ - 冲突：/ - 弧光：/ - 伏笔：/ - 状态变化：（没有就写「无」；冒号全角半角都行，也认 Storyline、Location、StateChanges 等英文名）",
            )
            .at_line(block.line)
            .for_chapter(c),
        );
    }
    if let (Some(known), Some(field)) = (i.storyline_ids, block.named("故事线")) {
        let id = field.value.split_whitespace().next().unwrap_or("");
        if !id.is_empty() && !known.iter().any(|k| k == id) {
            out.push(
                unknown(
                    i.outline_file,
                    "",
                    format!("第 {c} 章大纲的故事线「{id}」"),
                    "storylines/storylines.json",
                    known,
                )
                .at_line(field.line)
                .for_chapter(c),
            );
        }
    }
}

/// Outline blocks outside the volume's range.
fn outline_outside(
    i: &VolumeInputs<'_>,
    span: &VolumeSpan,
    outline: &Outline,
    out: &mut Vec<Diagnostic>,
) {
    let outside: Vec<u32> = outline
        .chapters
        .iter()
        .map(|b| b.chapter)
        .filter(|c| !in_range(span, *c))
        .collect();
    if !outside.is_empty() {
        out.push(Diagnostic::new(
            OUTSIDE_RANGE,
            Severity::Warning,
            i.outline_file,
            format!(
                "大纲里有本卷范围（第 {}–{} 章，取自 {}）之外的章节：第 {} 章",
                span.range[0],
                span.range[1],
                span.range_source,
                runs(&outside)
            ),
            "把这些章移到所属卷的大纲，或改正本卷的 chapter_range",
        ));
    }
}

/// 爽点 as data: each payoff in order (setup ≤ its chapter ≤ delivery), each setup delivered
/// inside the volume by a contract that declares the delivery, and — in a genre that needs
/// them, once the volume plans payoffs at all — no run of
/// [`crate::genre::GenrePreset::payoff_gap`] chapters without a delivery.
fn payoff_rules(i: &VolumeInputs<'_>, span: &VolumeSpan, out: &mut Vec<Diagnostic>) {
    let ptr = pointer(&["payoff"]);
    let mut delivered: Vec<u32> = Vec::new();
    for lc in i.contracts.values().filter(|lc| in_range(span, lc.chapter)) {
        let (c, file) = (lc.chapter, lc.file.as_str());
        let Some(p) = &lc.contract.payoff else {
            continue;
        };
        let d = p.delivered_in(c);
        let setup = p.setup_chapter.unwrap_or(c.min(d));
        if setup > c || d < c {
            out.push(
                Diagnostic::new(
                    PAYOFF_ORDER,
                    Severity::Error,
                    file,
                    format!(
                        "第 {c} 章的爽点「{}」蓄压在第 {setup} 章、兑现在第 {d} 章：本章不在这段之间",
                        p.kind
                    ),
                    "setup_chapter ≤ 本章 ≤ delivery_chapter：本章兑现就不写 delivery_chapter，本章只蓄压就写将来兑现的那一章",
                )
                .at_pointer(ptr.clone())
                .for_chapter(c),
            );
            continue;
        }
        if d == c {
            delivered.push(c);
            continue;
        }
        let delivery = i.contracts.get(&d).and_then(|k| k.contract.payoff.as_ref());
        let why = if d > span.range[1] {
            Some(format!(
                "在本卷（第 {}–{} 章）之外",
                span.range[0], span.range[1]
            ))
        } else if delivery.is_none_or(|k| k.delivered_in(d) != d) {
            Some(format!(
                "第 {d} 章的契约没有写这次兑现（payoff 缺 delivery）"
            ))
        } else {
            None
        };
        if let Some(why) = why {
            out.push(
                Diagnostic::new(
                    PAYOFF_UNDELIVERED,
                    Severity::Warning,
                    file,
                    format!(
                        "第 {c} 章为第 {d} 章的爽点「{}」蓄压，{why}：读者等来的可能是落空",
                        p.kind
                    ),
                    format!(
                        "在第 {d} 章契约写 payoff（type、setup_chapter: {setup}、delivery），或把兑现挪进本卷"
                    ),
                )
                .at_pointer(ptr.clone())
                .for_chapter(c),
            );
        }
    }
    payoff_gaps(i, span, &delivered, out);
}

/// No run of the genre's [`crate::genre::GenrePreset::payoff_gap`] chapters without a delivery
/// (`delivered`: the chapters that deliver one) — once the volume plans payoffs at all: a volume
/// planned without them (before the field existed, or by hand) is not held to a rhythm it never
/// declared.
fn payoff_gaps(
    i: &VolumeInputs<'_>,
    span: &VolumeSpan,
    delivered: &[u32],
    out: &mut Vec<Diagnostic>,
) {
    let planned = i
        .contracts
        .values()
        .any(|lc| in_range(span, lc.chapter) && lc.contract.payoff.is_some());
    let g = crate::genre::preset_for_book(i.brief, i.genre);
    let Some(gap) = g.payoff_gap.filter(|_| planned) else {
        return;
    };
    let preset = g.name;
    let mut run_start = span.range[0];
    for c in span.range[0]..=span.range[1] + 1 {
        if c <= span.range[1] && !delivered.contains(&c) {
            continue;
        }
        let len = c - run_start;
        if len >= gap {
            let last = c - 1;
            out.push(
                Diagnostic::new(
                    PAYOFF_GAP,
                    Severity::Warning,
                    (i.contract_file)(run_start),
                    format!(
                        "第 {run_start}–{last} 章连续 {len} 章的契约没有兑现爽点：{preset}读者最多等 {gap} 章"
                    ),
                    "在其中挑章节写 payoff（type、setup_chapter、delivery）；爽点类型见题材预设（novel context chapter-writer 的 <payoff> 段）",
                )
                .at_pointer("")
                .for_chapter(run_start),
            );
        }
        run_start = c + 1;
    }
}

fn unknown(
    file: &str,
    ptr: impl Into<String>,
    what: String,
    where_known: &str,
    known: &[String],
) -> Diagnostic {
    let listed: Vec<&str> = known.iter().take(12).map(String::as_str).collect();
    Diagnostic::new(
        UNKNOWN_REFERENCE,
        Severity::Error,
        file,
        format!("{what}不存在（{where_known} 里没有）"),
        if listed.is_empty() {
            format!("先在 {where_known} 中登记")
        } else {
            format!(
                "可用的有：{}；或先在 {where_known} 中登记",
                listed.join("、")
            )
        },
    )
    .at_pointer(ptr)
}

fn contract_rules(i: &VolumeInputs<'_>, span: &VolumeSpan, out: &mut Vec<Diagnostic>) {
    for c in span.range[0]..=span.range[1] {
        if !i.contracts.contains_key(&c) {
            out.push(
                Diagnostic::new(
                    CONTRACT_MISSING,
                    Severity::Error,
                    (i.contract_file)(c),
                    format!("第 {c} 章没有 L3 章节契约"),
                    "让大纲策划从大纲派生本章契约（前置条件、目标、后置条件、验收标准）",
                )
                .at_pointer("")
                .for_chapter(c),
            );
        }
    }
    let outside: Vec<u32> = i
        .contracts
        .keys()
        .copied()
        .filter(|c| !in_range(span, *c) && (i.contract_file)(*c) == i.contracts[c].file)
        .collect();
    if !outside.is_empty() {
        out.push(
            Diagnostic::new(
                OUTSIDE_RANGE,
                Severity::Warning,
                (i.contract_file)(outside[0]),
                format!(
                    "本卷目录里有范围（第 {}–{} 章）之外的章节契约：第 {} 章",
                    span.range[0],
                    span.range[1],
                    runs(&outside)
                ),
                "把这些契约移到所属卷的 chapter-contracts/，或改正本卷的 chapter_range",
            )
            .at_pointer(""),
        );
    }
    for lc in i.contracts.values().filter(|lc| in_range(span, lc.chapter)) {
        contract_references(i, lc, out);
    }
}

fn contract_references(i: &VolumeInputs<'_>, lc: &LoadedContract, out: &mut Vec<Diagnostic>) {
    let (c, file, k) = (lc.chapter, lc.file.as_str(), &lc.contract);
    if let Some(known) = i.storyline_ids {
        let lines = k
            .storyline_id
            .iter()
            .map(|id| (id, pointer(&["storyline_id"])))
            .chain(k.transition_hint.iter().flat_map(|t| {
                t.next_storyline
                    .iter()
                    .map(|id| (id, pointer(&["transition_hint", "next_storyline"])))
            }));
        for (id, ptr) in lines {
            if !known.contains(id) {
                out.push(
                    unknown(
                        file,
                        ptr,
                        format!("故事线「{id}」"),
                        "storylines/storylines.json",
                        known,
                    )
                    .for_chapter(c),
                );
            }
        }
    }
    if let Some(known) = i.world_rule_ids {
        for (j, id) in k.preconditions.required_world_rules.iter().enumerate() {
            if !known.contains(id) {
                out.push(
                    unknown(
                        file,
                        format!("/preconditions/required_world_rules/{j}"),
                        format!("世界规则「{id}」"),
                        "world/rules.json",
                        known,
                    )
                    .for_chapter(c),
                );
            }
        }
    }
    people_references(i, lc, out);
    foreshadowing_references(i, lc, out);
}

/// Characters the contract names by display name, alias or slug.
fn people_references(i: &VolumeInputs<'_>, lc: &LoadedContract, out: &mut Vec<Diagnostic>) {
    let (c, file, k) = (lc.chapter, lc.file.as_str(), &lc.contract);
    let people = k
        .preconditions
        .character_states
        .keys()
        .map(|n| (n, pointer(&["preconditions", "character_states", n])))
        .chain(
            k.postconditions
                .state_changes
                .keys()
                .map(|n| (n, pointer(&["postconditions", "state_changes", n]))),
        );
    for (name, ptr) in people {
        let known = i.names.slug_for(name.trim()).is_some()
            || i.names.pairs().any(|(_, slug)| slug == name);
        if !known {
            let cast: Vec<String> = i.names.pairs().map(|(n, _)| n.to_string()).collect();
            out.push(
                unknown(file, ptr, format!("角色「{name}」"), "characters/", &cast).for_chapter(c),
            );
        }
    }
}

/// Foreshadowing ids of the contract's objectives and postconditions.
fn foreshadowing_references(i: &VolumeInputs<'_>, lc: &LoadedContract, out: &mut Vec<Diagnostic>) {
    let (c, file, k) = (lc.chapter, lc.file.as_str(), &lc.contract);
    if let Some(known) = i.foreshadowing_ids {
        let targets = k
            .objectives
            .iter()
            .enumerate()
            .filter(|(_, o)| o.action.is_some() || o.kind == "foreshadowing")
            .filter_map(|(j, o)| {
                o.target
                    .as_ref()
                    .map(|t| (t, format!("/objectives/{j}/target")))
            })
            .chain(k.postconditions.foreshadowing_updates.keys().map(|id| {
                (
                    id,
                    pointer(&["postconditions", "foreshadowing_updates", id]),
                )
            }));
        for (id, ptr) in targets {
            if !known.contains(id) {
                out.push(
                    unknown(
                        file,
                        ptr,
                        format!("伏笔「{id}」"),
                        "本卷 foreshadowing.json 与 foreshadowing/global.json",
                        known,
                    )
                    .for_chapter(c),
                );
            }
        }
    }
}

fn schedule_rules(i: &VolumeInputs<'_>, span: &VolumeSpan, out: &mut Vec<Diagnostic>) {
    let Some(s) = i.schedule else {
        out.push(
            Diagnostic::new(
                SCHEDULE_MISSING,
                Severity::Warning,
                i.schedule_file,
                format!("第 {} 卷没有故事线调度", i.volume),
                "多线叙事时让大纲策划写 storyline-schedule.json（活跃线、交汇事件、休眠线）",
            )
            .at_pointer(""),
        );
        return;
    };
    if s.active_storylines.len() > MAX_ACTIVE_STORYLINES {
        let ids: Vec<&str> = s
            .active_storylines
            .iter()
            .map(|a| a.storyline_id.as_str())
            .collect();
        out.push(
            Diagnostic::new(
                TOO_MANY_STORYLINES,
                Severity::Error,
                i.schedule_file,
                format!(
                    "本卷同时活跃 {} 条故事线（{}），超过上限 {MAX_ACTIVE_STORYLINES} 条",
                    ids.len(),
                    ids.join("、")
                ),
                "把次要的线放进 dormant_storylines，或并入其他线（同时活跃的故事线不超过 4 条）",
            )
            .at_pointer("/active_storylines"),
        );
    }
    for (j, e) in s.convergence_events.iter().enumerate() {
        let [a, b] = e.chapter_range;
        if !(in_range(span, a) && in_range(span, b)) {
            out.push(
                Diagnostic::new(
                    CONVERGENCE_OUTSIDE,
                    Severity::Error,
                    i.schedule_file,
                    format!(
                        "交汇事件（{}）在第 {a}–{b} 章，不在本卷第 {}–{} 章之内",
                        e.involved_storylines.join("、"),
                        span.range[0],
                        span.range[1]
                    ),
                    "把交汇事件移到本卷范围内，或放进它所在那一卷的调度",
                )
                .at_pointer(format!("/convergence_events/{j}/chapter_range")),
            );
        }
    }
    schedule_references(i, s, out);
}

/// Storyline ids the schedule names.
fn schedule_references(i: &VolumeInputs<'_>, s: &StorylineSchedule, out: &mut Vec<Diagnostic>) {
    let Some(known) = i.storyline_ids else {
        return;
    };
    let mut refs: Vec<(&String, String)> = Vec::new();
    for (j, a) in s.active_storylines.iter().enumerate() {
        refs.push((
            &a.storyline_id,
            format!("/active_storylines/{j}/storyline_id"),
        ));
    }
    for (j, e) in s.convergence_events.iter().enumerate() {
        for (k, id) in e.involved_storylines.iter().enumerate() {
            refs.push((
                id,
                format!("/convergence_events/{j}/involved_storylines/{k}"),
            ));
        }
    }
    for (j, id) in s.dormant_storylines.iter().enumerate() {
        refs.push((id, format!("/dormant_storylines/{j}")));
    }
    for (j, id) in s.newly_activated.iter().enumerate() {
        refs.push((id, format!("/newly_activated/{j}")));
    }
    for (id, ptr) in refs {
        if !known.contains(id) {
            out.push(unknown(
                i.schedule_file,
                ptr,
                format!("故事线「{id}」"),
                "storylines/storylines.json",
                known,
            ));
        }
    }
}

fn plan_rules(i: &VolumeInputs<'_>, span: &VolumeSpan, out: &mut Vec<Diagnostic>) {
    let Some(plan) = i.plan else {
        return;
    };
    for (j, t) in plan.foreshadowing.iter().enumerate() {
        if let Some(p) = t.plant_chapter
            && !t.carried_over
            && !in_range(span, p)
        {
            out.push(Diagnostic::new(
                FORESHADOWING_OUTSIDE,
                Severity::Error,
                i.plan_file,
                format!(
                    "伏笔「{}」计划在第 {p} 章埋设，不在本卷第 {}–{} 章之内",
                    t.id, span.range[0], span.range[1]
                ),
                "改到本卷范围内的章节，或放进所属卷的 foreshadowing.json（跨卷延续的标 carried_over: true）",
            ).at_pointer(format!("/foreshadowing/{j}/plant_chapter")));
        }
        if t.scope == ForeshadowScope::Short
            && let Some([_, end]) = t.target_resolve_range
            && end > span.range[1]
        {
            out.push(
                Diagnostic::new(
                    FORESHADOWING_OUTSIDE,
                    Severity::Warning,
                    i.plan_file,
                    format!(
                        "短线伏笔「{}」计划到第 {end} 章才回收，超出本卷（到第 {} 章）",
                        t.id, span.range[1]
                    ),
                    "短线伏笔一般在本卷内回收；跨卷的请改为 medium",
                )
                .at_pointer(format!("/foreshadowing/{j}/target_resolve_range")),
            );
        }
        if let (Some(known), Some(line)) = (i.storyline_ids, &t.storyline_id)
            && !known.contains(line)
        {
            out.push(unknown(
                i.plan_file,
                format!("/foreshadowing/{j}/storyline_id"),
                format!("伏笔「{}」的故事线「{line}」", t.id),
                "storylines/storylines.json",
                known,
            ));
        }
    }
}
