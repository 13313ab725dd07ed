//! Numeric renewal known means: the expected downtime over [0, T] of one unit whose life
//! and repair have any distribution, repaired as new, optionally replaced at age τ (off-line
//! for d, then as new). Its up and down periods alternate and every return to service
//! renews it, so with V(t) the expected up time in [0, t] from the start of an up period
//! and W(t) the same from the start of a down period (Barlow and Proschan's alternating
//! renewal argument, written for the up time so both functions are continuous):
//!
//!   V(t) = ∫_0^{min(t,τ)} S_L(x) dx + ∫_[0, min(t,τ)) W(t - s) dF_L(s) + S_L(τ) V(t - τ - d)⁺
//!   W(t) = ∫_[0, t] V(t - r) dF_R(r)
//!
//! (V(x)⁺ = 0 for x < 0; no replacement: τ = ∞). Solved on a uniform grid by the
//! Stieltjes trapezoid rule, ∫ X(t - u) dF(u) ≈ Σ ½(X(t - u_{j-1}) + X(t - u_j)) ΔF_j, which
//! takes only the distributions' CDFs and is second order in the step where X is smooth;
//! the grid holds τ and d as nodes, so the jumps of A(t) = V'(t) fall on nodes (kinks of
//! V, exact for the piecewise-linear rule). Three steps h, h/2, h/4 extrapolate by
//! Romberg's scheme (`solve`), which also estimates the error.
use crate::dist::{Dist, Lifetime};

/// Most grid points of the finest solve (cost ~ N² multiply-adds per function, about
/// 0.2 s at this size): a larger one is not solved (the mean would cost more than a run).
pub const MAX_POINTS: usize = 16_384;

/// The grid the finest solve aims at over the horizon, before it is aligned to τ and d.
const AIM_POINTS: usize = 8_192;

/// A unit's renewal description: life, repair, age replacement (τ, d).
pub struct Unit<'a> {
    pub life: &'a Dist,
    pub repair: &'a Dist,
    pub replace: Option<(f64, f64)>,
}

/// A solved expected downtime fraction over [0, T] and its estimated error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solved {
    pub down: f64,
    pub error: f64,
}

/// Why a unit's mean was not solved (shown on the run record).
pub type Why = String;

/// The unit step the grid must divide: τ and d as integer multiples of it (q τ = p d with
/// q ≤ 1000), or None when they share no such step.
fn common_step(tau: f64, d: f64) -> Option<f64> {
    if d == 0.0 {
        return Some(tau);
    }
    (1..=1000u32).find_map(|q| {
        let p = q as f64 * tau / d;
        ((p - p.round()).abs() <= 1e-9 * p && p.round() >= 1.0).then(|| d / q as f64)
    })
}

/// Step h of the coarsest of the three solves: the finest (h/4) holds about `AIM_POINTS`
/// over the horizon and divides τ and d.
fn coarse_step(u: &Unit, horizon: f64) -> Result<f64, Why> {
    let aim = 4.0 * horizon / AIM_POINTS as f64;
    let h = match u.replace {
        None => aim,
        Some((tau, d)) => {
            let g = common_step(tau, d)
                .ok_or_else(|| "its replacement age and duration share no grid step".to_string())?;
            // h = g / j or g k, whichever nearest the aim from below (finer is safer).
            if g > aim {
                g / (g / aim).ceil()
            } else {
                let k = (aim / g).floor().max(1.0);
                // k must keep τ and d multiples of h: divide both quotients.
                let (pt, pd) = ((tau / g).round() as u64, (d / g).round() as u64);
                let mut k = k as u64;
                while k > 1 && (pt % k != 0 || pd % k != 0) {
                    k -= 1;
                }
                g * k as f64
            }
        }
    };
    let points = (horizon / (h / 4.0)).ceil() as usize + 2;
    if points > MAX_POINTS {
        return Err(format!(
            "its renewal solve would need {points} grid points (at most {MAX_POINTS})"
        ));
    }
    Ok(h)
}

/// Expected up time V(t_n), n = 0..=steps, on the grid of step h (Stieltjes trapezoid).
pub fn up_time(u: &Unit, h: f64, steps: usize) -> Vec<f64> {
    // Life truncated at the replacement age: panels up to `m` carry it.
    let (m, pm_mass, lag) = match u.replace {
        Some((tau, d)) => {
            let m = (tau / h).round() as usize;
            (m, u.life.sf(tau), m + (d / h).round() as usize)
        }
        None => (usize::MAX, 0.0, usize::MAX),
    };
    let cdf = |d: &Dist, t: f64| d.cdf(t).clamp(0.0, 1.0);
    let lives = steps.min(m);
    let fl: Vec<f64> = (0..=lives).map(|j| cdf(u.life, j as f64 * h)).collect();
    let fr: Vec<f64> = (0..=steps).map(|j| cdf(u.repair, j as f64 * h)).collect();
    let dl: Vec<f64> = (1..=lives).map(|j| fl[j] - fl[j - 1]).collect();
    let dr: Vec<f64> = (1..=steps).map(|j| fr[j] - fr[j - 1]).collect();
    // Panels past the one where F reaches 1 - 1e-16 are left out of the sums: together they
    // weigh at most 1e-16 of an up time at most t (1e-16 of the downtime fraction), and a
    // short repair then costs a few hundred terms per point, not n.
    let reach = |f: &[f64]| {
        f.iter()
            .position(|&x| x >= 1.0 - 1e-16)
            .unwrap_or(f.len() - 1)
    };
    let (jl, jr) = (reach(&fl).max(1), reach(&fr).max(1));
    // G(t_n) = ∫_0^{min(t_n, τ)} S_L, by the same trapezoid.
    let mut g = vec![0.0; steps + 1];
    for n in 1..=steps {
        g[n] = g[n - 1]
            + if n <= m {
                0.5 * h * ((1.0 - fl[n - 1]) + (1.0 - fl[n]))
            } else {
                0.0
            };
    }
    let mut v = vec![0.0; steps + 1];
    let mut w = vec![0.0; steps + 1];
    for n in 1..=steps {
        // Everything but the terms in V(t_n), W(t_n) (panel 1 and the atoms at 0).
        let mut vr = g[n];
        for j in 1..=n.min(m).min(jl) {
            let hi = if j == 1 { 0.0 } else { w[n - j + 1] };
            vr += 0.5 * (hi + w[n - j]) * dl[j - 1];
        }
        if n >= lag {
            vr += pm_mass * v[n - lag];
        }
        let mut wr = 0.0;
        for j in 1..=n.min(jr) {
            let hi = if j == 1 { 0.0 } else { v[n - j + 1] };
            wr += 0.5 * (hi + v[n - j]) * dr[j - 1];
        }
        let a = fl[0] + if m >= 1 { 0.5 * dl[0] } else { 0.0 };
        let b = fr[0] + 0.5 * dr[0];
        v[n] = (vr + a * wr) / (1.0 - a * b);
        w[n] = wr + b * v[n];
    }
    v
}

/// Expected downtime fraction over [0, horizon] on step h: V at the horizon, linear
/// between the nodes around it.
fn down_on(u: &Unit, horizon: f64, h: f64) -> f64 {
    let steps = (horizon / h).ceil() as usize;
    let v = up_time(u, h, steps);
    let x = horizon / h;
    let i = (x.floor() as usize).min(steps.saturating_sub(1));
    let th = x - i as f64;
    let up = v[i] + th * (v[i + 1] - v[i]);
    1.0 - up / horizon
}

/// The unit's expected downtime fraction over [0, horizon] by Romberg's scheme on steps
/// h, h/2, h/4: the trapezoid's error is a series in h², so R_i = f_{i+1} + (f_{i+1} -
/// f_i)/3 removes the h² term and R = R_2 + (R_2 - R_1)/15 the h⁴ term. The error
/// estimate is that of R_2, |R_2 - R_1|/15 (the part R removes), an upper estimate of R's.
pub fn solve(u: &Unit, horizon: f64) -> Result<Solved, Why> {
    let h = coarse_step(u, horizon)?;
    let f: Vec<f64> = [h, h / 2.0, h / 4.0]
        .iter()
        .map(|&s| down_on(u, horizon, s))
        .collect();
    let r1 = f[1] + (f[1] - f[0]) / 3.0;
    let r2 = f[2] + (f[2] - f[1]) / 3.0;
    let error = (r2 - r1).abs() / 15.0;
    let r = r2 + (r2 - r1) / 15.0;
    if !(r.is_finite() && error.is_finite()) {
        return Err("its renewal solve did not give a finite value".into());
    }
    Ok(Solved { down: r, error })
}

/// Largest estimated error a numeric known mean may carry, in downtime fraction: a known
/// mean off by e biases the controlled estimate by β e (β the control's coefficient, of
/// order 1 for a block in series), so e must stay far below any run's standard error. The
/// plan is made before the run's size is known (a run to a target precision grows, a
/// cluster merges chunks), so the bound is absolute: 1e-9 is below 1e-3 of the standard
/// error of a mean unavailability at 1e-3 relative half-width on a block down 1e-3 of the
/// time (the smallest figures the bench and tests ask for).
pub const MAX_ERROR: f64 = 1e-9;

/// The renewal description of group g when its one unit is an alternating renewal process
/// the closed form does not cover: a component (one unit) repaired at once by its own crew
/// as new, touched by nothing else (no proof test, common cause, maintenance group, costs,
/// repair quality, start state, mission phases, shared crews), with any life and repair
/// distributions and, if planned, an age replacement that renews it (the block and
/// condition policies replace on the calendar, whatever the unit's age: not renewals).
pub fn unit_of(c: &crate::diagram::Compiled, crews: u32, g: usize) -> Option<Unit<'_>> {
    use crate::diagram::{GroupKind, NO_GROUP, Policy};
    let grp = &c.groups[g];
    if crews != 0
        || !c.mgroups.is_empty()
        || !c.phases.is_empty()
        || grp.units != 1
        || !matches!(grp.kind, GroupKind::Plain { need: 1 })
        || grp.instant_repair
        || grp.start.is_some()
        || grp.uncovered.is_some()
        || grp.test.is_some()
        || grp.rq.is_some()
        || grp.own_repairer
        || grp.costs.is_some()
        || !grp.own_units.is_empty()
        || c.group_ccf[g] != NO_GROUP
        || c.group_mg[g] != NO_GROUP
    {
        return None;
    }
    let replace = match grp.pm {
        None => None,
        Some(pm) if pm.policy == Policy::Age && pm.opportunity.is_none() => {
            Some((pm.interval, pm.duration))
        }
        Some(_) => return None,
    };
    Some(Unit {
        life: &c.dists[grp.life as usize],
        repair: &c.dists[grp.repair? as usize],
        replace,
    })
}

/// Most blocks a plan solves numerically (each solve costs up to ~0.2 s).
pub const MAX_SOLVES: usize = 16;

/// Numeric renewal means per group: for each group the closed form (`works`) does not cover
/// whose unit is a renewal process, its solve over [0, horizon] when the estimated error is
/// at most `MAX_ERROR` (None otherwise, with a note saying why).
pub(super) fn means(
    c: &crate::diagram::Compiled,
    crews: u32,
    horizon: f64,
    works: &[Option<super::ExpSum>],
    notes: &mut Vec<String>,
) -> Vec<Option<Solved>> {
    let mut out = vec![None; works.len()];
    let mut solved = 0;
    // Blocks of the same life, repair and replacement share one solve (the plant's trains
    // repeat their blocks); the key is the distributions' full description.
    let mut seen: Vec<(String, Result<Solved, Why>)> = vec![];
    for (g, w) in works.iter().enumerate() {
        if w.is_some() {
            continue;
        }
        let Some(u) = unit_of(c, crews, g) else {
            continue;
        };
        let id = &c.groups[g].id;
        let key = format!("{:?} {:?} {:?}", u.life, u.repair, u.replace);
        let known = seen.iter().find(|(k, _)| *k == key).map(|(_, r)| r.clone());
        let result = match known {
            Some(r) => r,
            None if solved == MAX_SOLVES => {
                notes.push(format!(
                    "control: {id}'s renewal mean is not solved (at most {MAX_SOLVES} per run)"
                ));
                continue;
            }
            None => {
                solved += 1;
                let r = solve(&u, horizon);
                seen.push((key, r.clone()));
                r
            }
        };
        match result {
            Ok(s) if s.error <= MAX_ERROR => out[g] = Some(s),
            Ok(s) => notes.push(format!(
                "control: {id}'s renewal mean is not used (estimated error {:.1e} above {MAX_ERROR:.0e})",
                s.error
            )),
            Err(why) => notes.push(format!("control: {id}'s renewal mean is not solved: {why}")),
        }
    }
    out
}

/// `solve` for a caller outside a run (the binding): the unit's expected downtime fraction
/// over [0, horizon] and its estimated error, the inputs checked first.
pub fn downtime(
    life: &Dist,
    repair: &Dist,
    replace: Option<(f64, f64)>,
    horizon: f64,
) -> Result<Solved, crate::error::EngineError> {
    use crate::error::EngineError;
    if !(horizon.is_finite() && horizon > 0.0) {
        return Err(EngineError::at(
            "horizon",
            format!("must be a finite number > 0 (got {horizon})"),
        ));
    }
    if let Some((tau, d)) = replace
        && !(tau.is_finite() && tau > 0.0 && d.is_finite() && d >= 0.0)
    {
        return Err(EngineError::at(
            "replace",
            format!("age must be a finite number > 0 and duration >= 0 (got {tau}, {d})"),
        ));
    }
    let u = Unit {
        life,
        repair,
        replace,
    };
    solve(&u, horizon).map_err(|why| EngineError::new(format!("the unit's renewal mean: {why}")))
}
