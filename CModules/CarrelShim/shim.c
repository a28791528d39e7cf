#include "CarrelShim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void carrel_listener_notify(struct wl_listener *listener, void *data) {
    struct carrel_listener *l = wl_container_of(listener, l, listener);
    l->callback(l->context, data);
}

void carrel_listener_connect(struct carrel_listener *l, struct wl_signal *signal,
                             void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_signal_add(signal, &l->listener);
}

void carrel_listener_connect_client_destroy(struct carrel_listener *l, struct wl_client *client,
                                            void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_client_add_destroy_listener(client, &l->listener);
}

void carrel_listener_connect_client_created(struct carrel_listener *l, struct wl_display *display,
                                            void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_display_add_client_created_listener(display, &l->listener);
}

void carrel_listener_disconnect(struct carrel_listener *l) {
    if (l->listener.link.next == NULL) {
        return;
    }
    wl_list_remove(&l->listener.link);
    l->listener.link.next = NULL;
    l->listener.link.prev = NULL;
}

static carrel_log_sink log_sink;

static void carrel_log_callback(enum wlr_log_importance importance, const char *fmt, va_list args) {
    char line[1024];
    vsnprintf(line, sizeof line, fmt, args);
    if (log_sink) {
        log_sink((int)importance, line);
    }
}

void carrel_log_init(int verbosity, carrel_log_sink sink) {
    log_sink = sink;
    wlr_log_init((enum wlr_log_importance)verbosity, carrel_log_callback);
}

static void carrel_vlog(int importance, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    _wlr_vlog((enum wlr_log_importance)importance, fmt, args);
    va_end(args);
}

void carrel_log(int importance, const char *message) {
    carrel_vlog(importance, "%s", message);
}

const char *carrel_global_interface_name(const struct wl_global *global) {
    return wl_global_get_interface(global)->name;
}

void carrel_resource_post_error(struct wl_resource *resource, uint32_t code, const char *message) {
    wl_resource_post_error(resource, code, "%s", message);
}

const struct wl_interface *carrel_assessment_manager_interface(void) {
    return &carrel_assessment_manager_v1_interface;
}

const struct wl_interface *carrel_assessment_configuration_interface(void) {
    return &carrel_assessment_configuration_v1_interface;
}

const struct wl_interface *carrel_assessment_session_interface(void) {
    return &carrel_assessment_session_v1_interface;
}

/* DRM_FORMAT_ARGB8888 ('AR24'), spelled out to avoid depending on drm_fourcc.h. */
#define CARREL_FORMAT_ARGB8888 0x34325241u

struct carrel_memory_buffer {
    struct wlr_buffer base;
    void *data;
    size_t stride;
};

static void carrel_memory_buffer_destroy(struct wlr_buffer *wlr_buffer) {
    struct carrel_memory_buffer *buffer = wl_container_of(wlr_buffer, buffer, base);
    free(buffer->data);
    free(buffer);
}

static bool carrel_memory_buffer_begin_access(struct wlr_buffer *wlr_buffer, uint32_t flags,
                                              void **data, uint32_t *format, size_t *stride) {
    (void)flags;
    struct carrel_memory_buffer *buffer = wl_container_of(wlr_buffer, buffer, base);
    *data = buffer->data;
    *format = CARREL_FORMAT_ARGB8888;
    *stride = buffer->stride;
    return true;
}

static void carrel_memory_buffer_end_access(struct wlr_buffer *wlr_buffer) {
    (void)wlr_buffer;
}

static const struct wlr_buffer_impl carrel_memory_buffer_impl = {
    .destroy = carrel_memory_buffer_destroy,
    .begin_data_ptr_access = carrel_memory_buffer_begin_access,
    .end_data_ptr_access = carrel_memory_buffer_end_access,
};

struct wlr_buffer *carrel_memory_buffer_create(int width, int height, void **data, int *stride) {
    if (width <= 0 || height <= 0) {
        return NULL;
    }
    struct carrel_memory_buffer *buffer = calloc(1, sizeof(*buffer));
    if (buffer == NULL) {
        return NULL;
    }
    buffer->stride = (size_t)width * 4;
    buffer->data = calloc((size_t)height, buffer->stride);
    if (buffer->data == NULL) {
        free(buffer);
        return NULL;
    }
    wlr_buffer_init(&buffer->base, &carrel_memory_buffer_impl, width, height);
    *data = buffer->data;
    *stride = (int)buffer->stride;
    return &buffer->base;
}

struct timespec carrel_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now;
}

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
        frame->output_destroy.notify(&frame->output_destroy, frame->output);
        failed++;
    }
    return failed;
}

/* MARK: - wl_shm pool accounting
 *
 * One account per client. libwayland emits a client's destroy signal before it
 * destroys the client's resources, so an account outlives its client until
 * its last pool is gone; whichever of the two comes last frees it. */
struct carrel_shm_account {
    struct wl_client *client;
    uint32_t pools;
    bool client_gone;
    struct wl_listener resource_created;
    struct wl_listener client_destroy;
};

struct carrel_shm_pool_link {
    struct carrel_shm_account *account;
    struct wl_listener destroy;
};

static struct {
    struct wl_listener client_created;
    carrel_shm_pool_admit admit;
    void *context;
} carrel_shm_accounting;

static void carrel_shm_account_release(struct carrel_shm_account *account) {
    if (account->client_gone && account->pools == 0) {
        free(account);
    }
}

static void carrel_shm_pool_destroyed(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_shm_pool_link *link = wl_container_of(listener, link, destroy);
    wl_list_remove(&link->destroy.link);
    struct carrel_shm_account *account = link->account;
    free(link);
    account->pools--;
    carrel_shm_account_release(account);
}

static void carrel_shm_resource_created(struct wl_listener *listener, void *data) {
    struct carrel_shm_account *account = wl_container_of(listener, account, resource_created);
    struct wl_resource *resource = data;
    if (strcmp(wl_resource_get_class(resource), "wl_shm_pool") != 0) {
        return;
    }
    struct carrel_shm_pool_link *link = calloc(1, sizeof(*link));
    if (link == NULL) {
        wl_client_post_no_memory(account->client);
        return;
    }
    link->account = account;
    link->destroy.notify = carrel_shm_pool_destroyed;
    wl_resource_add_destroy_listener(resource, &link->destroy);
    account->pools++;
    carrel_shm_accounting.admit(carrel_shm_accounting.context, account->client, account->pools);
}

static void carrel_shm_client_destroyed(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_shm_account *account = wl_container_of(listener, account, client_destroy);
    wl_list_remove(&account->resource_created.link);
    wl_list_remove(&account->client_destroy.link);
    account->client_gone = true;
    carrel_shm_account_release(account);
}

static void carrel_shm_client_created(struct wl_listener *listener, void *data) {
    (void)listener;
    struct wl_client *client = data;
    struct carrel_shm_account *account = calloc(1, sizeof(*account));
    if (account == NULL) {
        wl_client_post_no_memory(client);
        return;
    }
    account->client = client;
    account->resource_created.notify = carrel_shm_resource_created;
    wl_client_add_resource_created_listener(client, &account->resource_created);
    account->client_destroy.notify = carrel_shm_client_destroyed;
    wl_client_add_destroy_listener(client, &account->client_destroy);
}

void carrel_install_shm_pool_accounting(struct wl_display *display, carrel_shm_pool_admit admit, void *context) {
    carrel_shm_accounting.admit = admit;
    carrel_shm_accounting.context = context;
    carrel_shm_accounting.client_created.notify = carrel_shm_client_created;
    wl_display_add_client_created_listener(display, &carrel_shm_accounting.client_created);
}

/* MARK: - Subsurface guard (wlroots 0.15) */

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

/* MARK: - Refused drags (wlroots 0.15) */

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
    free(drag);
}

/* MARK: - Inert xdg objects (wlroots 0.15) */

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

struct wl_protocol_logger *carrel_install_subsurface_guard(struct wl_display *display) {
    return wl_display_add_protocol_logger(display, carrel_subsurface_guard, NULL);
}

/* ---- The audit log's request watch ---------------------------------- */

struct carrel_audit_watch {
    carrel_audit_request_fn callback;
    void *data;
};

/* xdg_toplevel opcodes (xdg-shell, stable since version 1). */
enum { CARREL_XDG_TOPLEVEL_SET_MAXIMIZED = 9, CARREL_XDG_TOPLEVEL_SET_FULLSCREEN = 11 };

static void carrel_audit_watch_request(void *user_data, enum wl_protocol_logger_type type,
                                       const struct wl_protocol_logger_message *message) {
    if (type != WL_PROTOCOL_LOGGER_REQUEST) {
        return;
    }
    const struct carrel_audit_watch *watch = user_data;
    const char *class = wl_resource_get_class(message->resource);
    struct wl_client *client = wl_resource_get_client(message->resource);
    /* Cheap first: most requests are on wl_surface, wl_buffer and the like. */
    switch (class[0]) {
    case 'w':
        if (message->message_opcode == 0 && strcmp(class, "wl_registry") == 0 && message->arguments_count >= 2) {
            const char *interface = message->arguments[1].s;
            watch->callback(watch->data, client, CARREL_AUDIT_BIND, interface ? interface : "");
        } else if (message->message_opcode <= 1 && strcmp(class, "wl_data_device") == 0) {
            /* start_drag (0), set_selection (1) */
            watch->callback(watch->data, client, CARREL_AUDIT_SELECTION, message->message->name);
        }
        break;
    case 'x':
        if ((message->message_opcode == CARREL_XDG_TOPLEVEL_SET_FULLSCREEN ||
             message->message_opcode == CARREL_XDG_TOPLEVEL_SET_MAXIMIZED) && strcmp(class, "xdg_toplevel") == 0) {
            watch->callback(watch->data, client, CARREL_AUDIT_RAISE, message->message->name);
        }
        break;
    case 'z':
        if (message->message_opcode == 0 && strcmp(class, "zwp_primary_selection_device_v1") == 0) {
            watch->callback(watch->data, client, CARREL_AUDIT_SELECTION, message->message->name);
        }
        break;
    default:
        break;
    }
}

struct wl_protocol_logger *carrel_install_audit_watch(struct wl_display *display, carrel_audit_request_fn callback, void *data) {
    /* Lives as long as the display: one per Carrel run. */
    static struct carrel_audit_watch watch;
    watch.callback = callback;
    watch.data = data;
    return wl_display_add_protocol_logger(display, carrel_audit_watch_request, &watch);
}
