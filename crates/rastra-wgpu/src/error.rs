//! WebGPU's error model on a rastra device (WebGPU §"Errors & Debugging"): every failed
//! call produces an error that goes to the innermost open error scope of the calling thread
//! whose filter matches, else to the uncaptured-error handler, else to standard error.
//! Nothing panics: a mismatched `pop_error_scope` comes back as a validation error.
//!
//! rastra's own errors map onto WebGPU's classes: validation, shader and unsupported errors
//! are validation errors (the message says which), out-of-memory stays out-of-memory, and a
//! lost device produces no further errors (WebGPU drops them; the loss itself is reported
//! through the device-lost callback).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::thread::ThreadId;

/// An error as rastra-wgpu reports it: which call, which object, what went wrong.
#[derive(Debug)]
pub(crate) struct CallError {
    pub call: &'static str,
    pub label: String,
    pub error: rastra::Error,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "In {}", self.call)?;
        if !self.label.is_empty() {
            write!(f, ", label = '{}'", self.label)?;
        }
        write!(f, ": {}", self.error)
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

struct Scope {
    filter: wgpu::ErrorFilter,
    error: Option<wgpu::Error>,
}

/// Open error scopes (per thread, as wgpu keeps them) and the uncaptured-error handler.
#[derive(Default)]
pub(crate) struct ErrorSink {
    scopes: HashMap<ThreadId, Vec<Scope>>,
    handler: Option<Arc<dyn wgpu::UncapturedErrorHandler>>,
}

impl fmt::Debug for ErrorSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorSink")
            .field("scopes", &self.scopes.values().map(Vec::len).sum::<usize>())
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

/// What to do with an error once the sink's lock is released: call the user's handler
/// outside any rastra lock, or print it.
pub(crate) enum Delivery {
    Captured,
    Handler(Arc<dyn wgpu::UncapturedErrorHandler>, wgpu::Error),
    Print(wgpu::Error),
}

impl Delivery {
    pub fn run(self) {
        match self {
            Delivery::Captured => {}
            Delivery::Handler(handler, e) => handler(e),
            Delivery::Print(e) => eprintln!("rastra-wgpu: uncaptured error: {e}"),
        }
    }
}

/// The wgpu error for a failed call (None for a lost device: WebGPU reports nothing more).
pub(crate) fn to_wgpu(
    call: &'static str,
    label: &str,
    error: rastra::Error,
) -> Option<wgpu::Error> {
    let oom = matches!(error, rastra::Error::OutOfMemory(_));
    if matches!(error, rastra::Error::DeviceLost(_)) {
        return None;
    }
    let source = CallError {
        call,
        label: label.to_string(),
        error,
    };
    Some(if oom {
        wgpu::Error::OutOfMemory {
            source: Box::new(source),
        }
    } else {
        wgpu::Error::Validation {
            description: source.to_string(),
            source: Box::new(source),
        }
    })
}

fn filter_of(e: &wgpu::Error) -> wgpu::ErrorFilter {
    match e {
        wgpu::Error::OutOfMemory { .. } => wgpu::ErrorFilter::OutOfMemory,
        wgpu::Error::Validation { .. } => wgpu::ErrorFilter::Validation,
        wgpu::Error::Internal { .. } => wgpu::ErrorFilter::Internal,
    }
}

impl ErrorSink {
    /// Routes an error to the innermost matching scope of this thread; a scope keeps only
    /// its first error.
    pub fn deliver(&mut self, e: wgpu::Error) -> Delivery {
        let filter = filter_of(&e);
        let thread = std::thread::current().id();
        if let Some(scope) = self
            .scopes
            .get_mut(&thread)
            .and_then(|s| s.iter_mut().rev().find(|s| s.filter == filter))
        {
            scope.error.get_or_insert(e);
            return Delivery::Captured;
        }
        match &self.handler {
            Some(h) => Delivery::Handler(h.clone(), e),
            None => Delivery::Print(e),
        }
    }

    pub fn set_handler(&mut self, handler: Arc<dyn wgpu::UncapturedErrorHandler>) {
        self.handler = Some(handler);
    }

    pub fn push(&mut self, filter: wgpu::ErrorFilter) -> u32 {
        let scopes = self.scopes.entry(std::thread::current().id()).or_default();
        scopes.push(Scope {
            filter,
            error: None,
        });
        (scopes.len() - 1) as u32
    }

    /// Closes the innermost scope of this thread; Err when `index` is not that scope.
    pub fn pop(&mut self, index: u32) -> Result<Option<wgpu::Error>, String> {
        let scopes = self.scopes.entry(std::thread::current().id()).or_default();
        match scopes.len().checked_sub(1) {
            None => Err("pop_error_scope: no error scope is open on this thread \
                 (error scopes are per thread)"
                .into()),
            Some(top) if top != index as usize => Err(format!(
                "pop_error_scope: scope {index} popped while scope {top} is the innermost \
                 (scopes are popped in reverse order)"
            )),
            Some(_) => Ok(scopes.pop().and_then(|s| s.error)),
        }
    }
}
