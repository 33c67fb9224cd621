//! Regression gates: bounds on an experiment's figures, written in its TOML file as a
//! `[gate.MODEL]` table per model, and checked by `gpucast reproduce --check` on the
//! computed metrics (never on rendered text).
//!
//! ```toml
//! [gate.hybrid]
//! pooled_mape_max = 27          # MAPE % over every target
//! worst_target_mape_max = 33    # MAPE % of the worst target
//! coverage = [85, 95]           # % of measurements inside the calibrated 90 % interval, pooled
//! spearman_min = 0.90           # mean Spearman over the tuning spaces, pooled
//! target_mape_max = { "NVIDIA TITAN V" = 35 }   # MAPE % of named targets
//! max_harm_vs = "analytical"    # the model the next three compare with
//! max_harm_points = 1.4         # per target (and pooled): MAPE at most this many points above it
//! min_rows = 20                 # ... on targets of at least this many rows
//! per_corpus_harm_points = 1.0  # per corpus (the runs' source): the same, pooled per corpus
//! ```
//!
//! Every key is optional; an unknown key is an error naming the file.

use super::Outcome;
use crate::evaluation::Metrics;
use std::collections::BTreeMap;

/// The bounds of one model of an experiment (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelGate {
    /// Most pooled MAPE (%).
    pub pooled_mape_max: Option<f64>,
    /// Most MAPE (%) of any target.
    pub worst_target_mape_max: Option<f64>,
    /// Least and most share (%) of the measurements inside the pooled interval, which
    /// must be the calibrated 90 % one.
    pub coverage: Option<Vec<f64>>,
    /// Least mean Spearman rank correlation over the tuning spaces (pooled).
    pub spearman_min: Option<f64>,
    /// Most MAPE (%) of each named target (its name as the results give it).
    #[serde(default)]
    pub target_mape_max: BTreeMap<String, f64>,
    /// The model the harm bounds compare with.
    pub max_harm_vs: Option<String>,
    /// Most points of MAPE above `max_harm_vs` on any target (and pooled) of at least
    /// `min_rows` rows.
    pub max_harm_points: Option<f64>,
    /// Targets with fewer rows are not judged by `max_harm_points` (one configuration
    /// moves their MAPE by points).
    pub min_rows: Option<usize>,
    /// Most points of MAPE above `max_harm_vs` on any corpus (the runs' `source`).
    pub per_corpus_harm_points: Option<f64>,
}

/// An experiment's gates, by model.
pub type Gates = BTreeMap<String, ModelGate>;

/// Check the gates' own consistency against the experiment's models: every model
/// named is one the experiment runs, bounds are ordered, harm bounds name a model.
pub fn validate(gates: &Gates, models: &[String]) -> std::result::Result<(), String> {
    let known = |m: &str| models.iter().any(|x| x == m);
    for (model, g) in gates {
        let at = |key: &str| format!("gate.{model}.{key}");
        if !known(model) {
            return Err(format!(
                "[gate.{model}]: '{model}' is not one of the experiment's models ({})",
                models.join(", ")
            ));
        }
        if let Some(c) = &g.coverage {
            let ordered = matches!(c[..], [lo, hi] if (0.0..=100.0).contains(&lo) && (0.0..=100.0).contains(&hi) && lo <= hi);
            if !ordered {
                return Err(format!(
                    "{} = {c:?}: two percentages, the least first",
                    at("coverage")
                ));
            }
        }
        let bounds = [
            ("pooled_mape_max", g.pooled_mape_max),
            ("worst_target_mape_max", g.worst_target_mape_max),
            ("max_harm_points", g.max_harm_points),
            ("per_corpus_harm_points", g.per_corpus_harm_points),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain(
            g.target_mape_max
                .iter()
                .map(|(t, v)| (format!("target_mape_max.\"{t}\""), Some(*v))),
        );
        for (key, v) in bounds {
            if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(format!("{} = {v}: a bound is a number >= 0", at(&key)));
            }
        }
        if let Some(v) = g.spearman_min.filter(|v| !(-1.0..=1.0).contains(v)) {
            return Err(format!(
                "{} = {v}: a rank correlation is from -1 to 1",
                at("spearman_min")
            ));
        }
        match (&g.max_harm_vs, g.max_harm_points, g.per_corpus_harm_points) {
            (None, Some(_), _) | (None, _, Some(_)) => {
                return Err(format!(
                    "{}: a harm bound needs `max_harm_vs`, the model it compares with",
                    at("max_harm_points")
                ))
            }
            (Some(vs), _, _) if !known(vs) || vs == model => {
                return Err(format!(
                    "{} = {vs:?}: must be another of the experiment's models ({})",
                    at("max_harm_vs"),
                    models.join(", ")
                ))
            }
            (Some(vs), None, None) => {
                return Err(format!(
                    "{} = {vs:?}: give `max_harm_points` or `per_corpus_harm_points`",
                    at("max_harm_vs")
                ))
            }
            _ => {}
        }
        if g.min_rows.is_some() && g.max_harm_points.is_none() {
            return Err(format!(
                "{}: only `max_harm_points` uses it",
                at("min_rows")
            ));
        }
    }
    Ok(())
}

/// What a gate bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PooledMape,
    WorstTargetMape,
    Coverage,
    Spearman,
    TargetMape,
    /// MAPE points above the compared model, per target.
    Harm,
    /// MAPE points above the compared model, per corpus.
    CorpusHarm,
}

/// The bound of a gate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
    Within(f64, f64),
}

impl Bound {
    /// Whether `v` keeps the bound (NaN never does).
    pub fn holds(&self, v: f64) -> bool {
        match *self {
            Bound::AtMost(b) => v <= b,
            Bound::AtLeast(b) => v >= b,
            Bound::Within(lo, hi) => (lo..=hi).contains(&v),
        }
    }
}

/// One figure that broke its bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// Where: a target or corpus (None: the pooled figure).
    pub at: Option<String>,
    /// The figure judged (for harm: the points above the compared model).
    pub value: f64,
    /// Why it was judged as it was, when a number does not say it ("no tuning
    /// space", "the interval is spread, not calibrated", "not scored").
    pub note: Option<String>,
}

/// One gate checked: an experiment's model against one bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub experiment: String,
    pub model: String,
    pub kind: Kind,
    pub bound: Bound,
    /// The compared model (harm gates) and the least rows judged (per-target harm).
    pub vs: Option<String>,
    pub min_rows: Option<usize>,
    /// The figure the line reports: the value judged, or for a gate over several
    /// targets or corpora the worst of them and where it is.
    pub value: f64,
    pub at: Option<String>,
    /// Empty: the gate holds.
    pub breaches: Vec<Breach>,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.breaches.is_empty()
    }
}

/// Every gate of every outcome (experiments in order, models by name, then bounds in
/// the order of [`ModelGate`]'s fields).
pub fn check(outcomes: &[Outcome]) -> Vec<Check> {
    let mut out = Vec::new();
    for o in outcomes {
        for (model, gate) in &o.experiment.gate {
            out.extend(check_model(o, model, gate));
        }
    }
    out
}

/// The results of `model` in an outcome: (target, metrics), "all" for the pooled row.
fn results<'o>(o: &'o Outcome, model: &str) -> Vec<(&'o str, &'o Metrics)> {
    o.evaluation
        .results
        .iter()
        .filter(|r| r.model == model && r.metrics.n > 0)
        .map(|r| (r.target.as_str(), &r.metrics))
        .collect()
}

/// The gates of one model of one outcome.
pub fn check_model(o: &Outcome, model: &str, g: &ModelGate) -> Vec<Check> {
    let rows = results(o, model);
    let pooled = rows.iter().find(|(t, _)| *t == "all").map(|(_, m)| *m);
    let mut out = Vec::new();
    let mut push = |kind, bound: Bound, value: f64, at: Option<String>, note: Option<String>| {
        let breaches = if bound.holds(value) && note.is_none() {
            vec![]
        } else {
            vec![Breach {
                at: at.clone(),
                value,
                note,
            }]
        };
        out.push(Check {
            experiment: o.experiment.name.clone(),
            model: model.to_string(),
            kind,
            bound,
            vs: None,
            min_rows: None,
            value,
            at,
            breaches,
        });
    };
    let not_scored = || Some("not scored".to_string());
    if let Some(b) = g.pooled_mape_max {
        let m = pooled.map_or(f64::NAN, |m| m.mape);
        push(
            Kind::PooledMape,
            Bound::AtMost(b),
            m,
            None,
            pooled.is_none().then(not_scored).flatten(),
        );
    }
    if let Some(b) = g.worst_target_mape_max {
        let worst = rows
            .iter()
            .filter(|(t, _)| *t != "all")
            .max_by(|a, b| a.1.mape.total_cmp(&b.1.mape));
        match worst {
            Some((t, m)) => push(
                Kind::WorstTargetMape,
                Bound::AtMost(b),
                m.mape,
                Some(t.to_string()),
                None,
            ),
            None => push(
                Kind::WorstTargetMape,
                Bound::AtMost(b),
                f64::NAN,
                None,
                not_scored(),
            ),
        }
    }
    if let Some(&[lo, hi]) = g.coverage.as_deref() {
        let (value, note) = match pooled {
            None => (f64::NAN, not_scored()),
            Some(m) if m.interval != "90%" => (
                100.0 * m.interval_coverage,
                Some(format!(
                    "the interval is '{}', not the calibrated 90 %",
                    if m.interval.is_empty() {
                        "none"
                    } else {
                        &m.interval
                    }
                )),
            ),
            Some(m) => (100.0 * m.interval_coverage, None),
        };
        push(Kind::Coverage, Bound::Within(lo, hi), value, None, note);
    }
    if let Some(b) = g.spearman_min {
        let (value, note) = match pooled {
            None => (f64::NAN, not_scored()),
            Some(m) if m.tuning_spaces == 0 => (f64::NAN, Some("no tuning space".to_string())),
            Some(m) => (m.spearman, None),
        };
        push(Kind::Spearman, Bound::AtLeast(b), value, None, note);
    }
    for (target, &b) in &g.target_mape_max {
        match rows.iter().find(|(t, _)| t == target) {
            Some((_, m)) => push(
                Kind::TargetMape,
                Bound::AtMost(b),
                m.mape,
                Some(target.clone()),
                None,
            ),
            None => push(
                Kind::TargetMape,
                Bound::AtMost(b),
                f64::NAN,
                Some(target.clone()),
                not_scored(),
            ),
        }
    }
    if let (Some(vs), Some(points)) = (&g.max_harm_vs, g.max_harm_points) {
        let min_rows = g.min_rows.unwrap_or(0);
        let theirs = results(o, vs);
        let harms: Vec<(String, f64)> = rows
            .iter()
            .filter(|(_, m)| m.n >= min_rows)
            .filter_map(|(t, m)| {
                let other = theirs.iter().find(|(x, _)| x == t)?.1;
                Some((t.to_string(), m.mape - other.mape))
            })
            .collect();
        out.push(harm_check(
            o,
            model,
            Kind::Harm,
            vs,
            Some(min_rows),
            points,
            harms,
        ));
    }
    if let (Some(vs), Some(points)) = (&g.max_harm_vs, g.per_corpus_harm_points) {
        let corpora = crate::report::per_corpus_results(&o.evaluation);
        let harms: Vec<(String, f64)> = corpora
            .iter()
            .filter(|c| c.model == model)
            .filter_map(|c| {
                let other = corpora
                    .iter()
                    .find(|x| x.model == *vs && x.corpus == c.corpus)?;
                Some((c.corpus.clone(), c.metrics.mape - other.metrics.mape))
            })
            .collect();
        out.push(harm_check(
            o,
            model,
            Kind::CorpusHarm,
            vs,
            None,
            points,
            harms,
        ));
    }
    out
}

/// A harm gate over (target or corpus, points above the compared model).
fn harm_check(
    o: &Outcome,
    model: &str,
    kind: Kind,
    vs: &str,
    min_rows: Option<usize>,
    points: f64,
    harms: Vec<(String, f64)>,
) -> Check {
    let bound = Bound::AtMost(points);
    let worst = harms.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let mut breaches: Vec<Breach> = harms
        .iter()
        .filter(|(_, h)| !bound.holds(*h))
        .map(|(at, h)| Breach {
            at: Some(at.clone()),
            value: *h,
            note: None,
        })
        .collect();
    if harms.is_empty() {
        breaches.push(Breach {
            at: None,
            value: f64::NAN,
            note: Some(format!("nothing scored by both {model} and {vs}")),
        });
    }
    Check {
        experiment: o.experiment.name.clone(),
        model: model.to_string(),
        kind,
        bound,
        vs: Some(vs.to_string()),
        min_rows,
        value: worst.map_or(f64::NAN, |w| w.1),
        at: worst.map(|w| w.0.clone()),
        breaches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::{Evaluation, Record, ResultRow};
    use crate::experiments::Experiment;
    use std::sync::Arc;

    /// SYNTHETIC metrics: a MAPE on n rows, a calibrated 90 % interval covering
    /// `coverage` (a fraction), Spearman over 3 tuning spaces.
    fn metrics(n: usize, mape: f64, coverage: f64, spearman: f64) -> Metrics {
        Metrics {
            n,
            mape,
            interval_coverage: coverage,
            interval: "90%".into(),
            spearman,
            tuning_spaces: 3,
            ..Default::default()
        }
    }

    fn row(model: &str, target: &str, m: Metrics) -> ResultRow {
        ResultRow {
            model: model.into(),
            target: target.into(),
            metrics: m,
        }
    }

    /// A SYNTHETIC scored record: `pred_ms` against a measured 1 ms, of corpus `source`.
    fn record(model: &str, source: &str, pred_ms: f64) -> Record {
        Record {
            model: model.into(),
            target: Arc::from("GPU A"),
            kernel: Arc::from("k"),
            config: Arc::from("c"),
            category: None,
            source: Some(Arc::from(source)),
            work: 1.0,
            measured_ms: 1.0,
            pred_ms,
            pred_lo_ms: pred_ms * 0.5,
            pred_hi_ms: pred_ms * 2.0,
            interval: crate::models::Interval::Calibrated(0.9),
            bound: crate::features::Bound::Dram,
            launch_bound: false,
        }
    }

    /// An experiment "x" with analytical and hybrid and the gate `gate` (TOML), its
    /// SYNTHETIC results: pooled, GPU A (30 rows), GPU B (10 rows); corpora c1 and c2
    /// (hybrid 2 points worse on c2).
    fn outcome(gate: &str, hybrid: [Metrics; 3]) -> Outcome {
        let toml = format!(
            "name = \"x\"\ntitle = \"x\"\nprotocol = {{ name = \"logo\" }}\nmodels = [\"analytical\", \"hybrid\"]\n{gate}"
        );
        let experiment: Experiment = toml::from_str(&toml).unwrap();
        validate(&experiment.gate, &experiment.models).unwrap();
        let [pooled, a, b] = hybrid;
        let mut records = Vec::new();
        for (source, a_err, h_err) in [("c1", 1.2, 1.2), ("c2", 1.2, 1.22)] {
            records.push(record("analytical", source, a_err));
            records.push(record("hybrid", source, h_err));
        }
        Outcome {
            experiment,
            evaluation: Evaluation {
                protocol: "logo".into(),
                results: vec![
                    row("analytical", "all", metrics(40, 20.0, 0.9, 0.9)),
                    row("analytical", "GPU A", metrics(30, 18.0, 0.9, 0.9)),
                    row("analytical", "GPU B", metrics(10, 26.0, 0.9, 0.9)),
                    row("hybrid", "all", pooled),
                    row("hybrid", "GPU A", a),
                    row("hybrid", "GPU B", b),
                ],
                records,
                ..Default::default()
            },
            seconds: 0.0,
            rooflines: None,
        }
    }

    /// The hybrid's SYNTHETIC figures of a passing run: pooled 19 %, GPU A 18.5 %,
    /// GPU B 25 %, coverage 90 %, Spearman 0.95.
    fn good() -> [Metrics; 3] {
        [
            metrics(40, 19.0, 0.9, 0.95),
            metrics(30, 18.5, 0.9, 0.95),
            metrics(10, 25.0, 0.9, 0.95),
        ]
    }

    const GATE: &str = r#"
[gate.hybrid]
pooled_mape_max = 20
worst_target_mape_max = 26
coverage = [85, 95]
spearman_min = 0.9
target_mape_max = { "GPU A" = 19 }
max_harm_vs = "analytical"
max_harm_points = 1.0
min_rows = 20
per_corpus_harm_points = 3.0
[gate.analytical]
pooled_mape_max = 21
"#;

    #[test]
    fn a_gate_that_holds_passes_every_bound() {
        let checks = check(&[outcome(GATE, good())]);
        let kinds: Vec<Kind> = checks.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::PooledMape, // analytical (models by name)
                Kind::PooledMape,
                Kind::WorstTargetMape,
                Kind::Coverage,
                Kind::Spearman,
                Kind::TargetMape,
                Kind::Harm,
                Kind::CorpusHarm
            ]
        );
        assert!(checks.iter().all(Check::passed), "{checks:#?}");
        let worst = &checks[2];
        assert_eq!((worst.value, worst.at.as_deref()), (25.0, Some("GPU B")));
        // per target: GPU A +0.5, pooled -1.0; GPU B (10 rows) is not judged
        let harm = &checks[6];
        assert_eq!(harm.at.as_deref(), Some("GPU A"));
        assert!((harm.value - 0.5).abs() < 1e-12);
    }

    /// The breaches of the one check of `kind` with the hybrid's figures `hybrid`.
    fn breaches_of(gate: &str, hybrid: [Metrics; 3], kind: Kind) -> Vec<Breach> {
        let checks = check(&[outcome(gate, hybrid)]);
        let failed: Vec<&Check> = checks.iter().filter(|c| !c.passed()).collect();
        assert_eq!(failed.len(), 1, "one check fails: {failed:#?}");
        assert_eq!(failed[0].kind, kind);
        failed[0].breaches.clone()
    }

    #[test]
    fn each_kind_of_bound_fails_on_its_own() {
        let [p, a, b] = good();
        // pooled MAPE 20.5 > 20
        let bad = breaches_of(
            GATE,
            [
                Metrics {
                    mape: 20.5,
                    ..p.clone()
                },
                a.clone(),
                b.clone(),
            ],
            Kind::PooledMape,
        );
        assert_eq!((bad[0].at.clone(), bad[0].value), (None, 20.5));
        // worst target: GPU B at 26.5 > 26 (10 rows: not judged by the harm bound)
        let bad = breaches_of(
            GATE,
            [
                p.clone(),
                a.clone(),
                Metrics {
                    mape: 26.5,
                    ..b.clone()
                },
            ],
            Kind::WorstTargetMape,
        );
        assert_eq!(bad[0].at.as_deref(), Some("GPU B"));
        // coverage 96 % outside [85, 95]
        let bad = breaches_of(
            GATE,
            [
                Metrics {
                    interval_coverage: 0.96,
                    ..p.clone()
                },
                a.clone(),
                b.clone(),
            ],
            Kind::Coverage,
        );
        assert!((bad[0].value - 96.0).abs() < 1e-9);
        // coverage of an interval that is not calibrated is a breach, with its reason
        let bad = breaches_of(
            GATE,
            [
                Metrics {
                    interval: "spread".into(),
                    ..p.clone()
                },
                a.clone(),
                b.clone(),
            ],
            Kind::Coverage,
        );
        assert!(
            bad[0].note.as_deref().unwrap().contains("'spread'"),
            "{bad:?}"
        );
        // Spearman 0.85 < 0.9, and none at all (no tuning space)
        breaches_of(
            GATE,
            [
                Metrics {
                    spearman: 0.85,
                    ..p.clone()
                },
                a.clone(),
                b.clone(),
            ],
            Kind::Spearman,
        );
        let bad = breaches_of(
            GATE,
            [
                Metrics {
                    tuning_spaces: 0,
                    ..p.clone()
                },
                a.clone(),
                b.clone(),
            ],
            Kind::Spearman,
        );
        assert_eq!(bad[0].note.as_deref(), Some("no tuning space"));
        // a named target above its bound (GPU A 19.2 > 19, +1.2 points is the harm too:
        // the harm bound is widened so that only the target bound fails)
        let wide = GATE.replace("max_harm_points = 1.0", "max_harm_points = 2.0");
        let bad = breaches_of(
            &wide,
            [
                p.clone(),
                Metrics {
                    mape: 19.2,
                    ..a.clone()
                },
                b.clone(),
            ],
            Kind::TargetMape,
        );
        assert_eq!(bad[0].at.as_deref(), Some("GPU A"));
        // a named target the experiment did not score
        let missing = GATE.replace("\"GPU A\" = 19", "\"GPU C\" = 19");
        let bad = breaches_of(&missing, good(), Kind::TargetMape);
        assert_eq!(bad[0].note.as_deref(), Some("not scored"));
        // harm per target: GPU A 1.1 points above analytical (18.0) with a wider target bound
        let loose = GATE.replace("\"GPU A\" = 19", "\"GPU A\" = 20");
        let bad = breaches_of(
            &loose,
            [
                p.clone(),
                Metrics {
                    mape: 19.1,
                    ..a.clone()
                },
                b.clone(),
            ],
            Kind::Harm,
        );
        assert_eq!(bad[0].at.as_deref(), Some("GPU A"));
        assert!((bad[0].value - 1.1).abs() < 1e-9);
        // ... and pooled (the "all" row is a target of 40 rows)
        let raised = GATE.replacen("pooled_mape_max = 20\n", "pooled_mape_max = 22\n", 1);
        let bad = breaches_of(&raised, [Metrics { mape: 21.5, ..p }, a, b], Kind::Harm);
        assert_eq!(bad[0].at.as_deref(), Some("all"));
    }

    #[test]
    fn the_per_corpus_harm_bound_judges_each_corpus() {
        // c2: measured 1 ms, the analytical model 1.2 ms and the hybrid 1.22 ms: MAPE 20
        // and 22
        let gate = GATE.replace(
            "per_corpus_harm_points = 3.0",
            "per_corpus_harm_points = 1.5",
        );
        let bad = breaches_of(&gate, good(), Kind::CorpusHarm);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].at.as_deref(), Some("c2"));
        assert!((bad[0].value - 2.0).abs() < 1e-9, "{bad:?}");
    }

    #[test]
    fn gates_are_checked_against_the_experiment() {
        let models = vec!["analytical".to_string(), "hybrid".to_string()];
        let gates = |t: &str| -> Gates {
            toml::from_str::<toml::Table>(t).unwrap()["gate"]
                .clone()
                .try_into()
                .unwrap()
        };
        let err = |t: &str| validate(&gates(t), &models).unwrap_err();
        assert!(err("[gate.forest]\npooled_mape_max = 1")
            .contains("'forest' is not one of the experiment's models"));
        assert!(err("[gate.hybrid]\ncoverage = [95, 85]").contains("the least first"));
        assert!(err("[gate.hybrid]\nmax_harm_points = 1").contains("needs `max_harm_vs`"));
        assert!(
            err("[gate.hybrid]\nmax_harm_vs = \"hybrid\"\nmax_harm_points = 1")
                .contains("another of the experiment's models")
        );
        assert!(
            err("[gate.hybrid]\nmax_harm_vs = \"analytical\"").contains("give `max_harm_points`")
        );
        assert!(err("[gate.hybrid]\nmin_rows = 3").contains("only `max_harm_points` uses it"));
    }

    #[test]
    fn an_unknown_gate_key_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(
            &path,
            "name = \"x\"\ntitle = \"x\"\nprotocol = { name = \"logo\" }\nmodels = [\"hybrid\"]\n[gate.hybrid]\npooled_mape = 20\n",
        )
        .unwrap();
        let e = Experiment::load(&path).unwrap_err().to_string();
        assert!(e.contains("x.toml"), "{e}");
        assert!(e.contains("pooled_mape"), "{e}");
        // and a gate of a model the experiment does not run, also naming the file
        std::fs::write(
            &path,
            "name = \"x\"\ntitle = \"x\"\nprotocol = { name = \"logo\" }\nmodels = [\"hybrid\"]\n[gate.analytical]\npooled_mape_max = 20\n",
        )
        .unwrap();
        let e = Experiment::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("x.toml") && e.contains("[gate.analytical]"),
            "{e}"
        );
    }
}
