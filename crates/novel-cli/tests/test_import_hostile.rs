//! `novel import` on hostile or odd input (issue 29): every case is a clear error or a correct
//! import — no panic, nothing half-written, memory bounded — and no text goes missing.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn import_json(cwd: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json", "import"];
    full.extend_from_slice(args);
    let out = novel(cwd, &full);
    (code(&out), json(&out))
}

fn refused(cwd: &Path, file: &str, code_wanted: &str) -> Value {
    let (c, doc) = import_json(cwd, &[file, "--into", "book"]);
    assert_eq!(
        doc["error"]["code"].as_str(),
        Some(code_wanted),
        "{file}: {doc}"
    );
    assert!(c == 1 || c == 2, "{file}: exit {c}");
    assert!(!cwd.join("book").exists(), "{file}: nothing may be written");
    doc
}

#[test]
fn chapter_zero_is_an_extra_and_keeps_its_text() {
    let tmp = tempfile::tempdir().unwrap();
    for head in ["第零章 楔子", "第0章"] {
        let text = format!("{head}\n　　那年冬天。\n第1章 起\n　　雨下了。\n");
        std::fs::write(tmp.path().join("书.txt"), &text).unwrap();
        let into = format!("book-{}", head.len());
        let (c, doc) = import_json(tmp.path(), &["书.txt", "--into", &into]);
        assert_eq!(c, 0, "{doc}");
        assert_eq!(doc["data"]["imported"], json!([1]));
        assert_eq!(doc["data"]["skipped"], json!([]));
        let extra = &doc["data"]["rows"][0];
        assert_eq!(extra["kind"], "extra", "{doc}");
        let file = tmp
            .path()
            .join(&into)
            .join(extra["target"].as_str().unwrap());
        let kept = std::fs::read_to_string(file).unwrap();
        assert!(
            kept.contains(&format!("# {head}\n\n　　那年冬天。\n")),
            "{kept}"
        );
    }
}

#[test]
fn numbers_a_project_cannot_hold_or_read_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("大.txt"),
        "第99999章 甲\n甲。\n第100000章 乙\n乙。\n",
    )
    .unwrap();
    let (c, doc) = import_json(
        tmp.path(),
        &["大.txt", "--into", "book", "--start", "99999"],
    );
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_NUMBER")),
        "{doc}"
    );
    assert!(!tmp.path().join("book").exists());
    for (i, head) in ["第4294967296章 溢出", "第一亿章 太多", "第-1章 负数"]
        .iter()
        .enumerate()
    {
        let name = format!("坏{i}.txt");
        std::fs::write(
            tmp.path().join(&name),
            format!("第1章 起\n甲。\n{head}\n乙。\n"),
        )
        .unwrap();
        let doc = refused(tmp.path(), &name, "E_IMPORT_HEADING");
        let p = &doc["data"]["problems"][0];
        assert_eq!(
            (p["kind"].as_str(), p["line"].as_u64()),
            (Some("unreadable"), Some(3)),
            "{doc}"
        );
    }
}

#[test]
fn binary_garbage_nul_bytes_and_empty_files_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    std::fs::write(tmp.path().join("random.txt"), &random).unwrap();
    refused(tmp.path(), "random.txt", "E_IMPORT_ENCODING");
    std::fs::write(tmp.path().join("nul.txt"), vec![0u8; 10_000]).unwrap();
    let doc = refused(tmp.path(), "nul.txt", "E_IMPORT_ENCODING");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("控制字符"),
        "{doc}"
    );
    std::fs::write(tmp.path().join("empty.txt"), b"").unwrap();
    let doc = refused(tmp.path(), "empty.txt", "E_IMPORT_NO_CHAPTERS");
    assert!(
        doc["error"]["message"].as_str().unwrap().contains("空的"),
        "{doc}"
    );
    // A file with NUL bytes inside a real book is refused too, with where.
    let mut book = "第1章 起\n甲。\n".as_bytes().to_vec();
    book.extend_from_slice(b"\0\0\n");
    std::fs::write(tmp.path().join("nul2.txt"), &book).unwrap();
    let doc = refused(tmp.path(), "nul2.txt", "E_IMPORT_ENCODING");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("第 3 行第 1 列"),
        "{doc}"
    );
}

#[cfg(unix)]
#[test]
fn devices_pipes_and_huge_files_are_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    // /dev/zero would be read until memory runs out; a FIFO with no writer would block.
    let doc = refused(tmp.path(), "/dev/zero", "E_IMPORT_SOURCE");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("不是普通文件"),
        "{doc}"
    );
    let fifo = tmp.path().join("pipe.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    refused(tmp.path(), "pipe.txt", "E_IMPORT_SOURCE");
    // 200 MB (sparse: no disk is used) is over the limit: refused by its size, unread.
    let big = std::fs::File::create(tmp.path().join("big.txt")).unwrap();
    big.set_len(200 << 20).unwrap();
    let doc = refused(tmp.path(), "big.txt", "E_IMPORT_SOURCE");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("209715200 字节"),
        "{doc}"
    );
    assert!(
        started.elapsed().as_secs() < 30,
        "refusals must not read the input"
    );
}

#[test]
fn a_hundred_thousand_tiny_chapters_and_a_heading_on_every_line() {
    let tmp = tempfile::tempdir().unwrap();
    let many: String = (1..=100_000).map(|i| format!("第{i}章\n字。\n")).collect();
    std::fs::write(tmp.path().join("多.txt"), &many).unwrap();
    let doc = refused(tmp.path(), "多.txt", "E_IMPORT_NUMBER");
    assert_eq!(doc["data"]["rows"].as_array().unwrap().len(), 100_000);
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("第 100000 章"),
        "{doc}"
    );
    // A heading on every line and no text: empty chapters, refused (not a table of contents:
    // nothing comes again later).
    let heads: String = (1..=5_000).map(|i| format!("第{i}章 标题\n")).collect();
    std::fs::write(tmp.path().join("标题.txt"), &heads).unwrap();
    let doc = refused(tmp.path(), "标题.txt", "E_IMPORT_EMPTY");
    assert_eq!(doc["data"]["problems"].as_array().unwrap().len(), 5_000);
}
