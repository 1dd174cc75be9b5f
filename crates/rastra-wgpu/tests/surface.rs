//! Presenting to a window: a wgpu program renders into a surface made from an X11 window's
//! raw handles and presents; the window's pixels, read back from the X server, are the
//! frame. Runs on a private Xvfb server (`scripts/setup.sh` installs it); skipped, saying
//! so, when Xvfb is not installed.

mod common;

use std::io::{BufRead, BufReader};
use std::num::NonZeroU32;
use std::process::{Child, Command, Stdio};
use std::ptr::NonNull;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt, CreateWindowAux, ImageFormat, WindowClass};
use x11rb::xcb_ffi::XCBConnection;

/// An Xvfb server on a display of its own, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display it picks itself (`-displayfd`: it prints the number once it
    /// accepts connections).
    fn start() -> Option<Xvfb> {
        let child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "160x120x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "surface test skipped: Xvfb could not start ({e}); scripts/setup.sh installs it"
                );
                return None;
            }
        };
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("Xvfb prints its display number");
        let number: u32 = line.trim().parse().expect("a display number");
        Some(Xvfb {
            child,
            display: format!(":{number}"),
        })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so the server removes its socket and lock file.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

const TRIANGLE: &str = r#"
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = array(vec2(-1.0, -1.0), vec2(0.0, -1.0), vec2(-1.0, 0.0));
    return vec4(p[i], 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> {
    return vec4(1.0, 0.6, 0.0, 1.0);
}
"#;

#[test]
fn frames_presented_to_an_x11_window_show_in_it() {
    let Some(server) = Xvfb::start() else {
        return;
    };
    let display = std::ffi::CString::new(server.display.clone()).unwrap();
    let (conn, screen_num) = XCBConnection::connect(Some(&display)).expect("connect to Xvfb");
    let screen = &conn.setup().roots[screen_num];
    let window = conn.generate_id().unwrap();
    let (w, h) = (64u32, 48u32);
    conn.create_window(
        screen.root_depth,
        window,
        screen.root,
        0,
        0,
        w as u16,
        h as u16,
        0,
        WindowClass::INPUT_OUTPUT,
        screen.root_visual,
        &CreateWindowAux::new().background_pixel(screen.black_pixel),
    )
    .unwrap();
    conn.map_window(window).unwrap();
    conn.flush().unwrap();

    let instance = rastra_wgpu::instance();
    let target = wgpu::SurfaceTargetUnsafe::RawHandle {
        raw_display_handle: Some(wgpu::rwh::RawDisplayHandle::Xcb(
            wgpu::rwh::XcbDisplayHandle::new(
                NonNull::new(conn.get_raw_xcb_connection()),
                screen_num as i32,
            ),
        )),
        raw_window_handle: wgpu::rwh::RawWindowHandle::Xcb(wgpu::rwh::XcbWindowHandle::new(
            NonZeroU32::new(window).unwrap(),
        )),
    };
    // SAFETY: the connection and the window outlive the surface (dropped first below).
    let surface = unsafe { instance.create_surface_unsafe(target) }.unwrap();
    let adapter =
        pollster::block_on(instance.request_adapter(&Default::default())).expect("adapter");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("device");
    let caps = surface.get_capabilities(&adapter);
    assert!(caps.formats.contains(&wgpu::TextureFormat::Bgra8UnormSrgb));
    assert!(caps.present_modes.contains(&wgpu::PresentMode::Fifo));

    // A format windows cannot show is refused.
    let mut config = wgpu::SurfaceConfiguration {
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        format: wgpu::TextureFormat::Rgba16Float,
        width: w,
        height: h,
        present_mode: wgpu::PresentMode::Fifo,
        desired_maximum_frame_latency: 2,
        alpha_mode: wgpu::CompositeAlphaMode::Opaque,
        view_formats: vec![],
        color_space: Default::default(),
    };
    let (_, error) = common::validation_error(&device, || surface.configure(&device, &config));
    assert!(error.is_some(), "Rgba16Float surfaces are refused");

    config.format = wgpu::TextureFormat::Bgra8Unorm;
    surface.configure(&device, &config);
    let module = common::shader(&device, TRIANGLE);
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            targets: &[Some(config.format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    // Two frames: the second is the one the window must show.
    for clear in [
        wgpu::Color::RED,
        wgpu::Color {
            r: 0.2,
            g: 0.4,
            b: 0.8,
            a: 1.0,
        },
    ] {
        let wgpu::CurrentSurfaceTexture::Success(frame) = surface.get_current_texture() else {
            panic!("no frame");
        };
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(common::color_pass(&view, None, clear))],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.draw(0..3, 0..1);
        }
        queue.submit([encoder.finish()]);
        queue.present(frame);
    }

    let image = conn
        .get_image(ImageFormat::Z_PIXMAP, window, 0, 0, w as u16, h as u16, !0)
        .unwrap()
        .reply()
        .unwrap();
    // 24-bit TrueColor, little-endian: B, G, R, pad per pixel.
    let pixel = |x: u32, y: u32| {
        let at = ((y * w + x) * 4) as usize;
        [image.data[at + 2], image.data[at + 1], image.data[at]]
    };
    assert_eq!(pixel(w - 1, 0), [51, 102, 204], "the clear colour");
    assert_eq!(pixel(2, h - 2), [255, 153, 0], "the triangle, bottom left");
    drop(surface);
}

#[test]
fn a_surface_rastra_cannot_present_to_says_why() {
    let instance = rastra_wgpu::instance();
    // A window handle without its display: nothing to open.
    let target = wgpu::SurfaceTargetUnsafe::RawHandle {
        raw_display_handle: None,
        raw_window_handle: wgpu::rwh::RawWindowHandle::Xcb(wgpu::rwh::XcbWindowHandle::new(
            NonZeroU32::new(1).unwrap(),
        )),
    };
    // SAFETY: the handles are never used: the surface cannot open them.
    let surface = unsafe { instance.create_surface_unsafe(target) }.unwrap();
    let adapter =
        pollster::block_on(instance.request_adapter(&Default::default())).expect("adapter");
    let (device, _queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("device");
    assert!(surface.get_capabilities(&adapter).formats.is_empty());
    let config = wgpu::SurfaceConfiguration {
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        format: wgpu::TextureFormat::Bgra8Unorm,
        width: 8,
        height: 8,
        present_mode: wgpu::PresentMode::Fifo,
        desired_maximum_frame_latency: 2,
        alpha_mode: wgpu::CompositeAlphaMode::Opaque,
        view_formats: vec![],
        color_space: Default::default(),
    };
    let (_, error) = common::validation_error(&device, || surface.configure(&device, &config));
    let error = error.expect("configure reports the reason").to_string();
    assert!(error.contains("without its display"), "{error}");
    assert!(matches!(
        surface.get_current_texture(),
        wgpu::CurrentSurfaceTexture::Validation
    ));
}
