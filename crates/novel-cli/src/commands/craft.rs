//! `novel check craft [FILE…] [--chapter N | --all]`: the craft an editor pushes a chapter for
//! (`novel_text::craft`): a problem in the opening, a hook at the end and its type, the
//! previous hook taken up, hook types that vary, 注水, and the rhythm tells over their caps
//! (`novel.json` → `craft`). Findings in `lint`'s shape; exit 1 when a chapter fails.
//!
//! A chapter is read with the chapters before it: the committed ones before a chapter of the
//! project (their endings, hook types, image fields and storylines), or the files given before
//! it on the command line. The rules are `novel_text::craft`'s; this module finds the history
//! and renders.

use std::collections::BTreeMap;

use clap::Args;
use serde::Serialize;

use novel_core::diagnostic::Diagnostic;
use novel_core::model::settings::CraftThresholds;
use novel_store::select::Input;
use novel_store::{Project, io, layout, settings};
use novel_text::craft::{self, CraftSummary, History, Trace};
use novel_text::segment::Document;

use crate::args::{ChapterSelection, GlobalArgs};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Args)]
#[command(
    after_help = "规则（门槛在 novel.json 的 craft 里，次数上限按每 3000 字计、随本章字数缩放，用一次永远不算超）：craft/opening（错误）开篇前 300 字里没有本章的问题——没有人想要什么、没有什么不对，只有景物、时间或交代；craft/hook（错误）章末没有钩子：停在总结、感悟、升华上，或事情都收住了（睡下、松了口气）；「且听下回分解」算钩子；有钩子时给出类型：悬念、危机、反转、期待、情绪；craft/surprise、craft/simile、craft/thought-opener（错误）叙述中的惊讶标记（仿佛、忽然、突然、竟然、猛地、不禁……）、比喻（像、仿佛、如同、宛如……）、「他知道，」「她想，」式句首超过上限；craft/takeup（提醒）上一章结尾的人、物、事在本章开头 1000 字里一个也没接（换了故事线的章不查）；craft/hook-variety（提醒）最近几章的钩子都是同一类；craft/image-field（提醒）最近几章都浸在同一类意象里（月光、血、雾……）；craft/padding（提醒）注水：重复前文的段落、连续三段以上的纯景物。有错误时退出码为 1。"
)]
pub struct CraftArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
}

/// `novel check craft`'s `--json` data.
#[derive(Serialize)]
struct CraftData {
    pass: bool,
    files: Vec<FileSummary>,
    findings: Vec<Diagnostic>,
}

#[derive(Serialize)]
struct FileSummary {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    chapter: Option<u32>,
    pass: bool,
    summary: CraftSummary,
}

/// The chapters before the ones checked, read once each.
struct Histories<'a> {
    project: Option<&'a Project>,
    t: &'a CraftThresholds,
    /// Committed chapters by number.
    committed: BTreeMap<u32, Trace>,
    /// The files checked so far (files given on the command line, in order).
    given: Vec<Trace>,
}

impl Histories<'_> {
    /// How many chapters back the checks look.
    fn depth(&self) -> u32 {
        self.t.hook_variety_window.max(self.t.image_window)
    }

    /// The traces of the committed chapters before `n`, oldest first (missing ones skipped).
    fn before(&mut self, n: u32) -> Vec<Trace> {
        let Some(proj) = self.project else {
            return Vec::new();
        };
        let from = n.saturating_sub(self.depth()).max(1);
        let mut out = Vec::new();
        for k in from..n {
            if !self.committed.contains_key(&k) {
                let path = proj.path(&layout::chapter_file(k));
                let Ok(text) = io::read_text(&path) else {
                    continue;
                };
                let trace = with_storyline(
                    craft::trace(&Document::new(&text), self.t),
                    storyline(proj, k),
                );
                self.committed.insert(k, trace);
            }
            if let Some(t) = self.committed.get(&k) {
                out.push(t.clone());
            }
        }
        out
    }
}

fn with_storyline(mut t: Trace, line: Option<String>) -> Trace {
    t.storyline = line;
    t
}

/// The storyline of chapter `n` (its contract, else its summary), if the project says.
fn storyline(proj: &Project, n: u32) -> Option<String> {
    novel_store::leak::storyline_of(proj, n).ok().flatten()
}

/// The chapter number of a project chapter file (`chapters/chapter-012.md`, its staged copy).
fn chapter_of(input: &Input) -> Option<u32> {
    let name = input.path.file_name()?.to_str()?;
    novel_core::naming::chapter_in_name(name, ".md")
}

/// One file's craft check with its history; the findings carry the file.
fn check_one(
    input: &Input,
    text: &str,
    hist: &mut Histories<'_>,
) -> (Option<u32>, novel_text::craft::CraftReport, Trace) {
    let doc = Document::new(text);
    let n = hist.project.and(chapter_of(input));
    let line = n.and_then(|n| hist.project.and_then(|p| storyline(p, n)));
    let before = match n {
        Some(n) => hist.before(n),
        None => {
            let keep = hist.depth() as usize;
            hist.given[hist.given.len().saturating_sub(keep)..].to_vec()
        }
    };
    let history = History {
        before: &before,
        storyline: line.as_deref(),
    };
    let mut report = craft::check(&doc, &history, hist.t);
    for f in &mut report.findings {
        *f = f.clone().in_file(&input.shown);
        if let Some(n) = n {
            *f = f.clone().for_chapter(n);
        }
    }
    let trace = with_storyline(report.trace.clone(), line);
    (n, report, trace)
}

pub fn run(global: &GlobalArgs, args: CraftArgs) -> Result<Report, CliError> {
    let (project, inputs) = super::resolve_inputs(global, &args.select)?;
    let t = settings::load_or_default(project.as_ref())?.craft;
    let mut hist = Histories {
        project: project.as_ref(),
        t: &t,
        committed: BTreeMap::new(),
        given: Vec::new(),
    };
    let mut human = String::new();
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let mut failed = 0;
    for input in &inputs {
        let text = io::read_text(&input.path)?;
        let (n, report, trace) = check_one(input, &text, &mut hist);
        match n {
            Some(n) if !input.shown.starts_with("staging/") => {
                hist.committed.insert(n, trace);
            }
            Some(_) => {}
            None => hist.given.push(trace),
        }
        for f in &report.findings {
            human.push_str(&f.render());
        }
        human.push_str(&summary_line(&input.shown, &report.summary));
        failed += usize::from(!report.summary.pass);
        findings.extend(report.findings);
        files.push(FileSummary {
            path: input.shown.clone(),
            chapter: n,
            pass: report.summary.pass,
            summary: report.summary,
        });
    }
    let data = CraftData {
        pass: failed == 0,
        files,
        findings,
    };
    if failed > 0 {
        let err = CliError::new(
            "E_CRAFT",
            format!("{failed} 个文件未通过章法检查（共 {} 个）", inputs.len()),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&data, human));
    }
    human.push_str(&format!("章法检查通过：{} 个文件。\n", inputs.len()));
    Report::new(&data, human)
}

/// The craft check of chapter `n`'s text as `check craft` prints it, for the judge's packet.
pub(crate) fn craft_one(
    project: &Project,
    n: u32,
    text: &str,
    shown: &str,
    findings: bool,
) -> String {
    let t = match settings::load_or_default(Some(project)) {
        Ok(s) => s.craft,
        Err(e) => return format!("章法检查没有完成：{e}\n"),
    };
    let mut hist = Histories {
        project: Some(project),
        t: &t,
        committed: BTreeMap::new(),
        given: Vec::new(),
    };
    let input = Input {
        path: project.path(&novel_core::naming::staging_chapter(n)),
        shown: shown.to_string(),
        extra: false,
    };
    let (_, report, _) = check_one(&input, text, &mut hist);
    let mut out = String::new();
    for f in report.findings.iter().filter(|_| findings) {
        out.push_str(&f.render());
    }
    out.push_str(&summary_line(shown, &report.summary));
    out
}

/// What the gate acts on of a staged text's craft check: the opening and the hook, as the
/// failed rules' messages (`novel_core::gate::CraftCheck`) — for a chapter of at least
/// `craft.gate_min_chars` 字 (in a shorter draft the opening and the ending windows overlap).
pub(crate) fn gate_check(text: &str, t: &CraftThresholds) -> novel_core::gate::CraftCheck {
    let doc = Document::new(text);
    if doc.word_count() < t.gate_min_chars as usize {
        return novel_core::gate::CraftCheck::default();
    }
    let report = craft::check(&doc, &History::default(), t);
    let failed = |code: &str| {
        report
            .findings
            .iter()
            .find(|f| f.code == code && f.is_error())
            .map(|f| f.message.clone())
    };
    novel_core::gate::CraftCheck {
        opening: failed("craft/opening"),
        hook: failed("craft/hook"),
    }
}

/// `路径：2980 字，开篇有问题，章末钩子「危机」，接住上一章，注水 0 段，惊讶标记 3/6 …：通过`.
fn summary_line(shown: &str, s: &CraftSummary) -> String {
    let opening = if s.opening_problem {
        "开篇有问题"
    } else {
        "开篇没有问题"
    };
    let hook = match (s.ending.hook, s.ending.kind) {
        (true, Some(k)) => format!("章末钩子「{}」", k.label()),
        (true, None) => "章末有钩子".to_string(),
        (false, _) => "章末没有钩子".to_string(),
    };
    let takeup = match s.takeup {
        Some(true) => "，接住了上一章的钩子",
        Some(false) => "，没接上一章的钩子",
        None => "",
    };
    let recent: Vec<&str> = s
        .recent_hooks
        .iter()
        .map(|h| h.map_or("—", |k| k.label()))
        .collect();
    let rhythm: Vec<String> = s
        .rhythm
        .iter()
        .map(|r| {
            let name = r.name.split('（').next().unwrap_or(r.name);
            format!("{name} {}/{}", r.hits, r.allowed)
        })
        .collect();
    let mut line = format!(
        "{shown}：{} 字，{opening}，{hook}{takeup}，最近钩子 {}，注水 {} 段，{}",
        s.chars,
        recent.join("→"),
        s.padding,
        rhythm.join("，")
    );
    if s.pass {
        line.push_str("：通过\n");
    } else {
        line.push_str(&format!("：未通过（{}）\n", s.failures.join("；")));
    }
    line
}
