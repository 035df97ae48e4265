//! What a word of a command line becomes before the program sees it, when the line fixes its
//! text: brace expansion (`state/{a,b}.json`, `{1..3}`), a leading `~`, and whether unquoted
//! glob characters are left for the shell to match against the file system.
//!
//! Layer: pure text (the home directory is given, never read here).

use super::syntax::{Part, Word};

/// One field a word expands to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub text: String,
    /// Unquoted glob characters (`*`, `?`, `[`, an extended glob `@(…)`) are in it: it names
    /// the files it matches.
    pub glob: bool,
}

impl Field {
    pub fn new(text: &str) -> Field {
        Field {
            text: text.to_string(),
            glob: false,
        }
    }
}

/// Fields one word may expand to, at most (a brace expansion beyond it is not followed).
const MAX_FIELDS: usize = 256;

/// The fields of `w`, or `None` when an expansion the line does not fix is part of it (a
/// variable, a command substitution) or its brace expansion would exceed [`MAX_FIELDS`].
pub fn fields(w: &Word, home: Option<&str>) -> Option<Vec<Field>> {
    let mut chars: Vec<(char, bool)> = Vec::new();
    for p in &w.parts {
        match p {
            Part::Text { text, quoted } => chars.extend(text.chars().map(|c| (c, *quoted))),
            Part::Expansion { .. } => return None,
        }
    }
    let mut expanded = Vec::new();
    braces(&chars, &mut expanded)?;
    Some(expanded.iter().map(|c| field(c, home)).collect())
}

/// A field from its characters (each marked quoted or not): tilde and glob.
fn field(chars: &[(char, bool)], home: Option<&str>) -> Field {
    let mut text = String::new();
    let mut rest = chars;
    if let (Some(('~', false)), Some(home)) = (chars.first(), home)
        && chars.get(1).is_none_or(|(c, _)| *c == '/')
    {
        text.push_str(home);
        rest = &chars[1..];
    }
    let mut glob = false;
    for (k, (c, quoted)) in rest.iter().enumerate() {
        if !quoted {
            let extglob = "@!+*?".contains(*c) && rest.get(k + 1) == Some(&('(', false));
            glob |= matches!(c, '*' | '?' | '[') || extglob;
        }
        text.push(*c);
    }
    Field { text, glob }
}

/// Brace expansion (`a{b,c}d`, `{1..3}`, `{a..e..2}`), nested braces included; `None` when it
/// makes more than [`MAX_FIELDS`] fields.
fn braces(chars: &[(char, bool)], out: &mut Vec<Vec<(char, bool)>>) -> Option<()> {
    let Some((open, close, items)) = first_brace(chars) else {
        out.push(chars.to_vec());
        return (out.len() <= MAX_FIELDS).then_some(());
    };
    for item in items {
        let mut joined = chars[..open].to_vec();
        joined.extend(item);
        joined.extend_from_slice(&chars[close + 1..]);
        braces(&joined, out)?;
        if out.len() > MAX_FIELDS {
            return None;
        }
    }
    Some(())
}

type Chars = Vec<(char, bool)>;

/// The first unquoted `{…}` that expands: its bounds and its items.
fn first_brace(chars: &[(char, bool)]) -> Option<(usize, usize, Vec<Chars>)> {
    let unquoted = |k: usize, c: char| chars.get(k) == Some(&(c, false));
    for open in (0..chars.len()).filter(|&k| unquoted(k, '{')) {
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut close = None;
        for k in open..chars.len() {
            if unquoted(k, '{') {
                depth += 1;
            } else if unquoted(k, '}') {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            } else if unquoted(k, ',') && depth == 1 {
                commas.push(k);
            }
        }
        let Some(close) = close else { continue };
        if !commas.is_empty() {
            let mut items = Vec::new();
            let mut from = open + 1;
            for c in commas.into_iter().chain([close]) {
                items.push(chars[from..c].to_vec());
                from = c + 1;
            }
            return Some((open, close, items));
        }
        let inner: String = chars[open + 1..close].iter().map(|(c, _)| *c).collect();
        if let Some(items) = sequence(&inner) {
            let items = items
                .into_iter()
                .map(|s| s.chars().map(|c| (c, true)).collect())
                .collect();
            return Some((open, close, items));
        }
    }
    None
}

/// `1..5`, `05..10`, `a..e`, with an optional `..STEP` (cut one past [`MAX_FIELDS`]).
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1i64),
        [a, b, s] => (*a, *b, s.parse::<i64>().ok()?.checked_abs()?.max(1)),
        _ => return None,
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let width = if from.starts_with('0') || to.starts_with('0') {
            from.len().max(to.len())
        } else {
            0
        };
        // One past the limit is enough for the caller to give up.
        let count = ((a - b).unsigned_abs() / step as u64 + 1).min(MAX_FIELDS as u64 + 1);
        let dir = if b >= a { step } else { -step };
        return Some(
            (0..count as i64)
                .map(|k| format!("{:0width$}", a + k * dir))
                .collect(),
        );
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    let (Some(x), None, Some(y), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    if !x.is_ascii_alphabetic() || !y.is_ascii_alphabetic() {
        return None;
    }
    let (x, y) = (x as i64, y as i64);
    let dir = if y >= x { step } else { -step };
    let count = ((x - y).abs() / step + 1).min(MAX_FIELDS as i64 + 1);
    Some(
        (0..count)
            .filter_map(|k| char::from_u32((x + k * dir) as u32))
            .map(String::from)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::syntax::{Command, parse};
    use super::*;

    /// The fields of each argument of a one-command line.
    fn args(line: &str) -> Vec<Option<Vec<String>>> {
        let script = parse(line).unwrap();
        let Command::Simple(s) = &script.list[0].pipelines[0].commands[0] else {
            panic!("{line}")
        };
        s.words
            .iter()
            .map(|w| fields(w, Some("/home/me")).map(|f| f.into_iter().map(|f| f.text).collect()))
            .collect()
    }

    #[test]
    fn braces_tilde_and_quotes() {
        let some = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            args("rm state/{current-state.json,changelog.jsonl} '{a,b}' {x} ~/n ~x"),
            vec![
                some(&["rm"]),
                some(&["state/current-state.json", "state/changelog.jsonl"]),
                some(&["{a,b}"]),
                some(&["{x}"]),
                some(&["/home/me/n"]),
                some(&["~x"]),
            ]
        );
        assert_eq!(
            args("echo a{1..3}b {c..a} {08..10} {1..9..4} {a,b{c,d}}"),
            vec![
                some(&["echo"]),
                some(&["a1b", "a2b", "a3b"]),
                some(&["c", "b", "a"]),
                some(&["08", "09", "10"]),
                some(&["1", "5", "9"]),
                some(&["a", "bc", "bd"]),
            ]
        );
        assert_eq!(args("echo $x \"a$y\"")[1..], [None, None]);
        assert_eq!(args("echo {1..100000}")[1], None);
    }

    #[test]
    fn globs_are_unquoted_pattern_characters() {
        let script = parse("rm *.json 'a*' \"b?\" \\[c @(x|y) d[0-9]").unwrap();
        let Command::Simple(s) = &script.list[0].pipelines[0].commands[0] else {
            panic!()
        };
        let globs: Vec<bool> = s.words[1..]
            .iter()
            .map(|w| fields(w, None).unwrap()[0].glob)
            .collect();
        assert_eq!(globs, [true, false, false, false, true, true]);
    }
}
