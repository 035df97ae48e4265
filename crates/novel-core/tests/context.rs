//! Context packets, storyline isolation, the outline format, token estimates, trimming, the
//! next-step recommendation and the hook text — pure functions over values.

use novel_core::context::assemble::{Inputs, Paths, Summary};
use novel_core::context::lines::{self, LineRole};
use novel_core::context::outline::{self, OutlineError};
use novel_core::context::session::{self, HOOK_MAX_CHARS, SessionFacts};
use novel_core::context::tokens::estimate;
use novel_core::context::{self, Agent, ContextError};
use novel_core::model::{
    ChapterContract, Character, Checkpoint, Evaluation, OrchestratorState, PendingAction,
    PipelineStage, StorylineSchedule, Storylines,
};
use novel_core::next::{self, DiskFacts, LockFact, NextAction};
use novel_core::pipeline::{FileFact, StagingFacts};
use serde_json::json;

fn storylines() -> Storylines {
    serde_json::from_value(json!({
        "storylines": [
            {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"},
            {"id": "jinghai_plan", "name": "靖海计划", "type": "conspiracy", "scope": "multi_volume", "status": "active"},
            {"id": "sect_rivalry", "name": "宗门之争", "type": "faction_conflict", "scope": "multi_volume", "status": "active"},
            {"id": "zhonggu_secret", "name": "中古之秘", "type": "mystery", "scope": "novel", "status": "dormant"},
            {"id": "lost_heir", "name": "遗孤之谜", "type": "character_arc", "scope": "single_volume", "status": "planned"},
            {"id": "old_feud", "name": "旧怨", "type": "character_arc", "scope": "single_volume", "status": "resolved"}
        ]
    }))
    .unwrap()
}

fn schedule() -> StorylineSchedule {
    serde_json::from_value(json!({
        "volume": 1,
        "chapter_range": [1, 50],
        "active_storylines": [
            {"storyline_id": "main_arc", "volume_role": "primary"},
            {"storyline_id": "jinghai_plan", "volume_role": "secondary"},
            {"storyline_id": "sect_rivalry", "volume_role": "seasoning"}
        ],
        "convergence_events": [
            {"chapter_range": [25, 28], "involved_storylines": ["main_arc", "jinghai_plan"], "trigger": "关键角色之死"}
        ],
        "dormant_storylines": ["zhonggu_secret"]
    }))
    .unwrap()
}

fn contract(chapter: u32, line: &str, next: Option<&str>) -> ChapterContract {
    let mut c = json!({
        "chapter": chapter,
        "storyline_id": line,
        "preconditions": {"character_states": {"陆尘": {"location": "魔都外城"}}, "required_world_rules": ["W-001"]},
        "objectives": [{"id": format!("OBJ-{chapter:03}-1"), "type": "plot", "required": true, "description": "陆尘发现密信"}],
        "acceptance_criteria": ["不违反 C-LUCHEN-001"],
        "storyline_context": {"concurrent_state": {"sect_rivalry": "陈老闭关不出（ch20）"}}
    });
    if let Some(n) = next {
        c["transition_hint"] = json!({"next_storyline": n, "bridge": "海域震动"});
    }
    serde_json::from_value(c).unwrap()
}

fn memories() -> std::collections::BTreeMap<String, String> {
    [
        (
            "main_arc",
            "# 主线 · 故事线记忆\n陆尘身在魔都。\n- 主线秘闻：密信藏在剑鞘里。\n",
        ),
        (
            "jinghai_plan",
            "许象乾潜伏东海。\n- 靖海秘闻：佑国使者三更登岛。\n",
        ),
        ("sect_rivalry", "陈老闭关。\n- 宗门秘闻：长老会暗中分裂。\n"),
        (
            "zhonggu_secret",
            "龙宫遗迹沉睡。龙君尚未苏醒。\n- 中古秘闻：烈山氏的血脉未绝。\n",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn checkpoint(last: u32) -> Checkpoint {
    serde_json::from_value(json!({
        "last_completed_chapter": last,
        "current_volume": 1,
        "orchestrator_state": "WRITING",
        "pipeline_stage": null,
        "inflight_chapter": null
    }))
    .unwrap()
}

fn outline_text() -> String {
    let mut t = "# 第 1 卷 · 风起\n\n本卷概述第一段。\n\n本卷概述第二段。\n".to_string();
    for c in 1..=50 {
        let jinghai = ((25..=28).contains(&c) && c % 2 == 0) || c % 5 == 3;
        let line = if jinghai { "jinghai_plan" } else { "main_arc" };
        t.push_str(&format!(
            "\n## 第{c}章 标题{c}\n- 故事线：{line}\n- POV：陆尘\n"
        ));
    }
    t
}

fn inputs(chapter: u32, line: &str, next: Option<&str>) -> Inputs {
    let characters = serde_json::from_value(json!([
        {"id": "lu-chen", "display_name": "陆尘", "aliases": ["小陆"], "role": "protagonist",
         "contracts": [{"id": "C-LUCHEN-001", "type": "capability", "rule": "筑基后期，无法使用金丹期法术"}],
         "personality": "重诺"},
        {"id": "su-wan", "display_name": "苏婉", "contracts": [{"id": "C-SUWAN-001", "type": "personality", "rule": "不说谎"}]}
    ]))
    .unwrap();
    Inputs {
        chapter,
        volume: 1,
        paths: Paths {
            outline: "volumes/vol-01/outline.md".into(),
            contract: format!("volumes/vol-01/chapter-contracts/chapter-{chapter:03}.json"),
            staging_chapter: format!("staging/chapters/chapter-{chapter:03}.md"),
            staging_summary: format!("staging/summaries/chapter-{chapter:03}-summary.md"),
            staging_delta: format!("staging/state/chapter-{chapter:03}-delta.json"),
            staging_evaluation: format!("staging/evaluations/chapter-{chapter:03}-eval.json"),
            staging_storylines: "staging/storylines".into(),
            volume_dir: "volumes/vol-01".into(),
        },
        checkpoint: Some(checkpoint(chapter - 1)),
        world_rules: Some(
            serde_json::from_value(json!({"rules": [
                {"id": "W-001", "rule": "金丹需灵气三级", "constraint_type": "hard"},
                {"id": "W-002", "rule": "城内不得私斗", "constraint_type": "soft"}
            ]}))
            .unwrap(),
        ),
        characters,
        storylines: Some(storylines()),
        schedule: Some(schedule()),
        outline: Some(outline_text()),
        contract: Some(contract(chapter, line, next)),
        memories: memories(),
        current_state: Some(
            json!({"schema_version": 1, "state_version": 7, "last_updated_chapter": chapter - 1,
            "characters": {"lu-chen": {"location": "魔都", "inventory": (1..=30).map(|i| format!("物品{i}")).collect::<Vec<_>>()}},
            "world_state": {"ongoing_events": (1..=40).map(|i| format!("事件{i}")).collect::<Vec<_>>()}}),
        ),
        summaries: vec![
            Summary {
                chapter: chapter - 1,
                storyline: Some(line.into()),
                body: "上一章在本线。".into(),
            },
            Summary {
                chapter: chapter - 2,
                storyline: Some("sect_rivalry".into()),
                body: "宗门线的摘要。".into(),
            },
            Summary {
                chapter: chapter - 3,
                storyline: None,
                body: "没有 front matter 的摘要。".into(),
            },
        ],
        ..Inputs::default()
    }
}

// ---- storyline isolation --------------------------------------------------------------------

#[test]
fn non_convergence_chapter_of_line_a_has_no_memory_of_line_b() {
    let p = context::assemble(Agent::ChapterWriter, &inputs(31, "main_arc", None)).unwrap();
    let text = p.render();
    assert!(text.contains("主线秘闻"));
    for leaked in ["靖海秘闻", "宗门秘闻", "中古秘闻"] {
        assert!(!text.contains(leaked), "{leaked} leaked:\n{text}");
    }
    // Concurrent line from the contract's concurrent_state, the others from their memory's
    // first sentence; planned and resolved lines are absent.
    let s = p.section("storyline").unwrap().body();
    assert!(
        s.contains("宗门之争（sect_rivalry，并行线）：陈老闭关不出（ch20）"),
        "{s}"
    );
    assert!(
        s.contains("靖海计划（jinghai_plan，并行线）：许象乾潜伏东海。"),
        "{s}"
    );
    assert!(!s.contains("lost_heir") && !s.contains("old_feud"), "{s}");
    // Summaries of other lines stay out; one without front matter counts as this line's.
    let sums = p.section("recent_summaries").unwrap().body();
    assert!(sums.contains("上一章在本线") && sums.contains("没有 front matter"));
    assert!(!sums.contains("宗门线的摘要"), "{sums}");
    assert_eq!(p.sections[0].tag, "storyline");
}

#[test]
fn frozen_line_is_one_sentence_only() {
    let p = context::assemble(Agent::ChapterWriter, &inputs(31, "main_arc", None)).unwrap();
    let s = p.section("storyline").unwrap().body();
    let line = s.lines().find(|l| l.contains("zhonggu_secret")).unwrap();
    assert_eq!(line, "- 中古之秘（zhonggu_secret，冻结线）：龙宫遗迹沉睡。");
    assert!(!s.contains("龙君尚未苏醒"));
}

#[test]
fn convergence_chapter_carries_every_involved_memory() {
    let p = context::assemble(Agent::ChapterWriter, &inputs(26, "jinghai_plan", None)).unwrap();
    assert!(p.convergence);
    let text = p.render();
    assert!(text.contains("主线秘闻") && text.contains("靖海秘闻"));
    assert!(!text.contains("宗门秘闻") && !text.contains("中古秘闻"));
    let own = text.find("靖海秘闻").unwrap();
    let other = text.find("主线秘闻").unwrap();
    assert!(own < other, "the chapter's own line first");
}

#[test]
fn adjacent_line_memory_only_when_the_schedule_lists_it() {
    let plan = lines::plan(
        31,
        Some(&contract(31, "main_arc", Some("sect_rivalry"))),
        None,
        Some(&storylines()),
        Some(&schedule()),
    );
    assert_eq!(plan.role_of("sect_rivalry"), Some(LineRole::Adjacent));
    // A hand-over to a dormant line not active this volume is not adjacent.
    let plan = lines::plan(
        31,
        Some(&contract(31, "main_arc", Some("zhonggu_secret"))),
        None,
        Some(&storylines()),
        Some(&schedule()),
    );
    assert_eq!(plan.role_of("zhonggu_secret"), Some(LineRole::Frozen));
}

#[test]
fn current_line_falls_back_from_contract_to_outline_to_schedule() {
    let plan = lines::plan(
        3,
        None,
        Some("jinghai_plan"),
        Some(&storylines()),
        Some(&schedule()),
    );
    assert_eq!(plan.current.as_deref(), Some("jinghai_plan"));
    assert_eq!(plan.current_source, lines::CurrentSource::Outline);
    let plan = lines::plan(3, None, None, Some(&storylines()), Some(&schedule()));
    assert_eq!(plan.current.as_deref(), Some("main_arc"));
    assert_eq!(plan.current_source, lines::CurrentSource::SchedulePrimary);
}

// ---- outline format -------------------------------------------------------------------------

#[test]
fn common_chapter_heading_shapes_are_read() {
    // (heading, chapter, title)
    let cases: [(&str, u32, Option<&str>); 16] = [
        ("## 第12章 雨夜", 12, Some("雨夜")),
        ("### 第 12 章: 雨夜", 12, Some("雨夜")),
        ("## 第12章：雨夜", 12, Some("雨夜")),
        ("## 第 12 章 雨夜", 12, Some("雨夜")),
        ("## 第12章", 12, None),
        ("## 第12章：", 12, None),
        ("# 第12章 雨夜", 12, Some("雨夜")),
        ("#### 第12章 · 雨夜", 12, Some("雨夜")),
        ("##第12章 雨夜", 12, Some("雨夜")),
        ("## 第１２章　雨夜", 12, Some("雨夜")),
        ("## 第12章 - 雨夜", 12, Some("雨夜")),
        ("## **第12章** 雨夜", 12, Some("雨夜")),
        ("## 第十二章 雨夜", 12, Some("雨夜")),
        ("### 第二十章：风起", 20, Some("风起")),
        ("## 第一百零三章 归航", 103, Some("归航")),
        ("## 第十章", 10, None),
    ];
    for (heading, n, title) in cases {
        let text = format!("# 第 1 卷 · 风起\n卷概述。\n\n{heading}\n- 故事线：main_arc\n");
        let o = outline::parse(&text).unwrap_or_else(|e| panic!("{heading}: {e}"));
        assert_eq!(o.chapters.len(), 1, "{heading}");
        let b = &o.chapters[0];
        assert_eq!(
            (b.chapter, b.title.as_deref(), b.line),
            (n, title, 4),
            "{heading}"
        );
        assert_eq!(b.storyline(), Some("main_arc"), "{heading}");
        assert_eq!(o.overview, "# 第 1 卷 · 风起\n卷概述。", "{heading}");
    }
}

#[test]
fn chapter_blocks_under_level_three_headings_end_at_the_same_level() {
    let text = "# 第 3 卷\n## 第一幕 入城\n### 第 1 章: 进城\n- 故事线：main_arc\n#### 场景一\n城门。\n### 第 2 章: 夜市\n- 故事线：main_arc\n### 本幕伏笔\n- 玉佩\n## 第二幕 出城\n### 第 3 章: 出城\n";
    let o = outline::parse(text).unwrap();
    assert_eq!(o.ranges(), "1–3");
    let one = o.block(1).unwrap();
    assert!(one.text.ends_with("城门。"), "{:?}", one.text);
    assert_eq!(one.title.as_deref(), Some("进城"));
    // A heading of the chapters' own level (or higher) that is not a chapter ends the block.
    assert!(!o.block(2).unwrap().text.contains("本幕伏笔"));
    assert!(o.overview.contains("本幕伏笔") && o.overview.contains("第二幕"));
}

#[test]
fn unreadable_chapter_heading_names_its_line_and_the_shapes() {
    for (bad, why) in [
        ("## 第12章雨夜", "空格或冒号"),
        ("## 卷一 第12章 雨夜", "开头"),
        ("## 第十十章 雨夜", "读不出"),
        ("## 第0章 序", "从 1 开始"),
        ("## 第99999999999章", "读不出"),
        ("## 第一2章", "读不出"),
    ] {
        let text = format!("# 卷\n\n## 第11章 前\n正文\n{bad}\n");
        match outline::parse(&text) {
            Err(e @ OutlineError::Heading { .. }) => {
                let OutlineError::Heading { line, why: w, .. } = &e else {
                    unreachable!()
                };
                assert_eq!(*line, 5, "{bad}");
                assert!(w.contains(why), "{bad}: {w}");
                let msg = e.to_string();
                assert!(
                    msg.contains("第 5 行") && msg.contains(outline::HEADING_SHAPES),
                    "{bad}: {msg}"
                );
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn outline_chapters_appear_once_whatever_the_heading_shape() {
    let dup = outline::parse("## 第3章 a\n\n## 第3章 b\n").unwrap_err();
    assert_eq!(
        dup,
        OutlineError::Duplicate {
            chapter: 3,
            first: 1,
            line: 3
        }
    );
    let dup = outline::parse("## 第三章 a\n\n### 第 3 章：b\n").unwrap_err();
    assert!(
        matches!(
            dup,
            OutlineError::Duplicate {
                chapter: 3,
                first: 1,
                line: 3
            }
        ),
        "{dup:?}"
    );
    // Volume titles, other sections and fenced code are not chapter headings.
    let ok = outline::parse("# 第2卷：风起章台\n\n```\n## 第四章\n```\n## 第1章\n- 故事线：main_arc\n\n## 卷末钩子\n潮水。\n").unwrap();
    assert_eq!(ok.chapters.len(), 1);
    assert_eq!(ok.block(1).unwrap().storyline(), Some("main_arc"));
    assert!(ok.overview.contains("潮水"));
}

#[test]
fn missing_outline_or_chapter_is_an_error_naming_the_chapter() {
    let mut i = inputs(31, "main_arc", None);
    i.outline = Some("## 第30章 前\n\n## 第32章 后\n".into());
    match context::assemble(Agent::ChapterWriter, &i) {
        Err(e @ ContextError::OutlineChapter { .. }) => {
            assert_eq!(e.code(), "E_OUTLINE_CHAPTER");
            let msg = e.to_string();
            assert!(
                msg.contains("没有第 31 章") && msg.contains("30、32"),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    i.outline = None;
    let e = context::assemble(Agent::ChapterWriter, &i).unwrap_err();
    assert_eq!(e.code(), "E_OUTLINE_MISSING");
    assert!(e.to_string().contains("volumes/vol-01/outline.md"));
    // Agents that do not need the block do not fail on it.
    i.chapter_text = Some(("chapters/chapter-031.md".into(), "正文".into()));
    assert!(context::assemble(Agent::StyleRefiner, &i).is_ok());
}

// ---- tokens and trimming --------------------------------------------------------------------

#[test]
fn token_estimate_is_calibrated_for_chinese() {
    assert_eq!(estimate(&"字".repeat(3000)), 4500);
    assert_eq!(estimate("，。「」"), 4);
    assert_eq!(estimate("hello world"), 3);
    assert_eq!(estimate("C-LUCHEN-001"), 6); // C 1.3 + - 0.5 + LUCHEN 1.5 + - 0.5 + 001 1.3
}

#[test]
fn trimming_follows_the_ranks_and_never_cuts_required_material() {
    let i = inputs(31, "main_arc", Some("jinghai_plan"));
    let full = context::assemble(Agent::ChapterWriter, &i)
        .unwrap()
        .tokens();
    // Cut one token's worth: the volume overview's last paragraph goes first.
    let reserve = Agent::ChapterWriter.prompt_allowance();
    let p = context::build(Agent::ChapterWriter, &i, Some(full - 1 + reserve)).unwrap();
    assert_eq!(p.cut.len(), 1);
    assert_eq!(p.cut[0].label, "卷大纲概述第 3 段");
    // Everything cuttable gone: the adjacent memory (rank 35) goes last.
    let mut all = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let err = all.trim_to(0).unwrap_err();
    assert!(err.tokens > 0);
    assert_eq!(all.cut.last().unwrap().label, "相邻线记忆：jinghai_plan");
    let text = all.render();
    for kept in [
        "主线秘闻",
        "## 第31章",
        "OBJ-031-1",
        "禁止违反 W-001",
        "上一章在本线",
        "C-LUCHEN-001",
    ] {
        assert!(text.contains(kept), "{kept} was cut");
    }
    // Over budget after trimming is an error with the figures.
    match context::build(Agent::ChapterWriter, &i, Some(reserve + 100)) {
        Err(ContextError::OverBudget { limit, tokens, .. }) => {
            assert_eq!(limit, 100);
            assert!(tokens > limit);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn state_arrays_show_only_their_latest_entries() {
    let p = context::assemble(Agent::ChapterWriter, &inputs(31, "main_arc", None)).unwrap();
    let chars = p.section("characters").unwrap().body();
    assert!(
        chars.contains("物品30") && !chars.contains("物品1、"),
        "{chars}"
    );
    assert!(chars.contains("另有 22 项较早的"), "{chars}");
    let state = p.section("current_state").unwrap().body();
    assert!(
        state.contains("事件40") && state.contains("另有 32 条较早的"),
        "{state}"
    );
}

#[test]
fn characters_named_by_the_contract_else_the_most_recently_seen() {
    let p = context::assemble(Agent::ChapterWriter, &inputs(31, "main_arc", None)).unwrap();
    let c = p.section("characters").unwrap().body();
    assert!(
        c.contains("由章节契约与本章大纲点名（1 位）")
            && c.contains("### 陆尘")
            && !c.contains("### 苏婉"),
        "{c}"
    );
    let mut i = inputs(31, "main_arc", None);
    i.contract = None;
    i.outline = Some(outline_text().replace("- POV：陆尘\n", ""));
    i.last_seen = [("su-wan".to_string(), 30), ("lu-chen".to_string(), 12)].into();
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let c = p.section("characters").unwrap().body();
    assert!(c.contains("没有点名角色"), "{c}");
    assert!(
        c.find("### 苏婉").unwrap() < c.find("### 陆尘").unwrap(),
        "{c}"
    );
}

/// Issue 40: the cast was taken from the contract's preconditions only, so a registered
/// character the plan names elsewhere — in an objective, an acceptance criterion, the outline
/// block — came without his 语癖 and L2 limits. Now every registered character the plan names
/// is in the writer's and the judge's cast; the longest registered name counts (苏婉儿, not
/// 苏婉 inside it); both packets carry the people rule and the registered names → slugs.
#[test]
fn every_registered_character_the_plan_names_is_in_the_cast() {
    let mut i = inputs(31, "main_arc", None);
    let extra: Vec<Character> = serde_json::from_value(json!([
        {"id": "zhao-qian", "display_name": "赵乾", "speech_patterns": ["开口先报价", "爱说「规矩」"],
         "contracts": [{"id": "C-ZHAOQIAN-001", "type": "behavior", "rule": "只在密室中与人交易"}]},
        {"id": "su-wan-er", "display_name": "苏婉儿", "speech_patterns": "说话带笑"},
        {"id": "qian-lao", "display_name": "钱老", "aliases": ["钱长老"], "speech_patterns": "爱咳嗽"},
        {"id": "li-si", "display_name": "李四"}
    ]))
    .unwrap();
    i.characters.extend(extra);
    i.retired = serde_json::from_value(json!([{"id": "wang-wu", "display_name": "王五"}])).unwrap();
    let mut c = contract(31, "main_arc", None);
    c.objectives[0].description = "陆尘在密室里从赵乾手上买下密信".into();
    c.acceptance_criteria.push("苏婉儿只在门外出现".into());
    i.contract = Some(c);
    i.outline = Some(outline_text().replace(
        "## 第31章 标题31\n- 故事线：main_arc\n- POV：陆尘\n",
        "## 第31章 标题31\n- 故事线：main_arc\n- POV：陆尘\n- 冲突：钱长老在拍卖行压价\n",
    ));
    for agent in [Agent::ChapterWriter, Agent::QualityJudge] {
        let i = if agent == Agent::QualityJudge {
            with_text(i.clone())
        } else {
            i.clone()
        };
        let p = context::assemble(agent, &i).unwrap();
        let body = p.section("characters").unwrap().body();
        for (who, speech) in [
            ("### 赵乾（zhao-qian）", "语癖：开口先报价；爱说「规矩」"),
            ("### 苏婉儿（su-wan-er）", "语癖：说话带笑"),
            ("### 钱老（qian-lao）", "语癖：爱咳嗽"),
        ] {
            assert!(body.contains(who), "{agent:?} misses {who}: {body}");
            assert!(body.contains(speech), "{agent:?} misses {speech}: {body}");
        }
        assert!(
            body.contains("C-ZHAOQIAN-001〔behavior〕只在密室中与人交易"),
            "{body}"
        );
        assert!(
            !body.contains("### 苏婉（") && !body.contains("### 李四"),
            "{agent:?}: {body}"
        );
        assert!(body.contains("点名（4 位）"), "{body}");
        // Who is registered, and the rule.
        for line in [
            "- 苏婉 → su-wan",
            "- 钱老 / 钱长老 → qian-lao",
            "- 李四 → li-si",
            "已退场：王五（wang-wu）",
        ] {
            assert!(body.contains(line), "{agent:?} misses {line}: {body}");
        }
        assert!(
            body.contains(context::assemble::people_rule()),
            "{agent:?}: {body}"
        );
    }
    // The same rule, word for word, for the planner and the Summarizer.
    assert!(context::assemble::people_rule().starts_with("人物规则"));
    let p = context::assemble(Agent::PlotArchitect, &i).unwrap();
    let body = p.section("characters").unwrap().body();
    assert!(body.contains(context::assemble::people_rule()), "{body}");
    let p = context::assemble(Agent::Summarizer, &with_text(i.clone())).unwrap();
    let body = p.section("entity_map").unwrap().body();
    assert!(body.contains(context::assemble::people_rule()), "{body}");
}

/// The inputs with the chapter's text (QualityJudge, Summarizer and StyleRefiner need it).
fn with_text(mut i: Inputs) -> Inputs {
    let n = i.chapter;
    i.chapter_text = Some((
        format!("staging/chapters/chapter-{n:03}.md"),
        "陆尘推门而入，屋里一灯如豆。".into(),
    ));
    i
}

#[test]
fn speech_line_merges_the_style_profile_and_the_character_file() {
    let mut i = with_text(inputs(31, "main_arc", None));
    i.characters[0]
        .extra
        .insert("speech_patterns".into(), json!("话少，口头禅「试试。」"));
    // Only the character file: its field becomes the 语癖 line, not a detail.
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let c = p.section("characters").unwrap().body();
    assert!(c.contains("语癖：话少，口头禅「试试。」"), "{c}");
    assert!(
        !c.contains("speech_patterns"),
        "not repeated in the details: {c}"
    );
    // Both: the profile's first, then the file's.
    i.style_profile = Some(
        serde_json::from_value(json!({"character_speech_patterns": {"陆尘": "爱用反问"}})).unwrap(),
    );
    let p = context::assemble(Agent::QualityJudge, &i).unwrap();
    let c = p.section("characters").unwrap().body();
    assert!(c.contains("语癖：爱用反问；话少，口头禅「试试。」"), "{c}");
    // The same words in both places are said once; a list in the file is joined.
    i.characters[0]
        .extra
        .insert("speech_patterns".into(), json!(["爱用反问"]));
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let c = p.section("characters").unwrap().body();
    assert!(
        c.contains("语癖：爱用反问\n") || c.ends_with("语癖：爱用反问"),
        "{c}"
    );
}

#[test]
fn quality_judge_gets_the_foreshadowing_section_with_threads_not_yet_due() {
    let mut i = with_text(inputs(31, "main_arc", None));
    i.foreshadowing = Some(
        serde_json::from_value(json!({"foreshadowing": [
            {"id": "jade_pendant", "description": "玉佩的来历", "scope": "medium", "status": "planted",
             "planted_chapter": 3, "planted_storyline": "main_arc", "target_resolve_range": [40, 45]},
            {"id": "sword_sheath", "description": "剑鞘里的密信", "scope": "short", "status": "advanced",
             "planted_chapter": 20, "planted_storyline": "main_arc", "target_resolve_range": [30, 33]},
            {"id": "sea_envoy", "description": "佑国使者", "scope": "medium", "status": "planted",
             "planted_chapter": 8, "planted_storyline": "jinghai_plan", "target_resolve_range": [36, 40]}
        ]}))
        .unwrap(),
    );
    let tags = |agent| {
        context::assemble(agent, &i)
            .unwrap()
            .sections
            .iter()
            .map(|s| s.tag)
            .collect::<Vec<_>>()
    };
    assert!(tags(Agent::QualityJudge).contains(&"foreshadowing"));
    for agent in [Agent::QualityJudge, Agent::ChapterWriter] {
        let p = context::assemble(agent, &i).unwrap();
        let f = p.section("foreshadowing").unwrap().body();
        assert!(
            f.contains("sword_sheath（advanced，计划第 30–33 章回收）"),
            "{f}"
        );
        assert!(
            f.contains("【未到回收区间（本章不应回收）】\n- jade_pendant（计划第 40–45 章回收）"),
            "{agent:?}: {f}"
        );
        // Another line's thread is not this chapter's business.
        assert!(!f.contains("sea_envoy"), "{f}");
    }
}

#[test]
fn key_chapter_reasons_are_data_in_the_packet() {
    let judge = |n| context::assemble(Agent::QualityJudge, &with_text(inputs(n, "main_arc", None)));
    let p = judge(26).unwrap();
    assert_eq!(p.to_json()["key_chapter"], json!(["convergence"]));
    assert!(
        p.section("task")
            .unwrap()
            .body()
            .contains("本章是关键章（交汇章）")
    );
    let p = judge(31).unwrap();
    assert_eq!(p.to_json()["key_chapter"], json!([]));
    let mut i = inputs(50, "main_arc", None);
    i.outline = Some(outline_text());
    // The volume's span as the store finds it (the schedule's range here).
    i.volume_range = Some([1, 50]);
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    assert_eq!(p.to_json()["key_chapter"], json!(["volume_last"]));
    // Agents that do not load the schedule say nothing.
    let p = context::assemble(Agent::PlotArchitect, &i).unwrap();
    assert_eq!(p.to_json()["key_chapter"], json!([]));
}

// ---- gate rounds: revision, rewrite, polish -------------------------------------------------

fn evaluation(score: f64, fix: &str, issue: &str, violation: Option<&str>) -> Evaluation {
    let d = |w: f64| json!({"score": score, "weight": w, "reason": "句子偏长，四字词堆叠", "evidence": "「月色如水」"});
    let mut e = json!({"chapter": 26, "overall": score, "recommendation": "revise",
        "scores": {"plot_logic": d(0.18), "character": d(0.18), "immersion": d(0.15),
            "foreshadowing": d(0.10), "pacing": d(0.08), "style_naturalness": d(0.15),
            "emotional_impact": d(0.08), "storyline_coherence": d(0.08)},
        "required_fixes": [{"target": "第 3 段", "instruction": fix}],
        "issues": [issue, "结尾仓促"]});
    if let Some(id) = violation {
        e["violations"] = json!([{"rule_id": id, "layer": "L1", "confidence": "high", "description": "金丹期法术越级"}]);
    }
    serde_json::from_value(e).unwrap()
}

/// Chapter 26 (a convergence chapter: two judges) in flight at `stage`, after `revisions`
/// rounds, with the gate's verdict of round `gate_round`.
fn in_flight(stage: &str, revisions: u32, decision: &str, gate_round: u32) -> Inputs {
    let mut i = inputs(26, "main_arc", None);
    i.checkpoint = Some(
        serde_json::from_value(json!({
            "last_completed_chapter": 25, "current_volume": 1, "orchestrator_state": "CHAPTER_REWRITE",
            "inflight_chapter": 26, "pipeline_stage": stage, "revision_count": revisions,
            "gate": {"chapter": 26, "decision": decision, "overall": 2.6, "revision": gate_round}
        }))
        .unwrap(),
    );
    let dir = format!("logs/revisions/chapter-026/r{revisions}");
    i.evaluations = vec![
        (
            format!("{dir}/chapter-026-eval.json"),
            evaluation(3.0, "寒山的台词改回反问", "节奏拖沓", None),
        ),
        (
            format!("{dir}/chapter-026-eval-secondary.json"),
            evaluation(2.6, "补上陆尘受伤的因果", "节奏拖沓", Some("W-001")),
        ),
    ];
    i.chapter_text = Some((
        "staging/chapters/chapter-026.md".into(),
        "陆尘推门而入。".into(),
    ));
    i
}

#[test]
fn revision_carries_both_judges_and_the_score_the_gate_used() {
    let i = in_flight("revising", 1, "pause", 0);
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let r = p.section("revision").unwrap().body();
    assert!(r.starts_with("门控结论「暂停，等作者决定 pause」，总分 2.6（关键章双裁判：主裁判 3.0、第二裁判 2.6，取较低分）。"), "{r}");
    assert!(
        r.contains("- 〔第 3 段〕寒山的台词改回反问（主裁判）"),
        "{r}"
    );
    assert!(
        r.contains("- 〔第 3 段〕补上陆尘受伤的因果（第二裁判）"),
        "{r}"
    );
    assert!(
        r.contains("- 违反 W-001（high）：金丹期法术越级（第二裁判）"),
        "{r}"
    );
    // An issue both judges raise is listed once, naming both.
    assert_eq!(r.matches("节奏拖沓").count(), 1, "{r}");
    assert!(r.contains("- 问题：节奏拖沓（主裁判、第二裁判）"), "{r}");
    assert_eq!(
        p.sections.iter().map(|s| s.tag).take(4).collect::<Vec<_>>(),
        ["storyline", "task", "revision", "chapter_text"]
    );
}

#[test]
fn rewrite_says_why_and_where_the_old_draft_is_without_its_text() {
    let mut i = in_flight("drafting", 1, "rewrite", 0);
    i.chapter_text = None;
    i.archived_draft = Some("logs/revisions/chapter-026/r1/chapter-026.md".into());
    let p = context::assemble(Agent::ChapterWriter, &i).unwrap();
    let tags: Vec<&str> = p.sections.iter().map(|s| s.tag).collect();
    assert_eq!(
        tags[..4],
        ["storyline", "task", "rewrite", "chapter_outline"]
    );
    assert!(!tags.contains(&"revision") && !tags.contains(&"chapter_text"));
    let r = p.section("rewrite").unwrap().body();
    assert!(
        r.starts_with(
            "这是重写：上一稿被门控退回（本章第 1 次退回）。门控结论「强制重写 rewrite」，总分 2.6"
        ),
        "{r}"
    );
    assert!(
        r.contains("旧稿已存档：logs/revisions/chapter-026/r1/chapter-026.md"),
        "{r}"
    );
    assert!(r.contains("补上陆尘受伤的因果（第二裁判）"), "{r}");
    assert!(r.contains("违反 W-001"), "{r}");
    assert!(p.section("task").unwrap().body().contains("这是重写"));
    // A first draft has neither.
    let first = context::assemble(Agent::ChapterWriter, &inputs(26, "main_arc", None)).unwrap();
    assert!(first.section("rewrite").is_none() && first.section("revision").is_none());
}

#[test]
fn polish_hands_the_refiner_the_judges_notes() {
    let mut i = in_flight("judged", 0, "polish", 0);
    for (p, _) in &mut i.evaluations {
        *p = p.replace("logs/revisions/chapter-026/r0", "staging/evaluations");
    }
    let p = context::assemble(Agent::StyleRefiner, &i).unwrap();
    let tags: Vec<&str> = p.sections.iter().map(|s| s.tag).collect();
    assert_eq!(tags, ["task", "polish", "chapter_text", "style"]);
    let t = p.section("polish").unwrap().body();
    assert!(t.contains("门控结论「二次润色后通过 polish」"), "{t}");
    assert!(
        t.contains(
            "文风（style_naturalness）2.6 分（第二裁判）：句子偏长，四字词堆叠｜原文：「月色如水」"
        ),
        "{t}"
    );
    assert!(t.contains("- 问题：结尾仓促（主裁判、第二裁判）"), "{t}");
    assert!(
        t.contains("- 〔第 3 段〕寒山的台词改回反问（主裁判）"),
        "{t}"
    );
    assert!(
        !t.contains("W-001"),
        "violations are not the refiner's: {t}"
    );
    assert!(
        p.section("task")
            .unwrap()
            .body()
            .starts_with("二次润色第 26 章")
    );
    // After the polish pass a re-run still gets them; a first refinement does not.
    let again = in_flight("polished", 0, "polish", 0);
    assert!(
        context::assemble(Agent::StyleRefiner, &again)
            .unwrap()
            .section("polish")
            .is_some()
    );
    let first = in_flight("drafted", 0, "polish", 0);
    assert!(
        context::assemble(Agent::StyleRefiner, &first)
            .unwrap()
            .section("polish")
            .is_none()
    );
}

// ---- next step ----------------------------------------------------------------------------

fn staging(text: bool, summary: bool) -> StagingFacts {
    let f = |b| if b { FileFact::Ok } else { FileFact::Missing };
    StagingFacts {
        chapter_text: f(text),
        summary: f(summary),
        delta: f(summary),
        storyline_id: summary.then(|| "main_arc".to_string()),
        memory: f(summary),
        evaluation: f(summary),
        text_digest: text.then(|| "0123456789abcdef".to_string()),
        delta_skipped: false,
        repair: None,
    }
}

fn held() -> LockFact {
    LockFact::HeldByThisSession {
        chapter: Some(48),
        token: "9f3e1c7a".into(),
    }
}

#[test]
fn next_step_follows_the_orchestrator_and_the_pipeline() {
    let quiet = DiskFacts::quiet();
    let mut cp = checkpoint(47);
    let r = next::recommend(&cp, &quiet);
    assert_eq!(
        (r.action, r.chapter),
        (NextAction::WriteNextChapter, Some(48))
    );
    assert_eq!(r.command, "/novel:continue");

    for (state, action) in [
        (OrchestratorState::Init, NextAction::Start),
        (OrchestratorState::QuickStart, NextAction::Start),
        (OrchestratorState::VolPlanning, NextAction::PlanVolume),
        (OrchestratorState::VolReview, NextAction::ReviewVolume),
    ] {
        cp.orchestrator_state = state;
        let r = next::recommend(&cp, &quiet);
        assert_eq!(r.action, action, "{state:?}");
        assert_eq!(r.command, "/novel:start");
    }
    cp.orchestrator_state = OrchestratorState::Writing;
    let end = DiskFacts {
        volume_end: Some(47),
        ..DiskFacts::quiet()
    };
    assert_eq!(next::recommend(&cp, &end).action, NextAction::ReviewVolume);

    // In flight, by stage (PRD §9.2).
    cp.inflight_chapter = Some(48);
    for (stage, facts, action, command) in [
        (
            PipelineStage::Drafting,
            staging(false, false),
            NextAction::RunChapterWriter,
            "novel context chapter-writer --chapter 48",
        ),
        (
            PipelineStage::Drafting,
            staging(true, false),
            NextAction::RunSummarizer,
            "novel context summarizer --chapter 48",
        ),
        (
            PipelineStage::Drafting,
            staging(true, true),
            NextAction::MarkDrafted,
            "novel chapter stage drafted",
        ),
        (
            PipelineStage::Drafted,
            staging(true, true),
            NextAction::RunStyleRefiner,
            "novel context style-refiner --chapter 48",
        ),
        // The stage is ahead of the files (the draft was lost): recover rewinds it first.
        (
            PipelineStage::Refined,
            staging(false, true),
            NextAction::Recover,
            "novel chapter recover",
        ),
        (
            PipelineStage::Refined,
            staging(true, true),
            NextAction::RunQualityJudge,
            "novel context quality-judge --chapter 48",
        ),
        (
            PipelineStage::Judged,
            staging(true, true),
            NextAction::RunGate,
            "novel chapter gate 48",
        ),
        (
            PipelineStage::Revising,
            staging(false, false),
            NextAction::ReviseChapter,
            "novel context chapter-writer --chapter 48",
        ),
    ] {
        cp.pipeline_stage = Some(stage);
        let d = DiskFacts {
            staging: Some(facts),
            lock: held(),
            ..DiskFacts::quiet()
        };
        let r = next::recommend(&cp, &d);
        assert_eq!((r.action, r.chapter), (action, Some(48)), "{stage:?}");
        assert_eq!(r.command, command, "{stage:?}");
        // The session's own lock is named, its token is not (no command needs it).
        assert!(r.notes.iter().any(|n| n.contains("项目锁由本会话持有")));
        assert!(
            !r.notes.iter().any(|n| n.contains("9f3e1c7a")),
            "{:?}",
            r.notes
        );
    }
    // In flight but nobody holds the lock: re-take it first.
    cp.pipeline_stage = Some(PipelineStage::Drafted);
    let d = DiskFacts {
        staging: Some(staging(true, true)),
        ..DiskFacts::quiet()
    };
    let r = next::recommend(&cp, &d);
    assert_eq!(r.action, NextAction::RetakeLock);
    assert_eq!(r.command, "novel chapter begin 48");
    assert!(r.then.contains("style-refiner"), "{}", r.then);
}

#[test]
fn blocking_facts_come_first() {
    let mut cp = checkpoint(47);
    cp.inflight_chapter = Some(48);
    cp.pipeline_stage = Some(PipelineStage::Drafted);
    cp.pending_actions.push(
        serde_json::from_value::<PendingAction>(json!({"id": "sp-1", "type": "spec_propagation"}))
            .unwrap(),
    );
    let mut d = DiskFacts {
        staging: Some(staging(true, true)),
        lock: held(),
        overdue_foreshadowing: 2,
        style_drift_active: true,
        ..DiskFacts::quiet()
    };
    let r = next::recommend(&cp, &d);
    assert_eq!(r.action, NextAction::ReviewSpecPropagation);
    assert!(r.notes.iter().any(|n| n.contains("2 条短线伏笔")));
    assert!(r.notes.iter().any(|n| n.contains("风格漂移")));
    d.lock = LockFact::HeldByOther {
        chapter: Some(48),
        holder: "进程 9".into(),
    };
    assert_eq!(next::recommend(&cp, &d).action, NextAction::WaitForLock);
    d.lock = LockFact::Stale {
        why: "已 40 分钟没有心跳".into(),
    };
    let r = next::recommend(&cp, &d);
    assert_eq!(
        (r.action, r.command.as_str()),
        (NextAction::Recover, "novel chapter recover")
    );
    d.commit_journal = Some(48);
    d.lock = held();
    assert_eq!(next::recommend(&cp, &d).action, NextAction::Recover);
}

#[test]
fn overdue_means_short_unresolved_and_past_its_range() {
    use novel_core::model::common::{ForeshadowScope as S, ForeshadowStatus as F};
    assert!(next::is_overdue(S::Short, F::Planted, Some([10, 20]), 21));
    assert!(!next::is_overdue(S::Short, F::Planted, Some([10, 20]), 20));
    assert!(!next::is_overdue(S::Short, F::Resolved, Some([10, 20]), 30));
    assert!(!next::is_overdue(S::Long, F::Planted, Some([10, 20]), 30));
    assert!(!next::is_overdue(S::Short, F::Advanced, None, 30));
}

// ---- hook text ------------------------------------------------------------------------------

#[test]
fn hook_text_warns_about_a_chapter_in_flight_and_stays_under_the_cap() {
    let mut cp = checkpoint(47);
    cp.inflight_chapter = Some(48);
    cp.pipeline_stage = Some(PipelineStage::Drafting);
    let disk = DiskFacts {
        staging: Some(staging(true, false)),
        lock: held(),
        ..DiskFacts::quiet()
    };
    let facts = SessionFacts {
        title: Some("青云志异".into()),
        checkpoint: Some(cp.clone()),
        checkpoint_problem: None,
        disk: disk.clone(),
        next_outline: Some("第48章 密信（故事线 main_arc）".into()),
        outline_problem: None,
        summaries: (45..=47)
            .rev()
            .map(|n| (n, format!("第{n}章：{}", "陆尘拔剑。".repeat(2_000))))
            .collect(),
        problems: vec![],
        source: Some("compact".into()),
    };
    let rec = next::recommend(&cp, &disk);
    let text = session::render(&facts, Some(&rec));
    let n = text.chars().count();
    const { assert!(HOOK_MAX_CHARS < 10_000) };
    assert!(n <= HOOK_MAX_CHARS, "{n}");
    assert!(
        text.contains("⚠ 第 48 章写到一半，处于阶段 drafting（初稿生成中）"),
        "{text}"
    );
    assert!(text.contains("从摘要员继续"), "{text}");
    assert!(text.contains("项目锁由本会话持有"), "{text}");
    assert!(!text.contains("9f3e1c7a"), "{text}");
    assert!(
        text.contains("第 47 章：") && text.contains("第 45 章："),
        "{text}"
    );
    assert!(text.contains("…"));
    // Not commands to the model: facts, and what the flow says comes next.
    assert!(text.contains("按流程，下一步是："));
}

#[test]
fn hook_text_is_capped_whatever_the_inputs() {
    let cp = checkpoint(1);
    let facts = SessionFacts {
        title: Some("长".repeat(20_000)),
        checkpoint: Some(cp.clone()),
        checkpoint_problem: None,
        disk: DiskFacts::quiet(),
        next_outline: Some("章".repeat(20_000)),
        outline_problem: Some("坏".repeat(20_000)),
        summaries: vec![(1, "摘".repeat(50_000))],
        problems: (0..200).map(|i| format!("文件{i}")).collect(),
        source: None,
    };
    let text = session::render(&facts, Some(&next::recommend(&cp, &DiskFacts::quiet())));
    assert!(text.chars().count() <= HOOK_MAX_CHARS);
    assert!(session::failure_line("x").lines().count() == 1);
}
