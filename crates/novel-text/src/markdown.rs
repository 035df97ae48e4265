//! What in a chapter file is Markdown rather than prose: front matter, heading markers,
//! list and quote markers, emphasis, links, HTML comments and tags, code. One scan over the
//! characters marks each one; counting and lint then skip what is marked.
//!
//! Chapters are one paragraph per line (the web-novel convention), so the scan is line based.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

/// Inside a front-matter block (`---` … `---` at the top of the file).
pub const FRONT: u8 = 1;
/// Markdown syntax (`#`, `**`, `[`, `](url)`, `- `, `<!-- -->`, fenced code …).
pub const MARKUP: u8 = 2;
/// The text of a heading line (a chapter title), not body prose.
pub const HEADING: u8 = 4;

/// A line: `[start, end)` in characters, without its `\n`.
pub type Line = (usize, usize);

/// Splits `chars` into lines (the `\n` excluded; a `\r` before it stays in the line).
pub fn lines(chars: &[char]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, chars.len()));
    out
}

fn trimmed(chars: &[char]) -> String {
    chars.iter().collect::<String>().trim().to_string()
}

/// Marks every character of `chars` with [`FRONT`], [`MARKUP`] or [`HEADING`] (or nothing).
pub fn scan(chars: &[char], lines: &[Line]) -> Vec<u8> {
    let mut flags = vec![0u8; chars.len()];
    let mut first_body_line = 0;

    // Front matter as `novel_core::frontmatter` reads it (a chapter that opens with a `---`
    // scene break is not front matter); the text is rebuilt only when the first line is `---`.
    if let Some(&(s, e)) = lines.first()
        && trimmed(&chars[s..e]).trim_start_matches('\u{feff}') == "---"
        && let Some(fm) = novel_core::frontmatter::parse(&chars.iter().collect::<String>())
    {
        let last = fm.lines - 1;
        let end = if last + 1 < lines.len() {
            lines[last + 1].0
        } else {
            chars.len()
        };
        flags[..end].fill(FRONT);
        first_body_line = last + 1;
    }

    let mut in_fence: Option<char> = None;
    let mut in_comment = false;
    for &(s, e) in &lines[first_body_line.min(lines.len())..] {
        let line = &chars[s..e];
        let lead = line.iter().take_while(|c| **c == ' ').count();
        let rest = &line[lead.min(line.len())..];
        // Fenced code: the fences and everything between them.
        if let Some(f) = in_fence {
            flags[s..e].fill(MARKUP);
            if rest.len() >= 3 && rest[..3].iter().all(|c| *c == f) {
                in_fence = None;
            }
            continue;
        }
        if lead <= 3
            && rest.len() >= 3
            && matches!(rest[0], '`' | '~')
            && rest[..3].iter().all(|c| *c == rest[0])
        {
            in_fence = Some(rest[0]);
            flags[s..e].fill(MARKUP);
            continue;
        }
        if !in_comment && lead <= 3 && is_thematic_break(rest) {
            flags[s..e].fill(MARKUP);
            continue;
        }
        let mut i = s;
        if !in_comment {
            i = block_markers(chars, s, e, &mut flags);
        }
        inline(chars, i, e, &mut flags, &mut in_comment);
    }
    flags
}

fn is_thematic_break(rest: &[char]) -> bool {
    if !rest.first().is_some_and(|c| matches!(c, '-' | '*' | '_')) {
        return false;
    }
    let marks: Vec<char> = rest
        .iter()
        .copied()
        .filter(|c| !c.is_whitespace())
        .collect();
    marks.len() >= 3 && matches!(marks[0], '-' | '*' | '_') && marks.iter().all(|c| *c == marks[0])
}

/// Marks heading, quote and list markers at the start of a line; returns where inline text starts.
fn block_markers(chars: &[char], s: usize, e: usize, flags: &mut [u8]) -> usize {
    let mut i = s;
    while i < e && chars[i] == ' ' && i - s < 3 {
        i += 1;
    }
    // Block quotes, possibly nested.
    while i < e && chars[i] == '>' {
        flags[i] = MARKUP;
        i += 1;
        if i < e && chars[i] == ' ' {
            i += 1;
        }
    }
    // ATX heading: 1–6 `#` then a space or the end of the line.
    let hashes = chars[i..e].iter().take_while(|c| **c == '#').count();
    if (1..=6).contains(&hashes) && (i + hashes == e || chars[i + hashes].is_whitespace()) {
        flags[i..i + hashes].fill(MARKUP);
        let text_start = i + hashes;
        // A closing run of `#` preceded by a space is syntax too.
        let mut end = e;
        while end > text_start && chars[end - 1].is_whitespace() {
            end -= 1;
        }
        let mut close = end;
        while close > text_start && chars[close - 1] == '#' {
            close -= 1;
        }
        if close < end && (close == text_start || chars[close - 1] == ' ') {
            flags[close..end].fill(MARKUP);
            end = close;
        }
        for f in &mut flags[text_start..end] {
            *f = HEADING;
        }
        return text_start;
    }
    // List markers: `-`, `*`, `+` or `1.` / `1)` followed by a space.
    if i < e && matches!(chars[i], '-' | '*' | '+') && i + 1 < e && chars[i + 1] == ' ' {
        flags[i] = MARKUP;
        return i + 1;
    }
    let digits = chars[i..e]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if (1..=9).contains(&digits)
        && i + digits + 1 < e
        && matches!(chars[i + digits], '.' | ')')
        && chars[i + digits + 1] == ' '
    {
        flags[i..=i + digits].fill(MARKUP);
        return i + digits + 1;
    }
    i
}

fn find(chars: &[char], from: usize, end: usize, pat: &[char]) -> Option<usize> {
    (from..end.saturating_sub(pat.len() - 1)).find(|&k| chars[k..k + pat.len()] == *pat)
}

/// Inline syntax from `i` to the end of the line.
fn inline(chars: &[char], mut i: usize, e: usize, flags: &mut [u8], in_comment: &mut bool) {
    while i < e {
        if *in_comment {
            match find(chars, i, e, &['-', '-', '>']) {
                Some(k) => {
                    flags[i..k + 3].fill(MARKUP);
                    *in_comment = false;
                    i = k + 3;
                }
                None => {
                    flags[i..e].fill(MARKUP);
                    return;
                }
            }
            continue;
        }
        let c = chars[i];
        match c {
            '\\' if i + 1 < e && chars[i + 1].is_ascii_punctuation() => {
                flags[i] = MARKUP;
                i += 2;
            }
            '<' if chars[i..e].starts_with(&['<', '!', '-', '-']) => {
                *in_comment = true;
                flags[i..i + 4].fill(MARKUP);
                i += 4;
            }
            '<' if i + 1 < e && (chars[i + 1].is_ascii_alphabetic() || chars[i + 1] == '/') => {
                // An HTML tag or autolink, closed on the same line.
                match (i + 1..e).find(|&k| chars[k] == '>') {
                    Some(k) if chars[i + 1..k].iter().all(|c| c.is_ascii() && *c != '<') => {
                        flags[i..=k].fill(MARKUP);
                        i = k + 1;
                    }
                    _ => i += 1,
                }
            }
            '!' if i + 1 < e && chars[i + 1] == '[' => match link_end(chars, i + 1, e) {
                Some((_, end)) => {
                    flags[i..end].fill(MARKUP);
                    i = end;
                }
                None => i += 1,
            },
            '[' => match link_end(chars, i, e) {
                Some((close, end)) => {
                    flags[i] = MARKUP;
                    flags[close..end].fill(MARKUP);
                    i += 1;
                }
                None => i += 1,
            },
            '*' | '_' | '`' => {
                flags[i] = MARKUP;
                i += 1;
            }
            '~' if i + 1 < e && chars[i + 1] == '~' => {
                flags[i] = MARKUP;
                flags[i + 1] = MARKUP;
                i += 2;
            }
            _ => i += 1,
        }
    }
}

/// `[text](target)` starting at `open`: returns (index of `]`, end of `)` + 1).
fn link_end(chars: &[char], open: usize, e: usize) -> Option<(usize, usize)> {
    let close = (open + 1..e).find(|&k| chars[k] == ']')?;
    if close + 1 < e && chars[close + 1] == '(' {
        let paren = (close + 2..e).find(|&k| chars[k] == ')')?;
        return Some((close, paren + 1));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(text: &str) -> (String, String, String) {
        let chars: Vec<char> = text.chars().collect();
        let ls = lines(&chars);
        let flags = scan(&chars, &ls);
        let pick = |want: u8| -> String {
            chars
                .iter()
                .zip(&flags)
                .filter(|(c, f)| **f == want && **c != '\n')
                .map(|(c, _)| *c)
                .collect()
        };
        (pick(0), pick(MARKUP), pick(HEADING))
    }

    #[test]
    fn markdown_syntax_table() {
        // (input, prose kept, markup, heading text)
        let cases = [
            ("# 第一章 风起\n正文。", "正文。", "#", " 第一章 风起"),
            ("## 二 ##\n", "", "####", " 二 "),
            ("**加粗**与*斜体*", "加粗与斜体", "******", ""),
            ("- 列表项\n1. 第一", " 列表项 第一", "-1.", ""),
            ("> 引文", " 引文", ">", ""),
            ("看[这里](http://x.cn)吧", "看这里吧", "[](http://x.cn)", ""),
            ("图![插图](a.png)后", "图后", "![插图](a.png)", ""),
            ("前<!-- 作者注 -->后", "前后", "<!-- 作者注 -->", ""),
            ("换行<br>后", "换行后", "<br>", ""),
            ("***\n", "", "***", ""),
            ("好啊~真的", "好啊~真的", "", ""),
            ("1999年", "1999年", "", ""),
        ];
        for (input, prose, markup, heading) in cases {
            let (p, m, h) = marked(input);
            assert_eq!(
                (p.as_str(), m.as_str(), h.as_str()),
                (prose, markup, heading),
                "{input}"
            );
        }
    }

    #[test]
    fn front_matter_and_fences() {
        let text = "---\nchapter: 1\n---\n正文\n```\ncode\n```\n尾";
        let chars: Vec<char> = text.chars().collect();
        let flags = scan(&chars, &lines(&chars));
        let kept: String = chars
            .iter()
            .zip(&flags)
            .filter(|(_, f)| **f == 0)
            .map(|(c, _)| *c)
            .collect();
        assert_eq!(kept, "正文\n\n\n\n尾");
        // An unclosed `---` is not front matter.
        let chars: Vec<char> = "---\n正文".chars().collect();
        let flags = scan(&chars, &lines(&chars));
        assert_eq!(flags[4], 0);
    }

    #[test]
    fn a_scene_break_is_not_front_matter() {
        let kept = |text: &str| -> String {
            let chars: Vec<char> = text.chars().collect();
            let flags = scan(&chars, &lines(&chars));
            chars
                .iter()
                .zip(&flags)
                .filter(|(c, f)| **f == 0 && **c != '\n')
                .map(|(c, _)| *c)
                .collect()
        };
        // (input, prose kept)
        let cases = [
            (
                "---\n雨停了。\n他推开门。\n---\n天亮了。",
                "雨停了。他推开门。天亮了。",
            ),
            ("---\n老周说：走。\n---\n尾", "老周说：走。尾"),
            ("---\n\n---\n正文", "正文"),
            (
                "---\nchapter: 3\nstoryline_id: main_arc\ntags:\n  - 雨夜\n---\n正文",
                "正文",
            ),
            ("---\ntitle: 雨夜 # 注释\n- 列表\n...\n正文", "正文"),
        ];
        for (input, want) in cases {
            assert_eq!(kept(input), want, "{input}");
        }
    }
}
