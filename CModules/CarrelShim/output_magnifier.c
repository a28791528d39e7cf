#include "carrel-shim-output-magnifier.h"
#include "carrel-shim-scene-frame.h"
#include "drm_fourcc_internal.h"
#include "log_internal.h"

#include <pixman.h>
#include <wlr/render/pixman.h>
#include <wlr/util/log.h>


bool carrel_magnifier_can_draw(struct wlr_renderer *renderer) {
    return renderer != NULL && wlr_renderer_is_pixman(renderer);
}

// Scales the view's region up over the whole image, nearest-neighbour so a
// source pixel becomes exactly zoom×zoom output pixels.
static bool magnify(pixman_image_t *image, const struct carrel_magnifier_view *view) {
    int width = pixman_image_get_width(image), height = pixman_image_get_height(image);
    pixman_image_t *region = pixman_image_create_bits(pixman_image_get_format(image),
                                                      view->region_width, view->region_height, NULL, 0);
    if (region == NULL) {
        return false;
    }
    pixman_image_composite32(PIXMAN_OP_SRC, image, NULL, region, view->region_x, view->region_y, 0, 0, 0, 0,
                             view->region_width, view->region_height);
    pixman_transform_t transform;
    pixman_transform_init_scale(&transform, pixman_int_to_fixed(1) / view->zoom, pixman_int_to_fixed(1) / view->zoom);
    pixman_image_set_transform(region, &transform);
    pixman_image_set_filter(region, PIXMAN_FILTER_NEAREST, NULL, 0);
    pixman_image_set_repeat(region, PIXMAN_REPEAT_PAD);
    pixman_image_composite32(PIXMAN_OP_SRC, region, NULL, image, 0, 0, 0, 0, 0, 0, width, height);
    pixman_image_unref(region);
    return true;
}

// Where red and blue sit in a 32-bit pixel of `format`; false for formats
// the filters do not know (the top byte is alpha or unused in all four).
static bool channel_shifts(pixman_format_code_t format, int *red, int *blue) {
    switch (format) {
    case PIXMAN_a8r8g8b8:
    case PIXMAN_x8r8g8b8:
        *red = 16, *blue = 0;
        return true;
    case PIXMAN_a8b8g8r8:
    case PIXMAN_x8b8g8r8:
        *red = 0, *blue = 16;
        return true;
    default:
        return false;
    }
}

// Inverted: 255 - each channel. High contrast: Rec. 601 luma, contrast
// doubled around 128 (CarrelCore's ColourFilter.highContrastLevel).
static bool filter_colours(pixman_image_t *image, enum carrel_colour_filter filter) {
    if (filter == CARREL_COLOUR_FILTER_NONE) {
        return true;
    }
    int red_shift, blue_shift;
    if (!channel_shifts(pixman_image_get_format(image), &red_shift, &blue_shift)) {
        return false;
    }
    uint8_t *rows = (uint8_t *)pixman_image_get_data(image);
    int stride = pixman_image_get_stride(image);
    int width = pixman_image_get_width(image), height = pixman_image_get_height(image);
    for (int y = 0; y < height; y++) {
        uint32_t *pixel = (uint32_t *)(rows + (size_t)y * stride);
        for (int x = 0; x < width; x++, pixel++) {
            if (filter == CARREL_COLOUR_FILTER_INVERTED) {
                *pixel ^= 0x00ffffffu;
                continue;
            }
            int r = (*pixel >> red_shift) & 0xff, g = (*pixel >> 8) & 0xff, b = (*pixel >> blue_shift) & 0xff;
            int level = (((77 * r + 150 * g + 29 * b) >> 8) - 128) * 2 + 128;
            uint32_t grey = level < 0 ? 0 : level > 255 ? 255 : (uint32_t)level;
            *pixel = (*pixel & 0xff000000u) | grey << 16 | grey << 8 | grey;
        }
    }
    return true;
}

static void draw_view(pixman_image_t *image, const struct carrel_magnifier_view *view) {
    if (view->zoom > 1 && !magnify(image, view)) {
        carrel_vlog(WLR_ERROR, "magnifier: out of memory for the zoomed region; this frame is shown unzoomed");
    }
    if (!filter_colours(image, view->filter)) {
        carrel_vlog(WLR_ERROR, "magnifier: the output's pixel format %#x has no colour filter; this frame is shown unfiltered",
                (unsigned)pixman_image_get_format(image));
    }
}

#if WLR_VERSION_MINOR < 17

bool carrel_scene_output_commit_magnified(struct wlr_scene_output *scene_output,
                                          const struct carrel_magnifier_view *view) {
    struct wlr_output *output = scene_output->output;
    struct wlr_renderer *renderer = output->renderer;
    if (!wlr_output_attach_render(output, NULL)) {
        return false;
    }
    carrel_scene_import_pending(scene_output->scene, renderer);
    wlr_renderer_begin(renderer, output->width, output->height);
    static const float black[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    wlr_renderer_clear(renderer, black);
    pixman_region32_t whole;
    pixman_region32_init_rect(&whole, 0, 0, (unsigned)output->width, (unsigned)output->height);
    carrel_scene_render_clipped(scene_output, &whole);
    pixman_region32_fini(&whole);
    wlr_output_render_software_cursors(output, NULL);
    pixman_image_t *image = wlr_pixman_renderer_get_current_image(renderer);
    if (image != NULL) {
        draw_view(image, view);
    }
    wlr_renderer_end(renderer);
    // Every pixel may have changed: the whole frame is damage.
    pixman_region32_t damage;
    pixman_region32_init_rect(&damage, 0, 0, output->width, output->height);
    wlr_output_set_damage(output, &damage);
    pixman_region32_fini(&damage);
    return wlr_output_commit(output);
}

#else

// The pixman format of a DRM fourcc the pixman renderer draws in.
static pixman_format_code_t pixman_format(uint32_t drm_format) {
    switch (drm_format) {
    case CARREL_FOURCC('A', 'R', '2', '4'): return PIXMAN_a8r8g8b8;
    case CARREL_FOURCC('X', 'R', '2', '4'): return PIXMAN_x8r8g8b8;
    case CARREL_FOURCC('A', 'B', '2', '4'): return PIXMAN_a8b8g8r8;
    case CARREL_FOURCC('X', 'B', '2', '4'): return PIXMAN_x8b8g8r8;
    default: return 0;
    }
}

bool carrel_scene_output_commit_magnified(struct wlr_scene_output *scene_output,
                                          const struct carrel_magnifier_view *view) {
    struct wlr_output *output = scene_output->output;
    // A client's buffer scanned out directly must never be drawn into.
    bool direct_scanout = CARREL_WLR_PRIVATE(scene_output->scene).direct_scanout;
    CARREL_WLR_PRIVATE(scene_output->scene).direct_scanout = false;
    struct wlr_output_state state;
    wlr_output_state_init(&state);
    bool built = wlr_scene_output_build_state(scene_output, &state, NULL);
    CARREL_WLR_PRIVATE(scene_output->scene).direct_scanout = direct_scanout;
    if (!built) {
        wlr_output_state_finish(&state);
        return false;
    }
    void *data = NULL;
    uint32_t format = 0;
    size_t stride = 0;
    if ((state.committed & WLR_OUTPUT_STATE_BUFFER) && state.buffer != NULL &&
        wlr_buffer_begin_data_ptr_access(state.buffer, WLR_BUFFER_DATA_PTR_ACCESS_WRITE, &data, &format, &stride)) {
        pixman_format_code_t code = pixman_format(format);
        pixman_image_t *image = code == 0 ? NULL
            : pixman_image_create_bits(code, state.buffer->width, state.buffer->height, data, (int)stride);
        if (image != NULL) {
            draw_view(image, view);
            pixman_image_unref(image);
        } else {
            carrel_vlog(WLR_ERROR, "magnifier: the output's buffer format %#x cannot be drawn into; this frame is shown as rendered", format);
        }
        wlr_buffer_end_data_ptr_access(state.buffer);
    }
    bool committed = wlr_output_commit_state(output, &state);
    wlr_output_state_finish(&state);
    return committed;
}

#endif
