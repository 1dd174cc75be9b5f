//! Compute through the API: dispatches that read and write storage buffers, workgroup
//! memory with barriers, atomics, indirect dispatch, and the validation rules of compute
//! passes.

mod common;

use common::*;
use rastra::*;

fn storage(device: &Device, data: &[u32], extra: BufferUsages) -> Buffer {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    device
        .create_buffer_init(
            None,
            &bytes,
            BufferUsages::STORAGE | BufferUsages::COPY_SRC | extra,
        )
        .unwrap()
}

fn readback(device: &Device, queue: &Queue, buffer: &Buffer) -> Vec<u32> {
    let out = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: buffer.size(),
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    encoder.copy_buffer_to_buffer(buffer, 0, &out, 0, buffer.size());
    queue.submit([encoder.finish().unwrap()]).unwrap();
    out.read()
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bind(device: &Device, buffers: &[&Buffer]) -> BindGroup {
    let entries: Vec<BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| BindGroupEntry {
            binding: i as u32,
            resource: BindingResource::Buffer(BufferBinding {
                buffer: b,
                offset: 0,
                size: None,
            }),
        })
        .collect();
    device
        .create_bind_group(&BindGroupDescriptor {
            label: None,
            entries: &entries,
        })
        .unwrap()
}

fn run(
    device: &Device,
    queue: &Queue,
    wgsl: &str,
    buffers: &[&Buffer],
    counts: [u32; 3],
) -> FrameStats {
    let m = module(device, wgsl).unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let group = bind(device, buffers);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    queue.take_stats()
}

#[test]
fn tree_reduction_through_workgroup_memory() {
    let (device, queue) = device();
    let input: Vec<u32> = (0..4096u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
        .collect();
    let src = storage(&device, &input, BufferUsages::empty());
    let sums = storage(&device, &[0; 16], BufferUsages::empty());
    let stats = run(
        &device,
        &queue,
        r#"
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
var<workgroup> partial: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    partial[l] = input[wg.x * 256u + l];
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if l < stride {
            partial[l] = partial[l] + partial[l + stride];
        }
        workgroupBarrier();
    }
    if l == 0u {
        sums[wg.x] = partial[0];
    }
}
"#,
        &[&src, &sums],
        [16, 1, 1],
    );
    let expected: Vec<u32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(readback(&device, &queue, &sums), expected);
    let total = stats.total();
    assert_eq!(total.workgroups_dispatched, 16);
    assert_eq!(total.compute_shader_invocations, 4096);
    assert!(total.barrier_waits > 0);
    assert!(total.divergent_branches > 0);
}

#[test]
fn atomic_histogram() {
    let (device, queue) = device();
    let input: Vec<u32> = (0..10_000u32).map(|i| (i * 7 + i / 13) % 64).collect();
    let src = storage(&device, &input, BufferUsages::empty());
    let bins = storage(&device, &[0; 64], BufferUsages::empty());
    run(
        &device,
        &queue,
        r#"
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>, 64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < arrayLength(&input) {
        atomicAdd(&bins[input[id.x]], 1u);
    }
}
"#,
        &[&src, &bins],
        [10_000u32.div_ceil(64), 1, 1],
    );
    let mut expected = vec![0u32; 64];
    for v in &input {
        expected[*v as usize] += 1;
    }
    assert_eq!(readback(&device, &queue, &bins), expected);
}

#[test]
fn indirect_dispatch_reads_its_counts_when_it_runs() {
    let (device, queue) = device();
    let counts = storage(&device, &[3, 2, 1], BufferUsages::INDIRECT);
    let out = storage(&device, &[0; 6], BufferUsages::empty());
    let m = module(
        &device,
        r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32, 6>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    out[wg.y * n.x + wg.x] = 100u * wg.y + wg.x + 1u;
}
"#,
    )
    .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let group = bind(&device, &[&out]);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups_indirect(&counts, 0);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    assert_eq!(readback(&device, &queue, &out), [1, 2, 3, 101, 102, 103]);
}

#[test]
fn compute_validation() {
    let (device, _) = device();
    let too_big = module(&device, "@compute @workgroup_size(512) fn main() {}").unwrap();
    let err = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &too_big,
            entry_point: None,
            constants: &[],
        })
        .unwrap_err();
    assert!(
        matches!(&err, Error::Validation(m) if m.contains("workgroup size")),
        "{err}"
    );

    let m = module(
        &device,
        r#"
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(1) fn main() { b[0] = a[0]; }
"#,
    )
    .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    // Dispatch without a pipeline.
    let mut encoder = device.create_command_encoder();
    encoder
        .begin_compute_pass(None)
        .dispatch_workgroups(1, 1, 1);
    assert!(matches!(encoder.finish(), Err(Error::Validation(m)) if m.contains("pipeline")));
    // The same buffer bound read-only and writable in one dispatch.
    let shared = storage(&device, &[0; 4], BufferUsages::empty());
    let group = bind(&device, &[&shared, &shared]);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(1, 1, 1);
    }
    assert!(matches!(encoder.finish(), Err(Error::Validation(m)) if m.contains("write")));
    // Too many workgroups.
    let a = storage(&device, &[0; 4], BufferUsages::empty());
    let b = storage(&device, &[0; 4], BufferUsages::empty());
    let group = bind(&device, &[&a, &b]);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(70_000, 1, 1);
    }
    assert!(matches!(encoder.finish(), Err(Error::Validation(_))));
}

#[test]
fn runaway_compute_shader_loses_the_device() {
    let (device, queue) = Device::new(&DeviceDescriptor {
        shader_instruction_budget: 1 << 20,
        ..Default::default()
    });
    let out = storage(&device, &[0; 1], BufferUsages::empty());
    let m = module(
        &device,
        r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main() { loop { out[0] = out[0] + 1u; } }
"#,
    )
    .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let group = bind(&device, &[&out]);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(1, 1, 1);
    }
    let err = queue.submit([encoder.finish().unwrap()]).unwrap_err();
    assert!(matches!(err, Error::DeviceLost(_)));
}

#[test]
fn glsl_compute_with_overridable_constants() {
    let (device, queue) = device();
    let out = storage(&device, &[0; 64], BufferUsages::empty());
    let glsl = device
        .create_shader_module(&ShaderModuleDescriptor {
            label: None,
            source: ShaderSource::Glsl {
                source: r#"#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; } out_buf;
void main() {
    uint i = gl_GlobalInvocationID.x;
    out_buf.data[i] = i * i;
}
"#,
                stage: ShaderStage::Compute,
            },
        })
        .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &glsl,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let group = bind(&device, &[&out]);
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(1, 1, 1);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    assert_eq!(
        readback(&device, &queue, &out),
        (0..64u32).map(|i| i * i).collect::<Vec<_>>()
    );

    // An override by name and one by @id.
    let wgsl = module(
        &device,
        r#"
override scale: u32 = 1u;
@id(7) override offset: u32 = 0u;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { out[i] = i * scale + offset; }
"#,
    )
    .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &wgsl,
            entry_point: None,
            constants: &[("scale", 3.0), ("7", 5.0)],
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.dispatch_workgroups(1, 1, 1);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    assert_eq!(
        readback(&device, &queue, &out),
        (0..64u32).map(|i| i * 3 + 5).collect::<Vec<_>>()
    );
    let unknown = device.create_compute_pipeline(&ComputePipelineDescriptor {
        label: None,
        module: &wgsl,
        entry_point: None,
        constants: &[("nonexistent", 1.0)],
    });
    assert!(matches!(unknown, Err(Error::Shader(_))), "{unknown:?}");
}
