//! `novel lint`: the blacklist, the structural patterns and repetition over one chapter, with
//! a pass/fail summary against the project's thresholds (PRD §7 Layer 4).
//!
//! Density = hits ÷ (non-whitespace characters ÷ 1000), front matter and Markdown syntax left
//! out. The chapter passes when the blacklist density is below `blacklist_per_1000` (< 3 by
//! default), no pattern exceeds its own `max_per_1000`, and no window of
//! `repetition_window` sentences holds `repetition_max` repeated patterns. A limit scales with
//! the chapter and one use never fails it ([`within_limit`]): a single 「这一刻，」 in a
//! 1,500-字 chapter is 0.67 per 1,000 over a limit of 0.5, and no reader would call it a tic.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use std::collections::BTreeMap;

use serde::Serialize;

use novel_core::model::AiBlacklist;
use novel_core::model::settings::LintThresholds;

use crate::blacklist::{Blacklist, BlacklistHit, FORBIDDEN_CATEGORY};
use crate::patterns::{PatternError, PatternRule, Patterns};
use crate::repetition::{self, RepetitionReport, Subjects};
use crate::segment::Document;
use novel_core::diagnostic::{Diagnostic, Severity};

/// Characters of context either side of a match in an excerpt.
const EXCERPT_CONTEXT: usize = 10;

/// The compiled rules of a project.
#[derive(Debug)]
pub struct Linter {
    pub blacklist: Blacklist,
    pub patterns: Patterns,
    pub thresholds: LintThresholds,
    /// The registered cast: a sentence that opens on one of them opens on a name.
    pub cast: Subjects,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintReport {
    pub findings: Vec<Diagnostic>,
    pub summary: LintSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintSummary {
    pub pass: bool,
    /// Non-whitespace characters (the density base).
    pub chars: usize,
    pub blacklist: BlacklistSummary,
    pub patterns: Vec<PatternSummary>,
    pub repetition: RepetitionReport,
    /// Why the chapter failed, in Chinese (empty when it passed).
    pub failures: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlacklistSummary {
    pub hits: usize,
    pub per_1000: f64,
    /// Passing requires `per_1000 < limit`.
    pub limit: f64,
    pub pass: bool,
    pub categories: Vec<CategoryCount>,
    /// Most frequent phrases, most first.
    pub top: Vec<PhraseCount>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryCount {
    pub category: String,
    pub name: String,
    pub hits: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhraseCount {
    pub phrase: String,
    pub hits: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternSummary {
    pub id: String,
    pub name: String,
    pub hits: usize,
    pub per_1000: f64,
    /// Passing requires `per_1000 <= max_per_1000`; no limit, always passes.
    pub max_per_1000: Option<f64>,
    pub pass: bool,
}

/// Hits per 1000 characters (0 for an empty text).
pub fn per_1000(hits: usize, chars: usize) -> f64 {
    if chars == 0 {
        0.0
    } else {
        hits as f64 * 1000.0 / chars as f64
    }
}

/// A text this long is a chapter, and one use of a phrase or pattern never fails it; a shorter
/// passage (a sample, a scene) is held to the density alone.
pub const CHAPTER_MIN_CHARS: usize = 1000;

/// Whether `hits` in `chars` characters stay within a density limit (`strict`: below it, else at
/// most it) — always, for a single hit in a chapter ([`CHAPTER_MIN_CHARS`]): one use never
/// fails a chapter, however short.
pub fn within_limit(hits: usize, chars: usize, limit: f64, strict: bool) -> bool {
    let d = per_1000(hits, chars);
    (hits <= 1 && chars >= CHAPTER_MIN_CHARS) || if strict { d < limit } else { d <= limit }
}

/// `「name」`, unless the name already carries its own corner brackets.
fn quoted(name: &str) -> String {
    if name.contains('「') {
        name.to_string()
    } else {
        format!("「{name}」")
    }
}

/// Two decimals, for reports.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Linter {
    /// Compiles the blacklist (with the style profile's forbidden words) and the patterns.
    pub fn new(
        list: &AiBlacklist,
        forbidden_words: &[String],
        thresholds: LintThresholds,
    ) -> Result<Linter, PatternError> {
        Ok(Linter {
            blacklist: Blacklist::new(list, forbidden_words),
            patterns: Patterns::new(list)?,
            thresholds,
            cast: Subjects::default(),
        })
    }

    /// The same linter knowing the project's registered names (display names and aliases).
    pub fn with_cast<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Linter {
        self.cast = Subjects::new(names);
        self
    }

    pub fn lint(&self, doc: &Document) -> LintReport {
        let chars = doc.non_whitespace_chars();
        let mut findings = Vec::new();
        let mut failures = Vec::new();
        let blacklist = self.lint_blacklist(doc, chars, &mut findings, &mut failures);
        let patterns = self.lint_patterns(doc, chars, &mut findings, &mut failures);
        let repetition = self.lint_repetition(doc, &mut findings, &mut failures);
        findings.sort();
        let pass = failures.is_empty();
        LintReport {
            findings,
            summary: LintSummary {
                pass,
                chars,
                blacklist,
                patterns,
                repetition,
                failures,
            },
        }
    }

    /// The blacklist: a finding per hit, and its summary (a failure when the density is not
    /// below the limit).
    fn lint_blacklist(
        &self,
        doc: &Document,
        chars: usize,
        findings: &mut Vec<Diagnostic>,
        failures: &mut Vec<String>,
    ) -> BlacklistSummary {
        let hits = self.blacklist.scan(doc);
        findings.extend(hits.iter().map(|h| self.blacklist_finding(doc, h)));
        let density = per_1000(hits.len(), chars);
        let limit = self.thresholds.blacklist_per_1000;
        let pass = within_limit(hits.len(), chars, limit, true);
        if !pass {
            failures.push(format!(
                "AI 黑名单命中 {} 次，{:.2} 次/千字（须低于 {}）",
                hits.len(),
                density,
                limit
            ));
        }
        BlacklistSummary {
            hits: hits.len(),
            per_1000: round2(density),
            limit,
            pass,
            categories: self.category_counts(&hits),
            top: self.top_phrases(&hits),
        }
    }

    /// The finding for one blacklist hit: what was found, its category and what to write instead.
    fn blacklist_finding(&self, doc: &Document, h: &BlacklistHit) -> Diagnostic {
        let term = &self.blacklist.terms()[h.term];
        let (line, col) = doc.position(h.span.start);
        let category = self.blacklist.category_name(&term.category);
        let found = doc.original(h.span);
        let advice = if term.replacements.is_empty() {
            "删去，或换成具体的动作、细节".to_string()
        } else {
            format!("可改为：{}", term.replacements.join(" / "))
        };
        let what = if term.category == FORBIDDEN_CATEGORY {
            "风格禁忌词"
        } else {
            "AI 套话"
        };
        Diagnostic::new(
            format!("blacklist/{}", term.category),
            Severity::Warning,
            "",
            format!("{what}「{found}」（{category}）"),
            advice,
        )
        .at(line, col)
        .with_excerpt(doc.excerpt(h.span, EXCERPT_CONTEXT))
    }

    /// Hits per category, most first (ties by slug).
    fn category_counts(&self, hits: &[BlacklistHit]) -> Vec<CategoryCount> {
        let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
        for h in hits {
            let term = &self.blacklist.terms()[h.term];
            *by_category.entry(term.category.as_str()).or_default() += 1;
        }
        let mut categories: Vec<CategoryCount> = by_category
            .into_iter()
            .map(|(c, n)| CategoryCount {
                category: c.to_string(),
                name: self.blacklist.category_name(c).to_string(),
                hits: n,
            })
            .collect();
        categories.sort_by(|a, b| b.hits.cmp(&a.hits).then(a.category.cmp(&b.category)));
        categories
    }

    /// The ten most frequent phrases, most first (ties by phrase).
    fn top_phrases(&self, hits: &[BlacklistHit]) -> Vec<PhraseCount> {
        let mut by_phrase: BTreeMap<&str, usize> = BTreeMap::new();
        for h in hits {
            let term = &self.blacklist.terms()[h.term];
            *by_phrase.entry(term.phrase.as_str()).or_default() += 1;
        }
        let mut top: Vec<PhraseCount> = by_phrase
            .into_iter()
            .map(|(p, n)| PhraseCount {
                phrase: p.to_string(),
                hits: n,
            })
            .collect();
        top.sort_by(|a, b| b.hits.cmp(&a.hits).then(a.phrase.cmp(&b.phrase)));
        top.truncate(10);
        top
    }

    /// The structural patterns: a finding per hit, and a summary per rule (a failure for each
    /// rule over its own limit).
    fn lint_patterns(
        &self,
        doc: &Document,
        chars: usize,
        findings: &mut Vec<Diagnostic>,
        failures: &mut Vec<String>,
    ) -> Vec<PatternSummary> {
        let pattern_hits = self.patterns.scan(doc);
        let mut counts = vec![0usize; self.patterns.rules().len()];
        for h in &pattern_hits {
            counts[h.rule] += 1;
            let rule = &self.patterns.rules()[h.rule];
            let (line, col) = doc.position(h.span.start);
            let why = rule
                .description
                .as_deref()
                .unwrap_or("结构性 AI 痕迹：换成直接的陈述、动作或对话");
            findings.push(
                Diagnostic::new(
                    format!("pattern/{}", rule.id),
                    Severity::Warning,
                    "",
                    format!("句式{}", quoted(&rule.name)),
                    why,
                )
                .at(line, col)
                .with_excerpt(doc.excerpt(h.span, EXCERPT_CONTEXT)),
            );
        }
        self.patterns
            .rules()
            .iter()
            .zip(&counts)
            .map(|(rule, &n)| pattern_summary(rule, n, chars, failures))
            .collect()
    }

    /// Repetition: its findings, and a failure when a window holds too many repeats.
    fn lint_repetition(
        &self,
        doc: &Document,
        findings: &mut Vec<Diagnostic>,
        failures: &mut Vec<String>,
    ) -> RepetitionReport {
        let rep = repetition::check_with(
            doc,
            &self.cast,
            self.thresholds.repetition_window as usize,
            self.thresholds.repetition_max as usize,
        );
        findings.extend(repetition::findings(doc, &rep));
        if !rep.pass {
            failures.push(format!(
                "句式重复 {} 处（相邻 {} 句中同句架的重复须少于 {} 句，不能连续 {} 句同一句首）",
                rep.violations, rep.window, rep.max_repeats, rep.window
            ));
        }
        rep
    }
}

/// One pattern rule's summary over `n` hits (a failure when it exceeds its own limit).
fn pattern_summary(
    rule: &PatternRule,
    n: usize,
    chars: usize,
    failures: &mut Vec<String>,
) -> PatternSummary {
    let d = per_1000(n, chars);
    let pass = rule
        .max_per_1000
        .is_none_or(|max| within_limit(n, chars, max, false));
    if !pass {
        failures.push(format!(
            "句式{}{} 次，{:.2} 次/千字（上限 {}）",
            quoted(&rule.name),
            n,
            d,
            rule.max_per_1000.unwrap_or_default()
        ));
    }
    PatternSummary {
        id: rule.id.clone(),
        name: rule.name.clone(),
        hits: n,
        per_1000: round2(d),
        max_per_1000: rule.max_per_1000,
        pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn linter() -> Linter {
        let list: AiBlacklist = serde_json::from_value(json!({
            "version": 1,
            "categories": {"body_language": "微表情套路"},
            "entries": [
                {"phrase": "嘴角微微上扬", "category": "body_language", "narration_only": true,
                 "replacements": ["笑了一下"]}
            ],
            "patterns": [{"id": "em-dash", "name": "破折号", "regex": "——", "narration_only": true, "max_per_1000": 2}]
        }))
        .unwrap();
        Linter::new(&list, &[], LintThresholds::default()).unwrap()
    }

    /// `n` characters of plain narration without any rule's material.
    fn filler(n: usize) -> String {
        let unit = "门外的雨下了一整夜瓦檐滴水";
        unit.chars().cycle().take(n).collect()
    }

    #[test]
    fn density_threshold_is_strict() {
        let l = linter();
        // 2 hits in 1000 non-whitespace characters → 2.0 < 3 passes.
        let two = format!("{}嘴角微微上扬{}嘴角微微上扬", filler(494), filler(494));
        let doc = Document::new(&two);
        assert_eq!(doc.non_whitespace_chars(), 1000);
        let r = l.lint(&doc);
        assert_eq!(
            (r.summary.blacklist.hits, r.summary.blacklist.per_1000),
            (2, 2.0)
        );
        assert!(r.summary.pass, "{:?}", r.summary.failures);
        // 3 hits in 1000 → 3.0 is not below 3: fails.
        let three = format!(
            "{}嘴角微微上扬{}嘴角微微上扬{}嘴角微微上扬",
            filler(327),
            filler(327),
            filler(328)
        );
        let doc = Document::new(&three);
        assert_eq!(doc.non_whitespace_chars(), 1000);
        let r = l.lint(&doc);
        assert_eq!(r.summary.blacklist.per_1000, 3.0);
        assert!(!r.summary.pass);
        assert!(
            r.summary.failures[0].contains("3.00 次/千字"),
            "{:?}",
            r.summary.failures
        );
        // Whitespace does not count toward the base.
        let spaced = format!("{}\n\n　　{}", filler(500), filler(500));
        assert_eq!(Document::new(&spaced).non_whitespace_chars(), 1000);
    }

    #[test]
    fn headings_are_neither_linted_nor_counted() {
        let l = linter();
        let body = filler(100);
        let doc = Document::new(&format!("# 第十章 嘴角微微上扬——\n{body}"));
        let r = l.lint(&doc);
        assert_eq!(r.findings, vec![], "the title is not prose");
        assert_eq!(r.summary.chars, 100, "nor part of the density base");
    }

    #[test]
    fn findings_carry_position_rule_and_advice() {
        let l = linter();
        let doc = Document::new("第一行。\n　　他愣了——然后嘴角微微上扬。");
        let r = l.lint(&doc);
        let got: Vec<(usize, usize, &str)> = r
            .findings
            .iter()
            .map(|f| (f.line.unwrap_or(0), f.col.unwrap_or(0), f.code.as_ref()))
            .collect();
        assert_eq!(
            got,
            [
                (2, 6, "pattern/em-dash"),
                (2, 10, "blacklist/body_language")
            ]
        );
        assert!(r.findings[1].hint.contains("可改为：笑了一下"));
        assert!(
            r.findings[1]
                .excerpt
                .as_deref()
                .unwrap_or_default()
                .contains("嘴角微微上扬")
        );
        // One dash in 17 characters is far over 2 per 1000 (a passage, not a chapter).
        assert!(!r.summary.patterns[0].pass);
    }

    #[test]
    fn one_use_never_fails_a_short_chapter() {
        let l = linter();
        // One dash in a 1,200-character chapter is 0.83 per 1000 of the dash's 2 … and of a
        // limit of 0.5 (「这一刻，」): one use, a chapter — it passes.
        let once = format!("{}——{}", filler(600), filler(598));
        let r = l.lint(&Document::new(&once));
        assert_eq!(r.summary.chars, 1200);
        assert!(r.summary.pass, "{:?}", r.summary);
        assert!(within_limit(1, 1200, 0.5, false));
        // Two uses in the same chapter fail a limit of 0.5 and pass one of 2.
        assert!(!within_limit(2, 1200, 0.5, false));
        assert!(within_limit(2, 1200, 2.0, false));
        // A 300-character passage is no chapter: one use over the density fails it.
        assert!(!within_limit(1, 300, 0.5, false));
        assert!(!within_limit(1, 300, 3.0, true));
    }
}
