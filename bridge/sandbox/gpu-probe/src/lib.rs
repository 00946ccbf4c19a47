//! Asks the system for a GPU adapter the way Bevy's renderer will (`WGPU_BACKEND` and friends
//! honoured), with the wgpu of the Bevy version that is on. Bevy panics in a background task when
//! there is none; asking first turns that into a message.

#![deny(missing_docs)]

#[cfg(all(feature = "wgpu_29", feature = "wgpu_30"))]
compile_error!(
    "both `wgpu_29` and `wgpu_30` are on: the sandbox turns on the one of its Bevy version"
);

#[cfg(not(any(feature = "wgpu_29", feature = "wgpu_30")))]
compile_error!("no wgpu is chosen: turn on `wgpu_29` (Bevy 0.19) or `wgpu_30` (Bevy 0.20)");

#[cfg(all(feature = "wgpu_29", not(feature = "wgpu_30")))]
use wgpu_29 as wgpu;
#[cfg(all(feature = "wgpu_30", not(feature = "wgpu_29")))]
use wgpu_30 as wgpu;

/// The name of the adapter Bevy's renderer would find, or what to do when there is none.
pub async fn adapter_name() -> Result<String, String> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions::default())
        .await
        .map_err(|error| {
            format!(
                "no GPU adapter was found ({error}); on a machine without a GPU install a \
                 software Vulkan driver (Debian/Ubuntu: apt install mesa-vulkan-drivers)"
            )
        })?;
    Ok(adapter.get_info().name)
}
