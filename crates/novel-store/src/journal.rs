//! The commit journal (`.novel-commit-journal.json`): what a writer is about to change — each
//! file's new text, the changelog line, the appends, the staging files to remove — written
//! whole before any of it is applied, so a crash at any point can be rolled forward
//! ([`crate::transaction`] applies it). Here: its types, its file format and reading it back.
//!
//! Layer: ground of the writers (below `lock`, which names a pending journal, and `state`,
//! `memory`, `chapter`, which plan journals).

use std::fs;

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::layout;
use crate::project::Project;

/// One file the commit writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalWrite {
    pub path: String,
    /// The file's text. In the journal file it follows the header line as it is, never inside
    /// a JSON string (see [`encode_journal`]); a journal of an older version has it here.
    #[serde(default, skip_serializing)]
    pub content: String,
}

/// The commit journal: everything the commit will do, decided before it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub chapter: u32,
    /// The lock token to release at the end.
    pub token: String,
    /// Files to write, in order; the checkpoint is last.
    pub writes: Vec<JournalWrite>,
    /// The changelog line to append; none for a chapter whose delta was skipped (§10.6: its
    /// skip line is already there).
    #[serde(default)]
    pub changelog_line: Option<String>,
    /// The changelog's length in bytes before the line is appended, measured by [`commit`](crate::transaction::commit)
    /// when it writes the journal: applying the journal cuts the file back to it and appends
    /// the line, so a rerun never appends twice and a line torn by a crash never stays. (A
    /// journal without it, from an older version, appends unless the line is already last.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_len: Option<u64>,
    /// Directories to create (empty ones a step leaves for what comes next: the next volume's
    /// contract folder at `volume close`), before the writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// Lines appended to append-only files besides the changelog (a commit's character
    /// memories, `memory/characters/<slug>.jsonl`), after the changelog line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appends: Vec<JournalAppend>,
    /// Staging files to remove once everything is in place.
    pub remove: Vec<String>,
    /// The character whose retirement this journal carries (`retire apply`), when it is not
    /// a chapter commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retiring: Option<String>,
    /// The volume whose end-of-volume cleanup this journal carries (`volume cleanup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<u32>,
    /// What wrote the journal when it is not a chapter commit, a retirement or a cleanup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<JournalKind>,
}

/// Lines a journal appends to one append-only file: applying it cuts the file back to `base`
/// and appends `text` (one or more lines, no final newline), so a rerun never appends twice and
/// a line torn by a crash never stays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalAppend {
    pub path: String,
    /// The file's length up to its last whole line, measured by [`commit`](crate::transaction::commit) under the guard.
    #[serde(default)]
    pub base: u64,
    pub text: String,
}

/// The writers besides the chapter commit and the retirement that go through a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalKind {
    /// `novel ops apply`: the state, the foreshadowing and one changelog line.
    OpsApply,
    /// `novel state rebuild --write`: the replayed state (and a truncated changelog).
    Rebuild,
    /// `novel ops skip`: one changelog line, the state unchanged.
    OpsSkip,
    /// `novel revision save` / `reject` (the revision file and the checkpoint), and `revision
    /// apply` on a committed chapter (its text, the revision file, its pipeline log and the
    /// checkpoint).
    Revision,
    /// `novel import`: the chapters, their logs, the extras, volume ranges and the checkpoint.
    Import,
    /// `novel memory init` / `memory rebuild`: character memory files.
    Memory,
    /// `novel volume close`: the volume's final state, its cleanup report and the checkpoint.
    VolumeClose,
    /// `novel chapter begin` / `chapter stage`: the chapter's pipeline log, the round archived
    /// for a revision or rewrite, and the checkpoint.
    Stage,
    /// `novel blacklist upgrade`: the list's backup and the new list.
    Blacklist,
    /// `novel spec propagate`: the pending action in the checkpoint, the snapshot removed.
    Propagation,
    /// `novel style preset`: the profile's backup and the preset.
    StylePreset,
}

impl Journal {
    /// A journal that only writes files (`revision apply`, `import`): no changelog line, no
    /// staging to remove.
    pub fn files(
        chapter: u32,
        token: String,
        writes: Vec<JournalWrite>,
        kind: JournalKind,
    ) -> Self {
        Journal {
            chapter,
            token,
            writes,
            changelog_line: None,
            changelog_len: None,
            dirs: Vec::new(),
            appends: Vec::new(),
            remove: Vec::new(),
            retiring: None,
            cleanup: None,
            kind: Some(kind),
        }
    }

    /// What the journal carries, for messages (`补完了中断的…`, `…没有完成`).
    pub fn describe(&self) -> String {
        if let Some(v) = self.cleanup {
            return format!("第 {v} 卷的卷末清理");
        }
        match (&self.retiring, self.kind) {
            (Some(slug), _) => format!("角色 {slug} 的退场"),
            (None, Some(JournalKind::OpsApply)) => {
                format!("第 {} 章状态增量的合并（ops apply）", self.chapter)
            }
            (None, Some(JournalKind::Rebuild)) => "状态重建（state rebuild --write）".to_string(),
            (None, Some(JournalKind::OpsSkip)) => {
                format!("第 {} 章增量跳过的记录（ops skip）", self.chapter)
            }
            (None, Some(JournalKind::Revision)) => {
                format!("第 {} 章修订候选的保存或决定（revision）", self.chapter)
            }
            (None, Some(JournalKind::Import)) => {
                format!("书稿导入（到第 {} 章）", self.chapter)
            }
            (None, Some(JournalKind::Memory)) => {
                "角色记忆的写入（memory init / rebuild）".to_string()
            }
            (None, Some(JournalKind::VolumeClose)) => {
                format!("第 {} 卷的收卷（volume close）", self.chapter)
            }
            (None, Some(JournalKind::Stage)) => {
                format!("第 {} 章的阶段推进（chapter begin / stage）", self.chapter)
            }
            (None, Some(JournalKind::Blacklist)) => "黑名单的升级（blacklist upgrade）".to_string(),
            (None, Some(JournalKind::Propagation)) => {
                "设定变更传播的记录（spec propagate）".to_string()
            }
            (None, Some(JournalKind::StylePreset)) => "风格预设的写入（style preset）".to_string(),
            (None, None) => format!("第 {} 章的提交", self.chapter),
        }
    }
}

/// The journal file's first line: the journal without the contents of its writes, and the
/// byte length of each; the contents follow it, one after the other, as they are.
#[derive(Serialize, Deserialize)]
struct JournalHeader<J> {
    /// 2 for this layout. A journal of an older version has neither this nor `lens`: it is one
    /// JSON document with the contents inside.
    #[serde(default)]
    journal_format: u32,
    #[serde(default)]
    lens: Vec<usize>,
    #[serde(flatten)]
    journal: J,
}

const JOURNAL_FORMAT: u32 = 2;

/// The bytes of the journal file: a JSON header line (the journal without its contents, and
/// each content's length), then the contents one after the other. Chapter texts and the state
/// go in as they are: escaping them into JSON strings cost the commit time in proportion to
/// the state's size.
pub fn encode_journal(journal: &Journal) -> Result<Vec<u8>, serde_json::Error> {
    let header = JournalHeader {
        journal_format: JOURNAL_FORMAT,
        lens: journal.writes.iter().map(|w| w.content.len()).collect(),
        journal,
    };
    let mut bytes = serde_json::to_vec(&header)?;
    bytes.push(b'\n');
    for w in &journal.writes {
        bytes.extend_from_slice(w.content.as_bytes());
    }
    Ok(bytes)
}

/// How [`encode_journal`]'s bytes begin (the header's first field).
const JOURNAL_PREFIX: &[u8] = b"{\"journal_format\":";

/// The header line and the contents after it, or `None` for an older version's journal: one
/// JSON document, contents inside.
fn split_journal(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    if !bytes.starts_with(JOURNAL_PREFIX) {
        return None;
    }
    let i = bytes
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(bytes.len());
    Some((&bytes[..i], bytes.get(i + 1..).unwrap_or_default()))
}

/// The journal of [`encode_journal`]'s bytes, or of an older version's single JSON document.
fn decode_journal(bytes: &[u8]) -> Result<Journal, String> {
    let Some((line, rest)) = split_journal(bytes) else {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        return serde_json::from_str(novel_core::validate::strip_bom(text))
            .map_err(|e| e.to_string());
    };
    let header: JournalHeader<Journal> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let mut journal = header.journal;
    if header.journal_format != JOURNAL_FORMAT {
        return Err(format!(
            "提交日志的格式 {} 不是这个版本能读的（{JOURNAL_FORMAT}）：用写下它的版本运行 novel chapter recover",
            header.journal_format
        ));
    }
    let total = header
        .lens
        .iter()
        .try_fold(0usize, |sum, len| sum.checked_add(*len));
    if header.lens.len() != journal.writes.len() || total != Some(rest.len()) {
        return Err(format!(
            "内容长度与记录不符（记录 {} 个文件共 {} 字节，实际 {} 字节）",
            header.lens.len(),
            total.map_or("过多".to_string(), |t| t.to_string()),
            rest.len()
        ));
    }
    let mut at = 0;
    for (w, len) in journal.writes.iter_mut().zip(&header.lens) {
        let content = &rest[at..at + len];
        at += len;
        w.content = String::from_utf8(content.to_vec())
            .map_err(|_| format!("{} 的内容不是 UTF-8 文本", w.path))?;
    }
    Ok(journal)
}

/// The chapter of an unfinished journal (its header line only): for the cold-start summary.
pub fn journal_chapter(project: &Project) -> Option<u32> {
    #[derive(Deserialize)]
    struct Light {
        chapter: u32,
    }
    let bytes = fs::read(project.path(layout::JOURNAL)).ok()?;
    let light = match split_journal(&bytes) {
        Some((line, _)) => serde_json::from_slice::<Light>(line),
        None => serde_json::from_str(novel_core::validate::strip_bom(
            std::str::from_utf8(&bytes).ok()?,
        )),
    };
    light.ok().map(|l| l.chapter)
}

/// The journal of an interrupted commit, if any.
pub fn read_journal(project: &Project) -> Result<Option<Journal>, StoreError> {
    let path = project.path(layout::JOURNAL);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    decode_journal(&bytes)
        .map(Some)
        .map_err(|message| StoreError::Model {
            path,
            what: "提交日志",
            message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transaction::commit;

    fn sample() -> Journal {
        Journal {
            chapter: 31,
            token: "t".into(),
            writes: vec![
                JournalWrite {
                    path: "chapters/chapter-031.md".into(),
                    content: "# 第31章 回声\n\n「他说：\"走。\"」\n\t\u{1f600}\n".into(),
                },
                JournalWrite {
                    path: "state/current-state.json".into(),
                    content: "{\n  \"state_version\": 3\n}\n".into(),
                },
                JournalWrite {
                    path: "empty.md".into(),
                    content: String::new(),
                },
            ],
            changelog_line: Some("{\"chapter\":31}".into()),
            changelog_len: Some(120),
            dirs: Vec::new(),
            appends: vec![JournalAppend {
                path: "memory/characters/lu-chen.jsonl".into(),
                base: 7,
                text: "{\"chapter\":31}".into(),
            }],
            remove: vec!["staging/chapters/chapter-031.md".into()],
            retiring: None,
            cleanup: None,
            kind: None,
        }
    }

    /// N5: a journal on disk belongs to a writer that was interrupted; a new journal never
    /// replaces it (`recover` must finish it first), whoever asks.
    #[test]
    fn a_pending_journal_is_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        crate::init::init_project(&root, &crate::init::InitOptions::default()).unwrap();
        let p = Project::open(&root).unwrap();
        let pending = encode_journal(&sample()).unwrap();
        std::fs::write(p.path(layout::JOURNAL), &pending).unwrap();
        let other = Journal::files(
            1,
            String::new(),
            vec![JournalWrite {
                path: "notes.md".into(),
                content: "新的".into(),
            }],
            JournalKind::Revision,
        );
        let err = commit(&p, other).unwrap_err();
        assert_eq!(err.code(), "E_JOURNAL", "{err}");
        assert!(err.to_string().contains("第 31 章的提交"), "{err}");
        assert_eq!(std::fs::read(p.path(layout::JOURNAL)).unwrap(), pending);
        assert!(!p.path("notes.md").exists());
    }

    #[test]
    fn journal_contents_follow_the_header_as_they_are() {
        let j = sample();
        let bytes = encode_journal(&j).unwrap();
        let (line, rest) = split_journal(&bytes).unwrap();
        assert!(!line.contains(&b'\n'));
        assert_eq!(
            rest,
            [
                j.writes[0].content.as_bytes(),
                j.writes[1].content.as_bytes()
            ]
            .concat()
        );
        assert_eq!(decode_journal(&bytes).unwrap(), j);
    }

    #[test]
    fn an_older_journal_is_still_read() {
        let j = sample();
        let mut v = serde_json::to_value(&j).unwrap();
        for (w, orig) in v["writes"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(&j.writes)
        {
            w["content"] = serde_json::json!(orig.content);
        }
        for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
            assert_eq!(decode_journal(text.as_bytes()).unwrap(), j);
        }
    }

    #[test]
    fn a_journal_whose_contents_do_not_add_up_is_an_error() {
        let bytes = encode_journal(&sample()).unwrap();
        for cut in [1, 5] {
            let err = decode_journal(&bytes[..bytes.len() - cut]).unwrap_err();
            assert!(err.contains("长度"), "{err}");
        }
        let mut longer = bytes.clone();
        longer.push(b'x');
        assert!(decode_journal(&longer).is_err());
        // Contents that are not UTF-8 text.
        let mut bad = encode_journal(&sample()).unwrap();
        let at = bad.len() - 3;
        bad[at] = 0xff;
        assert!(decode_journal(&bad).unwrap_err().contains("UTF-8"));
        // Lengths that overflow when added up are an error, not a panic.
        let text = String::from_utf8(encode_journal(&sample()).unwrap()).unwrap();
        let start = text.find("\"lens\":[").unwrap() + 8;
        let end = start + text[start..].find(']').unwrap();
        let huge = format!("{}{},2,0{}", &text[..start], usize::MAX, &text[end..]);
        assert!(
            decode_journal(huge.as_bytes())
                .unwrap_err()
                .contains("长度")
        );
    }
}
