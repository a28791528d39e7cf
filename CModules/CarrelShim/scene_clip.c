#include <stdlib.h>
#include <string.h>
#include "scene_clip_internal.h"

// A fixed table, not a list of allocations: the frame walks it for every
// node it visits, and a window's clip must never fail to be recorded for
// want of memory while its node can draw.
// Whoever sets a clip lifts it before destroying the node (the house keeps
// wl_container_of to the listener trampoline, so no destroy listener here).
struct clip_slot {
    struct carrel_scene_clip clip;
};

static struct clip_slot slots[CARREL_SCENE_CLIP_MAX];
static struct carrel_scene_clip active[CARREL_SCENE_CLIP_MAX];
static int active_count;

// The frame reads a dense copy; rebuilt whenever a clip changes.
static void rebuild_active(void) {
    active_count = 0;
    for (int i = 0; i < CARREL_SCENE_CLIP_MAX; i++) {
        if (slots[i].clip.node != NULL) {
            active[active_count++] = slots[i].clip;
        }
    }
}

static void forget(struct clip_slot *slot) {
    memset(slot, 0, sizeof(*slot));
    rebuild_active();
}

static struct clip_slot *slot_of(const struct wlr_scene_node *node) {
    for (int i = 0; i < CARREL_SCENE_CLIP_MAX; i++) {
        if (slots[i].clip.node == node) {
            return &slots[i];
        }
    }
    return NULL;
}

bool carrel_scene_node_set_clip(struct wlr_scene_node *node, const struct wlr_box *box) {
    struct clip_slot *slot = slot_of(node);
    if (box == NULL) {
        if (slot != NULL) {
            forget(slot);
        }
        return true;
    }
    if (slot == NULL) {
        slot = slot_of(NULL);
        if (slot == NULL) {
            return false;
        }
        slot->clip.node = node;
    }
    slot->clip.box = *box;
    rebuild_active();
    return true;
}

const struct carrel_scene_clip *carrel_scene_clips(int *count) {
    *count = active_count;
    return active;
}

const struct wlr_box *carrel_scene_clip_of(const struct wlr_scene_node *node) {
    for (int i = 0; i < active_count; i++) {
        if (active[i].node == node) {
            return &active[i].box;
        }
    }
    return NULL;
}

bool carrel_scene_clip_enforced(void) {
#if WLR_VERSION_MINOR < 17
    return true;
#else
    return false;
#endif
}

#if WLR_VERSION_MINOR >= 17
// wlroots 0.17+ clip a surface tree themselves (wlr_scene_subsurface_tree_set_clip,
// in the tree's own coordinates, handed down to its subsurfaces). Every surface
// tree under a confined node gets the clip, converted: the toplevel's, each
// popup's, the layer surface's. Called before every frame, so a tree made or
// moved since (a new popup, a new window geometry) is confined before it draws;
// an unchanged clip costs wlroots a comparison.
static void clip_surface_trees(struct wlr_scene_node *node, const struct wlr_box *box) {
    if (node->type != WLR_SCENE_NODE_TREE) {
        return;
    }
    int lx = 0, ly = 0;
    wlr_scene_node_coords(node, &lx, &ly);
    struct wlr_box local = {box->x - lx, box->y - ly, box->width, box->height};
    // Returns at once for a tree that is not a surface tree.
    wlr_scene_subsurface_tree_set_clip(node, &local);
    struct wlr_scene_node *child;
    wl_list_for_each(child, &wlr_scene_tree_from_node(node)->children, link) {
        clip_surface_trees(child, box);
    }
}
#endif

void carrel_scene_clip_surface_trees(void) {
#if WLR_VERSION_MINOR >= 17
    for (int i = 0; i < active_count; i++) {
        clip_surface_trees(active[i].node, &active[i].box);
    }
#endif
}

static bool node_enabled(struct wlr_scene_node *node) {
#if WLR_VERSION_MINOR < 17
    return node->state.enabled;
#else
    return node->enabled;
#endif
}

// Written directly, as the frame does: set_enabled would damage the output.
static void set_node_enabled(struct wlr_scene_node *node, bool enabled) {
#if WLR_VERSION_MINOR < 17
    node->state.enabled = enabled;
#else
    node->enabled = enabled;
#endif
}

struct wlr_scene_node *carrel_scene_node_at_clipped(struct wlr_scene_node *root, double lx, double ly,
                                                    double *sx, double *sy) {
    bool enabled[CARREL_SCENE_CLIP_MAX];
    int count = active_count;
    for (int i = 0; i < count; i++) {
        const struct wlr_box *box = &active[i].box;
        enabled[i] = node_enabled(active[i].node);
        bool holds = lx >= box->x && ly >= box->y && lx < box->x + box->width && ly < box->y + box->height;
        set_node_enabled(active[i].node, enabled[i] && holds);
    }
    struct wlr_scene_node *found = wlr_scene_node_at(root, lx, ly, sx, sy);
    for (int i = 0; i < count; i++) {
        set_node_enabled(active[i].node, enabled[i]);
    }
    return found;
}
