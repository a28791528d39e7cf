#define _GNU_SOURCE
#include "CarrelClientShim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int carrel_client_shm_create(size_t size) {
    int fd = memfd_create("carrel-client-shm", MFD_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (ftruncate(fd, (off_t)size) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

const struct wl_interface *carrel_client_interface(const char *name) {
    // Only the interfaces Carrel's own clients bind; extend as they need more.
    static const struct wl_interface *const known[] = {
        &wl_compositor_interface, &wl_shm_interface, &wl_seat_interface,
        &wl_output_interface, &xdg_wm_base_interface,
        &wl_data_device_manager_interface, &wl_subcompositor_interface,
        &carrel_assessment_manager_v1_interface, &zwp_text_input_manager_v3_interface,
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(known[i]->name, name) == 0) {
            return known[i];
        }
    }
    return NULL;
}

// carrel-probe helpers (see CarrelClientShim.h).

static char carrel_client_log[4096];

static void carrel_client_log_handler(const char *format, va_list args) {
    size_t used = strlen(carrel_client_log);
    if (used + 1 < sizeof carrel_client_log) {
        vsnprintf(carrel_client_log + used, sizeof carrel_client_log - used, format, args);
    }
}

void carrel_client_log_capture(void) {
    carrel_client_log[0] = '\0';
    wl_log_set_handler_client(carrel_client_log_handler);
}

const char *carrel_client_log_text(void) {
    return carrel_client_log;
}

const struct wl_interface *carrel_client_opaque_interface(const char *name) {
    struct wl_interface *interface = calloc(1, sizeof *interface);
    char *copy = strdup(name);
    if (interface == NULL || copy == NULL) {
        free(interface);
        free(copy);
        return NULL;
    }
    interface->name = copy;
    interface->version = 1;
    return interface;
}
