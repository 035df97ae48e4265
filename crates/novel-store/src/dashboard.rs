//! `novel dashboard`: everything the book's dashboard draws, read from the project files and
//! never guessed — per committed chapter its 字数, gate figures and per-dimension scores, its
//! storyline, the date it was written and what each pipeline stage cost; the storylines with
//! their schedules, the foreshadowing threads, the cast with retirements, and the style
//! baseline. The chapter texts are the caller's to analyse (lint density, style windows,
//! presence), so this crate stays free of text analysis.
//!
//! Tolerant like `status`: a file that cannot be read or parsed is a note of the section it
//! feeds (`Notes`), and the rest still renders. Deterministic: every list is sorted, nothing
//! depends on the clock or the order of a directory listing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use novel_core::cost::{self, Model};
use novel_core::model::common::{ForeshadowScope, ForeshadowStatus, GateDecision};
use novel_core::model::storyline::StorylineStatus;
use novel_core::model::style::StyleProfile;
use novel_core::model::{
    Character, Checkpoint, Evaluation, ForeshadowingGlobal, PipelineLog, Settings,
    StorylineSchedule, Storylines,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::volume_numbers;
use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::next::volume_span;
use crate::project::Project;

/// The sections of the dashboard, in page order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    Progress,
    Quality,
    Storylines,
    Foreshadowing,
    Characters,
    Cost,
    Style,
}

impl Section {
    pub const ALL: [Section; 7] = [
        Section::Progress,
        Section::Quality,
        Section::Storylines,
        Section::Foreshadowing,
        Section::Characters,
        Section::Cost,
        Section::Style,
    ];

    /// The section's id (`progress` …): its anchor in the page and its key in `--json`.
    pub fn id(self) -> &'static str {
        match self {
            Section::Progress => "progress",
            Section::Quality => "quality",
            Section::Storylines => "storylines",
            Section::Foreshadowing => "foreshadowing",
            Section::Characters => "characters",
            Section::Cost => "cost",
            Section::Style => "style",
        }
    }
}

/// What could not be read, by the section it affects (Chinese, each once, in the order found).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Notes(pub BTreeMap<Section, Vec<String>>);

impl Notes {
    pub fn push(&mut self, s: Section, note: String) {
        let v = self.0.entry(s).or_default();
        if !v.contains(&note) {
            v.push(note);
        }
    }

    pub fn of(&self, s: Section) -> &[String] {
        self.0.get(&s).map_or(&[], Vec::as_slice)
    }
}

/// Whether a chapter's pipeline log could be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogState {
    Read,
    Missing,
    Unreadable,
}

/// One pipeline stage's usage and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct StageCost {
    /// `drafted`, `refined`, `judged`, `polished` …
    pub stage: String,
    /// Input and output tokens, as logged or split from the one total ([`cost::split_total`]).
    pub input: u64,
    pub output: u64,
    /// The cost in US dollars: as logged (`cost_usd`), else estimated from the tokens.
    pub usd: Option<f64>,
    /// `usd` (or the input/output split) is an estimate, not a logged figure.
    pub estimated: bool,
}

/// One committed chapter.
#[derive(Debug, Clone, PartialEq)]
pub struct ChapterRow {
    pub chapter: u32,
    pub volume: u32,
    pub chars: Option<u64>,
    /// `YYYY-MM-DD` of the last dated line of its pipeline log.
    pub date: Option<String>,
    /// The score the gate counted (the log's `gate_overall`, else the evaluation's weighted mean).
    pub score: Option<f64>,
    /// The evaluation's eight scores in the order of `DIMENSIONS`.
    pub dimensions: Option<[f64; 8]>,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
    pub storyline: Option<String>,
    pub stages: Vec<StageCost>,
    pub log: LogState,
}

impl ChapterRow {
    /// The chapter's cost: the stages' sum, `None` when no stage has a cost.
    pub fn usd(&self) -> Option<f64> {
        let known: Vec<f64> = self.stages.iter().filter_map(|s| s.usd).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    }

    pub fn tokens(&self) -> u64 {
        self.stages.iter().map(|s| s.input + s.output).sum()
    }
}

/// A volume's chapter range.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeRange {
    pub volume: u32,
    pub range: [u32; 2],
    /// Storylines the volume's schedule lists as active (the ≤ 4 rule counts these).
    pub active: Vec<String>,
    pub dormant: Vec<String>,
}

/// A storyline lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    pub id: String,
    pub name: String,
    pub status: StorylineStatus,
}

/// A convergence event of a schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Convergence {
    pub range: [u32; 2],
    pub storylines: Vec<String>,
}

/// One foreshadowing thread on the chapter axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub id: String,
    pub description: String,
    pub scope: ForeshadowScope,
    pub status: ForeshadowStatus,
    pub planted: Option<u32>,
    pub resolved: Option<u32>,
    pub target: Option<[u32; 2]>,
    pub overdue: bool,
}

/// A character of the cast.
#[derive(Debug, Clone, PartialEq)]
pub struct CastMember {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub role: Option<String>,
    pub retired: bool,
    /// The chapter of its retirement (the changelog's `retire` line), when known.
    pub retired_at: Option<u32>,
}

/// The style baseline (`style-profile.json`) and the drift thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct StyleBase {
    pub avg_sentence_length: Option<f64>,
    pub dialogue_ratio: Option<f64>,
    pub sentence_threshold: f64,
    pub dialogue_threshold: f64,
    pub window: u32,
}

/// Everything the dashboard draws, except what comes from the chapter texts.
#[derive(Debug, Clone, PartialEq)]
pub struct DashboardData {
    pub title: Option<String>,
    pub last_completed: u32,
    pub current_volume: Option<u32>,
    pub chapters: Vec<ChapterRow>,
    pub volumes: Vec<VolumeRange>,
    pub length_target: [u32; 2],
    pub gate_pass: f64,
    pub lint_limit: f64,
    pub lanes: Vec<Lane>,
    pub convergences: Vec<Convergence>,
    pub threads: Vec<Thread>,
    pub cast: Vec<CastMember>,
    pub style: StyleBase,
    pub notes: Notes,
}

/// How many unreadable files of one kind a section names one by one (the summary note that
/// follows lists all their chapters).
const MAX_FILE_NOTES: usize = 5;

/// A file: `None` when absent; a note when unreadable or not `T`.
fn load<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    section: Section,
    notes: &mut Notes,
) -> Result<Option<T>, ()> {
    let text = match read_text(&project.path(rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => {
            notes.push(section, format!("{rel} 无法读取：{e}"));
            return Err(());
        }
    };
    match serde_json::from_str(&text) {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            notes.push(section, format!("{rel} 无法解析：{e}"));
            Err(())
        }
    }
}

/// "第 3、5、7 章" with at most eight numbers shown.
pub fn chapter_list(ns: &[u32]) -> String {
    let shown: Vec<String> = ns.iter().take(8).map(u32::to_string).collect();
    if ns.len() > 8 {
        format!("第 {} 等 {} 章", shown.join("、"), ns.len())
    } else {
        format!("第 {} 章", shown.join("、"))
    }
}

/// Committed chapters (`chapters/chapter-NNN.md`), sorted.
fn committed(project: &Project) -> Vec<u32> {
    crate::status::committed_chapters(project)
}

/// The date part of an ISO timestamp (`2026-01-05T…` → `2026-01-05`).
fn date_of(ts: &str) -> Option<String> {
    let d = ts.get(..10)?;
    let ok = d.bytes().enumerate().all(|(i, b)| {
        if i == 4 || i == 7 {
            b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    ok.then(|| d.to_string())
}

/// The model a stage ran on: its logged name, else the project's model of its first agent,
/// else the PRD default.
fn stage_model(name: Option<&str>, agents: &[&str], settings: &Settings) -> Model {
    name.and_then(Model::from_name).unwrap_or_else(|| {
        agents.first().map_or(Model::Sonnet, |a| {
            settings
                .models
                .get(*a)
                .and_then(|m| Model::from_name(m))
                .unwrap_or_else(|| cost::default_model(a))
        })
    })
}

/// A stage's input and output tokens, as logged or split from its one total
/// ([`cost::split_total`]); whether they were split; whether any figure was logged at all.
fn stage_usage(s: &novel_core::model::pipeline_log::StageLog) -> (u64, u64, bool, bool) {
    let agents = cost::stage_agents(&s.name);
    let total = s
        .extra
        .get(crate::stage::TOTAL_TOKENS)
        .and_then(Value::as_u64);
    let (input, output, split) = match (s.input_tokens, s.output_tokens, total) {
        (Some(i), Some(o), _) => (i, o, false),
        (_, _, Some(t)) => {
            let (i, o) = cost::split_total(agents, t);
            (i, o, true)
        }
        (i, o, None) => (i.unwrap_or(0), o.unwrap_or(0), false),
    };
    let known = s.input_tokens.is_some() || s.output_tokens.is_some() || total.is_some();
    (input, output, split, known)
}

/// What a stage that logged tokens but no cost would bill, at [`cost::estimate_usd`] (`None`
/// when it logged a cost or no tokens). `novel status` adds these up beside the logged costs.
pub fn estimated_stage_usd(
    s: &novel_core::model::pipeline_log::StageLog,
    settings: &Settings,
) -> Option<f64> {
    if s.extra.get("cost_usd").and_then(Value::as_f64).is_some() {
        return None;
    }
    let (input, output, _, known) = stage_usage(s);
    known.then(|| {
        let model = stage_model(s.model.as_deref(), cost::stage_agents(&s.name), settings);
        cost::estimate_usd(model, input, output, 0)
    })
}

/// The stages of a log with their cost; stages that dispatched no agent and used nothing are
/// left out.
fn stage_costs(log: &PipelineLog, settings: &Settings) -> Vec<StageCost> {
    let mut out = Vec::new();
    for s in &log.stages {
        let agents = cost::stage_agents(&s.name);
        let logged = s.extra.get("cost_usd").and_then(Value::as_f64);
        let (input, output, split, _) = stage_usage(s);
        if agents.is_empty() && input + output == 0 && logged.unwrap_or(0.0) == 0.0 {
            continue;
        }
        let (usd, estimated) = match logged {
            Some(c) => (Some(c), split),
            None => match estimated_stage_usd(s, settings) {
                Some(e) => (Some(e), true),
                None => (None, false),
            },
        };
        out.push(StageCost {
            stage: s.name.clone(),
            input,
            output,
            usd,
            estimated,
        });
    }
    out
}

/// The last dated line of a log (a stage's `at`, else `started_at`).
fn log_date(log: &PipelineLog) -> Option<String> {
    log.stages
        .iter()
        .rev()
        .filter_map(|s| s.extra.get("at").and_then(Value::as_str))
        .find_map(date_of)
        .or_else(|| log.started_at.as_deref().and_then(date_of))
}

#[derive(serde::Deserialize)]
struct LightEntry {
    chapter: u32,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    storyline_id: Option<String>,
    #[serde(default)]
    applied: Vec<LightOp>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(serde::Deserialize)]
struct LightOp {
    path: String,
}

/// Gathers the dashboard's data of the project.
pub fn gather(project: &Project) -> DashboardData {
    let mut notes = Notes::default();
    let settings = crate::settings::load(project).unwrap_or_else(|e| {
        notes.push(Section::Progress, format!("{e}（按默认设置绘制）"));
        Settings::default()
    });
    let cp: Option<Checkpoint> = load(project, layout::CHECKPOINT, Section::Progress, &mut notes)
        .ok()
        .flatten();
    let chapters_on_disk = committed(project);
    let last_completed = cp.as_ref().map_or_else(
        || chapters_on_disk.last().copied().unwrap_or(0),
        |c| c.last_completed_chapter,
    );
    let current_volume = cp.as_ref().map(Checkpoint::volume);
    let volumes = volume_ranges(project, current_volume, &mut notes);
    let volume_of = |c: u32| -> u32 {
        volumes
            .iter()
            .rev()
            .find(|v| v.range[0] <= c)
            .map_or(1, |v| v.volume)
    };
    let mut rows = Vec::with_capacity(chapters_on_disk.len());
    let mut unreadable_logs = Vec::new();
    let mut missing_logs = Vec::new();
    let mut missing_evals = Vec::new();
    let mut bad_evals = Vec::new();
    for &n in &chapters_on_disk {
        let mut row = ChapterRow {
            chapter: n,
            volume: volume_of(n),
            chars: None,
            date: None,
            score: None,
            dimensions: None,
            decision: None,
            revisions: 0,
            force_passed: false,
            storyline: None,
            stages: Vec::new(),
            log: LogState::Missing,
        };
        let mut scratch = Notes::default();
        match load::<PipelineLog>(project, &layout::log_file(n), Section::Cost, &mut scratch) {
            Ok(Some(log)) => {
                row.log = LogState::Read;
                row.chars = log
                    .extra
                    .get(crate::status::LOG_CHARS)
                    .and_then(Value::as_u64);
                row.score = log
                    .extra
                    .get(crate::status::LOG_GATE_OVERALL)
                    .and_then(Value::as_f64);
                row.decision = log.gate_decision;
                row.revisions = log.revisions;
                row.force_passed = log.force_passed;
                row.date = log_date(&log);
                row.stages = stage_costs(&log, &settings);
                row.storyline = log.storyline_id;
            }
            Ok(None) => missing_logs.push(n),
            Err(()) => {
                row.log = LogState::Unreadable;
                unreadable_logs.push(n);
            }
        }
        let rel = layout::evaluation_file(n);
        match load::<Evaluation>(project, &rel, Section::Quality, &mut scratch) {
            Ok(Some(e)) => {
                let d = e.scores.dimensions();
                row.dimensions = Some(std::array::from_fn(|i| d[i].1.score));
                if row.score.is_none() {
                    row.score = Some(novel_core::gate::weighted_overall(
                        &e,
                        &settings.gate.weights,
                    ));
                }
            }
            Ok(None) => missing_evals.push(n),
            Err(()) => bad_evals.push(n),
        }
        // Each unreadable file's own message, for the first few of a long book.
        for s in [Section::Cost, Section::Quality] {
            for note in scratch.of(s) {
                if notes.of(s).len() < MAX_FILE_NOTES {
                    notes.push(s, note.clone());
                }
            }
        }
        rows.push(row);
    }
    if !unreadable_logs.is_empty() {
        let list = chapter_list(&unreadable_logs);
        notes.push(
            Section::Progress,
            format!("{list}的流水线日志读不了：字数改从正文统计，日期与费用缺这几章"),
        );
        notes.push(
            Section::Cost,
            format!("{list}的流水线日志读不了，费用未计入（合计偏低）"),
        );
    }
    if !missing_logs.is_empty() {
        notes.push(
            Section::Cost,
            format!("{}没有流水线日志，费用未计入", chapter_list(&missing_logs)),
        );
    }
    if !bad_evals.is_empty() {
        notes.push(
            Section::Quality,
            format!(
                "{}的评估文件读不了（evaluations/），这几章没有分维度评分",
                chapter_list(&bad_evals)
            ),
        );
    }
    if !missing_evals.is_empty() && missing_evals.len() < rows.len() {
        notes.push(
            Section::Quality,
            format!(
                "{}没有评估文件（evaluations/），这几章没有分维度评分",
                chapter_list(&missing_evals)
            ),
        );
    } else if !missing_evals.is_empty() {
        notes.push(
            Section::Quality,
            "evaluations/ 里没有任何评估文件：分维度评分画不出来".to_string(),
        );
    }
    let changelog = read_text(&project.path(layout::CHANGELOG)).ok();
    storylines_from_changelog(&mut rows, changelog.as_deref(), project);

    let (lanes, convergences) = storyline_plan(project, &volumes, &mut notes);
    let threads = threads(project, last_completed, &mut notes);
    let cast = cast(project, changelog.as_deref(), &mut notes);
    let profile: Option<StyleProfile> =
        load(project, layout::STYLE_PROFILE, Section::Style, &mut notes)
            .ok()
            .flatten();
    let style = StyleBase {
        avg_sentence_length: profile
            .as_ref()
            .and_then(|p| p.avg_sentence_length)
            .filter(|b| *b > 0.0),
        dialogue_ratio: profile
            .as_ref()
            .and_then(|p| p.dialogue_ratio)
            .filter(|b| *b > 0.0),
        sentence_threshold: settings.style_drift.sentence_length,
        dialogue_threshold: settings.style_drift.dialogue_ratio,
        window: settings.style_drift.window.max(1),
    };
    DashboardData {
        title: settings.title.clone(),
        last_completed,
        current_volume,
        chapters: rows,
        volumes,
        length_target: [settings.chapter_length.min, settings.chapter_length.max],
        gate_pass: settings.gate.pass,
        lint_limit: settings.lint.blacklist_per_1000,
        lanes,
        convergences,
        threads,
        cast,
        style,
        notes,
    }
}

/// Each known volume's range and its schedule's active and dormant lines.
fn volume_ranges(project: &Project, current: Option<u32>, notes: &mut Notes) -> Vec<VolumeRange> {
    let mut vols = volume_numbers(project);
    if let Some(v) = current
        && !vols.contains(&v)
    {
        vols.push(v);
        vols.sort_unstable();
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for v in vols {
        let Some(span) = volume_span(project, v, &mut problems) else {
            continue;
        };
        let rel = format!("{}/storyline-schedule.json", layout::volume_dir(v));
        let schedule: Option<StorylineSchedule> = load(project, &rel, Section::Storylines, notes)
            .ok()
            .flatten();
        out.push(VolumeRange {
            volume: v,
            range: span.range,
            active: schedule.as_ref().map_or_else(Vec::new, |s| {
                s.active_storylines
                    .iter()
                    .map(|a| a.storyline_id.clone())
                    .collect()
            }),
            dormant: schedule
                .as_ref()
                .map_or_else(Vec::new, |s| s.dormant_storylines.clone()),
        });
    }
    for p in problems {
        notes.push(Section::Progress, p);
    }
    out
}

/// Chapters whose log did not name their storyline: the changelog's line, else the summary's
/// front matter.
fn storylines_from_changelog(rows: &mut [ChapterRow], changelog: Option<&str>, project: &Project) {
    let missing: BTreeSet<u32> = rows
        .iter()
        .filter(|r| r.storyline.is_none())
        .map(|r| r.chapter)
        .collect();
    if missing.is_empty() {
        return;
    }
    let mut found: BTreeMap<u32, String> = BTreeMap::new();
    for line in changelog.unwrap_or("").lines() {
        if let Ok(e) = serde_json::from_str::<LightEntry>(line)
            && missing.contains(&e.chapter)
            && let Some(s) = e.storyline_id
        {
            found.entry(e.chapter).or_insert(s);
        }
    }
    for r in rows.iter_mut().filter(|r| r.storyline.is_none()) {
        r.storyline = found.remove(&r.chapter).or_else(|| {
            read_text(&project.path(&layout::summary_file(r.chapter)))
                .ok()
                .and_then(|t| novel_core::context::text::summary_parts(&t).storyline)
        });
    }
}

/// The lanes (storylines.json, in its order) and every schedule's convergence events.
fn storyline_plan(
    project: &Project,
    volumes: &[VolumeRange],
    notes: &mut Notes,
) -> (Vec<Lane>, Vec<Convergence>) {
    let lanes = match load::<Storylines>(project, layout::STORYLINES, Section::Storylines, notes) {
        Ok(Some(s)) => s
            .storylines
            .iter()
            .map(|l| Lane {
                id: l.id.clone(),
                name: l.name.clone(),
                status: l.status,
            })
            .collect(),
        Ok(None) => Vec::new(),
        Err(()) => Vec::new(),
    };
    let mut conv = Vec::new();
    for v in volumes {
        let rel = format!("{}/storyline-schedule.json", layout::volume_dir(v.volume));
        let mut scratch = Notes::default();
        if let Ok(Some(s)) =
            load::<StorylineSchedule>(project, &rel, Section::Storylines, &mut scratch)
        {
            for e in s.convergence_events {
                conv.push(Convergence {
                    range: e.chapter_range,
                    storylines: e.involved_storylines,
                });
            }
        }
    }
    conv.sort_by_key(|c| c.range);
    (lanes, conv)
}

/// The threads of `foreshadowing/global.json`, by planted chapter then id.
fn threads(project: &Project, last: u32, notes: &mut Notes) -> Vec<Thread> {
    let Ok(Some(g)) = load::<ForeshadowingGlobal>(
        project,
        layout::FORESHADOWING_GLOBAL,
        Section::Foreshadowing,
        notes,
    ) else {
        return Vec::new();
    };
    let mut out: Vec<Thread> = g
        .foreshadowing
        .iter()
        .map(|f| {
            let planted = f.planted_chapter.or_else(|| {
                f.history
                    .iter()
                    .filter(|h| h.action == ForeshadowStatus::Planted)
                    .map(|h| h.chapter)
                    .min()
            });
            let resolved = (f.status == ForeshadowStatus::Resolved).then(|| {
                f.history
                    .iter()
                    .filter(|h| h.action == ForeshadowStatus::Resolved)
                    .map(|h| h.chapter)
                    .min()
                    .or(f.last_updated_chapter)
                    .unwrap_or(last)
            });
            Thread {
                id: f.id.clone(),
                description: f.description.clone(),
                scope: f.scope,
                status: f.status,
                planted,
                resolved,
                target: f.target_resolve_range,
                overdue: novel_core::next::is_overdue(
                    f.scope,
                    f.status,
                    f.target_resolve_range,
                    last,
                ),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.planted
            .unwrap_or(u32::MAX)
            .cmp(&b.planted.unwrap_or(u32::MAX))
            .then(a.id.cmp(&b.id))
    });
    out
}

/// Character files of `dir` (`characters/active` or `characters/retired`), by id.
fn characters_in(project: &Project, dir: &str, notes: &mut Notes) -> Vec<Character> {
    let mut names: Vec<String> = fs::read_dir(project.path(dir))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .filter_map(|n| {
            load::<Character>(project, &format!("{dir}/{n}"), Section::Characters, notes)
                .ok()
                .flatten()
        })
        .collect()
}

/// The cast: active then retired characters, with the chapter each retired at (the changelog's
/// `retire` lines name the character in their op path or note).
fn cast(project: &Project, changelog: Option<&str>, notes: &mut Notes) -> Vec<CastMember> {
    let active = characters_in(project, "characters/active", notes);
    let retired = characters_in(project, "characters/retired", notes);
    let mut retired_at: BTreeMap<String, u32> = BTreeMap::new();
    if !retired.is_empty() {
        for line in changelog
            .unwrap_or("")
            .lines()
            .filter(|l| l.contains("\"retire\""))
        {
            let Ok(e) = serde_json::from_str::<LightEntry>(line) else {
                continue;
            };
            if e.source.as_deref() != Some("retire") {
                continue;
            }
            for c in &retired {
                let by_op = e
                    .applied
                    .iter()
                    .any(|o| o.path == format!("characters.{}", c.id));
                let by_note = e
                    .note
                    .as_deref()
                    .is_some_and(|n| n.contains(&format!("（{}）", c.id)));
                if by_op || by_note {
                    retired_at.entry(c.id.clone()).or_insert(e.chapter);
                }
            }
        }
    }
    let member = |c: &Character, retired: bool| CastMember {
        id: c.id.clone(),
        name: c.display_name.clone(),
        aliases: c.aliases.clone(),
        role: c.role.clone(),
        retired,
        retired_at: retired_at.get(&c.id).copied(),
    };
    let mut out: Vec<CastMember> = active.iter().map(|c| member(c, false)).collect();
    out.extend(retired.iter().map(|c| member(c, true)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_from_iso_timestamps_only() {
        assert_eq!(
            date_of("2026-01-05T10:00:00Z").as_deref(),
            Some("2026-01-05")
        );
        assert_eq!(date_of("2026-1-5"), None);
        assert_eq!(date_of("yesterday!"), None);
    }

    #[test]
    fn chapter_lists_are_short() {
        assert_eq!(chapter_list(&[3, 5]), "第 3、5 章");
        assert_eq!(
            chapter_list(&(1..=20).collect::<Vec<_>>()),
            "第 1、2、3、4、5、6、7、8 等 20 章"
        );
    }
}
