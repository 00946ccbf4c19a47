//! Bevy's own button (`examples/ui/widgets/button.rs` of Bevy 0.19.1), with the MCP bridge in it:
//! one UI button that changes colour and text as it is hovered and pressed, for an agent to find
//! in the UI tree and click.
//!
//! Changed from Bevy's file, and only this: the bridge's plugin is added (three lines in `main`),
//! the button's text uses Bevy's default font (this workspace carries no font files), and one lint
//! Bevy's workspace allows is allowed here.
//! Everything else is Bevy's, under Bevy's MIT/Apache-2.0 licence.
//!
//! ```text
//! cargo run --release -p bevy_mcp_sandbox --example button --features render
//! ```
//!
//! The bridge listens on `127.0.0.1:15720/mcp` (`BEVY_MCP_PORT` changes the port).

use bevy::{
    color::palettes::basic::*,
    input_focus::{FocusCause, InputFocus},
    prelude::*,
};
use bevy_mcp_bridge::{BridgeConfig, McpBridgePlugin};

fn main() {
    let port = std::env::var("BEVY_MCP_PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(15720);
    App::new()
        .add_plugins(DefaultPlugins)
        // The bridge.
        .add_plugins(McpBridgePlugin::new(
            BridgeConfig::default().with_port(port),
        ))
        // `InputFocus` must be set for accessibility to recognize the button.
        .init_resource::<InputFocus>()
        .add_systems(Startup, setup)
        .add_systems(Update, button_system)
        .run();
}

const NORMAL_BUTTON: Color = Color::srgb(0.15, 0.15, 0.15);
const HOVERED_BUTTON: Color = Color::srgb(0.25, 0.25, 0.25);
const PRESSED_BUTTON: Color = Color::srgb(0.35, 0.75, 0.35);

// Bevy's own query, as Bevy writes it (Bevy's workspace allows this lint).
#[expect(clippy::type_complexity)]
fn button_system(
    mut input_focus: ResMut<InputFocus>,
    mut interaction_query: Query<
        (
            Entity,
            &Interaction,
            &mut BackgroundColor,
            &mut BorderColor,
            &mut Button,
            &Children,
        ),
        Changed<Interaction>,
    >,
    mut text_query: Query<&mut Text>,
) {
    for (entity, interaction, mut color, mut border_color, mut button, children) in
        &mut interaction_query
    {
        let mut text = text_query.get_mut(children[0]).unwrap();

        match *interaction {
            Interaction::Pressed => {
                input_focus.set(entity, FocusCause::Pressed);
                **text = "Press".to_string();
                *color = PRESSED_BUTTON.into();
                *border_color = BorderColor::all(RED);

                // The accessibility system's only update the button's state when the `Button` component is marked as changed.
                button.set_changed();
            }
            Interaction::Hovered => {
                input_focus.set(entity, FocusCause::Pressed);
                **text = "Hover".to_string();
                *color = HOVERED_BUTTON.into();
                *border_color = BorderColor::all(Color::WHITE);
                button.set_changed();
            }
            Interaction::None => {
                input_focus.clear();
                **text = "Button".to_string();
                *color = NORMAL_BUTTON.into();
                *border_color = BorderColor::all(Color::BLACK);
            }
        }
    }
}

fn setup(mut commands: Commands) {
    // ui camera
    commands.spawn(Camera2d);
    commands.spawn(button());
}

fn button() -> impl Bundle {
    (
        Node {
            width: percent(100),
            height: percent(100),
            align_items: AlignItems::Center,
            justify_content: JustifyContent::Center,
            ..default()
        },
        children![(
            Button,
            Node {
                width: px(150),
                height: px(65),
                border: UiRect::all(px(5)),
                // horizontally center child text
                justify_content: JustifyContent::Center,
                // vertically center child text
                align_items: AlignItems::Center,
                border_radius: BorderRadius::MAX,
                ..default()
            },
            BorderColor::all(Color::WHITE),
            BackgroundColor(Color::BLACK),
            children![(
                Text::new("Button"),
                TextFont {
                    font_size: FontSize::Px(33.0),
                    ..default()
                },
                TextColor(Color::srgb(0.9, 0.9, 0.9)),
                TextShadow::default(),
            )]
        )],
    )
}
