/// What Single App Mode shows while its app is away: between the app's exit
/// (or the loss of its last window) and its relaunched process mapping a
/// toplevel, and before the first launch maps one. Never an unlocked desktop:
/// no window but app-role ones (children the app left behind are still the
/// app) is in the scene or focused, and a plain colour covers every output
/// until an app window maps and ends the gap.
public enum KioskScreen {
    /// Whether Single App Mode is in a gap: enabled, and no app-role window
    /// is mapped. `mappedRoles` are the roles of the mapped toplevels.
    public static func isGap(kiosk: Bool, mappedRoles: [Role]) -> Bool {
        kiosk && !mappedRoles.contains(.app)
    }
}
