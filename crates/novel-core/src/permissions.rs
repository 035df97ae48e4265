//! The 放行设置: the allow rules that let the plugin's flows run in the client's default
//! permission mode without asking at every step, and the book's own session settings.
//!
//! A skill's `allowed-tools` cover only the turn its slash command was typed in; the quick start,
//! a volume plan and a paused chapter need the author's answers over several turns, and from the
//! second on every `novel` call, every read of the plugin's reference files and every file an
//! agent writes would ask (headless: be refused). Verified with the pinned client (2.1.197):
//!
//! - `Bash(novel:*)` lets every `novel …` command run (pipes of allowed parts included);
//! - `Read(//<plugin>/**)` lets the model open the plugin's `references/*.md` and templates
//!   (absolute paths take two slashes);
//! - `Edit(//<folder>/**)` lets Write and Edit create and change files under the folder the
//!   sessions start in (the book's, or the one holding it); the plugin's guard hooks still
//!   refuse the files the binary owns;
//! - `Skill(novel:*)` lets `/novel:start` hand over to `/novel:continue` and `/novel:status`.
//!
//! The Agent tool needs no rule. **Where the rules live** decides whether they help the author
//! at once (measured with 2.1.197, interactive in tmux and headless): rules written into the
//! author's user settings (`~/.claude/settings.json`) during a session are in force about a
//! second and a half later, in every folder, trusted or not. Rules in a folder's
//! `.claude/settings.local.json` count only in a folder the author trusted, and only from the
//! next launch unless that `.claude/` existed when the client started — a `.claude/` made by a
//! SessionStart hook does not count (2 prompts of 2 in the first turn after the write). So the
//! allow rules go to the user settings ([`wanted`]), and the folder's local settings carry only
//! what is the book's: the tools it never uses, switched off with deny rules ([`SWITCHED_OFF`]:
//! a denied tool is left out of every request the client sends — 24 tools and ~20K estimated
//! tokens of schemas per request of the main conversation become 8 and ~7.6K), its model and
//! the client's coding memory off ([`session_defaults`]).
//!
//! Pure: the rules from the plugin's root and the folders, and an existing settings document
//! merged with them.
//!
//! Layer: ground (the lowest: no file model, no rules).

use serde_json::{Map, Value};

/// Whether the allow rules are in force for the session (the client 2.1.197 reads the user
/// settings it watches), and why not. `None` where this machine cannot tell (no client around
/// the command, a filesystem without creation times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct InForce {
    /// The rules are in the user settings (`missing` is empty).
    pub written: bool,
    /// The client has watched the user settings' folder since it started: it existed when the
    /// session's client was launched (it nearly always has: the client makes it on its first
    /// run). Rules written into a folder made later take effect from the next launch.
    pub watched: Option<bool>,
}

impl InForce {
    /// Every condition holds (an unknown one counts as holding).
    pub fn in_force(&self) -> bool {
        self.written && self.watched != Some(false)
    }

    /// The one thing that keeps the rules out, in the order the author can fix them.
    pub fn blocker(&self) -> Option<Blocker> {
        if !self.written {
            Some(Blocker::NotWritten)
        } else if self.watched == Some(false) {
            Some(Blocker::NotWatched)
        } else {
            None
        }
    }
}

impl Blocker {
    /// What the author is told: the one way that works now (the skills relay it as it is).
    pub fn advice(self) -> &'static str {
        match self {
            Blocker::NotWritten => {
                "放行设置还没写：回答我的问题时请输入 /novel:start 加上你的回答（斜杠命令那一轮不用逐条确认）。"
            }
            Blocker::NotWatched => {
                "放行设置要等 Claude Code 重新启动才生效：现在输入 /exit，再在这个目录运行 claude --continue 接着聊（之后直接回话就行）；不想重启的话，回答时请输入 /novel:start 加上你的回答。"
            }
        }
    }
}

/// Why the rules are not in force ([`InForce::blocker`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Blocker {
    /// `novel permissions --write` has not run (or the author declined).
    NotWritten,
    /// The user settings' folder appeared after the client started: in force from the next
    /// launch.
    NotWatched,
}

/// Whether a folder (created at `created`, Unix seconds) was there when the client started at
/// `client_started` (with the clocks' one-second granularity and the OS's start-time jitter).
pub fn watched_since_launch(created: u64, client_started: u64) -> bool {
    created <= client_started.saturating_add(1)
}

/// The user settings file, relative to the client's configuration folder (`~/.claude`, or
/// `$CLAUDE_CONFIG_DIR`).
pub const SETTINGS_USER: &str = "settings.json";

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

/// The allow rules, in the order they are written: the plugin's root as the wrapper exports it
/// (`NOVEL_PLUGIN_ROOT`; without it the read rule is left out) and the folders the author's
/// sessions may write in (absolute, no trailing slash; see [`edit_folders`]).
pub fn wanted(plugin_root: Option<&str>, folders: &[String]) -> Vec<String> {
    let mut rules = vec!["Bash(novel:*)".to_string()];
    if let Some(root) = plugin_root.map(read_root).filter(|r| !r.is_empty()) {
        rules.push(format!("Read(/{root}/**)"));
    }
    for f in folders {
        rules.push(format!("Edit(/{f}/**)"));
    }
    rules.push("Skill(novel:*)".to_string());
    rules
}

/// The folders the write rule opens: the session's folder when it is the book's or holds it,
/// else the book's too — never the author's home folder or the filesystem's root, which would
/// open every file the author has (the book's own folder is then the one given, once it exists).
pub fn edit_folders(book: &str, session: &str, home: Option<&str>) -> Vec<String> {
    let trim = |p: &str| p.trim_end_matches('/').to_string();
    let (book, session) = (trim(book), trim(session));
    let too_wide = |p: &str| p.is_empty() || home.is_some_and(|h| trim(h) == p);
    let mut out = Vec::new();
    let holds = book == session || book.starts_with(&format!("{session}/"));
    if !too_wide(&session) {
        out.push(session.clone());
    }
    if (!holds || too_wide(&session)) && !too_wide(&book) && book != session {
        out.push(book);
    }
    out
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
    if !missing.is_empty() {
        let allow = perms
            .entry("allow")
            .or_insert_with(|| Value::Array(Vec::new()));
        let allow = allow.as_array_mut().ok_or(SettingsShape::AllowNotList)?;
        allow.extend(missing.iter().cloned().map(Value::String));
    }
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
        let folders = vec!["/home/a/书".to_string()];
        assert_eq!(
            wanted(Some("/home/a/novel"), &folders),
            [
                "Bash(novel:*)",
                "Read(//home/a/novel/**)",
                "Edit(//home/a/书/**)",
                "Skill(novel:*)"
            ]
        );
        // Every version of the cached plugin: the rule survives an update.
        assert_eq!(
            read_root("/home/a/.claude/plugins/cache/novel-marketplace/novel/0.3.0/"),
            "/home/a/.claude/plugins/cache/novel-marketplace/novel"
        );
        assert_eq!(wanted(None, &[]), ["Bash(novel:*)", "Skill(novel:*)"]);
    }

    #[test]
    fn writes_are_opened_in_the_sessions_folder_never_the_home_folder() {
        let home = Some("/home/a");
        // The book is the session's folder, or below it: the session's folder.
        assert_eq!(
            edit_folders("/home/a/书", "/home/a/书", home),
            ["/home/a/书"]
        );
        assert_eq!(
            edit_folders("/home/a/写作/书", "/home/a/写作/", home),
            ["/home/a/写作"]
        );
        // Started in the home folder (or at the root): only the book's folder.
        assert_eq!(edit_folders("/home/a/书", "/home/a", home), ["/home/a/书"]);
        assert!(edit_folders("/home/a", "/home/a/", home).is_empty());
        assert_eq!(edit_folders("/srv/书", "/", home), ["/srv/书"]);
        // A book elsewhere: both.
        assert_eq!(
            edit_folders("/srv/书", "/home/a/写作", home),
            ["/home/a/写作", "/srv/书"]
        );
        // A sibling whose name starts the same is not below.
        assert_eq!(
            edit_folders("/home/a/写作2", "/home/a/写作", None),
            ["/home/a/写作", "/home/a/写作2"]
        );
    }

    #[test]
    fn merge_keeps_what_is_there() {
        let have = json!({"model": "opus", "permissions": {"deny": ["Read(./.env)"],
            "allow": ["Bash(git status)", "Edit(/**)"]}});
        let want = wanted(Some("/p"), &[]);
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

    #[test]
    fn rules_are_in_force_only_written_and_watched() {
        let all = InForce {
            written: true,
            watched: Some(true),
        };
        assert!(all.in_force());
        assert_eq!(all.blocker(), None);
        let unknown = InForce {
            watched: None,
            ..all
        };
        assert!(unknown.in_force());
        let late = InForce {
            watched: Some(false),
            ..all
        };
        assert_eq!(late.blocker(), Some(Blocker::NotWatched));
        let none = InForce {
            written: false,
            ..late
        };
        assert_eq!(none.blocker(), Some(Blocker::NotWritten));
        assert!(!none.in_force());
        assert!(watched_since_launch(100, 100) && watched_since_launch(101, 100));
        assert!(!watched_since_launch(102, 100));
    }
}
