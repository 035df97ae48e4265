//! Loading what the plan checks read (`docs/orchestration.md` §6–§7): the contracts of a chapter
//! or a volume (and the ones just before them), the changelog replayed to each chapter, the
//! character names, the retired characters, and for `volume check` the outline, schedule,
//! foreshadowing plan and the ids a plan may name. The rules are `novel_core::plan`'s.
//!
//! Files are parsed with serde, no JSON Schema is compiled (the continuity check of a volume
//! runs in milliseconds on a long book). A plan file that cannot be read or parsed is a finding
//! (`unreadable`); the changelog and the checkpoint are the only files whose failure stops the
//! check.
//!
//! Layer: facts — checks of the plan (reads only), above the derived facts (`volumes`) it asks.

use std::collections::BTreeMap;
use std::fs;

use novel_core::context::outline;
use novel_core::diagnostic::{Counts, Diagnostic, Severity, counts};
use novel_core::model::contract::{Postconditions, Preconditions};
use novel_core::model::state::{ChangeSource, OpKind, StateOp};
use novel_core::model::{
    ChangelogEntry, ChapterContract, Checkpoint, ForeshadowingGlobal, StorylineSchedule,
    Storylines, VolumeForeshadowing, WorldRules,
};
use novel_core::ops::{self, Context, NameIndex, OpsError};
use novel_core::plan::continuity::{self, ContinuityInputs, Retired};
use novel_core::plan::volume::{self as vcheck, OutlineInput, UNREADABLE, VolumeInputs};
use novel_core::plan::{LoadedContract, VolumeSpan};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;
use crate::volumes::volume_numbers;
use crate::volumes::{contract_chapters, volume_span};

/// Why a plan check could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Replay(#[from] OpsError),
}

impl PlanError {
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::Store(e) => e.code(),
            PlanError::Replay(e) => e.code(),
        }
    }

    pub fn hint(&self) -> String {
        match self {
            PlanError::Store(e) => e.hint(),
            PlanError::Replay(e) => e.hint(),
        }
    }
}

/// What to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One chapter's contract.
    Chapter(u32),
    /// Every chapter of a volume's span (and any contract file of the volume outside it).
    Volume(u32),
    /// The chapters `[first, last]` (the periodic reviews).
    Chapters([u32; 2]),
}

impl Scope {
    /// What `check continuity` checks by default: the volume of the chapter to be written next.
    pub fn next_volume(project: &Project) -> Result<Scope, StoreError> {
        let cp = light_checkpoint(project)?;
        Ok(Scope::Volume(crate::volumes::volume_of(
            project,
            cp.next_chapter(),
            cp.volume(),
        )))
    }
}

/// What `check continuity` checked, and what it found (the `--json` `data`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContinuityReport {
    /// `chapter` | `volume` | `chapters`.
    pub scope: &'static str,
    pub chapter: Option<u32>,
    pub volume: Option<u32>,
    /// The chapters considered, `[first, last]`.
    pub range: Option<[u32; 2]>,
    /// Where a volume's range came from (`schedule` | `outline` | `contracts` | `settings`).
    pub range_source: Option<&'static str>,
    pub last_completed_chapter: u32,
    /// Chapters that have a contract (the others have nothing to check).
    pub contracts_checked: Vec<u32>,
    pub findings: Vec<Diagnostic>,
    pub counts: Counts,
}

/// A file parsed with serde: `Ok(None)` when absent; `Err(message)` when unreadable or not `T`.
fn load<T: DeserializeOwned>(project: &Project, rel: &str) -> Result<Option<T>, String> {
    match read_text(&project.path(rel)) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| format!("无法解析：{e}")),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

fn unreadable(file: &str, why: String) -> Diagnostic {
    Diagnostic::new(
        UNREADABLE,
        Severity::Error,
        file,
        format!("{file} 读不了或格式不对（{why}），其中的内容没有检查"),
        format!("运行 novel validate {file} 查看具体问题并修正"),
    )
    .at_pointer("")
}

/// The checkpoint, parsed with serde (the hook path's reading: no schema).
pub fn light_checkpoint(project: &Project) -> Result<Checkpoint, StoreError> {
    crate::io::read_json(&project.path(layout::CHECKPOINT), "断点文件")
}

/// Every contract file of the project: chapter → project-relative path, preferring the file in
/// volume `prefer` when two volumes hold one (the one in the lower volume otherwise).
fn contract_index(project: &Project, prefer: Option<u32>) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    let mut vols = volume_numbers(project);
    if let Some(p) = prefer {
        vols.retain(|v| *v != p);
        vols.insert(0, p);
    }
    for v in vols {
        for c in contract_chapters(project, v) {
            out.entry(c)
                .or_insert_with(|| layout::chapter_contract_file(v, c));
        }
    }
    out
}

/// The two parts of a contract continuity reads; the rest of the file is skipped unparsed (a
/// long book's volume of contracts parses in a fraction of the time). `volume check` parses
/// whole contracts.
#[derive(Deserialize)]
struct ContinuityPart {
    #[serde(default)]
    preconditions: CharacterStates,
    #[serde(default)]
    postconditions: StateChanges,
}

#[derive(Deserialize, Default)]
struct CharacterStates {
    #[serde(default)]
    character_states: serde_json::Map<String, Value>,
}

#[derive(Deserialize, Default)]
struct StateChanges {
    #[serde(default)]
    state_changes: serde_json::Map<String, Value>,
}

impl ContinuityPart {
    /// A contract holding only these parts (what the continuity rules read).
    fn into_contract(self, chapter: u32) -> ChapterContract {
        ChapterContract {
            chapter,
            storyline_id: None,
            preconditions: Preconditions {
                character_states: self.preconditions.character_states,
                ..Preconditions::default()
            },
            objectives: Vec::new(),
            postconditions: Postconditions {
                state_changes: self.postconditions.state_changes,
                ..Postconditions::default()
            },
            acceptance_criteria: Vec::new(),
            storyline_context: None,
            transition_hint: None,
            payoff: None,
            extra: Default::default(),
        }
    }
}

/// How much of a contract to parse.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    Whole,
    ContinuityPart,
}

/// Loads the contracts of `chapters` from the index; unreadable ones become findings.
fn load_contracts(
    project: &Project,
    index: &BTreeMap<u32, String>,
    chapters: impl IntoIterator<Item = u32>,
    parse: Parse,
    findings: &mut Vec<Diagnostic>,
) -> BTreeMap<u32, LoadedContract> {
    let mut out = BTreeMap::new();
    for c in chapters {
        let Some(file) = index.get(&c) else {
            continue;
        };
        let loaded = match parse {
            Parse::Whole => load::<ChapterContract>(project, file),
            Parse::ContinuityPart => {
                load::<ContinuityPart>(project, file).map(|p| p.map(|p| p.into_contract(c)))
            }
        };
        match loaded {
            Ok(Some(contract)) => {
                out.insert(
                    c,
                    LoadedContract {
                        chapter: c,
                        file: file.clone(),
                        contract,
                    },
                );
            }
            Ok(None) => {}
            Err(why) => findings.push(unreadable(file, why).for_chapter(c)),
        }
    }
    out
}

/// A changelog line as continuity replays it: what [`ops::states_before`] reads, the rest of
/// the line skipped unparsed (a long book's changelog reads several times faster than with the
/// full model, whose unknown-key bags cost a second pass per op).
#[derive(Deserialize)]
struct ReplayLine {
    chapter: u32,
    source: ChangeSource,
    #[serde(default)]
    storyline_id: Option<String>,
    base_state_version: u64,
    state_version: u64,
    #[serde(default)]
    applied: Vec<ReplayOp>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    cleanup_volume: Option<u32>,
}

#[derive(Deserialize)]
struct ReplayOp {
    op: OpKind,
    path: String,
    value: Value,
    #[serde(default)]
    detail: Option<String>,
}

impl ReplayLine {
    fn into_entry(self) -> ChangelogEntry {
        ChangelogEntry {
            chapter: self.chapter,
            source: self.source,
            storyline_id: self.storyline_id,
            base_state_version: self.base_state_version,
            state_version: self.state_version,
            timestamp: String::new(),
            applied: self
                .applied
                .into_iter()
                .map(|o| StateOp {
                    op: o.op,
                    path: o.path,
                    value: o.value,
                    detail: o.detail,
                    extra: Default::default(),
                })
                .collect(),
            rejected: Vec::new(),
            note: self.note,
            resolves_skipped: Vec::new(),
            cleanup_volume: self.cleanup_volume,
            written: None,
            extra: Default::default(),
        }
    }
}

/// The changelog for replay ([`ReplayLine`]); when a line does not read this way the whole
/// file goes through [`crate::state::load_changelog`], which says precisely what is wrong.
fn replay_log(project: &Project) -> Result<Vec<ChangelogEntry>, StoreError> {
    let text = match read_text(&project.path(layout::CHANGELOG)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<ReplayLine>(line) {
            Ok(l) => out.push(l.into_entry()),
            Err(_) => return crate::state::load_changelog(project),
        }
    }
    Ok(out)
}

/// Retired characters by slug: their file, and the chapter their retirement line takes effect
/// from (else the chapter after the last completed one).
fn retired(project: &Project, log: &[ChangelogEntry], last: u32) -> BTreeMap<String, Retired> {
    let mut out = BTreeMap::new();
    let Ok(names) = crate::io::dir_names(&project.path("characters/retired")) else {
        return out;
    };
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let slug = name.trim_end_matches(".json").to_string();
        let from_chapter = log
            .iter()
            .filter(|e| e.source == ChangeSource::Retire)
            .find(|e| {
                e.applied
                    .iter()
                    .any(|op| op.path == format!("characters.{slug}"))
                    || e.note
                        .as_deref()
                        .is_some_and(|n| n.contains(&format!("（{slug}）")))
            })
            .map_or(last + 1, |e| e.chapter);
        out.insert(
            slug,
            Retired {
                file: format!("characters/retired/{name}"),
                from_chapter,
            },
        );
    }
    out
}

/// The chapters a scope covers, its range and where a volume's range came from.
fn chapters_of(
    project: &Project,
    scope: Scope,
) -> (Vec<u32>, Option<[u32; 2]>, Option<&'static str>) {
    match scope {
        Scope::Chapter(n) => (vec![n], Some([n, n]), None),
        Scope::Chapters([a, b]) => ((a..=b).collect(), Some([a, b]), None),
        Scope::Volume(v) => {
            let span = volume_span(project, v, &mut Vec::new());
            let mut chapters: Vec<u32> = span
                .as_ref()
                .map_or_else(Vec::new, |s| (s.range[0]..=s.range[1]).collect());
            chapters.extend(contract_chapters(project, v));
            chapters.sort_unstable();
            chapters.dedup();
            let range = span
                .as_ref()
                .map(|s| s.range)
                .or_else(|| novel_core::plan::span_of(chapters.iter().copied()));
            (chapters, range, span.map(|s| s.range_source))
        }
    }
}

/// `{"characters": {slug: …}}` with the state entries of the characters `contract` names.
fn named_characters(state: &Value, contract: Option<&LoadedContract>, names: &NameIndex) -> Value {
    let mut kept = serde_json::Map::new();
    let all = state.get("characters").and_then(Value::as_object);
    if let (Some(all), Some(lc)) = (all, contract) {
        let k = &lc.contract;
        let named = k
            .preconditions
            .character_states
            .keys()
            .chain(k.postconditions.state_changes.keys());
        for name in named {
            let slug = names.slug_for(name.trim()).unwrap_or(name.as_str());
            if let Some(v) = all.get(slug) {
                kept.insert(slug.to_string(), v.clone());
            }
        }
    }
    serde_json::json!({ "characters": kept })
}

/// Runs the continuity rules over `scope` (`novel check continuity`).
pub fn continuity(project: &Project, scope: Scope) -> Result<ContinuityReport, PlanError> {
    let cp = light_checkpoint(project)?;
    let last = cp.last_completed_chapter;
    let (chapters, range, range_source) = chapters_of(project, scope);
    let mut findings = Vec::new();
    let contracts = continuity_contracts(project, scope, &chapters, &mut findings);
    let log = replay_log(project)?;
    let names = crate::state::load_names(project);
    let states = named_states(&log, &chapters, last, &contracts, &names)?;
    // The state file only matters for chapters past the replayed ones.
    let current_state: Option<Value> = if chapters.iter().any(|c| *c > last + 1) {
        load(project, layout::CURRENT_STATE).ok().flatten()
    } else {
        None
    };
    let retired = retired(project, &log, last);
    findings.extend(continuity::check(&ContinuityInputs {
        contracts: &contracts,
        chapters: &chapters,
        names: &names,
        retired: &retired,
        states: &states,
        current_state: current_state.as_ref(),
        changelog: &log,
        last_completed: last,
    }));
    novel_core::diagnostic::sort_by_chapter(&mut findings);
    let (chapter, volume) = match scope {
        Scope::Chapter(n) => (Some(n), None),
        Scope::Volume(v) => (None, Some(v)),
        Scope::Chapters(_) => (None, None),
    };
    Ok(ContinuityReport {
        scope: match scope {
            Scope::Chapter(_) => "chapter",
            Scope::Volume(_) => "volume",
            Scope::Chapters(_) => "chapters",
        },
        chapter,
        volume,
        range,
        range_source,
        last_completed_chapter: last,
        contracts_checked: chapters
            .iter()
            .copied()
            .filter(|c| contracts.contains_key(c))
            .collect(),
        counts: counts(&findings),
        findings,
    })
}

/// The continuity part of the contracts of `chapters` and of the chapter before each, the
/// volume's own files first when the scope is a volume.
fn continuity_contracts(
    project: &Project,
    scope: Scope,
    chapters: &[u32],
    findings: &mut Vec<Diagnostic>,
) -> BTreeMap<u32, LoadedContract> {
    let prefer = match scope {
        Scope::Volume(v) => Some(v),
        _ => None,
    };
    let index = contract_index(project, prefer);
    let wanted = chapters
        .iter()
        .flat_map(|c| [c.saturating_sub(1), *c])
        .filter(|c| *c > 0);
    load_contracts(project, &index, wanted, Parse::ContinuityPart, findings)
}

/// The state before each chapter of `chapters` that has a contract and is at most one past
/// the last completed one, replayed from the changelog; only the characters its contract
/// names are kept.
fn named_states(
    log: &[ChangelogEntry],
    chapters: &[u32],
    last: u32,
    contracts: &BTreeMap<u32, LoadedContract>,
    names: &NameIndex,
) -> Result<BTreeMap<u32, Value>, OpsError> {
    let replay_to: Vec<u32> = chapters
        .iter()
        .copied()
        .filter(|c| *c <= last + 1 && contracts.contains_key(c))
        .collect();
    ops::states_before(log, &replay_to, Context { names, plan: &[] }, |c, state| {
        named_characters(state, contracts.get(&c), names)
    })
}

/// What `volume check` found (the `--json` `data`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeCheckReport {
    pub volume: u32,
    pub range: Option<[u32; 2]>,
    pub range_source: Option<&'static str>,
    /// Chapters in the range.
    pub chapters: usize,
    pub contracts: usize,
    /// Outline blocks in the range.
    pub outline_blocks: usize,
    pub findings: Vec<Diagnostic>,
    pub counts: Counts,
}

impl VolumeCheckReport {
    pub fn has_errors(&self) -> bool {
        self.counts.error > 0
    }
}

/// Ids a plan may name: storylines, world rules, foreshadowing (global and every volume plan).
struct KnownIds {
    storylines: Option<Vec<String>>,
    rules: Option<Vec<String>>,
    foreshadowing: Option<Vec<String>>,
}

fn known_ids(project: &Project, findings: &mut Vec<Diagnostic>) -> KnownIds {
    let mut ids_of = |rel: &str, r: Result<Option<Vec<String>>, String>| match r {
        Ok(ids) => Some(ids.unwrap_or_default()),
        Err(why) => {
            findings.push(unreadable(rel, why));
            None
        }
    };
    let storylines = ids_of(
        layout::STORYLINES,
        load::<Storylines>(project, layout::STORYLINES)
            .map(|s| s.map(|s| s.storylines.into_iter().map(|l| l.id).collect())),
    );
    let rules = ids_of(
        layout::WORLD_RULES,
        load::<WorldRules>(project, layout::WORLD_RULES)
            .map(|r| r.map(|r| r.rules.into_iter().map(|r| r.id).collect())),
    );
    let mut foreshadowing = ids_of(
        layout::FORESHADOWING_GLOBAL,
        load::<ForeshadowingGlobal>(project, layout::FORESHADOWING_GLOBAL)
            .map(|g| g.map(|g| g.foreshadowing.into_iter().map(|t| t.id).collect())),
    );
    for v in volume_numbers(project) {
        let rel = format!("{}/foreshadowing.json", layout::volume_dir(v));
        match load::<VolumeForeshadowing>(project, &rel) {
            Ok(Some(p)) => {
                if let Some(ids) = foreshadowing.as_mut() {
                    ids.extend(p.foreshadowing.into_iter().map(|t| t.id));
                }
            }
            Ok(None) => {}
            // An unreadable plan is reported by its own volume's check; its ids are unknown,
            // so foreshadowing references are not checked.
            Err(_) => foreshadowing = None,
        }
    }
    KnownIds {
        storylines,
        rules,
        foreshadowing,
    }
}

/// `novel volume check V`: the volume's own rules and continuity over its range.
pub fn volume_check(project: &Project, v: u32) -> Result<VolumeCheckReport, PlanError> {
    let vdir = layout::volume_dir(v);
    let mut findings = Vec::new();
    let mut span_problems = Vec::new();
    let span: Option<VolumeSpan> = volume_span(project, v, &mut span_problems);
    let outline_file = format!("{vdir}/outline.md");
    let outline_text = read_outline(project, &outline_file, &mut findings);
    let parsed = outline_text.as_deref().map(outline::parse);
    let outline = match &parsed {
        None => OutlineInput::Missing,
        Some(Ok(o)) => OutlineInput::Parsed(o),
        Some(Err(e)) => OutlineInput::Broken(e),
    };
    let schedule_file = format!("{vdir}/storyline-schedule.json");
    let schedule = load_or_report::<StorylineSchedule>(project, &schedule_file, &mut findings);
    let plan_file = format!("{vdir}/foreshadowing.json");
    let plan = load_or_report::<VolumeForeshadowing>(project, &plan_file, &mut findings);
    let own: Vec<u32> = contract_chapters(project, v);
    let index: BTreeMap<u32, String> = own
        .iter()
        .map(|c| (*c, layout::chapter_contract_file(v, *c)))
        .collect();
    let contracts = load_contracts(
        project,
        &index,
        own.iter().copied(),
        Parse::Whole,
        &mut findings,
    );
    let ids = known_ids(project, &mut findings);
    let names: NameIndex = crate::state::load_names(project);
    let contract_file = |c: u32| layout::chapter_contract_file(v, c);
    let settings_genre = crate::settings::load(project).ok().and_then(|s| s.genre);
    let brief = crate::io::read_text(&project.path(layout::BRIEF)).ok();
    findings.extend(vcheck::check(&VolumeInputs {
        volume: v,
        span: span.as_ref(),
        outline_file: &outline_file,
        outline,
        schedule_file: &schedule_file,
        schedule: schedule.as_ref(),
        plan_file: &plan_file,
        plan: plan.as_ref(),
        contracts: &contracts,
        contract_file: &contract_file,
        storyline_ids: ids.storylines.as_deref(),
        names: &names,
        world_rule_ids: ids.rules.as_deref(),
        foreshadowing_ids: ids.foreshadowing.as_deref(),
        genre: settings_genre.as_deref(),
        brief: brief.as_deref(),
    }));
    if span.is_some() {
        add_new(
            &mut findings,
            continuity(project, Scope::Volume(v))?.findings,
        );
    }
    novel_core::diagnostic::sort_by_chapter(&mut findings);
    let range = span.as_ref().map(|s| s.range);
    let in_range = |c: &u32| range.is_some_and(|[a, b]| a <= *c && *c <= b);
    Ok(VolumeCheckReport {
        volume: v,
        range,
        range_source: span.as_ref().map(|s| s.range_source),
        chapters: range.map_or(0, |[a, b]| (b - a + 1) as usize),
        contracts: own.iter().filter(|c| in_range(c)).count(),
        outline_blocks: match &parsed {
            Some(Ok(o)) => o.chapters.iter().filter(|b| in_range(&b.chapter)).count(),
            _ => 0,
        },
        counts: counts(&findings),
        findings,
    })
}

/// The volume outline's text: `None` when absent; a finding when unreadable.
fn read_outline(project: &Project, rel: &str, findings: &mut Vec<Diagnostic>) -> Option<String> {
    match read_text(&project.path(rel)) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            findings.push(unreadable(rel, e.to_string()));
            None
        }
    }
}

/// A plan file: `None` when absent; a finding when it cannot be read or parsed.
fn load_or_report<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    findings: &mut Vec<Diagnostic>,
) -> Option<T> {
    load::<T>(project, rel).unwrap_or_else(|why| {
        findings.push(unreadable(rel, why));
        None
    })
}

/// Appends each of `more` not already in `findings`.
fn add_new(findings: &mut Vec<Diagnostic>, more: Vec<Diagnostic>) {
    for f in more {
        if !findings.contains(&f) {
            findings.push(f);
        }
    }
}

/// `chapter begin`'s look at the chapter's plan: the volume's outline, when there is one,
/// reads (UTF-8, every heading, no chapter twice) and gives the chapter a block with content;
/// the chapter's contract, when there is one, passes the checks `novel validate` runs on it
/// alone (JSON, schema, its chapter number). The first problem, with its file and line, as the
/// refusal — an agent handed a broken plan writes a broken chapter.
pub fn check_chapter_plan(
    project: &Project,
    n: u32,
    current_volume: u32,
) -> Result<(), novel_core::pipeline::StageRefusal> {
    let v = crate::volumes::volume_of(project, n, current_volume.max(1));
    let outline_rel = format!("{}/outline.md", layout::volume_dir(v));
    let contract_rel = layout::chapter_contract_file(v, n);
    let refuse = |what: String| {
        novel_core::pipeline::StageRefusal {
        code: "E_CHAPTER_PLAN",
        reason: format!("第 {n} 章的计划有问题，不能开始：{what}"),
        hint: "先把这一处改好（/novel:start → 调整大纲，或让 PlotArchitect 重写这一章的契约），novel validate 列出全部问题；改好后再 chapter begin".into(),
    }
    };
    for rel in [&outline_rel, &contract_rel] {
        if fs::symlink_metadata(project.path(rel)).is_err() {
            continue;
        }
        if let Some(f) = crate::load::check_file_alone(project, rel).first() {
            let first = f.render();
            return Err(refuse(first.lines().next().unwrap_or_default().to_string()));
        }
    }
    let Ok(text) = read_text(&project.path(&outline_rel)) else {
        return Ok(());
    };
    let Ok(parsed) = outline::parse(&text) else {
        return Ok(());
    };
    // A chapter past the outline's last is writing past the plan (allowed, as before); one
    // the outline plans around without a block is a hole.
    let last = parsed.chapters.iter().map(|b| b.chapter).max();
    match parsed.block(n) {
        None if last.is_some_and(|last| n <= last) => Err(refuse(format!(
            "{outline_rel} 里没有第 {n} 章（大纲里有：{}）",
            parsed.ranges()
        ))),
        Some(b) if b.fields.is_empty() && b.text.lines().skip(1).all(|l| l.trim().is_empty()) => {
            Err(refuse(format!(
                "{outline_rel} 第 {} 行：第 {n} 章的大纲块只有标题，没有内容",
                b.line
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthOptions, synth_project};

    #[test]
    fn the_replay_reading_of_the_changelog_rebuilds_what_the_full_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let r = synth_project(
            &dir.path().join("book"),
            &SynthOptions {
                chapters: 12,
                ..SynthOptions::default()
            },
        )
        .unwrap();
        let project = Project { root: r.root };
        let full = crate::state::load_changelog(&project).unwrap();
        let light = replay_log(&project).unwrap();
        let names = NameIndex::default();
        let ctx = Context {
            names: &names,
            plan: &[],
        };
        let keep = |_: u32, s: &Value| s.clone();
        assert_eq!(
            ops::states_before(&full, &[5, 13], ctx, keep).unwrap(),
            ops::states_before(&light, &[5, 13], ctx, keep).unwrap()
        );
        // A line the replay reading cannot take is reported as load_changelog reports it.
        let path = project.path(layout::CHANGELOG);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"chapter\": \"x\"}\n");
        std::fs::write(&path, text).unwrap();
        let e = replay_log(&project).unwrap_err().to_string();
        assert!(e.contains("第 14 行"), "{e}");
    }
}
