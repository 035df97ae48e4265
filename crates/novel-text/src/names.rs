//! Name consistency (PRD M3, NER 一致性): the near-miss variants of known names an LLM writes
//! (林枫 → 林峰), and person-like names that are not registered.
//!
//! - **Near miss**: a run of Han characters as long as a known name (display name or alias),
//!   one character different, where the two characters sound alike (a curated table of
//!   homophones among name characters, tone ignored) or look alike; it must stand where a name
//!   stands (a boundary, or a word such as 说/道/看 after it, or 对/向/叫 before it), so 一路尘土
//!   is not a variant of 陆尘.
//! - **Person-like names**: a common surname, a one- or two-character given name and then a
//!   name boundary. One with the surname of a known name (林凡 beside 林枫) is reported from
//!   its second occurrence; any other from its third.
//!
//! Registered names and aliases are never findings, nor is text inside their occurrences.
//! Without a segmenter this is a heuristic: it finds what the author must look at, with the
//! lines as evidence; it does not decide.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use crate::count::is_han;
use crate::normalize::normalize_str;
use crate::segment::{Document, Span};

/// Homophones among characters common in names (pinyin without tone), one group per line.
const HOMOPHONES: &[&str] = &[
    "风枫峰锋丰封凤奉冯逢蜂疯",
    "尘晨辰陈沉臣宸琛忱",
    "婉碗宛挽晚万湾丸",
    "凡帆繁烦樊范泛",
    "萧肖晓小笑潇霄孝筱",
    "炎严言颜岩燕延研艳妍彦焰雁",
    "林琳霖麟临淋鳞",
    "云芸耘韵运允蕴昀",
    "雪薛学",
    "雨宇羽玉予余鱼于渔愉语钰瑜俞裕煜",
    "天田甜恬添",
    "浩昊皓豪好郝",
    "明鸣铭名茗",
    "红宏洪鸿虹弘泓",
    "龙隆珑胧",
    "杰洁婕捷结节",
    "军君俊峻骏郡",
    "伟微薇威维巍韦魏卫蔚",
    "心欣新馨昕鑫辛芯",
    "月悦越跃岳",
    "志芝之智致知枝",
    "清青晴卿庆擎倾轻",
    "玲灵凌铃令岭翎菱",
    "陆路鹿露禄卢芦鲁",
    "苏素肃",
    "叶夜烨野业",
    "墨莫默陌漠沫",
    "沈深神申慎绅",
    "瑶遥姚耀尧",
    "宁凝柠",
    "轩萱玄旋宣璇",
    "一依伊怡仪艺逸毅义翊奕",
    "寒韩涵晗翰汉含瀚",
    "楚初储褚",
    "李丽莉黎离立力理俐璃",
    "刘柳流留琉",
    "张章彰",
    "王汪望旺",
    "赵昭照",
    "秦琴勤沁芹",
    "徐许旭绪栩煦",
    "何贺赫和荷鹤",
    "江姜蒋将疆",
    "舒书淑殊",
    "兰蓝岚澜",
    "瑞睿蕊锐",
    "子紫梓姿",
    "金锦瑾晋谨今",
    "涛陶桃韬",
    "博波柏泊",
    "慧辉惠晖卉",
    "飞菲非妃霏",
    "荣容蓉融",
    "翔香湘祥",
    "琪齐奇祺琦启",
    "然冉",
    "唐棠堂",
    "宋松嵩颂",
    "程成诚城承澄",
    "周舟洲州",
    "吴武伍悟",
    "秋邱丘",
    "冰兵",
    "霜双爽",
    "白柏百",
    "石时实",
    "华化桦",
];

/// Characters that look alike.
const LOOKALIKES: &[&str] = &[
    "己已巳",
    "未末",
    "戊戌戍",
    "候侯",
    "晴睛",
    "辩辨辫",
    "拔拨",
    "梁粱",
    "析折",
    "乌鸟",
    "徽微",
    "祟崇",
    "萧箫",
    "赢嬴",
    "崖涯",
    "枫疯",
    "峰锋",
    "睿叡",
    "瑾谨",
    "婉琬",
    "陈阵",
];

/// Single-character surnames common in web novels.
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾萧肖田董袁潘蒋蔡余杜叶程魏苏吕丁沈任姚卢姜崔钟谭陆汪范廖石金韦贾夏付方邹熊孟秦邱侯江尹薛闫段雷龙黎史陶贺顾毛郝龚邵万覃武钱严莫孔楚慕云秋凌柳顾白";
/// Two-character surnames.
const DOUBLE_SURNAMES: &[&str] = &[
    "欧阳", "司马", "上官", "诸葛", "东方", "慕容", "皇甫", "令狐", "独孤", "南宫", "夏侯", "公孙",
    "轩辕", "端木", "长孙", "宇文", "西门", "司徒",
];

/// Characters a given name does not contain (grammar, not names).
const NOT_IN_NAMES: &str = "的地得了着过在把被将是不没也都就又还却才而和与向从对给让这那很太更所说道问看想要会能可个们么吗呢吧啊呀哦嗯上下里外中前后来去时";

/// Words that begin with a surname character but are not names.
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
    "叶子",
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
    "路上",
    "雨天",
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

/// After a name: speech and action verbs, function words.
const FOLLOWERS: &str = "一没说道问答笑看望点摇叹喊叫走站坐抬低转皱冷沉轻猛忽突把被在从向对和与也都就又还却才已正便并的是却刚终这那心眼手脸身自";
/// Before a name: prepositions and verbs that take a person.
const PRECEDERS: &str = "了对向和跟与叫让把被给是问找见等帮替陪随同";

fn groups() -> &'static HashMap<char, Vec<u16>> {
    static MAP: OnceLock<HashMap<char, Vec<u16>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<char, Vec<u16>> = HashMap::new();
        for (g, line) in HOMOPHONES.iter().chain(LOOKALIKES).enumerate() {
            for c in line.chars() {
                map.entry(c).or_default().push(g as u16);
            }
        }
        map
    })
}

/// Why two characters are confusable, if they are.
pub fn confusable(a: char, b: char) -> Option<&'static str> {
    if a == b {
        return None;
    }
    let map = groups();
    let (ga, gb) = (map.get(&a)?, map.get(&b)?);
    let shared = ga.iter().find(|g| gb.contains(g))?;
    Some(if (*shared as usize) < HOMOPHONES.len() {
        "同音"
    } else {
        "形近"
    })
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

/// One suspicious name and everywhere it occurs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameIssue {
    pub name: String,
    pub kind: NameIssueKind,
    pub occurrences: Vec<Span>,
}

/// Known names, compiled for scanning.
pub struct NameIndex {
    names: Vec<KnownName>,
    keys: Vec<Vec<char>>,
    known: HashSet<String>,
    surnames: HashMap<String, usize>,
    matcher: Option<AhoCorasick>,
}

impl NameIndex {
    pub fn new(names: Vec<KnownName>) -> NameIndex {
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
        let known: HashSet<String> = keys.iter().map(|k| k.iter().collect()).collect();
        let mut surnames = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            let s: String = k.iter().collect();
            if let Some(len) = surname_len(k)
                && k.len() > len
            {
                surnames.entry(s.chars().take(len).collect()).or_insert(i);
            }
        }
        let matcher = (!keys.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(keys.iter().map(|k| k.iter().collect::<String>()))
                .expect("names are short literals")
        });
        NameIndex {
            names,
            keys,
            known,
            surnames,
            matcher,
        }
    }

    pub fn names(&self) -> &[KnownName] {
        &self.names
    }

    /// Every suspicious name in `doc`, first occurrence first.
    pub fn check(&self, doc: &Document) -> Vec<NameIssue> {
        let chars = doc.chars();
        let n = chars.len();
        // Characters covered by registered names are never part of a finding.
        let mut covered = vec![false; n];
        if let Some(m) = &self.matcher {
            for hit in m.find_iter(doc.text()) {
                let (s, e) = (doc.char_of(hit.start()), doc.char_of(hit.end()));
                covered[s..e].fill(true);
            }
        }
        let free = |s: usize, e: usize| {
            e <= n && (s..e).all(|k| !covered[k] && is_han(chars[k]) && !doc.is_markup(k))
        };
        let before_ok =
            |s: usize| s == 0 || !is_han(chars[s - 1]) || PRECEDERS.contains(chars[s - 1]);
        let after_ok = |e: usize| e >= n || !is_han(chars[e]) || FOLLOWERS.contains(chars[e]);

        let mut found: BTreeMap<String, (NameIssueKind, Vec<Span>)> = BTreeMap::new();
        let mut claimed = vec![false; n];
        // Near misses of known names.
        for i in 0..n {
            if covered[i] || !is_han(chars[i]) {
                continue;
            }
            for (k, key) in self.keys.iter().enumerate() {
                let len = key.len();
                if len < 2 || !free(i, i + len) {
                    continue;
                }
                let window = &chars[i..i + len];
                let mut diff = None;
                let mut diffs = 0;
                for p in 0..len {
                    if window[p] != key[p] {
                        diffs += 1;
                        diff = Some(p);
                    }
                }
                let Some(p) = diff.filter(|_| diffs == 1) else {
                    continue;
                };
                let Some(why) = confusable(key[p], window[p]) else {
                    continue;
                };
                let name: String = window.iter().collect();
                if self.known.contains(&name)
                    || NOT_NAMES.contains(&name.as_str())
                    || !(before_ok(i) || after_ok(i + len))
                {
                    continue;
                }
                let known = &self.names[k];
                let entry = found.entry(name).or_insert_with(|| {
                    (
                        NameIssueKind::NearMiss {
                            of: known.display.clone(),
                            entity: known.entity.clone(),
                            why: why.to_string(),
                        },
                        Vec::new(),
                    )
                });
                entry.1.push(Span {
                    start: i,
                    end: i + len,
                });
                claimed[i..i + len].fill(true);
                break;
            }
        }
        // Person-like names.
        let mut people: BTreeMap<String, Vec<Span>> = BTreeMap::new();
        let mut i = 0;
        while i < n {
            let Some(slen) = surname_at(chars, i) else {
                i += 1;
                continue;
            };
            if !before_ok(i) || claimed[i] {
                i += 1;
                continue;
            }
            let mut hit = None;
            for g in 1..=2 {
                let e = i + slen + g;
                if !free(i, e) || !after_ok(e) {
                    continue;
                }
                if chars[i + slen..e].iter().any(|c| NOT_IN_NAMES.contains(*c)) {
                    continue;
                }
                let name: String = chars[i..e].iter().collect();
                if NOT_NAMES
                    .iter()
                    .any(|w| name.starts_with(w) || w.starts_with(name.as_str()))
                {
                    break;
                }
                hit = Some((name, e));
                break;
            }
            match hit {
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
        for (name, spans) in people {
            if self.known.contains(&name) || found.contains_key(&name) {
                continue;
            }
            let surname: String = name
                .chars()
                .take(surname_len(&name.chars().collect::<Vec<_>>()).unwrap_or(1))
                .collect();
            match self.surnames.get(&surname) {
                Some(&k) if spans.len() >= 2 => {
                    let known = &self.names[k];
                    found.insert(
                        name,
                        (
                            NameIssueKind::SameSurname {
                                like: known.display.clone(),
                                entity: known.entity.clone(),
                            },
                            spans,
                        ),
                    );
                }
                None if spans.len() >= 3 => {
                    found.insert(name, (NameIssueKind::Unregistered, spans));
                }
                _ => {}
            }
        }
        let mut issues: Vec<NameIssue> = found
            .into_iter()
            .map(|(name, (kind, occurrences))| NameIssue {
                name,
                kind,
                occurrences,
            })
            .collect();
        issues.sort_by_key(|x| x.occurrences[0].start);
        issues
    }
}

fn surname_len(name: &[char]) -> Option<usize> {
    surname_at(name, 0)
}

fn surname_at(chars: &[char], i: usize) -> Option<usize> {
    if i + 1 < chars.len()
        && DOUBLE_SURNAMES.iter().any(|d| {
            let mut it = d.chars();
            it.next() == Some(chars[i]) && it.next() == Some(chars[i + 1])
        })
    {
        return Some(2);
    }
    (i < chars.len() && SURNAMES.contains(chars[i])).then_some(1)
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

    fn issues(text: &str) -> Vec<(String, String)> {
        let doc = Document::new(text);
        index()
            .check(&doc)
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
            ("林凡说。", &[], "同姓不同名只出现一次"),
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
    fn confusable_pairs() {
        assert_eq!(confusable('枫', '峰'), Some("同音"));
        assert_eq!(confusable('己', '已'), Some("形近"));
        assert_eq!(confusable('枫', '林'), None);
        assert_eq!(confusable('枫', '枫'), None);
    }
}
