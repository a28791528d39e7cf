import AssessmentKit
import CarrelSEB
import CarrelWire
import CWebKitGTKLib
import Foundation

/// Prints one line of what happened, for the log and the tests:
/// "carrel-browser: WHAT".
func say(_ what: String) {
    print("carrel-browser: \(what)")
    fflush(stdout)
}

/// The one exam window: a bar (progress, back/reload when allowed, quit) over
/// a stack of the exam page and carrel-browser's own pages (status,
/// refusal, quit password).
final class Browser: AssessmentSessionDelegate {
    let options: Options
    // The configuration in force: the one carrel-browser started with, or
    // the one a seb(s):// link in the exam replaced it with (Reconfiguring).
    var configuration: SEBConfiguration
    var settings: BrowserSettings
    var configKey: String
    var browserExamKey: String
    let extensionPath: String?

    var window: UnsafeMutablePointer<GtkWidget>!
    var bar: UnsafeMutablePointer<GtkWidget>!
    var stack: UnsafeMutablePointer<GtkWidget>!
    var status: UnsafeMutablePointer<GtkWidget>!
    var progress: UnsafeMutablePointer<GtkWidget>!
    var banner: UnsafeMutablePointer<GtkWidget>!
    var bannerTimeout: guint = 0
    var passwordEntry: UnsafeMutablePointer<GtkWidget>?
    var passwordMessage: UnsafeMutablePointer<GtkWidget>?
    var confirmBackButton: UnsafeMutablePointer<GtkWidget>?
    var configurationPasswordLabel: UnsafeMutablePointer<GtkWidget>!
    var configurationPasswordEntry: UnsafeMutablePointer<GtkWidget>?
    var configurationPasswordMessage: UnsafeMutablePointer<GtkWidget>!
    /// The quit URL was reached and carrel-browser asks whether to quit.
    var confirmingQuit = false
    /// With the content filter: whether WebKit holds the filter's rules for
    /// WebSocket connections yet, and whether the exam waits for it to be shown.
    var webSocketsFiltered = false
    var showWhenWebSocketsFiltered = false
    var webView: UnsafeMutablePointer<WebKitWebView>!
    var networkSession: OpaquePointer!
    var extensionDirectory: String?

    var manager: WaylandAssessmentManager?
    var session: AssessmentSession?
    /// The features the session began with: a new configuration cannot widen them.
    var sessionFeatures: Set<AssessmentFeature>?
    /// A seb(s):// link's configuration being fetched or opened (Reconfiguring).
    var reconfiguring: Reconfiguring?
    /// The exam may be shown: the session began, or this is a test run.
    var examShown = false
    var quitting = false
    var running = true
    var exitStatus: Int32 = 0
    var afterPaintHandler: gulong = 0
    /// Set when the web process died during the exam: the notice shown until the window is closed.
    var examStopped: String?

    init(options: Options, configuration: SEBConfiguration, settings: BrowserSettings, extensionPath: String?) {
        self.options = options
        self.configuration = configuration
        self.settings = settings
        self.configKey = configuration.configKey
        self.extensionPath = extensionPath
        self.browserExamKey = BrowserExamKey.compute(settings: configuration.settings,
                                                     buildDigest: buildDigest(extensionPath: extensionPath))
    }

    // MARK: - Building the window

    func run() -> Int32 {
        gtk_init()
        // SIGTERM (Carrel stopping its app, or the unit) ends the main loop
        // like a quit, so the extension's folder is removed on the way out.
        _ = g_unix_signal_add(SIGTERM, { _ in
            browser.running = false
            return 0
        }, nil)
        buildWebView()
        filterWebSockets()
        buildWindow()
        gtk_window_present(window.withMemoryRebound(to: GtkWindow.self, capacity: 1) { $0 })
        lockWhenDrawn()
        while running {
            g_main_context_iteration(nil, 1)
        }
        session = nil
        manager = nil
        if let dir = extensionDirectory {
            try? FileManager.default.removeItem(atPath: dir)
        }
        return exitStatus
    }

    private func gtkWindow() -> UnsafeMutablePointer<GtkWindow> { UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWindow.self) }

    private func box(_ orientation: GtkOrientation, spacing: Int32) -> UnsafeMutablePointer<GtkWidget> {
        gtk_box_new(orientation, spacing)
    }

    private func append(_ box: UnsafeMutablePointer<GtkWidget>, _ child: UnsafeMutablePointer<GtkWidget>) {
        gtk_box_append(UnsafeMutableRawPointer(box).assumingMemoryBound(to: GtkBox.self), child)
    }

    private func button(_ label: String, mnemonic: Bool = false,
                        _ handler: @escaping @convention(c) (gpointer?, gpointer?) -> Void) -> UnsafeMutablePointer<GtkWidget> {
        let b = (mnemonic ? gtk_button_new_with_mnemonic(label) : gtk_button_new_with_label(label))!
        connect(raw(b), "clicked", handler)
        return b
    }

    func buildWindow() {
        window = gtk_window_new()
        gtk_window_set_title(gtkWindow(), "Exam")
        gtk_window_set_decorated(gtkWindow(), 0)
        gtk_window_fullscreen(gtkWindow())
        connect(raw(window), "close-request", { (_: gpointer?, _: gpointer?) -> gboolean in
            // Closing is quitting: the same path as the quit control.
            browser.requestQuit()
            return 1
        } as @convention(c) (gpointer?, gpointer?) -> gboolean)

        let outer = box(GTK_ORIENTATION_VERTICAL, spacing: 0)
        bar = box(GTK_ORIENTATION_HORIZONTAL, spacing: 6)
        gtk_widget_set_margin_start(bar, 6)
        gtk_widget_set_margin_end(bar, 6)
        gtk_widget_set_margin_top(bar, 4)
        gtk_widget_set_margin_bottom(bar, 4)
        fillBar()
        append(outer, bar)
        banner = gtk_label_new("")
        gtk_label_set_wrap(OpaquePointer(banner), 1)
        gtk_widget_set_margin_top(banner, 6)
        gtk_widget_set_margin_bottom(banner, 6)
        gtk_widget_set_visible(banner, 0)
        append(outer, banner)

        stack = gtk_stack_new()
        gtk_widget_set_vexpand(stack, 1)
        let stackPointer = OpaquePointer(stack)
        status = gtk_label_new("Locking the machine for the exam…")
        gtk_label_set_wrap(OpaquePointer(status), 1)
        gtk_label_set_justify(OpaquePointer(status), GTK_JUSTIFY_CENTER)
        gtk_widget_set_margin_start(status, 48)
        gtk_widget_set_margin_end(status, 48)
        gtk_stack_add_named(stackPointer, status, "status")
        gtk_stack_add_named(stackPointer, typed(OpaquePointer(webView)), "web")
        gtk_stack_add_named(stackPointer, buildQuitPage(), "quit")
        gtk_stack_add_named(stackPointer, buildConfirmQuitPage(), "confirm-quit")
        gtk_stack_add_named(stackPointer, buildConfigurationPasswordPage(), "configuration-password")
        gtk_stack_set_visible_child_name(stackPointer, "status")
        append(outer, stack)
        gtk_window_set_child(gtkWindow(), outer)

        let keys = gtk_event_controller_key_new()
        gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE)
        connect(raw(keys), "key-pressed", { (_: gpointer?, keyval: guint, _: guint, state: GdkModifierType, _: gpointer?) -> gboolean in
            browser.keyPressed(keyval: keyval, state: state) ? 1 : 0
        } as @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean)
        gtk_widget_add_controller(window, keys)
    }

    /// The bar's controls, as the configuration in force allows them.
    func fillBar() {
        while let child = gtk_widget_get_first_child(bar) {
            gtk_box_remove(UnsafeMutableRawPointer(bar).assumingMemoryBound(to: GtkBox.self), child)
        }
        if settings.allowBrowsingBackForward {
            append(bar, button("Back") { _, _ in webkit_web_view_go_back(browser.webView) })
        }
        if settings.allowReload {
            append(bar, button("Reload") { _, _ in browser.reload() })
        }
        progress = gtk_progress_bar_new()
        gtk_widget_set_hexpand(progress, 1)
        gtk_widget_set_valign(progress, GTK_ALIGN_CENTER)
        append(bar, progress)
        if options.testRun {
            append(bar, gtk_label_new("TEST RUN: not locked"))
        }
        if settings.allowQuit {
            append(bar, button("Quit") { _, _ in browser.requestQuit() })
        }
    }

    func buildQuitPage() -> UnsafeMutablePointer<GtkWidget> {
        let page = box(GTK_ORIENTATION_VERTICAL, spacing: 12)
        gtk_widget_set_valign(page, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(page, GTK_ALIGN_CENTER)
        append(page, gtk_label_new("Enter the quit password to leave the exam."))
        let entry = gtk_password_entry_new()!
        passwordEntry = entry
        connect(raw(entry), "activate", { (_: gpointer?, _: gpointer?) in browser.checkQuitPassword() }
                as @convention(c) (gpointer?, gpointer?) -> Void)
        append(page, entry)
        let message = gtk_label_new("")!
        passwordMessage = message
        append(page, message)
        let buttons = box(GTK_ORIENTATION_HORIZONTAL, spacing: 12)
        append(buttons, button("Quit") { _, _ in browser.checkQuitPassword() })
        append(buttons, button("Back to the exam") { _, _ in browser.showPage(browser.examShown ? "web" : "status") })
        append(page, buttons)
        return page
    }

    /// The quit URL's question (`quitURLConfirm`): in carrel-browser's own
    /// window, where the page can neither script nor answer it.
    func buildConfirmQuitPage() -> UnsafeMutablePointer<GtkWidget> {
        let page = box(GTK_ORIENTATION_VERTICAL, spacing: 12)
        gtk_widget_set_valign(page, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(page, GTK_ALIGN_CENTER)
        append(page, gtk_label_new("The exam asks to quit. End the exam and leave?"))
        let buttons = box(GTK_ORIENTATION_HORIZONTAL, spacing: 12)
        append(buttons, button("_Quit the exam", mnemonic: true) { _, _ in browser.answerQuitURL(confirmed: true) })
        let back = button("_Back to the exam", mnemonic: true) { _, _ in browser.answerQuitURL(confirmed: false) }
        confirmBackButton = back
        append(buttons, back)
        append(page, buttons)
        return page
    }

    /// The exam's web view, for the configuration in force. A new
    /// configuration gets a new one (a new web context, so a new web process
    /// whose extension holds the new keys and filter), on the same network
    /// session: the cookies, an LMS login among them, carry over.
    func buildWebView() {
        // The web process extension is loaded from a directory holding it alone.
        let context = webkit_web_context_new()
        if extensionPath != nil, let dir = extensionDirectory {
            // A new configuration's context: the folder made at start.
            webkit_web_context_set_web_process_extensions_directory(context, dir)
        } else if let path = extensionPath {
            // A fresh folder of its own (mkdtemp: never one a process that
            // ran before under the same pid left behind, perhaps as another
            // user), holding a copy, not a link: WebKit's sandbox shows the
            // web process this folder and nothing of where a link would
            // point. Without it the exam would have no SEB headers or
            // JavaScript API, so carrel-browser stops instead.
            var template = Array((NSTemporaryDirectory() as NSString)
                .appendingPathComponent("carrel-browser-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                fail("cannot make a folder for the web process extension in \(NSTemporaryDirectory()): "
                     + "\(String(cString: strerror(errno))); check TMPDIR is writable", status: 73)
            }
            let dir = String(cString: made)
            extensionDirectory = dir
            do {
                try FileManager.default.copyItem(atPath: path, toPath: dir + "/libCarrelBrowserExtension.so")
            } catch {
                try? FileManager.default.removeItem(atPath: dir)
                fail("cannot copy the web process extension \(path) into \(dir): \(error)", status: 73)
            }
            webkit_web_context_set_web_process_extensions_directory(context, dir)
        }
        if extensionPath != nil {
            // The filter's rules as decided here (block rules, then allow
            // rules, each the pattern this side decides navigations with):
            // the extension only runs them, on every request, when the
            // configuration filters content.
            let ruleType = g_variant_type_new("(bs)")
            let rules: [OpaquePointer?] = settings.filter.orderedRules.map { rule in
                let pair: [OpaquePointer?] = [g_variant_new_boolean(rule.action == .allow ? 1 : 0), g_variant_new_string(rule.pattern)]
                return pair.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
            }
            let ruleArray = rules.withUnsafeBufferPointer { g_variant_new_array(ruleType, $0.baseAddress, gsize($0.count)) }
            g_variant_type_free(ruleType)
            let children: [OpaquePointer?] = [g_variant_new_string(configKey), g_variant_new_string(browserExamKey),
                            g_variant_new_string(appVersion), g_variant_new_boolean(settings.sendBrowserExamKey ? 1 : 0),
                            g_variant_new_boolean(settings.filter.filtersContent ? 1 : 0), ruleArray]
            let tuple = children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
            webkit_web_context_set_web_process_extensions_initialization_user_data(context, tuple)
        } else {
            say("warning: no web process extension found; the SEB headers and JavaScript API are missing")
        }
        // Spell checking as the configuration allows it, and (after a
        // reconfiguration) only if the session began allowing it.
        let spellCheck = settings.allowSpellCheck && (sessionFeatures?.contains(.spellCheck) ?? true)
        webkit_web_context_set_spell_checking_enabled(context, spellCheck ? 1 : 0)
        webkit_web_context_set_cache_model(context, WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER)

        if networkSession == nil {
            // Nothing on disk: an ephemeral session (cookies, cache, storage in memory).
            networkSession = webkit_network_session_new_ephemeral()
            connect(raw(networkSession), "download-started", { (_: gpointer?, download: OpaquePointer?, _: gpointer?) in
                browser.downloadStarted(download)
            } as @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> Void)
        }

        var names: [UnsafePointer<CChar>?] = []
        var values = [GValue(), GValue()]
        let contextName = strdup("web-context")!, sessionName = strdup("network-session")!
        defer { free(contextName); free(sessionName) }
        names = [UnsafePointer(contextName), UnsafePointer(sessionName)]
        g_value_init(&values[0], webkit_web_context_get_type())
        g_value_set_object(&values[0], raw(context))
        g_value_init(&values[1], webkit_network_session_get_type())
        g_value_set_object(&values[1], raw(networkSession))
        let object = names.withUnsafeMutableBufferPointer { n in
            values.withUnsafeMutableBufferPointer { v in
                g_object_new_with_properties(webkit_web_view_get_type(), 2, n.baseAddress, v.baseAddress)
            }
        }
        g_value_unset(&values[0])
        g_value_unset(&values[1])
        g_object_unref(raw(context))   // the web view holds it
        webView = typed(OpaquePointer(object))
        g_object_ref_sink(raw(webView))
        gtk_widget_set_vexpand(typed(OpaquePointer(webView)), 1)

        let webSettings = webkit_web_view_get_settings(webView)
        webkit_settings_set_enable_developer_extras(webSettings, 0)
        webkit_settings_set_enable_javascript(webSettings, settings.enableJavaScript ? 1 : 0)
        webkit_settings_set_javascript_can_open_windows_automatically(webSettings, 0)
        webkit_settings_set_enable_back_forward_navigation_gestures(webSettings, settings.allowBrowsingBackForward ? 1 : 0)
        webkit_settings_set_zoom_text_only(webSettings, settings.zoomMode == 1 ? 1 : 0)
        let base = string(webkit_settings_get_user_agent(webSettings)) ?? "Mozilla/5.0"
        let suffix = settings.userAgentSuffix.isEmpty ? "" : " " + settings.userAgentSuffix
        // "SEB" in the user agent: Moodle looks for it before it checks the keys.
        webkit_settings_set_user_agent(webSettings, base + " SEB/3.0 (\(appVersion))" + suffix)

        let view = raw(webView)
        // A web view a reconfiguration replaced decides nothing more: what it still asks is refused.
        connect(view, "decide-policy", { (view: gpointer?, decision: UnsafeMutablePointer<WebKitPolicyDecision>?, type: WebKitPolicyDecisionType, _: gpointer?) -> gboolean in
            guard view == raw(browser.webView) else {
                webkit_policy_decision_ignore(decision)
                return 1
            }
            return browser.decidePolicy(decision, type) ? 1 : 0
        } as @convention(c) (gpointer?, UnsafeMutablePointer<WebKitPolicyDecision>?, WebKitPolicyDecisionType, gpointer?) -> gboolean)
        connect(view, "create", { (_: gpointer?, _: OpaquePointer?, _: gpointer?) -> OpaquePointer? in
            nil   // no second window, ever: decide-policy has loaded it here or refused it
        } as @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> OpaquePointer?)
        connect(view, "context-menu", { (_: gpointer?, menu: OpaquePointer?, _: OpaquePointer?, _: gpointer?) -> gboolean in
            browser.contextMenu(menu) ? 1 : 0
        } as @convention(c) (gpointer?, OpaquePointer?, OpaquePointer?, gpointer?) -> gboolean)
        connect(view, "print", { (_: gpointer?, _: OpaquePointer?, _: gpointer?) -> gboolean in
            if browser.settings.allowPrint { return 0 }
            say("refused: printing")
            return 1
        } as @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean)
        connect(view, "run-file-chooser", { (_: gpointer?, request: OpaquePointer?, _: gpointer?) -> gboolean in
            if browser.settings.allowDownUploads { return 0 }
            webkit_file_chooser_request_cancel(request)
            say("refused: file upload")
            return 1
        } as @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean)
        connect(view, "permission-request", { (_: gpointer?, request: OpaquePointer?, _: gpointer?) -> gboolean in
            // Camera, microphone, location, notifications, pointer lock …: none in an exam.
            webkit_permission_request_deny(request)
            return 1
        } as @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean)
        connect(view, "notify::estimated-load-progress", { (view: gpointer?, _: gpointer?, _: gpointer?) in
            guard view == raw(browser.webView) else { return }
            // The blank page that replaces a hidden exam shows no progress.
            let fraction = browser.examShown ? webkit_web_view_get_estimated_load_progress(browser.webView) : 0
            gtk_progress_bar_set_fraction(OpaquePointer(browser.progress), fraction)
        } as @convention(c) (gpointer?, gpointer?, gpointer?) -> Void)
        connect(view, "load-changed", { (view: gpointer?, event: WebKitLoadEvent, _: gpointer?) in
            guard view == raw(browser.webView) else { return }
            if event == WEBKIT_LOAD_FINISHED {
                gtk_progress_bar_set_fraction(OpaquePointer(browser.progress), 0)
                // The blank page that replaces a hidden exam is not worth a line.
                if browser.examShown { say("loaded \(string(webkit_web_view_get_uri(browser.webView)) ?? "")") }
            }
        } as @convention(c) (gpointer?, WebKitLoadEvent, gpointer?) -> Void)
        connect(view, "web-process-terminated", { (view: gpointer?, reason: WebKitWebProcessTerminationReason, _: gpointer?) in
            // A replaced web view's process ending is the end of nothing.
            guard view == raw(browser.webView) else { return }
            browser.webProcessEnded(reason)
        } as @convention(c) (gpointer?, WebKitWebProcessTerminationReason, gpointer?) -> Void)
    }

    /// WebKit opens WebSocket connections without passing them through the
    /// extension's send-request, where the content filter decides every
    /// other request; it does check them against the web view's content
    /// rule lists. So with the content filter on, the filter's rules go to
    /// WebKit as such a list, for WebSockets alone (CarrelSEB's
    /// WebSocketRules): a WebSocket to a URL the rules allow connects, one
    /// they block is refused before it leaves. The exam is shown only once
    /// the list is in place.
    func filterWebSockets() {
        guard settings.filter.filtersContent else { return }
        guard let dir = extensionDirectory else {
            say("warning: no web process extension: the content filter is off in this test run")
            webSocketsFiltered = true
            return
        }
        let list = WebSocketRules.list(for: settings.filter)
        for line in list.unwritten { say("warning: WebSockets: \(line)") }
        let store = webkit_user_content_filter_store_new(dir + "/content-filters")
        let bytes = list.json.withCString { g_bytes_new($0, gsize(strlen($0))) }
        webkit_user_content_filter_store_save(store, "carrel-websockets", bytes, nil, { source, result, _ in
            browser.webSocketRulesSaved(OpaquePointer(source), result)
        }, nil)
        g_bytes_unref(bytes)
    }

    func webSocketRulesSaved(_ store: OpaquePointer?, _ result: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let filter = webkit_user_content_filter_store_save_finish(store, result, &error)
        g_object_unref(raw(store))
        guard let filter else {
            let why = error.map { String(cString: $0.pointee.message) } ?? "unknown"
            if let error { g_error_free(error) }
            say("refused: cannot filter WebSocket connections (\(why))")
            showWhenWebSocketsFiltered = false
            exitStatus = 70
            setStatus("The exam cannot start: carrel-browser could not put its content filter in place (\(why)).\n\nAsk the invigilator.")
            if let session, session.isActive { session.end() }
            return
        }
        webkit_user_content_manager_add_filter(webkit_web_view_get_user_content_manager(webView), filter)
        webkit_user_content_filter_unref(filter)
        webSocketsFiltered = true
        if showWhenWebSocketsFiltered {
            showWhenWebSocketsFiltered = false
            showExam()
        }
    }

    // MARK: - The session

    /// Begins once GDK has committed the window's first frame.
    func lockWhenDrawn() {
        guard let surface = gtk_native_get_surface(OpaquePointer(window)) else { return notLocked("the window has no surface") }
        let clock = gdk_surface_get_frame_clock(surface)
        afterPaintHandler = connect(raw(clock), "after-paint", { (clock: gpointer?, _: gpointer?) in
            g_signal_handler_disconnect(clock, browser.afterPaintHandler)
            browser.lock()
        } as @convention(c) (gpointer?, gpointer?) -> Void)
        gtk_widget_queue_draw(window)
    }

    func lock() {
        let display = gtk_widget_get_display(window)
        guard let display, g_type_check_instance_is_a(typed(display),
                                                      gdk_wayland_display_get_type()) != 0,
              let surface = gtk_native_get_surface(OpaquePointer(window)),
              let wlDisplay = gdk_wayland_display_get_wl_display(display),
              let wlSurface = gdk_wayland_surface_get_wl_surface(surface) else {
            return notLocked("GTK is not on Wayland (start carrel-browser with GDK_BACKEND=wayland inside Carrel)")
        }
        do {
            let manager = try WaylandAssessmentManager(display: wlDisplay, surface: wlSurface)
            self.manager = manager
            var features = Set<AssessmentFeature>()
            for name in options.allowedFeatures {
                if let feature = AssessmentFeature(protocolName: name) { features.insert(feature) }
            }
            if settings.allowSpellCheck { features.insert(.spellCheck) }
            sessionFeatures = features
            let session = AssessmentSession(configuration: AssessmentConfiguration(allowedFeatures: features), manager: manager)
            session.delegate = self
            self.session = session
            say("locking")
            session.begin()
        } catch let error as AssessmentError {
            notLocked("\(error.code.protocolName): \(error.message)")
        } catch {
            notLocked("\(error)")
        }
    }

    func notLocked(_ why: String) {
        if options.testRun {
            say("test run: not locked (\(why))")
            showExam()
        } else {
            say("refused: not inside Carrel (\(why))")
            setStatus("This exam can only be taken inside Carrel, which locks the machine for it.\n\n"
                + "(\(why))\n\nAsk the invigilator. To try a configuration without locking, run carrel-browser --test-run.")
            exitStatus = 3
        }
    }

    func assessmentSessionDidBegin(_ session: AssessmentSession) {
        say("event began")
        showExam()
    }

    func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {
        say("event failed \(error.code.protocolName) \(error.message)")
        exitStatus = 2
        let why: String
        switch error.code.protocolName {
        case "already_active": why = "Another exam already holds this machine."
        case "surface_not_ready": why = "The exam window was not ready."
        default: why = "Carrel could not lock the machine."
        }
        setStatus("The exam cannot start: \(why)\n\n(\(error.code.protocolName): \(error.message))\n\nAsk the invigilator.")
    }

    func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError) {
        // Hide the exam first: the machine is no longer wholly locked.
        hideExam("The exam is paused: the machine is no longer locked (\(error.code.protocolName)). Ask the invigilator.")
        say("event interrupted \(error.code.protocolName) \(error.message)")
        say("content hidden")
        session.end()
    }

    func assessmentSessionDidEnd(_ session: AssessmentSession) {
        if let stopped = examStopped, !quitting {
            // The notice stays for the invigilator; closing the window quits.
            setStatus(stopped)
            say("event ended")
            return
        }
        hideExam("The exam has ended.")
        say("event ended")
        running = false
    }

    /// The web process that showed the exam died (crashed, killed, out of
    /// memory). What the student had typed is gone with it, and whatever
    /// killed it may still be at work: the exam is hidden and its session
    /// ended, not reloaded. The notice says why; closing the window quits
    /// (exit 4).
    func webProcessEnded(_ reason: WebKitWebProcessTerminationReason) {
        let why: String
        switch reason {
        case WEBKIT_WEB_PROCESS_CRASHED: why = "crashed"
        case WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT: why = "exceeded_memory_limit"
        default: why = "terminated"
        }
        say("web process ended \(why)")
        guard examShown, !quitting else { return }
        let notice = "The exam stopped: the page's web process ended (\(why)). The exam has ended on this machine.\n\nAsk the invigilator."
        examStopped = notice
        exitStatus = 4
        hideExam(notice)
        say("content hidden")
        if let session, session.isActive { session.end() }
    }

    // MARK: - Showing and hiding

    func showExam() {
        if settings.filter.filtersContent && !webSocketsFiltered {
            showWhenWebSocketsFiltered = true
            return
        }
        examShown = true
        showPage("web")
        // Keys go to the page (and its text fields to the input method), not to the bar's buttons.
        gtk_widget_grab_focus(typed(OpaquePointer(webView)))
        say("loading \(settings.startURL)")
        load(settings.startURL)
    }

    func hideExam(_ message: String) {
        examShown = false
        confirmingQuit = false
        // A configuration waiting for its password is dropped; one being
        // fetched is dropped when it arrives (the exam is not shown then).
        if reconfiguring?.bytes != nil { reconfiguring = nil }
        setStatus(message)
        webkit_web_view_stop_loading(webView)
        webkit_web_view_load_html(webView, "<!doctype html><title>Paused</title>", "about:blank")
    }

    func setStatus(_ text: String) {
        gtk_label_set_text(OpaquePointer(status), text)
        showPage("status")
    }

    func showPage(_ name: String) {
        gtk_stack_set_visible_child_name(OpaquePointer(stack), name)
    }

    func load(_ url: String) {
        webkit_web_view_load_uri(webView, url)
    }

    func reload() {
        guard examShown, settings.allowReload else { return }
        webkit_web_view_reload(webView)
    }

    // MARK: - Policy

    /// true: handled here (WebKit must not act on it).
    func decidePolicy(_ decision: UnsafeMutablePointer<WebKitPolicyDecision>?, _ type: WebKitPolicyDecisionType) -> Bool {
        switch type {
        case WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION, WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION:
            let action = webkit_navigation_policy_decision_get_navigation_action(OpaquePointer(decision))
            let request = webkit_navigation_action_get_request(action)
            let uri = string(webkit_uri_request_get_uri(request)) ?? ""
            if SEBLink.isLink(uri) {
                // A seb(s):// link (clicked, a redirect, a script): never
                // WebKit's to open; carrel-browser reconfigures or refuses.
                webkit_policy_decision_ignore(decision)
                reconfigureRequested(uri)
                return true
            }
            if type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION {
                webkit_policy_decision_ignore(decision)
                let byLink = webkit_navigation_action_get_navigation_type(action) == WEBKIT_NAVIGATION_TYPE_LINK_CLICKED
                let policy = byLink ? settings.linkPolicy : settings.scriptPolicy
                if policy == .block {
                    say("refused: new window for \(uri)")
                } else {
                    say("new window opened in this window: \(uri)")
                    navigate(to: uri)
                }
                return true
            }
            if uri == "about:blank" || uri.hasPrefix("about:blank#") {
                webkit_policy_decision_use(decision)
                return true
            }
            if let refusal = refusal(for: uri) {
                webkit_policy_decision_ignore(decision)
                say("blocked \(uri)")
                // WebKit does not say whether a main frame or a frame inside
                // the page asked: a frame whose source is this URL gets
                // Carrel's refusal in its place; else the page stays, with
                // the refusal above it.
                showRefusalInFrame(uri, refusal)
                return true
            }
            if let action = settings.quitURLAction(uri) {
                webkit_policy_decision_ignore(decision)
                quitURLReached(uri, action)
                return true
            }
            webkit_policy_decision_use(decision)
            return true
        case WEBKIT_POLICY_DECISION_TYPE_RESPONSE:
            if webkit_response_policy_decision_is_mime_type_supported(OpaquePointer(decision)) != 0 { return false }
            if settings.allowDownUploads {
                webkit_policy_decision_download(decision)
            } else {
                let response = webkit_response_policy_decision_get_response(OpaquePointer(decision))
                say("refused: download of \(string(webkit_uri_response_get_uri(response)) ?? "")")
                webkit_policy_decision_ignore(decision)
            }
            return true
        default:
            return false
        }
    }

    /// Loads `uri` in the one window if the filter allows it.
    func navigate(to uri: String) {
        if SEBLink.isLink(uri) {
            reconfigureRequested(uri)
        } else if let refusal = refusal(for: uri) {
            say("blocked \(uri)")
            showRefusal(uri, refusal)
        } else if let action = settings.quitURLAction(uri) {
            quitURLReached(uri, action)
        } else {
            load(uri)
        }
    }

    /// Why `uri` may not be loaded; nil when it may.
    func refusal(for uri: String) -> String? {
        guard examShown else { return "the exam is not shown" }
        let lower = uri.lowercased()
        // A page's own content, which no request fetches: frames written by
        // the page (about:srcdoc, as rich-text editors make them), blob: and data:.
        if lower == "about:srcdoc" || lower.hasPrefix("blob:") || lower.hasPrefix("data:") { return nil }
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return "only web pages (http and https) open in the exam"
        }
        if settings.isQuitURL(uri) { return nil }
        switch settings.filter.decide(uri) {
        case .allow: return nil
        case .block(let rule?): return "the exam's configuration blocks it (rule \(rule))"
        case .block(nil): return "the exam's configuration does not allow it"
        }
    }

    /// Refusals waiting for the page to say whether a frame showed them.
    var pendingFrameRefusals: [UInt: (uri: String, reason: String)] = [:]
    var nextFrameRefusal: UInt = 1

    /// Carrel's refusal in place of the frames (iframe, frame) whose source
    /// is `uri`, found through the page's DOM from a script world of
    /// carrel-browser's own (the page's scripts cannot see or replace its
    /// functions): each gets the refusal as its `srcdoc`, a document of the
    /// page's own that no request fetches. WebKit's navigation policy does
    /// not say which frame asked, so a frame is known by its `src`; where
    /// none has it (the main frame's navigation, a frame a link or a script
    /// navigated, a frame in a document of another origin) the refusal shows
    /// above the page instead. No request is made for `uri` either way.
    func showRefusalInFrame(_ uri: String, _ reason: String) {
        let id = nextFrameRefusal
        nextFrameRefusal += 1
        pendingFrameRefusals[id] = (uri, reason)
        let arguments = (try? JSONSerialization.data(withJSONObject: [uri, refusalHTML(uri, reason, inFrame: true)]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let script = """
            (function (url, html) {
              var shown = 0;
              function visit(doc) {
                var frames = doc.querySelectorAll("iframe, frame");
                for (var i = 0; i < frames.length; i++) {
                  var frame = frames[i];
                  if (frame.src === url) {
                    frame.setAttribute("srcdoc", html);
                    shown++;
                  } else {
                    try { if (frame.contentDocument) visit(frame.contentDocument); } catch (e) {}
                  }
                }
              }
              visit(document);
              return shown;
            }).apply(null, \(arguments))
            """
        webkit_web_view_evaluate_javascript(webView, script, -1, "carrel-browser", nil, nil, { view, result, data in
            browser.frameRefusalAnswered(OpaquePointer(view), result, UInt(bitPattern: data))
        }, UnsafeMutableRawPointer(bitPattern: id))
    }

    func frameRefusalAnswered(_ view: OpaquePointer?, _ result: OpaquePointer?, _ id: UInt) {
        var error: UnsafeMutablePointer<GError>?
        let value = webkit_web_view_evaluate_javascript_finish(typed(view), result, &error)
        var shown: Int32 = 0
        if let value {
            if jsc_value_is_number(value) != 0 { shown = jsc_value_to_int32(value) }
            g_object_unref(raw(value))
        }
        if let error { g_error_free(error) }
        guard let (uri, reason) = pendingFrameRefusals.removeValue(forKey: id) else { return }
        guard typed(view) == webView, examShown else { return }
        if shown > 0 {
            say("refusal shown in place of the frame for \(uri)")
        } else {
            showRefusalBanner(uri, reason)
        }
    }

    /// Carrel's refusal above the page that asked for a blocked one (no request is made for it).
    func showRefusalBanner(_ uri: String, _ reason: String) {
        showBanner("Carrel blocked \(uri): \(reason).")
        say("refusal shown for \(uri)")
    }

    /// A line of carrel-browser's own above the page, for a few seconds.
    func showBanner(_ text: String) {
        gtk_label_set_text(OpaquePointer(banner), text)
        gtk_widget_set_visible(banner, 1)
        if bannerTimeout != 0 { g_source_remove(bannerTimeout) }
        bannerTimeout = g_timeout_add_seconds(8, { _ in
            gtk_widget_set_visible(browser.banner, 0)
            browser.bannerTimeout = 0
            return 0
        }, nil)
    }

    /// Carrel's own refusal page, when carrel-browser itself was asked to load
    /// a blocked page (the start URL, a new window): no request is made for it.
    func showRefusal(_ uri: String, _ reason: String) {
        webkit_web_view_load_html(webView, refusalHTML(uri, reason, inFrame: false), "about:blank")
        say("refusal page shown for \(uri)")
    }

    /// Carrel's refusal as a document: the page's own, or a frame's in its place.
    func refusalHTML(_ uri: String, _ reason: String, inFrame: Bool) -> String {
        func escape(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let what = inFrame ? "this frame" : "this page"
        let after = inFrame ? "The rest of the page is the exam's."
            : "Go back to the exam\(settings.allowBrowsingBackForward ? " with Back" : "")."
        return """
            <!doctype html><html><head><meta charset="utf-8"><title>Blocked</title>
            <style>body{font:16px sans-serif;margin:\(inFrame ? "1em" : "4em");color:#222}h1{font-size:1.4em}code{word-break:break-all}</style></head>
            <body><h1>Carrel blocked \(what)</h1><p>\(escape(reason)).</p><p><code>\(escape(uri))</code></p>
            <p>Nothing was sent to it. \(after)</p></body></html>
            """
    }

    func contextMenu(_ menu: OpaquePointer?) -> Bool {
        guard settings.enableRightMouse else { return true }
        // Only editing and spelling: no "open in new window", download, inspect or view source.
        let allowed: Set<UInt32> = [WEBKIT_CONTEXT_MENU_ACTION_COPY.rawValue, WEBKIT_CONTEXT_MENU_ACTION_CUT.rawValue,
                                    WEBKIT_CONTEXT_MENU_ACTION_PASTE.rawValue, WEBKIT_CONTEXT_MENU_ACTION_SELECT_ALL.rawValue,
                                    WEBKIT_CONTEXT_MENU_ACTION_DELETE.rawValue, WEBKIT_CONTEXT_MENU_ACTION_SPELLING_GUESS.rawValue,
                                    WEBKIT_CONTEXT_MENU_ACTION_NO_GUESSES_FOUND.rawValue,
                                    WEBKIT_CONTEXT_MENU_ACTION_IGNORE_SPELLING.rawValue,
                                    WEBKIT_CONTEXT_MENU_ACTION_LEARN_SPELLING.rawValue]
        var index = Int32(webkit_context_menu_get_n_items(menu)) - 1
        while index >= 0 {
            let item = webkit_context_menu_get_item_at_position(menu, guint(index))
            let action = webkit_context_menu_item_get_stock_action(item)
            if !allowed.contains(action.rawValue) { webkit_context_menu_remove(menu, item) }
            index -= 1
        }
        return webkit_context_menu_get_n_items(menu) == 0
    }

    func downloadStarted(_ download: OpaquePointer?) {
        // carrel-browser's own fetch of a seb(s):// link's configuration.
        if let reconfiguring, reconfiguring.download == download || (reconfiguring.download == nil
            && string(webkit_uri_request_get_uri(webkit_download_get_request(download))) == reconfiguring.url) { return }
        if !settings.allowDownUploads {
            say("refused: download")
            webkit_download_cancel(download)
        }
    }

    /// The shortcuts the configuration allows; true swallows the key.
    func keyPressed(keyval: guint, state: GdkModifierType) -> Bool {
        let control = state.rawValue & GDK_CONTROL_MASK.rawValue != 0
        let alt = state.rawValue & GDK_ALT_MASK.rawValue != 0
        let key = Int32(keyval)
        if confirmingQuit {
            // The question's own keys (its buttons' mnemonics, and Escape for "no").
            if key == GDK_KEY_Escape || (alt && (key == GDK_KEY_b || key == GDK_KEY_B)) {
                answerQuitURL(confirmed: false)
                return true
            }
            if alt && (key == GDK_KEY_q || key == GDK_KEY_Q) {
                answerQuitURL(confirmed: true)
                return true
            }
        }
        if key == GDK_KEY_F5 || (control && (key == GDK_KEY_r || key == GDK_KEY_R)) {
            reload()
            return true
        }
        if alt && (key == GDK_KEY_Left || key == GDK_KEY_Right) {
            if settings.allowBrowsingBackForward && examShown {
                if key == GDK_KEY_Left { webkit_web_view_go_back(webView) } else { webkit_web_view_go_forward(webView) }
            }
            return true
        }
        if control && [GDK_KEY_plus, GDK_KEY_equal, GDK_KEY_minus, GDK_KEY_0, GDK_KEY_KP_Add, GDK_KEY_KP_Subtract].contains(key) {
            let zoomAllowed = settings.zoomMode == 1 ? settings.enableZoomText : settings.enableZoomPage
            if zoomAllowed {
                var level = webkit_web_view_get_zoom_level(webView)
                switch key {
                case GDK_KEY_0: level = 1
                case GDK_KEY_minus, GDK_KEY_KP_Subtract: level = max(0.3, level / 1.1)
                default: level = min(3.0, level * 1.1)
                }
                webkit_web_view_set_zoom_level(webView, level)
            }
            return true
        }
        if control && (key == GDK_KEY_q || key == GDK_KEY_Q) {
            requestQuit()
            return true
        }
        // Printing, saving, opening, view source, developer tools: never as shortcuts.
        if control && [GDK_KEY_p, GDK_KEY_P, GDK_KEY_s, GDK_KEY_S, GDK_KEY_o, GDK_KEY_O, GDK_KEY_u, GDK_KEY_U,
                       GDK_KEY_n, GDK_KEY_N, GDK_KEY_t, GDK_KEY_T, GDK_KEY_I, GDK_KEY_J].contains(key) {
            return true
        }
        if key == GDK_KEY_F12 || key == GDK_KEY_F11 { return true }
        return false
    }

    // MARK: - Quitting

    /// The quit URL was reached (never requested): quit, or first ask in
    /// carrel-browser's own window when the configuration says to.
    func quitURLReached(_ uri: String, _ action: BrowserSettings.QuitURLAction) {
        say("quit URL \(uri)")
        switch action {
        case .quit:
            quit()
        case .confirmFirst:
            guard examShown, !quitting else { return }
            confirmingQuit = true
            showPage("confirm-quit")
            // Not the quit button: a key the student was typing must not answer it.
            if let back = confirmBackButton { gtk_widget_grab_focus(back) }
            say("asking to confirm quitting")
        }
    }

    func answerQuitURL(confirmed: Bool) {
        guard confirmingQuit else { return }
        confirmingQuit = false
        if confirmed {
            say("quit confirmed")
            quit()
        } else {
            say("quit not confirmed")
            showPage(examShown ? "web" : "status")
            if examShown { gtk_widget_grab_focus(typed(OpaquePointer(webView))) }
        }
    }

    /// The quit control: asks for the quit password when the configuration has one.
    func requestQuit() {
        // With no exam shown (not begun, failed, refused) there is nothing to guard.
        guard examShown else { return quit() }
        guard settings.allowQuit else { return }
        if settings.hashedQuitPassword != nil {
            showPage("quit")
            if let entry = passwordEntry { gtk_widget_grab_focus(entry) }
        } else {
            quit()
        }
    }

    func checkQuitPassword() {
        guard let entry = passwordEntry, let hashed = settings.hashedQuitPassword else { return }
        let text = string(gtk_editable_get_text(OpaquePointer(entry))) ?? ""
        gtk_editable_set_text(OpaquePointer(entry), "")
        if QuitPassword.matches(text, hashed: hashed) {
            quit()
        } else {
            say("refused: wrong quit password")
            gtk_label_set_text(OpaquePointer(passwordMessage!),
                               "That is not the quit password.")
        }
    }

    /// Ends the session (the app quits at `ended`), or quits at once when none holds.
    func quit() {
        guard !quitting else { return }
        quitting = true
        if let session, session.isActive {
            hideExam(examStopped ?? "Ending the exam…")
            session.end()
        } else {
            running = false
        }
    }
}

/// The one browser, for the C callbacks (which carry no Swift context).
nonisolated(unsafe) var browser: Browser!
