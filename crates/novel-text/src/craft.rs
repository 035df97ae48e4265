//! `novel check craft` (章法): what a platform editor looks at before pushing a chapter, as far as
//! characters can show it.
//!
//! - **Opening** (`craft/opening`, error): the first `opening_chars` 字 carry the chapter's
//!   problem — someone wants something or something is wrong (a want or trouble word, a question,
//!   an outcry, a line of dialogue) — not scenery or a time stamp alone.
//! - **Ending hook** (`craft/hook`, error when missing): the last `ending_chars` 字 end on
//!   something open. A 章回's 「且听下回分解」 is a hook; a closing summary or moral
//!   (「他知道，真正的考验才刚刚开始」), or a closure with nothing pending (sleep, relief) is not.
//!   A hook has a type ([`HookType`]: 悬念 / 危机 / 反转 / 期待 / 情绪) when its words say one.
//! - **Variety** (`craft/hook-variety`, warning): the last `hook_variety_window` chapters all
//!   end on the same type of hook.
//! - **Take-up** (`craft/takeup`, warning): none of the previous ending's content words (its
//!   names, things, places) comes back in this chapter's first `takeup_chars` 字 — the hook was
//!   dropped (a chapter of another storyline is not checked).
//! - **注水** (`craft/padding`, warning): a paragraph that repeats what the chapter already said
//!   (most of its word pairs seen before), or the third and later paragraphs of a run of pure
//!   scenery.
//! - **Rhythm tells** (error over the cap): surprise markers, similes and 「他知道，」 openers in
//!   narration, each capped per 3,000 字 ([`allowed`]: scaled to the chapter, never below one);
//!   and one image field (moonlight, blood, mist …) dominating the last `image_window` chapters
//!   (`craft/image-field`, warning).
//!
//! A chapter fails when it has an error. Lexicons are code (small tables, reasons beside them);
//! thresholds are `novel.json`'s `craft`. Positions are 1-based line and column in characters of
//! the original file, like every other text check.
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use novel_core::diagnostic::{Diagnostic, Severity};
use novel_core::model::settings::CraftThresholds;

use crate::segment::{Document, Span};

/// Characters of context either side of a match in an excerpt.
const EXCERPT_CONTEXT: usize = 12;

/// What kind of pull a chapter ends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookType {
    /// 悬念: an open question, a secret, a 「下回分解」.
    Suspense,
    /// 危机: danger at the door.
    Crisis,
    /// 反转: what was believed turns over.
    Twist,
    /// 期待: a promised event (a duel tomorrow, a wager, a journey).
    Promise,
    /// 情绪: the chapter lands on a feeling left open.
    Emotion,
}

impl HookType {
    pub fn label(self) -> &'static str {
        match self {
            HookType::Suspense => "悬念",
            HookType::Crisis => "危机",
            HookType::Twist => "反转",
            HookType::Promise => "期待",
            HookType::Emotion => "情绪",
        }
    }
}

/// How a chapter ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ending {
    /// Something is left open.
    pub hook: bool,
    /// Its type, when its words say one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<HookType>,
    /// Why it is no hook: `summary` (a closing moral) or `closure` (nothing pending).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<&'static str>,
    /// The words that decided.
    pub cues: Vec<String>,
}

/// What a later chapter needs to know of this one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trace {
    pub hook: Option<HookType>,
    /// Content word pairs of the ending (for the next chapter's take-up).
    pub ending_terms: Vec<String>,
    /// The image field that dominates the chapter, if one does.
    pub image: Option<&'static str>,
    /// The chapter's storyline, when the project knows it.
    pub storyline: Option<String>,
}

/// One rhythm tell's count against its cap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RhythmCount {
    pub id: &'static str,
    pub name: &'static str,
    pub hits: usize,
    /// Hits allowed in this chapter ([`allowed`]).
    pub allowed: usize,
    pub per_3000: f64,
    pub pass: bool,
    /// Most used words, most first.
    pub top: Vec<(String, usize)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CraftSummary {
    pub pass: bool,
    /// 字数 of the chapter ([`crate::count`]).
    pub chars: usize,
    /// The opening carries a problem; the cues found.
    pub opening_problem: bool,
    pub opening_cues: Vec<String>,
    /// 字 of scenery and time stamps before anyone acts or speaks.
    pub opening_scenery: usize,
    pub ending: Ending,
    /// The previous chapter's hook is taken up (None: not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeup: Option<bool>,
    /// Hook types of the last chapters, oldest first, this one last (None: no typed hook).
    pub recent_hooks: Vec<Option<HookType>>,
    pub padding: usize,
    pub rhythm: Vec<RhythmCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<&'static str>,
    /// Why the chapter failed, in Chinese (empty when it passed).
    pub failures: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CraftReport {
    pub findings: Vec<Diagnostic>,
    pub summary: CraftSummary,
    /// What the next chapter needs of this one ([`trace`], computed once with the check).
    #[serde(skip)]
    pub trace: Trace,
}

/// Hits allowed for a cap of `per_3000` in a chapter of `chars` 字: the cap scaled to the
/// chapter, rounded down, and never below one — one use never fails a chapter.
pub fn allowed(per_3000: f64, chars: usize) -> usize {
    let scaled = per_3000 * chars as f64 / 3000.0;
    (scaled.floor() as usize).max(1)
}

// ---------------------------------------------------------------------------------------------
// Lexicons. Matched on the normalised text (full-width ？！ are ASCII there).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Someone wants something (opening).
    Want,
    /// Something is wrong (opening).
    Trouble,
    /// Not a cue after all: masks a longer word that contains one (可怕 in 静得可怕).
    Mask,
    /// A closing moral or summary (ending).
    Summary,
    /// Nothing pending (ending).
    Closure,
    /// Hook words by type.
    Hook(HookType),
    /// A 章回's closing formula.
    Chapter,
    Surprise,
    Simile,
    /// Soft reduplicated adverbs (微微, 缓缓, 淡淡 …).
    Modifier,
    /// Image fields (index into [`IMAGE_FIELDS`]).
    Image(usize),
    /// Scenery words (padding, the opening).
    Scenery,
    /// Time stamps (the opening).
    Time,
}

#[rustfmt::skip]
const WANT: &[&str] = &[
    "想要", "要去", "要把", "要找", "要让", "要给", "要做", "必须", "不得不", "非得", "只好", "只能", "打算", "决定", "务必",
    "一定要", "求", "救", "逃", "追", "找", "寻", "等着", "赶", "抢", "夺", "偷", "报仇", "赌", "争", "拼", "试试",
    "盼", "希望", "答应", "约", "请", "问", "该", "得去", "得在", "赶在", "之前把", "准备", "计划", "目标", "任务", "考试",
    "比试", "交出", "还钱", "借",
];

#[rustfmt::skip]
const TROUBLE: &[&str] = &[
    "不对", "不好", "糟", "完了", "坏了", "出事", "死", "尸", "血", "伤", "痛", "疼", "病", "饿", "怪", "诡", "奇怪",
    "异常", "失踪", "不见", "丢", "少了", "危险", "怕", "慌", "急", "吓", "惊", "骂", "打", "逼", "欠", "债", "输",
    "废物", "嘲", "讥", "退婚", "麻烦", "威胁", "敌", "仇", "罪", "案", "凶", "哭", "泪", "怒", "恨", "冷笑", "瞪",
    "吼", "喊", "叫", "咬牙", "穷", "没钱", "谁", "为什么", "怎么", "难道", "竟", "却", "可是", "但是", "然而", "不肯",
    "不能", "不敢", "不许", "拒绝", "赶出", "开除", "辞退", "追杀", "通缉", "陷害", "冤", "绑", "毒", "抓", "围", "闯",
    "撞", "摔", "砸", "烧", "炸", "枪", "刀", "剑", "杀", "斗", "战", "争吵", "吵", "闹", "羞", "辱", "笑话", "嫌",
    "愁", "苦", "难", "累", "疑", "秘密", "梦",
];

/// Longer words that contain a cue without being one.
#[rustfmt::skip]
const MASK: &[&str] = &[
    "可怕", "静得可怕", "惊艳", "惊喜", "难得", "难怪", "打量", "打扮", "打扫", "打开", "打算盘", "怪不得", "死寂", "血色的夕阳",
    "请柬", "苦笑", "问道", "叫做", "名叫", "叫作", "赶紧", "赶忙", "找到了", "却说", "尸骨无存", "办完了", "做完了", "吃完了",
    "说完了", "写完了", "忙完了", "看完了", "听完了", "用完了", "讲完了", "收拾完了",
];

#[rustfmt::skip]
const SUMMARY: &[&str] = &[
    "才刚刚开始", "才刚开始", "还在后头", "还在后面", "注定", "新的篇章", "新的征程", "新的旅程", "新的开始", "命运的齿轮", "命运之轮",
    "命运", "悄然改变", "发生了改变", "未来的路", "前路漫漫", "一切都将", "一切才", "这一夜", "那一夜", "传奇", "心中暗暗发誓", "暗暗发誓",
    "在心中发誓", "默默发誓", "暗下决心", "成长", "终于明白", "他明白了", "她明白了", "他知道", "她知道", "人生", "岁月", "属于他的",
    "属于她的", "这就是", "这，就是", "这,就是", "不再是从前", "再也不是", "新生", "希望的种子", "希望之光", "曙光", "光明的未来", "翻开了",
    "拉开了序幕", "拉开序幕", "缓缓拉开", "落下帷幕", "画上了句号", "心中充满", "充满了希望", "充满了期待", "充满了力量", "嘴角微微上扬",
    "嘴角上扬", "嘴角勾起", "露出了笑容", "露出了一丝微笑", "露出一丝微笑", "会心的微笑", "欣慰", "释然",
];

#[rustfmt::skip]
const CLOSURE: &[&str] = &[
    "沉沉睡去", "进入了梦乡", "进入梦乡", "睡着了", "一夜无话", "一宿无话", "一夜无事", "安然入睡", "沉沉地睡", "终于安静", "恢复了平静",
    "归于平静", "平静了下来", "风平浪静", "圆满", "大团圆", "满意地", "心满意足", "踏实", "松了一口气", "舒了一口气", "长舒一口气",
    "长出了一口气", "相视一笑", "结束了", "告一段落", "过去了",
];

#[rustfmt::skip]
const SUSPENSE: &[&str] = &[
    "究竟", "到底", "为何", "为什么", "怎么回事", "秘密", "真相", "不知道", "谜", "谁", "什么", "怎么会", "难道", "是谁", "哪里",
    "去向", "下落", "不明", "看不清", "听不清", "看不见", "无人知道", "没有人知道", "没人知道", "答案", "不见了",
];

#[rustfmt::skip]
const CRISIS: &[&str] = &[
    "杀", "死", "血", "刀", "剑", "枪", "危险", "不好", "糟", "快跑", "快走", "逃", "逼近", "包围", "追兵", "埋伏",
    "陷阱", "倒计时", "来不及", "毒", "尸", "吼", "爆", "炸", "塌", "崩", "偷袭", "冲了过来", "扑", "袭", "完了", "救命",
    "小心", "火光", "惨叫", "尖叫", "脚步声", "敲门", "砸门", "警报", "抓住", "掐住", "按住", "断了", "碎了", "裂开", "黑影",
    "影子", "阴影",
];

#[rustfmt::skip]
const TWIST: &[&str] = &[
    "竟然", "竟是", "居然", "原来", "没想到", "想不到", "却是", "赫然", "正是", "根本不是", "假的", "不是他", "不是她", "变成了",
    "其实是", "才是", "竟", "却发现", "这才发现", "认出",
];

#[rustfmt::skip]
const PROMISE: &[&str] = &[
    "明天", "明日", "明早", "明晚", "三天后", "三日后", "后天", "下个月", "约", "等着", "即将", "就要", "要去", "出发", "决战",
    "大比", "赌约", "比试", "较量", "拭目以待", "到时候", "一定会", "等我", "走着瞧", "不会放过", "下次", "再来", "来日", "回来",
];

#[rustfmt::skip]
const EMOTION: &[&str] = &[
    "泪", "哭", "心里一", "心头一", "心口", "怒", "恨", "颤", "抖", "抱住", "抱紧", "吻", "握住", "攥紧", "咬住", "发不出声",
    "说不出话", "喉咙", "鼻子一酸", "眼眶",
];

/// Surprise markers (InkOS' list, with their kin); counted in narration.
#[rustfmt::skip]
const SURPRISE: &[&str] = &[
    "仿佛", "忽然", "突然", "竟然", "居然", "猛地", "猛然", "不禁", "宛如", "骤然", "陡然", "蓦地", "蓦然", "霎时", "顿时间",
];

/// Soft reduplicated adverbs that pad a gesture (微微一笑, 缓缓开口, 淡淡地说): the modifier a model
/// reaches for; counted in narration.
#[rustfmt::skip]
const MODIFIER: &[&str] = &[
    "微微", "缓缓", "淡淡", "轻轻", "静静", "默默", "深深", "悄悄", "隐隐", "暗暗", "渐渐", "慢慢", "紧紧", "死死",
];

/// Simile openers; counted in narration. 好像 (it seems) and the nouns in 图像, 画像, 偶像 …
/// are not comparisons and are masked (see [`SIMILE_MASK`]).
#[rustfmt::skip]
const SIMILE: &[&str] = &[
    "像", "仿佛", "宛如", "犹如", "如同", "好似", "恍若", "宛若", "似的", "一般的", "般的",
];

#[rustfmt::skip]
const SIMILE_MASK: &[&str] = &[
    "好像", "图像", "画像", "偶像", "影像", "录像", "像素", "肖像", "想像", "佛像", "雕像", "神像", "石像", "头像", "镜像",
    "像样", "人像", "遗像", "塑像", "铜像", "像是在说", "一般的人", "一般的事", "一般的东西", "非同一般", "不同一般", "非一般", "像话",
];

/// Image fields: one chapter steeped in moonlight is a mood, every chapter is a tic.
pub const IMAGE_FIELDS: &[(&str, &[&str])] = &[
    (
        "月光",
        &[
            "月光", "月色", "月亮", "明月", "残月", "圆月", "月华", "银辉",
        ],
    ),
    (
        "血",
        &["鲜血", "血腥", "血迹", "血色", "血光", "血雾", "血水"],
    ),
    (
        "雨",
        &[
            "雨水", "雨丝", "雨幕", "暴雨", "细雨", "雨点", "雨声", "雨夜",
        ],
    ),
    ("雪", &["大雪", "雪花", "积雪", "风雪", "雪地", "飞雪"]),
    (
        "雾",
        &["雾气", "迷雾", "浓雾", "薄雾", "白雾", "雾霭", "瘴气"],
    ),
    ("火", &["火焰", "火光", "烈焰", "火苗", "篝火", "火舌"]),
    ("星", &["星光", "星辰", "星空", "繁星", "星河"]),
    ("夜色", &["夜色", "夜幕", "黑暗中", "漆黑", "黑夜"]),
    (
        "阳光",
        &["阳光", "夕阳", "晨光", "余晖", "晚霞", "朝阳", "霞光"],
    ),
];

/// Scenery words: two characters or more, so a name (花荣, 清风镇) is not a landscape.
#[rustfmt::skip]
const SCENERY: &[&str] = &[
    "天空", "云层", "云雾", "白云", "乌云", "云海", "寒风", "微风", "夜风", "秋风", "山风", "风声", "雨丝", "雨水", "细雨",
    "大雨", "暴雨", "雨幕", "雪花", "大雪", "雾气", "薄雾", "浓雾", "月光", "月色", "星光", "星空", "阳光", "夕阳", "晚霞",
    "余晖", "山峦", "群山", "远山", "山谷", "山脊", "山林", "树林", "林间", "树影", "树叶", "落叶", "花瓣", "花香", "草地",
    "河面", "湖面", "水面", "海面", "海浪", "波光", "青石", "石板", "灯光", "灯火", "夜色", "黄昏", "天边", "远处", "空气",
    "寂静", "宁静", "光芒", "光晕", "街道", "屋檐", "窗外", "天色", "蝉鸣", "鸟鸣", "虫鸣", "炊烟", "露珠", "涟漪", "轮廓",
];

/// Time stamps an opening may lead with.
#[rustfmt::skip]
const TIME: &[&str] = &[
    "清晨", "早晨", "黄昏", "傍晚", "深夜", "夜深", "正午", "午后", "拂晓", "黎明", "天亮", "天黑", "夜幕降临", "夜幕", "次日",
    "翌日", "第二天", "三天后", "三日后", "数日后", "半月后", "一个月后", "万籁俱寂", "入夜", "初秋", "深秋", "初春", "盛夏", "寒冬",
    "凌晨", "日暮",
];

/// The 章回 formula that ends a 回 on its open question.
#[rustfmt::skip]
const CHAPTER_FORMULA: &[&str] = &[
    "下回分解", "下回便见", "下回便知", "下文分解", "下回再说", "下回交代", "下回表白", "且听下回", "下回书", "下回详", "再看下回",
    "看官听说",
];

struct Lexicon {
    ac: AhoCorasick,
    kinds: Vec<Kind>,
    words: Vec<&'static str>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let mut words: Vec<&'static str> = Vec::new();
    let mut kinds = Vec::new();
    let mut add = |list: &[&'static str], kind: Kind| {
        for w in list {
            words.push(w);
            kinds.push(kind);
        }
    };
    add(WANT, Kind::Want);
    add(TROUBLE, Kind::Trouble);
    add(MASK, Kind::Mask);
    add(SUMMARY, Kind::Summary);
    add(CLOSURE, Kind::Closure);
    add(SUSPENSE, Kind::Hook(HookType::Suspense));
    add(CRISIS, Kind::Hook(HookType::Crisis));
    add(TWIST, Kind::Hook(HookType::Twist));
    add(PROMISE, Kind::Hook(HookType::Promise));
    add(EMOTION, Kind::Hook(HookType::Emotion));
    add(CHAPTER_FORMULA, Kind::Chapter);
    add(SURPRISE, Kind::Surprise);
    add(SIMILE, Kind::Simile);
    add(MODIFIER, Kind::Modifier);
    add(SIMILE_MASK, Kind::Mask);
    for (i, (_, list)) in IMAGE_FIELDS.iter().enumerate() {
        add(list, Kind::Image(i));
    }
    add(SCENERY, Kind::Scenery);
    add(TIME, Kind::Time);
    Lexicon {
        ac: build(&words),
        kinds,
        words,
    }
});

/// Overlapping matches are needed (one word can be a want and a hook), so every list is its own
/// pattern set matched with standard semantics; see [`hits`].
fn build(words: &[&str]) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(words)
        .expect("the craft lexicon compiles")
}

/// A lexicon word found: its character span and every kind it belongs to.
#[derive(Debug, Clone)]
struct Hit {
    span: Span,
    word: usize,
}

/// Every lexicon word in `doc` (overlapping), in order, with char spans, outside Markdown and
/// headings. A hit inside a [`Kind::Mask`] word of the same start or overlapping it is dropped.
fn hits(doc: &Document) -> Vec<Hit> {
    let lex = &*LEXICON;
    let text = doc.text();
    let mut raw: Vec<Hit> = lex
        .ac
        .find_overlapping_iter(text)
        .map(|m| Hit {
            span: Span {
                start: doc.char_of(m.start()),
                end: doc.char_of(m.end()),
            },
            word: m.pattern().as_usize(),
        })
        .filter(|h| !doc.is_markup(h.span.start) && in_prose(doc, h.span.start))
        .collect();
    let masks: Vec<Span> = raw
        .iter()
        .filter(|h| lex.kinds[h.word] == Kind::Mask)
        .map(|h| h.span)
        .collect();
    raw.retain(|h| {
        lex.kinds[h.word] != Kind::Mask
            && !masks
                .iter()
                .any(|m| m.start <= h.span.start && h.span.end <= m.end)
    });
    raw.sort_by_key(|h| (h.span.start, h.span.end));
    raw
}

/// True when character `i` is in a prose paragraph (not a heading).
fn in_prose(doc: &Document, i: usize) -> bool {
    let ps = doc.paragraphs();
    let k = ps.partition_point(|p| p.end <= i);
    ps.get(k).is_some_and(|p| p.start <= i)
}

fn word_of(h: &Hit) -> &'static str {
    LEXICON.words[h.word]
}

fn kind_of(h: &Hit) -> Kind {
    LEXICON.kinds[h.word]
}

// ---------------------------------------------------------------------------------------------
// Windows of the prose: the first and last N 字 as character ranges.

/// Counts as 字 here: what the platforms count (Han, kana, full-width punctuation…), which for
/// the window's purpose is every non-whitespace prose character.
fn is_counted(doc: &Document, i: usize) -> bool {
    !doc.chars()[i].is_whitespace() && !doc.is_markup(i)
}

/// The character range of the first `n` 字 of prose.
fn head(doc: &Document, n: usize) -> Span {
    let ps = doc.paragraphs();
    let Some(first) = ps.first() else {
        return Span { start: 0, end: 0 };
    };
    let mut seen = 0;
    for p in ps {
        for i in p.start..p.end {
            if is_counted(doc, i) {
                seen += 1;
                if seen >= n {
                    return Span {
                        start: first.start,
                        end: i + 1,
                    };
                }
            }
        }
    }
    Span {
        start: first.start,
        end: ps.last().map_or(first.end, |p| p.end),
    }
}

/// The character range of the last `n` 字 of prose, widened to whole paragraphs' start when the
/// last paragraph alone is longer.
fn tail(doc: &Document, n: usize) -> Span {
    let ps = doc.paragraphs();
    let Some(last) = ps.last() else {
        return Span { start: 0, end: 0 };
    };
    let mut seen = 0;
    for p in ps.iter().rev() {
        for i in (p.start..p.end).rev() {
            if is_counted(doc, i) {
                seen += 1;
                if seen >= n {
                    return Span {
                        start: i,
                        end: last.end,
                    };
                }
            }
        }
    }
    Span {
        start: ps[0].start,
        end: last.end,
    }
}

fn within(h: &Hit, s: Span) -> bool {
    s.start <= h.span.start && h.span.end <= s.end
}

// ---------------------------------------------------------------------------------------------
// The rules.

/// The opening's problem cues (words, `?`/`!`, dialogue), as the words found.
fn opening_cues(doc: &Document, all: &[Hit], window: Span) -> Vec<String> {
    let mut cues: Vec<String> = all
        .iter()
        .filter(|h| within(h, window) && matches!(kind_of(h), Kind::Want | Kind::Trouble))
        .map(|h| word_of(h).to_string())
        .collect();
    let chars = doc.chars();
    if (window.start..window.end).any(|i| matches!(chars[i], '?' | '!')) {
        cues.push("？/！".to_string());
    }
    if (window.start..window.end).any(|i| doc.in_dialogue(i)) {
        cues.push("对话".to_string());
    }
    let mut seen = HashSet::new();
    cues.retain(|c| seen.insert(c.clone()));
    cues
}

/// How the chapter ends, read from the last `n` 字 (the last paragraph weighs double).
pub fn ending(doc: &Document, n: usize) -> Ending {
    let all = hits(doc);
    ending_of(doc, &all, n)
}

fn ending_of(doc: &Document, all: &[Hit], n: usize) -> Ending {
    let window = tail(doc, n);
    let last_para = doc.paragraphs().last().copied().unwrap_or(window);
    let in_tail: Vec<&Hit> = all.iter().filter(|h| within(h, window)).collect();
    let mut formula: Vec<String> = in_tail
        .iter()
        .filter(|h| kind_of(h) == Kind::Chapter)
        .map(|h| word_of(h).to_string())
        .collect();
    formula.dedup();
    if !formula.is_empty() {
        return Ending {
            hook: true,
            kind: Some(HookType::Suspense),
            missing: None,
            cues: formula,
        };
    }
    let (kind, mut cues) = hook_kind(doc, &in_tail, last_para);
    let open = open_marks(doc, window, last_para);
    // The last paragraph decides: a moral or a closure there, with nothing open in it, is no
    // hook whatever came before it.
    let last_open = open_marks(doc, last_para, last_para);
    let last_hook = in_tail.iter().any(|h| {
        within(h, last_para) && matches!(kind_of(h), Kind::Hook(t) if t != HookType::Emotion)
    });
    let last_words = |want: Kind| -> Vec<String> {
        let mut w: Vec<String> = in_tail
            .iter()
            .filter(|h| kind_of(h) == want && within(h, last_para))
            .map(|h| word_of(h).to_string())
            .collect();
        w.dedup();
        w
    };
    if last_open.is_empty() && !last_hook {
        for (kind, why) in [(Kind::Summary, "summary"), (Kind::Closure, "closure")] {
            let found = last_words(kind);
            if !found.is_empty() {
                return Ending {
                    hook: false,
                    kind: None,
                    missing: Some(why),
                    cues: found,
                };
            }
        }
    }
    cues.extend(open);
    Ending {
        hook: true,
        kind,
        missing: None,
        cues,
    }
}

/// The hook type the ending's words say (last paragraph ×2), with the words.
fn hook_kind(doc: &Document, in_tail: &[&Hit], last_para: Span) -> (Option<HookType>, Vec<String>) {
    let mut score: BTreeMap<HookType, usize> = BTreeMap::new();
    let mut cues = Vec::new();
    for h in in_tail {
        if let Kind::Hook(t) = kind_of(h) {
            *score.entry(t).or_default() += if within(h, last_para) { 2 } else { 1 };
            cues.push(word_of(h).to_string());
        }
    }
    let chars = doc.chars();
    if (last_para.start..last_para.end).any(|i| chars[i] == '?') {
        *score.entry(HookType::Suspense).or_default() += 2;
    }
    // Ties go to the stronger pull: 反转 > 危机 > 悬念 > 期待 > 情绪.
    let rank = |t: HookType| match t {
        HookType::Twist => 0,
        HookType::Crisis => 1,
        HookType::Suspense => 2,
        HookType::Promise => 3,
        HookType::Emotion => 4,
    };
    let best = score
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(rank(*b.0).cmp(&rank(*a.0))))
        .map(|(t, _)| *t);
    cues.dedup();
    (best, cues)
}

/// Marks of an open ending: a question, a trailing-off or cut-off last sentence, a last line
/// of dialogue.
fn open_marks(doc: &Document, window: Span, last_para: Span) -> Vec<String> {
    let chars = doc.chars();
    let mut out = Vec::new();
    if (window.start..window.end).any(|i| chars[i] == '?') {
        out.push("？".to_string());
    }
    let end_char = (last_para.start..last_para.end)
        .rev()
        .map(|i| chars[i])
        .find(|c| !c.is_whitespace() && !matches!(c, '”' | '」' | '』' | '"' | '’'));
    match end_char {
        Some('…') => out.push("……".to_string()),
        Some('—') => out.push("——".to_string()),
        Some('!') => out.push("！".to_string()),
        _ => {}
    }
    let dialogue = (last_para.start..last_para.end)
        .filter(|&i| doc.in_dialogue(i))
        .count();
    if dialogue * 2 > last_para.end - last_para.start {
        out.push("对话收尾".to_string());
    }
    out
}

/// Function characters: a word pair with one of them is no content word.
static FUNCTION_CHARS: LazyLock<HashSet<char>> = LazyLock::new(|| {
    "的了是在不我他她你它们这那一有也就都着个和与及或而把被让给对向从到里上下中来去又再还很太更最得地之其所以为于已没么呢吗吧啊呀哦嘛说道看想会能要可自己样些点过后前时候"
        .chars()
        .collect()
});

/// Content word pairs (two Han characters, neither a function character) of a range, each
/// once, in order.
fn content_pairs(doc: &Document, s: Span) -> Vec<String> {
    let chars = doc.chars();
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<[char; 2]> = HashSet::new();
    let ok = |c: char| crate::count::is_han(c) && !FUNCTION_CHARS.contains(&c);
    for i in s.start..s.end.saturating_sub(1) {
        let (a, b) = (chars[i], chars[i + 1]);
        if ok(a) && ok(b) && !doc.is_markup(i) && seen.insert([a, b]) {
            out.push([a, b].iter().collect());
        }
    }
    out
}

/// The dominant image field: the most frequent field with at least 3 hits and 1.5 per 1,000
/// 字, ahead of the next by half again.
fn image_field(all: &[Hit], chars: usize) -> Option<&'static str> {
    let mut counts = vec![0usize; IMAGE_FIELDS.len()];
    for h in all {
        if let Kind::Image(i) = kind_of(h) {
            counts[i] += 1;
        }
    }
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by(|a, b| counts[*b].cmp(&counts[*a]));
    let (top, next) = (counts[order[0]], counts[order[1]]);
    let dense = top >= 3 && top as f64 * 1000.0 / chars.max(1) as f64 >= 1.5;
    (dense && top * 2 >= next * 3).then(|| IMAGE_FIELDS[order[0]].0)
}

/// What the next chapter needs of this one.
pub fn trace(doc: &Document, t: &CraftThresholds) -> Trace {
    let all = hits(doc);
    trace_of(doc, &all, t)
}

fn trace_of(doc: &Document, all: &[Hit], t: &CraftThresholds) -> Trace {
    let end = ending_of(doc, all, t.ending_chars as usize);
    // The ending's own words: pairs the rest of the chapter hardly uses (the lantern, the man
    // in the rain), not the names every chapter carries.
    let text = doc.text();
    let ending_terms = content_pairs(doc, tail(doc, t.ending_chars as usize))
        .into_iter()
        .filter(|p| text.matches(p.as_str()).count() <= 2)
        .collect();
    Trace {
        hook: end.kind.filter(|_| end.hook),
        ending_terms,
        image: image_field(all, doc.word_count()),
        storyline: None,
    }
}

/// The chapters before this one, oldest first: what [`check`] compares against.
#[derive(Debug, Clone, Default)]
pub struct History<'a> {
    pub before: &'a [Trace],
    /// This chapter's storyline (a chapter of another line than the one before takes up no hook).
    pub storyline: Option<&'a str>,
}

/// The craft check of one chapter.
pub fn check(doc: &Document, history: &History<'_>, t: &CraftThresholds) -> CraftReport {
    let all = hits(doc);
    let chars = doc.word_count();
    let mut findings = Vec::new();
    let mut failures = Vec::new();

    let window = head(doc, t.opening_chars as usize);
    let cues = opening_cues(doc, &all, window);
    let opening_scenery = leading_scenery(doc, &all);
    let opening_problem = (!cues.is_empty() && opening_scenery <= t.opening_scenery_chars as usize)
        || doc.paragraphs().is_empty();
    if !opening_problem {
        let why = if cues.is_empty() {
            format!(
                "开篇前 {} 字只有景物、时间或交代，没有本章的问题：没有人想要什么，也没有什么不对",
                t.opening_chars
            )
        } else {
            format!(
                "开篇先写了 {opening_scenery} 字景物和时间（上限 {}），问题来得太晚",
                t.opening_scenery_chars
            )
        };
        findings.push(opening_finding(doc, window, &why));
        failures.push(why);
    }

    let end = ending_of(doc, &all, t.ending_chars as usize);
    if !end.hook {
        let finding = hook_finding(doc, &end);
        if finding.is_error() {
            failures.push("章末没有钩子".to_string());
        }
        findings.push(finding);
    }
    let this = trace_of(doc, &all, t);
    let takeup = takeup(doc, history, t, &mut findings);
    let recent_hooks = variety(doc, history, &this, t, &mut findings);
    let padding = padding(doc, &all, &mut findings);
    let rhythm = rhythm(doc, &all, chars, t, &mut findings, &mut failures);
    image_variety(doc, history, &this, t, &mut findings);
    findings.sort();
    CraftReport {
        trace: this.clone(),
        findings,
        summary: CraftSummary {
            pass: failures.is_empty(),
            chars,
            opening_problem,
            opening_cues: cues,
            opening_scenery,
            ending: end,
            takeup,
            recent_hooks,
            padding,
            rhythm,
            image: this.image,
            failures,
        },
    }
}

fn opening_finding(doc: &Document, window: Span, why: &str) -> Diagnostic {
    let (line, col) = doc.position(window.start);
    let first = doc.paragraphs()[0];
    Diagnostic::new(
        "craft/opening",
        Severity::Error,
        "",
        why,
        "第一段就让人物带着问题出场：他想要什么、缺什么、被什么逼着，或者哪里不对劲；景物和时间最多一句，接着就要有人动起来、开口",
    )
    .at(line, col)
    .with_excerpt(doc.excerpt(Span { start: first.start, end: first.start }, 40))
}

fn hook_finding(doc: &Document, end: &Ending) -> Diagnostic {
    let last = *doc.paragraphs().last().expect("an ending has a paragraph");
    let (line, col) = doc.position(last.start);
    // A moral in place of a hook is the model's habit and fails the chapter; a quiet closure
    // (he fell asleep) is also how human chapters end now and then: a warning.
    let (why, severity) = match end.missing {
        Some("summary") => (
            format!(
                "章末是总结或感悟（{}），没有留下悬而未决的事",
                end.cues.join("、")
            ),
            Severity::Error,
        ),
        _ => (
            format!(
                "章末把事情都收住了（{}），没有留下悬而未决的事",
                end.cues.join("、")
            ),
            Severity::Warning,
        ),
    };
    Diagnostic::new(
        "craft/hook",
        severity,
        "",
        why,
        "改写最后一两段，停在一件没落地的事上：新的危险逼近、一个没揭开的答案、一个反转、一场约好的对决，或一句让人想翻下一章的台词；删去总结和升华",
    )
    .at(line, col)
    .with_excerpt(doc.excerpt(Span { start: last.start, end: last.start }, 40))
}

/// The previous chapter's hook taken up in the first `takeup_chars` 字 (a chapter of another
/// storyline is not checked).
fn takeup(
    doc: &Document,
    history: &History<'_>,
    t: &CraftThresholds,
    findings: &mut Vec<Diagnostic>,
) -> Option<bool> {
    let prev = history.before.last()?;
    if let (Some(a), Some(b)) = (prev.storyline.as_deref(), history.storyline)
        && a != b
    {
        return None;
    }
    if prev.ending_terms.is_empty() {
        return None;
    }
    let window = head(doc, t.takeup_chars as usize);
    let here: HashSet<String> = content_pairs(doc, window).into_iter().collect();
    let taken = prev.ending_terms.iter().any(|p| here.contains(p));
    if !taken {
        let (line, col) = doc.position(window.start);
        let shown: Vec<&str> = prev
            .ending_terms
            .iter()
            .take(8)
            .map(String::as_str)
            .collect();
        findings.push(
            Diagnostic::new(
                "craft/takeup",
                Severity::Warning,
                "",
                format!(
                    "上一章结尾的钩子（{}……）在本章前 {} 字里一个字也没接",
                    shown.join("、"),
                    t.takeup_chars
                ),
                "开头先接住上一章最后那件事（那个人、那声响、那个问题），再往下推；本章换了故事线就在开头立住时空",
            )
            .at(line, col),
        );
    }
    Some(taken)
}

/// Hook types of the window (this chapter last); a warning when all of them are one type.
fn variety(
    doc: &Document,
    history: &History<'_>,
    this: &Trace,
    t: &CraftThresholds,
    findings: &mut Vec<Diagnostic>,
) -> Vec<Option<HookType>> {
    let n = t.hook_variety_window as usize;
    let from = history.before.len().saturating_sub(n - 1);
    let mut recent: Vec<Option<HookType>> = history.before[from..].iter().map(|x| x.hook).collect();
    recent.push(this.hook);
    if recent.len() == n
        && let Some(Some(first)) = recent.first()
        && recent.iter().all(|h| *h == Some(*first))
        && let Some(last) = doc.paragraphs().last()
    {
        let (line, col) = doc.position(last.start);
        findings.push(
            Diagnostic::new(
                "craft/hook-variety",
                Severity::Warning,
                "",
                format!("最近 {n} 章的章末钩子都是「{}」", first.label()),
                "换一种钩子收尾：悬念、危机、反转、期待、情绪轮着用，读者才不会提前猜到",
            )
            .at(line, col),
        );
    }
    recent
}

fn image_variety(
    doc: &Document,
    history: &History<'_>,
    this: &Trace,
    t: &CraftThresholds,
    findings: &mut Vec<Diagnostic>,
) {
    let k = t.image_window as usize;
    let Some(field) = this.image else {
        return;
    };
    if history.before.len() + 1 < k {
        return;
    }
    let before = &history.before[history.before.len() + 1 - k..];
    if before.iter().all(|x| x.image == Some(field))
        && let Some(first) = doc.paragraphs().first()
    {
        let (line, col) = doc.position(first.start);
        findings.push(
            Diagnostic::new(
                "craft/image-field",
                Severity::Warning,
                "",
                format!("最近 {k} 章都浸在同一类意象里：「{field}」"),
                "这一章换一种环境与感官：声音、气味、温度、手里的东西；同一种意象连用会变成作者的口头禅",
            )
            .at(line, col),
        );
    }
}

/// 注水: paragraphs that restate (most of their content word pairs already said in the
/// chapter), and scenery runs past two paragraphs. Warnings; returns how many.
fn padding(doc: &Document, all: &[Hit], findings: &mut Vec<Diagnostic>) -> usize {
    let mut seen: HashSet<String> = HashSet::new();
    let mut run = 0;
    let mut found = 0;
    for p in doc.paragraphs() {
        let pairs = content_pairs(doc, *p);
        let old = pairs.iter().filter(|x| seen.contains(*x)).count();
        let restates = pairs.len() >= 12 && old * 10 >= pairs.len() * 9;
        let scenery = is_scenery(doc, all, *p);
        run = if scenery { run + 1 } else { 0 };
        let why = if restates {
            Some("这一段的内容前面已经说过，读者没得到新东西")
        } else if run >= 3 {
            Some("连续第三段纯景物，没有人动、没有事发生")
        } else {
            None
        };
        if let Some(why) = why {
            found += 1;
            let (line, col) = doc.position(p.start);
            findings.push(
                Diagnostic::new(
                    "craft/padding",
                    Severity::Warning,
                    "",
                    format!("注水：{why}"),
                    "删去，或换成推动冲突的一句对话、一个动作、一条新信息",
                )
                .at(line, col)
                .with_excerpt(doc.excerpt(
                    Span {
                        start: p.start,
                        end: p.start,
                    },
                    30,
                )),
            );
        }
        seen.extend(pairs);
    }
    found
}

/// A narration paragraph of scenery or a time stamp: no dialogue, no person, and two scenery
/// or time words (one, in a paragraph of a line or less).
fn is_scenery(doc: &Document, all: &[Hit], p: Span) -> bool {
    let chars = doc.chars();
    if (p.start..p.end).any(|i| doc.in_dialogue(i) || matches!(chars[i], '他' | '她' | '我' | '你'))
    {
        return false;
    }
    let k = all.partition_point(|h| h.span.start < p.start);
    let n = all[k..]
        .iter()
        .take_while(|h| h.span.start < p.end)
        .filter(|h| matches!(kind_of(h), Kind::Scenery | Kind::Time))
        .count();
    n >= 2 || (n == 1 && doc.text_len(p) <= 15)
}

/// 字 of the scenery and time-stamp paragraphs the chapter opens with (verse — a 回's opening
/// poem — is neither counted nor a stop).
fn leading_scenery(doc: &Document, all: &[Hit]) -> usize {
    doc.paragraphs()
        .iter()
        .filter(|p| !is_verse(doc, **p))
        .take_while(|p| is_scenery(doc, all, **p))
        .map(|p| (p.start..p.end).filter(|&i| is_counted(doc, i)).count())
        .sum()
}

/// A paragraph of verse: introduced as one (诗曰, 词曰, 有诗为证 …), or four or more clauses of
/// one length from four to seven characters.
fn is_verse(doc: &Document, p: Span) -> bool {
    let text: String = doc.chars()[p.start..p.end].iter().collect();
    let t = text.trim();
    if ["诗曰", "词曰", "有诗为证", "诗云", "赞曰", "正是", "但见"]
        .iter()
        .any(|m| t.starts_with(m))
    {
        return true;
    }
    let clauses: Vec<usize> = t
        .split([',', '，', '。', ';', '；', '!', '?', '、'])
        .map(|c| c.chars().filter(|ch| crate::count::is_han(*ch)).count())
        .filter(|n| *n > 0)
        .collect();
    clauses.len() >= 4 && (4..=7).contains(&clauses[0]) && clauses.iter().all(|n| *n == clauses[0])
}

/// One rhythm tell of a chapter: its rule, where it is used, which word each time, its cap.
struct Tell {
    id: &'static str,
    name: &'static str,
    spans: Vec<Span>,
    words: Vec<String>,
    cap: f64,
    hint: &'static str,
}

/// The rhythm tells, each against its cap; an error finding at the first hit over the cap.
fn rhythm(
    doc: &Document,
    all: &[Hit],
    chars: usize,
    t: &CraftThresholds,
    findings: &mut Vec<Diagnostic>,
    failures: &mut Vec<String>,
) -> Vec<RhythmCount> {
    let of = |kind: Kind| -> (Vec<Span>, Vec<String>) {
        all.iter()
            .filter(|h| kind_of(h) == kind && !doc.in_dialogue(h.span.start))
            .map(|h| (h.span, word_of(h).to_string()))
            .unzip()
    };
    let (surprise, surprise_words) = of(Kind::Surprise);
    let (simile, simile_words) = of(Kind::Simile);
    let (modifier, modifier_words) = of(Kind::Modifier);
    let (thought, thought_words): (Vec<Span>, Vec<String>) =
        thought_openers(doc).into_iter().unzip();
    let tells = [
        Tell {
            id: "craft/surprise",
            name: "惊讶标记（仿佛、忽然、突然、竟然、猛地、不禁……）",
            spans: surprise,
            words: surprise_words,
            cap: t.surprise_per_3000,
            hint: "删掉大半：事情本身够突然就不用写「突然」，把反应写成动作",
        },
        Tell {
            id: "craft/simile",
            name: "比喻（像、仿佛、如同、宛如、犹如、似的……）",
            spans: simile,
            words: simile_words,
            cap: t.simile_per_3000,
            hint: "只留人物自己会想到的那一两个比喻，其余直接写东西本身",
        },
        Tell {
            id: "craft/modifier",
            name: "叠字修饰（微微、缓缓、淡淡、轻轻、静静、默默……）",
            spans: modifier,
            words: modifier_words,
            cap: t.modifier_per_3000,
            hint: "删去大半：「微微一笑」就是「笑了」，「缓缓开口」就是「说」；留下的要真有慢、轻的意思",
        },
        Tell {
            id: "craft/thought-opener",
            name: "「他知道，」「他想，」式句首",
            spans: thought,
            words: thought_words,
            cap: t.thought_opener_per_3000,
            hint: "别替人物总结心理：改成他接下来做的决定、动作或一句台词",
        },
    ];
    tells
        .into_iter()
        .map(|tell| rhythm_count(doc, chars, tell, findings, failures))
        .collect()
}

/// One tell against its cap, with its finding and failure when over it.
fn rhythm_count(
    doc: &Document,
    chars: usize,
    tell: Tell,
    findings: &mut Vec<Diagnostic>,
    failures: &mut Vec<String>,
) -> RhythmCount {
    let allowed = allowed(tell.cap, chars);
    let pass = tell.spans.len() <= allowed;
    let top = top_words(&tell.words);
    if !pass {
        let listed: Vec<String> = top.iter().map(|(w, n)| format!("{w}×{n}")).collect();
        let msg = format!(
            "{} {} 次，本章 {chars} 字最多 {allowed} 次（{} 次/3000 字）：{}",
            tell.name,
            tell.spans.len(),
            tell.cap,
            listed.join("、")
        );
        failures.push(msg.clone());
        let first = tell.spans[allowed];
        let (line, col) = doc.position(first.start);
        findings.push(
            Diagnostic::new(tell.id, Severity::Error, "", msg, tell.hint)
                .at(line, col)
                .with_excerpt(doc.excerpt(first, EXCERPT_CONTEXT)),
        );
    }
    RhythmCount {
        id: tell.id,
        name: tell.name,
        hits: tell.spans.len(),
        allowed,
        per_3000: round2(tell.spans.len() as f64 * 3000.0 / chars.max(1) as f64),
        pass,
        top,
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn top_words(words: &[String]) -> Vec<(String, usize)> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for w in words {
        *by.entry(w.as_str()).or_default() += 1;
    }
    let mut top: Vec<(String, usize)> = by.into_iter().map(|(w, n)| (w.to_string(), n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(5);
    top
}

/// Narration sentences that open on 「他知道，」「她想，」…: a third-person pronoun, a verb of
/// knowing or thinking, a comma (a first-person narrator's 「我想，」 is his voice, not a summary).
fn thought_openers(doc: &Document) -> Vec<(Span, String)> {
    const VERBS: &[&str] = &[
        "知道",
        "明白",
        "清楚",
        "想",
        "心想",
        "暗想",
        "觉得",
        "意识到",
        "感到",
        "感觉",
        "相信",
        "确定",
        "懂",
    ];
    let chars = doc.chars();
    let mut out = Vec::new();
    for s in doc.sentences() {
        let mut i = s.span.start;
        while i < s.span.end && (chars[i].is_whitespace() || doc.is_markup(i)) {
            i += 1;
        }
        if i >= s.span.end || doc.in_dialogue(i) || !matches!(chars[i], '他' | '她') {
            continue;
        }
        let rest: String = chars[i + 1..s.span.end.min(i + 6)].iter().collect();
        for v in VERBS {
            if let Some(after) = rest.strip_prefix(v)
                && after.starts_with(',')
            {
                let end = i + 1 + v.chars().count();
                out.push((Span { start: i, end }, format!("{}{v}，", chars[i])));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> CraftThresholds {
        CraftThresholds::default()
    }

    fn report(text: &str) -> CraftReport {
        check(&Document::new(text), &History::default(), &t())
    }

    #[test]
    fn one_use_never_fails_a_chapter() {
        assert_eq!(allowed(2.0, 100), 1);
        assert_eq!(allowed(2.0, 1499), 1);
        assert_eq!(allowed(2.0, 3000), 2);
        assert_eq!(allowed(2.0, 6100), 4);
        assert_eq!(allowed(0.0, 3000), 1);
    }

    #[test]
    fn weather_and_time_alone_is_no_opening() {
        let weather = "# 第三章 秋\n\n清晨，天色灰蒙蒙的。\n\n秋雨下了一整夜，屋檐还在滴水，院子里的梧桐落了一地黄叶。远处的山隐在云里，只露出一道青灰色的山脊。\n\n街上没有什么行人，炊烟从几户人家的屋顶升起来，被风一吹就散了。\n";
        let r = report(weather);
        assert!(!r.summary.opening_problem, "{:?}", r.summary.opening_cues);
        assert_eq!(r.findings[0].code, "craft/opening");
        assert_eq!(r.findings[0].line, Some(3));
        // The same weather with a want in it is an opening.
        let want = weather.replace("清晨，天色灰蒙蒙的。", "清晨，林默得在天亮前把药送到城南。");
        assert!(report(&want).summary.opening_problem);
        // A question or an outcry is one too.
        let outcry = weather.replace("清晨，天色灰蒙蒙的。", "“人呢？”");
        assert!(report(&outcry).summary.opening_problem);
    }

    #[test]
    fn endings_are_read_for_hooks() {
        let chapter_formula = "话说宋江在山上。\n\n毕竟宋江性命如何，且听下回分解。\n";
        let e = ending(&Document::new(chapter_formula), 200);
        assert_eq!((e.hook, e.kind), (true, Some(HookType::Suspense)));
        let moral = "他一拳打翻了对手。\n\n林逸望着远方，他知道，真正的考验才刚刚开始。\n";
        let e = ending(&Document::new(moral), 200);
        assert_eq!((e.hook, e.missing), (false, Some("summary")));
        let sleep = "事情办完了。\n\n他吃过饭，洗了脚，躺下便沉沉睡去。\n";
        assert_eq!(ending(&Document::new(sleep), 200).missing, Some("closure"));
        // A closure is a warning; a moral fails the chapter.
        let r = report(&format!("“钱呢？”{sleep}"));
        assert!(r.summary.pass && r.findings.iter().any(|f| f.code == "craft/hook"));
        assert!(!report(&format!("“钱呢？”{moral}")).summary.pass);
        let crisis = "他推开门。\n\n门后站着一个黑影，手里的刀还在滴血。\n";
        let e = ending(&Document::new(crisis), 200);
        assert_eq!((e.hook, e.kind), (true, Some(HookType::Crisis)));
        let twist = "他揭开面纱。\n\n那张脸，竟是三年前死在他怀里的师妹。\n";
        assert_eq!(
            ending(&Document::new(twist), 200).kind,
            Some(HookType::Twist)
        );
        let promise = "赵乾甩袖走了。\n\n“三天后，演武场见。”\n";
        assert_eq!(
            ending(&Document::new(promise), 200).kind,
            Some(HookType::Promise)
        );
        let question = "信上只有一行字。\n\n写信的人，怎么会知道他的小名？\n";
        assert_eq!(
            ending(&Document::new(question), 200).kind,
            Some(HookType::Suspense)
        );
    }

    #[test]
    fn a_dropped_hook_is_a_takeup_finding() {
        let prev = Document::new("他推开门。\n\n门后站着一个黑衣人，手里提着一盏青铜灯笼。\n");
        let before = [trace(&prev, &t())];
        let history = History {
            before: &before,
            storyline: None,
        };
        let taken = "黑衣人把青铜灯笼举高了一点，照见他的脸。\n\n“你来晚了。”\n";
        let r = check(&Document::new(taken), &history, &t());
        assert_eq!(r.summary.takeup, Some(true));
        let dropped = "三年后，京城。\n\n林默在茶馆里数着铜板，算这个月的房钱还差多少。\n";
        let r = check(&Document::new(dropped), &history, &t());
        assert_eq!(r.summary.takeup, Some(false));
        assert!(r.findings.iter().any(|f| f.code == "craft/takeup"));
        // Another storyline's chapter is not held to it.
        let mut other = before.clone();
        other[0].storyline = Some("a".into());
        let history = History {
            before: &other,
            storyline: Some("b"),
        };
        assert_eq!(
            check(&Document::new(dropped), &history, &t())
                .summary
                .takeup,
            None
        );
    }

    #[test]
    fn rhythm_caps_scale_with_length() {
        let para = "他走进屋里，把包放在桌上，坐下来喝了一口水。";
        // 22 字 a paragraph; 150 paragraphs ≈ 3,300 字 with 30 surprise markers (22 allowed).
        let mut text = String::from("“钱呢？”\n\n");
        for i in 0..150 {
            if i % 5 == 0 {
                text.push_str("忽然，");
            }
            text.push_str(para);
            text.push_str("\n\n");
        }
        text.push_str("门外传来一声惨叫。\n");
        let r = report(&text);
        let s = &r.summary.rhythm[0];
        assert_eq!((s.id, s.hits), ("craft/surprise", 30));
        assert_eq!(s.allowed, 20 * r.summary.chars / 3000);
        assert!(!s.pass, "{s:?}");
        assert!(
            r.findings
                .iter()
                .any(|f| f.code == "craft/surprise" && f.is_error())
        );
        // A short chapter with one marker passes.
        let short = "“钱呢？”\n\n忽然，他走进屋里。\n\n门外传来一声惨叫。\n";
        assert!(report(short).summary.rhythm[0].pass);
        // Dialogue does not count.
        let said = "“钱呢？忽然就没了？突然不见了？竟然？”\n\n门外传来一声惨叫。\n";
        assert_eq!(report(said).summary.rhythm[0].hits, 0);
    }

    #[test]
    fn thought_openers_are_found_in_narration_only() {
        let text = "他知道，这一步退不得。\n\n“我知道，你别说了。”\n\n她想，也许明天就好了。\n\n我想，算了。\n";
        let found = thought_openers(&Document::new(text));
        let words: Vec<&str> = found.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(words, ["他知道，", "她想，"]);
    }

    #[test]
    fn restating_paragraphs_are_padding() {
        let text = "林默把那封信折好，塞进青布包袱的夹层里，又把包袱系紧背上，推开柴门。\n\n“走吧。”\n\n林默把那封信折好，塞进青布包袱的夹层里，又把包袱系紧背上，推开柴门。\n";
        let r = report(text);
        assert_eq!(r.summary.padding, 1);
        assert!(
            r.findings
                .iter()
                .any(|f| f.code == "craft/padding" && f.line == Some(5))
        );
    }
}
