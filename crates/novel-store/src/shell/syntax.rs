//! A bash command line as a syntax tree, as far as the Bash guard needs it (`crate::shell`):
//! lists, and-or chains, pipelines, subshells, groups, the compound commands (`if`, `while`,
//! `until`, `for`, `select`, `case`, `[[ … ]]`, `(( … ))`), function definitions, simple
//! commands with their assignments, words and redirections, and inside words every quoting and
//! expansion bash knows — `'…'`, `"…"`, `$'…'`, `$"…"`, `$x`, `${…}` (any operator: `${x,,}`,
//! `${a[@]}`, `${x:-…}`), `$(…)`, `` `…` ``, `$((…))`, `<(…)`, `>(…)`, extended globs
//! (`@(…)`), array assignments (`a=(…)`) — and here-documents (`<<`, `<<-`, `<<<`).
//!
//! Layer: pure syntax, no file system and no environment. The tree keeps what a word's text is
//! when the line fixes it (quoted or not, for globbing, brace and tilde expansion) and, where it
//! does not (an expansion), the commands that expansion runs. Anything the grammar does not
//! accept is a [`SyntaxError`]: the guard then fails closed on the line's words.

/// What the parser does not accept (an unterminated quote, a missing `fi`, a stray `)`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Character offset where parsing stopped.
    pub at: usize,
    pub what: &'static str,
}

/// Commands separated by `;`, `&` or newlines.
pub type List = Vec<AndOr>;

/// Pipelines joined by `&&` / `||`, run in the background when `background`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOr {
    pub pipelines: Vec<Pipeline>,
    pub background: bool,
}

/// Commands joined by `|` or `|&` (each side a subshell when there are several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<Command>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Simple(Simple),
    /// `( … )`: runs in a subshell.
    Subshell(List, Vec<Redirect>),
    /// `{ …; }`: runs in this shell.
    Group(List, Vec<Redirect>),
    /// `if`, `while`, `until`, `for`, `select`, `case`, `[[ … ]]`, `(( … ))`: the words it
    /// expands and the lists it may run (each may run or not, in order).
    Compound {
        words: Vec<Word>,
        bodies: Vec<List>,
        redirects: Vec<Redirect>,
    },
    /// `name() body` / `function name body`.
    Function(Box<Command>),
}

/// `A=1 prog args… >file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupRead,
    /// `>&`
    DupWrite,
    /// `&>`
    WriteBoth,
    /// `&>>`
    AppendBoth,
    /// `<<` / `<<-`: the body is [`Script::docs`]`[doc]`.
    HereDoc { doc: usize },
    /// `<<<`
    HereString,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub op: RedirectOp,
    pub target: Word,
}

/// One word as written: its pieces in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text the line fixes; unquoted text is subject to globbing, brace and tilde expansion.
    Text { text: String, quoted: bool },
    /// An expansion whose text the line does not fix (`$x`, `${…}`, `$(…)`, `` `…` ``,
    /// `$((…))`, `<(…)`, an array assignment), with the commands it runs.
    Expansion { runs: Vec<List> },
}

/// A parsed command line: its list and the bodies of its here-documents.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub list: List,
    /// Here-document bodies as written (a quoted delimiter's body is taken literally).
    pub docs: Vec<String>,
    /// Commands that run inside unquoted here-document bodies (`$(…)` there).
    pub doc_runs: Vec<List>,
}

/// Parses a bash command line.
pub fn parse(src: &str) -> Result<Script, SyntaxError> {
    parse_nested(src, 0, 0)
}

/// How deep constructs nest before the line is refused as unparsable (a guard must not
/// overflow its stack on `((((((…`).
const MAX_DEPTH: usize = 100;

/// Parses `src` at nesting `depth`; its here-documents are numbered from `doc_base` (they
/// join the outer script's).
fn parse_nested(src: &str, depth: usize, doc_base: usize) -> Result<Script, SyntaxError> {
    let mut p = Parser::new(src, depth, doc_base);
    let list = p.list(&[])?;
    p.blanks();
    if p.i < p.s.len() {
        return Err(p.error("unexpected token"));
    }
    if !p.pending.is_empty() {
        // A here-document on the last line with no newline after it: an empty body.
        p.read_docs()?;
    }
    p.script.list = list;
    Ok(p.script)
}

/// Reserved words, recognised only where a command starts.
const RESERVED: [&str; 21] = [
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "{", "}", "[[", "!", "time", "coproc",
];

/// What ends an expansion's inside.
#[derive(Clone, Copy)]
enum Closer {
    /// `${…}`
    Brace,
    /// `((…))`, `$((…))`
    Parens,
}

/// A here-document whose body starts after the next newline.
struct PendingDoc {
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
    doc: usize,
}

struct Parser {
    s: Vec<char>,
    i: usize,
    depth: usize,
    pending: Vec<PendingDoc>,
    script: Script,
    /// The number of this parser's first here-document in the whole line.
    doc_base: usize,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

/// Characters that end an unquoted word.
fn is_meta(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')')
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Parser {
    fn new(src: &str, depth: usize, doc_base: usize) -> Parser {
        Parser {
            s: src.chars().collect(),
            i: 0,
            depth,
            pending: Vec::new(),
            script: Script::default(),
            doc_base,
        }
    }

    fn error(&self, what: &'static str) -> SyntaxError {
        SyntaxError { at: self.i, what }
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn starts(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(k, c)| self.peek_at(k) == Some(c))
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deep"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips blanks, line continuations and a comment (to the end of its line).
    fn blanks(&mut self) {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) => self.i += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.i += 2,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// Consumes one newline and the here-document bodies that follow it.
    fn newline(&mut self) -> Result<(), SyntaxError> {
        self.i += 1;
        self.read_docs()
    }

    /// Skips blanks and newlines (where the grammar allows a line break).
    fn linebreaks(&mut self) -> Result<(), SyntaxError> {
        loop {
            self.blanks();
            if self.peek() == Some('\n') {
                self.newline()?;
            } else {
                return Ok(());
            }
        }
    }

    /// The reserved word at the cursor, if a whole unquoted word there is one.
    fn reserved(&self) -> Option<&'static str> {
        RESERVED.into_iter().find(|w| {
            self.starts(w)
                && self
                    .peek_at(w.chars().count())
                    .is_none_or(|c| is_meta(c) && !(*w == "{" && c == '('))
        })
    }

    fn expect_word(&mut self, word: &'static str) -> Result<(), SyntaxError> {
        self.linebreaks()?;
        if self.reserved() == Some(word) {
            self.i += word.chars().count();
            Ok(())
        } else {
            Err(self.error("missing reserved word"))
        }
    }

    /// Whether the cursor is at a list terminator named in `stops` (a reserved word, `)`, or
    /// a `case` arm's `;;` / `;&` / `;;&`).
    fn at_stop(&self, stops: &[&str]) -> bool {
        match self.peek() {
            None => true,
            Some(')') => stops.contains(&")"),
            Some(';') => stops.contains(&";;") && matches!(self.peek_at(1), Some(';') | Some('&')),
            _ => self.reserved().is_some_and(|w| stops.contains(&w)),
        }
    }

    /// Commands up to a terminator in `stops` (or the end).
    fn list(&mut self, stops: &[&str]) -> Result<List, SyntaxError> {
        self.enter()?;
        let mut out = Vec::new();
        loop {
            self.linebreaks()?;
            if self.at_stop(stops) {
                break;
            }
            let mut and_or = self.and_or()?;
            self.blanks();
            match self.peek() {
                Some(';') if !matches!(self.peek_at(1), Some(';') | Some('&')) => self.i += 1,
                Some('&') if !matches!(self.peek_at(1), Some('&') | Some('>')) => {
                    self.i += 1;
                    and_or.background = true;
                }
                Some('\n') => self.newline()?,
                _ if self.at_stop(stops) => {
                    out.push(and_or);
                    break;
                }
                _ => return Err(self.error("unexpected token after a command")),
            }
            out.push(and_or);
        }
        self.leave();
        Ok(out)
    }

    fn and_or(&mut self) -> Result<AndOr, SyntaxError> {
        let mut pipelines = vec![self.pipeline()?];
        loop {
            self.blanks();
            if self.starts("&&") || self.starts("||") {
                self.i += 2;
                self.linebreaks()?;
                pipelines.push(self.pipeline()?);
            } else {
                return Ok(AndOr {
                    pipelines,
                    background: false,
                });
            }
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline, SyntaxError> {
        loop {
            self.blanks();
            match self.reserved() {
                Some("!") => self.i += 1,
                Some("time") => {
                    self.i += 4;
                    self.blanks();
                    if self.starts("-p") && self.peek_at(2).is_none_or(is_meta) {
                        self.i += 2;
                    }
                }
                _ => break,
            }
        }
        let mut commands = vec![self.command()?];
        loop {
            self.blanks();
            if self.peek() == Some('|') && self.peek_at(1) != Some('|') {
                self.i += if self.peek_at(1) == Some('&') { 2 } else { 1 };
                self.linebreaks()?;
                commands.push(self.command()?);
            } else {
                return Ok(Pipeline { commands });
            }
        }
    }

    fn command(&mut self) -> Result<Command, SyntaxError> {
        self.blanks();
        if self.peek() == Some('(') {
            if self.peek_at(1) == Some('(') {
                self.i += 2;
                let runs = self.arithmetic()?;
                return self.compound(vec![expansion_word(runs)], Vec::new());
            }
            self.i += 1;
            let body = self.list(&[")"])?;
            self.close_paren()?;
            let redirects = self.redirects()?;
            return Ok(Command::Subshell(body, redirects));
        }
        match self.reserved() {
            Some("{") => {
                self.i += 1;
                let body = self.list(&["}"])?;
                self.expect_word("}")?;
                let redirects = self.redirects()?;
                Ok(Command::Group(body, redirects))
            }
            Some("if") => self.if_command(),
            Some(w @ ("while" | "until")) => {
                self.i += w.len();
                let guard = self.list(&["do"])?;
                self.expect_word("do")?;
                let body = self.list(&["done"])?;
                self.expect_word("done")?;
                self.compound(Vec::new(), vec![guard, body])
            }
            Some(w @ ("for" | "select")) => {
                self.i += w.len();
                self.for_command()
            }
            Some("case") => self.case_command(),
            Some("[[") => {
                self.i += 2;
                let words = self.condition()?;
                self.compound(words, Vec::new())
            }
            Some("function") => {
                self.i += "function".len();
                self.blanks();
                self.word()?;
                self.blanks();
                if self.starts("()") {
                    self.i += 2;
                }
                self.linebreaks()?;
                Ok(Command::Function(Box::new(self.command()?)))
            }
            Some("coproc") => {
                self.i += "coproc".len();
                self.command()
            }
            Some(_) => Err(self.error("reserved word out of place")),
            None => self.simple(),
        }
    }

    fn close_paren(&mut self) -> Result<(), SyntaxError> {
        self.linebreaks()?;
        if self.peek() == Some(')') {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error("missing )"))
        }
    }

    /// A compound command's trailing redirections.
    fn compound(&mut self, words: Vec<Word>, bodies: Vec<List>) -> Result<Command, SyntaxError> {
        let redirects = self.redirects()?;
        Ok(Command::Compound {
            words,
            bodies,
            redirects,
        })
    }

    fn redirects(&mut self) -> Result<Vec<Redirect>, SyntaxError> {
        let mut out = Vec::new();
        loop {
            self.blanks();
            match self.redirect_op() {
                Some((op, len)) => {
                    self.i += len;
                    out.push(self.redirect(op)?);
                }
                None => return Ok(out),
            }
        }
    }

    fn if_command(&mut self) -> Result<Command, SyntaxError> {
        self.i += 2;
        let mut bodies = Vec::new();
        loop {
            bodies.push(self.list(&["then"])?);
            self.expect_word("then")?;
            bodies.push(self.list(&["elif", "else", "fi"])?);
            self.linebreaks()?;
            match self.reserved() {
                Some("elif") => self.i += 4,
                Some("else") => {
                    self.i += 4;
                    bodies.push(self.list(&["fi"])?);
                    self.expect_word("fi")?;
                    break;
                }
                _ => {
                    self.expect_word("fi")?;
                    break;
                }
            }
        }
        self.compound(Vec::new(), bodies)
    }

    /// After `for` / `select`: `NAME [in WORDS…]` or `((…;…;…))`, then `do … done` (or a
    /// `{ …; }` group, which bash also takes).
    fn for_command(&mut self) -> Result<Command, SyntaxError> {
        self.blanks();
        let mut words = Vec::new();
        if self.starts("((") {
            self.i += 2;
            words.push(expansion_word(self.arithmetic()?));
        } else {
            self.word()?;
            self.linebreaks()?;
            if self.reserved() == Some("in") {
                self.i += 2;
                loop {
                    self.blanks();
                    match self.peek() {
                        None | Some(';' | '\n' | '&') => break,
                        _ => words.push(self.word_moving()?),
                    }
                }
            }
        }
        self.blanks();
        if self.peek() == Some(';') {
            self.i += 1;
        }
        self.linebreaks()?;
        let body = if self.reserved() == Some("{") {
            self.i += 1;
            let body = self.list(&["}"])?;
            self.expect_word("}")?;
            body
        } else {
            self.expect_word("do")?;
            let body = self.list(&["done"])?;
            self.expect_word("done")?;
            body
        };
        self.compound(words, vec![body])
    }

    /// `case WORD in [(]PATTERN[|PATTERN…]) LIST ;; … esac` (arms may also end `;&` or `;;&`).
    fn case_command(&mut self) -> Result<Command, SyntaxError> {
        self.i += 4;
        self.blanks();
        let mut words = vec![self.word()?];
        self.expect_word("in")?;
        let mut bodies = Vec::new();
        loop {
            self.linebreaks()?;
            if self.reserved() == Some("esac") {
                self.i += 4;
                break;
            }
            if self.peek() == Some('(') {
                self.i += 1;
            }
            loop {
                self.blanks();
                words.push(self.word()?);
                self.blanks();
                match self.peek() {
                    Some('|') => self.i += 1,
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(self.error("bad case pattern")),
                }
            }
            bodies.push(self.list(&[";;", "esac"])?);
            self.blanks();
            if self.starts(";;&") {
                self.i += 3;
            } else if self.starts(";;") || self.starts(";&") {
                self.i += 2;
            } else if self.reserved() != Some("esac") {
                return Err(self.error("missing ;;"));
            }
        }
        self.compound(words, bodies)
    }

    /// The inside of `[[ … ]]`: words and the operators between them (`<`, `>`, `(`, `)`,
    /// `&&`, `||`, `!` are the test's own here, never redirections); a `=~` regex may hold
    /// parentheses and `|`.
    fn condition(&mut self) -> Result<Vec<Word>, SyntaxError> {
        let mut words = Vec::new();
        let mut regex_next = false;
        loop {
            self.linebreaks()?;
            if self.starts("]]") && self.peek_at(2).is_none_or(is_meta) {
                self.i += 2;
                return Ok(words);
            }
            match self.peek() {
                None => return Err(self.error("missing ]]")),
                Some('&' | '|') if self.peek_at(1) == self.peek() => self.i += 2,
                Some('<' | '>' | '(' | ')' | '!') => self.i += 1,
                _ if regex_next => {
                    words.push(self.regex_word()?);
                    regex_next = false;
                }
                _ => {
                    let w = self.word_moving()?;
                    regex_next = plain_text(&w).as_deref() == Some("=~");
                    words.push(w);
                }
            }
        }
    }

    /// The regex after `=~`: up to a blank outside parentheses.
    fn regex_word(&mut self) -> Result<Word, SyntaxError> {
        let mut depth = 0usize;
        let mut parts = Vec::new();
        loop {
            match self.peek() {
                None => break,
                Some(c) if is_blank(c) || c == '\n' => {
                    if depth == 0 {
                        break;
                    }
                    self.i += 1;
                }
                Some('(') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(')') if depth > 0 => {
                    depth -= 1;
                    self.i += 1;
                }
                Some(c @ ('|' | '<' | '>' | ')' | ';' | '&')) => {
                    if depth == 0 && c != '|' {
                        break;
                    }
                    self.i += 1;
                }
                Some(_) => {
                    let start = self.i;
                    parts.extend(self.word_piece()?.unwrap_or_default());
                    if self.i == start {
                        self.i += 1;
                    }
                }
            }
        }
        Ok(Word { parts })
    }

    fn simple(&mut self) -> Result<Command, SyntaxError> {
        let mut s = Simple {
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        loop {
            self.blanks();
            if let Some((op, len)) = self.redirect_op() {
                self.i += len;
                s.redirects.push(self.redirect(op)?);
                continue;
            }
            match self.peek() {
                None | Some('\n' | ';' | '&' | '|' | ')') => break,
                Some('(') if s.words.len() == 1 && s.assignments.is_empty() => {
                    // `name() body`
                    self.i += 1;
                    self.blanks();
                    if self.peek() != Some(')') {
                        return Err(self.error("bad function definition"));
                    }
                    self.i += 1;
                    self.linebreaks()?;
                    return Ok(Command::Function(Box::new(self.command()?)));
                }
                Some('(') => return Err(self.error("unexpected (")),
                _ => {}
            }
            let w = self.word_moving()?;
            if s.words.is_empty() && is_assignment(&w) {
                s.assignments.push(w);
            } else {
                s.words.push(w);
            }
        }
        if s.words.is_empty() && s.assignments.is_empty() && s.redirects.is_empty() {
            return Err(self.error("missing command"));
        }
        Ok(Command::Simple(s))
    }

    /// The redirection operator at the cursor (with its file-descriptor prefix `2>` or
    /// `{fd}>`) and its length.
    fn redirect_op(&self) -> Option<(RedirectOp, usize)> {
        let mut k = 0;
        while self.peek_at(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
        }
        if k == 0 && self.peek() == Some('{') {
            let mut j = 1;
            while self
                .peek_at(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                j += 1;
            }
            if j > 1 && self.peek_at(j) == Some('}') {
                k = j + 1;
            }
        }
        let at = |t: &str| {
            t.chars()
                .enumerate()
                .all(|(n, c)| self.peek_at(k + n) == Some(c))
        };
        const OPS: [(&str, RedirectOp); 11] = [
            ("&>>", RedirectOp::AppendBoth),
            ("&>", RedirectOp::WriteBoth),
            ("<<<", RedirectOp::HereString),
            ("<<", RedirectOp::HereDoc { doc: 0 }),
            ("<>", RedirectOp::ReadWrite),
            ("<&", RedirectOp::DupRead),
            (">>", RedirectOp::Append),
            (">|", RedirectOp::Clobber),
            (">&", RedirectOp::DupWrite),
            ("<", RedirectOp::Read),
            (">", RedirectOp::Write),
        ];
        for (text, op) in &OPS {
            if text.starts_with('&') && k > 0 {
                continue;
            }
            if at(text) {
                // `<(…)` / `>(…)` are process substitutions, not redirections.
                let len = k + text.chars().count();
                if matches!(*text, "<" | ">") && self.peek_at(len) == Some('(') {
                    return None;
                }
                return Some((*op, len));
            }
        }
        None
    }

    /// The target of a redirection whose operator was just read.
    fn redirect(&mut self, op: RedirectOp) -> Result<Redirect, SyntaxError> {
        if let RedirectOp::HereDoc { .. } = op {
            let strip_tabs = self.peek() == Some('-');
            if strip_tabs {
                self.i += 1;
            }
            self.blanks();
            let start = self.i;
            let target = self.word()?;
            let raw: String = self.s[start..self.i].iter().collect();
            let delimiter = plain_text(&target)
                .or_else(|| Some(raw.replace(['\'', '"', '\\'], "")))
                .filter(|d| !d.is_empty())
                .ok_or_else(|| self.error("missing here-document delimiter"))?;
            let doc = self.doc_base + self.script.docs.len();
            self.script.docs.push(String::new());
            self.pending.push(PendingDoc {
                delimiter,
                strip_tabs,
                expand: !raw.contains(['\'', '"', '\\']),
                doc,
            });
            return Ok(Redirect {
                op: RedirectOp::HereDoc { doc },
                target,
            });
        }
        self.blanks();
        let target = self.word_moving()?;
        Ok(Redirect { op, target })
    }

    /// Reads the bodies of the pending here-documents (the cursor is at the start of a line).
    fn read_docs(&mut self) -> Result<(), SyntaxError> {
        for d in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.i < self.s.len() {
                let end = (self.i..self.s.len())
                    .find(|&k| self.s[k] == '\n')
                    .unwrap_or(self.s.len());
                let line: String = self.s[self.i..end].iter().collect();
                self.i = (end + 1).min(self.s.len());
                let bare = if d.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if bare == d.delimiter {
                    break;
                }
                body.push_str(bare);
                body.push('\n');
            }
            if d.expand {
                let runs = self.expansions_in(&body)?;
                self.script.doc_runs.extend(runs);
            }
            self.script.docs[d.doc - self.doc_base] = body;
        }
        Ok(())
    }

    /// A word that must not be empty (where the grammar wants one).
    fn word_moving(&mut self) -> Result<Word, SyntaxError> {
        let start = self.i;
        let w = self.word()?;
        if self.i == start {
            return Err(self.error("unexpected token"));
        }
        Ok(w)
    }

    /// One word: pieces up to an unquoted metacharacter.
    fn word(&mut self) -> Result<Word, SyntaxError> {
        let mut parts = Vec::new();
        while let Some(mut piece) = self.word_piece()? {
            parts.append(&mut piece);
        }
        Ok(Word { parts })
    }

    /// The next piece of a word, or `None` at its end.
    fn word_piece(&mut self) -> Result<Option<Vec<Part>>, SyntaxError> {
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let text = |t: String, quoted: bool| Ok(Some(vec![Part::Text { text: t, quoted }]));
        match c {
            '<' | '>' if self.peek_at(1) == Some('(') => {
                self.i += 2;
                let body = self.list(&[")"])?;
                self.close_paren()?;
                Ok(Some(vec![expansion(vec![body])]))
            }
            '(' => self.paren_in_word(),
            c if is_meta(c) => Ok(None),
            '\\' => {
                self.i += 1;
                let Some(next) = self.peek() else {
                    return text("\\".into(), true);
                };
                self.i += 1;
                if next == '\n' {
                    Ok(Some(Vec::new()))
                } else {
                    text(next.to_string(), true)
                }
            }
            '\'' => {
                self.i += 1;
                let body = self.until('\'')?;
                text(body, true)
            }
            '"' => {
                self.i += 1;
                self.double_quoted().map(Some)
            }
            '$' => self.dollar(false).map(Some),
            '`' => {
                self.i += 1;
                let runs = self.backquoted()?;
                Ok(Some(vec![expansion(runs)]))
            }
            _ => {
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| !is_meta(c) && !matches!(c, '\\' | '\'' | '"' | '$' | '`'))
                {
                    self.i += 1;
                }
                text(self.s[start..self.i].iter().collect(), false)
            }
        }
    }

    /// A `(` inside a word: an extended glob `@(…)` (after `@ ! + * ?`) or an array
    /// assignment `name=(…)`; anything else is a syntax error in bash too.
    fn paren_in_word(&mut self) -> Result<Option<Vec<Part>>, SyntaxError> {
        let before: String = self.s[..self.i]
            .iter()
            .rev()
            .take_while(|c| !is_meta(**c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if before.ends_with(['@', '!', '+', '*', '?']) {
            let start = self.i;
            self.skip_balanced('(', ')')?;
            let text: String = self.s[start..self.i].iter().collect();
            return Ok(Some(vec![Part::Text {
                text,
                quoted: false,
            }]));
        }
        if before.ends_with('=') && is_name(before.trim_end_matches('=').trim_end_matches('+')) {
            self.i += 1;
            let mut runs = Vec::new();
            loop {
                self.linebreaks()?;
                match self.peek() {
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    None => return Err(self.error("missing ) of an array")),
                    _ => {
                        let w = self.word()?;
                        if w.parts.is_empty() {
                            return Err(self.error("bad array element"));
                        }
                        runs.extend(runs_of(&w));
                    }
                }
            }
            return Ok(Some(vec![expansion(runs)]));
        }
        Ok(None)
    }

    /// Skips a balanced `open … close` group (quotes respected).
    fn skip_balanced(&mut self, open: char, close: char) -> Result<(), SyntaxError> {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.i += 1,
                '\'' => {
                    self.i += 1;
                    self.until('\'')?;
                    continue;
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        Err(self.error("unbalanced parentheses"))
    }

    /// Text up to `end` (consumed), taken literally.
    fn until(&mut self, end: char) -> Result<String, SyntaxError> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == end {
                let body = self.s[start..self.i].iter().collect();
                self.i += 1;
                return Ok(body);
            }
            self.i += 1;
        }
        Err(self.error("unterminated quote"))
    }

    /// After an opening `"`: up to the closing one.
    fn double_quoted(&mut self) -> Result<Vec<Part>, SyntaxError> {
        let parts = self.quoted_body(Some('"'))?;
        Ok(parts)
    }

    /// The inside of `"…"` (`end` = `"`) or of an unquoted here-document body (`end` = none):
    /// `\` escapes only `$ \` " \ newline`; `$…` and `` `…` `` expand.
    fn quoted_body(&mut self, end: Option<char>) -> Result<Vec<Part>, SyntaxError> {
        let mut parts = Vec::new();
        let mut text = String::new();
        loop {
            let Some(c) = self.peek() else {
                if end.is_some() {
                    return Err(self.error("unterminated double quote"));
                }
                break;
            };
            if Some(c) == end {
                self.i += 1;
                break;
            }
            match c {
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(e @ ('$' | '`' | '"' | '\\')) => text.push(e),
                        Some(e) => {
                            text.push('\\');
                            text.push(e);
                        }
                        None => text.push('\\'),
                    }
                    self.i += 2;
                }
                '$' | '`' => {
                    let more = if c == '$' {
                        self.dollar(true)?
                    } else {
                        self.i += 1;
                        vec![expansion(self.backquoted()?)]
                    };
                    for p in more {
                        match p {
                            Part::Text { text: t, .. } => text.push_str(&t),
                            other => {
                                flush(&mut parts, &mut text);
                                parts.push(other);
                            }
                        }
                    }
                }
                c => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
        flush(&mut parts, &mut text);
        Ok(parts)
    }

    /// After a `` ` ``: the commands up to the closing one (`\`` `\\` `\$` unescaped first).
    fn backquoted(&mut self) -> Result<Vec<List>, SyntaxError> {
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated backquote")),
                Some('`') => {
                    self.i += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.push(self.s[self.i + 1]);
                    self.i += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.i += 1;
                }
            }
        }
        self.nested(&inner)
    }

    /// Parses `src` (a backquoted command) one level deeper.
    fn nested(&mut self, src: &str) -> Result<Vec<List>, SyntaxError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error("nested too deep"));
        }
        let base = self.doc_base + self.script.docs.len();
        let script = parse_nested(src, self.depth + 1, base).map_err(|e| SyntaxError {
            at: self.i,
            what: e.what,
        })?;
        self.script.docs.extend(script.docs);
        let mut runs = vec![script.list];
        runs.extend(script.doc_runs);
        Ok(runs)
    }

    /// The commands run by the substitutions of an unquoted here-document body.
    fn expansions_in(&mut self, body: &str) -> Result<Vec<List>, SyntaxError> {
        let base = self.doc_base + self.script.docs.len();
        let mut p = Parser::new(body, self.depth + 1, base);
        let parts = p.quoted_body(None)?;
        self.script.docs.extend(p.script.docs);
        let mut runs: Vec<List> = parts.iter().flat_map(runs_of_part).collect();
        runs.extend(p.script.doc_runs);
        Ok(runs)
    }

    /// A `$…` at the cursor: a parameter, `${…}`, `$(…)`, `$((…))`, `$'…'`, `$"…"`, or a
    /// plain `$`.
    fn dollar(&mut self, in_quotes: bool) -> Result<Vec<Part>, SyntaxError> {
        self.i += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.i += 2;
                Ok(vec![expansion(self.arithmetic()?)])
            }
            Some('(') => {
                self.i += 1;
                let body = self.list(&[")"])?;
                self.close_paren()?;
                Ok(vec![expansion(vec![body])])
            }
            Some('{') => {
                self.i += 1;
                Ok(vec![expansion(self.braced()?)])
            }
            Some('[') => {
                self.i += 1;
                self.until(']')?;
                Ok(vec![expansion(Vec::new())])
            }
            Some('\'') if !in_quotes => {
                self.i += 1;
                let text = self.ansi_c()?;
                Ok(vec![Part::Text { text, quoted: true }])
            }
            Some('"') if !in_quotes => {
                self.i += 1;
                self.double_quoted()
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
                Ok(vec![expansion(Vec::new())])
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.i += 1;
                Ok(vec![expansion(Vec::new())])
            }
            _ => Ok(vec![Part::Text {
                text: "$".into(),
                quoted: in_quotes,
            }]),
        }
    }

    /// After `${`: up to the matching `}`, with the commands of any `$(…)` / `` `…` `` inside
    /// (`${x:-$(cmd)}` runs `cmd`).
    fn braced(&mut self) -> Result<Vec<List>, SyntaxError> {
        self.expansion_body(Closer::Brace)
    }

    /// After `((` or `$((`: up to the matching `))`, with the commands of any substitution.
    fn arithmetic(&mut self) -> Result<Vec<List>, SyntaxError> {
        self.expansion_body(Closer::Parens)
    }

    /// The inside of `${…}` or `((…))`: quotes skipped, the commands of substitutions kept, up
    /// to the closer (`}`; `))` outside nested parentheses).
    fn expansion_body(&mut self, closer: Closer) -> Result<Vec<List>, SyntaxError> {
        let mut runs = Vec::new();
        let mut depth = 0usize;
        loop {
            match (self.peek(), closer) {
                (None, _) => return Err(self.error("unterminated expansion")),
                (Some('}'), Closer::Brace) => {
                    self.i += 1;
                    return Ok(runs);
                }
                (Some(')'), Closer::Parens) if depth == 0 => {
                    if self.peek_at(1) != Some(')') {
                        return Err(self.error("bad arithmetic"));
                    }
                    self.i += 2;
                    return Ok(runs);
                }
                (Some(')'), Closer::Parens) => {
                    depth -= 1;
                    self.i += 1;
                }
                (Some('('), Closer::Parens) => {
                    depth += 1;
                    self.i += 1;
                }
                (Some('\\'), Closer::Brace) => self.i += 2,
                (Some('\''), _) => {
                    self.i += 1;
                    self.until('\'')?;
                }
                (Some('"'), _) => {
                    self.i += 1;
                    runs.extend(self.double_quoted()?.iter().flat_map(runs_of_part));
                }
                (Some('$'), _) => runs.extend(self.dollar(false)?.iter().flat_map(runs_of_part)),
                (Some('`'), _) => {
                    self.i += 1;
                    runs.extend(self.backquoted()?);
                }
                (Some(_), _) => self.i += 1,
            }
        }
    }

    /// After `$'`: the ANSI-C quoted text, escapes decoded.
    fn ansi_c(&mut self) -> Result<String, SyntaxError> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated $'")),
                Some('\'') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.i += 1;
                    let e = self.peek().ok_or_else(|| self.error("unterminated $'"))?;
                    self.i += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'a' => out.push('\u{7}'),
                        'b' => out.push('\u{8}'),
                        'e' | 'E' => out.push('\u{1b}'),
                        'f' => out.push('\u{c}'),
                        'v' => out.push('\u{b}'),
                        'x' => out.push(self.code_point(16, 2)),
                        'u' => out.push(self.code_point(16, 4)),
                        'U' => out.push(self.code_point(16, 8)),
                        '0'..='7' => {
                            self.i -= 1;
                            out.push(self.code_point(8, 3));
                        }
                        other => out.push(other),
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// Up to `max` digits in `radix` as a character (`\x41`, `\101`, `\u6797`).
    fn code_point(&mut self, radix: u32, max: usize) -> char {
        let mut v = 0u32;
        for _ in 0..max {
            match self.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    self.i += 1;
                }
                None => break,
            }
        }
        char::from_u32(v).unwrap_or('\u{fffd}')
    }
}

fn expansion(runs: Vec<List>) -> Part {
    Part::Expansion { runs }
}

fn expansion_word(runs: Vec<List>) -> Word {
    Word {
        parts: vec![expansion(runs)],
    }
}

fn flush(parts: &mut Vec<Part>, text: &mut String) {
    if !text.is_empty() {
        parts.push(Part::Text {
            text: std::mem::take(text),
            quoted: true,
        });
    }
}

fn runs_of_part(p: &Part) -> Vec<List> {
    match p {
        Part::Expansion { runs } => runs.clone(),
        Part::Text { .. } => Vec::new(),
    }
}

/// The commands a word's expansions run.
pub fn runs_of(w: &Word) -> Vec<List> {
    w.parts.iter().flat_map(runs_of_part).collect()
}

/// The text of a word made only of text (quoted or not), else `None`.
pub fn plain_text(w: &Word) -> Option<String> {
    let mut out = String::new();
    for p in &w.parts {
        match p {
            Part::Text { text, .. } => out.push_str(text),
            Part::Expansion { .. } => return None,
        }
    }
    Some(out)
}

/// `NAME=…` or `NAME+=…` (the name unquoted).
fn is_assignment(w: &Word) -> bool {
    let Some(Part::Text {
        text,
        quoted: false,
    }) = w.parts.first()
    else {
        return false;
    };
    text.split_once('=')
        .is_some_and(|(name, _)| is_name(name.strip_suffix('+').unwrap_or(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(src: &str) -> bool {
        parse(src).is_ok()
    }

    #[test]
    fn bash_constructs_parse() {
        for src in [
            "echo x > state/current-state.json; cat <<< y",
            "ls |& grep x",
            "diff <(sort a) <(sort b)",
            "echo ${x,,} ${a[@]} ${#a[@]} ${x:-$(pwd)} ${x/a/b} ${!p}",
            "case $x in a) echo 1 ;& b) echo 2 ;;& *) echo 3 ;; esac",
            "a=(1 2 \"3 4\"); echo ${a[1]}",
            "if [[ -f x && $y =~ ^(a|b)$ ]]; then echo; elif true; then :; else false; fi",
            "for ((i=0; i<3; i++)); do echo $i; done",
            "for f in *.md; do wc -l \"$f\"; done",
            "while read -r l; do echo \"$l\"; done < file",
            "f() { echo x; }; f",
            "function g { echo y; }",
            "cat <<'EOF' > a.json\n{\"a\": \"$x\"}\nEOF\necho done",
            "cat <<-EOF\n\tline $(date)\n\tEOF\n",
            "echo $'a\\tb' $\"c\" `echo d` $((1 + (2*3)))",
            "{ echo a; echo b; } > out 2>&1",
            "(cd x && ls) | wc -l &",
            "echo a # comment ) ( \"",
            "time -p ls; ! false",
            "shopt -s extglob; ls !(x|y).md @(a|b)",
            "echo a\\\nb",
            "x=1 y=$(date) env",
            "exec {fd}>out; echo >&$fd hi",
            "echo ok &>/dev/null; echo &>> log",
            "echo \"$(cat <<'X'\nfoo\nX\n)\"",
            "[[ a < b ]] && echo yes",
            "case x in (a) ;; esac",
            "if ! grep -q x f; then :; fi",
            "echo ${x//\\//-} $((1<<2)); a=$((x+1))",
            "time (ls)",
            "{ ls; } 2>&1 | tee /tmp/log",
            "while IFS= read -r line; do echo \"$line\"; done < <(find . -name '*.md')",
            "export A=1 B=2; declare -A m=([a]=1); local x",
            "printf '%s\\n' \"${arr[@]}\"; ls **/*.md; echo {a..c} \\$HOME # done",
            "cat <<EOF\nno newline at the end\nEOF",
            "select x in a b; do break; done",
            "coproc cat; echo hi >&${COPROC[1]}",
            "echo $'it\\'s' \"a\\\"b\" 'c'\\''d'",
            "until false; do break; done",
            "f=$(basename \"$(pwd)\"); echo \"${f%.*}\"",
            "ls -la | grep -v '^d' | awk '{print $9}' | sort -r | head -n 3",
            "trap 'rm -f /tmp/x' EXIT; mktemp",
            "a=1; [ \"$a\" = 1 ] && echo one || echo other",
        ] {
            assert!(parses(src), "{src}: {:?}", parse(src).err());
        }
    }

    #[test]
    fn broken_lines_do_not_parse() {
        for src in [
            "echo 'unterminated",
            "echo \"unterminated",
            "echo $(ls",
            "echo `ls",
            "if true; then echo",
            "for x in a; do echo",
            "case x in a) echo",
            "echo )",
            "fi",
            "echo ${x",
            "echo a(b)",
            "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
            "cat <",
            "[[ -f x",
        ] {
            assert!(!parses(src), "{src}");
        }
    }

    /// Measurement (not run by default): how much of a corpus of real bash scripts the grammar
    /// reads — `NOVEL_BASH_CORPUS=DIR cargo test -p novel-store --lib bash_corpus -- --ignored
    /// --nocapture` (every `*.sh` / `*.bash` file below DIR, parsed whole).
    #[test]
    #[ignore]
    #[allow(clippy::print_stderr)] // a measurement: its figures are the output
    fn bash_corpus() {
        let dir = std::env::var("NOVEL_BASH_CORPUS").expect("NOVEL_BASH_CORPUS");
        let mut files = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "sh" || x == "bash") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut failed = Vec::new();
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            if let Err(e) = parse(&text) {
                let line = text.chars().take(e.at).filter(|c| *c == '\n').count() + 1;
                failed.push(format!("{}:{line}: {}", f.display(), e.what));
            }
        }
        eprintln!(
            "{} files, {} parsed, {} not:\n{}",
            files.len(),
            files.len() - failed.len(),
            failed.len(),
            failed.join("\n")
        );
    }

    #[test]
    fn here_documents_are_data_unless_they_expand() {
        let s = parse("cat <<EOF > out\nrm -rf state\n$(touch x)\nEOF\n").unwrap();
        assert_eq!(s.docs, ["rm -rf state\n$(touch x)\n"]);
        assert_eq!(s.doc_runs.len(), 1);
        let s = parse("cat <<'EOF'\n$(touch x)\nEOF").unwrap();
        assert!(s.doc_runs.is_empty());
    }
}
