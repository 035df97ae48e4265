//! Web-novel furniture (`novel import`): lines of a downloaded manuscript that are not the
//! author's story — a site's URLs, ads and navigation (「本章未完，请点击下一页继续阅读」,
//! 「上一页 | 回目录」), platform notices (更新时间、本章字数), and the author's asides to readers
//! (「PS：求月票」). They are flagged with their line, never dropped silently: the import lists
//! them, and only `--strip-furniture` takes them out of the chapters (into a side file).
//!
//! Deliberately narrow: a phrase list and a URL shape, each a sign no sentence of a story
//! carries; a line of prose that merely mentions a 月票 is still flagged only when it names the
//! ask (求月票). A false flag costs nothing (the line stays unless the author strips it); a
//! false strip would, so the author sees the list first.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// What a furniture line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FurnitureKind {
    /// A web address.
    Url,
    /// A site's ad or reading notice (本章未完、笔趣阁、请记住本书首发域名).
    Ad,
    /// Page navigation (上一页、回目录、首页|书库|…).
    Navigation,
    /// A platform's notice about the chapter (更新时间、本章字数).
    Notice,
    /// The author's aside to readers (PS：…、求月票).
    AuthorNote,
    /// Words before a chapter heading on its line (正文、《书名》目录).
    HeadingPrefix,
}

impl FurnitureKind {
    /// The kind in Chinese, for the author.
    pub fn label(self) -> &'static str {
        match self {
            FurnitureKind::Url => "网址",
            FurnitureKind::Ad => "广告",
            FurnitureKind::Navigation => "翻页导航",
            FurnitureKind::Notice => "平台信息",
            FurnitureKind::AuthorNote => "作者的话",
            FurnitureKind::HeadingPrefix => "标题前缀",
        }
    }
}

static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(https?://|www\.[a-z0-9-]+\.|[a-z0-9-]+\.(com|net|org|cn|cc|la|info|me|tv|co|xyz|top|vip|io)(/|\b))",
    )
    .expect("URL pattern")
});

/// Phrases of a site's ads and reading notices.
const AD: &[&str] = &[
    "本章未完",
    "点击下一页",
    "请点击下一页",
    "继续阅读",
    "最新章节",
    "首发域名",
    "本书首发",
    "笔趣阁",
    "顶点小说",
    "一秒记住",
    "天才一秒",
    "手机版阅读",
    "手机用户请",
    "请记住本书",
    "请记住本站",
    "本站长期",
    "本站地址",
    "全文阅读",
    "免费阅读",
    "txt下载",
    "TXT下载",
    "电子书下载",
    "加入书签",
    "章节错误",
    "请购买正版",
    "支持正版",
    "作品仅供读者预览",
    "下载24小时内删除",
    "章节内容开始",
];

/// Phrases of a platform's notice about a chapter, and the marks a site or an author puts at a
/// chapter's end (「（本章完）」「未完待续」): no sentence of the story.
const NOTICE: &[&str] = &[
    "更新时间:",
    "更新时间：",
    "本章字数:",
    "本章字数：",
    "本章完",
    "本章结束",
    "本章终",
    "未完待续",
];

/// Whole lines that are page navigation.
const NAVIGATION: &[&str] = &[
    "上一页",
    "下一页",
    "前一页",
    "后一页",
    "上一章",
    "下一章",
    "回目录",
    "回首页",
    "返回目录",
    "返回书页",
    "返回书架",
    "首页",
    "书签",
];

/// Asks to readers that only an author's aside carries.
const ASKS: &[&str] = &[
    "求月票",
    "求推荐票",
    "求推荐",
    "求收藏",
    "求订阅",
    "求打赏",
    "求保底",
    "求票",
    "月票加更",
    "推荐票",
];

/// Every phrase of [`NOTICE`], [`AD`] and [`ASKS`] in one automaton (one pass per line: an
/// import reads every line of a book), with the kind of each.
static PHRASES: LazyLock<(AhoCorasick, Vec<FurnitureKind>)> = LazyLock::new(|| {
    let mut patterns: Vec<&str> = Vec::new();
    let mut kinds = Vec::new();
    for (list, kind) in [
        (NOTICE, FurnitureKind::Notice),
        (AD, FurnitureKind::Ad),
        (ASKS, FurnitureKind::AuthorNote),
    ] {
        patterns.extend_from_slice(list);
        kinds.extend(std::iter::repeat_n(kind, list.len()));
    }
    let automaton = AhoCorasick::new(&patterns).expect("furniture phrases");
    (automaton, kinds)
});

fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}'
}

/// What the line is, when it is furniture.
pub fn kind(line: &str) -> Option<FurnitureKind> {
    let t = line.trim_matches(is_space);
    if t.is_empty() {
        return None;
    }
    if NAVIGATION.contains(&t) {
        return Some(FurnitureKind::Navigation);
    }
    // 首页|原创书库|现代|言情|…: a menu of short items.
    if t.contains(['|', '｜']) {
        let items: Vec<&str> = t.split(['|', '｜']).collect();
        if items.len() >= 4 && items.iter().all(|i| i.trim().chars().count() <= 6) {
            return Some(FurnitureKind::Navigation);
        }
    }
    // A notice first, then an ad, then an ask (the lists' order), whatever comes first.
    let (automaton, kinds) = &*PHRASES;
    let found = automaton
        .find_iter(t)
        .map(|m| kinds[m.pattern().as_usize()])
        .min_by_key(|k| match k {
            FurnitureKind::Notice => 0,
            FurnitureKind::Ad => 1,
            _ => 2,
        });
    if let Some(k @ (FurnitureKind::Notice | FurnitureKind::Ad)) = found {
        return Some(k);
    }
    // Every shape of [`URL`] has a dot or a scheme: most lines have neither, and skip the regex.
    if (t.contains('.') || t.contains("://")) && URL.is_match(t) {
        return Some(FurnitureKind::Url);
    }
    let head: String = t.chars().take(4).flat_map(char::to_lowercase).collect();
    let aside = ["ps", "p.s", "（ps", "(ps", "【ps"]
        .iter()
        .find_map(|p| head.strip_prefix(p))
        .map(|rest| rest.chars().chain(t.chars().skip(4)).next())
        .is_some_and(|next| next.is_some_and(|c| ":： .．，,".contains(c)));
    if aside || found.is_some() {
        return Some(FurnitureKind::AuthorNote);
    }
    None
}

/// A piece of furniture inside a line: its kind and byte range in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub kind: FurnitureKind,
    pub start: usize,
    pub end: usize,
}

/// What a line holds of furniture: the whole line, or pieces inside a paragraph of the story
/// (an inline link, an ad sentence, 「（本章完）」 after the last sentence) that are cut out of it
/// while the prose stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Line(FurnitureKind),
    Inline(Vec<Piece>),
}

/// A line whose text outside the furniture has at least this many Han characters is a
/// paragraph of the story: only the furniture inside it is cut.
const PROSE_HAN: usize = 8;

/// Where clauses end, for an ad phrase inside prose: sentence and clause punctuation, quotes,
/// brackets and spaces (a pasted ad is set off by them).
fn clause_mark(c: char) -> bool {
    is_space(c) || "。！？；，,;!?…“”‘’「」『』\"".contains(c)
}

/// Bracket pairs that may wrap a piece of furniture (（本章完）, 【求月票】).
const BRACKETS: [(char, char); 5] = [
    ('（', '）'),
    ('(', ')'),
    ('【', '】'),
    ('[', ']'),
    ('〔', '〕'),
];

/// The furniture of a line: the whole line, or the pieces to cut out of a paragraph.
pub fn find(line: &str) -> Option<Found> {
    let whole = kind(line);
    if matches!(whole, Some(FurnitureKind::Navigation)) {
        return whole.map(Found::Line);
    }
    let pieces = pieces(line);
    if pieces.is_empty() {
        return whole.map(Found::Line);
    }
    let mut rest_han = 0;
    let mut at = 0;
    for p in &pieces {
        rest_han += han_count(&line[at..p.start]);
        at = p.end;
    }
    rest_han += han_count(&line[at..]);
    // A line that opens with an ad or a notice is the site's (「本站长期招收…，欢迎…」 is
    // one ad in several clauses); a story paragraph carries furniture after its first words.
    let opens = line[..pieces[0].start].trim_matches(is_space).is_empty()
        && pieces[0].kind != FurnitureKind::Url;
    if rest_han >= PROSE_HAN && !opens {
        Some(Found::Inline(pieces))
    } else {
        Some(Found::Line(whole.unwrap_or(pieces[0].kind)))
    }
}

/// The line with the pieces cut out (the spaces that set a piece off go with it).
pub fn cut(line: &str, pieces: &[Piece]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for p in pieces {
        out.push_str(&line[at..p.start]);
        at = p.end;
    }
    out.push_str(&line[at..]);
    out.trim_end_matches(is_space).to_string()
}

fn han_count(s: &str) -> usize {
    s.chars().filter(|c| crate::count::is_han(*c)).count()
}

/// The furniture pieces of a line, in order, not overlapping: each URL (with the ad clause
/// that introduces it), each ad, notice or ask phrase with its clause, widened to the brackets
/// around it when they hold nothing else.
fn pieces(line: &str) -> Vec<Piece> {
    let mut found: Vec<Piece> = Vec::new();
    // URLs are matched on the half-width forms (ｗｗｗ．ｘｘ．ｃｏｍ is a URL too), each
    // folded character mapped back to its place in the line.
    let mut folded = String::with_capacity(line.len());
    let mut back: Vec<usize> = Vec::with_capacity(line.len() + 1);
    for (i, c) in line.char_indices() {
        let f = crate::normalize::fold_width(c);
        back.extend(std::iter::repeat_n(i, f.len_utf8()));
        folded.push(f);
    }
    back.push(line.len());
    if folded.contains('.') || folded.contains("://") {
        for m in URL.find_iter(&folded) {
            let end = url_end(&folded, m.end());
            found.push(Piece {
                kind: FurnitureKind::Url,
                start: clause_start(line, back[m.start()]),
                end: back[end],
            });
        }
    }
    let (automaton, kinds) = &*PHRASES;
    for m in automaton.find_iter(line) {
        found.push(Piece {
            kind: kinds[m.pattern().as_usize()],
            start: clause_start(line, m.start()),
            end: clause_end(line, m.end()),
        });
    }
    found.sort_by_key(|p| (p.start, p.end));
    let mut merged: Vec<Piece> = Vec::new();
    for p in found {
        let mut p = widen_to_brackets(line, p);
        // The spaces that set it off from the next sentence go with it.
        p.end += line[p.end..].len() - line[p.end..].trim_start_matches(is_space).len();
        match merged.last_mut() {
            Some(last) if p.start <= last.end => last.end = last.end.max(p.end),
            _ => merged.push(p),
        }
    }
    merged
}

/// A URL runs on over the characters a URL may hold.
fn url_end(line: &str, from: usize) -> usize {
    let more = line[from..]
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || "-._~:/?#@!$&'*+,;=%".contains(*c)))
        .map_or(line.len() - from, |(i, _)| i);
    from + more
}

/// Where the clause holding byte `at` starts (after the last clause mark before it).
fn clause_start(line: &str, at: usize) -> usize {
    line[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| clause_mark(*c) || BRACKETS.iter().any(|(o, _)| o == c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Where the clause holding byte `at` ends (its closing sentence mark included).
fn clause_end(line: &str, at: usize) -> usize {
    match line[at..]
        .char_indices()
        .find(|(_, c)| clause_mark(*c) || BRACKETS.iter().any(|(_, cl)| cl == c))
    {
        Some((i, c)) if "。！？；，,;!?".contains(c) => at + i + c.len_utf8(),
        Some((i, _)) => at + i,
        None => line.len(),
    }
}

/// A piece whose brackets hold nothing but it (「（本章完）」) takes the brackets with it.
fn widen_to_brackets(line: &str, p: Piece) -> Piece {
    let before = line[..p.start].chars().next_back();
    let after = line[p.end..].chars().next();
    match (before, after) {
        (Some(o), Some(c)) if BRACKETS.contains(&(o, c)) => Piece {
            kind: p.kind,
            start: p.start - o.len_utf8(),
            end: p.end + c.len_utf8(),
        },
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn furniture_lines_and_prose_that_is_not() {
        use FurnitureKind::*;
        let cases = [
            ("本章未完，请点击下一页继续阅读", Some(Ad)),
            ("　　天才一秒记住本站地址：www.example.la", Some(Ad)),
            ("http://m.example.com/book/1.html", Some(Url)),
            ("请访问 example.cc/123", Some(Url)),
            ("http://localhost/book/1", Some(Url)),
            ("（PS：明天加更）", Some(AuthorNote)),
            (
                "“更新时间：明早。”他说着，求月票的帖子还挂着。",
                Some(Notice),
            ),
            ("回目录", Some(Navigation)),
            ("    后一页", Some(Navigation)),
            ("首页|原创书库|现代|言情|武侠|科幻", Some(Navigation)),
            ("更新时间:2007-11-16 7:55:51 本章字数:4804", Some(Notice)),
            ("（本章完）", Some(Notice)),
            ("未完待续……", Some(Notice)),
            ("PS：今天两更，求月票！", Some(AuthorNote)),
            ("ps.感谢书友的打赏", Some(AuthorNote)),
            ("（求推荐票）", Some(AuthorNote)),
            // Prose.
            ("　　他推开门，外面的雨下得正紧。", None),
            ("“这是第一页。”她说。", None),
            ("上一页纸已经泛黄，他翻到了下一页。", None),
            ("他在首页上写下名字。", None),
            ("psychology 是他的专业。", None),
            ("", None),
        ];
        for (line, want) in cases {
            assert_eq!(kind(line), want, "{line}");
        }
    }

    #[test]
    fn furniture_inside_a_paragraph_is_cut_and_the_prose_kept() {
        let cases = [
            (
                "　　他推开门，外面的雨下得正紧。www.example.com 他只好又退了回来。",
                "　　他推开门，外面的雨下得正紧。他只好又退了回来。",
            ),
            (
                "　　萧炎握紧了拳头，天才一秒记住本站地址：biquge.la 眼中闪过一抹寒芒。",
                "　　萧炎握紧了拳头，眼中闪过一抹寒芒。",
            ),
            (
                "　　说完，他转身走进了夜色里，再也没有回头。（本章完）",
                "　　说完，他转身走进了夜色里，再也没有回头。",
            ),
            (
                "　　三人相视一笑，各自回房歇息去了。【求月票】",
                "　　三人相视一笑，各自回房歇息去了。",
            ),
        ];
        for (line, want) in cases {
            let Some(Found::Inline(pieces)) = find(line) else {
                panic!("{line}: {:?}", find(line));
            };
            assert_eq!(cut(line, &pieces), want, "{line}");
        }
        // A line that is furniture through and through is still a whole line.
        for line in [
            "本章未完，请点击下一页继续阅读",
            "（本章完）",
            "天才一秒记住本站地址：www.example.la",
            "回目录",
            "（未完待续。）",
            "本站长期招收作品更新管理员，欢迎有时间及兴趣的书友报名加入，点此察看详情！",
        ] {
            assert!(matches!(find(line), Some(Found::Line(_))), "{line}");
        }
        // Prose with nothing of a site is nothing.
        assert_eq!(find("　　他在首页上写下名字，又翻到下一页。"), None);
        assert_eq!(find("　　圆周率是3.14，他背到了小数点后二十位。"), None);
    }
}
