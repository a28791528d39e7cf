"""A bootable disk image from a guest's root tree: GPT with a BIOS boot
partition, an EFI system partition and the root file system, booting by
GRUB from BIOS (SeaBIOS, a PC's legacy mode) and from UEFI (OVMF, every PC
since) alike, so one file written to a USB stick starts any exam machine.

Made without loop devices or mounts (which CI's sandbox may refuse): the
root file system by `mkfs.ext4 -d` at the partition's offset, the EFI
partition with mtools, GRUB's images with grub-mkimage and
grub-mkstandalone from the host's grub-pc-bin and grub-efi-amd64-bin. The
BIOS side is what grub-bios-setup does on a device: boot.img in the MBR's
code area, pointed at core.img in the BIOS boot partition, whose first
sector's block list is pointed at the rest of it.
"""

import os
import struct
import subprocess
import tempfile

SECTOR = 512
BIOS_START, BIOS_SECTORS = 2048, 2048          # 1 MiB at 1 MiB
ESP_START, ESP_SECTORS = 4096, 64 * 2048       # 64 MiB
ROOT_START = ESP_START + ESP_SECTORS
GPT_TAIL_SECTORS = 2048                        # room for the backup GPT, aligned

BIOS_BOOT_TYPE = "21686148-6449-6E6F-744E-656564454649"
ESP_TYPE = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
LINUX_TYPE = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"

# GRUB's i386-pc boot sector (include/grub/i386/pc/boot.h): where boot.img
# keeps the first sector of core.img, the drive to boot from, and the jump
# that checks the BIOS' drive number (some BIOSes pass a wrong one).
KERNEL_SECTOR_OFFSET = 0x5C
BOOT_DRIVE_OFFSET = 0x64
DRIVE_CHECK_OFFSET = 0x66
MBR_CODE_SIZE = 440                            # up to the disk signature and partition table
# The block list at the end of core.img's first sector (diskboot.img):
# start sector (8 bytes), sector count (2), load segment (2).
BLOCKLIST_OFFSET = SECTOR - 12
CORE_LOAD_SEGMENT = 0x820                      # GRUB_BOOT_I386_PC_KERNEL_SEG + one sector

GRUB_MODULES = ["part_gpt", "ext2", "search", "search_fs_uuid", "configfile", "normal", "linux", "echo", "test"]


class DiskError(Exception):
    pass


def run(argv, **kwargs):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    if result.returncode != 0:
        raise DiskError(f"`{' '.join(argv)}` exited {result.returncode}: {result.stdout.strip()[-2000:]}")
    return result


def grub_config(uuid, kernel, initrd, cmdline):
    """The menu GRUB reads from the root file system (/boot/grub/grub.cfg)."""
    return (
        "# Written by meson-helpers/build-image: boot the exam seat at once.\n"
        "set timeout=0\nset default=0\n"
        'menuentry "Carrel exam seat" {\n'
        f"  search --no-floppy --fs-uuid --set=root {uuid}\n"
        f"  linux /{kernel} root=UUID={uuid} {cmdline}\n"
        f"  initrd /{initrd}\n"
        "}\n")


def early_config(uuid):
    """Built into GRUB's images: find the root file system, read its menu."""
    return (f"search --no-floppy --fs-uuid --set=root {uuid}\n"
            "set prefix=($root)/boot/grub\n"
            "configfile ($root)/boot/grub/grub.cfg\n")


def make(root, out, *, uuid, kernel, initrd, cmdline, extra_mb=512):
    """Writes `out`: the tree `root` (which must hold `kernel` and `initrd`,
    paths relative to it) as a GPT disk booting by BIOS and UEFI; the menu
    is written into the tree first. Returns the image's size in bytes."""
    for tool in ("sfdisk", "mkfs.ext4", "mkfs.vfat", "mmd", "mcopy", "grub-mkimage", "grub-mkstandalone"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], stdout=subprocess.DEVNULL).returncode != 0:
            raise DiskError(f"{tool} is missing (apt-get install fdisk dosfstools mtools grub-pc-bin grub-efi-amd64-bin)")
    for relative in (kernel, initrd):
        if not os.path.isfile(os.path.join(root, relative)):
            raise DiskError(f"{relative} is not in {root}; the guest needs linux-image-amd64 and initramfs-tools")
    os.makedirs(os.path.join(root, "boot/grub"), exist_ok=True)
    with open(os.path.join(root, "boot/grub/grub.cfg"), "w") as f:
        f.write(grub_config(uuid, kernel, initrd, cmdline))

    used = int(run(["du", "-sb", root]).stdout.split()[0])
    root_mib = used * 13 // 10 // (1 << 20) + extra_mb
    root_sectors = root_mib * 2048
    total = (ROOT_START + root_sectors + GPT_TAIL_SECTORS) * SECTOR
    with open(out, "wb") as f:
        f.truncate(total)
    layout = ("label: gpt\n"
              f"start={BIOS_START}, size={BIOS_SECTORS}, type={BIOS_BOOT_TYPE}, name=\"bios\"\n"
              f"start={ESP_START}, size={ESP_SECTORS}, type={ESP_TYPE}, name=\"esp\"\n"
              f"start={ROOT_START}, size={root_sectors}, type={LINUX_TYPE}, name=\"carrel-root\"\n")
    run(["sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", out], input=layout)
    run(["mkfs.ext4", "-q", "-F", "-L", "carrel-root", "-U", uuid, "-d", root,
         "-E", f"offset={ROOT_START * SECTOR}", out, f"{root_mib}M"])

    with tempfile.TemporaryDirectory(prefix="carrel-disk-") as scratch:
        early = os.path.join(scratch, "early.cfg")
        with open(early, "w") as f:
            f.write(early_config(uuid))
        # UEFI: one standalone image at the removable-media path every firmware tries.
        efi = os.path.join(scratch, "BOOTX64.EFI")
        run(["grub-mkstandalone", "-O", "x86_64-efi", "-o", efi,
             "--install-modules=" + " ".join(GRUB_MODULES + ["efi_gop", "all_video"]),
             "--modules=" + " ".join(GRUB_MODULES), "--locales=", "--fonts=", "--themes=",
             f"boot/grub/grub.cfg={early}"])
        esp = os.path.join(scratch, "esp.img")
        run(["mkfs.vfat", "-n", "CARREL-ESP", "-C", esp, str(ESP_SECTORS * SECTOR // 1024)])
        run(["mmd", "-i", esp, "::/EFI", "::/EFI/BOOT"])
        run(["mcopy", "-i", esp, efi, "::/EFI/BOOT/BOOTX64.EFI"])
        copy_into(out, esp, ESP_START)

        # BIOS: core.img (with the early config) in the BIOS boot partition.
        core = os.path.join(scratch, "core.img")
        run(["grub-mkimage", "-O", "i386-pc", "-o", core, "-c", early, "-p", "/boot/grub", "biosdisk", *GRUB_MODULES])
        with open(core, "rb") as f:
            core_bytes = bytearray(f.read())
        core_sectors = (len(core_bytes) + SECTOR - 1) // SECTOR
        if core_sectors > BIOS_SECTORS:
            raise DiskError(f"GRUB's core.img is {len(core_bytes)} bytes, more than the BIOS boot partition holds")
        struct.pack_into("<QHH", core_bytes, BLOCKLIST_OFFSET, BIOS_START + 1, core_sectors - 1, CORE_LOAD_SEGMENT)
        with open(out, "r+b") as f:
            f.seek(BIOS_START * SECTOR)
            f.write(core_bytes)
            boot = bytearray(open("/usr/lib/grub/i386-pc/boot.img", "rb").read())
            struct.pack_into("<Q", boot, KERNEL_SECTOR_OFFSET, BIOS_START)
            boot[BOOT_DRIVE_OFFSET] = 0xFF          # the drive the BIOS booted from
            boot[DRIVE_CHECK_OFFSET:DRIVE_CHECK_OFFSET + 2] = b"\x90\x90"
            f.seek(0)
            f.write(boot[:MBR_CODE_SIZE])            # the protective MBR's table stays
    return total


def copy_into(image, piece, start_sector):
    with open(piece, "rb") as src, open(image, "r+b") as dst:
        dst.seek(start_sector * SECTOR)
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                break
            dst.write(chunk)
