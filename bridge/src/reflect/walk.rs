//! One walk over a reflected value: every value inside it, depth first, with its reflect path.
//! The write policy's value checks and the writable set's number bounds both read values this
//! way, so a kind of value one of them reaches the other reaches too.

use bevy::reflect::enums::VariantField;
use bevy::reflect::{PartialReflect, ReflectRef};

/// What a visit says about the value it saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Go on into its fields.
    Descend,
    /// Skip what is inside it.
    Skip,
}

/// A visit: the value, its reflect path and its depth; says whether to go inside.
pub(crate) type Visit<'v, E> = dyn FnMut(&dyn PartialReflect, &str, usize) -> Result<Step, E> + 'v;

/// Visits `value` and everything inside it, depth first; `path` holds the reflect path of each
/// visited value (`.field`, `.0`, `[3]`, `[key 2]` for a map's key) and is restored after.
/// `visit` gets the value, its path and its depth (0 for `value`); an error stops the walk.
pub(crate) fn walk<E>(
    value: &dyn PartialReflect,
    path: &mut String,
    depth: usize,
    visit: &mut Visit<'_, E>,
) -> Result<(), E> {
    if visit(value, path, depth)? == Step::Skip {
        return Ok(());
    }
    // The segment is written into `path` in place: a string per field was most of what a
    // load's checks of 100,000 entities cost.
    let mut child =
        |segment: std::fmt::Arguments<'_>, field: &dyn PartialReflect| -> Result<(), E> {
            let length = path.len();
            // Writing into a String cannot fail.
            let _ = std::fmt::Write::write_fmt(path, segment);
            let walked = walk(field, path, depth + 1, visit);
            path.truncate(length);
            walked
        };
    match value.reflect_ref() {
        ReflectRef::Struct(value) => {
            for index in 0..value.field_len() {
                if let (Some(name), Some(field)) = (value.name_at(index), value.field_at(index)) {
                    child(format_args!(".{name}"), field)?;
                }
            }
        }
        ReflectRef::TupleStruct(value) => {
            for (index, field) in value.iter_fields().enumerate() {
                child(format_args!(".{index}"), field)?;
            }
        }
        ReflectRef::Tuple(value) => {
            for (index, field) in value.iter_fields().enumerate() {
                child(format_args!(".{index}"), field)?;
            }
        }
        ReflectRef::List(value) => {
            for (index, item) in value.iter().enumerate() {
                child(format_args!("[{index}]"), item)?;
            }
        }
        ReflectRef::Array(value) => {
            for (index, item) in value.iter().enumerate() {
                child(format_args!("[{index}]"), item)?;
            }
        }
        ReflectRef::Map(value) => {
            for (index, (key, item)) in value.iter().enumerate() {
                child(format_args!("[key {index}]"), key)?;
                child(format_args!("[{index}]"), item)?;
            }
        }
        ReflectRef::Set(value) => {
            for (index, item) in value.iter().enumerate() {
                child(format_args!("[{index}]"), item)?;
            }
        }
        ReflectRef::Enum(value) => {
            for (index, field) in value.iter_fields().enumerate() {
                match field {
                    VariantField::Struct(name, field) => child(format_args!(".{name}"), field)?,
                    VariantField::Tuple(field) => child(format_args!(".{index}"), field)?,
                }
            }
        }
        #[allow(unreachable_patterns)] // reflect kinds behind features (functions)
        _ => {}
    }
    Ok(())
}
