/// A filter Carrel applies to the whole output image, part of the
/// `screen_magnifier` feature (both are Carrel redrawing the screen for a
/// person who needs it; neither lets any client see other clients' pixels).
public enum ColourFilter: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The image as rendered.
    case none
    /// Every colour channel inverted (255 − value): dark text on light
    /// backgrounds becomes light on dark.
    case inverted
    /// Greyscale (Rec. 601 luma) with the contrast doubled around mid-grey,
    /// so light greys become white and dark greys black.
    case highContrast = "high_contrast"

    /// The filter the colour filter key selects after this one.
    public var next: ColourFilter {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }

    /// What the filter makes of one 8-bit grey level or colour channel
    /// (`highContrast` after the luma is taken): the curve's definition. The
    /// pixels are made by the C shim (`output_magnifier.c`, per pixel), which
    /// `test_magnifier.py` checks in the X server's screenshots.
    public static func highContrastLevel(_ luma: Int) -> Int {
        max(0, min(255, (luma - 128) * 2 + 128))
    }

    /// Rec. 601 luma of an 8-bit RGB colour, in whole levels, as the shim computes it.
    public static func luma(red: Int, green: Int, blue: Int) -> Int {
        (77 * red + 150 * green + 29 * blue) >> 8
    }

    public var description: String { rawValue }
}
