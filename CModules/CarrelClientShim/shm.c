#define _GNU_SOURCE
#include "CarrelClientShim.h"

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
        &carrel_assessment_manager_v1_interface,
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(known[i]->name, name) == 0) {
            return known[i];
        }
    }
    return NULL;
}
