//! `view.screenshot`: choose what to capture, wait until the renderer has settled, ask Bevy for a
//! `Screenshot` of the render target, and hand the frame to the task pool to be cropped, scaled
//! and encoded.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use bevy::app::App;
use bevy::camera::primitives::Aabb;
use bevy::camera::{Camera, RenderTarget};
use bevy::diagnostic::FrameCount;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::image::Image;
use bevy::math::{IVec2, URect, Vec2, Vec3, Vec3A};
use bevy::prelude::{Entity, GlobalTransform, InheritedVisibility, On, Res, Resource, World};
use bevy::render::render_resource::PipelineCache;
use bevy::render::renderer::RenderAdapterInfo;
use bevy::render::view::screenshot::{Capturing, Screenshot, ScreenshotCaptured};
use bevy::render::{Render, RenderApp, RenderSystems};
use bevy::tasks::futures::check_ready;
use bevy::tasks::{AsyncComputeTaskPool, Task};
use bevy::ui::{ComputedNode, ComputedUiTargetCamera, UiGlobalTransform};
use bevy::window::{Window, WindowRef};
use bevy_mcp_generated::params::{EntityRef, ViewScreenshotParams};
use mcp_native_transport::{ImageContent, ProgressSink};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::ScreenshotsDir;
use super::listing::{primary_window, rect_json, renders};
use super::picture::{self, Picture, Shaping};
use crate::error::BridgeError;
use crate::reflect::files::{FileTarget, MissingFolders, Resolved, file_in};
use crate::reflect::hierarchy;
use crate::reflect::names::{entity_info, resolve_entity};
use crate::reflect::world::BridgeOwned;
use crate::runtime::executor::CallingSession;
use crate::runtime::job::{LongJob, Outcome};

/// Frames the renderer must finish with every pipeline compiled before a capture is asked for.
const SETTLED_FRAMES: u32 = 2;
/// Half the side of the square kept around an entity that has no bounds (no `Aabb`), in pixels.
const POINT_HALF_SIZE: f32 = 32.0;

/// Frames the renderer finished in a row with no pipeline still compiling: the render world
/// counts, the main world reads. Shaders compile asynchronously, so a frame captured before they
/// are ready misses (or blackens) whatever they draw; a fixed frame count would be a guess.
#[derive(Resource, Clone, Debug, Default)]
pub(super) struct RenderReadiness(Arc<AtomicU32>);

impl RenderReadiness {
    /// Frames rendered in a row with every pipeline ready.
    pub(super) fn settled_frames(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

fn count_settled_frames(cache: Res<PipelineCache>, readiness: Res<RenderReadiness>) {
    if cache.waiting_pipelines().next().is_none() {
        let _ = readiness
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |frames| {
                Some(frames.saturating_add(1))
            });
    } else {
        readiness.0.store(0, Ordering::Relaxed);
    }
}

/// Hooks the bridge to the renderer, once every plugin is built: readiness counting in the render
/// world (when the app renders), and waking a reactive event loop when a call arrives.
pub(super) fn connect_renderer(app: &mut App) {
    let readiness = RenderReadiness::default();
    app.insert_resource(readiness.clone());
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app
            .insert_resource(readiness)
            .add_systems(Render, count_settled_frames.in_set(RenderSystems::Cleanup));
    }
    crate::runtime::event_loop::wake_on_calls(app);
}

/// Starts a screenshot: everything is checked now; the capture runs over the next frames.
pub(super) fn start(world: &mut World, params: ViewScreenshotParams) -> Outcome {
    match plan(world, &params) {
        Ok(mut job) => {
            // A renderer that has already settled is asked now: the capture is rendered with
            // this very frame instead of the next.
            if settled(world) {
                job.ask_for_frame(world);
            }
            Outcome::Running(Box::new(job))
        }
        Err(error) => Outcome::Done(Err(error)),
    }
}

/// Whether every pipeline has been ready for the last [`SETTLED_FRAMES`] frames.
fn settled(world: &World) -> bool {
    world
        .get_resource::<RenderReadiness>()
        .is_some_and(|readiness| readiness.settled_frames() >= SETTLED_FRAMES)
}

/// What a capture is of.
struct Target {
    /// The render target Bevy captures.
    render_target: RenderTarget,
    /// The part of it to keep (a camera viewport, an entity crop).
    region: Option<URect>,
    /// What results say was captured.
    described: Value,
}

fn plan(world: &mut World, params: &ViewScreenshotParams) -> Result<CaptureJob, BridgeError> {
    if !renders(world) {
        return Err(BridgeError::RenderingUnavailable {
            reason: "this app does not render: it has no render device (it runs headless, or no \
                     GPU adapter was found). Add Bevy's renderer to the app (DefaultPlugins), run \
                     the sandbox with `--render`, and on a machine without a GPU install a \
                     software Vulkan driver (Debian/Ubuntu: mesa-vulkan-drivers)"
                .to_owned(),
        });
    }
    if params.window.is_some() && (params.camera.is_some() || params.entity.is_some()) {
        return Err(BridgeError::InvalidParams(
            "window captures a whole window; camera and entity choose what one camera shows: \
             pass window alone, or camera and/or entity"
                .to_owned(),
        ));
    }
    let target = match (&params.window, &params.camera, &params.entity) {
        (Some(window), _, _) => window_target(world, window)?,
        (None, camera, Some(entity)) => {
            entity_target(world, entity, camera.as_ref(), params.margin)?
        }
        (None, Some(camera), None) => {
            let camera = resolve_entity(world, camera)?;
            camera_target(world, camera)?
        }
        (None, None, None) => default_target(world)?,
    };
    let save = params
        .save
        .as_deref()
        .map(|name| save_path(world, name, params.overwrite))
        .transpose()?;
    let (saved_as, save_to) = save.unzip();
    // Bounded by the schema (≤ 4096, ≤ 600): the narrowing casts cannot truncate.
    let shaping = Shaping {
        region: target.region,
        max_width: u32::try_from(params.max_width).unwrap_or(u32::MAX),
        max_height: u32::try_from(params.max_height).unwrap_or(u32::MAX),
        max_bytes: params.max_bytes,
        save_to,
    };
    let session = world
        .get_resource::<CallingSession>()
        .and_then(|calling| calling.0.clone());
    Ok(CaptureJob {
        render_target: target.render_target,
        described: target.described,
        session,
        image_if_unchanged: params.image_if_unchanged,
        shaping,
        saved_as,
        max_frames: params.max_frames,
        frames: 0,
        stage: Stage::Settling,
        images: Vec::new(),
    })
}

fn window_target(world: &mut World, given: &EntityRef) -> Result<Target, BridgeError> {
    let window = resolve_entity(world, given)?;
    if world.get::<Window>(window).is_none() {
        return Err(BridgeError::InvalidParams(format!(
            "{window} is not a window; view.list_windows lists the windows"
        )));
    }
    whole_window(world, window)
}

/// A whole window, when an active camera draws it; else nothing would show (a window without
/// an active camera captures as a black picture).
fn whole_window(world: &mut World, window: Entity) -> Result<Target, BridgeError> {
    let primary = primary_window(world);
    let drawn = world
        .query::<(&Camera, &RenderTarget)>()
        .iter(world)
        .any(|(camera, target)| {
            camera.is_active
                && match target {
                    RenderTarget::Window(WindowRef::Entity(entity)) => *entity == window,
                    RenderTarget::Window(WindowRef::Primary) => primary == Some(window),
                    _ => false,
                }
        });
    if !drawn {
        return Err(BridgeError::NothingToCapture {
            what: format!("window {window}"),
            reason: "no active camera draws it, so it would capture as a black picture; \
                     activate a camera that renders to it (Camera.is_active) or capture a camera"
                .to_owned(),
            cameras: camera_list(world),
        });
    }
    Ok(Target {
        render_target: RenderTarget::Window(WindowRef::Entity(window)),
        region: None,
        described: json!({"kind": "window", "window": entity_info(world, window)}),
    })
}

/// Every camera, for an error that says which there are.
fn camera_list(world: &mut World) -> Vec<Value> {
    let mut cameras: Vec<(isize, Entity, bool)> = world
        .query::<(Entity, &Camera)>()
        .iter(world)
        .map(|(entity, camera)| (camera.order, entity, camera.is_active))
        .collect();
    cameras.sort();
    cameras
        .into_iter()
        .map(|(order, entity, active)| {
            let mut row = entity_info(world, entity);
            row["active"] = json!(active);
            row["order"] = json!(order);
            row
        })
        .collect()
}

/// What `camera` renders to, as a capturable target, with its viewport when it has one.
fn camera_target(world: &mut World, camera: Entity) -> Result<Target, BridgeError> {
    let Some(active) = world.get::<Camera>(camera).map(|camera| camera.is_active) else {
        return Err(BridgeError::InvalidParams(format!(
            "{camera} is not a camera; view.list_cameras lists the cameras"
        )));
    };
    if !active {
        return Err(BridgeError::NothingToCapture {
            what: format!("camera {camera}"),
            reason: "the camera is not active, so it draws nothing; activate it (Camera.is_active) or capture another camera".to_owned(),
            cameras: camera_list(world),
        });
    }
    let Some(component) = world.get::<Camera>(camera) else {
        return Err(BridgeError::InvalidParams(format!(
            "{camera} is not a camera; view.list_cameras lists the cameras"
        )));
    };
    let region = component
        .viewport
        .is_some()
        .then(|| component.physical_viewport_rect())
        .flatten();
    let render_target = match world.get::<RenderTarget>(camera).cloned() {
        Some(RenderTarget::Window(WindowRef::Primary)) => {
            let window =
                primary_window(world).ok_or_else(|| BridgeError::RenderingUnavailable {
                    reason: format!("{camera} renders to the primary window, and there is none"),
                })?;
            RenderTarget::Window(WindowRef::Entity(window))
        }
        Some(target @ (RenderTarget::Window(_) | RenderTarget::Image(_))) => target,
        Some(RenderTarget::TextureView(_)) | Some(RenderTarget::None { .. }) | None => {
            return Err(BridgeError::InvalidParams(format!(
                "{camera} renders to no window or image (a texture view, or no colour target); \
                 capture another camera or a window"
            )));
        }
    };
    Ok(Target {
        render_target,
        region,
        described: json!({"kind": "camera", "camera": entity_info(world, camera)}),
    })
}

/// The primary window, else the highest-order active camera that renders to an image.
fn default_target(world: &mut World) -> Result<Target, BridgeError> {
    if let Some(window) = primary_window(world) {
        return whole_window(world, window);
    }
    let mut query = world.query::<(Entity, &Camera, &RenderTarget)>();
    let camera = query
        .iter(world)
        .filter(|(_, camera, target)| camera.is_active && matches!(target, RenderTarget::Image(_)))
        .max_by_key(|(entity, camera, _)| (camera.order, *entity))
        .map(|(entity, ..)| entity);
    match camera {
        Some(camera) => camera_target(world, camera),
        None => Err(BridgeError::NothingToCapture {
            what: "the app".to_owned(),
            reason: "it has no window and no active camera that renders to an image".to_owned(),
            cameras: camera_list(world),
        }),
    }
}

/// A crop around `given` and its descendants as a camera shows them: `camera`, or the
/// highest-order active camera that has it in view.
fn entity_target(
    world: &mut World,
    given: &EntityRef,
    camera: Option<&EntityRef>,
    margin: u64,
) -> Result<Target, BridgeError> {
    let entity = resolve_entity(world, given)?;
    let shown = entity_info(world, entity);
    let label = shown["name"]
        .as_str()
        .map_or_else(|| entity.to_string(), str::to_owned);
    let nothing = |reason: &str| BridgeError::NothingToCapture {
        what: label.clone(),
        reason: reason.to_owned(),
        cameras: Vec::new(),
    };
    if world
        .get::<InheritedVisibility>(entity)
        .is_some_and(|visibility| !visibility.get())
    {
        return Err(nothing(
            "it is hidden (its Visibility, or an ancestor's, is Hidden); show it first",
        ));
    }
    if let Some(node) = world.get::<ComputedNode>(entity) {
        return ui_node_target(world, entity, node.size(), shown, margin)
            .map_err(|reason| nothing(&reason));
    }
    let Some(bounds) = world_bounds(world, entity) else {
        return Err(BridgeError::InvalidParams(format!(
            "{label} has no GlobalTransform: it is not placed in the world, so it cannot be found on screen"
        )));
    };
    let cameras = match camera {
        Some(camera) => vec![resolve_entity(world, camera)?],
        None => {
            let mut query = world.query::<(Entity, &Camera)>();
            let mut active: Vec<(isize, Entity)> = query
                .iter(world)
                .filter(|(_, camera)| camera.is_active)
                .map(|(entity, camera)| (camera.order, entity))
                .collect();
            active.sort_by(|a, b| b.cmp(a));
            active.into_iter().map(|(_, entity)| entity).collect()
        }
    };
    if !bounds.point_only && has_no_extent(&bounds.points) {
        return Err(nothing(
            "it has no size (its bounds are a single point, e.g. a zero scale)",
        ));
    }
    // The margin is at most 512 by the schema.
    let margin = margin as f32;
    let mut last_reason = "no active camera".to_owned();
    for camera in &cameras {
        match crop_in_camera(world, *camera, &bounds, margin) {
            Ok(region) => {
                let mut target = camera_target(world, *camera)?;
                target.region = Some(region);
                target.described = json!({
                    "kind": "entity",
                    "entity": shown,
                    "camera": entity_info(world, *camera),
                });
                return Ok(target);
            }
            Err(reason) => last_reason = reason,
        }
    }
    Err(BridgeError::NotOnScreen {
        entity: label,
        camera: match camera {
            Some(_) => cameras
                .first()
                .map_or_else(|| "the camera".to_owned(), Entity::to_string),
            None => "any active camera".to_owned(),
        },
        reason: last_reason,
    })
}

/// Whether every corner is the same point (a zero scale, an empty mesh).
fn has_no_extent(points: &[Vec3]) -> bool {
    points.iter().all(|point| {
        points
            .first()
            .is_some_and(|first| point.abs_diff_eq(*first, 1e-6))
    })
}

/// A UI node's computed rectangle (physical pixels of its camera's target), with the margin,
/// clamped to that camera's viewport.
fn ui_node_target(
    world: &mut World,
    node: Entity,
    size: Vec2,
    shown: Value,
    margin: u64,
) -> Result<Target, String> {
    if size.x < 1.0 || size.y < 1.0 {
        return Err(format!("its computed size is {}x{} pixels", size.x, size.y));
    }
    let camera = world
        .get::<ComputedUiTargetCamera>(node)
        .and_then(ComputedUiTargetCamera::get)
        .ok_or_else(|| "no camera draws it (its UI has no target camera yet)".to_owned())?;
    let center = world
        .get::<UiGlobalTransform>(node)
        .map(|transform| transform.affine().translation)
        .unwrap_or_default();
    let viewport = world
        .get::<Camera>(camera)
        .and_then(Camera::physical_viewport_rect)
        .ok_or_else(|| format!("its camera {camera} has no size yet"))?;
    // The margin is at most 512 by the schema.
    let grow = Vec2::splat(margin as f32);
    let low = (center - size / 2.0 - grow)
        .floor()
        .as_ivec2()
        .max(viewport.min.as_ivec2());
    let high = (center + size / 2.0 + grow)
        .ceil()
        .as_ivec2()
        .min(viewport.max.as_ivec2());
    if low.x >= high.x || low.y >= high.y {
        return Err(format!("it is outside its camera's viewport ({camera})"));
    }
    let mut target = camera_target(world, camera).map_err(|error| error.to_string())?;
    target.region = Some(URect::from_corners(
        low.max(IVec2::ZERO).as_uvec2(),
        high.max(IVec2::ZERO).as_uvec2(),
    ));
    target.described = json!({
        "kind": "uiNode",
        "entity": shown,
        "camera": entity_info(world, camera),
    });
    Ok(target)
}

/// Where an entity and its descendants are in the world: the corners of their bounding boxes, or
/// the entity's position when none has bounds.
struct WorldBounds {
    points: Vec<Vec3>,
    /// Only a position was known (no `Aabb`): the crop is a square around it.
    point_only: bool,
}

fn world_bounds(world: &World, entity: Entity) -> Option<WorldBounds> {
    let origin = world.get::<GlobalTransform>(entity)?.translation();
    let mut points = Vec::new();
    let walk = hierarchy::descendants(world, entity);
    for part in std::iter::once(entity).chain(walk.entities) {
        let (Some(transform), Some(aabb)) =
            (world.get::<GlobalTransform>(part), world.get::<Aabb>(part))
        else {
            continue;
        };
        for corner in 0..8_u8 {
            let sign = |bit: u8| if corner & bit == 0 { -1.0 } else { 1.0 };
            let offset = Vec3A::new(sign(1), sign(2), sign(4)) * aabb.half_extents;
            points.push(transform.transform_point(Vec3::from(aabb.center + offset)));
        }
    }
    let point_only = points.is_empty();
    if point_only {
        points.push(origin);
    }
    Some(WorldBounds { points, point_only })
}

/// The pixel rectangle of `bounds` in what `camera` renders (its target's pixels), with the
/// margin, clamped to the camera's viewport; why not when it is not in view.
fn crop_in_camera(
    world: &World,
    camera: Entity,
    bounds: &WorldBounds,
    margin: f32,
) -> Result<URect, String> {
    let (Some(component), Some(transform)) = (
        world.get::<Camera>(camera),
        world.get::<GlobalTransform>(camera),
    ) else {
        return Err(format!("{camera} is not a camera with a transform"));
    };
    let Some(viewport) = component.physical_viewport_rect() else {
        return Err(format!(
            "{camera} has no size yet (its target is not ready)"
        ));
    };
    let scale = component.target_scaling_factor().unwrap_or(1.0);
    let on_screen: Vec<Vec2> = bounds
        .points
        .iter()
        .filter_map(|point| component.world_to_viewport(transform, *point).ok())
        .map(|logical| viewport.min.as_vec2() + logical * scale)
        .collect();
    if on_screen.is_empty() {
        return Err("it is behind the camera or outside its depth range".to_owned());
    }
    let (low, high) = on_screen.iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(low, high), point| (low.min(*point), high.max(*point)),
    );
    let grow = if bounds.point_only {
        margin.max(POINT_HALF_SIZE)
    } else {
        margin
    };
    let low = (low - Vec2::splat(grow)).floor().as_ivec2();
    let high = (high + Vec2::splat(grow)).ceil().as_ivec2();
    let view_low = viewport.min.as_ivec2();
    let view_high = viewport.max.as_ivec2();
    let clamped_low = low.max(view_low);
    let clamped_high = high.min(view_high);
    if clamped_low.x >= clamped_high.x || clamped_low.y >= clamped_high.y {
        return Err(format!(
            "it is at pixels {low}..{high}, outside the viewport {view_low}..{view_high}"
        ));
    }
    let to_unsigned = |point: IVec2| point.max(IVec2::ZERO).as_uvec2();
    Ok(URect::from_corners(
        to_unsigned(clamped_low),
        to_unsigned(clamped_high),
    ))
}

/// The checked file a screenshot is saved to: `(name inside the directory, full path)`.
fn save_path(
    world: &World,
    given: &str,
    overwrite: bool,
) -> Result<(String, FileTarget), BridgeError> {
    let dir = world
        .get_resource::<ScreenshotsDir>()
        .map_or_else(|| PathBuf::from("screenshots"), |dir| dir.0.clone());
    let (relative, Resolved { exists, target, .. }) =
        file_in(&dir, given, ".png", MissingFolders::Create)?;
    if exists && !overwrite {
        return Err(BridgeError::FileExists { file: relative });
    }
    Ok((relative, target))
}

/// Withdraws a screenshot request nobody waits for any more. One the renderer has not picked up
/// yet is despawned; one it has (`Capturing`) is left to Bevy, which despawns it once captured:
/// despawning it here would make the renderer's own commands on it fail, and Bevy's default error
/// handler panics.
fn forget_request(world: &mut World, entity: Entity) {
    let picked_up = world
        .get_entity(entity)
        .is_ok_and(|request| request.contains::<Capturing>());
    if !picked_up {
        let _ = world.try_despawn(entity);
    }
}

/// Where a capture is.
enum Stage {
    /// Waiting for every pipeline to be compiled.
    Settling,
    /// Bevy was asked for the frame; the observer puts it in `slot`.
    Capturing {
        entity: Entity,
        slot: Arc<Mutex<Option<Image>>>,
        frame: u32,
    },
    /// The frame is being cropped, scaled and encoded off the game thread.
    Encoding {
        task: Task<Result<Picture, BridgeError>>,
        frame: u32,
    },
}

/// The digest of each session's last capture of each target, to answer `unchanged`. Bounded:
/// beyond [`LastCaptures::MAX`] entries the oldest is forgotten (its next capture is then new).
#[derive(Resource, Default)]
struct LastCaptures {
    digests: HashMap<(String, String), u64>,
    order: VecDeque<(String, String)>,
}

impl LastCaptures {
    const MAX: usize = 1024;

    /// Keeps `digest` as the session's last capture of `target`; whether it equals the one before.
    fn remember(&mut self, session: &str, target: String, digest: u64) -> bool {
        let key = (session.to_owned(), target);
        match self.digests.insert(key.clone(), digest) {
            Some(before) => before == digest,
            None => {
                self.order.push_back(key);
                if self.order.len() > Self::MAX
                    && let Some(oldest) = self.order.pop_front()
                {
                    self.digests.remove(&oldest);
                }
                false
            }
        }
    }
}

struct CaptureJob {
    render_target: RenderTarget,
    described: Value,
    /// The calling session, whose previous capture of the same target tells `unchanged`.
    session: Option<String>,
    image_if_unchanged: bool,
    shaping: Shaping,
    saved_as: Option<String>,
    max_frames: u64,
    frames: u64,
    stage: Stage,
    images: Vec<ImageContent>,
}

impl CaptureJob {
    fn ask_for_frame(&mut self, world: &mut World) {
        let slot: Arc<Mutex<Option<Image>>> = Arc::default();
        let filled = Arc::clone(&slot);
        let entity = world
            .spawn((Screenshot(self.render_target.clone()), BridgeOwned))
            .observe(move |captured: On<ScreenshotCaptured>| {
                *filled.lock() = Some(captured.image.clone());
            })
            .id();
        let frame = world
            .get_resource::<FrameCount>()
            .map_or(0, |count| count.0);
        self.stage = Stage::Capturing {
            entity,
            slot,
            frame,
        };
    }

    fn answer(&mut self, world: &mut World, picture: Picture, frame: u32) -> Value {
        let adapter = world
            .get_resource::<RenderAdapterInfo>()
            .map(|info| info.name.clone());
        let mut answer = json!({
            "width": picture.width,
            "height": picture.height,
            "capturedWidth": picture.region.width(),
            "capturedHeight": picture.region.height(),
            "scale": picture.scale,
            "region": rect_json(picture.region),
            "target": self.described,
            "frame": frame,
            "bytes": picture.png.len(),
            "mimeType": "image/png",
        });
        if let Some(adapter) = adapter {
            answer["adapter"] = json!(adapter);
        }
        if let Some(saved_as) = &self.saved_as {
            answer["savedTo"] = json!(saved_as);
        }
        if let Some(colour) = picture.blank {
            answer["blank"] = json!(true);
            answer["blankColor"] = json!(colour);
        }
        let unchanged = self.session.as_ref().is_some_and(|session| {
            let target = format!("{}{:?}", self.described, picture.region);
            world
                .get_resource_or_init::<LastCaptures>()
                .remember(session, target, picture.digest)
        });
        answer["unchanged"] = json!(unchanged);
        if unchanged && !self.image_if_unchanged {
            answer["imageSent"] = json!(false);
        } else {
            self.images = vec![ImageContent {
                mime_type: "image/png".to_owned(),
                data: picture.png,
            }];
        }
        answer
    }
}

impl LongJob for CaptureJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        match &mut self.stage {
            Stage::Settling => {
                self.frames += 1;
                if settled(world) {
                    progress.report(1.0, Some(3.0), Some("the renderer is ready; capturing"));
                    self.ask_for_frame(world);
                } else if self.frames >= self.max_frames {
                    return Some(Err(BridgeError::CaptureFailed {
                        reason: format!(
                            "the renderer was still compiling shaders after {} frames",
                            self.frames
                        ),
                    }));
                }
            }
            Stage::Capturing {
                entity,
                slot,
                frame,
            } => {
                self.frames += 1;
                let captured = slot.lock().take();
                if let Some(image) = captured {
                    progress.report(2.0, Some(3.0), Some("captured; encoding"));
                    let shaping = self.shaping.clone();
                    let task = AsyncComputeTaskPool::get_or_init(Default::default)
                        .spawn(async move { picture::make(image, &shaping) });
                    self.stage = Stage::Encoding {
                        task,
                        frame: *frame,
                    };
                } else if world.get_entity(*entity).is_err() {
                    // Bevy drops a second capture of one target in the same frame: ask again.
                    self.stage = Stage::Settling;
                } else if self.frames >= self.max_frames {
                    let entity = *entity;
                    forget_request(world, entity);
                    return Some(Err(BridgeError::CaptureFailed {
                        reason: format!(
                            "the renderer delivered no frame within {} frames (a minimised or \
                             hidden window renders nothing)",
                            self.frames
                        ),
                    }));
                }
            }
            Stage::Encoding { task, frame } => {
                let frame = *frame;
                let made = check_ready(task)?;
                return Some(made.map(|picture| self.answer(world, picture, frame)));
            }
        }
        None
    }

    fn take_images(&mut self) -> Vec<ImageContent> {
        std::mem::take(&mut self.images)
    }

    fn abort(&mut self, world: &mut World) {
        if let Stage::Capturing { entity, .. } = &self.stage {
            forget_request(world, *entity);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbuilt_window_is_not_rendering() {
        let world = World::new();
        assert!(!renders(&world));
    }

    #[test]
    fn plan_refuses_without_a_render_device() {
        let mut world = World::new();
        let params: ViewScreenshotParams =
            serde_json::from_value(json!({})).unwrap_or_else(|error| panic!("{error}"));
        match plan(&mut world, &params) {
            Err(BridgeError::RenderingUnavailable { reason }) => {
                assert!(reason.contains("mesa-vulkan-drivers"), "{reason}");
            }
            Err(other) => panic!("expected RenderingUnavailable, got {other:?}"),
            Ok(_) => panic!("a world without a render device captured"),
        }
    }
}
