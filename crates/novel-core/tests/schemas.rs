//! The checked-in schemas (`templates/schemas/*.schema.json`) are exactly what the Rust types
//! generate, and the fixtures in `tests/schemas/{valid,invalid}/<kind>/` behave.
//! Regenerate the schema files with `NOVEL_BLESS=1 cargo test -p novel-core --test schemas`.

use std::path::{Path, PathBuf};

use novel_core::FileKind;
use novel_core::validate::{check_document, parse_json};
use serde_json::{Map, Value};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema_text(kind: FileKind) -> String {
    let mut s = serde_json::to_string_pretty(kind.schema()).unwrap();
    s.push('\n');
    s
}

#[test]
fn checked_in_schemas_match_the_types() {
    let dir = repo_root().join("templates/schemas");
    let bless = std::env::var_os("NOVEL_BLESS").is_some();
    let mut stale = Vec::new();
    for kind in FileKind::ALL {
        let path = dir.join(format!("{}.schema.json", kind.name()));
        let want = schema_text(kind);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &want).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(have) if have == want => {}
            _ => stale.push(kind.name()),
        }
    }
    assert!(
        stale.is_empty(),
        "schemas out of date: {stale:?}; run NOVEL_BLESS=1 cargo test -p novel-core --test schemas"
    );
    // No stray schema files for kinds that no longer exist.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let kind = name.trim_end_matches(".schema.json");
        assert!(
            FileKind::from_name(kind).is_some(),
            "stray schema file {name}"
        );
    }
}

fn fixtures(kind: FileKind, group: &str) -> Vec<PathBuf> {
    let dir = repo_root()
        .join("tests/schemas")
        .join(group)
        .join(kind.name());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn valid_fixtures_validate() {
    for kind in FileKind::ALL {
        let files = fixtures(kind, "valid");
        assert!(!files.is_empty(), "no valid fixture for {}", kind.name());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let value = parse_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let found = check_document("x", kind, &value);
            assert!(found.is_empty(), "{}: {found:#?}", path.display());
        }
    }
}

/// Each invalid fixture `<case>.json` must fail, and `expect.json` beside it names the JSON
/// pointer the error must point at (`{"<case>.json": "/ops/0/op"}`).
#[test]
fn invalid_fixtures_fail_at_the_expected_pointer() {
    for kind in FileKind::ALL {
        let files = fixtures(kind, "invalid");
        let expect_path = repo_root()
            .join("tests/schemas/invalid")
            .join(kind.name())
            .join("expect.json");
        let expect: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            &std::fs::read_to_string(&expect_path)
                .unwrap_or_else(|e| panic!("{}: {e}", expect_path.display())),
        )
        .unwrap();
        let cases: Vec<_> = files
            .iter()
            .filter(|p| p.file_name().unwrap() != "expect.json")
            .collect();
        assert!(!cases.is_empty(), "no invalid fixture for {}", kind.name());
        for path in cases {
            let name = path.file_name().unwrap().to_str().unwrap();
            let pointer = expect
                .get(name)
                .and_then(|v| v.as_str())
                .unwrap_or_else(|| panic!("{}: no entry for {name} in expect.json", kind.name()));
            let text = std::fs::read_to_string(path).unwrap();
            let found = match parse_json(&text) {
                Ok(value) => check_document("x", kind, &value),
                Err(e) => panic!("{}: invalid fixtures must be JSON: {e}", path.display()),
            };
            assert!(
                found.iter().any(|f| f.pointer.as_deref() == Some(pointer)),
                "{}: expected an error at {pointer:?}, got {found:#?}",
                path.display()
            );
        }
    }
}

#[test]
fn unknown_keys_survive_a_round_trip() {
    use novel_core::model::*;
    fn round<T: serde::Serialize + serde::de::DeserializeOwned>(
        v: serde_json::Value,
    ) -> serde_json::Value {
        let typed: T = serde_json::from_value(v).unwrap();
        serde_json::to_value(typed).unwrap()
    }
    let character = serde_json::json!({
        "id": "lu-chen", "display_name": "陆尘", "作者备注": "不要删",
        "contracts": [{"id": "C-LUCHEN-001", "type": "capability", "rule": "筑基后期", "valid_until": null, "私货": [1, 2]}]
    });
    let back = round::<Character>(character.clone());
    assert_eq!(back["作者备注"], "不要删");
    assert_eq!(back["contracts"][0]["私货"], serde_json::json!([1, 2]));
    assert!(
        back["contracts"][0]
            .get("valid_until")
            .is_some_and(|v| v.is_null()),
        "explicit null kept"
    );
    let keys: Vec<_> = back.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        ["id", "display_name", "aliases", "contracts", "作者备注"]
    );

    let storylines = serde_json::json!({
        "storylines": [{"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel",
            "status": "active", "color": "红"}],
        "relationships": [], "note": {"a": 1}
    });
    let back = round::<Storylines>(storylines);
    assert_eq!(back["storylines"][0]["color"], "红");
    assert_eq!(back["note"]["a"], 1);
}

/// parse → typed model → serialise, for any kind (what every rewrite of a project file does).
fn round_trip(kind: FileKind, v: &serde_json::Value) -> serde_json::Value {
    use novel_core::model::*;
    fn round<T: serde::Serialize + serde::de::DeserializeOwned>(
        v: &serde_json::Value,
    ) -> serde_json::Value {
        let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
        serde_json::to_value(typed).unwrap()
    }
    match kind {
        FileKind::Checkpoint => round::<Checkpoint>(v),
        FileKind::Settings => round::<Settings>(v),
        FileKind::CurrentState => round::<CurrentState>(v),
        FileKind::StateDelta => round::<StateDelta>(v),
        FileKind::ChangelogEntry => round::<ChangelogEntry>(v),
        FileKind::WorldRules => round::<WorldRules>(v),
        FileKind::Character => round::<Character>(v),
        FileKind::Relationships => round::<Relationships>(v),
        FileKind::Storylines => round::<Storylines>(v),
        FileKind::StorylineSpec => round::<StorylineSpec>(v),
        FileKind::StorylineSchedule => round::<StorylineSchedule>(v),
        FileKind::ChapterContract => round::<ChapterContract>(v),
        FileKind::ForeshadowingGlobal => round::<ForeshadowingGlobal>(v),
        FileKind::VolumeForeshadowing => round::<VolumeForeshadowing>(v),
        FileKind::Evaluation => round::<Evaluation>(v),
        FileKind::PipelineLog => round::<PipelineLog>(v),
        FileKind::StyleProfile => round::<StyleProfile>(v),
        FileKind::AiBlacklist => round::<AiBlacklist>(v),
        FileKind::StyleDrift => round::<StyleDrift>(v),
        FileKind::Revision => round::<Revision>(v),
        FileKind::Preferences => round::<Preferences>(v),
        FileKind::MemoryEntry => round::<MemoryEntry>(v),
        FileKind::RepairReview => round::<RepairReview>(v),
    }
}

/// The subschema `schema` stands for, `$ref`s into `$defs` followed.
fn resolve<'a>(
    root: &'a serde_json::Value,
    mut schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    while let Some(r) = schema.get("$ref").and_then(|r| r.as_str()) {
        let name = r
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("ref {r}"));
        schema = &root["$defs"][name];
    }
    schema
}

/// A subschema standing alone (the root's `$defs` beside it), for `jsonschema::is_valid`.
fn standalone(root: &serde_json::Value, schema: &serde_json::Value) -> serde_json::Value {
    let mut alone = resolve(root, schema).clone();
    if let Some(obj) = alone.as_object_mut() {
        obj.insert("$defs".into(), root["$defs"].clone());
    }
    alone
}

/// What [`walk_records`] calls for a record: its pointer, its schema's properties, and the record.
type RecordVisit<'a> = dyn FnMut(&str, &Map<String, Value>, &Map<String, Value>) + 'a;

/// Walks `value` guided by its schema and calls `visit(pointer, properties, object)` for every
/// object the schema types as a record (a model struct with named properties), as opposed to a
/// free map keyed by ids. Branches (`anyOf`/`oneOf`, e.g. `Option<T>`) are followed where the
/// value matches them.
fn walk_records(
    root: &serde_json::Value,
    schema: &serde_json::Value,
    value: &serde_json::Value,
    pointer: &str,
    visit: &mut RecordVisit<'_>,
) {
    use serde_json::Value;
    let schema = resolve(root, schema);
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if jsonschema::is_valid(&standalone(root, branch), value) {
                walk_records(root, branch, value, pointer, visit);
            }
        }
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                visit(pointer, props, map);
            }
            let rest = schema.get("additionalProperties").filter(|s| s.is_object());
            for (k, v) in map {
                if let Some(sub) = props.and_then(|p| p.get(k)).or(rest) {
                    let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
                    walk_records(root, sub, v, &p, visit);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
                for (i, v) in items.iter().enumerate() {
                    walk_records(root, sub, v, &format!("{pointer}/{i}"), visit);
                }
            }
        }
        _ => {}
    }
}

/// JSON pointers of every record of `value` ([`walk_records`]).
fn record_pointers(root: &serde_json::Value, value: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_records(root, root, value, "", &mut |p, _, _| {
        out.push(p.to_string())
    });
    out
}

/// Every key of `before` (an object's key, at any depth) that `after` no longer has.
fn dropped_keys(
    before: &serde_json::Value,
    after: &serde_json::Value,
    at: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = format!("{at}/{k}");
                match b.get(k) {
                    Some(w) => dropped_keys(v, w, &p, out),
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                dropped_keys(v, w, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Every kind's valid fixtures, with an unknown key injected into the document and into every
/// nested record, go through parse → serialise with the unknown keys in place and no authored
/// key lost.
#[test]
fn unknown_keys_survive_a_round_trip_in_every_kind() {
    const KEY: &str = "x-作者备注";
    let mut records = 0;
    for kind in FileKind::ALL {
        let schema = kind.schema();
        for path in fixtures(kind, "valid") {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut value = parse_json(&text).unwrap();
            let mut pointers = record_pointers(schema, &value);
            pointers.sort();
            pointers.dedup();
            assert!(pointers.contains(&String::new()), "{}", path.display());
            for p in &pointers {
                value
                    .pointer_mut(p)
                    .and_then(|o| o.as_object_mut())
                    .unwrap()
                    .insert(KEY.into(), serde_json::json!({"保留": [p, null]}));
            }
            records += pointers.len();
            let back = round_trip(kind, &value);
            // Nor is any authored key dropped (explicit `null`s and `false`s included).
            let mut dropped = Vec::new();
            dropped_keys(&value, &back, "", &mut dropped);
            assert!(
                dropped.is_empty(),
                "{}: dropped {dropped:?}",
                path.display()
            );
            for p in &pointers {
                assert_eq!(
                    back.pointer(p).and_then(|o| o.get(KEY)),
                    Some(&serde_json::json!({"保留": [p, null]})),
                    "{}: unknown key at {p:?} lost: {back:#}",
                    path.display()
                );
            }
        }
    }
    assert!(records > 100, "only {records} records visited");
}

/// The templates `novel init` copies into a project are valid for their kinds.
#[test]
fn templates_are_schema_valid() {
    let root = repo_root().join("templates");
    let mut cases = vec![
        (root.join("ai-blacklist.json"), FileKind::AiBlacklist),
        (
            root.join("style-profile-template.json"),
            FileKind::StyleProfile,
        ),
        (root.join("storyline-spec.json"), FileKind::StorylineSpec),
    ];
    let presets = root.join("style-presets");
    let mut n = 0;
    for entry in std::fs::read_dir(&presets).unwrap() {
        cases.push((entry.unwrap().path(), FileKind::StyleProfile));
        n += 1;
    }
    assert!(n >= 3, "at least 3 style presets (PRD §7), found {n}");
    for (path, kind) in cases {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let value = parse_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let found = check_document("x", kind, &value);
        assert!(found.is_empty(), "{}: {found:#?}", path.display());
    }
}

/// Every optional key a record's schema lets be `null` and the document does not have:
/// `(pointer of the record, key)`.
fn absent_nullable(root: &serde_json::Value, value: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk_records(root, root, value, "", &mut |p, props, map| {
        for (k, sub) in props {
            if !map.contains_key(k)
                && jsonschema::is_valid(&standalone(root, sub), &serde_json::Value::Null)
            {
                out.push((p.to_string(), k.clone()));
            }
        }
    });
    out
}

/// An optional key the author wrote as `null` survives the rewrite (parse → typed model →
/// serialise, the nulls the type drops put back by `model::nulls::restore`, as every rewrite of
/// a project file does) in every kind: for every valid fixture, every such key the schema allows
/// and the fixture leaves out is set to `null` and must come back as `null` (after the nearest
/// earlier key the rewrite kept; a typed rewrite orders known keys its own way).
#[test]
fn explicit_nulls_survive_a_round_trip_in_every_kind() {
    let mut lost = Vec::new();
    let mut tried = 0;
    for kind in FileKind::ALL {
        let schema = kind.schema();
        for path in fixtures(kind, "valid") {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut value = parse_json(&text).unwrap();
            let mut holes = absent_nullable(schema, &value);
            holes.sort();
            holes.dedup();
            for (p, k) in &holes {
                if let Some(o) = value.pointer_mut(p).and_then(|o| o.as_object_mut()) {
                    o.insert(k.clone(), serde_json::Value::Null);
                }
            }
            tried += holes.len();
            let mut back = round_trip(kind, &value);
            novel_core::model::nulls::restore(&value, &mut back);
            for (p, k) in &holes {
                if back.pointer(p).and_then(|o| o.get(k)) != Some(&serde_json::Value::Null) {
                    lost.push(format!("{} {}{p}/{k}", kind.name(), path.display()));
                }
            }
        }
    }
    assert!(tried > 20, "only {tried} nullable keys tried");
    assert!(
        lost.is_empty(),
        "{} explicit nulls lost:\n{}",
        lost.len(),
        lost.join("\n")
    );
}
