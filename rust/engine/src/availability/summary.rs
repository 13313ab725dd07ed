//! What a run reports: the accumulator read as availability, per-block figures,
//! production and costs with their intervals.
use super::*;

/// One block's figures, per replication on average. Failures are failures only: planned
/// replacements and proof tests are counted apart, and `downtime` is the sum of
/// `unplanned_downtime` (failed, found or not, and in repair) and `planned_downtime`
/// (off-line for a replacement, or for a test it entered working, until the stop ends or
/// the block fails). MTBF = time working per failure; MTTR = unplanned downtime per
/// failure (0 for instant renewal).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockSummary {
    pub id: String,
    pub failures: f64,
    pub downtime: f64,
    pub share_of_system_downtime: f64,
    pub share_of_system_downtime_std_error: f64,
    pub share_of_system_downtime_lower: f64,
    pub share_of_system_downtime_upper: f64,
    pub unplanned_downtime: f64,
    pub planned_downtime: f64,
    pub preventive_replacements: f64,
    pub proof_tests: f64,
    pub condition_inspections: f64,
    pub mtbf: Option<f64>,
    pub mttr: Option<f64>,
}

/// The figures a caller reads (times in the diagram unit).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AvailabilitySummary {
    pub mean_availability: f64,
    pub mean_availability_std_error: f64,
    pub mean_availability_lower: f64,
    pub mean_availability_upper: f64,
    pub relative_half_width: Option<f64>,
    pub t: Vec<f64>,
    pub availability: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// Mean availability over each interval [t_k, t_k+1] of `t`, with its 95% interval
    /// (normal, clipped to [0, 1]); weighted by the intervals' lengths they average to
    /// `mean_availability`. Empty for a state from before they were kept.
    #[serde(default)]
    pub interval_availability: Vec<f64>,
    #[serde(default)]
    pub interval_lower: Vec<f64>,
    #[serde(default)]
    pub interval_upper: Vec<f64>,
    pub reliability: f64,
    pub reliability_lower: f64,
    pub reliability_upper: f64,
    /// System failures: turns to failed, from up or from planned-down (an instantly
    /// renewed block's failure that took the system down counts, with no downtime). MTBF =
    /// uptime per failure, MTTR = unplanned downtime per failure.
    pub expected_failures: f64,
    pub expected_failures_std_error: f64,
    pub mtbf: Option<f64>,
    pub mttr: Option<f64>,
    /// Outages that begin planned, and downtime per replication: planned while the system
    /// would work were every block stopped only for a plan working, unplanned otherwise
    /// (they add up to (1 - mean availability) * horizon).
    pub expected_planned_outages: f64,
    pub unplanned_downtime: f64,
    pub planned_downtime: f64,
    /// Planned replacements (any policy, opportunities included), proof tests and
    /// condition inspections made, all blocks, per replication.
    pub expected_preventive_replacements: f64,
    pub expected_proof_tests: f64,
    pub expected_condition_inspections: f64,
    pub blocks: Vec<BlockSummary>,
    /// Sets of redundant blocks whose calendar replacements coincide and stop the system
    /// together (each alone would not); their cost is in `planned_downtime`.
    pub coinciding_preventive: Vec<Vec<String>>,
    pub events: u64,
    pub replications: u64,
    pub replication_start: u64,
    pub costs: Option<CostSummary>,
    /// Planned replacements per block, per replication on average.
    pub preventive: Option<Vec<(String, f64)>>,
    pub production: Option<ProductionSummary>,
    /// Variance reduction (when asked): the method used for the mean availability, the
    /// factor achieved, fallbacks and the plain estimate beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance_reduction: Option<VarianceSummary>,
}

/// Throughput figures (capacity units per diagram time unit), per replication on average.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProductionSummary {
    pub mean_throughput: f64,
    pub mean_throughput_std_error: f64,
    pub period: f64,
    pub production: f64,
    pub production_std_error: f64,
    pub production_lower: f64,
    pub production_upper: f64,
    pub demand: f64,
    pub fraction_below_demand: f64,
    pub fraction_below_demand_std_error: f64,
    pub time_below_demand: f64,
}

/// One cost kind: mean per replication and its standard error.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KindCost {
    pub kind: String,
    pub mean: f64,
    pub std_error: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockCost {
    pub id: String,
    pub total: f64,
    pub by_kind: Vec<(String, f64)>,
}

/// Expected costs over the horizon (discounted to time 0 when asked), per replication.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CostSummary {
    pub total: f64,
    pub total_std_error: f64,
    pub total_lower: f64,
    pub total_upper: f64,
    pub by_kind: Vec<KindCost>,
    pub by_block: Vec<BlockCost>,
    pub system_downtime: f64,
}

impl AvailabilityAcc {
    pub fn summary(&self) -> AvailabilitySummary {
        let n = self.replication_count;
        let nf = n.max(1) as f64;
        let horizon = self.options.horizon;
        // The reduced-variance estimate when the run has one (its interval on Student t
        // with the regression's degrees of freedom), else the plain mean and normal interval.
        let reduced = self.reduced();
        let (a, se, z) = match reduced {
            Some((e, _)) => (1.0 - e.unavailability, e.std_error, e.t),
            None => (self.availability.mean(), self.availability.std_error(), Z95),
        };
        let t = sample_times(horizon, self.options.grid, &self.test_times);
        let bands: Vec<(f64, f64)> = self.point_up.iter().map(|&k| wilson(k, n, Z95)).collect();
        let (rl, ru) = wilson(self.no_failure, n, Z95);
        let total_fail = unfx(self.system_failures.sum);
        let up_time = a * horizon * nf;
        let planned_down = unfx(self.planned_downtime) * horizon;
        let down_time = ((1.0 - a) * horizon * nf - planned_down).max(0.0);
        let rel = self.relative_half_width();
        // interval means only where replications booked them (a search reads no curve)
        let booked = self.interval_up.first().is_some_and(|m| m.n > 0);
        let intervals: &[Moments] = if booked { &self.interval_up } else { &[] };
        AvailabilitySummary {
            mean_availability: a,
            mean_availability_std_error: se,
            mean_availability_lower: (a - z * se).max(0.0),
            mean_availability_upper: (a + z * se).min(1.0),
            relative_half_width: rel.is_finite().then_some(rel),
            t,
            availability: self.point_up.iter().map(|&k| k as f64 / nf).collect(),
            lower: bands.iter().map(|b| b.0).collect(),
            upper: bands.iter().map(|b| b.1).collect(),
            interval_availability: intervals.iter().map(Moments::mean).collect(),
            interval_lower: intervals
                .iter()
                .map(|m| (m.mean() - Z95 * m.std_error()).max(0.0))
                .collect(),
            interval_upper: intervals
                .iter()
                .map(|m| (m.mean() + Z95 * m.std_error()).min(1.0))
                .collect(),
            reliability: self.no_failure as f64 / nf,
            reliability_lower: rl,
            reliability_upper: ru,
            expected_failures: self.system_failures.mean(),
            expected_failures_std_error: self.system_failures.std_error(),
            mtbf: (total_fail > 0.0).then(|| up_time / total_fail),
            mttr: (total_fail > 0.0).then(|| down_time / total_fail),
            expected_planned_outages: self.planned_outages as f64 / nf,
            unplanned_downtime: down_time / nf,
            planned_downtime: planned_down / nf,
            expected_preventive_replacements: self.block_preventive.iter().sum::<u64>() as f64 / nf,
            expected_proof_tests: self.block_tests.iter().sum::<u64>() as f64 / nf,
            expected_condition_inspections: self.block_inspections.iter().sum::<u64>() as f64 / nf,
            blocks: (0..self.blocks.len())
                .map(|g| self.block_summary(g))
                .collect(),
            coinciding_preventive: self.coinciding_preventive.clone(),
            events: self.events,
            replications: n,
            replication_start: self.replication_start,
            costs: (!self.cost_kind.is_empty()).then(|| self.cost_summary()),
            production: (self.cap_scale > 0.0).then(|| self.production_summary()),
            preventive: (!self.block_preventive.is_empty()).then(|| {
                self.blocks
                    .iter()
                    .zip(&self.block_preventive)
                    .map(|(id, &k)| (id.clone(), k as f64 / nf))
                    .collect()
            }),
            variance_reduction: self
                .variance
                .as_ref()
                .map(|v| v.summary(&self.availability)),
        }
    }

    fn block_summary(&self, g: usize) -> BlockSummary {
        let nf = self.replication_count.max(1) as f64;
        let horizon = self.options.horizon;
        let sys_down: f64 = self.block_caused_downtime.iter().map(|&x| unfx(x)).sum();
        let down = unfx(self.block_downtime[g]) * horizon;
        // Old states carry no planned split: all of it unplanned then.
        let planned = self
            .block_planned_downtime
            .get(g)
            .map_or(0.0, |&x| unfx(x) * horizon)
            .min(down);
        let failures = self.block_failures[g] as f64;
        let up = (horizon * nf - down).max(0.0);
        let (share, share_se) = self.share(g, sys_down);
        BlockSummary {
            id: self.blocks[g].clone(),
            failures: failures / nf,
            downtime: down / nf,
            share_of_system_downtime: share,
            share_of_system_downtime_std_error: share_se,
            share_of_system_downtime_lower: (share - Z95 * share_se).max(0.0),
            share_of_system_downtime_upper: (share + Z95 * share_se).min(1.0),
            unplanned_downtime: (down - planned) / nf,
            planned_downtime: planned / nf,
            preventive_replacements: self.block_preventive.get(g).map_or(0.0, |&k| k as f64 / nf),
            proof_tests: self.block_tests.get(g).map_or(0.0, |&k| k as f64 / nf),
            condition_inspections: self
                .block_inspections
                .get(g)
                .map_or(0.0, |&k| k as f64 / nf),
            mtbf: (failures > 0.0).then(|| up / failures),
            mttr: (failures > 0.0).then(|| (down - planned) / failures),
        }
    }

    /// Block g's share of the charged system downtime, a ratio R = sum c_g / sum C of
    /// sums over n replications, and its standard error by the delta method:
    /// sqrt(sum (c_g - R C)^2 * n / (n - 1)) / sum C (0 before two replications, or
    /// for a state from before the charges' squares were kept).
    fn share(&self, g: usize, sys_down: f64) -> (f64, f64) {
        if sys_down <= 0.0 {
            return (0.0, 0.0);
        }
        let r = unfx(self.block_caused_downtime[g]) / sys_down;
        let n = self.replication_count as f64;
        let (Some(&sq), Some(&cross)) =
            (self.block_charge_sq.get(g), self.block_charge_cross.get(g))
        else {
            return (r, 0.0);
        };
        if n < 2.0 {
            return (r, 0.0);
        }
        let resid = (unfx(sq) - 2.0 * r * unfx(cross) + r * r * unfx(self.charge_sq)).max(0.0);
        (r, (resid * n / (n - 1.0)).sqrt() / sys_down)
    }

    fn production_summary(&self) -> ProductionSummary {
        let sc = self.cap_scale;
        let h = self.options.horizon;
        let p = self.production_period;
        let prod = self.production.mean() * sc * p;
        let prod_se = self.production.std_error() * sc * p;
        let below = self.below_demand.mean();
        ProductionSummary {
            mean_throughput: self.throughput.mean() * sc,
            mean_throughput_std_error: self.throughput.std_error() * sc,
            period: p,
            production: prod,
            production_std_error: prod_se,
            production_lower: (prod - Z95 * prod_se).max(0.0),
            production_upper: prod + Z95 * prod_se,
            demand: self.demand,
            fraction_below_demand: below,
            fraction_below_demand_std_error: self.below_demand.std_error(),
            time_below_demand: below * p.min(h),
        }
    }

    fn cost_summary(&self) -> CostSummary {
        let sc = self.cost_scale;
        let nf = self.replication_count.max(1) as f64;
        let kinds = COST_KINDS.len();
        let total = self.cost_total.mean() * sc;
        let se = self.cost_total.std_error() * sc;
        CostSummary {
            total,
            total_std_error: se,
            total_lower: total - Z95 * se,
            total_upper: total + Z95 * se,
            by_kind: COST_KINDS
                .iter()
                .zip(&self.cost_kind)
                .map(|(k, m)| KindCost {
                    kind: k.to_string(),
                    mean: m.mean() * sc,
                    std_error: m.std_error() * sc,
                })
                .collect(),
            by_block: self
                .blocks
                .iter()
                .enumerate()
                .map(|(g, id)| {
                    let row = &self.cost_block[g * kinds..(g + 1) * kinds];
                    let by_kind: Vec<(String, f64)> = COST_KINDS
                        .iter()
                        .zip(row)
                        .map(|(k, &x)| (k.to_string(), unfx(x) * sc / nf))
                        .collect();
                    BlockCost {
                        id: id.clone(),
                        total: by_kind.iter().map(|x| x.1).sum(),
                        by_kind,
                    }
                })
                .collect(),
            system_downtime: unfx(self.cost_system) * sc / nf,
        }
    }
}
