//! Small text helpers shared by the packets and the hook: cutting at character boundaries,
//! reading summary front matter and memory bodies, compact one-line renderings of JSON.

use serde_json::Value;

/// At most `max` characters of `s` (never a byte cut); a cut is marked with `…`.
pub fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some(_) if max == 0 => String::new(),
        Some(_) => {
            let end = s
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..end])
        }
    }
}

/// Number of characters.
pub fn chars(s: &str) -> usize {
    s.chars().count()
}

/// A summary file: its front matter (`chapter`, `storyline_id`) and its body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryParts {
    pub chapter: Option<u32>,
    pub storyline: Option<String>,
    pub body: String,
}

/// Splits `---\nchapter: 48\nstoryline_id: main_arc\n---\n正文` (front matter optional, read
/// by [`crate::frontmatter::parse`]); `storyline` is accepted for `storyline_id`, and only a
/// slug counts.
pub fn summary_parts(text: &str) -> SummaryParts {
    let mut out = SummaryParts::default();
    let body_start = match crate::frontmatter::parse(text) {
        Some(fm) => {
            out.chapter = fm.get("chapter").and_then(|v| v.parse().ok());
            out.storyline = fm
                .get("storyline_id")
                .or_else(|| fm.get("storyline"))
                .filter(|s| crate::model::is_slug(s))
                .map(str::to_string);
            fm.body_start
        }
        None => 0,
    };
    let text = crate::validate::strip_bom(&text[body_start..]);
    out.body = text.trim().to_string();
    // A summary usually opens with its own `# 第N章摘要` heading: the packet says which
    // chapter it is already.
    if out.body.starts_with('#') {
        out.body = out
            .body
            .split_once('\n')
            .map_or("", |(_, rest)| rest)
            .trim()
            .to_string();
    }
    out
}

/// The facts of a `memory.md`: level-1 title lines and HTML comments dropped, trimmed.
pub fn memory_body(text: &str) -> String {
    let text = crate::validate::strip_bom(text);
    let mut out = String::new();
    let mut in_comment = false;
    for line in text.lines() {
        let mut l = line.to_string();
        if in_comment {
            match l.find("-->") {
                Some(i) => {
                    l = l[i + 3..].to_string();
                    in_comment = false;
                }
                None => continue,
            }
        }
        while let Some(start) = l.find("<!--") {
            match l[start..].find("-->") {
                Some(end) => l.replace_range(start..start + end + 3, ""),
                None => {
                    l.truncate(start);
                    in_comment = true;
                }
            }
        }
        if l.trim_start().starts_with("# ") {
            continue;
        }
        // Runs of blank lines (empty template sections) collapse to one.
        if l.trim().is_empty() && (out.is_empty() || out.ends_with("\n\n")) {
            continue;
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out.trim().to_string()
}

/// `a=1；b=魔都` — a compact rendering of a JSON object's fields for prompts.
pub fn compact(value: &Value, max_chars: usize) -> String {
    let s = match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", scalar(v)))
            .collect::<Vec<_>>()
            .join("；"),
        other => scalar(other),
    };
    cut_chars(&s, max_chars)
}

/// Like [`compact`], but long arrays keep only their last `tail` elements and nested objects
/// their first `tail` entries, so a character's state does not grow with the chapter count
/// (an inventory of 60 items shows the latest 8 and says how many more there are).
pub fn compact_tail(value: &Value, tail: usize, max_chars: usize) -> String {
    let shorten = |v: &Value| -> String {
        match v {
            Value::Array(items) if items.len() > tail => format!(
                "{}（另有 {} 项较早的）",
                scalar(&Value::Array(items[items.len() - tail..].to_vec())),
                items.len() - tail
            ),
            Value::Object(map) if map.len() > tail => {
                let head: serde_json::Map<String, Value> = map
                    .iter()
                    .take(tail)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                format!("{}（另有 {} 项）", Value::Object(head), map.len() - tail)
            }
            other => scalar(other),
        }
    };
    let s = match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", shorten(v)))
            .collect::<Vec<_>>()
            .join("；"),
        other => shorten(other),
    };
    cut_chars(&s, max_chars)
}

/// A JSON value as prompt text: strings bare, everything else as compact JSON.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            format!(
                "[{}]",
                items.iter().map(scalar).collect::<Vec<_>>().join("、")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_character_boundaries() {
        assert_eq!(cut_chars("陆尘看向远方", 3), "陆尘…");
        assert_eq!(cut_chars("陆尘", 2), "陆尘");
        assert_eq!(cut_chars("陆尘", 0), "");
        assert_eq!(chars(&cut_chars(&"字".repeat(100), 10)), 10);
    }

    #[test]
    fn front_matter() {
        let p = summary_parts(
            "---\nchapter: 48\nstoryline_id: main_arc\n---\n# 第48章摘要\n陆尘发现密信。\n",
        );
        assert_eq!(p.chapter, Some(48));
        assert_eq!(p.storyline.as_deref(), Some("main_arc"));
        assert_eq!(p.body, "陆尘发现密信。");
        let plain = summary_parts("陆尘发现密信。");
        assert_eq!(plain.chapter, None);
        assert_eq!(plain.body, "陆尘发现密信。");
        // CRLF line ends: the body starts after the closing fence, not a few bytes early.
        let crlf = summary_parts(
            "---\r\nchapter: 48\r\nstoryline_id: main_arc\r\n---\r\n陆尘发现密信。\r\n",
        );
        assert_eq!(
            (crlf.chapter, crlf.body.as_str()),
            (Some(48), "陆尘发现密信。")
        );
        // An opening fence never closed is not front matter: nothing is read from it.
        let open = summary_parts("---\nchapter: 48\n陆尘发现密信。");
        assert_eq!(open.chapter, None);
        assert_eq!(open.body, "---\nchapter: 48\n陆尘发现密信。");
    }

    #[test]
    fn memory_without_title_and_comments() {
        let m =
            memory_body("# 主线 · 故事线记忆\n\n<!-- ≤500 字 -->\n陆尘身在魔都。\n- 密信在手\n");
        assert_eq!(m, "陆尘身在魔都。\n- 密信在手");
    }
}
