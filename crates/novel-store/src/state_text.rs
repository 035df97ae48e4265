//! `state/current-state.json` read for one delta, parsed only where the delta reaches.
//!
//! A commit changes a handful of entries of the state, yet the whole file used to be parsed
//! into a tree, run through the delta and written out again: the commit grew with the book's
//! cast. Here the entries of the entity maps ([`LAZY_ROOTS`]) that no op of the delta names are
//! kept as the exact text they were written with, and written back as that text; only the named
//! entries and the small top-level fields are parsed. The engine sees the same state object,
//! with `null` standing in for each entry it has no business reading (its ops reach only the
//! entries their paths name, see [`touched`]).
//!
//! Written back, the text is byte for byte what serialising the fully parsed state would give,
//! as long as the file was written by this program (its pretty-printer at the same depth): the
//! commit uses this path only for the state bytes the last changelog line recorded
//! (`written.state`). A reader that only checks (the guard hook, `ops validate`) may use it on
//! any file: it never writes the text back.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The roots whose entries are read only when an op names them: the maps keyed by entity
/// slug (or, for `world_state`, by fact). `active_foreshadowing` is small and a `foreshadow`
/// op rewrites it by thread id, so it is always parsed.
pub const LAZY_ROOTS: [&str; 5] = [
    "characters",
    "items",
    "locations",
    "factions",
    "world_state",
];

/// The entries left unparsed, by root and key: the exact text of each.
#[derive(Debug, Clone, Default)]
pub struct Untouched {
    roots: HashMap<String, HashMap<String, Box<RawValue>>>,
}

impl Untouched {
    /// How many entries were left as text (for tests and figures).
    pub fn len(&self) -> usize {
        self.roots.values().map(HashMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `(root, key)` of every entry an op of `delta` may read or write: the first two segments of
/// each op's `path`, whatever the op (a path the engine rejects names at worst one entry too
/// many, which is then merely parsed).
pub fn touched(delta: &Value) -> HashSet<(&str, &str)> {
    let ops = delta.get("ops").and_then(Value::as_array);
    ops.into_iter()
        .flatten()
        .filter_map(|op| op.get("path").and_then(Value::as_str))
        .filter_map(|path| {
            let mut segments = path.split('.');
            Some((segments.next()?, segments.next()?))
        })
        .collect()
}

/// The state object of `text` with every entry of a [`LAZY_ROOTS`] map that `delta` does not
/// reach replaced by `null`, and the text of those entries. `Err` when the text is not a JSON
/// object (the caller then parses it the ordinary way, which says where it is broken).
pub fn parse_for(text: &str, delta: &Value) -> Result<(Value, Untouched), serde_json::Error> {
    let reached = touched(delta);
    let top: Top = serde_json::from_str(novel_core::validate::strip_bom(text))?;
    let mut state = Map::new();
    let mut untouched = Untouched::default();
    for (key, member) in top.0 {
        let entries = match member {
            Member::Parsed(value) => {
                state.insert(key, value);
                continue;
            }
            Member::Lazy(entries) => entries,
        };
        let mut map = Map::new();
        let mut left = HashMap::new();
        for (entry, raw) in entries {
            if reached.contains(&(key.as_str(), entry.as_str())) {
                left.remove(&entry);
                map.insert(entry, serde_json::from_str(raw.get())?);
            } else {
                map.insert(entry.clone(), Value::Null);
                left.insert(entry, raw);
            }
        }
        state.insert(key.clone(), Value::Object(map));
        // A key written twice keeps its last value, as the ordinary parse does.
        untouched.roots.insert(key, left);
    }
    Ok((Value::Object(state), untouched))
}

/// `state` as pretty JSON with a trailing newline (what `io::to_json_text` writes), each
/// untouched entry written as the text it was read with.
pub fn to_text(state: &Value, untouched: &Untouched) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&Out { state, untouched })?;
    text.push('\n');
    Ok(text)
}

/// The state's members in file order, read in one pass: a [`LAZY_ROOTS`] map as its entries'
/// text, anything else parsed.
struct Top(Vec<(String, Member)>);

enum Member {
    Parsed(Value),
    /// A lazy root's entries in file order (duplicates kept; the later one wins where they are
    /// put into a map).
    Lazy(Vec<(String, Box<RawValue>)>),
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Top, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    let member = if LAZY_ROOTS.contains(&key.as_str()) {
                        access.next_value_seed(LazyRoot)?
                    } else {
                        Member::Parsed(access.next_value()?)
                    };
                    out.push((key, member));
                }
                Ok(Top(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A lazy root's value: an object becomes its entries' text; any other value is parsed (the
/// engine then finds it as it is).
struct LazyRoot;

impl<'de> DeserializeSeed<'de> for LazyRoot {
    type Value = Member;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Member, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LazyRoot {
    type Value = Member;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Member, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = access.next_entry::<String, Box<RawValue>>()? {
            out.push(entry);
        }
        Ok(Member::Lazy(out))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Member, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = access.next_element::<Value>()? {
            out.push(v);
        }
        Ok(Member::Parsed(Value::Array(out)))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Member, E> {
        Ok(Member::Parsed(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Member, E> {
        Ok(Member::Parsed(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Member, E> {
        Ok(Member::Parsed(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Member, E> {
        Ok(Member::Parsed(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Member, E> {
        Ok(Member::Parsed(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Member, E> {
        Ok(Member::Parsed(Value::Null))
    }
}

struct Out<'a> {
    state: &'a Value,
    untouched: &'a Untouched,
}

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(top) = self.state else {
            return self.state.serialize(s);
        };
        let mut map = s.serialize_map(Some(top.len()))?;
        for (key, value) in top {
            match (self.untouched.roots.get(key), value) {
                (Some(left), Value::Object(entries)) => {
                    map.serialize_entry(key, &Root { entries, left })?
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

struct Root<'a> {
    entries: &'a Map<String, Value>,
    left: &'a HashMap<String, Box<RawValue>>,
}

impl Serialize for Root<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (key, value) in self.entries {
            // An entry no op reached is still the `null` put in its place.
            match (self.left.get(key), value) {
                (Some(raw), Value::Null) => map.serialize_entry(key, raw)?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pretty(v: &Value) -> String {
        let mut s = serde_json::to_string_pretty(v).unwrap();
        s.push('\n');
        s
    }

    fn state() -> Value {
        json!({
            "schema_version": 1,
            "state_version": 7,
            "last_updated_chapter": 6,
            "characters": {
                "lu-chen": {"location": "青云镇", "inventory": ["残锋", 2.5], "hp": -3},
                "su-wan": {"location": "渡口", "mood": "「警惕」\n\t\"引号\"", "empty": {}},
                "old-man": {}
            },
            "items": {"can-feng": {"holder": "lu-chen", "饮剑": 3}},
            "world_state": {"time_marker": "第六章之后", "weather": null},
            "active_foreshadowing": ["ancient_prophecy"],
            "作者备注": {"a": [1, {"b": 1e-7}]}
        })
    }

    #[test]
    fn unreached_entries_are_null_and_kept_as_text() {
        let text = pretty(&state());
        let delta =
            json!({"ops": [{"op": "set", "path": "characters.su-wan.location", "value": "x"}]});
        let (lazy, left) = parse_for(&text, &delta).unwrap();
        assert_eq!(lazy["characters"]["lu-chen"], Value::Null);
        assert_eq!(
            lazy["characters"]["su-wan"],
            state()["characters"]["su-wan"]
        );
        assert_eq!(lazy["items"]["can-feng"], Value::Null);
        assert_eq!(lazy["作者备注"], state()["作者备注"], "other keys parsed");
        assert_eq!(left.len(), 5);
        // Written back untouched: the same bytes.
        assert_eq!(to_text(&lazy, &left).unwrap(), text);
    }

    #[test]
    fn written_back_as_the_full_parse_would_write_it() {
        let text = pretty(&state());
        let delta = json!({"ops": [
            {"op": "set", "path": "characters.su-wan.location", "value": "青云镇"},
            {"op": "set", "path": "characters.new-one.location", "value": "渡口"},
            {"op": "inc", "path": "items.can-feng.饮剑", "value": 1},
            {"op": "set", "path": "world_state.weather", "value": "雨"}
        ]});
        let (mut lazy, left) = parse_for(&text, &delta).unwrap();
        let mut full = state();
        for v in [&mut lazy, &mut full] {
            v["characters"]["su-wan"]["location"] = json!("青云镇");
            v["characters"]["new-one"] = json!({"location": "渡口"});
            v["characters"]
                .as_object_mut()
                .unwrap()
                .shift_remove("old-man");
            v["world_state"]["weather"] = json!("雨");
            v["state_version"] = json!(8);
        }
        assert_eq!(to_text(&lazy, &left).unwrap(), pretty(&full));
    }

    #[test]
    fn a_key_written_twice_keeps_the_last_value() {
        let text = r#"{"characters": {"a": {"x": 1}, "a": {"x": 2}}, "state_version": 1}"#;
        let full: Value = serde_json::from_str(text).unwrap();
        let (lazy, left) = parse_for(text, &json!({"ops": []})).unwrap();
        let reached = parse_for(text, &json!({"ops": [{"path": "characters.a.x"}]}))
            .unwrap()
            .0;
        assert_eq!(reached, full);
        // Not this program's formatting: the entry keeps its own, the content is the same.
        let back: Value = serde_json::from_str(&to_text(&lazy, &left).unwrap()).unwrap();
        assert_eq!(back, full);
    }

    #[test]
    fn not_an_object_is_an_error() {
        for bad in [
            "[]",
            "{\"characters\": {\"a\": }",
            "",
            "{\"characters\": {\"a\": 1}",
        ] {
            assert!(parse_for(bad, &json!({})).is_err(), "{bad}");
        }
        // A root that is not an object is parsed as it is.
        let (v, left) = parse_for(r#"{"characters": [1, 2]}"#, &json!({})).unwrap();
        assert_eq!(v["characters"], json!([1, 2]));
        assert!(left.is_empty());
    }

    /// A small deterministic generator (no dependency): xorshift.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[(self.next() % xs.len() as u64) as usize]
        }
    }

    const SLUGS: [&str; 6] = ["lu-chen", "su-wan", "old-man", "can-feng", "qing-yun", "x"];
    const FIELDS: [&str; 5] = ["location", "hp", "inventory", "mood", "饮剑"];

    fn value(r: &mut Rng, depth: u32) -> Value {
        match r.next() % if depth > 2 { 4 } else { 6 } {
            0 => json!(r.next() % 100),
            1 => json!(format!("「{}」\n\"{}\"", r.pick(&SLUGS), r.next() % 7)),
            2 => Value::Null,
            3 => json!(((r.next() % 1000) as f64) / 7.0),
            4 => Value::Array((0..r.next() % 3).map(|_| value(r, depth + 1)).collect()),
            _ => Value::Object(
                (0..r.next() % 4)
                    .map(|_| (r.pick(&FIELDS).to_string(), value(r, depth + 1)))
                    .collect(),
            ),
        }
    }

    fn random_state(r: &mut Rng) -> Value {
        let mut state = json!({"schema_version": 1, "state_version": 3, "last_updated_chapter": 2});
        for root in LAZY_ROOTS {
            if r.next().is_multiple_of(5) {
                continue;
            }
            let entries: Map<String, Value> = (0..r.next() % 5)
                .map(|_| (r.pick(&SLUGS).to_string(), value(r, 1)))
                .collect();
            state[root] = Value::Object(entries);
        }
        state["active_foreshadowing"] = json!(["ancient_prophecy"]);
        state
    }

    fn random_delta(r: &mut Rng) -> Value {
        let ops: Vec<Value> = (0..1 + r.next() % 4)
            .map(|_| {
                let op = r.pick(&["set", "inc", "add", "remove", "foreshadow"]);
                let path = if op == "foreshadow" {
                    r.pick(&["ancient_prophecy", "new_thread"]).to_string()
                } else if r.next().is_multiple_of(3) {
                    format!("{}.{}", r.pick(&LAZY_ROOTS), r.pick(&SLUGS))
                } else {
                    format!(
                        "{}.{}.{}",
                        r.pick(&LAZY_ROOTS),
                        r.pick(&SLUGS),
                        r.pick(&FIELDS)
                    )
                };
                let v = match op {
                    "inc" => json!(r.next() % 5),
                    "foreshadow" => json!(r.pick(&["planted", "advanced", "resolved"])),
                    _ => value(r, 2),
                };
                json!({"op": op, "path": path, "value": v})
            })
            .collect();
        json!({"chapter": 3, "base_state_version": 3, "storyline_id": "main_arc", "ops": ops})
    }

    /// The engine run on the lazily read state leaves the same text, the same accepted and
    /// rejected ops, as the run on the whole state — over many random states and deltas.
    #[test]
    fn same_run_and_same_text_as_the_whole_state() {
        use novel_core::model::ForeshadowingGlobal;
        use novel_core::ops::{Context, NameIndex, run_delta_owned};
        let global: ForeshadowingGlobal =
            serde_json::from_value(json!({"foreshadowing": []})).unwrap();
        let names = NameIndex::default();
        let ctx = Context {
            names: &names,
            plan: &[],
        };
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut lazily_kept = 0;
        for _ in 0..2000 {
            let state = random_state(&mut r);
            let delta = random_delta(&mut r);
            let text = pretty(&state);
            let whole = run_delta_owned(state.clone(), &global, &delta, ctx).unwrap();
            let (lazy, left) = parse_for(&text, &delta).unwrap();
            lazily_kept += left.len();
            let part = run_delta_owned(lazy, &global, &delta, ctx).unwrap();
            let index = |v: &[novel_core::ops::Rejection]| {
                v.iter()
                    .map(|x| (x.index, x.code, x.reason.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                index(&part.rejected),
                index(&whole.rejected),
                "{delta}\n{text}"
            );
            assert_eq!(
                part.accepted
                    .iter()
                    .map(|a| (a.index, a.note.clone()))
                    .collect::<Vec<_>>(),
                whole
                    .accepted
                    .iter()
                    .map(|a| (a.index, a.note.clone()))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(
                to_text(&part.state, &left).unwrap(),
                pretty(&whole.state),
                "{delta}\n{text}"
            );
        }
        assert!(
            lazily_kept > 2000,
            "the generator left too few entries unparsed: {lazily_kept}"
        );
    }
}
