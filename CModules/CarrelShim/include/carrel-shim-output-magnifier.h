#ifndef CARREL_SHIM_OUTPUT_MAGNIFIER_H
#define CARREL_SHIM_OUTPUT_MAGNIFIER_H

// Drawing the magnifier (zoom and colour filter) into an output's rendered
// image, before it is committed (output_magnifier.c).

#include "carrel-shim-wlroots.h"

/// The colour filters, as CarrelCore's ColourFilter names them.
enum carrel_colour_filter {
    CARREL_COLOUR_FILTER_NONE = 0,
    CARREL_COLOUR_FILTER_INVERTED = 1,
    CARREL_COLOUR_FILTER_HIGH_CONTRAST = 2,
};

/// What to draw: the output-local region `region_*` scaled up `zoom` times
/// to fill the output (zoom 1: no zoom), then `filter` over every pixel.
struct carrel_magnifier_view {
    int zoom;
    int region_x, region_y, region_width, region_height;
    enum carrel_colour_filter filter;
};

/// Whether the magnifier can be drawn with this renderer: only the pixman
/// renderer gives Carrel the rendered pixels before they are shown.
bool carrel_magnifier_can_draw(struct wlr_renderer *renderer);

/// Renders the scene output in full, draws `view` over the image and commits
/// it. wlroots-version-specific (0.15: rendered by hand into the output's
/// buffer; 0.17+: the scene's built state, without direct scan-out).
/// Returns false when the output could not render or commit; the image is
/// committed even when its format has no colour filter (logged).
bool carrel_scene_output_commit_magnified(struct wlr_scene_output *scene_output,
                                          const struct carrel_magnifier_view *view);

#endif
