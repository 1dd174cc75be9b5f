//! Image comparison for differential tests: how many pixels of two RGBA8 images differ, by
//! how much at most, and where the first difference is (row-major order), so a failing
//! test can name a pixel and both values.

use std::fmt;

/// Differences between two images of the same size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Diff {
    /// Pixels with at least one channel different.
    pub differing_pixels: usize,
    /// Largest absolute difference of any channel of any pixel.
    pub max_channel_diff: u8,
    /// The first differing pixel in row-major order: (x, y, value in `a`, value in `b`).
    pub first: Option<(u32, u32, [u8; 4], [u8; 4])>,
}

impl Diff {
    /// True when the images are byte-for-byte equal.
    pub fn is_identical(&self) -> bool {
        self.differing_pixels == 0
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} differing pixels, max channel diff {}",
            self.differing_pixels, self.max_channel_diff
        )?;
        if let Some((x, y, a, b)) = self.first {
            write!(f, ", first at ({x}, {y}): {a:?} vs {b:?}")?;
        }
        Ok(())
    }
}

/// Compares two tightly packed RGBA8 images `width` pixels wide.
///
/// # Panics
/// When the images differ in length or are not whole rows of 4-byte pixels: that is a
/// bug in the caller, not a rendering difference.
pub fn compare_rgba8(a: &[u8], b: &[u8], width: u32) -> Diff {
    assert_eq!(a.len(), b.len(), "images differ in size");
    assert!(
        width > 0 && a.len().is_multiple_of(4 * width as usize),
        "not whole RGBA8 rows of {width} pixels"
    );
    let mut diff = Diff::default();
    for (i, (pa, pb)) in a.chunks_exact(4).zip(b.chunks_exact(4)).enumerate() {
        if pa == pb {
            continue;
        }
        diff.differing_pixels += 1;
        let worst = pa
            .iter()
            .zip(pb)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap_or(0);
        diff.max_channel_diff = diff.max_channel_diff.max(worst);
        if diff.first.is_none() {
            let (x, y) = (i as u32 % width, i as u32 / width);
            diff.first = Some((x, y, pa.try_into().unwrap(), pb.try_into().unwrap()));
        }
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_first_and_worst() {
        let a = [0u8; 16];
        let mut b = [0u8; 16];
        b[6] = 3; // pixel 1 → (1, 0)
        b[13] = 9; // pixel 3 → (1, 1)
        let d = compare_rgba8(&a, &b, 2);
        assert_eq!(d.differing_pixels, 2);
        assert_eq!(d.max_channel_diff, 9);
        assert_eq!(d.first, Some((1, 0, [0; 4], [0, 0, 3, 0])));
        assert!(compare_rgba8(&a, &a, 2).is_identical());
    }
}
