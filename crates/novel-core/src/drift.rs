//! 风格校准 (PRD §6 Layer 3): the last chapters against the style-profile baseline — the one
//! rule every surface reads (`novel style drift`, the reviews, `novel status`, the dashboard,
//! through `novel_store::figures`).
//!
//! A window's figures are sums of per-chapter [`StyleSample`]s (what `novel-text` measures of a
//! chapter: text characters, sentences, characters inside dialogue), so a window measured at
//! once and one added up chapter by chapter give the same numbers.
//!
//! Deviation = |current − baseline| / baseline. Drift when the average sentence length deviates
//! by more than `sentence_length` (0.20) or the dialogue ratio by more than `dialogue_ratio`
//! (0.15); recovered when every deviation is below `recovery` (0.10). Between the two a drift
//! already on record is kept (hysteresis), so the directives stay until the style is back.
//! A baseline that is missing or zero is skipped (a relative deviation from 0 means nothing).
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

use serde::Serialize;

use crate::model::Extra;
use crate::model::settings::DriftThresholds;
use crate::model::style::{DriftMetric, StyleDrift, StyleProfile};

/// What the drift rule reads of a chapter (or of a window, added up): the text characters of
/// its sentences (汉字, letters, digits), its sentences, and the text characters inside
/// dialogue — `novel_text::metrics`' definitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StyleSample {
    pub text_chars: usize,
    pub sentences: usize,
    pub dialogue: usize,
}

impl StyleSample {
    /// The samples added up.
    pub fn sum<'a>(samples: impl IntoIterator<Item = &'a StyleSample>) -> StyleSample {
        samples
            .into_iter()
            .fold(StyleSample::default(), |a, s| StyleSample {
                text_chars: a.text_chars + s.text_chars,
                sentences: a.sentences + s.sentences,
                dialogue: a.dialogue + s.dialogue,
            })
    }

    /// 平均句长 (characters a sentence), to two decimals.
    pub fn avg_sentence_length(&self) -> f64 {
        (ratio(self.text_chars, self.sentences) * 100.0).round() / 100.0
    }

    /// 对话占比 (dialogue characters / text characters), to three decimals.
    pub fn dialogue_ratio(&self) -> f64 {
        (ratio(self.dialogue, self.text_chars) * 1000.0).round() / 1000.0
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// What to do with `style-drift.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftStatus {
    /// Over a threshold: write the file.
    Drifted,
    /// A recorded drift not yet back inside the recovery band: keep (rewrite) the file.
    Holding,
    /// A recorded drift is back inside the band: remove the file.
    Recovered,
    /// No drift on record and none now: nothing to do.
    Stable,
}

impl DriftStatus {
    /// The verdict in Chinese (`style drift`, the reviews, status, the dashboard).
    pub fn label(self) -> &'static str {
        match self {
            DriftStatus::Drifted => "风格漂移",
            DriftStatus::Holding => "仍未回到基线（保留纠偏指令）",
            DriftStatus::Recovered => "已回归基线",
            DriftStatus::Stable => "风格稳定",
        }
    }

    /// `style-drift.json` is written (or rewritten) with the assessment's directives.
    pub fn keeps_file(self) -> bool {
        matches!(self, DriftStatus::Drifted | DriftStatus::Holding)
    }

    /// `style-drift.json` is removed: the style is back.
    pub fn removes_file(self) -> bool {
        self == DriftStatus::Recovered
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftAssessment {
    pub status: DriftStatus,
    pub metrics: Vec<DriftMetric>,
    /// The file to write (for `drifted` and `holding`).
    pub drift: Option<StyleDrift>,
}

/// No usable baseline in the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoBaseline;

fn deviation(current: f64, baseline: f64) -> f64 {
    ((current - baseline).abs() / baseline * 10_000.0).round() / 10_000.0
}

fn metric(name: &str, baseline: f64, current: f64, threshold: f64) -> DriftMetric {
    let dev = deviation(current, baseline);
    DriftMetric {
        name: name.to_string(),
        baseline,
        current,
        deviation: dev,
        drifted: dev > threshold,
        extra: Extra::new(),
    }
}

fn directive(m: &DriftMetric, chapters: u32) -> String {
    let pct = (m.deviation * 100.0).round();
    let higher = m.current > m.baseline;
    match (m.name.as_str(), higher) {
        ("avg_sentence_length", true) => format!(
            "近 {chapters} 章平均句长 {:.1} 字，比基线 {} 字长 {pct}%：长句拆短，多用动作推进的短句，少用连串的修饰和从句。",
            m.current, m.baseline
        ),
        ("avg_sentence_length", false) => format!(
            "近 {chapters} 章平均句长 {:.1} 字，比基线 {} 字短 {pct}%：把碎短句合并，补上完整的因果句和必要的描写，别一味短句。",
            m.current, m.baseline
        ),
        ("dialogue_ratio", true) => format!(
            "近 {chapters} 章对话占比 {:.0}%，比基线 {:.0}% 高 {pct}%：减少来回对话，用叙述和动作交代信息。",
            m.current * 100.0,
            m.baseline * 100.0
        ),
        _ => format!(
            "近 {chapters} 章对话占比 {:.0}%，比基线 {:.0}% 低 {pct}%：让人物开口，用对话推进冲突，压缩大段叙述。",
            m.current * 100.0,
            m.baseline * 100.0
        ),
    }
}

/// Compares `current` (chapters `window[0]..=window[1]`, added up) with the profile.
/// `recorded` is the drift on record (`style-drift.json` with `active: true`), if any.
pub fn assess(
    profile: &StyleProfile,
    current: &StyleSample,
    thresholds: &DriftThresholds,
    window: [u32; 2],
    recorded: bool,
) -> Result<DriftAssessment, NoBaseline> {
    let mut metrics = Vec::new();
    if let Some(base) = profile.avg_sentence_length.filter(|b| *b > 0.0) {
        metrics.push(metric(
            "avg_sentence_length",
            base,
            current.avg_sentence_length(),
            thresholds.sentence_length,
        ));
    }
    if let Some(base) = profile.dialogue_ratio.filter(|b| *b > 0.0) {
        metrics.push(metric(
            "dialogue_ratio",
            base,
            current.dialogue_ratio(),
            thresholds.dialogue_ratio,
        ));
    }
    if metrics.is_empty() {
        return Err(NoBaseline);
    }
    let drifted = metrics.iter().any(|m| m.drifted);
    let recovered = metrics.iter().all(|m| m.deviation < thresholds.recovery);
    let status = match (drifted, recorded, recovered) {
        (true, _, _) => DriftStatus::Drifted,
        (false, true, true) => DriftStatus::Recovered,
        (false, true, false) => DriftStatus::Holding,
        (false, false, _) => DriftStatus::Stable,
    };
    let chapters = window[1].saturating_sub(window[0]) + 1;
    let drift = matches!(status, DriftStatus::Drifted | DriftStatus::Holding).then(|| {
        // While holding, keep steering every metric not yet back inside the recovery band.
        let directives = metrics
            .iter()
            .filter(|m| {
                m.drifted || (status == DriftStatus::Holding && m.deviation >= thresholds.recovery)
            })
            .map(|m| directive(m, chapters))
            .collect();
        StyleDrift {
            active: true,
            detected_chapter: window[1].max(1),
            window,
            metrics: metrics.clone(),
            directives,
            updated_at: None,
            extra: Extra::new(),
        }
    });
    Ok(DriftAssessment {
        status,
        metrics,
        drift,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(len: Option<f64>, ratio: Option<f64>) -> StyleProfile {
        let mut p: StyleProfile = serde_json::from_str("{}").unwrap();
        p.avg_sentence_length = len;
        p.dialogue_ratio = ratio;
        p
    }

    /// A sample whose average sentence length is `avg` and dialogue ratio `ratio`.
    fn metrics(avg: f64, ratio: f64) -> StyleSample {
        let text_chars = (avg * 1000.0).round() as usize;
        StyleSample {
            text_chars,
            sentences: 1000,
            dialogue: (ratio * text_chars as f64).round() as usize,
        }
    }

    #[test]
    fn drift_table() {
        let t = DriftThresholds::default();
        let p = profile(Some(20.0), Some(0.40));
        // (current avg, current ratio, recorded, status)
        let cases = [
            (20.0, 0.40, false, DriftStatus::Stable),
            (24.0, 0.40, false, DriftStatus::Stable), // 0.20 is not over 0.20
            (24.2, 0.40, false, DriftStatus::Drifted), // 0.21
            (15.8, 0.40, false, DriftStatus::Drifted), // shorter counts too
            (20.0, 0.47, false, DriftStatus::Drifted), // ratio 0.175 > 0.15
            (20.0, 0.45, false, DriftStatus::Stable), // ratio 0.125
            (21.0, 0.42, true, DriftStatus::Recovered), // 0.05, 0.05
            (22.0, 0.40, true, DriftStatus::Holding), // 0.10 is not below 0.10
            (20.0, 0.45, true, DriftStatus::Holding), // 0.125
        ];
        for (avg, ratio, recorded, want) in cases {
            let a = assess(&p, &metrics(avg, ratio), &t, [6, 10], recorded).unwrap();
            assert_eq!(a.status, want, "{avg} {ratio} {recorded}");
            assert_eq!(
                a.drift.is_some(),
                matches!(want, DriftStatus::Drifted | DriftStatus::Holding)
            );
        }
    }

    #[test]
    fn drift_file_carries_window_and_directives() {
        let t = DriftThresholds::default();
        let a = assess(
            &profile(Some(18.0), Some(0.4)),
            &metrics(25.0, 0.41),
            &t,
            [6, 10],
            false,
        )
        .unwrap();
        let d = a.drift.unwrap();
        assert_eq!(
            (d.active, d.detected_chapter, d.window),
            (true, 10, [6, 10])
        );
        assert_eq!(d.directives.len(), 1);
        assert!(d.directives[0].contains("长句拆短"), "{}", d.directives[0]);
        assert!(d.metrics[0].drifted && !d.metrics[1].drifted);
        // The file validates against its own schema.
        let v = serde_json::to_value(&d).unwrap();
        assert!(
            crate::validate::check_document("style-drift.json", crate::FileKind::StyleDrift, &v)
                .is_empty()
        );
    }

    #[test]
    fn missing_or_zero_baseline() {
        let t = DriftThresholds::default();
        assert_eq!(
            assess(
                &profile(None, Some(0.0)),
                &metrics(1.0, 0.1),
                &t,
                [1, 5],
                false
            ),
            Err(NoBaseline)
        );
        let a = assess(
            &profile(Some(18.0), None),
            &metrics(18.0, 0.9),
            &t,
            [1, 5],
            false,
        )
        .unwrap();
        assert_eq!(a.metrics.len(), 1);
    }
}
