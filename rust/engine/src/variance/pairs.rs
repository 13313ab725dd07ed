//! Antithetic pairs: the plan of an antithetic run, its exact pair sums (split anywhere,
//! added in any order, the same bits), and the estimate from the pairs' means.
use super::{Estimate, Method, VarianceAcc};
use crate::stats::{Moments, fx, unfx};
use statrs::distribution::{ContinuousCDF, StudentsT};

impl VarianceAcc {
    pub(super) fn antithetic() -> VarianceAcc {
        VarianceAcc {
            requested: Method::Antithetic,
            notes: vec![
                "antithetic: the run's other figures (curve, blocks, failures) are plain \
                 means over its replications, their intervals treating them as independent"
                    .to_string(),
            ],
            condition: None,
            controls: vec![],
            system: None,
            n: 0,
            sum_z: 0,
            sum_zz: 0,
            sum_x: vec![],
            sum_xz: vec![],
            sum_xx: vec![],
            pairs: 0,
            sum_pair: 0,
            sum_pair_sq: 0,
            ends: vec![],
        }
    }

    /// Whether replications are drawn in antithetic pairs.
    pub fn antithetic_pairs(&self) -> bool {
        self.requested == Method::Antithetic
    }

    /// Replication `rep`'s unavailability `y`, or a range's end: completes its pair when
    /// the partner is here already (the sum always y_2k + y_2k+1, in that order, so the
    /// bits do not depend on which came first).
    pub(super) fn pair_end(&mut self, rep: u64, y: u64) {
        if let Some(i) = self.ends.iter().position(|&(r, _)| r ^ 1 == rep) {
            let (other, w) = self.ends.swap_remove(i);
            let (a, b) = if rep < other { (y, w) } else { (w, y) };
            let s = f64::from_bits(a) + f64::from_bits(b);
            self.pairs += 1;
            self.sum_pair += fx(s);
            self.sum_pair_sq += fx(s * s);
        } else {
            // Sorted, so equal runs compare equal whatever order their pieces merged in.
            let at = self.ends.partition_point(|&(r, _)| r < rep);
            self.ends.insert(at, (rep, y));
        }
    }

    /// The mean of the pairs' means and its standard error from their spread, on Student t
    /// with pairs - 1 degrees of freedom (pairs are independent; their members are not).
    /// A replication whose partner is not in the run is left out. None below 3 pairs.
    pub(super) fn pair_estimate(&self) -> Option<Estimate> {
        if self.pairs < 3 {
            return None;
        }
        let m = self.pairs as f64;
        let mean_sum = unfx(self.sum_pair) / m;
        // Pair means are s / 2: their variance is that of s over 4.
        let var_sum = ((unfx(self.sum_pair_sq) - m * mean_sum * mean_sum) / (m - 1.0)).max(0.0);
        let var_mean = var_sum / 4.0;
        let df = m - 1.0;
        Some(Estimate {
            unavailability: mean_sum / 2.0,
            std_error: (var_mean / m).sqrt(),
            degrees_of_freedom: df,
            t: StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975),
        })
    }

    /// The factor the pairs achieved, from the run itself: the per-replication variance
    /// (the plain estimator's, `plain` holding the run's availabilities) over twice the
    /// variance of a pair's mean: the replications plain Monte Carlo needs for the same
    /// half-width, per replication here. Below 1 the pairs did worse than independent
    /// replications would have.
    pub(super) fn pair_factor(&self, e: &Estimate, plain: &Moments) -> f64 {
        let per_replication = plain.std_error().powi(2) * plain.n as f64;
        let var_pair_mean = e.std_error * e.std_error * self.pairs as f64;
        if var_pair_mean > 0.0 {
            per_replication / (2.0 * var_pair_mean)
        } else {
            f64::INFINITY
        }
    }
}
