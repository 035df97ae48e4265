//! YAML front matter at the top of a Markdown file (summaries, chapters): the one parser.
//!
//! A block is front matter when the first line (after a BOM) is `---`, a later line is `---`
//! or `...`, and the lines between look like YAML: at least one `key: value` with an ASCII key
//! (letters, digits, `_`, `-`), every other non-blank line a list item (`- …`), a comment
//! (`# …`) or indented. So a chapter that opens with a `---` scene break around prose is not
//! front matter, and neither is an opening `---` never closed. Lines end in `\n` or `\r\n`.
//! Only flat `key: value` pairs are read (values trimmed, one pair of quotes removed); nested
//! values are skipped.
//!
//! Layer: ground (the lowest: no file model, no rules).

/// The front matter of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter<'a> {
    /// Top-level `key: value` pairs in file order (a bare `key:` has an empty value).
    pub fields: Vec<(&'a str, &'a str)>,
    /// Lines the block takes, both fences included.
    pub lines: usize,
    /// Byte offset in the text (BOM included) where the body starts.
    pub body_start: usize,
}

impl<'a> FrontMatter<'a> {
    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// The front matter of `text`, if it has one.
pub fn parse(text: &str) -> Option<FrontMatter<'_>> {
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut offset = bom;
    let mut lines = text[bom..].split_inclusive('\n').map(|raw| {
        let start = offset;
        offset += raw.len();
        (start + raw.len(), raw.trim_end_matches(['\n', '\r']))
    });
    let (_, first) = lines.next()?;
    if first.trim() != "---" {
        return None;
    }
    let mut block = Vec::new();
    for (end, line) in lines {
        if matches!(line.trim(), "---" | "...") {
            let fields = yaml_fields(&block)?;
            return Some(FrontMatter {
                fields,
                lines: block.len() + 2,
                body_start: end,
            });
        }
        block.push(line);
    }
    None
}

/// The flat pairs of a YAML-looking block; `None` when a line is not YAML or no key is found.
fn yaml_fields<'a>(block: &[&'a str]) -> Option<Vec<(&'a str, &'a str)>> {
    let mut fields = Vec::new();
    for line in block {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with([' ', '\t', '#']) || line.starts_with("- ") {
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let key_ok = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !key_ok || !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        fields.push((key, unquote(rest.trim())));
    }
    (!fields.is_empty()).then_some(fields)
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_front_matter() {
        let text = "---\nchapter: 48\nstoryline_id: \"main_arc\"\ntags:\n  - 雨夜\n---\n正文";
        let fm = parse(text).unwrap();
        assert_eq!(fm.get("chapter"), Some("48"));
        assert_eq!(fm.get("storyline_id"), Some("main_arc"));
        assert_eq!(fm.get("tags"), Some(""));
        assert_eq!(fm.lines, 6);
        assert_eq!(&text[fm.body_start..], "正文");
    }

    #[test]
    fn edge_cases() {
        // (input, chapter, body) — `None` chapter with body `None`: no front matter at all.
        let cases: [(&str, Option<&str>, Option<&str>); 10] = [
            ("正文", None, None),
            ("", None, None),
            ("---\nchapter: 1\n正文", None, None),
            ("---\nchapter: 1", None, None),
            (
                "---\r\nchapter: 2\r\n---\r\n正文\r\n",
                Some("2"),
                Some("正文\r\n"),
            ),
            (
                "\u{feff}---\nchapter: 3\n---\n正文",
                Some("3"),
                Some("正文"),
            ),
            ("---\nchapter: 4\n...\n正文", Some("4"), Some("正文")),
            ("---\nchapter: 5\n---", Some("5"), Some("")),
            ("---\n雨停了。\n他推开门。\n---\n天亮了。", None, None),
            ("---\n\n---\n正文", None, None),
        ];
        for (input, chapter, body) in cases {
            let fm = parse(input);
            assert_eq!(
                fm.as_ref().and_then(|f| f.get("chapter")),
                chapter,
                "{input:?}"
            );
            assert_eq!(fm.map(|f| &input[f.body_start..]), body, "{input:?}");
        }
        // A key that is not a YAML key, or no space after the colon: not front matter.
        assert_eq!(parse("---\n老周说: 走\n---\n"), None);
        assert_eq!(parse("---\nurl:http\n---\n"), None);
        assert_eq!(
            parse("---\ntitle: 雨夜 # 注释\n- 列表\n...\n正文")
                .unwrap()
                .lines,
            4
        );
    }
}
