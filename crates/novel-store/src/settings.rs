//! `novel.json`: the one reader of the project settings.
//!
//! A missing file means the documented defaults (each field of
//! [`novel_core::model::Settings`] defaults to the seed's value; `templates/schemas/
//! settings.schema.json` lists them). A file that cannot be read, is not JSON, or does not fit
//! the typed settings is an error naming the file, the line and the field — never a silent
//! fallback to the defaults. The loader deserialises only (the status and hook paths call it
//! and compile no schema): ranges the schema states beyond the types are `novel validate`'s,
//! and the gate checks the order of its own thresholds.
//!
//! Layer: readers (above ground: `io`, `layout`, `error`); nothing that writes or shows.

use novel_core::model::Settings;
use novel_core::validate::{parse_json, pointer_line, typed_at};

use crate::error::StoreError;
use crate::{Project, layout};

/// What the settings are called in messages.
const WHAT: &str = "项目设置";

/// The project's settings: the defaults when `novel.json` is absent, an error when it is
/// unreadable, malformed or of the wrong shape.
pub fn load(project: &Project) -> Result<Settings, StoreError> {
    let path = project.path(layout::SETTINGS);
    match crate::io::read_parsed(&path, |text| parse(&path, text)) {
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(Settings::default())
        }
        other => other,
    }
}

/// The settings in `text`, the text of `novel.json` at `path`.
fn parse(path: &std::path::Path, text: &str) -> Result<Settings, StoreError> {
    let value = parse_json(text).map_err(|error| StoreError::Json {
        path: path.to_path_buf(),
        error,
    })?;
    typed_at(&value).map_err(|(pointer, message)| StoreError::Field {
        line: pointer_line(text, &pointer),
        path: path.to_path_buf(),
        what: WHAT,
        pointer,
        message,
    })
}

/// Writes `models` as `novel.json`'s `models` (the rest of the file kept as it is; the file
/// created when absent), atomically. The settings must load first: a broken file is not
/// rewritten.
pub fn set_models(project: &Project, models: &impl serde::Serialize) -> Result<(), StoreError> {
    load(project)?;
    let path = project.path(layout::SETTINGS);
    let mut value = match crate::io::read_json_value(&path) {
        Ok(v) => v,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            serde_json::to_value(Settings::default()).unwrap_or_default()
        }
        Err(e) => return Err(e),
    };
    if let Some(o) = value.as_object_mut() {
        o.insert(
            "models".into(),
            serde_json::to_value(models).unwrap_or_default(),
        );
    }
    crate::io::write_json(&path, &value)
}

/// [`load`] inside a project; the defaults outside one (`novel lint FILE` anywhere).
pub fn load_or_default(project: Option<&Project>) -> Result<Settings, StoreError> {
    project.map_or_else(|| Ok(Settings::default()), load)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with(settings: Option<&str>) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(layout::CHECKPOINT), "{}").unwrap();
        if let Some(text) = settings {
            std::fs::write(dir.path().join(layout::SETTINGS), text).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        (dir, project)
    }

    #[test]
    fn missing_file_is_the_defaults() {
        let (_d, p) = project_with(None);
        assert_eq!(load(&p).unwrap(), Settings::default());
        assert_eq!(load_or_default(None).unwrap(), Settings::default());
    }

    #[test]
    fn bom_and_partial_files_fill_in_defaults() {
        let (_d, p) = project_with(Some("\u{feff}{\"lock\": {\"stale_minutes\": 5}}"));
        let s = load(&p).unwrap();
        assert_eq!(s.lock.stale_minutes, 5);
        assert_eq!(s.gate, Settings::default().gate);
    }

    #[test]
    fn corrupt_file_is_an_error_with_line_and_column() {
        let (_d, p) = project_with(Some("{\n  \"lock\": {\"stale_minutes\": 5,}\n}"));
        let e = load(&p).unwrap_err();
        assert_eq!(e.code(), "E_JSON");
        assert!(e.to_string().contains("第 2 行"), "{e}");
    }

    #[test]
    fn wrong_type_is_an_error_naming_line_and_field() {
        let (_d, p) = project_with(Some("{\n  \"gate\": {\n    \"pass\": \"4.5\"\n  }\n}"));
        let e = load(&p).unwrap_err();
        assert_eq!(e.code(), "E_SCHEMA");
        let text = e.to_string();
        assert!(text.contains("novel.json"), "{text}");
        assert!(text.contains("第 3 行"), "{text}");
        assert!(text.contains("/gate/pass"), "{text}");
        assert!(e.hint().contains("/gate/pass"), "{}", e.hint());
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let (_d, p) = project_with(None);
        std::fs::write(p.path(layout::SETTINGS), [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(load(&p).unwrap_err().code(), "E_NOT_UTF8");
    }
}
