//! Decisions on a diagram: what to improve (block importance and "what if" gains) and
//! interval search (planned-replacement or proof-test interval). Every candidate design
//! is simulated in one rayon pass on common random numbers (`crn`), so comparisons are
//! paired per replication and their intervals are tight.
pub mod cheapest;
pub mod crn;
pub mod importance;
pub mod variants;

use crate::diagram::{Compiled, DiagramSpec};
use crate::error::EngineError;
use crate::parallel::Control;
use crn::{Compared, CrnAcc, MAX_LANES, RunKind};
use serde::{Deserialize, Serialize};
use variants::{Knob, stretched, with_interval};

/// How many replications of which run, from which seed.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub kind: RunKind,
    pub compared: Compared,
    pub seed: u64,
    pub start: u64,
    pub count: u64,
}

/// A decision run in the front ends' words, checked into a [`Plan`] by [`Plan::new`].
#[derive(Debug, Clone)]
pub struct PlanSpec {
    /// availability (over `time` = the horizon, with `crews`) or mission (`time` = the
    /// mission time).
    pub kind: String,
    pub time: f64,
    pub crews: u32,
    /// up or cost.
    pub compared: String,
    pub seed: u64,
    pub replication_start: u64,
    pub replications: u64,
}

impl Plan {
    pub fn new(spec: &PlanSpec) -> Result<Plan, EngineError> {
        let PlanSpec {
            ref kind,
            time,
            crews,
            ref compared,
            seed,
            replication_start: start,
            replications: count,
        } = *spec;
        if !(time.is_finite() && time > 0.0) {
            return Err(EngineError::at(
                "time",
                format!("must be a finite number > 0 (got {time})"),
            ));
        }
        let kind = match kind.as_str() {
            "availability" => RunKind::Availability {
                horizon: time,
                crews,
            },
            "mission" => RunKind::Mission { mission_time: time },
            other => {
                return Err(EngineError::at(
                    "kind",
                    format!("availability or mission (got {other:?})"),
                ));
            }
        };
        let compared = match compared.as_str() {
            "up" => Compared::Up,
            "cost" => Compared::Cost,
            other => {
                return Err(EngineError::at(
                    "compared",
                    format!("up or cost (got {other:?})"),
                ));
            }
        };
        Ok(Plan {
            kind,
            compared,
            seed,
            start,
            count,
        })
    }
}

/// One "what if" lane: the block changed and how (`mtbf_doubled`, `mttr_halved`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Change {
    pub block: String,
    pub change: String,
}

/// The designs a what-to-improve run compares with the base (lane 0): each block's MTBF
/// doubled and, in repairable runs, its MTTR halved (blocks with a repair model); only
/// the blocks in `only` when given (importance is still measured for every block).
pub fn what_if_designs(
    spec: &DiagramSpec,
    kind: RunKind,
    only: Option<&[String]>,
) -> Result<Vec<(Change, DiagramSpec)>, EngineError> {
    let all = Compiled::new(spec)?.block_ids();
    let ids = match only {
        None => all,
        Some(chosen) => {
            if let Some(b) = chosen.iter().find(|b| !all.contains(b)) {
                return Err(EngineError::at(
                    "blocks",
                    format!("{b:?} is no block of the diagram"),
                ));
            }
            chosen.to_vec()
        }
    };
    let mut out = vec![];
    for id in &ids {
        if let Some(s) = stretched(spec, id, true, 2.0)? {
            out.push((
                Change {
                    block: id.clone(),
                    change: "mtbf_doubled".into(),
                },
                s,
            ));
        }
        if matches!(kind, RunKind::Availability { .. })
            && let Some(s) = stretched(spec, id, false, 0.5)?
        {
            out.push((
                Change {
                    block: id.clone(),
                    change: "mttr_halved".into(),
                },
                s,
            ));
        }
    }
    if out.len() + 1 > MAX_LANES {
        return Err(EngineError::at(
            "blocks",
            format!(
                "what to improve compares at most {} changes in one run ({} here); name the \
             blocks to change",
                MAX_LANES - 1,
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// What to improve: the base design with block importance, and every what-if design, on
/// common random numbers. Lane 0 is the base; lane i + 1 is `changes[i]`.
pub fn what_to_improve(
    spec: &DiagramSpec,
    only: Option<&[String]>,
    plan: Plan,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<(Vec<Change>, CrnAcc), EngineError> {
    let designs = what_if_designs(spec, plan.kind, only)?;
    let mut lanes = vec![Compiled::new(spec)?];
    let mut changes = vec![];
    for (ch, s) in designs {
        lanes.push(
            Compiled::new(&s).map_err(|e| e.within([format!("{} {}", ch.block, ch.change)]))?,
        );
        changes.push(ch);
    }
    let acc = crn::run(
        &lanes,
        plan.kind,
        plan.compared,
        true,
        plan.seed,
        plan.start,
        plan.count,
        threads,
        ctl,
    )?;
    Ok((changes, acc))
}

/// Interval search: one lane per candidate interval, every block in `blocks` on it.
pub fn interval_search(
    spec: &DiagramSpec,
    blocks: &[String],
    knob: Knob,
    intervals: &[f64],
    plan: Plan,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<CrnAcc, EngineError> {
    if blocks.is_empty() {
        return Err(EngineError::at("blocks", "name at least one block"));
    }
    if intervals.len() < 2 || intervals.len() > MAX_LANES {
        return Err(EngineError::at(
            "intervals",
            format!("2 to {MAX_LANES} candidates (got {})", intervals.len()),
        ));
    }
    if let Some(x) = intervals.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        return Err(EngineError::at(
            "intervals",
            format!("each must be a finite number > 0 (got {x})"),
        ));
    }
    let lanes = intervals
        .iter()
        .map(|&x| Compiled::new(&with_interval(spec, blocks, knob, x)?))
        .collect::<Result<Vec<_>, _>>()?;
    crn::run(
        &lanes,
        plan.kind,
        plan.compared,
        false,
        plan.seed,
        plan.start,
        plan.count,
        threads,
        ctl,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::NodeSpec;
    use crate::fixtures::{edges, exp, node};

    fn two_in_series() -> DiagramSpec {
        let block = |id: &str, rate: f64, repair: f64| NodeSpec {
            model: Some(exp(rate)),
            repair: Some(exp(repair)),
            ..node(id, "component")
        };
        DiagramSpec {
            nodes: vec![
                node("in", "input"),
                block("a", 1e-3, 0.1),
                block("b", 2e-3, 0.02),
                node("out", "output"),
            ],
            edges: edges(&[("in", "a"), ("a", "b"), ("b", "out")]),
            ..Default::default()
        }
    }
    fn plan(count: u64) -> Plan {
        Plan::new(&PlanSpec {
            kind: "availability".into(),
            time: 2000.0,
            crews: 0,
            compared: "up".into(),
            seed: 5,
            replication_start: 0,
            replications: count,
        })
        .unwrap()
    }

    #[test]
    fn any_thread_count_gives_the_same_sums() {
        let spec = two_in_series();
        let (_, one) = what_to_improve(&spec, None, plan(300), Some(1), &Control::new()).unwrap();
        let (changes, three) =
            what_to_improve(&spec, None, plan(300), Some(3), &Control::new()).unwrap();
        assert_eq!(changes.len(), 4);
        assert_eq!(one.up, three.up);
        assert_eq!(one.cross, three.cross);
        let (a, b) = (one.importance.unwrap(), three.importance.unwrap());
        assert_eq!(a.birnbaum, b.birnbaum);
        assert_eq!(a.in_failed_cut, b.in_failed_cut);
    }

    #[test]
    fn an_unchanged_design_differs_by_exactly_nothing() {
        // The same interval twice: identical lanes, so the paired difference is 0 with no spread.
        let mut spec = two_in_series();
        spec.nodes[1].preventive = Some(crate::diagram::PreventiveSpec {
            policy: Some("age".into()),
            interval: 300.0,
            ..Default::default()
        });
        let acc = interval_search(
            &spec,
            &["a".into()],
            Knob::Preventive,
            &[300.0, 300.0, 600.0],
            plan(200),
            None,
            &Control::new(),
        )
        .unwrap();
        assert_eq!(acc.up[0], acc.up[1]);
        let s = acc.summary();
        let c = &s.covariance;
        assert!((c[0][0] + c[1][1] - 2.0 * c[0][1]).abs() < 1e-12);
        assert_ne!(acc.up[0], acc.up[2]);
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let spec = two_in_series();
        let e = interval_search(
            &spec,
            &["a".into()],
            Knob::Preventive,
            &[1.0, 2.0],
            plan(1),
            None,
            &Control::new(),
        );
        assert!(e.unwrap_err().to_string().contains("no preventive policy"));
        let e = interval_search(
            &spec,
            &["zz".into()],
            Knob::ProofTest,
            &[1.0, 2.0],
            plan(1),
            None,
            &Control::new(),
        );
        assert!(e.unwrap_err().to_string().contains("no such block"));
        let e = interval_search(
            &spec,
            &["a".into()],
            Knob::Preventive,
            &[1.0],
            plan(1),
            None,
            &Control::new(),
        );
        assert!(e.unwrap_err().to_string().contains("intervals"));
        let cost = Plan::new(&PlanSpec {
            kind: "availability".into(),
            time: 10.0,
            crews: 0,
            compared: "cost".into(),
            seed: 1,
            replication_start: 0,
            replications: 1,
        })
        .unwrap();
        let e = what_to_improve(&spec, None, cost, None, &Control::new());
        assert!(e.unwrap_err().to_string().contains("no costs"));
        let only = ["zz".to_string()];
        let e = what_to_improve(&spec, Some(&only), plan(1), None, &Control::new());
        assert!(e.unwrap_err().to_string().contains("no block"));
    }
}
