#ifndef CARREL_SHIM_WLROOTS_H
#define CARREL_SHIM_WLROOTS_H

// The C API Carrel imports: libwayland, xkbcommon, systemd and wlroots (0.15,
// 0.17, 0.18, 0.19 or 0.20), which only exposes its unstable API with this define. Every
// wlroots-version-specific include is here; the version is wlroots' own
// WLR_VERSION_MINOR (bridge.c checks it against the one the build asked for).
#define WLR_USE_UNSTABLE 1

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/eventfd.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>
#include <xkbcommon/xkbcommon.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include "xdg-shell-protocol.h"
#include "wlr-layer-shell-unstable-v1-protocol.h"
#include "carrel-assessment-v1-protocol.h"

#include <wlr/version.h>

/* 0.19 moved the listeners wlroots keeps for itself into a struct member
 * named WLR_PRIVATE (wlroots compiles itself with the macro empty, so for it
 * they stay anonymous). The guards that reach a listener go through this. */
#if WLR_VERSION_MINOR >= 19
#define CARREL_WLR_PRIVATE(object) ((object)->WLR_PRIVATE)
#else
#define CARREL_WLR_PRIVATE(object) (*(object))
#endif

#include <wlr/backend.h>
#include <wlr/backend/headless.h>
#include <wlr/backend/session.h>
#include <wlr/backend/multi.h>
#include <wlr/backend/wayland.h>
#include <wlr/backend/x11.h>
#include <wlr/render/allocator.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_cursor.h>
#include <wlr/types/wlr_data_device.h>
#if WLR_VERSION_MINOR < 17
#include <wlr/types/wlr_idle.h>
#include <wlr/types/wlr_output_damage.h>
#else
#include <wlr/types/wlr_damage_ring.h>
#include <wlr/types/wlr_subcompositor.h>
#endif
#include <wlr/types/wlr_idle_inhibit_v1.h>
#include <wlr/types/wlr_input_method_v2.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_layer_shell_v1.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_pointer.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/types/wlr_primary_selection.h>
#include <wlr/types/wlr_primary_selection_v1.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_screencopy_v1.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_text_input_v3.h>
#include <wlr/types/wlr_touch.h>
#include <wlr/types/wlr_viewporter.h>
#include <wlr/types/wlr_virtual_keyboard_v1.h>
#include <wlr/types/wlr_xcursor_manager.h>
#include <wlr/types/wlr_xdg_decoration_v1.h>
#include <wlr/types/wlr_xdg_output_v1.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/box.h>
#include <wlr/util/log.h>

#endif
