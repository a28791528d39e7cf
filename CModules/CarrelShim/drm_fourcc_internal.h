#ifndef CARREL_SHIM_DRM_FOURCC_INTERNAL_H
#define CARREL_SHIM_DRM_FOURCC_INTERNAL_H

#include <stdint.h>

// DRM fourccs, spelled out to avoid depending on drm_fourcc.h.
#define CARREL_FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

#endif
