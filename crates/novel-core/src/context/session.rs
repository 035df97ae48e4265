//! The SessionStart hook's text (PRD §8.1 stateless cold start, §2.3): where the book stands,
//! what needs attention first, the last three chapter summaries and the recommended next
//! step — plain Chinese facts, never commands to the model, always under
//! [`HOOK_MAX_CHARS`] characters and cut only at character boundaries.

use serde::Serialize;

use super::text::{chars, cut_chars};
use crate::model::{Checkpoint, OrchestratorState};
use crate::next::{DiskFacts, LockFact, NextAction, Recommendation};
use crate::pipeline::{FileFact, stage_code_name};

pub use crate::model::checkpoint::state_name;

/// Claude Code caps hook output at 10,000 characters; the text stays below this.
pub const HOOK_MAX_CHARS: usize = 9_500;
/// Characters of one summary in the hook text.
pub const SUMMARY_CHARS: usize = 1_200;

/// Everything the hook reports (the store gathers it without schema checks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionFacts {
    pub title: Option<String>,
    /// `None` when `.checkpoint.json` could not be read (then `checkpoint_problem` says why).
    pub checkpoint: Option<Checkpoint>,
    pub checkpoint_problem: Option<String>,
    pub disk: DiskFacts,
    /// The next chapter's heading in the outline (`第48章 密信`), when found.
    pub next_outline: Option<String>,
    /// A problem with the current volume's outline, when it does not parse.
    pub outline_problem: Option<String>,
    /// (chapter, summary body), most recent first.
    pub summaries: Vec<(u32, String)>,
    /// Files that exist but could not be read or parsed.
    pub problems: Vec<String>,
    /// `startup` / `resume` / `clear` / `compact`, from the hook's stdin.
    pub source: Option<String>,
}

/// The state as the model reads it in the session text: the checkpoint's code, which the
/// skills' tables use, and the author's word (「WRITING（卷内写作）」).
pub fn state_code_name(s: OrchestratorState) -> String {
    let code = serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!("{code}（{}）", state_name(s))
}

fn fact_word(f: &FileFact) -> &'static str {
    match f {
        FileFact::Ok => "有",
        FileFact::Empty => "空",
        FileFact::Missing => "无",
        FileFact::Invalid(_) => "无法读取",
    }
}

/// Renders the hook text. `rec` is the recommendation for the same facts (None when the
/// checkpoint could not be read).
pub fn render(f: &SessionFacts, rec: Option<&Recommendation>) -> String {
    let mut head = title_line(f);
    head.push_str(&position_lines(f));
    let mut attention = match &f.checkpoint {
        Some(cp) => checkpoint_attention(f, cp, rec),
        None => vec!["断点文件无法读取，项目位置不明；novel validate 可列出具体错误".into()],
    };
    attention.extend(project_attention(f));
    if !attention.is_empty() {
        head.push_str("- 需要先处理：\n");
        for a in &attention {
            head.push_str(&format!("  - {}\n", cut_chars(a, 400)));
        }
    }
    if let Some(r) = rec {
        head.push_str(&next_step(f, r));
    }
    with_summaries(&head, &f.summaries)
}

fn title_line(f: &SessionFacts) -> String {
    format!(
        "【novel 小说项目】{}\n",
        f.title
            .as_deref()
            // A title is a line, not a payload: a huge one must not push the facts out.
            .map_or("（未命名）".to_string(), |t| format!(
                "《{}》",
                cut_chars(t.trim(), 60)
            ))
    )
}

/// Where the book stands (progress and the next outline chapter), or why that is unknown.
fn position_lines(f: &SessionFacts) -> String {
    let Some(cp) = &f.checkpoint else {
        return format!(
            "- 断点文件 .checkpoint.json 无法读取：{}。\n",
            f.checkpoint_problem.as_deref().unwrap_or("原因未知")
        );
    };
    let mut pos = format!(
        "- 进度：第 {} 卷，已完成 {} 章；编排状态 {}；流水线 {}",
        cp.current_volume,
        cp.last_completed_chapter,
        state_code_name(cp.orchestrator_state),
        stage_code_name(cp.pipeline_stage)
    );
    match cp.inflight_chapter {
        Some(n) => pos.push_str(&format!("；在写第 {n} 章")),
        None => pos.push_str("；没有在写的章节"),
    }
    pos.push_str("。\n");
    if let Some(o) = &f.next_outline {
        pos.push_str(&format!("- 大纲中的下一章：{o}。\n"));
    }
    pos
}

/// What the checkpoint says needs attention: the last error, a chapter left half written.
fn checkpoint_attention(
    f: &SessionFacts,
    cp: &Checkpoint,
    rec: Option<&Recommendation>,
) -> Vec<String> {
    let mut attention = Vec::new();
    if cp.orchestrator_state == OrchestratorState::ErrorRetry {
        attention.push(match &cp.error {
            Some(e) => format!(
                "上次出错{}：{}（novel chapter begin 从出错处继续）",
                e.chapter
                    .map_or(String::new(), |n| format!("（第 {n} 章）")),
                e.reason
            ),
            None => "编排状态为 ERROR_RETRY（出错待重试）".to_string(),
        });
    }
    if let Some(n) = cp.inflight_chapter {
        let mut w = format!(
            "⚠ 第 {n} 章写到一半，处于阶段 {}",
            stage_code_name(cp.pipeline_stage)
        );
        if let Some(st) = &f.disk.staging {
            w.push_str(&format!(
                "（staging：正文{}、摘要{}、状态增量{}、评估{}）",
                fact_word(&st.chapter_text),
                fact_word(&st.summary),
                fact_word(&st.delta),
                fact_word(&st.evaluation)
            ));
        }
        if let Some(r) = rec.filter(|r| r.chapter == Some(n)) {
            w.push_str(&format!("；恢复点：{}", r.reason));
        }
        attention.push(w);
    }
    attention
}

/// What the rest of the project says needs attention: an interrupted commit, the lock,
/// pending actions, overdue threads, style drift, unreadable files.
fn project_attention(f: &SessionFacts) -> Vec<String> {
    let mut attention = Vec::new();
    match f.disk.commit_journal {
        Some(n) if f.disk.journal_live => attention.push(format!(
            "第 {n} 章的写入正在进行（另一个 novel 命令），稍后即完成"
        )),
        Some(n) => attention.push(format!("第 {n} 章的提交被中断，尚未完成")),
        None => {}
    }
    match &f.disk.lock {
        LockFact::HeldByOther { holder, .. } => {
            attention.push(format!("项目锁被另一个会话持有：{holder}"))
        }
        LockFact::Stale { why } => attention.push(format!("项目锁已失效（僵尸锁）：{why}")),
        _ => {}
    }
    if let Some(cp) = &f.checkpoint {
        for a in &cp.pending_actions {
            let what = if a.kind == crate::next::SPEC_PROPAGATION {
                "设定变更传播，受影响的契约待复核"
            } else {
                "待处理事项"
            };
            attention.push(format!("{what}：{}（{}）", a.id, a.kind));
        }
    }
    if f.disk.overdue_foreshadowing > 0 {
        attention.push(format!(
            "{} 条短线伏笔已过计划回收区间仍未回收",
            f.disk.overdue_foreshadowing
        ));
    }
    if f.disk.style_drift_active {
        attention.push("风格漂移纠偏生效中（style-drift.json）".into());
    }
    if let Some(p) = &f.outline_problem {
        attention.push(format!("本卷大纲有问题：{p}"));
    }
    for p in &f.problems {
        attention.push(format!("无法读取：{p}"));
    }
    attention
}

/// The recommended next step (with its reason when the step does not explain itself) and
/// whether this session holds the lock.
fn next_step(f: &SessionFacts, r: &Recommendation) -> String {
    let mut t = format!(
        "- 按流程，下一步是：{}（{}）",
        r.command,
        cut_chars(&r.then, 300)
    );
    if !matches!(
        r.action,
        NextAction::RunChapterWriter
            | NextAction::RunSummarizer
            | NextAction::RunStyleRefiner
            | NextAction::RunQualityJudge
            | NextAction::RunGate
            | NextAction::Commit
            | NextAction::PolishThenCommit
            | NextAction::ReviseChapter
            | NextAction::RepairChapter
            | NextAction::MarkRepaired
            | NextAction::ReviewRepair
            | NextAction::AskAuthor
            | NextAction::RetakeLock
    ) {
        t.push_str(&format!("；原因：{}", cut_chars(&r.reason, 300)));
    }
    t.push_str("。\n");
    if let LockFact::HeldByThisSession { .. } = &f.disk.lock {
        t.push_str("- 项目锁由本会话持有（本会话的 novel 命令不必再给锁令牌）。\n");
    }
    t
}

/// The head cut to leave room, then as much of each summary as fits, then the tail line;
/// never over [`HOOK_MAX_CHARS`].
fn with_summaries(head: &str, summaries: &[(u32, String)]) -> String {
    let tail = "（以上由 novel context session-start 根据项目文件生成。）\n";
    let mut out = cut_chars(head, HOOK_MAX_CHARS - chars(tail) - 200);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if !summaries.is_empty() {
        let room = HOOK_MAX_CHARS.saturating_sub(chars(&out) + chars(tail) + 20);
        let per = (room / summaries.len())
            .saturating_sub(12)
            .min(SUMMARY_CHARS);
        if per > 40 {
            out.push_str(&format!("- 最近 {} 章摘要：\n", summaries.len()));
            for (n, body) in summaries {
                let one_line = body.split_whitespace().collect::<Vec<_>>().join(" ");
                out.push_str(&format!("  - 第 {n} 章：{}\n", cut_chars(&one_line, per)));
            }
        }
    }
    out.push_str(tail);
    // A last guard: never over the cap, whatever the inputs.
    cut_chars(&out, HOOK_MAX_CHARS)
}

/// The one line printed when the hook itself fails (it must never fail the session).
/// The one line the AUTHOR sees at launch (the hook's `systemMessage`) when the book was left
/// unfinished: a chapter half written, paused for them, failed, or a lock left behind. None
/// when there is nothing to say, and after a compaction (the author is mid-session then).
pub fn author_line(f: &SessionFacts, rec: Option<&Recommendation>) -> Option<String> {
    if f.source.as_deref() == Some("compact") {
        return None;
    }
    let (cp, rec) = (f.checkpoint.as_ref()?, rec?);
    let book = f
        .title
        .as_deref()
        .map_or_else(|| "这本书".to_string(), |t| format!("《{t}》"));
    let n = rec.chapter.or(cp.inflight_chapter)?;
    use NextAction as A;
    let line = match rec.action {
        A::Recover => format!(
            "{book}第 {n} 章上次没有收尾（提交或锁还留着）：输入 /novel:continue，我会先收拾好再接着写。"
        ),
        A::WaitForLock => format!(
            "{book}第 {n} 章正由另一个会话在写；等它写完，或确认它已关掉后输入 /novel:start 选「恢复中断的工作」。"
        ),
        A::AskAuthor => {
            format!("{book}第 {n} 章被质量门控暂停，等你拍板：输入 /novel:start 处理。")
        }
        _ if cp.orchestrator_state == OrchestratorState::ErrorRetry => format!(
            "{book}第 {n} 章上次出错{}：输入 /novel:continue 从出错处接着写。",
            cp.error
                .as_ref()
                .map_or(String::new(), |e| format!("（{}）", e.reason))
        ),
        A::RetakeLock
        | A::RunChapterWriter
        | A::RunSummarizer
        | A::MarkDrafted
        | A::RunStyleRefiner
        | A::RunQualityJudge
        | A::RunGate
        | A::Commit
        | A::PolishThenCommit
        | A::ReviseChapter => format!(
            "{book}第 {n} 章上次写到一半（{}）：输入 /novel:continue 从断点接着写。",
            crate::pipeline::stage_name(cp.pipeline_stage)
        ),
        _ => return None,
    };
    Some(format!("novel：{line}"))
}

pub fn failure_line(why: &str) -> String {
    format!(
        "【novel】项目状态暂时无法读取（{}）；可运行 novel validate 检查项目文件。\n",
        cut_chars(why, 300)
    )
}
