#!/usr/bin/env python3
"""Lists the conditional jumps in the machine code of MPinCrypto's secret-handling paths.

`make ct-check` runs it on the release build of mpin-bench (MPinCrypto is linked in
statically, so its code is there as the products run it). For each entry point below it
disassembles the function with objdump, follows every call into other MPinCrypto functions
(those listed in PUBLIC_ONLY excepted: they only ever see public data and are variable-time by
design), and sorts each conditional jump into one of:

  trap      its target is a `ud2`: a Swift overflow or bounds check, taken only on a bug
            (the process stops), never as a function of a valid secret
  once      its target block calls swift_once: first-use initialisation of a global constant
  canary    its target block calls __stack_chk_fail: the stack protector's check
  error     it tests %r12 after a call, the register Swift returns a thrown error in: whether
            a decoder or a callee threw (a validity verdict the caller sees anyway)
  loop      a backward jump: a loop's back-edge
  forward   any other forward jump

Every `loop` and `forward` jump is printed with the instruction that set the flags, so a reader
can check that it tests a loop counter, a length or other public data and never a secret.
docs/CRYPTO.md §11 records what was found. The script reports; it does not decide: the
compiler's output changes with the toolchain, so a fixed allow-list would go stale.

Usage: objdump-check.py [BINARY] [--summary]   (default .build/release/mpin-bench)
"""

import re
import subprocess
import sys
from collections import OrderedDict

# Entry points: a label and a regular expression over the demangled name.
ROOTS = [
    ("G1 k·P (GLV split, client pass 1/2, D-TA shares)",
     r"ProjectivePoint< where A == MPinCrypto\.BN254G1Curve>\.multiplied\(by:"),
    ("G2 k·Q on G2 (ψ split)", r"multipliedInG2\(by:"),
    ("G2 generator k·Q (fixed-base tables: server secret, DVS keys)", r"generatorMultiple\("),
    ("generic k·P (both curves)",
     r"pre-specialization <MPinCrypto\.BN254G[12]Curve> of MPinCrypto\.ProjectivePoint\.multiplied\(by:"),
    ("PIN ladder k·P for small k", r"pre-specialization <MPinCrypto\.BN254G1Curve> of MPinCrypto\.ProjectivePoint\.multiplied\(bySmall:"),
    ("Fp and Fr inversion (safegcd, 12 × 62 division steps)", r"MPinCrypto\.SafeGCD\.inverse\("),
    ("table lookup", r"specialization <MPinCrypto\.BN254G[12]Curve> of (closure #1 .* in MPinCrypto\.FixedTable16\.select|static MPinCrypto\.FixedTable16\.select)"),
    ("extract_pin", r"static MPinCrypto\.MPin\.extractPIN\(mpinID: \[Swift\.UInt8\], factors:"),
    ("client pass 1", r"static MPinCrypto\.MPin\.client1\(date: Swift\.Int32, mpinID: \[Swift\.UInt8\], x: \[Swift\.UInt8\], pin:"),
    ("client pass 2", r"static MPinCrypto\.MPin\.client2\(x: \[Swift\.UInt8\], y: \[Swift\.UInt8\], sec: \[Swift\.UInt8\]\)"),
    ("DVS signing", r"static MPinCrypto\.DVS\.sign\(signingIdentity: \[Swift\.UInt8\], x: \[Swift\.UInt8\]"),
]

# Functions on public data only (the identity, the date, the message): not followed. Each is
# variable-time on purpose and documented so in the source.
PUBLIC_ONLY = [
    r"\.map(<.*>)?\(hash:",    # hash to G1 of the identity / date hash (public)
    r"legendreSymbol",         # only called by squareRoot
    r"squareRoot",             # hash to curve, decompression
    r"MPinCrypto\.SHA256",     # hashes identities, dates, the message and U
    r"MPin\.hashID|MPin\.hashDate|MPin\.challenge|MPin\.identityPoint|MPin\.datePoint",
]

# Instructions that set the flags a conditional jump reads.
FLAG_SETTERS = re.compile(r"^(cmp|test|sub|add|adc|sbb|dec|inc|and|or|xor|neg|bt|shr|shl|sar|cmov)")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET = re.compile(r"^([0-9a-f]+)\s+<([^>]+)>")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def symbols(binary):
    """Mangled text symbols of the binary and their demangled names."""
    mangled = [line.split()[2] for line in run("nm", "--defined-only", binary).splitlines()
               if len(line.split()) == 3 and line.split()[1] in "tT"]
    demangled = subprocess.run(["swift", "demangle"], input="\n".join(mangled), check=True,
                               capture_output=True, text=True).stdout.splitlines()
    return dict(zip(mangled, demangled))


def disassemble(binary, symbol):
    """[(address, mnemonic, operands)] of one function."""
    out = run("objdump", "-d", "--no-show-raw-insn", "--disassemble=" + symbol, binary)
    insns = []
    for line in out.splitlines():
        m = INSN.match(line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return insns


def classify(insns, index):
    """(kind, flag-setting instruction) of the conditional jump at insns[index]."""
    addr, _, operands = insns[index]
    target = TARGET.match(operands)
    setter = next((f"{m} {o}" for _, m, o in reversed(insns[max(0, index - 6):index])
                   if FLAG_SETTERS.match(m)), "?")
    if setter == "test %r12,%r12":
        return "error", setter
    if not target:
        return "forward", setter
    dest = int(target.group(1), 16)
    if dest <= addr:
        return "loop", setter
    at = [i for i, (a, _, _) in enumerate(insns) if a == dest]
    if at:
        block = insns[at[0]:at[0] + 8]
        if block[0][1] == "ud2":
            return "trap", setter
        if any("swift_once" in o for _, m, o in block if m == "call"):
            return "once", setter
        if any("__stack_chk_fail" in o for _, m, o in block if m == "call"):
            return "canary", setter
    return "forward", setter


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    summary_only = "--summary" in sys.argv
    binary = args[0] if args else ".build/release/mpin-bench"
    names = symbols(binary)
    public = re.compile("|".join(PUBLIC_ONLY))

    # Roots first, then everything they reach, in order of discovery.
    queue = OrderedDict()
    for label, pattern in ROOTS:
        found = [s for s, d in names.items() if re.search(pattern, d)]
        if not found:
            print(f"warning: no symbol for {label!r} ({pattern}); inlined or renamed?")
        for s in found:
            queue.setdefault(s, label)
    seen, external, skipped = set(), {}, set()
    totals = {"trap": 0, "once": 0, "canary": 0, "error": 0, "loop": 0, "forward": 0}
    report = []
    while queue:
        symbol, reason = queue.popitem(last=False)
        if symbol in seen:
            continue
        seen.add(symbol)
        insns = disassemble(binary, symbol)
        jumps = []
        for i, (addr, mnemonic, operands) in enumerate(insns):
            if mnemonic.startswith("j") and mnemonic != "jmp":
                kind, setter = classify(insns, i)
                totals[kind] += 1
                jumps.append((kind, addr, mnemonic, operands.split("<")[0].strip(), setter))
            if mnemonic in ("call", "jmp"):
                target = TARGET.match(operands)
                if not target or target.group(2).split("+")[0] == symbol:
                    continue
                callee = target.group(2).split("@")[0].split("+")[0]
                if callee not in names or not callee.startswith("$s10MPinCrypto"):
                    external[callee] = external.get(callee, 0) + 1
                elif public.search(names[callee]):
                    skipped.add(names[callee])
                elif callee not in seen:
                    queue.setdefault(callee, "called from " + names[symbol][:60])
        report.append((symbol, reason, len(insns), jumps))

    for symbol, reason, size, jumps in report:
        counts = {k: sum(1 for j in jumps if j[0] == k) for k in totals}
        print(f"\n== {names[symbol][:150]}")
        print(f"   ({reason}; {size} instructions; conditional jumps: " +
              ", ".join(f"{counts[k]} {k}" for k in totals) + ")")
        if summary_only:
            continue
        for kind, addr, mnemonic, dest, setter in jumps:
            if kind in ("loop", "forward"):
                print(f"   {kind:7} {addr:x}: {mnemonic} {dest:8}  after  {setter}")

    print("\nNot followed (public data only):")
    for name in sorted(skipped):
        print("   " + name[:150])
    print("\nCalls outside MPinCrypto (runtime, allocation, standard library):")
    for callee, n in sorted(external.items(), key=lambda kv: -kv[1]):
        print(f"   {n:4}  {names.get(callee, callee)[:140]}")
    print(f"\n{len(report)} functions; conditional jumps: " + ", ".join(f"{v} {k}" for k, v in totals.items()))


if __name__ == "__main__":
    main()
