//! Splitting a manuscript into chapters (`novel import`): heading lines are found tolerantly —
//! `第12章`, `第一百二十三章`, `第两千零五章`, `第十二回`, `第12节`, `Chapter 12`, each with an
//! optional title after the number (after a space, a full-width space, `：`, `:`, `、` or `.`,
//! or none); volume headings `第一卷 …` / `卷一 …`; and the named extras 序章、楔子、引子、番外、
//! 尾声、后记, kept apart from the numbered chapters. Markdown `#` marks before a heading are
//! allowed. Text before the first heading (and between a volume heading and the next
//! heading) is kept as a preface section: nothing is dropped. A folder's files are split one by
//! one ([`split_file`]), the number of a file without a heading taken from its name.
//!
//! The sections are `novel_core::import::Section`s; numbering problems are judged there.

use novel_core::import::{Problem, ProblemKind, Section, SectionKind, VolumeHeading};
use novel_core::numerals::{arabic_digit, chinese_number, is_chinese_numeral};

/// A heading line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heading {
    Chapter { number: u32, title: String },
    Volume { number: u32, title: String },
    Extra { name: String, title: String },
}

/// The named extras (番外 and the like), longest first so 序章 wins over a shorter name.
const EXTRAS: [&str; 6] = ["序章", "楔子", "引子", "番外", "尾声", "后记"];

/// A heading is a short line: a longer one is prose that happens to start like one.
const MAX_HEADING_CHARS: usize = 40;

fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}'
}

fn is_separator(c: char) -> bool {
    is_space(c) || "：:、.．·-—".contains(c)
}

/// The title after a number or name: separators stripped.
fn title_of(rest: &str) -> String {
    rest.trim_start_matches(is_separator)
        .trim_end_matches(is_space)
        .to_string()
}

/// Parses a heading line, if it is one.
pub fn heading(line: &str) -> Option<Heading> {
    let t = line.trim_matches(is_space).trim_start_matches('#');
    let t = t.trim_matches(is_space);
    if t.is_empty() || t.chars().count() > MAX_HEADING_CHARS {
        return None;
    }
    if let Some(rest) = t.strip_prefix('第') {
        let (number, rest) = leading_number(rest)?;
        let mut chars = rest.chars();
        let unit = chars.next()?;
        let rest = chars.as_str();
        return match unit {
            '章' | '回' | '节' => Some(Heading::Chapter {
                number,
                title: title_of(rest),
            }),
            '卷' => Some(Heading::Volume {
                number,
                title: title_of(rest),
            }),
            _ => None,
        };
    }
    if let Some(rest) = t.strip_prefix('卷') {
        let (number, rest) = leading_number(rest)?;
        return separated(rest).then(|| Heading::Volume {
            number,
            title: title_of(rest),
        });
    }
    if let Some(rest) = strip_prefix_ignore_case(t, "chapter") {
        let rest = rest.trim_start_matches(is_space);
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let number = rest.get(..digits)?.parse().ok()?;
        let rest = &rest[digits..];
        return separated(rest).then(|| Heading::Chapter {
            number,
            title: title_of(rest),
        });
    }
    extra_heading(t)
}

/// `番外`, `番外一`, `番外2：title`, `楔子 风雪夜`: the name (with its numeral) and the title.
fn extra_heading(t: &str) -> Option<Heading> {
    let key = EXTRAS.iter().find(|k| t.starts_with(*k))?;
    let after = &t[key.len()..];
    let (name_len, rest) = match leading_number(after) {
        Some((_, rest)) => (t.len() - rest.len(), rest),
        None => (key.len(), after),
    };
    separated(rest).then(|| Heading::Extra {
        name: t[..name_len].to_string(),
        title: title_of(rest),
    })
}

/// The rest after a number or name ends the line or starts with a separator.
fn separated(rest: &str) -> bool {
    rest.chars().next().is_none_or(is_separator)
}

fn strip_prefix_ignore_case<'a>(t: &'a str, prefix: &str) -> Option<&'a str> {
    let head = t.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &t[prefix.len()..])
}

/// A number at the start of `s` — ASCII or full-width digits, or a Chinese numeral — and what
/// follows it.
fn leading_number(s: &str) -> Option<(u32, &str)> {
    let digit_len: usize = s
        .chars()
        .take_while(|c| arabic_digit(*c).is_some())
        .map(char::len_utf8)
        .sum();
    if digit_len > 0 {
        let n = s[..digit_len].chars().try_fold(0u32, |acc, c| {
            acc.checked_mul(10)?.checked_add(arabic_digit(c)?)
        })?;
        return Some((n, &s[digit_len..]));
    }
    let len: usize = s
        .chars()
        .take_while(|c| is_chinese_numeral(*c))
        .map(char::len_utf8)
        .sum();
    if len == 0 {
        return None;
    }
    let n = u32::try_from(chinese_number(&s[..len])?).ok()?;
    Some((n, &s[len..]))
}

/// A section being collected.
struct Open {
    kind: SectionKind,
    number: Option<u32>,
    name: String,
    title: String,
    volume: Option<u32>,
    line: usize,
    body: Vec<String>,
}

impl Open {
    fn preface(name: String, volume: Option<u32>, line: usize) -> Open {
        Open {
            kind: SectionKind::Preface,
            number: None,
            name,
            title: String::new(),
            volume,
            line,
            body: Vec::new(),
        }
    }

    fn close(self, file: &str, out: &mut Vec<Section>) {
        let body = trim_blank_lines(&self.body);
        if self.kind == SectionKind::Preface && body.is_empty() {
            return;
        }
        out.push(Section {
            kind: self.kind,
            number: self.number,
            name: self.name,
            title: self.title,
            volume: self.volume,
            file: file.to_string(),
            line: self.line,
            body,
        });
    }
}

fn trim_blank_lines(lines: &[String]) -> String {
    let blank = |l: &&String| l.chars().all(is_space);
    let start = lines.iter().position(|l| !blank(&l)).unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !blank(&l))
        .map_or(start, |e| e + 1);
    lines[start..end].join("\n")
}

/// The sections and volume headings of a manuscript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub sections: Vec<Section>,
    pub volumes: Vec<VolumeHeading>,
}

/// Splits one text (a whole manuscript, or one file of a folder) at its headings.
pub fn split(text: &str, file: &str) -> Split {
    let mut out = Split::default();
    let mut volume: Option<u32> = None;
    let mut open = Open::preface("前言".to_string(), None, 1);
    for (i, line) in text.lines().enumerate() {
        let Some(h) = heading(line) else {
            open.body.push(line.to_string());
            continue;
        };
        let lineno = i + 1;
        let next = match h {
            Heading::Volume { number, title } => {
                volume = Some(number);
                let name = line.trim_matches(is_space).trim_start_matches('#');
                out.volumes.push(VolumeHeading {
                    volume: number,
                    title,
                    file: file.to_string(),
                    line: lineno,
                });
                Open::preface(name.trim_matches(is_space).to_string(), volume, lineno)
            }
            Heading::Chapter { number, title } => Open {
                kind: SectionKind::Chapter,
                number: Some(number),
                title,
                ..Open::preface(String::new(), volume, lineno)
            },
            Heading::Extra { name, title } => Open {
                kind: SectionKind::Extra,
                title,
                ..Open::preface(name, volume, lineno)
            },
        };
        std::mem::replace(&mut open, next).close(file, &mut out.sections);
    }
    open.close(file, &mut out.sections);
    out
}

/// What a file name of a folder says: `001.txt`, `12.md`, `012-标题.txt`, `第12章 标题.txt`,
/// `Chapter 12.txt` give a chapter number (and title), `楔子.txt` an extra.
pub fn file_name_heading(stem: &str) -> Option<Heading> {
    if let Some(h) = heading(stem) {
        return Some(h);
    }
    let digits = stem.chars().take_while(char::is_ascii_digit).count();
    let number = stem.get(..digits)?.parse().ok()?;
    let rest = &stem[digits..];
    separated(rest).then(|| Heading::Chapter {
        number,
        title: title_of(rest),
    })
}

/// Splits one file of a folder: its own headings when it has chapter headings; else one
/// section named by the file (a `# 标题` first line becomes the title). A file whose name
/// gives nothing is kept as a preface-kind section named after it (the caller warns).
pub fn split_file(text: &str, file: &str, stem: &str) -> Split {
    let own = split(text, file);
    if own.sections.iter().any(|s| s.kind != SectionKind::Preface) {
        return own;
    }
    let mut lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.chars().all(is_space));
    let mut line = 1;
    let mut md_title = String::new();
    if let Some(i) = first
        && lines[i].trim_start().starts_with('#')
    {
        md_title = lines[i]
            .trim_start()
            .trim_start_matches('#')
            .trim()
            .to_string();
        line = i + 1;
        lines.remove(i);
    }
    let body = trim_blank_lines(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>());
    let pick = |t: String| {
        if md_title.is_empty() {
            t
        } else {
            md_title.clone()
        }
    };
    let (kind, number, name, title) = match file_name_heading(stem) {
        Some(Heading::Chapter { number, title }) => (
            SectionKind::Chapter,
            Some(number),
            String::new(),
            pick(title),
        ),
        Some(Heading::Extra { name, title }) => (SectionKind::Extra, None, name, pick(title)),
        _ => (
            SectionKind::Preface,
            None,
            stem.to_string(),
            md_title.clone(),
        ),
    };
    Split {
        sections: vec![Section {
            kind,
            number,
            name,
            title,
            volume: None,
            file: file.to_string(),
            line,
            body,
        }],
        volumes: Vec::new(),
    }
}

/// Where a folder's file goes in the book, by its name: 序章/楔子/引子 first, then by number,
/// then the rest (番外、尾声、unnumbered). Ties keep the order of the caller's secondary key.
pub fn folder_rank(stem: &str) -> (u8, u32) {
    match file_name_heading(stem) {
        Some(Heading::Extra { name, .. })
            if ["序章", "楔子", "引子"].iter().any(|k| name.starts_with(k)) =>
        {
            (0, 0)
        }
        Some(Heading::Chapter { number, .. }) | Some(Heading::Volume { number, .. }) => (1, number),
        _ => (2, 0),
    }
}

/// What an import warns about one file of a folder (split by [`split_file`] into `sections`):
/// no number in its name or its text, or a name that says another chapter than its heading.
pub fn folder_warnings(stem: &str, shown: &str, sections: &[Section]) -> Vec<Problem> {
    let warn = |kind, message: String, line| {
        let hint = match kind {
            ProblemKind::Unnumbered => {
                "要作为正文章节导入，就在文件名或首行标题写上章号（如「第12章 标题」）"
            }
            _ => "标题的章号写错了就改标题，文件名写错了就改文件名，再重新导入",
        };
        Problem::warning(kind, shown, line, message, hint)
    };
    let mut out = Vec::new();
    let chapters: Vec<&Section> = sections
        .iter()
        .filter(|s| s.kind == SectionKind::Chapter)
        .collect();
    if sections.len() == 1 && sections[0].kind == SectionKind::Preface {
        out.push(warn(
            ProblemKind::Unnumbered,
            format!("文件名与内容都没有章号，作为附录「{stem}」导入"),
            1,
        ));
    }
    if let (Some(Heading::Chapter { number, .. }), [one]) =
        (file_name_heading(stem), chapters.as_slice())
        && one.number != Some(number)
    {
        out.push(warn(
            ProblemKind::NameMismatch,
            format!(
                "文件名是第 {number} 章，标题写的是第 {} 章：按标题导入",
                one.number.unwrap_or(0)
            ),
            one.line,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(number: u32, title: &str) -> Option<Heading> {
        Some(Heading::Chapter {
            number,
            title: title.into(),
        })
    }

    #[test]
    fn chapter_headings_in_every_common_form() {
        let cases = [
            ("第12章 初入江湖", ch(12, "初入江湖")),
            ("第12章", ch(12, "")),
            ("## 第12章：初入江湖", ch(12, "初入江湖")),
            ("　　第一百二十三章　风起", ch(123, "风起")),
            ("第两千零五章、夜袭", ch(2005, "夜袭")),
            ("第十二回 大闹天宫", ch(12, "大闹天宫")),
            ("第12节.开端", ch(12, "开端")),
            ("第１２章 全角", ch(12, "全角")),
            ("第十章初入江湖", ch(10, "初入江湖")),
            ("Chapter 12: The Gate", ch(12, "The Gate")),
            ("CHAPTER 7", ch(7, "")),
            ("第〇〇七章 代号", ch(7, "代号")),
        ];
        for (line, want) in cases {
            assert_eq!(heading(line), want, "{line}");
        }
    }

    #[test]
    fn volumes_and_extras_are_not_chapters() {
        assert_eq!(
            heading("第一卷 风起青萍"),
            Some(Heading::Volume {
                number: 1,
                title: "风起青萍".into()
            })
        );
        assert_eq!(
            heading("卷二：潜龙"),
            Some(Heading::Volume {
                number: 2,
                title: "潜龙".into()
            })
        );
        assert_eq!(
            heading("番外一 师父"),
            Some(Heading::Extra {
                name: "番外一".into(),
                title: "师父".into()
            })
        );
        assert_eq!(
            heading("楔子"),
            Some(Heading::Extra {
                name: "楔子".into(),
                title: String::new()
            })
        );
    }

    #[test]
    fn prose_is_not_a_heading() {
        for line in [
            "尾声渐近，众人散去。",
            "第二天清晨，他醒来。",
            "卷起袖子就干",
            "chapters of life",
            "",
            "第十二章的故事很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长",
        ] {
            assert_eq!(heading(line), None, "{line}");
        }
    }

    #[test]
    fn a_manuscript_splits_into_preface_extras_volumes_and_chapters() {
        let text = "《青云志》\n作者：某某\n\n楔子 风雪夜\n雪落。\n\n第一卷 风起\n卷首语。\n第一章 初入\n　　他来了。\n\n第二章\n他走了。\n番外一 师父\n往事。\n";
        let s = split(text, "书.txt");
        let got: Vec<_> = s
            .sections
            .iter()
            .map(|x| {
                (
                    x.kind,
                    x.number,
                    x.name.as_str(),
                    x.title.as_str(),
                    x.volume,
                    x.line,
                    x.body.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    SectionKind::Preface,
                    None,
                    "前言",
                    "",
                    None,
                    1,
                    "《青云志》\n作者：某某"
                ),
                (
                    SectionKind::Extra,
                    None,
                    "楔子",
                    "风雪夜",
                    None,
                    4,
                    "雪落。"
                ),
                (
                    SectionKind::Preface,
                    None,
                    "第一卷 风起",
                    "",
                    Some(1),
                    7,
                    "卷首语。"
                ),
                (
                    SectionKind::Chapter,
                    Some(1),
                    "",
                    "初入",
                    Some(1),
                    9,
                    "　　他来了。"
                ),
                (
                    SectionKind::Chapter,
                    Some(2),
                    "",
                    "",
                    Some(1),
                    12,
                    "他走了。"
                ),
                (
                    SectionKind::Extra,
                    None,
                    "番外一",
                    "师父",
                    Some(1),
                    14,
                    "往事。"
                ),
            ]
        );
        assert_eq!(s.volumes.len(), 1);
    }

    #[test]
    fn folder_files_take_their_number_from_the_name() {
        let s = split_file("# 初入江湖\n\n他来了。\n", "001.txt", "001");
        let x = &s.sections[0];
        assert_eq!(
            (x.kind, x.number, x.title.as_str(), x.body.as_str()),
            (SectionKind::Chapter, Some(1), "初入江湖", "他来了。")
        );
        let s = split_file("他走了。", "第12章 离别.txt", "第12章 离别");
        assert_eq!(
            (s.sections[0].number, s.sections[0].title.as_str()),
            (Some(12), "离别")
        );
        let s = split_file("第3章 夜\n正文", "x.txt", "x");
        assert_eq!(s.sections[0].number, Some(3));
        let s = split_file("笔记", "说明.txt", "说明");
        assert_eq!(
            (s.sections[0].kind, s.sections[0].name.as_str()),
            (SectionKind::Preface, "说明")
        );
        assert_eq!(file_name_heading("012-标题"), ch(12, "标题"));
        assert_eq!(file_name_heading("12"), ch(12, ""));
    }

    #[test]
    fn a_folder_is_ordered_and_warned_about_by_its_file_names() {
        let mut stems = vec!["番外 雪夜", "010", "楔子", "第2章 归来", "说明"];
        stems.sort_by_key(|s| (folder_rank(s), s.to_string()));
        assert_eq!(stems, ["楔子", "第2章 归来", "010", "番外 雪夜", "说明"]);

        let s = split_file("笔记", "说明.txt", "说明");
        let w = folder_warnings("说明", "说明.txt", &s.sections);
        assert_eq!(
            (w.len(), w[0].kind, w[0].finding.line.unwrap_or(0)),
            (1, ProblemKind::Unnumbered, 1)
        );
        let s = split_file("第3章 夜\n正文", "005.txt", "005");
        let w = folder_warnings("005", "005.txt", &s.sections);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, ProblemKind::NameMismatch);
        assert!(
            w[0].finding.message.contains("第 5 章") && w[0].finding.message.contains("第 3 章")
        );
        let s = split_file("正文", "005.txt", "005");
        assert!(folder_warnings("005", "005.txt", &s.sections).is_empty());
    }
}
