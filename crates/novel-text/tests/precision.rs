//! The precision corpus of `tests/fixtures/precision/` (see its README) against the shipped
//! blacklist template: whole chapters of public-domain human prose — classical (第N回) and
//! modern vernacular — must pass the lint, and the AI-style samples must still fail it.

use std::path::{Path, PathBuf};

use novel_core::model::AiBlacklist;
use novel_core::model::settings::LintThresholds;
use novel_text::lint::Linter;
use novel_text::segment::Document;

fn corpus(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/precision");
    let mut files = Vec::new();
    let mut dirs = vec![root.join(dir)];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The files of `dir` that fail the lint, each with why.
fn failing(dir: &str) -> (usize, Vec<String>) {
    let list: AiBlacklist =
        serde_json::from_str(include_str!("../../../templates/ai-blacklist.json")).unwrap();
    let linter = Linter::new(&list, &[], LintThresholds::default()).unwrap();
    let files = corpus(dir);
    let failed = files
        .iter()
        .filter_map(|f| {
            let r = linter.lint(&Document::new(&std::fs::read_to_string(f).unwrap()));
            (!r.summary.pass).then(|| format!("{}: {:?}", f.display(), r.summary.failures))
        })
        .collect();
    (files.len(), failed)
}

#[test]
fn human_chapters_pass_the_lint() {
    let (total, failed) = failing("human");
    // 阿Q正传 (9 chapters), three 回 of 水浒传 with long runs of sentences opening with one
    // name (李逵, 呼延灼), one 回 of 红楼梦.
    assert_eq!(total, 13);
    assert!(failed.len() * 100 <= total * 5, "{failed:#?}");
}

#[test]
fn ai_style_samples_still_fail_the_lint() {
    let (total, failed) = failing("ai");
    assert_eq!(total, 20);
    assert!(failed.len() * 100 >= total * 95, "only {failed:#?}");
}
