//! Cheapest design: candidate designs (whole diagrams, each block on one of its options)
//! simulated side by side on common random numbers. The search over the design space and
//! the closed forms that prune it live in the library (`bathtub.rbd.cheapest`); the engine
//! verifies the survivors, all lanes in one rayon pass, so each design's figure and every
//! difference between two designs come from the same replication streams.
use super::Plan;
use super::crn::{self, CrnAcc, MAX_LANES};
use crate::diagram::{Compiled, DiagramSpec};
use crate::error::{EngineError, Key};
use crate::parallel::Control;

/// Every design compiled (a refusal names the design's index: `designs[i]: ...`), then
/// simulated on common random numbers; lane i is `designs[i]`.
pub fn compare_designs(
    designs: &[DiagramSpec],
    plan: Plan,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<CrnAcc, EngineError> {
    if designs.is_empty() || designs.len() > MAX_LANES {
        return Err(EngineError::at(
            "designs",
            format!("1 to {MAX_LANES} per run (got {})", designs.len()),
        ));
    }
    let lanes = designs
        .iter()
        .enumerate()
        .map(|(i, s)| Compiled::new(s).map_err(|e| e.within([Key::from("designs"), Key::Index(i)])))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, lane) in lanes.iter().enumerate() {
        // The run's own checks (repair models, costs...) on each design alone, no
        // replications, so a refusal names the design.
        crn::run(
            std::slice::from_ref(lane),
            plan.kind,
            plan.compared,
            false,
            plan.seed,
            plan.start,
            0,
            Some(1),
            &Control::new(),
        )
        .map_err(|e| e.within([Key::from("designs"), Key::Index(i)]))?;
    }
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
    use crate::decisions::PlanSpec;
    use crate::diagram::NodeSpec;
    use crate::fixtures::{edges, exp, node};

    /// One repairable exponential block (rate 1e-2, repair rate 0.1) or two in parallel
    /// feeding a 1-of-2 gate.
    fn design(units: usize) -> DiagramSpec {
        let block = |id: String| NodeSpec {
            model: Some(exp(1e-2)),
            repair: Some(exp(0.1)),
            ..node(&id, "component")
        };
        let mut nodes = vec![node("in", "input"), node("out", "output")];
        let mut pairs = vec![];
        for u in 0..units {
            nodes.push(block(format!("a#{u}")));
            pairs.push(("in".to_string(), format!("a#{u}")));
            pairs.push((format!("a#{u}"), "gate".to_string()));
        }
        nodes.push(NodeSpec {
            n: Some(1),
            ..node("gate", "knode")
        });
        pairs.push(("gate".into(), "out".into()));
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        DiagramSpec {
            nodes,
            edges: edges(&refs),
            ..Default::default()
        }
    }

    fn plan(count: u64) -> Plan {
        Plan::new(&PlanSpec {
            kind: "availability".into(),
            time: 5000.0,
            crews: 0,
            compared: "up".into(),
            seed: 11,
            replication_start: 0,
            replications: count,
        })
        .unwrap()
    }

    #[test]
    fn designs_match_their_closed_forms_on_any_thread_count() {
        let designs = [design(1), design(2)];
        let one = compare_designs(&designs, plan(400), Some(1), &Control::new()).unwrap();
        let three = compare_designs(&designs, plan(400), Some(3), &Control::new()).unwrap();
        assert_eq!(one.up, three.up);
        assert_eq!(one.cross, three.cross);
        // Steady state: one unit mu / (lambda + mu) = 10/11; two in parallel 1 - (1/11)^2. The
        // horizon is 500 mean repair times long, so the start-up transient shifts the time
        // average by under 1e-4, well inside the intervals below.
        let s = one.summary();
        for (lane, exact) in [(0, 10.0 / 11.0), (1, 1.0 - (1.0f64 / 11.0).powi(2))] {
            let l = &s.lanes[lane];
            assert!(
                (l.up - exact).abs() < 4.0 * l.up_std_error + 1e-4,
                "lane {lane}: {} vs {exact} (se {})",
                l.up,
                l.up_std_error
            );
        }
        // Paired: the redundant design is better in every replication's sum by a margin the
        // paired interval resolves.
        let d = s.lanes[1].up - s.lanes[0].up;
        let c = &s.covariance;
        let se = ((c[0][0] + c[1][1] - 2.0 * c[0][1]) / 400.0).sqrt();
        assert!(d > 4.0 * se, "{d} {se}");
    }

    #[test]
    fn a_refusal_names_the_design() {
        let mut bad = design(1);
        bad.nodes[2].repair = None;
        let e = compare_designs(&[design(1), bad], plan(10), None, &Control::new()).unwrap_err();
        // The path names the design as data (a front end maps the index to its own words).
        assert_eq!(e.path[..2], [Key::from("designs"), Key::Index(1)], "{e}");
        assert!(e.to_string().starts_with("designs[1]: node "), "{e}");
        let e = compare_designs(&[], plan(10), None, &Control::new()).unwrap_err();
        assert_eq!(e.path, [Key::from("designs")], "{e}");
    }
}
