//! Front-end behaviour: source errors with positions, unsupported constructs named, the
//! entry-point interface description.
#![allow(
    clippy::needless_range_loop,
    clippy::manual_range_contains,
    clippy::manual_clamp
)]

mod common;

use rastra_shader::{
    Builtin, CompileError, EarlyDepthTest, Interpolation, IoBinding, Sampling, ScalarKind,
    ShaderModule, Stage,
};

fn lower(src: &str, entry: &str, stage: Stage) -> Result<rastra_shader::Program, CompileError> {
    ShaderModule::from_wgsl(src)?.program(entry, stage)
}

#[test]
fn parse_error_has_line_and_column() {
    let src = "@fragment fn main() -> @location(0) f32 {\n    let x = ;\n    return 1.0;\n}\n";
    match ShaderModule::from_wgsl(src) {
        Err(CompileError::Source {
            line,
            column,
            message,
        }) => {
            assert_eq!((line, column), (2, 13), "{message}");
            assert!(!message.is_empty());
        }
        other => panic!("expected a source error, got {other:?}"),
    }
}

#[test]
fn validation_error_has_line_and_column() {
    // Parses fine, but naga's validator rejects the constant shift amount.
    let src = "@fragment\nfn main(@location(0) @interpolate(flat) a: u32) -> @location(0) u32 {\n    let b = a + 1u;\n    return b >> 33u;\n}\n";
    match ShaderModule::from_wgsl(src) {
        Err(CompileError::Source {
            line,
            column,
            message,
        }) => {
            assert_eq!((line, column), (4, 12), "{message}");
            assert!(message.contains("Shift amount"), "{message}");
        }
        other => panic!("expected a source error, got {other:?}"),
    }
}

#[test]
fn unsupported_constructs_are_named() {
    let tex = "@group(0) @binding(0) var t: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        @fragment fn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
            return textureSample(t, s, uv);
        }";
    // Sampled textures are supported: they become bindings of their own, and implicit-LOD
    // sampling needs quads like a derivative.
    let p = lower(tex, "main", Stage::Fragment).unwrap();
    assert_eq!((p.textures.len(), p.samplers.len()), (1, 1));
    assert!(p.uses_derivatives && p.bindings.is_empty());
    let store = "@group(0) @binding(0) var t: texture_storage_2d<rgba8unorm, write>;
        @fragment fn main() -> @location(0) vec4<f32> { textureStore(t, vec2<i32>(0), vec4<f32>(1.0)); return vec4<f32>(1.0); }";
    // Storage textures are bindings of their own, with their declared format and access.
    let p = lower(store, "main", Stage::Fragment).unwrap();
    assert_eq!(p.storage_textures.len(), 1);
    assert_eq!(
        p.storage_textures[0].access,
        rastra_shader::StorageAccess::WriteOnly
    );
    assert!(p.textures.is_empty());
    let big = "@compute @workgroup_size(64, 32) fn main() {}";
    assert_eq!(
        lower(big, "main", Stage::Compute).unwrap_err(),
        CompileError::Unsupported("workgroups of more than 1024 invocations".into())
    );
}

#[test]
fn missing_entry_point() {
    let src = "@fragment fn main() -> @location(0) f32 { return 1.0; }";
    assert_eq!(
        lower(src, "main", Stage::Vertex).unwrap_err(),
        CompileError::NoEntryPoint {
            name: "main".into(),
            stage: Stage::Vertex
        }
    );
    assert_eq!(
        lower(src, "nope", Stage::Fragment).unwrap_err(),
        CompileError::NoEntryPoint {
            name: "nope".into(),
            stage: Stage::Fragment
        }
    );
}

#[test]
fn interface_description() {
    let src = "
        struct VOut { @builtin(position) pos: vec4<f32>, @location(0) c: vec3<f32>, @location(2) @interpolate(flat) id: u32 }
        @vertex fn vs(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VOut {
            var o: VOut;
            o.pos = vec4<f32>(f32(vi), f32(ii), 0.0, 1.0);
            return o;
        }
        struct FIn { @builtin(position) pos: vec4<f32>, @location(0) @interpolate(linear, centroid) c: vec3<f32>, @location(2) @interpolate(flat) id: u32 }
        struct FOut { @location(0) color: vec4<f32>, @builtin(frag_depth) depth: f32 }
        @fragment @early_depth_test(force) fn fs(i: FIn, @builtin(front_facing) ff: bool) -> FOut {
            return FOut(vec4<f32>(i.c, 1.0), i.pos.z);
        }
        @compute @workgroup_size(8, 4, 1) fn cs() {}
    ";
    let m = ShaderModule::from_wgsl(src).unwrap();
    assert_eq!(
        m.entry_points(),
        vec![
            ("vs".to_string(), Stage::Vertex),
            ("fs".to_string(), Stage::Fragment),
            ("cs".to_string(), Stage::Compute)
        ]
    );
    let vs = m.program("vs", Stage::Vertex).unwrap();
    assert_eq!(vs.inputs.len(), 2);
    assert_eq!(
        vs.inputs[0].binding,
        IoBinding::Builtin(Builtin::VertexIndex)
    );
    assert_eq!(
        vs.inputs[1].binding,
        IoBinding::Builtin(Builtin::InstanceIndex)
    );
    assert_eq!(vs.outputs.len(), 3);
    assert_eq!(vs.outputs[0].binding, IoBinding::Builtin(Builtin::Position));
    assert_eq!(vs.outputs[0].ty.components, 4);
    assert_eq!(vs.outputs[1].binding, IoBinding::Location(0));
    assert_eq!(vs.outputs[1].first_reg, vs.outputs[0].first_reg + 4);
    assert_eq!(vs.outputs[2].ty.scalar, ScalarKind::U32);
    assert!(!vs.writes_depth && !vs.uses_derivatives && !vs.uses_discard);

    let fs = m.program("fs", Stage::Fragment).unwrap();
    assert_eq!(fs.inputs.len(), 4);
    assert_eq!(fs.inputs[0].binding, IoBinding::Builtin(Builtin::Position));
    assert_eq!(fs.inputs[1].interpolation, Interpolation::Linear);
    assert_eq!(fs.inputs[1].sampling, Sampling::Centroid);
    assert_eq!(fs.inputs[2].interpolation, Interpolation::Flat);
    assert_eq!(
        fs.inputs[3].binding,
        IoBinding::Builtin(Builtin::FrontFacing)
    );
    assert_eq!(fs.inputs[3].ty.scalar, ScalarKind::Bool);
    // Inputs and outputs have disjoint registers.
    let mut regs: Vec<u32> = fs
        .inputs
        .iter()
        .chain(&fs.outputs)
        .flat_map(|v| v.first_reg..v.first_reg + v.ty.components as u32)
        .collect();
    let n = regs.len();
    regs.sort();
    regs.dedup();
    assert_eq!(regs.len(), n);
    assert!(fs.writes_depth);
    assert_eq!(fs.early_depth_test, Some(EarlyDepthTest::Force));

    let cs = m.program("cs", Stage::Compute).unwrap();
    assert_eq!(cs.workgroup_size, [8, 4, 1]);
}

#[test]
fn derivative_use_found_through_calls() {
    let src = "fn g(v: f32) -> f32 { return fwidth(v); }
        @fragment fn main(@location(0) v: f32) -> @location(0) f32 { return g(v); }
        @fragment fn plain(@location(0) v: f32) -> @location(0) f32 { return v; }";
    assert!(
        lower(src, "main", Stage::Fragment)
            .unwrap()
            .uses_derivatives
    );
    assert!(
        !lower(src, "plain", Stage::Fragment)
            .unwrap()
            .uses_derivatives
    );
}

/// The registers a program reads and writes: a fragment shader's inputs are read and never
/// written (the pipeline keeps a warp's constant inputs between warps on that), its outputs
/// written; an input it never reads is neither.
#[test]
fn registers_read_and_written() {
    let src = "@fragment
        fn main(@location(0) a: vec4<f32>, @location(1) unused: f32) -> @location(0) vec4<f32> {
            var c = a;
            c.x = sin(c.x) * 2.0;
            return c * a.w;
        }";
    let p = lower(src, "main", Stage::Fragment).unwrap();
    let (read, written) = (p.registers_read(), p.registers_written());
    assert_eq!(
        (read.len(), written.len()),
        (p.num_regs as usize, p.num_regs as usize)
    );
    let [a, unused] = [0, 1].map(|l| {
        p.inputs
            .iter()
            .find(|i| i.binding == IoBinding::Location(l))
            .unwrap()
            .first_reg as usize
    });
    for r in a..a + 4 {
        assert!(read[r] && !written[r], "input register {r}");
    }
    assert!(!read[unused] && !written[unused]);
    let out = p.outputs[0].first_reg as usize;
    for r in out..out + 4 {
        assert!(written[r], "output register {r}");
    }
}
