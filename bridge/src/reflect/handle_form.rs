//! The JSON form of asset handles, as values read show them and schemas describe them: an
//! asset's path when it came from a file, otherwise `{"asset": "<id>", "type": "<asset type>"}`.
//! Reading the forms back into handles is [`crate::reflect::handles`].

use std::any::TypeId;

use bevy::asset::uuid::Uuid;
use bevy::asset::{AssetIndex, ReflectHandle, UntypedAssetId, UntypedHandle};
use bevy::reflect::{Reflect, TypeRegistration, TypeRegistry};
use serde_json::{Value, json};

/// The text of an asset id in handle forms and `manage_asset` rows: a UUID, or the index's bits.
pub(crate) fn asset_id_text(id: UntypedAssetId) -> String {
    match id {
        UntypedAssetId::Index { index, .. } => index.to_bits().to_string(),
        UntypedAssetId::Uuid { uuid, .. } => uuid.to_string(),
    }
}

/// The asset id `text` names among assets of `type_id` (see [`asset_id_text`]).
pub(crate) fn parse_asset_id(text: &str, type_id: TypeId) -> Option<UntypedAssetId> {
    if let Ok(uuid) = Uuid::parse_str(text) {
        return Some(UntypedAssetId::Uuid { type_id, uuid });
    }
    let bits = text.trim().parse::<u64>().ok()?;
    Some(UntypedAssetId::Index {
        type_id,
        index: AssetIndex::from_bits(bits),
    })
}

/// The handle a reflected value is, when it is one (`Handle<T>`, or `UntypedHandle`).
pub(crate) fn as_handle(
    value: &dyn Reflect,
    registration: &TypeRegistration,
) -> Option<UntypedHandle> {
    if let Some(reflect_handle) = registration.data::<ReflectHandle>() {
        return reflect_handle.downcast_handle_untyped(value.as_any());
    }
    value.downcast_ref::<UntypedHandle>().cloned()
}

/// Whether a handle names its asset only by an id that lives no longer than its strong handles
/// (an asset the game made at run time): a path loads again, and a UUID asset is never freed.
pub(crate) fn named_only_by_id(handle: &UntypedHandle) -> bool {
    matches!(handle, UntypedHandle::Strong(_)) && handle.path().is_none()
}

/// Whether values of this type are asset handles.
pub(crate) fn is_handle_type(registration: &TypeRegistration) -> bool {
    registration.data::<ReflectHandle>().is_some()
        || registration.type_id() == TypeId::of::<UntypedHandle>()
}

/// A handle's JSON form: its asset path, or a reference to the asset. An `UntypedHandle` says its
/// type in either form (`{"path": ..., "type": ...}`), since nothing else does.
pub(crate) fn handle_json(handle: &UntypedHandle, typed: bool, registry: &TypeRegistry) -> Value {
    let type_path = asset_type_path(registry, handle.type_id());
    match (handle.path(), typed) {
        (Some(path), true) => Value::String(path.to_string()),
        (Some(path), false) => json!({"path": path.to_string(), "type": type_path}),
        (None, _) => json!({"asset": asset_id_text(handle.id()), "type": type_path}),
    }
}

/// An asset type's path, or its Rust type id where the type is not registered.
pub(crate) fn asset_type_path(registry: &TypeRegistry, type_id: TypeId) -> String {
    if let Some(registration) = registry.get(type_id) {
        return registration.type_info().type_path().to_owned();
    }
    // An asset type without reflection (Bevy's `WorldAsset`): named by its handle's type path.
    registry
        .iter()
        .filter(|registration| {
            registration
                .data::<ReflectHandle>()
                .is_some_and(|handle| handle.asset_type_id() == type_id)
        })
        .find_map(|registration| {
            let path = registration.type_info().type_path();
            let inner = path.split_once('<')?.1.strip_suffix('>')?;
            Some(inner.to_owned())
        })
        .unwrap_or_else(|| format!("{type_id:?}"))
}

/// The JSON Schema of a handle type's values, with the asset type named; `None` for other types.
pub(crate) fn handle_schema(
    registry: &TypeRegistry,
    registration: &TypeRegistration,
) -> Option<Value> {
    let asset_type = match registration.data::<ReflectHandle>() {
        Some(reflect_handle) => asset_type_path(registry, reflect_handle.asset_type_id()),
        None if registration.type_id() == TypeId::of::<UntypedHandle>() => "any asset".to_owned(),
        None => return None,
    };
    let new = if is_mesh_type(&asset_type) {
        json!({"type": "object", "minProperties": 1, "maxProperties": 1, "description": format!("a primitive shape over its default: one of {}", PRIMITIVE_NAMES.join(", "))})
    } else {
        json!({"type": "object", "description": format!("a {asset_type} value over its default")})
    };
    Some(json!({
        "description": format!(
            "a handle to a {asset_type}: its file's path in the asset folder (\"models/tree.glb#Scene0\"), a reference to an asset that exists ({{\"asset\": \"<id>\"}}, as values read show it), or a new asset ({{\"new\": ...}})"
        ),
        "anyOf": [
            {"type": "string", "minLength": 1, "description": "a path inside the asset folder, with an optional #label"},
            {"type": "object", "properties": {"path": {"type": "string", "minLength": 1}, "type": {"type": "string"}}, "required": ["path"], "additionalProperties": false},
            {"type": "object", "properties": {"asset": {"type": "string", "minLength": 1}, "type": {"type": "string"}}, "required": ["asset"], "additionalProperties": false},
            {"type": "object", "properties": {"new": new}, "required": ["new"], "additionalProperties": false}
        ]
    }))
}

/// The type path of Bevy's image asset.
pub(crate) const IMAGE_TYPE: &str = "bevy_image::image::Image";

/// Whether `type_id` is Bevy's mesh asset.
pub(crate) fn is_mesh(type_id: TypeId) -> bool {
    #[cfg(feature = "render")]
    return type_id == TypeId::of::<bevy::mesh::Mesh>();
    #[cfg(not(feature = "render"))]
    return {
        let _ = type_id;
        false
    };
}

/// Whether `type_path` is Bevy's mesh asset.
pub(crate) fn is_mesh_type(type_path: &str) -> bool {
    type_path == "bevy_mesh::mesh::Mesh"
}

/// The shapes a new mesh can be made from.
pub(crate) const PRIMITIVE_NAMES: &[&str] = &[
    "Cuboid",
    "Sphere",
    "Plane3d",
    "Cylinder",
    "Capsule3d",
    "Cone",
    "ConicalFrustum",
    "Torus",
    "Tetrahedron",
    "Circle",
    "Rectangle",
    "Ellipse",
    "Annulus",
    "Capsule2d",
    "RegularPolygon",
    "Rhombus",
    "Triangle2d",
    "CircularSector",
    "CircularSegment",
];
