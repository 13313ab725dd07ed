//! A distribution's functions by the names the front ends use (`sf`, `quantile`, ...), so a
//! caller that holds a name evaluates it here rather than keeping its own table.
use super::{Dist, Lifetime};
use crate::error::EngineError;

/// One function of a distribution, evaluated at a time (at a probability for `Quantile` and
/// `Isf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Sf,
    Cdf,
    Pdf,
    Hazard,
    CumulativeHazard,
    Quantile,
    Isf,
}

impl Function {
    /// From its name: sf, cdf, pdf, hazard, cumulative_hazard, quantile or isf.
    pub fn parse(name: &str) -> Result<Function, EngineError> {
        Ok(match name {
            "sf" => Function::Sf,
            "cdf" => Function::Cdf,
            "pdf" => Function::Pdf,
            "hazard" => Function::Hazard,
            "cumulative_hazard" => Function::CumulativeHazard,
            "quantile" => Function::Quantile,
            "isf" => Function::Isf,
            other => {
                return Err(EngineError::at(
                    "function",
                    format!("unknown function {other:?}"),
                ));
            }
        })
    }

    /// The function of `d` at `x`.
    pub fn at(self, d: &Dist, x: f64) -> f64 {
        match self {
            Function::Sf => d.sf(x),
            Function::Cdf => d.cdf(x),
            Function::Pdf => d.pdf(x),
            Function::Hazard => d.hazard(x),
            Function::CumulativeHazard => d.cumulative_hazard(x),
            Function::Quantile => d.quantile(x),
            Function::Isf => d.isf(x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::DistSpec;

    #[test]
    fn each_name_is_its_function() {
        let spec = DistSpec {
            distribution_id: "exponential".into(),
            params: [("failure_rate".to_string(), 0.5)].into(),
            base_distribution_id: None,
            table: None,
            path: None,
        };
        let d = Dist::from_spec(&spec).unwrap();
        let at = |name: &str, x: f64| Function::parse(name).unwrap().at(&d, x);
        assert_eq!(at("sf", 2.0), (-1.0f64).exp());
        assert_eq!(at("cdf", 2.0), d.cdf(2.0));
        assert_eq!(at("hazard", 2.0), 0.5);
        assert_eq!(at("cumulative_hazard", 2.0), d.cumulative_hazard(2.0));
        assert_eq!(at("pdf", 2.0), d.pdf(2.0));
        assert_eq!(at("quantile", 0.5), d.quantile(0.5));
        assert_eq!(at("isf", 0.5), d.isf(0.5));
        let e = Function::parse("mean").unwrap_err();
        assert_eq!(e.to_string(), "function: unknown function \"mean\"");
    }
}
