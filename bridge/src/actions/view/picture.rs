//! Turning a captured frame into the PNG a model receives: crop, scale down, encode, and save.
//! Runs on a task pool, never on the game thread.

use bevy::image::Image;
use bevy::math::URect;
use image::codecs::png::PngEncoder;
use image::imageops::{self, FilterType};
use image::{ExtendedColorType, ImageEncoder, RgbImage};

use crate::error::BridgeError;
use crate::reflect::files::FileTarget;

/// What to make of a captured frame.
#[derive(Debug, Clone)]
pub(super) struct Shaping {
    /// The part of the frame to keep, in its pixels (clamped to the frame).
    pub region: Option<URect>,
    /// The returned image is at most this wide...
    pub max_width: u32,
    /// ... and this high; never scaled up.
    pub max_height: u32,
    /// The largest PNG returned.
    pub max_bytes: u64,
    /// Where to save the PNG too (already checked inside the screenshots directory).
    pub save_to: Option<FileTarget>,
}

/// A finished picture.
#[derive(Debug, Clone)]
pub(super) struct Picture {
    /// The PNG.
    pub png: Vec<u8>,
    /// Its size.
    pub width: u32,
    /// Its size.
    pub height: u32,
    /// The region of the frame it shows, before scaling.
    pub region: URect,
    /// Returned pixels per captured pixel.
    pub scale: f64,
    /// A digest of the returned pixels, to tell an unchanged capture.
    pub digest: u64,
    /// The one colour of every captured pixel, when there is only one.
    pub blank: Option<[u8; 3]>,
}

/// Crops, scales and encodes `frame`; saves the PNG when asked.
pub(super) fn make(frame: Image, shaping: &Shaping) -> Result<Picture, BridgeError> {
    let dynamic = frame
        .try_into_dynamic()
        .map_err(|error| BridgeError::CaptureFailed {
            reason: format!("the frame's pixel format cannot be read ({error})"),
        })?;
    // The alpha of a swapchain or an HDR target is not what the player sees: drop it.
    let full: RgbImage = dynamic.to_rgb8();
    let bounds = URect::new(0, 0, full.width(), full.height());
    let region = shaping
        .region
        .map_or(bounds, |region| region.intersect(bounds));
    if region.is_empty() {
        return Err(BridgeError::CaptureFailed {
            reason: format!(
                "the region to keep ({:?}) lies outside the {}x{} frame",
                shaping.region,
                full.width(),
                full.height()
            ),
        });
    }
    let cropped = imageops::crop_imm(
        &full,
        region.min.x,
        region.min.y,
        region.width(),
        region.height(),
    )
    .to_image();
    let blank = one_colour(&cropped);
    let scale = fit_scale(
        region.width(),
        region.height(),
        shaping.max_width,
        shaping.max_height,
    );
    let shown = if scale < 1.0 {
        let width = scaled(region.width(), scale);
        let height = scaled(region.height(), scale);
        imageops::resize(&cropped, width, height, FilterType::Triangle)
    } else {
        cropped
    };
    // The pixels returned: a smaller copy of the same frame is a new picture.
    let digest = digest(&shown);
    let mut png = Vec::new();
    PngEncoder::new(&mut png)
        .write_image(
            shown.as_raw(),
            shown.width(),
            shown.height(),
            ExtendedColorType::Rgb8,
        )
        .map_err(|error| BridgeError::CaptureFailed {
            reason: format!("the PNG could not be encoded ({error})"),
        })?;
    if png.len() as u64 > shaping.max_bytes {
        return Err(BridgeError::ResultTooLarge {
            bytes: png.len(),
            limit: shaping.max_bytes,
            advice: format!(
                "ask for less: maxWidth {} and maxHeight {}, a camera, or an entity crop",
                (shown.width() / 2).max(16),
                (shown.height() / 2).max(16)
            ),
        });
    }
    if let Some(target) = &shaping.save_to {
        crate::reflect::files::write_atomically(target, &png)?;
    }
    Ok(Picture {
        width: shown.width(),
        height: shown.height(),
        png,
        region,
        scale,
        digest,
        blank,
    })
}

/// A digest of the pixels and their layout: equal pictures have equal digests, and different
/// ones almost never do (it is only compared within one process).
fn digest(pixels: &RgbImage) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (pixels.width(), pixels.height()).hash(&mut hasher);
    pixels.as_raw().hash(&mut hasher);
    hasher.finish()
}

/// The colour of every pixel, when they all have the same one.
fn one_colour(pixels: &RgbImage) -> Option<[u8; 3]> {
    let first = pixels.pixels().next()?.0;
    pixels
        .pixels()
        .all(|pixel| pixel.0 == first)
        .then_some(first)
}

/// The factor that fits `width x height` into the bounds with the aspect kept; at most 1.
pub(super) fn fit_scale(width: u32, height: u32, max_width: u32, max_height: u32) -> f64 {
    let across = f64::from(max_width.max(1)) / f64::from(width.max(1));
    let down = f64::from(max_height.max(1)) / f64::from(height.max(1));
    across.min(down).min(1.0)
}

fn scaled(length: u32, scale: f64) -> u32 {
    // Lengths are at most a few thousand pixels: the cast back cannot overflow.
    ((f64::from(length) * scale).round() as u32).max(1)
}

#[cfg(test)]
mod tests {
    use bevy::asset::RenderAssetUsages;
    use bevy::math::UVec2;
    use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};

    use super::*;

    /// An sRGB RGBA frame whose pixel (x, y) is `colour(x, y)`.
    fn frame(width: u32, height: u32, colour: impl Fn(u32, u32) -> [u8; 3]) -> Image {
        let mut data = Vec::new();
        for y in 0..height {
            for x in 0..width {
                data.extend(colour(x, y));
                data.push(255);
            }
        }
        Image::new(
            Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            data,
            TextureFormat::Rgba8UnormSrgb,
            RenderAssetUsages::default(),
        )
    }

    fn shaping(region: Option<URect>, max_bytes: u64) -> Shaping {
        Shaping {
            region,
            max_width: 4096,
            max_height: 4096,
            max_bytes,
            save_to: None,
        }
    }

    #[test]
    fn a_crop_keeps_exactly_its_pixels() {
        let picture = make(
            frame(8, 6, |x, y| [x as u8 * 10, y as u8 * 10, 7]),
            &shaping(
                Some(URect::from_corners(UVec2::new(2, 1), UVec2::new(5, 4))),
                1 << 20,
            ),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!((picture.width, picture.height), (3, 3));
        assert_eq!(picture.scale, 1.0);
        let decoded = image::load_from_memory(&picture.png)
            .unwrap_or_else(|error| panic!("{error}"))
            .to_rgb8();
        assert_eq!(decoded.get_pixel(0, 0).0, [20, 10, 7]);
        assert_eq!(decoded.get_pixel(2, 2).0, [40, 30, 7]);
    }

    #[test]
    fn a_region_outside_the_frame_is_refused() {
        let outside = URect::from_corners(UVec2::new(50, 50), UVec2::new(60, 60));
        let refused = make(
            frame(8, 6, |_, _| [0, 0, 0]),
            &shaping(Some(outside), 1 << 20),
        );
        assert!(matches!(refused, Err(BridgeError::CaptureFailed { .. })));
    }

    #[test]
    fn a_png_over_max_bytes_is_refused_with_a_smaller_size_to_ask_for() {
        // Noise does not compress: 128x128 RGB is far over 1 KiB as PNG.
        let mut seed = 1_u32;
        let mut noise = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as u8
        };
        let mut pixels = Vec::new();
        for _ in 0..128 * 128 {
            pixels.push([noise(), noise(), noise()]);
        }
        let refused = make(
            frame(128, 128, |x, y| pixels[(y * 128 + x) as usize]),
            &shaping(None, 1024),
        );
        match refused {
            Err(BridgeError::ResultTooLarge { limit, advice, .. }) => {
                assert_eq!(limit, 1024);
                assert!(advice.contains("maxWidth 64"), "{advice}");
            }
            other => panic!("expected ResultTooLarge, got {other:?}"),
        }
    }

    #[test]
    fn scale_keeps_the_aspect_and_never_enlarges() {
        assert_eq!(fit_scale(640, 360, 1280, 1280), 1.0);
        assert_eq!(fit_scale(640, 360, 320, 1280), 0.5);
        assert_eq!(fit_scale(640, 360, 1280, 90), 0.25);
        assert_eq!(scaled(360, 0.25), 90);
        assert_eq!(scaled(1, 0.01), 1);
    }
}
