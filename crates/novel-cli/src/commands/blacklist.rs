//! `novel blacklist add|remove|whitelist`: the maintenance rules of PRD §7 (黑名单维护) on the
//! project's `ai-blacklist.json` — the author adds and removes phrases; QualityJudge's
//! suggestions go in only with evidence; confirmed phrases go on the whitelist. Phrases are
//! compared after normalisation (NFC, full-width → half-width), so `这，就是` and `这,就是`
//! are one phrase. Every write is atomic; keys the engine does not know are kept.

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use novel_core::model::AiBlacklist;
use novel_core::model::blacklist::{BlacklistEntry, EntrySource, Upgrade};
use novel_core::model::{Extra, is_slug};
use novel_store::{Project, io, layout};
use novel_text::normalize::normalize_str;

use crate::cli::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum BlacklistCommand {
    /// 加入一个 AI 套话短语（裁判建议的须附 --evidence）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Add(AddArgs),
    /// 从黑名单删除一个短语
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Remove(RemoveArgs),
    /// 把作者确认可用的短语加入白名单（--remove 移出）；白名单短语及包含它的上下文永不计数
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Whitelist(WhitelistArgs),
    /// 把项目黑名单升级到程序自带的最新种子：去掉种子已不再收录的短语，补上新短语与句式；作者和裁判加的、白名单都不动
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Upgrade(UpgradeArgs),
}

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// 只列出会怎样改，不写文件
    #[arg(long)]
    pub dry_run: bool,
}

/// Who proposes the phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// 作者
    User,
    /// QualityJudge（须附证据）
    Judge,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// 短语（如 嘴角微微上扬）
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
    /// 类别 slug（如 body_language）；须是已有类别，或同时用 --category-name 新建
    #[arg(long, value_name = "类别")]
    pub category: String,
    /// 新建类别时的中文名
    #[arg(long, value_name = "中文名")]
    pub category_name: Option<String>,
    /// 只在叙述中计数（「」“”『』 对话内不算）
    #[arg(long)]
    pub narration_only: bool,
    /// 只在段首计数
    #[arg(long)]
    pub paragraph_start_only: bool,
    /// 替换建议（可多次给出）
    #[arg(long = "replacement", value_name = "替换")]
    pub replacements: Vec<String>,
    /// 来源：user 作者（默认）或 judge 裁判
    #[arg(
        long,
        value_enum,
        default_value = "user",
        value_name = "来源",
        hide_default_value = true,
        hide_possible_values = true
    )]
    pub source: SourceArg,
    /// 证据：章节与原文（--source judge 时必填），如「第 12 章：他嘴角微微上扬……」
    #[arg(long, value_name = "证据")]
    pub evidence: Option<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// 要删除的短语
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
}

#[derive(Debug, Args)]
pub struct WhitelistArgs {
    /// 短语
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
    /// 从白名单移出
    #[arg(long)]
    pub remove: bool,
}

/// The command name in the JSON envelope (`blacklist add` …).
pub fn command_name(command: &BlacklistCommand) -> &'static str {
    match command {
        BlacklistCommand::Add(_) => "blacklist add",
        BlacklistCommand::Remove(_) => "blacklist remove",
        BlacklistCommand::Whitelist(_) => "blacklist whitelist",
        BlacklistCommand::Upgrade(_) => "blacklist upgrade",
    }
}

pub fn run(global: &GlobalArgs, command: BlacklistCommand) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let path = proj.path(layout::AI_BLACKLIST);
    let mut list: AiBlacklist = if path.is_file() {
        io::read_json(&path, "AI 用语黑名单")?
    } else {
        seed()?
    };
    let (action, phrase, human) = match command {
        BlacklistCommand::Add(a) => add(&mut list, a)?,
        BlacklistCommand::Remove(a) => remove(&mut list, a)?,
        BlacklistCommand::Whitelist(a) => whitelist(&mut list, a)?,
        BlacklistCommand::Upgrade(a) => return upgrade(&proj, list, a.dry_run),
    };
    save(&proj, &list)?;
    let data = Edited {
        action,
        phrase: &phrase,
        file: layout::AI_BLACKLIST,
        entries: list.entries.len(),
        whitelist: list.whitelist.len(),
    };
    Report::new(
        &data,
        format!(
            "{human}（{}：{} 条短语，白名单 {} 条）\n",
            layout::AI_BLACKLIST,
            list.entries.len(),
            list.whitelist.len()
        ),
    )
}

/// `novel blacklist add|remove|whitelist`'s `--json` data.
#[derive(Serialize)]
struct Edited<'a> {
    action: &'static str,
    phrase: &'a str,
    file: &'static str,
    entries: usize,
    whitelist: usize,
}

/// `novel blacklist upgrade`'s `--json` data.
#[derive(Serialize)]
struct Upgraded<'a> {
    dry_run: bool,
    written: bool,
    backup: Option<String>,
    file: &'static str,
    upgrade: &'a Upgrade,
    entries: usize,
}

/// `novel blacklist upgrade`: the project's list brought up to the shipped seed; the file it
/// replaces goes to `state/backups/` first.
fn upgrade(proj: &Project, mut list: AiBlacklist, dry_run: bool) -> Result<Report, CliError> {
    let report = list.upgrade_from(&seed()?);
    let mut backup = None;
    if !dry_run && !report.is_empty() {
        backup =
            novel_store::state::backup(proj, layout::AI_BLACKLIST, &novel_store::time::now_iso())?;
        save(proj, &list)?;
    }
    let mut human = if report.is_empty() {
        "黑名单已是最新的种子，无需升级。\n".to_string()
    } else {
        format!(
            "{}黑名单升级：新增 {} 条、移除 {} 条种子短语，新增句式 {} 条。\n",
            if dry_run { "（预览）" } else { "" },
            report.added.len(),
            report.removed.len(),
            report.patterns_added.len()
        )
    };
    for (label, items) in [
        ("新增", &report.added),
        ("移除（种子已不再收录）", &report.removed),
        ("新增句式", &report.patterns_added),
        ("在白名单中、没有加入", &report.kept_out_by_whitelist),
    ] {
        if !items.is_empty() {
            human.push_str(&format!("  {label}：{}\n", items.join("、")));
        }
    }
    if let Some(b) = &backup {
        human.push_str(&format!("原文件备份在 {b}。\n"));
    }
    let data = Upgraded {
        dry_run,
        written: !dry_run && !report.is_empty(),
        backup,
        file: layout::AI_BLACKLIST,
        upgrade: &report,
        entries: list.entries.len(),
    };
    Report::new(&data, human)
}

/// The blacklist shipped with the program (the seed `novel init` writes).
fn seed() -> Result<AiBlacklist, CliError> {
    serde_json::from_str(novel_store::init::AI_BLACKLIST_TEMPLATE).map_err(|e| {
        CliError::new(
            "E_SCHEMA",
            format!("程序自带的黑名单种子读不了：{e}"),
            "这是程序的缺陷：请重新安装插件",
            Exit::Usage,
        )
    })
}

fn save(proj: &Project, list: &AiBlacklist) -> Result<(), CliError> {
    Ok(io::write_json(&proj.path(layout::AI_BLACKLIST), list)?)
}

fn usage(message: String, hint: &str) -> CliError {
    CliError::new("E_USAGE", message, hint, Exit::Usage)
}

fn clean(phrase: &str) -> Result<(String, String), CliError> {
    let phrase = phrase.trim().to_string();
    let key = normalize_str(&phrase);
    if key.is_empty() {
        return Err(usage(
            "短语不能为空".into(),
            "给出要处理的短语，如 嘴角微微上扬",
        ));
    }
    Ok((phrase, key))
}

/// A phrase to add to the blacklist or the whitelist: at least two characters after
/// normalisation, and not only punctuation — one character (的) or a punctuation mark would
/// count, or protect, almost everywhere.
fn clean_new(phrase: &str) -> Result<(String, String), CliError> {
    let (phrase, key) = clean(phrase)?;
    let trimmed = key.trim();
    if trimmed.chars().count() < 2 {
        return Err(usage(
            format!("短语「{phrase}」太短：至少要 2 个字"),
            "单个字几乎处处命中；写成它出现的套话形式，如「嘴角微微上扬」",
        ));
    }
    if !trimmed.chars().any(char::is_alphanumeric) {
        return Err(usage(
            format!("短语「{phrase}」只有标点"),
            "标点的滥用（如破折号）由 ai-blacklist.json 的 patterns 规则按密度检查",
        ));
    }
    Ok((phrase, key))
}

fn add(list: &mut AiBlacklist, a: AddArgs) -> Result<(&'static str, String, String), CliError> {
    let (phrase, key) = clean_new(&a.phrase)?;
    refuse_listed(list, &phrase, &key)?;
    ensure_category(list, &a.category, a.category_name.as_deref())?;
    let evidence = a
        .evidence
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty());
    if a.source == SourceArg::Judge && evidence.is_none() {
        return Err(usage(
            "裁判建议的短语必须附证据".into(),
            "加上 --evidence「第 N 章：原文……」，说明它在哪一章、以什么形式反复出现（PRD §7 黑名单维护）",
        ));
    }
    let category = a.category.clone();
    let flags = flags_label(a.narration_only, a.paragraph_start_only);
    list.entries.push(BlacklistEntry {
        phrase: phrase.clone(),
        category: a.category,
        narration_only: a.narration_only,
        paragraph_start_only: a.paragraph_start_only,
        replacements: a.replacements,
        source: Some(match a.source {
            SourceArg::User => EntrySource::User,
            SourceArg::Judge => EntrySource::Judge,
        }),
        evidence,
        extra: Extra::new(),
    });
    Ok((
        "added",
        phrase.clone(),
        format!("已加入黑名单：「{phrase}」（{category}{flags}）"),
    ))
}

/// A phrase already in the blacklist (in any written form), or in the whitelist, is refused.
fn refuse_listed(list: &AiBlacklist, phrase: &str, key: &str) -> Result<(), CliError> {
    if let Some(e) = list
        .entries
        .iter()
        .find(|e| normalize_str(&e.phrase) == key)
    {
        let same = if e.phrase == phrase {
            String::new()
        } else {
            format!("（已有写法「{}」）", e.phrase)
        };
        return Err(CliError::new(
            "E_DUPLICATE",
            format!("「{phrase}」已在黑名单中{same}，类别 {}", e.category),
            "不必重复添加；要改类别或标记，先 novel blacklist remove 再重新 add",
            Exit::Usage,
        ));
    }
    if let Some(w) = list.whitelist.iter().find(|w| normalize_str(w) == key) {
        return Err(CliError::new(
            "E_DUPLICATE",
            format!("「{w}」在白名单中，加入黑名单也不会计数"),
            "先 novel blacklist whitelist --remove 把它移出白名单",
            Exit::Usage,
        ));
    }
    Ok(())
}

/// The entry's category must be a slug and known, or be created here with its Chinese name
/// (`--category-name`).
fn ensure_category(
    list: &mut AiBlacklist,
    category: &str,
    name: Option<&str>,
) -> Result<(), CliError> {
    if !is_slug(category) {
        return Err(usage(
            format!("类别「{category}」不是 slug"),
            "类别用小写英文、数字和 - / _，如 body_language",
        ));
    }
    if list.categories.contains_key(category) {
        return Ok(());
    }
    match name {
        Some(name) if !name.trim().is_empty() => {
            list.categories
                .insert(category.to_string(), name.trim().to_string());
            Ok(())
        }
        _ => {
            let known: Vec<String> = list
                .categories
                .iter()
                .map(|(k, v)| format!("{k}（{v}）"))
                .collect();
            Err(usage(
                format!("没有类别「{category}」"),
                &format!(
                    "可选：{}；或用 --category-name 中文名 新建",
                    known.join("、")
                ),
            ))
        }
    }
}

/// `，只计叙述、只计段首` for the entry's flags that are on, else nothing.
fn flags_label(narration_only: bool, paragraph_start_only: bool) -> String {
    let flags: Vec<&str> = [
        (narration_only, "只计叙述"),
        (paragraph_start_only, "只计段首"),
    ]
    .into_iter()
    .filter_map(|(on, label)| on.then_some(label))
    .collect();
    if flags.is_empty() {
        String::new()
    } else {
        format!("，{}", flags.join("、"))
    }
}

fn remove(
    list: &mut AiBlacklist,
    a: RemoveArgs,
) -> Result<(&'static str, String, String), CliError> {
    let (phrase, key) = clean(&a.phrase)?;
    let Some(i) = list
        .entries
        .iter()
        .position(|e| normalize_str(&e.phrase) == key)
    else {
        let similar: Vec<&str> = list
            .entries
            .iter()
            .filter(|e| {
                let k = normalize_str(&e.phrase);
                k.contains(&key) || key.contains(&k)
            })
            .map(|e| e.phrase.as_str())
            .take(5)
            .collect();
        let hint = if similar.is_empty() {
            "检查写法；黑名单在项目根目录的 ai-blacklist.json".to_string()
        } else {
            format!("相近的短语：{}", similar.join("、"))
        };
        return Err(CliError::new(
            "E_NOT_FOUND",
            format!("黑名单中没有「{phrase}」"),
            hint,
            Exit::Usage,
        ));
    };
    let removed = list.entries.remove(i);
    Ok((
        "removed",
        removed.phrase.clone(),
        format!(
            "已从黑名单删除：「{}」（{}）",
            removed.phrase, removed.category
        ),
    ))
}

fn whitelist(
    list: &mut AiBlacklist,
    a: WhitelistArgs,
) -> Result<(&'static str, String, String), CliError> {
    let (phrase, key) = if a.remove {
        clean(&a.phrase)?
    } else {
        clean_new(&a.phrase)?
    };
    let at = list.whitelist.iter().position(|w| normalize_str(w) == key);
    if a.remove {
        let Some(i) = at else {
            return Err(CliError::new(
                "E_NOT_FOUND",
                format!("白名单中没有「{phrase}」"),
                "检查写法；白名单在 ai-blacklist.json 的 whitelist 中",
                Exit::Usage,
            ));
        };
        let removed = list.whitelist.remove(i);
        return Ok((
            "unwhitelisted",
            removed.clone(),
            format!("已移出白名单：「{removed}」"),
        ));
    }
    if let Some(i) = at {
        return Err(CliError::new(
            "E_DUPLICATE",
            format!("「{}」已在白名单中", list.whitelist[i]),
            "不必重复添加",
            Exit::Usage,
        ));
    }
    list.whitelist.push(phrase.clone());
    let listed = list
        .entries
        .iter()
        .find(|e| normalize_str(&e.phrase) == key)
        .map(|e| format!("；黑名单里的同名短语（{}）从此不再计数", e.category))
        .unwrap_or_default();
    Ok((
        "whitelisted",
        phrase.clone(),
        format!("已加入白名单：「{phrase}」{listed}"),
    ))
}
