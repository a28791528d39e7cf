"""The image a school flashes (meson-helpers/build-image), booted through its
own bootloader: by BIOS (SeaBIOS, then GRUB from the MBR) and by UEFI (OVMF,
then GRUB at the removable-media path). test-seat builds it with
--test-console, the only difference from a school's image: a root shell on
the serial console to look inside."""

import os

import pytest

from conftest import BOOT_TO_EXAM_S, artifacts_dir, figure, run_dir
from seatvm import Guest, make_overlay, require_tools


def boot_image(firmware):
    image = os.environ.get("CARREL_SEAT_IMAGE")
    if not image or not os.path.exists(image):
        pytest.fail("CARREL_SEAT_IMAGE is not set to build-image's image; run the scenarios through "
                    "meson-helpers/test-seat, which builds it", pytrace=False)
    require_tools()
    work = os.path.join(run_dir(), "work")
    overlay = make_overlay(image, os.path.join(work, f"image-{firmware}.qcow2"))
    return Guest(name=f"image-{firmware}", disk=overlay, workdir=work, artifacts=artifacts_dir(),
                 firmware=firmware).start()


@pytest.mark.parametrize("firmware", ["bios", "uefi"])
def test_the_flashable_image_boots_to_the_exam(firmware):
    guest = boot_image(firmware)
    try:
        _, seconds, _ = guest.wait_for_screen("start", BOOT_TO_EXAM_S, "boot")
        figure(f"power on → exam on screen (build-image's image, {firmware}, its bootloader, tcg): {seconds:.1f} s")
        serial = guest.serial
        serial.login()

        def sh(command):
            status, output = serial.run(command, timeout=60)
            assert status == 0, f"`{command}` exited {status}: {output}"
            return output.strip()

        # Every boot starts the same: the root is read-only, what changes is in memory.
        assert sh("findmnt -no OPTIONS /").split(",")[0] == "ro"
        for path in ("/home", "/var/log", "/var/lib/carrel", "/tmp"):
            assert sh(f"findmnt -no FSTYPE {path}") == "tmpfs", path
        assert sh("stat -c '%U %a' /home/exam") == "exam 700"
        # Nobody logs in at the machine: no getty on a console, root locked.
        assert sh("systemctl is-enabled getty@tty1.service || true") == "masked"
        assert sh("passwd -S root").split()[1] == "L"
        assert sh("systemctl is-active carrel-kiosk.service") == "active"
        assert sh("cat /proc/sys/kernel/sysrq") == "0"
        # No SSH key was given: sshd is off, and no host key shipped in the image.
        assert sh("systemctl is-enabled ssh.service || true") == "masked"
        assert sh("ls /etc/ssh | grep -c ssh_host_ || true") == "0"
    finally:
        guest.power_cut()
