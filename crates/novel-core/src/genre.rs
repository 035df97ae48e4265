//! Genre presets (题材预设): what a 网文 editor of the genre asks of the first three chapters
//! (黄金三章), the payoffs (爽点) its readers come for, and how long they wait between two.
//!
//! This is the one place the chapter 1–3 rules live: the planner's packet (PlotArchitect plans
//! the trial chapters by them), the writer's and the judge's packets carry the book's lines.
//! A book's preset is the one its brief names (`- **题材预设**：悬疑` — so a 都市玄幻 with a
//! 悬疑 voice chooses 悬疑), else the first preset whose keyword the project's `genre`
//! (`novel.json`, `novel init --genre`) names, earliest in the text (`都市玄幻` → 都市), else
//! [`GENERAL`] ([`preset_for_book`]).
//!
//! `novel volume check` warns when a genre that needs payoffs goes
//! [`GenrePreset::payoff_gap`] chapters without one.
//!
//! Layer: ground (the lowest: no file model, no rules).

/// One genre's preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenrePreset {
    /// The preset's name (`玄幻`).
    pub name: &'static str,
    /// Words of a project's `genre` that choose this preset.
    pub keywords: &'static [&'static str],
    /// 黄金三章: what chapters 1–3 must do, one line each (chapter 1, 2, 3).
    pub golden_three: [&'static str; 3],
    /// The payoff types its readers expect.
    pub payoff_types: &'static [&'static str],
    /// At most this many chapters in a row without a delivered payoff (`None`: the genre keeps
    /// readers by other means and is not checked).
    pub payoff_gap: Option<u32>,
}

/// The presets, in the order a tie is broken.
pub const PRESETS: [GenrePreset; 4] = [
    GenrePreset {
        name: "玄幻",
        keywords: &[
            "玄幻", "仙侠", "修仙", "修真", "奇幻", "武侠", "高武", "洪荒",
        ],
        golden_three: [
            "第1章：前 500 字立住主角的处境与压迫（被欺、被退婚、资源被夺），金手指或异常在本章露头，章末留一个非解决不可的麻烦。",
            "第2章：主角第一次用金手指做选择并付出代价，对手把话说满、旁观者下注，给第3章的反转蓄足压。",
            "第3章：兑现第一个爽点（小打脸、越级胜、当众突破），写出旁人怎么变脸，并立起更大的目标（宗门大比、秘境、仇人）。",
        ],
        payoff_types: &["打脸", "越级战胜", "突破", "夺宝", "扮猪吃虎", "身份揭晓"],
        payoff_gap: Some(3),
    },
    GenrePreset {
        name: "都市",
        keywords: &["都市", "现代", "职场", "神豪", "系统", "重生"],
        golden_three: [
            "第1章：开场就是冲突（被羞辱、被开除、家人出事），身份反差或金手指在本章露头，主角当场做出第一个反击的决定。",
            "第2章：主角用金手指撬动现实（第一笔钱、第一次出手），信息差拉满，让看不起他的人把话说死。",
            "第3章：兑现第一个爽点（当众打脸、身份曝光、赚到第一桶金），写出具体的人的具体反应，抛出下一个更大的对手或目标。",
        ],
        payoff_types: &["打脸", "身份揭晓", "逆袭", "赚钱", "护短", "装逼反杀"],
        payoff_gap: Some(3),
    },
    GenrePreset {
        name: "言情",
        keywords: &[
            "言情", "古言", "现言", "甜宠", "虐恋", "宫斗", "宅斗", "豪门", "耽美",
        ],
        golden_three: [
            "第1章：男女主相遇或关系钩子（误会、契约、重逢、身份错位）在前 1000 字出现，女主的处境与性格靠一件具体的事立住。",
            "第2章：第一次情感拉扯：两人的目标互相妨碍，读者看见心动的苗头，也看见阻碍是什么。",
            "第3章：兑现第一个情绪点（撑腰、心动、甜或虐的高点），关系往前推一步，留下让人想看两人下一次交锋的钩子。",
        ],
        payoff_types: &[
            "心动",
            "撑腰护短",
            "甜宠",
            "误会解除",
            "虐后和解",
            "打脸渣男",
        ],
        payoff_gap: None,
    },
    GenrePreset {
        name: "悬疑",
        keywords: &["悬疑", "推理", "惊悚", "恐怖", "灵异", "刑侦", "探案"],
        golden_three: [
            "第1章：前 300 字抛出核心谜团（尸体、失踪、不可能的现象），主角卷入的理由和他的特殊本事在本章露出来。",
            "第2章：第一轮调查：给出公平的线索（读者也看得见），排除一个显而易见的答案，危险逼近主角本人。",
            "第3章：第一个反转：推翻一个假设或揭开一层真相，同时打开更深的谜，章末留一个新的疑点。",
        ],
        payoff_types: &["线索揭示", "反转", "真相大白", "智斗胜出", "绝境脱身"],
        payoff_gap: None,
    },
];

/// 黄金三章 for a book no preset fits: what every editor asks of chapters 1–3.
pub const GENERAL: GenrePreset = GenrePreset {
    name: "通用",
    keywords: &[],
    golden_three: [
        "第1章：前 300 字让主角带着麻烦出场（是谁、处境多糟、想要什么、手里有什么），不用世界观介绍或回忆开场；中段起冲突，章末留一个非解决不可的麻烦。",
        "第2章：压力升级到要命的程度，主角的本事或金手指露出征兆并第一次被逼着用上，付出代价；旁人的轻视把话说满，给第3章蓄压。",
        "第3章：兑现第一个爽点或真相的一角（反击落地、谜面揭开一层），写出具体的人怎么变脸，章末抛出更大的敌人、目标或谜。",
    ],
    payoff_types: &["反击", "揭秘", "收获", "突破"],
    payoff_gap: None,
};

/// The preset a book's brief names on its `题材预设` line (a preset's name or keyword), if any.
pub fn preset_named_in_brief(brief: &str) -> Option<&'static GenrePreset> {
    let line = brief.lines().find(|l| l.contains("题材预设"))?;
    let value = line
        .split_once(['：', ':'])
        .map(|(_, v)| v)?
        .trim()
        .trim_matches(|c: char| c == '*' || c.is_whitespace());
    if value.is_empty() {
        return None;
    }
    PRESETS
        .iter()
        .find(|p| p.name == value)
        .or_else(|| preset_for(Some(value)))
}

/// The book's preset: the brief's `题材预设`, else the genre's keyword, else [`GENERAL`].
pub fn preset_for_book(brief: Option<&str>, genre: Option<&str>) -> &'static GenrePreset {
    brief
        .and_then(preset_named_in_brief)
        .or_else(|| preset_for(genre))
        .unwrap_or(&GENERAL)
}

/// The 黄金三章 lines of a book, one a chapter, headed by the preset they come from.
pub fn golden_three_lines(p: &GenrePreset) -> String {
    format!(
        "【黄金三章 · {}】\n{}",
        p.name,
        p.golden_three
            .iter()
            .map(|l| format!("- {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// The preset a project's `genre` names, if any.
pub fn preset_for(genre: Option<&str>) -> Option<&'static GenrePreset> {
    let g = genre?.trim();
    PRESETS
        .iter()
        .filter_map(|p| {
            p.keywords
                .iter()
                .filter_map(|k| g.find(k))
                .min()
                .map(|at| (at, p))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, p)| p)
}

/// How a payoff lands, for the writer (one line; the judge checks the same).
pub const PAYOFF_CRAFT: &str = "蓄压→兑现：先让读者看见被压着的人和压人的人（对手把话说满、旁观者下注、信息差只有主角和读者知道），再在一个具体的动作或一句台词上翻过来，最后写两三个具体的人怎么变脸、怎么改口；一章里有一次微反转就够，别把兑现写成「全场哗然」。";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_keyword_chooses() {
        assert_eq!(preset_for(Some("玄幻")).unwrap().name, "玄幻");
        assert_eq!(preset_for(Some("都市玄幻")).unwrap().name, "都市");
        assert_eq!(preset_for(Some("古言宅斗")).unwrap().name, "言情");
        assert_eq!(preset_for(Some("民国悬疑")).unwrap().name, "悬疑");
        assert!(preset_for(Some("科幻")).is_none());
        assert!(preset_for(None).is_none());
    }

    #[test]
    fn the_brief_names_the_preset() {
        let brief = "- **书名**：雾港夜行\n- **题材**：都市玄幻\n- **题材预设**：悬疑\n";
        assert_eq!(preset_for_book(Some(brief), Some("都市玄幻")).name, "悬疑");
        // A keyword works as well as a name; an empty line leaves the genre to choose.
        let keyword = brief.replace("悬疑", "刑侦");
        assert_eq!(
            preset_for_book(Some(&keyword), Some("都市玄幻")).name,
            "悬疑"
        );
        let empty = brief.replace("悬疑", "");
        assert_eq!(preset_for_book(Some(&empty), Some("都市玄幻")).name, "都市");
        assert_eq!(preset_for_book(None, Some("科幻")).name, "通用");
        assert!(golden_three_lines(&GENERAL).starts_with("【黄金三章 · 通用】\n- 第1章："));
    }
}
