import CarrelShim

/// The scene graph's differences: 0.15 parents nodes to nodes and keeps its
/// damage in a wlr_output_damage; 0.17+ parents nodes to trees, and keeps
/// damage in a damage ring (0.18 also in the pending commit damage).
extension WlrootsVersion {
    /// The scene's root node (hit tests, destruction).
    static func rootNode(_ scene: UnsafeMutablePointer<wlr_scene>) -> UnsafeMutablePointer<wlr_scene_node> {
        #if CARREL_WLROOTS_SINCE_0_17
        node(of: UnsafeMutableRawPointer(scene) + MemoryLayout<wlr_scene>.offset(of: \wlr_scene.tree)!)
        #else
        (UnsafeMutableRawPointer(scene) + MemoryLayout<wlr_scene>.offset(of: \wlr_scene.node)!)
            .assumingMemoryBound(to: wlr_scene_node.self)
        #endif
    }

    /// The node of a tree, the scene's first field in every version.
    static func node(of tree: UnsafeMutablePointer<wlr_scene_tree>) -> UnsafeMutablePointer<wlr_scene_node> {
        node(of: UnsafeMutableRawPointer(tree))
    }

    private static func node(of tree: UnsafeMutableRawPointer) -> UnsafeMutablePointer<wlr_scene_node> {
        (tree + MemoryLayout<wlr_scene_tree>.offset(of: \wlr_scene_tree.node)!).assumingMemoryBound(to: wlr_scene_node.self)
    }

    /// An empty scene. 0.17+ compute which surfaces opaque ones cover and
    /// send those no frame callbacks; 0.15 did not, and Carrel keeps that:
    /// a window the session does not hide gets its frames wherever it is
    /// stacked (hidden ones are disabled nodes, which get none in any version).
    /// Without that computation 0.17+ also clear every damaged pixel and blend
    /// every buffer, never trusting a client's declared opaque region (which
    /// 0.15's frame in the shim does not trust either).
    static func createScene() -> UnsafeMutablePointer<wlr_scene> {
        let scene = wlr_scene_create()!
        #if CARREL_WLROOTS_SINCE_0_17
        carrel_scene_set_calculate_visibility(scene, false)
        #endif
        return scene
    }

    /// Ties the scene's outputs to the output layout. Returns what
    /// `addOutput` needs: 0.17+'s scene output layout (0.15 needs nothing:
    /// it creates a scene output for every layout output by itself).
    static func attachOutputLayout(_ scene: UnsafeMutablePointer<wlr_scene>,
                                   _ layout: UnsafeMutablePointer<wlr_output_layout>) -> OpaquePointer? {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_scene_attach_output_layout(scene, layout)
        #else
        _ = wlr_scene_attach_output_layout(scene, layout)
        return nil
        #endif
    }

    /// Adds an output to the layout (placed automatically) and so to the scene.
    /// (0.17+ create and place the scene output explicitly.)
    static func addOutput(_ output: UnsafeMutablePointer<wlr_output>, to layout: UnsafeMutablePointer<wlr_output_layout>,
                          scene: UnsafeMutablePointer<wlr_scene>, sceneLayout: OpaquePointer?) {
        #if CARREL_WLROOTS_SINCE_0_17
        let layoutOutput = wlr_output_layout_add_auto(layout, output)
        if let sceneOutput = wlr_scene_output_create(scene, output), let layoutOutput, let sceneLayout {
            wlr_scene_output_layout_add_output(sceneLayout, layoutOutput, sceneOutput)
        }
        #else
        wlr_output_layout_add_auto(layout, output)
        #endif
    }

    /// A new tree at the top of the root's children.
    static func createTree(in scene: UnsafeMutablePointer<wlr_scene>) -> UnsafeMutablePointer<wlr_scene_tree> {
        createTree(under: rootNode(scene))
    }

    /// A new tree at the top of `parent`'s children; `parent` is a tree's node.
    static func createTree(under parent: UnsafeMutablePointer<wlr_scene_node>) -> UnsafeMutablePointer<wlr_scene_tree> {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_scene_tree_create(wlr_scene_tree_from_node(parent))!
        #else
        wlr_scene_tree_create(parent)!
        #endif
    }

    /// The scene subtree of an xdg surface (with its subsurfaces and popups),
    /// under `parent` (a tree's node); returns its node.
    static func createXdgSurfaceNode(under parent: UnsafeMutablePointer<wlr_scene_node>,
                                     _ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> UnsafeMutablePointer<wlr_scene_node> {
        #if CARREL_WLROOTS_SINCE_0_17
        node(of: wlr_scene_xdg_surface_create(wlr_scene_tree_from_node(parent), xdgSurface)!)
        #else
        wlr_scene_xdg_surface_create(parent, xdgSurface)!
        #endif
    }

    /// A solid rectangle in `tree`.
    static func createRect(in tree: UnsafeMutablePointer<wlr_scene_tree>, width: Int32, height: Int32,
                           colour: UnsafePointer<Float>) -> UnsafeMutablePointer<wlr_scene_rect> {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_scene_rect_create(tree, width, height, colour)!
        #else
        wlr_scene_rect_create(&tree.pointee.node, width, height, colour)!
        #endif
    }

    /// A buffer node in `tree`; nil when wlroots could not allocate it.
    static func createBuffer(in tree: UnsafeMutablePointer<wlr_scene_tree>,
                             _ buffer: UnsafeMutablePointer<wlr_buffer>) -> UnsafeMutablePointer<wlr_scene_buffer>? {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_scene_buffer_create(tree, buffer)
        #else
        wlr_scene_buffer_create(&tree.pointee.node, buffer)
        #endif
    }

    /// The surface under a layout point, with surface-local coordinates.
    static func surface(at lx: Double, _ ly: Double, in scene: UnsafeMutablePointer<wlr_scene>)
        -> (surface: UnsafeMutablePointer<wlr_surface>, sx: Double, sy: Double)? {
        var sx = 0.0, sy = 0.0
        guard let node = carrel_scene_node_at_clipped(rootNode(scene), lx, ly, &sx, &sy) else { return nil }
        #if CARREL_WLROOTS_SINCE_0_17
        guard node.pointee.type == WLR_SCENE_NODE_BUFFER,
              let sceneSurface = wlr_scene_surface_try_from_buffer(wlr_scene_buffer_from_node(node)) else { return nil }
        #else
        guard node.pointee.type == WLR_SCENE_NODE_SURFACE,
              let sceneSurface = wlr_scene_surface_from_node(node) else { return nil }
        #endif
        return (sceneSurface.pointee.surface, sx, sy)
    }

    /// Confines everything `tree` draws (surfaces, subsurfaces, popups) to
    /// `box` in layout coordinates; nil lifts it, as must happen before the
    /// tree is destroyed. 0.15: Carrel's frame enforces it; 0.17+: wlroots'
    /// surface-tree clip does, set before every frame (`commit`).
    static func setClip(_ tree: UnsafeMutablePointer<wlr_scene_tree>, _ box: wlr_box?) {
        if var box {
            // The table holds 1024 confined trees; past that a window
            // draws nothing rather than unconfined.
            if !carrel_scene_node_set_clip(node(of: tree), &box) {
                wlr_scene_node_set_enabled(node(of: tree), false)
            }
        } else {
            _ = carrel_scene_node_set_clip(node(of: tree), nil)
        }
    }

    /// Whether the frames rendered on this wlroots enforce `setClip`.
    static var clipEnforced: Bool { carrel_scene_clip_enforced() }

    /// The bounding box in layout coordinates of what `tree` draws, cut by
    /// the clips as the frame cuts it; nil when nothing (or not computed).
    static func drawnBox(_ tree: UnsafeMutablePointer<wlr_scene_tree>) -> wlr_box? {
        var box = wlr_box()
        return carrel_scene_node_drawn_box(node(of: tree), &box) ? box : nil
    }

    /// Whether a scene node and all its ancestors are enabled, i.e. whether
    /// rendering may draw it. (0.15: `node.state.enabled`; 0.17+: `node.enabled`.)
    static func isEffectivelyEnabled(_ node: UnsafeMutablePointer<wlr_scene_node>) -> Bool {
        var current: UnsafeMutablePointer<wlr_scene_node>? = node
        while let n = current {
            #if CARREL_WLROOTS_SINCE_0_17
            if !n.pointee.enabled { return false }
            current = n.pointee.parent.map { Self.node(of: $0) }
            #else
            if !n.pointee.state.enabled { return false }
            current = n.pointee.parent
            #endif
        }
        return true
    }

    /// Damages a whole scene output so the next frame repaints everything.
    static func damageWhole(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_damage_ring_add_whole(&sceneOutput.pointee.damage_ring)
        #if CARREL_WLROOTS_SINCE_0_18
        // 0.18 renders only what is in the pending commit damage.
        let output = sceneOutput.pointee.output!
        let pending = carrel_scene_output_pending_commit_damage(sceneOutput)
        pixman_region32_union_rect(pending, pending,
                                   0, 0, UInt32(max(output.pointee.width, 0)), UInt32(max(output.pointee.height, 0)))
        #endif
        #else
        wlr_output_damage_add_whole(sceneOutput.pointee.damage)
        #endif
    }

    /// Whether a scene output has anything to paint: damage, or wlroots asked
    /// for a frame (a cursor change, a mode change). On the headless backend
    /// wlroots ticks frames forever; skipping the commit then keeps an
    /// unchanging screen from costing any rendering.
    static func hasPendingDamage(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) -> Bool {
        if sceneOutput.pointee.output.pointee.needs_frame { return true }
        #if CARREL_WLROOTS_SINCE_0_18
        return pixman_region32_not_empty(carrel_scene_output_pending_commit_damage(sceneOutput)) != 0
        #elseif CARREL_WLROOTS_0_17
        return pixman_region32_not_empty(&sceneOutput.pointee.damage_ring.current) != 0
        #else
        return pixman_region32_not_empty(&sceneOutput.pointee.damage.pointee.current) != 0
        #endif
    }

    /// Renders and commits a scene output. (0.17+ take commit options and
    /// leave opaque regions out of the clear themselves; on 0.15 the shim's
    /// frame does that, and copies a lone opaque client without a clear.)
    static func commit(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        carrel_scene_clip_surface_trees()  // each window's clip, onto surface trees made or moved since
        return wlr_scene_output_commit(sceneOutput, nil)
        #else
        carrel_scene_output_commit_frame(sceneOutput)
        #endif
    }
}
