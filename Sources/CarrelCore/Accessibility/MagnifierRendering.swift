/// Whether a session may allow the magnifier on this compositor: Carrel
/// draws it into the rendered image, which only some renderers hand over
/// (pixman; not GLES2). Allowed with nothing behind it would be a promise
/// broken silently, so the restrictions are refused instead.
public enum MagnifierRendering {
    /// Why `set` cannot be put up when the renderer can or cannot draw the
    /// magnifier; nil when it can be.
    public static func refusal(for set: RestrictionSet, rendererDrawsMagnifier: Bool) -> String? {
        guard set.allowedFeatures.contains(.screenMagnifier), !rendererDrawsMagnifier else { return nil }
        return "screen_magnifier is allowed, but Carrel can draw its magnifier only with the pixman renderer and this one is not; deny the feature, or run Carrel with WLR_RENDERER=pixman"
    }
}
