//! `novel blacklist add|remove|whitelist`: PRD §7 黑名单维护 on the project's
//! `ai-blacklist.json` — duplicates (also full-width variants) refused, judge suggestions need
//! evidence, unknown keys survive, the file stays schema-valid, lint sees the change.

use serde_json::json;

use crate::support::*;
use crate::test_lint::write_text;

fn entries_with(root: &std::path::Path, phrase: &str) -> Vec<serde_json::Value> {
    read_json(&root.join("ai-blacklist.json"))["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["phrase"] == phrase)
        .cloned()
        .collect()
}

#[test]
fn add_keeps_unknown_keys_and_refuses_duplicates() {
    let (_t, root) = new_project();
    let path = root.join("ai-blacklist.json");
    let mut list = read_json(&path);
    list["x-curator"] = json!("作者");
    list["entries"][0]["x-note"] = json!("保留我");
    write_json(&path, &list);
    let before = list["entries"].as_array().unwrap().len();

    let out = novel(
        &root,
        &[
            "--json",
            "blacklist",
            "add",
            "灵气翻涌",
            "--category",
            "descriptions",
            "--narration-only",
            "--replacement",
            "写灵气带来的具体变化",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["command"], "blacklist add");
    assert_eq!(doc["data"]["entries"], before + 1);
    let list = read_json(&path);
    assert_eq!(list["x-curator"], "作者");
    assert_eq!(list["entries"][0]["x-note"], "保留我");
    assert_eq!(
        entries_with(&root, "灵气翻涌"),
        [
            json!({"phrase": "灵气翻涌", "category": "descriptions", "narration_only": true,
                "replacements": ["写灵气带来的具体变化"], "source": "user"})
        ]
    );
    assert_eq!(code(&novel(&root, &["validate", "ai-blacklist.json"])), 0);

    // The same phrase again, and a width variant of a listed one, are refused.
    for phrase in ["灵气翻涌", "或许,这就是"] {
        let out = novel(
            &root,
            &[
                "--json",
                "blacklist",
                "add",
                phrase,
                "--category",
                "summaries",
            ],
        );
        assert_eq!(code(&out), 2, "{phrase}");
        assert_eq!(json(&out)["error"]["code"], "E_DUPLICATE", "{phrase}");
    }
    let out = novel(
        &root,
        &["blacklist", "add", "或许,这就是", "--category", "summaries"],
    );
    assert!(
        stderr(&out).contains("已有写法「或许，这就是」"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        read_json(&path)["entries"].as_array().unwrap().len(),
        before + 1
    );
}

#[test]
fn judge_suggestions_need_evidence() {
    let (_t, root) = new_project();
    let out = novel(
        &root,
        &[
            "--json",
            "blacklist",
            "add",
            "眸光潋滟",
            "--category",
            "body_language",
            "--source",
            "judge",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        json(&out)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("证据")
    );
    assert!(entries_with(&root, "眸光潋滟").is_empty());

    let out = novel(
        &root,
        &[
            "blacklist",
            "add",
            "眸光潋滟",
            "--category",
            "body_language",
            "--source",
            "judge",
            "--evidence",
            "第 12、15、19 章各出现一次：她眸光潋滟地看着他",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let e = &entries_with(&root, "眸光潋滟")[0];
    assert_eq!(e["source"], "judge");
    assert!(e["evidence"].as_str().unwrap().starts_with("第 12"));
}

#[test]
fn categories_must_exist_or_be_named() {
    let (_t, root) = new_project();
    let out = novel(
        &root,
        &[
            "--json",
            "blacklist",
            "add",
            "系统提示音响起",
            "--category",
            "system_tells",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(
        json(&out)["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("body_language")
    );
    let out = novel(
        &root,
        &[
            "blacklist",
            "add",
            "系统提示音响起",
            "--category",
            "system_tells",
            "--category-name",
            "系统流套话",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        read_json(&root.join("ai-blacklist.json"))["categories"]["system_tells"],
        "系统流套话"
    );
}

#[test]
fn remove_and_whitelist_change_what_lint_counts() {
    let (_t, root) = new_project();
    write_text(
        &root,
        "chapters/chapter-001.md",
        "她弱不禁风，他不禁笑了。\n",
    );
    let lint = |root: &std::path::Path| {
        json(&novel(root, &["--json", "lint", "--chapter", "1"]))["data"]["files"][0]["summary"]["blacklist"]["hits"]
            .as_u64()
            .unwrap()
    };
    // 不禁 is on the shipped list (issue 39); the shipped whitelist protects 弱不禁风.
    assert_eq!(lint(&root), 1);
    let out = novel(&root, &["--json", "blacklist", "remove", "不禁"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(lint(&root), 0);
    let out = novel(
        &root,
        &["blacklist", "add", "不禁", "--category", "emotions"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(lint(&root), 1);

    let out = novel(&root, &["blacklist", "whitelist", "--remove", "弱不禁风"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(lint(&root), 2);

    // Whitelisting the longer phrase protects that context only.
    let out = novel(&root, &["blacklist", "whitelist", "弱不禁风"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(lint(&root), 1);
    let out = novel(&root, &["--json", "blacklist", "whitelist", "弱不禁风"]);
    assert_eq!(json(&out)["error"]["code"], "E_DUPLICATE");

    // Removing the phrase stops it counting anywhere.
    let out = novel(&root, &["--json", "blacklist", "remove", "不禁"]);
    assert_eq!(code(&out), 0);
    assert_eq!(json(&out)["command"], "blacklist remove");
    assert_eq!(lint(&root), 0);
    let out = novel(&root, &["--json", "blacklist", "remove", "不禁"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_NOT_FOUND");
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn a_phrase_needs_two_characters_and_some_text() {
    let (_t, root) = new_project();
    // (phrase, accepted)
    let cases = [
        ("的", false),
        ("  的 ", false),
        ("Ａ", false),
        ("，。", false),
        ("……", false),
        ("——", false),
        ("AI", true),
        ("的话", true),
    ];
    for (phrase, ok) in cases {
        let out = novel(
            &root,
            &[
                "--json",
                "blacklist",
                "add",
                phrase,
                "--category",
                "emotions",
            ],
        );
        let doc = json(&out);
        if ok {
            assert_eq!(code(&out), 0, "{phrase}: {doc}");
        } else {
            assert_eq!(code(&out), 2, "{phrase}: {doc}");
            assert_eq!(doc["error"]["code"], "E_USAGE", "{phrase}");
        }
        let out = novel(&root, &["--json", "blacklist", "whitelist", phrase]);
        assert_eq!(code(&out) == 0, ok, "whitelist {phrase}");
    }
    // Removing stays possible for whatever an older list holds.
    let path = root.join("ai-blacklist.json");
    let mut list = read_json(&path);
    list["entries"]
        .as_array_mut()
        .unwrap()
        .push(json!({"phrase": "的", "category": "emotions"}));
    write_json(&path, &list);
    assert_eq!(code(&novel(&root, &["blacklist", "remove", "的"])), 0);
}

#[test]
fn whitelisted_phrase_cannot_be_added() {
    let (_t, root) = new_project();
    assert_eq!(
        code(&novel(&root, &["blacklist", "whitelist", "灵气翻涌"])),
        0
    );
    let out = novel(
        &root,
        &[
            "--json",
            "blacklist",
            "add",
            "灵气翻涌",
            "--category",
            "descriptions",
        ],
    );
    assert_eq!(json(&out)["error"]["code"], "E_DUPLICATE");
    assert!(
        json(&out)["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--remove")
    );
}

/// An existing project's list brought up to the shipped seed: dropped seed phrases go, new
/// ones come, the author's entries and whitelist stay; the old file is backed up.
#[test]
fn upgrade_brings_an_old_list_to_the_current_seed() {
    let (_t, root) = new_project();
    let path = root.join("ai-blacklist.json");
    edit_json(&path, |b| {
        let entries = b["entries"].as_array_mut().unwrap();
        let first = entries.remove(0)["phrase"].as_str().unwrap().to_string();
        entries.push(
            serde_json::json!({"phrase": "沉声道", "category": "dialogue_tags", "source": "seed"}),
        );
        entries.push(
            serde_json::json!({"phrase": "不由得", "category": "modifiers", "source": "user"}),
        );
        b["x-removed"] = serde_json::json!(first);
    });
    let first = read_json(&path)["x-removed"].as_str().unwrap().to_string();
    let before = std::fs::read_to_string(&path).unwrap();
    let (code, dry) = run_json(&root, &["blacklist", "upgrade", "--dry-run"]);
    assert_eq!(code, 0, "{dry}");
    assert_eq!(
        dry["data"]["upgrade"]["removed"],
        serde_json::json!(["沉声道"])
    );
    assert_eq!(dry["data"]["upgrade"]["added"], serde_json::json!([first]));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "dry run wrote"
    );
    let (code, done) = run_json(&root, &["blacklist", "upgrade"]);
    assert_eq!(code, 0, "{done}");
    let after = read_json(&path);
    let phrases: Vec<&str> = after["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["phrase"].as_str().unwrap())
        .collect();
    assert!(phrases.contains(&first.as_str()) && phrases.contains(&"不由得"));
    assert!(!phrases.contains(&"沉声道"));
    assert_eq!(after["x-removed"], first.as_str(), "unknown keys kept");
    let backup = done["data"]["backup"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(root.join(backup)).unwrap(), before);
    let (_, again) = run_json(&root, &["blacklist", "upgrade"]);
    assert_eq!(again["data"]["written"], false);
}

/// Two sessions never lose each other's blacklist edits: an edit waits for nobody and writes
/// nothing while another live session holds the project lock; a dry run only reads.
#[test]
fn edits_take_the_project_lock() {
    let (_t, root) = new_project();
    let path = root.join("ai-blacklist.json");
    let before = std::fs::read(&path).unwrap();
    let other = Alive::new();
    let pid = other.pid().to_string();
    let out = novel(&root, &["--json", "lock", "acquire", "--owner-pid", &pid]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    for args in [
        &[
            "--json",
            "blacklist",
            "add",
            "眉宇间尽是",
            "--category",
            "descriptions",
        ][..],
        &["--json", "blacklist", "whitelist", "眸底"][..],
        &["--json", "blacklist", "upgrade"][..],
    ] {
        let out = novel(&root, args);
        assert_eq!(code(&out), 3, "{args:?}: {}", stdout(&out));
        assert_eq!(json(&out)["error"]["code"], "E_LOCKED", "{args:?}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{args:?}: nothing written"
        );
    }
    let out = novel(&root, &["--json", "blacklist", "upgrade", "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}
