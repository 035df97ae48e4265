//! The AI-cliché blacklist scan (PRD §7 Layer 4).
//!
//! Matching is Aho–Corasick, leftmost-longest, over the normalised text, so a phrase inside a
//! longer listed phrase (仿佛 in 空气仿佛凝固) is counted once, as the longer one, and a
//! full-width variant matches. Context decides which phrases may match where, *before* the
//! match is made (an upstream tool masked first and checked dialogue after, so narration-only
//! phrases were never told apart):
//!
//! - in narration, every phrase;
//! - inside dialogue quotes, only phrases not marked `narration_only` (characters may talk
//!   like that);
//! - `paragraph_start_only` phrases, only at the first prose character of a paragraph.
//!
//! - headings (the chapter title, `# 第十章 命运的齿轮`) are not prose: nothing there counts, as
//!   they do not count toward 字数 either.
//!
//! The whitelist protects text, not phrases: a hit that overlaps a whitelisted phrase is not
//! counted. A whitelist entry equal to a listed phrase disables it; one around a listed phrase
//! (弱不禁风 around 不禁) or across its edge (抹布 in 一抹布) protects that context.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Anchored, Input, MatchKind, StartKind};
use novel_core::model::AiBlacklist;

use crate::markdown::{FRONT, HEADING, MARKUP};
use crate::normalize::normalize_str;
use crate::segment::{DIALOGUE, Document, QUOTE, Span};

/// Category of the style profile's `forbidden_words` when they join the scan.
pub const FORBIDDEN_CATEGORY: &str = "forbidden_words";

/// One phrase the scanner knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// As written in the list.
    pub phrase: String,
    pub category: String,
    pub narration_only: bool,
    pub paragraph_start_only: bool,
    pub replacements: Vec<String>,
    pub whitelist: bool,
}

/// A blacklist phrase found in a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlacklistHit {
    pub span: Span,
    /// Index into [`Blacklist::terms`].
    pub term: usize,
}

struct Automaton {
    ac: AhoCorasick,
    terms: Vec<usize>,
}

impl Automaton {
    fn build(
        terms: &[Term],
        keys: &[String],
        keep: impl Fn(&Term) -> bool,
        anchored: bool,
    ) -> Option<Automaton> {
        let picked: Vec<usize> = (0..terms.len())
            .filter(|&i| !terms[i].whitelist && keep(&terms[i]))
            .collect();
        if picked.is_empty() {
            return None;
        }
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            // A few hundred short phrases: the full DFA is small and the fastest to scan.
            .kind(Some(AhoCorasickKind::DFA))
            .start_kind(if anchored {
                StartKind::Anchored
            } else {
                StartKind::Unanchored
            })
            .build(picked.iter().map(|&i| &keys[i]))
            .expect("blacklist phrases are short literals");
        Some(Automaton { ac, terms: picked })
    }
}

/// A compiled blacklist: the phrases of `ai-blacklist.json` (plus, optionally, the style
/// profile's forbidden words) and its whitelist.
pub struct Blacklist {
    terms: Vec<Term>,
    categories: HashMap<String, String>,
    narration: Option<Automaton>,
    dialogue: Option<Automaton>,
    start: Option<Automaton>,
    /// The whitelist, matched with overlaps (every whitelisted stretch of text is found).
    whitelist: Option<AhoCorasick>,
}

impl std::fmt::Debug for Blacklist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blacklist")
            .field("terms", &self.terms.len())
            .finish()
    }
}

impl Blacklist {
    /// Compiles a blacklist. `forbidden_words` (from `style-profile.json`) join as phrases of
    /// category [`FORBIDDEN_CATEGORY`], counted everywhere; a word already listed keeps its entry.
    pub fn new(list: &AiBlacklist, forbidden_words: &[String]) -> Blacklist {
        let mut terms: Vec<Term> = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut add = |term: Term| {
            let key = normalize_str(&term.phrase);
            if key.is_empty() || seen.contains_key(&key) {
                return;
            }
            seen.insert(key.clone(), terms.len());
            terms.push(term);
            keys.push(key);
        };
        // Whitelist first: an identical listed phrase is then disabled.
        for w in &list.whitelist {
            add(Term {
                phrase: w.clone(),
                category: String::new(),
                narration_only: false,
                paragraph_start_only: false,
                replacements: Vec::new(),
                whitelist: true,
            });
        }
        for e in &list.entries {
            add(Term {
                phrase: e.phrase.clone(),
                category: e.category.clone(),
                narration_only: e.narration_only,
                paragraph_start_only: e.paragraph_start_only,
                replacements: e.replacements.clone(),
                whitelist: false,
            });
        }
        for w in forbidden_words {
            add(Term {
                phrase: w.clone(),
                category: FORBIDDEN_CATEGORY.to_string(),
                narration_only: false,
                paragraph_start_only: false,
                replacements: Vec::new(),
                whitelist: false,
            });
        }
        let mut categories: HashMap<String, String> = list
            .categories
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        categories
            .entry(FORBIDDEN_CATEGORY.to_string())
            .or_insert_with(|| "风格禁忌词".to_string());
        let narration = Automaton::build(&terms, &keys, |t| !t.paragraph_start_only, false);
        let dialogue = Automaton::build(
            &terms,
            &keys,
            |t| !t.paragraph_start_only && !t.narration_only,
            false,
        );
        let start = Automaton::build(&terms, &keys, |t| t.paragraph_start_only, true);
        let white: Vec<&String> = (0..terms.len())
            .filter(|&i| terms[i].whitelist)
            .map(|i| &keys[i])
            .collect();
        let whitelist = (!white.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(white)
                .expect("whitelist phrases are short literals")
        });
        Blacklist {
            terms,
            categories,
            narration,
            dialogue,
            start,
            whitelist,
        }
    }

    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Chinese name of a category slug (the slug itself when the list names none).
    pub fn category_name<'a>(&'a self, slug: &'a str) -> &'a str {
        self.categories
            .get(slug)
            .map(String::as_str)
            .unwrap_or(slug)
    }

    /// Every counted blacklist phrase in `doc`, in text order, none overlapping.
    pub fn scan(&self, doc: &Document) -> Vec<BlacklistHit> {
        let mut cands: Vec<Candidate> = Vec::new();
        self.narration_candidates(doc, &mut cands);
        self.dialogue_candidates(doc, &mut cands);
        self.paragraph_start_candidates(doc, &mut cands);
        // Nothing matched: no whitelist to look up (most chapters of a clean book).
        if cands.is_empty() {
            return Vec::new();
        }
        // Leftmost-longest across the automata, then drop what overlaps the whitelist.
        cands.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let white = self.whitelisted(doc);
        let mut hits = Vec::new();
        let mut end = 0;
        for (s, e, t) in cands {
            if s < end {
                continue;
            }
            end = e;
            if !white[s..e].contains(&true) {
                hits.push(BlacklistHit {
                    span: Span { start: s, end: e },
                    term: t,
                });
            }
        }
        hits
    }

    /// Narration: one pass over the whole text; a match that starts inside dialogue, front
    /// matter or a heading is not narration and is dropped here.
    fn narration_candidates(&self, doc: &Document, cands: &mut Vec<Candidate>) {
        let Some(auto) = &self.narration else {
            return;
        };
        let flags = doc.flags();
        for m in auto.ac.find_iter(doc.text()) {
            let start = doc.char_of(m.start());
            if flags[start] & (DIALOGUE | FRONT | HEADING) == 0 {
                cands.push((
                    start,
                    doc.char_of(m.end()),
                    auto.terms[m.pattern().as_usize()],
                ));
            }
        }
    }

    /// Dialogue: each run inside quotes, with the automaton that leaves out narration-only
    /// phrases (so a narration-only phrase cannot hide a shorter phrase that counts there).
    fn dialogue_candidates(&self, doc: &Document, cands: &mut Vec<Candidate>) {
        let Some(auto) = &self.dialogue else {
            return;
        };
        let flags = doc.flags();
        let n = flags.len();
        let mut i = 0;
        while i < n {
            if flags[i] & DIALOGUE == 0 || flags[i] & FRONT != 0 {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < n && flags[j] & DIALOGUE != 0 {
                j += 1;
            }
            let input = Input::new(doc.text()).range(doc.byte_of(i)..doc.byte_of(j));
            for m in auto.ac.find_iter(input) {
                cands.push((
                    doc.char_of(m.start()),
                    doc.char_of(m.end()),
                    auto.terms[m.pattern().as_usize()],
                ));
            }
            i = j;
        }
    }

    /// Paragraph starts, for the phrases that count only there: anchored at the first prose
    /// character of each paragraph that does not open a quote.
    fn paragraph_start_candidates(&self, doc: &Document, cands: &mut Vec<Candidate>) {
        let Some(start) = &self.start else {
            return;
        };
        let flags = doc.flags();
        for p in doc.paragraphs() {
            let first = (p.start..p.end)
                .find(|&k| flags[k] & (FRONT | MARKUP) == 0 && !doc.chars()[k].is_whitespace());
            if let Some(k) = first
                && flags[k] & (DIALOGUE | QUOTE) == 0
            {
                let input = Input::new(doc.text())
                    .range(doc.byte_of(k)..doc.byte_of(p.end))
                    .anchored(Anchored::Yes);
                if let Some(m) = start.ac.find(input) {
                    cands.push((k, doc.char_of(m.end()), start.terms[m.pattern().as_usize()]));
                }
            }
        }
    }

    /// The characters inside some whitelisted phrase.
    fn whitelisted(&self, doc: &Document) -> Vec<bool> {
        let mut white = vec![false; doc.flags().len()];
        if let Some(ac) = &self.whitelist {
            for m in ac.find_overlapping_iter(doc.text()) {
                white[doc.char_of(m.start())..doc.char_of(m.end())].fill(true);
            }
        }
        white
    }
}

/// A match before the overlap and whitelist checks: start and end (characters), term index.
type Candidate = (usize, usize, usize);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> AiBlacklist {
        serde_json::from_value(json!({
            "version": 1,
            "categories": {"descriptions": "描写套话", "transitions": "机械转折", "emotions": "情绪套话"},
            "entries": [
                {"phrase": "仿佛", "category": "descriptions", "narration_only": true},
                {"phrase": "空气仿佛凝固", "category": "descriptions", "narration_only": true},
                {"phrase": "嘴角微微上扬", "category": "descriptions", "narration_only": true},
                {"phrase": "突然间", "category": "transitions"},
                {"phrase": "然而", "category": "transitions", "paragraph_start_only": true},
                {"phrase": "不禁", "category": "emotions", "narration_only": true},
                {"phrase": "这，就是", "category": "emotions"},
                {"phrase": "心中一动", "category": "emotions"},
                {"phrase": "AI味", "category": "emotions"},
                {"phrase": "心中一动", "category": "descriptions"},
                {"phrase": "一抹", "category": "descriptions", "narration_only": true}
            ],
            "whitelist": ["弱不禁风", "突然间", "抹布", "不禁止"]
        }))
        .unwrap()
    }

    fn found(text: &str) -> Vec<String> {
        let bl = Blacklist::new(&list(), &[]);
        let doc = Document::new(text);
        bl.scan(&doc).iter().map(|h| doc.original(h.span)).collect()
    }

    #[test]
    fn blacklist_table() {
        let cases: [(&str, &[&str], &str); 20] = [
            ("他嘴角微微上扬。", &["嘴角微微上扬"], "叙述中命中"),
            (
                "空气仿佛凝固了。",
                &["空气仿佛凝固"],
                "短语在更长短语里只算一次",
            ),
            (
                "他仿佛睡着了，空气仿佛凝固。",
                &["仿佛", "空气仿佛凝固"],
                "各自独立出现各算一次",
            ),
            (
                "「你嘴角微微上扬什么？」",
                &[],
                "只计叙述的短语在「」里不算",
            ),
            ("“空气仿佛凝固了。”", &[], "只计叙述的短语在“”里不算"),
            (
                "「别说了」他嘴角微微上扬。",
                &["嘴角微微上扬"],
                "引号外照算",
            ),
            (
                "他心中一动。「我心中一动。」",
                &["心中一动", "心中一动"],
                "不限叙述的短语对话里也算",
            ),
            ("然而他没走。", &["然而"], "段首"),
            ("　　然而他没走。", &["然而"], "缩进后的段首"),
            ("他走了，然而没用。", &[], "非段首不算"),
            ("# 第一章\n然而天亮了。", &["然而"], "标题后第一段段首"),
            ("这,就是江湖。", &["这,就是"], "半角逗号与全角写法一致"),
            ("全是ＡＩ味。", &["ＡＩ味"], "全角字母变体"),
            (
                "她弱不禁风。他不禁笑了。",
                &["不禁"],
                "白名单保护包含它的上下文",
            ),
            ("突然间，灯灭了。", &[], "白名单与词条相同则停用"),
            ("---\ntitle: 仿佛\n---\n正文。", &[], "front matter 不扫"),
            ("# 第十章 心中一动\n他心中一动。", &["心中一动"], "标题不扫"),
            ("他一抹布擦干净。", &[], "白名单跨过短语边缘（抹布）"),
            ("他嘴角一抹笑。", &["一抹"], "不在白名单的上下文照算"),
            ("并不禁止。", &[], "白名单「不禁止」"),
        ];
        for (text, want, why) in cases {
            assert_eq!(found(text), want, "{text}: {why}");
        }
    }

    #[test]
    fn forbidden_words_join_and_duplicates_keep_first_entry() {
        let bl = Blacklist::new(&list(), &["莫名".to_string(), "心中一动".to_string()]);
        let doc = Document::new("他莫名地心中一动。");
        let hits = bl.scan(&doc);
        let cats: Vec<&str> = hits
            .iter()
            .map(|h| bl.terms()[h.term].category.as_str())
            .collect();
        assert_eq!(cats, ["forbidden_words", "emotions"]);
        assert_eq!(bl.category_name("forbidden_words"), "风格禁忌词");
    }

    #[test]
    fn template_list_compiles_and_catches_its_own_phrases() {
        let list: AiBlacklist =
            serde_json::from_str(include_str!("../../../templates/ai-blacklist.json")).unwrap();
        let bl = Blacklist::new(&list, &[]);
        // Every narration phrase placed mid-paragraph in narration is found as itself, or as a
        // longer listed phrase that contains it.
        for e in list.entries.iter().filter(|e| !e.paragraph_start_only) {
            let text = format!("甲乙{}丙丁。", e.phrase);
            let doc = Document::new(&text);
            let hits = bl.scan(&doc);
            assert_eq!(hits.len(), 1, "{}", e.phrase);
            assert!(
                doc.original(hits[0].span).contains(&e.phrase),
                "{}",
                e.phrase
            );
        }
    }
}
