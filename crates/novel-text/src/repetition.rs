//! Sentence-pattern repetition (句式重复): PRD §7 Layer 4 (in any window of 5 adjacent
//! sentences, fewer than 2 repeat a pattern) and §5.4 (禁止连续 3 句相同句式).
//!
//! Without a segmenter, a sentence's pattern is read two ways:
//!
//! - **frame** (句架): its skeleton, with function characters (的地得了着过在把被……) kept,
//!   personal pronouns merged, inner commas kept and every other run of characters collapsed:
//!   「他缓缓地站了起来，目光落在远方。」 and 「她轻轻地放下了杯子，视线停在窗外。」 are both
//!   `他…地…了…，…在…`. A frame counts only with at least three function characters, so short
//!   plain sentences (他笑了。) do not collide by accident.
//! - **opening** (句首): what the sentence starts with, read as a [`OpeningKind`]: a person
//!   (a registered name, a speaker the chapter itself shows — 宋江道： — or a surname with a
//!   given name or a title: 武松, 王夫人), an item of an enumeration (1997年…, 一个…，
//!   第二…, 有的…), or else its first two characters (他深吸… → 「他深」).
//!
//! What fails a chapter is what marks machine prose: one frame repeated inside a window (two
//! repeats in five sentences) or three sentences of one frame in a row, and an opening that is
//! neither a name nor an enumeration repeated to the extreme: a whole window of sentences in a
//! row on it, full sentences (not the short single-clause items of a litany: 南无…佛。).
//! Human prose names its people at the head of sentence after sentence (宋江…。宋江…。宋江…。),
//! lists things (第一队…，第二队…) and writes verse; so the ordinary repetition of an
//! opening — [`MIN_OPENING_REPEATS`] in a window, three in a row — is advice (a warning), never
//! a failure, and an enumeration is not even that: its sentences share neither opening nor
//! frame by accident.
//!
//! Only narration sentences of at least [`MIN_SENTENCE_LEN`] characters take part: dialogue is
//! the characters' voice, and 「他说。」 after a quote is not a sentence pattern; nor does
//! verse (a paragraph of parallel lines: 祥云迷凤阁，瑞气罩龙楼。 — clauses in pairs of equal
//! length), whose refrains repeat by design. Those sentences still occupy their places in the
//! window.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use std::collections::HashSet;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use serde::Serialize;

use crate::count::is_han;
use crate::normalize::normalize_str;
use crate::segment::{Document, Sentence, Span, is_text_char};
use novel_core::diagnostic::{Diagnostic, Severity};

/// Shorter narration sentences have no pattern to repeat.
pub const MIN_SENTENCE_LEN: usize = 5;
/// A frame needs this many function characters to be distinctive.
const MIN_FRAME_MARKERS: usize = 3;
/// Sentences of one opening a window must hold before they are advice (two sentences
/// starting with the same name are normal prose).
pub const MIN_OPENING_REPEATS: usize = 3;
/// Items of a litany or a catalogue: single-clause sentences this short (南无药师琉璃光王佛。)
/// may open alike in a row.
const MAX_ITEM_LEN: usize = 12;

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

/// What a sentence opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpeningKind {
    /// A person: a registered name, a speaker of the chapter, a surname with a given name or
    /// a title.
    Name,
    /// An item of an enumeration: a numeral, 第…, 其一, 有的, 一面 ….
    List,
    /// Anything else, keyed by its first two characters.
    Text,
}

/// The people the opening rule knows: the registered cast (display names and aliases),
/// normalised. [`Subjects::of`] adds the speakers a chapter shows.
#[derive(Debug, Clone, Default)]
pub struct Subjects {
    names: HashSet<Vec<char>, BuildFnv>,
    /// First characters of `names`: most sentences open on none of them.
    firsts: HashSet<char, BuildFnv>,
    longest: usize,
}

/// FNV-1a for the small sets of names asked once per sentence (SipHash costs more than the
/// rest of the lookup).
#[derive(Debug, Clone, Copy, Default)]
struct BuildFnv;

struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(FNV_PRIME);
        }
    }
}

impl std::hash::BuildHasher for BuildFnv {
    type Hasher = Fnv;

    fn build_hasher(&self) -> Fnv {
        Fnv(FNV_OFFSET)
    }
}

/// Characters of a speaker before 道/说/问/曰 and a colon or comma (宋江道：, 那妇人道：).
const MAX_SPEAKER: usize = 4;

impl Subjects {
    pub fn new<S: AsRef<str>>(cast: impl IntoIterator<Item = S>) -> Subjects {
        let mut s = Subjects::default();
        for name in cast {
            s.add(&normalize_str(name.as_ref()).chars().collect::<Vec<char>>());
        }
        s
    }

    fn add(&mut self, name: &[char]) {
        if name.len() >= 2 && !self.names.contains(name) {
            self.longest = self.longest.max(name.len());
            self.firsts.insert(name[0]);
            self.names.insert(name.to_vec());
        }
    }

    /// These subjects plus the speakers of `doc`: the two to four characters between the head
    /// of a clause and a speech verb followed by a colon or comma (宋江道：, 智深笑道：,
    /// 林枫说，) — a person however the name is spelled, registered or not.
    pub fn of(&self, doc: &Document) -> Subjects {
        static SPEECH: OnceLock<AhoCorasick> = OnceLock::new();
        let speech = SPEECH.get_or_init(|| {
            AhoCorasick::new(["道:", "说:", "问:", "曰:", "道,", "说,", "问,", "曰,"])
                .expect("literal patterns")
        });
        let mut out = self.clone();
        let chars = doc.chars();
        for m in speech.find_iter(doc.text()) {
            let mut v = doc.char_of(m.start());
            if v > 0 && "笑叫答喝骂叹问说应回冷喊".contains(chars[v - 1]) {
                v -= 1;
            }
            let mut k = v;
            while k > 0 && v - k < MAX_SPEAKER && is_han(chars[k - 1]) && !doc.is_markup(k - 1) {
                k -= 1;
            }
            let at_clause_head = k == 0 || !is_han(chars[k - 1]);
            if at_clause_head && v - k >= 2 && !is_pronoun(chars[k]) && chars[k] != '咱' {
                out.add(&chars[k..v]);
            }
        }
        out
    }

    /// The longest subject at `i`, as a length.
    fn at(&self, chars: &[char], i: usize) -> Option<usize> {
        if !chars.get(i).is_some_and(|c| self.firsts.contains(c)) {
            return None;
        }
        (2..=self.longest.min(chars.len().saturating_sub(i)))
            .rev()
            .find(|&len| self.names.contains(&chars[i..i + len]))
    }
}

/// Chinese numerals that open an enumeration when a counter or 年/月/是 follows.
fn is_numeral(c: char) -> bool {
    matches!(
        c,
        '一' | '二'
            | '三'
            | '四'
            | '五'
            | '六'
            | '七'
            | '八'
            | '九'
            | '十'
            | '百'
            | '千'
            | '万'
            | '零'
            | '〇'
            | '两'
            | '几'
            | '半'
    )
}

/// Whether the text at `i` opens an item of an enumeration.
fn opens_list(chars: &[char], i: usize) -> bool {
    let at = |k: usize| chars.get(i + k).copied().unwrap_or('\n');
    let c = at(0);
    if c.is_ascii_digit() || c == '(' || c == '（' {
        return true;
    }
    if c == '第' && is_numeral(at(1)) || c == '其' && is_numeral(at(1)) {
        return true;
    }
    if is_numeral(c) {
        let mut k = 1;
        while is_numeral(at(k)) {
            k += 1;
        }
        return "年月日号是、.个人位只条张把次天来面边则种样件位家".contains(at(k));
    }
    [
        ['有', '的'],
        ['有', '人'],
        ['或', '者'],
        ['或', '是'],
        ['也', '有'],
    ]
    .iter()
    .any(|w| at(0) == w[0] && at(1) == w[1])
}

/// A sentence's opening: its span (from the first text character) and its kind.
fn opening(doc: &Document, s: &Sentence, subjects: &Subjects) -> (Span, OpeningKind) {
    let chars = doc.chars();
    let Some(start) =
        (s.span.start..s.span.end).find(|&i| !doc.is_markup(i) && is_text_char(chars[i]))
    else {
        return (s.span, OpeningKind::Text);
    };
    let span = |len: usize| Span {
        start,
        end: (start + len).min(s.span.end),
    };
    if let Some(len) = subjects.at(chars, start) {
        return (span(len), OpeningKind::Name);
    }
    if let Some(len) = crate::names::person_name_at(chars, start) {
        return (span(len), OpeningKind::Name);
    }
    if opens_list(chars, start) {
        return (span(2), OpeningKind::List);
    }
    // The first two text characters, skipping markup between them.
    let mut end = start;
    let mut taken = 0;
    while end < s.span.end && taken < 2 {
        if !doc.is_markup(end) && is_text_char(chars[end]) {
            taken += 1;
        }
        end += 1;
    }
    (Span { start, end }, OpeningKind::Text)
}

/// The pattern of one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentencePattern {
    pub opening: String,
    pub kind: OpeningKind,
    pub frame: Option<String>,
}

/// Whether sentence `s` takes part: narration, long enough, not verse.
fn takes_part(s: &Sentence, verse: &[bool]) -> bool {
    !s.is_dialogue()
        && s.len >= MIN_SENTENCE_LEN
        && !verse.get(s.paragraph).copied().unwrap_or(false)
}

/// The pattern of a sentence, or `None` when it takes no part (dialogue, too short).
pub fn pattern_of(doc: &Document, s: &Sentence) -> Option<SentencePattern> {
    pattern_with(doc, s, &Subjects::default().of(doc), &[])
}

fn pattern_with(
    doc: &Document,
    s: &Sentence,
    subjects: &Subjects,
    verse: &[bool],
) -> Option<SentencePattern> {
    if !takes_part(s, verse) {
        return None;
    }
    let chars = doc.chars();
    let (open, kind) = opening(doc, s, subjects);
    let opening: String = (open.start..open.end)
        .filter(|&i| !doc.is_markup(i) && is_text_char(chars[i]))
        .map(|i| chars[i])
        .collect();
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
        kind,
        frame: (markers >= MIN_FRAME_MARKERS).then_some(frame),
    })
}

/// [`SentencePattern`] reduced to numbers for the window scan (no allocation per sentence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PatternKey {
    opening: u64,
    kind: OpeningKind,
    frame: Option<u64>,
    /// A short single-clause sentence: an item of a litany or catalogue.
    item: bool,
    /// Its clauses are parallel lines (see [`Parallel`]).
    parallel: bool,
}

impl PatternKey {
    /// One frame, outside enumerations (第一队，……。第二队，……。 share theirs by design).
    fn same_frame(&self, other: &PatternKey) -> bool {
        self.kind != OpeningKind::List && self.frame.is_some() && self.frame == other.frame
    }

    /// One opening that is not an enumeration (names and plain openings: advice).
    fn same_opening(&self, other: &PatternKey) -> bool {
        self.kind != OpeningKind::List
            && other.kind != OpeningKind::List
            && self.opening == other.opening
    }

    /// One plain opening (neither a name nor an enumeration: the one that can fail).
    fn same_plain_opening(&self, other: &PatternKey) -> bool {
        self.kind == OpeningKind::Text && self.same_opening(other)
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x100_0000_01b3;

/// FNV-1a over characters: an opening as a number.
fn hash_chars(chars: impl Iterator<Item = char>) -> u64 {
    chars.fold(FNV_OFFSET, |h, c| {
        (h ^ u64::from(c as u32)).wrapping_mul(FNV_PRIME)
    })
}

fn pattern_key(doc: &Document, s: &Sentence, subjects: &Subjects) -> Option<PatternKey> {
    if !takes_part(s, &[]) {
        return None;
    }
    let chars = doc.chars();
    let (open, kind) = opening(doc, s, subjects);
    let opening = hash_chars(
        (open.start..open.end)
            .filter(|&i| !doc.is_markup(i) && is_text_char(chars[i]))
            .map(|i| chars[i]),
    );
    let mut frame = FNV_OFFSET;
    let mut token = |t: u32| frame = (frame ^ u64::from(t)).wrapping_mul(FNV_PRIME);
    let mut markers = 0;
    let mut run = false;
    let mut prev_pronoun = false;
    let mut lines = Parallel::new();
    for (i, &c) in chars.iter().enumerate().take(s.span.end).skip(s.span.start) {
        if doc.is_markup(i) {
            continue;
        }
        let text = is_text_char(c);
        if text {
            lines.text();
        } else if matches!(c, ',' | '、' | ';' | ':' | '。' | '!' | '?' | '…') {
            lines.boundary(c == ':');
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
    let clauses = lines.clauses();
    Some(PatternKey {
        opening,
        kind,
        frame: (markers >= MIN_FRAME_MARKERS).then_some(frame),
        item: clauses <= 1 && s.len <= MAX_ITEM_LEN,
        parallel: lines.parallel(),
    })
}

/// A sentence's clauses read as lines of verse (对仗): after a lead-in ending in a colon
/// (但见：), pairs of equal length, four to eleven characters each.
struct Parallel {
    len: usize,
    count: usize,
    prev: usize,
    paired: bool,
}

impl Parallel {
    fn new() -> Parallel {
        Parallel {
            len: 0,
            count: 0,
            prev: 0,
            paired: true,
        }
    }

    fn text(&mut self) {
        self.len += 1;
    }

    fn boundary(&mut self, colon: bool) {
        if self.len > 0 && !(colon && self.count == 0) {
            self.clause();
        }
        self.len = 0;
    }

    fn clause(&mut self) {
        if self.count.is_multiple_of(2) {
            self.prev = self.len;
        } else if self.prev != self.len || !(4..=11).contains(&self.len) {
            self.paired = false;
        }
        self.count += 1;
    }

    fn clauses(&self) -> usize {
        self.count + usize::from(self.len > 0)
    }

    fn parallel(mut self) -> bool {
        if self.len > 0 {
            self.clause();
        }
        self.paired && self.count >= 2 && self.count.is_multiple_of(2)
    }
}

/// Paragraphs of verse: every sentence of it that takes part is parallel lines, and there is
/// at least one.
fn verse_paragraphs(doc: &Document, pats: &[Option<PatternKey>]) -> Vec<bool> {
    let mut verse = vec![None::<bool>; doc.paragraphs().len()];
    for (s, p) in doc.sentences().iter().zip(pats) {
        if let Some(p) = p {
            let v = &mut verse[s.paragraph];
            *v = Some(v.unwrap_or(true) && p.parallel);
        }
    }
    verse.into_iter().map(|v| v.unwrap_or(false)).collect()
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
    /// Clusters of overlapping windows that fail the chapter: a frame repeated `max_repeats`
    /// times, or a plain opening on a whole window in a row.
    pub violations: usize,
    /// Clusters that are only advice: one opening [`MIN_OPENING_REPEATS`] times in a window,
    /// or three in a row, where it is a name or not extreme.
    pub advice: usize,
    /// Failing runs of consecutive sentences of one pattern (§5.4): three of one frame, or a
    /// whole window of one plain opening.
    pub consecutive: usize,
    /// Most repeated sentences seen in any one window (what fails: frames, plain openings).
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
    /// In a row (§5.4) rather than only too many in a window (§7).
    pub consecutive: bool,
    /// Advice (a warning) rather than a failure.
    pub advice: bool,
    /// What repeats: 句首「他深」 or 句架「他…地…了…」, with how often.
    pub what: String,
}

/// Windows of `window` sentences over `n` with at least `threshold` repeats by `repeats`,
/// merged where they overlap: `(first, last, repeats)`, and the most repeats in any window.
fn window_ranges(
    n: usize,
    window: usize,
    threshold: usize,
    repeats: impl Fn(usize, usize) -> usize,
) -> (Vec<(usize, usize, usize)>, usize) {
    let starts = if n <= window { 0..1 } else { 0..n - window + 1 };
    let mut worst = 0;
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
    for a in starts {
        let end = (a + window).min(n);
        let r = repeats(a, end);
        worst = worst.max(r);
        if r >= threshold && n > 0 {
            match ranges.last_mut() {
                Some(last) if a <= last.1 => {
                    last.1 = end - 1;
                    last.2 = last.2.max(r);
                }
                _ => ranges.push((a, end - 1, r)),
            }
        }
    }
    (ranges, worst)
}

/// Starts of runs of `len` consecutive sentences that all agree by `same`.
fn runs(
    pats: &[Option<PatternKey>],
    len: usize,
    same: impl Fn(&PatternKey, &PatternKey) -> bool,
) -> Vec<usize> {
    (0..pats.len().saturating_sub(len - 1))
        .filter(|&i| match &pats[i] {
            Some(a) => (1..len).all(|k| pats[i + k].as_ref().is_some_and(|b| same(a, b))),
            None => false,
        })
        .collect()
}

/// Adds each run `[t, t + len)` no range covers as a range of its own; sorts.
fn add_runs(ranges: &mut Vec<(usize, usize, usize)>, starts: &[usize], len: usize) {
    let covering = |ranges: &[(usize, usize, usize)], t: usize| {
        ranges.iter().any(|r| r.0 <= t && t + len - 1 <= r.1)
    };
    let extra: Vec<(usize, usize, usize)> = starts
        .iter()
        .filter(|&&t| !covering(ranges, t))
        .map(|&t| (t, t + len - 1, len - 1))
        .collect();
    ranges.extend(extra);
    ranges.sort();
}

/// Checks the sentences of `doc` with a window of `window` sentences and a limit of
/// `max_repeats` (a window with that many repeated frames is a violation), knowing no cast.
pub fn check(doc: &Document, window: usize, max_repeats: usize) -> RepetitionReport {
    check_with(doc, &Subjects::default(), window, max_repeats)
}

/// [`check`] with the project's cast: an opening on a registered name is a name.
pub fn check_with(
    doc: &Document,
    cast: &Subjects,
    window: usize,
    max_repeats: usize,
) -> RepetitionReport {
    let window = window.max(2);
    let subjects = cast.of(doc);
    let (pats, verse, names) = patterns(doc, &subjects);
    let n = pats.len();
    let agree = |a: usize, b: usize, same| agree(&pats, a, b, same);

    // What fails: repeated frames, and a plain opening on a whole window of full sentences in
    // a row.
    let (mut failing, worst) = window_ranges(n, window, max_repeats, |a, end| {
        (a..end)
            .filter(|&i| (a..i).any(|j| agree(i, j, PatternKey::same_frame)))
            .count()
    });
    let frame_runs = runs(&pats, 3, |a, b| a.same_frame(b));
    let plain_runs: Vec<usize> = runs(&pats, window, |a, b| a.same_plain_opening(b))
        .into_iter()
        .filter(|&t| !(t..t + window).all(|k| pats[k].is_some_and(|p| p.item)))
        .collect();
    let mut failing_runs: Vec<usize> = frame_runs.iter().chain(&plain_runs).copied().collect();
    failing_runs.sort_unstable();
    failing_runs.dedup();
    add_runs(&mut failing, &frame_runs, 3);
    add_runs(&mut failing, &plain_runs, window);
    merge(&mut failing);
    let (advice, advice_runs) = advice_ranges(&pats, window, &failing);

    let seen = Seen {
        subjects: &subjects,
        verse: &verse,
        names: &names,
    };
    let in_run = |starts: &[usize], len: usize, r: &(usize, usize, usize)| {
        starts.iter().any(|&t| r.0 <= t && t + len - 1 <= r.1)
    };
    let mut clusters: Vec<Cluster> = failing
        .iter()
        .map(|r| {
            let consecutive = in_run(&frame_runs, 3, r) || in_run(&plain_runs, window, r);
            describe(doc, &seen, *r, consecutive, false, window)
        })
        .collect();
    clusters.extend(
        advice
            .iter()
            .map(|r| describe(doc, &seen, *r, in_run(&advice_runs, 3, r), true, window)),
    );
    clusters.sort_by_key(|c| c.sentences);
    let violations = failing.len();
    RepetitionReport {
        window,
        max_repeats,
        violations,
        advice: advice.len(),
        consecutive: failing_runs.len(),
        worst_window: worst,
        pass: violations == 0,
        clusters,
    }
}

/// Each sentence's pattern (verse takes no part), an opening read as a name anywhere (林枫拿起…)
/// a name everywhere (林枫摸到…); the verse paragraphs; the openings read as names.
fn patterns(
    doc: &Document,
    subjects: &Subjects,
) -> (Vec<Option<PatternKey>>, Vec<bool>, HashSet<u64, BuildFnv>) {
    let sentences = doc.sentences();
    let mut pats: Vec<Option<PatternKey>> = sentences
        .iter()
        .map(|s| pattern_key(doc, s, subjects))
        .collect();
    let verse = verse_paragraphs(doc, &pats);
    for (s, p) in sentences.iter().zip(pats.iter_mut()) {
        if verse[s.paragraph] {
            *p = None;
        }
    }
    let names: HashSet<u64, BuildFnv> = pats
        .iter()
        .flatten()
        .filter(|p| p.kind == OpeningKind::Name)
        .map(|p| p.opening)
        .collect();
    for p in pats.iter_mut().flatten() {
        if p.kind == OpeningKind::Text && names.contains(&p.opening) {
            p.kind = OpeningKind::Name;
        }
    }
    (pats, verse, names)
}

/// Whether sentences `a` and `b` both have a pattern and agree by `same`.
fn agree(
    pats: &[Option<PatternKey>],
    a: usize,
    b: usize,
    same: fn(&PatternKey, &PatternKey) -> bool,
) -> bool {
    match (&pats[a], &pats[b]) {
        (Some(x), Some(y)) => same(x, y),
        _ => false,
    }
}

/// Advice: one opening (a name or plain) three times in a window or in a row, where nothing
/// fails (`failing`); the ranges, and the starts of the runs in a row.
fn advice_ranges(
    pats: &[Option<PatternKey>],
    window: usize,
    failing: &[(usize, usize, usize)],
) -> (Vec<(usize, usize, usize)>, Vec<usize>) {
    // How often the most frequent opening occurs in [a, end).
    let most = |a: usize, end: usize| {
        (a..end)
            .map(|i| {
                (a..end)
                    .filter(|&j| agree(pats, i, j, PatternKey::same_opening))
                    .count()
            })
            .max()
            .unwrap_or(0)
    };
    let (mut advice, _) = window_ranges(pats.len(), window, MIN_OPENING_REPEATS, most);
    let advice_runs = runs(pats, 3, |a, b| a.same_opening(b));
    add_runs(&mut advice, &advice_runs, 3);
    merge(&mut advice);
    advice.retain(|r| !failing.iter().any(|f| f.0 <= r.1 && r.0 <= f.1));
    (advice, advice_runs)
}

/// Merges overlapping ranges (sorted).
fn merge(ranges: &mut Vec<(usize, usize, usize)>) {
    ranges.sort();
    let mut out: Vec<(usize, usize, usize)> = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        match out.last_mut() {
            Some(last) if r.0 <= last.1 => {
                last.1 = last.1.max(r.1);
                last.2 = last.2.max(r.2);
            }
            _ => out.push(r),
        }
    }
    *ranges = out;
}

/// What the check learnt about a document, for describing its clusters.
struct Seen<'a> {
    subjects: &'a Subjects,
    verse: &'a [bool],
    /// Openings read as a name somewhere in the document.
    names: &'a HashSet<u64, BuildFnv>,
}

fn describe(
    doc: &Document,
    seen: &Seen<'_>,
    (first, last, repeats): (usize, usize, usize),
    consecutive: bool,
    advice: bool,
    window: usize,
) -> Cluster {
    // The pattern shared most often inside the cluster, and its first sentence: for a failure,
    // a frame or a plain opening seen to the extreme; for advice, an opening.
    let pats: Vec<Option<SentencePattern>> = doc.sentences()[first..=last]
        .iter()
        .map(|s| {
            let mut p = pattern_with(doc, s, seen.subjects, seen.verse)?;
            if p.kind == OpeningKind::Text && seen.names.contains(&hash_chars(p.opening.chars())) {
                p.kind = OpeningKind::Name;
            }
            Some(p)
        })
        .collect();
    let mut best: Option<(usize, String, usize)> = None; // (count, label, sentence)
    for (k, p) in pats.iter().enumerate() {
        let Some(p) = p else { continue };
        let same_open = if p.kind == OpeningKind::List {
            0
        } else {
            pats.iter()
                .filter(|q| {
                    q.as_ref()
                        .is_some_and(|q| q.kind != OpeningKind::List && q.opening == p.opening)
                })
                .count()
        };
        let enough = if advice { MIN_OPENING_REPEATS } else { window };
        let same_open = if same_open >= enough && (advice || p.kind == OpeningKind::Text) {
            same_open
        } else {
            0
        };
        let same_frame = if advice {
            0
        } else {
            p.frame.as_ref().map_or(0, |f| {
                pats.iter()
                    .filter(|q| q.as_ref().is_some_and(|q| q.frame.as_ref() == Some(f)))
                    .count()
            })
        };
        let (count, label) = if same_frame > same_open {
            let frame = readable_frame(p.frame.as_deref().unwrap_or(""));
            (same_frame, format!("句架「{frame}」"))
        } else {
            let whose = if p.kind == OpeningKind::Name {
                "，人名"
            } else {
                ""
            };
            (same_open, format!("句首「{}」{whose}", p.opening))
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
        advice,
        what: if count > 0 {
            match label.split_once('，') {
                Some((l, whose)) => format!("{l}×{count}，{whose}"),
                None => format!("{label}×{count}"),
            }
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
            let rule = if c.consecutive {
                "repetition/consecutive"
            } else {
                "repetition/window"
            };
            let (message, hint, severity) = match (c.advice, c.consecutive) {
                (true, true) => (
                    format!("连续 3 句句首相同（{}）", c.what),
                    "仅供参考，不影响通过：人名、排比开头是正常写法；想要变化可换主语或合并句子"
                        .to_string(),
                    Severity::Warning,
                ),
                (true, false) => (
                    format!(
                        "相邻 {} 句中有 {} 句句首相同（{}）",
                        report.window,
                        c.repeats.max(MIN_OPENING_REPEATS),
                        c.what
                    ),
                    "仅供参考，不影响通过：人名、排比开头是正常写法；想要变化可换主语或合并句子"
                        .to_string(),
                    Severity::Warning,
                ),
                (false, true) => (
                    if c.what.starts_with("句架") {
                        format!("连续 3 句相同句式（{}）", c.what)
                    } else {
                        format!("连续 {} 句句首相同（{}）", report.window, c.what)
                    },
                    "换一种句式或合并成一句".to_string(),
                    Severity::Error,
                ),
                (false, false) => (
                    format!(
                        "相邻 {} 句中有 {} 句句式重复（{}）",
                        report.window, c.repeats, c.what
                    ),
                    format!("上限 {} 句以下；变换句首或句式", report.max_repeats),
                    Severity::Error,
                ),
            };
            Diagnostic::new(rule, severity, "", message, hint)
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
        assert_eq!((a.opening.as_str(), a.kind), ("他缓", OpeningKind::Text));
        // Too few function characters: no frame, opening only.
        assert_eq!(pat("他推开门走出去。").unwrap().frame, None);
        // Dialogue and short sentences take no part.
        assert_eq!(pat("「我们走吧，别等了。」"), None);
        assert_eq!(pat("他笑了。"), None);
    }

    #[test]
    fn opening_kind_table() {
        let cases: [(&str, &str, OpeningKind); 10] = [
            ("宋江便叫人去请。", "宋江", OpeningKind::Name),
            ("武松看了那人一眼。", "武松", OpeningKind::Name),
            ("王夫人听了这话。", "王夫人", OpeningKind::Name),
            ("史进等拦当不住。", "史进", OpeningKind::Name),
            ("一九九七年，公司改制。", "一九", OpeningKind::List),
            ("1998年，他去了深圳。", "19", OpeningKind::List),
            ("第二队由林冲引领。", "第二", OpeningKind::List),
            ("有的人已经睡了。", "有的", OpeningKind::List),
            ("他深吸一口气站起来。", "他深", OpeningKind::Text),
            ("马上就要下雨了吧。", "马上", OpeningKind::Text),
        ];
        for (text, opening, kind) in cases {
            let p = pat(text).unwrap();
            assert_eq!((p.opening.as_str(), p.kind), (opening, kind), "{text}");
        }
        // A speaker the chapter shows (芮小丹说：) is a name at the head of any sentence.
        let d = Document::new("芮小丹说：「走。」芮小丹把门关上了。");
        let p = pattern_of(&d, &d.sentences()[1]).unwrap();
        assert_eq!((p.opening.as_str(), p.kind), ("芮小丹", OpeningKind::Name));
        // So is a registered name, however it is spelled.
        let d = Document::new("琼英挺戟直抢过去。");
        let s = Subjects::new(["琼英"]).of(&d);
        let p = pattern_with(&d, &d.sentences()[0], &s, &[]).unwrap();
        assert_eq!((p.opening.as_str(), p.kind), ("琼英", OpeningKind::Name));
    }

    /// `line:code:E|W` of each finding (the column when it is not 1).
    fn rules_with(cast: &[&str], text: &str) -> Vec<String> {
        let d = Document::new(text);
        let r = check_with(&d, &Subjects::new(cast.iter().copied()), 5, 2);
        findings(&d, &r)
            .into_iter()
            .map(|f| {
                let (line, col) = (f.line.unwrap_or(0), f.col.unwrap_or(0));
                let sev = if f.severity == Severity::Error {
                    "E"
                } else {
                    "W"
                };
                if col == 1 {
                    format!("{line}:{}:{sev}", f.code)
                } else {
                    format!("{line}:{col}:{}:{sev}", f.code)
                }
            })
            .collect()
    }

    fn rules(text: &str) -> Vec<String> {
        rules_with(&[], text)
    }

    #[test]
    fn repetition_table() {
        let cases: [(&str, &[&str], &str); 8] = [
            (
                "他深吸一口气，站了起来。他深深看了她一眼。他深知此事不妙。",
                &["1:repetition/consecutive:W"],
                "连续 3 句同句首：建议，不失败",
            ),
            (
                "他缓缓地站了起来，目光落在远方。\n她轻轻地放下了杯子，视线停在窗外。\n他慢慢地推开了窗，冷风灌在脸上。",
                &["1:repetition/consecutive:E"],
                "连续 3 句同句架（跨段）：失败",
            ),
            (
                "他深吸一口气站起来。门外传来脚步声。他深知来者不善。窗纸被风吹得作响。他深夜才回到家中。",
                &["1:repetition/window:W"],
                "5 句窗口内同一句首 3 次：建议",
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
                &["1:repetition/window:W"],
                "短句占位但不参与：他深×3 不连续",
            ),
            (
                "　　他深吸一口气，站了起来。他深深看了她一眼。他深知此事不妙。",
                &["1:3:repetition/consecutive:W"],
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
    fn names_at_the_head_of_sentences_are_advice_never_a_failure() {
        let cases: [(&[&str], &str, &[&str], &str); 5] = [
            (
                &[],
                "林枫推开门走了进去。屋里很暗，什么也看不清。林枫摸到墙上的开关。灯亮了，桌上摆着一封信。林枫拿起信封看了看。",
                &["1:repetition/window:W"],
                "同一人名在 5 句中开头 3 次：建议",
            ),
            (
                &[],
                "宋江听了大喜。宋江便叫人去请。宋江亲自迎出门来。宋江看那人时。宋江把酒来劝。宋江又问备细。",
                &["1:repetition/consecutive:W"],
                "古典小说：同一人名连续开头 6 次，仍只是建议",
            ),
            (
                &["芮小丹"],
                "芮小丹把车停好。芮小丹推开铁门。芮小丹看见院子里没人。芮小丹摸出手电。芮小丹走了进去。",
                &["1:repetition/consecutive:W"],
                "登记的三字人名：整名作句首键，不切成「芮小」",
            ),
            (
                &[],
                "琼英挺戟直抢过去。琼英拍马又来。琼英飞起一石子。琼英收了戟。琼英勒马回阵。琼英道：「休走。」",
                &["1:repetition/consecutive:W"],
                "本章里说过话（琼英道：）的人是人名",
            ),
            (
                &[],
                "他缓缓地站了起来，目光落在远方。门外传来脚步声。她轻轻地放下了杯子，视线停在窗外。院子里很静。他慢慢地推开了窗，冷风灌在脸上。",
                &["1:repetition/window:E"],
                "句架相同的句子在 5 句中 3 次：仍然失败",
            ),
        ];
        for (cast, text, want, why) in cases {
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(rules_with(cast, text), want, "{text}: {why}");
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
        // And advice on a name says so.
        let d = Document::new("宋江听了大喜。宋江便叫人去请。宋江亲自迎出门来。");
        let found = findings(&d, &check(&d, 5, 2));
        assert!(
            found[0].message.contains("句首「宋江」×3，人名"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_whole_window_on_one_plain_opening_fails() {
        // Five full sentences in a row on one opening that is no name: the extreme tell.
        assert_eq!(
            rules(
                "只见他深吸一口气站起来。只见他深知来者不善。只见他深夜才回到家中。只见他深深看了她一眼。只见他深感不妙，转身就走。"
            ),
            ["1:repetition/consecutive:E"]
        );
        // Four are advice.
        assert_eq!(
            rules(
                "只见他深吸一口气站起来。只见他深知来者不善。只见他深夜才回到家中。只见他深深看了她一眼。"
            ),
            ["1:repetition/consecutive:W"]
        );
        // A litany of short single-clause items is a list, not a tell.
        assert_eq!(
            rules(
                "南无药师琉璃光王佛。南无阿弥陀佛。南无宝幢佛。南无弥勒尊佛。南无释迦牟尼佛。南无旃檀光佛。"
            ),
            ["1:repetition/consecutive:W"]
        );
    }

    #[test]
    fn enumerations_and_verse_take_no_part() {
        let cases: [(&str, &str); 4] = [
            (
                "一九九七年，公司改制。一九九八年，他去了深圳。一九九九年，工厂倒闭了。二〇〇〇年，他回到了县城。二〇〇一年，他结了婚。",
                "年份列举",
            ),
            (
                "第一队，林冲引领五千人马在前，都是马军。第二队，花荣引领五千人马在后，都是马军。第三队，秦明引领五千人马在左，都是马军。",
                "队列列举：句首与句架都不算",
            ),
            (
                "世人都晓神仙好，惟有功名忘不了！\n世人都晓神仙好，只有金银忘不了！\n世人都晓神仙好，只有姣妻忘不了！\n世人都晓神仙好，只有儿孙忘不了！",
                "诗歌的叠句（每行两句等长）",
            ),
            (
                "但见：祥云迷凤阁，瑞气罩龙楼。含烟御柳拂篮旗，带露宫花迎剑戟。",
                "「但见：」引出的对仗诗句",
            ),
        ];
        for (text, why) in cases {
            assert_eq!(rules(text), Vec::<String>::new(), "{text}: {why}");
        }
    }
}
