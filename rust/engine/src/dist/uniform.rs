//! Uniform life on [a, b].
use super::{DistError, Lifetime, finite};

#[derive(Debug, Clone, Copy)]
pub struct Uniform {
    a: f64,
    b: f64,
    width: f64,
}

impl Uniform {
    pub fn new(a: f64, b: f64) -> Result<Self, DistError> {
        let (a, b) = (finite("uniform", "a", a)?, finite("uniform", "b", b)?);
        if a >= b {
            return Err(DistError(format!(
                "uniform: b must be greater than a (got a={a}, b={b})"
            )));
        }
        Ok(Uniform { a, b, width: b - a })
    }
}

impl Lifetime for Uniform {
    fn sf(&self, t: f64) -> f64 {
        ((self.b - t) / self.width).clamp(0.0, 1.0)
    }
    fn cdf(&self, t: f64) -> f64 {
        ((t - self.a) / self.width).clamp(0.0, 1.0)
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.a || t > self.b {
            0.0
        } else {
            1.0 / self.width
        }
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < self.a {
            0.0
        } else if t >= self.b {
            f64::INFINITY
        } else {
            1.0 / (self.b - t)
        }
    }
    fn mean(&self) -> f64 {
        0.5 * (self.a + self.b)
    }
    fn quantile(&self, p: f64) -> f64 {
        self.a + p * self.width
    }
    fn isf(&self, q: f64) -> f64 {
        self.b - q * self.width
    }
}
