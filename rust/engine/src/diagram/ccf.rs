//! Compiling common-cause groups: each member's independent share and the shared events.
use super::*;

impl Builder {
    /// Compile a common-cause group over member groups; on the rate basis each member's
    /// life keeps (1 - beta) of its hazard and shared shocks arrive at beta times the
    /// members' mean failure rate (1 / MTTF): exact for exponential members.
    pub(super) fn ccf(
        &mut self,
        id: &str,
        cc: &CcfSpec,
        members: Vec<u32>,
        same_model: bool,
    ) -> Result<Ccf, EngineError> {
        let m = members.len();
        let bad = |why: String| EngineError::at(format!("common-cause group {id:?}"), why);
        if m < 2 {
            return Err(bad("needs at least 2 members".into()));
        }
        if !(cc.beta > 0.0 && cc.beta < 1.0) {
            return Err(bad(format!("beta must be in (0, 1) (got {})", cc.beta)));
        }
        let rate_basis = match cc.basis.as_deref() {
            None | Some("rate") => true,
            Some("probability") => false,
            Some(other) => {
                return Err(bad(format!(
                    "basis must be rate or probability (got {other:?})"
                )));
            }
        };
        // rho[k] = P(an event taking this member takes at least k + 1 members | at least k).
        let mut rho = vec![1.0, cc.beta];
        match &cc.mgl {
            None => rho.extend(std::iter::repeat_n(1.0, m.saturating_sub(2))),
            Some(g) => {
                if !(m == 3 || m == 4) || g.len() != m - 2 {
                    return Err(bad(format!(
                        "mgl needs [gamma] for 3 members or [gamma, delta] for 4 (has {m} members, {} values)",
                        g.len()
                    )));
                }
                if g.iter().any(|x| !(0.0..=1.0).contains(x)) {
                    return Err(bad("mgl values must be in [0, 1]".into()));
                }
                rho.extend(g);
            }
        }
        rho.push(0.0);
        // take[k]: P(an event taking a given member takes k members in all), k = 1..m.
        let mut take = vec![0.0; m + 1];
        let mut prod = 1.0;
        for k in 1..=m {
            prod *= rho[k - 1];
            take[k] = prod * (1.0 - rho[k]);
        }
        let mut shock_rate = 0.0;
        let mut shock_life = None;
        let mut shock_take = vec![0.0; m + 1];
        if rate_basis && same_model {
            // The whole life of a member (both modes of a partially covered block).
            let whole = self.dists[self.groups[members[0] as usize].whole as usize].clone();
            // Shared events take (sum over k of take[k] m / k) of a member's hazard.
            let share: f64 = (2..=m).map(|k| take[k] * m as f64 / k as f64).sum();
            self.dists.push(hazard_share(whole, share));
            shock_life = Some((self.dists.len() - 1) as u32);
        }
        if rate_basis {
            let mut rate = 0.0;
            for &g in &members {
                let life = self.groups[g as usize].life as usize;
                // The whole life's mean (both modes of a partially covered block).
                let mean = self.dists[self.groups[g as usize].whole as usize].mean();
                if !(mean.is_finite() && mean > 0.0) {
                    return Err(bad(format!(
                        "member {:?} needs a finite mean life",
                        self.groups[g as usize].id
                    )));
                }
                rate += 1.0 / mean / m as f64;
                let base = self.dists[life].clone();
                self.dists.push(hazard_share(base, 1.0 - cc.beta));
                self.groups[g as usize].life = (self.dists.len() - 1) as u32;
                if let Some(un) = self.groups[g as usize].uncovered {
                    let base = self.dists[un as usize].clone();
                    self.dists.push(hazard_share(base, 1.0 - cc.beta));
                    self.groups[g as usize].uncovered = Some((self.dists.len() - 1) as u32);
                }
            }
            // Events of k members arrive at rate * take[k] * m / k (each is counted by k members).
            let per_k: Vec<f64> = (0..=m)
                .map(|k| {
                    if k >= 2 {
                        rate * take[k] * m as f64 / k as f64
                    } else {
                        0.0
                    }
                })
                .collect();
            shock_rate = per_k.iter().sum();
            for k in 2..=m {
                shock_take[k] = per_k[k] / shock_rate;
            }
        }
        Ok(Ccf {
            id: id.to_string(),
            members,
            rate_basis,
            shock_rate,
            shock_life,
            shock_take,
            take,
        })
    }
}
