#ifndef CARREL_SHIM_H
#define CARREL_SHIM_H

// The one place the compositor imports C from: the libraries' own API
// (carrel-shim-wlroots.h) and the shim's, one header per idea.

#include "carrel-shim-wlroots.h"
#include "carrel-shim-bridge.h"
#include "carrel-shim-memory-buffer.h"
#include "carrel-shim-wlroots-guards.h"
#include "carrel-shim-shm-pool-accounting.h"
#include "carrel-shim-audit-watch.h"
#include "carrel-shim-xdg-initial-configure.h"
#include "carrel-shim-popup-grab.h"
#include "carrel-shim-process.h"
#include "carrel-shim-output-magnifier.h"
#include "carrel-shim-scene-frame.h"
#include "carrel-shim-scene-clip.h"
#include "carrel-shim-text.h"
#include "carrel-shim-input-method-grab.h"

#endif
