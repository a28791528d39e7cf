#include "carrel-shim-scene-frame.h"
#include "drm_fourcc_internal.h"
#include "scene_clip_internal.h"

#if WLR_VERSION_MINOR < 17

#include <pixman.h>
#include <stdlib.h>
#include <wlr/backend/headless.h>
#include <wlr/render/pixman.h>
#include <wlr/util/box.h>
#include <wlr/util/region.h>


// wlroots 0.15's scene clears every damaged rectangle, then draws each node
// with a transformed, masked OVER; with an opaque client over the damage both
// are wasted work. Only opacity the pixel format guarantees counts (XRGB, a
// solid colour), never a client's declared opaque region: a client lying
// about it would blend stale pixels of the previous frame, which may be a
// window a session has since hidden.

// The box of an enabled node in output-local coordinates, walked in the
// order the scene renders (bottom first), and the part of it the clips of
// its ancestors let it draw (`visible`: empty, width 0, when none).
typedef void (*node_visitor)(struct wlr_scene_node *node, const struct wlr_box *box,
                             const struct wlr_box *visible, void *data);

static void node_size(struct wlr_scene_node *node, int *width, int *height) {
    *width = 0, *height = 0;
    switch (node->type) {
    case WLR_SCENE_NODE_SURFACE:;
        struct wlr_surface *surface = wlr_scene_surface_from_node(node)->surface;
        *width = surface->current.width, *height = surface->current.height;
        break;
    case WLR_SCENE_NODE_RECT:;
        struct wlr_scene_rect *rect = (struct wlr_scene_rect *)node;
        *width = rect->width, *height = rect->height;
        break;
    case WLR_SCENE_NODE_BUFFER:;
        struct wlr_scene_buffer *buffer = (struct wlr_scene_buffer *)node;
        if (buffer->dst_width > 0 && buffer->dst_height > 0) {
            *width = buffer->dst_width, *height = buffer->dst_height;
        } else if (buffer->transform & WL_OUTPUT_TRANSFORM_90) {
            *width = buffer->buffer->height, *height = buffer->buffer->width;
        } else {
            *width = buffer->buffer->width, *height = buffer->buffer->height;
        }
        break;
    default:
        break;
    }
}

// `clip` is what the ancestors allow (output-local), NULL for all; (ox, oy)
// turns layout coordinates into output-local ones.
static void visit_tree(struct wlr_scene_node *node, int x, int y, int ox, int oy, const struct wlr_box *clip,
                       node_visitor visit, void *data) {
    if (!node->state.enabled) {
        return;
    }
    struct wlr_box own_clip;
    const struct wlr_box *set = carrel_scene_clip_of(node);
    if (set != NULL) {
        struct wlr_box local = {set->x + ox, set->y + oy, set->width, set->height};
        if (clip == NULL) {
            own_clip = local;
        } else if (!wlr_box_intersection(&own_clip, clip, &local)) {
            own_clip = (struct wlr_box){0};
        }
        clip = &own_clip;
    }
    x += node->state.x, y += node->state.y;
    struct wlr_box box = {.x = x, .y = y};
    node_size(node, &box.width, &box.height);
    if (box.width > 0 && box.height > 0) {
        struct wlr_box visible = box;
        if (clip != NULL && !wlr_box_intersection(&visible, clip, &box)) {
            visible = (struct wlr_box){.x = box.x, .y = box.y};
        }
        visit(node, &box, &visible, data);
    }
    struct wlr_scene_node *child;
    wl_list_for_each(child, &node->state.children, state.link) {
        visit_tree(child, x, y, ox, oy, clip, visit, data);
    }
}

static void visit_nodes(struct wlr_scene_node *node, int x, int y, node_visitor visit, void *data) {
    visit_tree(node, x, y, x, y, NULL, visit, data);
}

// What wlroots' direct scan-out needs: exactly one node on the output, and it
// covers the output exactly.
struct scanout_check {
    struct wlr_box output_box;
    int visible;
    int unclipped;  // nodes over the output as wlroots counts them, clips ignored
    bool exact;
};

static bool same_box(const struct wlr_box *a, const struct wlr_box *b) {
    return a->x == b->x && a->y == b->y && a->width == b->width && a->height == b->height;
}

static void check_scanout(struct wlr_scene_node *node, const struct wlr_box *box, const struct wlr_box *visible,
                          void *data) {
    struct scanout_check *check = data;
    struct wlr_box overlap;
    if (wlr_box_intersection(&overlap, &check->output_box, box)) {
        check->unclipped++;
    }
    if (!wlr_box_intersection(&overlap, &check->output_box, visible)) {
        return;
    }
    check->visible++;
    // A clipped buffer is never scanned out: scan-out shows all of it.
    check->exact = same_box(box, &check->output_box) && same_box(visible, box);
}

// The client buffer a surface shows, when it is drawn pixel for pixel with a
// format that has no alpha: its wl_shm buffer, and the pixman format to read
// it as. NULL otherwise (then wlroots draws it).
static struct wlr_buffer *opaque_source(struct wlr_surface *surface, const struct wlr_box *box,
                                        pixman_format_code_t *format) {
    struct wlr_texture *texture = wlr_surface_get_texture(surface);
    if (texture == NULL || !wlr_texture_is_opaque(texture) || surface->buffer == NULL ||
        surface->buffer->source == NULL || surface->current.transform != WL_OUTPUT_TRANSFORM_NORMAL ||
        surface->current.viewport.has_src || surface->current.viewport.has_dst ||
        (int)texture->width != box->width || (int)texture->height != box->height) {
        return NULL;
    }
    // A DRM fourcc (wlroots converts wl_shm's).
    switch (surface->buffer->shm_source_format) {
    case CARREL_FOURCC('X', 'R', '2', '4'): *format = PIXMAN_x8r8g8b8; break;
    case CARREL_FOURCC('X', 'B', '2', '4'): *format = PIXMAN_x8b8g8r8; break;
    default: return NULL;
    }
    return surface->buffer->source;
}

struct frame_plan {
    pixman_region32_t opaque;          // painted in full by some node
    struct wlr_scene_node *top;         // the last node drawn over the damage
    struct wlr_box top_box;
    struct wlr_box top_visible;         // the part of it its clip lets it draw
    const pixman_region32_t *damage;
};

static void plan_node(struct wlr_scene_node *node, const struct wlr_box *box, const struct wlr_box *visible,
                      void *data) {
    struct frame_plan *plan = data;
    if (wlr_box_empty(visible)) {
        return;
    }
    bool opaque = false;
    if (node->type == WLR_SCENE_NODE_SURFACE) {
        pixman_format_code_t format;
        opaque = opaque_source(wlr_scene_surface_from_node(node)->surface, box, &format) != NULL;
    } else if (node->type == WLR_SCENE_NODE_RECT) {
        opaque = ((struct wlr_scene_rect *)node)->color[3] >= 1.0f;
    }
    if (opaque) {
        pixman_region32_union_rect(&plan->opaque, &plan->opaque, visible->x, visible->y, visible->width,
                                   visible->height);
    }
    pixman_box32_t extents = {visible->x, visible->y, visible->x + visible->width, visible->y + visible->height};
    pixman_region32_t overlap;
    pixman_region32_init_rects(&overlap, &extents, 1);
    pixman_region32_intersect(&overlap, &overlap, (pixman_region32_t *)plan->damage);
    if (pixman_region32_not_empty(&overlap)) {
        plan->top = node;
        plan->top_box = *box;
        plan->top_visible = *visible;
    }
    pixman_region32_fini(&overlap);
}

// Copies `damage` (inside `box`) from the client's pixels to the output's
// image: pixman's SRC of an XRGB image without transform is a plain copy of
// each row (SSE2), which one frame of a redrawn full-screen client spends
// nearly all its time in, bound by memory bandwidth. (Non-temporal stores,
// tried, measured no faster.)
static bool copy_damage(pixman_image_t *target, pixman_format_code_t format, void *data, size_t stride,
                        const struct wlr_box *box, pixman_region32_t *damage) {
    pixman_image_t *image = pixman_image_create_bits_no_clear(format, box->width, box->height, data, (int)stride);
    if (image == NULL) {
        return false;
    }
    pixman_image_set_clip_region32(target, damage);
    pixman_image_composite32(PIXMAN_OP_SRC, image, NULL, target, 0, 0, 0, 0, box->x, box->y, box->width, box->height);
    pixman_image_set_clip_region32(target, NULL);
    pixman_image_unref(image);
    return true;
}

// Copies `damage` of the top surface's buffer into the output's image; false
// when the buffer could not be read (then wlroots draws the frame).
static bool copy_top_surface(struct wlr_renderer *renderer, struct wlr_surface *surface,
                             const struct wlr_box *box, pixman_region32_t *damage) {
    pixman_format_code_t format;
    struct wlr_buffer *source = opaque_source(surface, box, &format);
    pixman_image_t *target = wlr_pixman_renderer_get_current_image(renderer);
    void *data;
    uint32_t drm_format;
    size_t stride;
    if (source == NULL || target == NULL ||
        !wlr_buffer_begin_data_ptr_access(source, WLR_BUFFER_DATA_PTR_ACCESS_READ, &data, &drm_format, &stride)) {
        return false;
    }
    // The pixels as the buffer says they are now (a pool may have been resized).
    bool copied = drm_format == surface->buffer->shm_source_format && stride >= (size_t)box->width * 4 &&
                  copy_damage(target, format, data, stride, box, damage);
    wlr_buffer_end_data_ptr_access(source);
    return copied;
}

static void clear_region(struct wlr_renderer *renderer, pixman_region32_t *region) {
    static const float black[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    int count;
    pixman_box32_t *rects = pixman_region32_rectangles(region, &count);
    for (int i = 0; i < count; i++) {
        struct wlr_box box = {rects[i].x1, rects[i].y1, rects[i].x2 - rects[i].x1, rects[i].y2 - rects[i].y1};
        wlr_renderer_scissor(renderer, &box);
        wlr_renderer_clear(renderer, black);
    }
    wlr_renderer_scissor(renderer, NULL);
}

// One part of the damage and the clip rectangles that cover all of it (bit i:
// rectangle i).
struct clip_cell {
    pixman_region32_t region;
    uint64_t covered;
};

struct clip_cells {
    struct clip_cell *cells;
    int count, capacity;
};

static bool add_cell(struct clip_cells *cells, pixman_region32_t *region, uint64_t covered) {
    if (cells->count == cells->capacity) {
        int capacity = cells->capacity == 0 ? 8 : cells->capacity * 2;
        struct clip_cell *grown = realloc(cells->cells, sizeof(*grown) * (size_t)capacity);
        if (grown == NULL) {
            return false;
        }
        cells->cells = grown, cells->capacity = capacity;
    }
    struct clip_cell *cell = &cells->cells[cells->count++];
    pixman_region32_init(&cell->region);
    pixman_region32_copy(&cell->region, region);
    cell->covered = covered;
    return true;
}

// Cuts the damage into cells that every clip rectangle either covers whole
// or misses. Windows and roles sit side by side, so there are about as many
// cells as rectangles. False when memory ran out.
static bool split_by_clips(struct clip_cells *cells, pixman_region32_t *damage,
                           const struct wlr_box *boxes, int count, int ox, int oy) {
    if (!add_cell(cells, damage, 0)) {
        return false;
    }
    for (int i = 0; i < count; i++) {
        const struct wlr_box *box = &boxes[i];
        int existing = cells->count;
        for (int j = 0; j < existing; j++) {
            pixman_region32_t inside, outside;
            pixman_region32_init_rect(&inside, box->x + ox, box->y + oy, (unsigned)box->width, (unsigned)box->height);
            pixman_region32_intersect(&inside, &inside, &cells->cells[j].region);
            pixman_region32_init(&outside);
            pixman_region32_subtract(&outside, &cells->cells[j].region, &inside);
            bool ok = true;
            if (pixman_region32_not_empty(&inside)) {
                if (pixman_region32_not_empty(&outside)) {
                    ok = add_cell(cells, &inside, cells->cells[j].covered | (UINT64_C(1) << i));
                    pixman_region32_copy(&cells->cells[j].region, &outside);
                } else {
                    cells->cells[j].covered |= UINT64_C(1) << i;
                }
            }
            pixman_region32_fini(&inside);
            pixman_region32_fini(&outside);
            if (!ok) {
                return false;
            }
        }
    }
    return true;
}

// Renders `damage` of the scene as wlr_scene_render_output does, but each
// cell with only the clipped subtrees whose clip covers it: the others are
// switched off for that pass by their own `enabled` flag, written directly
// (wlr_scene_node_set_enabled would damage the output and so ask for
// another frame) and put back before returning.
void carrel_scene_render_clipped(struct wlr_scene_output *scene_output, pixman_region32_t *damage) {
    struct wlr_scene *scene = scene_output->scene;
    struct wlr_output *output = scene_output->output;
    int count;
    const struct carrel_scene_clip *clips = carrel_scene_clips(&count);
    if (count == 0) {
        wlr_scene_render_output(scene, output, scene_output->x, scene_output->y, damage);
        return;
    }
    // The distinct rectangles, and each clip's (-1: past the last one kept).
    bool enabled[CARREL_SCENE_CLIP_MAX];
    int box_of[CARREL_SCENE_CLIP_MAX];
    struct wlr_box boxes[CARREL_SCENE_CLIP_BOXES];
    int box_count = 0;
    for (int i = 0; i < count; i++) {
        enabled[i] = clips[i].node->state.enabled;
        box_of[i] = -1;
        for (int b = 0; b < box_count && box_of[i] < 0; b++) {
            if (same_box(&boxes[b], &clips[i].box)) {
                box_of[i] = b;
            }
        }
        if (box_of[i] < 0 && box_count < CARREL_SCENE_CLIP_BOXES) {
            boxes[box_count] = clips[i].box;
            box_of[i] = box_count++;
        }
    }
    struct clip_cells cells = {0};
    if (split_by_clips(&cells, damage, boxes, box_count, -scene_output->x, -scene_output->y)) {
        for (int c = 0; c < cells.count; c++) {
            for (int i = 0; i < count; i++) {
                clips[i].node->state.enabled = enabled[i] && box_of[i] >= 0 &&
                                               (cells.cells[c].covered & (UINT64_C(1) << box_of[i])) != 0;
            }
            wlr_scene_render_output(scene, output, scene_output->x, scene_output->y, &cells.cells[c].region);
        }
    } else {
        // Out of memory: fail closed, with no confined subtree drawn at all.
        for (int i = 0; i < count; i++) {
            clips[i].node->state.enabled = false;
        }
        wlr_scene_render_output(scene, output, scene_output->x, scene_output->y, damage);
    }
    for (int i = 0; i < count; i++) {
        clips[i].node->state.enabled = enabled[i];
    }
    for (int c = 0; c < cells.count; c++) {
        pixman_region32_fini(&cells.cells[c].region);
    }
    free(cells.cells);
}

struct drawn_extent {
    bool any;
    struct wlr_box box;
};

static void extend_drawn(struct wlr_scene_node *node, const struct wlr_box *box, const struct wlr_box *visible,
                         void *data) {
    (void)node, (void)box;
    struct drawn_extent *extent = data;
    if (wlr_box_empty(visible)) {
        return;
    }
    if (!extent->any) {
        extent->box = *visible;
        extent->any = true;
        return;
    }
    int x1 = visible->x < extent->box.x ? visible->x : extent->box.x;
    int y1 = visible->y < extent->box.y ? visible->y : extent->box.y;
    int x2 = visible->x + visible->width, y2 = visible->y + visible->height;
    int ex2 = extent->box.x + extent->box.width, ey2 = extent->box.y + extent->box.height;
    x2 = x2 > ex2 ? x2 : ex2, y2 = y2 > ey2 ? y2 : ey2;
    extent->box = (struct wlr_box){x1, y1, x2 - x1, y2 - y1};
}

bool carrel_scene_node_drawn_box(struct wlr_scene_node *node, struct wlr_box *drawn) {
    // Where the node sits and what its ancestors' clips allow, in layout
    // coordinates; a disabled ancestor draws nothing.
    int x = 0, y = 0;
    struct wlr_box clip_box, *clip = NULL;
    for (struct wlr_scene_node *up = node->parent; up != NULL; up = up->parent) {
        if (!up->state.enabled) {
            return false;
        }
        x += up->state.x, y += up->state.y;
        const struct wlr_box *set = carrel_scene_clip_of(up);
        if (set != NULL) {
            struct wlr_box narrowed;
            if (clip == NULL) {
                clip_box = *set, clip = &clip_box;
            } else if (!wlr_box_intersection(&narrowed, clip, set)) {
                return false;
            } else {
                clip_box = narrowed;
            }
        }
    }
    struct drawn_extent extent = {0};
    visit_tree(node, x, y, 0, 0, clip, extend_drawn, &extent);
    *drawn = extent.box;
    return extent.any;
}

void carrel_scene_import_pending(struct wlr_scene *scene, struct wlr_renderer *renderer) {
    struct wlr_scene_buffer *pending, *next;
    wl_list_for_each_safe(pending, next, &scene->pending_buffers, pending_link) {
        if (pending->texture == NULL && wlr_client_buffer_get(pending->buffer) == NULL) {
            pending->texture = wlr_texture_from_buffer(renderer, pending->buffer);
        }
        wl_list_remove(&pending->pending_link);
        wl_list_init(&pending->pending_link);
    }
}

bool carrel_scene_output_commit_frame(struct wlr_scene_output *scene_output) {
    struct wlr_output *output = scene_output->output;
    struct wlr_renderer *renderer = output->renderer;
    struct wlr_scene *scene = scene_output->scene;
    // Any renderer takes this path (the clips hold only here); the copy
    // below is pixman's alone.
    if (renderer == NULL || output->scale != 1.0f || output->transform != WL_OUTPUT_TRANSFORM_NORMAL) {
        return wlr_scene_output_commit(scene_output);
    }
    // One node exactly over the output may be scanned out: wlroots decides.
    // Only the headless backend can take a wl_shm client's buffer as it is;
    // X11 and DRM refuse it (no dmabuf) and wlroots would clear and blend the
    // whole damage after the failed attempt, so there the copy below serves.
    struct scanout_check check = {.output_box = {0, 0, output->width, output->height}};
    visit_nodes(&scene->node, -scene_output->x, -scene_output->y, check_scanout, &check);
    // wlroots then renders by itself, without the clips, whenever scan-out
    // fails: only when it would see that one node alone, drawn whole.
    if (check.visible == 1 && check.unclipped == 1 && check.exact && wlr_output_is_headless(output)) {
        return wlr_scene_output_commit(scene_output);
    }
    if (scene_output->prev_scanout) {
        // Leaving direct scan-out: the output's own buffers are stale.
        wlr_output_damage_add_whole(scene_output->damage);
        scene_output->prev_scanout = false;
    }

    bool needs_frame;
    pixman_region32_t damage;
    pixman_region32_init(&damage);
    if (!wlr_output_damage_attach_render(scene_output->damage, &needs_frame, &damage)) {
        pixman_region32_fini(&damage);
        return false;
    }
    if (!needs_frame) {
        pixman_region32_fini(&damage);
        wlr_output_rollback(output);
        return true;
    }
    carrel_scene_import_pending(scene, renderer);

    struct frame_plan plan = {.damage = &damage};
    pixman_region32_init(&plan.opaque);
    visit_nodes(&scene->node, -scene_output->x, -scene_output->y, plan_node, &plan);

    wlr_renderer_begin(renderer, output->width, output->height);
    bool copied = false;
    if (plan.top != NULL && plan.top->type == WLR_SCENE_NODE_SURFACE && wlr_renderer_is_pixman(renderer)) {
        // The whole damage lies inside the top node: if it is opaque, it
        // alone decides every damaged pixel.
        pixman_region32_t beyond;
        pixman_region32_init_rect(&beyond, plan.top_visible.x, plan.top_visible.y, plan.top_visible.width,
                                  plan.top_visible.height);
        pixman_region32_subtract(&beyond, &damage, &beyond);
        bool inside = !pixman_region32_not_empty(&beyond);
        pixman_region32_fini(&beyond);
        struct wlr_scene_surface *top = wlr_scene_surface_from_node(plan.top);
        if (inside && copy_top_surface(renderer, top->surface, &plan.top_box, &damage)) {
            copied = true;
            if (scene->presentation != NULL && top->primary_output == output) {
                wlr_presentation_surface_sampled_on_output(scene->presentation, top->surface, output);
            }
        }
    }
    if (!copied) {
        pixman_region32_t uncovered;
        pixman_region32_init(&uncovered);
        pixman_region32_subtract(&uncovered, &damage, &plan.opaque);
        clear_region(renderer, &uncovered);
        pixman_region32_fini(&uncovered);
        carrel_scene_render_clipped(scene_output, &damage);
    }
    wlr_output_render_software_cursors(output, &damage);
    wlr_renderer_end(renderer);
    pixman_region32_fini(&plan.opaque);
    pixman_region32_fini(&damage);

    // The frame's damage, as wlroots reports it (the output is untransformed).
    pixman_region32_t frame_damage;
    pixman_region32_init(&frame_damage);
    pixman_region32_copy(&frame_damage, &scene_output->damage->current);
    wlr_output_set_damage(output, &frame_damage);
    pixman_region32_fini(&frame_damage);
    return wlr_output_commit(output);
}

static void note_content(struct wlr_scene_node *node, const struct wlr_box *box, const struct wlr_box *visible,
                         void *data) {
    (void)node, (void)box, (void)visible;
    *(bool *)data = true;
}

bool carrel_scene_has_content(struct wlr_scene *scene) {
    bool found = false;
    visit_nodes(&scene->node, 0, 0, note_content, &found);
    return found;
}

#else

bool carrel_scene_node_drawn_box(struct wlr_scene_node *node, struct wlr_box *drawn) {
    // Not computed where the frame does not enforce the clip
    // (carrel_scene_clip_enforced): the audit checks it only where it is.
    (void)node, (void)drawn;
    return false;
}

static bool node_has_content(struct wlr_scene_node *node) {
    if (!node->enabled) {
        return false;
    }
    switch (node->type) {
    case WLR_SCENE_NODE_TREE:;
        struct wlr_scene_node *child;
        wl_list_for_each(child, &wlr_scene_tree_from_node(node)->children, link) {
            if (node_has_content(child)) {
                return true;
            }
        }
        return false;
    case WLR_SCENE_NODE_RECT:;
        struct wlr_scene_rect *rect = wlr_scene_rect_from_node(node);
        return rect->width > 0 && rect->height > 0;
    case WLR_SCENE_NODE_BUFFER:
        return wlr_scene_buffer_from_node(node)->buffer != NULL;
    }
    return false;
}

bool carrel_scene_has_content(struct wlr_scene *scene) {
    return node_has_content(&scene->tree.node);
}

#endif
