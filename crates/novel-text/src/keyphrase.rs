//! Key phrases of a Chinese rule sentence (seed `000` step 4: 「从变更规则 rule 句子中抽取 3-5 个关键短语」),
//! the extractor `novel spec propagate` hands to `novel_core::spec::propagate`.
//!
//! Real word segmentation (jieba, behind the `jieba` feature, which the CLI enables) with two
//! layers of domain vocabulary on top of its general dictionary:
//! - the **project glossary** (`novel_core::spec::glossary::Glossary`: character names and
//!   aliases, world-rule ids, terms the world docs highlight, storyline names). Its terms are
//!   cut out of the sentence first (longest match), which is what adding them to jieba as user
//!   words with a very high frequency does, while the dictionary stays one shared, read-only
//!   value for the process;
//! - a built-in **genre vocabulary** ([`GENRE_TERMS`]: 渡劫期、御剑飞行、炼丹师 …) that jieba's
//!   news-text dictionary lacks, added to jieba as user words.
//!
//! Then, per jieba token: a one-character suffix (者、期、劫、府、师 …) joins the word before it
//! (修炼+者 → 修炼者, 渡劫+期 → 渡劫期); adjacent nouns join into one compound of at most five
//! characters (宗门+大会 → 宗门大会, 结丹+修士 → 结丹修士); stop words ([`STOP_WORDS`]: 需要、只能、
//! 无法、可以 …), function words by part of speech (adverbs, prepositions, particles, pronouns,
//! localisers), single characters and numbers (一次、三枚、每十年、3级) are dropped.
//!
//! Ranking: glossary terms first (sentence order, at most 5); then nouns, longer first, then
//! rarer (jieba's dictionary frequency); other content words (verbs, adjectives, times) only top
//! the list up to 3 — every extra weak phrase widens the net of "possibly affected" contracts.
//!
//! The dictionary is loaded on the first call of [`extract`] (~60 ms in a release build), which
//! only `novel spec propagate` makes: nothing else in the binary pays for it. Without the
//! `jieba` feature only the glossary and the genre vocabulary are recognised.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use std::collections::BTreeSet;

use novel_core::spec::glossary::Glossary;
use serde::Serialize;

/// Most phrases kept per sentence.
pub const MAX_PHRASES: usize = 5;
/// Words that are not nouns only top the list up to this many.
pub const MIN_PHRASES: usize = 3;

/// Words that are never key phrases: modal and logical words, quantifiers, generic verbs and
/// adverbs. (Single characters are dropped anyway; function words are also dropped by their
/// part of speech, this list catches what jieba tags as content words, e.g. 无法 as a noun.)
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    // modal and logical words
    "需要", "可以", "必须", "不能", "无法", "不得", "不可", "禁止", "应当", "应该", "能够",
    "只能", "只有", "只会", "只要", "只是", "除非", "否则", "如果", "假如", "一旦", "因为",
    "所以", "因此", "但是", "然而", "而且", "并且", "或者", "以及", "即使", "虽然", "无论",
    "不论", "凡是", "是否", "能否", "可能", "一定", "必定", "不会", "不是", "就是", "还是",
    "便是", "都是", "也是", "将会", "已经", "正在", "仍然", "依然", "同时", "随时", "立即",
    "一律", "绝不", "永远", "不再", "可达",
    // places in the sentence, quantities, references
    "以上", "以下", "以内", "以外", "之间", "之后", "之前", "之中", "之内", "之外", "之一",
    "其中", "时候", "所有", "一切", "任何", "每个", "一个", "一些", "这个", "那个", "这些",
    "那些", "本人", "自己", "唯一", "最终", "至少", "最多", "超过", "达到", "低于", "高于",
    "等于", "不超过", "相关", "有关", "关于", "对于", "根据", "按照", "由于",
    // generic verbs
    "没有", "进行", "通过", "使用", "进入", "离开", "获得", "拥有", "持有", "成为", "变得",
    "发现", "出现", "发生", "导致", "影响", "格外",
];

/// Genre vocabulary (修真、玄幻、都市异能、历史) that jieba's general dictionary lacks or
/// splits; added to the segmenter as user words.
#[rustfmt::skip]
pub const GENRE_TERMS: &[&str] = &[
    // realms and tribulations
    "炼气期", "筑基期", "结丹期", "金丹期", "元婴期", "化神期", "炼虚期", "合体期", "大乘期",
    "渡劫期", "结丹", "元婴", "化神", "天劫", "雷劫", "天雷劫", "心魔", "心魔劫", "修为",
    // cultivation
    "修炼者", "灵根", "元神", "真元", "秘境", "宗门", "阵眼", "阵盘", "玉简", "秘法", "禁术",
    "本命法宝", "御剑", "御剑飞行", "储物袋", "储物戒指", "传送阵", "护山大阵", "天地灵气",
    "夺舍", "寿元", "妖兽", "妖丹", "妖族", "魔族", "魔修", "魔都", "剑意", "剑修", "体修",
    "鬼修", "灵脉", "灵宠", "真仙", "域外天魔", "炼丹师", "炼器师", "阵法师", "符师", "丹盟",
    "月圆之夜",
    // urban powers, apocalypse, contract beasts
    "觉醒者", "进化者", "魂环", "魂力", "魂师", "契约兽",
    // court and household
    "将军府", "侯府", "嫡女", "庶女", "暗卫",
];

/// One-character suffixes that make a new word with the word before them.
#[rustfmt::skip]
const SUFFIXES: &[char] = &[
    '者', '期', '劫', '府', '师', '族', '界', '术', '诀', '阵', '境',
];

/// One extracted phrase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyPhrase {
    pub text: String,
    /// True when the phrase is a glossary term.
    pub glossary: bool,
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// A word of the sentence with its part of speech (jieba's tag set) and dictionary frequency.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    tag: String,
    freq: usize,
}

impl Word {
    fn len(&self) -> usize {
        self.text.chars().count()
    }

    fn is_noun(&self) -> bool {
        self.tag.starts_with('n')
    }

    /// Nouns, and what jieba tags as set phrases, idioms, abbreviations, places — or as a
    /// numeral when it is not a number (于家).
    fn is_noun_like(&self) -> bool {
        self.is_noun() || matches!(self.tag.as_str(), "l" | "i" | "j" | "s" | "m")
    }
}

/// The segmenter: jieba with the genre vocabulary, initialised on first use.
#[cfg(feature = "jieba")]
pub(crate) mod segmenter {
    use std::sync::OnceLock;

    use jieba_rs::Jieba;

    use super::{GENRE_TERMS, Word};

    static JIEBA: OnceLock<Jieba> = OnceLock::new();

    fn jieba() -> &'static Jieba {
        JIEBA.get_or_init(|| {
            let mut j = Jieba::new();
            for w in GENRE_TERMS {
                // The frequency that makes the word win over its own pieces.
                let freq = j.suggest_freq(w);
                j.add_word(w, Some(freq), Some("n"));
            }
            j
        })
    }

    /// Words of `text` with their parts of speech, no frequencies (for the name check's word
    /// boundaries).
    pub(crate) fn tagged(text: &str) -> Vec<(String, String)> {
        jieba()
            .tag(text, true)
            .into_iter()
            .map(|t| (t.word.to_string(), t.tag.to_string()))
            .collect()
    }

    /// Whether the dictionary has `word`.
    pub(crate) fn has_word(word: &str) -> bool {
        jieba().has_word(word)
    }

    pub(super) fn words(text: &str) -> Vec<Word> {
        let j = jieba();
        j.tag(text, true)
            .into_iter()
            .map(|t| Word {
                text: t.word.to_string(),
                tag: t.tag.to_string(),
                freq: j.suggest_freq(t.word),
            })
            .collect()
    }
}

/// Without jieba: the genre vocabulary by longest match; everything else is single characters
/// (which are dropped).
#[cfg(not(feature = "jieba"))]
pub(crate) mod segmenter {
    use super::{GENRE_TERMS, Word};

    /// Every character its own word, untagged: no word boundary is ever crossed.
    pub(crate) fn tagged(text: &str) -> Vec<(String, String)> {
        text.chars()
            .map(|c| (c.to_string(), "x".to_string()))
            .collect()
    }

    pub(crate) fn has_word(_word: &str) -> bool {
        false
    }

    pub(super) fn words(text: &str) -> Vec<Word> {
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let hit = GENRE_TERMS
                .iter()
                .map(|t| t.chars().collect::<Vec<char>>())
                .filter(|t| chars[i..].starts_with(t))
                .max_by_key(Vec::len);
            let (text, tag, n) = match hit {
                Some(t) => (t.iter().collect(), "n", t.len()),
                None => (chars[i].to_string(), "x", 1),
            };
            out.push(Word {
                text,
                tag: tag.to_string(),
                freq: 0,
            });
            i += n;
        }
        out
    }
}

/// Parts of speech (jieba's tag set) that are never key phrases: adverbs, prepositions,
/// conjunctions, particles, pronouns, quantifiers, localisers, punctuation, interjections,
/// affixes, non-Chinese words.
const FUNCTION_TAGS: &[&str] = &[
    "d", "p", "c", "u", "uj", "ul", "uv", "uz", "ud", "ug", "r", "rr", "rz", "q", "mq", "f", "x",
    "w", "y", "e", "o", "k", "h", "zg", "eng",
];

fn function_tag(tag: &str) -> bool {
    FUNCTION_TAGS.contains(&tag)
}

/// 一次、三枚、每十年、五百年、3级: numerals with at most measure words around them.
fn is_number(word: &str) -> bool {
    const NUMERALS: &str = "0123456789０１２３４５６７８９〇零一二三四五六七八九十百千万亿两半几数";
    const MEASURES: &str =
        "每第年月日天次个枚级层倍成岁里丈尺寸斤名位只件颗粒把章回刻时分秒周代阶品重段些多余来";
    word.chars().any(|c| NUMERALS.contains(c))
        && word
            .chars()
            .all(|c| NUMERALS.contains(c) || MEASURES.contains(c) || c == '.')
}

fn content_word(w: &Word) -> bool {
    w.len() >= 2 && w.text.chars().all(is_cjk) && !STOP_WORDS.contains(&w.text.as_str())
}

/// Suffix joining, then noun compounds, within one stretch of text between glossary terms.
fn join(words: Vec<Word>) -> Vec<Word> {
    let mut joined: Vec<Word> = Vec::new();
    for w in words {
        let suffix = w.len() == 1 && w.text.chars().all(|c| SUFFIXES.contains(&c));
        match joined.last_mut() {
            Some(prev) if suffix && content_word(prev) && !function_tag(&prev.tag) => {
                prev.text.push_str(&w.text);
                prev.tag = "n".into();
                prev.freq = 0;
            }
            _ => joined.push(w),
        }
    }
    const MAX_COMPOUND: usize = 5;
    let mut out: Vec<Word> = Vec::new();
    let mut open = false; // the last word of `out` is a noun a next noun may join
    for w in joined {
        let noun = w.is_noun() && content_word(&w);
        match out.last_mut() {
            Some(prev) if open && noun && prev.len() + w.len() <= MAX_COMPOUND => {
                prev.text.push_str(&w.text);
                prev.freq = prev.freq.min(w.freq);
            }
            _ => {
                open = noun;
                out.push(w);
            }
        }
    }
    out
}

/// The 3–5 key phrases of `sentence` (fewer only when the sentence has fewer candidates).
pub fn extract(sentence: &str, glossary: &Glossary) -> Vec<KeyPhrase> {
    let chars: Vec<char> = sentence.chars().collect();
    let mut hits: Vec<String> = Vec::new();
    // Candidates from the stretches between glossary terms, in sentence order.
    let mut words: Vec<Word> = Vec::new();
    let flush = |from: usize, to: usize, words: &mut Vec<Word>| {
        if from < to {
            let text: String = chars[from..to].iter().collect();
            words.extend(join(segmenter::words(&text)));
        }
    };
    let mut gap_start = 0;
    let mut i = 0;
    while i < chars.len() {
        if let Some(n) = glossary.longest_at(&chars, i) {
            flush(gap_start, i, &mut words);
            hits.push(chars[i..i + n].iter().collect());
            i += n;
            gap_start = i;
        } else {
            i += 1;
        }
    }
    flush(gap_start, chars.len(), &mut words);

    let mut seen = BTreeSet::new();
    let mut out: Vec<KeyPhrase> = Vec::new();
    for h in hits {
        if out.len() == MAX_PHRASES {
            break;
        }
        if seen.insert(h.clone()) {
            out.push(KeyPhrase {
                text: h,
                glossary: true,
            });
        }
    }
    // (noun-like, position, word)
    let mut candidates: Vec<(bool, usize, Word)> = words
        .into_iter()
        .enumerate()
        .filter(|(_, w)| content_word(w) && !function_tag(&w.tag) && !is_number(&w.text))
        .map(|(k, w)| (w.is_noun_like(), k, w))
        .collect();
    // Nouns first; then longer, rarer, earlier.
    candidates.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.2.len().cmp(&a.2.len()))
            .then(a.2.freq.cmp(&b.2.freq))
            .then(a.1.cmp(&b.1))
    });
    for (noun, _, w) in candidates {
        let room = if noun { MAX_PHRASES } else { MIN_PHRASES };
        if out.len() >= room {
            continue;
        }
        if seen.insert(w.text.clone()) {
            out.push(KeyPhrase {
                text: w.text,
                glossary: false,
            });
        }
    }
    out
}

/// Just the phrase texts.
pub fn extract_texts(sentence: &str, glossary: &Glossary) -> Vec<String> {
    extract(sentence, glossary)
        .into_iter()
        .map(|p| p.text)
        .collect()
}

#[cfg(test)]
mod tests {
    //! The tables of rule sentences need the real segmenter: they run with the `jieba`
    //! feature, which `cargo test --workspace` turns on (novel-cli enables it) and
    //! `cargo test -p novel-text --features jieba` asks for.

    use super::*;

    /// The tables of real rule sentences: they need the segmenter.
    #[cfg(feature = "jieba")]
    mod segmented {
        use super::*;

        /// A key-phrase case: the rule sentence, the phrases an editor names as its key terms, and
        /// what must never come out (function words, generic verbs, numbers, fragments of words).
        struct PhraseCase {
            sentence: &'static str,
            expected: &'static [&'static str],
            must_not: &'static [&'static str],
        }

        const fn case(
            sentence: &'static str,
            expected: &'static [&'static str],
            must_not: &'static [&'static str],
        ) -> PhraseCase {
            PhraseCase {
                sentence,
                expected,
                must_not,
            }
        }

        /// Rule sentences of several genres. The first seven are the sentences the audit found cut into
        /// fragments (军本人, 血脉觉, 每十年召, 最终决 …) or yielding nothing.
        const PHRASE_CASES: &[PhraseCase] = &[
            case("异能者无法进入要塞", &["异能者", "要塞"], &["无法", "进入"]),
            case(
                "镇北将军府的兵符只能由将军本人调动",
                &["镇北将军府", "兵符", "将军"],
                &["只能", "本人", "军本人", "镇北", "军府"],
            ),
            case(
                "魔都外城夜间禁止御剑飞行",
                &["魔都", "御剑飞行", "夜间"],
                &["禁止", "外城夜间"],
            ),
            case(
                "血脉觉醒者可以感应同族气息",
                &["血脉觉醒者", "同族气息", "感应"],
                &["可以", "血脉觉", "醒者", "感应同族"],
            ),
            case(
                "天雷劫只会在渡劫期降临",
                &["天雷劫", "渡劫期", "降临"],
                &["只会", "天雷劫只"],
            ),
            case(
                "宗门大会每十年召开一次",
                &["宗门大会", "召开"],
                &["一次", "每十年", "十年", "每十年召", "宗门大", "开一次"],
            ),
            case(
                "会长拥有最终决定权",
                &["会长", "决定权"],
                &["拥有", "最终", "最终决", "定权"],
            ),
            // The PRD's own example.
            case(
                "修炼者突破金丹期需要天地灵气浓度 ≥ 3级",
                &["金丹期", "天地灵气", "修炼者"],
                &["需要", "3级", "级"],
            ),
            case("凡人不得踏入宗门禁地", &["凡人", "宗门禁地"], &["不得"]),
            case(
                "丹药每日服用不得超过三枚",
                &["丹药", "服用"],
                &["不得", "超过", "三枚", "每日"],
            ),
            case(
                "于家子弟不得与魔教中人通婚",
                &["于家", "魔教"],
                &["不得", "家子弟", "中人"],
            ),
            case(
                "结丹修士寿元可达五百年",
                &["结丹修士", "寿元"],
                &["可达", "五百年"],
            ),
            case(
                "灵石是宗门之间唯一的通用货币",
                &["灵石", "宗门", "货币"],
                &["之间", "唯一"],
            ),
            case(
                "炼丹师须持有丹盟颁发的证书",
                &["炼丹师", "丹盟", "证书"],
                &["持有", "师须"],
            ),
            case(
                "夺舍之后修为会跌落一个大境界",
                &["夺舍", "修为", "境界"],
                &["之后", "一个"],
            ),
            case(
                "月圆之夜妖兽会变得格外狂暴",
                &["月圆之夜", "妖兽"],
                &["变得", "格外", "圆之夜"],
            ),
            // Function words only: nothing.
            case("如果可以通过以及因为所以", &[], &["如果", "可以", "因为"]),
        ];

        #[test]
        fn keyphrase_table_of_chinese_rule_sentences() {
            let g = Glossary::default();
            for c in PHRASE_CASES {
                let got = extract_texts(c.sentence, &g);
                assert!(got.len() <= 5, "{}: {got:?}", c.sentence);
                assert!(
                    got.len() >= c.expected.len().min(3),
                    "{}: {got:?}",
                    c.sentence
                );
                for e in c.expected {
                    assert!(
                        got.iter().any(|p| p == e),
                        "{}: {e} not in {got:?}",
                        c.sentence
                    );
                }
                for m in c.must_not {
                    assert!(
                        !got.iter().any(|p| p == m),
                        "{}: {m} in {got:?}",
                        c.sentence
                    );
                }
                assert!(
                    got.iter().all(|p| p.chars().count() >= 2),
                    "{}: {got:?}",
                    c.sentence
                );
            }
        }

        #[test]
        fn keyphrase_glossary_terms_come_first_and_whole() {
            let g = Glossary::from_terms([
                "金丹期",
                "天地灵气",
                "护法",
                "魔都外城",
                "宗门禁地",
                "封印之地",
                "陆尘",
            ]);
            let cases: &[(&str, &[&str])] = &[
                // The PRD example: glossary terms in sentence order, then the best noun; never 需要.
                (
                    "修炼者突破金丹期需要天地灵气浓度 ≥ 3级",
                    &["金丹期", "天地灵气", "修炼者", "浓度"],
                ),
                (
                    "修炼者突破金丹期需要天地灵气浓度 ≥ 5级，且须有护法在侧",
                    &["金丹期", "天地灵气", "护法", "修炼者", "浓度"],
                ),
                // The glossary keeps 魔都外城 whole (jieba alone cuts 魔都 / 外 / 城).
                (
                    "魔都外城夜间禁止御剑飞行",
                    &["魔都外城", "御剑飞行", "夜间"],
                ),
                ("封印之地内一切法术失效", &["封印之地", "法术", "失效"]),
                // A character name is a glossary term too.
                (
                    "陆尘的剑意只能在月圆之夜施展",
                    &["陆尘", "月圆之夜", "剑意"],
                ),
            ];
            for (sentence, expected) in cases {
                assert_eq!(extract_texts(sentence, &g), *expected, "{sentence}");
            }
            let glossary_flags: Vec<bool> = extract("陆尘的剑意", &g)
                .iter()
                .map(|p| p.glossary)
                .collect();
            assert_eq!(glossary_flags, [true, false]);
        }
    }

    #[test]
    fn keyphrase_glossary_caps_at_five() {
        let g = Glossary::from_terms(["甲乙", "丙丁", "戊己", "庚辛", "壬癸", "子丑"]);
        let got = extract_texts("甲乙丙丁戊己庚辛壬癸子丑", &g);
        assert_eq!(got, ["甲乙", "丙丁", "戊己", "庚辛", "壬癸"]);
    }

    /// Without jieba the extractor still knows the glossary and the genre vocabulary.
    #[cfg(not(feature = "jieba"))]
    #[test]
    fn keyphrase_without_jieba_knows_glossary_and_genre_terms() {
        assert_eq!(
            extract_texts(
                "魔都外城夜间禁止御剑飞行",
                &Glossary::from_terms(["魔都外城"])
            ),
            ["魔都外城", "御剑飞行"]
        );
        assert_eq!(
            extract_texts("魔都外城夜间禁止御剑飞行", &Glossary::default()),
            ["御剑飞行", "魔都"]
        );
        assert!(extract_texts("如果可以通过以及因为所以", &Glossary::default()).is_empty());
    }
}
