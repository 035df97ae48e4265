//! The state engine's rules, one Chinese case per rule (`002` §10.6, upstream lessons).

use novel_core::model::common::{ForeshadowScope, ForeshadowStatus};
use novel_core::model::foreshadowing::PlannedForeshadowing;
use novel_core::model::state::ChangeSource;
use novel_core::model::{ChangelogEntry, ForeshadowingGlobal};
use novel_core::ops::{self, Context, NameIndex, OpsError};
use serde_json::{Value, json};

fn state() -> Value {
    json!({
        "schema_version": 1, "state_version": 47, "last_updated_chapter": 47,
        "characters": {"lu-chen": {"location": "魔都", "emotional_state": "决意",
            "relationships": {"mentor": 50}, "inventory": ["破碎魔杖", "密信"], "title": "外门弟子"}},
        "world_state": {"time_marker": "第三年冬"},
        "active_foreshadowing": ["ancient_prophecy"]
    })
}

fn global() -> ForeshadowingGlobal {
    serde_json::from_value(json!({"foreshadowing": [
        {"id": "ancient_prophecy", "description": "上古预言", "scope": "long", "status": "resolved",
         "planted_chapter": 3, "last_updated_chapter": 40,
         "history": [{"chapter": 3, "action": "planted"}, {"chapter": 40, "action": "resolved"}]}
    ]}))
    .unwrap()
}

fn names() -> NameIndex {
    let mut n = NameIndex::default();
    n.insert("陆尘", "lu-chen");
    n.insert("小陆", "lu-chen");
    n
}

fn plan() -> Vec<PlannedForeshadowing> {
    serde_json::from_value(
        json!([{"id": "jade_pendant", "description": "玉佩的来历", "scope": "short",
        "target_resolve_range": [50, 55], "storyline_id": "main_arc"}]),
    )
    .unwrap()
}

fn run(ops: Value) -> ops::DeltaRun {
    let names = names();
    let plan = plan();
    let delta =
        json!({"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc", "ops": ops});
    ops::run_delta(
        &state(),
        &global(),
        &delta,
        Context {
            names: &names,
            plan: &plan,
        },
    )
    .unwrap()
}

/// A single op that must be rejected with `code`, leaving the state untouched.
fn rejected(op: Value, code: &str) -> ops::Rejection {
    let r = run(json!([op]));
    assert!(r.accepted.is_empty(), "{op} was accepted: {:?}", r.accepted);
    assert_eq!(r.rejected.len(), 1);
    assert_eq!(r.rejected[0].code, code, "{op}: {:?}", r.rejected[0]);
    assert_eq!(r.state, state(), "a rejected op changed the state");
    assert!(!r.rejected[0].hint.is_empty());
    r.rejected[0].clone()
}

#[test]
fn chinese_display_name_in_path_names_the_slug() {
    let r = rejected(
        json!({"op": "set", "path": "characters.陆尘.location", "value": "幽暗森林"}),
        "E_OP_SEGMENT",
    );
    assert!(r.hint.contains("lu-chen"), "{r:?}");
    let r = rejected(
        json!({"op": "set", "path": "characters.小陆.location", "value": "x"}),
        "E_OP_SEGMENT",
    );
    assert!(r.hint.contains("lu-chen"), "alias resolves too: {r:?}");
    let r = rejected(
        json!({"op": "set", "path": "characters.林枫.location", "value": "x"}),
        "E_OP_SEGMENT",
    );
    assert!(
        r.hint.contains("显示名"),
        "unknown name still explained: {r:?}"
    );
}

#[test]
fn proto_segment_and_bad_depths_are_rejected() {
    rejected(
        json!({"op": "set", "path": "characters.__proto__.polluted", "value": 1}),
        "E_OP_SEGMENT",
    );
    rejected(
        json!({"op": "set", "path": "characters.lu-chen.a.b.c", "value": 1}),
        "E_OP_PATH_DEPTH",
    );
    rejected(
        json!({"op": "set", "path": "characters", "value": {}}),
        "E_OP_PATH_DEPTH",
    );
    rejected(
        json!({"op": "set", "path": "plot.lu-chen.x", "value": 1}),
        "E_OP_ROOT",
    );
    rejected(
        json!({"op": "set", "path": "characters..x", "value": 1}),
        "E_OP_SEGMENT",
    );
    rejected(json!({"op": "set", "path": 42, "value": 1}), "E_OP_PATH");
    rejected(
        json!({"op": "set", "path": "characters.lu-chen.location"}),
        "E_OP_VALUE",
    );
    rejected(
        json!({"op": "delete", "path": "characters.lu-chen.location"}),
        "E_OP_KIND",
    );
    rejected(json!("set characters.lu-chen.location 魔都"), "E_OP_SHAPE");
}

#[test]
fn inc_needs_numbers() {
    rejected(
        json!({"op": "inc", "path": "characters.lu-chen.relationships.mentor", "value": "十"}),
        "E_OP_INC_VALUE",
    );
    rejected(
        json!({"op": "inc", "path": "characters.lu-chen.title", "value": 1}),
        "E_OP_TYPE_CONFLICT",
    );
    let r = run(json!([
        {"op": "inc", "path": "characters.lu-chen.relationships.mentor", "value": 10},
        {"op": "inc", "path": "characters.lu-chen.relationships.rival", "value": -30},
        {"op": "inc", "path": "characters.lu-chen.relationships.mentor", "value": 0.5}
    ]));
    assert!(r.rejected.is_empty());
    assert_eq!(
        r.state["characters"]["lu-chen"]["relationships"]["rival"],
        json!(-30),
        "missing counts as 0"
    );
    assert_eq!(
        r.state["characters"]["lu-chen"]["relationships"]["mentor"],
        json!(60.5)
    );
}

#[test]
fn add_and_remove_work_on_arrays_only() {
    rejected(
        json!({"op": "add", "path": "characters.lu-chen.location", "value": "x"}),
        "E_OP_NOT_ARRAY",
    );
    rejected(
        json!({"op": "remove", "path": "characters.lu-chen.title", "value": "外门弟子"}),
        "E_OP_NOT_ARRAY",
    );
    let r = run(json!([
        {"op": "add", "path": "characters.su-wan.inventory", "value": "玉佩"},
        {"op": "remove", "path": "characters.lu-chen.inventory", "value": "破碎魔杖"},
        {"op": "remove", "path": "characters.lu-chen.inventory", "value": "不存在的东西"},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": "密信"},
        {"op": "remove", "path": "characters.lu-chen.inventory", "value": "密信"}
    ]));
    assert!(r.rejected.is_empty(), "{:?}", r.rejected);
    assert_eq!(
        r.state["characters"]["su-wan"]["inventory"],
        json!(["玉佩"]),
        "add creates the array and the object"
    );
    // First equal element removed, the second 密信 stays.
    assert_eq!(
        r.state["characters"]["lu-chen"]["inventory"],
        json!(["密信"])
    );
    assert!(
        r.accepted[2].note.as_deref().unwrap().contains("没有"),
        "absent value reported"
    );
}

#[test]
fn set_through_a_non_object_is_a_conflict_and_creates_intermediates() {
    rejected(
        json!({"op": "set", "path": "characters.lu-chen.location.city", "value": "x"}),
        "E_OP_TYPE_CONFLICT",
    );
    let r = run(json!([{"op": "set", "path": "factions.taixu-ge.leader", "value": "清虚子"}]));
    assert_eq!(r.state["factions"]["taixu-ge"]["leader"], "清虚子");
}

#[test]
fn foreshadow_rules() {
    rejected(
        json!({"op": "foreshadow", "path": "threads.ancient_prophecy", "value": "advanced"}),
        "E_FORESHADOW_ID",
    );
    rejected(
        json!({"op": "foreshadow", "path": "上古预言", "value": "advanced"}),
        "E_FORESHADOW_ID",
    );
    rejected(
        json!({"op": "foreshadow", "path": "ancient_prophecy", "value": "forgotten"}),
        "E_FORESHADOW_VALUE",
    );
    // Downgrade attempt: resolved → planted stays resolved, and it is said; it is a no-op, so
    // no `planted` event lands after `resolved` in the history.
    let r = run(
        json!([{"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "又提起预言"}]),
    );
    let f = &r.global.foreshadowing[0];
    assert_eq!(f.status, ForeshadowStatus::Resolved);
    assert!(r.accepted[0].note.as_deref().unwrap().contains("不回退"));
    assert_eq!(f, &global().foreshadowing[0], "a downgrade changes nothing");
    // Unknown id: created, seeded from the volume plan; duplicates in history collapse.
    let r = run(json!([
        {"op": "foreshadow", "path": "jade_pendant", "value": "planted", "detail": "玉佩初现"},
        {"op": "foreshadow", "path": "jade_pendant", "value": "planted", "detail": "重复"},
        {"op": "foreshadow", "path": "black_cat", "value": "advanced"}
    ]));
    let jade = r
        .global
        .foreshadowing
        .iter()
        .find(|f| f.id == "jade_pendant")
        .unwrap();
    assert_eq!(jade.description, "玉佩的来历");
    assert_eq!(jade.scope, ForeshadowScope::Short);
    assert_eq!(jade.target_resolve_range, Some([50, 55]));
    assert_eq!(jade.history.len(), 1, "(chapter, action) de-duplicated");
    assert_eq!(jade.planted_chapter, Some(48));
    let cat = r
        .global
        .foreshadowing
        .iter()
        .find(|f| f.id == "black_cat")
        .unwrap();
    assert_eq!(cat.status, ForeshadowStatus::Advanced);
    assert_eq!(
        r.state["active_foreshadowing"],
        json!(["ancient_prophecy", "jade_pendant", "black_cat"])
    );
}

#[test]
fn apply_checks_the_version_and_strict_mode() {
    let names = names();
    let plan = plan();
    let ctx = Context {
        names: &names,
        plan: &plan,
    };
    let delta = |base: u64| {
        json!({"chapter": 48, "base_state_version": base, "storyline_id": "main_arc", "ops": [
            {"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"},
            {"op": "set", "path": "characters.陆尘.location", "value": "幽暗森林"}
        ]})
    };
    let err = ops::apply_delta(&state(), &global(), &delta(46), ctx, false, "t").unwrap_err();
    assert_eq!(
        err,
        OpsError::StateVersion {
            base: 46,
            current: 47
        }
    );
    assert_eq!(err.code(), "E_STATE_VERSION");
    let err = ops::apply_delta(&state(), &global(), &delta(47), ctx, true, "t").unwrap_err();
    assert_eq!(err.code(), "E_STRICT");
    let applied = ops::apply_delta(
        &state(),
        &global(),
        &delta(47),
        ctx,
        false,
        "2026-11-22T00:00:00Z",
    )
    .unwrap();
    assert_eq!(applied.run.state["state_version"], 48);
    assert_eq!(applied.run.state["last_updated_chapter"], 48);
    let e = &applied.entry;
    assert_eq!(
        (e.base_state_version, e.state_version, e.chapter),
        (47, 48, 48)
    );
    assert_eq!(e.source, ChangeSource::Chapter);
    assert_eq!(e.applied.len(), 1);
    assert_eq!(e.rejected.len(), 1);
    assert_eq!(e.rejected[0].code, "E_OP_SEGMENT");
}

#[test]
fn malformed_envelope_is_one_error() {
    let names = names();
    let ctx = Context {
        names: &names,
        plan: &[],
    };
    for (delta, pointer) in [
        (json!([]), ""),
        (
            json!({"base_state_version": 1, "storyline_id": "main_arc", "ops": []}),
            "/chapter",
        ),
        (
            json!({"chapter": "四十八", "base_state_version": 1, "storyline_id": "main_arc", "ops": []}),
            "/chapter",
        ),
        (
            json!({"chapter": 48, "base_state_version": 1, "storyline_id": "主线", "ops": []}),
            "/storyline_id",
        ),
        (
            json!({"chapter": 48, "base_state_version": 1, "storyline_id": "main_arc", "ops": {}}),
            "/ops",
        ),
    ] {
        match ops::run_delta(&state(), &global(), &delta, ctx) {
            Err(OpsError::Delta { pointer: p, .. }) => assert_eq!(p, pointer, "{delta}"),
            other => panic!("{delta}: {other:?}"),
        }
    }
}

#[test]
fn skipped_chapters_are_counted_until_reapplied() {
    let e = |chapter, source| {
        let mut x = ops::skipped_entry(chapter, 1, "两次解析失败", "t");
        x.source = source;
        x
    };
    let log = vec![
        e(3, ChangeSource::Skipped),
        e(5, ChangeSource::Skipped),
        e(5, ChangeSource::Skipped),
        e(8, ChangeSource::Skipped),
    ];
    assert_eq!(ops::skipped_chapters(&log), vec![3, 5, 8]);
    let mut fixed = log.clone();
    fixed.push(e(5, ChangeSource::Chapter));
    assert_eq!(ops::skipped_chapters(&fixed), vec![3, 8]);
}

fn ctx<'a>(names: &'a NameIndex, plan: &'a [PlannedForeshadowing]) -> Context<'a> {
    Context { names, plan }
}

#[test]
fn inc_overflow_is_rejected_not_written_as_null() {
    let r = run(json!([
        {"op": "inc", "path": "characters.lu-chen.hp", "value": 1e308},
        {"op": "inc", "path": "characters.lu-chen.hp", "value": 1e308},
        {"op": "inc", "path": "characters.lu-chen.hp", "value": -1e308}
    ]));
    assert_eq!(r.rejected.len(), 1, "{:?}", r.rejected);
    assert_eq!(r.rejected[0].index, 1);
    assert_eq!(r.rejected[0].code, "E_OP_INC_VALUE");
    assert!(r.rejected[0].reason.contains("溢出"), "{:?}", r.rejected[0]);
    assert_eq!(r.state["characters"]["lu-chen"]["hp"], json!(0.0));
}

#[test]
fn integer_inc_past_the_integer_range_is_rejected_not_stored_as_a_float() {
    let r = run(json!([
        {"op": "set", "path": "characters.lu-chen.spirit_stones", "value": u64::MAX},
        {"op": "inc", "path": "characters.lu-chen.spirit_stones", "value": 1},
        {"op": "set", "path": "characters.lu-chen.debt", "value": i64::MIN},
        {"op": "inc", "path": "characters.lu-chen.debt", "value": -1},
        {"op": "set", "path": "characters.lu-chen.merit", "value": 9_007_199_254_740_993u64},
        {"op": "inc", "path": "characters.lu-chen.merit", "value": 2}
    ]));
    let codes: Vec<(usize, &str)> = r.rejected.iter().map(|x| (x.index, x.code)).collect();
    assert_eq!(codes, [(1, "E_OP_INC_VALUE"), (3, "E_OP_INC_VALUE")]);
    let lu = &r.state["characters"]["lu-chen"];
    assert_eq!(lu["spirit_stones"], json!(u64::MAX), "unchanged");
    assert_eq!(lu["debt"], json!(i64::MIN), "unchanged");
    // Exact, not rounded through a float (2^53 + 3 is not representable as f64).
    assert_eq!(lu["merit"], json!(9_007_199_254_740_995u64));
    assert!(lu["merit"].is_u64());
}

#[test]
fn noop_ops_are_named_in_the_changelog_line() {
    let names = names();
    let plan = plan();
    let delta = json!({"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc", "ops": [
        {"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"},
        {"op": "remove", "path": "characters.lu-chen.inventory", "value": "不存在的东西"},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "又提起预言"}
    ]});
    let applied =
        ops::apply_delta(&state(), &global(), &delta, ctx(&names, &plan), false, "t").unwrap();
    let note = applied.entry.note.as_deref().expect("no-ops are named");
    assert!(note.starts_with(ops::NOOP_NOTE), "{note}");
    assert!(
        note.contains("#1") && note.contains("不存在的东西"),
        "{note}"
    );
    assert!(
        note.contains("#2") && note.contains("ancient_prophecy"),
        "{note}"
    );
    assert!(!note.contains("#0"), "{note}");
    assert_eq!(applied.entry.applied.len(), 3, "no-ops are still on record");
    // The note survives the changelog's own schema, and a replay repeats the same no-ops.
    let line = serde_json::to_value(&applied.entry).unwrap();
    assert!(
        novel_core::validate::check_document(
            "state/changelog.jsonl",
            novel_core::FileKind::ChangelogEntry,
            &line
        )
        .is_empty()
    );
    let history = &applied.run.global.foreshadowing[0].history;
    assert_eq!(history.len(), 2, "no planted event after resolved");
    // A delta where everything changed something has no note.
    let delta = json!({"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc",
        "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"}]});
    let applied =
        ops::apply_delta(&state(), &global(), &delta, ctx(&names, &plan), false, "t").unwrap();
    assert_eq!(applied.entry.note, None);
}

#[test]
fn a_delta_before_the_last_updated_chapter_is_refused() {
    let names = names();
    let plan = plan();
    let delta = |chapter: u32| {
        json!({"chapter": chapter, "base_state_version": 47, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"}]})
    };
    let err = ops::apply_delta(
        &state(),
        &global(),
        &delta(46),
        ctx(&names, &plan),
        false,
        "t",
    )
    .unwrap_err();
    assert_eq!(
        err,
        OpsError::ChapterOrder {
            chapter: 46,
            last: 47
        }
    );
    assert_eq!(err.code(), "E_CHAPTER_ORDER");
    assert!(err.hint().contains("--until-chapter 45"), "{}", err.hint());
    // A correction at the current chapter (or later) is fine.
    for chapter in [47, 48] {
        let applied = ops::apply_delta(
            &state(),
            &global(),
            &delta(chapter),
            ctx(&names, &plan),
            false,
            "t",
        )
        .unwrap();
        assert_eq!(applied.run.state["last_updated_chapter"], chapter);
    }
}

#[test]
fn foreshadowing_cannot_start_in_chapter_zero() {
    let names = names();
    let plan = plan();
    let start = json!({"schema_version": 1, "state_version": 0, "last_updated_chapter": 0,
        "characters": {}, "world_state": {}, "active_foreshadowing": []});
    let delta = json!({"chapter": 0, "base_state_version": 0, "storyline_id": "main_arc", "ops": [
        {"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"},
        {"op": "foreshadow", "path": "jade_pendant", "value": "planted"}
    ]});
    let empty = ForeshadowingGlobal {
        foreshadowing: vec![],
        extra: Default::default(),
    };
    let applied = ops::apply_delta(&start, &empty, &delta, ctx(&names, &plan), false, "t").unwrap();
    assert_eq!(applied.run.rejected.len(), 1);
    assert_eq!(applied.run.rejected[0].code, "E_FORESHADOW_CHAPTER");
    assert!(
        applied.run.global.foreshadowing.is_empty(),
        "no history event at chapter 0"
    );
    assert_eq!(applied.run.state["state_version"], 1);
}

#[test]
fn storyline_must_be_a_known_one() {
    let known = vec!["main_arc".to_string(), "side_sect".to_string()];
    assert_eq!(ops::check_storyline("main_arc", &known), Ok(()));
    let err = ops::check_storyline("side_arc", &known).unwrap_err();
    assert_eq!(err.code(), "E_DELTA");
    assert!(err.to_string().contains("/storyline_id"), "{err}");
    assert!(err.hint().contains("main_arc、side_sect"), "{}", err.hint());
}

/// A changelog line as apply writes it.
fn line(
    chapter: u32,
    base: u64,
    ops: Value,
    state: &mut Value,
    global: &mut ForeshadowingGlobal,
) -> ChangelogEntry {
    let names = names();
    let plan = plan();
    let delta = json!({"chapter": chapter, "base_state_version": base, "storyline_id": "main_arc", "ops": ops});
    let applied = ops::apply_delta(state, global, &delta, ctx(&names, &plan), false, "t").unwrap();
    assert!(
        applied.run.rejected.is_empty(),
        "{:?}",
        applied.run.rejected
    );
    *state = applied.run.state;
    *global = applied.run.global;
    applied.entry
}

fn fresh() -> Value {
    json!({"schema_version": 1, "state_version": 0, "last_updated_chapter": 0,
        "characters": {}, "world_state": {}, "active_foreshadowing": []})
}

#[test]
fn replay_to_a_chapter_stops_at_the_first_later_line() {
    let names = names();
    let plan = plan();
    let mut state = fresh();
    let mut global = global();
    let set = |v: &str| json!([{"op": "set", "path": "characters.lu-chen.location", "value": v}]);
    let mut log = vec![
        line(1, 0, set("青云镇"), &mut state, &mut global),
        line(2, 1, set("魔都"), &mut state, &mut global),
        line(3, 2, set("城北废墟"), &mut state, &mut global),
    ];
    // A late correction filed under chapter 2 (as an older engine allowed): it came after
    // chapter 3, so it is not part of "the state after chapter 2".
    let mut late = line(3, 3, set("幽暗森林"), &mut state, &mut global);
    late.chapter = 2;
    log.push(late);
    let at2 = ops::replay(&log, Some(2), &global, ctx(&names, &plan)).unwrap();
    assert_eq!(at2.entries_used, 2);
    assert_eq!(at2.state["state_version"], 2);
    assert_eq!(at2.state["characters"]["lu-chen"]["location"], "魔都");
    let all = ops::replay(&log, None, &global, ctx(&names, &plan)).unwrap();
    assert_eq!(all.state, state);
}

#[test]
fn rebuild_keeps_what_only_the_author_writes() {
    let names = names();
    let plan = plan();
    // The author added a key of their own and the file is on schema 2.
    let mut state = json!({"作者备注": "第三卷再回收玉佩", "schema_version": 2,
        "state_version": 0, "last_updated_chapter": 0,
        "characters": {}, "world_state": {}, "active_foreshadowing": []});
    // An authored thread, advanced by hand in chapter 20, with a key of the author's own.
    let mut global: ForeshadowingGlobal = serde_json::from_value(json!({"foreshadowing": [
        {"id": "ancient_prophecy", "description": "上古预言", "scope": "long", "status": "advanced",
         "planted_chapter": 3, "last_updated_chapter": 20, "作者备注": "别忘了",
         "history": [{"chapter": 3, "action": "planted", "detail": "序章伏笔"},
                     {"chapter": 20, "action": "advanced", "detail": "作者补记"}]}
    ], "说明": "手写"}))
    .unwrap();
    let log = vec![
        line(
            48,
            0,
            json!([
                {"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"},
                {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "又提起"}
            ]),
            &mut state,
            &mut global,
        ),
        line(
            49,
            1,
            json!([{"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced", "detail": "推进"}]),
            &mut state,
            &mut global,
        ),
    ];
    let thread = &global.foreshadowing[0];
    assert_eq!(thread.status, ForeshadowStatus::Advanced, "forward only");
    assert_eq!(thread.history.len(), 3, "planted downgrade adds nothing");
    let rebuilt = ops::rebuild(&log, None, Some(&state), &global, ctx(&names, &plan)).unwrap();
    assert_eq!(ops::diff(&rebuilt.state, &state), vec![]);
    assert_eq!(rebuilt.state["作者备注"], "第三卷再回收玉佩");
    assert_eq!(rebuilt.state["schema_version"], 2);
    let keys: Vec<&String> = rebuilt.state.as_object().unwrap().keys().collect();
    assert_eq!(
        keys[..3],
        ["作者备注", "schema_version", "state_version"],
        "on-disk key order"
    );
    assert_eq!(rebuilt.global, global);

    // Back to chapter 48: the authored history up to there, the op's advance undone.
    let at48 = ops::rebuild(&log, Some(48), Some(&state), &global, ctx(&names, &plan)).unwrap();
    let t = &at48.global.foreshadowing[0];
    assert_eq!(t.status, ForeshadowStatus::Advanced, "authored 20 advanced");
    let chapters: Vec<u32> = t.history.iter().map(|h| h.chapter).collect();
    assert_eq!(chapters, [3, 20]);
    assert_eq!(t.extra["作者备注"], "别忘了");
    let at10 = ops::rebuild(&log, Some(10), Some(&state), &global, ctx(&names, &plan)).unwrap();
    let t = &at10.global.foreshadowing[0];
    assert_eq!(t.status, ForeshadowStatus::Planted);
    assert_eq!(t.last_updated_chapter, Some(3));
    assert_eq!(at10.state["作者备注"], "第三卷再回收玉佩");
}

#[test]
fn a_status_set_by_hand_is_a_timeless_floor() {
    let names = names();
    let plan = plan();
    let mut state = fresh();
    // Resolved by hand, with no history saying when.
    let mut global: ForeshadowingGlobal = serde_json::from_value(json!({"foreshadowing": [
        {"id": "ancient_prophecy", "description": "上古预言", "scope": "long", "status": "resolved",
         "history": []}
    ]}))
    .unwrap();
    let log = vec![line(
        5,
        0,
        json!([{"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced"}]),
        &mut state,
        &mut global,
    )];
    assert_eq!(state["active_foreshadowing"], json!([]));
    for until in [None, Some(5), Some(1)] {
        let r = ops::rebuild(&log, until, Some(&state), &global, ctx(&names, &plan)).unwrap();
        let t = &r.global.foreshadowing[0];
        assert_eq!(t.status, ForeshadowStatus::Resolved, "until {until:?}");
        assert!(t.history.is_empty());
    }
}

#[test]
fn rebuild_to_before_a_thread_exists_names_it() {
    let names = names();
    let plan = plan();
    let mut state = fresh();
    let mut global = global();
    let log = vec![
        line(
            1,
            0,
            json!([{"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"}]),
            &mut state,
            &mut global,
        ),
        line(
            2,
            1,
            json!([{"op": "foreshadow", "path": "jade_pendant", "value": "planted"}]),
            &mut state,
            &mut global,
        ),
    ];
    // The author then described the thread in their own words.
    global.foreshadowing[1].description = "作者改写的玉佩来历".into();
    global.foreshadowing[1]
        .extra
        .insert("作者备注".into(), json!("第 55 章回收"));
    let at1 = ops::rebuild(&log, Some(1), Some(&state), &global, ctx(&names, &plan)).unwrap();
    assert_eq!(at1.dropped_threads, ["jade_pendant"]);
    assert_eq!(at1.global.foreshadowing.len(), 1);
    // Up to chapter 2 it exists again, with the author's fields.
    let at2 = ops::rebuild(&log, Some(2), Some(&state), &global, ctx(&names, &plan)).unwrap();
    assert!(at2.dropped_threads.is_empty());
    assert_eq!(at2.global, global);
}

#[test]
fn closest_ids_for_a_did_you_mean_hint() {
    let known: Vec<String> = ["lu-chen", "su-wan", "ancient_prophecy", "陆尘", "小陆"]
        .map(String::from)
        .to_vec();
    assert_eq!(ops::closest("lu-chan", &known, 5), ["lu-chen"]);
    assert_eq!(ops::closest("陆晨", &known, 5), ["陆尘"]);
    assert_eq!(ops::closest("prophecy", &known, 5), ["ancient_prophecy"]);
    assert!(ops::closest("nobody", &known, 5).is_empty());
}

/// A skip is recorded only in step and in chapter order; `--resolves-skipped` names only skips
/// still open.
#[test]
fn skips_keep_the_changelog_in_order_and_resolve_only_open_ones() {
    let s = state(); // state_version 47, last_updated_chapter 47, no changelog
    assert_eq!(
        ops::check_skip(&s, None, 47, None),
        Err(OpsError::Diverged {
            state: 47,
            logged: 0
        })
    );
    let last = ops::skipped_entry(47, 47, "两次解析失败", "2026-01-01T00:00:00Z");
    assert_eq!(ops::check_skip(&s, Some(&last), 48, Some(48)), Ok(()));
    assert_eq!(ops::check_skip(&s, Some(&last), 47, Some(48)), Ok(()));
    // Past the book's next chapter (48): refused, whatever the order says.
    assert_eq!(
        ops::check_skip(&s, Some(&last), 49, Some(48)),
        Err(OpsError::ChapterAhead {
            chapter: 49,
            next: 48,
            recorded: 47
        })
    );
    assert_eq!(ops::check_skip(&s, Some(&last), 49, None), Ok(()));
    let e = ops::check_skip(&s, Some(&last), 46, Some(48)).unwrap_err();
    assert_eq!(
        (e.code(), &e),
        (
            "E_CHAPTER_ORDER",
            &OpsError::SkipOrder {
                chapter: 46,
                last: 47
            }
        )
    );

    assert_eq!(ops::check_resolves(&[12, 15], &[15]), Ok(()));
    assert_eq!(ops::check_resolves(&[12, 15], &[]), Ok(()));
    let e = ops::check_resolves(&[12, 15], &[12, 13]).unwrap_err();
    assert_eq!(e.code(), "E_NOT_SKIPPED");
    assert!(e.to_string().contains("第 13 章"), "{e}");
    assert!(e.hint().contains("12、15"), "{}", e.hint());
    assert!(
        ops::check_resolves(&[], &[3])
            .unwrap_err()
            .hint()
            .contains("无")
    );
}

/// The names are consulted only for a path segment that is not a slug.
#[test]
fn names_are_needed_only_for_a_segment_that_is_not_a_slug() {
    let delta =
        |path: Value| json!({"chapter": 48, "ops": [{"op": "set", "path": path, "value": 1}]});
    assert!(!ops::needs_names(&delta(json!(
        "characters.lu-chen.location"
    ))));
    assert!(!ops::needs_names(&delta(json!(3))));
    assert!(!ops::needs_names(&json!({"chapter": 48})));
    assert!(ops::needs_names(&delta(json!("characters.陆尘.location"))));
    assert!(ops::needs_names(&delta(json!(
        "characters.Lu Chen.location"
    ))));
}
