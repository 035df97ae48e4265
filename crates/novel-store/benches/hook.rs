//! Benchmark (not a test): the SessionStart hook and the ChapterWriter packet on a synthetic
//! project of 500 chapters. Run: `cargo bench -p novel-store --bench hook`.
//!
//! In-process timings cover everything the hook does after the process starts (discovery,
//! reading and parsing, the lock check, the recommendation, rendering). With `NOVEL_BIN` set
//! to a `novel` binary that has `context session-start`, the whole process is timed too, fed
//! the hook's stdin JSON the way Claude Code runs it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use novel_core::context::{self, Agent};
use novel_store::Project;
use novel_store::context::{load_inputs, session_start};
use novel_store::synth::{SynthOptions, synth_project};

const CHAPTERS: u32 = 500;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let p = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    format!(
        "median {:.2} ms, p95 {:.2} ms, max {:.2} ms ({} runs)",
        ms(p(0.5)),
        ms(p(0.95)),
        ms(*v.last().unwrap()),
        v.len()
    )
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("novel-bench-hook-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let t = Instant::now();
    let report = synth_project(
        &tmp,
        &SynthOptions {
            chapters: CHAPTERS,
            ..SynthOptions::default()
        },
    )
    .expect("synth");
    println!(
        "synthetic project: {CHAPTERS} chapters, {} volumes, generated in {:.0} ms",
        report.volumes,
        ms(t.elapsed())
    );
    let project = Project {
        root: report.root.clone(),
    };
    // A chapter in flight makes the hook read staging too (the heavier case).
    let cp_path = project.path(".checkpoint.json");
    let mut cp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cp_path).unwrap()).unwrap();
    cp["inflight_chapter"] = serde_json::json!(CHAPTERS + 1);
    cp["pipeline_stage"] = serde_json::json!("drafting");
    std::fs::write(&cp_path, serde_json::to_string_pretty(&cp).unwrap()).unwrap();
    std::fs::write(
        project.path("staging/chapters/chapter-501.md"),
        "# 第501章\n\n初稿。\n",
    )
    .unwrap();

    let t = Instant::now();
    let first = session_start(&project, Some("startup".into()));
    let cold = t.elapsed();
    let mut runs = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        let s = session_start(&project, Some("startup".into()));
        runs.push(t.elapsed());
        assert_eq!(s.text, first.text);
    }
    println!(
        "hook in-process (facts + recommendation + text, {} chars): first call {:.2} ms; {}",
        first.text.chars().count(),
        ms(cold),
        stats(runs)
    );

    let mut runs = Vec::new();
    let mut tokens = 0;
    for _ in 0..30 {
        let t = Instant::now();
        let inputs = load_inputs(&project, Agent::ChapterWriter, None, None).expect("inputs");
        let p = context::build(Agent::ChapterWriter, &inputs, None).expect("packet");
        let text = p.render();
        runs.push(t.elapsed());
        tokens = p.tokens();
        assert!(!text.is_empty());
    }
    println!(
        "chapter-writer packet for chapter {} (load + assemble + trim + render, ≈{tokens} tokens): {}",
        CHAPTERS + 1,
        stats(runs)
    );

    if let Ok(bin) = std::env::var("NOVEL_BIN") {
        let stdin = serde_json::json!({
            "session_id": "bench", "transcript_path": "/tmp/x.jsonl",
            "cwd": project.root, "hook_event_name": "SessionStart", "source": "startup"
        })
        .to_string();
        let mut runs = Vec::new();
        for _ in 0..100 {
            let t = Instant::now();
            let mut child = Command::new(&bin)
                .args(["context", "session-start"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn novel");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(stdin.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            runs.push(t.elapsed());
            assert!(out.status.success());
            assert!(!out.stdout.is_empty());
        }
        println!("hook as a process ({bin}): {}", stats(runs));
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
