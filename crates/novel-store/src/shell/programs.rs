//! What one program run with fixed arguments does to files, as its arguments show: the files it
//! writes or removes (redirections are the walker's), the directory it moves to (`cd`,
//! `pushd`, `popd`), and the shell scripts it runs (`bash -c`, `eval`, a script on stdin).
//!
//! Layer: a table of programs over argument lists; no file system. An argument the line does
//! not fix is `None`. A program this table does not know writes nothing that can be seen.

use super::words::Field;

/// How far a write reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The path itself (a directory there is not affected).
    File,
    /// The path and everything below it (`rm -r`, a moved directory, an extraction target).
    Tree,
    /// A destination: when it is an existing directory, what lands inside is listed apart;
    /// otherwise the path itself, replaced whole.
    Into,
}

/// What a program does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Write {
        path: Field,
        how: String,
        reach: Reach,
    },
    /// Changes the shell's directory (only a shell builtin run in this shell does).
    Cd(Cd),
    /// Runs a shell script: in a child shell (`bash -c`), or in this one (`eval`).
    Script { text: String, same_shell: bool },
    /// Runs a script this line does not show (a variable's text, a file): nothing to see.
    Unseen,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cd {
    /// `cd DIR` (`None`: a directory the line does not fix).
    To(Option<Field>),
    Home,
    /// `cd -`
    Back,
    /// `pushd DIR`
    Push(Option<Field>),
    /// `pushd` alone: swaps the top two.
    Swap,
    /// `popd`
    Pop,
    /// `popd -n`, `pushd -n DIR`: the stack changes, not the directory.
    StackOnly,
    /// `pushd +N`, `popd +N`: somewhere the line does not show.
    Unknown,
}

/// A program's arguments (its name first); `None` for a word the line does not fix.
pub type Args = [Option<Field>];

/// What running `args` does; `stdin` is a script fed to it on standard input, when the line
/// shows one (a here-document, a here-string, `echo … |`).
pub fn effects(args: &Args, stdin: Option<&str>) -> Vec<Effect> {
    let mut out = Vec::new();
    run(args, stdin, &mut out);
    out
}

fn name_of(args: &Args) -> Option<String> {
    let first = args.first()?.as_ref()?;
    Some(
        first
            .text
            .rsplit('/')
            .next()
            .unwrap_or(&first.text)
            .to_string(),
    )
}

fn run(args: &Args, stdin: Option<&str>, out: &mut Vec<Effect>) {
    let Some(program) = name_of(args) else {
        return;
    };
    let rest = &args[1..];
    if runner(&program, rest, stdin, out) || directory(&program, rest, out) {
        return;
    }
    match program.as_str() {
        // The binary's own commands: their outputs go through its own checked path.
        "novel" => {}
        "bash" | "sh" | "dash" | "zsh" | "ksh" | "mksh" | "busybox" => shell(rest, stdin, out),
        "eval" => {
            let parts: Option<Vec<&str>> = rest
                .iter()
                .map(|a| a.as_ref().map(|a| a.text.as_str()))
                .collect();
            out.push(match parts {
                Some(parts) => Effect::Script {
                    text: parts.join(" "),
                    same_shell: true,
                },
                None => Effect::Unseen,
            });
        }
        "tee" => write_all(rest, &[], "tee", Reach::File, out),
        "rm" | "shred" | "unlink" | "rmdir" | "trash" | "trash-put" | "srm" => {
            write_all(rest, &[], &program, Reach::Tree, out)
        }
        "mkdir" | "mkfifo" | "mknod" => {
            write_all(rest, &["-m", "--mode"], &program, Reach::File, out)
        }
        "touch" => write_all(
            rest,
            &["-d", "-t", "-r", "--date", "--reference"],
            "touch",
            Reach::File,
            out,
        ),
        "truncate" => write_all(
            rest,
            &["-s", "--size", "-r", "--reference"],
            "truncate",
            Reach::File,
            out,
        ),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => modes(rest, &program, out),
        "cp" | "install" | "mv" | "ln" => destination(rest, &program, out),
        "rsync" => rsync(rest, out),
        "dd" => dd(rest, out),
        "sed" | "gsed" | "perl" => in_place(rest, &program, out),
        "find" => find(rest, out),
        "git" => git(rest, out),
        "tar" | "bsdtar" | "unzip" | "7z" => archive(&program, rest, out),
        "sort" => valued_output(rest, &["-o", "--output"], "sort -o", out),
        "curl" => valued_output(rest, &["-o", "--output"], "curl -o", out),
        "wget" => valued_output(rest, &["-O", "--output-document"], "wget -O", out),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" => compressor(rest, &program, out),
        _ => {}
    }
}

/// `dd of=FILE`.
fn dd(args: &Args, out: &mut Vec<Effect>) {
    for a in args.iter().flatten() {
        if let Some(path) = a.text.strip_prefix("of=") {
            let file = Field {
                text: path.into(),
                glob: a.glob,
            };
            push(out, &file, "dd of=", Reach::File);
        }
    }
}

/// `gzip FILE` and its kin replace FILE (unless told to keep it, write to stdout, list or test).
fn compressor(args: &Args, program: &str, out: &mut Vec<Effect>) {
    let keeps = args.iter().flatten().any(|a| {
        let t = a.text.as_str();
        t.starts_with('-') && !t.starts_with("--") && t.contains(['c', 'k', 'l', 't'])
            || matches!(
                t,
                "--stdout" | "--keep" | "--to-stdout" | "--list" | "--test"
            )
    });
    if !keeps {
        write_all(args, &["-S", "--suffix"], program, Reach::File, out);
    }
}

/// Programs that run another program (`sudo CMD …`): that program's effects. `true` when
/// `program` is one.
fn runner(program: &str, rest: &Args, stdin: Option<&str>, out: &mut Vec<Effect>) -> bool {
    let inner: &Args = match program {
        "sudo" | "doas" => skip_options(
            rest,
            &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
        ),
        "nice" | "ionice" => skip_options(rest, &["-n", "-c", "-p"]),
        "nohup" | "command" | "builtin" | "exec" | "time" | "setsid" | "unbuffer" => {
            skip_options(rest, &[])
        }
        "stdbuf" => skip_options(rest, &["-i", "-o", "-e"]),
        "env" => {
            let inner = skip_options(rest, &["-u", "-C", "--unset", "--chdir"]);
            let at = inner
                .iter()
                .position(|a| a.as_ref().is_none_or(|a| !a.text.contains('=')))
                .unwrap_or(inner.len());
            &inner[at..]
        }
        "timeout" => skip_options(rest, &["-s", "-k", "--signal", "--kill-after"])
            .get(1..)
            .unwrap_or_default(),
        "flock" => {
            let inner = skip_options(rest, &["-w", "-E", "--timeout", "--conflict-exit-code"]);
            if let Some(at) = inner
                .iter()
                .position(|a| a.as_ref().is_some_and(|a| a.text == "-c"))
            {
                push_script(inner.get(at + 1), false, out);
                return true;
            }
            inner.get(1..).unwrap_or_default()
        }
        "xargs" => skip_options(
            rest,
            &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
            ],
        ),
        _ => return false,
    };
    run(inner, stdin, out);
    true
}

/// `cd`, `pushd`, `popd`. `true` when `program` is one of them.
fn directory(program: &str, rest: &Args, out: &mut Vec<Effect>) -> bool {
    let mut ops = Vec::new();
    let mut flags = Vec::new();
    let mut dashes = false;
    for a in rest {
        match a {
            Some(a) if !dashes && a.text == "--" => dashes = true,
            Some(a)
                if !dashes && a.text.len() > 1 && a.text.starts_with('-') && program != "popd" =>
            {
                flags.push(a.text.clone())
            }
            Some(a) if !dashes && a.text == "-n" => flags.push(a.text.clone()),
            other => ops.push(other.clone()),
        }
    }
    let stack_only = flags.iter().any(|f| f == "-n");
    let cd = match (program, ops.as_slice()) {
        ("cd", []) => Cd::Home,
        ("cd", [Some(d)]) if d.text == "-" && !dashes => Cd::Back,
        ("cd", [d]) => Cd::To(d.clone()),
        // `cd a b` fails: nothing moves.
        ("cd", _) => return true,
        ("pushd", _) if stack_only => Cd::StackOnly,
        ("pushd", []) => Cd::Swap,
        ("pushd", [Some(d)]) if d.text.starts_with(['+', '-']) => Cd::Unknown,
        ("pushd", [d]) => Cd::Push(d.clone()),
        ("popd", _) if stack_only => Cd::StackOnly,
        ("popd", []) => Cd::Pop,
        ("popd", _) | ("pushd", _) => Cd::Unknown,
        _ => return false,
    };
    out.push(Effect::Cd(cd));
    true
}

/// `bash [OPTIONS] -c SCRIPT`, `bash` reading a script on stdin; `bash FILE` runs a file
/// this line does not show.
fn shell(rest: &Args, stdin: Option<&str>, out: &mut Vec<Effect>) {
    let mut command = false;
    let mut k = 0;
    while let Some(Some(a)) = rest.get(k) {
        let t = a.text.as_str();
        if t == "--" {
            k += 1;
            break;
        }
        if !(t.starts_with('-') || t.starts_with('+')) || t.len() < 2 {
            break;
        }
        if !t.starts_with("--") && t[1..].contains('c') {
            command = true;
        }
        k += if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            2
        } else {
            1
        };
    }
    if command {
        push_script(rest.get(k), false, out);
    } else if rest.get(k).is_some() {
        out.push(Effect::Unseen);
    } else if let Some(script) = stdin {
        out.push(Effect::Script {
            text: script.to_string(),
            same_shell: false,
        });
    }
}

fn push_script(arg: Option<&Option<Field>>, same_shell: bool, out: &mut Vec<Effect>) {
    match arg {
        Some(Some(s)) => out.push(Effect::Script {
            text: s.text.clone(),
            same_shell,
        }),
        _ => out.push(Effect::Unseen),
    }
}

fn push(out: &mut Vec<Effect>, path: &Field, how: &str, reach: Reach) {
    out.push(Effect::Write {
        path: path.clone(),
        how: how.to_string(),
        reach,
    });
}

/// The arguments after a runner's own options (`nohup CMD …`: CMD …); options in `valued`
/// take the next word as their value (`sudo -u me CMD`).
fn skip_options<'a>(args: &'a Args, valued: &[&str]) -> &'a Args {
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

/// The operands of a command: what is not an option (nor the value of one in `valued`), and
/// everything after `--`.
fn operands<'a>(args: &'a Args, valued: &[&str]) -> Vec<&'a Field> {
    let mut out = Vec::new();
    let mut dashes = false;
    let mut skip = false;
    for a in args.iter().flatten() {
        if skip {
            skip = false;
        } else if !dashes && a.text == "--" {
            dashes = true;
        } else if dashes || !a.text.starts_with('-') || a.text == "-" {
            out.push(a);
        } else {
            skip = valued.contains(&a.text.as_str());
        }
    }
    out
}

fn write_all(args: &Args, valued: &[&str], how: &str, reach: Reach, out: &mut Vec<Effect>) {
    for a in operands(args, valued) {
        push(out, a, how, reach);
    }
}

/// `chmod MODE FILE…`, `chown OWNER FILE…` (`--reference=F` instead of the first operand);
/// `-R` reaches every file below.
fn modes(args: &Args, program: &str, out: &mut Vec<Effect>) {
    let recursive = args.iter().flatten().any(|a| {
        a.text == "--recursive"
            || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('R'))
    });
    let by_reference = args
        .iter()
        .flatten()
        .any(|a| a.text.starts_with("--reference"));
    let ops = operands(args, &[]);
    let files = if by_reference {
        &ops[..]
    } else {
        ops.get(1..).unwrap_or_default()
    };
    let reach = if recursive { Reach::Tree } else { Reach::File };
    for f in files {
        push(out, f, program, reach);
    }
}

/// Options of `cp` / `mv` / `ln` / `install` that take the next word as their value.
const DEST_VALUED: [&str; 6] = ["-S", "-m", "-o", "-g", "--suffix", "--mode"];

/// `cp`/`mv`/`ln`/`install`: the destination (`-t DIR` or the last operand) and each source's
/// name inside it; `mv` also removes its sources. `-T` makes the destination the target itself.
fn destination(args: &Args, program: &str, out: &mut Vec<Effect>) {
    let mut target_dir: Option<Field> = None;
    let mut no_target_dir = false;
    let mut recursive = program == "mv";
    let mut ops: Vec<&Field> = Vec::new();
    let mut dashes = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(a) = a else { continue };
        let t = a.text.as_str();
        if !dashes && t == "--" {
            dashes = true;
        } else if !dashes && (t == "-t" || t == "--target-directory") {
            target_dir = it.next().and_then(Clone::clone);
        } else if let Some(dir) = t.strip_prefix("--target-directory=").filter(|_| !dashes) {
            target_dir = Some(Field {
                text: dir.into(),
                glob: a.glob,
            });
        } else if !dashes && t.starts_with('-') && t.len() > 1 {
            if DEST_VALUED.contains(&t) {
                it.next();
            }
            let short = !t.starts_with("--");
            no_target_dir |= t == "--no-target-directory" || short && t.contains('T');
            recursive |=
                matches!(t, "--recursive" | "--archive") || short && t.contains(['r', 'R', 'a']);
        } else {
            ops.push(a);
        }
    }
    let (sources, dest) = match target_dir {
        Some(d) => (ops, d),
        None => match ops.split_last() {
            Some((last, rest)) if !rest.is_empty() => (rest.to_vec(), (*last).clone()),
            // `ln -s TARGET` alone links into the working directory.
            Some((only, _)) if program == "ln" => (vec![*only], Field::new(".")),
            _ => return,
        },
    };
    let how = format!("{program} 的目标");
    let inside = if recursive { Reach::Tree } else { Reach::File };
    push(
        out,
        &dest,
        &how,
        if no_target_dir {
            Reach::Tree
        } else {
            Reach::Into
        },
    );
    if !no_target_dir {
        for s in &sources {
            if let Some(name) = s
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty())
            {
                let path = Field {
                    text: format!("{}/{name}", dest.text.trim_end_matches('/')),
                    glob: dest.glob || s.glob,
                };
                push(out, &path, &how, inside);
            }
        }
    }
    if program == "mv" {
        for s in sources {
            push(out, s, "mv 移走的源", Reach::Tree);
        }
    }
}

/// `rsync SRC… DEST`: what lands in DEST (all of it with `--delete`, or a source ending in
/// `/` whose contents merge into it).
fn rsync(args: &Args, out: &mut Vec<Effect>) {
    let valued = [
        "-e",
        "--rsh",
        "-f",
        "--filter",
        "--exclude",
        "--include",
        "--files-from",
        "--log-file",
        "-T",
        "--temp-dir",
        "--partial-dir",
        "--backup-dir",
        "--chmod",
        "--out-format",
    ];
    let ops = operands(args, &valued);
    let Some((dest, sources)) = ops.split_last() else {
        return;
    };
    if sources.is_empty() || dest.text.contains(':') {
        return;
    }
    let delete = args
        .iter()
        .flatten()
        .any(|a| a.text.starts_with("--delete") || a.text == "--remove-source-files");
    if delete || sources.iter().any(|s| s.text.ends_with('/')) {
        push(out, dest, "rsync 的目标", Reach::Tree);
    }
    for s in sources {
        if let Some(name) = s.text.rsplit('/').next().filter(|n| !n.is_empty()) {
            let path = Field {
                text: format!("{}/{name}", dest.text.trim_end_matches('/')),
                glob: dest.glob || s.glob,
            };
            push(out, &path, "rsync 的目标", Reach::Tree);
        }
    }
    push(out, dest, "rsync 的目标", Reach::Into);
}

/// `sed -i` / `perl -i`: the files after the script (which is the first operand unless
/// `-e`/`-f` gave it).
fn in_place(args: &Args, program: &str, out: &mut Vec<Effect>) {
    let mut in_place = false;
    let mut script_given = false;
    let mut files: Vec<&Field> = Vec::new();
    let mut it = args.iter();
    let mut dashes = false;
    while let Some(a) = it.next() {
        let Some(a) = a else { continue };
        let t = a.text.as_str();
        if !dashes && t == "--" {
            dashes = true;
        } else if !dashes && t.starts_with("--") {
            in_place |= t.starts_with("--in-place");
            if matches!(t, "--expression" | "--file") {
                script_given = true;
                it.next();
            }
            script_given |= t.starts_with("--expression=") || t.starts_with("--file=");
        } else if !dashes && t.starts_with('-') && t.len() > 1 {
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
        push(out, f, &how, Reach::File);
    }
}

/// `find START… EXPR`: with `-delete`, or `-exec`/`-execdir`/`-ok` of a program that writes
/// the files it is given (`{}`), everything below each start; `-fprint FILE` and its kin
/// write FILE.
fn find(args: &Args, out: &mut Vec<Effect>) {
    let is_expr = |a: &Option<Field>| {
        a.as_ref().is_none_or(|a| {
            a.text.starts_with('-') || matches!(a.text.as_str(), "(" | ")" | "!" | ",")
        })
    };
    let starts_at = args.iter().position(is_expr).unwrap_or(args.len());
    let mut starts: Vec<Field> = args[..starts_at].iter().flatten().cloned().collect();
    if starts.is_empty() {
        starts.push(Field::new("."));
    }
    let expr = &args[starts_at..];
    let mut writes_below = None;
    let mut k = 0;
    while k < expr.len() {
        let t = expr[k].as_ref().map_or("", |a| a.text.as_str());
        match t {
            "-delete" => writes_below = Some("find -delete".to_string()),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = expr[k + 1..]
                    .iter()
                    .position(|a| a.as_ref().is_some_and(|a| a.text == ";" || a.text == "+"))
                    .map_or(expr.len(), |e| k + 1 + e);
                let inner = &expr[k + 1..end];
                let hits_found = effects(inner, None).iter().any(|e| match e {
                    Effect::Write { path, .. } => path.text.starts_with("{}"),
                    Effect::Script { text, .. } => {
                        text.contains("{}") || text.contains("$1") || text.contains("$@")
                    }
                    _ => false,
                });
                if hits_found {
                    writes_below = Some(format!("find {t} {}", name_of(inner).unwrap_or_default()));
                }
                for e in effects(inner, None) {
                    if let Effect::Write { path, .. } = &e
                        && path.text.contains("{}")
                    {
                        continue;
                    }
                    out.push(e);
                }
                k = end;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(Some(file)) = expr.get(k + 1) {
                    push(out, file, &format!("find {t}"), Reach::File);
                }
                k += 1;
            }
            _ => {}
        }
        k += 1;
    }
    if let Some(how) = writes_below {
        for s in &starts {
            push(out, s, &how, Reach::Tree);
        }
    }
}

/// `git` commands that rewrite the work tree: `checkout`/`restore` (the paths given, or the
/// whole tree), `rm`, `mv`, `clean`, `reset --hard`, `stash`, `switch`. `-C DIR` is followed.
fn git(args: &Args, out: &mut Vec<Effect>) {
    let mut k = 0;
    let mut dir: Option<Field> = None;
    while let Some(Some(a)) = args.get(k) {
        match a.text.as_str() {
            "-C" => {
                dir = args.get(k + 1).cloned().flatten();
                k += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" => k += 2,
            t if t.starts_with('-') => k += 1,
            _ => break,
        }
    }
    let Some(Some(sub)) = args.get(k) else { return };
    let rest = &args[k + 1..];
    let at = |f: &Field| match &dir {
        Some(d) if !f.text.starts_with('/') => Field {
            text: format!("{}/{}", d.text.trim_end_matches('/'), f.text),
            glob: d.glob || f.glob,
        },
        _ => f.clone(),
    };
    let ops = operands(
        rest,
        &["-b", "-B", "-m", "--source", "-s", "-e", "--exclude"],
    );
    let flag = |f: &str| rest.iter().flatten().any(|a| a.text == f);
    let how = format!("git {}", sub.text);
    let whole = || vec![Field::new(".")];
    let targets: Vec<Field> = match sub.text.as_str() {
        "checkout" | "restore" => {
            let dashes = rest.iter().flatten().position(|a| a.text == "--");
            match dashes {
                Some(d) => rest.iter().flatten().skip(d + 1).cloned().collect(),
                None if sub.text == "restore" && !ops.is_empty() => {
                    ops.into_iter().cloned().collect()
                }
                None => whole(),
            }
        }
        "rm" | "mv" => ops.into_iter().cloned().collect(),
        "clean" if !flag("-n") && !flag("--dry-run") => {
            let paths: Vec<Field> = ops.into_iter().cloned().collect();
            if paths.is_empty() { whole() } else { paths }
        }
        "reset" if flag("--hard") || flag("--merge") || flag("--keep") => whole(),
        "stash" | "switch" => whole(),
        _ => Vec::new(),
    };
    for t in targets {
        push(out, &at(&t), &how, Reach::Tree);
    }
}

/// `tar -x` / `unzip` / `7z x`: extraction writes whatever the archive holds into its
/// directory (`-C DIR`, `-d DIR`, `-oDIR`, else the working directory); `tar -c -f FILE`
/// writes the archive.
fn archive(program: &str, args: &Args, out: &mut Vec<Effect>) {
    let texts: Vec<&str> = args.iter().flatten().map(|a| a.text.as_str()).collect();
    let value_after = |flags: &[&str]| {
        texts
            .iter()
            .position(|t| flags.contains(t))
            .and_then(|i| texts.get(i + 1))
            .map(|t| Field::new(t))
    };
    let glued = |prefix: &str| {
        texts
            .iter()
            .find_map(|t| t.strip_prefix(prefix))
            .map(Field::new)
    };
    let (extract, dir) = match program {
        "unzip" => {
            let listing = texts
                .iter()
                .any(|t| t.starts_with('-') && t.contains(['l', 't', 'v', 'Z', 'p']));
            (!listing, value_after(&["-d"]))
        }
        "7z" => (
            matches!(texts.first(), Some(&("x" | "e"))),
            glued("-o").filter(|d| !d.text.is_empty()),
        ),
        _ => {
            let first_bundle = texts
                .first()
                .is_some_and(|t| !t.starts_with('-') && t.contains('x'));
            let extract = first_bundle
                || texts.iter().any(|t| {
                    matches!(*t, "--extract" | "--get")
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('x'))
                });
            let create = texts
                .first()
                .is_some_and(|t| !t.starts_with('-') && t.contains(['c', 'r', 'u']))
                || texts.iter().any(|t| {
                    t.starts_with('-') && !t.starts_with("--") && t.contains(['c', 'r', 'u'])
                });
            if create
                && !extract
                && let Some(file) = value_after(&["-f", "--file"]).or_else(|| glued("--file="))
            {
                push(out, &file, "tar 打包的目标", Reach::File);
            }
            (
                extract,
                value_after(&["-C", "--directory"]).or_else(|| glued("--directory=")),
            )
        }
    };
    if extract {
        push(
            out,
            &dir.unwrap_or_else(|| Field::new(".")),
            &format!("{program} 解包"),
            Reach::Tree,
        );
    }
}

/// `sort -o FILE`, `curl -o FILE`, `wget -O FILE` (and `--output=FILE`).
fn valued_output(args: &Args, flags: &[&str], how: &str, out: &mut Vec<Effect>) {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(a) = a else { continue };
        if flags.contains(&a.text.as_str()) {
            if let Some(Some(file)) = it.next() {
                push(out, file, how, Reach::File);
            }
        } else if let Some(file) = flags
            .iter()
            .filter(|f| f.starts_with("--"))
            .find_map(|f| a.text.strip_prefix(&format!("{f}=")))
        {
            push(
                out,
                &Field {
                    text: file.into(),
                    glob: a.glob,
                },
                how,
                Reach::File,
            );
        }
    }
}
