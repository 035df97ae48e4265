//! Which files a shell command line writes, as far as its text shows (the Bash guard hook,
//! `docs/orchestration.md` §9). The line is parsed with a bash grammar of our own
//! (`shell::syntax`: every construct bash has, `<<<`, `|&`, `<(…)`, `${x,,}`, `${a[@]}`, `;&` and
//! here-documents included), never matched with patterns, and walked: every place a file is
//! written that the syntax makes visible is listed — output redirections (`>`, `>>`, `>|`,
//! `<>`, `>&FILE`, `&>`), and the files the programs of `shell::programs` write, move or remove
//! (`tee`, `cp`, `mv`, `ln`, `install`, `rsync`, `rm`, `rmdir`, `mkdir`, `touch`, `truncate`,
//! `chmod`, `dd of=`, `sed -i`, `perl -i`, `find -delete`, `git checkout` …), also inside
//! compound commands, pipelines, command and process substitutions, `eval`, `bash -c '…'` at
//! any depth and a script fed to a shell's stdin. `cd`, `cd -P`, `cd --`, `cd -`, `pushd` and
//! `popd` move the directory later operands are taken from; where a line may or may not have
//! moved (a `cd` in a branch, after `&&`), both places are judged.
//!
//! Each write says how far it reaches ([`Reach`]): a file, a directory and everything below it
//! (`rm -r`, `mv`'s sources), or a destination. A line — or a script inside it — that does
//! not parse is not allowed blindly: every word of it that could be a path is listed as a
//! `blind` write, so the guard refuses the line when it names an owned file or a directory
//! holding one. What stays invisible: a word built from a variable or a command
//! substitution, a directory entered through one, a program that writes files its arguments
//! do not name. A `novel` command's own arguments are never taken for writes (the binary
//! checks its outputs itself); its redirections are.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

mod programs;
mod syntax;
mod words;

pub use programs::Reach;
use programs::{Cd, Effect};
use syntax::{AndOr, Command, List, Pipeline, Redirect, RedirectOp, Simple, Word};
use words::{Field, fields};

/// One file (or directory) a command line writes, moves or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWrite {
    /// The operand as the shell would expand it (brace and tilde expanded; glob characters
    /// kept — see `glob`).
    pub path: String,
    /// The directory the operand is relative to when it is relative: the `cd`s before it, in
    /// order (empty: the command's working directory).
    pub cd: Vec<String>,
    /// The operand (or a directory in `cd`) has unquoted glob characters: it names the files
    /// it matches.
    pub glob: bool,
    /// How it is written, for the refusal (`重定向 >`, `tee`, `rm`, `cp 的目标` …).
    pub how: String,
    pub reach: Reach,
    /// The word comes from a line (or a script in it) that does not parse: the guard cannot
    /// see what is done with it.
    pub blind: bool,
}

/// The files `command` writes, as far as its text shows, and the path-like words of whatever
/// in it does not parse (`blind`).
pub fn writes(command: &str) -> Vec<ShellWrite> {
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let mut walk = Walk {
        places: vec![Place::start()],
        out: Vec::new(),
        scripts: 0,
        docs: Vec::new(),
        home,
    };
    walk.script(command);
    walk.out
}

/// Scripts inside scripts (`bash -c "bash -c '…'"`, `eval`) followed this deep; a deeper one is
/// judged blind.
const MAX_SCRIPTS: usize = 32;

/// Places (possible working directories) kept at once; beyond, the first ones.
const MAX_PLACES: usize = 16;

/// A directory as the line reaches it: the `cd` operands from the start (an absolute one
/// first when there is one), or `None` where the line does not show it.
type Dir = Option<Vec<Field>>;

/// Where the shell may be: its directory, `cd -`'s, and the `pushd` stack.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    dir: Dir,
    prev: Dir,
    stack: Vec<Dir>,
}

impl Place {
    fn start() -> Place {
        Place {
            dir: Some(Vec::new()),
            prev: None,
            stack: Vec::new(),
        }
    }
}

struct Walk {
    places: Vec<Place>,
    out: Vec<ShellWrite>,
    scripts: usize,
    /// The here-document bodies of the script being walked.
    docs: Vec<String>,
    home: Option<String>,
}

impl Walk {
    /// Parses and walks one script (the line, a `bash -c` string, an `eval`).
    fn script(&mut self, text: &str) {
        self.scripts += 1;
        let parsed = if self.scripts > MAX_SCRIPTS {
            None
        } else {
            syntax::parse(text).ok()
        };
        match parsed {
            Some(script) => {
                let docs = std::mem::replace(&mut self.docs, script.docs);
                self.list(&script.list);
                for run in &script.doc_runs {
                    self.subshell(|w| w.list(run));
                }
                self.docs = docs;
            }
            None => self.blind(text),
        }
        self.scripts -= 1;
    }

    /// Runs `f` in a subshell: nothing it does moves this shell.
    fn subshell(&mut self, f: impl FnOnce(&mut Walk)) {
        let saved = self.places.clone();
        f(self);
        self.places = saved;
    }

    fn list(&mut self, list: &List) {
        for and_or in list {
            if and_or.background {
                self.subshell(|w| w.and_or(and_or));
            } else {
                self.and_or(and_or);
            }
        }
    }

    /// `a && b || c`: each pipeline runs where the ones before it left the shell; afterwards
    /// the shell may be where any of them left it.
    fn and_or(&mut self, and_or: &AndOr) {
        let mut seen = self.places.clone();
        for p in &and_or.pipelines {
            self.pipeline(p);
            remember(&mut seen, &self.places);
        }
        if and_or.pipelines.len() > 1 {
            self.places = seen;
        }
    }

    /// Each side of a pipe runs in a subshell; `echo TEXT | bash` feeds TEXT to the shell.
    fn pipeline(&mut self, p: &Pipeline) {
        if let [only] = p.commands.as_slice() {
            return self.command(only, None);
        }
        let mut stdin: Option<String> = None;
        for c in &p.commands {
            let fed = stdin.take();
            self.subshell(|w| w.command(c, fed.as_deref()));
            stdin = self.echoed(c);
        }
    }

    /// What `echo WORDS` prints, when the line fixes it.
    fn echoed(&self, c: &Command) -> Option<String> {
        let Command::Simple(s) = c else { return None };
        let args = self.args(&s.words);
        let (first, rest) = args.split_first()?;
        if first.as_ref()?.text != "echo" {
            return None;
        }
        let texts: Option<Vec<&str>> = rest
            .iter()
            .map(|a| a.as_ref().map(|a| a.text.as_str()))
            .collect();
        Some(texts?.join(" "))
    }

    fn command(&mut self, c: &Command, stdin: Option<&str>) {
        match c {
            Command::Simple(s) => self.simple(s, stdin),
            Command::Subshell(body, redirects) => {
                self.subshell(|w| w.list(body));
                self.redirects(redirects);
            }
            Command::Group(body, redirects) => {
                self.list(body);
                self.redirects(redirects);
            }
            Command::Compound {
                words,
                bodies,
                redirects,
            } => {
                for w in words {
                    self.expansions(w);
                }
                // Each body may run or not: afterwards the shell may be where any left it.
                let mut seen = self.places.clone();
                for body in bodies {
                    self.list(body);
                    remember(&mut seen, &self.places);
                }
                self.places = seen;
                self.redirects(redirects);
            }
            // A function's body runs where it is called: judged here, as written.
            Command::Function(body) => self.subshell(|w| w.command(body, None)),
        }
    }

    fn simple(&mut self, s: &Simple, piped: Option<&str>) {
        for w in s.assignments.iter().chain(&s.words) {
            self.expansions(w);
        }
        self.redirects(&s.redirects);
        let mut stdin = piped.map(str::to_string);
        for r in &s.redirects {
            match r.op {
                RedirectOp::HereDoc { doc } => stdin = self.docs.get(doc).cloned(),
                RedirectOp::HereString => {
                    stdin = syntax::plain_text(&r.target).or_else(|| Some(String::new()));
                }
                _ => {}
            }
        }
        let args = self.args(&s.words);
        for effect in programs::effects(&args, stdin.as_deref()) {
            self.effect(effect);
        }
    }

    /// The program's arguments: each word's fields, `None` for a word the line does not fix.
    fn args(&self, words: &[Word]) -> Vec<Option<Field>> {
        words
            .iter()
            .flat_map(|w| match fields(w, self.home.as_deref()) {
                Some(fs) => fs.into_iter().map(Some).collect(),
                None => vec![None],
            })
            .collect()
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::Write { path, how, reach } => self.push(&path, &how, reach, false),
            Effect::Cd(cd) => self.cd(&cd),
            Effect::Script { text, same_shell } if same_shell => self.script(&text),
            Effect::Script { text, .. } => self.subshell(|w| w.script(&text)),
            Effect::Unseen => {}
        }
    }

    /// The commands a word's substitutions run (each in a subshell).
    fn expansions(&mut self, w: &Word) {
        for run in syntax::runs_of(w) {
            self.subshell(|walk| walk.list(&run));
        }
    }

    fn redirects(&mut self, redirects: &[Redirect]) {
        for r in redirects {
            self.expansions(&r.target);
            let how = match r.op {
                RedirectOp::Write => "重定向 >",
                RedirectOp::Append => "重定向 >>",
                RedirectOp::Clobber => "重定向 >|",
                RedirectOp::ReadWrite => "重定向 <>",
                RedirectOp::DupWrite => "重定向 >&",
                RedirectOp::WriteBoth => "重定向 &>",
                RedirectOp::AppendBoth => "重定向 &>>",
                _ => continue,
            };
            for f in fields(&r.target, self.home.as_deref()).unwrap_or_default() {
                // `>&2`, `>&-`: a descriptor, not a file.
                let descriptor = f.text == "-" || f.text.parse::<u16>().is_ok();
                if !(r.op == RedirectOp::DupWrite && descriptor) {
                    self.push(&f, how, Reach::File, false);
                }
            }
        }
    }

    fn cd(&mut self, cd: &Cd) {
        let home = self.home.as_ref().map(|h| vec![Field::new(h)]);
        for p in &mut self.places {
            match cd {
                Cd::To(d) => {
                    let to = join(&p.dir, d);
                    p.prev = std::mem::replace(&mut p.dir, to);
                }
                Cd::Home => p.prev = std::mem::replace(&mut p.dir, home.clone()),
                Cd::Back => std::mem::swap(&mut p.dir, &mut p.prev),
                Cd::Push(d) => {
                    let to = join(&p.dir, d);
                    p.stack.push(p.dir.clone());
                    p.prev = std::mem::replace(&mut p.dir, to);
                }
                Cd::Swap => {
                    if let Some(top) = p.stack.pop() {
                        p.stack.push(p.dir.clone());
                        p.prev = std::mem::replace(&mut p.dir, top);
                    }
                }
                Cd::Pop => {
                    if let Some(top) = p.stack.pop() {
                        p.prev = std::mem::replace(&mut p.dir, top);
                    }
                }
                Cd::StackOnly => {
                    p.stack.iter_mut().for_each(|d| *d = None);
                    p.stack.push(None);
                }
                Cd::Unknown => p.dir = None,
            }
        }
        let places = std::mem::take(&mut self.places);
        remember(&mut self.places, &places);
    }

    /// Lists `path` as written from every place the shell may be.
    fn push(&mut self, path: &Field, how: &str, reach: Reach, blind: bool) {
        if path.text.is_empty() || path.text == "-" || path.text.starts_with("/dev/") {
            return;
        }
        for p in &self.places {
            let (cd, glob) = if path.text.starts_with('/') {
                (Vec::new(), path.glob)
            } else {
                let Some(dir) = &p.dir else { continue };
                let cd: Vec<String> = dir.iter().map(|d| d.text.clone()).collect();
                (cd, path.glob || dir.iter().any(|d| d.glob))
            };
            let w = ShellWrite {
                path: path.text.clone(),
                cd,
                glob,
                how: how.to_string(),
                reach,
                blind,
            };
            if !self.out.contains(&w) {
                self.out.push(w);
            }
        }
    }

    /// A script that does not parse: each of its words that could be a path, listed blind.
    fn blind(&mut self, text: &str) {
        for word in loose_words(text, self.home.as_deref()) {
            self.push(&word, "无法解析的命令行", Reach::Tree, true);
        }
    }
}

/// Adds `now` to the places `seen` (each once, at most [`MAX_PLACES`]).
fn remember(seen: &mut Vec<Place>, now: &[Place]) {
    for p in now {
        if !seen.contains(p) && seen.len() < MAX_PLACES {
            seen.push(p.clone());
        }
    }
}

/// `dir` after `cd d`.
fn join(dir: &Dir, d: &Option<Field>) -> Dir {
    let d = d.as_ref()?;
    if d.text.starts_with('/') {
        return Some(vec![d.clone()]);
    }
    let mut out = dir.clone()?;
    out.push(d.clone());
    Some(out)
}

/// The words of a line that does not parse that could be paths: split at blanks, quotes and
/// shell punctuation; options left out; a leading `~` expanded.
fn loose_words(text: &str, home: Option<&str>) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || "'\"`;&|<>(){}=,$\\".contains(c)) {
        if raw.is_empty() || raw.starts_with('-') {
            continue;
        }
        let text = match (raw.strip_prefix('~'), home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{home}{rest}")
            }
            _ => raw.to_string(),
        };
        let f = Field {
            glob: text.contains(['*', '?', '[']),
            text,
        };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each write as `cd/…/path`, with its reach (`f` file, `t` tree, `i` destination) and `!`
    /// when blind.
    fn paths(cmd: &str) -> Vec<String> {
        writes(cmd)
            .into_iter()
            .map(|w| {
                let mut p = w.cd.join("/");
                if !p.is_empty() {
                    p.push('/');
                }
                p.push_str(&w.path);
                let reach = match w.reach {
                    Reach::File => "",
                    Reach::Tree => " t",
                    Reach::Into => " i",
                };
                format!("{p}{reach}{}", if w.blind { "!" } else { "" })
            })
            .collect()
    }

    #[test]
    fn what_a_command_line_writes() {
        for (cmd, want) in [
            (
                "echo 1 > state/current-state.json",
                vec!["state/current-state.json"],
            ),
            (
                "echo 1 >> 'state/changelog.jsonl'",
                vec!["state/changelog.jsonl"],
            ),
            (
                "cat a | tee -a x.json y.json | wc -l",
                vec!["x.json", "y.json"],
            ),
            ("cp a.json b.json", vec!["b.json i", "b.json/a.json"]),
            ("cp -t state a b", vec!["state i", "state/a", "state/b"]),
            (
                "mv new.json .checkpoint.json",
                vec![
                    ".checkpoint.json i",
                    ".checkpoint.json/new.json t",
                    "new.json t",
                ],
            ),
            (
                "rm -f .novel.lock/info.json",
                vec![".novel.lock/info.json t"],
            ),
            (
                "sed -i 's/a/b/' state/current-state.json",
                vec!["state/current-state.json"],
            ),
            ("sed -i.bak -e 's/a/b/' x y", vec!["x", "y"]),
            ("sed 's/a/b/' x > y", vec!["y"]),
            ("perl -pi -e 's/a/b/' z", vec!["z"]),
            (
                "truncate -s 0 state/changelog.jsonl",
                vec!["state/changelog.jsonl"],
            ),
            ("dd if=/dev/zero of=out.bin bs=1", vec!["out.bin"]),
            (
                "cd book && echo x > .checkpoint.json",
                vec!["book/.checkpoint.json"],
            ),
            ("(cd book; echo x > a) ; echo y > b", vec!["book/a", "b"]),
            (
                "bash -c 'echo x > \"state/current-state.json\"'",
                vec!["state/current-state.json"],
            ),
            ("if true; then echo x >> log.txt; fi", vec!["log.txt"]),
            ("for f in a b; do echo $f > out; done", vec!["out"]),
            ("echo $(rm -f secret) ok", vec!["secret t"]),
            ("sudo -u me tee file", vec!["file"]),
            ("env A=1 B=2 cp x y", vec!["y i", "y/x"]),
            (
                "ln -sf ../x .checkpoint.json",
                vec![".checkpoint.json i", ".checkpoint.json/x"],
            ),
            ("echo 2>&1 >&2 hi 2>/dev/null", vec![]),
            ("cat state/current-state.json | jq .", vec![]),
            (
                "novel --project . ops apply staging/state/chapter-001-delta.json --json",
                vec![],
            ),
            (
                "novel status > state/current-state.json",
                vec!["state/current-state.json"],
            ),
            ("echo $X > $Y", vec![]),
            ("cd $DIR && echo x > a", vec![]),
            ("cat <<EOF > a.json\n{}\nEOF\n", vec!["a.json"]),
        ] {
            assert_eq!(paths(cmd), want, "{cmd}");
        }
    }

    /// N13: one bash-only construct no longer hides the rest of the line.
    #[test]
    fn bash_only_constructs_do_not_hide_writes() {
        for (cmd, want) in [
            (
                "echo x > state/current-state.json; cat <<< y",
                "state/current-state.json",
            ),
            ("ls |& tee state/changelog.jsonl", "state/changelog.jsonl"),
            (
                "diff <(sort a) <(sort b) > .checkpoint.json",
                ".checkpoint.json",
            ),
            (
                "echo ${x,,} > state/current-state.json",
                "state/current-state.json",
            ),
            (
                "echo ${a[@]} >> state/changelog.jsonl",
                "state/changelog.jsonl",
            ),
            (
                "case a in a) echo > .checkpoint.json ;& b) : ;; esac",
                ".checkpoint.json",
            ),
            ("cat a > >(tee .checkpoint.json)", ".checkpoint.json"),
            ("[[ -f x ]] && echo > .checkpoint.json", ".checkpoint.json"),
            (
                "for ((i=0;i<1;i++)); do echo > .checkpoint.json; done",
                ".checkpoint.json",
            ),
            ("echo $'\\x41' > .checkpoint.json", ".checkpoint.json"),
            ("x=(1 2); echo > .checkpoint.json", ".checkpoint.json"),
            (
                "echo > state/{current-state.json,x}",
                "state/current-state.json",
            ),
            ("eval 'echo x > .checkpoint.json'", ".checkpoint.json"),
            (
                "bash <<'EOF'\necho x > .checkpoint.json\nEOF",
                ".checkpoint.json",
            ),
            ("echo 'rm .checkpoint.json' | sh", ".checkpoint.json t"),
            ("f() { rm .checkpoint.json; }; f", ".checkpoint.json t"),
        ] {
            let got = paths(cmd);
            assert!(got.iter().any(|p| p == want), "{cmd}: {got:?}");
        }
    }

    /// N15: every way of changing directory is followed, `bash -c` at any depth.
    #[test]
    fn directory_changes_and_nesting_are_followed() {
        for (cmd, want) in [
            (
                "cd -P state && echo > current-state.json",
                "state/current-state.json",
            ),
            (
                "cd -- state; echo > current-state.json",
                "state/current-state.json",
            ),
            (
                "cd -L state; echo > current-state.json",
                "state/current-state.json",
            ),
            (
                "pushd state; echo > current-state.json",
                "state/current-state.json",
            ),
            (
                "pushd state; popd; echo > .checkpoint.json",
                ".checkpoint.json",
            ),
            (
                "cd state; cd -; echo > .checkpoint.json",
                ".checkpoint.json",
            ),
            ("cd /b && cd state && rm x", "/b/state/x t"),
            (
                "test -d state && cd state; rm current-state.json",
                "state/current-state.json t",
            ),
            (
                "if true; then cd state; fi; rm current-state.json",
                "state/current-state.json t",
            ),
            ("mkdir .novel.lock", ".novel.lock"),
            (
                "bash -lc 'cd state && rm -f current-state.json'",
                "state/current-state.json t",
            ),
        ] {
            let got = paths(cmd);
            assert!(got.iter().any(|p| p == want), "{cmd}: {got:?}");
        }
        // `bash -c` inside `bash -c`, eight deep.
        let mut line = "echo x > .checkpoint.json".to_string();
        for _ in 0..8 {
            line = format!("bash -c '{}'", line.replace('\'', "'\\''"));
        }
        assert_eq!(paths(&line), [".checkpoint.json"], "{line}");
        // Both places after an uncertain `cd`: the write is judged in each.
        assert_eq!(
            paths("test -d state && cd state; rm current-state.json"),
            ["current-state.json t", "state/current-state.json t"]
        );
    }

    /// N14: what reaches a whole directory says so.
    #[test]
    fn directory_operands_reach_everything_below() {
        for (cmd, want) in [
            ("rm -rf state", vec!["state t"]),
            ("rm -r memory", vec!["memory t"]),
            (
                "mv state /tmp/x",
                vec!["/tmp/x i", "/tmp/x/state t", "state t"],
            ),
            ("cp -r /tmp/x/state .", vec![". i", "./state t"]),
            ("rm -rf *", vec!["* t"]),
            ("find . -delete", vec![". t"]),
            ("find state -name '*.json' -exec rm {} \\;", vec!["state t"]),
            ("find state -exec cp {} /tmp/b \\;", vec!["/tmp/b i"]),
            ("rmdir .novel.lock", vec![".novel.lock t"]),
            ("git checkout -- state", vec!["state t"]),
            ("tar -xf backup.tar", vec![". t"]),
            ("rsync -a --delete /tmp/book/ ./", vec!["./ t", "./ i"]),
            ("chmod -R 000 state", vec!["state t"]),
        ] {
            assert_eq!(paths(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn lines_that_do_not_parse_are_judged_by_their_words() {
        assert_eq!(
            paths("echo 'x > state/current-state.json"),
            ["echo t!", "x t!", "state/current-state.json t!"]
        );
        assert_eq!(
            paths("cd book && bash -c 'rm \"x'"),
            ["book/rm t!", "book/x t!"]
        );
    }

    #[test]
    fn globs_are_marked() {
        let w = writes("rm state/*.json");
        assert_eq!(w.len(), 1);
        assert!(w[0].glob);
        assert!(!writes("rm 'state/*.json'")[0].glob);
        assert!(writes("cd st* && rm x")[0].glob);
    }
}
