//! The maintenance rules of the AI-phrase blacklist (PRD §7 黑名单维护), on an
//! [`AiBlacklist`] in memory: the author adds and removes phrases; QualityJudge's suggestions go
//! in only with evidence; phrases the author confirms go on the whitelist. Phrases are compared
//! after normalisation ([`normalize_str`]: NFC, full-width → half-width), so `这，就是` and
//! `这,就是` are one phrase. The file is read and written by the caller (`novel blacklist`).
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use novel_core::model::AiBlacklist;
use novel_core::model::blacklist::{BlacklistEntry, EntrySource};
use novel_core::model::{Extra, is_slug};

use crate::normalize::normalize_str;

/// Why an edit was refused: a stable code (`E_USAGE`, `E_DUPLICATE`, `E_NOT_FOUND`), what is
/// wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    pub code: &'static str,
    pub message: String,
    pub hint: String,
}

fn usage(message: String, hint: impl Into<String>) -> EditError {
    EditError {
        code: "E_USAGE",
        message,
        hint: hint.into(),
    }
}

/// A change made: `action` (`added` | `removed` | `whitelisted` | `unwhitelisted`), the phrase
/// as the list now (or last) holds it, and one Chinese line saying what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub action: &'static str,
    pub phrase: String,
    pub message: String,
}

/// A phrase to add ([`add`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    pub phrase: String,
    /// A category slug: an existing one, or a new one with `category_name`.
    pub category: String,
    pub category_name: Option<String>,
    pub narration_only: bool,
    pub paragraph_start_only: bool,
    pub replacements: Vec<String>,
    /// `User` or `Judge`; a judge's phrase needs `evidence`.
    pub source: EntrySource,
    pub evidence: Option<String>,
}

/// The phrase trimmed, and its normalised form; an empty one is refused.
fn clean(phrase: &str) -> Result<(String, String), EditError> {
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
fn clean_new(phrase: &str) -> Result<(String, String), EditError> {
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

/// Adds a phrase: refused when it is already listed (in any written form) or whitelisted, when
/// its category is unknown and no name is given for a new one, and when a judge gives no
/// evidence.
pub fn add(list: &mut AiBlacklist, e: NewEntry) -> Result<Edit, EditError> {
    let (phrase, key) = clean_new(&e.phrase)?;
    refuse_listed(list, &phrase, &key)?;
    ensure_category(list, &e.category, e.category_name.as_deref())?;
    let evidence = e
        .evidence
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty());
    if e.source == EntrySource::Judge && evidence.is_none() {
        return Err(usage(
            "裁判建议的短语必须附证据".into(),
            "加上 --evidence「第 N 章：原文……」，说明它在哪一章、以什么形式反复出现",
        ));
    }
    let message = format!(
        "已加入黑名单：「{phrase}」（{}{}）",
        e.category,
        flags_label(e.narration_only, e.paragraph_start_only)
    );
    list.entries.push(BlacklistEntry {
        phrase: phrase.clone(),
        category: e.category,
        narration_only: e.narration_only,
        paragraph_start_only: e.paragraph_start_only,
        replacements: e.replacements,
        source: Some(e.source),
        evidence,
        extra: Extra::new(),
    });
    Ok(Edit {
        action: "added",
        phrase,
        message,
    })
}

/// A phrase already in the blacklist (in any written form), or in the whitelist, is refused.
fn refuse_listed(list: &AiBlacklist, phrase: &str, key: &str) -> Result<(), EditError> {
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
        return Err(EditError {
            code: "E_DUPLICATE",
            message: format!("「{phrase}」已在黑名单中{same}，类别 {}", e.category),
            hint: "不必重复添加；要改类别或标记，先 novel blacklist remove 再重新 add".into(),
        });
    }
    if let Some(w) = list.whitelist.iter().find(|w| normalize_str(w) == key) {
        return Err(EditError {
            code: "E_DUPLICATE",
            message: format!("「{w}」在白名单中，加入黑名单也不会计数"),
            hint: "先 novel blacklist whitelist --remove 把它移出白名单".into(),
        });
    }
    Ok(())
}

/// The entry's category must be a slug and known, or be created here with its Chinese name.
fn ensure_category(
    list: &mut AiBlacklist,
    category: &str,
    name: Option<&str>,
) -> Result<(), EditError> {
    if !is_slug(category) {
        return Err(usage(
            format!("类别「{category}」不是 slug"),
            "类别用小写英文、数字和 - / _，如 body_language",
        ));
    }
    if list.categories.contains_key(category) {
        return Ok(());
    }
    match name.map(str::trim) {
        Some(name) if !name.is_empty() => {
            list.categories
                .insert(category.to_string(), name.to_string());
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
                format!(
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

/// Removes a phrase from the blacklist (any written form of it); an unknown one is refused
/// with up to five similar phrases.
pub fn remove(list: &mut AiBlacklist, phrase: &str) -> Result<Edit, EditError> {
    let (phrase, key) = clean(phrase)?;
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
        return Err(EditError {
            code: "E_NOT_FOUND",
            message: format!("黑名单中没有「{phrase}」"),
            hint,
        });
    };
    let removed = list.entries.remove(i);
    Ok(Edit {
        action: "removed",
        message: format!(
            "已从黑名单删除：「{}」（{}）",
            removed.phrase, removed.category
        ),
        phrase: removed.phrase,
    })
}

/// Puts a phrase on the whitelist (it and text containing it are never counted); refused when
/// it is there already.
pub fn whitelist(list: &mut AiBlacklist, phrase: &str) -> Result<Edit, EditError> {
    let (phrase, key) = clean_new(phrase)?;
    if let Some(w) = list.whitelist.iter().find(|w| normalize_str(w) == key) {
        return Err(EditError {
            code: "E_DUPLICATE",
            message: format!("「{w}」已在白名单中"),
            hint: "不必重复添加".into(),
        });
    }
    list.whitelist.push(phrase.clone());
    let listed = list
        .entries
        .iter()
        .find(|e| normalize_str(&e.phrase) == key)
        .map(|e| format!("；黑名单里的同名短语（{}）从此不再计数", e.category))
        .unwrap_or_default();
    Ok(Edit {
        action: "whitelisted",
        message: format!("已加入白名单：「{phrase}」{listed}"),
        phrase,
    })
}

/// Takes a phrase off the whitelist (any written form of it).
pub fn unwhitelist(list: &mut AiBlacklist, phrase: &str) -> Result<Edit, EditError> {
    let (phrase, key) = clean(phrase)?;
    let Some(i) = list.whitelist.iter().position(|w| normalize_str(w) == key) else {
        return Err(EditError {
            code: "E_NOT_FOUND",
            message: format!("白名单中没有「{phrase}」"),
            hint: "检查写法；白名单在 ai-blacklist.json 的 whitelist 中".into(),
        });
    };
    let removed = list.whitelist.remove(i);
    Ok(Edit {
        action: "unwhitelisted",
        message: format!("已移出白名单：「{removed}」"),
        phrase: removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> AiBlacklist {
        serde_json::from_value(serde_json::json!({
            "version": 1,
            "categories": {"body_language": "肢体"},
            "entries": [{"phrase": "嘴角微微上扬", "category": "body_language"}],
            "whitelist": ["深吸一口气"]
        }))
        .unwrap()
    }

    fn entry(phrase: &str, source: EntrySource) -> NewEntry {
        NewEntry {
            phrase: phrase.into(),
            category: "body_language".into(),
            category_name: None,
            narration_only: true,
            paragraph_start_only: false,
            replacements: Vec::new(),
            source,
            evidence: None,
        }
    }

    #[test]
    fn phrases_are_one_in_any_written_form() {
        let mut l = list();
        let e = add(&mut l, entry("这，就是", EntrySource::User)).unwrap();
        assert_eq!(
            e.message,
            "已加入黑名单：「这，就是」（body_language，只计叙述）"
        );
        let err = add(&mut l, entry(" 这,就是 ", EntrySource::User)).unwrap_err();
        assert_eq!(err.code, "E_DUPLICATE");
        assert!(err.message.contains("已有写法「这，就是」"), "{err:?}");
        assert_eq!(remove(&mut l, "这,就是").unwrap().phrase, "这，就是");
        assert_eq!(l.entries.len(), 1);
    }

    #[test]
    fn what_is_refused() {
        let mut l = list();
        let code = |r: Result<Edit, EditError>| r.unwrap_err().code;
        assert_eq!(code(add(&mut l, entry("的", EntrySource::User))), "E_USAGE");
        assert_eq!(code(add(&mut l, entry("——", EntrySource::User))), "E_USAGE");
        assert_eq!(code(add(&mut l, entry("  ", EntrySource::User))), "E_USAGE");
        assert_eq!(
            code(add(&mut l, entry("深吸一口气", EntrySource::User))),
            "E_DUPLICATE",
            "whitelisted"
        );
        assert_eq!(
            code(add(&mut l, entry("眼中闪过", EntrySource::Judge))),
            "E_USAGE",
            "a judge needs evidence"
        );
        let mut judged = entry("眼中闪过", EntrySource::Judge);
        judged.evidence = Some("第 12 章：他眼中闪过一丝……".into());
        assert_eq!(add(&mut l, judged).unwrap().action, "added");
        let mut new_category = entry("不由得", EntrySource::User);
        new_category.category = "filler".into();
        assert_eq!(code(add(&mut l, new_category.clone())), "E_USAGE");
        new_category.category_name = Some("口头填充".into());
        add(&mut l, new_category).unwrap();
        assert_eq!(l.categories["filler"], "口头填充");
        assert_eq!(code(remove(&mut l, "没有这句")), "E_NOT_FOUND");
    }

    #[test]
    fn the_whitelist_takes_and_gives_back() {
        let mut l = list();
        let e = whitelist(&mut l, "嘴角微微上扬").unwrap();
        assert!(e.message.contains("从此不再计数"), "{e:?}");
        assert_eq!(
            whitelist(&mut l, "嘴角微微上扬").unwrap_err().code,
            "E_DUPLICATE"
        );
        assert_eq!(
            unwhitelist(&mut l, "深吸一口气").unwrap().action,
            "unwhitelisted"
        );
        assert_eq!(
            unwhitelist(&mut l, "深吸一口气").unwrap_err().code,
            "E_NOT_FOUND"
        );
        assert_eq!(l.whitelist, ["嘴角微微上扬"]);
    }
}
