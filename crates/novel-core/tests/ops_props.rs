//! Property tests of the state engine: replay reproduces what was applied, nothing panics,
//! rejected ops change nothing, one version per applied delta.

use novel_core::model::common::ForeshadowStatus;
use novel_core::model::{ChangelogEntry, CurrentState, ForeshadowingGlobal};
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
    let any_op = (kind, path, value, any::<bool>()).prop_map(|(k, p, v, detail)| {
        let mut op = json!({"op": k, "path": p, "value": v});
        if detail {
            op["detail"] = json!("细节");
        }
        op
    });
    // Valid foreshadow ops on the authored threads, often enough that they meet the authored
    // history, go backwards and repeat.
    let foreshadow = (
        prop::sample::select(vec!["ancient_prophecy", "jade_pendant"]),
        prop::sample::select(STATUSES.to_vec()),
    )
        .prop_map(|(id, s)| json!({"op": "foreshadow", "path": id, "value": s}));
    prop_oneof![3 => any_op, 2 => foreshadow]
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

const STATUSES: [&str; 3] = ["planted", "advanced", "resolved"];

/// The deltas start at this chapter (authored history runs a little past it).
const FIRST_CHAPTER: u32 = 3;

/// One authored thread: a history in chapter order, a status at least as high as its history
/// (higher = set by hand), and a key of the author's own.
fn arb_thread(id: &'static str) -> impl Strategy<Value = Value> {
    // Past the first delta's chapter too, so that authored events and ops meet.
    let history = prop::collection::btree_set((1..=FIRST_CHAPTER + 2, 0..3usize), 0..4);
    (history, 0..3usize, any::<bool>(), arb_json()).prop_map(
        move |(history, bump, planted, note)| {
            let top = history.iter().map(|(_, a)| *a).max();
            let status = top.map_or(bump, |t| t.max(bump));
            let events: Vec<Value> = history
                .iter()
                .map(|(c, a)| json!({"chapter": c, "action": STATUSES[*a], "detail": "作者记"}))
                .collect();
            let mut t = json!({"id": id, "description": format!("{id} 的来历"), "scope": "long",
                "status": STATUSES[status], "history": events, "作者备注": note});
            if let Some(last) = history.iter().map(|(c, _)| *c).max() {
                t["last_updated_chapter"] = json!(last);
            }
            if planted {
                t["planted_chapter"] = json!(1);
            }
            t
        },
    )
}

/// A non-empty foreshadowing file: some of the threads the ops touch, one they never touch.
fn arb_global() -> impl Strategy<Value = ForeshadowingGlobal> {
    (
        prop::option::of(arb_thread("ancient_prophecy")),
        prop::option::of(arb_thread("jade_pendant")),
        arb_thread("black_cat"),
        any::<bool>(),
    )
        .prop_map(|(a, b, c, reversed)| {
            let mut threads: Vec<Value> = [a, b, Some(c)].into_iter().flatten().collect();
            if reversed {
                threads.reverse();
            }
            serde_json::from_value(json!({"foreshadowing": threads, "说明": "作者手写"})).unwrap()
        })
}

/// A state file with keys only the author writes, before any delta.
fn arb_start() -> impl Strategy<Value = Value> {
    (arb_json(), 1..4u32).prop_map(|(note, schema)| {
        json!({"作者备注": note, "schema_version": schema, "state_version": 0,
            "last_updated_chapter": 0, "characters": {}, "world_state": {},
            "active_foreshadowing": []})
    })
}

fn status_of(v: &Value) -> Option<ForeshadowStatus> {
    serde_json::from_value(v.clone()).ok()
}

/// Starts the partial check leaves out, because a rebuild to `until` rightly differs from the
/// state apply had then: an authored event after `until` (apply carried it from the start, a
/// rebuild to `until` drops it), and a status the author set by hand (above the thread's
/// history) that an op after `until` reaches, and none at or before it — that cannot be told
/// from the op's doing, so a rebuild to `until` forgets it (see `ops::rebuild`).
fn differs_by_design(global: &ForeshadowingGlobal, log: &[ChangelogEntry], until: u32) -> bool {
    global.foreshadowing.iter().any(|t| {
        if t.history.iter().any(|h| h.chapter > until) {
            return true;
        }
        let by_hand = t.history.iter().all(|h| h.action < t.status);
        let reached = |later: bool| {
            log.iter()
                .filter(|e| (e.chapter > until) == later)
                .flat_map(|e| &e.applied)
                .any(|op| op.path == t.id && status_of(&op.value).is_some_and(|s| s >= t.status))
        };
        by_hand && reached(true) && !reached(false)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn replay_reproduces_applied_state(
        start in arb_start(),
        authored in arb_global(),
        deltas in prop::collection::vec(prop::collection::vec(arb_op(), 0..8), 1..8),
    ) {
        let names = NameIndex::default();
        let ctx = Context { names: &names, plan: &[] };
        let mut state = start.clone();
        let mut global = authored.clone();
        let mut log = Vec::new();
        let mut snapshots = Vec::new();
        // A fixed first delta, so that the random ones start from a state with entities in it.
        let seed = vec![
            json!({"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"}),
            json!({"op": "add", "path": "characters.lu-chen.inventory", "value": "密信"}),
            json!({"op": "inc", "path": "characters.lu-chen.relationships.su-wan", "value": 5}),
            json!({"op": "set", "path": "world_state.time_marker", "value": "第三年冬"}),
            json!({"op": "foreshadow", "path": "jade_pendant", "value": "planted"}),
        ];
        let deltas: Vec<&Vec<Value>> = std::iter::once(&seed).chain(&deltas).collect();
        for (i, ops_list) in deltas.iter().enumerate() {
            let before = ops::state_version(&state);
            let chapter = FIRST_CHAPTER + i as u32;
            let delta = json!({"chapter": chapter, "base_state_version": before,
                "storyline_id": "main_arc", "ops": ops_list});
            let applied = ops::apply_delta(&state, &global, &delta, ctx, false, "t").unwrap();
            prop_assert_eq!(ops::state_version(&applied.run.state), before + 1);
            prop_assert_eq!(applied.entry.applied.len() + applied.entry.rejected.len(), ops_list.len());
            state = applied.run.state;
            global = applied.run.global;
            log.push(applied.entry);
            snapshots.push((chapter, state.clone(), global.clone()));
        }
        // Through the changelog's own serialisation, as on disk.
        let text: Vec<String> = log.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        let reread: Vec<ChangelogEntry> = text.iter().map(|t| serde_json::from_str(t).unwrap()).collect();
        let replayed = ops::rebuild(&reread, None, Some(&state), &global, ctx).unwrap();
        prop_assert_eq!(&replayed.state, &state);
        prop_assert_eq!(&replayed.global, &global);
        prop_assert!(replayed.dropped_threads.is_empty());
        // Rebuilding to an earlier chapter gives the state and the threads as they were then.
        let (mid, mid_state, mid_global) = &snapshots[(deltas.len() - 1) / 2];
        let partial = ops::rebuild(&reread, Some(*mid), Some(&state), &global, ctx).unwrap();
        prop_assert_eq!(partial.entries_used, (deltas.len() - 1) / 2 + 1);
        if !differs_by_design(&authored, &reread, *mid) {
            prop_assert_eq!(&partial.state, mid_state);
            prop_assert_eq!(&partial.global, mid_global);
        }
        prop_assert_eq!(ops::state_version(&partial.state), ops::state_version(mid_state));
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
