#ifndef CARREL_PROTOCOL_CODE_H
#define CARREL_PROTOCOL_CODE_H

// The wl_interface tables wayland-scanner generates ("private-code") for every
// protocol in protocols/. They are the same for the server and the client
// side, so they are compiled once here and linked into Carrel and into its
// clients alike; the side-specific headers live in CarrelShim and
// CarrelClientShim. The symbols they reference (wl_surface_interface, ...)
// come from libwayland-server or libwayland-client, whichever the program links.

#endif
