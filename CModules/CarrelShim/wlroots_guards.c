/* Guards around wlroots bugs any client could trigger (found by the wire
 * fuzzer and the soak), and the capture-frame failing wlroots has no call
 * for. The protocol-logger guards see a request before libwayland dispatches
 * it to wlroots. Which guard each wlroots needs (0.15, 0.17, 0.18), from
 * reading its source and running the fuzzer against it:
 *   popup parents      all (0.17/0.18 still accept a popup as its own parent)
 *   orphaned subsurfaces  0.15 only (0.16+ destroys a subsurface with its parent)
 *   inert xdg objects  all (0.18's xdg_toplevel handlers still read NULL user data,
 *                      though 0.18 disconnects such a client before they can run)
 *   refused drags      all (no wlroots frees a never-started drag without a source)
 *   keymap copy        all (a keymap file shorter than its size is SIGBUS; 0.19+ parse the whole buffer) */
/* memfd_create and file seals need _GNU_SOURCE. */
#define _GNU_SOURCE
#include "CarrelShim.h"
#include "log_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* MARK: - Popup parents */

/* Whether `target` is `surface` or hangs somewhere below it in the popup tree.
 * Bounded: a walk that exhausts the budget is treated as reaching it. */
static bool carrel_popup_tree_contains(struct wlr_xdg_surface *surface,
                                       struct wlr_xdg_surface *target, int *budget) {
    if (surface == target || --*budget <= 0) {
        return true;
    }
    struct wlr_xdg_popup *child;
    wl_list_for_each(child, &surface->popups, link) {
        if (carrel_popup_tree_contains(child->base, target, budget)) {
            return true;
        }
    }
    return false;
}

/* xdg_surface request opcodes: destroy 0, get_toplevel 1, get_popup 2. */
enum { CARREL_XDG_SURFACE_GET_POPUP = 2 };

static void carrel_popup_guard(void *user_data, enum wl_protocol_logger_type type,
                               const struct wl_protocol_logger_message *message) {
    (void)user_data;
    if (type != WL_PROTOCOL_LOGGER_REQUEST || message->message_opcode != CARREL_XDG_SURFACE_GET_POPUP ||
        strcmp(wl_resource_get_class(message->resource), "xdg_surface") != 0) {
        return;
    }
    /* get_popup(new_id id, object parent [nullable], object positioner) */
    union wl_argument *args = (union wl_argument *)message->arguments;
    struct wl_resource *parent_resource = (struct wl_resource *)args[1].o;
    struct wlr_xdg_surface *surface = wl_resource_get_user_data(message->resource);
    if (parent_resource == NULL || surface == NULL) {
        return;
    }
    struct wlr_xdg_surface *parent = wl_resource_get_user_data(parent_resource);
    int budget = 4096;
    if (parent == NULL ||
        (parent->surface != surface->surface && !carrel_popup_tree_contains(surface, parent, &budget))) {
        return;
    }
    carrel_vlog(WLR_ERROR, "refused xdg_surface@%u.get_popup: the parent is the popup itself or "
                "below it; disconnecting the client", wl_resource_get_id(message->resource));
    wl_resource_post_error(surface->client->resource, XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT,
                           "a popup cannot be its own parent or ancestor");
    args[1].o = NULL;
}

struct wl_protocol_logger *carrel_install_popup_guard(struct wl_display *display) {
    return wl_display_add_protocol_logger(display, carrel_popup_guard, NULL);
}

/* MARK: - Capture frames */

int carrel_screencopy_fail_frames(struct wlr_screencopy_manager_v1 *manager, struct wlr_output *output,
                                  void (*each)(void *data, struct wl_client *client), void *data) {
    int failed = 0;
    struct wlr_screencopy_frame_v1 *frame, *tmp;
    wl_list_for_each_safe(frame, tmp, &manager->frames, link) {
        if (output != NULL && frame->output != output) {
            continue;
        }
        if (each != NULL && frame->resource != NULL) {
            each(data, wl_resource_get_client(frame->resource));
        }
        /* frame_handle_output_destroy: send failed, then destroy the frame. */
        CARREL_WLR_PRIVATE(frame).output_destroy.notify(&CARREL_WLR_PRIVATE(frame).output_destroy, frame->output);
        failed++;
    }
    return failed;
}

/* MARK: - Orphaned subsurfaces */

#if WLR_VERSION_MINOR < 16

/* A wl_subsurface resource whose wlr_subsurface the guard hid. */
struct carrel_hidden_subsurface {
    struct wlr_subsurface *subsurface; /* NULL once wlroots destroyed it */
    struct wl_listener resource_destroy;
    struct wl_listener subsurface_destroy;
};

static void carrel_hidden_subsurface_gone(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_hidden_subsurface *hidden = wl_container_of(listener, hidden, subsurface_destroy);
    hidden->subsurface = NULL;
    wl_list_remove(&hidden->subsurface_destroy.link);
    wl_list_init(&hidden->subsurface_destroy.link);
}

/* Runs before the resource's destroy callback: wlroots finds its subsurface
 * again and frees it as usual. */
static void carrel_hidden_subsurface_resource_destroyed(struct wl_listener *listener, void *data) {
    struct carrel_hidden_subsurface *hidden = wl_container_of(listener, hidden, resource_destroy);
    struct wl_resource *resource = data;
    if (hidden->subsurface != NULL) {
        wl_resource_set_user_data(resource, hidden->subsurface);
    }
    wl_list_remove(&hidden->resource_destroy.link);
    wl_list_remove(&hidden->subsurface_destroy.link);
    free(hidden);
}

/* wl_subsurface request opcodes: destroy 0, set_position 1, place_above 2, place_below 3. */
enum { CARREL_SUBSURFACE_PLACE_ABOVE = 2, CARREL_SUBSURFACE_PLACE_BELOW = 3 };

static void carrel_subsurface_guard(void *user_data, enum wl_protocol_logger_type type,
                                    const struct wl_protocol_logger_message *message) {
    (void)user_data;
    if (type != WL_PROTOCOL_LOGGER_REQUEST ||
        (message->message_opcode != CARREL_SUBSURFACE_PLACE_ABOVE &&
         message->message_opcode != CARREL_SUBSURFACE_PLACE_BELOW) ||
        strcmp(wl_resource_get_class(message->resource), "wl_subsurface") != 0) {
        return;
    }
    struct wlr_subsurface *subsurface = wl_resource_get_user_data(message->resource);
    if (subsurface == NULL || subsurface->parent != NULL) {
        return;
    }
    struct carrel_hidden_subsurface *hidden = calloc(1, sizeof(*hidden));
    if (hidden == NULL) {
        /* Cannot hide it safely: at least stop the client before more damage. */
        wl_client_post_no_memory(wl_resource_get_client(message->resource));
        return;
    }
    carrel_vlog(WLR_ERROR, "refused wl_subsurface@%u.%s: its parent surface was destroyed; "
                "disconnecting the client", wl_resource_get_id(message->resource), message->message->name);
    wl_resource_post_error(message->resource, WL_SUBSURFACE_ERROR_BAD_SURFACE,
                           "%s: the parent surface was destroyed; there is nothing to place against",
                           message->message->name);
    hidden->subsurface = subsurface;
    hidden->resource_destroy.notify = carrel_hidden_subsurface_resource_destroyed;
    wl_resource_add_destroy_listener(message->resource, &hidden->resource_destroy);
    hidden->subsurface_destroy.notify = carrel_hidden_subsurface_gone;
    wl_signal_add(&subsurface->events.destroy, &hidden->subsurface_destroy);
    wl_resource_set_user_data(message->resource, NULL);
}

struct wl_protocol_logger *carrel_install_subsurface_guard(struct wl_display *display) {
    return wl_display_add_protocol_logger(display, carrel_subsurface_guard, NULL);
}
#else
struct wl_protocol_logger *carrel_install_subsurface_guard(struct wl_display *display) {
    (void)display;
    return NULL; /* wlroots destroys the subsurface with its parent itself */
}
#endif

/* MARK: - Refused drags */

void carrel_drag_destroy_refused(struct wlr_drag *drag) {
    if (drag == NULL || drag->started || drag->cancelling) {
        return;
    }
    if (drag->source != NULL) {
        /* wlroots' source-destroy listener frees the drag. */
        wlr_data_source_destroy(drag->source);
        return;
    }
    drag->cancelling = true;
    wl_signal_emit(&drag->events.destroy, drag);
    struct wlr_drag_icon *icon = drag->icon;
#if WLR_VERSION_MINOR < 17
    if (icon != NULL) {
        wl_list_remove(&drag->icon_destroy.link);
        if (icon->mapped) {
            icon->mapped = false;
            wl_signal_emit(&icon->events.unmap, icon);
        }
        wl_signal_emit(&icon->events.destroy, icon);
        icon->surface->role_data = NULL;
        wl_list_remove(&icon->surface_destroy.link);
        free(icon);
    }
#else
    /* What drag_destroy does for a drag that never started (0.17/0.18). */
#if WLR_VERSION_MINOR >= 18
    wl_list_remove(&CARREL_WLR_PRIVATE(drag).focus_destroy.link);
#endif
    if (icon != NULL) {
        wl_list_remove(&CARREL_WLR_PRIVATE(drag).icon_destroy.link);
        drag->icon = NULL;
        wl_list_remove(&CARREL_WLR_PRIVATE(icon).surface_destroy.link);
        wl_signal_emit(&icon->events.destroy, icon);
        free(icon);
    }
#endif
    free(drag);
}

/* MARK: - Inert xdg objects */

static void carrel_inert_destroy(struct wl_client *client, struct wl_resource *resource) {
    (void)client;
    wl_resource_destroy(resource);
}
static void carrel_inert_toplevel_set_parent(struct wl_client *c, struct wl_resource *r, struct wl_resource *p) {
    (void)c; (void)r; (void)p;
}
static void carrel_inert_toplevel_set_string(struct wl_client *c, struct wl_resource *r, const char *s) {
    (void)c; (void)r; (void)s;
}
static void carrel_inert_toplevel_show_window_menu(struct wl_client *c, struct wl_resource *r, struct wl_resource *seat,
                                                   uint32_t serial, int32_t x, int32_t y) {
    (void)c; (void)r; (void)seat; (void)serial; (void)x; (void)y;
}
static void carrel_inert_toplevel_move(struct wl_client *c, struct wl_resource *r, struct wl_resource *seat, uint32_t serial) {
    (void)c; (void)r; (void)seat; (void)serial;
}
static void carrel_inert_toplevel_resize(struct wl_client *c, struct wl_resource *r, struct wl_resource *seat,
                                         uint32_t serial, uint32_t edges) {
    (void)c; (void)r; (void)seat; (void)serial; (void)edges;
}
static void carrel_inert_toplevel_set_size(struct wl_client *c, struct wl_resource *r, int32_t w, int32_t h) {
    (void)c; (void)r; (void)w; (void)h;
}
static void carrel_inert_toplevel_no_args(struct wl_client *c, struct wl_resource *r) {
    (void)c; (void)r;
}
static void carrel_inert_toplevel_set_fullscreen(struct wl_client *c, struct wl_resource *r, struct wl_resource *output) {
    (void)c; (void)r; (void)output;
}

static const struct xdg_toplevel_interface carrel_inert_toplevel_implementation = {
    .destroy = carrel_inert_destroy,
    .set_parent = carrel_inert_toplevel_set_parent,
    .set_title = carrel_inert_toplevel_set_string,
    .set_app_id = carrel_inert_toplevel_set_string,
    .show_window_menu = carrel_inert_toplevel_show_window_menu,
    .move = carrel_inert_toplevel_move,
    .resize = carrel_inert_toplevel_resize,
    .set_max_size = carrel_inert_toplevel_set_size,
    .set_min_size = carrel_inert_toplevel_set_size,
    .set_maximized = carrel_inert_toplevel_no_args,
    .unset_maximized = carrel_inert_toplevel_no_args,
    .set_fullscreen = carrel_inert_toplevel_set_fullscreen,
    .unset_fullscreen = carrel_inert_toplevel_no_args,
    .set_minimized = carrel_inert_toplevel_no_args,
};

static void carrel_inert_surface_get_toplevel(struct wl_client *c, struct wl_resource *r, uint32_t id) {
    (void)c; (void)r; (void)id;
}
static void carrel_inert_surface_get_popup(struct wl_client *c, struct wl_resource *r, uint32_t id,
                                           struct wl_resource *parent, struct wl_resource *positioner) {
    (void)c; (void)id; (void)parent; (void)positioner;
    wl_resource_post_error(r, XDG_SURFACE_ERROR_DEFUNCT_ROLE_OBJECT,
                           "get_popup on an xdg_surface whose wl_surface was destroyed");
}
static void carrel_inert_surface_set_window_geometry(struct wl_client *c, struct wl_resource *r,
                                                     int32_t x, int32_t y, int32_t w, int32_t h) {
    (void)c; (void)r; (void)x; (void)y; (void)w; (void)h;
}
static void carrel_inert_surface_ack_configure(struct wl_client *c, struct wl_resource *r, uint32_t serial) {
    (void)c; (void)r; (void)serial;
}

static const struct xdg_surface_interface carrel_inert_surface_implementation = {
    .destroy = carrel_inert_destroy,
    .get_toplevel = carrel_inert_surface_get_toplevel,
    .get_popup = carrel_inert_surface_get_popup,
    .set_window_geometry = carrel_inert_surface_set_window_geometry,
    .ack_configure = carrel_inert_surface_ack_configure,
};

static void carrel_inert_xdg_guard(void *user_data, enum wl_protocol_logger_type type,
                                   const struct wl_protocol_logger_message *message) {
    (void)user_data;
    if (type != WL_PROTOCOL_LOGGER_REQUEST || wl_resource_get_user_data(message->resource) != NULL) {
        return;
    }
    const char *class = wl_resource_get_class(message->resource);
    bool toplevel = strcmp(class, "xdg_toplevel") == 0;
    bool popup_request = strcmp(class, "xdg_surface") == 0 && message->message_opcode == CARREL_XDG_SURFACE_GET_POPUP;
    if (!toplevel && !popup_request) {
        return;
    }
    /* wlroots' destroy callbacks do nothing for an inert object (user data
     * NULL), so none is needed here. libwayland reads the implementation
     * after the loggers ran: this request already goes to the inert one. */
    carrel_vlog(WLR_DEBUG, "%s@%u.%s on an inert object (its wl_surface was destroyed): %s",
                class, wl_resource_get_id(message->resource), message->message->name,
                toplevel ? "ignored" : "refused");
    wl_resource_set_implementation(message->resource,
                                   toplevel ? (const void *)&carrel_inert_toplevel_implementation
                                            : (const void *)&carrel_inert_surface_implementation,
                                   NULL, NULL);
}

struct wl_protocol_logger *carrel_install_inert_xdg_guard(struct wl_display *display) {
    return wl_display_add_protocol_logger(display, carrel_inert_xdg_guard, NULL);
}

/* MARK: - Virtual keyboard keymaps: copied before wlroots reads them */

/* zwp_virtual_keyboard_v1 request opcodes: keymap 0 (format, fd, size). */
enum { CARREL_VIRTUAL_KEYBOARD_KEYMAP = 0 };
/* The largest keymap taken (a full keymap is some 60 KiB of text). */
#define CARREL_KEYMAP_LIMIT (4u << 20)

/* wlroots maps a virtual keyboard's keymap file with the size the client
 * gave and reads it in Carrel: a file shorter than that size (or made
 * shorter while it is read: the client still holds it) faults with SIGBUS
 * and ends Carrel, and wlroots up to 0.18 reads it as a string, past the
 * mapping when it holds no NUL. So the keymap is read here with pread
 * (which stops at the file's end, whatever the client does to it) into a
 * sealed memfd of Carrel's own: its text up to the first NUL and one NUL
 * (0.19+ parse the whole buffer, and bookworm's wvkbd pads it with NULs),
 * and wlroots gets that copy instead of the client's file, which is closed
 * here. A keymap that cannot be read whole, or is too large, is given to
 * wlroots with size 0: its mmap fails and wlroots disconnects the client
 * (out of memory), as for a keymap it cannot map. */
static void carrel_keymap_guard(void *user_data, enum wl_protocol_logger_type type,
                                const struct wl_protocol_logger_message *message) {
    (void)user_data;
    if (type != WL_PROTOCOL_LOGGER_REQUEST || message->message_opcode != CARREL_VIRTUAL_KEYBOARD_KEYMAP ||
        strcmp(wl_resource_get_class(message->resource), "zwp_virtual_keyboard_v1") != 0) {
        return;
    }
    union wl_argument *args = (union wl_argument *)message->arguments;
    int fd = args[1].h;
    uint32_t size = args[2].u;
    if (fd < 0) {
        return;
    }
    char *text = NULL;
    size_t length = 0;
    if (size > 0 && size <= CARREL_KEYMAP_LIMIT && (text = malloc(size)) != NULL) {
        while (length < size) {
            ssize_t got = pread(fd, text + length, size - length, (off_t)length);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got <= 0) {
                break;
            }
            length += (size_t)got;
        }
    }
    size_t used = text ? strnlen(text, length) : 0;
    int copy = -1;
    /* Whole, and text before any NUL: a copy of the text and one NUL. */
    if (text && length == size && used > 0) {
        copy = memfd_create("carrel-keymap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (copy >= 0) {
            size_t written = 0;
            text[used] = '\0';
            if (used < length) {
                used += 1;
            }
            while (written < used) {
                ssize_t put = write(copy, text + written, used - written);
                if (put < 0 && errno == EINTR) {
                    continue;
                }
                if (put <= 0) {
                    break;
                }
                written += (size_t)put;
            }
            if (written != used || fcntl(copy, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
                close(copy);
                copy = -1;
            }
        }
    }
    free(text);
    if (copy < 0) {
        carrel_vlog(WLR_INFO, "a virtual keyboard's keymap (%u bytes) could not be read whole; the client is disconnected", size);
        args[2].u = 0;
        return;
    }
    close(fd);
    args[1].h = copy;
    args[2].u = (uint32_t)used;
}

struct wl_protocol_logger *carrel_install_keymap_guard(struct wl_display *display) {
    return wl_display_add_protocol_logger(display, carrel_keymap_guard, NULL);
}
