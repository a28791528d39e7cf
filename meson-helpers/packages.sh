# Debian bookworm packages Carrel needs, sourced by setup scripts.
# build: compile Carrel; run: run it and its demo; test: the test suites' real clients.
CARREL_BUILD_PACKAGES=(pkg-config libwlroots-dev libwayland-dev libxkbcommon-dev libpixman-1-dev
  libsystemd-dev wayland-protocols libcairo2-dev)
# meson and ninja build libcarrel-assessment (clients/), the C client library.
CARREL_BUILD_PACKAGES+=(meson ninja-build gcc)
# zlib: CarrelSEB inflates .seb files.
CARREL_BUILD_PACKAGES+=(zlib1g-dev)
# carrel-browser, the exam browser for web exams (docs/BROWSER.md): WebKitGTK
# 6.0 and GTK 4. Optional for the compositor's build (Package.swift leaves the
# browser out without it); test-all installs it and requires the browser.
CARREL_BROWSER_PACKAGES=(libwebkitgtk-6.0-dev)
# fcitx5 and its engines: the policy's [input_method] (Japanese, Korean, Chinese); the CJK fonts draw its candidates.
# wvkbd: the policy's default [on_screen_keyboard]. galculator: the demo policy's calculator participant.
CARREL_RUN_PACKAGES=(xvfb x11-apps imagemagick weston
  fcitx5 fcitx5-modules fcitx5-mozc fcitx5-hangul fcitx5-chinese-addons fonts-noto-cjk wvkbd galculator)
CARREL_TEST_PACKAGES=(python3 python3-pytest python3-cryptography python3-venv wayland-utils grim wf-recorder wl-clipboard wtype
  swaybg foot util-linux cage xwayland xdotool x11-utils binutils
  nftables iproute2 dbus dbus-daemon python3-dbus python3-gi strace prometheus prometheus-node-exporter
  openssh-server openssh-client clustershell systemd-journal-remote
  # the seat: kbd (chvt) and seatd, which the kiosk units name (systemd-analyze verify);
  # mmdebstrap, QEMU, OVMF, GRUB and the disk tools for test-seat and build-image
  kbd seatd dosfstools mtools fdisk grub-pc-bin grub-efi-amd64-bin ovmf qemu-system-x86 qemu-utils mmdebstrap)
# systemd: systemd-analyze (the units' verify) and journald (the fleet's journal tests); a
# container's Debian may lack it, and under CI a test that skips for want of it fails.
CARREL_TEST_PACKAGES+=(systemd)
# The client library's example exams: GTK 4 in C and Python, PyQt6 on Qt's Wayland platform.
CARREL_TEST_PACKAGES+=(libgtk-4-dev gir1.2-gtk-4.0 python3-pyqt6 qt6-wayland)
# The Qt 6 C++ exam: g++ builds it; qt6-base-private-dev has the <qpa/...> header assessment-qt.h needs on Qt 6.4.
CARREL_TEST_PACKAGES+=(qt6-base-dev qt6-base-private-dev g++)
# An exam seat: what a machine running the shipped units needs at run time
# (docs/DEPLOY.md names each; meson-helpers/test-seat installs exactly these
# into its guest). wlroots and its libraries (DRM, libinput, libseat, Mesa's
# GBM for the DRM device's buffers); seatd opens the seat and leaves Carrel
# in its unit's cgroup; dbus for the session bus of dbus-run-session;
# nftables, util-linux (setpriv) and kbd (chvt: the units bring tty7 to the
# front) for the providers and the helper; procps for DEPLOY.md's checks; a font for the demo exam's Latin
# text and the CJK fonts and input method for its Japanese, Korean and
# Chinese; xkb-data for the keymaps; wvkbd and galculator, the shipped
# policy's keyboard and the demo's calculator.
CARREL_SEAT_PACKAGES=(systemd systemd-sysv udev dbus libwlroots10 libcairo2 libgbm1 libegl-mesa0
  libgl1-mesa-dri seatd nftables util-linux kbd procps xkb-data fonts-dejavu-core fonts-noto-cjk
  fcitx5 fcitx5-modules fcitx5-mozc fcitx5-hangul fcitx5-chinese-addons wvkbd galculator)
# newer wlroots: build wayland, libdrm and wlroots 0.17/0.18 from source, and
# for 0.19/0.20 also pixman, libxkbcommon (its parser needs bison) and
# libdisplay-info, with the DRM backend (hwdata) (meson-helpers/build-wlroots;
# libwlroots-dev above brings their libraries' -dev packages: libinput, gbm,
# EGL/GLES, libseat, xcb).
CARREL_NEWER_WLROOTS_PACKAGES=(gcc xz-utils python3-venv libseat-dev bison hwdata)

# carrel_install_missing PACKAGE...: installs the packages not yet installed.
# As root it runs apt-get; otherwise it uses sudo when available and says
# exactly what to install when not.
carrel_install_missing() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "carrel: installing missing Debian packages: ${missing[*]}" >&2
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "carrel: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Another apt on the machine (other work, or a leg running beside) holds
  # the lock for a while: wait for it rather than fail.
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

carrel_require_swift() {
  if ! command -v swift >/dev/null; then
    echo "carrel: swift is not on PATH; install Swift 6.1 or newer (swift.org) and retry" >&2
    return 1
  fi
}
