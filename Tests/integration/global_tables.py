"""The globals every role sees under the built-in policy, as literal interface
names (test_globals.py's expectation, shared with the newer-wlroots test)."""

# Every role's whole table under the built-in policy. The last two desktop
# globals exist only with a GPU renderer (absent with pixman).
DESKTOP_TABLE = {
    "wl_compositor", "wl_subcompositor", "wl_shm", "wl_seat", "wl_output",
    "wl_data_device_manager", "zwp_primary_selection_device_manager_v1",
    "xdg_wm_base", "zxdg_decoration_manager_v1", "zxdg_output_manager_v1",
    "wp_presentation", "wp_viewporter", "zwp_idle_inhibit_manager_v1",
    "zwp_linux_dmabuf_v1", "wl_drm",
}
GPU_ONLY = {"zwp_linux_dmabuf_v1", "wl_drm"}
