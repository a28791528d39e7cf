/* WebKitGTK 6.0, GTK 4 and GDK's Wayland backend (the display and surface
 * carrel-browser begins its assessment session on). */
#include <webkit/webkit.h>
#include <gtk/gtk.h>
#include <gdk/wayland/gdkwayland.h>
#include <glib-unix.h>
