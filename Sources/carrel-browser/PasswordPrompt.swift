import CarrelSEB
import CWebKitGTKLib

/// Asks for the password of an encrypted .seb file when no --password-file
/// gave one: a full-screen window of its own, shown before anything else,
/// gone before the exam's window opens.
final class PasswordPrompt {
    let bytes: [UInt8]
    let forConfiguringClient: Bool
    var result: SEBConfiguration?
    var done = false
    var entry: UnsafeMutablePointer<GtkWidget>!
    var message: UnsafeMutablePointer<GtkWidget>!

    /// The prompt being shown, for the C callbacks.
    nonisolated(unsafe) static var current: PasswordPrompt?

    init(bytes: [UInt8], forConfiguringClient: Bool) {
        self.bytes = bytes
        self.forConfiguringClient = forConfiguringClient
    }

    /// The opened configuration, or nil when the window was closed or there
    /// is no display to ask on.
    func run() -> SEBConfiguration? {
        guard gtk_init_check() != 0 else { return nil }
        Self.current = self
        let window = gtk_window_new()!
        let gtkWindow = UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_title(gtkWindow, "Exam configuration")
        gtk_window_set_decorated(gtkWindow, 0)
        gtk_window_fullscreen(gtkWindow)
        connect(raw(window), "close-request", { (_: gpointer?, _: gpointer?) -> gboolean in
            PasswordPrompt.current?.done = true
            return 1
        } as @convention(c) (gpointer?, gpointer?) -> gboolean)

        let page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12)!
        gtk_widget_set_valign(page, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(page, GTK_ALIGN_CENTER)
        let what = forConfiguringClient ? "its settings password" : "the exam's password"
        let label = gtk_label_new("This exam's configuration is protected. Enter \(what) to open it.")!
        let box = UnsafeMutableRawPointer(page).assumingMemoryBound(to: GtkBox.self)
        gtk_box_append(box, label)
        entry = gtk_password_entry_new()
        connect(raw(entry), "activate", { (_: gpointer?, _: gpointer?) in PasswordPrompt.current?.attempt() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        gtk_box_append(box, entry)
        message = gtk_label_new("")
        gtk_box_append(box, message)
        let button = gtk_button_new_with_label("Open")!
        connect(raw(button), "clicked", { (_: gpointer?, _: gpointer?) in PasswordPrompt.current?.attempt() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        gtk_box_append(box, button)
        gtk_window_set_child(gtkWindow, page)
        gtk_window_present(gtkWindow)
        gtk_widget_grab_focus(entry)
        say("asking for the configuration's password")

        while !done {
            g_main_context_iteration(nil, 1)
        }
        gtk_window_destroy(gtkWindow)
        while g_main_context_iteration(nil, 0) != 0 {}
        Self.current = nil
        return result
    }

    func attempt() {
        let text = string(gtk_editable_get_text(OpaquePointer(entry))) ?? ""
        gtk_editable_set_text(OpaquePointer(entry), "")
        do {
            result = try SEBConfiguration(fileBytes: bytes, password: text)
            say("configuration opened")
            done = true
        } catch SEBError.wrongPassword {
            say("refused: wrong configuration password")
            gtk_label_set_text(OpaquePointer(message),
                               "That password does not open the configuration. Check it (letters' case counts) and try again.")
        } catch {
            gtk_label_set_text(OpaquePointer(message), "\(error)")
        }
    }
}
