//! Surfaces (windows). Presentation through rastra is not implemented yet: a surface can
//! be created (wgpu's API gives a backend no way to refuse), and configuring it or asking
//! it for a frame reports that presentation is unsupported.

use wgpu::custom::*;

/// A window surface on rastra (presentation not implemented yet).
#[derive(Debug)]
pub struct RastraSurface;

impl RastraSurface {
    pub(crate) fn new(_target: wgpu::SurfaceTargetUnsafe) -> Self {
        RastraSurface
    }
}

impl SurfaceInterface for RastraSurface {
    fn get_capabilities(&self, _adapter: &DispatchAdapter) -> wgpu::SurfaceCapabilities {
        wgpu::SurfaceCapabilities::default()
    }

    fn configure(&self, device: &DispatchDevice, _config: &wgpu::SurfaceConfiguration) {
        if let Some(d) = device.as_custom::<crate::device::RastraDevice>() {
            d.0.report(
                "Surface::configure",
                "",
                rastra::Error::Unsupported("presenting to a window surface".into()),
            );
        }
    }

    fn get_current_texture(
        &self,
    ) -> (
        Option<DispatchTexture>,
        wgpu::SurfaceStatus,
        DispatchSurfaceOutputDetail,
    ) {
        (
            None,
            wgpu::SurfaceStatus::Lost,
            DispatchSurfaceOutputDetail::custom(RastraSurfaceOutput),
        )
    }
}

/// The (never produced) frame of a surface.
#[derive(Debug)]
pub struct RastraSurfaceOutput;

impl SurfaceOutputDetailInterface for RastraSurfaceOutput {
    fn texture_discard(&self) {}

    fn texture_release(&self) {}
}
