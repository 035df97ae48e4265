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
