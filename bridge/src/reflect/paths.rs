//! Reflect paths into types: the paths a type has, and whether a path exists before any value of
//! the type does (a query filter on a type no entity has yet must still be checked).

use bevy::reflect::enums::VariantInfo;
use bevy::reflect::{Access, ParsedPath, PartialReflect, ReflectPath, TypeInfo};
use mcp_native_transport::gateway::guidance::suggest;

use crate::error::BridgeError;

/// Paths listed for a type at most.
pub(crate) const MAX_PATHS: usize = 64;

/// How deep [`field_paths`] goes.
const MAX_DEPTH: usize = 3;

/// The reflect paths into a type (".current", ".translation.x"), depth first, capped at
/// [`MAX_PATHS`].
pub(crate) fn field_paths(info: &TypeInfo) -> Vec<String> {
    let mut out = Vec::new();
    collect(info, "", MAX_DEPTH, &mut out);
    out
}

fn collect(info: &TypeInfo, prefix: &str, depth: usize, out: &mut Vec<String>) {
    if depth == 0 || out.len() >= MAX_PATHS {
        return;
    }
    let mut visit = |segment: String, child: Option<&'static TypeInfo>| {
        if out.len() >= MAX_PATHS {
            return;
        }
        let path = format!("{prefix}{segment}");
        out.push(path.clone());
        if let Some(child) = child {
            collect(child, &path, depth - 1, out);
        }
    };
    match info {
        TypeInfo::Struct(info) => {
            for field in info.iter() {
                visit(format!(".{}", field.name()), field.type_info());
            }
        }
        TypeInfo::TupleStruct(info) => {
            for field in info.iter() {
                visit(format!(".{}", field.index()), field.type_info());
            }
        }
        TypeInfo::Tuple(info) => {
            for field in info.iter() {
                visit(format!(".{}", field.index()), field.type_info());
            }
        }
        _ => {}
    }
}

/// Checks that `path` can exist in values of the type described by `info`: every field named is
/// a field of the type it is read from (of some variant, for enums). List indexes are not
/// checked against a length, which only a value has. Returns the type at the path when
/// reflection can tell it.
pub(crate) fn check_path(
    info: &'static TypeInfo,
    path: &str,
    owner: &str,
) -> Result<Option<&'static TypeInfo>, BridgeError> {
    if path.is_empty() {
        return Ok(Some(info));
    }
    let parsed =
        ParsedPath::parse(path).map_err(|error| path_not_found(path, owner, Some(info), error))?;
    let mut current = Some(info);
    for step in &parsed.0 {
        // A field whose type carries no type info (rare generic cases) ends what can be checked.
        let Some(here) = current else {
            return Ok(None);
        };
        current = match step_into(here, &step.access) {
            Ok(next) => next,
            Err(reason) => return Err(path_not_found(path, owner, Some(info), reason)),
        };
    }
    Ok(current)
}

/// The type info one step below `info`, or why the step does not exist.
fn step_into(info: &TypeInfo, access: &Access) -> Result<Option<&'static TypeInfo>, String> {
    let missing = || format!("{} has no {access}", info.type_path());
    match (info, access) {
        (TypeInfo::Struct(info), Access::Field(name)) => info
            .field(name)
            .map(|field| field.type_info())
            .ok_or_else(missing),
        (TypeInfo::Struct(info), Access::FieldIndex(index)) => info
            .field_at(*index)
            .map(|field| field.type_info())
            .ok_or_else(missing),
        (TypeInfo::TupleStruct(info), Access::TupleIndex(index)) => info
            .field_at(*index)
            .map(|field| field.type_info())
            .ok_or_else(missing),
        (TypeInfo::Tuple(info), Access::TupleIndex(index)) => info
            .field_at(*index)
            .map(|field| field.type_info())
            .ok_or_else(missing),
        (TypeInfo::List(info), Access::ListIndex(_)) => Ok(info.item_info()),
        (TypeInfo::Array(info), Access::ListIndex(_)) => Ok(info.item_info()),
        (TypeInfo::Enum(info), access) => info
            .iter()
            .find_map(|variant| variant_field(variant, access))
            .ok_or_else(missing),
        _ => Err(missing()),
    }
}

/// The type info of a field of one enum variant, when the variant has it.
fn variant_field(variant: &VariantInfo, access: &Access) -> Option<Option<&'static TypeInfo>> {
    match (variant, access) {
        (VariantInfo::Struct(variant), Access::Field(name)) => {
            variant.field(name).map(|field| field.type_info())
        }
        (VariantInfo::Struct(variant), Access::FieldIndex(index)) => {
            variant.field_at(*index).map(|field| field.type_info())
        }
        (VariantInfo::Tuple(variant), Access::TupleIndex(index)) => {
            variant.field_at(*index).map(|field| field.type_info())
        }
        _ => None,
    }
}

/// The field at `path` inside a value (the whole value for the empty path).
pub(crate) fn field_at<'v>(
    target: &'v dyn PartialReflect,
    path: &str,
    owner: &str,
) -> Result<&'v dyn PartialReflect, BridgeError> {
    if path.is_empty() {
        return Ok(target);
    }
    path.reflect_element(target)
        .map_err(|error| path_not_found(path, owner, target.get_represented_type_info(), error))
}

/// A field path parsed once, to read the same field of many values (a query's test runs on
/// every entity of the world; parsing the text each time was a good part of its cost).
#[derive(Debug)]
pub(crate) struct FieldPath {
    text: String,
    /// `None` for the whole value (an empty path), or when the text does not parse (then every
    /// read of it finds nothing, as reading the text would).
    parsed: Option<ParsedPath>,
}

impl FieldPath {
    /// Parses `text` (already checked against the type, see `check_path`).
    pub(crate) fn new(text: &str) -> FieldPath {
        FieldPath {
            text: text.to_owned(),
            parsed: ParsedPath::parse(text).ok(),
        }
    }

    /// The path as given.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The field of `target` at this path; `None` when `target` has no such field (another
    /// enum variant, a short list).
    pub(crate) fn of<'v>(&self, target: &'v dyn PartialReflect) -> Option<&'v dyn PartialReflect> {
        if self.text.is_empty() {
            return Some(target);
        }
        self.parsed.as_ref()?.reflect_element(target).ok()
    }
}

/// A path that does not exist in the type `info` describes, with the type's real paths, the
/// closest first (none when the type carries no info).
pub(crate) fn path_not_found(
    path: &str,
    owner: &str,
    info: Option<&TypeInfo>,
    reason: impl std::fmt::Display,
) -> BridgeError {
    let paths = info.map(field_paths).unwrap_or_default();
    let suggestions = suggest(path, paths.iter().map(String::as_str))
        .into_iter()
        .map(str::to_owned)
        .collect();
    BridgeError::PathNotFound {
        path: path.to_owned(),
        type_path: owner.to_owned(),
        reason: reason.to_string(),
        suggestions,
        paths,
    }
}

#[cfg(test)]
mod tests {
    use bevy::math::Vec3;
    use bevy::prelude::Transform;
    use bevy::reflect::{Reflect, Typed};

    use super::*;

    #[derive(Reflect)]
    enum Shape {
        Circle { radius: f32 },
        Pair(f32, f32),
        Empty,
    }

    #[test]
    fn paths_of_a_nested_struct() {
        let paths = field_paths(Transform::type_info());
        assert!(paths.contains(&".translation".to_owned()));
        assert!(paths.contains(&".translation.x".to_owned()));
        assert!(paths.contains(&".scale.z".to_owned()));
    }

    #[test]
    fn checks_fields_of_structs_and_variants() {
        let transform = Transform::type_info();
        assert!(check_path(transform, ".translation.y", "Transform").is_ok());
        assert!(check_path(transform, "", "Transform").is_ok());
        let Err(BridgeError::PathNotFound { suggestions, .. }) =
            check_path(transform, ".translaton.y", "Transform")
        else {
            panic!("a misspelt field must be refused");
        };
        assert_eq!(
            suggestions.first().map(String::as_str),
            Some(".translation.y")
        );
        assert!(check_path(Vec3::type_info(), ".w", "Vec3").is_err());
        let shape = Shape::type_info();
        assert!(check_path(shape, ".radius", "Shape").is_ok());
        assert!(check_path(shape, ".1", "Shape").is_ok());
        assert!(check_path(shape, ".2", "Shape").is_err());
        assert!(check_path(shape, "..", "Shape").is_err());
    }
}
