//! Loading what the context packets and the SessionStart hook need.
//!
//! Files are parsed with serde straight into the model types — no JSON Schema is compiled on
//! this path (the hook must answer in milliseconds) — and a file that cannot be read or
//! parsed is reported as a warning and treated as absent, never as a failure: the packet says
//! what it could not use, and `novel validate` explains the file.
//!
//! Layer: views (the packets; reads only), above the derived facts (`volumes`, `judging`) and the
//! writers.

use std::collections::BTreeMap;

use novel_core::context::assemble::{Inputs, Needs, Paths, Summary};
use novel_core::context::rounds::{self, Pass};
use novel_core::context::session::SessionFacts;
use novel_core::context::text::summary_parts;
use novel_core::context::{Agent, lines, outline};
use novel_core::model::common::{ForeshadowScope, ForeshadowStatus};
use novel_core::model::{Checkpoint, ForeshadowingGlobal, Settings, StorylineSchedule, Storylines};
use novel_core::next::{self, DiskFacts, LockFact, Recommendation};
use serde::Deserialize;

use crate::chapter::{Facts, skipped_deltas, staging_facts};
use crate::error::StoreError;
use crate::io::read_text;
use crate::io::{json_opt, names_in, text_opt};
use crate::judging::evaluations_in;
use crate::layout;
use crate::lock::{self, LockState};
use crate::project::Project;

/// How far back to look for summaries on the chapter's storylines.
pub const SUMMARY_LOOKBACK: u32 = 60;

use crate::volumes::volume_of;

#[derive(Deserialize)]
struct LightOp {
    path: String,
}

#[derive(Deserialize)]
struct LightEntry {
    chapter: u32,
    #[serde(default)]
    applied: Vec<LightOp>,
}

/// Character slug → the last chapter whose changelog line changed it (`characters.<slug>.…`).
pub fn last_seen(project: &Project, warnings: &mut Vec<String>) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    let Some(text) = text_opt(project, layout::CHANGELOG, warnings) else {
        return out;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(e) = serde_json::from_str::<LightEntry>(line) else {
            continue;
        };
        for op in e.applied {
            if let Some(slug) = op
                .path
                .strip_prefix("characters.")
                .and_then(|r| r.split('.').next())
            {
                let seen = out.entry(slug.to_string()).or_insert(0);
                *seen = (*seen).max(e.chapter);
            }
        }
    }
    out
}

/// The summary of chapter `n`, if it exists.
fn summary(project: &Project, n: u32, warnings: &mut Vec<String>) -> Option<Summary> {
    let text = text_opt(project, &layout::summary_file(n), warnings)?;
    let p = summary_parts(&text);
    (!p.body.is_empty()).then_some(Summary {
        chapter: n,
        storyline: p.storyline,
        body: p.body,
    })
}

fn paths(chapter: u32, volume: u32) -> Paths {
    let vdir = layout::volume_dir(volume);
    Paths {
        outline: format!("{vdir}/outline.md"),
        contract: layout::chapter_contract_file(volume, chapter),
        staging_chapter: layout::staging_chapter(chapter),
        staging_summary: layout::staging_summary(chapter),
        staging_delta: layout::staging_delta(chapter),
        staging_evaluation: layout::staging_evaluation(chapter),
        staging_storylines: "staging/storylines".into(),
        volume_dir: vdir,
    }
}

/// The default chapter of a packet: the one in flight, else the next one.
pub fn default_chapter(cp: Option<&Checkpoint>) -> u32 {
    cp.map_or(1, Checkpoint::chapter_at_hand)
}

/// Loads everything `agent`'s packet for `chapter` (default: in flight, else next) in `volume`
/// (default: the volume whose schedule holds the chapter) draws on.
/// Fails only when `novel.json` does not load: budgets and thresholds never fall back to the
/// defaults silently.
pub fn load_inputs(
    project: &Project,
    agent: Agent,
    chapter: Option<u32>,
    volume: Option<u32>,
) -> Result<Inputs, StoreError> {
    let needs = agent.needs();
    let mut w = Vec::new();
    let settings = crate::settings::load(project)?;
    let checkpoint: Option<Checkpoint> = json_opt(project, layout::CHECKPOINT, &mut w);
    let chapter = chapter.unwrap_or_else(|| default_chapter(checkpoint.as_ref()));
    let volume = volume.unwrap_or_else(|| default_volume(project, agent, chapter, &checkpoint));
    let p = paths(chapter, volume);
    let mut i = Inputs {
        chapter,
        volume,
        volume_range: crate::volumes::volume_span(project, volume, &mut w).map(|s| s.range),
        settings,
        ..Inputs::default()
    };
    if needs.continuity {
        match crate::plan::continuity(project, crate::plan::Scope::Chapter(chapter)) {
            Ok(report) => i.continuity = report.findings,
            Err(e) => w.push(format!("第 {chapter} 章的衔接检查没有完成：{e}")),
        }
    }
    load_style_and_world(project, &needs, &mut i, &mut w);
    load_cast(project, &needs, &mut i, &mut w);
    load_plan(project, &needs, &p, &mut i, &mut w);
    if needs.summaries > 0 {
        let last = last_summarised(agent, chapter, checkpoint.as_ref());
        load_summaries(project, &needs, last, &mut i, &mut w);
    }
    let pass = rounds::pass_of(agent, checkpoint.as_ref(), chapter);
    let round = checkpoint.as_ref().map_or(0, |c| c.revision_count);
    if needs.chapter_text || pass == Pass::Revising {
        let revising = (pass == Pass::Revising).then_some(round);
        load_chapter_text(project, &p, revising, &mut i, &mut w);
    }
    load_round(project, pass, chapter, round, &mut i, &mut w);
    if (agent == Agent::QualityJudge || matches!(pass, Pass::Revising | Pass::Rewrite))
        && checkpoint
            .as_ref()
            .is_some_and(|c| c.inflight_chapter == Some(chapter))
    {
        i.previous_fixes = crate::judging::previous_fixes(project, chapter, round);
    }
    i.paths = p;
    i.checkpoint = checkpoint;
    if needs.author_memory {
        load_author_memory(project, &mut i, &mut w);
    }
    i.warnings = w;
    Ok(i)
}

/// The default volume of a packet: for a per-chapter agent the volume whose span holds the
/// chapter, else the checkpoint's current volume (1 without a checkpoint).
fn default_volume(
    project: &Project,
    agent: Agent,
    chapter: u32,
    checkpoint: &Option<Checkpoint>,
) -> u32 {
    let current_volume = checkpoint.as_ref().map_or(1, |c| c.volume());
    if agent.per_chapter() {
        volume_of(project, chapter, current_volume)
    } else {
        current_volume
    }
}

/// The brief, the style files, the world rules and documents, and the research file names.
fn load_style_and_world(project: &Project, needs: &Needs, i: &mut Inputs, w: &mut Vec<String>) {
    if needs.brief {
        i.brief = text_opt(project, layout::BRIEF, w);
    }
    if needs.style {
        i.style_profile = json_opt(project, layout::STYLE_PROFILE, w);
        i.blacklist = json_opt(project, layout::AI_BLACKLIST, w);
        i.style_drift = json_opt(project, layout::STYLE_DRIFT, w);
    }
    if needs.world_rules {
        i.world_rules = json_opt(project, layout::WORLD_RULES, w);
    }
    if needs.world_docs {
        for name in names_in(project, "world", ".md") {
            if let Some(t) = text_opt(project, &format!("world/{name}"), w) {
                i.world_docs.push((name, t));
            }
        }
    }
    if needs.research {
        i.research = names_in(project, "research", ".md");
    }
}

/// The active and retired characters, the relationships and each character's last chapter.
fn load_cast(project: &Project, needs: &Needs, i: &mut Inputs, w: &mut Vec<String>) {
    if needs.characters {
        for name in names_in(project, "characters/active", ".json") {
            if let Some(c) = json_opt(project, &format!("characters/active/{name}"), w) {
                i.characters.push(c);
            }
        }
    }
    if needs.retired {
        for name in names_in(project, "characters/retired", ".json") {
            if let Some(c) = json_opt(project, &format!("characters/retired/{name}"), w) {
                i.retired.push(c);
            }
        }
    }
    if needs.relationships {
        i.relationships = json_opt(project, layout::RELATIONSHIPS, w);
    }
    if needs.last_seen {
        i.last_seen = last_seen(project, w);
    }
}

/// The storylines (spec, schedule, memories), the volume outline and chapter contract, the
/// current state, the foreshadowing and the previous volume's review.
fn load_plan(project: &Project, needs: &Needs, p: &Paths, i: &mut Inputs, w: &mut Vec<String>) {
    if needs.storylines {
        i.storylines = json_opt::<Storylines>(project, layout::STORYLINES, w);
    }
    if needs.spec {
        i.storyline_spec = json_opt(project, layout::STORYLINE_SPEC, w);
    }
    if needs.schedule || needs.spec {
        let rel = format!("{}/storyline-schedule.json", p.volume_dir);
        i.schedule = json_opt::<StorylineSchedule>(project, &rel, w);
    }
    if needs.outline {
        match read_text(&project.path(&p.outline)) {
            Ok(t) => i.outline = Some(t),
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            }
            Err(e) => {
                let why = match e {
                    StoreError::NotUtf8 { .. } => "不是合法的 UTF-8 文本".to_string(),
                    other => other.to_string(),
                };
                w.push(format!("{}：{why}", p.outline));
                i.outline_unreadable = Some(why);
            }
        }
    }
    if needs.contract {
        i.contract = json_opt(project, &p.contract, w);
    }
    if needs.memories {
        load_memories(project, i, w);
    }
    if needs.state {
        i.current_state = json_opt(project, layout::CURRENT_STATE, w);
    }
    if needs.foreshadowing {
        i.foreshadowing = json_opt::<ForeshadowingGlobal>(project, layout::FORESHADOWING_GLOBAL, w);
        let rel = format!("{}/foreshadowing.json", p.volume_dir);
        i.volume_plan = json_opt(project, &rel, w);
    }
    if needs.prev_volume_review && i.volume > 1 {
        let rel = format!("{}/review.md", layout::volume_dir(i.volume - 1));
        i.prev_volume_review = text_opt(project, &rel, w);
    }
}

/// The memory file of each loaded storyline that has one.
fn load_memories(project: &Project, i: &mut Inputs, w: &mut Vec<String>) {
    let Some(sl) = &i.storylines else {
        return;
    };
    for l in &sl.storylines {
        if let Ok(rel) = layout::storyline_memory(&l.id)
            && let Some(m) = text_opt(project, &rel, w)
        {
            i.memories.insert(l.id.clone(), m);
        }
    }
}

/// The newest chapter whose summary a packet may use: the previous chapter for a per-chapter
/// agent, else the last completed one.
fn last_summarised(agent: Agent, chapter: u32, checkpoint: Option<&Checkpoint>) -> u32 {
    if agent.per_chapter() {
        chapter.saturating_sub(1)
    } else {
        checkpoint.map_or(chapter.saturating_sub(1), |c| c.last_completed_chapter)
    }
}

/// The storylines whose summaries the packet wants (empty = any line): the chapter's lines
/// when the agent asks for summaries on its lines. Needs the outline, contract, storylines and
/// schedule loaded.
fn summary_lines_wanted(needs: &Needs, i: &Inputs) -> Vec<String> {
    if !needs.summaries_on_line {
        return Vec::new();
    }
    let chapter = i.chapter;
    let block_line = i
        .outline
        .as_deref()
        .and_then(|t| outline::parse(t).ok())
        .and_then(|o| {
            o.block(chapter)
                .and_then(|b| b.storyline().map(str::to_string))
        });
    lines::plan(
        chapter,
        i.contract.as_ref(),
        block_line.as_deref(),
        i.storylines.as_ref(),
        i.schedule.as_ref(),
    )
    .summary_lines()
}

/// Up to `needs.summaries` summaries, newest first from chapter `last`, looking back at most
/// [`SUMMARY_LOOKBACK`] chapters, on the wanted storylines.
fn load_summaries(
    project: &Project,
    needs: &Needs,
    last: u32,
    i: &mut Inputs,
    w: &mut Vec<String>,
) {
    let wanted = summary_lines_wanted(needs, i);
    let mut n = last;
    while n >= 1 && n + SUMMARY_LOOKBACK > last && i.summaries.len() < needs.summaries {
        if let Some(s) = summary(project, n, w)
            && (wanted.is_empty() || s.storyline.as_ref().is_none_or(|l| wanted.contains(l)))
        {
            i.summaries.push(s);
        }
        n -= 1;
    }
}

/// The chapter's text: the staged draft, else the committed chapter. A revision (`revising`:
/// its round) reads the staged draft, else the text of the round sent back, which `stage
/// revising` moved to `logs/revisions/chapter-NNN/rK/` (ChapterWriter writes the revised text
/// as a new file). Every path tried is recorded.
fn load_chapter_text(
    project: &Project,
    p: &Paths,
    revising: Option<u32>,
    i: &mut Inputs,
    w: &mut Vec<String>,
) {
    let second = match revising {
        Some(round) => format!(
            "{}/{}.md",
            layout::revision_dir(i.chapter, round),
            layout::chapter_stem(i.chapter)
        ),
        None => layout::chapter_file(i.chapter),
    };
    for rel in [p.staging_chapter.clone(), second] {
        i.chapter_text_tried.push(rel.clone());
        if let Some(t) = text_opt(project, &rel, w).filter(|t| !t.trim().is_empty()) {
            i.chapter_text = Some((rel, t));
            break;
        }
    }
}

/// `004`: the author's preferences (empty, with a warning, when the store cannot be read) and
/// the memory of the characters the packet puts in play (a memory that cannot be read is left
/// out, with a warning). Needs the characters, the contract and `last_seen` loaded.
fn load_author_memory(project: &Project, i: &mut Inputs, w: &mut Vec<String>) {
    let prefs = crate::prefs::for_packet(project);
    i.user_preferences = prefs.text;
    w.extend(prefs.warning);
    for slug in novel_core::context::assemble::cast_ids(i) {
        match crate::memory::recent(project, &slug, novel_core::context::assemble::MEMORY_LAST) {
            Ok(entries) if !entries.is_empty() => {
                i.character_memory.insert(slug, entries);
            }
            Ok(_) => {}
            Err(e) => w.push(format!("角色 {slug} 的记忆读不了，本次不带（{e}）")),
        }
    }
}

/// The evaluations (and, for a rewrite, the archived draft's path) that a revision, rewrite or
/// polish refers back to. `stage revising|drafting` archived the round sent back to
/// `logs/revisions/chapter-NNN/rK/` (K = `revision_count`); a round not archived yet is read from
/// staging. A polish reads the current round's evaluations in staging; a local repair its
/// record and the judged text.
fn load_round(
    project: &Project,
    pass: Pass,
    chapter: u32,
    round: u32,
    i: &mut Inputs,
    w: &mut Vec<String>,
) {
    let staging = "staging/evaluations";
    match pass {
        Pass::Normal => {}
        Pass::Repair | Pass::RepairReview => {
            let repair = load_repair(project, chapter, round, i, w);
            i.repair = repair;
        }
        Pass::Polish => i.evaluations = evaluations_in(project, staging, chapter, w),
        Pass::Revising | Pass::Rewrite => {
            let dir = layout::revision_dir(chapter, round);
            i.evaluations = evaluations_in(project, &dir, chapter, w);
            if i.evaluations.is_empty() {
                i.evaluations = evaluations_in(project, staging, chapter, w);
            }
            let draft = layout::revision_text(chapter, round);
            if pass == Pass::Rewrite && project.path(&draft).is_file() {
                i.archived_draft = Some(draft);
            }
        }
    }
}

/// What a local repair's packets draw on: the round's record, the judged text, and the next
/// chapter's outline block (from the volume outline already loaded).
fn load_repair(
    project: &Project,
    chapter: u32,
    round: u32,
    i: &Inputs,
    w: &mut Vec<String>,
) -> Option<novel_core::context::assemble::RepairInputs> {
    let record = match crate::repair::record(project, chapter, round) {
        Ok(Some(r)) => r,
        Ok(None) => {
            w.push(format!("第 {chapter} 章第 {round} 轮没有局部修补记录"));
            return None;
        }
        Err(e) => {
            w.push(format!("局部修补记录读不了：{e}"));
            return None;
        }
    };
    let base = match crate::repair::base(project, &record) {
        Ok(t) => t,
        Err(e) => {
            w.push(format!("局部修补的原稿读不了：{e}"));
            return None;
        }
    };
    let next_outline = i
        .outline
        .as_deref()
        .and_then(|t| novel_core::context::outline::parse(t).ok())
        .and_then(|o| o.block(chapter + 1).map(|b| b.text.clone()));
    let prev_ending = (chapter > 1)
        .then(|| crate::io::read_text(&project.path(&layout::chapter_file(chapter - 1))).ok())
        .flatten()
        .and_then(|t| {
            let parts = [novel_core::model::RepairPart::Ending];
            novel_core::repair::windows(&t, &parts, &i.settings.craft)
                .pop()
                .map(|w| w.text)
        });
    Some(novel_core::context::assemble::RepairInputs {
        record,
        base,
        next_outline,
        prev_ending,
    })
}

// ---- SessionStart -------------------------------------------------------------------------

#[derive(Deserialize)]
struct LightThread {
    scope: ForeshadowScope,
    status: ForeshadowStatus,
    #[serde(default)]
    target_resolve_range: Option<[u32; 2]>,
}

#[derive(Deserialize)]
struct LightGlobal {
    #[serde(default)]
    foreshadowing: Vec<LightThread>,
}

#[derive(Deserialize)]
struct LightDrift {
    #[serde(default)]
    active: bool,
}

/// The lock as this process sees it (held by this session, by another, stale or free).
pub fn lock_fact(project: &Project, stale: std::time::Duration) -> LockFact {
    match lock::status(project, stale) {
        LockState::Free => LockFact::Free,
        LockState::Stale { why, .. } => LockFact::Stale { why },
        LockState::Held { info, .. } => {
            if lock::held_by_this_session(&info) {
                LockFact::HeldByThisSession {
                    chapter: info.chapter,
                    token: info.token,
                }
            } else {
                LockFact::HeldByOther {
                    chapter: info.chapter,
                    holder: lock::describe(&info),
                }
            }
        }
    }
}

/// Everything the SessionStart hook reports, read without schema checks.
pub fn session_facts(project: &Project, source: Option<String>) -> SessionFacts {
    let mut problems = Vec::new();
    // The hook never fails: settings that do not load are reported, and the defaults stand in.
    let settings = crate::settings::load(project).unwrap_or_else(|e| {
        problems.push(format!("{e}（{}）", e.hint()));
        Settings::default()
    });
    let (checkpoint, checkpoint_problem) = light_checkpoint(project);
    let mut disk = disk_facts(project, &settings, &mut problems);
    let mut facts = SessionFacts {
        title: settings.title,
        checkpoint: None,
        checkpoint_problem,
        disk: DiskFacts::quiet(),
        next_outline: None,
        outline_problem: None,
        summaries: Vec::new(),
        problems: Vec::new(),
        source,
    };
    if let Some(cp) = &checkpoint {
        checkpoint_facts(project, cp, &mut disk, &mut facts, &mut problems);
    }
    facts.checkpoint = checkpoint;
    facts.disk = disk;
    facts.problems = problems;
    facts
}

/// The checkpoint, or why it could not be used.
fn light_checkpoint(project: &Project) -> (Option<Checkpoint>, Option<String>) {
    match read_text(&project.path(layout::CHECKPOINT)) {
        Ok(t) => match serde_json::from_str::<Checkpoint>(&t) {
            Ok(cp) => (Some(cp), None),
            Err(e) => (None, Some(format!("格式不对（{e}）"))),
        },
        Err(e) => (None, Some(e.to_string())),
    }
}

/// The disk facts that do not depend on the checkpoint: the lock, an unfinished commit
/// journal, an active style drift and the skipped deltas.
fn disk_facts(project: &Project, settings: &Settings, problems: &mut Vec<String>) -> DiskFacts {
    let lock = lock_fact(project, settings.lock.stale_after());
    let commit_journal = project
        .path(layout::JOURNAL)
        .exists()
        .then(|| crate::chapter::journal_chapter(project).unwrap_or(0));
    DiskFacts {
        staging: None,
        lock,
        journal_live: commit_journal.is_some() && crate::lock::writer_running(project),
        commit_journal,
        overdue_foreshadowing: 0,
        style_drift_active: json_opt::<LightDrift>(project, layout::STYLE_DRIFT, problems)
            .is_some_and(|d| d.active),
        volume_end: None,
        skipped_deltas: skipped_deltas(project).unwrap_or_else(|e| {
            problems.push(e.to_string());
            Vec::new()
        }),
        reviews_due: Vec::new(),
        trial_next: None,
    }
}

/// The facts that follow from the checkpoint: the chapter in staging, overdue foreshadowing,
/// the current volume's end, the next chapter's outline line and the last three summaries.
fn checkpoint_facts(
    project: &Project,
    cp: &Checkpoint,
    disk: &mut DiskFacts,
    facts: &mut SessionFacts,
    problems: &mut Vec<String>,
) {
    let last = cp.last_completed_chapter;
    if let Some(n) = cp.inflight_chapter {
        disk.staging = Some(staging_facts(project, n, Facts::Light));
    }
    if let Some(g) = json_opt::<LightGlobal>(project, layout::FORESHADOWING_GLOBAL, problems) {
        disk.overdue_foreshadowing = g
            .foreshadowing
            .iter()
            .filter(|t| next::is_overdue(t.scope, t.status, t.target_resolve_range, last))
            .count();
    }
    if cp.orchestrator_state == novel_core::model::OrchestratorState::QuickStart
        && cp.inflight_chapter.is_none()
    {
        disk.trial_next = novel_core::quickstart::status(cp, &crate::quickstart::files(project))
            .next_step()
            .and_then(|s| s.trial_chapter());
    }
    let vdir = layout::volume_dir(cp.volume());
    disk.volume_end =
        crate::volumes::volume_span(project, cp.volume(), problems).map(|s| s.range[1]);
    disk.reviews_due = crate::periodic::reviews_due(project, cp);
    let upcoming = cp.inflight_chapter.unwrap_or(last + 1);
    if let Some(text) = text_opt(project, &format!("{vdir}/outline.md"), problems) {
        match outline::parse(&text) {
            Ok(o) => facts.next_outline = o.block(upcoming).map(outline_line),
            Err(e) => facts.outline_problem = Some(format!("{vdir}/outline.md：{e}")),
        }
    }
    for n in (1..=last).rev().take(3) {
        if let Some(s) = summary(project, n, problems) {
            facts.summaries.push((n, s.body));
        }
    }
}

/// One outline block as the hook shows it: `第N章 标题（故事线 X）`.
fn outline_line(b: &outline::ChapterBlock) -> String {
    let mut s = format!("第{}章", b.chapter);
    if let Some(t) = &b.title {
        s.push_str(&format!(" {t}"));
    }
    if let Some(l) = b.storyline() {
        s.push_str(&format!("（故事线 {l}）"));
    }
    s
}

/// The hook's answer: the facts, the recommendation and the text.
#[derive(Debug, Clone)]
pub struct SessionStart {
    pub facts: SessionFacts,
    pub recommendation: Option<Recommendation>,
    pub text: String,
}

/// Gathers the facts, decides the next step and renders the hook text.
pub fn session_start(project: &Project, source: Option<String>) -> SessionStart {
    let facts = session_facts(project, source);
    let recommendation = facts
        .checkpoint
        .as_ref()
        .map(|cp| next::recommend(cp, &facts.disk));
    let text = novel_core::context::session::render(&facts, recommendation.as_ref());
    SessionStart {
        facts,
        recommendation,
        text,
    }
}
