/*
 * Qt 6 helpers for libcarrel-assessment: a lockdown on the application's own
 * Wayland connection and a session for a QWindow.
 *
 *     #include <carrel/assessment-qt.h>
 *     lockdown = carrel_assessment_qt_create(&error);             // after the QGuiApplication exists
 *     session = carrel_assessment_qt_session_create(lockdown, widget->windowHandle(), configuration,
 *                                                   on_event, app);
 *     carrel_assessment_session_begin(session);                   // after the window's first frame
 *
 * Header-only (static inline), so the library itself never depends on Qt:
 * only an app that includes this header links Qt, as it does anyway.
 *
 * Qt 6.4 has no public API for the wl_display and a window's wl_surface
 * (QNativeInterface::QWaylandApplication came with 6.5), so this asks Qt's
 * platform native interface, a semi-public Qt Platform Abstraction header
 * that Qt's own Wayland extensions use. Debian ships it in
 * qt6-base-private-dev, outside the include path Qt6Gui.pc gives, so add it:
 *
 *     c++ -std=c++17 -fPIC app.cpp $(pkg-config --cflags --libs carrel-assessment-client Qt6Widgets) \
 *         -I"$(pkg-config --variable=includedir Qt6Gui)/QtGui/$(pkg-config --modversion Qt6Gui)/QtGui"
 *
 * (With CMake, link Qt6::GuiPrivate instead.) Qt must run on Wayland:
 * QT_QPA_PLATFORM=wayland under Carrel.
 */
#ifndef CARREL_ASSESSMENT_QT_H
#define CARREL_ASSESSMENT_QT_H

#ifndef __cplusplus
#error "carrel/assessment-qt.h is for C++ (Qt 6); C apps use carrel/assessment.h with their toolkit's pointers"
#endif

#include <carrel/assessment.h>
#include <QtCore/QByteArray>
#include <QtGui/QGuiApplication>
#include <QtGui/QWindow>
#if __has_include(<qpa/qplatformnativeinterface.h>)
#include <qpa/qplatformnativeinterface.h>
#else
#error "<qpa/qplatformnativeinterface.h> not found: install qt6-base-private-dev (Debian) and add -I$(pkg-config --variable=includedir Qt6Gui)/QtGui/$(pkg-config --modversion Qt6Gui)/QtGui"
#endif

/**
 * The wl_display of the running QGuiApplication, or NULL when there is none
 * or Qt does not run on Wayland.
 */
static inline struct wl_display *carrel_assessment_qt_display(void)
{
	if (!QGuiApplication::instance() || QGuiApplication::platformName() != QLatin1String("wayland"))
		return nullptr;
	QPlatformNativeInterface *native = QGuiApplication::platformNativeInterface();
	if (!native)
		return nullptr;
	return static_cast<struct wl_display *>(native->nativeResourceForIntegration(QByteArrayLiteral("wl_display")));
}

/**
 * The wl_surface of `window` (for a widget: widget->windowHandle()), or
 * NULL until the window has been shown on Wayland.
 */
static inline struct wl_surface *carrel_assessment_qt_surface(QWindow *window)
{
	if (!window || !carrel_assessment_qt_display())
		return nullptr;
	QPlatformNativeInterface *native = QGuiApplication::platformNativeInterface();
	return static_cast<struct wl_surface *>(native->nativeResourceForWindow(QByteArrayLiteral("surface"), window));
}

/**
 * The lockdown on the application's connection, its events dispatched by
 * Qt's own event loop. NULL with NOT_AVAILABLE when Qt does not run on
 * Wayland (start the app with QT_QPA_PLATFORM=wayland) or Carrel offers no
 * sessions to it.
 */
static inline struct carrel_assessment *carrel_assessment_qt_create(enum carrel_assessment_error *error)
{
	struct wl_display *display = carrel_assessment_qt_display();
	if (!display) {
		if (error)
			*error = CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE;
		return nullptr;
	}
	return carrel_assessment_create(display, nullptr, error);
}

/**
 * A session for `window`, which must be shown; NULL otherwise. Begin it once
 * Qt has committed the window's first frame (after its first paint event):
 * earlier, Carrel answers FAILED with SURFACE_NOT_READY and nothing is
 * restricted, so a new session may be tried a moment later.
 */
static inline struct carrel_assessment_session *carrel_assessment_qt_session_create(
	struct carrel_assessment *lockdown, QWindow *window, const struct carrel_assessment_configuration *configuration,
	carrel_assessment_event_fn callback, void *data)
{
	struct wl_surface *surface = carrel_assessment_qt_surface(window);
	if (!surface)
		return nullptr;
	return carrel_assessment_session_create(lockdown, surface, configuration, callback, data);
}

#endif
