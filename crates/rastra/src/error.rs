//! The errors the API reports (WebGPU's error classes: validation, out-of-memory, device
//! lost; plus shader compilation and features rastra does not have yet).

use std::fmt;

/// Everything that can go wrong at the API boundary.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The call broke an API rule; the message says which.
    Validation(String),
    /// The shader did not compile (with line and column when it did not parse or validate).
    Shader(rastra_shader::CompileError),
    /// A valid request for a feature rastra does not implement yet, named.
    Unsupported(String),
    /// An allocation larger than the device allows.
    OutOfMemory(String),
    /// The device stopped working (e.g. a runaway shader exhausted its budget); every later
    /// call reports this too.
    DeviceLost(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Validation(m) => write!(f, "validation error: {m}"),
            Error::Shader(e) => write!(f, "shader error: {e}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::OutOfMemory(m) => write!(f, "out of memory: {m}"),
            Error::DeviceLost(m) => write!(f, "device lost: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rastra_shader::CompileError> for Error {
    fn from(e: rastra_shader::CompileError) -> Self {
        match e {
            rastra_shader::CompileError::Unsupported(what) => {
                Error::Unsupported(format!("shader construct: {what}"))
            }
            e => Error::Shader(e),
        }
    }
}

impl From<rastra_pipeline::LinkError> for Error {
    fn from(e: rastra_pipeline::LinkError) -> Self {
        match e {
            rastra_pipeline::LinkError::Validation(m) => Error::Validation(m),
            rastra_pipeline::LinkError::Unsupported(m) => Error::Unsupported(m),
        }
    }
}

/// Shorthand for a validation error.
pub(crate) fn validation<T>(message: impl Into<String>) -> Result<T, Error> {
    Err(Error::Validation(message.into()))
}
