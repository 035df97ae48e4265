//! `novel spec snapshot|propagate` and `novel pending list|resolve` on the fixture novel.

use crate::support::*;
use crate::test_retire::fixture_copy;

#[test]
fn snapshot_twice_is_a_conflict() {
    let (_t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    let out = novel(&root, &["--json", "spec", "snapshot"]);
    assert_eq!(code(&out), 3);
    assert_eq!(json(&out)["error"]["code"], "E_SNAPSHOT_EXISTS");
    assert_eq!(code(&novel(&root, &["spec", "snapshot", "--replace"])), 0);
}

#[test]
fn propagate_without_snapshot_is_a_usage_error() {
    let (_t, root) = fixture_copy(&[]);
    let out = novel(&root, &["--json", "spec", "propagate"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_NO_SNAPSHOT");
}

#[test]
fn world_update_propagates_to_one_pending_action() {
    let (t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    // The WorldBuilder's update.
    let (_u, updated) = fixture_copy(&["world-update"]);
    std::fs::copy(
        updated.join("world/rules.json"),
        root.join("world/rules.json"),
    )
    .unwrap();
    let out = novel(&root, &["--json", "spec", "propagate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(
        doc["data"]["propagation"]["changed_rule_ids"],
        serde_json::json!(["W-001", "W-002", "W-003", "W-005"])
    );
    let cp = read_json(&root.join(".checkpoint.json"));
    let pending = cp["pending_actions"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["type"], "spec_propagation");
    let human = stdout(&novel(&root, &["pending", "list"]));
    assert!(human.contains("spec-propagation-001"), "{human}");
    let out = novel(
        &root,
        &["--json", "pending", "resolve", "spec-propagation-001"],
    );
    assert_eq!(code(&out), 0);
    let cp = read_json(&root.join(".checkpoint.json"));
    assert!(cp["pending_actions"].as_array().unwrap().is_empty());
    drop(t);
}

#[test]
fn propagate_human_summary_recommends_vol_planning() {
    let (_t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    let (_u, updated) = fixture_copy(&["character-update"]);
    std::fs::copy(
        updated.join("characters/active/lu-chen.json"),
        root.join("characters/active/lu-chen.json"),
    )
    .unwrap();
    let out = novel(&root, &["spec", "propagate"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("回到卷规划"), "{text}");
    assert!(text.contains("第 35 章"), "{text}");
}

/// `novel` with extra environment variables (a fixed clock, a fail point).
pub fn novel_env(
    cwd: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin());
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run novel")
}

/// A live process id other than a `novel` run: this test process.
#[test]
fn two_propagations_in_the_same_second_are_both_recorded() {
    let (_t, root) = fixture_copy(&[]);
    let clock = [("NOVEL_NOW", "1795325400")];
    assert_eq!(code(&novel_env(&root, &["spec", "snapshot"], &clock)), 0);
    let (_u, updated) = fixture_copy(&["world-update", "character-update"]);
    std::fs::copy(
        updated.join("world/rules.json"),
        root.join("world/rules.json"),
    )
    .unwrap();
    let out = novel_env(&root, &["--json", "spec", "propagate"], &clock);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(code(&novel_env(&root, &["spec", "snapshot"], &clock)), 0);
    std::fs::copy(
        updated.join("characters/active/lu-chen.json"),
        root.join("characters/active/lu-chen.json"),
    )
    .unwrap();
    let out = novel_env(&root, &["--json", "spec", "propagate"], &clock);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(
        json(&out)["data"]["pending"]["id"],
        "spec-propagation-002",
        "{}",
        stdout(&out)
    );
    let cp = read_json(&root.join(".checkpoint.json"));
    let pending = cp["pending_actions"].as_array().unwrap();
    assert_eq!(pending.len(), 2);
    assert_ne!(pending[0]["snapshot_id"], pending[1]["snapshot_id"]);
    // Resolving the newest entry never hands its id out again.
    let out = novel(&root, &["pending", "resolve", "spec-propagation-002"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&novel_env(&root, &["spec", "snapshot"], &clock)), 0);
    let mut lu = read_json(&root.join("characters/active/lu-chen.json"));
    lu["contracts"][0]["rule"] = serde_json::json!("当前修为：金丹中期");
    write_json(&root.join("characters/active/lu-chen.json"), &lu);
    let out = novel_env(&root, &["--json", "spec", "propagate"], &clock);
    assert_eq!(json(&out)["data"]["pending"]["id"], "spec-propagation-003");
}

#[test]
fn a_changed_rule_without_key_phrases_is_warned_about() {
    let (_t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    let mut rules = read_json(&root.join("world/rules.json"));
    let mut added = rules["rules"][3].clone();
    added["id"] = serde_json::json!("W-006");
    added["rule"] = serde_json::json!("如果可以，因为所以");
    rules["rules"].as_array_mut().unwrap().push(added.clone());
    write_json(&root.join("world/rules.json"), &rules);
    let out = novel(&root, &["spec", "propagate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("提示：规则 W-006 的句子没有抽出关键短语"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("W-006 关键短语：（未抽出"),
        "{}",
        stdout(&out)
    );
    // JSON: the same warning in the data.
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    added["id"] = serde_json::json!("W-007");
    added["rule"] = serde_json::json!("以及或者");
    rules["rules"].as_array_mut().unwrap().push(added);
    write_json(&root.join("world/rules.json"), &rules);
    let out = novel(&root, &["--json", "spec", "propagate"]);
    let warnings = &json(&out)["data"]["propagation"]["warnings"];
    assert!(
        warnings[0].as_str().unwrap().contains("W-007"),
        "{warnings}"
    );
}

#[test]
fn key_phrases_are_words_not_fragments() {
    let (_t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    let mut rules = read_json(&root.join("world/rules.json"));
    rules["rules"][3]["rule"] = serde_json::json!("镇北将军府的兵符只能由将军本人调动");
    write_json(&root.join("world/rules.json"), &rules);
    let out = novel(&root, &["--json", "spec", "propagate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    let phrases = &doc["data"]["propagation"]["key_phrases"][0];
    assert_eq!(phrases["rule_id"], "W-004");
    // The new sentence's phrases, then the old one's (丹药每日服用不得超过三枚).
    assert_eq!(
        phrases["phrases"],
        serde_json::json!(["镇北将军府", "兵符", "将军", "丹药", "服用"])
    );
}

#[test]
fn propagate_and_resolve_refuse_while_the_lock_is_held() {
    let (_t, root) = fixture_copy(&[]);
    assert_eq!(code(&novel(&root, &["spec", "snapshot"])), 0);
    let (_u, updated) = fixture_copy(&["world-update"]);
    std::fs::copy(
        updated.join("world/rules.json"),
        root.join("world/rules.json"),
    )
    .unwrap();
    // Another live session holds the lock.
    let other = Alive::new();
    let pid = other.pid().to_string();
    let out = novel(
        &root,
        &[
            "--json",
            "lock",
            "acquire",
            "--chapter",
            "34",
            "--owner-pid",
            &pid,
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let token = json(&out)["data"]["token"].as_str().unwrap().to_string();
    let out = novel(&root, &["spec", "propagate"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("E_LOCKED"), "{err}");
    assert!(err.contains(&format!("进程 {pid}")), "{err}");
    assert!(root.join("state/.spec-snapshot.json").exists());
    let out = novel(&root, &["lock", "release", "--token", &token]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    let out = novel(&root, &["spec", "propagate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = novel(&root, &["--json", "lock", "acquire", "--owner-pid", &pid]);
    let token = json(&out)["data"]["token"].as_str().unwrap().to_string();
    let out = novel(
        &root,
        &["--json", "pending", "resolve", "spec-propagation-001"],
    );
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_LOCKED");
    novel(&root, &["lock", "release", "--token", &token]);
    let out = novel(&root, &["pending", "resolve", "spec-propagation-001"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = novel(&root, &["--json", "lock", "status"]);
    assert_eq!(json(&out)["data"]["state"], "free", "{}", stdout(&out));
}
