//! The dashboard page: one HTML file with the charts inline, its own stylesheet, and nothing
//! to fetch — a Content-Security-Policy of `default-src 'none'` makes sure of it in the browser.
//! The text is laid out with the reader's own CJK fonts (the stack names the usual ones of
//! Windows, macOS and Linux).

use std::fmt::Write;

use novel_store::dashboard::{DashboardData, Section};

use super::charts::Drawn;
use super::svg::esc;

/// The CJK font stack: macOS (PingFang, Hiragino), Windows (Microsoft YaHei), Linux (Noto /
/// Source Han, WenQuanYi), then the browser's sans-serif.
pub const FONT_STACK: &str = r#""PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif"#;

/// A section's heading and its one-line caption.
pub fn heading(s: Section) -> (&'static str, &'static str) {
    match s {
        Section::Progress => (
            "进度",
            "每章字数（柱）与目标区间（浅色带），按卷分段；总字数与每天写了多少。",
        ),
        Section::Quality => (
            "质量",
            "每章门控总分与八个维度的评分，虚线是通过线，圆点是修订过的章、菱形是强制通过的章；下图是每千字的 AI 套话次数。",
        ),
        Section::Storylines => (
            "故事线",
            "每条故事线一条泳道，色块是写在这条线上的章节；框出的是交汇事件，斜纹是休眠的线，上方标出每卷同时活跃几条（上限 4 条）。",
        ),
        Section::Foreshadowing => (
            "伏笔",
            "每个伏笔从埋下到回收的跨度，浅色是计划回收区间；还没回收的画到当前章，逾期的标红。",
        ),
        Section::Characters => (
            "角色",
            "主要角色每章在正文里被提到几次（颜色越深越多）；退场的角色从退场那章起画斜纹。",
        ),
        Section::Cost => (
            "费用",
            "每章各 agent 的费用与 token（来自流水线日志），累计费用对照 PRD 约每章 0.75 美元的均摊线。",
        ),
        Section::Style => (
            "文风",
            "每 5 章一个窗口，平均句长与对话占比相对风格基线的偏离，虚线是漂移阈值，红圈是超出阈值的窗口。",
        ),
    }
}

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px; background: #f6f5f1; color: #222; font-family: FONTS; line-height: 1.6; }
main { max-width: 1100px; margin: 0 auto; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header .headline { margin: 0; color: #555; }
nav { margin: 12px 0 20px; display: flex; flex-wrap: wrap; gap: 8px; }
nav a { color: #2b5c8a; text-decoration: none; padding: 2px 10px; border: 1px solid #c9d6e3; border-radius: 12px; background: #fff; }
section { background: #fff; border: 1px solid #e2dfd6; border-radius: 8px; padding: 16px 20px; margin: 0 0 20px; }
section h2 { margin: 0; font-size: 20px; }
.caption { margin: 2px 0 10px; color: #666; font-size: 14px; }
.summary { margin: 4px 0; }
.empty { margin: 12px 0; padding: 12px; background: #f4f4f4; border-radius: 6px; color: #555; }
.note { margin: 4px 0; padding: 6px 10px; background: #fff4e5; border-left: 3px solid #e8a33d; color: #7a4b00; font-size: 14px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0 0; padding: 0; list-style: none; font-size: 13px; color: #444; }
.legend li::before { content: ""; display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; background: var(--sw); }
svg.chart { display: block; width: 100%; height: auto; margin: 8px 0; font-family: FONTS; }
svg.chart text { font-size: 11px; fill: #555; }
svg.chart .grid line, svg.chart .axis line { stroke: #e6e6e6; stroke-width: 1; }
svg.chart .axis line { stroke: #999; }
.vol-band { fill: #fafafa; } .vol-band.alt { fill: #f0f3f7; }
.vol-label { font-weight: bold; }
.target-band { fill: #d8ecd2; opacity: .8; }
.bar { fill: #4e79a7; } .bar.off { fill: #f28e2b; } .bar.unknown { fill: #bbb; }
.dim { fill: none; stroke-width: 1; opacity: .55; }
.d0 { stroke: #4e79a7; } .d1 { stroke: #59a14f; } .d2 { stroke: #9c755f; } .d3 { stroke: #b07aa1; }
.d4 { stroke: #76b7b2; } .d5 { stroke: #edc948; } .d6 { stroke: #ff9da7; } .d7 { stroke: #bab0ac; }
.many .dim { opacity: .25; }
.overall { fill: none; stroke: #222; stroke-width: 2; }
.pass-line, .limit-line { stroke: #2ca02c; stroke-width: 1.5; stroke-dasharray: 6 4; }
.limit-line { stroke: #d62728; }
svg.chart .line-label { fill: #333; font-size: 11px; }
svg.chart .panel-title { fill: #333; font-size: 12px; font-weight: bold; }
.revised { fill: #f28e2b; stroke: #fff; stroke-width: 1; }
.forced { fill: #d62728; stroke: #fff; stroke-width: 1; }
.lint-bar { fill: #9c755f; } .lint-bar.over { fill: #d62728; }
.active-count { fill: #e8eef5; } .active-count.over { fill: #f8d0d0; }
.lane .lane-bg { fill: #f7f7f7; } .lane.dormant .lane-bg { fill: url(#hatch); }
svg.chart .lane.dormant .lane-label { fill: #999; font-style: italic; }
.cell { fill: #4e79a7; }
.convergence { fill: rgba(242, 142, 43, .15); stroke: #f28e2b; stroke-width: 1.5; }
.now { fill: #888; }
.thread .target { fill: #e3ecf6; }
.thread .span { fill: #4e79a7; }
.thread.resolved .span { fill: #59a14f; }
.thread.overdue .span { fill: #d62728; }
svg.chart .thread.overdue .thread-label { fill: #d62728; font-weight: bold; }
.thread .plant { fill: #fff; stroke: #333; stroke-width: 1.5; }
.thread .resolve { fill: #59a14f; stroke: #fff; stroke-width: 1; }
.row-bg { fill: #f7f7f7; }
.retired-span { fill: url(#hatch); }
.heat.h1 { fill: #c6dbef; } .heat.h2 { fill: #6baed6; } .heat.h3 { fill: #08519c; }
.heat.after { stroke: #d62728; stroke-width: 1.5; }
svg.chart .member.retired .member-label { fill: #999; }
.seg.g0, .tok.g0 { fill: #4e79a7; } .seg.g1, .tok.g1 { fill: #e15759; } .seg.g2, .tok.g2 { fill: #59a14f; } .seg.g3, .tok.g3 { fill: #bab0ac; }
.prd-line { stroke: #222; stroke-width: 1.5; stroke-dasharray: 6 4; } .prd-line.base { stroke: #888; stroke-dasharray: 2 3; }
.cumulative { fill: none; stroke: #e15759; stroke-width: 2; }
.prd-cumulative { fill: none; stroke: #222; stroke-width: 1.5; stroke-dasharray: 6 4; }
.zero-line { stroke: #999; }
.threshold { stroke-width: 1; stroke-dasharray: 4 4; }
.threshold.sentence, .drift.sentence { stroke: #4e79a7; } .threshold.dialogue, .drift.dialogue { stroke: #f28e2b; }
.drift { fill: none; stroke-width: 2; }
.pt.sentence { fill: #4e79a7; } .pt.dialogue { fill: #f28e2b; } .pt.drifted { stroke: #d62728; stroke-width: 2; }
.sw-bar { --sw: #4e79a7; } .sw-off { --sw: #f28e2b; } .sw-target { --sw: #d8ecd2; }
.sw-overall { --sw: #222; } .sw-pass { --sw: #2ca02c; } .sw-revised { --sw: #f28e2b; } .sw-forced { --sw: #d62728; }
.sw-d0 { --sw: #4e79a7; } .sw-d1 { --sw: #59a14f; } .sw-d2 { --sw: #9c755f; } .sw-d3 { --sw: #b07aa1; }
.sw-d4 { --sw: #76b7b2; } .sw-d5 { --sw: #edc948; } .sw-d6 { --sw: #ff9da7; } .sw-d7 { --sw: #bab0ac; }
.sw-lint { --sw: #9c755f; } .sw-lint-over { --sw: #d62728; }
.sw-cell { --sw: #4e79a7; } .sw-convergence { --sw: #f28e2b; } .sw-dormant { --sw: #ccc; } .sw-over { --sw: #f8d0d0; }
.sw-open { --sw: #4e79a7; } .sw-resolved { --sw: #59a14f; } .sw-overdue { --sw: #d62728; } .sw-range { --sw: #e3ecf6; }
.sw-h1 { --sw: #c6dbef; } .sw-h2 { --sw: #6baed6; } .sw-h3 { --sw: #08519c; } .sw-retired { --sw: #ccc; }
.sw-g0 { --sw: #4e79a7; } .sw-g1 { --sw: #e15759; } .sw-g2 { --sw: #59a14f; } .sw-g3 { --sw: #bab0ac; }
.sw-prd { --sw: #222; } .sw-cumulative { --sw: #e15759; }
.sw-sentence { --sw: #4e79a7; } .sw-dialogue { --sw: #f28e2b; } .sw-drifted { --sw: #d62728; }
footer { color: #888; font-size: 13px; text-align: center; }
"#;

/// The hatch pattern of dormant lanes and retirements (defined once, in a hidden SVG).
const DEFS: &str = r##"<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f1f1f1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c8c8c8" stroke-width="2"/></pattern></defs></svg>"##;

/// The whole page: the header, the navigation, then each section with its caption, summary,
/// charts (or why there are none), legend and the notes on what could not be read.
pub fn render(data: &DashboardData, headline: &str, sections: &[(Section, Drawn)]) -> String {
    let title = data.title.as_deref().unwrap_or("未命名的书");
    let mut out = String::with_capacity(256 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>《{}》仪表盘</title>", esc(title));
    let _ = writeln!(out, "<style>{}</style>", STYLE.replace("FONTS", FONT_STACK));
    out.push_str("</head>\n<body>\n");
    out.push_str(DEFS);
    out.push_str("\n<main>\n<header>\n");
    let _ = writeln!(out, "<h1>《{}》仪表盘</h1>", esc(title));
    let _ = writeln!(out, "<p class=\"headline\">{}</p>", esc(headline));
    out.push_str("</header>\n<nav>");
    for (s, _) in sections {
        let _ = write!(out, "<a href=\"#{}\">{}</a>", s.id(), heading(*s).0);
    }
    out.push_str("</nav>\n");
    for (s, drawn) in sections {
        let (h, caption) = heading(*s);
        let _ = writeln!(
            out,
            "<section id=\"{}\" data-state=\"{}\">",
            s.id(),
            if drawn.svgs.is_empty() {
                "empty"
            } else {
                "drawn"
            }
        );
        let _ = writeln!(out, "<h2>{h}</h2>\n<p class=\"caption\">{caption}</p>");
        for note in data.notes.of(*s) {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(note));
        }
        if let Some(why) = &drawn.empty {
            let _ = writeln!(out, "<p class=\"empty\">{}</p>", esc(why));
        }
        for line in &drawn.summary {
            let _ = writeln!(out, "<p class=\"summary\">{}</p>", esc(line));
        }
        for svg in &drawn.svgs {
            out.push_str(svg);
            out.push('\n');
        }
        if !drawn.svgs.is_empty() && !drawn.legend.is_empty() {
            out.push_str("<ul class=\"legend\">");
            for (class, label) in &drawn.legend {
                let _ = write!(out, "<li class=\"{class}\">{}</li>", esc(label));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }
    out.push_str("<footer>由 novel dashboard 根据项目文件生成；重新运行 novel dashboard 即可更新。</footer>\n</main>\n</body>\n</html>\n");
    out
}
