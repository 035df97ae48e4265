//! The few SVG pieces the dashboard's charts are made of, written as text: numbers in one fixed
//! format (so the same data gives the same bytes), escaped text, a chapter axis and a value
//! axis with round ticks, and labels that never collide (thinned by their width, or nudged
//! apart). No layout engine: the browser lays out the CJK text with its fonts, so a label's
//! width is estimated on the safe side ([`text_width`]: a CJK character is one em, anything
//! else 0.62 em), and the browser test measures the real boxes.

use std::fmt::Write;

/// The drawing width of every chart (the SVG scales to the page with its `viewBox`).
pub const WIDTH: f64 = 1000.0;
/// Left margin: room for the value labels and lane names.
pub const LEFT: f64 = 96.0;
/// Right margin: room for the labels of the reference lines (通过线, 上限, 预算).
pub const RIGHT: f64 = 76.0;
/// The chart text size in drawing units (the page's stylesheet says the same: `svg.chart
/// text`). A phone shows a chart at least [`MIN_DRAWN_WIDTH`] px wide (scrolling sideways), so
/// the text is never under 11 px.
pub const FONT: f64 = 12.0;
/// The narrowest a chart is drawn (px): 12 units × 940 / 1000 = 11.3 px.
pub const MIN_DRAWN_WIDTH: u32 = 940;
/// At most this many marks along the chapter axis: a longer book is drawn in runs of
/// chapters (a mark per run), every chapter still in the data table.
pub const MAX_MARKS: u32 = 500;

/// The width of `s` in drawing units at [`FONT`], on the safe side.
pub fn text_width(s: &str) -> f64 {
    s.chars()
        .map(|c| if c.is_ascii() { 0.62 } else { 1.0 })
        .sum::<f64>()
        * FONT
}

/// Of labels placed left to right (`start` x and width each), which to keep so that no two
/// overlap (a gap of half an em between them): greedy from the left.
pub fn thin(labels: &[(f64, f64)]) -> Vec<bool> {
    let mut end = f64::NEG_INFINITY;
    labels
        .iter()
        .map(|&(x, w)| {
            let keep = x >= end + FONT / 2.0;
            if keep {
                end = x + w;
            }
            keep
        })
        .collect()
}

/// Labels in the right margin beside their lines at `y`, nudged apart vertically so that none
/// overlaps another and none reaches below `floor` (the chapter labels' row): (y, text, class)
/// in any order; returns the SVG.
pub fn right_labels(x1: f64, floor: f64, labels: &[(f64, String, &str)]) -> String {
    let mut order: Vec<&(f64, String, &str)> = labels.iter().collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut ys: Vec<f64> = Vec::new();
    for (y, _, _) in &order {
        let last = ys.last().copied().unwrap_or(f64::NEG_INFINITY);
        ys.push((*y + FONT / 3.0).max(last + FONT * 1.5));
    }
    // Too low: the whole stack moves up, keeping its spacing.
    let lift = ys.last().map_or(0.0, |y| (y - floor).max(0.0));
    let mut out = String::new();
    for ((_, t, class), y) in order.iter().zip(ys) {
        out.push_str(&text(class, x1 + 4.0, y - lift, "start", t));
    }
    out
}

/// A coordinate or length, rounded to 0.1 and written without a trailing `.0` (`12`, `3.5`,
/// never `-0`).
pub fn n(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == 0.0 || !r.is_finite() {
        return "0".to_string();
    }
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// Text for an element or an attribute: the book's one XML escape
/// ([`novel_store::epub::escape`], which also drops what XML cannot carry).
pub fn esc(s: &str) -> String {
    novel_store::epub::escape(s)
}

/// A chapter axis: chapters `first..=last` in equal slots across the plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub first: u32,
    pub last: u32,
    pub x0: f64,
    pub x1: f64,
}

impl Axis {
    pub fn new(first: u32, last: u32) -> Axis {
        Axis::with_left(first, last, LEFT)
    }

    /// An axis whose plot starts at `left` (a chart with long row labels).
    pub fn with_left(first: u32, last: u32, left: f64) -> Axis {
        Axis {
            first,
            last: last.max(first),
            x0: left,
            x1: WIDTH - RIGHT,
        }
    }

    pub fn slots(&self) -> u32 {
        self.last - self.first + 1
    }

    /// Width of one chapter's slot.
    pub fn slot(&self) -> f64 {
        (self.x1 - self.x0) / f64::from(self.slots())
    }

    /// Left edge of chapter `c`'s slot (clamped to the axis).
    pub fn x(&self, c: u32) -> f64 {
        let c = c.clamp(self.first, self.last + 1);
        self.x0 + f64::from(c - self.first) * self.slot()
    }

    /// Centre of chapter `c`'s slot.
    pub fn mid(&self, c: u32) -> f64 {
        self.x(c) + self.slot() / 2.0
    }

    /// How many chapters one mark stands for (1 up to [`MAX_MARKS`] chapters).
    pub fn run(&self) -> u32 {
        self.slots().div_ceil(MAX_MARKS).max(1)
    }

    /// The left edge and width of the mark of chapters `[a, z]`, with a gap while wide enough.
    pub fn mark(&self, a: u32, z: u32) -> (f64, f64) {
        let (x, w) = (self.x(a), self.x(z + 1) - self.x(a));
        if w >= 4.0 {
            (x + w * 0.1, w * 0.8)
        } else {
            (x, w)
        }
    }

    /// Round chapter numbers to label: at most about a dozen, never closer than a label's
    /// width.
    pub fn ticks(&self) -> Vec<u32> {
        let span = self.slots();
        let room = text_width(&format!("{}", self.last)) + FONT;
        let step = [
            1u32, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000,
        ]
        .into_iter()
        .find(|s| span / s <= 12 && f64::from(*s) * self.slot() >= room)
        .unwrap_or(10_000);
        let mut out = vec![self.first];
        let mut t = (self.first / step + 1) * step;
        while t <= self.last {
            let gap = f64::from(t - out[out.len() - 1]) * self.slot();
            if t - out[out.len() - 1] >= step / 2 && gap >= room {
                out.push(t);
            }
            t += step;
        }
        out
    }

    /// The chapter labels under a plot whose bottom edge is at `y`, the unit (章) after the
    /// last of them.
    pub fn labels(&self, y: f64) -> String {
        let mut s = format!(
            r#"<g class="axis"><line x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
            n(self.x0),
            n(y),
            n(self.x1),
            n(y)
        );
        let mut right = self.x1;
        for t in self.ticks() {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{t}</text>"#,
                n(self.mid(t)),
                n(y + 17.0)
            );
            right = right.max(self.mid(t) + text_width(&t.to_string()) / 2.0);
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="start" class="unit">章</text></g>"#,
            n(right + FONT / 2.0),
            n(y + 17.0)
        );
        s
    }
}

/// A value axis from `lo` to `hi` drawn between `y_top` and `y_bottom`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub y_top: f64,
    pub y_bottom: f64,
}

impl Scale {
    /// From 0 (or `lo`) to a round number at or above `max`.
    pub fn to_round(lo: f64, max: f64, y_top: f64, y_bottom: f64) -> Scale {
        let step = nice_step((max - lo).max(1e-9) / 4.0);
        let hi = lo + ((max - lo) / step).ceil().max(1.0) * step;
        Scale {
            lo,
            hi,
            y_top,
            y_bottom,
        }
    }

    pub fn y(&self, v: f64) -> f64 {
        let t = ((v - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0);
        self.y_bottom - t * (self.y_bottom - self.y_top)
    }

    /// Gridlines and labels at round values; `fmt` writes a value.
    pub fn grid(&self, x0: f64, x1: f64, fmt: &dyn Fn(f64) -> String) -> String {
        let step = nice_step((self.hi - self.lo) / 4.0);
        let mut s = String::from(r#"<g class="grid">"#);
        let mut k = 0.0;
        loop {
            let v = self.lo + k * step;
            if v > self.hi + step * 1e-6 {
                break;
            }
            let y = self.y(v);
            let _ = write!(
                s,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}"/><text x="{}" y="{}" text-anchor="end">{}</text>"#,
                n(x0),
                n(y),
                n(x1),
                n(y),
                n(x0 - 4.0),
                n(y + 4.0),
                esc(&fmt(v))
            );
            k += 1.0;
        }
        s.push_str("</g>");
        s
    }
}

/// 1, 2 or 5 × a power of ten, at or above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= raw - raw * 1e-9 {
            return m * p;
        }
    }
    10.0 * p
}

/// The start of a chart.
pub fn open(chart: &str, height: f64, label: &str) -> String {
    format!(
        r#"<svg class="chart" data-chart="{chart}" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
        n(WIDTH),
        n(height),
        esc(label)
    )
}

/// The title of a chart, above its plot on the left.
pub fn panel_title(s: &str) -> String {
    text("panel-title", LEFT, 15.0, "start", s)
}

/// A mark that links somewhere (a chapter's file, its row in the data table).
pub fn link(href: &str, inner: &str) -> String {
    format!(r#"<a href="{}">{inner}</a>"#, esc(href))
}

/// A rectangle with a class and an optional tooltip.
pub fn rect(class: &str, x: f64, y: f64, w: f64, h: f64, title: Option<&str>) -> String {
    let attrs = format!(
        r#"class="{class}" x="{}" y="{}" width="{}" height="{}""#,
        n(x),
        n(y),
        n(w.max(0.0)),
        n(h.max(0.0))
    );
    match title {
        Some(t) => format!("<rect {attrs}><title>{}</title></rect>", esc(t)),
        None => format!("<rect {attrs}/>"),
    }
}

/// A horizontal line across `[x0, x1]` at `y`.
pub fn hline(class: &str, x0: f64, x1: f64, y: f64) -> String {
    format!(
        r#"<line class="{class}" x1="{}" y1="{y}" x2="{}" y2="{y}"/>"#,
        n(x0),
        n(x1),
        y = n(y)
    )
}

/// A label.
pub fn text(class: &str, x: f64, y: f64, anchor: &str, s: &str) -> String {
    format!(
        r#"<text class="{class}" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
        n(x),
        n(y),
        esc(s)
    )
}

/// A polyline through the points, broken where a point is missing: one `<path>`.
pub fn path(class: &str, points: &[Option<(f64, f64)>], extra: &str) -> String {
    let mut d = String::new();
    let mut pen_down = false;
    for p in points {
        match p {
            Some((x, y)) => {
                let _ = write!(d, "{}{} {}", if pen_down { "L" } else { "M" }, n(*x), n(*y));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    format!(r#"<path class="{class}"{extra} d="{d}"/>"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_one_format() {
        assert_eq!(n(12.0), "12");
        assert_eq!(n(3.46), "3.5");
        assert_eq!(n(-0.01), "0");
        assert_eq!(n(-2.25), "-2.3");
        assert_eq!(n(f64::NAN), "0");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn the_chapter_axis_has_equal_slots_and_round_ticks() {
        let a = Axis::new(1, 500);
        assert_eq!(a.slots(), 500);
        assert!((a.x(501) - a.x1).abs() < 1e-9);
        assert_eq!(
            a.ticks(),
            vec![1, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500]
        );
        assert_eq!(a.run(), 1);
        assert_eq!(Axis::new(1, 2000).run(), 4);
        assert_eq!(Axis::new(1, 3).ticks(), vec![1, 2, 3]);
        assert_eq!(Axis::new(5, 5).slots(), 1);
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(780.0), 1000.0);
        assert_eq!(nice_step(120.0), 200.0);
        let s = Scale::to_round(0.0, 3120.0, 10.0, 110.0);
        assert_eq!(s.hi, 4000.0);
        assert_eq!(s.y(0.0), 110.0);
        assert_eq!(s.y(4000.0), 10.0);
    }

    #[test]
    fn labels_are_thinned_by_width_and_nudged_apart() {
        // Three labels 30 wide at 0, 20, 60: the second would overlap the first.
        assert_eq!(
            thin(&[(0.0, 30.0), (20.0, 30.0), (60.0, 30.0)]),
            [true, false, true]
        );
        let svg = right_labels(
            900.0,
            500.0,
            &[(100.0, "a".into(), "l"), (101.0, "b".into(), "l")],
        );
        let ys: Vec<f64> = svg
            .split("y=\"")
            .skip(1)
            .map(|p| p.split('"').next().unwrap().parse().unwrap())
            .collect();
        assert!(ys[1] - ys[0] >= FONT, "{svg}");
        // Chapter ticks never closer than a label's width, at any length.
        for last in [3, 60, 300, 1000, 2000, 5000] {
            let a = Axis::new(1, last);
            let t = a.ticks();
            for w in t.windows(2) {
                assert!(
                    a.mid(w[1]) - a.mid(w[0]) >= text_width(&last.to_string()),
                    "{last}: {t:?}"
                );
            }
        }
    }

    #[test]
    fn a_path_breaks_at_a_missing_point() {
        let p = path(
            "l",
            &[Some((0.0, 1.0)), None, Some((2.0, 3.0)), Some((4.0, 5.0))],
            "",
        );
        assert_eq!(p, r#"<path class="l" d="M0 1M2 3L4 5"/>"#);
    }
}
