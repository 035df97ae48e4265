//! Issue 40: how the evidence rules (`novel_core::judging::evidence`) treat honest and lazy
//! quotes of chapters nobody wrote for them — the precision corpus of public-domain fiction
//! (`tests/fixtures/precision/human/`: 阿Q正传, 水浒传, 红楼梦) and the web-novel-style samples
//! (`ai/`). An honest judge copies a sentence (with or without its quotation marks and end
//! mark) or a line of dialogue: that must pass. A lazy one quotes a name or a few 字: that must
//! not. The sentences here are cut by a splitter of their own (end marks, line breaks), not by
//! the rules under test. Prints the figures; `--nocapture` shows them.

use std::path::{Path, PathBuf};

use novel_core::judging::evidence::{Source, fragments, zi};
use novel_core::model::settings::GateThresholds;
use novel_text::normalize::normalize_str;

fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/precision");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        "human/aq-zhengzhuan",
        "human/shuihuzhuan",
        "human/hongloumeng",
        "ai",
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

const ENDS: &[char] = &['。', '！', '？', '!', '?', '…', '；'];
const CLOSING: &[char] = &['”', '」', '』', '’'];

/// The sentences of the text as a reader cuts them: at end marks (with the closing quotation
/// marks after them) and at line breaks; headings left out.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut cur = String::new();
        let mut i = 0;
        while i < chars.len() {
            cur.push(chars[i]);
            if ENDS.contains(&chars[i]) {
                while i + 1 < chars.len()
                    && (ENDS.contains(&chars[i + 1]) || CLOSING.contains(&chars[i + 1]))
                {
                    i += 1;
                    cur.push(chars[i]);
                }
                out.push(std::mem::take(&mut cur));
            }
            i += 1;
        }
        out.push(cur);
    }
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| zi(s) > 0)
        .collect()
}

/// What is between “ and ” (or 「 and 」), and whether it is a line of dialogue — it follows a
/// colon or ends with an end mark or a pause (「他说：“走！”」) — or a term (「所谓“正传”」).
fn quoted(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in text.lines() {
        for (open, close) in [('“', '”'), ('「', '」')] {
            let pieces: Vec<&str> = line.split(open).collect();
            for (i, piece) in pieces.iter().enumerate().skip(1) {
                if let Some((inner, _)) = piece.split_once(close)
                    && zi(inner) > 0
                {
                    let before = pieces[i - 1].trim_end().chars().last();
                    let spoken = before.is_none_or(|c| matches!(c, '：' | ':'))
                        || inner
                            .trim_end()
                            .chars()
                            .last()
                            .is_some_and(|c| "。！？!?…，,".contains(c));
                    out.push((inner.to_string(), spoken));
                }
            }
        }
    }
    out
}

/// The quote is refused: a fragment not in the text, or short and no whole sentence.
fn refused(src: &Source, quote: &str, min: usize) -> bool {
    fragments(quote, src, &normalize_str).iter().any(|f| {
        let c = Source::canon(f, &normalize_str);
        !src.contains(&c) || (zi(f) < min && !src.whole_sentence(&c))
    })
}

#[derive(Default)]
struct Tally {
    total: usize,
    refused: usize,
    examples: Vec<String>,
    passed: Vec<String>,
}

impl Tally {
    fn add(&mut self, refused: bool, quote: &str) {
        self.total += 1;
        if refused {
            self.refused += 1;
            if self.examples.len() < 6 {
                self.examples.push(quote.to_string());
            }
        } else if self.passed.len() < 6 {
            self.passed.push(quote.to_string());
        }
    }

    fn rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.refused as f64 / self.total as f64
        }
    }

    fn line(&self, what: &str) -> String {
        format!(
            "{what}: {} of {} refused ({:.2}%){}",
            self.refused,
            self.total,
            self.rate() * 100.0,
            if self.examples.is_empty() {
                String::new()
            } else {
                format!(" e.g. {}", self.examples.join(" | "))
            }
        )
    }

    /// [`Tally::line`] with what passed (for the quotes that should not).
    fn line_passed(&self, what: &str) -> String {
        format!(
            "{}; passed e.g. {}",
            self.line(what),
            self.passed.join(" | ")
        )
    }
}

fn strip_marks(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '“' | '”' | '「' | '」' | '『' | '』' | '‘' | '’'))
        .collect::<String>()
        .trim_end_matches(ENDS)
        .to_string()
}

/// Names of the cast files of the corpus, and of 阿Q正传.
fn names() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/precision/names/cast.json");
    let cast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root).unwrap()).unwrap();
    let mut out: Vec<String> = [
        "阿Q",
        "赵太爷",
        "王胡",
        "小D",
        "吴妈",
        "假洋鬼子",
        "地保",
        "秀才",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for c in cast.as_array().unwrap() {
        out.push(c["display_name"].as_str().unwrap().to_string());
        for a in c["aliases"].as_array().unwrap() {
            out.push(a.as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn honest_quotes_of_real_chapters_pass_and_names_and_words_do_not() {
    let min = GateThresholds::default().quote_min_chars as usize;
    let names = names();
    let (mut whole, mut whole_short, mut bare, mut lines) = Default::default();
    let (mut clauses, mut name_quotes, mut words, mut terms) = Default::default();
    let mut by_file = Vec::new();
    for (file, text) in corpus() {
        let src = Source::new(&text, &normalize_str, false);
        let mut here = Tally::default();
        for s in sentences(&text) {
            let r = refused(&src, &s, min);
            here.add(r, &s);
            Tally::add(&mut whole, r, &s);
            if zi(&s) < min {
                Tally::add(&mut whole_short, r, &s);
            }
            let b = strip_marks(&s);
            if zi(&b) > 0 {
                Tally::add(&mut bare, refused(&src, &b, min), &b);
            }
            // The clauses of a longer sentence, quoted on their own: short ones are no evidence.
            let parts: Vec<&str> = s
                .split(['，', '、', '：', ',', ':'])
                .filter(|p| zi(p) > 0)
                .collect();
            if parts.len() > 1 {
                for p in parts.iter().skip(1).filter(|p| zi(p) < min) {
                    let p = strip_marks(p);
                    if zi(&p) > 0 {
                        Tally::add(&mut clauses, refused(&src, &p, min), &p);
                    }
                }
            }
            // Two to seven 字 out of the middle of a sentence of twelve or more.
            let chars: Vec<char> = strip_marks(&s).chars().collect();
            if zi(&s) >= 12 && chars.len() > 10 {
                let len = 2 + chars.len() % 6;
                let w: String = chars[3..3 + len].iter().collect();
                if zi(&w) == w.chars().count() {
                    Tally::add(&mut words, refused(&src, &w, min), &w);
                }
            }
        }
        for (q, spoken) in quoted(&text) {
            let r = refused(&src, &q, min);
            if spoken {
                Tally::add(&mut lines, r, &q);
            } else if zi(&q) < min {
                Tally::add(&mut terms, r, &q);
            }
        }
        for n in &names {
            if src.contains(&Source::canon(n, &normalize_str)) {
                Tally::add(&mut name_quotes, refused(&src, n, min), n);
            }
        }
        by_file.push(format!("  {file}: {}", here.line("sentences")));
    }
    eprintln!(
        "evidence rules on the precision corpus (quote_min_chars {min}):\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
        by_file.join("\n"),
        whole.line("whole sentences, as in the text"),
        whole_short.line("  of them shorter than the minimum"),
        bare.line("whole sentences without quotation and end marks"),
        lines.line("lines of dialogue (inside quotation marks, after a colon or ending in a mark)"),
        terms.line_passed("short quoted terms (「所谓“正传”」)"),
        clauses.line_passed("short clauses out of a sentence"),
        words.line_passed("2–7 字 out of the middle of a sentence"),
        name_quotes.line_passed("names of the cast"),
    );
    // Honest quotes: whole sentences pass (with their marks or without).
    assert!(
        whole.total > 2000 && whole.rate() < 0.005,
        "{}",
        whole.line("whole")
    );
    assert!(bare.rate() < 0.01, "{}", bare.line("bare"));
    assert!(
        lines.total > 500 && lines.rate() < 0.01,
        "{}",
        lines.line("dialogue")
    );
    // Lazy quotes: names and words are refused.
    assert!(
        name_quotes.total > 20 && name_quotes.rate() > 0.95,
        "{}",
        name_quotes.line("names")
    );
    assert!(
        words.total > 500 && words.rate() > 0.95,
        "{}",
        words.line("words")
    );
}
