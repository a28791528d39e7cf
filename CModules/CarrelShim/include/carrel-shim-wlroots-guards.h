#ifndef CARREL_SHIM_WLROOTS_GUARDS_H
#define CARREL_SHIM_WLROOTS_GUARDS_H

// Guards around wlroots bugs any client could trigger, and failing capture
// frames, which wlroots has no call for (wlroots_guards.c). Each is
// wlroots-version-specific; which versions need which is in wlroots_guards.c.

#include "carrel-shim-wlroots.h"

/// Refuses `xdg_surface.get_popup` requests whose parent is the popup's own
/// xdg_surface or a popup below it. wlroots 0.15 accepts such a parent, links
/// the popup into its own subtree and then recurses without end when it is
/// destroyed (a crash any client can cause; found by the wire fuzzer). The
/// guard sees each request before wlroots does (a protocol logger), posts
/// `xdg_wm_base.invalid_popup_parent` and hands wlroots a null parent, so the
/// cycle is never built and the client is disconnected. Still installed on
/// 0.17 and 0.18, which refuse a parent without a role but not a popup naming
/// itself as its parent (the fields it reads are laid out alike in all three).
struct wl_protocol_logger *carrel_install_popup_guard(struct wl_display *display);

/// Refuses `wl_subsurface.place_above` / `place_below` on a subsurface whose
/// parent surface was destroyed. wlroots 0.15 keeps such a subsurface with a
/// NULL parent and dereferences it in these two requests (a crash any client
/// can cause; found by the soak). The guard, a protocol logger, posts
/// `wl_subsurface.bad_surface` (there is no parent or sibling left to place
/// against) and hides the wlr_subsurface from the handler for this one
/// request (user data NULL: wlroots' handler then returns early), restoring it
/// before wlroots' own destroy callback runs. 0.15 only: 0.16+ destroys the
/// subsurface with its parent, and there this installs nothing (NULL).
struct wl_protocol_logger *carrel_install_subsurface_guard(struct wl_display *display);

/// Trims a virtual keyboard's keymap to its text and one NUL. wlroots 0.19+
/// compile the whole buffer the client names (xkb_keymap_new_from_buffer),
/// where earlier releases read it as a string up to its first NUL; a client
/// that pads the buffer with NULs (bookworm's wvkbd 0.12, Carrel's on-screen
/// keyboard) then gets its keymap refused and is disconnected. The guard, a
/// protocol logger, lowers the request's size argument before wlroots maps
/// the file, so such a keymap is read as every earlier wlroots read it.
/// NULL (nothing installed) before 0.19.
struct wl_protocol_logger *carrel_install_keymap_guard(struct wl_display *display);

/// Keeps requests on *inert* xdg objects away from wlroots 0.15. When a
/// client destroys a wl_surface before its xdg_surface and xdg_toplevel,
/// wlroots 0.15 clears their user data but most xdg_toplevel handlers (and
/// xdg_surface.get_popup) dereference it anyway: a NULL dereference any
/// client can cause (found by the wire fuzzer). The guard, a protocol logger,
/// sees such a request before it is dispatched and swaps the resource's
/// implementation for an inert one: requests on an inert xdg_toplevel are
/// ignored, `destroy` destroys it, and `get_popup` on
/// an inert xdg_surface is the protocol error `xdg_surface.defunct_role_object`.
/// Kept on 0.17 and 0.18, whose xdg_toplevel handlers read the NULL user
/// data too, although 0.18 disconnects such a client when its wl_surface goes;
/// it uses libwayland's API only.
struct wl_protocol_logger *carrel_install_inert_xdg_guard(struct wl_display *display);

/// Frees a drag the compositor refused (never started). wlroots 0.15 frees a
/// drag only when it ends or its data source goes; a refused drag without a
/// source (legal: a drag inside one client) was never freed, so a client
/// could grow Carrel's memory with endless refused start_drag requests (found
/// by the fuzzer under AddressSanitizer). With a source, destroying the
/// source frees the drag as wlroots intends; without, the shim does what
/// wlroots' own drag_destroy does for a drag that never started, in each
/// version's struct layout (0.17 and 0.18 still never free such a drag).
void carrel_drag_destroy_refused(struct wlr_drag *drag);

/// Fails every pending screencopy frame (of `output`, or of every output when
/// NULL): the client hears `failed` and no pixels are copied. wlroots (0.15 to 0.18) has
/// no call for this; the shim runs the frame's own output-destroy handler,
/// which sends `failed` and frees the frame (version-specific: reads
/// `wlr_screencopy_manager_v1.frames`). `each` (may be NULL) hears the client
/// of every frame before it fails (the audit log). Returns how many failed.
int carrel_screencopy_fail_frames(struct wlr_screencopy_manager_v1 *manager, struct wlr_output *output,
                                  void (*each)(void *data, struct wl_client *client), void *data);

#endif
