//! Property tests of the state engine: replay reproduces what was applied, nothing panics,
//! rejected ops change nothing, one version per applied delta.

use novel_core::model::{CurrentState, ForeshadowingGlobal};
use novel_core::ops::{self, Context, NameIndex};
use proptest::prelude::*;
use serde_json::{Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        "[a-z0-9\\-_.]{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "陆尘",
            "魔都",
            "密信",
            "__proto__",
            "planted",
            "resolved"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Ops from a small vocabulary so that they collide: valid, invalid and conflicting ones.
fn arb_op() -> impl Strategy<Value = Value> {
    let kind = prop::sample::select(vec!["set", "inc", "add", "remove", "foreshadow", "move"]);
    let path = prop::sample::select(vec![
        "characters.lu-chen.location",
        "characters.lu-chen.inventory",
        "characters.lu-chen.relationships.su-wan",
        "characters.lu-chen",
        "characters.su-wan.inventory",
        "characters.陆尘.location",
        "items.jade.owner",
        "world_state.time_marker",
        "world_state.ongoing_events",
        "factions.taixu.members.elder",
        "a.b",
        "characters.x.y.z.w",
        "ancient_prophecy",
        "jade_pendant",
    ]);
    let value = prop_oneof![
        prop::sample::select(vec!["planted", "advanced", "resolved", "魔都", "密信"])
            .prop_map(|s| json!(s)),
        (-50i32..50).prop_map(|n| json!(n)),
        arb_json(),
    ];
    (kind, path, value, any::<bool>()).prop_map(|(k, p, v, detail)| {
        let mut op = json!({"op": k, "path": p, "value": v});
        if detail {
            op["detail"] = json!("细节");
        }
        op
    })
}

fn empty_global() -> ForeshadowingGlobal {
    ForeshadowingGlobal {
        foreshadowing: Vec::new(),
        extra: Default::default(),
    }
}

fn initial() -> Value {
    serde_json::to_value(CurrentState::initial()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn replay_reproduces_applied_state(deltas in prop::collection::vec(prop::collection::vec(arb_op(), 0..8), 1..8)) {
        let names = NameIndex::default();
        let ctx = Context { names: &names, plan: &[] };
        let mut state = initial();
        let mut global = empty_global();
        let mut log = Vec::new();
        for (i, ops_list) in deltas.iter().enumerate() {
            let before = ops::state_version(&state);
            let delta = json!({"chapter": i + 1, "base_state_version": before,
                "storyline_id": "main_arc", "ops": ops_list});
            let applied = ops::apply_delta(&state, &global, &delta, ctx, false, "t").unwrap();
            prop_assert_eq!(ops::state_version(&applied.run.state), before + 1);
            prop_assert_eq!(applied.entry.applied.len() + applied.entry.rejected.len(), ops_list.len());
            state = applied.run.state;
            global = applied.run.global;
            log.push(applied.entry);
        }
        // Through the changelog's own serialisation, as on disk.
        let text: Vec<String> = log.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        let reread: Vec<_> = text.iter().map(|t| serde_json::from_str(t).unwrap()).collect();
        let replayed = ops::replay(&reread, None, &global, ctx).unwrap();
        prop_assert_eq!(&replayed.state, &state);
        prop_assert_eq!(&replayed.global, &global);
        // Replaying to an earlier chapter equals the state as it was then.
        let mid = (deltas.len() / 2) as u32;
        let partial = ops::replay(&reread, Some(mid), &global, ctx).unwrap();
        prop_assert_eq!(ops::state_version(&partial.state), u64::from(mid));
    }

    #[test]
    fn rejected_ops_change_nothing(op in arb_op()) {
        let names = NameIndex::default();
        let ctx = Context { names: &names, plan: &[] };
        let start = json!({"schema_version": 1, "state_version": 3, "last_updated_chapter": 3,
            "characters": {"lu-chen": {"location": "魔都", "inventory": ["密信"], "relationships": {"su-wan": 5}}},
            "world_state": {"time_marker": "冬"}, "active_foreshadowing": []});
        let delta = json!({"chapter": 4, "base_state_version": 3, "storyline_id": "main_arc", "ops": [op]});
        let run = ops::run_delta(&start, &empty_global(), &delta, ctx).unwrap();
        if !run.rejected.is_empty() {
            prop_assert_eq!(&run.state, &start);
            prop_assert_eq!(&run.global, &empty_global());
        }
    }

    #[test]
    fn arbitrary_input_never_panics(delta in arb_json(), ops_list in prop::collection::vec(arb_json(), 0..6)) {
        let names = NameIndex::default();
        let ctx = Context { names: &names, plan: &[] };
        let _ = ops::apply_delta(&initial(), &empty_global(), &delta, ctx, false, "t");
        let wrapped = json!({"chapter": 1, "base_state_version": 0, "storyline_id": "main_arc", "ops": ops_list});
        let _ = ops::apply_delta(&initial(), &empty_global(), &wrapped, ctx, true, "t");
        // Not even against a state that is not an object.
        let _ = ops::run_delta(&json!([1, 2]), &empty_global(), &wrapped, ctx);
    }
}
