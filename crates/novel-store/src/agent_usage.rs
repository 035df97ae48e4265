//! What the pipeline agents spent, recorded by the PostToolUse hook on the Agent tool (`novel
//! hook post-tool-use`, `hooks/hooks.json`) so that no one copies figures onto a command line.
//!
//! Verified with the real client 2.1.197: the hook's stdin for an Agent call carries
//! `tool_input` as the model passed it (`subagent_type`, `prompt`, `model` when given) and a
//! `tool_response` object with `status`, `agentType`, `resolvedModel` (the model the agent ran
//! on, e.g. `claude-opus-4-8[1m]`), `totalTokens` (the figure the Agent result's `<usage>` block
//! shows as `subagent_tokens`: one total, no input/output split), `totalDurationMs` (its
//! `duration_ms`), `totalToolUseCount` and `usage` (the last request's `input_tokens`,
//! `output_tokens` and cache figures — not the agent's total, so not used here).
//!
//! One file per Agent call — `staging/logs/chapter-NNN-usage-<call id>.json`, written
//! atomically — so that two agents dispatched in one message (the two judges of a key chapter)
//! never write the same file. Only the chapter in flight's pipeline agents are recorded (their
//! prompt names the book and the chapter: `项目目录：` and `章节：`). `novel chapter stage`
//! folds every record of its chapter into the stage's line of the pipeline log when it is given
//! no usage flags (flags win) and removes them in the stage's own journal; a commit removes what
//! is left.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use novel_core::naming::is_usage_record;

use crate::error::StoreError;
use crate::layout::staging_usage_prefix as prefix;
use crate::project::Project;

/// The agents whose usage belongs to a chapter's stages.
const PIPELINE_AGENTS: [&str; 4] = [
    "novel:chapter-writer",
    "novel:summarizer",
    "novel:style-refiner",
    "novel:quality-judge",
];

/// One Agent call's usage, as its record file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentUsage {
    pub chapter: u32,
    /// `novel:<agent>`.
    pub agent: String,
    /// `totalTokens` (`subagent_tokens`).
    pub tokens: u64,
    /// `totalDurationMs`.
    pub duration_ms: u64,
    /// The `model` the dispatch passed (`opus`, `sonnet`), as `--model` would have said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model the client ran the agent on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_model: Option<String>,
}

/// A recorded call found in staging: its project-relative path and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Staged {
    pub rel: String,
    pub usage: AgentUsage,
}

/// The value after `key` (`项目目录：`, `章节：`) on a line of an Agent prompt.
fn prompt_field<'a>(prompt: &'a str, key: &str) -> Option<&'a str> {
    prompt
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// A hook's stdin (the whole JSON) as the call's usage, the book directory its prompt names and
/// the call's id; `None` for anything but a finished Agent/Task call of a pipeline agent with
/// figures.
pub fn from_hook(input: &Value) -> Option<(std::path::PathBuf, String, AgentUsage)> {
    let tool = input.get("tool_name")?.as_str()?;
    if tool != "Agent" && tool != "Task" {
        return None;
    }
    let ti = input.get("tool_input")?;
    let agent = ti.get("subagent_type")?.as_str()?;
    if !PIPELINE_AGENTS.contains(&agent) {
        return None;
    }
    let prompt = ti.get("prompt")?.as_str()?;
    let dir = std::path::PathBuf::from(prompt_field(prompt, "项目目录：")?);
    let chapter = prompt_field(prompt, "章节：")?.parse::<u32>().ok()?;
    let resp = input.get("tool_response")?;
    let number = |key: &str| resp.get(key).and_then(Value::as_u64);
    let usage = AgentUsage {
        chapter,
        agent: agent.to_string(),
        tokens: number("totalTokens")?,
        duration_ms: number("totalDurationMs").unwrap_or(0),
        model: ti.get("model").and_then(Value::as_str).map(str::to_string),
        resolved_model: resp
            .get("resolvedModel")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let raw = input
        .get("tool_use_id")
        .and_then(Value::as_str)
        .or_else(|| resp.get("agentId").and_then(Value::as_str))?;
    let id: String = raw
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(64)
        .collect();
    (!id.is_empty()).then_some((dir, id, usage))
}

/// Records `usage` for the chapter in flight: nothing when no chapter is in flight or another
/// one is (`Ok(false)`).
pub fn record(project: &Project, id: &str, usage: &AgentUsage) -> Result<bool, StoreError> {
    let cp = crate::plan::light_checkpoint(project)?;
    if cp.inflight_chapter != Some(usage.chapter) {
        return Ok(false);
    }
    let rel = format!("staging/logs/{}{id}.json", prefix(usage.chapter));
    crate::io::write_atomic(
        &project.path(&rel),
        crate::io::to_json_text(usage).as_bytes(),
    )?;
    Ok(true)
}

/// Every usage record in staging, in name order: `chapter`'s records that read, and the
/// project-relative paths of all records (any chapter, readable or not: what a stage of
/// `chapter` removes).
pub fn staged(project: &Project, chapter: u32) -> (Vec<Staged>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(project.path("staging/logs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_usage_record(n))
        .collect();
    names.sort();
    let mut mine = Vec::new();
    let mut all = Vec::new();
    for name in names {
        let rel = format!("staging/logs/{name}");
        if name.starts_with(&prefix(chapter))
            && let Ok(text) = crate::io::read_text(&project.path(&rel))
            && let Ok(usage) = serde_json::from_str::<AgentUsage>(&text)
        {
            mine.push(Staged {
                rel: rel.clone(),
                usage,
            });
        }
        all.push(rel);
    }
    (mine, all)
}

/// The figures of several calls as one stage's: tokens and time summed; the model the
/// dispatches passed — opus when any passed it (a step with two models is logged as the
/// dearer, as the skill's `--model` rule said), else the first passed — or none.
pub fn fold(calls: &[Staged]) -> Option<(u64, u64, Option<String>)> {
    if calls.is_empty() {
        return None;
    }
    let tokens = calls.iter().map(|c| c.usage.tokens).sum();
    let ms = calls.iter().map(|c| c.usage.duration_ms).sum();
    let models: Vec<&str> = calls
        .iter()
        .filter_map(|c| c.usage.model.as_deref())
        .collect();
    let model = models
        .iter()
        .find(|m| **m == "opus")
        .or(models.first())
        .map(|m| m.to_string());
    Some((tokens, ms, model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hook(agent: &str, prompt: &str, model: Option<&str>) -> Value {
        let mut ti = json!({"subagent_type": agent, "prompt": prompt, "description": "d"});
        if let Some(m) = model {
            ti["model"] = json!(m);
        }
        json!({"hook_event_name": "PostToolUse", "tool_name": "Agent", "tool_use_id": "toolu_01:x/y",
            "tool_input": ti,
            "tool_response": {"status": "completed", "totalTokens": 120, "totalDurationMs": 158,
                "resolvedModel": "claude-opus-4-8[1m]", "usage": {"input_tokens": 100, "output_tokens": 20}}})
    }

    #[test]
    fn a_pipeline_agents_call_is_read_with_its_book_chapter_and_model() {
        let v = hook(
            "novel:quality-judge",
            "项目目录：/b/书\n任务：第二裁判\n章节：12",
            Some("opus"),
        );
        let (dir, id, u) = from_hook(&v).unwrap();
        assert_eq!(dir, std::path::PathBuf::from("/b/书"));
        assert_eq!(id, "toolu_01xy");
        assert_eq!(
            (u.chapter, u.tokens, u.duration_ms, u.model.as_deref()),
            (12, 120, 158, Some("opus"))
        );
        assert_eq!(u.resolved_model.as_deref(), Some("claude-opus-4-8[1m]"));
    }

    #[test]
    fn other_agents_other_tools_and_calls_without_figures_are_not_read() {
        let p = "项目目录：/b\n章节：3";
        assert!(from_hook(&hook("novel:world-builder", p, None)).is_none());
        assert!(from_hook(&hook("novel:chapter-writer", "项目目录：/b", None)).is_none());
        assert!(from_hook(&hook("novel:chapter-writer", "章节：3", None)).is_none());
        let mut v = hook("novel:chapter-writer", p, None);
        v["tool_name"] = json!("Write");
        assert!(from_hook(&v).is_none());
        let mut v = hook("novel:chapter-writer", p, None);
        v["tool_response"] = json!("text only");
        assert!(from_hook(&v).is_none());
        let mut v = hook("novel:chapter-writer", p, None);
        v["tool_name"] = json!("Task");
        assert!(from_hook(&v).is_some());
    }

    #[test]
    fn record_names_and_the_fold() {
        assert!(is_usage_record("chapter-002-usage-toolu_1.json"));
        assert!(!is_usage_record("chapter-002-usage-.json"));
        assert!(!is_usage_record("chapter-002-log.json"));
        assert!(!is_usage_record("chapter-x-usage-a.json"));
        let call = |t, ms, m: Option<&str>| Staged {
            rel: String::new(),
            usage: AgentUsage {
                chapter: 1,
                agent: "novel:quality-judge".into(),
                tokens: t,
                duration_ms: ms,
                model: m.map(str::to_string),
                resolved_model: None,
            },
        };
        assert_eq!(fold(&[]), None);
        assert_eq!(
            fold(&[call(10, 1, None), call(5, 2, Some("opus"))]),
            Some((15, 3, Some("opus".into())))
        );
        assert_eq!(
            fold(&[call(10, 1, Some("sonnet")), call(5, 2, None)]),
            Some((15, 3, Some("sonnet".into())))
        );
        assert_eq!(fold(&[call(7, 1, None)]), Some((7, 1, None)));
    }
}
