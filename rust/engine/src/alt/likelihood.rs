//! Log-likelihood of a log-location-scale regression on log time, its gradient and Hessian,
//! and a Levenberg-damped Newton maximiser. The same mathematics as Python's
//! `bathtub.inference.loglocscale` laws (Meeker & Escobar, app. B): y = ln t, z = (y - mu) / sigma; a
//! failure adds ln f(z) - ln sigma - y, a right-censored unit ln S(z).

// Small dense matrices read clearer indexed, as the formulas are written.
#![allow(clippy::needless_range_loop)]

use statrs::function::erf::erfc;

/// Most coefficients a model has: intercept, two stresses, ln sigma.
pub const MAX_K: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    Weibull,
    Lognormal,
    Exponential,
}

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// (ln Phi(-z), phi(z) / Phi(-z)): by erfc where it is accurate, by Laplace's continued
/// fraction for the Mills ratio far in the upper tail (z >= 30), where erfc nears underflow.
fn normal_tail(z: f64) -> (f64, f64) {
    let log_phi = -0.5 * z * z - LN_SQRT_2PI;
    if z < 30.0 {
        let sf = 0.5 * erfc(z / std::f64::consts::SQRT_2);
        let log_sf = sf.ln();
        (log_sf, (log_phi - log_sf).exp())
    } else {
        // phi/Phi(-z) = z + 1/(z + 2/(z + 3/(z + ...))), evaluated bottom-up
        let mut cf = z;
        for k in (1..=60).rev() {
            cf = z + k as f64 / cf;
        }
        (log_phi - cf.ln(), cf)
    }
}

/// The units of one fit on the standardised scale: y centred, design rows (1, g...).
pub struct Problem<'a> {
    pub y: &'a [f64],
    pub failed: &'a [bool],
    pub x: &'a [[f64; MAX_K]],
    pub offset: &'a [f64],
    pub p: usize, // design columns
    pub life: Life,
}

impl Problem<'_> {
    pub fn k(&self) -> usize {
        if self.life == Life::Exponential {
            self.p
        } else {
            self.p + 1
        }
    }

    /// (log-likelihood, gradient, Hessian) at theta = (b, [ln sigma]).
    pub fn eval(&self, theta: &[f64; MAX_K]) -> (f64, [f64; MAX_K], [[f64; MAX_K]; MAX_K]) {
        let p = self.p;
        let fixed = self.life == Life::Exponential;
        let log_s = if fixed { 0.0 } else { theta[p] };
        let s = log_s.exp();
        let mut ll = 0.0;
        let mut g = [0.0; MAX_K];
        let mut h = [[0.0; MAX_K]; MAX_K];
        let mut nf = 0.0;
        for i in 0..self.y.len() {
            let xi = &self.x[i];
            let mut mu = self.offset[i];
            for j in 0..p {
                mu += xi[j] * theta[j];
            }
            let z = (self.y[i] - mu) / s;
            let fail = self.failed[i];
            let (l, d1, d2) = match self.life {
                Life::Lognormal => {
                    if fail {
                        (-0.5 * z * z - LN_SQRT_2PI, -z, -1.0)
                    } else {
                        let (log_sf, m) = normal_tail(z);
                        (log_sf, -m, -m * (m - z))
                    }
                }
                _ => {
                    let ez = z.exp();
                    if fail {
                        (z - ez, 1.0 - ez, -ez)
                    } else {
                        (-ez, -ez, -ez)
                    }
                }
            };
            ll += l;
            if fail {
                nf += 1.0;
                ll -= self.y[i];
            }
            let a = -d1 / s;
            let b = d2 / (s * s);
            for j in 0..p {
                g[j] += a * xi[j];
                for m in 0..=j {
                    h[j][m] += b * xi[j] * xi[m];
                }
            }
            if !fixed {
                g[p] -= d1 * z;
                let c = (d2 * z + d1) / s;
                for j in 0..p {
                    h[p][j] += c * xi[j];
                }
                h[p][p] += z * d1 + z * z * d2;
            }
        }
        ll -= nf * log_s;
        if !fixed {
            g[p] -= nf;
        }
        let k = self.k();
        for j in 0..k {
            for m in 0..j {
                h[m][j] = h[j][m];
            }
        }
        (ll, g, h)
    }
}

/// Solve (A) x = b for symmetric positive definite A (k x k) by Cholesky; None if not SPD.
pub fn cholesky_solve(
    a: &[[f64; MAX_K]; MAX_K],
    b: &[f64; MAX_K],
    k: usize,
) -> Option<[f64; MAX_K]> {
    let mut l = [[0.0; MAX_K]; MAX_K];
    for i in 0..k {
        for j in 0..=i {
            let mut sum = a[i][j];
            for m in 0..j {
                sum -= l[i][m] * l[j][m];
            }
            if i == j {
                if sum <= 0.0 || !sum.is_finite() {
                    return None;
                }
                l[i][i] = sum.sqrt();
            } else {
                l[i][j] = sum / l[j][j];
            }
        }
    }
    let mut y = [0.0; MAX_K];
    for i in 0..k {
        let mut sum = b[i];
        for m in 0..i {
            sum -= l[i][m] * y[m];
        }
        y[i] = sum / l[i][i];
    }
    let mut x = [0.0; MAX_K];
    for i in (0..k).rev() {
        let mut sum = y[i];
        for m in i + 1..k {
            sum -= l[m][i] * x[m];
        }
        x[i] = sum / l[i][i];
    }
    Some(x)
}

/// Maximise the likelihood from `theta`; (theta, ll) or None when it cannot be maximised
/// (no finite optimum: e.g. a replicate whose failures do not identify the model).
pub fn newton(
    pb: &Problem<'_>,
    mut theta: [f64; MAX_K],
    max_iter: usize,
) -> Option<([f64; MAX_K], f64)> {
    let k = pb.k();
    let (mut ll, mut g, mut h) = pb.eval(&theta);
    if !ll.is_finite() {
        return None;
    }
    let mut lam = 0.0_f64;
    for _ in 0..max_iter {
        let (step, cand, ll_new, g_new, h_new) = loop {
            let mut neg = [[0.0; MAX_K]; MAX_K];
            for i in 0..k {
                for j in 0..k {
                    neg[i][j] = -h[i][j];
                }
                neg[i][i] += lam;
            }
            if let Some(step) = cholesky_solve(&neg, &g, k) {
                let mut cand = theta;
                for i in 0..k {
                    cand[i] += step[i];
                }
                let (ll_new, g_new, h_new) = pb.eval(&cand);
                if ll_new.is_finite() && ll_new >= ll - 1e-12 * (1.0 + ll.abs()) {
                    break (step, cand, ll_new, g_new, h_new);
                }
            }
            lam = (lam * 10.0).max(1e-6);
            if lam > 1e12 {
                return None;
            }
        };
        let decrement: f64 = (0..k).map(|i| g[i] * step[i]).sum();
        let biggest = (0..k).map(|i| step[i].abs()).fold(0.0, f64::max);
        theta = cand;
        ll = ll_new;
        g = g_new;
        h = h_new;
        lam = if lam > 1e-6 { lam / 10.0 } else { 0.0 };
        if decrement < 1e-12 && biggest < 1e-9 {
            // the optimum must be a maximum with finite information
            let mut neg = [[0.0; MAX_K]; MAX_K];
            for i in 0..k {
                for j in 0..k {
                    neg[i][j] = -h[i][j];
                }
            }
            return cholesky_solve(&neg, &[0.0; MAX_K], k).map(|_| (theta, ll));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_tail_is_continuous_at_the_switch() {
        let (a, ma) = normal_tail(30.0 - 1e-12);
        let (b, mb) = normal_tail(30.0);
        assert!(
            (a - b).abs() < 1e-10 * a.abs() && (ma - mb).abs() < 1e-10 * ma,
            "{a} {b} {ma} {mb}"
        );
        // ln Phi(-40) from the asymptotic series -z^2/2 - ln(z sqrt(2 pi)) + ln(1 - 1/z^2 + 3/z^4)
        let z: f64 = 40.0;
        let want = -0.5 * z * z - (z * (2.0 * std::f64::consts::PI).sqrt()).ln()
            + (1.0 - 1.0 / (z * z) + 3.0 / z.powi(4) - 15.0 / z.powi(6)).ln();
        assert!((normal_tail(z).0 - want).abs() < 1e-10); // the series's next term is 105/z^8 ~ 2e-11
    }

    #[test]
    fn cholesky_solves() {
        let a = [
            [4.0, 2.0, 0.0, 0.0],
            [2.0, 3.0, 0.0, 0.0],
            [0.0; 4],
            [0.0; 4],
        ];
        let x = cholesky_solve(&a, &[2.0, 1.0, 0.0, 0.0], 2).unwrap();
        assert!((4.0 * x[0] + 2.0 * x[1] - 2.0).abs() < 1e-14);
        assert!((2.0 * x[0] + 3.0 * x[1] - 1.0).abs() < 1e-14);
    }
}
