//! The author's explicit `null`s in optional keys, kept across a rewrite.
//!
//! A typed model reads `"valid_until": null` and an absent `valid_until` alike (`None`) and
//! writes neither back, so a file the engine rewrites (the checkpoint, `relationships.json` on a
//! retirement, `ai-blacklist.json` on a blacklist edit) would lose the keys its author wrote as
//! `null`. [`restore`] puts them back into the rewritten value, in their place, wherever the
//! rewrite left the surrounding record recognisably the same: objects by key, arrays element by
//! element when their length is unchanged, else by `id`. A record the rewrite removed takes its
//! nulls with it.

use serde_json::{Map, Value};

/// Puts back into `rewritten` every `null` member of `original` that it no longer has.
pub fn restore(original: &Value, rewritten: &mut Value) {
    match (original, rewritten) {
        (Value::Object(o), Value::Object(n)) => restore_members(o, n),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                restore(x, y);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for x in a {
                let Some(id) = x.get("id").filter(|id| !id.is_null()) else {
                    continue;
                };
                if let Some(y) = b.iter_mut().find(|y| y.get("id") == Some(id)) {
                    restore(x, y);
                }
            }
        }
        _ => {}
    }
}

fn restore_members(o: &Map<String, Value>, n: &mut Map<String, Value>) {
    let mut after: Option<&String> = None;
    for (k, ov) in o {
        match n.get_mut(k) {
            Some(nv) => restore(ov, nv),
            None if ov.is_null() => {
                // Right after the nearest earlier key the rewrite kept.
                let at = after
                    .and_then(|a| n.keys().position(|x| x == a))
                    .map_or(0, |i| i + 1);
                n.shift_insert(at, k.clone(), Value::Null);
            }
            None => continue,
        }
        after = Some(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_come_back_in_place() {
        let original =
            json!({"a": 1, "b": null, "c": {"d": null, "e": 2}, "list": [{"x": null, "y": 1}]});
        let mut rewritten = json!({"a": 1, "c": {"e": 3}, "list": [{"y": 2}]});
        restore(&original, &mut rewritten);
        assert_eq!(
            serde_json::to_string(&rewritten).unwrap(),
            r#"{"a":1,"b":null,"c":{"d":null,"e":3},"list":[{"x":null,"y":2}]}"#
        );
    }

    #[test]
    fn a_value_set_since_wins_and_moved_records_are_found_by_id() {
        let original = json!({"k": null, "items": [{"id": "a", "n": null}, {"id": "b", "n": null}, {"m": null}]});
        // `k` now has a value; `b` was removed; the id-less record cannot be told apart.
        let mut rewritten = json!({"k": 5, "items": [{"id": "a"}, {"m": 1}]});
        restore(&original, &mut rewritten);
        assert_eq!(
            rewritten,
            json!({"k": 5, "items": [{"id": "a", "n": null}, {"m": 1}]})
        );
    }
}
