//! Sentence-pattern repetition (句式重复): PRD §7 Layer 4 (in any window of 5 adjacent
//! sentences, fewer than 2 repeat a pattern) and §5.4 (禁止连续 3 句相同句式).
//!
//! Without a segmenter, a sentence's pattern is read two ways, and two sentences share a
//! pattern when either agrees:
//!
//! - **opening** (句首): its first two text characters (他深吸… → 「他深」);
//! - **frame** (句架): its skeleton, with function characters (的地得了着过在把被……) kept,
//!   personal pronouns merged, inner commas kept and every other run of characters collapsed:
//!   「他缓缓地站了起来，目光落在远方。」 and 「她轻轻地放下了杯子，视线停在窗外。」 are both
//!   `他…地…了…，…在…`. A frame counts only with at least three function characters, so short
//!   plain sentences (他笑了。) do not collide by accident.
//!
//! Only narration sentences of at least [`MIN_SENTENCE_LEN`] characters take part: dialogue is
//! the characters' voice, and 「他说。」 after a quote is not a sentence pattern. Dialogue and
//! short sentences still occupy their places in the window.
//!
//! A frame is a sentence's shape, so inside a window a second sentence of one frame is already
//! a repeat. An opening is weaker evidence: the subject of a sentence is most often a name or a
//! pronoun, and two people acting in turn (林枫…。苏婉…。林枫…。苏婉…。) is ordinary prose. So
//! inside a window an opening counts only once it is there [`MIN_OPENING_REPEATS`] times
//! (林枫… three times in five sentences is the tell); three sentences in a row on one opening
//! or one frame are still the §5.4 tell on their own.

use serde::Serialize;

use crate::segment::{Document, Sentence, Span, is_text_char};
use novel_core::diagnostic::{Diagnostic, Severity};

/// Shorter narration sentences have no pattern to repeat.
pub const MIN_SENTENCE_LEN: usize = 5;
/// A frame needs this many function characters to be distinctive.
const MIN_FRAME_MARKERS: usize = 3;
/// Sentences of one opening a window must hold before they count as repeats (two sentences
/// starting with the same name are normal prose).
pub const MIN_OPENING_REPEATS: usize = 3;

/// Function characters kept in a frame (a `match`, not a string search: this runs per character).
fn is_function_char(c: char) -> bool {
    matches!(
        c,
        '的' | '地'
            | '得'
            | '了'
            | '着'
            | '过'
            | '在'
            | '把'
            | '被'
            | '将'
            | '是'
            | '不'
            | '没'
            | '也'
            | '都'
            | '就'
            | '又'
            | '还'
            | '却'
            | '才'
            | '而'
            | '和'
            | '与'
            | '向'
            | '从'
            | '对'
            | '给'
            | '让'
            | '一'
            | '这'
            | '那'
            | '很'
            | '太'
            | '更'
            | '所'
            | '像'
    )
}

fn is_pronoun(c: char) -> bool {
    matches!(c, '他' | '她' | '它' | '我' | '你')
}

/// The pattern of one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentencePattern {
    pub opening: String,
    pub frame: Option<String>,
}

/// The pattern of a sentence, or `None` when it takes no part (dialogue, too short).
pub fn pattern_of(doc: &Document, s: &Sentence) -> Option<SentencePattern> {
    if s.is_dialogue() || s.len < MIN_SENTENCE_LEN {
        return None;
    }
    let chars = doc.chars();
    let mut opening = String::new();
    let mut frame = String::new();
    let mut markers = 0;
    let mut run = 0usize;
    let flush = |frame: &mut String, run: &mut usize| {
        if *run > 0 {
            frame.push('X');
            *run = 0;
        }
    };
    let mut prev_pronoun = false;
    for (i, &c) in chars.iter().enumerate().take(s.span.end).skip(s.span.start) {
        if doc.is_markup(i) {
            continue;
        }
        let text = is_text_char(c);
        if text && opening.chars().count() < 2 {
            opening.push(c);
        }
        if prev_pronoun && c == '们' {
            prev_pronoun = false;
            continue;
        }
        prev_pronoun = false;
        if is_pronoun(c) {
            flush(&mut frame, &mut run);
            frame.push('P');
            prev_pronoun = true;
        } else if is_function_char(c) {
            flush(&mut frame, &mut run);
            frame.push(c);
            markers += 1;
        } else if text {
            run += 1;
        } else if matches!(c, ',' | '、' | ';' | ':') {
            flush(&mut frame, &mut run);
            frame.push(',');
        }
    }
    flush(&mut frame, &mut run);
    Some(SentencePattern {
        opening,
        frame: (markers >= MIN_FRAME_MARKERS).then_some(frame),
    })
}

/// [`SentencePattern`] reduced to numbers for the window scan (no allocation per sentence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PatternKey {
    opening: u64,
    frame: Option<u64>,
}

impl PatternKey {
    fn same_frame(&self, other: &PatternKey) -> bool {
        self.frame.is_some() && self.frame == other.frame
    }
}

fn pattern_key(doc: &Document, s: &Sentence) -> Option<PatternKey> {
    if s.is_dialogue() || s.len < MIN_SENTENCE_LEN {
        return None;
    }
    const FNV_PRIME: u64 = 0x100_0000_01b3;
    let chars = doc.chars();
    let mut opening = 0u64;
    let mut opened = 0;
    let mut frame = 0xcbf2_9ce4_8422_2325u64;
    let mut token = |t: u32| frame = (frame ^ u64::from(t)).wrapping_mul(FNV_PRIME);
    let mut markers = 0;
    let mut run = false;
    let mut prev_pronoun = false;
    for (i, &c) in chars.iter().enumerate().take(s.span.end).skip(s.span.start) {
        if doc.is_markup(i) {
            continue;
        }
        let text = is_text_char(c);
        if text && opened < 2 {
            opening = (opening << 32) | u64::from(c as u32);
            opened += 1;
        }
        if prev_pronoun && c == '们' {
            prev_pronoun = false;
            continue;
        }
        prev_pronoun = false;
        let t = if is_pronoun(c) {
            prev_pronoun = true;
            'P'
        } else if is_function_char(c) {
            markers += 1;
            c
        } else if text {
            run = true;
            continue;
        } else if matches!(c, ',' | '、' | ';' | ':') {
            ','
        } else {
            continue;
        };
        if run {
            token('X' as u32);
            run = false;
        }
        token(t as u32);
    }
    if run {
        token('X' as u32);
    }
    Some(PatternKey {
        opening,
        frame: (markers >= MIN_FRAME_MARKERS).then_some(frame),
    })
}

/// A frame as the author reads it: `他…地…了…，…在…`.
pub fn readable_frame(frame: &str) -> String {
    let mut out = String::new();
    for c in frame.chars() {
        let piece = match c {
            'X' => "…",
            'P' => "他",
            ',' => "，",
            _ => {
                out.push(c);
                continue;
            }
        };
        if !(piece == "…" && out.ends_with('…')) {
            out.push_str(piece);
        }
    }
    out
}

/// Repetition found in a document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepetitionReport {
    pub window: usize,
    pub max_repeats: usize,
    /// Clusters of overlapping windows with `max_repeats` or more repeated sentences.
    pub violations: usize,
    /// Runs of three consecutive sentences of one pattern (§5.4).
    pub consecutive: usize,
    /// Most repeated sentences seen in any one window.
    pub worst_window: usize,
    pub pass: bool,
    #[serde(skip)]
    pub clusters: Vec<Cluster>,
}

/// One place where sentences repeat a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Sentence indexes `[first, last]` of the cluster.
    pub sentences: [usize; 2],
    /// The first repeated sentence's span.
    pub span: Span,
    pub repeats: usize,
    /// Three in a row (§5.4) rather than only too many in a window (§7).
    pub consecutive: bool,
    /// What repeats: 句首「他深」 or 句架「他…地…了…」, with how often.
    pub what: String,
}

/// Checks the sentences of `doc` with a window of `window` sentences and a limit of
/// `max_repeats` (a window with that many repeated sentences is a violation).
pub fn check(doc: &Document, window: usize, max_repeats: usize) -> RepetitionReport {
    let window = window.max(2);
    let sentences = doc.sentences();
    let pats: Vec<Option<PatternKey>> = sentences.iter().map(|s| pattern_key(doc, s)).collect();
    let n = pats.len();
    let same_frame = |a: usize, b: usize| match (&pats[a], &pats[b]) {
        (Some(x), Some(y)) => x.same_frame(y),
        _ => false,
    };
    let same_opening = |a: usize, b: usize| match (&pats[a], &pats[b]) {
        (Some(x), Some(y)) => x.opening == y.opening,
        _ => false,
    };
    // Consecutive triples: three eligible sentences in a row, all on one opening or one frame.
    let mut triples: Vec<usize> = Vec::new();
    for i in 0..n.saturating_sub(2) {
        if let (Some(a), Some(b), Some(c)) = (&pats[i], &pats[i + 1], &pats[i + 2]) {
            let same_open = a.opening == b.opening && b.opening == c.opening;
            let same_frame = a.frame.is_some() && a.frame == b.frame && b.frame == c.frame;
            if same_open || same_frame {
                triples.push(i);
            }
        }
    }
    // Windows: a sentence is a repeat when it shares its frame with an earlier one inside, or
    // its opening with an earlier one when the window holds that opening often enough.
    let starts = if n <= window { 0..1 } else { 0..n - window + 1 };
    let mut worst = 0;
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new(); // (first, last, repeats)
    for a in starts {
        let end = (a + window).min(n);
        let opening_repeats = |i: usize| {
            (a..i).any(|j| same_opening(i, j))
                && (a..end).filter(|&j| same_opening(i, j)).count() >= MIN_OPENING_REPEATS
        };
        let repeats = (a..end)
            .filter(|&i| (a..i).any(|j| same_frame(i, j)) || opening_repeats(i))
            .count();
        worst = worst.max(repeats);
        if repeats >= max_repeats && n > 0 {
            match ranges.last_mut() {
                Some(last) if a <= last.1 => {
                    last.1 = end - 1;
                    last.2 = last.2.max(repeats);
                }
                _ => ranges.push((a, end - 1, repeats)),
            }
        }
    }
    // Ranges are disjoint and sorted: find each triple's candidate range by binary search.
    let covering = |ranges: &[(usize, usize, usize)], t: usize| {
        let k = ranges.partition_point(|r| r.0 <= t);
        k > 0 && t + 2 <= ranges[k - 1].1
    };
    let extra: Vec<usize> = triples
        .iter()
        .copied()
        .filter(|&t| !covering(&ranges, t))
        .collect();
    ranges.extend(extra.into_iter().map(|t| (t, t + 2, 2)));
    ranges.sort();
    let clusters: Vec<Cluster> = ranges
        .iter()
        .map(|&(first, last, repeats)| {
            let k = triples.partition_point(|&t| t < first);
            let consecutive = triples.get(k).is_some_and(|&t| t + 2 <= last);
            describe(doc, first, last, repeats, consecutive)
        })
        .collect();
    RepetitionReport {
        window,
        max_repeats,
        violations: clusters.len(),
        consecutive: triples.len(),
        worst_window: worst,
        pass: clusters.is_empty(),
        clusters,
    }
}

fn describe(
    doc: &Document,
    first: usize,
    last: usize,
    repeats: usize,
    consecutive: bool,
) -> Cluster {
    // The pattern shared most often inside the cluster, and its first sentence.
    let pats: Vec<Option<SentencePattern>> = doc.sentences()[first..=last]
        .iter()
        .map(|s| pattern_of(doc, s))
        .collect();
    let mut best: Option<(usize, String, usize)> = None; // (count, label, sentence)
    for (k, p) in pats.iter().enumerate() {
        let Some(p) = p else { continue };
        let same_open = pats
            .iter()
            .filter(|q| q.as_ref().is_some_and(|q| q.opening == p.opening))
            .count();
        // A pair of sentences on one opening is not what repeats (see the module note).
        let same_open = if same_open >= MIN_OPENING_REPEATS {
            same_open
        } else {
            0
        };
        let same_frame = p.frame.as_ref().map_or(0, |f| {
            pats.iter()
                .filter(|q| q.as_ref().is_some_and(|q| q.frame.as_ref() == Some(f)))
                .count()
        });
        let (count, label) = if same_frame > same_open {
            let frame = readable_frame(p.frame.as_deref().unwrap_or(""));
            (same_frame, format!("句架「{frame}」"))
        } else {
            (same_open, format!("句首「{}」", p.opening))
        };
        if count >= 2 && best.as_ref().is_none_or(|b| count > b.0) {
            best = Some((count, label, first + k));
        }
    }
    let (count, label, at) = best.unwrap_or((0, String::new(), first));
    Cluster {
        sentences: [first, last],
        span: doc.sentences()[at].span,
        repeats,
        consecutive,
        what: if count > 0 {
            format!("{label}×{count}")
        } else {
            label
        },
    }
}

/// Findings for the clusters of a report (the file left empty: the caller names it).
pub fn findings(doc: &Document, report: &RepetitionReport) -> Vec<Diagnostic> {
    report
        .clusters
        .iter()
        .map(|c| {
            let (line, col) = doc.position(c.span.start);
            let (rule, message, hint) = if c.consecutive {
                (
                    "repetition/consecutive",
                    format!("连续 3 句相同句式（{}）", c.what),
                    "换一种句式或合并成一句".to_string(),
                )
            } else {
                (
                    "repetition/window",
                    format!(
                        "相邻 {} 句中有 {} 句句式重复（{}）",
                        report.window, c.repeats, c.what
                    ),
                    format!("上限 {} 句以下；变换句首或句式", report.max_repeats),
                )
            };
            Diagnostic::new(rule, Severity::Error, "", message, hint)
                .at(line, col)
                .with_excerpt(doc.excerpt(c.span, 0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(text: &str) -> Option<SentencePattern> {
        let d = Document::new(text);
        pattern_of(&d, &d.sentences()[0])
    }

    #[test]
    fn pattern_table() {
        let a = pat("他缓缓地站了起来，目光落在远方。").unwrap();
        let b = pat("她轻轻地放下了杯子，视线停在窗外。").unwrap();
        assert_eq!(a.frame, b.frame, "同一句架");
        assert_eq!(
            readable_frame(a.frame.as_deref().unwrap()),
            "他…地…了…，…在…"
        );
        assert_eq!(a.opening, "他缓");
        // Too few function characters: no frame, opening only.
        assert_eq!(pat("他推开门走出去。").unwrap().frame, None);
        // Dialogue and short sentences take no part.
        assert_eq!(pat("「我们走吧，别等了。」"), None);
        assert_eq!(pat("他笑了。"), None);
    }

    fn rules(text: &str) -> Vec<String> {
        let d = Document::new(text);
        let r = check(&d, 5, 2);
        findings(&d, &r)
            .into_iter()
            .map(|f| {
                let (line, col) = (f.line.unwrap_or(0), f.col.unwrap_or(0));
                if col == 1 {
                    format!("{line}:{}", f.code)
                } else {
                    format!("{line}:{col}:{}", f.code)
                }
            })
            .collect()
    }

    #[test]
    fn repetition_table() {
        let cases: [(&str, &[&str], &str); 8] = [
            (
                "他深吸一口气，站了起来。他深深看了她一眼。他深知此事不妙。",
                &["1:repetition/consecutive"],
                "连续 3 句同句首",
            ),
            (
                "他缓缓地站了起来，目光落在远方。\n她轻轻地放下了杯子，视线停在窗外。\n他慢慢地推开了窗，冷风灌在脸上。",
                &["1:repetition/consecutive"],
                "连续 3 句同句架（跨段）",
            ),
            (
                "他深吸一口气站起来。门外传来脚步声。他深知来者不善。窗纸被风吹得作响。他深夜才回到家中。",
                &["1:repetition/window"],
                "5 句窗口内 2 句重复",
            ),
            (
                "他深吸一口气站起来。门外传来脚步声。他深知来者不善。窗纸被风吹得作响。屋里的灯一直亮到天明。",
                &[],
                "窗口内只重复 1 句",
            ),
            (
                "他推门进去。桌上摆着半碗冷粥。墙角堆着没劈完的柴。老周蹲在灶前添火，头也没抬。窗外有人吆喝着卖糖葫芦。",
                &[],
                "自然叙述",
            ),
            (
                "“他深吸一口气。”“他深知不妙。”“他深夜才回。”",
                &[],
                "对话不参与",
            ),
            (
                "他深吸一口气。他笑了。他深知此事不妙。他走了。他深夜才回家。",
                &["1:repetition/window"],
                "短句占位但不参与：他深×3 不连续，窗口内重复 2 句",
            ),
            (
                "　　他深吸一口气，站了起来。他深深看了她一眼。他深知此事不妙。",
                &["1:3:repetition/consecutive"],
                "缩进的段落：列号指向句子，不指向缩进",
            ),
        ];
        for (text, want, why) in cases {
            let got = rules(text);
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(got, want, "{text}: {why}");
        }
    }

    #[test]
    fn two_sentences_opening_with_one_name_in_five_pass() {
        // Normal prose: two people acting in turn, each named at the head of a sentence.
        let cases: [(&str, &str); 3] = [
            (
                "林枫推开门走了进去。苏婉跟在他身后。林枫摸到墙上的开关。苏婉没有说话。灯亮了，桌上摆着一封信。",
                "两人轮流作句首，各 2 次",
            ),
            (
                "林枫把车停在粮站外面。雨下得很密，打在车顶上噼啪作响。林枫摇下车窗看了一眼。铁门半开着，门口的灯坏了一半。陆尘从副驾驶下来，递给他一支手电。",
                "同一人名开头 2 次，中间隔着别的句子",
            ),
            (
                "林枫的手在门框上停了一下。屋里的灯是亮的。老周的手在围裙上擦了一下。林枫没有去接那个电话。院子里的狗叫了两声。",
                "人名句首 2 次，另有一对句架相同",
            ),
        ];
        for (text, why) in cases {
            assert_eq!(rules(text), Vec::<String>::new(), "{text}: {why}");
        }
    }

    #[test]
    fn same_opening_three_times_in_five_fails() {
        let cases: [(&str, &[&str], &str); 3] = [
            (
                "林枫推开门走了进去。屋里很暗，什么也看不清。林枫摸到墙上的开关。灯亮了，桌上摆着一封信。林枫拿起信封看了看。",
                &["1:repetition/window"],
                "同一人名在 5 句中开头 3 次",
            ),
            (
                "林枫推开门走了进去。林枫摸到墙上的开关。林枫拿起信封看了看。",
                &["1:repetition/consecutive"],
                "连续 3 句同一句首",
            ),
            (
                "他缓缓地站了起来，目光落在远方。门外传来脚步声。她轻轻地放下了杯子，视线停在窗外。院子里很静。他慢慢地推开了窗，冷风灌在脸上。",
                &["1:repetition/window"],
                "句架相同的句子在 5 句中 3 次",
            ),
        ];
        for (text, want, why) in cases {
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(rules(text), want, "{text}: {why}");
        }
        // The message names what repeats: the frame, not a pair of sentences on one name.
        let text = "林枫的手在门框上停了一下。老周的手在围裙上擦了一下。林枫没有去接那个电话。陈默的手在桌面上敲了一下。";
        let d = Document::new(text);
        let found = findings(&d, &check(&d, 5, 2));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("句架「…的…在…了一…」×3"),
            "{}",
            found[0].message
        );
    }
}
