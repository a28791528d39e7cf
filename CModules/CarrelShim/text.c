#include "carrel-shim-text.h"

#include <cairo/cairo.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

// cairo's functions, looked up once in a copy loaded with RTLD_LOCAL; each
// pointer has the type of the function cairo.h declares.
#define CAIRO_FUNCTIONS(X) \
    X(cairo_image_surface_create) \
    X(cairo_image_surface_create_for_data) \
    X(cairo_surface_destroy) \
    X(cairo_surface_flush) \
    X(cairo_create) \
    X(cairo_destroy) \
    X(cairo_status) \
    X(cairo_select_font_face) \
    X(cairo_set_font_size) \
    X(cairo_text_extents) \
    X(cairo_font_extents) \
    X(cairo_set_source_rgb) \
    X(cairo_paint) \
    X(cairo_set_line_width) \
    X(cairo_rectangle) \
    X(cairo_stroke) \
    X(cairo_move_to) \
    X(cairo_show_text)

static struct {
#define DECLARE(name) __typeof__(&name) name;
    CAIRO_FUNCTIONS(DECLARE)
#undef DECLARE
} cairo;

static enum { NOT_TRIED, LOADED, FAILED } state = NOT_TRIED;
// dlerror()'s text is overwritten by the next dl* call: kept in a copy.
static char load_error[512];

bool carrel_text_load(const char **error) {
    if (state == NOT_TRIED) {
        state = FAILED;
        void *library = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
        if (library == NULL) {
            const char *reason = dlerror();
            snprintf(load_error, sizeof load_error, "%s", reason != NULL ? reason : "dlopen failed");
        } else {
            bool complete = true;
#define RESOLVE(name) \
            if (complete && (cairo.name = (__typeof__(&name))dlsym(library, #name)) == NULL) { \
                snprintf(load_error, sizeof load_error, "libcairo.so.2 lacks " #name); \
                complete = false; \
            }
            CAIRO_FUNCTIONS(RESOLVE)
#undef RESOLVE
            if (complete) {
                state = LOADED;
            }
        }
    }
    if (state != LOADED && error != NULL) {
        *error = load_error;
    }
    return state == LOADED;
}

static void set_font(cairo_t *cr, double size) {
    cairo.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo.cairo_set_font_size(cr, size);
}

bool carrel_text_measure(const char *text, double size, int32_t *width, int32_t *height) {
    if (!carrel_text_load(NULL)) {
        return false;
    }
    cairo_surface_t *surface = cairo.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = cairo.cairo_create(surface);
    bool ok = cairo.cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    if (ok) {
        set_font(cr, size);
        cairo_text_extents_t extents;
        cairo.cairo_text_extents(cr, text, &extents);
        cairo_font_extents_t font;
        cairo.cairo_font_extents(cr, &font);
        *width = (int32_t)ceil(extents.x_advance);
        *height = (int32_t)ceil(font.ascent + font.descent);
    }
    cairo.cairo_destroy(cr);
    cairo.cairo_surface_destroy(surface);
    return ok;
}

bool carrel_text_draw_box(void *data, int32_t width, int32_t height, int32_t stride,
                          double r, double g, double b, const char *text, double size) {
    if (!carrel_text_load(NULL)) {
        return false;
    }
    cairo_surface_t *surface =
        cairo.cairo_image_surface_create_for_data(data, CAIRO_FORMAT_ARGB32, width, height, stride);
    cairo_t *cr = cairo.cairo_create(surface);
    bool ok = cairo.cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    if (ok) {
        cairo.cairo_set_source_rgb(cr, r, g, b);
        cairo.cairo_paint(cr);
        // A white frame, so the box stands apart from whatever is beneath.
        cairo.cairo_set_source_rgb(cr, 1, 1, 1);
        cairo.cairo_set_line_width(cr, 2);
        cairo.cairo_rectangle(cr, 1, 1, width - 2, height - 2);
        cairo.cairo_stroke(cr);
        set_font(cr, size);
        cairo_font_extents_t font;
        cairo.cairo_font_extents(cr, &font);
        cairo_text_extents_t extents;
        cairo.cairo_text_extents(cr, text, &extents);
        double x = (width - extents.x_advance) / 2;
        double y = (height - (font.ascent + font.descent)) / 2 + font.ascent;
        cairo.cairo_move_to(cr, x, y);
        cairo.cairo_show_text(cr, text);
        cairo.cairo_surface_flush(surface);
    }
    cairo.cairo_destroy(cr);
    cairo.cairo_surface_destroy(surface);
    return ok;
}
