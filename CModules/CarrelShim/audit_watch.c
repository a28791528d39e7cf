/* The audit log's watch on requests: a protocol logger that picks out the
 * few requests that can be blocked attempts (binds, raises, selections and
 * drags) and hands them to Swift, which classifies them. */
#include "CarrelShim.h"

#include <string.h>

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
