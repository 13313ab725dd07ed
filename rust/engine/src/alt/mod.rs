//! Accelerated life tests: maximum-likelihood refits of log-linear life–stress models with
//! Weibull, lognormal or exponential lives, and bootstrap replicates of a fit spread over
//! rayon (`bootstrap`). The model and its parametrisation are those of Python's
//! `bathtub.alt`: ln L(S) = offset(S) + a + sum_j b_j g_j(S), ln T = ln L + sigma W.

pub mod bootstrap;
pub mod likelihood;

use crate::error::EngineError;
use likelihood::{Life, MAX_K, Problem, cholesky_solve, newton};

/// The transforms of a life–stress relationship (see `bathtub.alt.relationships`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relationship {
    Arrhenius,
    Eyring,
    Power,
    Exponential,
    DualExponential,
    Peck,
    TemperatureNonthermal,
    DualPower,
}

#[derive(Clone, Copy)]
enum Transform {
    Inverse,
    Log,
    Identity,
}

impl Transform {
    fn apply(self, s: f64) -> f64 {
        match self {
            Transform::Inverse => 1.0 / s,
            Transform::Log => s.ln(),
            Transform::Identity => s,
        }
    }
}

impl Relationship {
    pub fn parse(id: &str) -> Result<Self, EngineError> {
        Ok(match id {
            "arrhenius" => Relationship::Arrhenius,
            "eyring" => Relationship::Eyring,
            "power" => Relationship::Power,
            "exponential" => Relationship::Exponential,
            "dual_exponential" => Relationship::DualExponential,
            "peck" => Relationship::Peck,
            "temperature_nonthermal" => Relationship::TemperatureNonthermal,
            "dual_power" => Relationship::DualPower,
            other => {
                return Err(EngineError::at(
                    "relationship",
                    format!("unknown {other:?}"),
                ));
            }
        })
    }

    fn transforms(self) -> &'static [Transform] {
        use Transform::*;
        match self {
            Relationship::Arrhenius | Relationship::Eyring => &[Inverse],
            Relationship::Power => &[Log],
            Relationship::Exponential => &[Identity],
            Relationship::DualExponential => &[Inverse, Inverse],
            Relationship::Peck | Relationship::TemperatureNonthermal => &[Inverse, Log],
            Relationship::DualPower => &[Log, Log],
        }
    }

    pub fn stresses(self) -> usize {
        self.transforms().len()
    }

    fn needs_positive(self) -> bool {
        self != Relationship::Exponential
    }
}

pub fn parse_life(id: &str) -> Result<Life, EngineError> {
    Ok(match id {
        "weibull" => Life::Weibull,
        "lognormal" => Life::Lognormal,
        "exponential" => Life::Exponential,
        other => return Err(EngineError::at("life", format!("unknown {other:?}"))),
    })
}

/// An ALT data set: per unit a time > 0, failed or right-censored, and its stresses.
#[derive(Clone, Debug)]
pub struct AltData {
    pub t: Vec<f64>,
    pub failed: Vec<bool>,
    /// stresses[j][i]: stress j of unit i
    pub stresses: Vec<Vec<f64>>,
}

#[derive(Clone, Copy, Debug)]
pub struct Model {
    pub life: Life,
    pub relationship: Relationship,
}

impl Model {
    /// Coefficients: intercept, one per stress, ln sigma unless the life is exponential.
    pub fn k(&self) -> usize {
        1 + self.relationship.stresses() + usize::from(self.life != Life::Exponential)
    }

    fn check(&self, data: &AltData) -> Result<(), EngineError> {
        let n = data.t.len();
        if n == 0 || data.failed.len() != n {
            return Err(EngineError::at(
                "data",
                "times and failure flags differ in length or are empty",
            ));
        }
        if data.stresses.len() != self.relationship.stresses()
            || data.stresses.iter().any(|s| s.len() != n)
        {
            return Err(EngineError::at(
                "stress",
                format!(
                    "{} stress column(s) of {n} values are needed",
                    self.relationship.stresses()
                ),
            ));
        }
        if data.t.iter().any(|&t| !(t > 0.0 && t.is_finite())) {
            return Err(EngineError::at("t", "times must be finite and > 0"));
        }
        for s in &data.stresses {
            if s.iter()
                .any(|&v| !v.is_finite() || (self.relationship.needs_positive() && v <= 0.0))
            {
                return Err(EngineError::at(
                    "stress",
                    "stresses must be finite (and > 0 where logs or reciprocals are taken)",
                ));
            }
        }
        Ok(())
    }
}

/// One data set on the optimiser's scale: y = ln t - shift, design rows (1, (g - m) / s).
pub struct Standardised {
    pub y: Vec<f64>,
    pub x: Vec<[f64; MAX_K]>,
    pub offset: Vec<f64>,
    pub shift: f64,
    pub m: [f64; 2],
    pub s: [f64; 2],
    pub p: usize,
}

impl Standardised {
    pub fn new(model: &Model, data: &AltData) -> Self {
        let n = data.t.len();
        let tr = model.relationship.transforms();
        let p = 1 + tr.len();
        let mut g = vec![[0.0; 2]; n];
        let (mut m, mut s) = ([0.0; 2], [1.0; 2]);
        for (j, f) in tr.iter().enumerate() {
            for (row, &v) in g.iter_mut().zip(&data.stresses[j]) {
                row[j] = f.apply(v);
            }
            let mean = g.iter().map(|r| r[j]).sum::<f64>() / n as f64;
            let var = g.iter().map(|r| (r[j] - mean) * (r[j] - mean)).sum::<f64>() / n as f64;
            m[j] = mean;
            s[j] = if var > 0.0 { var.sqrt() } else { 1.0 };
        }
        let logs: Vec<f64> = data.t.iter().map(|t| t.ln()).collect();
        let shift = logs.iter().sum::<f64>() / n as f64;
        let y = logs.iter().map(|v| v - shift).collect();
        let x = g
            .iter()
            .map(|r| {
                let mut row = [0.0; MAX_K];
                row[0] = 1.0;
                for j in 0..tr.len() {
                    row[1 + j] = (r[j] - m[j]) / s[j];
                }
                row
            })
            .collect();
        let offset = match model.relationship {
            Relationship::Eyring => data.stresses[0].iter().map(|v| -v.ln()).collect(),
            _ => vec![0.0; n],
        };
        Standardised {
            y,
            x,
            offset,
            shift,
            m,
            s,
            p,
        }
    }

    /// The likelihood of `data`'s units on this standardised scale.
    pub fn problem<'a>(&'a self, data: &'a AltData, life: Life) -> Problem<'a> {
        Problem {
            y: &self.y,
            failed: &data.failed,
            x: &self.x,
            offset: &self.offset,
            p: self.p,
            life,
        }
    }

    /// Natural coefficients from internal ones.
    pub fn to_natural(&self, b: &[f64; MAX_K]) -> [f64; MAX_K] {
        let mut out = *b;
        out[0] = b[0] + self.shift;
        for j in 1..self.p {
            out[j] = b[j] / self.s[j - 1];
            out[0] -= b[j] * self.m[j - 1] / self.s[j - 1];
        }
        out
    }

    /// Internal coefficients from natural ones (a start from a known fit).
    pub fn to_internal(&self, a: &[f64; MAX_K]) -> [f64; MAX_K] {
        let mut out = *a;
        out[0] = a[0] - self.shift;
        for j in 1..self.p {
            out[j] = a[j] * self.s[j - 1];
            out[0] += a[j] * self.m[j - 1];
        }
        out
    }
}

/// A fit: natural coefficients (a, b.., [ln sigma]) and the log-likelihood of the times.
#[derive(Clone, Copy, Debug)]
pub struct Fit {
    pub theta: [f64; MAX_K],
    pub loglik: f64,
}

const MAX_ITER: usize = 100;

/// Maximum-likelihood fit from natural coefficients `start`; None when the data do not
/// identify the model (no failures, a singular information, no finite optimum).
pub fn fit_from(model: &Model, data: &AltData, start: &[f64; MAX_K]) -> Option<Fit> {
    if !data.failed.iter().any(|&f| f) {
        return None;
    }
    let st = Standardised::new(model, data);
    let pb = st.problem(data, model.life);
    let (theta, ll) = newton(&pb, st.to_internal(start), MAX_ITER)?;
    let nf = data.failed.iter().filter(|&&f| f).count() as f64;
    Some(Fit {
        theta: st.to_natural(&theta),
        loglik: ll - nf * st.shift,
    })
}

/// A checked fit of `data` from `start` (natural coefficients, e.g. Python's estimate; the
/// model's first `k` are read, missing ones start at 0).
pub fn fit(model: &Model, data: &AltData, start: &[f64]) -> Result<Fit, EngineError> {
    model.check(data)?;
    let mut s = [0.0; MAX_K];
    let k = model.k().min(start.len());
    s[..k].copy_from_slice(&start[..k]);
    fit_from(model, data, &s)
        .ok_or_else(|| EngineError::at("data", "the ALT likelihood has no finite maximum"))
}

impl Fit {
    /// The model's `k` fitted coefficients (the rest of `theta` is padding).
    pub fn coefficients(&self, model: &Model) -> &[f64] {
        &self.theta[..model.k()]
    }

    /// The covariance of the natural coefficients: the inverse observed information of the
    /// likelihood at the fit, taken on the standardised problem the fit ran on (where it is
    /// well conditioned) and carried to the natural coefficients by the linear map between
    /// them, J C J'. None when the information is not positive definite (the data do not
    /// identify the model).
    // Small dense matrices read clearer indexed, as the formulas are written (as in likelihood.rs).
    #[allow(clippy::needless_range_loop)]
    pub fn covariance(&self, model: &Model, data: &AltData) -> Option<Vec<Vec<f64>>> {
        let st = Standardised::new(model, data);
        let pb = st.problem(data, model.life);
        let k = pb.k();
        let (_, _, h) = pb.eval(&st.to_internal(&self.theta));
        let mut info = [[0.0; MAX_K]; MAX_K];
        for i in 0..k {
            for j in 0..k {
                info[i][j] = -h[i][j];
            }
        }
        // C = info^-1, a column per unit vector
        let mut c = [[0.0; MAX_K]; MAX_K];
        for j in 0..k {
            let mut e = [0.0; MAX_K];
            e[j] = 1.0;
            let col = cholesky_solve(&info, &e, k)?;
            for i in 0..k {
                c[i][j] = col[i];
            }
        }
        // J: natural[0] = b0 + shift - sum_j b_j m_j / s_j, natural[j] = b_j / s_j, ln sigma as is
        let mut jac = [[0.0; MAX_K]; MAX_K];
        for i in 0..k {
            jac[i][i] = 1.0;
        }
        for j in 1..st.p {
            jac[j][j] = 1.0 / st.s[j - 1];
            jac[0][j] = -st.m[j - 1] / st.s[j - 1];
        }
        let mut out = vec![vec![0.0; k]; k];
        for (a, row) in out.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                let mut sum = 0.0;
                for i in 0..k {
                    for j in 0..k {
                        sum += jac[a][i] * c[i][j] * jac[b][j];
                    }
                }
                *v = sum;
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exponential life at two levels is saturated: the MLE life at each level is its total
    /// time on test over its failures (Nelson 1990, ch. 3), so the line through the two
    /// levels' ln(TTT / r) against 1/T is the fit.
    #[test]
    fn exponential_two_levels_is_total_time_over_failures() {
        let t = vec![
            120.0, 340.0, 800.0, 1000.0, 1000.0, 30.0, 75.0, 160.0, 210.0, 400.0,
        ];
        let failed = vec![
            true, true, true, false, false, true, true, true, true, false,
        ];
        let s = vec![
            350.0, 350.0, 350.0, 350.0, 350.0, 400.0, 400.0, 400.0, 400.0, 400.0,
        ];
        let data = AltData {
            t: t.clone(),
            failed,
            stresses: vec![s],
        };
        let model = Model {
            life: Life::Exponential,
            relationship: Relationship::Arrhenius,
        };
        let fit = fit(&model, &data, &[0.0; MAX_K]).unwrap();
        let l1: f64 = t[..5].iter().sum::<f64>() / 3.0;
        let l2: f64 = t[5..].iter().sum::<f64>() / 4.0;
        let b = (l1.ln() - l2.ln()) / (1.0 / 350.0 - 1.0 / 400.0);
        let a = l1.ln() - b / 350.0;
        assert!(
            (fit.theta[1] - b).abs() < 1e-7 * b.abs(),
            "{} {}",
            fit.theta[1],
            b
        );
        assert!((fit.theta[0] - a).abs() < 1e-7 * a.abs());
        // ln L = sum over levels of r ln(1/L) - TTT/L
        let want = -3.0 * l1.ln() - 3.0 - 4.0 * l2.ln() - 4.0;
        assert!((fit.loglik - want).abs() < 1e-9);
        // ln L at each level has variance 1/r (the exponential's information r on ln L), and
        // (a, b) is G^-1 (ln L1, ln L2) with G = [[1, 1/350], [1, 1/400]]: cov = G^-1 D G^-T
        let cov = fit.covariance(&model, &data).unwrap();
        let (g1, g2) = (1.0 / 350.0, 1.0 / 400.0);
        let det = g2 - g1;
        let inv = [[g2 / det, -g1 / det], [-1.0 / det, 1.0 / det]];
        let d = [1.0 / 3.0, 1.0 / 4.0];
        for i in 0..2 {
            for j in 0..2 {
                let want = inv[i][0] * d[0] * inv[j][0] + inv[i][1] * d[1] * inv[j][1];
                assert!(
                    (cov[i][j] - want).abs() < 1e-7 * want.abs(),
                    "{i} {j}: {} {want}",
                    cov[i][j]
                );
            }
        }
    }

    #[test]
    fn refuses_bad_data() {
        let model = Model {
            life: Life::Weibull,
            relationship: Relationship::Power,
        };
        let data = AltData {
            t: vec![1.0, 2.0],
            failed: vec![true, true],
            stresses: vec![vec![1.0, -1.0]],
        };
        assert!(fit(&model, &data, &[0.0; MAX_K]).is_err());
        let data = AltData {
            t: vec![1.0, 2.0],
            failed: vec![false, false],
            stresses: vec![vec![1.0, 2.0]],
        };
        assert!(fit(&model, &data, &[0.0; MAX_K]).is_err());
    }

    /// The analytic gradient and Hessian of the likelihood against central differences of the
    /// value (and of the gradient), for each life and a censored sample with a covariate.
    #[test]
    fn derivatives_match_differences() {
        let n = 30;
        let y: Vec<f64> = (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0).collect();
        let failed: Vec<bool> = (0..n).map(|i| i % 3 != 0).collect();
        let x: Vec<[f64; MAX_K]> = (0..n)
            .map(|i| [1.0, ((i * 5 % 7) as f64 - 3.0) / 2.0, 0.0, 0.0])
            .collect();
        let offset = vec![0.0; n];
        for life in [Life::Weibull, Life::Lognormal, Life::Exponential] {
            let pb = Problem {
                y: &y,
                failed: &failed,
                x: &x,
                offset: &offset,
                p: 2,
                life,
            };
            let k = pb.k();
            let th = [0.2, -0.3, 0.1, 0.0];
            let (_, g, h) = pb.eval(&th);
            let e = 1e-6;
            for i in 0..k {
                let (mut up, mut down) = (th, th);
                up[i] += e;
                down[i] -= e;
                let (lu, gu, _) = pb.eval(&up);
                let (ld, gd, _) = pb.eval(&down);
                let num = (lu - ld) / (2.0 * e);
                assert!(
                    (g[i] - num).abs() < 1e-6 * (1.0 + num.abs()),
                    "{life:?} g{i}"
                );
                for j in 0..k {
                    let num = (gu[j] - gd[j]) / (2.0 * e);
                    assert!(
                        (h[i][j] - num).abs() < 1e-6 * (1.0 + num.abs()),
                        "{life:?} h{i}{j}"
                    );
                }
            }
        }
    }
}
