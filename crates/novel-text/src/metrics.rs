//! Quantified style (PRD §5.6, §7 Layer 1): the numbers of `style-profile.json` computed, not
//! estimated. Field names match the profile where it has them (`avg_sentence_length`,
//! `dialogue_ratio`).
//!
//! `chars` is the 字数 every threshold told to the author counts (the 2,000 字 of a style
//! sample, a chapter's length): [`crate::count`], the same number `novel count` prints.
//! Sentence and paragraph lengths count text characters (汉字, letters, digits — see
//! [`crate::segment::is_text_char`]), not punctuation, whitespace or Markdown; their sum is
//! `text_chars`. Sentences and paragraphs are those of [`crate::segment`]; the dialogue ratio
//! is the share of text characters inside dialogue quotes.
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use std::collections::BTreeMap;

use novel_core::drift::StyleSample;
use serde::Serialize;

use crate::lint::round2;
use crate::markdown::{FRONT, HEADING, MARKUP};
use crate::segment::{Document, OUTER_CLOSE, QUOTE, is_text_char};

/// A sentence of at most this many characters is short (短句).
pub const SHORT_SENTENCE: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StyleMetrics {
    /// 字数 of the body (headings excluded), as `novel count` counts it.
    pub chars: usize,
    /// Text characters of the body (汉字, letters, digits: the sum of the sentence lengths),
    /// the base of the average sentence length, the dialogue ratio and the punctuation density.
    pub text_chars: usize,
    pub sentence_count: usize,
    /// 平均句长（字）。
    pub avg_sentence_length: f64,
    pub sentence_length: Distribution,
    /// Share of sentences with at most [`SHORT_SENTENCE`] characters.
    pub short_sentence_ratio: f64,
    /// 对话字数 / 全部字数。
    pub dialogue_ratio: f64,
    pub paragraph_count: usize,
    pub paragraph_length: Distribution,
    /// Marks per 1000 text characters.
    pub punctuation_per_1000: Punctuation,
    /// Most frequent narration sentence openings (first two characters), at least twice.
    pub top_openings: Vec<OpeningCount>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    pub min: usize,
    pub max: usize,
    pub mean: f64,
    pub median: f64,
    pub p90: usize,
    pub histogram: Vec<Bucket>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// `"11-20"`, or `"51+"` for the last bucket.
    pub range: String,
    pub count: usize,
}

/// Punctuation densities; a run of `……` or `——` is one mark.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Punctuation {
    pub comma: f64,
    pub period: f64,
    pub exclamation: f64,
    pub question: f64,
    pub ellipsis: f64,
    pub dash: f64,
    pub enumeration_comma: f64,
    pub semicolon: f64,
    pub colon: f64,
    /// Dialogue quotations (opening quote marks).
    pub quotation: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpeningCount {
    pub opening: String,
    pub count: usize,
}

const SENTENCE_BUCKETS: [usize; 5] = [5, 10, 20, 30, 50];
const PARAGRAPH_BUCKETS: [usize; 4] = [20, 50, 100, 200];

fn distribution(mut values: Vec<usize>, bounds: &[usize]) -> Distribution {
    values.sort_unstable();
    let n = values.len();
    let mut histogram = Vec::new();
    let mut lo = 1;
    for &hi in bounds {
        histogram.push(Bucket {
            range: format!("{lo}-{hi}"),
            count: values.iter().filter(|&&v| v >= lo && v <= hi).count(),
        });
        lo = hi + 1;
    }
    histogram.push(Bucket {
        range: format!("{lo}+"),
        count: values.iter().filter(|&&v| v >= lo).count(),
    });
    if n == 0 {
        return Distribution {
            min: 0,
            max: 0,
            mean: 0.0,
            median: 0.0,
            p90: 0,
            histogram,
        };
    }
    let median = if n % 2 == 1 {
        values[n / 2] as f64
    } else {
        (values[n / 2 - 1] + values[n / 2]) as f64 / 2.0
    };
    Distribution {
        min: values[0],
        max: values[n - 1],
        mean: round2(values.iter().sum::<usize>() as f64 / n as f64),
        median,
        // Nearest-rank percentile.
        p90: values[(n * 9).div_ceil(10).max(1) - 1],
        histogram,
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// What the drift rule reads of one chapter (`novel_core::drift`): its sentences' text
/// characters, its sentences, and the text characters inside dialogue — the sums
/// [`StyleMetrics::of`] divides.
pub fn sample(doc: &Document) -> StyleSample {
    let mut out = StyleSample {
        sentences: doc.sentences().len(),
        ..StyleSample::default()
    };
    for s in doc.sentences() {
        out.text_chars += s.len;
        out.dialogue += s.dialogue_len;
    }
    out
}

impl StyleMetrics {
    /// Metrics over several documents taken as one text (e.g. the last five chapters).
    pub fn of(docs: &[&Document]) -> StyleMetrics {
        let mut sentence_lens = Vec::new();
        let mut paragraph_lens = Vec::new();
        let mut dialogue = 0;
        let mut openings: BTreeMap<String, usize> = BTreeMap::new();
        let mut marks = [0usize; 10];
        let mut words = 0;
        for doc in docs {
            words += doc.word_count();
            for s in doc.sentences() {
                sentence_lens.push(s.len);
                dialogue += s.dialogue_len;
                if !s.is_dialogue() && s.len >= 2 {
                    let opening: String = (s.span.start..s.span.end)
                        .filter(|&i| !doc.is_markup(i))
                        .map(|i| doc.chars()[i])
                        .filter(|c| is_text_char(*c))
                        .take(2)
                        .collect();
                    *openings.entry(opening).or_default() += 1;
                }
            }
            for p in doc.paragraphs() {
                paragraph_lens.push(doc.text_len(*p));
            }
            count_marks(doc, &mut marks);
        }
        let chars: usize = sentence_lens.iter().sum();
        let sentence_count = sentence_lens.len();
        let short = sentence_lens
            .iter()
            .filter(|&&l| l <= SHORT_SENTENCE)
            .count();
        let per_k = |n: usize| round2(ratio(n * 1000, chars));
        let mut top: Vec<OpeningCount> = openings
            .into_iter()
            .filter(|(_, n)| *n >= 2)
            .map(|(opening, count)| OpeningCount { opening, count })
            .collect();
        top.sort_by(|a, b| b.count.cmp(&a.count).then(a.opening.cmp(&b.opening)));
        top.truncate(10);
        // The two figures the drift rule compares, by its own rounding.
        let window = StyleSample {
            text_chars: chars,
            sentences: sentence_count,
            dialogue,
        };
        StyleMetrics {
            chars: words,
            text_chars: chars,
            sentence_count,
            avg_sentence_length: window.avg_sentence_length(),
            sentence_length: distribution(sentence_lens, &SENTENCE_BUCKETS),
            short_sentence_ratio: round2(ratio(short, sentence_count)),
            dialogue_ratio: window.dialogue_ratio(),
            paragraph_count: paragraph_lens.len(),
            paragraph_length: distribution(paragraph_lens, &PARAGRAPH_BUCKETS),
            punctuation_per_1000: Punctuation {
                comma: per_k(marks[0]),
                period: per_k(marks[1]),
                exclamation: per_k(marks[2]),
                question: per_k(marks[3]),
                ellipsis: per_k(marks[4]),
                dash: per_k(marks[5]),
                enumeration_comma: per_k(marks[6]),
                semicolon: per_k(marks[7]),
                colon: per_k(marks[8]),
                quotation: per_k(marks[9]),
            },
            top_openings: top,
        }
    }
}

fn count_marks(doc: &Document, marks: &mut [usize; 10]) {
    let chars = doc.chars();
    let flags = doc.flags();
    let mut prev = '\0';
    for (i, &c) in chars.iter().enumerate() {
        if flags[i] & (FRONT | MARKUP | HEADING) != 0 {
            prev = '\0';
            continue;
        }
        let slot = match c {
            ',' => Some(0),
            '。' => Some(1),
            '!' => Some(2),
            '?' => Some(3),
            '…' if prev != '…' => Some(4),
            '—' if prev != '—' => Some(5),
            '、' => Some(6),
            ';' => Some(7),
            ':' => Some(8),
            _ if flags[i] & QUOTE != 0 && flags[i] & OUTER_CLOSE == 0 => Some(9),
            _ => None,
        };
        if let Some(k) = slot {
            marks[k] += 1;
        }
        prev = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_of_a_small_text() {
        let text = "# 第一章\n他来了。她走了，没回头。\n“你好！”他说。\n……";
        let doc = Document::new(text);
        let m = StyleMetrics::of(&[&doc]);
        // Sentences: 他来了(3) 她走了没回头(6) 你好(2) 他说(2).
        assert_eq!(m.sentence_count, 4);
        // 字数 as `novel count` has it: 13 汉字 and 9 marks (。，。“！”。……), not the heading.
        assert_eq!(m.chars, 22);
        assert_eq!(m.text_chars, 13);
        assert_eq!(m.avg_sentence_length, 3.25);
        assert_eq!(m.dialogue_ratio, 0.154); // 2 / 13
        assert_eq!(m.paragraph_count, 3); // the heading is not a paragraph; 「……」 is
        assert_eq!(m.paragraph_length.max, 9);
        assert_eq!(m.sentence_length.median, 2.5);
        assert_eq!(m.short_sentence_ratio, 1.0);
        let p = &m.punctuation_per_1000;
        // Per 1000 of 13 characters: 1 comma, 3 periods, 1 exclamation, 1 ellipsis run, 1 quote.
        assert_eq!(
            (p.comma, p.period, p.exclamation, p.ellipsis, p.quotation),
            (76.92, 230.77, 76.92, 76.92, 76.92)
        );
        assert!(m.top_openings.is_empty());
    }

    #[test]
    fn openings_and_histogram() {
        let doc = Document::new("他深吸了口气。他深知不妙。门开了。他深夜回家。");
        let m = StyleMetrics::of(&[&doc]);
        assert_eq!(
            m.top_openings,
            vec![OpeningCount {
                opening: "他深".into(),
                count: 3
            }]
        );
        let h: Vec<usize> = m
            .sentence_length
            .histogram
            .iter()
            .map(|b| b.count)
            .collect();
        assert_eq!(h, [3, 1, 0, 0, 0, 0]);
        assert_eq!(m.sentence_length.histogram[5].range, "51+");
        // Several documents are one text.
        let other = Document::new("门外下着雨，屋里很安静，谁也没有说话。");
        let both = StyleMetrics::of(&[&doc, &other]);
        assert_eq!(both.sentence_count, 5);
        assert_eq!(both.sentence_length.max, 16);
    }
}
