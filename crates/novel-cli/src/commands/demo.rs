//! `novel demo [DIR]`: the product in one command. Writes the sample book shipped with the binary
//! (`crates/novel-cli/demo/book`: three chapters of a 都市玄幻 serial through the real pipeline,
//! made by `demo/make-book.sh`) into DIR (a new temporary directory by default), then runs on it
//! what the plugin's skills run: `status`, `next` with its menu, `lint --all`, `check names`
//! and the ChapterWriter packet for the next chapter. Each step is this binary run again, exactly
//! as an author would type it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use novel_store::{io, layout};

use crate::args::GlobalArgs;
use crate::output::{self, CliError, Exit, Report};

/// The sample book: project-relative path and content.
const BOOK: &[(&str, &str)] = &[
    (
        ".checkpoint.json",
        include_str!("../../demo/book/.checkpoint.json"),
    ),
    (
        "ai-blacklist.json",
        include_str!("../../demo/book/ai-blacklist.json"),
    ),
    ("brief.md", include_str!("../../demo/book/brief.md")),
    (
        "chapters/chapter-001.md",
        include_str!("../../demo/book/chapters/chapter-001.md"),
    ),
    (
        "chapters/chapter-002.md",
        include_str!("../../demo/book/chapters/chapter-002.md"),
    ),
    (
        "chapters/chapter-003.md",
        include_str!("../../demo/book/chapters/chapter-003.md"),
    ),
    (
        "characters/active/lin-wanzhou.json",
        include_str!("../../demo/book/characters/active/lin-wanzhou.json"),
    ),
    (
        "characters/active/shen-yan.json",
        include_str!("../../demo/book/characters/active/shen-yan.json"),
    ),
    (
        "characters/active/zhou-zhanggui.json",
        include_str!("../../demo/book/characters/active/zhou-zhanggui.json"),
    ),
    (
        "characters/changelog.md",
        include_str!("../../demo/book/characters/changelog.md"),
    ),
    (
        "characters/relationships.json",
        include_str!("../../demo/book/characters/relationships.json"),
    ),
    (
        "evaluations/chapter-001-eval-secondary.json",
        include_str!("../../demo/book/evaluations/chapter-001-eval-secondary.json"),
    ),
    (
        "evaluations/chapter-001-eval.json",
        include_str!("../../demo/book/evaluations/chapter-001-eval.json"),
    ),
    (
        "evaluations/chapter-002-eval.json",
        include_str!("../../demo/book/evaluations/chapter-002-eval.json"),
    ),
    (
        "evaluations/chapter-003-eval.json",
        include_str!("../../demo/book/evaluations/chapter-003-eval.json"),
    ),
    (
        "foreshadowing/global.json",
        include_str!("../../demo/book/foreshadowing/global.json"),
    ),
    (
        "logs/chapter-001-log.json",
        include_str!("../../demo/book/logs/chapter-001-log.json"),
    ),
    (
        "logs/chapter-002-log.json",
        include_str!("../../demo/book/logs/chapter-002-log.json"),
    ),
    (
        "logs/chapter-003-log.json",
        include_str!("../../demo/book/logs/chapter-003-log.json"),
    ),
    ("novel.json", include_str!("../../demo/book/novel.json")),
    (
        "state/changelog.jsonl",
        include_str!("../../demo/book/state/changelog.jsonl"),
    ),
    (
        "state/current-state.json",
        include_str!("../../demo/book/state/current-state.json"),
    ),
    (
        "storylines/main_arc/memory.md",
        include_str!("../../demo/book/storylines/main_arc/memory.md"),
    ),
    (
        "storylines/storyline-spec.json",
        include_str!("../../demo/book/storylines/storyline-spec.json"),
    ),
    (
        "storylines/storylines.json",
        include_str!("../../demo/book/storylines/storylines.json"),
    ),
    (
        "style-profile.json",
        include_str!("../../demo/book/style-profile.json"),
    ),
    (
        "summaries/chapter-001-summary.md",
        include_str!("../../demo/book/summaries/chapter-001-summary.md"),
    ),
    (
        "summaries/chapter-002-summary.md",
        include_str!("../../demo/book/summaries/chapter-002-summary.md"),
    ),
    (
        "summaries/chapter-003-summary.md",
        include_str!("../../demo/book/summaries/chapter-003-summary.md"),
    ),
    (
        "volumes/vol-01/foreshadowing.json",
        include_str!("../../demo/book/volumes/vol-01/foreshadowing.json"),
    ),
    (
        "volumes/vol-01/outline.md",
        include_str!("../../demo/book/volumes/vol-01/outline.md"),
    ),
    (
        "volumes/vol-01/storyline-schedule.json",
        include_str!("../../demo/book/volumes/vol-01/storyline-schedule.json"),
    ),
    (
        "world/changelog.md",
        include_str!("../../demo/book/world/changelog.md"),
    ),
    (
        "world/geography.md",
        include_str!("../../demo/book/world/geography.md"),
    ),
    (
        "world/history.md",
        include_str!("../../demo/book/world/history.md"),
    ),
    (
        "world/rules.json",
        include_str!("../../demo/book/world/rules.json"),
    ),
    (
        "world/rules.md",
        include_str!("../../demo/book/world/rules.md"),
    ),
];

/// The steps shown, as an author would type them (after `--project DIR`).
const STEPS: &[&[&str]] = &[
    &["status"],
    &["next"],
    &["lint", "--all"],
    &["check", "names", "--chapters", "1..3"],
    &["context", "chapter-writer", "--chapter", "4"],
];

/// How many lines of the (long) ChapterWriter packet are shown.
const PACKET_LINES: usize = 28;

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// 示例书写到这个目录（须不存在或为空；默认新建一个临时目录）
    #[arg(value_name = "目录", help_heading = "参数")]
    pub dir: Option<PathBuf>,
}

/// `novel demo`'s `--json` data: where the book went and the steps shown.
#[derive(Serialize)]
struct DemoData<'a> {
    dir: &'a Path,
    files: usize,
    steps: &'static [&'static [&'static str]],
}

pub fn run(global: &GlobalArgs, args: &DemoArgs) -> Result<Report, CliError> {
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!(
            "novel-demo-{}-{}",
            std::process::id(),
            novel_store::time::now_secs()
        )),
    };
    write_book(&dir)?;
    let dir = dir
        .canonicalize()
        .map_err(|e| novel_store::StoreError::io(&dir, e))?;
    let data = DemoData {
        dir: &dir,
        files: BOOK.len(),
        steps: STEPS,
    };
    if global.json {
        return Report::new(&data, String::new());
    }
    output::out(&format!(
        "示例书《雾港夜行》（3 章，快速起步的试写刚完成）已写到 {}\n\n",
        dir.display()
    ));
    for step in STEPS {
        show_step(&dir, step);
    }
    Report::new(
        &data,
        format!(
            "\n以上每一步都可以在 {} 里自己再跑一遍（novel help 查看全部命令）。\n在 Claude Code 里使用插件：claude --plugin-dir <本仓库目录>，然后输入 /novel:start。\n",
            dir.display()
        ),
    )
}

/// The book's directories (the layout of `novel init`) and files; refuses a directory in use.
fn write_book(dir: &Path) -> Result<(), CliError> {
    if let Some(reason) = novel_store::guard::before_write(dir, None).reason() {
        return Err(CliError::new(
            "E_OUTPUT_TARGET",
            format!("示例书不能写到 {}：{reason}", dir.display()),
            "换一个不在小说项目受保护位置的目录，或不带参数运行（写到新的临时目录）",
            Exit::Usage,
        ));
    }
    let in_use = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
    if in_use || dir.is_file() {
        return Err(CliError::new(
            "E_PROJECT_EXISTS",
            format!("{} 已存在且不是空目录，示例书不会覆盖它", dir.display()),
            "换一个不存在的目录，或不带参数运行（写到新的临时目录）",
            Exit::Usage,
        ));
    }
    for d in layout::DIRS {
        io::create_dir_all(&dir.join(d))?;
    }
    for (rel, text) in BOOK {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            io::create_dir_all(parent)?;
        }
        io::write_atomic(&path, text.as_bytes())?;
    }
    Ok(())
}

/// Runs one step with this same binary and shows its output (stdout, then stderr).
fn show_step(dir: &Path, step: &[&str]) {
    output::out(&format!("$ novel {}\n", step.join(" ")));
    let ran = std::env::current_exe().and_then(|exe| {
        Command::new(exe)
            .arg("--project")
            .arg(dir)
            .args(step)
            .output()
    });
    match ran {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = stdout.lines().collect();
            let shown = if step[0] == "context" {
                PACKET_LINES
            } else {
                lines.len()
            };
            for line in lines.iter().take(shown) {
                output::out(&format!("{line}\n"));
            }
            if lines.len() > shown {
                output::out(&format!(
                    "……（资料包共 {} 行，只显示前 {shown} 行）\n",
                    lines.len()
                ));
            }
            output::err(&String::from_utf8_lossy(&out.stderr));
        }
        Err(e) => output::err(&format!("无法运行：{e}\n")),
    }
    output::out("\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of demo/book is in BOOK (and nothing else), so the two cannot drift apart.
    #[test]
    fn the_embedded_book_is_the_whole_demo_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/book");
        let mut on_disk = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    on_disk.push(
                        p.strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<String> = BOOK.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(embedded, on_disk);
    }
}
