//! A block's options checked and compiled: preventive and condition policies, standby
//! dormancy, state at time 0, capacity, imperfect repair, costs, proof tests.
use super::*;

pub(super) fn preventive(
    id: &str,
    n: &NodeSpec,
    p: &PreventiveSpec,
) -> Result<Preventive, EngineError> {
    let bad = |why: String| EngineError::node_field(id, "preventive", why);
    if n.kind != "component" {
        return Err(bad("planned replacement is for component blocks".into()));
    }
    if n.inspection.is_some() {
        return Err(bad("not together with inspection".into()));
    }
    let policy = match p.policy.as_deref() {
        None | Some("age") => Policy::Age,
        Some("block") => Policy::Block,
        Some("condition") => Policy::Condition,
        Some(other) => {
            return Err(bad(format!(
                "policy must be age, block or condition (got {other:?})"
            )));
        }
    };
    if !(p.interval.is_finite() && p.interval > 0.0) {
        return Err(bad(format!(
            "interval must be a finite number > 0 (got {})",
            p.interval
        )));
    }
    let duration = p.duration.unwrap_or(0.0);
    if !(duration.is_finite() && duration >= 0.0) {
        return Err(bad(format!("duration must be >= 0 (got {duration})")));
    }
    if policy == Policy::Block && duration >= p.interval {
        return Err(bad(
            "duration must be below the interval for block replacement".into(),
        ));
    }
    let threshold = match (policy, p.threshold) {
        (Policy::Condition, Some(t)) if (0.0..=1.0).contains(&t) => t,
        (Policy::Condition, _) => {
            return Err(bad("threshold in [0, 1] is required for condition".into()));
        }
        (_, Some(_)) => return Err(bad("threshold is for the condition policy".into())),
        (_, None) => 0.0,
    };
    if policy != Policy::Condition && p.inspection_cost.is_some() {
        return Err(bad("inspection_cost is for the condition policy".into()));
    }
    let zero = (0.0, 0.0);
    Ok(Preventive {
        policy,
        interval: p.interval,
        duration,
        cost: p
            .cost
            .map_or(Ok(zero), |c| c.compile(id, "preventive.cost"))?,
        threshold,
        inspection_cost: p
            .inspection_cost
            .map_or(Ok(zero), |c| c.compile(id, "preventive.inspection_cost"))?,
        opportunity: match p.opportunity {
            None => None,
            Some(o)
                if policy == Policy::Age
                    && n.maintenance_group.is_some()
                    && (0.0..=p.interval).contains(&o) =>
            {
                Some(o)
            }
            Some(_) => {
                return Err(bad(
                    "opportunity is for the age policy in a maintenance group, 0 to the interval"
                        .into(),
                ));
            }
        },
    })
}

/// A standby node's idle ageing rate: `dormancy`, else 0 when `cold`, else 1 (hot).
pub(super) fn node_dormancy(id: &str, n: &NodeSpec) -> Result<f64, EngineError> {
    let dormancy = match (n.dormancy, n.cold) {
        (Some(d), _) => d,
        (None, Some(true)) => 0.0,
        (None, _) => 1.0,
    };
    if !(0.0..=1.0).contains(&dormancy) {
        return Err(EngineError::node(
            id,
            format!("dormancy must be in [0, 1] (got {dormancy})"),
        ));
    }
    Ok(dormancy)
}

pub(super) fn start_state(
    id: &str,
    n: &NodeSpec,
    st: &BlockStateSpec,
) -> Result<Option<Start>, EngineError> {
    let bad = |why: &str| EngineError::node_field(id, "state", why);
    if n.kind == "standby" {
        return Err(bad("not simulated for standby groups"));
    }
    if n.preventive.is_some() || n.inspection.is_some() || n.repair_quality.is_some() {
        return Err(bad(
            "not simulated together with preventive, inspection or repair_quality",
        ));
    }
    let (failed, down) = (st.failed.unwrap_or(false), st.down.unwrap_or(false));
    if failed && down {
        return Err(bad("failed or down, not both"));
    }
    if st.since.is_some() && !down {
        return Err(bad("since goes with down"));
    }
    if st.age.is_some() && (failed || down) {
        return Err(bad("age is for a running block"));
    }
    let finite = |x: f64| x.is_finite() && x >= 0.0;
    Ok(if failed {
        Some(Start::Failed)
    } else if down {
        let since = st.since.unwrap_or(0.0);
        if !finite(since) {
            return Err(bad("since must be a finite number >= 0"));
        }
        if n.repair.is_none() {
            return Err(bad("down needs a repair model"));
        }
        Some(Start::Down { since })
    } else {
        match st.age {
            Some(a) if !finite(a) => return Err(bad("age must be a finite number >= 0")),
            Some(a) if a > 0.0 => Some(Start::Aged { age: a }),
            _ => None,
        }
    })
}

pub(super) fn capacity(id: &str, cs: &CapacitySpec) -> Result<Vec<(f64, f64)>, EngineError> {
    let bad = |why: &str| EngineError::node_field(id, "capacity", why);
    let levels = match cs {
        CapacitySpec::Fixed(x) => vec![CapacityLevel {
            value: *x,
            probability: 1.0,
        }],
        CapacitySpec::Levels(l) => l.clone(),
    };
    if levels.is_empty() {
        return Err(bad("give a number or at least one level"));
    }
    let mut cum = 0.0;
    let mut out = vec![];
    for l in &levels {
        if !(l.value.is_finite() && l.value > 0.0) {
            return Err(bad("values must be finite numbers > 0"));
        }
        if !(l.probability > 0.0 && l.probability <= 1.0) {
            return Err(bad("probabilities must be in (0, 1]"));
        }
        cum += l.probability;
        out.push((l.value, cum));
    }
    if (cum - 1.0).abs() > 1e-9 {
        return Err(bad("level probabilities must add to 1"));
    }
    Ok(out)
}

pub(super) fn repair_quality(
    id: &str,
    n: &NodeSpec,
    r: &RepairQualitySpec,
) -> Result<Option<RepairQuality>, EngineError> {
    let bad = |why: &str| EngineError::node_field(id, "repair_quality", why);
    if n.kind != "component" {
        return Err(bad("is for component blocks"));
    }
    if n.inspection.is_some() {
        return Err(bad("not simulated together with inspection"));
    }
    if n.preventive
        .as_ref()
        .is_some_and(|p| p.policy.as_deref() == Some("condition"))
    {
        return Err(bad("not on a condition-replaced block"));
    }
    if n.model
        .as_ref()
        .is_some_and(|m| m.distribution_id == "mixture")
    {
        return Err(bad("refused with a mixture life"));
    }
    let kijima2 = match r.model.as_deref() {
        None | Some("perfect") => {
            if r.q.is_some() || r.replace_after.is_some() {
                return Err(bad("q and replace_after are for the kijima models"));
            }
            return Ok(None);
        }
        Some("kijima1") => false,
        Some("kijima2") => true,
        Some(_) => return Err(bad("model must be perfect, kijima1 or kijima2")),
    };
    let q = r.q.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&q) {
        return Err(bad("q must be in [0, 1]"));
    }
    let replace_after = r.replace_after.unwrap_or(0);
    if replace_after > 1000 || (r.replace_after.is_some() && (replace_after == 0 || q == 0.0)) {
        return Err(bad("replace_after is an integer 1..1000, with q > 0"));
    }
    Ok(Some(RepairQuality {
        kijima2,
        q,
        replace_after,
    }))
}

pub(super) fn block_costs(id: &str, k: &BlockCostsSpec) -> Result<GroupCosts, EngineError> {
    let zero = (0.0, 0.0);
    let rate = |v: Option<f64>, what: &str| -> Result<f64, EngineError> {
        let x = v.unwrap_or(0.0);
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(EngineError::node(
                id,
                format!("costs.{what} must be a finite number >= 0"),
            ))
        }
    };
    Ok(GroupCosts {
        repair: k
            .repair
            .map_or(Ok(zero), |c| c.compile(id, "costs.repair"))?,
        replace: k
            .replace
            .map_or(Ok(zero), |c| c.compile(id, "costs.replace"))?,
        downtime: rate(k.downtime, "downtime")?,
        acquisition: rate(k.acquisition, "acquisition")?,
        test: zero,
    })
}

/// Validate and compile a block's proof tests.
pub(super) fn proof_test(
    id: &str,
    n: &NodeSpec,
    t: &ProofTestSpec,
) -> Result<ProofTest, EngineError> {
    let bad = |why: String| EngineError::node_field(id, "inspection", why);
    if n.kind != "component" {
        return Err(bad("proof tests are for component blocks".into()));
    }
    if !(t.interval.is_finite() && t.interval > 0.0) {
        return Err(bad(format!(
            "interval must be a finite number > 0 (got {})",
            t.interval
        )));
    }
    let duration = t.duration.unwrap_or(0.0);
    if !(duration.is_finite() && duration >= 0.0 && duration < t.interval) {
        return Err(bad(format!(
            "duration must be >= 0 and below the interval (got {duration})"
        )));
    }
    let offset = t.offset.unwrap_or(0.0);
    if !(offset.is_finite() && offset >= 0.0 && offset < t.interval) {
        return Err(bad(format!(
            "offset must be >= 0 and below the interval (got {offset})"
        )));
    }
    let coverage = t.coverage.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&coverage) {
        return Err(bad(format!("coverage must be in [0, 1] (got {coverage})")));
    }
    let full_every = match t.full_test {
        None if coverage < 1.0 => return Err(bad("coverage below 1 needs full_test".into())),
        None => 1,
        Some(f) => {
            let m = (f / t.interval).round();
            if !(f.is_finite() && f > 0.0 && m >= 1.0 && (f - m * t.interval).abs() <= 1e-9 * f) {
                return Err(bad(format!(
                    "full_test must be a whole multiple of the interval (got {f})"
                )));
            }
            if m > u32::MAX as f64 {
                return Err(bad("full_test is too many intervals".into()));
            }
            m as u32
        }
    };
    Ok(ProofTest {
        interval: t.interval,
        duration,
        offset,
        coverage,
        full_every,
    })
}
