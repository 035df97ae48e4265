//! The quick start as tracked steps (PRD §6 Layer 1; `docs/orchestration.md` §3): which steps
//! are done, from the files that exist and the author's marks in the checkpoint, and which
//! one comes next. Pure: the store reports what it found as [`QuickStartFiles`].
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

use serde::Serialize;

use crate::model::{Checkpoint, OrchestratorState, QuickStartStep};

impl QuickStartStep {
    /// Every step, in order.
    pub const ALL: [QuickStartStep; 10] = [
        QuickStartStep::Brief,
        QuickStartStep::World,
        QuickStartStep::Characters,
        QuickStartStep::Storylines,
        QuickStartStep::Style,
        QuickStartStep::Outline,
        QuickStartStep::Trial1,
        QuickStartStep::Trial2,
        QuickStartStep::Trial3,
        QuickStartStep::Confirm,
    ];

    /// The stable id (`brief`, `trial-1` …), as stored in the checkpoint.
    pub fn id(self) -> &'static str {
        match self {
            QuickStartStep::Brief => "brief",
            QuickStartStep::World => "world",
            QuickStartStep::Characters => "characters",
            QuickStartStep::Storylines => "storylines",
            QuickStartStep::Style => "style",
            QuickStartStep::Outline => "outline",
            QuickStartStep::Trial1 => "trial-1",
            QuickStartStep::Trial2 => "trial-2",
            QuickStartStep::Trial3 => "trial-3",
            QuickStartStep::Confirm => "confirm",
        }
    }

    /// What the author sees (继续快速起步：风格样本).
    pub fn label(self) -> &'static str {
        match self {
            QuickStartStep::Brief => "创作纲领",
            QuickStartStep::World => "世界观规则",
            QuickStartStep::Characters => "主要角色",
            QuickStartStep::Storylines => "故事线",
            QuickStartStep::Style => "风格样本",
            QuickStartStep::Outline => "第 1 卷大纲",
            QuickStartStep::Trial1 => "试写第 1 章",
            QuickStartStep::Trial2 => "试写第 2 章",
            QuickStartStep::Trial3 => "试写第 3 章",
            QuickStartStep::Confirm => "确认并进入卷规划",
        }
    }

    pub fn from_id(id: &str) -> Option<QuickStartStep> {
        QuickStartStep::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The trial chapter of a `trial-k` step.
    pub fn trial_chapter(self) -> Option<u32> {
        match self {
            QuickStartStep::Trial1 => Some(1),
            QuickStartStep::Trial2 => Some(2),
            QuickStartStep::Trial3 => Some(3),
            _ => None,
        }
    }
}

/// What one file-backed piece of evidence looks like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum Evidence {
    /// The files show the step is done (what was found).
    Found(String),
    /// The files do not show it (what is missing).
    Missing(String),
    /// Nothing to check in the files: only the author's mark counts.
    MarkOnly,
}

/// The file evidence of the checkable steps (the store gathers it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuickStartFiles {
    pub brief: Evidence,
    pub world: Evidence,
    pub characters: Evidence,
    pub style: Evidence,
    pub outline: Evidence,
}

impl QuickStartFiles {
    /// Nothing found anywhere (a fresh `novel init`).
    pub fn nothing() -> Self {
        let m = |s: &str| Evidence::Missing(s.to_string());
        QuickStartFiles {
            brief: m("brief.md 的「一句话卖点」「主角与核心冲突」还没有填写"),
            world: m("world/rules.json 还没有规则"),
            characters: m("characters/active/ 还没有角色档案"),
            style: m("style-profile.json 的 source_type 还是 null"),
            outline: m("volumes/vol-01/outline.md 还没有第 1–3 章的章节块"),
        }
    }
}

/// One step's standing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepStatus {
    pub id: &'static str,
    pub label: &'static str,
    /// Done: the files show it, or the author marked it.
    pub done: bool,
    /// The author marked it with `novel quickstart done STEP`.
    pub marked: bool,
    /// What the files show, in Chinese (`null` for steps only a mark completes).
    pub evidence: Option<String>,
}

/// `novel quickstart` (and `next`'s `quick_start`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuickStartStatus {
    pub steps: Vec<StepStatus>,
    /// The first step not done; `null` when all are.
    pub next: Option<&'static str>,
    pub complete: bool,
}

impl QuickStartStatus {
    /// The first step not done.
    pub fn next_step(&self) -> Option<QuickStartStep> {
        self.next.and_then(QuickStartStep::from_id)
    }

    /// What is left, in order, for the author: 「风格样本、试写第 3 章、确认并进入卷规划」.
    pub fn remaining(&self) -> String {
        let left: Vec<&str> = self
            .steps
            .iter()
            .filter(|s| !s.done)
            .map(|s| s.label)
            .collect();
        if left.is_empty() {
            "快速起步各步已完成".to_string()
        } else {
            left.join("、")
        }
    }
}

/// The evidence of `step` for the checkpoint and the files.
pub fn evidence(step: QuickStartStep, cp: &Checkpoint, files: &QuickStartFiles) -> Evidence {
    match step {
        QuickStartStep::Brief => files.brief.clone(),
        QuickStartStep::World => files.world.clone(),
        QuickStartStep::Characters => files.characters.clone(),
        QuickStartStep::Style => files.style.clone(),
        QuickStartStep::Outline => files.outline.clone(),
        QuickStartStep::Storylines | QuickStartStep::Confirm => Evidence::MarkOnly,
        QuickStartStep::Trial1 | QuickStartStep::Trial2 | QuickStartStep::Trial3 => {
            let k = step.trial_chapter().unwrap_or(1);
            if cp.last_completed_chapter >= k {
                Evidence::Found(format!("第 {k} 章已提交"))
            } else {
                Evidence::Missing(format!(
                    "第 {k} 章还没有提交（已完成到第 {} 章）",
                    cp.last_completed_chapter
                ))
            }
        }
    }
}

fn marked(cp: &Checkpoint, step: QuickStartStep) -> bool {
    cp.quick_start
        .as_ref()
        .is_some_and(|q| q.done.contains(&step))
}

/// Where the quick start stands. Past QUICK_START (the author confirmed, or the project was set
/// up by hand) every step counts as done.
pub fn status(cp: &Checkpoint, files: &QuickStartFiles) -> QuickStartStatus {
    let past = !cp.orchestrator_state.in_quick_start();
    let steps: Vec<StepStatus> = QuickStartStep::ALL
        .into_iter()
        .map(|s| {
            let e = evidence(s, cp, files);
            let m = marked(cp, s);
            StepStatus {
                id: s.id(),
                label: s.label(),
                done: past || m || matches!(e, Evidence::Found(_)),
                marked: m,
                evidence: match e {
                    Evidence::Found(t) | Evidence::Missing(t) => Some(t),
                    Evidence::MarkOnly => None,
                },
            }
        })
        .collect();
    let next = steps.iter().find(|s| !s.done).map(|s| s.id);
    QuickStartStatus {
        complete: next.is_none(),
        next,
        steps,
    }
}

/// Why `novel quickstart done STEP` / `undo STEP` is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{reason}")]
pub struct MarkRefusal {
    pub code: &'static str,
    pub reason: String,
    pub hint: String,
}

fn refuse(code: &'static str, reason: String, hint: impl Into<String>) -> MarkRefusal {
    MarkRefusal {
        code,
        reason,
        hint: hint.into(),
    }
}

fn check_state(cp: &Checkpoint) -> Result<(), MarkRefusal> {
    if cp.orchestrator_state.in_quick_start() {
        Ok(())
    } else {
        Err(refuse(
            "E_STATE",
            format!(
                "快速起步已经结束（当前状态 {}），不能再标记步骤",
                crate::model::checkpoint::state_name(cp.orchestrator_state)
            ),
            "快速起步之后的设定修改走「更新设定」流程（/novel:start）",
        ))
    }
}

/// `novel quickstart done STEP`: the new checkpoint, or why not. A step whose evidence is in the
/// files must have it; `confirm` needs every earlier step done and moves QUICK_START →
/// VOL_PLANNING.
pub fn mark_done(
    cp: &Checkpoint,
    files: &QuickStartFiles,
    step: QuickStartStep,
) -> Result<Checkpoint, MarkRefusal> {
    check_state(cp)?;
    if let Evidence::Missing(what) = evidence(step, cp, files) {
        return Err(refuse(
            "E_QUICKSTART_EVIDENCE",
            format!("步骤「{}」还不能标记完成：{what}", step.label()),
            "先完成这一步（写好对应的文件），再标记",
        ));
    }
    let mut next = cp.clone();
    if step == QuickStartStep::Confirm {
        let st = status(cp, files);
        let missing: Vec<String> = st
            .steps
            .iter()
            .filter(|s| !s.done && s.id != QuickStartStep::Confirm.id())
            .map(|s| format!("{}（{}）", s.label, s.id))
            .collect();
        if !missing.is_empty() {
            return Err(refuse(
                "E_QUICKSTART_INCOMPLETE",
                format!("还有步骤没有完成：{}", missing.join("、")),
                "逐项完成后再确认；可用 novel quickstart 查看每一步的情况",
            ));
        }
        if let Some(n) = cp.inflight_chapter {
            return Err(refuse(
                "E_INFLIGHT",
                format!("第 {n} 章还在写，不能确认快速起步"),
                "先提交或恢复在写的章节",
            ));
        }
        next.orchestrator_state = OrchestratorState::VolPlanning;
    }
    let marks = next.quick_start.get_or_insert_with(Default::default);
    if !marks.done.contains(&step) {
        marks.done.push(step);
        marks.done.sort();
    }
    Ok(next)
}

/// `novel quickstart undo STEP`: clears the mark (the files are never touched).
pub fn mark_undo(cp: &Checkpoint, step: QuickStartStep) -> Result<Checkpoint, MarkRefusal> {
    check_state(cp)?;
    let mut next = cp.clone();
    if let Some(marks) = next.quick_start.as_mut() {
        marks.done.retain(|s| *s != step);
    }
    Ok(next)
}

/// Whether `brief.md` has author text in 一句话卖点 or 主角与核心冲突: anything in those two
/// sections that is not a heading, an HTML comment (the template's guidance) or blank.
pub fn brief_has_author_text(text: &str) -> bool {
    let text = strip_comments(crate::validate::strip_bom(text));
    let mut in_section = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some((level, h)) = heading(t) {
            // Deeper headings are structure inside a section, never text.
            if level <= 2 {
                in_section = h.contains("一句话卖点") || h.contains("主角与核心冲突");
            }
            continue;
        }
        if in_section && !t.is_empty() && !is_template_line(t) {
            return true;
        }
    }
    false
}

/// A Markdown ATX heading: its level and text.
fn heading(line: &str) -> Option<(usize, &str)> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    let rest = &line[hashes..];
    if hashes == 0 || (!rest.is_empty() && !rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((hashes, rest.trim()))
}

/// Template lines that say nothing yet: the filled 书名/题材 lines, empty list items like
/// `- 单章字数：`.
fn is_template_line(t: &str) -> bool {
    let item = t.trim_start_matches(['-', '*', '+']).trim();
    let plain: String = item.chars().filter(|c| *c != '*').collect();
    if plain.starts_with("书名") || plain.starts_with("题材") {
        return true;
    }
    // `- 单章字数：` with nothing after the colon.
    plain.ends_with('：') || plain.ends_with(':') || plain.is_empty()
}

/// Removes `<!-- … -->` comments (multi-line too); an unclosed comment runs to the end.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "# 《青云志异》创作纲领\n\n<!-- 定海神针 -->\n\n- **书名**：青云志异\n- **题材**：玄幻\n\n## 一句话卖点\n\n<!-- 读者为什么点开。\n例：废柴少年…… -->\n\n## 题材与读者\n\n<!-- … -->\n\n## 主角与核心冲突\n\n<!-- 主角：姓名 -->\n\n## 更新节奏与篇幅\n\n- 单章字数：\n";

    #[test]
    fn brief_template_alone_is_not_author_text() {
        assert!(!brief_has_author_text(TEMPLATE));
        assert!(!brief_has_author_text(""));
    }

    #[test]
    fn brief_text_in_either_section_counts() {
        let pitch = TEMPLATE.replace(
            "## 一句话卖点\n",
            "## 一句话卖点\n\n渔村少年捡到一枚会说话的铜钱。\n",
        );
        assert!(brief_has_author_text(&pitch));
        let hero = TEMPLATE.replace(
            "<!-- 主角：姓名 -->",
            "<!-- 主角：姓名 -->\n主角陆尘，想查清师父的死因。",
        );
        assert!(brief_has_author_text(&hero));
    }

    #[test]
    fn brief_text_in_other_sections_does_not_count() {
        let other = TEMPLATE.replace("- 单章字数：", "- 单章字数：3000 字");
        assert!(!brief_has_author_text(&other));
        let deeper = TEMPLATE.replace("## 一句话卖点\n", "## 一句话卖点\n\n### 细化\n");
        assert!(!brief_has_author_text(&deeper));
        let reader = TEMPLATE.replace("## 题材与读者\n", "## 题材与读者\n\n男频玄幻。\n");
        assert!(!brief_has_author_text(&reader));
    }

    #[test]
    fn step_ids_round_trip() {
        for s in QuickStartStep::ALL {
            assert_eq!(QuickStartStep::from_id(s.id()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.id()),
                "{s:?}"
            );
        }
        assert_eq!(QuickStartStep::from_id("trial-4"), None);
    }

    #[test]
    fn what_is_left_names_the_steps_not_done_in_order() {
        let step = |id, label, done| StepStatus {
            id,
            label,
            done,
            marked: false,
            evidence: None,
        };
        let mut q = QuickStartStatus {
            steps: vec![
                step("brief", "创作纲领", true),
                step("style", "风格样本", false),
                step("trial-3", "试写第 3 章", false),
                step("confirm", "确认并进入卷规划", false),
            ],
            next: Some("style"),
            complete: false,
        };
        assert_eq!(q.remaining(), "风格样本、试写第 3 章、确认并进入卷规划");
        for s in &mut q.steps {
            s.done = true;
        }
        assert_eq!(q.remaining(), "快速起步各步已完成");
    }
}
