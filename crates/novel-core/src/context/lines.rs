//! Storyline isolation (PRD §6.6.7 Layer 1, §6.6.3): which storylines a chapter's packet sees,
//! and how much of each.
//!
//! - **current** — the chapter's own line: its `memory.md` in full, first in the packet.
//! - **convergence** — when the chapter lies inside a convergence event of the volume's
//!   schedule, every line the event involves: memory in full.
//! - **adjacent** — the line the chapter hands over to (`transition_hint.next_storyline` of the
//!   chapter contract), when the volume's schedule lists it as active: memory in full, so the
//!   bridge can be written.
//! - **concurrent** — every other active line: one sentence (`storyline_context.
//!   concurrent_state` of the contract, else the first sentence of its memory).
//! - **frozen** — dormant lines (status `dormant` or listed in the schedule's
//!   `dormant_storylines`): one sentence each, never memory.
//! - planned and resolved lines are left out.
//!
//! The current line is the contract's `storyline_id`, else the outline block's `故事线` field,
//! else the only active line of `storylines.json`, else the schedule's primary line.

use serde::Serialize;

use crate::model::storyline::{ActiveStoryline, Storyline, StorylineStatus, VolumeRole};
use crate::model::{ChapterContract, StorylineSchedule, Storylines};

/// How a storyline takes part in a chapter's packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineRole {
    Current,
    Convergence,
    Adjacent,
    Concurrent,
    Frozen,
}

impl LineRole {
    /// Whether the line's `memory.md` goes into the packet.
    pub fn gets_memory(self) -> bool {
        matches!(
            self,
            LineRole::Current | LineRole::Convergence | LineRole::Adjacent
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            LineRole::Current => "当前线",
            LineRole::Convergence => "交汇线",
            LineRole::Adjacent => "相邻线",
            LineRole::Concurrent => "并行线",
            LineRole::Frozen => "冻结线",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineEntry {
    pub id: String,
    /// Display name from `storylines.json` (the id when unknown).
    pub name: String,
    pub role: LineRole,
    /// The line's role in this volume's schedule, if it has one.
    pub volume_role: Option<VolumeRole>,
    pub arc_goal: Option<String>,
}

/// The convergence event a chapter lies in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Convergence {
    pub range: [u32; 2],
    pub lines: Vec<String>,
    pub trigger: Option<String>,
    pub aftermath: Option<String>,
}

/// Where the current line came from (for the packet and for warnings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CurrentSource {
    Contract,
    Outline,
    OnlyActiveLine,
    SchedulePrimary,
    Unknown,
}

/// The storylines of one chapter's packet, the current line first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinePlan {
    pub chapter: u32,
    pub current: Option<String>,
    pub current_source: CurrentSource,
    pub convergence: Option<Convergence>,
    pub lines: Vec<LineEntry>,
}

impl LinePlan {
    pub fn is_convergence(&self) -> bool {
        self.convergence.is_some()
    }

    /// Lines whose memory the packet carries, in packet order (current first).
    pub fn memory_lines(&self) -> impl Iterator<Item = &LineEntry> {
        self.lines.iter().filter(|l| l.role.gets_memory())
    }

    /// Lines whose chapter summaries may appear among the recent summaries: the current line
    /// and, in a convergence chapter, the involved lines.
    pub fn summary_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter(|l| matches!(l.role, LineRole::Current | LineRole::Convergence))
            .map(|l| l.id.clone())
            .collect()
    }

    pub fn role_of(&self, id: &str) -> Option<LineRole> {
        self.lines.iter().find(|l| l.id == id).map(|l| l.role)
    }
}

/// Decides the storylines of chapter `chapter` (see the module note).
pub fn plan(
    chapter: u32,
    contract: Option<&ChapterContract>,
    outline_line: Option<&str>,
    storylines: Option<&Storylines>,
    schedule: Option<&StorylineSchedule>,
) -> LinePlan {
    let all = storylines.map(|s| s.storylines.as_slice()).unwrap_or(&[]);
    let (current, current_source) = current_line(contract, outline_line, all, schedule);
    let convergence = convergence_at(chapter, schedule);
    let mut list = LineList {
        all,
        schedule,
        lines: Vec::new(),
    };
    if let Some(id) = &current {
        list.push(id, LineRole::Current);
    }
    if let Some(c) = &convergence {
        for id in &c.lines {
            list.push(id, LineRole::Convergence);
        }
    }
    if let Some(next) = contract
        .and_then(|c| c.transition_hint.as_ref())
        .and_then(|h| h.next_storyline.as_deref())
    {
        list.push_adjacent(next);
    }
    list.push_others();
    LinePlan {
        chapter,
        current,
        current_source,
        convergence,
        lines: list.lines,
    }
}

/// The current line and where it came from: the contract, the outline, the only active line,
/// the schedule's primary line, in that order.
fn current_line(
    contract: Option<&ChapterContract>,
    outline_line: Option<&str>,
    all: &[Storyline],
    schedule: Option<&StorylineSchedule>,
) -> (Option<String>, CurrentSource) {
    if let Some(id) = contract.and_then(|c| c.storyline_id.clone()) {
        return (Some(id), CurrentSource::Contract);
    }
    if let Some(id) = outline_line {
        return (Some(id.to_string()), CurrentSource::Outline);
    }
    let active_ids: Vec<&str> = all
        .iter()
        .filter(|l| l.status == StorylineStatus::Active)
        .map(|l| l.id.as_str())
        .collect();
    if let [only] = active_ids.as_slice() {
        return (Some((*only).to_string()), CurrentSource::OnlyActiveLine);
    }
    match schedule.and_then(|s| {
        s.active_storylines
            .iter()
            .find(|a| a.volume_role == VolumeRole::Primary)
    }) {
        Some(p) => (Some(p.storyline_id.clone()), CurrentSource::SchedulePrimary),
        None => (None, CurrentSource::Unknown),
    }
}

/// The schedule's convergence event that `chapter` lies in.
fn convergence_at(chapter: u32, schedule: Option<&StorylineSchedule>) -> Option<Convergence> {
    schedule.and_then(|s| {
        s.convergence_events
            .iter()
            .find(|e| e.chapter_range[0] <= chapter && chapter <= e.chapter_range[1])
            .map(|e| Convergence {
                range: e.chapter_range,
                lines: e.involved_storylines.clone(),
                trigger: e.trigger.clone(),
                aftermath: e.aftermath.clone(),
            })
    })
}

/// The plan's lines as they are added, each once (its first role wins).
struct LineList<'a> {
    all: &'a [Storyline],
    schedule: Option<&'a StorylineSchedule>,
    lines: Vec<LineEntry>,
}

impl LineList<'_> {
    fn status(&self, id: &str) -> Option<StorylineStatus> {
        self.all.iter().find(|l| l.id == id).map(|l| l.status)
    }

    fn scheduled(&self, id: &str) -> Option<&ActiveStoryline> {
        self.schedule
            .and_then(|s| s.active_storylines.iter().find(|a| a.storyline_id == id))
    }

    fn push(&mut self, id: &str, role: LineRole) {
        if self.lines.iter().any(|l| l.id == id) {
            return;
        }
        let sched = self.scheduled(id);
        let entry = LineEntry {
            id: id.to_string(),
            name: self
                .all
                .iter()
                .find(|l| l.id == id)
                .map_or_else(|| id.to_string(), |l| l.name.clone()),
            role,
            volume_role: sched.map(|a| a.volume_role),
            arc_goal: sched.and_then(|a| a.arc_goal.clone()),
        };
        self.lines.push(entry);
    }

    /// The line the chapter hands over to, when the schedule (if any) lists it and it is
    /// neither resolved nor only planned.
    fn push_adjacent(&mut self, next: &str) {
        let listed = self.schedule.is_none_or(|_| self.scheduled(next).is_some());
        let live = !matches!(
            self.status(next),
            Some(StorylineStatus::Resolved | StorylineStatus::Planned)
        );
        if listed && live {
            self.push(next, LineRole::Adjacent);
        }
    }

    /// Every other line: active ones as concurrent, dormant ones frozen (storylines.json
    /// order, then lines only the schedule knows).
    fn push_others(&mut self) {
        let mut others: Vec<(String, Option<StorylineStatus>)> = self
            .all
            .iter()
            .map(|l| (l.id.clone(), Some(l.status)))
            .collect();
        if let Some(s) = self.schedule {
            for a in &s.active_storylines {
                if !others.iter().any(|(id, _)| *id == a.storyline_id) {
                    others.push((a.storyline_id.clone(), None));
                }
            }
        }
        let dormant_in_schedule = |id: &str| {
            self.schedule
                .is_some_and(|s| s.dormant_storylines.iter().any(|d| d == id))
        };
        let mut roles = Vec::new();
        for (id, st) in others {
            let role = match st {
                Some(StorylineStatus::Resolved | StorylineStatus::Planned) => continue,
                _ if dormant_in_schedule(&id) => LineRole::Frozen,
                Some(StorylineStatus::Dormant) => LineRole::Frozen,
                _ => LineRole::Concurrent,
            };
            roles.push((id, role));
        }
        for (id, role) in roles {
            self.push(&id, role);
        }
    }
}

/// The one-sentence state of a line: the contract's `concurrent_state` entry, else the first
/// sentence of its memory (body text, headings and comments skipped), at most `max_chars`.
pub fn one_sentence(concurrent: Option<&str>, memory: Option<&str>, max_chars: usize) -> String {
    if let Some(s) = concurrent.map(str::trim).filter(|s| !s.is_empty()) {
        return super::text::cut_chars(s, max_chars);
    }
    let Some(body) = memory.map(super::text::memory_body) else {
        return "（暂无进展记录）".to_string();
    };
    let first = body
        .lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', ' ']).trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first.is_empty() {
        return "（暂无进展记录）".to_string();
    }
    let end = first
        .char_indices()
        .find(|(_, c)| matches!(c, '。' | '！' | '？' | '!' | '?' | '；'))
        .map_or(first.len(), |(i, c)| i + c.len_utf8());
    super::text::cut_chars(&first[..end], max_chars)
}
