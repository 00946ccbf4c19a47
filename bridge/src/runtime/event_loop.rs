//! Waking a reactive event loop when a call arrives.
//!
//! A winit app in a reactive or low-power mode (`WinitSettings::desktop_app()`, editors, tools)
//! runs no frame until something happens; a call waiting in the mailbox is not something winit
//! knows about. The bridge sends winit's own wake-up event through its proxy, so the call is
//! answered at the next frame rather than when the user next moves the mouse.

use bevy::app::App;
use bevy::winit::{EventLoopProxyWrapper, WinitUserEvent};
use parking_lot::Mutex;

use crate::runtime::mailbox::BridgeSignals;

/// Registers the event loop's wake-up with the bridge's waker, once the plugins are built (winit
/// inserts its proxy when it is built); apps without winit are unchanged.
pub(crate) fn wake_on_calls(app: &mut App) {
    let world = app.world();
    let (Some(proxy), Some(signals)) = (
        world.get_resource::<EventLoopProxyWrapper>(),
        world.get_resource::<BridgeSignals>(),
    ) else {
        return;
    };
    let proxy = Mutex::new((**proxy).clone());
    signals.waker.set_event_loop_waker(move || {
        // Fails only when the event loop is gone (the app is exiting): nothing to wake then.
        let _ = proxy.lock().send_event(WinitUserEvent::WakeUp);
    });
}
