//! `novel models [--set standard|economy]`: which model each part of the book runs on
//! (`novel.json` `models`, the PRD's mix by default) and, with `--set`, one of the two mixes the
//! author chooses between at set-up ([`novel_core::cost::Mix`]). The skills read the map to
//! dispatch each agent on its model; `status` shows it.

use clap::Args;
use indexmap::IndexMap;
use serde::Serialize;

use novel_core::cost::{Mix, model_for};

use crate::args::GlobalArgs;
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// 换成一套模型组合：standard（标准：设定、润色、修订与重写、关键章复核用 Opus）或 economy（经济，全部 Sonnet）；也可写「标准」「经济」
    #[arg(long, value_name = "组合")]
    pub set: Option<String>,
}

/// What `models` answers, and what `next`, `chapter begin` and `status` carry.
#[derive(Debug, Clone, Serialize)]
pub struct ModelMix {
    /// Every part of the book and its model (`main`: the conversation that runs the skills).
    pub models: IndexMap<String, String>,
    /// `standard`, `economy`, or `custom` (the author's own).
    pub mix: &'static str,
    pub label: String,
}

/// The parts of the book shown, in this order, with their Chinese names.
const PARTS: [(&str, &str); 11] = [
    ("main", "主对话"),
    ("chapter-writer", "写手"),
    ("chapter-rewriter", "修订与重写"),
    ("summarizer", "摘要"),
    ("style-refiner", "润色"),
    ("quality-judge", "评审"),
    ("quality-judge-key", "关键章复核"),
    ("world-builder", "世界观"),
    ("character-weaver", "角色"),
    ("plot-architect", "大纲"),
    ("style-analyzer", "文风分析"),
];

impl ModelMix {
    /// The mix of a project's `models` (every part named, defaults filled in).
    pub fn of(models: &IndexMap<String, String>) -> Self {
        let mut all: IndexMap<String, String> = PARTS
            .iter()
            .map(|(k, _)| (k.to_string(), model_for(models, k).to_string()))
            .collect();
        for (k, v) in models {
            all.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mix = Mix::of(&all);
        ModelMix {
            models: all,
            mix: mix.map_or("custom", Mix::name),
            label: mix.map_or_else(|| "自定义".to_string(), |m| m.label().to_string()),
        }
    }

    /// One line: the mix and every part's model.
    pub fn line(&self) -> String {
        let parts: Vec<String> = PARTS
            .iter()
            .filter_map(|(k, name)| self.models.get(*k).map(|m| format!("{name} {m}")))
            .collect();
        format!("模型：{}：{}", self.label, parts.join("、"))
    }
}

/// The project's model mix (the defaults when `novel.json` cannot be read: the caller reports
/// that elsewhere).
pub fn of_project(project: &novel_store::Project) -> ModelMix {
    let models = novel_store::settings::load(project)
        .map(|s| s.models)
        .unwrap_or_else(|_| Mix::Standard.models());
    ModelMix::of(&models)
}

#[derive(Serialize)]
struct ModelsData {
    #[serde(flatten)]
    mix: ModelMix,
    /// `--set` changed `novel.json`.
    written: bool,
}

pub fn run(global: &GlobalArgs, args: ModelsArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let mut written = false;
    if let Some(name) = &args.set {
        let mix = Mix::from_name(name).ok_or_else(|| {
            CliError::new(
                "E_USAGE",
                format!("不认识的模型组合「{name}」"),
                "写 standard（标准）或 economy（经济）",
                Exit::Usage,
            )
        })?;
        novel_store::settings::set_models(&project, &mix.models())?;
        written = true;
    }
    let mix = of_project(&project);
    let mut human = format!("{}\n", mix.line());
    if written {
        human.push_str("已写入 novel.json 的 models；从下一次派遣起生效。\n");
    }
    Report::new(&ModelsData { mix, written }, human)
}
