//! Modules in layers: every crate's top-level modules in layers and, within them, in one order,
//! lowest first ([`LAYERS`]); a module imports only modules below it (an exception goes in
//! [`ALLOWED`] with its reason; there is none) and names its layer in its opening comment.
//! The test reads each
//! `src/**/*.rs` file's `crate::…` and `super::…` paths (comments, string literals and
//! `#[cfg(test)]` items left out), at top-level-module granularity (`crate::context::x` in
//! `src/chapter.rs` is the edge chapter → context; `super::` in `src/a/b.rs` stays inside `a`).
//! It fails on an upward import not allowed, on an allowed one that no longer exists (take it
//! off the list), on a module missing from the order, on any import circle (strongly connected
//! component), and on a module whose opening comment does not name its layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A layer: its name and its modules, lowest first.
type Layer = (&'static str, &'static [&'static str]);

/// Each crate's layers, lowest first, and each layer's top-level modules in order (the order
/// the code's imports give; a new module goes where its imports put it). A module imports only
/// modules before it, and its opening comment names its layer (`Layer: <name> …`).
const LAYERS: &[(&str, &[Layer])] = &[
    (
        "novel-core",
        &[
            (
                "ground",
                &[
                    "changes",
                    "codes",
                    "diagnostic",
                    "edits",
                    "frontmatter",
                    "genre",
                    "numerals",
                    "permissions",
                ],
            ),
            ("model", &["model", "naming", "tokens", "score", "periodic"]),
            (
                "rules",
                &["judging", "ops", "validate", "gate", "revision", "import"],
            ),
            (
                "loop",
                &["pipeline", "quickstart", "next", "menu", "spec", "repair"],
            ),
            (
                "views",
                &[
                    "context",
                    "text_sources",
                    "status",
                    "review",
                    "plan",
                    "drift",
                    "cost",
                ],
            ),
        ],
    ),
    (
        "novel-text",
        &[
            (
                "ground",
                &[
                    "decode",
                    "keyphrase",
                    "markdown",
                    "normalize",
                    "count",
                    "segment",
                    "names",
                ],
            ),
            (
                "checks",
                &[
                    "blacklist",
                    "repetition",
                    "patterns",
                    "lint",
                    "furniture",
                    "finding",
                ],
            ),
            (
                "books",
                &["chapters", "metrics", "maintain", "leak", "export", "craft"],
            ),
        ],
    ),
    (
        "novel-store",
        &[
            (
                "ground",
                &[
                    "cache",
                    "process",
                    "shell",
                    "state_text",
                    "time",
                    "lockfile",
                    "layout",
                    "error",
                    "project",
                    "io",
                    "checkpoint",
                    "journal",
                    "lock",
                    "transaction",
                ],
            ),
            ("readers", &["settings", "volumes", "periodic"]),
            (
                "writers",
                &[
                    "state",
                    "repair",
                    "quickstart",
                    "memory",
                    "chapter",
                    "init",
                    "prefs",
                ],
            ),
            ("facts", &["select", "figures", "load", "plan", "judging"]),
            ("views", &["context", "next", "status", "dashboard"]),
            (
                "commands",
                &[
                    "agent_usage",
                    "stage",
                    "volume",
                    "synth",
                    "style",
                    "spec",
                    "revision",
                    "review",
                    "rebuild",
                    "permissions",
                    "names",
                    "leak",
                    "import",
                    "guard",
                    "export",
                    "epub",
                    "blacklist",
                ],
            ),
        ],
    ),
    (
        "novel-cli",
        &[
            ("ground", &["installed", "output", "session", "args"]),
            ("commands", &["commands"]),
            ("tree", &["cli"]),
        ],
    ),
];

/// The imports allowed to go up the order: (crate, from, to, why). None today; one added
/// must say why, and it may not close an import circle.
const ALLOWED: &[(&str, &str, &str, &str)] = &[];

#[test]
fn modules_import_only_modules_below_them_but_the_listed_back_edges() {
    let mut failures = Vec::new();
    for (krate, layers) in LAYERS {
        let order: Vec<&str> = layers.iter().flat_map(|l| l.1.iter().copied()).collect();
        let edges = crate_edges(&crates_dir().join(krate).join("src"));
        failures.extend(check_crate(krate, &order, &edges));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_module_names_its_layer_in_its_opening_comment() {
    let mut failures = Vec::new();
    for (krate, layers) in LAYERS {
        let src = crates_dir().join(krate).join("src");
        for (layer, modules) in *layers {
            for m in *modules {
                let file = [src.join(format!("{m}.rs")), src.join(m).join("mod.rs")]
                    .into_iter()
                    .find(|f| f.is_file())
                    .unwrap_or_else(|| panic!("{krate}: no file for module {m}"));
                let text = std::fs::read_to_string(&file).unwrap();
                let named = opening_comment(&text)
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("Layer: "))
                    .map(str::to_string);
                if !named.as_deref().is_some_and(|n| n.starts_with(layer)) {
                    failures.push(format!(
                        "{krate}/{m}: its opening comment should say `Layer: {layer} …` (says {named:?})"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `//!` lines a file opens with, without their markers.
fn opening_comment(text: &str) -> String {
    text.lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(|l| format!("{}\n", l.trim_start()))
        .collect()
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The failures of one crate; prints its circles.
fn check_crate(krate: &str, order: &[&str], edges: &Edges) -> Vec<String> {
    let mut failures = Vec::new();
    let pos: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let modules: BTreeSet<&str> = edges.keys().map(String::as_str).collect();
    for m in &modules {
        if !pos.contains_key(m) {
            failures.push(format!(
                "{krate}: module {m} is not in LAYERS: place it by its imports"
            ));
        }
    }
    for m in order {
        if !modules.contains(m) {
            failures.push(format!(
                "{krate}: LAYERS names {m}, which is no module: remove it"
            ));
        }
    }
    let allowed: BTreeSet<(&str, &str)> = ALLOWED
        .iter()
        .filter(|a| a.0 == krate)
        .map(|a| (a.1, a.2))
        .collect();
    for (from, tos) in edges {
        for to in tos {
            let up = pos.get(from.as_str()) < pos.get(to.as_str());
            if up && !allowed.contains(&(from.as_str(), to.as_str())) {
                failures.push(format!(
                    "{krate}: {from} imports {to}, which is above it: move what it needs down to {from} or below (or list the edge in ALLOWED with its reason)"
                ));
            }
        }
    }
    for (from, to) in &allowed {
        if !edges.get(*from).is_some_and(|t| t.contains(*to)) {
            failures.push(format!(
                "{krate}: {from} no longer imports {to}: take it off ALLOWED"
            ));
        }
    }
    // With a back edge allowed, a circle could close through it: none may.
    for c in circles(edges) {
        failures.push(format!(
            "{krate}: an import circle of {} modules: {}",
            c.len(),
            c.join(" ")
        ));
    }
    failures
}

/// Top-level module → the top-level modules it imports (every module present as a key).
type Edges = BTreeMap<String, BTreeSet<String>>;

fn crate_edges(src: &Path) -> Edges {
    let files = rust_files(src);
    let top = |f: &Path| -> Option<Vec<String>> {
        let rel = f.strip_prefix(src).ok()?;
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        (!matches!(parts[0].as_str(), "lib" | "main")).then_some(parts)
    };
    let mut edges = Edges::new();
    for f in &files {
        if let Some(path) = top(f) {
            edges.entry(path[0].clone()).or_default();
        }
    }
    let modules: BTreeSet<String> = edges.keys().cloned().collect();
    for f in &files {
        let Some(path) = top(f) else { continue };
        let code = without_tests(&code_only(&std::fs::read_to_string(f).unwrap()));
        for target in imported(&code, &path) {
            if modules.contains(&target) && target != path[0] {
                edges.get_mut(&path[0]).unwrap().insert(target);
            }
        }
    }
    edges
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The top-level modules named by `crate::X`, `crate::{X, Y::…}` and `super::…::X` (resolved
/// from the file's module path `path`) in `code`.
fn imported(code: &str, path: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let bytes = code.as_bytes();
    let boundary = |i: usize| {
        i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'$' | b':'))
    };
    for (i, _) in code.match_indices("crate::") {
        if !boundary(i) {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(
                group
                    .split(',')
                    .map(|g| word(g.trim().trim_start_matches('{'))),
            );
        } else {
            out.insert(word(rest));
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !boundary(i) {
            continue;
        }
        let mut rest = &code[i..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            ups += 1;
        }
        // `super::` from `a/b.rs` (module a::b) is `a`: inside the same top-level module.
        if ups >= path.len() {
            out.insert(word(rest));
        }
    }
    out
}

/// `code` without comments, and with string and character literals emptied.
fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    while i < chars.len() {
        let c = chars[i];
        let prev_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            loop {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= chars.len() {
                    break;
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if !prev_word && (at(i, "r\"") || at(i, "r#") || at(i, "br\"") || at(i, "br#")) {
            i = skip_raw_string(&chars, i);
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && char_literal_len(&chars[i..]).is_some() {
            i += char_literal_len(&chars[i..]).unwrap();
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The index after the raw string starting at `i` (`r"…"`, `r#"…"#`, `br…`).
fn skip_raw_string(chars: &[char], mut i: usize) -> usize {
    while chars[i] != 'r' {
        i += 1;
    }
    i += 1;
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if chars.get(i) != Some(&'"') {
        return i; // `r#ident`, a raw identifier
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// The length of the character literal at the start of `s` (`'a'`, `'\n'`, `'\u{feff}'`), or
/// `None` for a lifetime.
fn char_literal_len(s: &[char]) -> Option<usize> {
    if s.get(1) == Some(&'\\') {
        let end = s.iter().skip(3).position(|c| *c == '\'')?;
        return Some(end + 4);
    }
    (s.get(2) == Some(&'\'')).then_some(3)
}

/// `code` without the items under `#[cfg(test)]` (test modules and their imports).
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(start) = out.find("#[cfg(test)]") {
        let bytes = out.as_bytes();
        let mut depth = 0;
        let mut end = out.len();
        for (k, b) in bytes.iter().enumerate().skip(start + "#[cfg(test)]".len()) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.replace_range(start..end, "");
    }
    out
}

/// The import circles (strongly connected components of more than one module), each sorted,
/// largest first (Tarjan's algorithm).
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, n: &'a str) {
        let i = w.index.len();
        w.index.insert(n, i);
        w.low.insert(n, i);
        w.stack.push(n);
        w.on_stack.insert(n);
        for m in &w.edges[n] {
            let m = m.as_str();
            if !w.index.contains_key(m) {
                visit(w, m);
                let low = w.low[n].min(w.low[m]);
                w.low.insert(n, low);
            } else if w.on_stack.contains(m) {
                let low = w.low[n].min(w.index[m]);
                w.low.insert(n, low);
            }
        }
        if w.low[n] == w.index[n] {
            let mut component = Vec::new();
            while let Some(m) = w.stack.pop() {
                w.on_stack.remove(m);
                component.push(m.to_string());
                if m == n {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.out.push(component);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for n in edges.keys() {
        if !w.index.contains_key(n.as_str()) {
            visit(&mut w, n);
        }
    }
    w.out.sort_by_key(|c| std::cmp::Reverse(c.len()));
    w.out
}

/// The parser against a file of its own: comments, strings and test items do not count.
#[test]
fn the_import_reader_skips_comments_strings_and_tests() {
    let src = r##"
        use crate::{alpha, beta::Thing};
        // use crate::gamma;
        /* crate::delta /* nested */ crate::epsilon */
        const S: &str = "crate::zeta";
        const R: &str = r#"crate::eta "quoted""#;
        fn f<'a>(x: &'a str) -> char { let _ = crate::theta::f(); let _ = '\''; '"' }
        pub(crate) fn g() { super::iota::h(); $crate::kappa::m(); }
        #[cfg(test)]
        mod tests { use crate::lambda; fn t() { let _ = "}"; } }
        #[cfg(test)]
        use crate::mu;
    "##;
    let code = without_tests(&code_only(src));
    let found = imported(&code, &["top".to_string()]);
    let want: BTreeSet<String> = ["alpha", "beta", "theta", "iota"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want, "{code}");
    // `super::` from a submodule file stays inside its top-level module.
    let nested = imported(&code, &["top".to_string(), "sub".to_string()]);
    assert!(!nested.contains("iota"));
    let mut edges = Edges::new();
    for (a, b) in [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
    ] {
        edges.entry(a.into()).or_default().insert(b.into());
        edges.entry(b.into()).or_default();
    }
    let found = circles(&edges);
    assert_eq!(found, vec![vec!["a", "b", "c"], vec!["d", "e"]]);
}
