//! Name consistency (PRD M3, NER 一致性): the near-miss variants of known names an LLM writes
//! (林枫 → 林峰), and person-like names that are not registered.
//!
//! - **Near miss**: a run of Han characters as long as a known name (display name or alias),
//!   one character different, where the two characters sound alike (a shared tone-less
//!   reading in the generated pinyin table of `data/pinyin.txt`: GB2312 plus name characters)
//!   or look alike (a small hand list). A changed surname must still be a surname or look like
//!   the original (肖炎, 箫炎 for 萧炎; not 沉默 for 陈默), unless the name has 3+ characters.
//!   The variant must stand where a name stands (a boundary, or a word such as 说/道/看 after
//!   it, or 对/向/叫 before it), so 一路尘土 is not a variant of 陆尘; one that spells an
//!   ordinary word (林风, 方圆, 小鱼) or varies an alias without a surname (天宇 → 天雨) needs a
//!   person standing there: a speech or gesture right after it (说：, 笑道, 点了点头) or a
//!   title around it (师兄, 长老) — so 林风说 is reported and 天雨路滑, 方圆百里 are not.
//! - **Person-like names**: a common surname, a given name of one or two common name
//!   characters (not 片, 族: 叶片, 龙族; not a clan: 林家) and a name boundary either side
//!   (a title next to it counts: 师兄林凡, 林凡师兄).
//!   One with the surname of a known name (林凡 beside 林枫) is reported from its second
//!   occurrence; any other from its third.
//! - **Same-surname variant seen once**: a person-like name as long as a known name with the
//!   same surname and one character of the given name changed (林桦 for 林枫, 林天翔 for
//!   林天宇) is reported from its first occurrence — a slip the author makes once is the one
//!   that survives — but only where a person clearly acts: a speech or gesture right after it
//!   (林桦点了点头, 苏婧笑道), a title around it (师兄), or a verb that takes a person before
//!   it with the clause ending after it (问林桦。; not 到了林海。). Forms of address (林伯,
//!   林叔) and ordinary words (林子, 林间, 陆续) are not variants; a name of another length
//!   (林建国) is another person.
//!
//! - **Word boundaries** (the `jieba` feature; the segmenter loads on the first candidate, so
//!   only `check names` and the reviews pay for it): a candidate cut out of a word is not a
//!   name (行李里 → 李里, 不觉大笑 → 觉大, 宋情愿 → 宋情); a candidate that is itself a word of
//!   the dictionary and not tagged as a person (燕京, 金刚, 云云) needs a person acting there;
//!   a function word is not a changed surname (王夫人与熙凤); one right before a registered name
//!   describes it (宋将关胜). A surname followed by a title, a kinship address or a ranked
//!   address (宋先锋, 杨制使, 林妹妹, 薛大姑娘) is an address, not a name. An alias without its
//!   display name's surname (金桂 for 夏金桂, 云丫头 for 史湘云) never defines a surname.
//!   A same-surname variant is also reported once at the head of a clause before any verb
//!   (孟大山一拳, 风姐听了). Each finding carries a [`Confidence`].
//!
//! Registered names and aliases are never findings, nor is text inside their occurrences; the
//! same holds for the names of things that are not people (places, factions, world terms:
//! [`NameIndex::with_entities`], [`world_terms`]). Without a segmenter this is a heuristic: it
//! finds what the author must look at, with the lines as evidence; it does not decide.
//! Measured on `tests/fixtures/text/names-corpus.md` (38 realistic variants of 18 names among
//! look-alike ordinary words): recall 34/38 with the segmenter (the binary), 35/38 without,
//! no false finding.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use novel_core::diagnostic::{Diagnostic, Severity};
use serde::Serialize;

use crate::count::is_han;
use crate::normalize::normalize_str;
use crate::segment::{Document, Span};

/// Tone-less pinyin of the GB2312 characters and some extra name characters, one syllable a
/// line (`feng 风丰封枫峰…`; a character with two common readings is on both lines). Generated
/// by `data/gen_pinyin.py`; two characters sound alike when they share a reading.
const PINYIN: &str = include_str!("../data/pinyin.txt");

/// Characters that look alike (a near-miss may be a slip of shape, not of sound).
const LOOKALIKES: &[&str] = &[
    "己已巳",
    "未末",
    "戊戌戍",
    "候侯",
    "晴睛",
    "辩辨辫瓣",
    "拔拨",
    "梁粱",
    "析折",
    "乌鸟",
    "徽微",
    "祟崇",
    "萧箫潇",
    "赢嬴羸",
    "崖涯",
    "枫疯讽",
    "峰锋蜂烽",
    "睿叡",
    "瑾谨",
    "婉琬惋",
    "陈阵",
    "炎焱",
    "腾藤滕",
    "凌陵菱棱",
    "杨扬汤",
    "浩皓",
    "泽择",
    "韩翰",
    "峻竣骏俊",
    "晓烧浇",
    "苍沧",
    "暮幕墓慕募",
    "清请情晴",
    "蓝篮",
    "编偏篇遍",
    "墨默",
    "缺决块",
    "闲闭",
    "牧收",
    "纯钝",
    "宁拧",
    "秦奏泰",
    "范苑",
    "顾领",
    "歌哥",
    "宇字",
    "鸣呜",
    "雨两",
    "王玉主",
    "大太犬",
    "天夭",
    "土士",
    "日曰",
    "人入八",
    "干千于",
    "田由甲申",
    "贝见",
    "冰水永",
    "羽习",
];

/// Single-character surnames common in web novels.
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾萧肖田董袁潘蒋蔡余杜叶程魏苏吕丁沈任姚卢姜崔钟谭陆汪范廖石金韦贾夏付方邹熊孟秦邱侯江尹薛闫段雷龙黎史陶贺顾毛郝龚邵万覃武钱严莫孔楚慕云秋凌柳白宁洛纪卓裴岳柯商庄沐穆屠滕乔谷景骆伍";
/// Two-character surnames.
const DOUBLE_SURNAMES: &[&str] = &[
    "欧阳", "司马", "上官", "诸葛", "东方", "慕容", "皇甫", "令狐", "独孤", "南宫", "夏侯", "公孙",
    "轩辕", "端木", "长孙", "宇文", "西门", "司徒",
];

/// Characters common in given names. A person-like name that is not registered (林凡, 赵铁柱)
/// is only considered when its given name is made of these: 叶片 and 龙族 start with a
/// surname but 片 and 族 are not name characters. Grammar characters are left out on purpose.
const NAME_CHARS: &str = "伟刚勇毅俊峰强军平保东文辉力明永健世广志义兴良海山仁波宁贵福生龙元全国胜学祥发武新利清飞彬富顺信子杰涛昌成康星光天达安岩茂进林有坚彪博诚先敬震振壮思群豪心邦承乐绍功松善厚庆磊民友裕河哲江超浩亮政谦亨奇固之轮翰朗伯宏言若鸣朋斌梁栋维启克伦翔旭鹏泽晨辰士以建家致树炎德行泰盛雄琛钧冠策腾楠榕风航弘秀娟英华慧巧美娜静淑惠珠翠雅芝玉萍红娥玲芬芳燕彩春菊兰凤洁梅琳素云莲真环雪荣爱妹霞香月莺媛艳瑞凡佳嘉琼勤珍贞莉桂娣叶璧璐娅琦晶妍茜秋珊莎锦黛青倩婷姣婉娴瑾颖露瑶怡婵雁蓓纨仪荷丹蓉眉君琴蕊薇菁梦岚苑婕馨瑗琰韵融园艺咏卿聪澜纯毓悦昭冰爽琬茗羽希欣飘育滢馥筠柔竹霭凝晓欢霄枫芸菲寒伊亚宜姬舒影荔枝丽阳妮宝贝初程梵罡恒鸿桦骅剑娇纪宽灵玛媚琪晴容睿烁堂唯威韦雯苇萱阅彦宇雨洋忠宗曼紫逸贤蝶菡绿蓝儿烟尘默逍遥缺闲牧立动歌源三衍曦煜钰瑜昊皓铭轩宸珏瑄璇琮珩璟玥昀晗暄炫烨熠霖澈涵淼沐洛泓沁汐浅漓凌墨陌舟帆骁驰骏麟鹤鹰渊岳崇嵩峻巍川溪泉潭湘淮汉沧澄沛浚潇湛深渺辞诗书画棋笙箫笛弦韶音长离殇夜霜烬焰炽烈玄冥幽傲狂孤尊无忌极空虚净悟觉尧舜禹汤商周唐宋铁柱狗蛋根栓石虎豹牛二大小四五六七八九十一百千万金银铜锁财旺喜禄寿夏冬翼羿弈奕懿裔熙禧僖锡熹栩煦绪续婧靖景京鲸霆廷庭亭挺霁际济继骥冀季佶吉鑫昕歆莘韬滔陶焘祺麒骐淇珑泷胧瑛莹萤迎赢铮峥筝琅崖涯晏宴焱砚曜耀尧姚笑孝啸萧肖筱芷止智稚挚钦擎乔桥樵峤璞朴瀚含韩桐彤童瞳骞沫昱域蕾垒徵征正烽锋丰封斐妃霏煌皇凰萦悠攸芊阡卓焯岱代淳醇唇苒冉然缨樱鹦楚锐穆慕木柒漆叁仲众重鲲坤琨昆展洵询荀坦佑祐右珺均竣郡旋宣霸邪苍穹乾战猛";

/// A one-character given name that is a clan or household, not a person: 林家, 萧氏, 王府.
const CLAN_SUFFIXES: &str = "家氏府门宗族帮派";
/// A one-character "given name" that is a form of address (林伯, 林叔, 林老, 林总): a person,
/// but not a slip of a registered name.
const ADDRESS_SUFFIXES: &str = "伯叔婶姨舅爷奶姑嫂哥姐弟妹兄老总董少某";

/// Words that begin like a name but are ordinary words. They are never unregistered names,
/// and a near miss that spells one (林风 beside 林枫, 方圆 beside 方源) counts only where a
/// person clearly stands: a speech or gesture right after it, or a title before it.
const NOT_NAMES: &[&str] = &[
    "马上",
    "高兴",
    "周围",
    "张开",
    "王者",
    "黄色",
    "白色",
    "白天",
    "许多",
    "何时",
    "何况",
    "江湖",
    "方向",
    "方法",
    "方圆",
    "叶子",
    "叶片",
    "林子",
    "石头",
    "金色",
    "温度",
    "常常",
    "明白",
    "雷声",
    "云层",
    "路上",
    "向前",
    "程度",
    "段时间",
    "夏天",
    "秋天",
    "万一",
    "任何",
    "任务",
    "严重",
    "孙子",
    "龙头",
    "龙族",
    "钱财",
    "毛病",
    "顾不上",
    "史上",
    "田野",
    "杨柳",
    "柳树",
    "余光",
    "宋朝",
    "唐朝",
    "金子",
    "陆地",
    "曾经",
    "范围",
    "邱壑",
    "汪洋",
    "钟声",
    "苏醒",
    "韩国",
    "秦朝",
    "江边",
    "楚楚",
    "白色面包车",
    "金光",
    "雷霆",
    "龙卷",
    "方才",
    "方便",
    "黎明",
    "孔洞",
    "熊熊",
    "姜汤",
    "莫名",
    "莫非",
    "孟浪",
    "付出",
    "凌晨",
    "凌乱",
    "林间",
    "云雾",
    "云端",
    "万分",
    "万物",
    "高处",
    "高手",
    "马车",
    "马匹",
    "杜绝",
    "罗盘",
    "宁愿",
    "宁可",
    "宁静",
    "白云",
    "陈旧",
    // Common words made of a surname and a name character (from a word-frequency list): they
    // stand before 点头, after 是 … like a name would.
    "陆续",
    "何以",
    "何止",
    "万万",
    "万千",
    "万民",
    "万众",
    "高大",
    "高山",
    "高空",
    "高贵",
    "高傲",
    "高深",
    "高歌",
    "高洁",
    "江山",
    "江河",
    "江心",
    "方言",
    "黄金",
    "金融",
    "金银",
    "金发",
    "王国",
    "武士",
    "武力",
    "武艺",
    "武学",
    "严峻",
    "严寒",
    "严明",
    "郑重",
    "庄重",
    "余力",
    "余音",
    "余烬",
    "卓然",
    "云海",
    "云烟",
    "石子",
    "白影",
    "白烟",
    "秋夜",
    "夏夜",
    // Money and common words that start with a surname (万元, 马克; 万福金安, 云云).
    "万元",
    // Armies (宋军 is the Song army, 马军 cavalry), not people.
    "宋军",
    "马军",
    "步军",
    "水军",
    "金军",
    "辽军",
    "唐军",
    "汉军",
    "秦军",
    "楚军",
    "魏军",
    "吴军",
    "蜀军",
    "明军",
    "万两",
    "马克",
    "金币",
    "金元",
    "金镑",
    "金安",
    "金刚",
    "金星",
    "云云",
    "万福",
    // Common words one sound away from a name (沉默 beside 陈默).
    "沉默",
    "沉思",
    "沉声",
    "晨光",
    "清晨",
    "风尘",
    "风云",
    "林风",
    "一路",
    "一名",
    "一明",
    "一鸣",
    "雨天",
    "天雨",
    "天域",
    "天宇",
    "小鱼",
    "小于",
    "小雨",
    "明天",
    "名字",
    "心里",
    "小心",
    "笑声",
    "一直",
    "一起",
    "意义",
    "天空",
    "时候",
    "实在",
];

/// After a name: speech and action verbs, function words (a plausible name boundary).
const FOLLOWERS: &str = "一没说道问答笑看望点摇叹喊叫走站坐抬低转皱冷沉轻猛忽突把被在从向对和与也都就又还却才已正便并的是却刚终这那心眼手脸身自";
/// Before a name: prepositions and verbs that take a person.
const PRECEDERS: &str = "了对向和跟与叫让把被给是问找见等帮替陪随同";
/// Before a name: verbs whose object is a person (问林桦。), a stronger sign than the
/// prepositions of [`PRECEDERS`] (了 and 是 also come before places: 到了林海。).
const PERSON_VERBS: &str = "问叫找等帮替陪跟让喊请";
/// Titles and forms of address around a name (师兄林风, 林风师兄).
const TITLES: &[&str] = &[
    "师兄", "师姐", "师弟", "师妹", "师父", "师尊", "师叔", "师伯", "长老", "掌门", "宗主", "城主",
    "少爷", "小姐", "公子", "姑娘", "先生", "大人", "殿下", "将军", "前辈", "道友", "大哥", "大姐",
    "老师", "同学", "老板", "总裁", "队长",
];
/// What a person does right after their name: a speech verb followed by punctuation, a quote
/// or one of [`SPEECH_TAILS`] (说：, 笑道, 问了), or one of these gestures.
const SPEECH: &str = "说道问答笑喊叫骂哼叹吼";
const SPEECH_TAILS: &str = "了着道完罢声出起";
const GESTURES: &[&str] = &[
    "点头",
    "点了点头",
    "摇头",
    "摇了摇头",
    "皱眉",
    "皱了皱眉",
    "冷笑",
    "冷哼",
    "苦笑",
    "轻笑",
    "轻声",
    "低声",
    "沉声",
    "淡淡道",
    "冷冷道",
    "开口",
    "回头",
    "抬头",
    "低头",
    "转身",
    "愣了",
    "一愣",
    "一怔",
    "看了",
    "看着",
    "望着",
    "盯着",
    "瞪了",
    "抱拳",
    "拱手",
    "咬牙",
    "握紧",
    "深吸",
    "站起",
    "走了过来",
    "没有说话",
    "没说话",
];

/// One occurrence's surroundings, read for how sure it is that a person stands there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Context {
    /// A boundary on either side: punctuation, a preposition before, a verb or particle after.
    boundary: bool,
    /// A person clearly stands there: a speech or gesture after it, a title around it, or a
    /// preposition before it with a boundary after.
    person: bool,
    /// A person acts or is addressed there: a speech or gesture after it, a title around it,
    /// or a verb that takes a person before it with the clause ending right after it
    /// (问林桦。) — stricter than `person`, which also takes 是林立的 and 到了林海。
    acts: bool,
    /// A title right before or after it (师兄林凡, 一明师兄).
    titled: bool,
    /// Its start is a boundary: punctuation or a preposition before it (not 火裙朱服).
    left: bool,
    /// Its end is a boundary: punctuation, or a verb or particle after it.
    right: bool,
}

fn starts_with_at(chars: &[char], at: usize, word: &str) -> bool {
    (at..)
        .zip(word.chars())
        .all(|(k, c)| chars.get(k) == Some(&c))
}

fn ends_with_at(chars: &[char], end: usize, word: &str) -> bool {
    let len = word.chars().count();
    end >= len && starts_with_at(chars, end - len, word)
}

/// The context of the name at `[s, e)`.
fn context(chars: &[char], s: usize, e: usize) -> Context {
    let n = chars.len();
    let open_before = s == 0 || !is_han(chars[s - 1]);
    let prep_before = s > 0 && PRECEDERS.contains(chars[s - 1]);
    let title_before = TITLES.iter().any(|t| ends_with_at(chars, s, t));
    let open_after = e >= n || !is_han(chars[e]);
    let follower_after = e < n && FOLLOWERS.contains(chars[e]);
    let speech_after = e < n
        && SPEECH.contains(chars[e])
        && (e + 1 >= n || !is_han(chars[e + 1]) || SPEECH_TAILS.contains(chars[e + 1]));
    let gesture_after = GESTURES.iter().any(|g| starts_with_at(chars, e, g));
    let title_after = TITLES.iter().any(|t| starts_with_at(chars, e, t));
    let person_verb_before = s > 0 && PERSON_VERBS.contains(chars[s - 1]);
    let acts = speech_after
        || gesture_after
        || title_before
        || title_after
        || (person_verb_before && open_after);
    Context {
        titled: title_before || title_after,
        left: open_before || prep_before || s > 0 && "了着过".contains(chars[s - 1]),
        right: open_after || follower_after,
        boundary: open_before || prep_before || open_after || follower_after,
        person: speech_after
            || gesture_after
            || title_before
            || title_after
            || (prep_before && (open_after || follower_after)),
        acts,
    }
}

/// True when a name of 2 characters at `[s, e)` stands where a name can stand (used by the
/// leak check: 林枫 in 山林枫树 is not the name 林枫).
pub fn at_name_boundary(chars: &[char], s: usize, e: usize) -> bool {
    context(chars, s, e).boundary
}

fn readings() -> &'static HashMap<char, [u16; 2]> {
    static MAP: OnceLock<HashMap<char, [u16; 2]>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<char, [u16; 2]> = HashMap::new();
        for (id, line) in PINYIN.lines().enumerate() {
            let Some((_, chars)) = line.split_once(' ') else {
                continue;
            };
            for c in chars.chars() {
                let r = map.entry(c).or_insert([u16::MAX; 2]);
                if r[0] == u16::MAX {
                    r[0] = id as u16;
                } else {
                    r[1] = id as u16;
                }
            }
        }
        map
    })
}

fn lookalike_groups() -> &'static HashMap<char, Vec<u16>> {
    static MAP: OnceLock<HashMap<char, Vec<u16>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<char, Vec<u16>> = HashMap::new();
        for (g, line) in LOOKALIKES.iter().enumerate() {
            for c in line.chars() {
                map.entry(c).or_default().push(g as u16);
            }
        }
        map
    })
}

/// A set of characters of the CJK Unified Ideographs block as a bitmap: the tables here are
/// asked once per character of a chapter, and a bit test costs less than hashing.
pub(crate) struct HanSet {
    bits: Vec<u64>,
}

impl HanSet {
    const FIRST: u32 = 0x4E00;
    const LAST: u32 = 0x9FFF;

    fn of(chars: &str) -> HanSet {
        let mut bits = vec![0u64; ((Self::LAST - Self::FIRST) / 64 + 1) as usize];
        for c in chars.chars() {
            let u = c as u32;
            if (Self::FIRST..=Self::LAST).contains(&u) {
                let k = (u - Self::FIRST) as usize;
                bits[k / 64] |= 1 << (k % 64);
            }
        }
        HanSet { bits }
    }

    pub(crate) fn contains(&self, c: &char) -> bool {
        let u = *c as u32;
        (Self::FIRST..=Self::LAST).contains(&u) && {
            let k = (u - Self::FIRST) as usize;
            self.bits[k / 64] & (1 << (k % 64)) != 0
        }
    }
}

fn name_chars() -> &'static HanSet {
    static SET: OnceLock<HanSet> = OnceLock::new();
    SET.get_or_init(|| HanSet::of(NAME_CHARS))
}

/// Why two characters are confusable, if they are: 同音 (a shared tone-less reading) or 形近.
pub fn confusable(a: char, b: char) -> Option<&'static str> {
    if a == b {
        return None;
    }
    let map = readings();
    if let (Some(ra), Some(rb)) = (map.get(&a), map.get(&b))
        && ra.iter().any(|r| *r != u16::MAX && rb.contains(r))
    {
        return Some("同音");
    }
    looks_alike(a, b).then_some("形近")
}

fn looks_alike(a: char, b: char) -> bool {
    let groups = lookalike_groups();
    match (groups.get(&a), groups.get(&b)) {
        (Some(ga), Some(gb)) => ga.iter().any(|g| gb.contains(g)),
        _ => false,
    }
}

/// A registered name: a display name or an alias of an entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownName {
    pub name: String,
    /// The entity's id (a character slug …).
    pub entity: String,
    /// The entity's display name.
    pub display: String,
}

/// What kind of problem a name is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NameIssueKind {
    /// One character off a known name, the two characters alike (同音 / 形近).
    NearMiss {
        of: String,
        entity: String,
        why: String,
    },
    /// A known name's surname with another given name.
    SameSurname { like: String, entity: String },
    /// A person-like name that is not registered.
    Unregistered,
}

impl NameIssueKind {
    /// The finding's rule id, as `novel check names` and the reviews report it.
    pub fn rule(&self) -> &'static str {
        match self {
            NameIssueKind::NearMiss { .. } => "names/near-miss",
            NameIssueKind::SameSurname { .. } => "names/same-surname",
            NameIssueKind::Unregistered => "names/unregistered",
        }
    }
}

/// How sure a finding is that a person's name is meant there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Recurs, but nothing around it says a person stands there (unregistered names).
    Low,
    /// Stands where a name stands.
    Medium,
    /// A person acts or is addressed there (speech, gesture, title, subject of a clause with
    /// a verb), or it is one character off a registered name there.
    High,
}

impl Confidence {
    fn shown(self) -> &'static str {
        match self {
            Confidence::Low => "低",
            Confidence::Medium => "中",
            Confidence::High => "高",
        }
    }
}

/// One suspicious name and everywhere it occurs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameIssue {
    pub name: String,
    pub kind: NameIssueKind,
    pub confidence: Confidence,
    pub occurrences: Vec<Span>,
}

impl NameIssue {
    /// The finding, where the name is first seen in `doc` (a warning: a name check points at
    /// what to look at, it does not fail a chapter), with the lines of every occurrence in its
    /// message and what to do in its hint. The file is the caller's to name.
    pub fn diagnostic(&self, doc: &Document) -> Diagnostic {
        let (line, col) = doc.position(self.occurrences[0].start);
        let count = self.occurrences.len();
        let mut lines: Vec<String> = self
            .occurrences
            .iter()
            .map(|s| doc.position(s.start).0.to_string())
            .collect();
        lines.dedup();
        let lines = lines.join("、");
        let name = &self.name;
        let sure = self.confidence.shown();
        let (message, hint) = match &self.kind {
            NameIssueKind::NearMiss { of, why, .. } => (
                format!(
                    "「{name}」疑似「{of}」的{why}误写（{count} 次：第 {lines} 行），把握{sure}"
                ),
                format!("是同一人就改成「{of}」，是另一人就在 characters/ 登记"),
            ),
            NameIssueKind::SameSurname { like, .. } => (
                format!(
                    "「{name}」与「{like}」同姓不同名（{count} 次：第 {lines} 行），把握{sure}"
                ),
                "若是笔误请统一，若是新人物请登记".to_string(),
            ),
            NameIssueKind::Unregistered => (
                format!("未登记的人名「{name}」（{count} 次：第 {lines} 行），把握{sure}"),
                "新人物请在 characters/ 登记，或加为已有角色的别名".to_string(),
            ),
        };
        Diagnostic::new(self.kind.rule(), Severity::Warning, "", message, hint).at(line, col)
    }
}

/// Known names, compiled for scanning.
pub struct NameIndex {
    names: Vec<KnownName>,
    keys: Vec<Vec<char>>,
    /// The key lengths, longest first (a 3-character variant claims its text before a
    /// 2-character alias inside it is tried).
    lengths: Vec<usize>,
    /// Keys by (length, position 0 or 1, character there). A text one character off a key
    /// shares its first or its second character, so these are the only keys worth comparing
    /// at a position: the scan does not grow with the size of the cast.
    by_char: HashMap<(usize, usize, char), Vec<usize>>,
    known: HashSet<String>,
    /// Whether `keys[k]` begins with a surname: a display name that does, or an alias that
    /// begins with its display name's surname. An alias without it (金桂 for 夏金桂, 云丫头
    /// for 史湘云) is a given name or a nickname: it never defines a surname.
    has_surname: Vec<bool>,
    surnames: HashMap<String, usize>,
    /// Names of things that are not people (places, factions, items, world terms): they cover
    /// their text like registered names but have no variants.
    entities: Vec<String>,
    matcher: Option<AhoCorasick>,
}

impl NameIndex {
    pub fn new(names: Vec<KnownName>) -> NameIndex {
        NameIndex::with_entities(names, Vec::new())
    }

    /// Registered people plus the names of things that are not people (from `state/` and
    /// `world/`): those are never findings and never read as person names.
    pub fn with_entities(names: Vec<KnownName>, entities: Vec<String>) -> NameIndex {
        let mut seen = HashSet::new();
        let names: Vec<KnownName> = names
            .into_iter()
            .filter(|n| !normalize_str(&n.name).is_empty())
            .filter(|n| seen.insert(normalize_str(&n.name)))
            .collect();
        let keys: Vec<Vec<char>> = names
            .iter()
            .map(|n| normalize_str(&n.name).chars().collect())
            .collect();
        let mut lengths: Vec<usize> = keys.iter().map(Vec::len).filter(|l| *l >= 2).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        let mut by_char: HashMap<(usize, usize, char), Vec<usize>> = HashMap::new();
        for (k, key) in keys.iter().enumerate() {
            if key.len() >= 2 {
                for p in 0..2 {
                    by_char.entry((key.len(), p, key[p])).or_default().push(k);
                }
            }
        }
        let entities: Vec<String> = entities
            .iter()
            .map(|e| normalize_str(e))
            .filter(|e| e.chars().count() >= 2 && seen.insert(e.clone()))
            .collect();
        let mut known: HashSet<String> = keys.iter().map(|k| k.iter().collect()).collect();
        known.extend(entities.iter().cloned());
        let has_surname: Vec<bool> = names
            .iter()
            .zip(&keys)
            .map(|(n, k)| {
                let display: Vec<char> = normalize_str(&n.display).chars().collect();
                match (surname_len(k), surname_len(&display)) {
                    (Some(len), _) if *k == display => k.len() > len,
                    (Some(len), Some(dl)) => {
                        len == dl && k[..len] == display[..dl] && k.len() > len
                    }
                    _ => false,
                }
            })
            .collect();
        let mut surnames = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            let s: String = k.iter().collect();
            if let Some(len) = surname_len(k)
                && has_surname[i]
            {
                surnames.entry(s.chars().take(len).collect()).or_insert(i);
            }
        }
        let patterns: Vec<String> = keys
            .iter()
            .map(|k| k.iter().collect::<String>())
            .chain(entities.iter().cloned())
            .collect();
        let matcher = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("names are short literals")
        });
        NameIndex {
            names,
            keys,
            lengths,
            by_char,
            known,
            has_surname,
            surnames,
            entities,
            matcher,
        }
    }

    pub fn names(&self) -> &[KnownName] {
        &self.names
    }

    /// Names of things that are not people, normalised.
    pub fn entities(&self) -> &[String] {
        &self.entities
    }

    /// The known near miss at `[i, i + key.len())`, if the text there is one.
    /// `acting`: a person clearly does something there (see [`person_doing`]), which lets a
    /// changed surname through even when it is no surname (污松把左手… for 武松).
    fn near_miss(&self, chars: &[char], i: usize, k: usize, acting: bool) -> Option<&'static str> {
        let key = &self.keys[k];
        let len = key.len();
        let window = &chars[i..i + len];
        let mut diff = None;
        for p in 0..len {
            if window[p] != key[p] {
                if diff.is_some() {
                    return None;
                }
                diff = Some(p);
            }
        }
        let p = diff?;
        let why = confusable(key[p], window[p])?;
        // A changed surname must still be a surname (肖炎 for 萧炎; not 沉默 for 陈默) or look
        // like the original (箫炎), unless the name is long enough that the rest still says who
        // it is (古长歌 for 顾长歌).
        if let Some(slen) = surname_len(key).filter(|_| self.has_surname[k])
            && p < slen
            && (len < 3 || address_after_surname(key, slen))
            && !acting
            && surname_at(window, 0) != Some(slen)
            && !looks_alike(key[p], window[p])
        {
            return None;
        }
        Some(why)
    }

    /// The known name `name` is a same-surname variant of: as long, the same surname, one
    /// character of the given name changed (林桦 for 林枫). Not a form of address (林伯).
    fn one_given_char_off(&self, name: &str) -> Option<usize> {
        let chars: Vec<char> = name.chars().collect();
        let slen = surname_len(&chars)?;
        if chars.len() == slen + 1 && ADDRESS_SUFFIXES.contains(chars[slen]) {
            return None;
        }
        self.keys.iter().enumerate().position(|(k, key)| {
            self.has_surname[k]
                && key.len() == chars.len()
                && surname_len(key) == Some(slen)
                && key[..slen] == chars[..slen]
                && key[slen..]
                    .iter()
                    .zip(&chars[slen..])
                    .filter(|(a, b)| a != b)
                    .count()
                    == 1
        })
    }

    /// Every suspicious name in `doc`, first occurrence first.
    pub fn check(&self, doc: &Document) -> Vec<NameIssue> {
        let mut scan = Scan {
            doc,
            chars: doc.chars(),
            covered: self.covered(doc),
            claimed: vec![false; doc.chars().len()],
        };
        let mut found = Found::new();
        self.near_misses(&mut scan, &mut found);
        let people = person_like_names(&scan);
        self.judge_people(people, &scan, &mut found);
        let mut issues: Vec<NameIssue> = found
            .into_iter()
            .map(|(name, (kind, confidence, occurrences))| NameIssue {
                name,
                kind,
                confidence,
                occurrences,
            })
            .collect();
        issues.sort_by_key(|x| x.occurrences[0].start);
        issues
    }

    /// The characters covered by registered names: never part of a finding.
    fn covered(&self, doc: &Document) -> Vec<bool> {
        let mut covered = vec![false; doc.chars().len()];
        if let Some(m) = &self.matcher {
            for hit in m.find_iter(doc.text()) {
                let (s, e) = (doc.char_of(hit.start()), doc.char_of(hit.end()));
                covered[s..e].fill(true);
            }
        }
        covered
    }

    /// Near misses of known names, each occurrence claimed so no later finding overlaps it.
    fn near_misses(&self, scan: &mut Scan<'_>, found: &mut Found) {
        for i in 0..scan.chars.len() {
            if scan.covered[i] || scan.claimed[i] || !is_han(scan.chars[i]) {
                continue;
            }
            let Some((name, k, why, person)) = self.near_miss_at(scan, i) else {
                continue;
            };
            let len = self.keys[k].len();
            let known = &self.names[k];
            let sure = if person {
                Confidence::High
            } else {
                Confidence::Medium
            };
            let entry = found.entry(name).or_insert_with(|| {
                (
                    NameIssueKind::NearMiss {
                        of: known.display.clone(),
                        entity: known.entity.clone(),
                        why: why.to_string(),
                    },
                    sure,
                    Vec::new(),
                )
            });
            entry.1 = entry.1.max(sure);
            entry.2.push(Span {
                start: i,
                end: i + len,
            });
            scan.claimed[i..i + len].fill(true);
        }
    }

    /// The first known name (longest first) the unclaimed text at `i` nearly spells where a
    /// name may stand: the variant, the known name's index, why they are confusable and
    /// whether a person clearly stands there.
    fn near_miss_at(
        &self,
        scan: &Scan<'_>,
        i: usize,
    ) -> Option<(String, usize, &'static str, bool)> {
        let chars = scan.chars;
        let mut candidates: Vec<usize> = Vec::new();
        for &len in &self.lengths {
            if !scan.free(i, i + len) {
                continue;
            }
            candidates.clear();
            for p in 0..2 {
                if let Some(ks) = self.by_char.get(&(len, p, chars[i + p])) {
                    candidates.extend(ks);
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
            if let Some(found) = self.near_miss_among(scan, i, len, &candidates) {
                return Some(found);
            }
        }
        None
    }

    /// The first of `candidates` (keys of length `len`, in index order) the text at `i`
    /// nearly spells where a name may stand (see [`NameIndex::near_miss_at`]).
    fn near_miss_among(
        &self,
        scan: &Scan<'_>,
        i: usize,
        len: usize,
        candidates: &[usize],
    ) -> Option<(String, usize, &'static str, bool)> {
        let chars = scan.chars;
        // A person doing something there (叫阵达把…, “……”秦朋便道) is read as one even when
        // the segmenter glues the variant to the word before (叫阵) or after (朋便).
        let maybe_doing = person_doing(chars, i, i + len);
        for &k in candidates {
            let Some(why) = self.near_miss(chars, i, k, maybe_doing) else {
                continue;
            };
            let name: String = chars[i..i + len].iter().collect();
            if self.known.contains(&name) {
                continue;
            }
            let ctx = context(chars, i, i + len);
            if !self.stands_as_name(scan, i, k, &name, &ctx, maybe_doing) {
                continue;
            }
            // The words around it (the segmenter, only for what got this far).
            let words = Words::around(chars, i, i + len);
            // The verb before is the end of a longer word (革命片子看…): no person is taken.
            let doing = maybe_doing && !(i > 0 && is_han(chars[i - 1]) && words.crosses(i - 1));
            if doing != maybe_doing
                && (self.near_miss(chars, i, k, false).is_none()
                    || !self.stands_as_name(scan, i, k, &name, &ctx, false))
            {
                continue;
            }
            let Some(acts) = self.words_allow(scan, i, k, &ctx, &words, doing) else {
                continue;
            };
            return Some((name, k, why, ctx.person || acts));
        }
        None
    }

    /// Whether the variant `name` of key `k` at `i` stands where a name stands, by its
    /// neighbours alone (`doing`: a person does something there).
    fn stands_as_name(
        &self,
        scan: &Scan<'_>,
        i: usize,
        k: usize,
        name: &str,
        ctx: &Context,
        doing: bool,
    ) -> bool {
        let chars = scan.chars;
        let len = self.keys[k].len();
        // A variant that spells an ordinary word, or of a two-character name without a
        // surname (an alias such as 天宇), needs a person standing there; any other, a
        // boundary (a foreign name of three characters, 克莱恩, spells no word when varied).
        let wordlike = NOT_NAMES.contains(&name) || (!self.has_surname[k] && len < 3);
        if !(ctx.person || doing || (ctx.boundary && !wordlike)) {
            return false;
        }
        // A two-character alias without a surname (小哥, 愚者) is a word of the language: its
        // variant (不是小个的东西) needs a person acting there, or a verb that takes one.
        if len == 2 && !self.has_surname[k] && !(ctx.acts || doing || led(chars, i) && ctx.right) {
            return false;
        }
        // A nickname (no surname: 一枝花, 没面目) varied inside a phrase (使一枝画杆, 也无面目
        // 回去) is the phrase: it needs a boundary both sides or a person there.
        let nickname = !self.has_surname[k] && self.names[k].name != self.names[k].display;
        if nickname && !(ctx.left && ctx.right || ctx.person || doing) {
            return false;
        }
        // A two-character variant glued on its left (火裙朱服, 家余庆) needs a person there (or
        // a registered name right before it: 黑旋风李匮); a surname with a clan's word (蔡府,
        // 林家) is a house, not a person.
        let after_name = i > 0 && scan.covered[i - 1];
        if len == 2 && !(ctx.left || ctx.person || doing || after_name) {
            return false;
        }
        let key_last = self.keys[k][len - 1];
        !CLAN_SUFFIXES.contains(chars[i + len - 1]) || CLAN_SUFFIXES.contains(key_last)
    }

    /// What the segmenter's words say of the variant `name` of key `k` at `i`: `None` when it
    /// is no name — cut out of a word (行李里, 不觉大笑), a title (杨制使 is 杨 + 制使), a
    /// function word (或者), a word of the dictionary with no person acting there (燕京) —,
    /// else whether a person acts there.
    fn words_allow(
        &self,
        scan: &Scan<'_>,
        i: usize,
        k: usize,
        ctx: &Context,
        words: &Words,
        doing: bool,
    ) -> Option<bool> {
        let chars = scan.chars;
        let len = self.keys[k].len();
        let name: String = chars[i..i + len].iter().collect();
        let name = name.as_str();
        if !doing
            && (words.crosses(i)
                || (len < 3 && words.crosses_from(i, i + len))
                || words.function_at(i))
        {
            return None;
        }
        // A function word (或者, 而且, 这个) is never a name's variant — not even next to a
        // title, which is the neighbour's (韦尔奇先生或者娜娅女士) —, nor is a word of the
        // dictionary that varies an alias without a surname (记者, 作者 for 愚者): the alias is
        // a word itself, its neighbours are words too — unless a title names a person there
        // (一明师兄).
        if words.is_function_word(i, i + len)
            || (!self.has_surname[k] && !ctx.titled && words.is_common_word(i, i + len, name))
        {
            return None;
        }
        // Right before a registered name it says who that is (宋将关胜): not a name.
        if scan.covered.get(i + len) == Some(&true) {
            return None;
        }
        let key = &self.keys[k];
        if let Some(sl) = surname_len(&chars[i..i + len])
            && address_after_surname(chars, i + sl)
            && !address_after_surname(key, sl)
        {
            return None;
        }
        let acts = ctx.acts || doing || words.subject(chars, i, i + len);
        (acts || !words.is_common_word(i, i + len, name)).then_some(acts)
    }

    /// Files each person-like name that is neither registered nor already found: as a
    /// same-surname variant of a registered name, or as unregistered when it recurs. An
    /// occurrence cut out of a word, or that is a word of the dictionary with no person
    /// standing there, does not count.
    fn judge_people(
        &self,
        people: BTreeMap<String, Vec<Span>>,
        scan: &Scan<'_>,
        found: &mut Found,
    ) {
        let chars = scan.chars;
        for (name, spans) in people {
            if self.known.contains(&name) || found.contains_key(&name) {
                continue;
            }
            // (span, whether a person acts there, whether a word runs across its end). An
            // occurrence whose end a word runs across (林凡是他堂弟: 林 + 凡是) counts once
            // the name is seen whole elsewhere.
            let read: Vec<(Span, bool, bool)> = spans
                .into_iter()
                .filter_map(|sp| {
                    let words = Words::around(chars, sp.start, sp.end);
                    if words.crosses(sp.start) || scan.covered.get(sp.end) == Some(&true) {
                        return None;
                    }
                    let ctx = context(chars, sp.start, sp.end);
                    let subject = words.subject(chars, sp.start, sp.end);
                    if words.is_common_word(sp.start, sp.end, &name) && !(ctx.acts || subject) {
                        return None;
                    }
                    Some((
                        sp,
                        ctx.acts || subject,
                        words.crosses_from(sp.start, sp.end),
                    ))
                })
                .collect();
            let whole = read.iter().any(|r| !r.2);
            let read: Vec<(Span, bool)> = read
                .into_iter()
                .filter(|r| whole || !r.2)
                .map(|r| (r.0, r.1 && !r.2))
                .collect();
            if read.is_empty() {
                continue;
            }
            if let Some((kind, sure)) = self.person_issue(&name, &read) {
                found.insert(name, (kind, sure, read.into_iter().map(|r| r.0).collect()));
            }
        }
    }

    /// What is wrong with the unknown person-like name `name` seen at `spans` (each with
    /// whether a person acts there), if anything, and how sure that is.
    fn person_issue(
        &self,
        name: &str,
        spans: &[(Span, bool)],
    ) -> Option<(NameIssueKind, Confidence)> {
        let surname: String = name
            .chars()
            .take(surname_len(&name.chars().collect::<Vec<_>>()).unwrap_or(1))
            .collect();
        // The registered name this one is like: any of its surname from the second
        // occurrence (the closest one when one character of the given name is changed),
        // a one-character variant from the first where a person acts.
        let variant_of = self.one_given_char_off(name);
        let acts = spans.iter().any(|(_, acts)| *acts);
        let like = match self.surnames.get(&surname) {
            Some(&k) if spans.len() >= 2 => Some(variant_of.unwrap_or(k)),
            Some(_) => variant_of.filter(|_| acts),
            None => None,
        };
        if let Some(k) = like {
            let known = &self.names[k];
            let sure = if variant_of.is_some() && acts {
                Confidence::High
            } else {
                Confidence::Medium
            };
            return Some((
                NameIssueKind::SameSurname {
                    like: known.display.clone(),
                    entity: known.entity.clone(),
                },
                sure,
            ));
        }
        (spans.len() >= 3 && !self.surnames.contains_key(&surname))
            .then_some((NameIssueKind::Unregistered, Confidence::Low))
    }
}

/// The words of the segmenter around a stretch of text (a clause at most 8 characters either
/// side), with absolute character offsets. Without the `jieba` feature every character is its
/// own word: no boundary is crossed, nothing is a dictionary word.
struct Words {
    /// (start, end, part of speech) of each word.
    words: Vec<(usize, usize, String)>,
}

/// Parts of speech of words that are never the first character of a name: prepositions,
/// conjunctions, particles, adverbs, pronouns, localisers.
const FUNCTION_TAGS: &[&str] = &[
    "p", "c", "u", "uj", "ul", "uv", "uz", "ud", "ug", "d", "r", "rr", "rz", "f", "y",
];

/// After 一, what makes 「孟大山一拳」 an action of a person.
const STRIKES: &str = "拳脚掌刀剑枪棍棒鞭眼把步挥摆抬伸拍推踢扑跃";

impl Words {
    fn around(chars: &[char], s: usize, e: usize) -> Words {
        let mut ws = s;
        while ws > 0 && is_han(chars[ws - 1]) && s - ws < 8 {
            ws -= 1;
        }
        let mut we = e;
        while we < chars.len() && is_han(chars[we]) && we - e < 8 {
            we += 1;
        }
        let text: String = chars[ws..we].iter().collect();
        let mut at = ws;
        let words = crate::keyphrase::segmenter::tagged(&text)
            .into_iter()
            .map(|(w, tag)| {
                let start = at;
                at += w.chars().count();
                (start, at, tag)
            })
            .collect();
        Words { words }
    }

    /// Whether a word of two or more characters runs across offset `at`; a person's name
    /// that starts at `from` does not count (the segmenter reads 林桦点了点头 as 林桦点 + 了).
    fn crosses_from(&self, from: usize, at: usize) -> bool {
        self.words
            .iter()
            .any(|(s, e, tag)| *s < at && at < *e && !(*s == from && tag.starts_with("nr")))
    }

    /// Whether a word of two or more characters runs across offset `at`.
    fn crosses(&self, at: usize) -> bool {
        self.crosses_from(usize::MAX, at)
    }

    /// Whether the character at `at` is a function word of its own (与 in 王夫人与熙凤).
    fn function_at(&self, at: usize) -> bool {
        self.words
            .iter()
            .any(|(s, e, tag)| *s == at && *e == at + 1 && FUNCTION_TAGS.contains(&tag.as_str()))
    }

    /// Whether `[s, e)` is a word the segmenter tags as a function word (或者: c, 这个: r,
    /// 已经: d), or the start of one (或者说).
    fn is_function_word(&self, s: usize, e: usize) -> bool {
        self.words
            .iter()
            .any(|(ws, we, tag)| *ws == s && *we >= e && FUNCTION_TAGS.contains(&tag.as_str()))
    }

    /// Whether `[s, e)` is one word the dictionary knows and does not tag as a person's name
    /// (燕京, 金刚, 云云, 奏明).
    fn is_common_word(&self, s: usize, e: usize, text: &str) -> bool {
        NOT_NAMES.contains(&text)
            || self.words.iter().any(|(ws, we, tag)| {
                *ws == s
                    && *we == e
                    && !tag.starts_with("nr")
                    && crate::keyphrase::segmenter::has_word(text)
            })
    }

    /// Whether the name at `[s, e)` is the subject of a clause: the clause starts right before
    /// it and the word after it is a verb, whatever the verb (风姐听了), or a blow (孟大山一拳).
    fn subject(&self, chars: &[char], s: usize, e: usize) -> bool {
        let clause_start = s == 0 || !is_han(chars[s - 1]);
        clause_start
            && (self
                .words
                .iter()
                .any(|(ws, _, tag)| *ws == e && tag.starts_with('v'))
                || (chars.get(e) == Some(&'一')
                    && chars.get(e + 1).is_some_and(|c| STRIKES.contains(*c))))
    }
}

/// Before a name: a verb that takes a person (叫 宋江 来, 见 宋江 把手一招, 令 宋江 领兵) or a
/// preposition of company (和/与/同/跟 宋江 商议) — a segmenter often glues the verb to the
/// name's first character (叫阵, 见奏), which says nothing against the name.
const PERSON_LEADS: &str = "叫见令教和与同跟随让请派命唤差遣被把替帮陪问找等";

/// After a name: what a person does next — a particle or adverb that opens a predicate, a
/// disposal or passive marker, a speech verb.
const DOING: &str = "把将便就也都又却才已正并只忙急连遂乃亦再先当说道问答笑喊叫骂哼叹吼看望听见拿取走站坐跑抬低转皱点摇挺拍领引带";

/// Whether a verb that takes a person stands right before `s`, or before an aspect particle
/// there (见了风姐).
fn led(chars: &[char], s: usize) -> bool {
    let lead = |k: usize| PERSON_LEADS.contains(chars[k]);
    match s {
        0 => false,
        1 => lead(0),
        _ => lead(s - 1) || ("了着过".contains(chars[s - 1]) && lead(s - 2)),
    }
}

/// Whether a person does something at `[s, e)`: after a verb that takes a person or at the
/// head of a clause (a sentence mark or a closing quotation mark before it), and before what a
/// person does next (把, 便, 道, 一拳 …).
fn person_doing(chars: &[char], s: usize, e: usize) -> bool {
    let before = s.checked_sub(1).map(|b| chars[b]);
    let lead = before.is_some_and(|c| PERSON_LEADS.contains(c));
    let clause_start = before.is_none_or(|c| "。！？；：，、”」』）\n".contains(c));
    let after = chars.get(e).copied();
    let does = after.is_some_and(|c| DOING.contains(c))
        || GESTURES.iter().any(|g| starts_with_at(chars, e, g))
        || (after == Some('一') && chars.get(e + 1).is_some_and(|c| STRIKES.contains(*c)));
    (lead || clause_start) && does
}

/// Titles and forms of address that, right after a surname, make the text an address and not
/// a name (宋先锋, 杨制使, 林妹妹, 贾妃, 王夫人): a person, but not one whose name is written.
const ADDRESS_WORDS: &[&str] = &[
    "先锋", "将军", "元帅", "都督", "制使", "提辖", "太尉", "都头", "教头", "团练", "统制", "总管",
    "押司", "节级", "员外", "太公", "太君", "太太", "夫人", "老爷", "大人", "先生", "姑娘", "小姐",
    "公子", "娘子", "相公", "官人", "妹妹", "哥哥", "姐姐", "弟弟", "嫂子", "大爷", "大娘", "大嫂",
    "大哥", "大姐", "二爷", "三爷", "丫头", "知府", "知县", "县令", "丞相", "掌柜", "老板", "师傅",
    "师父", "妃", "婆", "母",
];
/// A rank before an address (薛大姑娘, 公孙二先生, 宋三郎).
const RANKS: &str = "大二三四五六七八九十小老";
const RANKED_ADDRESS: &[&str] = &[
    "郎",
    "娘",
    "姑",
    "嫂",
    "叔",
    "伯",
    "爷",
    "哥",
    "姐",
    "官人",
    "少爷",
    "侄",
    "小姐",
    "少奶奶",
];

/// Whether the text at `g0` (right after a surname) is a title or a form of address.
fn address_after_surname(chars: &[char], g0: usize) -> bool {
    let Some(&first) = chars.get(g0) else {
        return false;
    };
    ADDRESS_SUFFIXES.contains(first)
        || ADDRESS_WORDS.iter().any(|w| starts_with_at(chars, g0, w))
        || (RANKS.contains(first)
            && (ADDRESS_WORDS
                .iter()
                .chain(RANKED_ADDRESS)
                .any(|w| starts_with_at(chars, g0 + 1, w))))
}

/// Findings by name: the kind, how sure and every occurrence.
type Found = BTreeMap<String, (NameIssueKind, Confidence, Vec<Span>)>;

/// One check's view of a document: which characters registered names cover and which a
/// finding has claimed.
struct Scan<'a> {
    doc: &'a Document,
    chars: &'a [char],
    covered: Vec<bool>,
    claimed: Vec<bool>,
}

impl Scan<'_> {
    /// Whether `[s, e)` lies in the text and is all unclaimed, uncovered Han outside markup.
    fn free(&self, s: usize, e: usize) -> bool {
        e <= self.chars.len()
            && (s..e).all(|k| {
                !self.covered[k]
                    && !self.claimed[k]
                    && is_han(self.chars[k])
                    && !self.doc.is_markup(k)
            })
    }
}

/// Person-like names: a surname, a given name of name characters, boundaries both sides.
fn person_like_names(scan: &Scan<'_>) -> BTreeMap<String, Vec<Span>> {
    let mut people: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    let mut i = 0;
    while i < scan.chars.len() {
        match person_at(scan, i) {
            Some((name, e)) => {
                people
                    .entry(name)
                    .or_default()
                    .push(Span { start: i, end: e });
                i = e;
            }
            None => i += 1,
        }
    }
    people
}

/// The person-like name starting at `i` and where it ends: a surname with a boundary (or a
/// title) before it, then one or two name characters with a boundary (or a title) after.
fn person_at(scan: &Scan<'_>, i: usize) -> Option<(String, usize)> {
    let chars = scan.chars;
    let n = chars.len();
    let slen = surname_at(chars, i)?;
    // A title next to it is a boundary too (师兄林凡, 林凡师兄).
    let before_ok = i == 0
        || !is_han(chars[i - 1])
        || PRECEDERS.contains(chars[i - 1])
        || TITLES.iter().any(|t| ends_with_at(chars, i, t));
    // A title or a form of address after the surname is not a name (宋先锋, 林妹妹, 薛大姑娘).
    if !before_ok || scan.claimed[i] || address_after_surname(chars, i + slen) {
        return None;
    }
    let names = name_chars();
    for g in 1..=2 {
        let e = i + slen + g;
        if !scan.free(i, e) {
            continue;
        }
        let after_ok = e >= n
            || !is_han(chars[e])
            || FOLLOWERS.contains(chars[e])
            || TITLES.iter().any(|t| starts_with_at(chars, e, t));
        if !after_ok
            || !chars[i + slen..e].iter().all(|c| names.contains(c))
            || (g == 1 && CLAN_SUFFIXES.contains(chars[e - 1]))
        {
            continue;
        }
        let name: String = chars[i..e].iter().collect();
        if NOT_NAMES
            .iter()
            .any(|w| name.starts_with(w) || w.starts_with(name.as_str()))
        {
            return None;
        }
        return Some((name, e));
    }
    None
}

/// The terms a world document (`world/*.md`) defines, as known names that are not people:
/// the text of its headings, its **bold** terms and its 「」『』《》-quoted terms — each
/// 2–12 characters with at least one Han character and no sentence punctuation; each once.
pub fn world_terms(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        let t = t
            .trim()
            .trim_matches(|c: char| c == '*' || c == '_' || c.is_whitespace());
        let len = t.chars().count();
        if (2..=12).contains(&len)
            && t.chars().any(is_han)
            && !t.chars().any(|c| "。，、；：！？,.;:!?（）()".contains(c))
            && !out.iter().any(|o| o == t)
        {
            out.push(t.to_string());
        }
    };
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('#') {
            push(rest.trim_start_matches('#').trim_end_matches('#'));
        }
        for (open, close) in [("**", "**"), ("「", "」"), ("『", "』"), ("《", "》")] {
            let mut rest = line;
            while let Some(a) = rest.find(open) {
                let after = &rest[a + open.len()..];
                let Some(b) = after.find(close) else {
                    break;
                };
                push(&after[..b]);
                rest = &after[b + close.len()..];
            }
        }
    }
    out
}

/// Titles and kinship terms that make a surname a person: 王夫人, 林教头, 贾母, 宋太公.
const PERSON_TITLES: &[&str] = &[
    "老太太",
    "老太君",
    "老爷",
    "太太",
    "奶奶",
    "夫人",
    "太君",
    "大官人",
    "官人",
    "员外",
    "太公",
    "教头",
    "提辖",
    "都头",
    "大人",
    "将军",
    "先生",
    "姑娘",
    "小姐",
    "公子",
    "娘子",
    "大娘",
    "大嫂",
    "大哥",
    "大姐",
    "二哥",
    "二姐",
    "妈妈",
    "婆子",
    "姨娘",
    "嫂子",
    "师傅",
    "师父",
    "掌柜",
    "老板",
    "先锋",
    "太尉",
    "知府",
    "县令",
    "丞相",
    "母",
    "婆",
    "嫂",
    "妈",
    "氏",
];

/// After a name at the head of a clause: what a subject does next (a verb, an adverb, a
/// preposition, punctuation). Wider than [`FOLLOWERS`] because it only ever makes an opening
/// read as a name, which softens a repetition finding and never creates one.
const CLAUSE_FOLLOWERS: &str = "一没说道问答笑看望点摇叹喊叫走站坐抬低转皱冷沉轻猛忽突把被在从向对和与也都就又还却才已正便并的是刚终这那心眼手脸身自听见拿取喝吃只早将去来到上下出入回进起跑立睡哭想忙急连遂乃亦再先不要得等";

/// The length of a person's name at `i` as the head of a clause reads it: a surname with a
/// title (王夫人, 林教头) or with one or two given-name characters followed by what a subject
/// does next (武松看了, 宋江便道, 林枫推开). No segmenter: the sentence-opening rule of
/// [`crate::repetition`] calls it for every sentence, and a miss only leaves the plain
/// two-character opening.
pub fn person_name_at(chars: &[char], i: usize) -> Option<usize> {
    let slen = surname_at(chars, i)?;
    let g0 = i + slen;
    let first = *chars.get(g0)?;
    if title_starts().contains(&first)
        && let Some(t) = PERSON_TITLES.iter().find(|t| starts_with_at(chars, g0, t))
    {
        return Some(slen + t.chars().count());
    }
    let names = name_chars();
    let followers = clause_followers();
    let follows = |e: usize| e >= chars.len() || !is_han(chars[e]) || followers.contains(&chars[e]);
    for g in [2, 1] {
        let e = g0 + g;
        if e > chars.len() || !chars[g0..e].iter().all(|c| is_han(*c)) {
            continue;
        }
        // Two given characters must both be name characters; one may also be any character
        // that is not what follows a subject (逵, 逊 are in no list of name characters; 进 is
        // a verb, but also the name of 史进).
        let given_ok = if g == 2 {
            chars[g0..e].iter().all(|c| names.contains(c))
        } else {
            names.contains(&first) || !followers.contains(&first)
        };
        if !given_ok || !follows(e) {
            continue;
        }
        if not_names().contains(&chars[i..e]) {
            return None;
        }
        return Some(e - i);
    }
    None
}

/// First characters of [`PERSON_TITLES`].
fn title_starts() -> &'static HanSet {
    static SET: OnceLock<HanSet> = OnceLock::new();
    SET.get_or_init(|| {
        HanSet::of(
            &PERSON_TITLES
                .iter()
                .filter_map(|t| t.chars().next())
                .collect::<String>(),
        )
    })
}

fn clause_followers() -> &'static HanSet {
    static SET: OnceLock<HanSet> = OnceLock::new();
    SET.get_or_init(|| HanSet::of(CLAUSE_FOLLOWERS))
}

/// [`NOT_NAMES`] as character sequences, for lookups without allocating.
fn not_names() -> &'static HashSet<Vec<char>> {
    static SET: OnceLock<HashSet<Vec<char>>> = OnceLock::new();
    SET.get_or_init(|| NOT_NAMES.iter().map(|w| w.chars().collect()).collect())
}

fn surnames() -> &'static HanSet {
    static SET: OnceLock<HanSet> = OnceLock::new();
    SET.get_or_init(|| HanSet::of(SURNAMES))
}

/// First characters of [`DOUBLE_SURNAMES`].
fn double_surname_starts() -> &'static HanSet {
    static SET: OnceLock<HanSet> = OnceLock::new();
    SET.get_or_init(|| {
        HanSet::of(
            &DOUBLE_SURNAMES
                .iter()
                .filter_map(|t| t.chars().next())
                .collect::<String>(),
        )
    })
}

fn surname_len(name: &[char]) -> Option<usize> {
    surname_at(name, 0)
}

fn surname_at(chars: &[char], i: usize) -> Option<usize> {
    if i + 1 < chars.len()
        && double_surname_starts().contains(&chars[i])
        && DOUBLE_SURNAMES.iter().any(|d| {
            let mut it = d.chars();
            it.next() == Some(chars[i]) && it.next() == Some(chars[i + 1])
        })
    {
        return Some(2);
    }
    (i < chars.len() && surnames().contains(&chars[i])).then_some(1)
}

/// Registered names of a project: every character's display name and aliases, and the POV
/// characters and factions of the storylines that are written in Chinese (not slugs).
pub fn known_names(sources: &novel_core::text_sources::NameSources) -> Vec<KnownName> {
    let mut names = Vec::new();
    for c in &sources.characters {
        for name in std::iter::once(&c.display_name).chain(&c.aliases) {
            names.push(KnownName {
                name: name.clone(),
                entity: c.id.clone(),
                display: c.display_name.clone(),
            });
        }
    }
    for s in sources.storylines.iter().flat_map(|l| &l.storylines) {
        for name in s.pov_characters.iter().chain(&s.affiliated_factions) {
            if !novel_core::model::is_slug(name) {
                names.push(KnownName {
                    name: name.clone(),
                    entity: format!("storyline:{}", s.id),
                    display: name.clone(),
                });
            }
        }
    }
    names
}

/// Known names of things that are not people, each once, in order of discovery: the keys and
/// `name`/`display_name`/`aliases` of the state's items, locations and factions, the characters'
/// `location`s, the quoted terms of the world rules and the [`world_terms`] of the world
/// documents — those of 2–12 characters with a Han character among them.
pub fn entity_names(sources: &novel_core::text_sources::SettingSources) -> Vec<String> {
    use serde_json::Value;
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        let len = s.chars().count();
        if (2..=12).contains(&len) && s.chars().any(is_han) && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    if let Some(state) = &sources.state {
        for section in ["items", "locations", "factions"] {
            let Some(map) = state.get(section).and_then(Value::as_object) else {
                continue;
            };
            for (key, v) in map {
                push(key);
                match v {
                    Value::String(s) => push(s),
                    Value::Object(o) => {
                        for k in ["name", "display_name"] {
                            if let Some(s) = o.get(k).and_then(Value::as_str) {
                                push(s);
                            }
                        }
                        if let Some(a) = o.get("aliases").and_then(Value::as_array) {
                            a.iter().filter_map(Value::as_str).for_each(&mut push);
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(map) = state.get("characters").and_then(Value::as_object) {
            for v in map.values() {
                if let Some(s) = v.get("location").and_then(Value::as_str) {
                    push(s);
                }
            }
        }
    }
    for r in sources.world_rules.iter().flat_map(|w| &w.rules) {
        // Only the quoted terms of a rule's sentence: it has no headings or bold.
        let quoted: String = r.rule.replace('#', "").replace("**", "");
        world_terms(&quoted).iter().for_each(|t| push(t));
    }
    for doc in &sources.world_docs {
        world_terms(doc).iter().for_each(|t| push(t));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> NameIndex {
        let n = |name: &str, entity: &str, display: &str| KnownName {
            name: name.into(),
            entity: entity.into(),
            display: display.into(),
        };
        NameIndex::new(vec![
            n("林枫", "lin-feng", "林枫"),
            n("枫哥", "lin-feng", "林枫"),
            n("陆尘", "lu-chen", "陆尘"),
            n("苏婉", "su-wan", "苏婉"),
            n("陈默", "chen-mo", "陈默"),
        ])
    }

    /// (name, kind) of each finding of `index` on `text`, for the tables.
    fn findings(index: &NameIndex, text: &str) -> Vec<(String, String)> {
        index
            .check(&Document::new(text))
            .into_iter()
            .map(|i| {
                let kind = match i.kind {
                    NameIssueKind::NearMiss { of, why, .. } => format!("{why}:{of}"),
                    NameIssueKind::SameSurname { like, .. } => format!("同姓:{like}"),
                    NameIssueKind::Unregistered => "未登记".into(),
                };
                (i.name, kind)
            })
            .collect()
    }

    fn issues(text: &str) -> Vec<(String, String)> {
        findings(&index(), text)
    }

    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
    );

    #[test]
    fn names_table() {
        let cases: [Case; 12] = [
            ("他沉默，然后走了。", &[], "常用词（沉默）不是陈默的变体"),
            ("已经晚了，巳时到了。", &[], "形近字不在名字里不算"),
            ("林峰说：「走。」", &[("林峰", "同音:林枫")], "同音变体"),
            (
                "他看了陆晨一眼。",
                &[("陆晨", "同音:陆尘")],
                "同音变体，后接「一」之外的边界",
            ),
            ("对苏碗点了点头。", &[("苏碗", "同音:苏婉")], "前接「对」"),
            ("林枫说：「枫哥来了。」", &[], "登记名与别名不算"),
            ("一路尘土飞扬。", &[], "不在名字的位置"),
            ("林枫看着林疯。", &[("林疯", "同音:林枫")], "同音先于形近"),
            (
                "林凡说。林凡笑了。",
                &[("林凡", "同姓:林枫")],
                "同姓不同名出现两次",
            ),
            ("林凡的剑。", &[], "同姓不同名只出现一次，没有人在场的迹象"),
            (
                "赵铁柱说。赵铁柱笑了。赵铁柱走了。",
                &[("赵铁柱", "未登记")],
                "未登记人名出现三次",
            ),
            ("他马上就走。马上就到。马上就好。", &[], "常用词不是人名"),
        ];
        for (text, want, why) in cases {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(issues(text), want, "{text}: {why}");
        }
    }

    #[test]
    fn same_surname_variant_seen_once_is_reported() {
        let cases: [Case; 7] = [
            (
                "林枫把车停好。林桦点了点头，推开铁门。",
                &[("林桦", "同姓:林枫")],
                "改了名字的一个字，只出现一次，后接点头",
            ),
            ("林凡说。", &[("林凡", "同姓:林枫")], "后接说"),
            ("苏婧笑道：「来了。」", &[("苏婧", "同姓:苏婉")], "后接笑道"),
            (
                "他转身问陈然。",
                &[("陈然", "同姓:陈默")],
                "前接问，后面句子结束",
            ),
            (
                "陆尘看了一眼。师兄陆川走了过来。",
                &[("陆川", "同姓:陆尘")],
                "前有称谓",
            ),
            ("陆川师兄走了过来。", &[("陆川", "同姓:陆尘")], "后有称谓"),
            (
                "林峰说：「走。」林桦点头。",
                &[("林峰", "同音:林枫"), ("林桦", "同姓:林枫")],
                "同音变体与同姓变体各报各的",
            ),
        ];
        for (text, want, why) in cases {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(issues(text), want, "{text}: {why}");
        }
        // Three characters, one of the given name changed; the evidence is the one place.
        let found = wide_issues("林天翔冷笑一声，没有说话。");
        assert_eq!(found, [("林天翔".to_string(), "同姓:林天宇".to_string())]);
        let doc = Document::new("第一行。\n　　他看了看，林桦点了点头。");
        let issues = index().check(&doc);
        assert_eq!(issues.len(), 1);
        assert_eq!(doc.position(issues[0].occurrences[0].start), (2, 8));
    }

    #[test]
    fn words_after_a_surname_seen_once_are_not_variants() {
        let cases: [Case; 11] = [
            ("他们走进林子里，林间很静。", &[], "林子、林间是常用词"),
            ("林枫说：「枫哥这个名字，别再叫了。」", &[], "登记名与别名"),
            ("林家的人说：「滚。」", &[], "林家是家族"),
            ("林伯说：「少爷回来了。」", &[], "林伯是称呼，不是误写"),
            ("他叫林建国，说话南方口音。", &[], "长度不同：另一个人"),
            ("林凡的剑很快。", &[], "没有人在场的迹象"),
            ("四周都是林立的高楼。", &[], "是……的：不算人在场"),
            ("天黑前他们到了林海。", &[], "到了……。：地方也这样写"),
            ("众人陆续点头。", &[], "陆续不在名字位置"),
            ("陆续点头的人越来越多。", &[], "陆续是常用词"),
            ("林小雨说：「好。」", &[], "两个字都改了：不是林枫的变体"),
        ];
        for (text, want, why) in cases {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(issues(text), want, "{text}: {why}");
        }
        // A two-character given name with both characters changed is another person.
        assert_eq!(
            wide_issues("林小风冷笑一声。"),
            Vec::<(String, String)>::new()
        );
    }

    fn wide_issues(text: &str) -> Vec<(String, String)> {
        let n = |name: &str, entity: &str, display: &str| KnownName {
            name: name.into(),
            entity: entity.into(),
            display: display.into(),
        };
        let index = NameIndex::with_entities(
            vec![
                n("林枫", "lin-feng", "林枫"),
                n("方源", "fang-yuan", "方源"),
                n("叶凡", "ye-fan", "叶凡"),
                n("林天宇", "lin-tianyu", "林天宇"),
                n("天宇", "lin-tianyu", "林天宇"),
                n("苏小雨", "su-xiaoyu", "苏小雨"),
                n("小雨", "su-xiaoyu", "苏小雨"),
                n("江一鸣", "jiang-yiming", "江一鸣"),
                n("一鸣", "jiang-yiming", "江一鸣"),
                n("萧炎", "xiao-yan", "萧炎"),
            ],
            vec!["青云门".into(), "魔都外城".into()],
        );
        findings(&index, text)
    }

    #[test]
    fn ordinary_words_and_context_table() {
        let cases: [Case; 17] = [
            ("天雨路滑，山道难行。", &[], "天雨是常用词，不是天宇"),
            ("池塘里几条小鱼。", &[], "小鱼是常用词，不是小雨"),
            ("一名弟子跑过来。", &[], "一名是常用词，不是一鸣"),
            (
                "叶片上挂着水珠。叶片在风里抖。",
                &[],
                "叶片不是叶凡的同姓人",
            ),
            (
                "龙族的血脉。龙族的功法。龙族的秘境。",
                &[],
                "龙族不是人名：族不是名字用字",
            ),
            ("方圆百里没有人烟。", &[], "方圆百里"),
            (
                "林家的人。林家，不好惹。",
                &[],
                "林家是家族，不是林枫的同姓人",
            ),
            ("。林风吹过山岗。", &[], "林风吹过：没有人的迹象"),
            (
                "林风说：「走。」",
                &[("林风", "同音:林枫")],
                "常用词写在人名位置（后接说）",
            ),
            (
                "方圆说：「听。」",
                &[("方圆", "同音:方源")],
                "常用词写在人名位置",
            ),
            // A word of the dictionary varying an alias without a surname is that word (记者,
            // 作者 for 愚者; 小鱼 for 小雨), even before an action (issue 43).
            ("小鱼笑着跑开。", &[], "别名的变体是常用词"),
            (
                "一明师兄来了。",
                // jieba reads 一/明师/兄: the candidate crosses a word (the binary's build).
                if cfg!(feature = "jieba") {
                    &[]
                } else {
                    &[("一明", "同音:江一鸣")]
                },
                "称谓在后",
            ),
            (
                "林天羽冷笑一声。",
                &[("林天羽", "同音:林天宇")],
                "三字名的变体不再拆出「天羽」",
            ),
            (
                "箫炎却笑了。",
                &[("箫炎", "同音:萧炎")],
                "姓换成同音形近的非姓字",
            ),
            (
                "他认出青云门的人。青云门的人。",
                &[],
                "世界设定中的势力名不是人名",
            ),
            ("魔都外城的夜。", &[], "地名覆盖其中的字"),
            ("胜算不小于三成。", &[], "小于不在人名位置"),
        ];
        for (text, want, why) in cases {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(wide_issues(text), want, "{text}: {why}");
        }
    }

    #[test]
    fn world_terms_table() {
        let md = "# 地理\n\n## 魔都外城\n\n商旅云集。城北有「宗门禁地」，**金丹期**修士不得入内。\n《太玄经》失传已久。「这句话太长了不是一个名词吧对不对」\n「好，」\n";
        assert_eq!(
            world_terms(md),
            ["地理", "魔都外城", "金丹期", "宗门禁地", "太玄经"]
        );
    }

    #[test]
    fn confusable_pairs() {
        assert_eq!(confusable('枫', '峰'), Some("同音"));
        assert_eq!(confusable('己', '已'), Some("形近"));
        assert_eq!(confusable('枫', '林'), None);
        assert_eq!(confusable('枫', '枫'), None);
        // From the pinyin table, not a hand list: 腾/藤, 三/叁, 安/按 sound alike.
        assert_eq!(confusable('腾', '藤'), Some("同音"));
        assert_eq!(confusable('三', '叁'), Some("同音"));
        assert_eq!(confusable('安', '按'), Some("同音"));
        assert_eq!(confusable('闲', '闭'), Some("形近"));
    }
}
