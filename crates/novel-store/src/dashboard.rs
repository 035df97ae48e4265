//! `novel dashboard`: everything the book's dashboard draws, read from the project files and
//! never guessed. The book's figures — per committed chapter its 字数, gate figures and
//! per-dimension scores, storyline, volume, date and what each stage cost; the totals, the
//! cost and tokens, the drift verdict, the headline — are [`crate::figures`]', the same
//! `novel status` prints; this module adds what only the page draws: the storylines with their
//! schedules, the foreshadowing threads, the cast with retirements, the style baseline. The
//! chapter texts are the caller's to analyse (lint density, style windows, presence), so this
//! crate stays free of text analysis.
//!
//! Tolerant like `status`: a file that cannot be read or parsed is a note of the section it
//! feeds (`Notes`, in the author's words), and the rest still renders. Deterministic: every
//! list is sorted, nothing depends on the order of a directory listing.
//!
//! Layer: views (read only). It imports the derived facts, never another view.

use std::collections::BTreeMap;
use std::fs;

use novel_core::model::common::{ForeshadowScope, ForeshadowStatus};
use novel_core::model::storyline::StorylineStatus;
use novel_core::model::style::StyleProfile;
use novel_core::model::{
    Character, Checkpoint, ForeshadowingGlobal, Settings, StorylineSchedule, Storylines,
};
use serde::de::DeserializeOwned;

use crate::error::StoreError;
use crate::figures::{self, BookFigures, ChapterFigures, Missing, TextRules, Wanted};
use crate::io::read_text;
use crate::layout;
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
#[derive(Debug, Clone)]
pub struct DashboardData {
    pub title: Option<String>,
    /// The checkpoint, when it could be read (the header's book state).
    pub checkpoint: Option<Checkpoint>,
    /// The book's figures ([`crate::figures`]): chapters, totals, cost, drift, headline.
    pub book: BookFigures,
    pub volumes: Vec<VolumeRange>,
    pub length_target: [u32; 2],
    pub gate_pass: f64,
    /// `novel.json` `gate.polish`: a dimension under it is weak.
    pub gate_polish: f64,
    pub lint_limit: f64,
    pub lanes: Vec<Lane>,
    pub convergences: Vec<Convergence>,
    pub threads: Vec<Thread>,
    pub cast: Vec<CastMember>,
    pub style: StyleBase,
    pub notes: Notes,
}

impl DashboardData {
    /// The committed chapters.
    pub fn chapters(&self) -> &[ChapterFigures] {
        &self.book.chapters
    }

    pub fn last_completed(&self) -> u32 {
        self.book.last_completed
    }

    pub fn current_volume(&self) -> Option<u32> {
        self.book.volumes.current
    }
}

/// What the author calls a project file (for the notes: no paths, no parser messages).
fn plain_name(rel: &str) -> String {
    let fixed = [
        (layout::CHECKPOINT, "进度记录"),
        (layout::STORYLINES, "故事线设置"),
        (layout::FORESHADOWING_GLOBAL, "伏笔记录"),
        (layout::STYLE_PROFILE, "文风档案"),
    ];
    if let Some((_, name)) = fixed.iter().find(|(r, _)| *r == rel) {
        return (*name).to_string();
    }
    if let Some(v) = rel
        .strip_prefix("volumes/vol-")
        .and_then(|r| r.split('/').next())
        .and_then(|n| n.parse::<u32>().ok())
    {
        return format!("第{v}卷的故事线调度");
    }
    if rel.starts_with("characters/") {
        let id = rel
            .rsplit('/')
            .next()
            .unwrap_or(rel)
            .trim_end_matches(".json");
        return format!("角色档案「{id}」");
    }
    "一个项目文件".to_string()
}

/// Where an author sees what exactly is wrong with a file.
const DETAILS: &str = "在 Claude Code 里运行 /novel:status 可以看到是哪个文件、哪里出错";

/// A file: `None` when absent; a note (in the author's words) when unreadable or not `T`.
fn load<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    section: Section,
    notes: &mut Notes,
) -> Result<Option<T>, ()> {
    let parsed = read_text(&project.path(rel))
        .map_err(Some)
        .and_then(|t| serde_json::from_str(&t).map_err(|_| None));
    match parsed {
        Ok(v) => Ok(Some(v)),
        Err(Some(StoreError::Io { source, .. }))
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(None)
        }
        Err(_) => {
            notes.push(
                section,
                format!(
                    "{}读不了（文件损坏或格式不对），这一部分按缺少它来画；{DETAILS}。",
                    plain_name(rel)
                ),
            );
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

/// The notes on the chapters whose records could not be used.
fn missing_notes(m: &Missing, chapters: usize, notes: &mut Notes) {
    if !m.unreadable_logs.is_empty() {
        let list = chapter_list(&m.unreadable_logs);
        notes.push(
            Section::Progress,
            format!("{list}的写作记录读不了：字数改从正文统计，日期缺这几章；{DETAILS}。"),
        );
        notes.push(
            Section::Cost,
            format!("{list}的写作记录读不了，费用没有计入（合计偏低）；{DETAILS}。"),
        );
    }
    if !m.logs.is_empty() {
        notes.push(
            Section::Cost,
            format!("{}没有写作记录，费用没有计入。", chapter_list(&m.logs)),
        );
    }
    if !m.unreadable_evaluations.is_empty() {
        notes.push(
            Section::Quality,
            format!(
                "{}的评审结果读不了，这几章没有分维度评分；{DETAILS}。",
                chapter_list(&m.unreadable_evaluations)
            ),
        );
    }
    if !m.evaluations.is_empty() && m.evaluations.len() < chapters {
        notes.push(
            Section::Quality,
            format!(
                "{}还没有评审结果，这几章没有分维度评分。",
                chapter_list(&m.evaluations)
            ),
        );
    } else if !m.evaluations.is_empty() {
        notes.push(
            Section::Quality,
            "还没有任何一章的评审结果：分维度评分画不出来。".to_string(),
        );
    }
}

/// Gathers the dashboard's data of the project; `rules` measure the chapter texts.
pub fn gather(project: &Project, rules: &TextRules<'_>) -> DashboardData {
    let mut notes = Notes::default();
    let settings = crate::settings::load(project).unwrap_or_else(|_| {
        notes.push(
            Section::Progress,
            format!("设置文件读不了，按默认设置绘制；{DETAILS}。"),
        );
        Settings::default()
    });
    let cp: Option<Checkpoint> = load(project, layout::CHECKPOINT, Section::Progress, &mut notes)
        .ok()
        .flatten();
    let wanted = Wanted { dimensions: true };
    let book = figures::gather(project, &settings, cp.as_ref(), rules, wanted);
    missing_notes(&book.missing, book.chapters.len(), &mut notes);
    let volumes = volume_ranges(project, &book, &mut notes);
    let changelog = read_text(&project.path(layout::CHANGELOG)).ok();
    let (lanes, convergences) = storyline_plan(project, &volumes, &mut notes);
    let threads = threads(project, book.last_completed, &mut notes);
    let cast = cast(project, changelog.as_deref(), &mut notes);
    let style = style_base(project, &settings, &mut notes);
    DashboardData {
        title: settings.title.clone(),
        checkpoint: cp,
        book,
        volumes,
        length_target: [settings.chapter_length.min, settings.chapter_length.max],
        gate_pass: settings.gate.pass,
        gate_polish: settings.gate.polish,
        lint_limit: settings.lint.blacklist_per_1000,
        lanes,
        convergences,
        threads,
        cast,
        style,
        notes,
    }
}

/// The style baseline and the drift thresholds.
fn style_base(project: &Project, settings: &Settings, notes: &mut Notes) -> StyleBase {
    let profile: Option<StyleProfile> = load(project, layout::STYLE_PROFILE, Section::Style, notes)
        .ok()
        .flatten();
    StyleBase {
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
    }
}

/// Each known volume's range (the figures' [`crate::volumes::Volumes`]) and its schedule's
/// active and dormant lines.
fn volume_ranges(project: &Project, book: &BookFigures, notes: &mut Notes) -> Vec<VolumeRange> {
    book.volumes
        .spans
        .iter()
        .map(|(v, span)| {
            let rel = format!("{}/storyline-schedule.json", layout::volume_dir(*v));
            let schedule: Option<StorylineSchedule> =
                load(project, &rel, Section::Storylines, notes)
                    .ok()
                    .flatten();
            VolumeRange {
                volume: *v,
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
            }
        })
        .collect()
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

/// The threads of `foreshadowing/global.json`: overdue first, then open, then resolved.
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
    // Overdue first, then the open ones, then the resolved; each by planted chapter.
    let rank = |t: &Thread| match (t.overdue, t.resolved) {
        (true, _) => 0,
        (false, None) => 1,
        (false, Some(_)) => 2,
    };
    out.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then(
                a.planted
                    .unwrap_or(u32::MAX)
                    .cmp(&b.planted.unwrap_or(u32::MAX)),
            )
            .then(a.id.cmp(&b.id))
    });
    out
}

/// A changelog line, as far as the cast's retirements need it.
#[derive(serde::Deserialize)]
struct LightEntry {
    chapter: u32,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    applied: Vec<LightOp>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(serde::Deserialize)]
struct LightOp {
    path: String,
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
    fn chapter_lists_are_short() {
        assert_eq!(chapter_list(&[3, 5]), "第 3、5 章");
        assert_eq!(
            chapter_list(&(1..=20).collect::<Vec<_>>()),
            "第 1、2、3、4、5、6、7、8 等 20 章"
        );
    }
}
