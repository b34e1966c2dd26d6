#!/usr/bin/env python3
"""Makes the copy of the Swift toolchain's static libswiftCore.a that pam_mpin.so links.

Why: every function section in the toolchain's Swift.o (the standard library's Swift code) carries
SHF_GNU_RETAIN, so `--gc-sections` keeps all of them, used or not: about 0.9 MB of the module
that every sshd connection maps. The copy is the same archive with that flag cleared on Swift.o's
`.text.*` sections only, so the linker drops the functions nothing references. Everything the
runtime finds by scanning sections (conformance records, type metadata, field descriptors: the
`swift5_*` sections) keeps its flag, so dynamic casts and conformance lookups see exactly what
they see with the original archive. What is left out can only be something no relocation reaches,
that is something found by name through dlsym, and the module's version script (pam_mpin.map)
hides every Swift symbol from dlsym anyway.

Usage: module-stdlib.py OUTPUT [SWIFTC]
  Reads the toolchain's static libswiftCore.a (found through `SWIFTC -print-target-info`), writes
  OUTPUT atomically, and prints how many sections it changed. Fails, without writing OUTPUT, on
  anything unexpected (no Swift.o member, not a 64-bit little-endian ELF object).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SHF_GNU_RETAIN = 0x200000


def toolchain_archive(swiftc):
    info = json.loads(subprocess.run([swiftc, "-print-target-info"], check=True,
                                     capture_output=True, text=True).stdout)
    resources = info["paths"]["runtimeResourcePath"]           # .../usr/lib/swift
    return os.path.join(os.path.dirname(resources), "swift_static", "linux", "libswiftCore.a")


def clear_retain_on_text(obj):
    """Clears SHF_GNU_RETAIN on the `.text.*` sections of an ELF64 little-endian relocatable file."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        raise ValueError("Swift.o is not a 64-bit little-endian ELF object")
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", obj, 0x3A)
    if shentsize != 64 or shoff + shnum * shentsize > len(obj) or shstrndx >= shnum:
        raise ValueError("Swift.o has a malformed section header table")
    names, = struct.unpack_from("<Q", obj, shoff + shstrndx * shentsize + 0x18)
    changed = 0
    for index in range(shnum):
        header = shoff + index * shentsize
        name_offset, = struct.unpack_from("<I", obj, header)
        flags, = struct.unpack_from("<Q", obj, header + 8)
        start = names + name_offset
        name = bytes(obj[start:obj.index(0, start)])
        if name.startswith(b".text.") and flags & SHF_GNU_RETAIN:
            struct.pack_into("<Q", obj, header + 8, flags & ~SHF_GNU_RETAIN)
            changed += 1
    return changed


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[2])
    output = os.path.abspath(sys.argv[1])
    source = toolchain_archive(sys.argv[2] if len(sys.argv) == 3 else "swiftc")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(output)) as work:
        archive = os.path.join(work, "libswiftCore.a")
        shutil.copyfile(source, archive)
        subprocess.run(["ar", "x", archive, "Swift.o"], cwd=work, check=True)
        member = os.path.join(work, "Swift.o")
        with open(member, "rb") as f:
            obj = bytearray(f.read())
        changed = clear_retain_on_text(obj)
        if changed == 0:
            print("module-stdlib: Swift.o has no retained function sections; copied unchanged")
        with open(member, "wb") as f:
            f.write(obj)
        # `ar r` replaces the member in place, keeping the archive's order and symbol index.
        subprocess.run(["ar", "r", archive, "Swift.o"], cwd=work, check=True)
        os.replace(archive, output)
    print(f"module-stdlib: {output}: {changed} function sections of Swift.o may be dropped")


if __name__ == "__main__":
    main()
