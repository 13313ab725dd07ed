//! `bathtub._engine`: the PyO3 face of bathtub-engine. No logic lives here: each function
//! extracts owned Rust data, enters the engine through one door (`door::enter`: the GIL
//! released, the run's control honoured, refusals mapped once to the library's
//! `EngineError` with `path` and `rule`), and wraps the result (JSON text for structured
//! results, lists of floats for curves).
mod dist;
mod door;
mod life;
mod rbd;

use pyo3::prelude::*;

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", bathtub_engine::VERSION)?;
    m.add("EngineError", m.py().get_type::<door::EngineError>())?;
    m.add("Cancelled", m.py().get_type::<door::Cancelled>())?;
    m.add_class::<door::RunControl>()?;
    dist::register(m)?;
    rbd::register(m)?;
    life::register(m)?;
    Ok(())
}
