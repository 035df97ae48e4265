//! The cost meter of the real-client end-to-end tests: every Messages request the client sent
//! the fake API, measured as an author's bill would count it.
//!
//! - **Tokens** are estimated (`markdown_token_estimate`: CJK characters × 0.7 + other
//!   characters ÷ 4), per block of the request: each tool schema, each system block, each
//!   content block of each message.
//! - **Prompt caching** is simulated as the API documents it, from the `cache_control`
//!   breakpoints the client put in each request: a request writes the prefix ending at each of
//!   its breakpoints (at least 1,024 tokens) to the cache of its model; it reads the longest
//!   prefix, ending at a block boundary at most 20 blocks before one of its breakpoints, that an
//!   earlier request wrote and that was used within the last 5 minutes (a read refreshes it).
//!   Read tokens bill at 0.1 × the input price, the rest up to the last breakpoint is written at
//!   1.25 ×, what follows the last breakpoint (a SubagentStart packet in an agent's first
//!   request, say) is plain input at 1 ×.
//! - **Time** is simulated: a request takes 2 s plus its output at 40 estimated tokens a second
//!   (Sonnet; Opus 25), client runs follow each other after [`AUTHOR_GAP`] (the author reading
//!   and answering).
//! - **Prices** are `novel_core::cost`'s (Sonnet $3/$15, Opus $15/$75 per M), by the model the
//!   client asked for.
#![cfg(unix)]

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use serde_json::Value;

use crate::test_e2e::{AGENTS, Run, agent_marker, first_user_text, system_text, text_of};
use crate::test_md_commands::markdown_token_estimate as estimate;

/// PRD §12.1, one chapter: each agent's input and output tokens (31K in, 11K out in all).
const PRD_BUDGET: [(&str, usize, usize); 4] = [
    ("chapter-writer", 12_000, 4_500),
    ("summarizer", 5_000, 1_000),
    ("style-refiner", 6_000, 4_500),
    ("quality-judge", 8_000, 1_000),
];

/// The API's cache lifetime (a read refreshes it), in seconds.
const CACHE_TTL: f64 = 300.0;
/// The shortest prefix the API caches, in tokens.
const CACHE_MIN: usize = 1_024;
/// How many block boundaries before a breakpoint the API looks back for a cached prefix.
const LOOKBACK: usize = 20;
/// Simulated seconds between two client runs of one scenario.
pub(crate) const AUTHOR_GAP: f64 = 60.0;

/// Who sent a request: the agent whose body is its system prompt, the main conversation (any
/// other request that offers tools), or the client itself (side requests without tools, such as
/// a session title).
fn sender(body: &Value) -> String {
    let system = system_text(body);
    if let Some(a) = AGENTS.iter().find(|a| system.contains(&agent_marker(a))) {
        return (*a).to_string();
    }
    if body["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        "main".into()
    } else {
        "client".into()
    }
}

/// A content block as the model reads it: text, a tool call (its name and input JSON), a tool
/// result (its content).
pub(crate) fn block_text(block: &Value) -> String {
    match block {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(block_text).collect::<Vec<_>>().join("\n"),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("tool_use") => format!(
                "{} {}",
                o.get("name").and_then(Value::as_str).unwrap_or_default(),
                o.get("input").cloned().unwrap_or(Value::Null)
            ),
            _ => text_of(block),
        },
        _ => String::new(),
    }
}

/// One block of a request in the order the API reads it (tools, system, messages): what makes
/// it the same block as another (its JSON without `cache_control`), its estimated tokens, and
/// whether the client put a cache breakpoint on it.
struct Block {
    identity: String,
    tokens: usize,
    breakpoint: bool,
}

fn without_cache_control(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("cache_control");
    }
    v
}

fn blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    let mut push = |kind: &str, v: &Value, tokens: usize| {
        out.push(Block {
            identity: format!("{kind}\n{}", without_cache_control(v)),
            tokens,
            breakpoint: v.get("cache_control").is_some_and(|c| !c.is_null()),
        });
    };
    for t in body["tools"].as_array().into_iter().flatten() {
        push("tool", t, estimate(&t.to_string()));
    }
    match &body["system"] {
        Value::String(s) => push("system", &Value::String(s.clone()), estimate(s)),
        Value::Array(items) => {
            for b in items {
                push("system", b, estimate(&block_text(b)));
            }
        }
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("?");
        match &m["content"] {
            Value::Array(items) => {
                for b in items {
                    push(role, b, estimate(&block_text(b)));
                }
            }
            other => push(role, other, estimate(&block_text(other))),
        }
    }
    out
}

/// One request the fake received, measured (estimated tokens): `input` the whole prompt, of it
/// `read` from the prompt cache and `written` to it (the rest is plain input), `output` the
/// blocks the fake replied with.
pub(crate) struct Metered {
    pub(crate) who: String,
    /// The chapter the request works on: an agent's `章节：`, the main conversation's latest
    /// `chapter begin N`.
    pub(crate) chapter: Option<u32>,
    /// The phase of the scenario (a journey's quick start, trial, …), when the caller named it.
    pub(crate) phase: String,
    /// The first request of an agent's dispatch (a fresh conversation), or of a main run.
    pub(crate) fresh: bool,
    /// Which conversation it belongs to (an agent's dispatch: its body and its prompt), so that
    /// the requests of parallel dispatches are told apart.
    pub(crate) conversation: String,
    pub(crate) input: usize,
    pub(crate) read: usize,
    pub(crate) written: usize,
    pub(crate) output: usize,
    /// The model the client asked for.
    pub(crate) model: String,
    /// Of `input`: the tool schemas, the system prompt, the first message (a skill's body).
    pub(crate) parts: [usize; 3],
    /// The text of the request's last message (what it answers: a tool result, a prompt).
    pub(crate) last: String,
}

/// The chapter number after the last `marker` in `text`.
fn last_number_after(text: &str, marker: &str) -> Option<u32> {
    let at = text.rfind(marker)? + marker.len();
    text[at..]
        .chars()
        .skip_while(|c| *c == ' ')
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// The chapter a main request works on: the `chapter begin N` its reply runs (the request
/// that starts a chapter is that chapter's first), else the latest one the model ran in the
/// conversation so far.
fn main_chapter(body: &Value, reply: &Value) -> Option<u32> {
    reply
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use" && b["name"] == "Bash")
        .filter_map(|b| last_number_after(b["input"]["command"].as_str()?, "chapter begin"))
        .next_back()
        .or_else(|| last_begin(body))
}

/// The chapter of the latest `chapter begin N` the model ran in the conversation of `body`.
fn last_begin(body: &Value) -> Option<u32> {
    body["messages"]
        .as_array()?
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use" && b["name"] == "Bash")
        .filter_map(|b| last_number_after(b["input"]["command"].as_str()?, "chapter begin"))
        .next_back()
}

/// The prompt cache of the simulation: per model and prefix hash, when it was last used.
#[derive(Default)]
struct Cache {
    entries: HashMap<(String, u64), f64>,
}

/// What one request read and wrote.
struct Caching {
    read: usize,
    written: usize,
}

impl Cache {
    /// Reads and writes the prefixes of `blocks` at simulated time `now`.
    fn request(&mut self, model: &str, blocks: &[Block], now: f64) -> Caching {
        let mut hashes = Vec::with_capacity(blocks.len());
        let mut sums = Vec::with_capacity(blocks.len());
        let (mut h, mut sum) = (DefaultHasher::new(), 0usize);
        for b in blocks {
            b.identity.hash(&mut h);
            hashes.push(h.finish());
            sum += b.tokens;
            sums.push(sum);
        }
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].breakpoint)
            .collect();
        let live = |e: &HashMap<(String, u64), f64>, i: usize| {
            e.get(&(model.to_string(), hashes[i]))
                .is_some_and(|t| now - t <= CACHE_TTL)
        };
        // The longest cached prefix within the lookback of a breakpoint.
        let hit = breakpoints
            .iter()
            .flat_map(|&b| (b.saturating_sub(LOOKBACK - 1)..=b).rev())
            .filter(|&i| live(&self.entries, i))
            .max();
        if let Some(i) = hit {
            self.entries.insert((model.to_string(), hashes[i]), now);
        }
        let read = hit.map_or(0, |i| sums[i]);
        for &b in &breakpoints {
            if sums[b] >= CACHE_MIN {
                self.entries.insert((model.to_string(), hashes[b]), now);
            }
        }
        let written = breakpoints
            .last()
            .filter(|&&b| sums[b] >= CACHE_MIN)
            .map_or(0, |&b| sums[b].saturating_sub(read));
        Caching { read, written }
    }
}

fn is_opus(model: &str) -> bool {
    model.contains("opus")
}

/// Simulated seconds a request takes: 2 s, and its output at 40 estimated tokens a second
/// (Opus 25).
fn seconds(model: &str, output: usize) -> f64 {
    2.0 + output as f64 / if is_opus(model) { 25.0 } else { 40.0 }
}

/// Every Messages request of `runs` (in the order they were sent), measured, one prompt cache
/// and one clock for all of them.
pub(crate) fn metered(runs: &[&Run]) -> Vec<Metered> {
    metered_phases(&[("", runs)])
}

/// [`metered`] over the runs of several phases, in order, each request labelled with its phase.
pub(crate) fn metered_phases(phases: &[(&str, &[&Run])]) -> Vec<Metered> {
    let mut out = Vec::new();
    let mut cache = Cache::default();
    let mut now = 0.0;
    for (phase, runs) in phases {
        for run in *runs {
            now += AUTHOR_GAP;
            let mut main_seen = false;
            for r in &run.requests {
                let body = &r["body"];
                if r["method"] != "POST"
                    || !r["url"].as_str().unwrap_or("").starts_with("/v1/messages?")
                {
                    continue;
                }
                let who = sender(body);
                let model = body["model"].as_str().unwrap_or_default().to_string();
                let b = blocks(body);
                let caching = cache.request(&model, &b, now);
                let output = r["reply"].as_array().map_or(0, |blocks| {
                    estimate(&block_text(&Value::Array(blocks.clone())))
                });
                now += seconds(&model, output);
                let fresh = match who.as_str() {
                    "main" => !std::mem::replace(&mut main_seen, true),
                    "client" => false,
                    _ => !body["messages"]
                        .as_array()
                        .is_some_and(|m| m.iter().any(|m| m["role"] == "assistant")),
                };
                let chapter = match who.as_str() {
                    "main" | "client" => main_chapter(body, &r["reply"]),
                    _ => last_number_after(&first_user_text(body), "章节："),
                };
                let first_message = body["messages"][0]["content"].clone();
                out.push(Metered {
                    conversation: format!("{who}\n{}", first_user_text(body)),
                    who,
                    chapter,
                    phase: (*phase).to_string(),
                    fresh,
                    input: b.iter().map(|b| b.tokens).sum(),
                    read: caching.read,
                    written: caching.written,
                    output,
                    parts: [
                        estimate(&body["tools"].to_string()),
                        estimate(&system_text(body)),
                        estimate(&block_text(&first_message)),
                    ],
                    model,
                    last: body["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .map_or_else(String::new, |m| block_text(&m["content"])),
                });
            }
        }
    }
    out
}

impl Metered {
    /// What the request bills at `novel_core::cost`'s prices (the model the client asked for;
    /// Sonnet when it names none): read at the cache read rate, written at the cache write
    /// rate, the rest of the input at the input price, the output at the output price.
    pub(crate) fn billed(&self) -> f64 {
        use novel_core::cost::{CACHE_READ_MULTIPLIER, CACHE_WRITE_MULTIPLIER, Model};
        let p = Model::from_name(&self.model)
            .unwrap_or(Model::Sonnet)
            .price();
        let plain = self.input - self.read - self.written;
        (self.read as f64 * CACHE_READ_MULTIPLIER * p.input
            + self.written as f64 * CACHE_WRITE_MULTIPLIER * p.input
            + plain as f64 * p.input
            + self.output as f64 * p.output)
            / 1e6
    }
}

/// One chapter's (or phase's) figures: the acceptance measures of the cost issue.
#[derive(Debug, Default, Clone)]
pub(crate) struct ChapterCost {
    pub(crate) main_requests: usize,
    /// The most requests one agent dispatch took.
    pub(crate) max_per_dispatch: usize,
    pub(crate) input: usize,
    pub(crate) read: usize,
    pub(crate) written: usize,
    pub(crate) output: usize,
    pub(crate) billed: f64,
    /// Main-conversation input alone.
    pub(crate) main_input: usize,
}

/// The figures of the requests `reqs` picked by `pick` (side requests of the client left out).
fn cost_of(reqs: &[Metered], pick: &dyn Fn(&Metered) -> bool) -> ChapterCost {
    let mut c = ChapterCost::default();
    // Requests so far of each open dispatch (by conversation).
    let mut open: Vec<(&str, usize)> = Vec::new();
    for r in reqs.iter().filter(|r| r.who != "client" && pick(r)) {
        if r.who == "main" {
            c.main_requests += 1;
            c.main_input += r.input;
        } else {
            let at = match open.iter().position(|(k, _)| *k == r.conversation) {
                Some(i) if !r.fresh => i,
                Some(i) => {
                    open[i].1 = 0;
                    i
                }
                None => {
                    open.push((&r.conversation, 0));
                    open.len() - 1
                }
            };
            open[at].1 += 1;
            c.max_per_dispatch = c.max_per_dispatch.max(open[at].1);
        }
        c.input += r.input;
        c.read += r.read;
        c.written += r.written;
        c.output += r.output;
        c.billed += r.billed();
    }
    c
}

/// The figures of chapter `n` among `reqs` (requests before the first `chapter begin` count for
/// the first chapter, `first`).
pub(crate) fn chapter_cost(reqs: &[Metered], n: u32, first: u32) -> ChapterCost {
    cost_of(reqs, &|r| r.chapter.unwrap_or(first) == n)
}

/// The figures of the requests from the first main request whose last message (the tool
/// result it answers) contains `marker` to the end: a round of the loop after a gate's answer.
pub(crate) fn cost_from(reqs: &[Metered], marker: &str) -> ChapterCost {
    let at = reqs
        .iter()
        .position(|r| r.who == "main" && r.last.contains(marker))
        .unwrap_or_else(|| panic!("no main request answers `{marker}`"));
    cost_of(&reqs[at..], &|_| true)
}

/// The figures of chapter `n` among requests measured by phase: only requests that name it.
pub(crate) fn phase_chapter(reqs: &[Metered], n: u32) -> ChapterCost {
    cost_of(reqs, &|r| r.chapter == Some(n))
}

/// The figures of phase `phase` among `reqs`.
pub(crate) fn phase_cost(reqs: &[Metered], phase: &str) -> ChapterCost {
    cost_of(reqs, &|r| r.phase == phase)
}

/// One line of the token table.
#[derive(Default)]
struct TokenRow {
    dispatches: usize,
    requests: usize,
    input: usize,
    read: usize,
    written: usize,
    largest: usize,
    /// The tools, system prompt and first message of the largest request.
    parts: [usize; 3],
    output: usize,
    billed: f64,
}

fn thousands(v: usize) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The cost table of what `runs` sent (see [`render`]), printed by `tests/run` after the suite.
pub(crate) fn token_table(title: &str, runs: &[&Run]) -> String {
    phase_table(title, &[("", runs)])
}

/// [`token_table`] over phases (a journey): the per-sender and per-chapter lines, and a line
/// per phase.
pub(crate) fn phase_table(title: &str, phases: &[(&str, &[&Run])]) -> String {
    let table = render(title, &metered_phases(phases));
    keep(title, &table);
    table
}

/// Kept for tests/run, which prints every table after the suite (a passing test's stderr is
/// not shown).
fn keep(title: &str, table: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-cost");
    if std::fs::create_dir_all(&dir).is_ok() {
        let name: String = title
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let _ = std::fs::write(dir.join(format!("{name}.txt")), format!("{table}\n"));
    }
}

/// Per sender: dispatches, requests, input (every request counted in full), what the cache
/// read and wrote of it, the largest request (its tools / system / first message), output and
/// the billed estimate, beside the PRD's budget per call; then per chapter and per phase.
fn render(title: &str, reqs: &[Metered]) -> String {
    let mut rows: Vec<(String, TokenRow)> = Vec::new();
    for r in reqs {
        let at = match rows.iter().position(|(w, _)| *w == r.who) {
            Some(i) => i,
            None => {
                rows.push((r.who.clone(), TokenRow::default()));
                rows.len() - 1
            }
        };
        let row = &mut rows[at].1;
        row.dispatches += usize::from(r.fresh);
        row.requests += 1;
        row.input += r.input;
        row.read += r.read;
        row.written += r.written;
        if r.input > row.largest {
            row.largest = r.input;
            row.parts = r.parts;
        }
        row.output += r.output;
        row.billed += r.billed();
    }
    let order = |w: &str| match w {
        "main" => 0,
        "client" => 99,
        _ => PRD_BUDGET
            .iter()
            .position(|(a, _, _)| *a == w)
            .map_or(10 + AGENTS.iter().position(|a| *a == w).unwrap_or(0), |i| {
                1 + i
            }),
    };
    rows.sort_by_key(|(w, _)| order(w));
    let n = thousands;
    let mut out = format!(
        "e2e cost, {title}\n(tokens estimated: CJK chars x 0.7 + other chars / 4; read/written = prompt cache at the client's breakpoints, 5-min TTL, 1,024-token minimum; largest = the biggest request, of it tools/system/first message; $ = read x 0.1 + written x 1.25 + rest x 1 of the input price + output, Sonnet $3/$15, Opus $15/$75 per M)\n{:<16}{:>5}{:>6}{:>11}{:>11}{:>10}{:>9}{:>20}{:>8}{:>9}   {}\n",
        "who",
        "disp",
        "reqs",
        "input",
        "read",
        "written",
        "largest",
        "tools/sys/first",
        "output",
        "$",
        "PRD in/out per call"
    );
    let mut total = TokenRow::default();
    for (who, r) in &rows {
        let budget = PRD_BUDGET
            .iter()
            .find(|(a, _, _)| a == who)
            .map_or("-".to_string(), |(_, i, o)| {
                format!("{} / {}", n(*i), n(*o))
            });
        out.push_str(&format!(
            "{:<16}{:>5}{:>6}{:>11}{:>11}{:>10}{:>9}{:>20}{:>8}{:>9.3}   {}\n",
            who,
            r.dispatches,
            r.requests,
            n(r.input),
            n(r.read),
            n(r.written),
            n(r.largest),
            format!("{}/{}/{}", n(r.parts[0]), n(r.parts[1]), n(r.parts[2])),
            n(r.output),
            r.billed,
            budget
        ));
        total.requests += r.requests;
        total.input += r.input;
        total.read += r.read;
        total.written += r.written;
        total.output += r.output;
        total.billed += r.billed;
    }
    out.push_str(&format!(
        "{:<16}{:>5}{:>6}{:>11}{:>11}{:>10}{:>9}{:>20}{:>8}{:>9.3}   31,000 / 11,000, $0.60\n",
        "all",
        "",
        total.requests,
        n(total.input),
        n(total.read),
        n(total.written),
        "",
        "",
        n(total.output),
        total.billed
    ));
    let line = |label: String, k: &ChapterCost| {
        format!(
            "{label}: {} main requests (main input {}), at most {} requests per dispatch, input {}, read {}, written {}, output {}, ${:.3}\n",
            k.main_requests,
            n(k.main_input),
            k.max_per_dispatch,
            n(k.input),
            n(k.read),
            n(k.written),
            n(k.output),
            k.billed
        )
    };
    let mut chapters: Vec<u32> = reqs.iter().filter_map(|r| r.chapter).collect();
    chapters.sort_unstable();
    chapters.dedup();
    // A journey's requests outside the chapters (set-up, planning) count for no chapter.
    let phased = reqs.iter().any(|r| !r.phase.is_empty());
    if let Some(&first) = chapters.first() {
        for &c in &chapters {
            let k = if phased {
                phase_chapter(reqs, c)
            } else {
                chapter_cost(reqs, c, first)
            };
            out.push_str(&line(format!("chapter {c}"), &k));
        }
    }
    let mut phases: Vec<&str> = Vec::new();
    for r in reqs {
        if !r.phase.is_empty() && !phases.contains(&r.phase.as_str()) {
            phases.push(&r.phase);
        }
    }
    for p in phases {
        out.push_str(&line(format!("phase {p}"), &phase_cost(reqs, p)));
    }
    out
}
