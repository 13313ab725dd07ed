//! Candidate designs as edited diagram specs: a block's life or repair stretched in time,
//! a block's planned-replacement or proof-test interval set. Each candidate is compiled
//! on its own and simulated on the same replication streams as the base design.
use crate::diagram::{DiagramSpec, NodeSpec};
use crate::dist::DistSpec;
use crate::error::EngineError;

/// The law of k·T for T drawn from `spec`: every quantile multiplied by k, so the mean
/// (MTBF, MTTR) is multiplied by k. Inverse-transform draws of the stretched law are the
/// base draws times k for the same uniforms, which is what keeps common random numbers
/// common between a design and its what-if.
pub fn time_scaled(spec: &DistSpec, k: f64) -> Result<DistSpec, EngineError> {
    if !(k.is_finite() && k > 0.0) {
        return Err(EngineError::new(format!(
            "time scale must be a finite number > 0 (got {k})"
        )));
    }
    if spec.path.is_some() {
        // The covariate schedule runs on the calendar, the life on its own clock: stretching
        // one and not the other has no single meaning, so it is refused, not guessed.
        return Err(EngineError::new(
            "a block whose life runs under a covariate schedule has no 'MTBF doubled' variant",
        ));
    }
    let mut out = spec.clone();
    if spec.distribution_id == "table" || spec.distribution_id == "steps" {
        if let Some(knots) = out.table.as_mut() {
            for kn in knots.iter_mut() {
                kn[0] *= k;
            }
        }
        return Ok(out);
    }
    let family = if spec.distribution_id == "mixture" {
        spec.base_distribution_id.clone().unwrap_or_default()
    } else {
        spec.distribution_id.clone()
    };
    for (name, v) in out.params.iter_mut() {
        // Mixture parameters carry their mode number (alpha1, weight2, ...).
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let stretched = match (family.as_str(), base) {
            (_, "weight") => Some(*v),
            ("exponential", "failure_rate") => Some(*v / k),
            ("exponential" | "weibull" | "loglogistic" | "gamma" | "lognormal", "gamma") => {
                Some(*v * k)
            }
            ("weibull" | "loglogistic", "alpha") | ("gamma", "beta") => Some(*v * k),
            ("weibull" | "loglogistic", "beta") | ("gamma", "alpha") | ("lognormal", "sigma") => {
                Some(*v)
            }
            ("lognormal", "mu") => Some(*v + k.ln()),
            ("normal" | "gumbel" | "logistic", "mu" | "sigma") | ("uniform", "a" | "b") => {
                Some(*v * k)
            }
            _ => None,
        };
        *v = stretched.ok_or_else(|| {
            EngineError::new(format!(
                "{family}: cannot stretch parameter {name:?} in time"
            ))
        })?;
    }
    Ok(out)
}

/// The node of block `id` (`outer/inner` inside subsystems).
pub fn block_mut<'a>(spec: &'a mut DiagramSpec, id: &str) -> Result<&'a mut NodeSpec, EngineError> {
    let (head, rest) = match id.split_once('/') {
        Some((h, r)) => (h, Some(r)),
        None => (id, None),
    };
    let node = spec
        .nodes
        .iter_mut()
        .find(|n| n.id == head)
        .ok_or_else(|| EngineError::at(format!("block {id:?}"), "no such block in the diagram"))?;
    match rest {
        None => Ok(node),
        Some(r) => match node.diagram.as_mut() {
            Some(d) => block_mut(d, r),
            None => Err(EngineError::at(
                format!("block {id:?}"),
                format!("{head:?} is not a subsystem"),
            )),
        },
    }
}

/// The base design with block `id`'s MTBF (`life` true) or MTTR multiplied by `k`; None
/// when the block has no such model (no repair model, instant renewal).
pub fn stretched(
    spec: &DiagramSpec,
    id: &str,
    life: bool,
    k: f64,
) -> Result<Option<DiagramSpec>, EngineError> {
    let mut out = spec.clone();
    let node = block_mut(&mut out, id)?;
    if !life && node.instant_repair == Some(true) {
        return Ok(None);
    }
    if let Some(units) = node.units.as_mut() {
        // A standby group of non-identical units: every unit's life (or repair) stretched.
        let mut any = false;
        for u in units.iter_mut() {
            let slot = if life {
                Some(&mut u.model)
            } else {
                u.repair.as_mut()
            };
            if let Some(d) = slot {
                *d = time_scaled(d, k).map_err(|e| e.in_node(id))?;
                any = true;
            }
        }
        return Ok(any.then_some(out));
    }
    let slot = if life {
        &mut node.model
    } else {
        &mut node.repair
    };
    match slot {
        Some(d) => {
            *d = time_scaled(d, k).map_err(|e| e.in_node(id))?;
            Ok(Some(out))
        }
        None => Ok(None),
    }
}

/// What an interval search varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// The planned-replacement interval (age, block or condition-inspection interval).
    Preventive,
    /// The proof-test interval.
    ProofTest,
}

impl Knob {
    pub fn parse(s: &str) -> Result<Knob, EngineError> {
        match s {
            "preventive" => Ok(Knob::Preventive),
            "proof_test" => Ok(Knob::ProofTest),
            other => Err(EngineError::at(
                "knob",
                format!("preventive or proof_test (got {other:?})"),
            )),
        }
    }
}

/// The base design with every block in `ids` on `interval`. A block must already carry
/// the policy (its costs, duration, kind): the search varies the interval only.
pub fn with_interval(
    spec: &DiagramSpec,
    ids: &[String],
    knob: Knob,
    interval: f64,
) -> Result<DiagramSpec, EngineError> {
    let mut out = spec.clone();
    for id in ids {
        let node = block_mut(&mut out, id)?;
        match knob {
            Knob::Preventive => match node.preventive.as_mut() {
                Some(p) => p.interval = interval,
                None => {
                    return Err(EngineError::node(
                        id,
                        "has no preventive policy whose interval to search: give it one \
                         (policy, cost) first",
                    ));
                }
            },
            Knob::ProofTest => match node.inspection.as_mut() {
                Some(t) => {
                    // A full-test period is a multiple of the interval: keep the multiple.
                    if let Some(f) = t.full_test.as_mut() {
                        *f = *f / t.interval * interval;
                    }
                    t.interval = interval;
                }
                None => {
                    return Err(EngineError::node(
                        id,
                        "has no proof test (inspection) whose interval to search: give it one first",
                    ));
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{Dist, Lifetime};
    use std::collections::BTreeMap;

    fn spec(id: &str, p: &[(&str, f64)]) -> DistSpec {
        DistSpec {
            distribution_id: id.into(),
            params: p
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<BTreeMap<_, _>>(),
            base_distribution_id: None,
            table: None,
            path: None,
        }
    }

    #[test]
    fn stretching_multiplies_every_quantile() {
        let cases = [
            spec("exponential", &[("failure_rate", 0.01), ("gamma", 3.0)]),
            spec(
                "weibull",
                &[("alpha", 100.0), ("beta", 2.5), ("gamma", 5.0)],
            ),
            spec("lognormal", &[("mu", 3.0), ("sigma", 0.7), ("gamma", 1.0)]),
            spec("gamma", &[("alpha", 2.0), ("beta", 30.0), ("gamma", 2.0)]),
            spec("loglogistic", &[("alpha", 50.0), ("beta", 3.0)]),
            spec("normal", &[("mu", 100.0), ("sigma", 10.0)]),
            spec("gumbel", &[("mu", 100.0), ("sigma", 10.0)]),
            spec("logistic", &[("mu", 100.0), ("sigma", 10.0)]),
            spec("uniform", &[("a", 10.0), ("b", 30.0)]),
            DistSpec {
                distribution_id: "mixture".into(),
                params: [
                    ("alpha1", 10.0),
                    ("beta1", 0.8),
                    ("weight1", 0.3),
                    ("alpha2", 90.0),
                    ("beta2", 3.0),
                    ("weight2", 0.7),
                ]
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
                base_distribution_id: Some("weibull".into()),
                table: None,
                path: None,
            },
            DistSpec {
                distribution_id: "table".into(),
                params: BTreeMap::new(),
                base_distribution_id: None,
                table: Some(vec![[0.0, 0.0], [10.0, 0.4], [25.0, 1.0]]),
                path: None,
            },
        ];
        for s in &cases {
            for k in [2.0, 0.5, 1e-3, 1e6] {
                let (a, b) = (
                    Dist::from_spec(s).unwrap(),
                    Dist::from_spec(&time_scaled(s, k).unwrap()).unwrap(),
                );
                for p in [0.05, 0.3, 0.5, 0.9] {
                    let (x, y) = (a.quantile(p), b.quantile(p));
                    assert!(
                        (y - k * x).abs() <= 1e-9 * (k * x).abs().max(1e-300),
                        "{s:?} k={k} p={p}: {x} {y}"
                    );
                }
                assert!((b.mean() / (k * a.mean()) - 1.0).abs() < 1e-9, "{s:?} mean");
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_stretch() {
        assert!(time_scaled(&spec("weibull", &[("alpha", 1.0), ("beta", 1.0)]), 0.0).is_err());
        assert!(time_scaled(&spec("foo", &[("x", 1.0)]), 2.0).is_err());
    }
}
