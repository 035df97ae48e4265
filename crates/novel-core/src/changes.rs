//! StyleRefiner's change list (`staging/logs/chapter-NNN-edits.md`): what it would change in
//! the staged chapter, one item per change, which the program applies (`novel chapter stage
//! refined|polished`) and checks as the refiner writes it (the PostToolUse hook). The refiner
//! reads the text in its packet and writes the list in the message it starts with, instead of
//! reading the file and editing it in place round by round.
//!
//! The list is Markdown, as the author reads it in `logs/chapter-NNN-changes.md` afterwards:
//!
//! ```text
//! - 原：赵天磊眸底闪过一丝阴鸷，折扇在掌心轻轻一敲。
//!   改：赵天磊把折扇合上，在掌心敲了一下。
//!   因：黑名单
//! ```
//!
//! `原` is copied from the staged text and must occur there exactly once (whitespace at its
//! ends ignored); `改` replaces it (empty, or 「（删去）」, deletes it); `因` is free text. Items
//! may not overlap. Lines outside items (a heading, a note) are ignored.
//!
//! Layer: ground (the lowest: no file model, no rules).

use serde::Serialize;

/// One change of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// 1-based position in the list.
    pub item: usize,
    pub from: String,
    pub to: String,
    pub why: String,
}

/// Why a change cannot be applied (in Chinese, for the refiner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub item: usize,
    pub message: String,
}

/// What stands for a deletion in `改`.
const DELETED: [&str; 4] = ["（删去）", "（删除）", "(删去)", "(删除)"];

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line
        .trim_start()
        .trim_start_matches(['-', '*'])
        .trim_start();
    rest.strip_prefix(key)
        .and_then(|r| r.strip_prefix('：').or_else(|| r.strip_prefix(':')))
}

/// The items of a change list; an item without its `改` line is a problem.
pub fn parse(text: &str) -> Result<Vec<Change>, Vec<Problem>> {
    let mut items: Vec<(Option<String>, Option<String>, String)> = Vec::new();
    for line in text.lines() {
        if let Some(v) = field(line, "原") {
            items.push((Some(v.trim().to_string()), None, String::new()));
        } else if let Some(v) = field(line, "改") {
            // A bullet starts an item: 「- 改：」 is an item without its 原, never the 改 of
            // the item before.
            let bullet = line.trim_start().starts_with(['-', '*']);
            match items.last_mut() {
                Some((_, to @ None, _)) if !bullet => *to = Some(v.trim().to_string()),
                _ => items.push((None, Some(v.trim().to_string()), String::new())),
            }
        } else if let Some(v) = field(line, "因")
            && let Some(last) = items.last_mut()
        {
            last.2 = v.trim().to_string();
        }
    }
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, (from, to, why)) in items.into_iter().enumerate() {
        let item = i + 1;
        match (from, to) {
            (Some(from), Some(to)) if !from.is_empty() => {
                let to = if DELETED.contains(&to.as_str()) {
                    String::new()
                } else {
                    to
                };
                out.push(Change {
                    item,
                    from,
                    to,
                    why,
                });
            }
            (Some(_), Some(_)) => problems.push(Problem {
                item,
                message: "「原：」是空的：抄下要改的那一句".into(),
            }),
            (Some(_), None) => problems.push(Problem {
                item,
                message: "有「原：」没有「改：」：删去写「改：（删去）」".into(),
            }),
            (None, _) => problems.push(Problem {
                item,
                message: "有「改：」没有前面的「原：」".into(),
            }),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// Excerpt of `s` for a message (at most 30 characters).
fn excerpt(s: &str) -> String {
    let mut t: String = s.chars().take(30).collect();
    if s.chars().count() > 30 {
        t.push('…');
    }
    t
}

/// `text` with every change applied; each `原` must occur exactly once and no two may overlap.
pub fn apply(text: &str, changes: &[Change]) -> Result<String, Vec<Problem>> {
    let mut spans: Vec<(usize, usize, &Change)> = Vec::new();
    let mut problems = Vec::new();
    for c in changes {
        let mut found = text.match_indices(c.from.as_str());
        match (found.next(), found.next()) {
            (Some((at, _)), None) => spans.push((at, at + c.from.len(), c)),
            (None, _) => problems.push(Problem {
                item: c.item,
                message: format!(
                    "「{}」在正文里找不到：「原：」要从正文一字不改地抄（标点、空格都算）",
                    excerpt(&c.from)
                ),
            }),
            (Some(_), Some(_)) => problems.push(Problem {
                item: c.item,
                message: format!(
                    "「{}」在正文里不止一处：多抄几个字，让它只对得上一处",
                    excerpt(&c.from)
                ),
            }),
        }
    }
    spans.sort_by_key(|s| s.0);
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            problems.push(Problem {
                item: w[1].2.item,
                message: format!("与第 {} 条改的是同一段文字：合成一条", w[0].2.item),
            });
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.item);
        return Err(problems);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, c) in spans {
        out.push_str(&text[at..start]);
        out.push_str(&c.to);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The problems as the refiner reads them, one line each.
pub fn describe(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("- 第 {} 条：{}\n", p.item, p.message))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "# 第1章\n\n他深吸一口气。门开了。\n\n老周的声音不大，却清晰地传进每个人耳中。他笑了。\n";

    #[test]
    fn a_list_is_applied_in_place() {
        let list = "# 修改清单\n\n- 原：他深吸一口气。\n  改：他把气喘匀了。\n  因：黑名单\n- 原：老周的声音不大，却清晰地传进每个人耳中。\n  改：（删去）\n  因：句式\n";
        let changes = parse(list).unwrap();
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[1].to, "");
        assert_eq!(changes[0].why, "黑名单");
        let out = apply(TEXT, &changes).unwrap();
        assert_eq!(out, "# 第1章\n\n他把气喘匀了。门开了。\n\n他笑了。\n");
        // Half-width colons and `*` bullets read the same.
        let alt = "* 原: 门开了。\n  改: 门开了一条缝。\n";
        assert_eq!(
            apply(TEXT, &parse(alt).unwrap()).unwrap(),
            TEXT.replace("门开了。", "门开了一条缝。")
        );
    }

    #[test]
    fn a_change_that_does_not_match_once_is_refused() {
        let changes = parse("- 原：他深吸两口气。\n  改：x\n- 原：他\n  改：y\n- 原：门开了。\n  改：z\n- 原：门开\n  改：w\n").unwrap();
        let problems = apply(TEXT, &changes).unwrap_err();
        let items: Vec<usize> = problems.iter().map(|p| p.item).collect();
        assert_eq!(items, [1, 2, 4], "{problems:?}");
        assert!(problems[0].message.contains("找不到"), "{problems:?}");
        assert!(problems[1].message.contains("不止一处"), "{problems:?}");
        assert!(problems[2].message.contains("第 3 条"), "{problems:?}");
    }

    #[test]
    fn a_broken_item_is_named() {
        let problems = parse("- 原：门开了。\n  因：黑名单\n- 改：多出来的\n").unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(describe(&problems).contains("第 1 条"), "{problems:?}");
    }
}
