//! Which files a shell command line writes, as far as its text shows (the Bash guard hook,
//! `docs/orchestration.md` §9): the command line is parsed with a POSIX shell grammar
//! (`conch-parser`), never matched with patterns, and every place a file is written that the
//! syntax makes visible is listed — output redirections (`>`, `>>`, `>|`, `<>`, `>&FILE`), and
//! the file operands of the commands that write files (`tee`, `cp`, `mv`, `ln`, `install`,
//! `rm`, `unlink`, `shred`, `truncate`, `dd of=`, `sed -i`, `perl -i`), also inside compound
//! commands, pipelines, command substitutions and `bash -c '…'`. A literal `cd DIR` moves the
//! directory later operands are taken from.
//!
//! What it cannot see it leaves alone: a word built from a variable or a command substitution,
//! a command line the grammar does not parse (bash-only syntax), a program that writes files
//! its arguments do not name. The guard denies only what is listed here and allows the rest; a
//! `novel` command's own arguments are never taken for writes (its redirections still are).

use conch_parser::ast;
use conch_parser::lexer::Lexer;
use conch_parser::parse::DefaultParser;

/// One file a command line writes (or removes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWrite {
    /// The operand as the shell would expand it (tilde expanded to `$HOME` when set; glob
    /// characters kept — see `glob`).
    pub path: String,
    /// The directory the operand is relative to when it is relative: the literal `cd`s before
    /// it, in order (empty: the command's working directory).
    pub cd: Vec<String>,
    /// The operand has unquoted glob characters (`*`, `?`, `[`): it names the files it matches.
    pub glob: bool,
    /// How it is written, for the refusal (`重定向 >`, `tee`, `cp 的目标` …).
    pub how: String,
}

/// The files `command` writes, as far as its text shows; `None` when it does not parse.
pub fn writes(command: &str) -> Option<Vec<ShellWrite>> {
    writes_depth(command, 0)
}

/// `bash -c '…'` inside `bash -c '…'` is followed this deep.
const MAX_NESTING: usize = 4;

fn writes_depth(command: &str, depth: usize) -> Option<Vec<ShellWrite>> {
    let parser = DefaultParser::new(Lexer::new(command.chars()));
    let mut commands = Vec::new();
    for c in parser {
        commands.push(c.ok()?);
    }
    let mut walk = Walk {
        cd: Vec::new(),
        out: Vec::new(),
        depth,
    };
    walk.commands(&commands);
    Some(walk.out)
}

struct Walk {
    cd: Vec<String>,
    out: Vec<ShellWrite>,
    depth: usize,
}

type TopCommand = ast::TopLevelCommand<String>;
type TopWord = ast::TopLevelWord<String>;
type ListCommand = ast::DefaultListableCommand;
type Pipeable = ast::DefaultPipeableCommand;

impl Walk {
    fn commands(&mut self, commands: &[TopCommand]) {
        for c in commands {
            let list = match &c.0 {
                ast::Command::Job(l) | ast::Command::List(l) => l,
            };
            self.listable(&list.first);
            for next in &list.rest {
                match next {
                    ast::AndOr::And(l) | ast::AndOr::Or(l) => self.listable(l),
                }
            }
        }
    }

    fn listable(&mut self, c: &ListCommand) {
        match c {
            ast::ListableCommand::Single(p) => self.pipeable(p),
            ast::ListableCommand::Pipe(_, ps) => {
                // Each side of a pipe runs in a subshell: a `cd` there moves nothing after it.
                for p in ps {
                    let saved = self.cd.clone();
                    self.pipeable(p);
                    self.cd = saved;
                }
            }
        }
    }

    fn pipeable(&mut self, p: &Pipeable) {
        match p {
            ast::PipeableCommand::Simple(s) => self.simple(s),
            ast::PipeableCommand::Compound(c) => self.compound(c),
            ast::PipeableCommand::FunctionDef(_, body) => self.compound(body),
        }
    }

    fn compound(&mut self, c: &ast::DefaultCompoundCommand) {
        use ast::CompoundCommandKind as K;
        match &c.kind {
            K::Brace(body) => self.commands(body),
            K::Subshell(body) => {
                let saved = self.cd.clone();
                self.commands(body);
                self.cd = saved;
            }
            K::While(pair) | K::Until(pair) => {
                self.commands(&pair.guard);
                self.commands(&pair.body);
            }
            K::If {
                conditionals,
                else_branch,
            } => {
                for pair in conditionals {
                    self.commands(&pair.guard);
                    self.commands(&pair.body);
                }
                if let Some(body) = else_branch {
                    self.commands(body);
                }
            }
            K::For { words, body, .. } => {
                for w in words.iter().flatten() {
                    self.substitutions(w);
                }
                self.commands(body);
            }
            K::Case { word, arms } => {
                self.substitutions(word);
                for arm in arms {
                    self.commands(&arm.body);
                }
            }
        }
        for r in &c.io {
            self.redirect(r);
        }
    }

    fn simple(&mut self, s: &ast::DefaultSimpleCommand) {
        let mut words: Vec<&TopWord> = Vec::new();
        for r in &s.redirects_or_env_vars {
            match r {
                ast::RedirectOrEnvVar::Redirect(r) => self.redirect(r),
                ast::RedirectOrEnvVar::EnvVar(_, Some(w)) => self.substitutions(w),
                ast::RedirectOrEnvVar::EnvVar(_, None) => {}
            }
        }
        for r in &s.redirects_or_cmd_words {
            match r {
                ast::RedirectOrCmdWord::Redirect(r) => self.redirect(r),
                ast::RedirectOrCmdWord::CmdWord(w) => {
                    self.substitutions(w);
                    words.push(w);
                }
            }
        }
        let args: Vec<Option<Operand>> = words.iter().map(|w| operand(w)).collect();
        self.program(&args);
    }

    /// The writes of one program run with `args` (its name first).
    fn program(&mut self, args: &[Option<Operand>]) {
        let Some(Some(name)) = args.first() else {
            return;
        };
        let program = name
            .text
            .rsplit('/')
            .next()
            .unwrap_or(&name.text)
            .to_string();
        let rest = &args[1..];
        match program.as_str() {
            "cd" if rest.len() <= 1 => match rest.first() {
                Some(Some(dir)) if !dir.glob => {
                    if dir.text.starts_with('/') {
                        self.cd.clear();
                    }
                    self.cd.push(dir.text.clone());
                }
                // `cd` alone, `cd -` or a directory it cannot see: the rest is unknown ground.
                _ => self.cd.push("\u{0}".into()),
            },
            // The binary's own commands: their operands are its business.
            "novel" => {}
            // Runners of another command: that command's writes.
            "sudo" => self.program(skip_options_with(
                rest,
                &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            )),
            "nice" => self.program(skip_options_with(rest, &["-n"])),
            "nohup" | "command" | "exec" | "time" | "stdbuf" => {
                self.program(skip_options(rest));
            }
            "env" => {
                let inner = skip_options(rest);
                let at = inner
                    .iter()
                    .position(|a| a.as_ref().is_none_or(|a| !a.text.contains('=')))
                    .unwrap_or(inner.len());
                self.program(&inner[at..]);
            }
            "timeout" => {
                let inner = skip_options(rest);
                self.program(inner.get(1..).unwrap_or_default());
            }
            "xargs" => self.program(skip_options(rest)),
            "bash" | "sh" | "dash" | "zsh" => self.shell_c(rest),
            "tee" => self.all_operands(rest, "tee"),
            "rm" | "unlink" | "shred" => self.all_operands(rest, &program),
            "truncate" => {
                self.operands_after_values(rest, &["-s", "--size", "-r", "--reference"], "truncate")
            }
            "cp" | "install" => self.destination(rest, &program, false),
            "mv" => self.destination(rest, "mv", true),
            "ln" => self.destination(rest, "ln", false),
            "dd" => {
                for a in rest.iter().flatten() {
                    if let Some(path) = a.text.strip_prefix("of=") {
                        self.push(
                            &Operand {
                                text: path.into(),
                                glob: a.glob,
                            },
                            "dd of=",
                        );
                    }
                }
            }
            "sed" | "perl" | "gsed" => self.in_place(rest, &program),
            _ => {}
        }
    }

    /// `bash -c 'SCRIPT'`: the script's writes (followed [`MAX_NESTING`] deep).
    fn shell_c(&mut self, args: &[Option<Operand>]) {
        let Some(at) = args.iter().position(|a| {
            a.as_ref().is_some_and(|a| {
                a.text.starts_with('-') && a.text.contains('c') && !a.text.starts_with("--")
            })
        }) else {
            return;
        };
        let Some(Some(script)) = args.get(at + 1) else {
            return;
        };
        if self.depth >= MAX_NESTING {
            return;
        }
        if let Some(inner) = writes_depth(&script.text, self.depth + 1) {
            for mut w in inner {
                if !w.path.starts_with('/') {
                    let mut cd = self.cd.clone();
                    cd.extend(w.cd);
                    w.cd = cd;
                }
                self.out.push(w);
            }
        }
    }

    fn all_operands(&mut self, args: &[Option<Operand>], how: &str) {
        for a in operands(args) {
            self.push(a, how);
        }
    }

    /// Operands, the values of the options named in `valued` left out.
    fn operands_after_values(&mut self, args: &[Option<Operand>], valued: &[&str], how: &str) {
        let mut skip = false;
        let mut after_dashes = false;
        for a in args {
            if skip {
                skip = false;
                continue;
            }
            let Some(a) = a else { continue };
            if !after_dashes && a.text == "--" {
                after_dashes = true;
                continue;
            }
            if !after_dashes && a.text.starts_with('-') {
                skip = valued.contains(&a.text.as_str());
                continue;
            }
            self.push(a, how);
        }
    }

    /// `cp`/`mv`/`ln`/`install`: the destination (`-t DIR` or the last operand) and, when it
    /// may be a directory, each source's name inside it; `mv` also removes its sources.
    fn destination(&mut self, args: &[Option<Operand>], program: &str, sources_too: bool) {
        let mut target_dir: Option<Operand> = None;
        let mut ops: Vec<&Operand> = Vec::new();
        let mut after_dashes = false;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let Some(a) = a else {
                continue;
            };
            if !after_dashes && a.text == "--" {
                after_dashes = true;
            } else if !after_dashes && (a.text == "-t" || a.text == "--target-directory") {
                target_dir = it.next().and_then(Clone::clone);
            } else if !after_dashes && a.text.starts_with("--target-directory=") {
                target_dir = Some(Operand {
                    text: a.text["--target-directory=".len()..].to_string(),
                    glob: a.glob,
                });
            } else if !after_dashes && a.text.starts_with('-') && a.text.len() > 1 {
                // `-S SUFFIX`, `-m MODE` … take a value; none of them names the destination.
                if matches!(a.text.as_str(), "-S" | "-m" | "-o" | "-g" | "--suffix") {
                    it.next();
                }
            } else {
                ops.push(a);
            }
        }
        let (sources, dest): (Vec<&Operand>, Option<Operand>) = match target_dir {
            Some(d) => (ops, Some(d)),
            None => match ops.split_last() {
                Some((last, rest)) if !rest.is_empty() => (rest.to_vec(), Some((*last).clone())),
                // `ln -s TARGET` alone links into the working directory.
                Some((only, _)) if program == "ln" => (
                    vec![*only],
                    Some(Operand {
                        text: ".".into(),
                        glob: false,
                    }),
                ),
                _ => (Vec::new(), None),
            },
        };
        let Some(dest) = dest else {
            return;
        };
        let how = format!("{program} 的目标");
        self.push(&dest, &how);
        for s in &sources {
            if let Some(name) = s
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty())
            {
                let inside = Operand {
                    text: format!("{}/{name}", dest.text.trim_end_matches('/')),
                    glob: dest.glob || s.glob,
                };
                self.push(&inside, &how);
            }
        }
        if sources_too {
            for s in sources {
                self.push(s, "mv 移走的源文件");
            }
        }
    }

    /// `sed -i` / `perl -i`: the files after the script (which is the first operand unless
    /// `-e`/`-f` gave it).
    fn in_place(&mut self, args: &[Option<Operand>], program: &str) {
        let mut in_place = false;
        let mut script_given = false;
        let mut files: Vec<&Operand> = Vec::new();
        let mut it = args.iter();
        let mut after_dashes = false;
        while let Some(a) = it.next() {
            let Some(a) = a else { continue };
            let t = a.text.as_str();
            if !after_dashes && t == "--" {
                after_dashes = true;
            } else if !after_dashes && t.starts_with("--") {
                in_place |= t.starts_with("--in-place");
                if matches!(t, "--expression" | "--file") {
                    script_given = true;
                    it.next();
                }
                script_given |= t.starts_with("--expression=") || t.starts_with("--file=");
            } else if !after_dashes && t.starts_with('-') && t.len() > 1 {
                let flags = &t[1..];
                // Bundled flags (`-pi`, `-ni.bak`, `-i`): `i` before any value-taking flag.
                let i_at = flags.find('i');
                let e_at = flags
                    .find(['e', 'f', 'E'])
                    .filter(|_| program != "sed" || flags.contains(['e', 'f']));
                if i_at.is_some_and(|i| e_at.is_none_or(|e| i < e)) {
                    in_place = true;
                }
                if let Some(e) = flags.find(['e', 'f']) {
                    script_given = true;
                    // `-e SCRIPT` (value in the next word) unless the value is glued on.
                    if e + 1 == flags.len() {
                        it.next();
                    }
                }
            } else {
                files.push(a);
            }
        }
        if !in_place {
            return;
        }
        let files = if script_given {
            &files[..]
        } else {
            files.get(1..).unwrap_or_default()
        };
        let how = format!("{program} -i");
        for f in files {
            self.push(f, &how);
        }
    }

    fn redirect(&mut self, r: &ast::DefaultRedirect) {
        use ast::Redirect as R;
        let (word, how) = match r {
            R::Write(_, w) => (w, "重定向 >"),
            R::Append(_, w) => (w, "重定向 >>"),
            R::Clobber(_, w) => (w, "重定向 >|"),
            R::ReadWrite(_, w) => (w, "重定向 <>"),
            R::DupWrite(_, w) => (w, "重定向 >&"),
            R::Read(_, w) | R::DupRead(_, w) | R::Heredoc(_, w) => {
                self.substitutions(w);
                return;
            }
        };
        self.substitutions(word);
        if let Some(op) = operand(word) {
            // `>&2`, `>&-`: a descriptor, not a file.
            if matches!(r, R::DupWrite(..)) && (op.text == "-" || op.text.parse::<u16>().is_ok()) {
                return;
            }
            self.push(&op, how);
        }
    }

    /// The writes of the command substitutions inside a word (`$(…)`, `` `…` ``).
    fn substitutions(&mut self, w: &TopWord) {
        let words = match &w.0 {
            ast::ComplexWord::Single(w) => std::slice::from_ref(w),
            ast::ComplexWord::Concat(ws) => ws.as_slice(),
        };
        for w in words {
            let simples: &[ast::DefaultSimpleWord] = match w {
                ast::Word::Simple(s) => std::slice::from_ref(s),
                ast::Word::DoubleQuoted(ss) => ss.as_slice(),
                ast::Word::SingleQuoted(_) => &[],
            };
            for s in simples {
                if let ast::SimpleWord::Subst(sub) = s
                    && let ast::ParameterSubstitution::Command(cmds) = sub.as_ref()
                {
                    let saved = self.cd.clone();
                    self.commands(cmds);
                    self.cd = saved;
                }
            }
        }
    }

    fn push(&mut self, op: &Operand, how: &str) {
        // `-` is standard output for tee/dd; an unknown `cd` makes relative paths unknowable.
        if op.text.is_empty() || op.text == "-" || op.text.starts_with("/dev/") {
            return;
        }
        if !op.text.starts_with('/') && self.cd.iter().any(|d| d == "\u{0}") {
            return;
        }
        self.out.push(ShellWrite {
            path: op.text.clone(),
            cd: if op.text.starts_with('/') {
                Vec::new()
            } else {
                self.cd.clone()
            },
            glob: op.glob,
            how: how.to_string(),
        });
    }
}

/// A word whose text the command line fixes: literals, quotes, escapes, a leading `~`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Operand {
    text: String,
    /// Unquoted glob characters in it.
    glob: bool,
}

/// The text of a word, or `None` when it depends on a variable or a substitution.
fn operand(w: &TopWord) -> Option<Operand> {
    let words = match &w.0 {
        ast::ComplexWord::Single(w) => std::slice::from_ref(w),
        ast::ComplexWord::Concat(ws) => ws.as_slice(),
    };
    let mut text = String::new();
    let mut glob = false;
    for (i, w) in words.iter().enumerate() {
        match w {
            ast::Word::SingleQuoted(s) => text.push_str(s),
            ast::Word::DoubleQuoted(ss) => {
                for s in ss {
                    match s {
                        ast::SimpleWord::Literal(l) | ast::SimpleWord::Escaped(l) => {
                            text.push_str(l)
                        }
                        ast::SimpleWord::Colon => text.push(':'),
                        ast::SimpleWord::Star => text.push('*'),
                        ast::SimpleWord::Question => text.push('?'),
                        ast::SimpleWord::SquareOpen => text.push('['),
                        ast::SimpleWord::SquareClose => text.push(']'),
                        ast::SimpleWord::Tilde => text.push('~'),
                        ast::SimpleWord::Param(_) | ast::SimpleWord::Subst(_) => return None,
                    }
                }
            }
            ast::Word::Simple(s) => match s {
                ast::SimpleWord::Literal(l) | ast::SimpleWord::Escaped(l) => text.push_str(l),
                ast::SimpleWord::Colon => text.push(':'),
                ast::SimpleWord::Star => {
                    text.push('*');
                    glob = true;
                }
                ast::SimpleWord::Question => {
                    text.push('?');
                    glob = true;
                }
                ast::SimpleWord::SquareOpen => {
                    text.push('[');
                    glob = true;
                }
                ast::SimpleWord::SquareClose => text.push(']'),
                ast::SimpleWord::Tilde if i == 0 => match std::env::var("HOME") {
                    Ok(home) if !home.is_empty() => text.push_str(&home),
                    _ => return None,
                },
                ast::SimpleWord::Tilde => text.push('~'),
                ast::SimpleWord::Param(_) | ast::SimpleWord::Subst(_) => return None,
            },
        }
    }
    Some(Operand { text, glob })
}

/// The arguments after a runner's own options (`nohup CMD …`: CMD …).
fn skip_options(args: &[Option<Operand>]) -> &[Option<Operand>] {
    skip_options_with(args, &[])
}

/// [`skip_options`] for a runner whose options in `valued` take the next word as their value
/// (`sudo -u me CMD`).
fn skip_options_with<'a>(args: &'a [Option<Operand>], valued: &[&str]) -> &'a [Option<Operand>] {
    let mut at = 0;
    while let Some(Some(a)) = args.get(at) {
        if a.text == "--" {
            return &args[at + 1..];
        }
        if !a.text.starts_with('-') {
            break;
        }
        at += if valued.contains(&a.text.as_str()) {
            2
        } else {
            1
        };
    }
    args.get(at..).unwrap_or_default()
}

/// The operands of a command (what is not an option; everything after `--`).
fn operands(args: &[Option<Operand>]) -> Vec<&Operand> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for a in args.iter().flatten() {
        if !after_dashes && a.text == "--" {
            after_dashes = true;
        } else if after_dashes || !a.text.starts_with('-') || a.text == "-" {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cmd: &str) -> Vec<String> {
        writes(cmd)
            .unwrap_or_else(|| panic!("does not parse: {cmd}"))
            .into_iter()
            .map(|w| {
                let mut p = w.cd.join("/");
                if !p.is_empty() {
                    p.push('/');
                }
                p.push_str(&w.path);
                p
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
            ("cp a.json b.json", vec!["b.json", "b.json/a.json"]),
            ("cp -t state a b", vec!["state", "state/a", "state/b"]),
            (
                "mv new.json .checkpoint.json",
                vec![".checkpoint.json", ".checkpoint.json/new.json", "new.json"],
            ),
            ("rm -f .novel.lock/info.json", vec![".novel.lock/info.json"]),
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
            ("echo $(rm -f secret) ok", vec!["secret"]),
            ("sudo -u me tee file", vec!["file"]),
            ("env A=1 B=2 cp x y", vec!["y", "y/x"]),
            (
                "ln -sf ../x .checkpoint.json",
                vec![".checkpoint.json", ".checkpoint.json/x"],
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

    #[test]
    fn globs_are_marked_and_unparsable_lines_are_none() {
        let w = writes("rm state/*.json").unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].glob);
        assert!(!writes("rm 'state/*.json'").unwrap()[0].glob);
        assert!(writes("echo 'unterminated").is_none());
    }
}
