//! Surfaces: presenting frames into a window through softbuffer (X11 or Wayland window
//! handles). A frame is an ordinary rastra texture of the configured size and format; at
//! `Queue::present` its texels are read back and written into the window's softbuffer
//! buffer (`0RGB` words), which softbuffer then shows. There is no swap chain and no
//! vertical-blank wait: `Fifo` presents as soon as `present` is called.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use wgpu::custom::*;
use wgpu::rwh;

use crate::device::{DeviceShared, RastraDevice, lock};
use crate::resource::RastraTexture;

/// The window handles a surface was created from, as softbuffer takes them.
#[derive(Clone, Copy)]
struct Handles {
    display: rwh::RawDisplayHandle,
    window: rwh::RawWindowHandle,
}

// SAFETY: the handles only name a window and its display; `create_surface_unsafe`'s caller
// keeps both alive for the surface's lifetime, and every use goes through the surface's
// mutex, one thread at a time.
unsafe impl Send for Handles {}
// SAFETY: as above; shared references only copy the identifiers.
unsafe impl Sync for Handles {}

impl rwh::HasDisplayHandle for Handles {
    fn display_handle(&self) -> Result<rwh::DisplayHandle<'_>, rwh::HandleError> {
        // SAFETY: the display outlives the surface (create_surface_unsafe's contract).
        Ok(unsafe { rwh::DisplayHandle::borrow_raw(self.display) })
    }
}

impl rwh::HasWindowHandle for Handles {
    fn window_handle(&self) -> Result<rwh::WindowHandle<'_>, rwh::HandleError> {
        // SAFETY: the window outlives the surface (create_surface_unsafe's contract).
        Ok(unsafe { rwh::WindowHandle::borrow_raw(self.window) })
    }
}

type Window = softbuffer::Surface<Handles, Handles>;

/// The texel layouts a frame may have: the formats windows show directly.
const FORMATS: [wgpu::TextureFormat; 4] = [
    wgpu::TextureFormat::Bgra8UnormSrgb,
    wgpu::TextureFormat::Bgra8Unorm,
    wgpu::TextureFormat::Rgba8UnormSrgb,
    wgpu::TextureFormat::Rgba8Unorm,
];

const USAGES: wgpu::TextureUsages = wgpu::TextureUsages::RENDER_ATTACHMENT
    .union(wgpu::TextureUsages::COPY_SRC)
    .union(wgpu::TextureUsages::COPY_DST)
    .union(wgpu::TextureUsages::TEXTURE_BINDING);

struct Configured {
    device: Arc<DeviceShared>,
    config: wgpu::SurfaceConfiguration,
}

/// A window surface on rastra.
pub struct RastraSurface {
    /// softbuffer's surface, or why the handles could not be opened.
    window: Result<Arc<Mutex<Window>>, String>,
    configured: Mutex<Option<Configured>>,
}

impl std::fmt::Debug for RastraSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RastraSurface({})",
            if self.window.is_ok() {
                "open"
            } else {
                "failed"
            }
        )
    }
}

impl RastraSurface {
    /// Opens the window of `target` through softbuffer. wgpu gives a backend no way to
    /// refuse a surface, so a failure is kept: capabilities are then empty and
    /// `configure` reports it.
    pub(crate) fn new(target: wgpu::SurfaceTargetUnsafe) -> Self {
        RastraSurface {
            window: open(target).map(|w| Arc::new(Mutex::new(w))),
            configured: Mutex::new(None),
        }
    }
}

fn open(target: wgpu::SurfaceTargetUnsafe) -> Result<Window, String> {
    let handles = match target {
        wgpu::SurfaceTargetUnsafe::RawHandle {
            raw_display_handle: Some(display),
            raw_window_handle: window,
        } => Handles { display, window },
        wgpu::SurfaceTargetUnsafe::RawHandle { .. } => {
            return Err("a window handle without its display handle".into());
        }
        _ => return Err("only raw window handles (X11, Wayland) can be presented to".into()),
    };
    let context = softbuffer::Context::new(handles).map_err(|e| format!("softbuffer: {e}"))?;
    softbuffer::Surface::new(&context, handles).map_err(|e| format!("softbuffer: {e}"))
}

impl SurfaceInterface for RastraSurface {
    fn get_capabilities(&self, _adapter: &DispatchAdapter) -> wgpu::SurfaceCapabilities {
        if self.window.is_err() {
            return wgpu::SurfaceCapabilities::default();
        }
        wgpu::SurfaceCapabilities {
            formats: FORMATS.to_vec(),
            format_capabilities: FORMATS
                .iter()
                .map(|&format| wgpu::SurfaceFormatCapabilities {
                    format,
                    color_spaces: wgpu::SurfaceColorSpaces::SRGB,
                })
                .collect(),
            present_modes: vec![wgpu::PresentMode::Fifo, wgpu::PresentMode::Immediate],
            alpha_modes: vec![wgpu::CompositeAlphaMode::Opaque],
            usages: USAGES,
        }
    }

    fn configure(&self, device: &DispatchDevice, config: &wgpu::SurfaceConfiguration) {
        const CALL: &str = "Surface::configure";
        let Some(d) = device.as_custom::<RastraDevice>() else {
            return;
        };
        let device = &d.0;
        let problem = match &self.window {
            Err(e) => Some(e.clone()),
            Ok(_) if !FORMATS.contains(&config.format) => Some(format!(
                "format {:?} (a surface takes one of {FORMATS:?})",
                config.format
            )),
            Ok(_) if !USAGES.contains(config.usage) => {
                Some(format!("usage {:?} (allowed: {USAGES:?})", config.usage))
            }
            Ok(_) if config.width == 0 || config.height == 0 => {
                Some("a surface needs a non-zero size".into())
            }
            Ok(_) if !config.view_formats.is_empty() => {
                Some("surface view formats are not supported".into())
            }
            Ok(_)
                if !matches!(
                    config.color_space,
                    wgpu::SurfaceColorSpace::Auto | wgpu::SurfaceColorSpace::Srgb
                ) =>
            {
                Some(format!("colour space {:?} (only sRGB)", config.color_space))
            }
            Ok(_) => None,
        };
        if let Some(why) = problem {
            device.invalid(CALL, "", why);
            *lock(&self.configured) = None;
            return;
        }
        *lock(&self.configured) = Some(Configured {
            device: device.clone(),
            config: config.clone(),
        });
    }

    fn get_current_texture(
        &self,
    ) -> (
        Option<DispatchTexture>,
        wgpu::SurfaceStatus,
        DispatchSurfaceOutputDetail,
    ) {
        let configured = lock(&self.configured);
        let (Ok(window), Some(c)) = (&self.window, configured.as_ref()) else {
            return (
                None,
                wgpu::SurfaceStatus::Validation,
                DispatchSurfaceOutputDetail::custom(RastraSurfaceOutput::default()),
            );
        };
        if c.device.is_lost() {
            return (
                None,
                wgpu::SurfaceStatus::Lost,
                DispatchSurfaceOutputDetail::custom(RastraSurfaceOutput::default()),
            );
        }
        let texture = RastraTexture::new(
            &c.device,
            &wgpu::TextureDescriptor {
                label: Some("surface frame"),
                size: wgpu::Extent3d {
                    width: c.config.width,
                    height: c.config.height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: c.config.format,
                // Presenting reads the frame back.
                usage: c.config.usage | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            },
        );
        let frame = texture.inner.clone().map(|texture| Frame {
            texture,
            window: window.clone(),
            bgra: matches!(
                c.config.format,
                wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
            ),
        });
        let status = if frame.is_some() {
            wgpu::SurfaceStatus::Good
        } else {
            wgpu::SurfaceStatus::Lost
        };
        (
            frame.is_some().then(|| DispatchTexture::custom(texture)),
            status,
            DispatchSurfaceOutputDetail::custom(RastraSurfaceOutput {
                frame: Mutex::new(frame),
            }),
        )
    }
}

/// A frame handed out by `get_current_texture`: the texture and where it goes.
struct Frame {
    texture: rastra::Texture,
    window: Arc<Mutex<Window>>,
    bgra: bool,
}

/// The detail wgpu keeps with a surface texture; `Queue::present` presents its frame.
#[derive(Default)]
pub struct RastraSurfaceOutput {
    frame: Mutex<Option<Frame>>,
}

impl std::fmt::Debug for RastraSurfaceOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RastraSurfaceOutput")
    }
}

impl RastraSurfaceOutput {
    /// Shows the frame in its window (once; later calls do nothing).
    pub(crate) fn present(&self, device: &DeviceShared) -> Result<(), rastra::Error> {
        let Some(frame) = lock(&self.frame).take() else {
            return Ok(());
        };
        let texels = device.queue.read_texture(&frame.texture)?;
        let (w, h) = (frame.texture.width(), frame.texture.height());
        let softbuffer = |e: softbuffer::SoftBufferError| {
            rastra::Error::Validation(format!("presenting through softbuffer: {e}"))
        };
        let mut window = lock(&frame.window);
        let size = |v: u32| NonZeroU32::new(v).expect("configured sizes are non-zero");
        window.resize(size(w), size(h)).map_err(softbuffer)?;
        let mut buffer = window.buffer_mut().map_err(softbuffer)?;
        for (out, t) in buffer.iter_mut().zip(texels.chunks_exact(4)) {
            let (r, g, b) = if frame.bgra {
                (t[2], t[1], t[0])
            } else {
                (t[0], t[1], t[2])
            };
            *out = (r as u32) << 16 | (g as u32) << 8 | b as u32;
        }
        buffer.present().map_err(softbuffer)
    }
}

impl SurfaceOutputDetailInterface for RastraSurfaceOutput {
    fn texture_discard(&self) {
        lock(&self.frame).take();
    }

    fn texture_release(&self) {}
}
