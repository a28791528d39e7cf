#ifndef CARREL_SHIM_SCENE_FRAME_H
#define CARREL_SHIM_SCENE_FRAME_H

// Rendering a scene output's frame with the pixman renderer on wlroots 0.15
// without painting a pixel twice, and whether a scene draws anything at all
// (scene_frame.c).

#include "carrel-shim-wlroots.h"

#if WLR_VERSION_MINOR < 17
/// Renders and commits `scene_output` like wlr_scene_output_commit, with the
/// same direct scan-out, damage and software cursors, but it clears only
/// the damage no opaque node paints over, and with the pixman renderer, when
/// the damage lies inside one opaque client buffer drawn 1:1 with nothing
/// above it, the frame is one copy of that damage from the client's buffer.
/// Nothing of a confined subtree is drawn outside its clip. Scaled or
/// rotated outputs: wlr_scene_output_commit (which does not clip).
bool carrel_scene_output_commit_frame(struct wlr_scene_output *scene_output);

/// New scene buffers (prompts, banners) become textures before rendering
/// begins, as wlr_scene_output_commit does; every 0.15 frame path of
/// Carrel's calls it before wlr_renderer_begin.
void carrel_scene_import_pending(struct wlr_scene *scene, struct wlr_renderer *renderer);

/// Renders `damage` (output-local) of the scene like wlr_scene_render_output,
/// drawing nothing of a confined subtree outside its clip
/// (carrel_scene_node_set_clip). Between wlr_renderer_begin and _end.
void carrel_scene_render_clipped(struct wlr_scene_output *scene_output, pixman_region32_t *damage);
#endif

/// Whether any enabled node of `scene` draws something: a surface or buffer
/// node with a buffer, a rectangle with an area. An empty scene renders
/// only the black clear colour.
bool carrel_scene_has_content(struct wlr_scene *scene);

#endif
