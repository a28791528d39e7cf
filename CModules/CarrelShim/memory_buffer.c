/* A wlr_buffer in plain memory that Carrel draws into itself (the
 * confirmation prompt and the banner): wlroots' wlr_buffer_impl by hand. */
#include "CarrelShim.h"
#if WLR_VERSION_MINOR >= 17
#include <wlr/interfaces/wlr_buffer.h> /* 0.17 moved wlr_buffer_impl here */
#endif

#include <stdlib.h>

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
