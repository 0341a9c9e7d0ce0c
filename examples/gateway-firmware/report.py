"""Writes docs/embedded.md from the gateway firmware's ELF files and decoded QEMU logs.

Run by ci/embedded-report.sh, which builds the firmware for every family, runs it under QEMU
and decodes its defmt log first:

    python3 report.py TARGET_DIR LOG_DIR OUT.md

LOG_DIR holds versions.txt and TARGET/BIN.log (defmt-print's text), and TARGET/measure/ the
served gateways' sessions (see report_served.py). Fails (non-zero exit) when a log lacks its
measurements or its passing verdict, or when an allocator symbol is linked into any binary.
"""

import re
import subprocess
import sys
from pathlib import Path

import report_served

# (target, QEMU machine, family, RAM of the machine in bytes, what the machine is)
TARGETS = [
    ("thumbv6m-none-eabi", "microbit", "Cortex-M0", 16 * 1024, "BBC micro:bit, nRF51822"),
    ("thumbv7m-none-eabi", "lm3s6965evb", "Cortex-M3", 64 * 1024, "TI LM3S6965"),
    ("thumbv7em-none-eabihf", "mps2-an386", "Cortex-M4F", 4 * 1024 * 1024, "Arm MPS2 AN386"),
    ("riscv32imc-unknown-none-elf", "virt", "RISC-V rv32imc", 64 * 1024, "QEMU virt, 64 KiB given to data"),
]
BACKENDS = [
    ("aes-gcm", "AES-256-GCM"),
    ("chacha20poly1305", "ChaCha20-Poly1305"),
    ("xchacha20poly1305", "XChaCha20-Poly1305"),
    ("aes-gcm-siv", "AES-256-GCM-SIV"),
]
# The stack frames listed in detail: these backends, on these targets.
FRAME_BACKENDS = ["aes-gcm", "chacha20poly1305", "aes-gcm-siv"]
FRAME_TARGETS = ["thumbv7em-none-eabihf", "riscv32imc-unknown-none-elf"]
OPS = [("seal", "default"), ("resume", "default"), ("seal", "gateway"), ("resume", "gateway"),
       ("resume+replay", "gateway")]
# Sections loaded into flash (riscv-rt keeps `.eh_frame`, the prebuilt core library's unwind
# tables: counted, as they are in the image) and sections of static RAM.
FLASH_SECTIONS = [".vector_table", ".text", ".init", ".init.rust", ".rodata", ".eh_frame", ".data"]
RAM_SECTIONS = [".data", ".bss", ".uninit"]
ALLOCATOR_SYMBOLS = re.compile(
    r"__rust_(alloc|dealloc|realloc|alloc_zeroed|alloc_error_handler)\b|__rg_alloc|__rdl_alloc"
)
FLASH_GOAL = 20 * 1024
STACK_GOAL = 2 * 1024


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def sections(elf):
    out = {}
    for line in run("llvm-size", "-A", "-d", str(elf)).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def flash_ram(elf):
    s = sections(elf)
    return sum(s.get(k, 0) for k in FLASH_SECTIONS), sum(s.get(k, 0) for k in RAM_SECTIONS)


def allocator_symbols(elf):
    return [l for l in run("llvm-nm", str(elf)).splitlines() if ALLOCATOR_SYMBOLS.search(l)]


def frames(elf, limit, ours=False):
    """Largest fixed stack frames of functions outside the firmware crate (inside it too if
    `ours`), from each
    function's prologue: Arm `push` + `sub sp, #n`; RISC-V `addi sp, sp, -n` (one or two) or
    `lui` + `addi` + `sub sp, sp, reg`."""
    found = {}
    name, seen, size, lui = None, 0, 0, {}
    for line in run("llvm-objdump", "-d", "--no-show-raw-insn", "-C", str(elf)).splitlines():
        head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if head:
            if name is not None and size:
                found[name] = size
            name, seen, size, lui = head.group(1), 0, 0, {}
            continue
        if name is None:
            continue
        seen += 1
        if seen > 12:
            continue
        insn = line.split("\t", 2)[-1] if "\t" in line else line
        if re.search(r"\b(push|stmdb)\b", line):
            size += 4 * len(re.findall(r"\b(r\d+|lr)\b", insn))
        m = re.search(r"\bsub(?:\.w|w)?\s+sp,\s+(?:sp,\s+)?#(\d+)", line)
        if m:
            size += int(m.group(1))
        m = re.search(r"\baddi\s+sp, sp, -(\d+)", line)
        if m:
            size += int(m.group(1))
        m = re.search(r"\blui\s+(\w+), (\d+)", line)
        if m:
            lui[m.group(1)] = int(m.group(2)) << 12
        m = re.search(r"\baddi\s+(\w+), (\w+), (-?\d+)", line)
        if m and m.group(2) in lui:
            lui[m.group(1)] = lui[m.group(2)] + int(m.group(3))
        m = re.search(r"\bsub\s+sp, sp, (\w+)", line)
        if m and m.group(1) in lui:
            size += lui[m.group(1)]
    if name is not None and size:
        found[name] = size
    # One entry per symbol: each instantiation of a generic function is its own.
    named = [(demangle(re.sub(r"::h[0-9a-f]{16}$", "", n)), v) for n, v in found.items()]
    named = [(n, v) for n, v in named if ours or not n.startswith(("gateway_firmware", "footprint_"))]
    return sorted(named, key=lambda kv: -kv[1])[:limit]


def frame_of(elf, name):
    """The largest fixed frame among functions whose name contains `name` (0 if none)."""
    return max([size for fn, size in frames(elf, None) if name in fn], default=0)


def siv_over(w, logs, elf, aad_gateway, aad_struct_gateway):
    """Why AES-256-GCM-SIV misses the stack goal, from the M4F binary's frames."""
    t = "thumbv7em-none-eabihf"
    siv = elf(t, "aes-gcm-siv")
    seal = frame_of(siv, "Aes256GcmSiv as mrtr_core::cipher::Cipher>::seal_in_place")
    new = frame_of(siv, "aes_gcm_siv::Cipher<Aes>::new")
    schedule = frame_of(siv, "fixslice::aes256::key_schedule")
    worst = max(logs[(tt, "aes-gcm-siv")]["ops"][(op, "gateway")]["stack"]
                for tt, *_ in TARGETS for op in ("seal", "resume", "resume+replay"))
    w("GCM-SIV derives a fresh AES-256 encryption key from the nonce for every message (RFC")
    w("8452), so every seal and every resume runs the AES-256 key schedule under the engine's")
    w(f"frame. On the Cortex-M4F: the backend's `seal_in_place` ({seal} B, holding the per-message")
    w(f"cipher with its 480 bytes of round keys), `aes_gcm_siv::Cipher::new` ({new} B) and")
    w(f"`aes256::key_schedule` ({schedule} B, which builds the round keys in a local array and")
    w("copies them out) are live at once, where AES-256-GCM encrypts from round keys computed")
    w(f"when the key was loaded. The worst GCM-SIV figure is {worst} B, {worst - STACK_GOAL} B over the goal.")
    w(f"Feeding the AAD to the cipher in pieces (first of the reductions below) would take the")
    w(f"{aad_struct_gateway}-byte `Aad<{aad_gateway}>` out of the engine's frame, more than that excess (not built, not")
    w("measured).")


def demangle(name):
    """Finishes Rust's legacy symbol demangling, which llvm-objdump leaves half done."""
    for code, text in [("$LT$", "<"), ("$GT$", ">"), ("$C$", ","), ("$u20$", " "), ("$RF$", "&"),
                       ("$u7b$", "{"), ("$u7d$", "}"), ("$BP$", "*"), ("..", "::")]:
        name = name.replace(code, text)
    return name.lstrip("_")


def parse_log(path):
    text = path.read_text()
    verdict = re.search(r"^firmware checks: (\d+) passed, (\d+) failed$", text, re.M)
    if not verdict or verdict.group(2) != "0":
        sys.exit(f"{path}: the firmware did not pass")
    calib = re.search(r"measure: calibration ticks=(\d+) instructions=(\d+)", text)
    sizes = re.search(r"measure: sizes aad_default=(\d+) aad_gateway=(\d+) "
                      r"aad_struct_default=(\d+) aad_struct_gateway=(\d+)", text)
    whole = re.search(r"measure: whole_run_stack=(\d+)", text)
    if not calib or not sizes or not whole:
        sys.exit(f"{path}: measurements missing")
    aad_default, aad_gateway = int(sizes.group(1)), int(sizes.group(2))
    ops = {}
    for m in re.finditer(
        r"measure: op=(\S+) aad=(\d+) continuation=(\d+) stack=(\d+) token_buf=(\d+) "
        r"ticks=(\d+) instructions=(\d+)",
        text,
    ):
        which = "default" if int(m.group(2)) == aad_default else "gateway"
        ops[(m.group(1), which)] = {
            "stack": int(m.group(4)),
            "token_buf": int(m.group(5)),
            "ticks": int(m.group(6)),
            "instructions": int(m.group(7)),
        }
    if set(ops) != set(OPS):
        sys.exit(f"{path}: measurements missing (have {sorted(ops)})")
    return {
        "checks": int(verdict.group(1)),
        "calibration": (int(calib.group(1)), int(calib.group(2))),
        "aad": (aad_default, aad_gateway, int(sizes.group(3)), int(sizes.group(4))),
        "whole_stack": int(whole.group(1)),
        "ops": ops,
    }


def kib(n):
    return f"{n / 1024:.1f} KiB"


def siv_section(w, logs, elf):
    """AES-256-GCM-SIV next to AES-256-GCM: what nonce-misuse resistance costs on each family."""
    w("### AES-256-GCM-SIV next to AES-256-GCM")
    w("")
    w("AES-256-GCM-SIV (RFC 8452, `mrtr-aes-gcm-siv`) resists nonce misuse: a repeated nonce")
    w("reveals only whether two sealed messages were identical, where a repeated AES-GCM nonce")
    w("allows forgery. That matters most on a device whose random source may fail or repeat.")
    w("Its price: per message, six AES block encryptions to derive that message's keys, an")
    w("AES-256 key schedule for the derived encryption key, and POLYVAL in place of GHASH. At")
    w("the gateway's AAD capacity, 256-byte continuation:")
    w("")
    w("| family | instructions / seal GCM → SIV | instructions / resume GCM → SIV | seal stack GCM → SIV | resume stack GCM → SIV | flash core + backend GCM → SIV |")
    w("| --- | ---: | ---: | ---: | ---: | ---: |")
    for t, machine, family, _, _ in TARGETS:
        g, v = logs[(t, "aes-gcm")]["ops"], logs[(t, "aes-gcm-siv")]["ops"]
        base, _ = flash_ram(elf(t, "footprint-baseline"))
        fg, _ = flash_ram(elf(t, "footprint-aes-gcm"))
        fv, _ = flash_ram(elf(t, "footprint-aes-gcm-siv"))
        cells = []
        for op in ("seal", "resume"):
            a, b = g[(op, "gateway")]["instructions"], v[(op, "gateway")]["instructions"]
            cells.append(f"{a} → {b} (×{b / a:.2f})")
        for op in ("seal", "resume"):
            cells.append(f"{g[(op, 'gateway')]['stack']} → {v[(op, 'gateway')]['stack']} B")
        cells.append(f"{fg - base} → {fv - base} B")
        w(f"| {family} (`{machine}`) | " + " | ".join(cells) + " |")
    w("")


def goal(ok):
    return "met" if ok else "**not met**"


def main():
    target_dir, log_dir, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    versions = (log_dir / "versions.txt").read_text().strip().splitlines()
    elf = lambda t, b: target_dir / t / "release" / b  # noqa: E731
    footprint = lambda b: f"footprint-{b}"  # noqa: E731

    allocators = []
    for t, *_ in TARGETS:
        served = [b for _, _, b in report_served.served(t)]
        for b in [b for b, _ in BACKENDS] + [footprint(b) for b, _ in BACKENDS] + ["footprint-baseline"] + served:
            allocators += [f"{t}/{b}: {s}" for s in allocator_symbols(elf(t, b))]
    if allocators:
        sys.exit("allocator symbols linked:\n" + "\n".join(allocators))
    logs = {(t, b): parse_log(log_dir / t / f"{b}.log") for t, *_ in TARGETS for b, _ in BACKENDS}
    aad_default, aad_gateway, aad_struct_default, aad_struct_gateway = \
        logs[(TARGETS[0][0], "aes-gcm")]["aad"]

    md = []
    w = md.append
    w("# mrtr on a microcontroller")
    w("")
    w("Generated by `bash ci/embedded-report.sh` (builds `examples/gateway-firmware` for every")
    w("family, runs it under QEMU, decodes its defmt log, measures the binaries): do not edit by")
    w("hand, rerun the script.")
    w("")
    w("Toolchain: " + "; ".join(versions) + ". Profile: release, `opt-level = \"s\"`, LTO,")
    w("one codegen unit, `panic = \"abort\"`.")
    w("")
    w("## Summary: one row per family and backend")
    w("")
    w("* **flash core + backend**: what mrtr-core and the backend add to a binary that seals and")
    w("  resumes once (`footprint-<backend>` minus `footprint-baseline`, same runtime and exit);")
    w("  **static RAM core + backend**: the same difference for `.data` + `.bss` (mrtr keeps no")
    w("  statics of its own: the gateway declares its replay set and clock).")
    w("* **peak stack** of one seal and one resume at a 256-byte continuation, not counting the")
    w(f"  caller's `TokenBuf` ({logs[(TARGETS[0][0], 'aes-gcm')]['ops'][('seal', 'gateway')]['token_buf']} bytes, `token_len_for(256)`),"
      f" with the default AAD capacity ({aad_default} B, hosts) → the")
    w(f"  gateway's ({aad_gateway} B: `AadLimits {{ target: 64, principal_field: 64, audience:")
    w("  GATEWAY_ID.len(), ..DEFAULT }`, its tool names, principal fields and its own audience).")
    w(f"  Goal: ≤ {STACK_GOAL} B at the gateway's capacity.")
    w("* **instructions** per seal and per resume at the gateway's capacity (the seal includes")
    w("  drawing 28 bytes from a freshly seeded example ChaCha20 DRBG: its first keystream block).")
    w("")
    w("| family | backend | flash core + backend | static RAM core + backend | seal stack default → gateway | resume stack default → gateway | ≤ 2 KiB | instructions / seal | instructions / resume |")
    w("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    not_met = []
    for t, machine, family, _, _ in TARGETS:
        base_flash, base_ram = flash_ram(elf(t, "footprint-baseline"))
        for b, name in BACKENDS:
            flash, ram = flash_ram(elf(t, footprint(b)))
            ops = logs[(t, b)]["ops"]
            sd, sg = ops[("seal", "default")], ops[("seal", "gateway")]
            rd, rg = ops[("resume", "default")], ops[("resume", "gateway")]
            ok = max(sg["stack"], rg["stack"], ops[("resume+replay", "gateway")]["stack"]) <= STACK_GOAL
            if not ok:
                not_met.append(f"{family} {name}")
            w(f"| {family} (`{machine}`) | {name} | {flash - base_flash} B ({kib(flash - base_flash)}) | "
              f"{ram - base_ram} B | {sd['stack']} → **{sg['stack']}** B | {rd['stack']} → **{rg['stack']}** B | "
              f"{goal(ok)} | {sg['instructions']} | {rg['instructions']} |")
    w("")
    if not_met:
        w("Every AEAD backend runs on every family, the micro:bit's 16 KiB of RAM included. Over")
        w("the 2 KiB goal at the gateway's capacity: " + ", ".join(not_met) + ".")
        if any("GCM-SIV" in n for n in not_met):
            w("")
            siv_over(w, logs, elf, aad_gateway, aad_struct_gateway)
    else:
        w("Every AEAD backend runs on every family, the micro:bit's 16 KiB of RAM included, and")
        w("stays within 2 KiB of stack for a seal and a resume at the gateway's capacity.")
    w("")

    w("## What runs")
    w("")
    w("`examples/gateway-firmware` plays an MCP gateway on a microcontroller: one binary per AEAD")
    w("backend (" + ", ".join(f"`{b}`" for b, _ in BACKENDS) + "), each built for four families:")
    w("")
    w("| family | target | QEMU machine | RAM | runtime |")
    w("| --- | --- | --- | ---: | --- |")
    for t, machine, family, ram, what in TARGETS:
        rt = "riscv-rt, `riscv` single-hart critical section" if t.startswith("riscv") \
            else "cortex-m-rt, `cortex-m` single-core critical section"
        w(f"| {family} | `{t}` | `{machine}` ({what}) | {kib(ram)} | {rt} |")
    w("")
    w("Cortex-M0 and rv32imc have no compare-and-swap (rv32imc no atomic instructions at all):")
    w("core's seal counter uses `portable-atomic`, which falls back to the critical section there")
    w("and stays a native lock-free atomic on every host. The firmware logs through `defmt`: a")
    w("global logger sends the frames over semihosting, QEMU writes them out, and CI decodes them")
    w("with `defmt-print` against the ELF (`ci/suites/30-firmware-qemu.sh`): a run passes when")
    w("QEMU exits 0, every frame decodes, and the decoded totals say every check passed. On the")
    w("target it checks, one `INFO` line per passed check (`ERROR` for a failed one):")
    w("")
    w("* the platform a real firmware provides: the wall clock (time learned once from the")
    w("  upstream's HTTP `Date` header, then monotonic ticks; malformed dates refused; before the")
    w("  time is known the gateway refuses to pause or resume, and mrtr called directly fails")
    w("  closed), and the hardware RNG adapter (`HalTrng`: a HAL driver's rand_core 0.6 or 0.9")
    w("  TRNG as rand_core 0.10 `TryCryptoRng`; on the micro:bit `nrf51-hal`'s driver on the")
    w("  nRF51 RNG peripheral QEMU models; failing and stuck sources are seal errors, never")
    w("  panics; a ChaCha20 DRBG seeded from it);")
    w("* every golden vector of both token formats is sealed again byte for byte and its")
    w("  associated data rebuilt: format v2 (`tests/vectors/v2/`) bound to the vector's audience,")
    w("  the recorded token opening for that audience and refused by the gateway (another")
    w("  audience); format v1 (`tests/vectors/`), sealed as a rolling upgrade's first step does,")
    w("  the recorded token opening on an engine configured as the gateway (it seals v2 and still")
    w("  opens v1 in its startup window) and refused as `version_retired` once v1 is off;")
    w("* a resume chain: the call and 9 resumes succeed, the 10th resume is refused;")
    w("* tampered, truncated, oversized, wrong-subject, wrong-issuer, anonymous, wrong-target and")
    w("  wrong-arguments tokens are rejected with the expected reason; a binding one byte over the")
    w("  gateway's AAD capacity is refused (no seal spent) and one exactly at it works; an unknown")
    w("  key id is refused and a token of the previous key still opens after rotation;")
    w("* single use through a `SharedReplaySet` shared by the main loop and an interrupt handler")
    w("  (PendSV on Cortex-M, the machine software interrupt on RISC-V);")
    w("* expiry on the wall clock after an `embedded-hal` `DelayNs` wait.")
    w("")
    counts = sorted({v["checks"] for v in logs.values()})
    w(f"Checks passed per run: {', '.join(map(str, counts))} (every family, every backend).")
    w("")

    w("## The whole gateway firmware")
    w("")
    w("Heap: **0 bytes**. No allocator is linked: none of the binaries defines or references")
    w("`__rust_alloc`, `__rust_dealloc`, `__rust_realloc`, `__rust_alloc_zeroed`, `__rg_alloc` or")
    w("`__rdl_alloc` (checked with `llvm-nm` on every ELF; the script fails otherwise).")
    w("Whole-run stack: the deepest the stack went over the whole run (all scenarios and")
    w("measurements, painted at boot), which with static RAM must fit the machine's RAM.")
    w("")
    w("| family | backend | flash | static RAM | whole-run stack | RAM used of the machine's | checks passed |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for t, machine, family, ram, _ in TARGETS:
        for b, name in BACKENDS:
            flash, sram = flash_ram(elf(t, b))
            whole = logs[(t, b)]["whole_stack"]
            w(f"| {family} | {name} | {flash} B ({kib(flash)}) | {sram} B | {whole} B | "
              f"{kib(sram + whole)} of {kib(ram)} | {logs[(t, b)]['checks']} |")
    w("")
    w("The full firmware is larger than the footprint through the scenarios, the golden vectors")
    w("in `.rodata`, the example DRBG and the defmt log strings' indices (the strings themselves")
    w("stay in the ELF's `.defmt` section, which is not loaded).")
    w("")

    report_served.section(w, {
        "target_dir": target_dir, "log_dir": log_dir, "targets": TARGETS, "logs": logs,
        "flash_ram": flash_ram, "kib": kib, "goal": goal,
        "all_frames": lambda e: frames(e, None, ours=True),
    })

    w("## Stack and cost, in detail (256-byte continuation)")
    w("")
    w("Peak stack is measured by stack painting: the free stack below the caller is filled with")
    w("a pattern, the operation runs with interrupts masked, and the deepest overwritten word")
    w("gives its depth from the caller's stack pointer.")
    w("")
    w("Cost: QEMU runs with `-icount shift=0`, so each instruction advances virtual time by")
    w("exactly 1 ns and every run gives the same figures. On Cortex-M, SysTick (core clock) is read")
    w("around the call and a calibration loop of 2,000,000 instructions (`cortex_m::asm::delay`)")
    w("converts ticks to instructions (resolution: one tick, 62.5 instructions on the micro:bit")
    w("at 16 MHz, 80 on lm3s6965evb at 12.5 MHz, 40 on mps2-an386 at 25 MHz). On RISC-V,")
    w("`minstret` counts retired instructions directly (its calibration reading is the loop's")
    w("own count). QEMU does not model pipelines, flash wait states or crypto accelerators: read")
    w("instructions as a relative cost and a lower bound of cycles on silicon. `resume+replay`")
    w("adds the check-and-record in an 8-entry `SharedReplaySet`.")
    w("")
    w("| family | backend | operation | AAD capacity | peak stack | ticks | instructions |")
    w("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for t, machine, family, _, _ in TARGETS:
        for b, name in BACKENDS:
            ops = logs[(t, b)]["ops"]
            for op, which in OPS:
                m = ops[(op, which)]
                cap = aad_default if which == "default" else aad_gateway
                w(f"| {family} | {name} | {op} | {cap} B | {m['stack']} B | {m['ticks']} | {m['instructions']} |")
    w("")
    w("Calibration (ticks per 2,000,000 instructions): " + ", ".join(
        f"{machine} {logs[(t, 'aes-gcm')]['calibration'][0]}" for t, machine, *_ in TARGETS
    ) + ".")
    w("")

    siv_section(w, logs, elf)

    w("### What the stack holds")
    w("")
    w(f"The associated data is built in one `Aad<CAP>` of `CAP` bytes: {aad_default} by default")
    w(f"(`Aad` is {aad_struct_default} bytes, sized for a 1,024-byte target, two 255-byte principal")
    w(f"fields and a 255-byte audience), {aad_gateway} at the gateway's capacity (`Aad<{aad_gateway}>` is {aad_struct_gateway} bytes):"
      f" {aad_default - aad_gateway} bytes less")
    w("in every seal and resume frame, which is the whole difference between the default and the")
    w("gateway columns above. Largest fixed frames (prologue `push` + `sub sp` on Arm, `addi sp`")
    w("on RISC-V, from `llvm-objdump`) of mrtr-core and backend functions; a generic function")
    w("appears once per instantiation (`pause` and `resume` at the default and at the gateway's")
    w("capacity), and a frame includes whatever LLVM inlined into it:")
    w("")
    for t in FRAME_TARGETS:
        family = next(f for tt, _, f, _, _ in TARGETS if tt == t)
        for b, name in [(b, n) for b, n in BACKENDS if b in FRAME_BACKENDS]:
            w(f"| {family}, {name}: function | frame |")
            w("| --- | ---: |")
            for fn, size in frames(elf(t, b), 8):
                w(f"| `{fn}` | {size} B |")
            w("")
    w("The AES figures depend on the `aes` crate's release: 0.9.4 stores its round keys in a")
    w("compact form and expands them onto the stack on every call (a 1,264-byte frame with two")
    w("480-byte copies), which put the gateway-capacity AES seal at 2,248 B and resume at 2,128 B")
    w("on the Cortex-M4F. The firmware's `Cargo.lock` pins `aes` 0.9.2 (the release the host")
    w("workspace locks), whose software backend encrypts from the keys in place.")
    w("")
    w("Further reductions, not made:")
    w("")
    w("1. Feed the AAD to the cipher in pieces (GHASH, POLYVAL and Poly1305 are incremental; a")
    w("   `Cipher` method taking the header, audience, principal and binding parts) so it is never")
    w(f"   materialised: the `Aad<{aad_gateway}>` ({aad_struct_gateway} bytes) leaves every seal and resume frame.")
    w("2. `TokenBuf<N>` is caller-sized already: a gateway that seals at most 64 bytes of")
    w("   continuation needs `token_len_for(64)` = 303 bytes instead of 559.")
    w("3. For AES-256-GCM-SIV: a key schedule that writes the derived round keys in place instead")
    w("   of returning them by value (one 480-byte copy less), or a hardware AES engine.")
    w("")
    w("## Left out")
    w("")
    w("* Cycles on silicon: QEMU counts instructions, not cycles (no pipeline, flash wait states")
    w("  or AES/crypto accelerators). Treat the figures as relative costs and lower bounds.")
    w("* A real TRNG on every family: only the micro:bit's nRF51 has a TRNG peripheral that QEMU")
    w("  models. On the other machines the same adapter is driven by a non-random stand-in with a")
    w("  HAL's interface, and every scenario seals with the example ChaCha20 DRBG from a fixed seed")
    w("  (marked as such in the code, so that runs are reproducible). Keys are compiled-in examples.")
    w("* `nrf51-hal`'s RNG driver waits for each byte without a timeout: a peripheral that never")
    w("  delivers hangs the caller (a watchdog's job); the adapter handles reported failures and")
    w("  stuck output, not silence.")
    w("")
    out.write_text("\n".join(md) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
