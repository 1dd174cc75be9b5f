//! What the units' tests share (test builds only): a set-up unit for a whole target and a
//! seeded stream of pseudo-random values, so random triangles are the same on every run.

use crate::setup::SetupState;
use crate::state::{CullMode, FrontFace, ScissorRect, Viewport};

/// Set-up for a w×h target with the viewport and scissor covering it, no culling.
pub(crate) fn setup_state(w: u32, h: u32) -> SetupState {
    let (viewport, scissor) = (Viewport::covering(w, h), ScissorRect::covering(w, h));
    SetupState::new(viewport, scissor, w, h, CullMode::None, FrontFace::Ccw)
}

/// Values in [0, 1) from a xorshift generator started at `seed` (not 0).
pub(crate) fn unit_values(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1u32 << 24) as f32
    }
}
