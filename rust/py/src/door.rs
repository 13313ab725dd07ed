//! The one door into the engine: errors mapped once, runs entered one way.
//!
//! Every heavy call goes through [`enter`]: its inputs are already owned Rust data (PyO3
//! extracted them), it gets the caller's `RunControl` (or a private one), runs with the GIL
//! released so other Python threads go on, and its refusal comes back as the library's
//! `bathtub.errors.EngineError` carrying `path` and `rule`, or as `Cancelled` when the run
//! stopped because its control was cancelled. A run called on the main thread also stops on
//! Ctrl-C: the door waits for it with the signal handlers running, cancels its control and
//! raises KeyboardInterrupt.
use bathtub_engine::diagram::{Compiled, DiagramSpec};
use bathtub_engine::error::{EngineError as Refusal, Key};
use bathtub_engine::parallel::Control;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};
use pyo3::{create_exception, import_exception};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

// The engine's refusal is the library's `bathtub.errors.EngineError` (a `BathtubError` and a
// `ValueError`), so a Python user catches one base for the library, the engine and the client.
import_exception!(bathtub.errors, EngineError);
create_exception!(
    bathtub._engine,
    Cancelled,
    pyo3::exceptions::PyException,
    "The run was stopped through its RunControl before it finished."
);

/// An engine refusal on its way to Python (a local type: `From<EngineError> for PyErr` would
/// implement a foreign trait for a foreign type). Functions return `Result<T, Error>` and `?`
/// converts both ways, so no call site maps an error by hand.
pub struct Error(pub Refusal);

impl From<Refusal> for Error {
    fn from(e: Refusal) -> Self {
        Error(e)
    }
}

impl From<Error> for PyErr {
    /// `bathtub.errors.EngineError(rule, path)`: `path` a tuple of names and list positions.
    fn from(Error(e): Error) -> PyErr {
        Python::attach(|py| {
            let keys = e.path.iter().map(|k| match k {
                Key::Name(n) => PyString::new(py, n).into_any(),
                Key::Index(i) => PyInt::new(py, *i).into_any(),
            });
            let made = PyTuple::new(py, keys)
                .and_then(|path| py.get_type::<EngineError>().call1((e.rule.as_str(), path)));
            match made {
                Ok(err) => PyErr::from_value(err),
                Err(failed) => failed,
            }
        })
    }
}

/// A run's cancel flag and progress counters, shared with the engine's worker threads: any
/// Python thread may cancel or read it while the run goes on without the GIL.
#[pyclass(frozen, module = "bathtub._engine")]
pub struct RunControl {
    inner: Arc<Control>,
}

#[pymethods]
impl RunControl {
    #[new]
    fn new() -> Self {
        RunControl {
            inner: Arc::new(Control::new()),
        }
    }

    /// Stop the run: it raises Cancelled within one replication per thread.
    fn cancel(&self) {
        self.inner.cancel();
    }

    /// CPU seconds the run's own threads spent so far (every call made with this control).
    #[getter]
    fn cpu_seconds(&self) -> f64 {
        self.inner.cpu_seconds()
    }

    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Replications finished so far.
    #[getter]
    fn done(&self) -> u64 {
        self.inner.done()
    }

    /// Replications the run expects to do (revised by precision runs).
    #[getter]
    fn planned(&self) -> u64 {
        self.inner.planned()
    }

    /// Set the progress of a run made of engine calls elsewhere (chunks on a cluster).
    fn report(&self, done: u64, planned: u64) {
        self.inner.report(done, planned);
    }
}

/// How a call enters: `Quick` (an evaluation, compile or fit: no run control, run inline) or
/// `Run` (a simulation, under the caller's `RunControl` or a private one).
pub enum Call<'a, 'py> {
    Quick,
    Run(Option<&'a Bound<'py, RunControl>>),
}

/// How often a thread waiting for a run lets Python run its signal handlers.
const SLICE: Duration = Duration::from_millis(100);

/// Run `work` with the GIL released; its refusal as `EngineError`, or `Cancelled` when the
/// run's control stopped it. A `Run` also stops on Ctrl-C: see [`interruptible`].
pub fn enter<T: Send>(
    py: Python<'_>,
    call: Call<'_, '_>,
    work: impl FnOnce(&Control) -> Result<T, Refusal> + Send,
) -> PyResult<T> {
    let (ctl, done) = match call {
        Call::Quick => {
            let ctl = Arc::new(Control::new());
            let done = py.detach(|| work(&ctl));
            (ctl, done)
        }
        Call::Run(control) => {
            let ctl = control.map_or_else(|| Arc::new(Control::new()), |c| c.get().inner.clone());
            let done = interruptible(py, &ctl, work)?;
            (ctl, done)
        }
    };
    done.map_err(|e| {
        if ctl.is_cancelled() {
            Cancelled::new_err(e.to_string())
        } else {
            Error(e).into()
        }
    })
}

/// `work` on a thread of its own while the caller's waits without the GIL, waking each
/// [`SLICE`] to let Python run its signal handlers: a KeyboardInterrupt (or any handler's
/// exception) cancels the run, waits until it has stopped (no thread computes behind the
/// caller's back) and is raised. Off the main thread Python runs no handlers, so there it
/// only waits (`bathtub.control.call_engine` calls from such a thread and cancels itself).
fn interruptible<T: Send>(
    py: Python<'_>,
    ctl: &Control,
    work: impl FnOnce(&Control) -> Result<T, Refusal> + Send,
) -> PyResult<Result<T, Refusal>> {
    let (tx, mut rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || tx.send(work(ctl)));
        loop {
            // The receiver goes into the GIL-free wait and comes back (it is not Sync).
            let (got, back) = py.detach(move || (rx.recv_timeout(SLICE), rx));
            rx = back;
            match got {
                Ok(done) => return Ok(done),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupt) = py.check_signals() {
                        ctl.cancel();
                        let _stopped = py.detach(move || rx.recv());
                        return Err(interrupt);
                    }
                }
                // The run panicked; leaving the scope raises its panic here.
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err("the engine thread stopped"));
                }
            }
        }
    })
}

/// A diagram from its JSON text (refused under `diagram`).
pub fn spec(json: &str) -> Result<DiagramSpec, Refusal> {
    serde_json::from_str(json).map_err(|e| Refusal::at("diagram", e))
}

/// A diagram from its JSON text, compiled.
pub fn diagram(json: &str) -> Result<Compiled, Refusal> {
    Compiled::new(&spec(json)?)
}

/// A structured result as JSON text.
pub fn to_json<T: serde::Serialize>(x: &T) -> Result<String, Refusal> {
    serde_json::to_string(x).map_err(|e| Refusal::new(format!("result: {e}")))
}

/// An engine state (an accumulator's JSON) handed back by a caller (refused under `state`).
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, Refusal> {
    serde_json::from_str(json).map_err(|e| Refusal::at("state", e))
}
