//! Sets of replications (antithetic pairs, stratified sets): the plan of such a run, its exact
//! set sums (split anywhere, added in any order, the same bits), and the estimate from the
//! sets' means.
//!
//! Sets pay only when their variance factor beats what they cost: an antithetic pair draws
//! every life by inversion (a logarithm or a quantile per draw, where a plain run mostly
//! takes the ziggurat's table lookup), so its replication costs `PAIR_CPU_COST` times a
//! plain one; a stratified set inverts only its units' first lives (`STRATIFIED_CPU_COST`).
//! The efficiency is factor / cost. A run to a target precision decides after a pilot of
//! `PILOT_SETS` sets (set size × `PILOT_SETS` replications): at efficiency <= 1 it draws the
//! rest on plain streams (`plain_from`), and the estimate joins the pilot's set means and
//! the plain replications, weighted by replications (both unbiased and independent of each
//! other). The one mechanism serves both kinds of set.
//!
//! The cost is a constant, not a timing of the run: a decision taken on a clock would make
//! the same seed's numbers depend on the machine's load and the thread count, which no run
//! of this engine may.
use super::{Estimate, Method, VarianceAcc};
use crate::rng::{Draws, SET, STRATIFIED_DRAWS};
use crate::stats::{Moments, fx, unfx};

/// CPU of an antithetic replication over a plain one's, measured by
/// `bench/variance_reduction.py` on its three plants (per replication: 1.20 on the
/// benchmark plant, 1.18 with PM, 1.21 on the 2-of-3 with standby; 2026-11-27).
pub const PAIR_CPU_COST: f64 = 1.2;

/// CPU of a stratified replication over a plain one's: its units' first lives are drawn by
/// inversion from the set's Latin hypercube (the rest of the replication as a plain one) and
/// its unavailability waits in `ends` for its set. Measured per replication at a fixed
/// 32 000 replications, one thread, 11 interleaved rounds against plain runs of the same
/// plants as `bench/variance_reduction.py`'s (median ratios: 1.039 on the benchmark plant,
/// 1.031 with PM, 1.035 on the 2-of-3 with standby; an earlier 7 rounds of 16 000: 1.032,
/// 0.993, 1.062; 2026-11-28): small but above plain on each plant.
pub const STRATIFIED_CPU_COST: f64 = 1.035;

/// Sets a run to a target precision draws before it weighs their efficiency (pairs: 800
/// replications; stratified sets of 16: 6400): the factor's relative standard error is then
/// about sqrt(2 / 400), 7%, for either kind (it rests on the spread of the sets' means). A
/// run's first batches (200 replications, then up to 4 times as many in all) have the pairs'
/// at 800 (500 pairs waited for the next batch's end, 3200 replications at the pairs' cost,
/// on the bench's plants); the stratified sets' are in at the end of the first batch past
/// 6400 replications.
pub const PILOT_SETS: u64 = 400;
use statrs::distribution::{ContinuousCDF, StudentsT};

impl VarianceAcc {
    pub(super) fn antithetic() -> VarianceAcc {
        VarianceAcc::in_sets_of(
            Method::Antithetic,
            "antithetic: the run's other figures (curve, blocks, failures) are plain \
             means over its replications, their intervals treating them as independent",
        )
    }

    /// A stratified plan whose replications stratify their first `units` uniforms (at most
    /// `rng::STRATIFIED_DRAWS`): the diagram's units' first lives.
    pub(super) fn stratified(units: u32) -> VarianceAcc {
        let mut v = VarianceAcc::in_sets_of(
            Method::Stratified,
            "stratified: sets of 16 replications share a Latin hypercube over their first \
             uniforms, one per unit up to 64 (the units' first lives); the run's other \
             figures (curve, blocks, failures) are plain means over its replications, their \
             intervals treating them as independent",
        );
        v.strata = units.min(STRATIFIED_DRAWS);
        v
    }

    fn in_sets_of(requested: Method, note: &str) -> VarianceAcc {
        VarianceAcc::empty(requested, vec![note.to_string()])
    }

    /// A plan for `requested` that has collected nothing: no controls, no condition, no sets
    /// yet (the control plan fills in its own controls over this).
    pub(super) fn empty(requested: Method, notes: Vec<String>) -> VarianceAcc {
        VarianceAcc {
            requested,
            notes,
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
            plain_from: None,
            after: Moments::default(),
            strata: 0,
        }
    }

    /// Whether replications are drawn in sets (antithetic pairs or stratified sets).
    pub fn in_sets(&self) -> bool {
        matches!(self.requested, Method::Antithetic | Method::Stratified)
    }

    /// Replications in a set: 2 for antithetic pairs, `rng::SET` for stratified sets.
    pub fn set_size(&self) -> u64 {
        if self.requested == Method::Stratified {
            SET
        } else {
            2
        }
    }

    /// How replication `rep` draws (plain past a run's turn to plain streams).
    #[inline]
    pub fn draws_at(&self, rep: u64) -> Draws {
        if self.plain_from.is_some_and(|p| rep >= p) {
            return Draws::Plain;
        }
        match self.requested {
            Method::Antithetic => Draws::Antithetic,
            Method::Stratified => Draws::Stratified(self.strata),
            _ => Draws::Plain,
        }
    }

    /// CPU of a replication drawn in this run's sets over a plain replication's.
    pub fn set_cpu_cost(&self) -> f64 {
        if self.antithetic_pairs() {
            PAIR_CPU_COST
        } else {
            STRATIFIED_CPU_COST
        }
    }

    /// The sets' (pairs') efficiency from the run so far: their factor over their CPU cost.
    /// None before 3 sets.
    pub fn set_efficiency(&self, plain: &Moments) -> Option<f64> {
        let e = self.pair_estimate()?;
        Some(self.pair_factor(&e, plain) / self.set_cpu_cost())
    }

    /// Where a run to a target precision, having run replications up to `end`, turns to
    /// plain streams: at `end`, once the pilot's sets are in and do not pay (`plain`: the
    /// run's availabilities so far). None while it keeps its sets or has turned already.
    /// A set the turn cuts short (`end` inside it) stays incomplete and is left out, as any
    /// incomplete set (at most a pair's or a set's members, of the pilot's 800 or 6400).
    pub fn plain_switch(&self, end: u64, plain: &Moments) -> Option<u64> {
        if !self.in_sets() || self.plain_from.is_some() || self.pairs < PILOT_SETS {
            return None;
        }
        (self.set_efficiency(plain)? <= 1.0).then_some(end)
    }

    /// Whether replications are drawn in antithetic pairs.
    pub fn antithetic_pairs(&self) -> bool {
        self.requested == Method::Antithetic
    }

    /// Replication `rep`'s unavailability `y`, or a range's end: completes its set when
    /// the other members are here already (the set's sum always in replication order, so
    /// the bits do not depend on which came first; a pair's is y_2k + y_2k+1).
    pub(super) fn pair_end(&mut self, rep: u64, y: u64) {
        let m = self.set_size();
        // Sorted, so equal runs compare equal whatever order their pieces merged in.
        let at = self.ends.partition_point(|&(r, _)| r < rep);
        self.ends.insert(at, (rep, y));
        let k = rep / m;
        let lo = self.ends.partition_point(|&(r, _)| r / m < k);
        let hi = self.ends.partition_point(|&(r, _)| r / m <= k);
        if (hi - lo) as u64 == m {
            let s = self.ends[lo..hi]
                .iter()
                .fold(0.0, |s, &(_, b)| s + f64::from_bits(b));
            self.ends.drain(lo..hi);
            self.pairs += 1;
            self.sum_pair += fx(s);
            self.sum_pair_sq += fx(s * s);
        }
    }

    /// The run's estimate: the sets' (`pair_estimate`), joined after a turn to plain
    /// streams with the plain replications' mean: weights w = size·sets / N and 1 - w (N the
    /// replications of both; a pair's size is 2), variance w² se_sets² + (1 - w)² se_plain²,
    /// Student t on the Welch-Satterthwaite degrees of freedom.
    pub(super) fn joined_estimate(&self) -> Option<Estimate> {
        let p = self.pair_estimate()?;
        if self.after.n < 2 {
            return Some(p);
        }
        let (k, q) = ((self.set_size() * self.pairs) as f64, self.after.n as f64);
        let w = k / (k + q);
        let vp = (w * p.std_error).powi(2);
        let vq = ((1.0 - w) * self.after.std_error()).powi(2);
        let var = vp + vq;
        let df = if var > 0.0 {
            var * var / (vp * vp / p.degrees_of_freedom + vq * vq / (q - 1.0))
        } else {
            p.degrees_of_freedom + q - 1.0
        };
        Some(Estimate {
            unavailability: w * p.unavailability + (1.0 - w) * self.after.mean(),
            std_error: var.sqrt(),
            degrees_of_freedom: df,
            t: StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975),
        })
    }

    /// The mean of the sets' (pairs') means and its standard error from their spread, on
    /// Student t with sets - 1 degrees of freedom (sets are independent; their members are
    /// not). A replication whose set is not complete in the run is left out. None below 3.
    pub(super) fn pair_estimate(&self) -> Option<Estimate> {
        if self.pairs < 3 {
            return None;
        }
        let (m, size) = (self.pairs as f64, self.set_size() as f64);
        let mean_sum = unfx(self.sum_pair) / m;
        // Set means are s / size: their variance is that of s over size².
        let var_sum = ((unfx(self.sum_pair_sq) - m * mean_sum * mean_sum) / (m - 1.0)).max(0.0);
        let var_mean = var_sum / (size * size);
        let df = m - 1.0;
        Some(Estimate {
            unavailability: mean_sum / size,
            std_error: (var_mean / m).sqrt(),
            degrees_of_freedom: df,
            t: StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975),
        })
    }

    /// The factor the pairs (sets) achieved, from the run itself: the per-replication
    /// variance (the plain estimator's, `plain` holding the run's availabilities) over the
    /// set size times the variance of a set's mean: the replications plain Monte Carlo
    /// needs for the same half-width, per replication here. Below 1 the sets did worse than
    /// independent replications would have.
    pub(super) fn pair_factor(&self, e: &Estimate, plain: &Moments) -> f64 {
        let per_replication = plain.std_error().powi(2) * plain.n as f64;
        let var_pair_mean = e.std_error * e.std_error * self.pairs as f64;
        if var_pair_mean > 0.0 {
            per_replication / (self.set_size() as f64 * var_pair_mean)
        } else {
            f64::INFINITY
        }
    }

    /// The factor of the run's estimate: the plain per-replication variance over the
    /// estimate's variance times the replications it uses (the pairs' factor while the run
    /// has no plain part).
    pub(super) fn antithetic_factor(&self, e: &Estimate, plain: &Moments) -> f64 {
        if self.after.n < 2 {
            return self.pair_factor(e, plain);
        }
        let per_replication = plain.std_error().powi(2) * plain.n as f64;
        let used = (self.set_size() * self.pairs + self.after.n) as f64;
        let v = e.std_error * e.std_error * used;
        if v > 0.0 {
            per_replication / v
        } else {
            f64::INFINITY
        }
    }
}
