//! Evidence as QualityJudge quotes it, and the text it is held against.
//!
//! A quotation is split into fragments at ellipses (`……`, `…`, `...`) and between two quoted
//! pieces (`「甲」「乙」`, `“甲”、“乙”`); each fragment is compared with the text after the
//! project's normalisation, with whitespace and quotation marks ignored ([`Source::canon`]).
//!
//! A fragment proves something only when it is a clause: at least `gate.quote_min_chars`
//! characters (Han, letters, digits; [`zi`]), or a whole sentence of the text
//! ([`Source::whole_sentence`]): it starts where a sentence starts (the start of a paragraph,
//! after `。！？…；`, after a quotation mark) and ends where one ends (before those marks or a
//! quotation mark, maybe after a `，`/`、`/`：` that closes a line of dialogue). 「沈砚」 is a name,
//! not evidence; 「走！」 on its own line is a sentence.

/// Quotation marks: ignored when quotes are compared, and a sentence boundary in the text.
pub fn is_quote_mark(c: char) -> bool {
    matches!(
        c,
        '“' | '”'
            | '「'
            | '」'
            | '『'
            | '』'
            | '‘'
            | '’'
            | '"'
            | '\''
            | '﹁'
            | '﹂'
            | '﹃'
            | '﹄'
    )
}

/// Ends a sentence (full-width forms and the ASCII ones normalisation folds them to).
fn is_ender(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；' | '…' | '⋯' | '!' | '?' | ';')
}

/// Punctuation inside a sentence that may stand between its last word and its end (the `，` of
/// 「“废物，”他说」).
fn is_pause(c: char) -> bool {
    matches!(c, '，' | '、' | '：' | ',' | ':' | '—' | '～' | '~')
}

/// Trimmed at both ends of a fragment: marks a quotation starts or ends with.
fn is_edge(c: char) -> bool {
    c.is_whitespace()
        || is_quote_mark(c)
        || is_ender(c)
        || is_pause(c)
        || matches!(c, '.' | '（' | '）' | '(' | ')')
}

fn is_open_quote(c: char) -> bool {
    matches!(c, '“' | '「' | '『' | '‘' | '﹁' | '﹃')
}

fn is_close_quote(c: char) -> bool {
    matches!(c, '”' | '」' | '』' | '’' | '﹂' | '﹄')
}

/// The characters that count toward a fragment's length: Han characters, letters, digits.
pub fn zi(s: &str) -> usize {
    s.chars().filter(|c| c.is_alphanumeric()).count()
}

/// The quoted fragments of an evidence string, as they are held against `src`: split at
/// ellipses; a piece the text does not hold as it stands is split again between two quoted
/// pieces (「甲」「乙」, “甲”、“乙”: two quotations, where the text's own 「“灯”“烛”都讳了」
/// stays one); each trimmed of quotation marks and edge punctuation, those with at least one
/// character that counts ([`zi`]).
pub fn fragments(evidence: &str, src: &Source, normalize: &dyn Fn(&str) -> String) -> Vec<String> {
    let text = evidence.replace("...", "…").replace('⋯', "…");
    let mut out = Vec::new();
    for piece in text.split('…') {
        let whole = piece.trim_matches(is_edge);
        if zi(whole) == 0 {
            continue;
        }
        if src.contains(&Source::canon(whole, normalize)) {
            out.push(whole.to_string());
            continue;
        }
        out.extend(
            between_quotations(piece)
                .into_iter()
                .map(|f| f.trim_matches(is_edge).to_string())
                .filter(|f| zi(f) > 0),
        );
    }
    out
}

/// `piece` cut between a closing and an opening quotation mark (with 、，；/ or spaces between).
fn between_quotations(piece: &str) -> Vec<String> {
    let chars: Vec<char> = piece.chars().collect();
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        cur.push(c);
        i += 1;
        if is_close_quote(c) {
            let mut k = i;
            while k < chars.len()
                && (chars[k].is_whitespace()
                    || matches!(chars[k], '、' | '，' | ',' | '；' | ';' | '/'))
            {
                k += 1;
            }
            if k < chars.len() && is_open_quote(chars[k]) {
                pieces.push(std::mem::take(&mut cur));
                i = k;
            }
        }
    }
    pieces.push(cur);
    pieces
}

/// What the quotation opening at `chars[open]` holds ends with an end mark or a pause: a line of
/// dialogue (「他便“呸！”地一声」), not a term (「所谓“正传”」).
fn utterance_at(chars: &[char], open: usize) -> bool {
    chars[open + 1..]
        .iter()
        .position(|c| is_close_quote(*c) || *c == '"')
        .and_then(|k| chars[open + 1..open + 1 + k].last())
        .is_some_and(|c| is_ender(*c) || is_pause(*c))
}

/// A text prepared for quotes: normalised, whitespace and quotation marks dropped, with the
/// places a sentence may start or end.
pub struct Source {
    text: String,
    /// `bound[b]` for every byte offset `b` of `text` (and its end): a sentence starts there.
    bound: Vec<bool>,
}

impl Source {
    /// `text` as quotes are compared with it; Markdown heading lines (the chapter title) are
    /// left out unless `headings`.
    pub fn new(text: &str, normalize: &dyn Fn(&str) -> String, headings: bool) -> Source {
        let mut out = String::with_capacity(text.len());
        let mut bound = Vec::with_capacity(text.len() + 1);
        for line in normalize(text).lines() {
            if !headings && line.trim_start().starts_with('#') {
                continue;
            }
            // A paragraph starts a sentence; within it, a sentence starts after an end mark, at
            // an opening quotation mark that follows an end mark or a pause (「他说：“走！”」,
            // not 「所谓的“规矩”」), and after a line of dialogue closed by a pause
            // (「“废物，”他说」).
            let mut pending = true;
            let mut prev: Option<char> = None;
            let mut straight_open = false;
            let chars: Vec<char> = line.chars().collect();
            for (i, &c) in chars.iter().enumerate() {
                let opens = is_open_quote(c) || (c == '"' && !straight_open);
                let closes = is_close_quote(c) || (c == '"' && straight_open);
                if c == '"' {
                    straight_open = !straight_open;
                }
                if opens {
                    pending |=
                        prev.is_none_or(|p| is_ender(p) || is_pause(p)) || utterance_at(&chars, i);
                    continue;
                }
                if closes {
                    pending |= prev.is_some_and(is_pause);
                    continue;
                }
                if c.is_whitespace() || is_quote_mark(c) {
                    continue;
                }
                bound.push(pending);
                bound.extend(std::iter::repeat_n(false, c.len_utf8() - 1));
                out.push(c);
                // A pause or a dash right after a boundary (「……，而」「！——你」) starts nothing.
                pending = is_ender(c) || (pending && is_pause(c));
                prev = Some(c);
            }
        }
        bound.push(true);
        Source { text: out, bound }
    }

    /// A fragment as it is compared: normalised, without whitespace or quotation marks.
    pub fn canon(fragment: &str, normalize: &dyn Fn(&str) -> String) -> String {
        normalize(fragment)
            .chars()
            .filter(|c| !c.is_whitespace() && !is_quote_mark(*c))
            .collect()
    }

    /// The text holds the (canonical) fragment.
    pub fn contains(&self, canon: &str) -> bool {
        !canon.is_empty() && self.text.contains(canon)
    }

    /// The (canonical) fragment is, somewhere in the text, a whole sentence (or several).
    pub fn whole_sentence(&self, canon: &str) -> bool {
        !canon.is_empty()
            && self
                .text
                .match_indices(canon)
                .any(|(at, m)| self.bound[at] && self.ends_at(at + m.len()))
    }

    /// A sentence ends at byte `at`: the next characters are an end mark, or pauses followed by
    /// an end mark or a boundary (a quotation mark, a new paragraph, the end of the text).
    fn ends_at(&self, at: usize) -> bool {
        let mut b = at;
        for c in self.text[at..].chars() {
            if self.bound[b] && b > at {
                return true;
            }
            if is_ender(c) {
                return true;
            }
            if !is_pause(c) {
                return self.bound[b];
            }
            b += c.len_utf8();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        s.to_string()
    }

    fn src(text: &str) -> Source {
        Source::new(text, &plain, false)
    }

    fn whole(s: &Source, f: &str) -> bool {
        s.whole_sentence(&Source::canon(f, &plain))
    }

    #[test]
    fn fragments_split_at_ellipses_and_between_quotations() {
        let s = src("天快黑了。风停了。瘴气要上来了。“走！”他说。“快走！”他连“灯”“烛”都讳了。");
        let f = |e: &str| fragments(e, &s, &plain);
        assert_eq!(
            f("「废物，」赵天磊拿扇子敲了敲他肩膀……一枚丹也揣这么紧"),
            ["废物，」赵天磊拿扇子敲了敲他肩膀", "一枚丹也揣这么紧"]
        );
        assert_eq!(
            f("「天快黑了。」「瘴气要上来了。」"),
            ["天快黑了", "瘴气要上来了"]
        );
        assert_eq!(f("“走！”、“快走！”"), ["走", "快走"]);
        // The text's own adjacent quotations stay one quote.
        assert_eq!(f("他连“灯”“烛”都讳了"), ["他连“灯”“烛”都讳了"]);
        assert_eq!(f("「不是……而是」"), ["不是", "而是"]);
        assert!(f("……").is_empty());
    }

    #[test]
    fn whole_sentences_and_mere_words() {
        let s = src(
            "# 第12章 半枚丹\n\n谷口的雾是灰的，贴着石头往下淌。天快黑了。\n\n“废物，”赵天磊拿扇子敲了敲他肩膀，“一枚丹也揣这么紧？”\n\n“走！”\n\n他转身，走了……沈砚没有回头。",
        );
        assert!(whole(&s, "天快黑了"));
        assert!(whole(&s, "天快黑了。"));
        assert!(whole(&s, "走"));
        assert!(whole(&s, "废物"), "a line of dialogue closed by its comma");
        assert!(whole(&s, "一枚丹也揣这么紧"));
        assert!(whole(&s, "沈砚没有回头"));
        assert!(whole(&s, "他转身，走了"));
        assert!(!whole(&s, "沈砚"));
        assert!(!whole(&s, "他转身"));
        assert!(!whole(&s, "走了"), "a clause after a comma");
        assert!(!whole(&s, "谷口的雾"));
        assert!(!whole(&s, "半枚丹"), "the heading is not the text");
        let terms = src("这就是所谓的“规矩”。他喊了一声：“沈砚！”");
        assert!(!whole(&terms, "规矩"), "a term in quotation marks");
        assert!(whole(&terms, "沈砚"), "a line of dialogue");
        let dashed = src("小传……，而可惜都不合。他问：“你配么？”——你那里配姓赵！");
        assert!(whole(&dashed, "而可惜都不合"));
        assert!(whole(&dashed, "你那里配姓赵"));
        assert!(!s.contains(&Source::canon("半枚丹", &plain)));
        assert!(Source::new("# 第12章 半枚丹\n\n正文。", &plain, true).contains("半枚丹"));
    }

    #[test]
    fn full_width_punctuation_folded_by_normalisation_still_ends_sentences() {
        // The binary folds ！？，； to ASCII before comparing.
        let s = src("他停了一下,又说:“走!”\n\n门开了;风进来。");
        assert!(whole(&s, "走"));
        assert!(whole(&s, "门开了"));
        assert!(!whole(&s, "他停了一下"));
    }
}
