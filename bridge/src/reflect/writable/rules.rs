//! The rules that span fields: a font's size, a transform's scale and rotation, shadows, projections, viewports, sprite tiles.

use super::*;

pub(super) fn font_size(written: &Written<'_>) -> Result<(), String> {
    let Some(size) = field_of(written.new, "font_size") else {
        return Ok(());
    };
    let Some((variant, Some(number))) = variant_number(size) else {
        return Err("font_size is not a size of one number".to_owned());
    };
    let (min, max) = match variant {
        "Px" => (1.0, 256.0),
        "Rem" => (0.1, 16.0),
        "Vw" | "Vh" | "VMin" | "VMax" => (0.1, 20.0),
        other => return Err(format!("font_size {other} is not a known kind of size")),
    };
    if (min..=max).contains(&number) {
        Ok(())
    } else {
        Err(format!(
            "at .font_size: {variant}({}) is outside {}..{}",
            show(number),
            show(min),
            show(max)
        ))
    }
}

pub(super) fn transform_scale(written: &Written<'_>) -> Result<(), String> {
    let Some(scale) = field_of(written.new, "scale") else {
        return Ok(());
    };
    let mut found = Vec::new();
    numbers(scale, &mut ".scale".to_owned(), &mut found);
    for (number, at) in found {
        if !(1e-4..=1e6).contains(&number.abs()) {
            return Err(format!(
                "at {at}: a scale of {} collapses or explodes the entity",
                show(number)
            ));
        }
    }
    Ok(())
}

pub(super) fn transform_rotation(written: &Written<'_>) -> Result<(), String> {
    let Some(rotation) = field_of(written.new, "rotation") else {
        return Ok(());
    };
    let mut found = Vec::new();
    numbers(rotation, &mut ".rotation".to_owned(), &mut found);
    let length = found
        .iter()
        .map(|(number, _)| number * number)
        .sum::<f64>()
        .sqrt();
    if (0.99..=1.01).contains(&length) {
        Ok(())
    } else {
        Err(format!(
            "at .rotation: the quaternion's length is {length:.4}, not 1"
        ))
    }
}

pub(super) fn directional_shadows(written: &Written<'_>) -> Result<(), String> {
    let flag = |value: &dyn PartialReflect| {
        field_of(value, "shadow_maps_enabled")
            .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
    };
    let now = flag(written.new).unwrap_or(false);
    let before = written.before.and_then(flag).unwrap_or(false);
    if now && !before {
        Err("shadow_maps_enabled cannot turn on through the bridge".to_owned())
    } else {
        Ok(())
    }
}

pub(super) fn projection(written: &Written<'_>) -> Result<(), String> {
    let ReflectRef::Enum(value) = written.new.reflect_ref() else {
        return Err("a projection is an enum".to_owned());
    };
    let Some(inner) = value.field_at(0) else {
        return Err("a projection carries its settings".to_owned());
    };
    let check = |path: &str, min: f64, max: f64| -> Result<f64, String> {
        let number = number_at(inner, path).ok_or_else(|| format!("{path} is missing"))?;
        if (min..=max).contains(&number) {
            Ok(number)
        } else {
            Err(format!(
                "at {path}: {} is outside {}..{}",
                show(number),
                show(min),
                show(max)
            ))
        }
    };
    match value.variant_name() {
        "Perspective" => {
            check(".fov", 0.01, 3.1)?;
            check(".aspect_ratio", 0.01, 100.0)?;
            let near = check(".near", 1e-6, 1e7)?;
            let far = check(".far", 1e-6, 1e7)?;
            if near >= far {
                return Err(format!(
                    "near ({}) must be below far ({})",
                    show(near),
                    show(far)
                ));
            }
        }
        "Orthographic" => {
            check(".scale", 1e-4, 1e4)?;
            let near = check(".near", -1e7, 1e7)?;
            let far = check(".far", -1e7, 1e7)?;
            if near >= far {
                return Err(format!(
                    "near ({}) must be below far ({})",
                    show(near),
                    show(far)
                ));
            }
            if let Some(mode) = at(inner, ".scaling_mode") {
                let mut found = Vec::new();
                numbers(mode, &mut ".scaling_mode".to_owned(), &mut found);
                for (number, at) in found {
                    if !(0.01..=100_000.0).contains(&number) {
                        return Err(format!("at {at}: {} is outside 0.01..100000", show(number)));
                    }
                }
            }
            within(
                at(inner, ".viewport_origin").ok_or_else(|| "a field is missing".to_owned())?,
                span(-10.0, 10.0),
                &mut ".viewport_origin".to_owned(),
            )?;
        }
        other => return Err(format!("a {other} projection cannot be written")),
    }
    Ok(())
}

pub(super) fn camera_viewport(written: &Written<'_>) -> Result<(), String> {
    let Some(viewport) = field_of(written.new, "viewport") else {
        return Ok(());
    };
    let ReflectRef::Enum(option) = viewport.reflect_ref() else {
        return Ok(());
    };
    let Some(rect) = option.field_at(0) else {
        return Ok(()); // None: the whole target.
    };
    let get =
        |path: &str| number_at(rect, path).ok_or_else(|| format!("viewport{path} is missing"));
    let (x, y) = (get(".physical_position.x")?, get(".physical_position.y")?);
    let (width, height) = (get(".physical_size.x")?, get(".physical_size.y")?);
    if width < 1.0 || height < 1.0 {
        return Err(format!(
            "viewport physical_size {}x{} is empty",
            show(width),
            show(height)
        ));
    }
    let depth =
        at(rect, ".depth").and_then(|depth| depth.try_downcast_ref::<std::ops::Range<f32>>());
    if let Some(depth) = depth
        && !(0.0 <= depth.start && depth.start <= depth.end && depth.end <= 1.0)
    {
        return Err(format!(
            "viewport depth {}..{} is not within 0..1",
            depth.start, depth.end
        ));
    }
    let target = written.before.and_then(|before| {
        let target = at(before, ".computed.target_info")?;
        let ReflectRef::Enum(target) = target.reflect_ref() else {
            return None;
        };
        let info = target.field_at(0)?;
        Some((
            number_at(info, ".physical_size.x")?,
            number_at(info, ".physical_size.y")?,
        ))
    });
    let Some((target_width, target_height)) = target else {
        return Err("the camera has no render target size yet (it has not rendered a frame); set its viewport after its first frame".to_owned());
    };
    if x + width > target_width || y + height > target_height {
        return Err(format!(
            "viewport {}x{} at ({}, {}) does not fit the camera's {}x{} target",
            show(width),
            show(height),
            show(x),
            show(y),
            show(target_width),
            show(target_height)
        ));
    }
    Ok(())
}

/// The size of the image a handle names, in pixels, when the world can tell: with the render
/// feature, which knows Bevy's `Image`.
#[cfg(feature = "render")]
pub(super) fn image_size(world: &World, handle: &dyn PartialReflect) -> Option<(f64, f64)> {
    use bevy::asset::{Assets, Handle};
    use bevy::image::Image;
    let handle = handle.try_downcast_ref::<Handle<Image>>()?;
    let size = world.get_resource::<Assets<Image>>()?.get(handle)?.size();
    Some((f64::from(size.x), f64::from(size.y)))
}

#[cfg(not(feature = "render"))]
pub(super) fn image_size(_world: &World, _handle: &dyn PartialReflect) -> Option<(f64, f64)> {
    None
}

pub(super) fn sprite_tiles(written: &Written<'_>) -> Result<(), String> {
    let sprite = written.new;
    let Some(mode) = field_of(sprite, "image_mode") else {
        return Ok(());
    };
    let ReflectRef::Enum(mode) = mode.reflect_ref() else {
        return Ok(());
    };
    let image = sprite_source(written);
    let custom = at(sprite, ".custom_size").and_then(|size| match size.reflect_ref() {
        ReflectRef::Enum(option) => option
            .field_at(0)
            .and_then(|size| Some((number_at(size, ".x")?, number_at(size, ".y")?))),
        _ => None,
    });
    // Drawn size: the custom size, else the source rectangle (unknown: one pixel, then the
    // drawn size is the source's and each axis holds 1 / stretch tiles).
    let source = image.unwrap_or((1.0, 1.0));
    let drawn = custom.unwrap_or(source);
    let count = match mode.variant_name() {
        "Tiled" => {
            let stretch = stretch_at(
                at(sprite, ".image_mode").ok_or_else(|| "a field is missing".to_owned())?,
                ".image_mode",
            )?;
            let tile_x = mode
                .field("tile_x")
                .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
                .unwrap_or(true);
            let tile_y = mode
                .field("tile_y")
                .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
                .unwrap_or(true);
            match (tile_x, tile_y) {
                (false, false) => 1.0,
                (true, true) => tile_count(drawn, stretch, source),
                // One axis: the count along it alone.
                (true, false) => (drawn.0 / (source.0 * stretch).max(1.0)).ceil().max(1.0),
                (false, true) => (drawn.1 / (source.1 * stretch).max(1.0)).ceil().max(1.0),
            }
        }
        "Sliced" => match mode.field_at(0) {
            Some(slicer) => sliced_tiles(slicer, source, drawn)?,
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    if count > MAX_SPRITE_TILES {
        let assumed = if image.is_none() {
            " (the bridge cannot see this image's size, so it counts one-pixel tiles)"
        } else {
            ""
        };
        return Err(format!(
            "this image mode cuts the sprite into about {} tiles, over {}{assumed}; use a larger stretch_value or a smaller custom_size",
            show(count.round()),
            show(MAX_SPRITE_TILES)
        ));
    }
    Ok(())
}

/// The size of a sprite's tile source: its rect, else its image's (an atlas cell may be as small
/// as a pixel, so a sprite in an atlas counts one-pixel tiles: `None`).
fn sprite_source(written: &Written<'_>) -> Option<(f64, f64)> {
    let sprite = written.new;
    let rect = at(sprite, ".rect").and_then(|rect| match rect.reflect_ref() {
        ReflectRef::Enum(option) => option.field_at(0).and_then(|rect| {
            let width = number_at(rect, ".max.x")? - number_at(rect, ".min.x")?;
            let height = number_at(rect, ".max.y")? - number_at(rect, ".min.y")?;
            Some((width.abs(), height.abs()))
        }),
        _ => None,
    });
    let in_atlas = at(sprite, ".texture_atlas")
        .is_some_and(|atlas| matches!(atlas.reflect_ref(), ReflectRef::Enum(option) if option.variant_name() == "Some"));
    match (rect, in_atlas) {
        (Some(rect), _) => Some(rect),
        (None, true) => None,
        (None, false) => written
            .world
            .and_then(|world| image_size(world, at(sprite, ".image")?)),
    }
}

/// How many tiles of `source` scaled by `stretch` cover `drawn`.
fn tile_count(drawn: (f64, f64), stretch: f64, source: (f64, f64)) -> f64 {
    let tile_x = (source.0 * stretch).max(1.0);
    let tile_y = (source.1 * stretch).max(1.0);
    (drawn.0 / tile_x).ceil().max(1.0) * (drawn.1 / tile_y).ceil().max(1.0)
}

/// A tiling's `stretch_value`, within its bounds.
fn stretch_at(value: &dyn PartialReflect, at: &str) -> Result<f64, String> {
    let stretch = number_at(value, ".stretch_value")
        .ok_or_else(|| format!("{at}.stretch_value is missing"))?;
    if stretch < MIN_STRETCH {
        return Err(format!(
            "at {at}.stretch_value: {} is below {MIN_STRETCH}",
            show(stretch)
        ));
    }
    if stretch > 100.0 {
        return Err(format!(
            "at {at}.stretch_value: {} is above 100",
            show(stretch)
        ));
    }
    Ok(stretch)
}

/// The pieces a nine-slice cuts: its borders bounded, its tiled center and sides counted.
fn sliced_tiles(
    slicer: &dyn PartialReflect,
    source: (f64, f64),
    drawn: (f64, f64),
) -> Result<f64, String> {
    let mut borders = Vec::new();
    if let Some(border) = at(slicer, ".border") {
        numbers(border, &mut ".border".to_owned(), &mut borders);
    }
    for (number, at) in &borders {
        if !(0.0..=4096.0).contains(number) {
            return Err(format!(
                "at .image_mode.0{at}: {} is outside 0..4096",
                show(*number)
            ));
        }
    }
    let corner = number_at(slicer, ".max_corner_scale").unwrap_or(1.0);
    if !(0.0..=4096.0).contains(&corner) {
        return Err(format!(
            "at .image_mode.0.max_corner_scale: {} is outside 0..4096",
            show(corner)
        ));
    }
    // The center and sides are cut from what the borders leave of the source.
    let border_sum: f64 = borders.iter().map(|(number, _)| number).sum();
    let inner = (
        (source.0 - border_sum / 2.0).max(1.0),
        (source.1 - border_sum / 2.0).max(1.0),
    );
    let mut count = 9.0;
    for side in [".center_scale_mode", ".sides_scale_mode"] {
        let Some(scale) = at(slicer, side) else {
            continue;
        };
        if matches!(scale.reflect_ref(), ReflectRef::Enum(mode) if mode.variant_name() == "Tile") {
            let stretch = stretch_at(scale, &format!(".image_mode.0{side}"))?;
            count += 4.0 * tile_count(drawn, stretch, inner);
        }
    }
    Ok(count)
}
