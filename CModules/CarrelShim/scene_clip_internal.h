#ifndef CARREL_SCENE_CLIP_INTERNAL_H
#define CARREL_SCENE_CLIP_INTERNAL_H

#include <stdint.h>
#include "carrel-shim-scene-clip.h"

// At most this many windows and roles are confined at once (a window past
// it is not drawn at all), in at most CARREL_SCENE_CLIP_BOXES distinct
// rectangles (each a bit of a cell's mask in scene_frame.c; windows past it
// are not drawn either). Windows of one role share its rectangle.
#define CARREL_SCENE_CLIP_MAX 1024
#define CARREL_SCENE_CLIP_BOXES 64

struct carrel_scene_clip {
    struct wlr_scene_node *node;
    struct wlr_box box;  // layout coordinates
};

/// The clips in force; `*count` of them.
const struct carrel_scene_clip *carrel_scene_clips(int *count);

/// The clip set on `node` itself, if any.
const struct wlr_box *carrel_scene_clip_of(const struct wlr_scene_node *node);

#endif
