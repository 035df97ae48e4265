//! The CLI frame under bad input: `--json` always yields exactly one JSON document, usage
//! errors are Chinese and name the argument, the envelope names the nested command.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use crate::support::*;

/// `novel` with raw (possibly non-UTF-8) arguments.
fn novel_os(cwd: &std::path::Path, args: &[&OsStr]) -> std::process::Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .output()
        .expect("run novel")
}

#[test]
fn json_mode_prints_one_document_for_every_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = OsStr::from_bytes(b"\xff");
    let bad_name = OsStr::from_bytes(b"ch\xffx");
    let s = |x: &'static str| OsStr::new(x);
    // (arguments, exit code, envelope command, words the message must contain)
    let cases: Vec<(Vec<&OsStr>, i32, &str, Vec<&str>)> = vec![
        (
            vec![s("--json"), s("frobnicate")],
            2,
            "frobnicate",
            vec!["没有这个命令", "frobnicate"],
        ),
        (
            vec![s("--json"), s("valdate")],
            2,
            "valdate",
            vec!["validate"],
        ),
        (
            vec![s("--json"), s("status"), s("--frob")],
            2,
            "status",
            vec!["不认识的参数", "--frob"],
        ),
        (
            vec![s("--json"), s("chapter"), s("fail"), s("1")],
            2,
            "chapter fail",
            vec!["缺少必需的参数", "--reason"],
        ),
        (
            vec![s("--json"), s("chapter"), s("commit")],
            2,
            "chapter commit",
            vec!["缺少必需的参数", "<章>"],
        ),
        (
            vec![s("--json"), s("chapter"), s("gate"), s("四十八")],
            2,
            "chapter gate",
            vec!["<章>", "四十八", "整数"],
        ),
        (
            vec![s("--json"), s("chapter"), s("begin"), s("99999999999")],
            2,
            "chapter begin",
            vec!["<章>", "超出"],
        ),
        (
            vec![s("--json"), s("init"), s("--title")],
            2,
            "init",
            vec!["--title", "缺少取值"],
        ),
        (
            vec![s("--json"), s("--json"), s("status")],
            2,
            "status",
            vec!["--json", "只能写一次"],
        ),
        (
            vec![s("--json=maybe"), s("status")],
            2,
            "status",
            vec!["--json", "maybe"],
        ),
        (
            vec![s("--json"), s("status"), bad],
            2,
            "status",
            vec!["UTF-8"],
        ),
        (vec![s("--json"), bad], 2, "\u{fffd}", vec!["UTF-8"]),
        (
            vec![s("--json"), s("lock"), s("release"), s("--token"), bad_name],
            2,
            "lock release",
            vec!["UTF-8"],
        ),
        (
            vec![s("--json"), s("chapter"), s("frob")],
            2,
            "chapter",
            vec!["frob"],
        ),
        // Not errors, but still exactly one document.
        (
            vec![s("--json=true"), s("status")],
            2,
            "status",
            vec!["不是小说项目"],
        ),
        (
            vec![s("status"), s("--json=yes")],
            2,
            "status",
            vec!["不是小说项目"],
        ),
        (
            vec![s("--json=true"), s("chapter"), s("commit"), s("--help")],
            0,
            "chapter commit",
            vec![],
        ),
        (
            vec![s("--json"), s("context"), s("synth"), s("--help")],
            0,
            "context synth",
            vec![],
        ),
    ];
    for (args, want_code, want_command, words) in cases {
        let out = novel_os(tmp.path(), &args);
        let shown: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
        assert_eq!(
            code(&out),
            want_code,
            "{shown:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("panicked"),
            "{shown:?}: {}",
            stderr(&out)
        );
        let doc = json(&out);
        assert_eq!(doc["command"], want_command, "{shown:?}: {doc}");
        assert_eq!(doc["ok"], want_code == 0, "{shown:?}: {doc}");
        if want_code != 0 {
            let message = doc["error"]["message"].as_str().unwrap();
            assert!(
                doc["error"]["code"].as_str().unwrap().starts_with("E_"),
                "{doc}"
            );
            assert!(!doc["error"]["hint"].as_str().unwrap().is_empty(), "{doc}");
            for w in &words {
                assert!(message.contains(w), "{shown:?}: want {w:?} in {message}");
            }
            // clap's English must not leak through.
            for english in [
                "the following",
                "required arguments",
                "unexpected",
                "invalid value",
                "error:",
            ] {
                assert!(!message.contains(english), "{shown:?}: {message}");
            }
        }
    }
}

#[test]
fn json_false_means_human_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = novel(tmp.path(), &["--json=false", "status"]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(stderr(&out).contains("E_NOT_PROJECT"), "{}", stderr(&out));
    // A real project with `--json=true`: the same envelope as `--json`.
    let (_t, root) = new_project();
    let a = json(&novel(&root, &["--json=true", "validate"]));
    let b = json(&novel(&root, &["--json", "validate"]));
    assert_eq!(a, b);
    assert_eq!(a["ok"], true);
}

#[test]
fn human_usage_errors_are_chinese_and_name_the_argument() {
    let tmp = tempfile::tempdir().unwrap();
    let out = novel(tmp.path(), &["chapter", "fail", "1"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("缺少必需的参数：--reason <原因>") && err.contains("novel help chapter fail"),
        "{err}"
    );
}

/// A blank `--reason` (the author reads it later) and a malformed chapter range are usage
/// errors of every command that takes them, caught before anything is read or written.
#[test]
fn blank_reasons_and_bad_ranges_are_usage_errors() {
    let (_t, root) = new_project();
    for args in [
        &["--json", "ops", "skip", "--chapter", "1", "--reason", "  "][..],
        &[
            "--json", "chapter", "fail", "1", "--token", "t", "--reason", "",
        ][..],
        &["--json", "check", "names", "--chapters", "3..x"][..],
        &["--json", "check", "names", "--chapters", "5..2"][..],
        &["--json", "check", "leak", "--chapter", "100000"][..],
    ] {
        let out = novel(&root, args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stdout(&out));
        assert_eq!(json(&out)["error"]["code"], "E_USAGE", "{args:?}");
    }
}
