//! The allow rules a book's `.claude/settings.local.json` carries so that the plugin's flows run
//! in the client's default permission mode without asking at every step (放行设置).
//!
//! A skill's `allowed-tools` cover only the turn its slash command was typed in; the quick start,
//! a volume plan and a paused chapter need the author's answers over several turns, and from the
//! second on every `novel` call, every read of the plugin's reference files and every file an
//! agent writes would ask (headless: be refused). Verified with the pinned client (2.1.197):
//!
//! - `Bash(novel:*)` lets every `novel …` command run (pipes of allowed parts included);
//! - `Read(//<plugin>/**)` lets the model open the plugin's `references/*.md` and templates
//!   (absolute paths take two slashes);
//! - `Edit(/**)` lets Write and Edit create and change files anywhere in the book (a leading
//!   slash is relative to the directory holding `.claude/`); the plugin's guard hooks still
//!   refuse the files the binary owns;
//! - `Skill(novel:*)` lets `/novel:start` hand over to `/novel:continue` and `/novel:status`.
//!
//! The Agent tool needs no rule. The client honours a project's `settings.local.json` only in a
//! workspace the author trusted (the trust dialog of an interactive start) or inside a git
//! repository that does not track that file.
//!
//! The same file switches off, with deny rules, the client's tools a book never uses
//! ([`SWITCHED_OFF`]): a denied tool is left out of every request the client sends (verified with
//! 2.1.197: 24 tools and ~20K estimated tokens of schemas per request of the main conversation
//! become 8 and ~7.6K), which is most of what a chapter's orchestration costs.
//!
//! Pure: the rules from the plugin's root, and an existing settings document merged with them.

use serde_json::{Map, Value};

/// The settings file, relative to the book's directory.
pub const SETTINGS_LOCAL: &str = ".claude/settings.local.json";

/// The client's tools a book's flows never call (scheduling, worktrees, the to-do list, notebooks,
/// messaging, workflows), denied in the book's directory so that their schemas are not sent with
/// every request. An author who wants one back deletes its line from `permissions.deny`.
pub const SWITCHED_OFF: [&str; 16] = [
    "Workflow",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ScheduleWakeup",
    "EnterWorktree",
    "ExitWorktree",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "TaskStop",
    "NotebookEdit",
    "SendMessage",
    "ReportFindings",
];

/// The rules, in the order they are written. `plugin_root` is the plugin's directory as the
/// wrapper exports it (`NOVEL_PLUGIN_ROOT`); without it the read rule is left out.
pub fn wanted(plugin_root: Option<&str>) -> Vec<String> {
    let mut rules = vec!["Bash(novel:*)".to_string()];
    if let Some(root) = plugin_root.map(read_root).filter(|r| !r.is_empty()) {
        rules.push(format!("Read(/{root}/**)"));
    }
    rules.push("Edit(/**)".to_string());
    rules.push("Skill(novel:*)".to_string());
    rules
}

/// The directory the read rule covers: the plugin's root, or — for a plugin the client cached
/// from a marketplace (`…/.claude/plugins/cache/<marketplace>/<plugin>/<version>`) — every
/// version of it, so that an update keeps the rule good. No trailing slash.
pub fn read_root(plugin_root: &str) -> String {
    let root = plugin_root.trim_end_matches('/');
    if let Some(at) = root.find("/.claude/plugins/cache/") {
        let rest = &root[at + "/.claude/plugins/cache/".len()..];
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() >= 3 && parts.iter().all(|p| !p.is_empty()) {
            return format!(
                "{}/{}/{}",
                &root[..at + "/.claude/plugins/cache".len()],
                parts[0],
                parts[1]
            );
        }
    }
    root.to_string()
}

/// Why an existing settings file cannot take the rules (it is then left as it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsShape {
    #[error("不是一个 JSON 对象")]
    NotObject,
    #[error("permissions 不是一个 JSON 对象")]
    PermissionsNotObject,
    #[error("permissions.allow 不是字符串数组")]
    AllowNotList,
    #[error("permissions.deny 不是字符串数组")]
    DenyNotList,
}

/// The rules of `wanted` that `settings` (the parsed file; `None` when absent) does not allow
/// yet.
pub fn missing(settings: Option<&Value>, wanted: &[String]) -> Result<Vec<String>, SettingsShape> {
    let have = allowed(settings)?;
    Ok(wanted
        .iter()
        .filter(|r| !have.iter().any(|h| h == *r))
        .cloned()
        .collect())
}

/// The tools of [`SWITCHED_OFF`] that `settings` does not deny yet.
pub fn not_switched_off(settings: Option<&Value>) -> Result<Vec<String>, SettingsShape> {
    let have = listed(settings, "deny", SettingsShape::DenyNotList)?;
    Ok(SWITCHED_OFF
        .iter()
        .filter(|t| !have.iter().any(|h| h == *t))
        .map(|t| t.to_string())
        .collect())
}

fn allowed(settings: Option<&Value>) -> Result<Vec<String>, SettingsShape> {
    listed(settings, "allow", SettingsShape::AllowNotList)
}

/// `permissions.<key>` of `settings`: a list of strings, or `bad`.
fn listed(
    settings: Option<&Value>,
    key: &str,
    bad: SettingsShape,
) -> Result<Vec<String>, SettingsShape> {
    let Some(settings) = settings else {
        return Ok(Vec::new());
    };
    let obj = settings.as_object().ok_or(SettingsShape::NotObject)?;
    let Some(perms) = obj.get("permissions") else {
        return Ok(Vec::new());
    };
    let perms = perms
        .as_object()
        .ok_or(SettingsShape::PermissionsNotObject)?;
    match perms.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or(bad),
        Some(_) => Err(bad),
    }
}

/// The session settings the book wants, each set only where the file has no such key (a value
/// already there is the author's choice and is never replaced): `model`, the book's model for
/// its conversation (`novel.json` `models.main`, Sonnet unless the author chose otherwise; none
/// when `model` is `None`), and `autoMemoryEnabled: false` — the client's own memory of coding
/// sessions, which a book does not use (its preferences are `novel prefs`), adds its several
/// thousand tokens of instructions to every request of the conversation.
pub fn session_defaults(model: Option<&str>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(m) = model {
        out.push(("model".to_string(), Value::String(m.to_string())));
    }
    out.push(("autoMemoryEnabled".to_string(), Value::Bool(false)));
    out
}

/// The `defaults` `settings` does not set yet.
pub fn unset(settings: Option<&Value>, defaults: Vec<(String, Value)>) -> Vec<(String, Value)> {
    defaults
        .into_iter()
        .filter(|(k, _)| settings.is_none_or(|s| s.get(k).is_none()))
        .collect()
}

/// `settings` with the `missing` rules appended to `permissions.allow`, the `off` tools to
/// `permissions.deny`, and the `session` keys ([`session_defaults`]) set where absent; every
/// other key, and the rules already there, kept in their order.
pub fn merged(
    settings: Option<&Value>,
    missing: &[String],
    off: &[String],
    session: &[(String, Value)],
) -> Result<Value, SettingsShape> {
    allowed(settings)?;
    listed(settings, "deny", SettingsShape::DenyNotList)?;
    let mut obj = match settings {
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(SettingsShape::NotObject),
        None => Map::new(),
    };
    let perms = obj
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let perms = perms
        .as_object_mut()
        .ok_or(SettingsShape::PermissionsNotObject)?;
    let allow = perms
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()));
    let allow = allow.as_array_mut().ok_or(SettingsShape::AllowNotList)?;
    allow.extend(missing.iter().cloned().map(Value::String));
    if !off.is_empty() {
        let deny = perms
            .entry("deny")
            .or_insert_with(|| Value::Array(Vec::new()));
        let deny = deny.as_array_mut().ok_or(SettingsShape::DenyNotList)?;
        deny.extend(off.iter().cloned().map(Value::String));
    }
    for (k, v) in session {
        obj.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(Value::Object(obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_for_a_checkout_and_for_a_cached_plugin() {
        assert_eq!(
            wanted(Some("/home/a/novel")),
            [
                "Bash(novel:*)",
                "Read(//home/a/novel/**)",
                "Edit(/**)",
                "Skill(novel:*)"
            ]
        );
        // Every version of the cached plugin: the rule survives an update.
        assert_eq!(
            read_root("/home/a/.claude/plugins/cache/novel-marketplace/novel/0.3.0/"),
            "/home/a/.claude/plugins/cache/novel-marketplace/novel"
        );
        assert_eq!(
            wanted(None),
            ["Bash(novel:*)", "Edit(/**)", "Skill(novel:*)"]
        );
    }

    #[test]
    fn merge_keeps_what_is_there() {
        let have = json!({"model": "opus", "permissions": {"deny": ["Read(./.env)"],
            "allow": ["Bash(git status)", "Edit(/**)"]}});
        let want = wanted(Some("/p"));
        let miss = missing(Some(&have), &want).unwrap();
        assert_eq!(miss, ["Bash(novel:*)", "Read(//p/**)", "Skill(novel:*)"]);
        let off = not_switched_off(Some(&have)).unwrap();
        assert_eq!(off.len(), SWITCHED_OFF.len());
        // The author's model stays (the book's is offered only where none is set).
        let session = unset(Some(&have), session_defaults(Some("sonnet")));
        assert_eq!(session, [("autoMemoryEnabled".to_string(), json!(false))]);
        let out = merged(Some(&have), &miss, &off[..2], &[]).unwrap();
        assert_eq!(
            out,
            json!({"model": "opus", "permissions": {"deny": ["Read(./.env)", "Workflow", "CronCreate"],
                "allow": ["Bash(git status)", "Edit(/**)", "Bash(novel:*)", "Read(//p/**)",
                    "Skill(novel:*)"]}})
        );
        assert!(missing(Some(&out), &want).unwrap().is_empty());
        assert_eq!(not_switched_off(Some(&out)).unwrap(), off[2..]);
        assert_eq!(
            merged(None, &want, &[], &[]).unwrap(),
            json!({"permissions": {"allow": want}})
        );
        assert_eq!(
            merged(
                None,
                &want,
                &[],
                &unset(None, session_defaults(Some("sonnet")))
            )
            .unwrap(),
            json!({"permissions": {"allow": want}, "model": "sonnet", "autoMemoryEnabled": false})
        );
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert_eq!(
            missing(Some(&json!([])), &[]).unwrap_err(),
            SettingsShape::NotObject
        );
        assert_eq!(
            merged(Some(&json!({"permissions": {"allow": "x"}})), &[], &[], &[]).unwrap_err(),
            SettingsShape::AllowNotList
        );
        assert_eq!(
            not_switched_off(Some(&json!({"permissions": {"deny": {}}}))).unwrap_err(),
            SettingsShape::DenyNotList
        );
    }
}
