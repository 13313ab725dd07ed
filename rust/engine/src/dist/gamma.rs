//! Gamma life: shape `alpha`, scale `beta` (mean alpha * beta), as the service names them.
use super::normal::phi_c_inv;
use super::solve::increasing_root;
use super::{DistError, Lifetime, positive};
use crate::rng::Stream;
use statrs::function::gamma::{gamma_lr, gamma_ur, ln_gamma};

#[derive(Debug, Clone, Copy)]
pub struct Gamma {
    shape: f64,
    scale: f64,
    ln_gamma_shape: f64,
    // Marsaglia-Tsang constants for shape max(alpha, alpha + 1).
    d: f64,
    c: f64,
}

impl Gamma {
    pub fn new(alpha: f64, beta: f64) -> Result<Self, DistError> {
        let shape = positive("gamma", "alpha", alpha)?;
        let scale = positive("gamma", "beta", beta)?;
        let a = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        Ok(Gamma {
            shape,
            scale,
            ln_gamma_shape: ln_gamma(shape),
            d,
            c: 1.0 / (9.0 * d).sqrt(),
        })
    }

    /// Wilson-Hilferty start for the standardised quantile at upper-tail probability q.
    fn start(&self, q: f64) -> f64 {
        let a = self.shape;
        let z = phi_c_inv(q);
        let w = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * a.sqrt());
        (a * w * w * w).max(1e-300)
    }

    fn invert(&self, p: f64, upper: bool) -> f64 {
        let target = if upper { p } else { 1.0 - p };
        let x0 = self.start(target);
        let a = self.shape;
        let dens = |x: f64| ((a - 1.0) * x.ln() - x - self.ln_gamma_shape).exp();
        // Solve on the standardised scale; the tail that holds p decides which side is exact.
        let x = if upper {
            increasing_root(|x| p - gamma_ur(a, x), dens, 0.0, f64::INFINITY, x0)
        } else {
            increasing_root(|x| gamma_lr(a, x) - p, dens, 0.0, f64::INFINITY, x0)
        };
        x * self.scale
    }
}

impl Lifetime for Gamma {
    fn sf(&self, t: f64) -> f64 {
        if t <= 0.0 {
            1.0
        } else {
            gamma_ur(self.shape, t / self.scale)
        }
    }
    fn cdf(&self, t: f64) -> f64 {
        if t <= 0.0 {
            0.0
        } else {
            gamma_lr(self.shape, t / self.scale)
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        let y = t / self.scale;
        ((self.shape - 1.0) * y.ln() - y - self.ln_gamma_shape).exp() / self.scale
    }
    fn mean(&self) -> f64 {
        self.shape * self.scale
    }
    fn quantile(&self, p: f64) -> f64 {
        if p <= 0.0 {
            return 0.0;
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        if p <= 0.5 {
            self.invert(p, false)
        } else {
            self.invert(1.0 - p, true)
        }
    }
    fn isf(&self, q: f64) -> f64 {
        if q >= 1.0 {
            return 0.0;
        }
        if q <= 0.0 {
            return f64::INFINITY;
        }
        if q <= 0.5 {
            self.invert(q, true)
        } else {
            self.invert(1.0 - q, false)
        }
    }
    /// Marsaglia and Tsang (2000), with Box-Muller normals; shape < 1 boosted by U^(1/a).
    fn sample(&self, rng: &mut Stream) -> f64 {
        let x = loop {
            let z =
                (-2.0 * rng.uniform().ln()).sqrt() * (std::f64::consts::TAU * rng.uniform()).cos();
            let v = 1.0 + self.c * z;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = rng.uniform();
            if u.ln() < 0.5 * z * z + self.d - self.d * v + self.d * v.ln() {
                break self.d * v;
            }
        };
        let x = if self.shape < 1.0 {
            x * rng.uniform().powf(1.0 / self.shape)
        } else {
            x
        };
        x * self.scale
    }
}
