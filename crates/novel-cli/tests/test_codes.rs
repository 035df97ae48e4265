//! One table of codes (`novel_core::codes`): every `E_…` the sources can emit is in it, every
//! row is used somewhere, and `docs/errors.md` is generated from it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use novel_core::codes::{CODES, markdown};

use crate::test_client::repo;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `"E_…"` string literal in the crates' sources (tests inside src included: they name
/// real codes) and in the wrapper script.
fn used_codes() -> BTreeSet<String> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(repo().join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    files.push(repo().join("scripts/novel"));
    let mut used = BTreeSet::new();
    for file in files {
        if file.ends_with("codes.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, _) in text.match_indices("\"E_") {
            let code: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if text[i + 1 + code.len()..].starts_with('"') && code.len() > 2 {
                used.insert(code);
            }
        }
    }
    used
}

#[test]
fn every_code_used_is_documented_and_every_documented_code_is_used() {
    let used = used_codes();
    let listed: BTreeSet<String> = CODES.iter().map(|c| c.code.to_string()).collect();
    let undocumented: Vec<_> = used.difference(&listed).collect();
    let unused: Vec<_> = listed.difference(&used).collect();
    assert!(
        undocumented.is_empty(),
        "codes used in the sources but missing from crates/novel-core/src/codes.rs: {undocumented:?}"
    );
    assert!(
        unused.is_empty(),
        "codes in crates/novel-core/src/codes.rs that nothing emits: {unused:?}"
    );
}

#[test]
fn errors_doc_is_generated_from_the_table() {
    let path = repo().join("docs/errors.md");
    let want = markdown();
    if std::env::var_os("NOVEL_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/errors.md is not what crates/novel-core/src/codes.rs generates; run \
         NOVEL_BLESS=1 cargo test -p novel-cli --test runner errors_doc"
    );
}
