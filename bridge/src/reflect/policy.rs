//! The write policy: which types the generic reflection actions may change, and the checks every
//! reflected value passes before it reaches the world.
//!
//! Dedicated actions (`control_app.set_speed`, `control_entity.set_parent`, `control_app.exit`)
//! know the invariants of the engine state they change. The generic ones (`spawn`,
//! `insert_components`, `remove_components`, `mutate_component`, `manage_resource.*`,
//! `trigger_event`, `write_message`, world loads, history restores) cannot, so what one action
//! refuses no generic path may allow:
//!
//! 1. **Engine types are closed by default.** A type from one of Bevy's crates is refused
//!    (`PROTECTED_TYPE`) unless it is in the writable set ([`crate::reflect::writable`]), where
//!    every writable field has a bound the bridge checks before anything changes. Some engine
//!    types name a dedicated action (clocks, exit, the hierarchy, states, assets); relations
//!    between entities are protected whoever defines them. The game's own types stay open. An
//!    app protects more of its own types, or opens one (bounds and all), through [`PolicyConfig`].
//! 2. **Every reflected value** is checked before it is applied ([`WritePolicy::check_value`]):
//!    floats must be finite (unless the app opted the type in), a `Name` is at most
//!    [`WriteLimits::max_name_chars`] characters, any other string at most
//!    [`WriteLimits::max_string_bytes`] bytes, and an entity a value refers to must be alive.
//!    Whole values of writable engine types also pass their bounds ([`WritePolicy::check_write`]);
//!    history restores do not, since they put back values the world itself held.

use std::any::TypeId;
use std::borrow::Cow;
use std::sync::Arc;

use bevy::ecs::component::ComponentId;
use bevy::prelude::{Entity, Name, Resource, World};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{PartialReflect, ReflectPath, ReflectRef, TypeRegistration, TypeRegistry};

use bevy_mcp_generated::names::{
    control_app, control_entity, input, manage_asset, manage_world, state,
};
use mcp_vocabulary::next_call::ActionName;

use crate::error::BridgeError;
use crate::reflect::walk::{Step, walk};
use crate::reflect::writable::{self, WritableType, Written};

/// Bounds on what one write may set or create. Every bound is configurable through
/// [`crate::BridgeConfig::with_write_limits`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteLimits {
    /// Longest `Name`, in characters, on every path that sets one. Default 256 (as `spawn` and
    /// `rename` declare).
    pub max_name_chars: usize,
    /// Longest string anywhere inside a written value, in bytes. Default 16 KiB.
    pub max_string_bytes: usize,
    /// Most bytes (reflect JSON) one `duplicate` may create: copies times the source's size.
    /// Default 4 MiB, the size of the largest request.
    pub max_duplicate_bytes: usize,
    /// Most assets the bridge keeps loaded for `manage_asset.load`; the oldest is released
    /// beyond it. Default 256.
    pub max_held_assets: usize,
    /// Most assets the bridge may have made from values (`{"new": ...}` handles) and not yet
    /// released; a write that would make more is refused. Default 1,024.
    pub max_made_assets: usize,
    /// Most levels below a root that any path setting a parent may make (spawn with children,
    /// set_parent, duplicate, world files, undo, redo). Default 1,000.
    pub max_hierarchy_depth: usize,
}

impl Default for WriteLimits {
    fn default() -> Self {
        WriteLimits {
            max_name_chars: 256,
            max_string_bytes: 16 * 1024,
            max_duplicate_bytes: 4 * 1024 * 1024,
            max_held_assets: 256,
            max_made_assets: 1_024,
            max_hierarchy_depth: 1_000,
        }
    }
}

impl WriteLimits {
    /// Sets [`WriteLimits::max_name_chars`].
    pub fn max_name_chars(&mut self, chars: usize) -> &mut Self {
        self.max_name_chars = chars;
        self
    }

    /// Sets [`WriteLimits::max_string_bytes`].
    pub fn max_string_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_string_bytes = bytes;
        self
    }

    /// Sets [`WriteLimits::max_duplicate_bytes`].
    pub fn max_duplicate_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_duplicate_bytes = bytes;
        self
    }

    /// Sets [`WriteLimits::max_hierarchy_depth`].
    pub fn max_hierarchy_depth(&mut self, levels: usize) -> &mut Self {
        self.max_hierarchy_depth = levels;
        self
    }

    /// Sets [`WriteLimits::max_made_assets`].
    pub fn max_made_assets(&mut self, count: usize) -> &mut Self {
        self.max_made_assets = count;
        self
    }

    /// Sets [`WriteLimits::max_held_assets`].
    pub fn max_held_assets(&mut self, count: usize) -> &mut Self {
        self.max_held_assets = count;
        self
    }
}

/// A type the app named in its policy.
#[derive(Clone, Debug, PartialEq, Eq)]
struct NamedType {
    type_id: TypeId,
    type_name: &'static str,
}

impl NamedType {
    fn of<T: 'static>() -> Self {
        NamedType {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// A type the app protects, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AppProtection {
    named: NamedType,
    reason: String,
}

/// What an app adds to the built-in policy (see [`crate::BridgeConfig`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyConfig {
    protected: Vec<AppProtection>,
    open: Vec<NamedType>,
    non_finite: Vec<NamedType>,
    /// Bounds on written values.
    pub limits: WriteLimits,
}

impl PolicyConfig {
    /// Protects `T` from the generic actions, with the reason a model is told.
    pub fn protect<T: 'static>(&mut self, reason: impl Into<String>) -> &mut Self {
        let named = NamedType::of::<T>();
        self.open.retain(|open| *open != named);
        self.protected.retain(|entry| entry.named != named);
        self.protected.push(AppProtection {
            named,
            reason: reason.into(),
        });
        self
    }

    /// Opens `T` (protected by a built-in rule) to the generic actions; value checks still
    /// apply, and a relation still refuses cycles.
    pub fn open<T: 'static>(&mut self) -> &mut Self {
        let named = NamedType::of::<T>();
        self.protected.retain(|entry| entry.named != named);
        if !self.open.contains(&named) {
            self.open.push(named);
        }
        self
    }

    /// Lets values of `T` hold non-finite floats (NaN, ±inf).
    pub fn allow_non_finite<T: 'static>(&mut self) -> &mut Self {
        let named = NamedType::of::<T>();
        if !self.non_finite.contains(&named) {
            self.non_finite.push(named);
        }
        self
    }
}

/// Why a type is protected, and what to use instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protection {
    /// Why the generic actions may not change it.
    pub reason: Cow<'static, str>,
    /// The dedicated action that changes it safely, if any.
    pub use_instead: Option<ActionName>,
}

/// One built-in rule: types whose path starts with `prefix` (and none of `except`).
struct EngineRule {
    prefix: &'static str,
    except: &'static [&'static str],
    reason: &'static str,
    use_instead: Option<ActionName>,
}

/// Engine-owned types whose invariants the bridge cannot check. Earlier rules win. Read from
/// Bevy's own crates: each rule names what breaks.
const ENGINE_RULES: &[EngineRule] = &[
    EngineRule {
        prefix: "bevy_time::",
        except: &[],
        reason: "it is one of Bevy's clocks: a negative speed, a zero wrap period or a zero timestep panics or hangs the frame loop; control_app pause, resume, set_speed and step_frames change time safely",
        use_instead: Some(ActionName::new(control_app::TOOL, control_app::SET_SPEED)),
    },
    EngineRule {
        prefix: "bevy_app::",
        except: &[],
        reason: "it drives the app's lifecycle: AppExit ends the process; control_app.exit asks for consent first",
        use_instead: Some(ActionName::new(control_app::TOOL, control_app::EXIT)),
    },
    EngineRule {
        prefix: "bevy_ecs::hierarchy::",
        except: &[],
        reason: "it is the parent/child relation, kept consistent by Bevy: a loop hangs every walk of the hierarchy; set_parent refuses loops",
        use_instead: Some(ActionName::new(
            control_entity::TOOL,
            control_entity::SET_PARENT,
        )),
    },
    EngineRule {
        prefix: "bevy_ecs::",
        except: &["bevy_ecs::name::Name"],
        reason: "it is internal ECS bookkeeping (observers, resource entities, relations, disabling) that Bevy maintains itself",
        use_instead: None,
    },
    EngineRule {
        prefix: "bevy_diagnostic::",
        except: &[],
        reason: "it is an engine counter or measurement that Bevy maintains itself",
        use_instead: None,
    },
    EngineRule {
        prefix: "bevy_state::",
        except: &["bevy_state::state::resources::NextState<"],
        reason: "a state changes only through a transition, so its OnExit/OnEnter systems run",
        use_instead: Some(ActionName::new(state::TOOL, state::SET)),
    },
    EngineRule {
        prefix: "bevy_asset::",
        except: &[],
        reason: "it is asset server bookkeeping: a made-up asset event or handle panics the systems that trust it",
        use_instead: Some(ActionName::new(manage_asset::TOOL, manage_asset::LOAD)),
    },
    EngineRule {
        prefix: "bevy_world_serialization::",
        // A model (a glTF scene) placed by path; the spawner's own state stays closed.
        except: &["bevy_world_serialization::components::WorldAssetRoot"],
        reason: "it drives world spawning from files",
        use_instead: Some(ActionName::new(manage_world::TOOL, manage_world::LOAD)),
    },
    EngineRule {
        prefix: "bevy_scene::",
        except: &[],
        reason: "it drives scene spawning",
        use_instead: Some(ActionName::new(manage_world::TOOL, manage_world::LOAD)),
    },
    EngineRule {
        prefix: "bevy_window::",
        except: &[],
        reason: "it drives windows: a close request or a zero-sized window ends or breaks the app",
        use_instead: Some(ActionName::new(control_app::TOOL, control_app::EXIT)),
    },
    EngineRule {
        prefix: "bevy_winit::",
        except: &[],
        reason: "it drives the window event loop",
        use_instead: None,
    },
    EngineRule {
        prefix: "bevy_render::",
        except: &[],
        reason: "it is render bookkeeping that Bevy maintains itself",
        use_instead: None,
    },
    EngineRule {
        // Bevy 0.20 moved the render world's entity links (MainEntity, RenderEntity) here.
        prefix: "bevy_extract::",
        except: &[],
        reason: "it links entities to the render world, which Bevy maintains itself",
        use_instead: None,
    },
    EngineRule {
        prefix: "bevy_log::",
        except: &[],
        reason: "it is logging bookkeeping",
        use_instead: None,
    },
    EngineRule {
        prefix: "bevy_tasks::",
        except: &[],
        reason: "it is task pool bookkeeping",
        use_instead: None,
    },
];

/// What the fields Bevy keeps are compared with.
#[derive(Clone, Copy)]
enum Reference<'a> {
    /// The value being replaced.
    Before(&'a dyn PartialReflect),
    /// The type's default (a new value).
    Default,
    /// Nothing: the value is taken whole (from a file).
    None,
}

impl<'a> Reference<'a> {
    /// The value replaced, when there is one; otherwise the type's default.
    fn of(before: Option<&'a dyn PartialReflect>) -> Reference<'a> {
        before.map_or(Reference::Default, Reference::Before)
    }
}

/// Why an engine type outside the writable set is protected.
const ENGINE_OWNED_REASON: &str = "Bevy owns it, and its values flow into the renderer, the text rasterizer or layout, which trust them; the bridge writes only the engine types it can bound (see inspect.describe_type of Transform, Sprite, Text, Node, Camera, lights; the guide's writes chapter lists them). Read it freely; the app can open it with BridgeConfig::with_open_type";

/// The dedicated action for an engine type outside the writable set, by crate.
fn engine_use_instead(type_path: &str) -> Option<ActionName> {
    type_path
        .starts_with("bevy_input::")
        .then(|| ActionName::new(input::TOOL, input::PRESS_KEYS))
}

/// Why every relationship is protected: Bevy keeps both sides consistent through hooks, and a
/// loop in a linked relation hangs despawning.
const RELATION_REASON: &str = "it is a relation between entities that Bevy keeps consistent on both sides; a wrong value dangles or makes a loop";

/// The policy as the game thread reads it: cheap to clone, shared by every handler.
#[derive(Resource, Clone, Debug, Default)]
pub struct WritePolicy(Arc<PolicyConfig>);

impl WritePolicy {
    /// The policy of `config`.
    pub fn new(config: PolicyConfig) -> Self {
        WritePolicy(Arc::new(config))
    }

    /// The app's policy, or the built-in one when the bridge plugin is absent.
    pub fn of(world: &World) -> WritePolicy {
        world
            .get_resource::<WritePolicy>()
            .cloned()
            .unwrap_or_default()
    }

    /// The bounds on written values.
    pub fn limits(&self) -> &WriteLimits {
        &self.0.limits
    }

    /// Why the generic actions may not change this type, or `None` when they may.
    pub fn protection(&self, world: &World, registration: &TypeRegistration) -> Option<Protection> {
        let type_id = registration.type_id();
        if self.0.open.iter().any(|open| open.type_id == type_id) {
            return None;
        }
        if let Some(own) = self
            .0
            .protected
            .iter()
            .find(|entry| entry.named.type_id == type_id)
        {
            return Some(Protection {
                reason: Cow::Owned(own.reason.clone()),
                use_instead: None,
            });
        }
        let type_path = registration.type_info().type_path();
        if let Some(rule) = ENGINE_RULES.iter().find(|rule| {
            type_path.starts_with(rule.prefix)
                && !rule
                    .except
                    .iter()
                    .any(|except| type_path.starts_with(except))
        }) {
            return Some(Protection {
                reason: Cow::Borrowed(rule.reason),
                use_instead: rule.use_instead,
            });
        }
        if is_relation(world, type_id) {
            return Some(Protection {
                reason: Cow::Borrowed(RELATION_REASON),
                use_instead: None,
            });
        }
        (writable::is_engine_type(type_path) && writable::writable(type_path).is_none()).then(
            || Protection {
                reason: Cow::Borrowed(ENGINE_OWNED_REASON),
                use_instead: engine_use_instead(type_path),
            },
        )
    }

    /// The bounds the writable set puts on this type, unless the app opened it on purpose.
    fn bounds(&self, registration: &TypeRegistration) -> Option<&'static WritableType> {
        let type_id = registration.type_id();
        if self.0.open.iter().any(|open| open.type_id == type_id) {
            return None;
        }
        writable::writable(registration.type_info().type_path())
    }

    /// Whether the writable set's bounds apply to this type (a writable engine type the app did
    /// not open).
    pub fn bounded(&self, registration: &TypeRegistration) -> bool {
        self.bounds(registration).is_some()
    }

    /// For a writable engine type, what a write may change: `{fields, kept, numbers?, rules}`
    /// (the same bounds the schema shows).
    pub fn bounds_of(&self, registration: &TypeRegistration) -> Option<serde_json::Value> {
        self.bounds(registration).map(WritableType::summary)
    }

    /// Shows a writable engine type's bounds in its JSON Schema (each bounded field's range).
    pub fn annotate_schema(&self, registration: &TypeRegistration, schema: &mut serde_json::Value) {
        if let Some(bounds) = self.bounds(registration) {
            bounds.annotate(schema);
        }
    }

    /// Refuses a mutation at reflect `path` of `owner` that reaches a field Bevy keeps.
    pub fn check_path(&self, owner: &TypeRegistration, path: &str) -> Result<(), BridgeError> {
        match self.bounds(owner) {
            Some(bounds) => bounds
                .check_path(path)
                .map_err(|reason| BridgeError::InvalidValue {
                    type_path: owner.type_info().type_path().to_owned(),
                    reason,
                }),
            None => Ok(()),
        }
    }

    /// Checks a whole value about to be written as a value of `owner`: the value checks of
    /// [`WritePolicy::check_value`], then, for a writable engine type, the bounds of its fields
    /// (`before` is the value it replaces, if any; fields Bevy keeps must keep it, or the type's
    /// default for a new value).
    pub fn check_write(
        &self,
        world: &World,
        registry: &TypeRegistry,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
        before: Option<&dyn PartialReflect>,
    ) -> Result<(), BridgeError> {
        self.check_with(Some(world), owner, value)?;
        self.check_bounds(
            Some(world),
            Some(registry),
            owner,
            value,
            Reference::of(before),
        )
    }

    /// [`WritePolicy::check_write`] for a copy of a value the world holds (`duplicate`): fields
    /// Bevy keeps are copied as they are, the bounds and rules of writable fields apply to the
    /// new value, and a component that is only ever replaced where it is (a camera) is not copied.
    pub fn check_copy(
        &self,
        world: &World,
        registry: &TypeRegistry,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
    ) -> Result<(), BridgeError> {
        self.check_with(Some(world), owner, value)?;
        let type_path = owner.type_info().type_path();
        if self.bounded(owner) && writable::placed_where_it_is(type_path) {
            return Err(BridgeError::InvalidValue {
                type_path: type_path.to_owned(),
                reason: "it is not copied: the game makes such entities with their own bundle"
                    .to_owned(),
            });
        }
        self.check_bounds(Some(world), Some(registry), owner, value, Reference::None)
    }

    /// [`WritePolicy::check_write`] for a value read from a world file. A file holds whole values
    /// as a world had them (a sprite's image, a camera's computed state), so the fields Bevy keeps
    /// are taken as they are; the bounds and rules of writable fields apply.
    pub fn check_file_write(
        &self,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
    ) -> Result<(), BridgeError> {
        self.check_with(None, owner, value)?;
        self.check_bounds(None, None, owner, value, Reference::None)
    }

    fn check_bounds(
        &self,
        world: Option<&World>,
        registry: Option<&TypeRegistry>,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
        reference: Reference<'_>,
    ) -> Result<(), BridgeError> {
        let Some(bounds) = self.bounds(owner) else {
            return Ok(());
        };
        let default = match reference {
            Reference::Default => owner
                .data::<ReflectDefault>()
                .map(|default| default.default()),
            Reference::Before(_) | Reference::None => None,
        };
        let before = match reference {
            Reference::Before(before) => Some(before),
            Reference::Default | Reference::None => None,
        };
        let written = Written {
            new: value,
            before,
            world,
        };
        // Kept fields are compared with what the value replaces, else the type's default; a
        // file's values are taken whole.
        let kept_reference = before.or(default.as_deref().map(PartialReflect::as_partial_reflect));
        bounds
            .check(&written, kept_reference, registry)
            .map_err(|reason| BridgeError::InvalidValue {
                type_path: owner.type_info().type_path().to_owned(),
                reason,
            })
    }

    /// Refuses a protected type with `PROTECTED_TYPE`.
    pub fn require_unprotected(
        &self,
        world: &World,
        registration: &TypeRegistration,
    ) -> Result<(), BridgeError> {
        match self.protection(world, registration) {
            None => Ok(()),
            Some(protection) => Err(BridgeError::ProtectedType {
                type_path: registration.type_info().type_path().to_owned(),
                reason: protection.reason.into_owned(),
                use_instead: protection.use_instead,
            }),
        }
    }

    /// Checks a value about to be written as (or into) a value of `owner`: finite floats unless
    /// the app allows others for `owner`, bounded strings and names, live entities.
    pub fn check_value(
        &self,
        world: &World,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
    ) -> Result<(), BridgeError> {
        self.check_with(Some(world), owner, value)
    }

    /// [`WritePolicy::check_value`] for a value read from a world file, whose entity ids are the
    /// file's own (they are mapped to new entities when it loads).
    pub fn check_file_value(
        &self,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
    ) -> Result<(), BridgeError> {
        self.check_with(None, owner, value)
    }

    /// [`WritePolicy::check_write`] for an asset's whole new value (a new asset, or one
    /// changed in place): the type must not be protected, and its bounds hold. A float may stay
    /// infinite where the value it replaces (or, for a new asset, the type's default) holds the
    /// same: `StandardMaterial`'s default attenuation distance is infinite.
    pub fn check_asset_write(
        &self,
        world: &World,
        registry: &TypeRegistry,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
        before: Option<&dyn PartialReflect>,
    ) -> Result<(), BridgeError> {
        self.require_unprotected(world, owner)?;
        let default = match before {
            Some(_) => None,
            None => owner
                .data::<ReflectDefault>()
                .map(|default| default.default().into_partial_reflect()),
        };
        let held = before.or(default.as_deref());
        self.check_rules(Some(world), owner, value, self.finite_only(owner), held)?;
        self.check_bounds(
            Some(world),
            Some(registry),
            owner,
            value,
            Reference::of(before),
        )
    }

    /// Whether floats written as values of `owner` must be finite (unless the app opted in).
    fn finite_only(&self, owner: &TypeRegistration) -> bool {
        !self
            .0
            .non_finite
            .iter()
            .any(|allowed| allowed.type_id == owner.type_id())
    }

    fn check_with(
        &self,
        world: Option<&World>,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
    ) -> Result<(), BridgeError> {
        self.check_rules(world, owner, value, self.finite_only(owner), None)
    }

    fn check_rules(
        &self,
        world: Option<&World>,
        owner: &TypeRegistration,
        value: &dyn PartialReflect,
        finite_only: bool,
        held: Option<&dyn PartialReflect>,
    ) -> Result<(), BridgeError> {
        let rules = ValueRules {
            limits: &self.0.limits,
            finite_only,
            world,
            held,
        };
        let mut path = String::new();
        rules
            .check(value, &mut path)
            .map_err(|reason| BridgeError::InvalidValue {
                type_path: owner.type_info().type_path().to_owned(),
                reason,
            })
    }
}

/// Whether the world knows this type as one side of a relationship (`ChildOf`, `Children`, or
/// any `#[relationship]` of the app).
pub(crate) fn is_relation(world: &World, type_id: TypeId) -> bool {
    relation_info(world, type_id).is_some()
}

/// The component id of a relationship type, when it is one.
pub(crate) fn relation_info(world: &World, type_id: TypeId) -> Option<ComponentId> {
    let id = world.components().get_id(type_id)?;
    world
        .components()
        .get_info(id)?
        .relationship_accessor()
        .map(|_| id)
}

/// Values nest at most this deep before the check refuses them (JSON input is shallower).
const MAX_DEPTH: usize = 64;

struct ValueRules<'a> {
    limits: &'a WriteLimits,
    finite_only: bool,
    /// Where entity references must be alive; `None` for values from a file.
    world: Option<&'a World>,
    /// The value the new one replaces, where a float it holds that is not finite may stay so.
    held: Option<&'a dyn PartialReflect>,
}

/// Where a value is, for a message: `at .translation.x`, or `the value` at the top.
#[derive(Clone, Copy)]
struct At<'p>(&'p str);

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str("the value")
        } else {
            write!(f, "at {}", self.0)
        }
    }
}

impl ValueRules<'_> {
    /// Walks the value; `path` is the reflect path so far (for the message).
    fn check(&self, value: &dyn PartialReflect, path: &mut String) -> Result<(), String> {
        walk(value, path, 0, &mut |value, path, depth| {
            // Formatted only into a message: checking 100,000 entities made a string per value.
            let at = At(path);
            if depth > MAX_DEPTH {
                return Err(format!("{at} nests deeper than {MAX_DEPTH} levels"));
            }
            if let Some(name) = value.try_downcast_ref::<Name>() {
                let chars = name.as_str().chars().count();
                if chars > self.limits.max_name_chars {
                    return Err(format!(
                        "{at}: a Name has at most {} characters; this one has {chars}",
                        self.limits.max_name_chars
                    ));
                }
                return Ok(Step::Skip);
            }
            if let ReflectRef::Opaque(value) = value.reflect_ref() {
                self.check_opaque(value, at)?;
            }
            Ok(Step::Descend)
        })
    }

    /// Whether the held value has this very value at the same place (a float that is not finite
    /// in the type's default, kept as it is).
    fn held_as_it_is(&self, at: At<'_>, value: &dyn PartialReflect) -> bool {
        let Some(held) = self.held else {
            return false;
        };
        let before = if at.0.is_empty() {
            Some(held)
        } else {
            at.0.reflect_element(held).ok()
        };
        before.is_some_and(|before| {
            let same_f32 = before
                .try_downcast_ref::<f32>()
                .zip(value.try_downcast_ref::<f32>())
                .is_some_and(|(before, now)| before.to_bits() == now.to_bits());
            let same_f64 = before
                .try_downcast_ref::<f64>()
                .zip(value.try_downcast_ref::<f64>())
                .is_some_and(|(before, now)| before.to_bits() == now.to_bits());
            same_f32 || same_f64
        })
    }

    fn check_opaque(&self, value: &dyn PartialReflect, at: At<'_>) -> Result<(), String> {
        let not_finite = |shown: String| {
            Err(format!(
                "{at}: {shown} is not a finite number; send a finite value (the app allows non-finite floats only for types it opted in)"
            ))
        };
        if let Some(number) = value.try_downcast_ref::<f32>() {
            if self.finite_only && !number.is_finite() && !self.held_as_it_is(at, value) {
                return not_finite(format!("{number}"));
            }
        } else if let Some(number) = value.try_downcast_ref::<f64>() {
            if self.finite_only && !number.is_finite() && !self.held_as_it_is(at, value) {
                return not_finite(format!("{number}"));
            }
        } else if let Some(text) = value
            .try_downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| {
                value
                    .try_downcast_ref::<Cow<'static, str>>()
                    .map(|cow| &**cow)
            })
        {
            if text.len() > self.limits.max_string_bytes {
                return Err(format!(
                    "{at}: strings are at most {} bytes; this one has {}",
                    self.limits.max_string_bytes,
                    text.len()
                ));
            }
        } else if let Some(entity) = value.try_downcast_ref::<Entity>()
            && *entity != Entity::PLACEHOLDER
            && let Some(world) = self.world
            && world.get_entity(*entity).is_err()
        {
            return Err(format!(
                "{at}: entity {entity} does not exist; refer to a live entity (inspect.find_entities)"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec3;
    use bevy::prelude::Transform;

    fn registration<T: bevy::reflect::GetTypeRegistration>() -> TypeRegistration {
        T::get_type_registration()
    }

    #[test]
    fn engine_rules_protect_clocks_and_exit_but_not_transform_or_name() {
        let world = World::new();
        let policy = WritePolicy::default();
        let time = registration::<bevy::time::Time<bevy::time::Virtual>>();
        let protection = policy.protection(&world, &time);
        assert_eq!(
            protection.map(|found| found.use_instead),
            Some(Some(ActionName::new(
                control_app::TOOL,
                control_app::SET_SPEED
            )))
        );
        let exit = registration::<bevy::app::AppExit>();
        assert_eq!(
            policy
                .protection(&world, &exit)
                .and_then(|found| found.use_instead),
            Some(ActionName::new(control_app::TOOL, control_app::EXIT))
        );
        assert!(
            policy
                .protection(&world, &registration::<Transform>())
                .is_none()
        );
        assert!(policy.protection(&world, &registration::<Name>()).is_none());
    }

    #[test]
    fn the_app_can_open_and_protect_types() {
        let world = World::new();
        let mut config = PolicyConfig::default();
        config
            .open::<bevy::time::Time<bevy::time::Virtual>>()
            .protect::<Transform>("the physics owns it");
        let policy = WritePolicy::new(config);
        let time = registration::<bevy::time::Time<bevy::time::Virtual>>();
        assert!(policy.protection(&world, &time).is_none());
        let transform = policy.protection(&world, &registration::<Transform>());
        assert_eq!(
            transform.map(|found| found.reason.into_owned()),
            Some("the physics owns it".to_owned())
        );
    }

    #[test]
    fn values_must_be_finite_bounded_and_point_at_live_entities() {
        let mut world = World::new();
        let live = world.spawn_empty().id();
        let dead = world.spawn_empty().id();
        world.despawn(dead);
        let policy = WritePolicy::default();
        let owner = registration::<Transform>();
        let check = |value: &dyn PartialReflect| policy.check_value(&world, &owner, value);
        assert!(check(&Transform::from_xyz(1.0, 2.0, 3.0)).is_ok());
        let infinite = Transform::from_translation(Vec3::new(0.0, f32::INFINITY, 0.0));
        let refused = check(&infinite).map_err(|error| error.to_string());
        assert!(
            refused
                .as_ref()
                .is_err_and(|message| message.contains("at .translation.y")),
            "{refused:?}"
        );
        assert!(check(&Name::new("x".repeat(256))).is_ok());
        assert!(check(&Name::new("x".repeat(257))).is_err());
        assert!(check(&"y".repeat(16 * 1024 + 1)).is_err());
        assert!(check(&vec![live, Entity::PLACEHOLDER]).is_ok());
        assert!(check(&vec![live, dead]).is_err());
        let mut config = PolicyConfig::default();
        config.allow_non_finite::<Transform>();
        let lenient = WritePolicy::new(config);
        assert!(lenient.check_value(&world, &owner, &infinite).is_ok());
        // File values name the file's own entities: only their shape is checked.
        assert!(policy.check_file_value(&owner, &vec![dead]).is_ok());
        assert!(policy.check_file_value(&owner, &infinite).is_err());
    }
}
