#ifndef CARREL_SHIM_MEMORY_BUFFER_H
#define CARREL_SHIM_MEMORY_BUFFER_H

// A buffer Carrel draws into itself (memory_buffer.c).

#include "carrel-shim-wlroots.h"

/// A wlr_buffer in plain memory that the compositor draws into itself (the
/// confirmation prompt and the banner, with cairo): `width`×`height` pixels of
/// DRM_FORMAT_ARGB8888, which is cairo's CAIRO_FORMAT_ARGB32 on little-endian
/// machines, premultiplied. `*data` and `*stride` receive the pixels; they
/// live until the buffer is dropped and every lock on it released.
/// wlroots-version-specific: implements 0.15's `wlr_buffer_impl` by hand.
/// Returns NULL when memory runs out.
struct wlr_buffer *carrel_memory_buffer_create(int width, int height, void **data, int *stride);

#endif
