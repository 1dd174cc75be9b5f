//! Texture images of model files (glTF 2.0 §3.8.3 images, OBJ `map_Kd`): PNG and JPEG decoded
//! to 8-bit RGBA, and the sampler state that goes with them (glTF §3.8.4 samplers).
//!
//! Decoding is bounded: images larger than [`MAX_IMAGE_SIDE`] on a side (WebGPU's default
//! `maxTextureDimension2D`) are refused before their pixels are allocated, and a file that is
//! not a PNG or JPEG, or whose data is corrupt, is an error naming the image — never a panic.

use std::io::Cursor;

use crate::error::Problem;

/// Largest image side rastra loads (WebGPU's default `maxTextureDimension2D`).
pub const MAX_IMAGE_SIDE: u32 = 8192;

/// A decoded image: `width × height` RGBA8 texels, rows top to bottom, colour channels as
/// stored in the file (base-colour images are sRGB-encoded, glTF §3.9.2), straight alpha.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The file's name for the image, or where it came from (`images[2]`, `bricks.png`).
    pub name: String,
    pub width: u32,
    pub height: u32,
    /// `width × height × 4` bytes.
    pub rgba8: Vec<u8>,
}

/// Texel filter of one axis of the sampler (glTF `NEAREST` / `LINEAR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Nearest,
    Linear,
}

/// Addressing outside `[0, 1]` (glTF `wrapS` / `wrapT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
}

/// How a texture is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampler {
    pub mag_filter: Filter,
    pub min_filter: Filter,
    /// Filter between mip levels; `None` samples level 0 only (glTF `NEAREST` / `LINEAR`
    /// minification without a mipmap mode).
    pub mipmap_filter: Option<Filter>,
    pub wrap_u: Wrap,
    pub wrap_v: Wrap,
}

impl Default for Sampler {
    /// What glTF asks for when a texture has no sampler or leaves filters undefined
    /// (§3.8.4: repeat wrapping and "auto" filtering — here trilinear).
    fn default() -> Self {
        Sampler {
            mag_filter: Filter::Linear,
            min_filter: Filter::Linear,
            mipmap_filter: Some(Filter::Linear),
            wrap_u: Wrap::Repeat,
            wrap_v: Wrap::Repeat,
        }
    }
}

/// A mesh's base-colour texture: which of the scene's images, sampled how. The mesh's
/// `texcoords` are the set the material names, with any texture transform applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseColorTexture {
    /// Index into [`crate::Scene::images`].
    pub image: usize,
    pub sampler: Sampler,
}

/// Decodes a PNG or JPEG held in memory.
pub(crate) fn decode(bytes: &[u8], name: &str) -> Result<Image, Problem> {
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Problem::Invalid(format!("image {name}: {e}")))?;
    match reader.format() {
        Some(image::ImageFormat::Png | image::ImageFormat::Jpeg) => {}
        Some(other) => {
            return Err(Problem::Unsupported(format!(
                "image {name} is {other:?} (rastra reads PNG and JPEG images)"
            )));
        }
        None => {
            return Err(Problem::Invalid(format!(
                "image {name} is neither PNG nor JPEG (unrecognised signature)"
            )));
        }
    }
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| Problem::Invalid(format!("image {name}: {e}")))?;
    if width == 0 || height == 0 {
        return Err(Problem::Invalid(format!(
            "image {name} is {width}×{height} (empty)"
        )));
    }
    if width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(Problem::Unsupported(format!(
            "image {name} is {width}×{height}; rastra loads images up to {MAX_IMAGE_SIDE} texels \
             on a side"
        )));
    }
    // The header was read once to check the size; decode from the start again.
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Problem::Invalid(format!("image {name}: {e}")))?;
    let decoded = reader
        .decode()
        .map_err(|e| Problem::Invalid(format!("image {name}: {e}")))?;
    Ok(Image {
        name: name.to_string(),
        width,
        height,
        rgba8: decoded.to_rgba8().into_raw(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        let pixels: Vec<u8> = (0..width * height * 3).map(|i| i as u8).collect();
        image::write_buffer_with_format(
            &mut Cursor::new(&mut bytes),
            &pixels,
            width,
            height,
            image::ExtendedColorType::Rgb8,
            image::ImageFormat::Png,
        )
        .unwrap();
        bytes
    }

    #[test]
    fn png_decodes_to_rgba8() {
        let image = decode(&png(3, 2), "test.png").unwrap();
        assert_eq!((image.width, image.height), (3, 2));
        assert_eq!(&image.rgba8[..8], &[0, 1, 2, 255, 3, 4, 5, 255]);
        assert_eq!(image.rgba8.len(), 3 * 2 * 4);
    }

    #[test]
    fn bad_images_are_errors() {
        match decode(b"not an image at all", "x") {
            Err(Problem::Invalid(m)) => assert!(m.contains("neither PNG nor JPEG"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut truncated = png(16, 16);
        truncated.truncate(truncated.len() / 2);
        assert!(decode(&truncated, "half.png").is_err());
        let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
        assert!(matches!(decode(gif, "g"), Err(Problem::Unsupported(_))));
    }
}
