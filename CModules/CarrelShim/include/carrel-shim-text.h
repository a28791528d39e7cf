#ifndef CARREL_SHIM_TEXT_H
#define CARREL_SHIM_TEXT_H

// One line of text in a framed box, for Carrel's own prompt and banner, with
// cairo loaded on first use (text.c): a compositor that never shows either
// never maps cairo and the nine libraries it pulls in (fontconfig, freetype,
// libpng, X11's...), which made every start slower and every process larger.

#include <stdbool.h>
#include <stdint.h>

/// Loads cairo if it is not loaded yet. False when it cannot be: then
/// `*error` (if given) says why, in dlopen's words; it is kept for the life
/// of the process. Later calls answer at once.
bool carrel_text_load(const char **error);

/// The advance width and line height (ascent + descent), in whole pixels
/// rounded up, of `text` (UTF-8) set in bold sans-serif at `size` pixels.
bool carrel_text_measure(const char *text, double size, int32_t *width, int32_t *height);

/// Into an ARGB32 buffer (`data`, `stride` bytes a row): fills it with the
/// opaque colour (r, g, b), draws a white frame 2 px wide just inside its
/// edge, and sets `text` in white, bold sans-serif at `size` pixels,
/// centred. False if cairo is not available.
bool carrel_text_draw_box(void *data, int32_t width, int32_t height, int32_t stride,
                          double r, double g, double b, const char *text, double size);

#endif
