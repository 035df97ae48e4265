//! One diagnostic for every check of the workspace: `novel validate` and the guard hook, the
//! volume and continuity checks, lint, the names check, the import's problems. Each says what
//! (a stable `code`), how bad (`severity`), where (`file`, and a JSON `pointer` or a
//! `line`/`col` counted in characters), and in Chinese what is wrong (`message`) and what to do
//! (`hint`). Rendered one way for people ([`Diagnostic::render`]: `path:line:col` or
//! `path: /pointer`) and serialised one way for the skills (the field order below).
//!
//! Layer: ground (the lowest: no file model, no rules).

use std::borrow::Cow;

use serde::Serialize;

/// How bad a finding is: an error fails the check by itself; a warning is reported (and, for
/// the text checks, counts toward a threshold) without failing it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    /// The label of human output.
    pub fn label_zh(self) -> &'static str {
        match self {
            Severity::Error => "错误",
            Severity::Warning => "警告",
        }
    }
}

/// The other place a finding compares with (the previous contract, the changelog line that set
/// a value, a retired character's file).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Related {
    pub file: String,
    /// JSON pointer; into `state/changelog.jsonl` it reads the file as an array of its lines
    /// (`/12/applied/0` = line 13, its first applied op).
    pub pointer: String,
}

/// One finding. `--json` keys are the fields in this order; those without a value are left
/// out. Findings order by place: file, line, column, pointer, then severity and code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// An `E_…` code of [`crate::codes::CODES`], or the rule id of a check (`chain_break`,
    /// `blacklist/<category>`, `names/near-miss` …; the rule tables of `docs/orchestration.md`
    /// and `docs/errors.md`).
    pub code: Cow<'static, str>,
    pub severity: Severity,
    /// Project-relative path (`/`-separated), or the path as given for a file outside a
    /// project.
    pub file: String,
    /// JSON pointer into `file` (`""` = the whole document); absent for a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// 1-based line (a text file, a JSONL file's line, a Markdown heading), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column counted in characters, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col: Option<usize>,
    /// The chapter the finding is about, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter: Option<u32>,
    /// What is wrong, in Chinese.
    pub message: String,
    /// What to do, in Chinese. An `E_…` code without a more specific hint carries the table's.
    pub hint: String,
    /// The text around the place (text checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<Related>,
}

impl Diagnostic {
    /// A finding about `file` as a whole. A code of the table without a `hint` gets the
    /// table's.
    pub fn new(
        code: impl Into<Cow<'static, str>>,
        severity: Severity,
        file: impl Into<String>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        let code = code.into();
        let mut hint = hint.into();
        if hint.is_empty() {
            hint = table_hint(&code).unwrap_or_default().to_string();
        }
        Diagnostic {
            code,
            severity,
            file: file.into(),
            pointer: None,
            line: None,
            col: None,
            chapter: None,
            message: message.into(),
            hint,
            excerpt: None,
            related: None,
        }
    }

    /// An error at `pointer` of the JSON document `file`, with the table's hint.
    pub fn error(
        code: &'static str,
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic::new(code, Severity::Error, file, message, "").at_pointer(pointer)
    }

    /// A warning at `pointer` of the JSON document `file`, with the table's hint.
    pub fn warning(
        code: &'static str,
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic::new(code, Severity::Warning, file, message, "").at_pointer(pointer)
    }

    pub fn at_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// At `line`:`col` (1-based, the column in characters) of a text.
    pub fn at(mut self, line: usize, col: usize) -> Self {
        self.line = Some(line);
        self.col = Some(col);
        self
    }

    /// In `file`: for a finding made on a text that did not know its file's name.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    pub fn for_chapter(mut self, chapter: u32) -> Self {
        self.chapter = Some(chapter);
        self
    }

    pub fn with_excerpt(mut self, excerpt: impl Into<String>) -> Self {
        self.excerpt = Some(excerpt.into());
        self
    }

    pub fn related(mut self, file: impl Into<String>, pointer: impl Into<String>) -> Self {
        self.related = Some(Related {
            file: file.into(),
            pointer: pointer.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Where it is, as people read it: `file:line:col`, `file:line`, `file: /pointer`, a
    /// JSONL line's pointer after its line (`file:12: /applied/0`), or the file alone.
    pub fn place(&self) -> String {
        let mut at = self.file.clone();
        if let Some(l) = self.line {
            at.push_str(&format!(":{l}"));
            if let Some(c) = self.col {
                at.push_str(&format!(":{c}"));
            }
        }
        if let Some(p) = self.pointer.as_deref().filter(|p| !p.is_empty()) {
            at.push_str(&format!(": {p}"));
        }
        at
    }

    /// The finding in one phrase, to quote in another message: `/pointer message`, or the
    /// message alone for a whole document or a text.
    pub fn brief(&self) -> String {
        match self.pointer.as_deref().filter(|p| !p.is_empty()) {
            Some(p) => format!("{p} {}", self.message),
            None => self.message.clone(),
        }
    }

    /// The hint worth printing beside the finding: a specific one. The table's hint for an
    /// `E_…` code is the same for every such finding and is said once, by the command.
    pub fn specific_hint(&self) -> Option<&str> {
        Some(self.hint.as_str()).filter(|h| !h.is_empty() && table_hint(&self.code) != Some(h))
    }

    /// The human lines: `place: code[级别]: message`, the excerpt and a specific hint indented
    /// under it, a related file in brackets.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{}: {}[{}]: {}",
            self.place(),
            self.code,
            self.severity.label_zh(),
            self.message
        );
        if let Some(r) = &self.related {
            s.push_str(&format!("（对照 {}", r.file));
            if !r.pointer.is_empty() {
                s.push_str(&format!(": {}", r.pointer));
            }
            s.push('）');
        }
        s.push('\n');
        if let Some(e) = &self.excerpt {
            s.push_str(&format!("    {e}\n"));
        }
        if let Some(h) = self.specific_hint() {
            s.push_str(&format!("    处理：{h}\n"));
        }
        s
    }
}

/// The order of findings: where (file, line, column, pointer), then what.
type OrderKey<'a> = (
    (&'a str, Option<usize>, Option<usize>, Option<&'a str>),
    (Severity, &'a str, &'a str, &'a str),
    (Option<u32>, Option<&'a str>, Option<&'a Related>),
);

impl Diagnostic {
    fn order_key(&self) -> OrderKey<'_> {
        (
            (&self.file, self.line, self.col, self.pointer.as_deref()),
            (self.severity, &self.code, &self.message, &self.hint),
            (self.chapter, self.excerpt.as_deref(), self.related.as_ref()),
        )
    }
}

impl Ord for Diagnostic {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

impl PartialOrd for Diagnostic {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

fn table_hint(code: &str) -> Option<&'static str> {
    crate::codes::lookup(code).map(|d| d.hint)
}

/// Escapes a key for use inside a JSON pointer (RFC 6901).
pub fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Every finding's lines, in order.
pub fn render_all(findings: &[Diagnostic]) -> String {
    findings.iter().map(Diagnostic::render).collect()
}

/// Findings by chapter (those about none first), then file, line, pointer, code: the order of
/// the plan checks, which report chapter by chapter.
pub fn sort_by_chapter(findings: &mut [Diagnostic]) {
    findings.sort_by(|a, b| {
        (a.chapter, &a.file, a.line, &a.pointer, &a.code)
            .cmp(&(b.chapter, &b.file, b.line, &b.pointer, &b.code))
    });
}

/// Counts of a findings list by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub error: usize,
    pub warning: usize,
}

pub fn counts(findings: &[Diagnostic]) -> Counts {
    let error = findings.iter().filter(|f| f.is_error()).count();
    Counts {
        error,
        warning: findings.len() - error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_lines() {
        let json = Diagnostic::error("E_SCHEMA", "world/rules.json", "/rules/0/id", "不是 slug");
        assert_eq!(json.place(), "world/rules.json: /rules/0/id");
        // The table's hint goes into the JSON, not under every line of human output.
        assert!(!json.hint.is_empty());
        assert_eq!(json.specific_hint(), None);
        assert_eq!(
            json.render(),
            "world/rules.json: /rules/0/id: E_SCHEMA[错误]: 不是 slug\n"
        );
        let whole = Diagnostic::error("E_JSON", "a.json", "", "坏了").at(3, 7);
        assert_eq!(whole.place(), "a.json:3:7");
        let jsonl =
            Diagnostic::error("E_SCHEMA", "state/changelog.jsonl", "/applied/0", "x").at_line(12);
        assert_eq!(jsonl.place(), "state/changelog.jsonl:12: /applied/0");
        let text = Diagnostic::new(
            "blacklist/eyes",
            Severity::Warning,
            "",
            "AI 套话「眸底」",
            "改成具体动作",
        )
        .at(2, 5)
        .with_excerpt("她的眸底一冷")
        .in_file("chapters/chapter-001.md");
        assert_eq!(
            text.render(),
            "chapters/chapter-001.md:2:5: blacklist/eyes[警告]: AI 套话「眸底」\n    她的眸底一冷\n    处理：改成具体动作\n"
        );
        let related = Diagnostic::new("chain_break", Severity::Error, "c2.json", "断了", "接上")
            .at_pointer("/preconditions/0")
            .related("c1.json", "/postconditions/0");
        assert!(related.render().starts_with(
            "c2.json: /preconditions/0: chain_break[错误]: 断了（对照 c1.json: /postconditions/0）\n"
        ));
    }

    #[test]
    fn json_keys_in_order_and_only_with_a_value() {
        let d = Diagnostic::new("chain_break", Severity::Warning, "c.json", "m", "h")
            .at_pointer("")
            .for_chapter(3);
        let keys: Vec<String> = serde_json::to_value(&d)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            keys,
            [
                "code", "severity", "file", "pointer", "chapter", "message", "hint"
            ]
        );
    }
}
