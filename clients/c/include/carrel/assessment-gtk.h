/*
 * GTK 4 helpers for libcarrel-assessment: a lockdown and a session from a
 * GtkWindow, and a begin that waits for the window's first committed frame.
 *
 *     #include <carrel/assessment-gtk.h>
 *     lockdown = carrel_assessment_gtk_create(window, &error);
 *     session = carrel_assessment_gtk_session_create(lockdown, window, configuration, on_event, app);
 *     carrel_assessment_gtk_begin_when_drawn(window, session);
 *
 * Header-only (static inline), so the library itself never depends on GTK:
 * only an app that includes this header links GTK, as it does anyway.
 * Build with: pkg-config --cflags --libs carrel-assessment-client gtk4
 */
#ifndef CARREL_ASSESSMENT_GTK_H
#define CARREL_ASSESSMENT_GTK_H

#include <carrel/assessment.h>
#include <gdk/wayland/gdkwayland.h>
#include <gtk/gtk.h>

/**
 * The lockdown on the connection of `window`'s display. NULL with
 * NOT_AVAILABLE when GTK does not run on Wayland (start the app with
 * GDK_BACKEND=wayland) or Carrel offers no sessions to it.
 */
static inline struct carrel_assessment *carrel_assessment_gtk_create(GtkWindow *window,
                                                                     enum carrel_assessment_error *error)
{
	GdkDisplay *display = gtk_widget_get_display(GTK_WIDGET(window));
	if (!GDK_IS_WAYLAND_DISPLAY(display)) {
		if (error)
			*error = CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE;
		return NULL;
	}
	return carrel_assessment_create(gdk_wayland_display_get_wl_display(display), NULL, error);
}

/** A session for `window`, which must be realized (presented); NULL otherwise. */
static inline struct carrel_assessment_session *carrel_assessment_gtk_session_create(
	struct carrel_assessment *lockdown, GtkWindow *window, const struct carrel_assessment_configuration *configuration,
	carrel_assessment_event_fn callback, void *data)
{
	GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
	if (!surface || !GDK_IS_WAYLAND_SURFACE(surface))
		return NULL;
	return carrel_assessment_session_create(lockdown, gdk_wayland_surface_get_wl_surface(surface), configuration,
	                                        callback, data);
}

struct carrel_assessment_gtk_pending_begin {
	struct carrel_assessment_session *session;
	gulong handler;
};

static inline void carrel_assessment_gtk_after_paint(GdkFrameClock *clock, gpointer data)
{
	/* GDK commits the frame in its own after-paint handler, connected before
	 * this one: from here on Carrel finds the window mapped. */
	struct carrel_assessment_gtk_pending_begin pending = *(struct carrel_assessment_gtk_pending_begin *)data;
	g_signal_handler_disconnect(clock, pending.handler); /* frees data */
	enum carrel_assessment_error error = carrel_assessment_session_begin(pending.session);
	if (error != CARREL_ASSESSMENT_OK)
		g_warning("carrel-assessment: begin refused: %s", carrel_assessment_error_describe(error));
}

/**
 * Begins `session` once GDK has committed `window`'s next frame (a window
 * Carrel has not seen mapped fails with SURFACE_NOT_READY). A refusal of
 * begin itself is logged with g_warning. The session must outlive the wait.
 */
static inline void carrel_assessment_gtk_begin_when_drawn(GtkWindow *window, struct carrel_assessment_session *session)
{
	GdkFrameClock *clock = gdk_surface_get_frame_clock(gtk_native_get_surface(GTK_NATIVE(window)));
	struct carrel_assessment_gtk_pending_begin *pending = g_new0(struct carrel_assessment_gtk_pending_begin, 1);
	pending->session = session;
	pending->handler = g_signal_connect_data(clock, "after-paint", G_CALLBACK(carrel_assessment_gtk_after_paint),
	                                         pending, (GClosureNotify)(void (*)(void))g_free, 0);
	gtk_widget_queue_draw(GTK_WIDGET(window));
}

#endif
