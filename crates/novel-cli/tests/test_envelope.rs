//! `novel --json <anything>` prints exactly one JSON document; exit codes follow DESIGN.md.

use crate::support::*;

#[test]
fn json_envelope_for_every_kind_of_invocation() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], i32, bool)] = &[
        (&["--json", "--version"], 0, true),
        (&["--json"], 0, true),
        (&["--json", "help"], 0, true),
        (&["--json", "help", "validate"], 0, true),
        (&["--json", "help", "no-such"], 2, false),
        (&["--json", "no-such-command"], 2, false),
        (&["--json", "validate", "--no-such-flag"], 2, false),
        (&["--json", "validate"], 2, false),
        (&["validate", "--json"], 2, false),
        (&["--json", "init", "--title"], 2, false),
        (&["--json", "validate", "missing.json"], 2, false),
        (&["--json", "--project", "nowhere", "validate"], 2, false),
    ];
    for (args, want_code, want_ok) in cases {
        let out = novel(tmp.path(), args);
        assert_eq!(
            code(&out),
            *want_code,
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let doc = json(&out);
        assert_eq!(doc["ok"], *want_ok, "{args:?}: {doc}");
        assert!(doc["command"].is_string(), "{args:?}: {doc}");
        if !want_ok {
            let code = doc["error"]["code"].as_str().unwrap();
            assert!(code.starts_with("E_"), "{args:?}: {doc}");
            assert!(!doc["error"]["message"].as_str().unwrap().is_empty());
            assert!(!doc["error"]["hint"].as_str().unwrap().is_empty());
        }
    }
}

#[test]
fn not_a_project_is_exit_2_with_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let out = novel(tmp.path(), &["validate"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("E_NOT_PROJECT") && err.contains("novel init"),
        "{err}"
    );
    let doc = json(&novel(tmp.path(), &["--json", "validate"]));
    assert_eq!(doc["error"]["code"], "E_NOT_PROJECT");
    assert_eq!(doc["command"], "validate");
}

#[test]
fn version_and_help_are_chinese() {
    let tmp = tempfile::tempdir().unwrap();
    let out = novel(tmp.path(), &["--version"]);
    assert_eq!(
        stdout(&out).trim(),
        format!("novel {}", env!("CARGO_PKG_VERSION"))
    );
    let help = stdout(&novel(tmp.path(), &["help"]));
    assert!(
        help.contains("用法") && help.contains("命令") && help.contains("校验"),
        "{help}"
    );
    for sub in ["init", "validate", "help"] {
        let out = novel(tmp.path(), &["help", sub]);
        assert_eq!(code(&out), 0, "help {sub}");
        let text = stdout(&out);
        assert!(
            text.contains("用法") && text.contains("选项"),
            "help {sub}: {text}"
        );
        assert!(
            !text.contains("Usage:") && !text.contains("Options:"),
            "help {sub}: {text}"
        );
        // `novel SUB --help` shows the same text.
        assert_eq!(
            stdout(&novel(tmp.path(), &[sub, "--help"])),
            text,
            "{sub} --help"
        );
    }
}

/// An error about a place in a file says where, as a finding does: `error.file`, and the line
/// and column (in characters) of a JSON syntax error.
#[test]
fn an_error_in_a_file_names_its_place() {
    let (_t, root) = new_project();
    let settings = std::fs::read(root.join("novel.json")).unwrap();
    std::fs::write(root.join("novel.json"), "{\n  \"备注\": ,\n}").unwrap();
    let out = novel(&root, &["--json", "lock", "acquire"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let doc = json(&out);
    let e = &doc["error"];
    assert_eq!(e["code"], "E_JSON");
    assert!(e["file"].as_str().unwrap().ends_with("novel.json"), "{doc}");
    // Line 2, column 9: after the quotes, colon and space of "备注" (each counted once).
    assert_eq!(
        (e["line"].as_u64(), e["col"].as_u64()),
        (Some(2), Some(9)),
        "{doc}"
    );
    // An error about no file has no place.
    std::fs::write(root.join("novel.json"), settings).unwrap();
    let out = novel(&root, &["--json", "chapter", "begin", "99999"]);
    assert!(
        json(&out)["error"].get("file").is_none(),
        "{}",
        stdout(&out)
    );
}
