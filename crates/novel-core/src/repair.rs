//! 局部修补 (hook-only repair): when the gate sends a chapter back for its craft alone — an
//! ending without a hook, an opening without the chapter's problem (`crate::gate::CraftCheck`)
//! and nothing else blocks — ChapterWriter rewrites only the paragraphs the craft check reads
//! and QualityJudge re-checks only them, instead of a full revise round (draft, summary, polish,
//! an 8-dimension evaluation).
//!
//! - **Windows.** The paragraphs of the judged text a repair may replace ([`windows`]): the
//!   ending is the last paragraphs up to `craft.ending_chars` 字, at most
//!   [`ENDING_PARAGRAPHS`] ("the last one or two"); the opening the first paragraphs up to
//!   `craft.opening_chars` 字, at most [`OPENING_PARAGRAPHS`]. A paragraph is a line with prose
//!   (web-novel chapters are one paragraph per line); 字 here are its non-whitespace characters.
//! - **Splice.** The writer writes the new paragraphs of each part to its own small file; the
//!   binary puts them in place of the window ([`splice`]). A writer that edits the chapter file
//!   itself instead is held to the same scope ([`direct_edit`]): every line outside the windows
//!   must be as it was. Either way a part's new text is at most [`max_chars`] and must differ
//!   from the old.
//! - **Review.** The judge's [`RepairReview`] says, part by part, whether the problem is gone,
//!   quoting the new paragraphs ([`check_review`]); the evaluations of the round before stay
//!   (the rest of the text is unchanged) and the gate decides again with the craft check of the
//!   new text and this review.
//!
//! Pure: the store reads and writes the files; the chapter text and the thresholds come in.
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::evaluation::FixStatus;
pub use crate::model::repair::PartReason;
use crate::model::repair::{RepairPart, RepairReview};
use crate::model::settings::CraftThresholds;

/// The ending a repair rewrites is at most this many paragraphs: "the last one or two".
pub const ENDING_PARAGRAPHS: usize = 2;
/// The opening a repair rewrites is at most this many paragraphs (the first 300 字 of a web
/// novel, whose paragraphs are short).
pub const OPENING_PARAGRAPHS: usize = 4;

/// The finding of the review's contract (a part not reviewed, another chapter's review).
pub const REVIEW: &str = "E_REPAIR_REVIEW";

/// The paragraphs of one part of the judged text that a repair replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub part: RepairPart,
    /// The lines of the chapter file it spans, 0-based, end exclusive (blank lines between its
    /// paragraphs included).
    pub lines: [usize; 2],
    pub paragraphs: usize,
    /// 字: non-whitespace characters.
    pub chars: usize,
    /// Its paragraphs as the file has them, one a line.
    pub text: String,
}

/// What `novel chapter stage repairing` records of a repair round
/// (`logs/revisions/chapter-NNN/rK/repair.json`): the parts, why, the windows, and the judged
/// text they were cut from (archived beside it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepairRecord {
    pub chapter: u32,
    pub round: u32,
    /// The parts, with why each is repaired (the gate's craft finding, the judge's review).
    pub parts: Vec<PartReason>,
    pub windows: Vec<Window>,
    /// The judged text, project-relative (`…/rK/chapter-NNN.md`).
    pub base: String,
    /// `crate::pipeline::text_digest` of it.
    pub base_digest: String,
}

impl RepairRecord {
    pub fn window(&self, part: RepairPart) -> Option<&Window> {
        self.windows.iter().find(|w| w.part == part)
    }

    /// The parts repaired, opening first.
    pub fn part_names(&self) -> Vec<RepairPart> {
        self.parts.iter().map(|p| p.part).collect()
    }

    pub fn repairs(&self, part: RepairPart) -> bool {
        self.parts.iter().any(|p| p.part == part)
    }
}

/// The most 字 the new text of a part may have: twice the old, plus 200 — room for a real
/// hook, not for a new scene.
pub fn max_chars(old: usize) -> usize {
    old * 2 + 200
}

/// 字 as the windows count them.
fn chars(s: &str) -> usize {
    s.chars().filter(|c| !c.is_whitespace()).count()
}

/// A line with prose: not blank, not a Markdown heading or rule.
fn is_prose(line: &str) -> bool {
    let t = line.trim();
    let rule = t.len() >= 3 && t.chars().all(|c| matches!(c, '-' | '*' | '_' | '='));
    !(t.is_empty() || t.starts_with('#') || rule)
}

/// The line numbers of the prose paragraphs, front matter skipped.
fn prose_lines(lines: &[&str]) -> Vec<usize> {
    let mut start = 0;
    if lines.first().is_some_and(|l| l.trim() == "---")
        && let Some(end) = lines.iter().skip(1).position(|l| l.trim() == "---")
    {
        start = end + 2;
    }
    (start..lines.len())
        .filter(|&i| is_prose(lines[i]))
        .collect()
}

/// The windows of `parts` in `text` (opening first). The ending never reaches into a repaired
/// opening; a part with no paragraph left has no window.
pub fn windows(text: &str, parts: &[RepairPart], t: &CraftThresholds) -> Vec<Window> {
    let lines: Vec<&str> = text.lines().collect();
    let prose = prose_lines(&lines);
    let mut out = Vec::new();
    let mut opening_end = 0;
    if parts.contains(&RepairPart::Opening) {
        let take = take_while_short(
            prose.iter(),
            &lines,
            t.opening_chars as usize,
            OPENING_PARAGRAPHS,
        );
        opening_end = take;
        out.extend(window(RepairPart::Opening, &prose[..take], &lines));
    }
    if parts.contains(&RepairPart::Ending) {
        let rest = &prose[opening_end..];
        let take = take_while_short(
            rest.iter().rev(),
            &lines,
            t.ending_chars as usize,
            ENDING_PARAGRAPHS,
        );
        out.extend(window(
            RepairPart::Ending,
            &rest[rest.len() - take..],
            &lines,
        ));
    }
    out
}

/// How many of `paras` (in the order given) to take: until `want` 字 are covered, at most
/// `max`.
fn take_while_short<'a>(
    paras: impl Iterator<Item = &'a usize>,
    lines: &[&str],
    want: usize,
    max: usize,
) -> usize {
    let mut seen = 0;
    let mut taken = 0;
    for &i in paras {
        if taken == max || (taken > 0 && seen >= want) {
            break;
        }
        seen += chars(lines[i]);
        taken += 1;
    }
    taken
}

fn window(part: RepairPart, paras: &[usize], lines: &[&str]) -> Option<Window> {
    let (first, last) = (*paras.first()?, *paras.last()?);
    Some(Window {
        part,
        lines: [first, last + 1],
        paragraphs: paras.len(),
        chars: paras.iter().map(|&i| chars(lines[i])).sum(),
        text: paras
            .iter()
            .map(|&i| lines[i].trim_end())
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// Why a repair cannot be taken as it is (`novel chapter stage repaired`, `E_REPAIR`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The part it is about, when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<RepairPart>,
    pub message: String,
}

fn problem(part: Option<RepairPart>, message: String) -> Problem {
    Problem { part, message }
}

/// The problems, one a line.
pub fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("- {}\n", p.message))
        .collect()
}

/// The prose lines of a part's new text (blank lines dropped), or why it cannot go in.
fn new_paragraphs(part: RepairPart, text: &str, old: &Window) -> Result<Vec<String>, Problem> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|l| l.trim_start().starts_with('#')) {
        return Err(problem(
            Some(part),
            format!("{}的修补稿里有标题行：只写替换的正文段落", part.label()),
        ));
    }
    let paras: Vec<String> = lines
        .iter()
        .filter(|l| is_prose(l))
        .map(|l| l.trim_end().to_string())
        .collect();
    size_problem(part, &paras.join("\n"), old).map_or(Ok(paras), Err)
}

/// A part's new text that is empty, too long, or the old one again.
fn size_problem(part: RepairPart, new: &str, old: &Window) -> Option<Problem> {
    let n = chars(new);
    let label = part.label();
    if n == 0 {
        return Some(problem(Some(part), format!("{label}的修补稿是空的")));
    }
    if n > max_chars(old.chars) {
        return Some(problem(
            Some(part),
            format!(
                "{label}的修补稿 {n} 字，超过上限 {}（原来这 {} 段 {} 字）：局部修补只重写这几段，不加新场景",
                max_chars(old.chars),
                old.paragraphs,
                old.chars
            ),
        ));
    }
    let same = |a: &str, b: &str| {
        a.chars()
            .filter(|c| !c.is_whitespace())
            .eq(b.chars().filter(|c| !c.is_whitespace()))
    };
    same(new, &old.text).then(|| {
        problem(
            Some(part),
            format!("{label}的修补稿和原来的一字不差：这几段必须改写"),
        )
    })
}

/// `base` with each window replaced by its part's new paragraphs (`new`: part → text as the
/// writer wrote it). Paragraphs keep the base's spacing (a blank line between paragraphs when
/// the base has one).
pub fn splice(
    base: &str,
    windows: &[Window],
    new: &[(RepairPart, String)],
) -> Result<String, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut parts: Vec<(&Window, Vec<String>)> = Vec::new();
    for w in windows {
        let Some((_, text)) = new.iter().find(|(p, _)| *p == w.part) else {
            problems.push(problem(
                Some(w.part),
                format!("没有{}的修补稿", w.part.label()),
            ));
            continue;
        };
        match new_paragraphs(w.part, text, w) {
            Ok(paras) => parts.push((w, paras)),
            Err(p) => problems.push(p),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
    let blank = blank_separated(&lines);
    // Last window first, so the earlier windows' line numbers still hold.
    parts.sort_by_key(|(w, _)| std::cmp::Reverse(w.lines[0]));
    for (w, paras) in parts {
        let mut with_gaps = Vec::new();
        for (i, p) in paras.into_iter().enumerate() {
            if i > 0 && blank {
                with_gaps.push(String::new());
            }
            with_gaps.push(p);
        }
        lines.splice(w.lines[0]..w.lines[1].min(lines.len()), with_gaps);
    }
    let mut out = lines.join("\n");
    if base.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Whether the text separates its paragraphs with a blank line.
fn blank_separated(lines: &[String]) -> bool {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let prose = prose_lines(&refs);
    prose.windows(2).any(|w| w[1] > w[0] + 1)
}

/// The writer edited the chapter file itself (`now`): every line outside the windows must be as
/// in `base` (trailing spaces and blank lines at the end aside), and each changed window within
/// [`max_chars`]. The problems say where it went outside.
pub fn direct_edit(base: &str, now: &str, windows: &[Window]) -> Result<(), Vec<Problem>> {
    let b: Vec<&str> = base.trim_end().lines().map(str::trim_end).collect();
    let n: Vec<&str> = now.trim_end().lines().map(str::trim_end).collect();
    let prefix = b.iter().zip(&n).take_while(|(x, y)| x == y).count();
    let max_suffix = b.len().min(n.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (from, to) = (prefix, b.len() - suffix);
    let Some(w) = windows
        .iter()
        .find(|w| w.lines[0] <= from && to <= w.lines[1])
    else {
        let line = (from..to)
            .find(|i| !windows.iter().any(|w| w.lines[0] <= *i && *i < w.lines[1]))
            .unwrap_or(from);
        let shown: String = b.get(line).unwrap_or(&"").chars().take(30).collect();
        return Err(vec![problem(
            None,
            format!(
                "正文第 {} 行（「{shown}」）在修补范围之外被改动了：局部修补只能改{}",
                line + 1,
                windows
                    .iter()
                    .map(|w| format!(
                        "{}（第 {}–{} 行）",
                        w.part.label(),
                        w.lines[0] + 1,
                        w.lines[1]
                    ))
                    .collect::<Vec<_>>()
                    .join("和")
            ),
        )]);
    };
    let new_text = n[w.lines[0]..n.len() - (b.len() - w.lines[1])].join("\n");
    match size_problem(w.part, &new_text, w) {
        Some(p) => Err(vec![p]),
        None => Ok(()),
    }
}

/// The paragraphs of `now` that `base` does not have: what a repair wrote.
pub fn new_text(base: &str, now: &str) -> String {
    let old: std::collections::HashSet<&str> = base.lines().map(str::trim).collect();
    now.lines()
        .filter(|l| is_prose(l) && !old.contains(l.trim()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every finding about the judge's review `r` (`file`) of the repair `record`, whose new
/// paragraphs are `written` ([`new_text`]): another chapter, a part not reviewed (errors), a
/// part that was not repaired (a warning), evidence not quoted from the new paragraphs
/// (`E_EVAL_QUOTE`).
pub fn check_review(
    r: &RepairReview,
    record: &RepairRecord,
    file: &str,
    written: &str,
    normalize: &dyn Fn(&str) -> String,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let finding = |severity, message: String, pointer: String| {
        Diagnostic::new(
            REVIEW,
            severity,
            file,
            message,
            "资料包 <repair> 段列出的每一处各写一条 reviews：{\"part\": \"ending\", \"status\": \"done|partly|not_done\", \"evidence\": 新段落原句}",
        )
        .at_pointer(pointer)
        .for_chapter(record.chapter)
    };
    if r.chapter != record.chapter {
        out.push(finding(
            Severity::Error,
            format!(
                "复核写的是第 {} 章，修补的是第 {} 章",
                r.chapter, record.chapter
            ),
            "/chapter".into(),
        ));
    }
    for part in record.part_names() {
        if !r.reviews.iter().any(|v| v.part == part) {
            out.push(finding(
                Severity::Error,
                format!("没有复核{}（本轮修补了它）", part.label()),
                "/reviews".into(),
            ));
        }
    }
    for (i, v) in r.reviews.iter().enumerate() {
        if !record.repairs(v.part) {
            out.push(finding(
                Severity::Warning,
                format!("本轮没有修补{}，这条复核不算", v.part.label()),
                format!("/reviews/{i}/part"),
            ));
        }
        let missing = crate::judging::missing_quotes(&v.evidence, written, normalize);
        if !missing.is_empty() {
            out.push(
                crate::judging::quote_finding(
                    file,
                    &missing,
                    "修补写的新段落",
                    &format!("/reviews/{i}/evidence"),
                )
                .for_chapter(record.chapter),
            );
        }
    }
    out
}

/// The parts the review does not call done, with the judge's reason: the gate treats them as
/// a craft check that failed.
pub fn not_done(r: &RepairReview, parts: &[RepairPart]) -> Vec<(RepairPart, String)> {
    parts
        .iter()
        .filter_map(|p| {
            let v = r.reviews.iter().find(|v| v.part == *p)?;
            (v.status != FixStatus::Done).then(|| {
                let why = if v.reason.trim().is_empty() {
                    v.status.label().to_string()
                } else {
                    format!("{}：{}", v.status.label(), v.reason.trim())
                };
                (*p, format!("评审复核{}{why}", p.label()))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "# 第5章 雨夜\n\n雨下了一夜，陆尘守在破庙门口，等那个送信的人。\n\n他听见脚步声从巷口传来，又停了。\n\n“谁？”没有人应。\n\n他把信收进怀里，心想：明天的事，明天再说。\n\n他知道，真正的考验才刚刚开始。\n";

    fn t() -> CraftThresholds {
        CraftThresholds::default()
    }

    #[test]
    fn the_ending_window_is_the_last_one_or_two_paragraphs() {
        let w = windows(BASE, &[RepairPart::Ending], &t());
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].paragraphs, ENDING_PARAGRAPHS);
        assert_eq!(w[0].lines, [8, 11]);
        assert!(w[0].text.starts_with("他把信收进怀里"), "{}", w[0].text);
        // A last paragraph longer than craft.ending_chars is the window alone.
        let long = format!("{BASE}\n{}\n", "夜色里有人影一闪，".repeat(30));
        let w = windows(&long, &[RepairPart::Ending], &t());
        assert_eq!(w[0].paragraphs, 1);
    }

    #[test]
    fn the_opening_window_covers_the_first_300_zi_at_most_four_paragraphs() {
        let w = windows(BASE, &[RepairPart::Opening, RepairPart::Ending], &t());
        assert_eq!(w[0].part, RepairPart::Opening);
        assert_eq!(w[0].paragraphs, OPENING_PARAGRAPHS);
        // The ending never reaches into the opening: one paragraph is left for it.
        assert_eq!(w[1].paragraphs, 1);
        assert_eq!(w[1].lines, [10, 11]);
    }

    #[test]
    fn a_splice_replaces_the_window_and_keeps_the_rest() {
        let w = windows(BASE, &[RepairPart::Ending], &t());
        let new = "他刚把信收好，庙门外那盏灯笼忽然灭了。\n\n黑暗里有人低声叫他的小名——那是他死去七年的师父的声音。\n";
        let out = splice(BASE, &w, &[(RepairPart::Ending, new.to_string())]).unwrap();
        assert!(out.starts_with("# 第5章 雨夜\n\n雨下了一夜"));
        assert!(out.ends_with("师父的声音。\n"), "{out}");
        assert!(!out.contains("真正的考验"));
        assert!(out.contains("门口，等那个送信的人。\n\n他听见脚步声"));
        assert!(out.contains("没有人应。\n\n他刚把信收好"), "{out}");
        direct_edit(BASE, &out, &w).unwrap();
    }

    #[test]
    fn a_splice_refuses_an_empty_a_long_or_an_unchanged_part() {
        let w = windows(BASE, &[RepairPart::Ending], &t());
        for (new, what) in [
            ("\n\n", "空的"),
            (&*"新的一段。".repeat(100), "超过上限"),
            (&*w[0].text.clone(), "一字不差"),
            ("# 第5章\n有人敲门。", "标题"),
        ] {
            let e = splice(BASE, &w, &[(RepairPart::Ending, new.to_string())]).unwrap_err();
            assert!(e[0].message.contains(what), "{what}: {e:?}");
        }
        let e = splice(BASE, &w, &[]).unwrap_err();
        assert!(e[0].message.contains("没有结尾的修补稿"), "{e:?}");
    }

    #[test]
    fn a_direct_edit_outside_the_window_is_refused() {
        let w = windows(BASE, &[RepairPart::Ending], &t());
        let inside = BASE.replace(
            "真正的考验才刚刚开始。",
            "门外有人喊他的名字——是死去的师父。",
        );
        direct_edit(BASE, &inside, &w).unwrap();
        let outside = inside.replace("雨下了一夜", "雪下了一夜");
        let e = direct_edit(BASE, &outside, &w).unwrap_err();
        assert!(e[0].message.contains("第 3 行"), "{e:?}");
        assert!(e[0].message.contains("结尾（第 9–11 行）"), "{e:?}");
    }

    #[test]
    fn the_new_text_is_what_the_repair_wrote() {
        let now = BASE.replace("他知道，真正的考验才刚刚开始。", "门外有人喊他的名字。");
        assert_eq!(new_text(BASE, &now), "门外有人喊他的名字。");
    }

    #[test]
    fn a_review_must_cover_every_part_and_quote_the_new_paragraphs() {
        let record = RepairRecord {
            chapter: 5,
            round: 1,
            parts: vec![PartReason {
                part: RepairPart::Ending,
                reason: "章末是总结".into(),
            }],
            windows: windows(BASE, &[RepairPart::Ending], &t()),
            base: "logs/revisions/chapter-005/r1/chapter-005.md".into(),
            base_digest: String::new(),
        };
        let review: RepairReview = serde_json::from_value(serde_json::json!({
            "chapter": 5,
            "reviews": [{"part": "ending", "status": "done", "evidence": "门外有人喊他的名字", "hook_type": "悬念"}]
        }))
        .unwrap();
        let plain = |s: &str| s.to_string();
        let f = "staging/evaluations/chapter-005-repair.json";
        assert!(check_review(&review, &record, f, "门外有人喊他的名字。", &plain).is_empty());
        // Quoting the old ending is not a review of the new one.
        let old = check_review(&review, &record, f, "真正的考验才刚刚开始。", &plain);
        assert_eq!(old[0].code, "E_EVAL_QUOTE", "{old:?}");
        let mut other = review.clone();
        other.chapter = 6;
        other.reviews[0].part = RepairPart::Opening;
        let codes: Vec<(String, bool)> =
            check_review(&other, &record, f, "门外有人喊他的名字。", &plain)
                .iter()
                .map(|d| (d.code.to_string(), d.is_error()))
                .collect();
        assert!(codes.contains(&(REVIEW.to_string(), true)), "{codes:?}");
        assert!(codes.contains(&(REVIEW.to_string(), false)), "{codes:?}");
        assert!(not_done(&review, &record.part_names()).is_empty());
        let mut failed = review;
        failed.reviews[0].status = FixStatus::Partly;
        failed.reviews[0].reason = "还是在总结".into();
        let nd = not_done(&failed, &record.part_names());
        assert_eq!(nd[0].0, RepairPart::Ending);
        assert!(nd[0].1.contains("还是在总结"), "{nd:?}");
    }
}
