//! Errors: the one public [`AssetError`] type, and the path-free [`Problem`] the loaders raise.
//!
//! Loader code (`gltf`, `obj`, `mesh`) reports a [`Problem`] — a category and a one-line reason,
//! with no file name — and [`crate::load`] attaches the path once, at the API boundary. This keeps
//! every message in the same shape: `<file>: <category>: <reason>`.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a model file could not be turned into a [`crate::Scene`].
///
/// Every variant names the file it is about; `Display` renders a single line that names the file
/// and the reason, suitable for printing straight to a terminal.
#[derive(Debug)]
pub enum AssetError {
    /// The file itself could not be read (missing, unreadable, a directory, ...).
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The bytes are not well-formed for the format: bad JSON or schema types, a broken GLB
    /// container, an OBJ line that does not parse.
    Format { path: PathBuf, message: String },
    /// The file parses but its content is unusable: dangling or out-of-range references, data
    /// that violates the glTF 2.0 rules (non-finite floats, wrong accessor types, cyclic node
    /// graphs), a referenced buffer that cannot be read, or nothing to draw at all.
    Invalid { path: PathBuf, message: String },
    /// The file is valid but uses something rastra does not support: an unknown file extension,
    /// a required glTF extension, a URI scheme, or only non-triangle primitives.
    Unsupported { path: PathBuf, message: String },
}

impl AssetError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            AssetError::Io { path, .. }
            | AssetError::Format { path, .. }
            | AssetError::Invalid { path, .. }
            | AssetError::Unsupported { path, .. } => path,
        }
    }
}

impl fmt::Display for AssetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssetError::Io { path, source } => {
                write!(f, "{}: cannot read file: {source}", path.display())
            }
            AssetError::Format { path, message } => {
                write!(f, "{}: malformed file: {message}", path.display())
            }
            AssetError::Invalid { path, message } => {
                write!(f, "{}: invalid model: {message}", path.display())
            }
            AssetError::Unsupported { path, message } => {
                write!(f, "{}: unsupported: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for AssetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AssetError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A loader-internal error: the category of an [`AssetError`] without the file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    Format(String),
    Invalid(String),
    Unsupported(String),
}

impl Problem {
    /// Attaches the file the problem was found in.
    pub(crate) fn at(self, path: &Path) -> AssetError {
        let path = path.to_path_buf();
        match self {
            Problem::Format(message) => AssetError::Format { path, message },
            Problem::Invalid(message) => AssetError::Invalid { path, message },
            Problem::Unsupported(message) => AssetError::Unsupported { path, message },
        }
    }

    /// Prefixes the reason with where it was found (`"mesh 0 primitive 1"`).
    pub(crate) fn context(self, place: impl fmt::Display) -> Problem {
        match self {
            Problem::Format(m) => Problem::Format(format!("{place}: {m}")),
            Problem::Invalid(m) => Problem::Invalid(format!("{place}: {m}")),
            Problem::Unsupported(m) => Problem::Unsupported(format!("{place}: {m}")),
        }
    }
}

/// `Err(Problem::Invalid(format!(...)))`, the most common early return.
macro_rules! invalid {
    ($($arg:tt)*) => {
        Err($crate::error::Problem::Invalid(format!($($arg)*)))
    };
}
pub(crate) use invalid;
