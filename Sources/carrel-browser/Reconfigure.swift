import CarrelSEB
import CWebKitGTKLib
import Foundation

// Reconfiguring: a page in the exam follows a seb:// or sebs:// link (Moodle's
// "Launch Safe Exam Browser" once the student has logged in). Where the
// configuration in force allows it (CarrelSEB's ReconfigurePolicy),
// carrel-browser fetches the linked .seb with the web view's own network
// session, so the request carries the page's cookies, and replaces the
// configuration: a new web view (new keys, filter, start page, quit settings)
// on the same network session. Carrel's session is kept (docs/BROWSER.md says
// why). Otherwise the student sees carrel-browser's refusal and stays on the page.

/// A seb(s):// link's configuration on its way in.
final class Reconfiguring {
    let link: String
    let url: String
    /// WebKit's download of it (a reference of ours), nil until it is asked for.
    var download: OpaquePointer?
    /// A folder of its own the download is written into, removed once read.
    let directory: String
    var failure: String?
    /// Fetched, and waiting for its password.
    var bytes: [UInt8]?

    init(link: String, url: String, directory: String) {
        self.link = link
        self.url = url
        self.directory = directory
    }

    var file: String { directory + "/configuration.seb" }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The first URL filter rule GLib's GRegex (which the web process filters
/// with) will not compile, described; nil when it takes them all.
func gregexRefusal(_ settings: BrowserSettings) -> String? {
    for rule in settings.filter.orderedRules {
        var error: UnsafeMutablePointer<GError>?
        if let regex = g_regex_new(rule.pattern, G_REGEX_CASELESS, GRegexMatchFlags(rawValue: 0), &error) {
            g_regex_unref(regex)
        } else {
            let why = error.map { String(cString: $0.pointee.message) } ?? "unknown"
            if let error { g_error_free(error) }
            return "the URL filter rule \(rule.isRegex ? "regex" : "expression") \(rule.expression) "
                + "(pattern \(rule.pattern)) is not one GLib's GRegex takes (\(why)); rewrite the rule"
        }
    }
    return nil
}

extension Browser {
    /// A page asked for `link`, a seb:// or sebs:// URL.
    func reconfigureRequested(_ link: String) {
        guard examShown, !quitting, !confirmingQuit else {
            say("refused: reconfigure from \(link) (the exam is not shown)")
            return
        }
        guard reconfiguring == nil else {
            say("refused: reconfigure from \(link) (another configuration is being opened)")
            return
        }
        switch settings.reconfigure.decide(link: link) {
        case .refused(let why):
            refuseReconfiguring(link, why)
        case .allowed(let url):
            fetchConfiguration(link, url)
        }
    }

    func refuseReconfiguring(_ link: String, _ why: String) {
        say("refused: reconfigure from \(link) (\(why))")
        showPage(examShown ? "web" : "status")
        showBanner("Carrel did not open the exam configuration at \(link): \(why). The exam stays as it is.")
        say("refusal shown for \(link)")
    }

    /// Fetches the configuration with WebKit's download API on the web
    /// view's network session: the LMS sees the page's cookies.
    func fetchConfiguration(_ link: String, _ url: String) {
        var template = Array((NSTemporaryDirectory() as NSString)
            .appendingPathComponent("carrel-browser-seb-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            return refuseReconfiguring(link, "carrel-browser cannot make a folder for it (\(String(cString: strerror(errno))))")
        }
        let pending = Reconfiguring(link: link, url: url, directory: String(cString: made))
        reconfiguring = pending
        say("reconfiguring from \(link): fetching \(url)")
        guard let download = webkit_web_view_download_uri(webView, url) else {
            reconfiguring = nil
            return refuseReconfiguring(link, "WebKit would not fetch \(url)")
        }
        pending.download = download
        webkit_download_set_allow_overwrite(download, 1)
        connect(raw(download), "decide-destination", { (download: OpaquePointer?, _: UnsafePointer<CChar>?, _: gpointer?) -> gboolean in
            guard let pending = browser.reconfiguring, pending.download == download else {
                webkit_download_cancel(download)
                return 1
            }
            webkit_download_set_destination(download, pending.file)
            return 1
        } as @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, gpointer?) -> gboolean)
        connect(raw(download), "failed", { (download: OpaquePointer?, error: UnsafeMutablePointer<GError>?, _: gpointer?) in
            guard let pending = browser.reconfiguring, pending.download == download else { return }
            pending.failure = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        } as @convention(c) (OpaquePointer?, UnsafeMutablePointer<GError>?, gpointer?) -> Void)
        connect(raw(download), "finished", { (download: OpaquePointer?, _: gpointer?) in
            browser.configurationFetched(download)
            // Ours from webkit_web_view_download_uri; later, so WebKit has finished with the signal.
            g_idle_add({ download in
                g_object_unref(download)
                return 0
            }, raw(download))
        } as @convention(c) (OpaquePointer?, gpointer?) -> Void)
    }

    func configurationFetched(_ download: OpaquePointer?) {
        guard let pending = reconfiguring, pending.download == download else { return }
        guard examShown, !quitting else {
            reconfiguring = nil
            return
        }
        let status = webkit_download_get_response(download).map { webkit_uri_response_get_status_code($0) } ?? 0
        let data = FileManager.default.contents(atPath: pending.file)
        try? FileManager.default.removeItem(atPath: pending.file)
        reconfiguring = nil
        // The server's answer first: WebKit fails a download the server refused, naming only its reason phrase.
        if status != 0 && status != 200 {
            return refuseReconfiguring(pending.link, "the server answered \(status) for \(pending.url)")
        }
        if let failure = pending.failure {
            return refuseReconfiguring(pending.link, "it could not be fetched (\(failure))")
        }
        guard status == 200 else {
            return refuseReconfiguring(pending.link, "the server sent no answer for \(pending.url)")
        }
        guard let data, !data.isEmpty else {
            return refuseReconfiguring(pending.link, "the server sent nothing for \(pending.url)")
        }
        guard data.count <= SEBConfiguration.maximumFileSize else {
            return refuseReconfiguring(pending.link, "\(SEBError.tooLarge(data.count))")
        }
        pending.bytes = [UInt8](data)
        reconfiguring = pending
        openFetched(password: nil)
    }

    /// Opens the fetched file (with `password` when one was typed) and applies it.
    func openFetched(password: String?) {
        guard let pending = reconfiguring, let bytes = pending.bytes else { return }
        let opened: SEBConfiguration
        do {
            opened = try SEBConfiguration(fileBytes: bytes, password: password)
        } catch SEBError.passwordRequired(let client) {
            return askConfigurationPassword(forConfiguringClient: client)
        } catch SEBError.wrongPassword {
            say("refused: wrong configuration password")
            gtk_label_set_text(OpaquePointer(configurationPasswordMessage),
                               "That password does not open the configuration. Check it (letters' case counts) and try again.")
            return
        } catch {
            reconfiguring = nil
            return refuseReconfiguring(pending.link, "its configuration cannot be used (\(error))")
        }
        let newSettings: BrowserSettings
        do {
            newSettings = try BrowserSettings(opened.settings)
        } catch {
            reconfiguring = nil
            return refuseReconfiguring(pending.link, "its configuration cannot be used (\(error))")
        }
        if let problem = gregexRefusal(newSettings) {
            reconfiguring = nil
            return refuseReconfiguring(pending.link, "its configuration cannot be used (\(problem))")
        }
        reconfiguring = nil
        apply(opened, newSettings, from: pending.link)
    }

    /// The new configuration in force: new keys, filter, controls and quit
    /// settings, in a new web view on the same network session, at its start page.
    func apply(_ opened: SEBConfiguration, _ newSettings: BrowserSettings, from link: String) {
        configuration = opened
        settings = newSettings
        configKey = opened.configKey
        browserExamKey = BrowserExamKey.compute(settings: opened.settings, buildDigest: buildDigest(extensionPath: extensionPath))
        say("reconfigured from \(link) (Config Key \(configKey))")

        let old = webView!
        examShown = false
        setStatus("Opening the exam's new configuration…")
        webkit_web_view_stop_loading(old)
        gtk_stack_remove(OpaquePointer(stack), typed(OpaquePointer(old)))
        g_object_unref(raw(old))
        buildWebView()
        gtk_stack_add_named(OpaquePointer(stack), typed(OpaquePointer(webView)), "web")
        fillBar()
        webSocketsFiltered = false
        showWhenWebSocketsFiltered = false
        filterWebSockets()
        showExam()
    }

    // MARK: - The configuration's password, in carrel-browser's own window

    func buildConfigurationPasswordPage() -> UnsafeMutablePointer<GtkWidget> {
        let page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12)!
        gtk_widget_set_valign(page, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(page, GTK_ALIGN_CENTER)
        let box = UnsafeMutableRawPointer(page).assumingMemoryBound(to: GtkBox.self)
        configurationPasswordLabel = gtk_label_new("")
        gtk_box_append(box, configurationPasswordLabel)
        let entry = gtk_password_entry_new()!
        configurationPasswordEntry = entry
        connect(raw(entry), "activate", { (_: gpointer?, _: gpointer?) in browser.configurationPasswordTyped() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        gtk_box_append(box, entry)
        configurationPasswordMessage = gtk_label_new("")
        gtk_box_append(box, configurationPasswordMessage)
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
        let open = gtk_button_new_with_label("Open")!
        connect(raw(open), "clicked", { (_: gpointer?, _: gpointer?) in browser.configurationPasswordTyped() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        let back = gtk_button_new_with_label("Back to the exam")!
        connect(raw(back), "clicked", { (_: gpointer?, _: gpointer?) in browser.configurationPasswordCancelled() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        gtk_box_append(UnsafeMutableRawPointer(buttons).assumingMemoryBound(to: GtkBox.self), open)
        gtk_box_append(UnsafeMutableRawPointer(buttons).assumingMemoryBound(to: GtkBox.self), back)
        gtk_box_append(box, buttons)
        return page
    }

    func askConfigurationPassword(forConfiguringClient: Bool) {
        let what = forConfiguringClient ? "its settings password" : "the exam's password"
        gtk_label_set_text(OpaquePointer(configurationPasswordLabel),
                           "The exam opens a new configuration, which is protected. Enter \(what) to open it.")
        gtk_label_set_text(OpaquePointer(configurationPasswordMessage), "")
        showPage("configuration-password")
        if let entry = configurationPasswordEntry { gtk_widget_grab_focus(entry) }
        say("asking for the configuration's password")
    }

    func configurationPasswordTyped() {
        guard let entry = configurationPasswordEntry, reconfiguring?.bytes != nil else { return }
        let text = string(gtk_editable_get_text(OpaquePointer(entry))) ?? ""
        gtk_editable_set_text(OpaquePointer(entry), "")
        openFetched(password: text)
    }

    func configurationPasswordCancelled() {
        guard let pending = reconfiguring, pending.bytes != nil else { return }
        reconfiguring = nil
        refuseReconfiguring(pending.link, "no password was given for it")
    }
}
