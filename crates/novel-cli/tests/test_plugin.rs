//! `tests/plugin`: the plugin as Claude Code loads it.
//!
//! - The manifests follow the conventions verified against the real client (see the project's
//!   research notes): author is an object, hooks are not listed, the marketplace points at `./`,
//!   and the plugin version is the binary's version.
//! - Every `skills/*/SKILL.md` and `agents/*.md` has frontmatter with the required fields and
//!   allowed values; the skills and agents the product needs all exist.
//! - Every call of the binary written in the Markdown is written `novel …` (the plugin's `bin/`
//!   on the Bash tool's PATH; `"${CLAUDE_PLUGIN_ROOT}/scripts/novel"` only in the `` !`…` `` lines
//!   the client runs itself) and parses with the real argument definitions
//!   (`NOVEL_PARSE_ONLY=1`), after the placeholders of `docs/orchestration.md` §10 are replaced
//!   by sample values; any other placeholder fails. (`test_md_commands` runs them through bash.)
//! - Every `${CLAUDE_PLUGIN_ROOT}/…` and `${CLAUDE_SKILL_DIR}/…` path exists.
//! - Every JSON template and every fenced ```` ```json <kind> ```` example validates against its
//!   schema with the binary's validator; every ```` ```json agent-return ```` has one of the
//!   four shapes of §10; an unlabelled ```` ```json ```` fence is an error.
//!
//! The checkers are plain functions returning the problems they found, each with
//! `file:line`, so the deliberate-mistake test at the end can show that they catch them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use novel_core::FileKind;
use novel_core::validate::{check_document, parse_json};
use serde_json::Value;

use crate::support::bin;

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn plugin_manifest_is_valid() {
    let p = read(".claude-plugin/plugin.json");
    assert_eq!(p["name"], "novel");
    assert_eq!(
        p["version"],
        env!("CARGO_PKG_VERSION"),
        "plugin and binary versions agree"
    );
    assert!(p["author"].is_object(), "author must be an object");
    assert!(p["author"]["name"].is_string());
    assert!(
        p.get("hooks").is_none(),
        "hooks/hooks.json is loaded automatically; listing it duplicates it"
    );
    assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(
        !repo().join("CLAUDE.md").exists(),
        "a root CLAUDE.md breaks `plugin validate --strict`"
    );
}

#[test]
fn marketplace_lists_the_plugin_at_the_root() {
    let m = read(".claude-plugin/marketplace.json");
    assert!(m["name"].is_string());
    assert!(m["owner"]["name"].is_string());
    assert!(
        m["metadata"]["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()),
        "`plugin validate --strict` wants a marketplace description"
    );
    let plugins = m["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 1);
    assert_eq!(plugins[0]["name"], "novel");
    assert_eq!(plugins[0]["source"], "./");
}

#[test]
fn wrapper_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(repo().join("scripts/novel"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "scripts/novel must be executable");
}

// ---- The Markdown of the plugin -----------------------------------------------------------

/// One Markdown file of the plugin: its repo-relative path and text.
pub(crate) struct Doc {
    pub(crate) rel: String,
    pub(crate) text: String,
}

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for e in read.flatten() {
        let p = e.path();
        if p.is_dir() {
            markdown_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// Every `.md` under `skills/` and `agents/` of `root`, sorted.
pub(crate) fn plugin_docs(root: &Path) -> Vec<Doc> {
    let mut paths = Vec::new();
    markdown_under(&root.join("skills"), &mut paths);
    markdown_under(&root.join("agents"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| Doc {
            rel: p.strip_prefix(root).unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        })
        .collect()
}

/// Fails with every problem, one per line.
pub(crate) fn assert_none(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s)\n{}",
        problems.len(),
        problems.join("\n")
    );
}

// ---- Frontmatter ---------------------------------------------------------------------------

/// A frontmatter value: the flat form the plugin uses (`key: value`, a quoted string, a block
/// scalar `|`/`>`, or a list `[a, b]` / `- a` lines).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Yaml {
    Text(String),
    List(Vec<String>),
}

impl Yaml {
    fn text(&self) -> Option<&str> {
        match self {
            Yaml::Text(s) => Some(s),
            Yaml::List(_) => None,
        }
    }
}

fn unquote(v: &str) -> Result<String, String> {
    let v = v.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q) {
            return inner
                .strip_suffix(q)
                .map(|s| {
                    if q == '\'' {
                        s.replace("''", "'")
                    } else {
                        s.replace("\\\"", "\"").replace("\\\\", "\\")
                    }
                })
                .ok_or_else(|| format!("unclosed quote in {v:?}"));
        }
    }
    Ok(v.to_string())
}

/// Parses the frontmatter block (between the first two `---` lines). Returns the keys in order
/// and the line after the block, or why it cannot be read.
pub(crate) fn frontmatter(text: &str) -> Result<(Vec<(String, Yaml)>, usize), String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Err("no frontmatter (the file must start with ---)".into());
    }
    let end = lines
        .iter()
        .skip(1)
        .position(|l| l.trim_end() == "---")
        .map(|i| i + 1)
        .ok_or("frontmatter is not closed by ---")?;
    let mut out: Vec<(String, Yaml)> = Vec::new();
    let mut i = 1;
    while i < end {
        let line = lines[i];
        let no = i + 1;
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            return Err(format!("line {no}: unexpected indentation: {line:?}"));
        }
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("line {no}: not `key: value`: {line:?}"))?;
        let key = key.trim().to_string();
        if out.iter().any(|(k, _)| *k == key) {
            return Err(format!("line {no}: duplicate key {key}"));
        }
        let value = value.trim();
        let indented = |i: &mut usize| {
            let mut block = Vec::new();
            while *i < end && (lines[*i].starts_with(' ') || lines[*i].trim().is_empty()) {
                block.push(lines[*i].trim());
                *i += 1;
            }
            block
        };
        let parsed = if value.is_empty() {
            let block = indented(&mut i);
            let items: Vec<&str> = block.into_iter().filter(|l| !l.is_empty()).collect();
            if items.is_empty() {
                Yaml::Text(String::new())
            } else {
                let mut list = Vec::new();
                for item in items {
                    let v = item
                        .strip_prefix("- ")
                        .ok_or_else(|| format!("line {no}: {key}: expected `- item` lines"))?;
                    list.push(unquote(v)?);
                }
                Yaml::List(list)
            }
        } else if matches!(value, "|" | ">" | "|-" | ">-") {
            let block = indented(&mut i);
            let sep = if value.starts_with('|') { "\n" } else { " " };
            Yaml::Text(block.join(sep).trim().to_string())
        } else if let Some(inner) = value.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| format!("line {no}: {key}: unclosed ["))?;
            Yaml::List(
                inner
                    .split(',')
                    .map(unquote)
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        } else {
            Yaml::Text(unquote(value)?)
        };
        out.push((key, parsed));
    }
    Ok((out, end + 1))
}

/// Tool names a plugin may grant (the Claude Code tools; MCP tools are `mcp__…`).
const KNOWN_TOOLS: [&str; 21] = [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Skill",
    "SlashCommand",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// The tools the pinned client (`tests/e2e/package.json`, 2.1.197) offers the model: what a
/// request of a `-p` run lists, plus `AskUserQuestion` (offered interactively only) and `Task`
/// (the Agent tool's old name). It has no Grep, Glob, LS or MultiEdit: a skill or agent that lists
/// one silently goes without it.
const CLIENT_TOOLS: [&str; 11] = [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "Edit",
    "NotebookEdit",
    "Read",
    "Skill",
    "Task",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// Entries of a tool list that the pinned client does not have.
fn missing_from_client(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| !n.starts_with("mcp__") && !CLIENT_TOOLS.contains(&n.as_str()))
        .cloned()
        .collect()
}

/// A tool list (`Read, Write` or a YAML list; `Bash(pattern)` allowed): the tool names, or the
/// unknown entries.
fn tools(value: &Yaml) -> Result<Vec<String>, Vec<String>> {
    let entries: Vec<String> = match value {
        Yaml::List(l) => l.clone(),
        Yaml::Text(s) => {
            // Split on commas (and spaces) outside parentheses.
            let mut out = Vec::new();
            let mut depth = 0usize;
            let mut cur = String::new();
            for c in s.chars() {
                match c {
                    '(' => {
                        depth += 1;
                        cur.push(c);
                    }
                    ')' => {
                        depth = depth.saturating_sub(1);
                        cur.push(c);
                    }
                    ',' | ' ' if depth == 0 => {
                        if !cur.trim().is_empty() {
                            out.push(cur.trim().to_string());
                        }
                        cur.clear();
                    }
                    _ => cur.push(c),
                }
            }
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            out
        }
    };
    let mut names = Vec::new();
    let mut bad = Vec::new();
    for e in entries {
        let name = e.split('(').next().unwrap_or("").trim().to_string();
        let pattern_ok = !e.contains('(') || e.ends_with(')');
        if pattern_ok && (KNOWN_TOOLS.contains(&name.as_str()) || name.starts_with("mcp__")) {
            names.push(name);
        } else {
            bad.push(e);
        }
    }
    if bad.is_empty() { Ok(names) } else { Err(bad) }
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.ends_with('-')
        && !s.contains("--")
}

const MODELS: [&str; 4] = ["sonnet", "opus", "haiku", "inherit"];
const COLORS: [&str; 8] = [
    "red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan",
];
const SKILL_FIELDS: [&str; 12] = [
    "name",
    "description",
    "when_to_use",
    "argument-hint",
    "arguments",
    "allowed-tools",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
];
const AGENT_FIELDS: [&str; 9] = [
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "color",
    "maxTurns",
    "skills",
    "effort",
];
/// The limit of the skill listing for `description` + `when_to_use` (characters).
const SKILL_DESCRIPTION_MAX: usize = 1536;

/// Problems of an agent's frontmatter (`stem` = the file name without `.md`).
fn check_agent(rel: &str, stem: &str, text: &str) -> Vec<String> {
    let fm = match frontmatter(text) {
        Ok((fm, _)) => fm,
        Err(e) => return vec![format!("{rel}: {e}")],
    };
    let map: BTreeMap<&str, &Yaml> = fm.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut out = Vec::new();
    let mut say = |m: String| out.push(format!("{rel}: {m}"));
    for (k, _) in &fm {
        if !AGENT_FIELDS.contains(&k.as_str()) {
            say(format!(
                "unknown agent field `{k}` (plugin agents take: {})",
                AGENT_FIELDS.join(", ")
            ));
        }
    }
    match map.get("name").and_then(|v| v.text()) {
        Some(n) if n == stem && is_kebab(n) => {}
        Some(n) => say(format!(
            "name `{n}` must be the file stem `{stem}`, lowercase with hyphens"
        )),
        None => say("missing name".into()),
    }
    let description = map.get("description").and_then(|v| v.text());
    if description.is_none_or(|d| d.trim().is_empty()) {
        say("missing or empty description".into());
    }
    match map.get("model").and_then(|v| v.text()) {
        Some(m) if MODELS.contains(&m) => {}
        other => say(format!("model {other:?} must be one of {MODELS:?}")),
    }
    match map.get("color").and_then(|v| v.text()) {
        Some(c) if COLORS.contains(&c) => {}
        other => say(format!("color {other:?} must be one of {COLORS:?}")),
    }
    match map.get("tools") {
        None => say("missing tools (give the fewest that work)".into()),
        Some(v) => match tools(v) {
            Ok(names) if names.is_empty() => say("empty tools".into()),
            Ok(names) => {
                if names.iter().any(|n| n == "AskUserQuestion") {
                    say("agents never ask the author: drop AskUserQuestion from tools".into());
                }
                let gone = missing_from_client(&names);
                if !gone.is_empty() {
                    say(format!(
                        "tools the pinned client does not have (the agent silently goes without them; search with Bash grep): {}",
                        gone.join(", ")
                    ));
                }
            }
            Err(bad) => say(format!("unknown tools: {}", bad.join(", "))),
        },
    }
    out
}

/// Problems of a skill's frontmatter (`dir` = the skill's directory name).
fn check_skill(rel: &str, dir: &str, text: &str) -> Vec<String> {
    let fm = match frontmatter(text) {
        Ok((fm, _)) => fm,
        Err(e) => return vec![format!("{rel}: {e}")],
    };
    let map: BTreeMap<&str, &Yaml> = fm.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut out = Vec::new();
    let mut say = |m: String| out.push(format!("{rel}: {m}"));
    for (k, _) in &fm {
        if !SKILL_FIELDS.contains(&k.as_str()) {
            say(format!(
                "unknown skill field `{k}` (skills take: {})",
                SKILL_FIELDS.join(", ")
            ));
        }
    }
    match map.get("name").and_then(|v| v.text()) {
        Some(n) if n == dir && is_kebab(n) => {}
        Some(n) => say(format!(
            "name `{n}` must be the directory name `{dir}`, lowercase with hyphens"
        )),
        None => say("missing name".into()),
    }
    let description = map.get("description").and_then(|v| v.text()).unwrap_or("");
    if description.trim().is_empty() {
        say("missing or empty description".into());
    }
    let when = map.get("when_to_use").and_then(|v| v.text()).unwrap_or("");
    let listed = description.chars().count() + when.chars().count();
    if listed > SKILL_DESCRIPTION_MAX {
        say(format!(
            "description + when_to_use is {listed} characters; the listing cuts at {SKILL_DESCRIPTION_MAX}"
        ));
    }
    for key in ["user-invocable", "disable-model-invocation"] {
        if let Some(v) = map.get(key)
            && !matches!(v.text(), Some("true" | "false"))
        {
            say(format!("{key} must be true or false"));
        }
    }
    if let Some(v) = map.get("model")
        && !v
            .text()
            .is_some_and(|m| MODELS.contains(&m) || m.starts_with("claude-"))
    {
        say(format!(
            "model must be one of {MODELS:?} or a claude- model id"
        ));
    }
    if let Some(v) = map.get("context")
        && v.text() != Some("fork")
    {
        say("context can only be `fork`".into());
    }
    if let Some(v) = map.get("allowed-tools") {
        match tools(v) {
            Err(bad) => say(format!("unknown allowed-tools: {}", bad.join(", "))),
            Ok(names) => {
                let gone = missing_from_client(&names);
                if !gone.is_empty() {
                    say(format!(
                        "allowed-tools the pinned client does not have: {}",
                        gone.join(", ")
                    ));
                }
            }
        }
    }
    out
}

/// Frontmatter problems of every skill and agent under `root`.
fn frontmatter_problems(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for doc in plugin_docs(root) {
        let parts: Vec<&str> = doc.rel.split('/').collect();
        match parts.as_slice() {
            ["agents", file] => {
                let stem = file.trim_end_matches(".md");
                out.extend(check_agent(&doc.rel, stem, &doc.text));
            }
            ["skills", dir, "SKILL.md"] => out.extend(check_skill(&doc.rel, dir, &doc.text)),
            _ => {}
        }
    }
    out
}

#[test]
fn plugin_frontmatter_is_valid() {
    assert_none("frontmatter", frontmatter_problems(&repo()));
}

/// The tools an agent body can tell it to use, as the body names them.
const BODY_TOOLS: [&str; 10] = [
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "MultiEdit",
    "NotebookEdit",
    "Read",
    "WebFetch",
    "WebSearch",
    "Write",
];
/// The chapter pipeline's agents: each is dispatched for every chapter, so a tool in its
/// `tools:` that its body never uses is a schema sent on every request for nothing.
const PIPELINE_AGENTS: [&str; 4] = [
    "chapter-writer",
    "summarizer",
    "style-refiner",
    "quality-judge",
];

/// Whether `word` stands alone in `text` (no ASCII letter or digit on either side).
fn names_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// What an agent body against its `tools:` is wrong about: a tool the body tells it to use
/// that `tools:` lacks (the client answers "No such tool available" and the request is lost);
/// for a pipeline agent, a tool in `tools:` the body never uses. A ```` ```bash ```` fence or a
/// `novel …` command counts as Bash.
fn body_tool_problems(rel: &str, stem: &str, text: &str) -> Vec<String> {
    let (fm, lines) = match frontmatter(text) {
        Ok(x) => x,
        Err(e) => return vec![format!("{rel}: {e}")],
    };
    let body = &text.lines().skip(lines).collect::<Vec<_>>().join("\n");
    let listed: Vec<String> = fm
        .iter()
        .find(|(k, _)| k == "tools")
        .and_then(|(_, v)| tools(v).ok())
        .unwrap_or_default();
    let mut used: Vec<&str> = BODY_TOOLS
        .iter()
        .copied()
        .filter(|t| names_word(body, t))
        .collect();
    if !used.contains(&"Bash") && (body.contains("```bash") || body.contains("`novel ")) {
        used.push("Bash");
    }
    let mut out = Vec::new();
    for t in &used {
        if !listed.iter().any(|l| l == t) {
            out.push(format!(
                "{rel}: the body tells the agent to use {t}, its tools: ({}) lacks it",
                listed.join(", ")
            ));
        }
    }
    if PIPELINE_AGENTS.contains(&stem) {
        for t in &listed {
            if !used.contains(&t.as_str()) {
                out.push(format!(
                    "{rel}: {t} is in tools: but the body never uses it (its schema goes with every request)"
                ));
            }
        }
    }
    out
}

#[test]
fn agent_bodies_use_the_tools_they_have() {
    let root = repo();
    let mut problems = Vec::new();
    for a in AGENTS {
        let rel = format!("agents/{a}.md");
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        problems.extend(body_tool_problems(&rel, a, &text));
    }
    assert_none("agent bodies against their tools", problems);
    // The check itself: the refiner body of issue 38 (a change list written with Write, no
    // Write in tools) and a pipeline agent with a tool it never uses.
    let missing = "---\nname: style-refiner\ntools: Read, Edit, Bash\n---\n用 Read 读文件，用 Edit 改，清单用 Write 写。\n";
    let p = body_tool_problems("x.md", "style-refiner", missing);
    assert!(p.iter().any(|m| m.contains("use Write")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("Bash is in tools")), "{p:?}");
    let fine = "---\nname: world-builder\ntools: Read, Write, Bash\n---\n用 Write 写。\n```bash\nnovel validate\n```\n";
    assert_eq!(
        body_tool_problems("y.md", "world-builder", fine),
        Vec::<String>::new()
    );
    // A word inside a longer one is not a tool ("Reader", "Bashful").
    assert!(!names_word("Reader Bashful", "Read"));
    assert!(names_word("用 Read 读", "Read"));
}

/// The entry skills, the shared knowledge skill and the agents of the product (issue 11).
const SKILLS: [&str; 4] = ["start", "continue", "status", "novel-writing"];
const AGENTS: [&str; 8] = [
    "world-builder",
    "character-weaver",
    "plot-architect",
    "chapter-writer",
    "summarizer",
    "style-analyzer",
    "style-refiner",
    "quality-judge",
];

#[test]
fn plugin_has_every_skill_and_agent() {
    let root = repo();
    let mut missing = Vec::new();
    for s in SKILLS {
        let p = root.join(format!("skills/{s}/SKILL.md"));
        if !p.is_file() {
            missing.push(format!("skills/{s}/SKILL.md"));
        }
    }
    for a in AGENTS {
        if !root.join(format!("agents/{a}.md")).is_file() {
            missing.push(format!("agents/{a}.md"));
        }
    }
    assert_none("missing skill or agent", missing);
    // The shared knowledge is loaded by the model, never typed by the author.
    let text = std::fs::read_to_string(root.join("skills/novel-writing/SKILL.md")).unwrap();
    let (fm, _) = frontmatter(&text).unwrap();
    assert!(
        fm.contains(&("user-invocable".into(), Yaml::Text("false".into()))),
        "skills/novel-writing: user-invocable: false"
    );
}

// ---- Invocations of the binary -------------------------------------------------------------

/// How every call of the binary starts in the Markdown a model reads: `novel`, found on the
/// Bash tool's PATH in the plugin's `bin/` (the Bash tool has no `CLAUDE_PLUGIN_ROOT`, and a
/// reference file opened with Read is not substituted).
const COMMAND: &str = "novel";
/// How a `` !`…` `` line of a SKILL.md calls it: the client runs those itself, before the body is
/// sent, with the plugin root substituted.
const CLIENT_MARKER: &str = "\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\"";

/// The placeholder vocabulary of `docs/orchestration.md` §10 and the sample value each gets.
pub(crate) const PLACEHOLDERS: [(&str, &str); 15] = [
    ("<N>", "12"),
    ("<V>", "1"),
    ("<FILE>", "x.json"),
    ("<DIR>", "/tmp/p"),
    ("<STEP>", "brief"),
    ("<SLUG>", "lin-feng"),
    ("<ID>", "x"),
    ("<TEXT>", "原因"),
    ("<AGENT>", "chapter-writer"),
    ("<STAGE>", "drafted"),
    ("<RANGE>", "1..3"),
    ("<PHRASE>", "眸底"),
    ("<KIND>", "character"),
    ("<URL>", "https://mirror.example/novel/v{version}"),
    ("$ARGUMENTS", "1"),
];

/// A call of the binary found in a Markdown file.
#[derive(Debug, Clone, PartialEq)]
struct Invocation {
    line: usize,
    /// From the command (`novel` or the client marker) to the end of the code span or line.
    text: String,
    /// Whether the code around it opened a `$(` that this call is inside.
    in_subst: bool,
    /// Whether it is written with the client marker rather than `novel`.
    client_form: bool,
    /// Whether it is a `` !`…` `` line (run by the client, not by the Bash tool).
    client_line: bool,
}

/// Fence state of a Markdown line: (opening marker char, its length).
pub(crate) fn fence_marker(line: &str) -> Option<(char, usize, &str)> {
    let t = line.trim_start();
    let c = t.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then(|| (c, n, t[n..].trim()))
}

/// Where a Markdown line is: prose, a shell fence (```` ```bash ````), or another fence.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Prose,
    Shell,
    OtherFence,
}

/// The lines of `text` after its frontmatter, with 1-based numbers and where each is (fence
/// lines themselves are left out).
fn body_lines(text: &str) -> Vec<(usize, &str, Place)> {
    let start = frontmatter(text).map(|(_, next)| next).unwrap_or(0);
    let mut out = Vec::new();
    let mut open: Option<(char, usize, Place)> = None;
    for (i, line) in text.lines().enumerate().skip(start) {
        match (open, fence_marker(line)) {
            (None, Some((c, n, info))) => {
                let lang = info.split_whitespace().next().unwrap_or("");
                let place = if matches!(lang, "bash" | "sh" | "shell") {
                    Place::Shell
                } else {
                    Place::OtherFence
                };
                open = Some((c, n, place))
            }
            (Some((c, n, _)), Some((c2, n2, info))) if c == c2 && n2 >= n && info.is_empty() => {
                open = None
            }
            (fenced, _) => out.push((i + 1, line, fenced.map_or(Place::Prose, |f| f.2))),
        }
    }
    out
}

/// Where a call of the binary starts in `s`: the client marker, or `novel` as a command word
/// (at the start, or after whitespace, `(` or `;`, and followed by a space). Returns the byte
/// offset and whether it is the client marker.
fn call_start(s: &str) -> Option<(usize, bool)> {
    if let Some(at) = s.find(CLIENT_MARKER) {
        return Some((at, true));
    }
    let mut from = 0;
    while let Some(k) = s[from..].find(COMMAND) {
        let at = from + k;
        let before = s[..at].chars().next_back();
        let after = s[at + COMMAND.len()..].chars().next();
        if before.is_none_or(|c| c.is_whitespace() || c == '(' || c == ';')
            && after.is_some_and(|c| c == ' ')
        {
            return Some((at, false));
        }
        from = at + COMMAND.len();
    }
    None
}

/// Every call of the binary in `text`: in a fenced block, the rest of the line from the command
/// (joined across `\` continuations); elsewhere, the inline code spans that start with it (and
/// the `` !`…` `` lines).
fn invocations(text: &str) -> Vec<Invocation> {
    let lines = body_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (no, line, place) = lines[i];
        i += 1;
        if place == Place::OtherFence {
            continue;
        }
        let fenced = place == Place::Shell;
        let client_line = !fenced && line.trim_start().starts_with("!`");
        let from_start = |s: &str| {
            call_start(s).map(|(at, client_form)| Invocation {
                line: no,
                text: s[at..].trim().to_string(),
                in_subst: s[..at].contains("$("),
                client_form,
                client_line,
            })
        };
        if fenced {
            if call_start(line).is_none() {
                continue;
            }
            let mut joined = line.to_string();
            while joined.trim_end().ends_with('\\') && i < lines.len() && lines[i].2 == Place::Shell
            {
                let t = joined.trim_end();
                joined = format!("{} {}", &t[..t.len() - 1], lines[i].1.trim());
                i += 1;
            }
            out.extend(from_start(&joined));
            continue;
        }
        let spans = line
            .split('`')
            .enumerate()
            .filter(|(k, _)| k % 2 == 1)
            .map(|(_, s)| s.trim())
            .filter(|s| s.starts_with(CLIENT_MARKER) || s.starts_with("novel "));
        out.extend(spans.filter_map(from_start));
    }
    out
}

/// Replaces the placeholders and splits the call like a shell, cut at the first pipe,
/// redirection, `||`, `&&` or `;`. Returns the arguments after the binary, or what is wrong.
fn invocation_args(inv: &Invocation) -> Result<Vec<String>, String> {
    if inv.client_line && !inv.client_form {
        return Err(format!(
            "a `!` line runs outside the Bash tool, where the plugin's bin/ is not on PATH: write {CLIENT_MARKER}"
        ));
    }
    if inv.client_form && !inv.client_line {
        return Err(format!(
            "write `{COMMAND} …`: the Bash tool has no CLAUDE_PLUGIN_ROOT and a reference file is not substituted"
        ));
    }
    let marker = if inv.client_form {
        CLIENT_MARKER
    } else {
        COMMAND
    };
    let mut s = inv.text[marker.len()..].to_string();
    for (p, v) in PLACEHOLDERS {
        s = s.replace(p, v);
    }
    s = s.replace(
        "${CLAUDE_PLUGIN_ROOT}",
        &repo().to_string_lossy().replace('\\', "/"),
    );
    // Any other `<…>` is a placeholder outside the vocabulary.
    let mut rest = s.as_str();
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close) if close > 0 && !after[..close].contains(char::is_whitespace) => {
                return Err(format!(
                    "placeholder <{}> is not in the vocabulary of docs/orchestration.md §10",
                    &after[..close]
                ));
            }
            _ => rest = after,
        }
    }
    let words = shlex::split(&s).ok_or("unbalanced quotes")?;
    let mut args = Vec::new();
    for w in words {
        let stop = matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&")
            || w.starts_with('>')
            || w.starts_with('<')
            || w.starts_with("2>")
            || w.starts_with("1>")
            || w.starts_with("&>")
            || w.starts_with('#');
        if stop {
            break;
        }
        let mut w = w;
        let mut last = false;
        for tail in [";", ")"] {
            if (tail == ";" || inv.in_subst) && w.ends_with(tail) {
                w.truncate(w.len() - tail.len());
                last = true;
            }
        }
        if w.contains('$') {
            return Err(format!(
                "shell variable in `{w}`: write a placeholder of docs/orchestration.md §10"
            ));
        }
        if !w.is_empty() {
            args.push(w);
        }
        if last {
            break;
        }
    }
    Ok(args)
}

/// Whether the real binary parses `args` (parse-only mode): `Err` carries its message.
fn parses(args: &[String]) -> Result<(), String> {
    let out = Command::new(bin())
        .args(args)
        .env_clear()
        .env("NOVEL_PARSE_ONLY", "1")
        .env("LANG", "C.UTF-8")
        .current_dir(std::env::temp_dir())
        .output()
        .map_err(|e| format!("cannot run novel: {e}"))?;
    if out.status.code() == Some(0) {
        return Ok(());
    }
    // With `--json` the usage error is the envelope on stdout; otherwise a line on stderr.
    let envelope: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let message = envelope
        .as_ref()
        .and_then(|v| v["error"]["message"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| {
            let err = String::from_utf8_lossy(&out.stderr);
            err.lines().next().unwrap_or("").to_string()
        });
    Err(format!("novel: {message}"))
}

/// Problems of every call of the binary in `docs`.
fn invocation_problems(docs: &[Doc]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut count = 0;
    for doc in docs {
        for inv in invocations(&doc.text) {
            count += 1;
            let verdict = invocation_args(&inv).and_then(|args| parses(&args));
            if let Err(why) = verdict {
                out.push(format!("{}:{}: {why}\n    {}", doc.rel, inv.line, inv.text));
            }
        }
    }
    (out, count)
}

#[test]
fn plugin_invocations_parse_with_the_real_binary() {
    let (problems, count) = invocation_problems(&plugin_docs(&repo()));
    eprintln!("checked {count} invocation(s) of the binary");
    assert_none("invocation", problems);
}

// ---- Paths ---------------------------------------------------------------------------------

/// Every `${CLAUDE_PLUGIN_ROOT}/…` and `${CLAUDE_SKILL_DIR}/…` path in `doc` that does not exist
/// under `root` (a skill's own directory for the latter).
fn path_problems(root: &Path, doc: &Doc) -> Vec<String> {
    let mut out = Vec::new();
    let skill_dir = match doc.rel.split('/').collect::<Vec<_>>().as_slice() {
        ["skills", dir, ..] => Some(root.join("skills").join(dir)),
        _ => None,
    };
    for (no, line) in doc.text.lines().enumerate() {
        for (var, base) in [
            ("${CLAUDE_PLUGIN_ROOT}/", Some(root.to_path_buf())),
            ("${CLAUDE_SKILL_DIR}/", skill_dir.clone()),
        ] {
            for (at, _) in line.match_indices(var) {
                let rest = &line[at + var.len()..];
                let path: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "._-/".contains(*c))
                    .collect();
                let path = path.trim_end_matches('.');
                let Some(base) = &base else {
                    out.push(format!(
                        "{}:{}: {var} is only set in skills",
                        doc.rel,
                        no + 1
                    ));
                    continue;
                };
                if path.is_empty() || !base.join(path).exists() {
                    out.push(format!(
                        "{}:{}: {var}{path} does not exist",
                        doc.rel,
                        no + 1
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn plugin_paths_exist() {
    let root = repo();
    let problems = plugin_docs(&root)
        .iter()
        .flat_map(|d| path_problems(&root, d))
        .collect();
    assert_none("path", problems);
}

// ---- JSON examples and templates -----------------------------------------------------------

/// A fenced block: the line of its opening fence, its info string and its body.
struct Fence {
    line: usize,
    info: String,
    body: String,
}

/// A fence being read: its marker, where it opened, and the lines so far.
struct OpenFence<'t> {
    marker: char,
    len: usize,
    fence: Fence,
    indent: usize,
    lines: Vec<&'t str>,
}

fn fences(text: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<OpenFence<'_>> = None;
    for (i, line) in text.lines().enumerate() {
        let marker = fence_marker(line);
        match (open.as_mut(), marker) {
            (None, Some((c, n, info))) => {
                open = Some(OpenFence {
                    marker: c,
                    len: n,
                    fence: Fence {
                        line: i + 1,
                        info: info.to_string(),
                        body: String::new(),
                    },
                    indent: line.len() - line.trim_start().len(),
                    lines: Vec::new(),
                });
            }
            (Some(f), Some((c, n, info))) if f.marker == c && n >= f.len && info.is_empty() => {
                if let Some(mut f) = open.take() {
                    f.fence.body = f.lines.join("\n");
                    out.push(f.fence);
                }
            }
            (Some(f), _) => {
                let cut = line
                    .char_indices()
                    .take_while(|(k, ch)| *k < f.indent && *ch == ' ')
                    .count();
                f.lines.push(&line[cut..]);
            }
            (None, None) => {}
        }
    }
    out
}

/// The agents an `agent` field may name.
fn agent_name_ok(v: &Value) -> bool {
    v.as_str().is_some_and(|a| AGENTS.contains(&a))
}

/// Whether `v` has one of the four return shapes of `docs/orchestration.md` §10.
fn agent_return_problems(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = v.as_object() else {
        return vec!["an agent return is one JSON object".into()];
    };
    let string = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !obj.get("agent").is_some_and(agent_name_ok) {
        out.push(format!("`agent` must name one of the agents {AGENTS:?}"));
    }
    match (obj.get("status").and_then(Value::as_str), obj.get("type").and_then(Value::as_str)) {
        (Some("completed"), None) => {
            if let Some(f) = obj.get("files")
                && !f.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            {
                out.push("`files` is a list of project-relative paths".into());
            }
            for k in ["chapter", "word_count"] {
                if let Some(n) = obj.get(k)
                    && !n.is_u64()
                {
                    out.push(format!("`{k}` is a non-negative integer"));
                }
            }
            // The people rule's report (skills/novel-writing/SKILL.md).
            if let Some(names) = obj.get("new_names") {
                let entry_ok = |e: &Value| {
                    ["name", "role_hint", "evidence"]
                        .iter()
                        .all(|k| e.get(*k).and_then(Value::as_str).is_some_and(|s| !s.is_empty()))
                };
                if !names.as_array().is_some_and(|a| a.iter().all(entry_ok)) {
                    out.push("`new_names` is a list of {name, role_hint, evidence}".into());
                }
            }
        }
        (Some("conflict_detected"), None) => {
            if !string("detail") {
                out.push("conflict_detected needs `detail`".into());
            }
            if let Some(s) = obj.get("severity")
                && !matches!(s.as_str(), Some("high" | "medium" | "low"))
            {
                out.push("`severity` is high, medium or low".into());
            }
        }
        (Some("failed"), None) => {
            if !string("detail") {
                out.push("failed needs `detail`".into());
            }
        }
        (None, Some("requires_user_decision")) => {
            for k in ["recommendation", "rationale"] {
                if !string(k) {
                    out.push(format!("requires_user_decision needs `{k}`"));
                }
            }
            let options = obj.get("options").and_then(Value::as_array);
            if !options.is_some_and(|o| o.len() >= 2 && o.iter().all(Value::is_string)) {
                out.push("requires_user_decision needs `options`: 2 or more strings".into());
            }
            if let Some(d) = obj.get("data")
                && !d.is_object()
            {
                out.push("`data` is an object".into());
            }
        }
        _ => out.push(
            "not one of the four shapes: `status` completed|conflict_detected|failed, or `type: requires_user_decision`"
                .into(),
        ),
    }
    out
}

/// Problems of every fenced JSON example in `doc`.
fn example_problems(doc: &Doc) -> Vec<String> {
    let mut out = Vec::new();
    for f in fences(&doc.text) {
        let mut words = f.info.split_whitespace();
        let lang = words.next().unwrap_or("");
        if !lang.eq_ignore_ascii_case("json") {
            continue;
        }
        let label = words.next();
        let at = format!("{}:{}", doc.rel, f.line);
        let parse = || parse_json(&f.body).map_err(|e| format!("{at}: {e}"));
        match label {
            None => out.push(format!(
                "{at}: unlabelled ```json fence: write ```json <kind>, ```json agent-return or ```json fragment"
            )),
            Some("fragment") => {}
            Some("agent-return") => match parse() {
                Ok(v) => out.extend(
                    agent_return_problems(&v)
                        .into_iter()
                        .map(|p| format!("{at}: agent-return: {p}")),
                ),
                Err(e) => out.push(e),
            },
            Some(kind) => match FileKind::from_name(kind) {
                None => out.push(format!("{at}: unknown example label `{kind}`")),
                Some(k) => match parse() {
                    Ok(v) => out.extend(
                        check_document(&at, k, &v)
                            .into_iter()
                            .map(|f| format!("{}: {kind}: {}", f.file, f.brief())),
                    ),
                    Err(e) => out.push(e),
                },
            },
        }
    }
    out
}

/// The kind of a template file: `templates/<kind>.json` or `<kind>-template.json`; the style
/// presets are style profiles.
fn template_kind(rel: &str) -> Option<FileKind> {
    if rel.starts_with("templates/style-presets/") {
        return Some(FileKind::StyleProfile);
    }
    let stem = rel.strip_prefix("templates/")?.strip_suffix(".json")?;
    FileKind::from_name(stem.strip_suffix("-template").unwrap_or(stem))
}

#[test]
fn plugin_examples_and_templates_validate() {
    let root = repo();
    let mut problems: Vec<String> = plugin_docs(&root)
        .iter()
        .flat_map(example_problems)
        .collect();
    let mut templates = 0;
    for dir in ["templates", "templates/style-presets"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for p in files {
            templates += 1;
            let rel = format!("{dir}/{}", p.file_name().unwrap().to_string_lossy());
            let Some(kind) = template_kind(&rel) else {
                problems.push(format!("{rel}: cannot tell which kind this template is"));
                continue;
            };
            match parse_json(&std::fs::read_to_string(&p).unwrap()) {
                Ok(v) => problems.extend(
                    check_document(&rel, kind, &v)
                        .into_iter()
                        .map(|f| format!("{}: {}", f.file, f.brief())),
                ),
                Err(e) => problems.push(format!("{rel}: {e}")),
            }
        }
    }
    assert!(templates >= 8, "only {templates} templates found");
    assert_none("example or template", problems);
}

// ---- The checkers catch mistakes -----------------------------------------------------------

fn fake(rel: &str, text: &str) -> Doc {
    Doc {
        rel: rel.into(),
        text: text.into(),
    }
}

#[test]
fn plugin_checks_catch_deliberate_mistakes() {
    // Invocations: a good line, a flag that does not exist, a placeholder outside the
    // vocabulary, a shell variable; pipes, redirections and `|| true` are cut off. The client
    // marker belongs to `!` lines only, `novel` to everything else.
    let md = fake(
        "skills/fake/SKILL.md",
        "---\nname: fake\ndescription: 测试\nallowed-tools: Bash(\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\":*)\n---\n\
         运行 `novel --project \"<DIR>\" chapter begin <N> --json` 开始，`novel` 程序管状态。\n\
         !`\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" status 2>&1 || true`\n\
         ```bash\n\
         novel --project \"<DIR>\" chapter commit <N> --no-such-flag --json\n\
         novel --project \"<DIR>\" ops validate <CHAPTER_FILE> --json\n\
         novel --project \"$PROJECT\" status --json | head -n 3\n\
         OUT=$(novel --project \"<DIR>\" \\\n  next --json)\n\
         \"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" --project \"<DIR>\" next --json\n\
         ```\n\
         !`novel next 2>&1 || true`\n",
    );
    let found = invocations(&md.text);
    assert_eq!(
        found.iter().map(|i| i.line).collect::<Vec<_>>(),
        vec![6, 7, 9, 10, 11, 12, 14, 16],
        "{found:#?}"
    );
    let (problems, count) = invocation_problems(std::slice::from_ref(&md));
    assert_eq!(count, 8);
    let lines: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "skills/fake/SKILL.md:9",
            "skills/fake/SKILL.md:10",
            "skills/fake/SKILL.md:11",
            "skills/fake/SKILL.md:14",
            "skills/fake/SKILL.md:16"
        ],
        "{problems:#?}"
    );
    assert!(problems[0].contains("--no-such-flag"), "{}", problems[0]);
    assert!(problems[1].contains("<CHAPTER_FILE>"), "{}", problems[1]);
    assert!(problems[2].contains("$PROJECT"), "{}", problems[2]);
    assert!(problems[3].contains("write `novel …`"), "{}", problems[3]);
    assert!(problems[4].contains("a `!` line"), "{}", problems[4]);

    // Frontmatter: an agent with a bad name, model, colour and tool; a skill with an unknown
    // field and a name that is not its directory.
    let agent = "---\nname: Chapter_Writer\ndescription: 写章节\nmodel: gpt-4\ncolor: black\ntools: Read, Wrte, AskUserQuestion\nhooks: x\n---\n正文\n";
    let p = check_agent("agents/chapter-writer.md", "chapter-writer", agent);
    for want in ["hooks", "name", "model", "color", "Wrte"] {
        assert!(p.iter().any(|m| m.contains(want)), "{want}: {p:#?}");
    }
    let ok_agent = "---\nname: chapter-writer\ndescription: 写章节\nmodel: sonnet\ncolor: blue\ntools: Read, Write, Bash\n---\n";
    assert_none(
        "a valid agent",
        check_agent("agents/chapter-writer.md", "chapter-writer", ok_agent),
    );
    let asks = ok_agent.replace("Bash", "AskUserQuestion");
    assert_eq!(check_agent("agents/a.md", "chapter-writer", &asks).len(), 1);
    let greps = ok_agent.replace("Bash", "Bash, Grep");
    let p = check_agent("agents/a.md", "chapter-writer", &greps);
    assert!(p.len() == 1 && p[0].contains("Grep"), "{p:#?}");
    let globbing = "---\nname: start\ndescription: 入口\nallowed-tools: Bash, Read, Glob\n---\n";
    let p = check_skill("skills/start/SKILL.md", "start", globbing);
    assert!(p.len() == 1 && p[0].contains("Glob"), "{p:#?}");
    let skill = "---\nname: begin\ndescription: >\n  多行\n  描述\nis_user_facing: true\nuser-invocable: maybe\n---\n";
    let p = check_skill("skills/start/SKILL.md", "start", skill);
    for want in ["is_user_facing", "name `begin`", "user-invocable"] {
        assert!(p.iter().any(|m| m.contains(want)), "{want}: {p:#?}");
    }
    let long = format!(
        "---\nname: start\ndescription: {}\nwhen_to_use: 总是\n---\n",
        "长".repeat(1535)
    );
    assert_eq!(
        check_skill("skills/start/SKILL.md", "start", &long).len(),
        1
    );
    assert!(frontmatter("# 没有 frontmatter\n").is_err());

    // Examples: an invalid character, an unlabelled fence, an unknown label, a bad agent
    // return, and valid ones (a fragment is not checked).
    let md = fake(
        "agents/fake.md",
        "---\nname: fake\n---\n\
         ```json character\n{\"id\": \"林风\", \"display_name\": \"林风\"}\n```\n\
         ```json\n{}\n```\n\
         ```json chapter\n{}\n```\n\
         ```json agent-return\n{\"status\": \"done\", \"agent\": \"chapter-writer\"}\n```\n\
         ```json agent-return\n{\"type\": \"requires_user_decision\", \"agent\": \"plot-architect\", \"recommendation\": \"A\", \"options\": [\"A\"], \"rationale\": \"因为\"}\n```\n\
         ```json agent-return\n{\"status\": \"completed\", \"agent\": \"summarizer\", \"chapter\": 3, \"files\": [\"staging/state/chapter-003-delta.json\"]}\n```\n\
         ```json character\n{\"id\": \"lin-feng\", \"display_name\": \"林风\"}\n```\n\
         ```json fragment\n{\"ops\": [ … ]}\n```\n",
    );
    let p = example_problems(&md);
    let at: Vec<&str> = p.iter().map(|m| m.split(": ").next().unwrap()).collect();
    assert_eq!(
        at,
        [
            "agents/fake.md:4",
            "agents/fake.md:7",
            "agents/fake.md:10",
            "agents/fake.md:13",
            "agents/fake.md:16"
        ],
        "{p:#?}"
    );
    assert!(p[0].contains("/id"), "{}", p[0]);

    // Paths: one that exists, one that does not, a skill-dir path outside a skill.
    let doc = fake(
        "agents/fake.md",
        "读 `${CLAUDE_PLUGIN_ROOT}/templates/brief-template.md`。\n读 ${CLAUDE_PLUGIN_ROOT}/templates/nope.md。\n读 ${CLAUDE_SKILL_DIR}/references/x.md\n",
    );
    let p = path_problems(&repo(), &doc);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].starts_with("agents/fake.md:2: ") && p[0].contains("nope.md"),
        "{p:#?}"
    );
    assert!(p[1].starts_with("agents/fake.md:3: "), "{p:#?}");
}

/// Parse-only mode runs nothing: `init` creates no directory, `status` outside a project
/// succeeds; a line that does not parse still fails with exit 2.
#[test]
fn parse_only_mode_parses_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .env_clear()
            .env("NOVEL_PARSE_ONLY", "1")
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&["init", "book", "--title", "书"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    assert!(!tmp.path().join("book").exists(), "init must not run");
    assert_eq!(run(&["--json", "status"]).status.code(), Some(0));
    assert_eq!(run(&["status", "--bogus"]).status.code(), Some(2));
    assert_eq!(run(&["chapter", "begin", "x"]).status.code(), Some(2));
}

/// Every option `novel next` can offer is routed by `/novel:start`, and every flow it names has
/// its reference file — a new option without its flow fails here, not in front of an author.
#[test]
fn every_menu_option_has_its_route_and_every_flow_its_file() {
    use novel_core::menu::OptionId;
    let skill = std::fs::read_to_string(repo().join("skills/start/SKILL.md")).unwrap();
    let mut problems = Vec::new();
    for id in OptionId::ALL {
        if !skill.contains(&format!("`{}`", id.as_str())) {
            problems.push(format!(
                "skills/start/SKILL.md does not route `{}`",
                id.as_str()
            ));
        }
        if let Some(flow) = id.flow() {
            let file = format!("skills/start/references/{flow}.md");
            if !repo().join(&file).is_file() {
                problems.push(format!("{}: flow {flow} has no {file}", id.as_str()));
            }
            if !skill.contains(&format!("`{flow}.md`")) {
                problems.push(format!("skills/start/SKILL.md does not list `{flow}.md`"));
            }
        }
    }
    assert_none("menu routes", problems);
}

// ---- Rules written once ------------------------------------------------------------------------

/// The gate's default thresholds (`novel init`'s `novel.json`): the one table of them lives in
/// `skills/continue/references/gate-loop.md`; everything else says "the binary decides".
const GATE_TABLE_FILE: &str = "skills/continue/references/gate-loop.md";
const GATE_THRESHOLDS: [&str; 4] = ["4.0", "3.5", "3.0", "2.0"];
const GATE_WORDS: [&str; 11] = [
    "pass", "polish", "revise", "pause", "rewrite", "门控", "通过", "修订", "暂停", "重写", "润色",
];
/// The four answers of the pause menu: the one menu lives in `pause-decision.md`.
const PAUSE_MENU_FILE: &str = "skills/start/references/pause-decision.md";
const PAUSE_OPTIONS: [&str; 4] = ["按意见改写", "推倒重写", "接受现稿", "我自己来改"];

/// The decimal numbers written in a line (`3.5`, `4.0`; not the `3.05` or `13.0` around them).
fn decimals(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(
                chars[start..i]
                    .iter()
                    .collect::<String>()
                    .trim_end_matches('.')
                    .to_string(),
            );
        } else {
            i += 1;
        }
    }
    out
}

/// Lines outside the one gate table that state a gate threshold, and files other than the one
/// pause menu that hold the menu.
fn repeated_rule_problems(docs: &[Doc]) -> Vec<String> {
    let mut out = Vec::new();
    for doc in docs {
        if doc.rel != GATE_TABLE_FILE {
            for (no, line) in doc.text.lines().enumerate() {
                let numbers = decimals(line);
                let threshold = numbers
                    .iter()
                    .any(|n| GATE_THRESHOLDS.contains(&n.as_str()));
                if threshold && GATE_WORDS.iter().any(|w| line.contains(w)) {
                    out.push(format!(
                        "{}:{}: a gate threshold written outside {GATE_TABLE_FILE} (say the binary decides, see `chapter gate`'s decision)\n    {}",
                        doc.rel,
                        no + 1,
                        line.trim()
                    ));
                }
            }
        }
        if doc.rel != PAUSE_MENU_FILE {
            let options = PAUSE_OPTIONS
                .iter()
                .filter(|o| doc.text.contains(*o))
                .count();
            if options >= 3 {
                out.push(format!(
                    "{}: the pause menu ({options} of its options) outside {PAUSE_MENU_FILE}",
                    doc.rel
                ));
            }
        }
    }
    out
}

#[test]
fn rules_the_markdown_repeats_live_in_one_place() {
    let docs = plugin_docs(&repo());
    assert!(docs.iter().any(|d| d.rel == GATE_TABLE_FILE));
    assert!(docs.iter().any(|d| d.rel == PAUSE_MENU_FILE));
    assert_none("repeated rule", repeated_rule_problems(&docs));
    // …and the check catches a copy.
    let copy = fake(
        "agents/fake.md",
        "---\nname: fake\n---\n总分 ≥ 4.0 直接通过，3.5–3.9 二次润色。\n均分 3.05，13.0 字。\n\
         暂停时问：按意见改写、推倒重写、接受现稿。\n",
    );
    let p = repeated_rule_problems(std::slice::from_ref(&copy));
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(p[0].starts_with("agents/fake.md:4: "), "{p:#?}");
    assert!(p[1].contains("pause menu"), "{p:#?}");
}

/// The task modes `/novel:start` lists for each agent (its shared rule on dispatching): the
/// text from 「只能用这些模式：」 to the next 「。」, `agent \`a|b\`` parts separated by 「；」.
fn listed_modes(skill: &str) -> Result<BTreeMap<String, Vec<String>>, String> {
    let start = skill
        .find("只能用这些模式：")
        .ok_or("skills/start/SKILL.md lists no task modes (只能用这些模式：…)")?;
    let rest = &skill[start + "只能用这些模式：".len()..];
    let list = &rest[..rest.find('。').unwrap_or(rest.len())];
    let mut out = BTreeMap::new();
    for part in list.split('；') {
        let part = part.trim();
        let (agent, modes) = part
            .split_once('`')
            .ok_or_else(|| format!("not `agent \\`a|b\\``: {part:?}"))?;
        let modes = modes.trim_end_matches('`');
        out.insert(
            agent.trim().to_string(),
            modes.split('|').map(|m| m.trim().to_string()).collect(),
        );
    }
    Ok(out)
}

/// The `任务：X` a Markdown text dispatches (X up to the first delimiter).
fn dispatched_modes(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("任务：") {
            let mode: String = line[at + "任务：".len()..]
                .chars()
                .take_while(|c| !"`，。、；：）) |/\"".contains(*c))
                .collect();
            if !mode.is_empty() {
                out.push((no + 1, mode));
            }
        }
    }
    out
}

/// Every task a skill dispatches is one `/novel:start` lists for some agent, and every agent
/// knows the modes listed for it.
fn task_mode_problems(root: &Path) -> Vec<String> {
    let start = std::fs::read_to_string(root.join("skills/start/SKILL.md")).unwrap();
    let listed = match listed_modes(&start) {
        Ok(l) => l,
        Err(e) => return vec![e],
    };
    let mut out = Vec::new();
    for agent in AGENTS {
        let Some(modes) = listed.get(agent) else {
            out.push(format!(
                "skills/start/SKILL.md: no task modes listed for {agent}"
            ));
            continue;
        };
        let body = std::fs::read_to_string(root.join(format!("agents/{agent}.md"))).unwrap();
        for m in modes {
            if !body.contains(m.as_str()) {
                out.push(format!(
                    "agents/{agent}.md: does not know the task 「{m}」 /novel:start lists"
                ));
            }
        }
    }
    let all: Vec<&String> = listed.values().flatten().collect();
    for doc in plugin_docs(root)
        .iter()
        .filter(|d| d.rel.starts_with("skills/"))
    {
        for (no, mode) in dispatched_modes(&doc.text) {
            if !all.iter().any(|m| **m == mode) {
                out.push(format!(
                    "{}:{no}: dispatches 任务：{mode}, not a mode skills/start/SKILL.md lists",
                    doc.rel
                ));
            }
        }
    }
    out
}

#[test]
fn every_dispatched_task_is_a_listed_mode_the_agent_knows() {
    assert_none("task modes", task_mode_problems(&repo()));
    let listed = listed_modes(
        "派发。`任务：` 只能用这些模式：summarizer `摘要|回填`；quality-judge `评审`。其余",
    )
    .unwrap();
    assert_eq!(listed["summarizer"], ["摘要", "回填"]);
    assert_eq!(
        dispatched_modes("派 `novel:summarizer`，`任务：回填`，`章节：<N>`。\n任务：卷规划\n"),
        [(1, "回填".to_string()), (2, "卷规划".to_string())]
    );
}

// ---- The author's journey: rules the flows share (issue 33) -------------------------------

/// The paragraphs of a text (blank-line separated), with the 1-based line each starts on.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            out.extend(cur.take());
        } else {
            let p = cur.get_or_insert_with(|| (i + 1, String::new()));
            p.1.push_str(line);
            p.1.push('\n');
        }
    }
    out.extend(cur);
    out
}

/// What the journey through the real client needs the Markdown to say, one problem a line:
/// - every hand-over from `/novel:start` to `/novel:continue` names the book's directory
///   (`项目：<DIR>`), and `/novel:continue` opens with `next` on that directory when given — the
///   trial used to run `next` in the author's folder, the book's parent, and stop;
/// - every file that calls for AskUserQuestion says what to do without it (headless, SDK),
///   and no agent asks;
/// - `pov_characters` is only ever written as a slug;
/// - no agent merges a state delta (the skill does, once), and PlotArchitect's new characters
///   and contract changes are routed by one rule that both planning flows point to;
/// - nothing tells the model to use a Grep or Glob tool (the pinned client has neither).
fn journey_rule_problems(docs: &[Doc]) -> Vec<String> {
    let mut out = Vec::new();
    let mut routing_rule = false;
    for doc in docs {
        let agent = doc.rel.starts_with("agents/");
        for (no, para) in paragraphs(&doc.text) {
            let at = format!("{}:{no}", doc.rel);
            if doc.rel.starts_with("skills/start/")
                && para.contains("Skill 工具调用")
                && para.contains("`novel:continue`")
                && !para.contains("项目：<DIR>")
            {
                out.push(format!(
                    "{at}: hands over to novel:continue without the book's directory (项目：<DIR>)"
                ));
            }
            if para.contains("pov_characters") && !para.contains("slug") {
                out.push(format!("{at}: pov_characters written other than as a slug"));
            }
            if para.contains("new_characters") && doc.rel.starts_with("skills/") {
                if doc.rel == "skills/start/SKILL.md" {
                    routing_rule |= para.contains("任务：新增角色");
                } else if !para.contains("共用规则第 4 条") {
                    out.push(format!(
                        "{at}: routes new_characters itself instead of by SKILL.md 共用规则第 4 条"
                    ));
                }
            }
            for tool in ["用 Grep", "Grep 工具", "用 Glob", "Glob 工具"] {
                if para.contains(tool) {
                    out.push(format!(
                        "{at}: 「{tool}」: the pinned client has no such tool (Bash grep/find)"
                    ));
                }
            }
        }
        if doc.text.contains("AskUserQuestion") {
            if agent {
                out.push(format!(
                    "{}: an agent mentions AskUserQuestion (only the skill asks)",
                    doc.rel
                ));
            } else if !doc.text.contains("没有 AskUserQuestion") {
                out.push(format!(
                    "{}: calls for AskUserQuestion and never says what to do without it",
                    doc.rel
                ));
            }
        }
        if agent {
            for inv in invocations(&doc.text) {
                if inv.text.contains(" ops apply ") {
                    out.push(format!(
                        "{}:{}: an agent merges a delta (the skill that dispatched it does, once): {}",
                        doc.rel, inv.line, inv.text
                    ));
                }
            }
        }
    }
    let by_rel = |rel: &str| docs.iter().find(|d| d.rel == rel).map(|d| d.text.as_str());
    if let Some(cont) = by_rel("skills/continue/SKILL.md")
        && !cont.contains(r#"novel --project "<DIR>" next --json"#)
    {
        out.push("skills/continue/SKILL.md: no `next` on the directory it is handed".into());
    }
    if docs.iter().any(|d| d.rel == "skills/start/SKILL.md") && !routing_rule {
        out.push(
            "skills/start/SKILL.md: no shared rule routing PlotArchitect's new_characters to CharacterWeaver".into(),
        );
    }
    out
}

#[test]
fn the_flows_hand_over_ask_and_own_their_steps_once() {
    let docs = plugin_docs(&repo());
    assert_none("journey rule", journey_rule_problems(&docs));
    // …and the checks catch each mistake.
    let bad = [
        fake(
            "skills/start/references/x.md",
            "# x\n\n用 Skill 工具调用 `novel:continue`，参数 `3`。\n\n用 AskUserQuestion 问。\n\n\
             `pov_characters` 填主角显示名。\n\n返回的 `data.new_characters` 派 character-weaver 建档。\n\n用 Grep 搜。\n",
        ),
        fake(
            "agents/fake.md",
            "---\nname: fake\n---\n不问作者（AskUserQuestion）。\n\n```bash\nnovel --project \"<DIR>\" ops apply \"<FILE>\" --manual --json\n```\n",
        ),
    ];
    let p = journey_rule_problems(&bad);
    for want in [
        "without the book's directory",
        "never says what to do without it",
        "other than as a slug",
        "routes new_characters itself",
        "no such tool",
        "an agent mentions AskUserQuestion",
        "an agent merges a delta",
    ] {
        assert!(p.iter().any(|l| l.contains(want)), "{want}: {p:#?}");
    }
}

/// Issue 40: who may be named and who registers a new person is one rule, written once — in the
/// novel-writing skill, between its markers — and handed as it is to the writer, the planner,
/// the judge and the Summarizer in their packets (`novel_core::context::assemble::people_rule`).
/// No agent or skill says it again in its own words: a line that tells how to write a person
/// who is not registered (「用……称呼」) or who registers one (「由 CharacterWeaver 建档」,
/// 「由调度去建档」, 「建档由作者决定」: the three owners the bodies used to name) is a
/// restatement. The agents that need the rule point to it by name.
#[test]
fn the_new_person_rule_is_written_once() {
    let person = regex::Regex::new(
        "有名有姓|没登记|未登记|没有登记|没建档|档案里没有|新登场|新人物|临时人物",
    )
    .unwrap();
    let described = regex::Regex::new("用[^。；]*称呼").unwrap();
    let registers = regex::Regex::new("CharacterWeaver\\s*建档|由调度去?建档|建档由").unwrap();
    let (open, close) = ("<!-- novel:people-rule -->", "<!-- /novel:people-rule -->");
    let mut rule_at = Vec::new();
    let mut restated = Vec::new();
    for doc in plugin_docs(&repo()) {
        let mut inside = false;
        for (i, line) in doc.text.lines().enumerate() {
            let at = format!("{}:{}", doc.rel, i + 1);
            if line.contains(open) {
                rule_at.push(at);
                inside = true;
            } else if line.contains(close) {
                inside = false;
            } else if !inside
                && ((person.is_match(line) && described.is_match(line)) || registers.is_match(line))
            {
                restated.push(format!("{at}: {line}"));
            }
        }
    }
    assert_eq!(rule_at.len(), 1, "the rule's markers: {rule_at:?}");
    assert!(
        rule_at[0].starts_with("skills/novel-writing/SKILL.md:"),
        "{rule_at:?}"
    );
    assert_none(
        "the new-person rule said again outside its one place",
        restated,
    );
    let rule = novel_core::context::assemble::people_rule();
    assert!(
        rule.contains("称呼")
            && rule.contains("new_names")
            && rule.contains("CharacterWeaver 建档"),
        "{rule}"
    );
    for agent in [
        "chapter-writer",
        "plot-architect",
        "quality-judge",
        "summarizer",
    ] {
        let text = std::fs::read_to_string(repo().join(format!("agents/{agent}.md"))).unwrap();
        assert!(
            text.contains("「人物规则」"),
            "agents/{agent}.md does not point to the rule"
        );
    }
}
