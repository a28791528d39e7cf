#ifndef CARREL_SHIM_SCENE_CLIP_H
#define CARREL_SHIM_SCENE_CLIP_H

// The rectangle each window's (or role's) scene subtree may draw in
// (scene_clip.c). wlroots 0.15's scene has no clip of its own: Carrel's
// frame (scene_frame.c) renders each part of the damage with only the
// subtrees whose rectangle covers it, so a buffer larger than its window,
// a subsurface at any offset or a popup anywhere draws nothing outside.

#include <stdbool.h>
#include "carrel-shim-wlroots.h"

/// Confines everything under `node` (a tree's node) to `box`, in layout
/// coordinates; NULL lifts it, and must before the node is destroyed.
/// Returns false when no memory was left (then the old clip, if any, stays).
bool carrel_scene_node_set_clip(struct wlr_scene_node *node, const struct wlr_box *box);

/// Whether Carrel's own frame enforces the clip and can say what each
/// subtree draws (0.15). On 0.17+ wlroots' scene clips the surface trees
/// (carrel_scene_clip_surface_trees) and the per-frame audit is not run.
bool carrel_scene_clip_enforced(void);

/// 0.17+: hands every clip to wlroots' surface trees under its node
/// (toplevels, subsurfaces, popups, layer surfaces); before every frame.
/// 0.15: nothing (the frame clips).
void carrel_scene_clip_surface_trees(void);

/// The bounding box, in layout coordinates, of what rendering would draw for
/// the enabled subtree of `node`, each node cut to the clips of its
/// ancestors (`node` included) as the frame cuts it. False when it draws nothing.
bool carrel_scene_node_drawn_box(struct wlr_scene_node *node, struct wlr_box *drawn);

/// The topmost node at layout point (lx, ly) as wlr_scene_node_at finds it,
/// passing over confined subtrees whose clip does not hold the point: a
/// pixel a window may not draw is not a pixel it may be clicked through.
struct wlr_scene_node *carrel_scene_node_at_clipped(struct wlr_scene_node *root, double lx, double ly,
                                                    double *sx, double *sy);

#endif
