//! Shader modules: WGSL, GLSL or SPIR-V compiled by naga and kept for lowering each entry
//! point to the shader cores' IR — with its pipeline-overridable constants — when a pipeline
//! uses it.

use std::sync::Arc;

use rastra_shader::{Program, Stage};

use crate::error::Error;

/// Shader source.
#[derive(Clone, Debug)]
pub enum ShaderSource<'a> {
    Wgsl(&'a str),
    /// GLSL for one stage (vertex, fragment or compute).
    Glsl {
        source: &'a str,
        stage: Stage,
    },
    /// A SPIR-V binary (little-endian words as bytes).
    SpirV(&'a [u8]),
}

/// Creation parameters of a shader module.
#[derive(Clone, Debug)]
pub struct ShaderModuleDescriptor<'a> {
    pub label: Option<&'a str>,
    pub source: ShaderSource<'a>,
}

/// A compiled, validated shader module.
#[derive(Clone)]
pub struct ShaderModule(pub(crate) Arc<rastra_shader::ShaderModule>);

impl std::fmt::Debug for ShaderModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShaderModule")
    }
}

impl ShaderModule {
    pub(crate) fn new(desc: &ShaderModuleDescriptor<'_>) -> Result<ShaderModule, Error> {
        let module = match desc.source {
            ShaderSource::Wgsl(source) => rastra_shader::ShaderModule::from_wgsl(source)?,
            ShaderSource::Glsl { source, stage } => {
                rastra_shader::ShaderModule::from_glsl(source, stage)?
            }
            ShaderSource::SpirV(bytes) => rastra_shader::ShaderModule::from_spirv(bytes)?,
        };
        Ok(ShaderModule(Arc::new(module)))
    }

    /// Lowers an entry point (the only one of its stage when `entry` is None) with its
    /// pipeline-overridable constants (by `@id` or name).
    pub(crate) fn program(
        &self,
        entry: Option<&str>,
        stage: Stage,
        constants: &[(&str, f64)],
    ) -> Result<Arc<Program>, Error> {
        let name = match entry {
            Some(name) => name.to_string(),
            None => {
                let candidates: Vec<String> = self
                    .0
                    .entry_points()
                    .into_iter()
                    .filter(|(_, s)| *s == stage)
                    .map(|(n, _)| n)
                    .collect();
                match candidates.as_slice() {
                    [one] => one.clone(),
                    [] => {
                        return crate::error::validation(format!(
                            "the module has no {stage} entry point"
                        ));
                    }
                    _ => {
                        return crate::error::validation(format!(
                            "the module has several {stage} entry points; name one"
                        ));
                    }
                }
            }
        };
        let constants: Vec<(String, f64)> =
            constants.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        Ok(Arc::new(
            self.0.program_with_overrides(&name, stage, &constants)?,
        ))
    }
}
