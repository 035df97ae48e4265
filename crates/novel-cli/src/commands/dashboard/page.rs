//! The dashboard page: one HTML file with the charts inline, its own stylesheet, and nothing
//! to fetch — a Content-Security-Policy of `default-src 'none'` makes sure of it in the browser.
//! The text is laid out with the reader's own CJK fonts (the stack names the usual ones of
//! Windows, macOS and Linux).
//!
//! For every screen: on a phone each chart keeps its drawing width ([`svg::MIN_DRAWN_WIDTH`]
//! px) and scrolls sideways inside its box, so its text stays readable; every value a chart
//! shows on hover is in a table a tap opens. Printed, sections are not split and the folded
//! tables stay folded. Colours meet WCAG AA: text 4.5:1 on its background, the marks that
//! carry meaning 3:1.

use std::fmt::Write;

use novel_core::pipeline::stage_name;
use novel_store::dashboard::{DashboardData, Section};

use super::charts::Drawn;
use super::svg::{self, esc};

/// The CJK font stack: macOS (PingFang, Hiragino), Windows (Microsoft YaHei), Linux (Noto /
/// Source Han, WenQuanYi), then the browser's sans-serif.
pub const FONT_STACK: &str = r#""PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif"#;

/// A section's heading and its one-line caption (the author's words only).
pub fn heading(s: Section) -> (&'static str, &'static str) {
    match s {
        Section::Progress => (
            "进度",
            "每章字数（柱）与目标区间（绿色虚线之间），按卷分段；总字数、每卷字数与每天写了多少。",
        ),
        Section::Quality => (
            "质量",
            "每章的评审总分（细线）、滑动平均（黑线）与每卷均分（紫线），绿色虚线是通过线；圆点是修订过的章，菱形是强制通过的章。下面是低于通过线的章节、八个维度的均分和每千字的 AI 套话次数。",
        ),
        Section::Storylines => (
            "故事线",
            "每条故事线一条泳道，色块是写在这条线上的章节；框出的是交汇事件，斜纹是休眠的线，上方标出每卷同时活跃几条（上限 4 条）。",
        ),
        Section::Foreshadowing => (
            "伏笔",
            "每个伏笔从埋下到回收的跨度，浅色框是计划回收的区间；逾期的排在最前并标红，还没回收的画到当前章。",
        ),
        Section::Characters => (
            "角色",
            "主要角色每章在正文里被提到几次（颜色越深越多）；退场的角色从退场那章起画斜纹。",
        ),
        Section::Cost => (
            "费用",
            "每章写作、润色、评审各花了多少，累计费用对照设计预算（每章约 0.75 美元）。",
        ),
        Section::Style => (
            "文风",
            "每 5 章一个窗口，平均句长与对话占比相对文风基线的偏离，虚线是漂移阈值，红圈是超出阈值的窗口；最后一个窗口就是现在的结论。",
        ),
    }
}

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px; background: #f6f5f1; color: #222; font-family: FONTS; line-height: 1.6; }
main { max-width: 1100px; margin: 0 auto; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header .headline { margin: 0; color: #333; font-weight: bold; }
header .state { margin: 2px 0 0; color: #555; font-size: 14px; }
nav { margin: 12px 0 20px; display: flex; flex-wrap: wrap; gap: 8px; }
nav a { color: #2b5c8a; text-decoration: none; padding: 2px 10px; border: 1px solid #9fb6cc; border-radius: 12px; background: #fff; }
section { background: #fff; border: 1px solid #d5d1c5; border-radius: 8px; padding: 16px 20px; margin: 0 0 20px; }
section h2 { margin: 0; font-size: 20px; }
.caption { margin: 2px 0 10px; color: #555; font-size: 14px; }
.summary { margin: 4px 0; }
.empty { margin: 12px 0; padding: 12px; background: #f4f4f4; border-radius: 6px; color: #444; }
.note { margin: 4px 0; padding: 6px 10px; background: #fff4e5; border-left: 3px solid #b85c00; color: #6b4000; font-size: 14px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0 0; padding: 0; list-style: none; font-size: 13px; color: #444; }
.legend li::before { content: ""; display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; background: var(--sw); border: 1px solid #767676; }
.chart-scroll, .table-scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
svg.chart { display: block; width: 100%; height: auto; margin: 8px 0; font-family: FONTS; }
svg.chart text { font-size: FONTpx; fill: #444; }
svg.chart .panel-title { fill: #222; font-size: 13px; font-weight: bold; }
svg.chart a:focus { outline: 2px solid #2b5c8a; }
.list-title { margin: 10px 0 2px; font-weight: bold; }
.chapters { margin: 2px 0 8px; line-height: 1.9; word-break: break-all; }
.chapters a, td a { color: #2b5c8a; }
details { margin: 8px 0; }
details > summary { cursor: pointer; color: #2b5c8a; padding: 6px 0; min-height: 24px; }
table { border-collapse: collapse; margin: 6px 0; font-size: 14px; }
caption { text-align: left; font-weight: bold; padding: 4px 0; color: #222; }
th, td { border: 1px solid #d5d1c5; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f0f3f7; color: #222; }
td:first-child, th:first-child { text-align: left; }
tr:target { background: #fff4c2; }
.overdue { color: #c0161b; font-weight: bold; }
.grid line { stroke: #e3e3e3; stroke-width: 1; } .axis line { stroke: #767676; stroke-width: 1; }
.vol-band { fill: #fbfbfb; } .vol-band.alt { fill: #f0f3f7; }
.vol-line { stroke: #8c8c8c; stroke-width: 1; stroke-dasharray: 2 2; }
svg.chart .vol-label { font-weight: bold; fill: #333; }
.target-band { fill: #e3f1de; } .target-edge { stroke: #2e7d32; stroke-width: 1; stroke-dasharray: 5 3; }
.bar { fill: #4e79a7; } .bar.off { fill: #b85c00; } .bar.unknown { fill: #767676; }
.overall { fill: none; stroke: #7b8da3; stroke-width: 1; }
.moving { fill: none; stroke: #222; stroke-width: 2.2; }
.vol-mean { stroke: #8e3f86; stroke-width: 3; }
.pass-line { stroke: #2e7d32; stroke-width: 1.5; stroke-dasharray: 6 4; }
.limit-line { stroke: #c0161b; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.chart .line-label { fill: #333; }
svg.chart .line-label.pass, svg.chart .line-label.target { fill: #2e7d32; }
svg.chart .line-label.limit { fill: #c0161b; } svg.chart .line-label.volmean { fill: #8e3f86; } svg.chart .line-label.cum { fill: #c0392b; }
.revised { fill: #b85c00; stroke: #fff; stroke-width: 1; }
.forced { fill: #c0161b; stroke: #fff; stroke-width: 1; }
.dim { fill: #4e79a7; } .dim.weak { fill: #c0161b; } .dim-recent { fill: #7b8da3; }
.polish-line { stroke: #b85c00; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg.chart .line-label.polish { fill: #9a4d00; }
.lint-bar { fill: #8a6650; } .lint-bar.over { fill: #c0161b; }
.active-count { fill: #e8eef5; } .active-count.over { fill: #f8d0d0; stroke: #c0161b; }
.lane .lane-bg { fill: #f7f7f7; } .lane.dormant .lane-bg { fill: url(#hatch); }
svg.chart .lane.dormant .lane-label { fill: #5f5f5f; font-style: italic; }
.cell { fill: #4e79a7; }
.convergence { fill: rgba(184, 92, 0, .12); stroke: #b85c00; stroke-width: 1.5; }
.now { fill: #5f5f5f; }
.thread .target { fill: #eef3fa; stroke: #5e7da3; stroke-width: 1; }
.thread .span { fill: #4e79a7; }
.thread.resolved .span { fill: #3d8b37; }
.thread.overdue .span { fill: #c0161b; }
svg.chart .thread.overdue .thread-label { fill: #c0161b; font-weight: bold; }
.thread .plant { fill: #fff; stroke: #333; stroke-width: 1.5; }
.thread .resolve { fill: #3d8b37; stroke: #fff; stroke-width: 1; }
.row-bg { fill: #f7f7f7; }
.retired-span { fill: url(#hatch); }
.heat.h1 { fill: #4a90c4; } .heat.h2 { fill: #1f5f9f; } .heat.h3 { fill: #0b2f5c; }
.heat.after { stroke: #c0161b; stroke-width: 1.5; }
svg.chart .member.retired .member-label { fill: #5f5f5f; }
.seg.g0, .tok.g0 { fill: #4e79a7; } .seg.g1, .tok.g1 { fill: #e15759; } .seg.g2, .tok.g2 { fill: #3d8b37; } .seg.g3, .tok.g3 { fill: #8c8c8c; }
.prd-line { stroke: #222; stroke-width: 1.5; stroke-dasharray: 6 4; } .prd-line.base { stroke: #767676; stroke-dasharray: 2 3; }
.cumulative { fill: none; stroke: #e15759; stroke-width: 2; }
.prd-cumulative { fill: none; stroke: #222; stroke-width: 1.5; stroke-dasharray: 6 4; }
.zero-line { stroke: #767676; }
.threshold { stroke-width: 1; stroke-dasharray: 4 4; }
.threshold.sentence, .drift.sentence { stroke: #4e79a7; } .threshold.dialogue, .drift.dialogue { stroke: #b85c00; }
.drift { fill: none; stroke-width: 2; }
.pt.sentence { fill: #4e79a7; } .pt.dialogue { fill: #b85c00; } .pt.drifted { stroke: #c0161b; stroke-width: 2; }
.sw-bar { --sw: #4e79a7; } .sw-off { --sw: #b85c00; } .sw-target { --sw: #e3f1de; } .sw-vol { --sw: #f0f3f7; }
.sw-score { --sw: #7b8da3; } .sw-moving { --sw: #222; } .sw-volmean { --sw: #8e3f86; } .sw-pass { --sw: #2e7d32; }
.sw-revised { --sw: #b85c00; } .sw-forced { --sw: #c0161b; }
.sw-lint { --sw: #8a6650; } .sw-lint-over { --sw: #c0161b; }
.sw-cell { --sw: #4e79a7; } .sw-convergence { --sw: #b85c00; } .sw-dormant { --sw: #ccc; } .sw-over { --sw: #f8d0d0; }
.sw-open { --sw: #4e79a7; } .sw-resolved { --sw: #3d8b37; } .sw-overdue { --sw: #c0161b; } .sw-range { --sw: #eef3fa; }
.sw-h1 { --sw: #4a90c4; } .sw-h2 { --sw: #1f5f9f; } .sw-h3 { --sw: #0b2f5c; } .sw-retired { --sw: #ccc; }
.sw-g0 { --sw: #4e79a7; } .sw-g1 { --sw: #e15759; } .sw-g2 { --sw: #3d8b37; } .sw-g3 { --sw: #8c8c8c; }
.sw-prd { --sw: #222; } .sw-cumulative { --sw: #e15759; }
.sw-sentence { --sw: #4e79a7; } .sw-dialogue { --sw: #b85c00; } .sw-drifted { --sw: #c0161b; }
footer { color: #555; font-size: 13px; text-align: center; }
.scroll-hint { display: none; margin: 4px 0; color: #555; font-size: 13px; }
@media (max-width: 700px) {
  .scroll-hint { display: block; }
  body { padding: 10px; }
  section { padding: 12px; }
  .chart-scroll > svg.chart { width: MINWpx; max-width: none; }
  .chart-scroll { border-right: 3px solid #e0ddd4; }
}
@media print {
  body { background: #fff; padding: 0; }
  nav { display: none; }
  section { break-inside: avoid; page-break-inside: avoid; border: 1px solid #999; }
  svg.chart, table, .summary { break-inside: avoid; }
  .chart-scroll, .table-scroll { overflow: visible; border: none; }
  .chart-scroll > svg.chart { width: 100%; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// The hatch pattern of dormant lanes and retirements (defined once, in a hidden SVG).
const DEFS: &str = r##"<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f1f1f1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" stroke-width="2"/></pattern></defs></svg>"##;

/// The Chinese of a program label `WRITING（卷内写作）` (the part in brackets).
fn plain(label: &str) -> &str {
    label
        .split_once('（')
        .and_then(|(_, r)| r.strip_suffix('）'))
        .unwrap_or(label)
}

/// The book's state for the header: `卷内写作；第 301 章在写（初稿生成中）`.
fn book_state(data: &DashboardData) -> String {
    let Some(cp) = &data.checkpoint else {
        return "进度记录读不了".to_string();
    };
    let state = plain(novel_core::context::session::state_name(
        cp.orchestrator_state,
    ));
    match cp.inflight_chapter {
        Some(n) => format!(
            "{state}；第 {n} 章在写（{}）",
            plain(stage_name(cp.pipeline_stage))
        ),
        None => format!("{state}；已写完第 {} 章", cp.last_completed_chapter),
    }
}

/// The page head: the title, the stylesheet, the policy.
fn head(out: &mut String, title: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>《{}》仪表盘</title>", esc(title));
    let css = STYLE
        .replace("FONTS", FONT_STACK)
        .replace("FONTpx", &format!("{}px", svg::FONT))
        .replace("MINWpx", &format!("{}px", svg::MIN_DRAWN_WIDTH));
    let _ = writeln!(out, "<style>{css}</style>");
    out.push_str("</head>\n<body>\n");
    out.push_str(DEFS);
}

/// One section: heading, caption, notes, why empty, summary, charts, legend, tables.
fn section(out: &mut String, data: &DashboardData, s: Section, drawn: &Drawn) {
    let (h, caption) = heading(s);
    let state = if drawn.svgs.is_empty() {
        "empty"
    } else {
        "drawn"
    };
    let _ = writeln!(out, "<section id=\"{}\" data-state=\"{state}\">", s.id());
    let _ = writeln!(out, "<h2>{h}</h2>\n<p class=\"caption\">{caption}</p>");
    for note in data.notes.of(s) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(note));
    }
    if let Some(why) = &drawn.empty {
        let _ = writeln!(out, "<p class=\"empty\">{}</p>", esc(why));
    }
    for line in &drawn.summary {
        let _ = writeln!(out, "<p class=\"summary\">{}</p>", esc(line));
    }
    if !drawn.svgs.is_empty() {
        out.push_str(
            "<p class=\"scroll-hint\">图表比屏幕宽：左右滑动查看，数字在下面的表里。</p>\n",
        );
    }
    for svg in &drawn.svgs {
        let _ = writeln!(out, "<div class=\"chart-scroll\">{svg}</div>");
    }
    if !drawn.svgs.is_empty() && !drawn.legend.is_empty() {
        out.push_str("<ul class=\"legend\">");
        for (class, label) in &drawn.legend {
            let _ = write!(out, "<li class=\"{class}\">{}</li>", esc(label));
        }
        out.push_str("</ul>\n");
    }
    for html in &drawn.html {
        out.push_str(html);
        out.push('\n');
    }
    out.push_str("</section>\n");
}

/// The whole page: the header (the headline, the book's state, when it was made), the
/// navigation, each section, then the chapter table (`chapters`, already HTML).
pub fn render(
    data: &DashboardData,
    sections: &[(Section, Drawn)],
    chapters: &str,
    made_at: &str,
) -> String {
    let title = data.title.as_deref().unwrap_or("未命名的书");
    let mut out = String::with_capacity(512 * 1024);
    head(&mut out, title);
    out.push_str("\n<main>\n<header>\n");
    let _ = writeln!(out, "<h1>《{}》仪表盘</h1>", esc(title));
    let _ = writeln!(
        out,
        "<p class=\"headline\">{}</p>",
        esc(&data.book.headline)
    );
    let _ = writeln!(
        out,
        "<p class=\"state\">状态：{} · 生成于 {}</p>",
        esc(&book_state(data)),
        esc(made_at)
    );
    out.push_str("</header>\n<nav>");
    for (s, _) in sections {
        let _ = write!(out, "<a href=\"#{}\">{}</a>", s.id(), heading(*s).0);
    }
    out.push_str("<a href=\"#chapters\">逐章数据</a></nav>\n");
    for (s, drawn) in sections {
        section(&mut out, data, *s, drawn);
    }
    out.push_str("<section id=\"chapters\" data-state=\"table\">\n<h2>逐章数据</h2>\n<p class=\"caption\">每一章的数字都在这里（点章号打开这一章的正文）；图上点一下某一章，也会跳到这里或打开正文。</p>\n");
    out.push_str(chapters);
    out.push_str("</section>\n");
    out.push_str("<footer>这个页面由 novel dashboard 根据书的文件生成；书有了新进展，重新生成即可更新。</footer>\n</main>\n</body>\n</html>\n");
    out
}
