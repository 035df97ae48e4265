//! Benchmark (not a test): a project of 500 generated chapters. Times applying each delta
//! (the state-engine part of a commit, with its atomic writes) and `state rebuild`
//! (read changelog + replay + read state + diff). Run: `cargo bench -p novel-store`.

use std::time::{Duration, Instant};

use novel_core::ops::{self, Context, NameIndex, diff};
use novel_store::Project;
use novel_store::chapter::JournalKind;
use novel_store::init::{InitOptions, init_project};
use novel_store::state::{
    ChangelogWrite, StateWrite, commit_state, load_changelog, load_global, load_plan, load_state,
};
use serde_json::json;

const CHAPTERS: u32 = 500;
const CHARACTERS: u32 = 24;

fn delta(chapter: u32, base: u64) -> serde_json::Value {
    let c = |k: u32| format!("char-{:02}", (chapter * 7 + k) % CHARACTERS);
    let mut ops = vec![
        json!({"op": "set", "path": format!("characters.{}.location", c(0)), "value": format!("第{chapter}章的地点")}),
        json!({"op": "set", "path": format!("characters.{}.emotional_state", c(1)), "value": "警觉"}),
        json!({"op": "inc", "path": format!("characters.{}.relationships.{}", c(0), c(1)), "value": 3}),
        json!({"op": "add", "path": format!("characters.{}.inventory", c(2)), "value": format!("物品{chapter}")}),
        json!({"op": "set", "path": format!("items.item-{}.owner", chapter % 40), "value": c(2)}),
        json!({"op": "set", "path": "world_state.time_marker", "value": format!("第{}年", chapter / 50)}),
        json!({"op": "add", "path": "world_state.ongoing_events", "value": format!("事件{chapter}")}),
        json!({"op": "foreshadow", "path": format!("thread-{}", chapter / 5), "value": "planted", "detail": "埋设"}),
    ];
    if chapter > 10 {
        ops.push(json!({"op": "remove", "path": format!("characters.{}.inventory", c(2)), "value": format!("物品{}", chapter - 10)}));
        ops.push(json!({"op": "foreshadow", "path": format!("thread-{}", (chapter - 10) / 5), "value": "advanced", "detail": "推进"}));
    }
    json!({"chapter": chapter, "base_state_version": base, "storyline_id": "main_arc", "ops": ops})
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("novel-bench-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let report = init_project(&tmp, &InitOptions::default()).expect("init");
    let project = Project { root: report.root };
    let names = NameIndex::default();
    let plan = load_plan(&project).unwrap();
    let ctx = Context {
        names: &names,
        plan: &plan,
    };

    let mut apply_times = Vec::new();
    for chapter in 1..=CHAPTERS {
        let t = Instant::now();
        let state = load_state(&project).unwrap();
        let global = load_global(&project).unwrap();
        let d = delta(chapter, ops::state_version(&state));
        let applied =
            ops::apply_delta(&state, &global, &d, ctx, false, "2026-11-22T00:00:00Z").unwrap();
        assert!(
            applied.run.rejected.is_empty(),
            "{:?}",
            applied.run.rejected
        );
        // As `ops apply` writes them: through the journal, the changelog line appended.
        let write = StateWrite {
            chapter,
            kind: JournalKind::OpsApply,
            state: Some(novel_store::io::to_json_text(&applied.run.state)),
            global: (applied.run.global != global).then_some(&applied.run.global),
            changelog: ChangelogWrite::Append(&applied.entry),
            backups: Vec::new(),
        };
        commit_state(&project, write, String::new()).unwrap();
        apply_times.push(t.elapsed());
    }
    let log_bytes = std::fs::metadata(project.path("state/changelog.jsonl"))
        .unwrap()
        .len();

    let (mut load_t, mut replay_t) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let t = Instant::now();
        let log = load_changelog(&project).unwrap();
        load_t.push(t.elapsed());
        let authored = load_global(&project).unwrap();
        let on_disk = load_state(&project).unwrap();
        let t = Instant::now();
        ops::rebuild(&log, None, Some(&on_disk), &authored, ctx).unwrap();
        replay_t.push(t.elapsed());
    }
    let mut rebuild_times = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let log = load_changelog(&project).unwrap();
        let authored = load_global(&project).unwrap();
        let on_disk = load_state(&project).unwrap();
        let replayed = ops::rebuild(&log, None, Some(&on_disk), &authored, ctx).unwrap();
        let d = diff(&replayed.state, &on_disk);
        assert!(d.is_empty(), "rebuild differs: {d:?}");
        assert_eq!(replayed.global, authored, "foreshadowing rebuilds too");
        rebuild_times.push(t.elapsed());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let first = ms(apply_times[0]);
    let last50: Duration = apply_times[apply_times.len() - 50..]
        .iter()
        .sum::<Duration>()
        / 50;
    println!(
        "state engine, {CHAPTERS} chapters, changelog {:.1} KiB",
        log_bytes as f64 / 1024.0
    );
    println!(
        "  apply delta (read state+global, apply, journal: global+state, changelog line appended, fsync): chapter 1 {first:.2} ms, mean of last 50 {:.2} ms, median {:.2} ms",
        ms(last50),
        ms(median(&mut apply_times.clone()))
    );
    println!(
        "  state rebuild (read changelog, global and state, replay {CHAPTERS}, diff): median {:.2} ms, max {:.2} ms over 20 runs",
        ms(median(&mut rebuild_times)),
        ms(*rebuild_times.iter().max().unwrap())
    );
    println!(
        "    of which: read+check changelog median {:.2} ms, replay median {:.2} ms",
        ms(median(&mut load_t)),
        ms(median(&mut replay_t))
    );
    // One chapter commit (plan + journal + apply, all fsynced) on top of the 500 chapters.
    let text = "陆尘推门而入，屋里一灯如豆。".repeat(200);
    for chapter in 1..=CHAPTERS {
        std::fs::write(
            project.path(&novel_store::layout::chapter_file(chapter)),
            &text,
        )
        .unwrap();
        std::fs::write(
            project.path(&novel_store::layout::summary_file(chapter)),
            "摘要",
        )
        .unwrap();
    }
    let mut commit_times = Vec::new();
    let mut files = 0;
    for chapter in CHAPTERS + 1..=CHAPTERS + 20 {
        let state = load_state(&project).unwrap();
        let d = delta(chapter, ops::state_version(&state));
        std::fs::write(
            project.path(&novel_store::layout::staging_chapter(chapter)),
            &text,
        )
        .unwrap();
        std::fs::write(
            project.path(&novel_store::layout::staging_summary(chapter)),
            "摘要",
        )
        .unwrap();
        std::fs::write(
            project.path(&novel_store::layout::staging_delta(chapter)),
            d.to_string(),
        )
        .unwrap();
        let mem = project.path(&novel_store::layout::staging_memory("main_arc").unwrap());
        std::fs::create_dir_all(mem.parent().unwrap()).unwrap();
        std::fs::write(&mem, "记忆").unwrap();
        let mut cp = novel_store::chapter::load_checkpoint(&project).unwrap();
        cp.inflight_chapter = Some(chapter);
        cp.last_completed_chapter = chapter - 1;
        cp.pipeline_stage = Some(novel_core::model::PipelineStage::Judged);
        novel_store::chapter::write_checkpoint(&project, &cp).unwrap();
        let t = Instant::now();
        let cp = novel_store::chapter::load_checkpoint(&project).unwrap();
        let journal = novel_store::chapter::plan_commit(
            &project,
            &cp,
            chapter,
            "bench",
            "2026-11-22T00:00:00Z",
            &|t| t.chars().count(),
        )
        .unwrap()
        .journal;
        let journal = novel_store::chapter::commit(&project, journal).unwrap();
        commit_times.push(t.elapsed());
        files = journal.writes.len();
    }
    println!(
        "  chapter commit on a {CHAPTERS}-chapter project (plan, journal, {files} files + changelog, fsync each): median {:.2} ms, max {:.2} ms over 20 commits",
        ms(median(&mut commit_times)),
        ms(*commit_times.iter().max().unwrap())
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
