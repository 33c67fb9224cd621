//! Trial statistics and the choice of launches per trial.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialStats {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for a single trial.
    pub std: f64,
    pub min: f64,
    pub median: f64,
    /// Coefficient of variation, std / mean.
    pub cv: f64,
}

pub fn trial_stats(xs: &[f64]) -> Option<TrialStats> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let std = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let cv = if mean > 0.0 { std / mean } else { 0.0 };
    Some(TrialStats {
        n,
        mean,
        std,
        min: s[0],
        median,
        cv,
    })
}

/// Launches per trial so that one trial lasts at least `target_ms`, given the
/// time of one launch; at least 1, at most `max_reps`.
pub fn choose_reps(single_launch_ms: f64, target_ms: f64, max_reps: u32) -> u32 {
    if single_launch_ms.is_nan() || single_launch_ms <= 0.0 || !single_launch_ms.is_finite() {
        return max_reps.max(1);
    }
    let r = (target_ms / single_launch_ms).ceil();
    if r >= max_reps as f64 {
        max_reps.max(1)
    } else {
        (r as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn stats_of_known_values() {
        let s = trial_stats(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert!((s.std - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.median, 4.5);
        assert!((s.cv - s.std / 5.0).abs() < 1e-15);
        let s = trial_stats(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min), (2.0, 1.0));
        let s = trial_stats(&[1.5]).unwrap();
        assert_eq!((s.std, s.cv), (0.0, 0.0));
        assert!(trial_stats(&[]).is_none());
        assert!(trial_stats(&[1.0, f64::NAN]).is_none());
    }
    #[test]
    fn reps_make_a_trial_last_at_least_the_target() {
        assert_eq!(choose_reps(0.004, 1.0, 100_000), 250);
        assert_eq!(choose_reps(0.003, 1.0, 100_000), 334);
        assert_eq!(choose_reps(2.5, 1.0, 100_000), 1);
        assert_eq!(choose_reps(1e-9, 1.0, 1000), 1000);
        assert_eq!(choose_reps(0.0, 1.0, 50), 50);
        assert_eq!(choose_reps(f64::NAN, 1.0, 50), 50);
    }
}
